"""The written workbooks against Microsoft Excel's documented rules (benchmarks/excel_rules.py):
Excel cannot run here and LibreOffice and Gnumeric accept files Excel rejects or shows
differently. Each rule's source is cited where it is defined in excel_rules.py: Microsoft's
"Excel specifications and limits" (formula 8,192 characters, 64 nesting levels, 255
arguments, 32,767 characters a cell), "Implicit intersection operator: @", ECMA-376 Part 1
§18.17.7 (functions), §18.2.5 (defined names), §18.18.11 (cell types), XlsxWriter's list of
functions needing ``_xlfn.`` and its data validation limits (titles 32, messages 255)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest
import xlsxwriter

from llmsizer.documents.workbook.formats import dv_title, formula_text
from llmsizer.runs import batch
from llmsizer.runs.summary import write_summary

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from excel_rules import FUTURE_FUNCTIONS, Problem, check, parse  # noqa: E402

ACCOUNTS = sorted((ROOT / "inputs").glob("*.yaml"))
LONG = "in_" + "x" * 27  # a defined name of 30 characters


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every shipped account's workbook and the batch's summary.xlsx, as ``llmsizer report
    inputs/`` writes them."""
    out = tmp_path_factory.mktemp("excel-rules")
    outcomes = batch.run_batch(batch.collect([ROOT / "inputs"]), out, jobs=1, force=False,
                               templates=None)
    write_summary(outcomes, out / "summary.xlsx")
    paths = sorted(out.glob("*.xlsx"))
    assert len(paths) == len(ACCOUNTS) + 1, paths  # one per account, and the summary
    return paths


def test_the_shipped_workbooks_keep_excels_rules(books: list[Path]) -> None:
    problems: list[Problem] = []
    lookups: list[str] = []
    for path in books:
        for p in check(path):
            if p.rule == "at-lookup":
                lookups.append(p.where)  # shown as @INDEX(...) by Excel 365, the same value
            else:
                problems.append(p)
    assert [str(p) for p in problems] == []
    # The re-run check's name of the cheapest option is the only place Excel 365 marks with
    # @: INDEX of one Options column at an exact MATCH, one cell or #N/A (never the range
    # INDEX returns for row 0), two cells a workload (Summary, Inputs). The catalog lookups
    # are VLOOKUPs (a value, no @; they were INDEX/MATCH and shown @INDEX).
    assert lookups and {w.split(" ", 1)[1].split("!")[0] for w in lookups} == {"Summary",
                                                                              "Inputs"}


# --- the checker itself: each rule fires on a formula Excel would reject or show changed -------


def _problems(tmp_path: Path, cells: dict[str, tuple[str, object]],
              yes_no: tuple[str, ...] = ()) -> dict[str, set[str]]:
    path = tmp_path / "bad.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("Data")
    wb.add_worksheet("My Sheet").write_number("A1", 1)
    wb.define_name("in_x", "=Data!$A$1")
    wb.define_name(LONG, "=Data!$A$2")
    flag = wb.add_format({"num_format": '"yes";"yes";"no"'})  # formats.py's flag format
    for ref, (formula, value) in cells.items():
        ws.write_formula(ref, formula, flag if ref in yes_no else None, value)
    ws.data_validation("A1", {"validate": "integer", "criteria": ">", "value": 0,
                              "input_title": "Concurrent users at peak (stated"})
    ws.write_url("C1", "internal:Nowhere!A1")       # a link to a sheet that is not there
    ws.write_string("C2", "line\n" * 254)            # 254 line feeds (Excel: 253)
    ws.set_column("F:F", 300)                        # wider than Excel's 255
    wb.close()
    out: dict[str, set[str]] = {}
    for p in check(path):
        out.setdefault(p.where.split(" ", 1)[1], set()).add(p.rule)
    return out


