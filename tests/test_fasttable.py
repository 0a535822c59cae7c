"""Issue 25, big accounts: `size`'s long option tables are drawn by
:mod:`llmsizer.documents.fasttable` in a fraction of rich's time, and the characters must be
exactly rich's — at every width, wide ("why not" column, folded) and narrow (reasons under
the table, columns dropped, lines cropped)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from helpers import ROOT
from rich.console import Console
from rich.table import Table

from llmsizer.documents import fasttable, textoptions, textreport
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

MODELS = ("llama-3.1-70b", "llama-3.1-8b", "mixtral-8x7b", "qwen2.5-72b", "gpt-oss-120b")


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """Four workloads with the hardware left out: every catalog GPU, 218 to 450 options each,
    feasible and ruled-out rows mixed (benchmarks/big_account.py's account)."""
    lines = ["schema_version: 1", "account: {name: Big, currency: USD}", "workloads:"]
    for i in range(4):
        lines += [f"  - name: Workload {i + 1}", f"    model: {MODELS[i]}",
                  f"    concurrent_users: {20 + 13 * i}", f"    prompt_tokens: {500 + 100 * i}",
                  f"    output_tokens: {200 + 50 * i}",
                  f"    targets: {{tokens_per_s_per_user: {20 + 5 * i}, ttft_s: 3}}"]
    path = tmp_path_factory.mktemp("big") / "big.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return size(load(path))


def printed(result: Result, width: int, fast: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    con = Console(file=io.StringIO(), width=width)
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(fasttable, "MIN_ROWS", 10**9)  # every table through rich
        textreport.print_result(result, con, every=True)  # every row: the long tables
    out = con.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


@pytest.mark.parametrize("width", [50, 89, 90, 120, 149, 150, 180])
def test_long_tables_are_rich_s_characters(big: Result, width: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    assert all(len(w.options) >= 200 for w in big.workloads)
    assert any(not o.feasible for w in big.workloads for o in w.options)
    assert printed(big, width, True, monkeypatch) == printed(big, width, False, monkeypatch)


@pytest.mark.parametrize("width", [90, 150, 180])
def test_the_fast_path_is_taken(big: Result, width: int) -> None:
    """Not a silent fall-back to rich: the tables of this account are drawn here, one line
    per option that is in the table (wide tables list ruled-out ones, folded)."""
    from llmsizer.model.catalog import load_catalog

    con = Console(file=io.StringIO(), width=width)
    names = textoptions.OptionNames(load_catalog(), [o for w in big.workloads for o in w.options])
    for w in big.workloads:
        table = textoptions.workload_table(w, big.account.currency, width, names).table
        lines = fasttable.fast_lines(table, con)
        assert lines is not None
        assert len(lines) >= len(table.rows)
        shown = [o for o in w.options if o.feasible or width >= textoptions.WIDE]
        # options that differ only by the server share a row (review round 21)
        assert 0 < len(table.rows) <= len(shown)
        body = "\n".join(lines)  # a long configuration folds: its start is on the row's line
        assert all(f"{o.tp} × {names.gpus[o.gpu].split()[0]}" in body for o in shown)


def test_it_falls_back_when_rich_would_shorten_a_cell() -> None:
    """A column too narrow for its cells: rich ends them with an ellipsis; not drawn here."""
    table = Table()
    table.add_column("id", no_wrap=True)
    table.add_column("why not", overflow="fold", ratio=1)
    for i in range(60):
        table.add_row(f"option-{i:03d}-with-a-long-name", "too slow " * (i % 5))
    con = Console(file=io.StringIO(), width=20)
    assert fasttable.fast_lines(table, con) is None
    fasttable.print_table(table, con)
    rich = Console(file=io.StringIO(), width=20)
    rich.print(table)
    assert con.file.getvalue() == rich.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("account", ["example.yaml", "enterprise-multi.yaml",
                                     "rag-knowledge-base.yaml"])
def test_shipped_accounts_print_as_before(account: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    result = size(load(Path(ROOT / "inputs" / account)))
    for width in (80, 180):
        assert printed(result, width, True, monkeypatch) == printed(result, width, False,
                                                                    monkeypatch)
