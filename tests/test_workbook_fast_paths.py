"""The workbook writer's fast paths (issue #25 item 2) give the slow paths' results: the
calculation sheets' rows and the Scenarios blocks normalised once from their templates for
the marker, against every formula normalised one by one (the structure digest a re-read
checks), over the 13 shipped accounts; formulas stored straight into XlsxWriter's cell table
(xlsxcells.direct) and cells written as one f-string each (xlsxcells.fast_rows) against
XlsxWriter's own write_formula and _write_cell, part for part of the .xlsx file."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

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


def test_shipped_accounts_are_all_here() -> None:
    assert len(SHIPPED) == 13, SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_templates_give_the_digest_and_no_formula_needs_xlsxwriters_checks(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    digest = book_module.structure_digest

    def recording(formulas: Any, names: Any, known: Any = None) -> str:
        seen["formulas"], seen["names"], seen["known"] = list(formulas), list(names), known
        return digest(seen["formulas"], seen["names"], known)

    with monkeypatch.context() as m:
        m.setattr(book_module, "structure_digest", recording)
        write_workbook(size(load(ROOT / "inputs" / name)), tmp_path / "a.xlsx")
    formulas, names, known = seen["formulas"], seen["names"], seen["known"]
    # the shortcut is taken: the calculation sheets' and Scenarios blocks' cells
    assert len(formulas) > 1000 and len(known) > 0.5 * len(formulas)
    assert digest(formulas, names, known) == digest(formulas, names)
    # what xlsxcells.direct skips: no formula uses a dynamic array function (XlsxWriter would
    # write it as an array formula) or is an array formula ({...}), and none is empty
    dynamic: re.Pattern[str] = _XLSXWRITER.re_dynamic_function
    texts = [f for _, _, f in formulas]
    assert all(f.strip("=") for f in texts)
    assert [f for f in texts if dynamic.search(f) or f.startswith(("{", "={"))] == []


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
        m.setattr(book_module, "fast_strings", lambda wb: None)
        write_workbook(result, tmp_path / "xlsxwriter.xlsx")
    shortcuts, own = _parts(tmp_path / "shortcuts.xlsx"), _parts(tmp_path / "xlsxwriter.xlsx")
    assert len(shortcuts) > 20 and shortcuts == own


def test_shortcuts_are_taken_with_this_xlsxwriter(tmp_path: Path) -> None:
    wb = pytest.importorskip("xlsxwriter").Workbook(str(tmp_path / "a.xlsx"),
                                                     {"in_memory": True})
    ws = wb.add_worksheet("A")
    xlsxcells.fast_rows(ws)
    xlsxcells.fast_strings(wb)
    assert xlsxcells.direct(ws) and "_write_cell" in vars(ws) and "_get_packager" in vars(wb)
    wb.close()