def test_each_rule_fires(tmp_path: Path) -> None:
    found = _problems(tmp_path, {
        "B1": ("=STDEV.S(1,2)", 0),                # needs _xlfn.: #NAME? in Excel
        "B2": ("=_xlfn.SUM(A1:A3)", 0),          # SUM is Excel 2007's: no prefix
        "B3": ("=FROBNICATE(1)", 0),             # no such function
        "B4": ("=A1:A3+1", 0),                   # a range where a value goes: @ in Excel 365
        "B5": ("=INDEX(A1:A3,C1)", 0),           # may be a range (C1 = 0): @INDEX
        "B6": ("=INDEX(A1:A3,MATCH(C1,D1:D3,0))", 0),  # the lookup: @INDEX, same value
        "B7": ("=A1>0", "yes"),                  # a logical cached as text
        # 9,300 characters (a long name is a few bytes parsed: no internal-length)
        "B8": (f"=SUM(SUM({','.join([LONG] * 200)}),SUM({','.join([LONG] * 100)}))", 0),
        "B9": ("=" + "MAX(" * 65 + "1" + ")" * 65, 0),  # 65 levels
        "B10": ("=SUM(A1:A3)+MAX(1,in_x)", 0),   # fine
        "B11": ("=SUM(" + ",".join(["1"] * 256) + ")", 0),  # 256 arguments
        "B12": ('="' + "x" * 256 + '"', ""),      # a text constant over 255
        # 7,200 characters but about 18,000 bytes parsed (Excel: 16,384)
        "B14": ("=(A1>0)=1", False),             # TRUE=1: FALSE in Excel, TRUE in LibreOffice
        "B15": ("=SUM(B6:B7)", 0),               # B7 is a logical: Excel's SUM skips it
        "B16": ("=A1>0", 1),  # a logical cached as 1, shown yes/no: on purpose (see rules)
        "B17": ("=A1>0", 1),  # ... but in the General format: 1 until Excel recalculates
        "B13": ("=MAX(" + ",".join(["SUM(" + ",".join(["1.5"] * 200) + ")"] * 9) + ")", 0),
    }, yes_no=("B16",))
    assert found["Data!B1"] == {"future-prefix"}
    assert found["Data!B2"] == {"future-prefix"}
    assert found["Data!B3"] == {"unknown-function"}
    assert found["Data!B4"] == {"implicit-intersection"}
    assert found["Data!B5"] == {"implicit-intersection"}
    assert found["Data!B6"] == {"at-lookup"}
    assert found["Data!B7"] == {"cached-type"}
    assert found["Data!B8"] == {"length"}
    assert found["Data!B9"] == {"nesting"}
    assert "Data!B10" not in found
    assert found["Data!B11"] == {"arguments"}
    assert found["Data!B12"] == {"text-constant"}
    assert found["Data!B13"] == {"internal-length"}
    assert found["Data!B14"] == {"logical-number"}
    assert "Data!B16" not in found
    assert found["Data!B17"] == {"cached-type"}
    assert found["Data!B15"] == {"logical-in-range"}
    assert found["Data link C1"] == {"hyperlink"}
    assert found["Data!C2"] == {"cell-text"}
    assert found["Data column 6"] == {"layout"}
    assert found["Data validation A1"] == {"validation-text"}


def test_future_functions_come_from_xlsxwriter() -> None:
    # XlsxWriter docs, "Formulas added in Excel 2010 and later" and the dynamic array ones
    assert {"STDEV.S", "XLOOKUP", "FILTER", "IFS", "CONCAT"} <= FUTURE_FUNCTIONS
    assert not {"IF", "INDEX", "MATCH", "ROUNDUP", "LOG", "POWER"} & FUTURE_FUNCTIONS


def test_the_parser_keeps_excels_precedence() -> None:
    tree = parse('1+2*3^2>=A1&"x"')  # comparison binds loosest, then &, + , *, ^
    assert (tree.kind, tree.value) == ("op", ">=")
    assert (tree.args[1].kind, tree.args[1].value) == ("op", "&")
    left = tree.args[0]
    assert (left.value, left.args[1].value, left.args[1].args[1].value) == ("+", "*", "^")


def test_validation_titles_end_at_a_word() -> None:
    # Excel's input and error titles hold 32 characters (XlsxWriter's data_validation docs)
    assert dv_title("KV reserved per request (stated)") == "KV reserved per request (stated)"
    assert dv_title("Concurrent users at peak (stated)") == "Concurrent users at peak…"
    assert dv_title("Tensor parallel (GPUs per replica)") == "Tensor parallel…"
    assert dv_title("Users per replica, replicas fixed") == "Users per replica, replicas…"


def test_sheet_and_defined_names_are_checked(tmp_path: Path) -> None:
    """XlsxWriter refuses bad names itself, so the file is edited afterwards: a sheet named
    History (reserved by Excel) and a defined name that is an R1C1 cell reference."""
    _problems(tmp_path, {"B1": ("=in_x", 0)})
    edited = tmp_path / "edited.xlsx"
    with zipfile.ZipFile(tmp_path / "bad.xlsx") as src, zipfile.ZipFile(edited, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "xl/workbook.xml":
                data = (data.replace(b'name="My Sheet"', b'name="History"')
                        .replace(b'name="in_x"', b'name="R1C1"'))
            dst.writestr(item, data)
    rules = {(p.where.split(" ", 1)[1], p.rule) for p in check(edited)}
    assert ("sheet 'History'", "sheet-name") in rules
    assert ("defined name R1C1", "name") in rules


def test_long_formula_text_is_joined_from_pieces() -> None:
    """Excel takes text constants of up to 255 characters in a formula (Microsoft's
    CONCATENATE page); the writer joins a longer one from pieces, the same text."""
    assert formula_text('say "hi"') == '"say ""hi"""'
    long = 'x"' * 300  # 600 characters, the quotes doubled in the formula
    tree = parse("=" + formula_text(long))
    pieces = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.kind == "str":
            assert len(node.value[1:-1].replace('""', '"')) <= 255
            pieces.append(node.value[1:-1].replace('""', '"'))
        stack.extend(reversed(node.args))
    assert "".join(pieces) == long and len(pieces) == 3
