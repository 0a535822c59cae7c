"""A cloud cost the engine cannot price reads as the proposal says it, not as a free cloud.

Wide World Importers (inputs/rag-knowledge-base.yaml) reranks on the RTX PRO 6000, which the
price list has no cloud offer for: the engine's reranker cloud cost is 0 "no price listed"
and the account's cloud total None (tests/test_cloud_unpriced.py). The workbook's cells stay
numbers (0, formula-live, summed and charted as before); their number format prints the
proposal's words at 0: "no price listed" for a part or a scenario (the PDF's costs and
sensitivity tables), "not comparable" for an account total that mixes priced and unpriced
parts. Once finance types the price on Inputs, LibreOffice shows the money figure, equal to
the engine's run on the requirements with that price."""

from __future__ import annotations

import importlib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import ROOT
from support.libreoffice import read_values, recalculate, to_pdf
from support.named_cells import cloud_price_name, edit_named
from test_workbook import write_yaml

from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

openpyxl: Any = importlib.import_module("openpyxl")

WIDE_WORLD = ROOT / "inputs" / "rag-knowledge-base.yaml"
GPU = "rtx-pro-6000"  # the reranker's GPU: no cloud price in the price list (prices.yaml)
PRICE = 1.5  # USD per GPU-hour, as finance would type it on Inputs
SUMMARY_ROW = "Cloud cost per year (its share, rented at the cloud tier)"
NO_PRICE, NOT_COMPARABLE = "no price listed", "not comparable"


@dataclass
class Books:
    base: Result  # the shipped requirements
    priced: Result  # the same with costs.cloud_gpu_hour.rtx-pro-6000 = PRICE
    book: Path
    base_text: str  # LibreOffice's PDF export (recalculated), pdftotext -layout
    edited_text: str  # the same after the price was typed on Inputs
    edited_values: dict[str, dict[str, object]]  # the edited book recalculated


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Books:
    tmp = tmp_path_factory.mktemp("unpriced")
    base = size(load(WIDE_WORLD))
    assert base.totals.cloud_unpriced == [GPU] and base.totals.annual_cost_cloud is None
    data = yaml.safe_load(WIDE_WORLD.read_text("utf-8"))
    data.setdefault("costs", {}).setdefault("cloud_gpu_hour", {})[GPU] = PRICE
    priced = size(load(write_yaml(data, tmp / "priced.yaml")))
    assert priced.totals.annual_cost_cloud is not None
    # the price changes no choice: the workbook keeps the engine's (KV sheet) and follows
    assert ([(g.gpu, g.gpus_used) for g in priced.plan.retrieval_groups]
            == [(g.gpu, g.gpus_used) for g in base.plan.retrieval_groups])
    book = tmp / "base.xlsx"
    write_workbook(base, book)
    edited = edit_named(book, tmp / "edited.xlsx", {cloud_price_name(GPU): PRICE})

    def text(path: Path) -> str:
        pdf = to_pdf(path, tmp / f"pdf-{path.stem}", timeout=300)
        return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                              capture_output=True, text=True).stdout

    values = read_values(recalculate([edited], tmp / "out", timeout=300)[edited])
    return Books(base, priced, book, text(book), text(edited), values)


def _money(value: float) -> str:
    return f"${value:,.0f}/yr"  # the workbook's USD per year format ("$"#,##0"/yr")


def _summary_cloud(r: Result) -> list[float | None]:
    """The engine's Summary cloud row: each language-model workload's share of the plan,
    each embed and rerank group's own (0: no price listed), the account total (None)."""
    shares = [p.shares[p.workload_indices.index(i)]["plan_annual_cost_cloud"]
              for i in range(len(r.workloads)) for p in r.plan.pools if i in p.workload_indices]
    return [*(float(v) for v in shares),
            *(g.annual_cost_cloud for g in r.plan.retrieval_groups), r.totals.annual_cost_cloud]


