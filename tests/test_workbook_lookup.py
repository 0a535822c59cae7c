"""Catalog lookups in the workbook: VLOOKUP with exact match (issue 14; INDEX/MATCH before,
which Excel 365 shows as @INDEX).

A lookup (``expr.Lookup``) means ``tables[table][key][column]`` in Python and
``VLOOKUP(key,table,n,0)`` in a spreadsheet (``sheetlookup.lookup_formula``). The nested IFs
this replaces fell back to the catalog's last row for an id that is not in it; now an unknown
id is an error on both sides (``EvalError`` / ``#N/A``). One example evaluated every way:
Python, LibreOffice (forced recalculation), Gnumeric; then the real workbook with a GPU id
typed over by hand.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE
from support import gnumeric
from support.libreoffice import read_values, recalculated_values

from llmsizer.documents.workbook import COL_NAME, FIRST_OPTION_COL, write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.expr import EvalError, evaluate, lookup, render
from llmsizer.model.sheetlookup import lookup_formula
from llmsizer.sizing.engine import size

openpyxl: Any = importlib.import_module("openpyxl")
xlsxwriter: Any = importlib.import_module("xlsxwriter")

pytestmark = pytest.mark.filterwarnings("ignore:Workbook contains no default style")

# Datasheet memory (GB) of three catalog GPUs, as rows of a small table.
TABLE = {"gpus": {"h100-sxm": {"memory_gb": 80.0}, "h200-sxm": {"memory_gb": 141.0},
                  "l40s": {"memory_gb": 48.0}}}
EXPR = lookup("gpus", "gpu", "memory_gb") * 2


def _book(path: Path, keys: list[str]) -> None:
    """Ids in A1:A3, memory in B1:B3, one key per row from row 5 (C) with the formula (D)."""
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("S")
    for r, (gid, row) in enumerate(TABLE["gpus"].items()):
        ws.write_string(r, 0, gid)
        ws.write_number(r, 1, row["memory_gb"])
    for r, key in enumerate(keys, start=4):
        ws.write_string(r, 2, key)
        formula = render(EXPR, lambda n, r=r: f"C{r + 1}",
                         lambda lk, key: lookup_formula(key, "$A$1:$A$3", "$B$1:$B$3"))
        ws.write_formula(r, 3, "=" + formula, None, -1)  # wrong cache: must be recalculated
    wb.close()


KEYS = ["h200-sxm", "L40S", "h100-sxm", "no-such-gpu"]


def test_formula_text() -> None:
    got = render(EXPR, lambda n: "KV!D8", lambda lk, key: lookup_formula(
        key, "Catalog!$A$5:$A$9", "Catalog!$C$5:$C$9"))
    assert got == "VLOOKUP(KV!D8,Catalog!$A$5:$C$9,3,0)*2"
    with pytest.raises(ValueError):  # not one table: the values start on another row
        lookup_formula("KV!D8", "Catalog!$A$5:$A$9", "Catalog!$C$6:$C$10")


def test_python_meaning() -> None:
    assert evaluate(EXPR, {"gpu": "h200-sxm"}, TABLE) == 282.0
    assert evaluate(EXPR, {"gpu": "L40S"}, TABLE) == 96.0  # case-insensitive, as MATCH
    with pytest.raises(EvalError):
        evaluate(EXPR, {"gpu": "no-such-gpu"}, TABLE)


def _expected(key: str) -> float | str:
    try:
        return float(evaluate(EXPR, {"gpu": key}, TABLE))
    except EvalError:
        return "#N/A"


def test_libreoffice_agrees(tmp_path: Path) -> None:
    path = tmp_path / "lookup.xlsx"
    _book(path, KEYS)
    got = recalculated_values(path, tmp_path / "lo")["S"]
    assert [got[f"D{r}"] for r in range(5, 5 + len(KEYS))] == [_expected(k) for k in KEYS]
    assert _expected("no-such-gpu") == "#N/A"  # and not the last row's 96


def test_gnumeric_agrees(tmp_path: Path) -> None:
    path = tmp_path / "lookup.xlsx"
    _book(path, KEYS)
    got = read_values(gnumeric.recalculate(path, tmp_path / "out.xlsx"))["S"]
    assert [got[f"D{r}"] for r in range(5, 5 + len(KEYS))] == [_expected(k) for k in KEYS]


def test_unknown_gpu_typed_into_the_workbook_is_an_error_not_the_last_row(tmp_path: Path
                                                                           ) -> None:
    """Type an id that is not in the catalog over the first option's GPU on KV: its memory
    and every figure that follows become #N/A after recalculation; the other columns stay."""
    book = tmp_path / "example.xlsx"
    write_workbook(size(load(EXAMPLE)), book)
    wb = openpyxl.load_workbook(book)
    ws = wb["KV"]
    rows = {ws.cell(row=r, column=COL_NAME + 1).value: r for r in range(1, ws.max_row + 1)}
    col = FIRST_OPTION_COL + 1
    ws.cell(row=rows["gpu"], column=col).value = "no-such-gpu"
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    wb.close()
    got = recalculated_values(edited, tmp_path / "lo")["KV"]
    letter = openpyxl.utils.get_column_letter(col)
    other = openpyxl.utils.get_column_letter(col + 1)
    assert got[f"{letter}{rows['gpu_memory_gb']}"] == "#N/A"
    assert isinstance(got[f"{other}{rows['gpu_memory_gb']}"], float | int)


def test_one_row_table_range_takes_the_blank_row_below(tmp_path: Path) -> None:
    """Gnumeric 1.12 answers #REF! for INDEX over one cell (measured, kept here so a fixed
    Gnumeric shows up), which is why the workbook's one-row tables (legal-128k: one
    precision) look up over the row and the blank row below it; VLOOKUP over the one row
    works in both engines, and over the two rows too."""
    path = tmp_path / "one.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("S")
    ws.write_string(0, 0, "fp8")
    ws.write_number(0, 1, 1.0)  # row 2 stays blank, as below every Catalog table
    ws.write_string(3, 0, "fp8")
    ws.write_string(4, 0, "int4")
    ws.write_formula(3, 1, "=INDEX($B$1,MATCH(A4,$A$1,0))", None, -1)
    ws.write_formula(3, 2, "=" + lookup_formula("A4", "$A$1", "$B$1"), None, -1)
    ws.write_formula(3, 3, "=" + lookup_formula("A4", "$A$1:$A$2", "$B$1:$B$2"), None, -1)
    ws.write_formula(4, 3, "=" + lookup_formula("A5", "$A$1:$A$2", "$B$1:$B$2"), None, -1)
    wb.close()
    gn = read_values(gnumeric.recalculate(path, tmp_path / "gn.xlsx"))["S"]
    lo = recalculated_values(path, tmp_path / "lo")["S"]
    assert gn["B4"] == "#REF!" and lo["B4"] == 1  # the Gnumeric finding
    assert gn["C4"] == lo["C4"] == 1
    assert gn["D4"] == lo["D4"] == 1
    assert gn["D5"] == lo["D5"] == "#N/A"
