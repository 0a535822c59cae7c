"""The workbook writer's fast paths (issue #25 item 2) give the slow paths' results: the
marker's formula normalisation that skips the number pass for plain formulas
(marker._plain), and the calculation sheets' rows normalised once from their templates,
against the full regular-expression pass over every formula and defined name the 13 shipped
accounts write (the structure digest re-reading checks); formulas stored straight into XlsxWriter's cell table
(xlsxcells.direct) and cells written as one f-string each (xlsxcells.fast_rows) against
XlsxWriter's own write_formula and _write_cell, part for part of the .xlsx file."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from llmsizer.documents import marker
from llmsizer.documents.workbook import book as book_module
from llmsizer.documents.workbook import write_workbook, xlsxcells
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p.name for p in (ROOT / "inputs").glob("*.yaml"))
# two workloads, three workloads, alternatives (Models sheet), retrieval, disaggregated
WHOLE_FILE = ("example.yaml", "enterprise-multi.yaml", "code-assistant-alternatives.yaml",
              "rag-knowledge-base.yaml", "frontier-moe-rack.yaml")
_XLSXWRITER: Any = pytest.importorskip("xlsxwriter.worksheet")


def _written(name: str, path: Path,
             monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """Write ``name``'s workbook to ``path``; the formulas and defined-name targets recorded.
    The digest the writer stores, from the calculation sheets' rows normalised once per row
    (``known``), is the digest of every formula normalised one by one through the full pass."""
    seen: dict[str, Any] = {}
    digest = book_module.structure_digest

    def recording(formulas: Any, names: Any, known: Any = None) -> str:
        seen["formulas"], seen["names"], seen["known"] = list(formulas), list(names), known
        seen["digest"] = digest(seen["formulas"], seen["names"], known)
        return str(seen["digest"])

    with monkeypatch.context() as m:
        m.setattr(book_module, "structure_digest", recording)
        write_workbook(size(load(ROOT / "inputs" / name)), path)
    assert len(seen["known"]) > 500  # the calculation sheets' cells: the shortcut is taken
    assert seen["digest"] == _slow(monkeypatch, [""], lambda _: digest(seen["formulas"],
                                                                       seen["names"]))[0]
    return [f for _, _, f in seen["formulas"]], [t for _, t in seen["names"]]


def _slow(monkeypatch: pytest.MonkeyPatch, texts: list[str], fn: Any) -> list[str]:
    with monkeypatch.context() as m:
        m.setattr(marker, "_plain", lambda bare: False)  # every code part through the regexes
        return [fn(t) for t in texts]


def test_shipped_accounts_are_all_here() -> None:
    assert len(SHIPPED) == 13, SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_plain_formulas_normalise_as_the_full_pass_and_need_no_checks(name: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    formulas, names = _written(name, tmp_path / "a.xlsx", monkeypatch)
    fast = [marker.normalize_formula(f) for f in formulas]
    fast_names = [marker.normal_name_target(t) for t in names]
    assert fast == _slow(monkeypatch, formulas, marker.normalize_formula)
    assert fast_names == _slow(monkeypatch, names, marker.normal_name_target)
    # the fast path is the one taken (~89 % over the 13 accounts; 0.6 would be a regression)
    plain = [marker._plain(f.lstrip("=").replace("$", "")) for f in formulas if '"' not in f]
    assert len(formulas) > 1000 and sum(plain) > 0.6 * len(formulas)
    # what xlsxcells.direct skips: no formula uses a dynamic array function (XlsxWriter would
    # write it as an array formula) or is an array formula ({...}), and none is empty
    dynamic: re.Pattern[str] = _XLSXWRITER.re_dynamic_function
    assert all(f.strip("=") for f in formulas)
    assert [f for f in formulas if dynamic.search(f) or f.startswith(("{", "={"))] == []


def test_number_pass_rewrites_what_the_fast_path_must_not_skip(
        monkeypatch: pytest.MonkeyPatch) -> None:
    tricky = ["=A1*1E-9", "=a1 * 0.000000001", "=1$2*3", "=$0$5+X", "=X+007", "=D12",
              "=1234567890123", "=123456789012", "=123456$7890123", "=2e3", "=in_w1_e2e*2",
              "=in_w1_users*3", "=x+\t1", "=x\x1c+1", "=KV!D8+'KV'!D9", "=٣+1", "=A1=0.50",
              "=SUM(0.09999999999999998,1)", "=IF(x>0,\"a b\",\"0.50\")", "=$A$10+.5", "=0+00"]
    fast = [marker.normalize_formula(t) for t in tricky]
    assert fast == _slow(monkeypatch, tricky, marker.normalize_formula)
    assert [marker._plain(t.lstrip("=").replace("$", "")) for t in tricky[:6]] == [
        False, False, True, False, False, True]  # "1$2" is 12: plain; "$0$5" is 05: not


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    # the creation time is the only part that differs between two writes
    parts["docProps/core.xml"] = re.sub(rb"\d{4}-\d\d-\d\dT[\d:]+Z", b"",
                                        parts["docProps/core.xml"])
    return parts


@pytest.mark.parametrize("name", WHOLE_FILE)
def test_shortcuts_give_xlsxwriters_file(name: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    result = size(load(ROOT / "inputs" / name))
    write_workbook(result, tmp_path / "shortcuts.xlsx")
    with monkeypatch.context() as m:
        m.setattr(book_module, "direct", lambda ws: False)
        m.setattr(book_module, "fast_rows", lambda ws: None)
        write_workbook(result, tmp_path / "xlsxwriter.xlsx")
    shortcuts, own = _parts(tmp_path / "shortcuts.xlsx"), _parts(tmp_path / "xlsxwriter.xlsx")
    assert len(shortcuts) > 20 and shortcuts == own


def test_shortcuts_are_taken_with_this_xlsxwriter(tmp_path: Path) -> None:
    wb = pytest.importorskip("xlsxwriter").Workbook(str(tmp_path / "a.xlsx"),
                                                     {"in_memory": True})
    ws = wb.add_worksheet("A")
    xlsxcells.fast_rows(ws)
    assert xlsxcells.direct(ws) and "_write_cell" in vars(ws)
    wb.close()