def _line(text: str, label: str) -> list[str]:
    """The cells after the unit of the printed row that starts with ``label``."""
    rows = [ln for ln in text.splitlines() if ln.startswith(label)]
    assert len(rows) == 1, (label, rows)
    return re.split(r"\s{2,}", rows[0].removeprefix(label).strip())[1:]  # [0] is the unit


def test_summary_says_no_price_where_the_engine_has_none(books: Books) -> None:
    want = _summary_cloud(books.base)
    words = [NOT_COMPARABLE if i == len(want) - 1 else NO_PRICE for i in range(len(want))]
    expected = [_money(v) if v else w for v, w in zip(want, words, strict=True)]
    # the language model and the embedding are priced (money), the reranker is not, and the
    # account total mixes both (the PDF's costs table: "no price listed", "not comparable")
    assert expected[-2:] == [NO_PRICE, NOT_COMPARABLE] and expected[0].startswith("$")
    assert _line(books.base_text, SUMMARY_ROW) == expected  # was "$0/yr" for both
    # typed on Inputs, the price gives every column its money figure, the engine's
    priced = _summary_cloud(books.priced)
    assert all(v for v in priced)
    assert _line(books.edited_text, SUMMARY_ROW) == [_money(v or 0) for v in priced]
    summary = books.edited_values["Summary"]
    row = next(k[1:] for k, v in summary.items() if k.startswith("A") and v == SUMMARY_ROW)
    got = [summary[f"{chr(ord('C') + j)}{row}"] for j in range(len(priced))]
    assert got == pytest.approx(priced, rel=1e-9)


def test_scenarios_say_no_price_until_the_price_is_typed(books: Books) -> None:
    sens = books.base.sensitivity
    assert sens and all(s.annual_cost_cloud is None for s in sens)  # the whole account each
    base = _scenario_cloud(books.base_text)
    assert base == [NO_PRICE] * (len(sens) + 1)  # the proposal's row, then each scenario
    fresh = books.priced
    edited = _scenario_cloud(books.edited_text)
    want = [fresh.totals.annual_cost_cloud, *(s.annual_cost_cloud for s in fresh.sensitivity)]
    assert edited == [_money(v or 0) for v in want]
    scen = books.edited_values["Scenarios"]
    head = next(k[:-1] for k, v in scen.items()
                if re.fullmatch(r"[A-Z]4", k) and v == "Cloud cost per year")
    got = [scen[f"{head}{5 + i}"] for i in range(len(want))]
    assert got == pytest.approx(want, rel=1e-9)


def _scenario_cloud(text: str) -> list[str]:
    """The Scenarios table's last column (cloud cost per year), row by row."""
    page = next(p for p in text.split("\f") if "Scenarios: what if an estimate is off" in p)
    lines = page.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("As proposed"))
    rows = []
    for ln in lines[first:]:
        if not ln or ln[0].isspace():  # the table's end (a blank or an indented line)
            break
        rows.append(re.split(r"\s{2,}", ln.strip())[-1])
    return rows


def test_every_cloud_cost_cell_prints_words_at_zero(books: Books) -> None:
    """Not only the Summary and Scenarios: the calculation, Retrieval, Options and Plan
    sheets' cloud price and cloud cost cells say "no price listed" at 0, the Plan's account
    totals "not comparable"; a priced cell keeps its money format (its first section)."""
    wb = openpyxl.load_workbook(books.book)
    names = {"cloud_gpu_hour", "annual_cost_cloud", "cost_per_million_tokens_cloud",
             "cost_per_million_total_tokens_cloud", "plan_annual_cost_cloud",
             "plan_cost_per_million_tokens_cloud", "plan_cost_per_million_total_tokens_cloud"}
    seen: dict[str, set[str]] = {}
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            if row[0].value not in names:
                continue
            for c in row[3:]:
                if c.data_type == "f":  # a formula (the notes beside read "= ...")
                    sections = c.number_format.split(";")
                    assert sections[0].startswith('"$"'), (ws.title, c.coordinate)
                    seen.setdefault(ws.title, set()).add(sections[-1])
    assert seen["TCO"] == {f'"{NO_PRICE}"'} and seen["Retrieval"] == {f'"{NO_PRICE}"'}
    # the Plan: node groups' and shares' cells, and the two account totals
    assert seen["Plan"] == {f'"{NO_PRICE}"', f'"{NOT_COMPARABLE}"'}
    # the Options sheet's figures are the engine's numbers: its unpriced options' 0 too
    options = wb["Options"]
    head = next(c for row in options.iter_rows(max_row=10) for c in row
                if c.value == "Cloud cost per year")
    zeros = [c.number_format for (c,) in options.iter_rows(
        min_row=head.row + 1, min_col=head.column, max_col=head.column) if c.value == 0]
    assert zeros and {z.split(";")[-1] for z in zeros} == {f'"{NO_PRICE}"'}


