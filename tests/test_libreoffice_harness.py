"""The LibreOffice recalculation harness really recalculates, and the Python models of
LibreOffice's number rules (tests/support/libreoffice.py) match the real engine.

Needs `soffice` (libreoffice-calc-nogui) and `pdftotext` (poppler-utils): without them
these tests FAIL, on purpose. Measured details: docs/libreoffice-findings.md.
"""

from __future__ import annotations

import functools
import importlib
import math
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.libreoffice import (
    LibreOfficeError,
    RoundMode,
    lo_add,
    lo_compare,
    lo_round,
    lo_sub,
    lo_sum,
    lo_written,
    read_values,
    recalculate,
    recalculated_values,
    soffice_path,
    to_pdf,
)

# Neither ships type information: imported untyped so mypy --strict passes either way.
openpyxl: Any = importlib.import_module("openpyxl")
xlsxwriter: Any = importlib.import_module("xlsxwriter")
xl_rowcol_to_cell: Any = importlib.import_module("xlsxwriter.utility").xl_rowcol_to_cell

STALE = 999


def _same(py: float, cell: object) -> bool:
    """A Python number equals what LibreOffice wrote (15 significant digits)."""
    assert isinstance(cell, int | float) and not isinstance(cell, bool), cell
    return lo_written(py) == float(cell)


def _formula_book(path: Path, formulas: list[str], sheet: str = "S") -> None:
    """One formula per row in column A, each with a WRONG cached value."""
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet(sheet)
    for row, formula in enumerate(formulas):
        ws.write_formula(row, 0, formula, None, STALE)
    wb.close()


def _column_a(values: dict[str, dict[str, object]], n: int, sheet: str = "S") -> list[object]:
    return [values[sheet].get(f"A{row}") for row in range(1, n + 1)]


def _stale_book(path: Path) -> None:
    wb = xlsxwriter.Workbook(str(path))
    inputs = wb.add_worksheet("Inputs")
    calc = wb.add_worksheet("Calc")
    inputs.write_string("A2", "users")
    inputs.write_number("B2", 1200)
    inputs.write_number("B3", 0.1)
    wb.define_name("in_users", "=Inputs!$B$2")
    calc.write_formula("A1", "=Inputs!B2*2", None, STALE)
    calc.write_formula("A2", "=in_users/8", None, STALE)
    calc.write_formula("A3", "=ROUNDUP(in_users/7,0)", None, STALE)
    calc.write_formula("A4", "=A2+A3", None, STALE)
    calc.write_formula("A5", '=IF(in_users>1000,"big","small")', None, STALE)
    calc.write_formula("A6", "=Inputs!B3*3", None, STALE)
    wb.close()


# --- soffice discovery -------------------------------------------------------------


def test_soffice_is_installed() -> None:
    path = soffice_path()
    assert Path(path).exists()
    version = subprocess.run(
        [path, "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "LibreOffice" in version


def test_missing_soffice_is_an_error_with_an_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(RuntimeError, match="libreoffice-calc-nogui"):
        soffice_path()
    book = tmp_path / "a.xlsx"
    _formula_book(book, ["=1+1"])
    with pytest.raises(RuntimeError, match="apt-get install"):
        recalculate([book], tmp_path / "out")


# --- recalculation is forced -------------------------------------------------------


def test_recalculation_is_forced_over_stale_cached_values(tmp_path: Path) -> None:
    book = tmp_path / "stale.xlsx"
    _stale_book(book)

    # The file carries the wrong cached results: a reader that does not recalculate sees them.
    original = read_values(book)["Calc"]
    assert [original[f"A{r}"] for r in range(1, 7)] == [STALE] * 6

    values = recalculated_values(book, tmp_path / "out")
    assert values["Calc"] == {
        "A1": 2400,
        "A2": 150,
        "A3": 172,  # ROUNDUP(171.43)
        "A4": 322,
        "A5": "big",
        "A6": pytest.approx(0.3),
    }
    assert values["Inputs"] == {"A2": "users", "B2": 1200, "B3": 0.1}
    # the input is untouched; the recalculated copy is elsewhere
    assert read_values(book)["Calc"]["A1"] == STALE


def test_control_unforced_libreoffice_keeps_stale_values(tmp_path: Path) -> None:
    """Why the profile matters: without OOXMLRecalcMode=0 LibreOffice trusts the cache."""
    book = tmp_path / "stale.xlsx"
    _stale_book(book)
    out = recalculate([book], tmp_path / "out", force_recalc=False)[book]
    assert read_values(out)["Calc"]["A1"] == STALE


def test_cross_sheet_references_names_and_protected_sheets_recalculate(tmp_path: Path) -> None:
    books = []
    for protect in (False, True):
        path = tmp_path / f"cross_{'protected' if protect else 'open'}.xlsx"
        wb = xlsxwriter.Workbook(str(path))
        inputs = wb.add_worksheet("Inputs")
        kv = wb.add_worksheet("KV")
        out = wb.add_worksheet("Out")
        inputs.write_number("B2", 1000)
        kv.write_number("C5", 2.5)
        wb.define_name("in_users", "=Inputs!$B$2")
        wb.define_name("kv_bytes", "='KV'!$C$5")
        wb.define_name("KV!local_factor", "='KV'!$C$5")  # sheet-scoped name
        kv.write_formula("D5", "=local_factor*2", None, STALE)
        out.write_formula("A1", "='KV'!C5*2", None, STALE)
        out.write_formula("A2", "=kv_bytes*in_users", None, STALE)
        out.write_formula("A3", "=KV!D5+1", None, STALE)
        if protect:
            for ws in (inputs, kv, out):
                ws.protect("pw")
        wb.close()
        books.append(path)

    outputs = recalculate(books, tmp_path / "out")
    for book in books:
        values = read_values(outputs[book])
        assert values["Out"] == {"A1": 5, "A2": 2500, "A3": 6}, book.name
        assert values["KV"]["D5"] == 5
    protected = openpyxl.load_workbook(outputs[books[1]])
    assert protected["Out"].protection.sheet  # LibreOffice keeps the protection


# --- many files, failures, timeouts -------------------------------------------------


def test_one_call_many_files_and_every_output_is_checked(tmp_path: Path) -> None:
    good = []
    for i in range(3):
        path = tmp_path / f"good{i}.xlsx"
        _formula_book(path, [f"={i}+1"])
        good.append(path)
    outputs = recalculate(good, tmp_path / "out")
    assert set(outputs) == set(good)
    for i, path in enumerate(good):
        assert outputs[path] == (tmp_path / "out" / path.name).resolve()
        assert read_values(outputs[path])["S"]["A1"] == i + 1

    bad = tmp_path / "broken.xlsx"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    # a stale output of an earlier run must not pass for a result
    (tmp_path / "out" / "broken.xlsx").write_bytes(b"stale")
    with pytest.raises(LibreOfficeError, match=r"(?s)no output for 1 of 4.*broken\.xlsx"):
        recalculate([*good, bad], tmp_path / "out")


def test_bad_arguments_are_rejected(tmp_path: Path) -> None:
    a = tmp_path / "one" / "same.xlsx"
    b = tmp_path / "two" / "same.xlsx"
    for path in (a, b):
        path.parent.mkdir()
        _formula_book(path, ["=1"])
    with pytest.raises(ValueError, match="unique"):
        recalculate([a, b], tmp_path / "out")
    with pytest.raises(ValueError, match="overwrite its input"):
        recalculate([a], a.parent)
    with pytest.raises(FileNotFoundError):
        recalculate([tmp_path / "missing.xlsx"], tmp_path / "out")
    with pytest.raises(ValueError, match="no input"):
        recalculate([], tmp_path / "out")


def test_timeout_is_a_clear_error(tmp_path: Path) -> None:
    book = tmp_path / "a.xlsx"
    _formula_book(book, ["=1"])
    with pytest.raises(LibreOfficeError, match=r"timed out after 0\.01 s"):
        recalculate([book], tmp_path / "out", timeout=0.01)


# --- PDF ------------------------------------------------------------------------------


def test_to_pdf_renders_every_sheet(tmp_path: Path) -> None:
    assert shutil.which("pdftotext"), "pdftotext missing: apt-get install poppler-utils"
    book = tmp_path / "stale.xlsx"
    _stale_book(book)
    pdf = to_pdf(book, tmp_path / "pdf")
    assert pdf == (tmp_path / "pdf" / "stale.pdf").resolve()
    assert pdf.read_bytes().startswith(b"%PDF")
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "users" in text  # sheet Inputs
    assert "2400" in text and "big" in text  # sheet Calc, recalculated
    assert str(STALE) not in text


# --- the Python models of LibreOffice's number rules ------------------------------------

# (formula, LibreOffice 7.4 result) measured; Python's naive math differs on most.
NAMED_ROUNDING = [
    ("ROUNDUP", 0.1 * 3 / 0.1, 0, 3),  # 3.0000000000000004: math.ceil -> 4
    ("ROUNDUP", 250 / 33.333333333333336, 0, 8),  # 7.499999999999999: ceil 8 either way
    ("ROUNDDOWN", 56.9 / 2.68435456, 0, 21),
    ("ROUNDUP", 7.000000000000001, 0, 7),  # math.ceil -> 8
    ("ROUNDDOWN", 2.9999999999999996, 0, 3),  # math.floor -> 2
    ("ROUNDUP", 1.0000000001, 0, 2),
    ("ROUNDUP", 1.00000000001, 0, 2),  # 12 significant digits: kept
    ("ROUNDUP", 1.000000000001, 0, 1),  # 13th significant digit: snapped away
    ("ROUNDDOWN", 1.999999999999, 0, 2),
    ("ROUNDUP", 12345678901234.5, 0, 12345678901200),  # 12 significant digits!
    ("ROUNDUP", 1000000000001.0, -3, 1000000001000),  # integers are not snapped
    ("ROUNDUP", 0.07, 2, 0.07),  # 0.07*100 = 7.000000000000001
    ("ROUNDDOWN", 0.29, 2, 0.29),  # 0.29*100 = 28.999999999999996
    ("ROUNDUP", 1.0000000000000004, 12, 1.000000000001),  # digits >= 12: no snapping
    ("ROUNDUP", -2.1, 0, -3),  # away from zero
    ("ROUNDDOWN", -2.9, 0, -2),  # toward zero
    ("ROUNDUP", 1234.5, -2, 1300),
    ("ROUNDUP", 2.25, 1.9, 2.3),  # digits truncated
    ("ROUNDUP", 2.25, -0.5, 3),
    ("ROUND", 2.5, 0, 3),
    ("ROUND", -2.5, 0, -3),
    ("ROUND", 0.285, 2, 0.29),  # Python round(): 0.28
    ("ROUND", 1.005, 2, 1.01),  # Python round(): 1.0
    ("ROUND", 2.675, 2, 2.68),
    ("ROUND", -21957.499999999993, 0, -21957),  # digits 0: no snapping
]
MODE: dict[str, RoundMode] = {"ROUND": "nearest", "ROUNDUP": "up", "ROUNDDOWN": "down"}


@pytest.mark.parametrize(("fn", "x", "digits", "expected"), NAMED_ROUNDING)
def test_lo_round_reproduces_measured_cases(fn: str, x: float, digits: float, expected: float) -> None:
    assert lo_round(x, digits, MODE[fn]) == expected


def _noisy_rounding_cases(rng: random.Random, n: int) -> list[tuple[str, float, float]]:
    cases: list[tuple[str, float, float]] = []
    for _ in range(n):
        k = rng.choice(
            [
                rng.randint(1, 20),
                rng.randint(1, 10**6),
                rng.randint(1, 10**4) / 4,
                rng.randint(1, 10**5) / 100,
                rng.randint(1, 10**9) * 1000.0,
            ]
        )
        eps = 10 ** rng.uniform(-16, -12) * rng.choice([1, -1])
        x = k * (1 + eps) * rng.choice([1, 1, 1, -1])
        digits = rng.choice([0, 0, 0, 0, 1, 2, -1, -2, 3, 11, 12, 13])
        cases.append((rng.choice(["ROUNDUP", "ROUNDDOWN", "ROUND"]), x, digits))
    # products of realistic inputs (the noise the sizing model actually makes)
    for _ in range(n // 4):
        a = rng.randint(1, 4000) / rng.choice([1, 10, 100])
        b = rng.choice([0.1, 0.3, 0.7, 1.2, 2.68435456, 33.333333333333336, 3.6, 1.1])
        cases.append((rng.choice(["ROUNDUP", "ROUNDDOWN"]), a / b * b, 0))
        cases.append((rng.choice(["ROUNDUP", "ROUNDDOWN"]), a * b, rng.choice([0, 1, 2])))
    return cases


def test_lo_round_matches_libreoffice_on_noisy_values(tmp_path: Path) -> None:
    cases = [(fn, x, d) for fn, x, d, _ in NAMED_ROUNDING]
    cases += _noisy_rounding_cases(random.Random(20240611), 240)
    book = tmp_path / "rounding.xlsx"
    _formula_book(book, [f"={fn}({x!r},{d!r})" for fn, x, d in cases])
    results = _column_a(recalculated_values(book, tmp_path / "out"), len(cases))

    mismatches = [
        (fn, x, d, lo_round(x, d, MODE[fn]), got)
        for (fn, x, d), got in zip(cases, results, strict=True)
        if not _same(lo_round(x, d, MODE[fn]), got)
    ]
    assert mismatches == []

    # ...and the test has teeth: Python's naive rounding disagrees with LibreOffice often.
    def naive(fn: str, x: float, d: float) -> float:
        f = 10.0 ** int(d)
        if fn == "ROUND":
            return round(x, int(d))
        op = math.ceil if (fn == "ROUNDUP") == (x > 0) else math.floor
        return op(x * f) / f

    naive_misses = sum(
        not _same(naive(fn, x, d), got) for (fn, x, d), got in zip(cases, results, strict=True)
    )
    assert naive_misses > len(cases) // 10


def test_lo_arithmetic_model_matches_libreoffice(tmp_path: Path) -> None:
    rng = random.Random(7)
    pairs = [(0.1 * 3, 0.3), (0.1 + 0.2, 0.3), (1 + 3e-15, 1.0), (1 + 4e-15, 1.0), (3.0, 3.0)]
    for _ in range(150):
        a = rng.uniform(-1000, 1000) * rng.choice([1, 1e-6, 1e9])
        rel = rng.choice([0, 1e-16, 2e-15, 3.5e-15, 3.6e-15, 4e-15, 1e-14, 1e-13])
        pairs.append((a, a * (1 + rel * rng.choice([1, -1]))))
    lists: list[list[float]] = [[0.1, 0.2, 0.3], [1e16, 1, -1e16], [0.1, 0.2, -0.3]]
    for _ in range(60):
        xs = [
            round(rng.uniform(-100, 100), rng.choice([1, 2, 3])) * rng.choice([1, 1e6, 1e-3])
            for _ in range(rng.randint(2, 25))
        ]
        if rng.random() < 0.3:  # near-total cancellation
            xs.append(-math.fsum(xs) * (1 + rng.choice([0, 1e-16, 1e-15, 1e-14])))
        lists.append(xs)

    book = tmp_path / "arith.xlsx"
    wb = xlsxwriter.Workbook(str(book))
    ws = wb.add_worksheet("S")
    data = wb.add_worksheet("D")
    for i, (a, b) in enumerate(pairs):
        # scaling by 1E+300 exposes a noise of 1e-17 that the 15-digit file would hide
        ws.write_formula(i, 0, f"=({a!r}-{b!r})*1E+300", None, STALE)
        ws.write_formula(i, 1, f"=({a!r}+{-b!r})*1E+300", None, STALE)
        ws.write_formula(i, 2, f"=IF({a!r}<{b!r},-1,IF({a!r}={b!r},0,1))", None, STALE)
    refs = []
    for j, xs in enumerate(lists):
        for r, x in enumerate(xs):
            data.write_formula(r, j, f"={x!r}", None, 0)  # literal keeps all 17 digits
        ref = round(math.fsum(xs), 1) - 0.01  # subtract a near value: shows the low digits
        refs.append(ref)
        rng_ref = f"D!{xl_rowcol_to_cell(0, j)}:{xl_rowcol_to_cell(len(xs) - 1, j)}"
        ws.write_formula(j, 3, f"=SUM({rng_ref})-{ref!r}", None, STALE)
        ws.write_formula(j, 4, "=SUM(" + ",".join(map(repr, xs)) + f")-{ref!r}", None, STALE)
        ws.write_formula(j, 5, "=" + "+".join(f"({x!r})" for x in xs) + f"-{ref!r}", None, STALE)
    wb.close()
    got = recalculated_values(book, tmp_path / "out")["S"]

    def cell(row: int, col: int) -> object:
        return got[xl_rowcol_to_cell(row, col)]

    for i, (a, b) in enumerate(pairs):
        assert _same(lo_sub(a, b) * 1e300, cell(i, 0)), (a, b)
        assert _same(lo_add(a, -b) * 1e300, cell(i, 1)), (a, b)
        assert lo_compare(a, b) == cell(i, 2), (a, b)
    for j, (xs, ref) in enumerate(zip(lists, refs, strict=True)):
        assert _same(lo_sub(lo_sum(xs), ref), cell(j, 3)), xs  # range: in order
        assert _same(lo_sub(lo_sum(xs[::-1]), ref), cell(j, 4)), xs  # arguments: last first
        chain = functools.reduce(lo_add, xs[1:], xs[0])
        assert _same(lo_sub(chain, ref), cell(j, 5)), xs

    # teeth: plain Python arithmetic differs from LibreOffice here
    assert 0.1 * 3 - 0.3 != 0 and cell(0, 0) == 0
    assert sum([0.1, 0.2, 0.3]) != 0.6 and lo_sum([0.1, 0.2, 0.3]) == 0.6


# (formula, value as openpyxl data_only reads LibreOffice 7.4's result)
FINDINGS: list[tuple[str, object]] = [
    ('=IF("FP8"="fp8",1,0)', 1),  # text = is case-insensitive
    ('="FP8"="fp8"', True),
    ('=EXACT("FP8","fp8")', False),
    ('=IF("FP8"="fp8 ",1,0)', 0),  # ...but not blank-insensitive
    ('=IF("a"<"B",1,0)', 1),
    ("=LOG(8,2)", 3),
    ("=LOG(1000,10)-2.99", 0.00999999999999934),  # log(x)/log(b): 2.9999999999999996
    ("=LOG(1000)-2.99", 0.00999999999999934),  # base 10 the same way, NOT log10()
    ("=LOG10(1000)-2.99", 0.00999999999999979),  # exactly 3
    ("=LOG(0)", "#VALUE!"),
    ("=LOG(8,1)", "#VALUE!"),
    ("=POWER(1.1,2)-1.2", 0.0100000000000002),  # same double as Python 1.1**2
    ("=2^3^2", 64),  # left-associative
    ("=-2^2", 4),  # unary minus binds tighter
    ("=-2^0.5", "#NUM!"),
    ("=(-8)^(1/3)", -2),  # Excel: #NUM!, Python: complex
    ("=0^0", 1),  # Excel: #NUM!
    ("=POWER(0,-1)", "#NUM!"),
    ("=MAX(TRUE,0.5)", 1),
    ("=MIN(FALSE,1)", 0),
    ("=TRUE+1", 2),
    ("=1/0", "#DIV/0!"),
    ("=0/0", "#DIV/0!"),
    ("=IFERROR(1/0,-1)", -1),
    ("=NA()", "#N/A"),
    ("=SQRT(-1)", "#VALUE!"),
    ("=1/3", 0.333333333333333),  # written with 15 significant digits
    ("=0.1*3-0.3", 0),
    ("=IF(0.1+0.2=0.3,1,0)", 1),
]


def test_measured_findings_still_hold(tmp_path: Path) -> None:
    book = tmp_path / "findings.xlsx"
    _formula_book(book, [f for f, _ in FINDINGS])
    results = _column_a(recalculated_values(book, tmp_path / "out"), len(FINDINGS))
    wrong = [
        (f, want, got)
        for (f, want), got in zip(FINDINGS, results, strict=True)
        if not (got == want and type(got) is type(want))
    ]
    assert wrong == []


def test_booleans_inside_ranges_count_as_numbers(tmp_path: Path) -> None:
    """LibreOffice counts a TRUE cell in MAX/SUM ranges as 1 (Excel ignores it)."""
    book = tmp_path / "bools.xlsx"
    wb = xlsxwriter.Workbook(str(book))
    ws = wb.add_worksheet("S")
    ws.write_boolean("A1", True)
    ws.write_number("A2", 0.5)
    ws.write_formula("B1", "=MAX(A1:A2)", None, STALE)
    ws.write_formula("B2", "=SUM(A1:A2)", None, STALE)
    ws.write_formula("B3", "=MIN(A1:A2)", None, STALE)
    wb.close()
    values = recalculated_values(book, tmp_path / "out")["S"]
    assert values["B1"] is True  # 1, and formatted as a boolean after its source
    assert values["B2"] == 1.5
    assert values["B3"] == 0.5


def test_error_cells_read_as_strings_with_error_type(tmp_path: Path) -> None:
    book = tmp_path / "err.xlsx"
    _formula_book(book, ["=1/0"])
    out = recalculate([book], tmp_path / "out")[book]
    wb = openpyxl.load_workbook(out, data_only=True)
    cell = wb["S"]["A1"]
    assert (cell.value, cell.data_type) == ("#DIV/0!", "e")