def test_break_even_never_reads_as_at_once(books: Books) -> None:
    """The break-even formula gives 0 when renting stays cheaper or no cloud price is listed
    (calculations: breakeven_months); printed as "0.0 months" it read as "owning pays off at
    once". The Summary's and the TCO sheet's row show a dash there, months elsewhere."""
    rows = [re.split(r"\s{2,}", ln.strip()) for ln in books.base_text.splitlines()
            if ln.startswith("Buy-vs-rent break-even")]
    cells = [c for row in rows for c in row[2:]]  # after the label and the unit
    assert len(rows) >= 3 and any(c.endswith(" months") for c in cells), rows
    assert not any(re.fullmatch(r"0(\.0+)? months", c) for c in cells), rows
    assert "—" in cells, rows  # the TCO sheet's options without a cloud price (Gaudi 3)
    # the engine: the reranker's group is unpriced, its break-even 0 (the dash above)
    wb = openpyxl.load_workbook(books.book)
    formats = {c.number_format for ws in wb.worksheets for row in ws.iter_rows()
               if row[0].value in ("breakeven_months", "plan_breakeven_months")
               for c in row[3:] if c.data_type == "f"}
    # whole months since review round 18 ("1 month", "96 months"): 0 is the [=0] section
    assert formats == {'[=1]0" month";[=0]"—";#,##0" months"'}, formats


def test_an_option_without_a_purchase_price_reads_so(tmp_path: Path) -> None:
    """x-docs review (the known A10 item): Wide World Importers' A10 options have no purchase
    price; the Options sheet gave them a capital cost with their GPUs at 0 (USD 2.05 M beside
    the PDF's "no price") and the TCO sheet's GPU price row read "$0"."""
    result = size(load(WIDE_WORLD))
    (w,) = result.workloads
    unpriced = [o for o in w.options if o.feasible and not o.priced and o.gpu == "a10"]
    assert unpriced and all(float(o.values["gpu_price"]) == 0 for o in unpriced)
    assert all(float(o.values["capex"]) > 0 for o in unpriced)  # platforms and network only
    book = tmp_path / "wwi.xlsx"
    write_workbook(result, book)
    wb = openpyxl.load_workbook(book)
    options = wb["Options"]
    heads = {c.value: c.column for c in options[4]}
    rows = {r[heads["Configuration code in the results file"] - 1].value: r
            for r in options.iter_rows(min_row=5)}
    for o in unpriced:
        row = rows[o.id]
        assert row[heads["Capital cost"] - 1].value == NO_PRICE
        assert row[heads["On-prem cost per year"] - 1].value == NO_PRICE
        assert row[heads["Cloud cost per year"] - 1].value == pytest.approx(
            float(o.values["annual_cost_cloud"]))  # its cloud price is listed
    best = w.best
    assert best is not None and best.priced
    assert rows[best.id][heads["Capital cost"] - 1].value == pytest.approx(
        float(best.values["capex"]))
    tco = wb["TCO"]
    (price_row,) = [r for r in tco.iter_rows() if r[0].value == "gpu_price"]
    zeros = [c for c in price_row[3:] if c.data_type == "f"
             and c.number_format.endswith(f'"{NO_PRICE}"')]
    assert zeros, "the GPU price row prints its 0 as words"
