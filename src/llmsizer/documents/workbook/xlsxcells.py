"""Shortcuts through XlsxWriter for the cells this package writes, each giving the file
XlsxWriter itself writes (tests/test_workbook_fast_paths.py compares every part of the
shipped accounts' workbooks with and without them). A workbook has ~10,000 formulas and
~17,000 cells; XlsxWriter's per-cell checks and generic XML helpers were half its ~250 ms.
Each shortcut checks XlsxWriter's internals first and leaves XlsxWriter's own way in place
when they are not as expected. The parts are also deflated at a lower zlib level.
"""

from __future__ import annotations

import importlib
import zipfile
from typing import Any

from .layout import letter

__all__ = ["ZIP_LEVEL", "deflate_parts", "direct", "fast_formulas", "fast_rows", "fast_strings",
           "strip_equals"]

# XlsxWriter ships no type information: imported untyped so mypy --strict passes.
_worksheet: Any = importlib.import_module("xlsxwriter.worksheet")
FORMULA_CELL: Any = getattr(_worksheet, "CellFormulaTuple", None)
_KINDS: dict[str, Any] = {name: getattr(_worksheet, f"Cell{name}Tuple", None)
                          for name in ("Formula", "Number", "String", "Blank")}
_ERRORS = frozenset(("#DIV/0!", "#N/A", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!"))


def strip_equals(formula: str, expand_future_functions: bool = False) -> str:
    return formula[1:] if formula.startswith("=") else formula


def fast_formulas(ws: Any) -> None:
    """Skip XlsxWriter's ~30 regex substitutions per formula (they add ``_xlfn.`` prefixes
    to functions this workbook never uses: the lint test keeps it that way). Two thirds of
    the write time otherwise. If XlsxWriter renames the hook, this does nothing."""
    if hasattr(ws, "_prepare_formula"):
        ws._prepare_formula = strip_equals


def direct(ws: Any) -> bool:
    """Whether formulas can be stored straight into ``ws``'s cell table, as XlsxWriter's own
    ``write_formula`` stores them after its checks: each formula is searched for ~40 dynamic
    array functions (FILTER, SORT...; none here: tests/test_workbook_fast_paths.py) and that
    search was ~30 ms of a workbook's ~250. Only in the mode this package uses (no
    constant_memory)."""
    return (FORMULA_CELL is not None and hasattr(ws, "_check_dimensions")
            and isinstance(getattr(ws, "table", None), dict)
            and getattr(ws, "constant_memory", True) is False)


def _escape(data: str) -> str:
    # XlsxWriter's _escape_data: &, < and > (not quotes) in element text
    return data.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fast_rows(ws: Any) -> None:
    """Write ``ws``'s formatted formula, number, shared-string and blank cells with one
    f-string each, the XML XlsxWriter's ``_write_cell`` writes for them through its generic
    attribute escaping (a regex search per attribute); any other cell goes through
    ``_write_cell`` itself."""
    original = getattr(ws, "_write_cell", None)
    if original is None or not direct(ws) or None in _KINDS.values():
        return
    formula, number, string, blank = (_KINDS[k] for k in ("Formula", "Number", "String",
                                                          "Blank"))

    kinds = (formula, number, string, blank)

    def write_cell(row: int, col: int, cell: Any) -> None:
        fmt = cell.format
        kind = type(cell)
        if not fmt or kind not in kinds:  # direct(ws): no constant_memory (inline strings)
            original(row, col, cell)
            return
        xf = fmt.xf_index  # as Format._get_xf_index, without its call once it is set
        if xf is None:
            xf = fmt._get_xf_index()
        head = f'<c r="{letter(col)}{row + 1}" s="{xf}"'
        if kind is formula:
            value = cell.value
            if isinstance(value, bool):
                head += ' t="b"'
                value = 1 if value else 0
            elif isinstance(value, str):
                if value in _ERRORS:
                    head += ' t="e"'
                elif value:
                    head += ' t="str"'
                value = _escape(value)
            ws.fh.write(f"{head}><f>{_escape(cell.formula)}</f><v>{value}</v></c>")
        elif kind is number:
            ws.fh.write(f"{head}><v>{cell.number:.16G}</v></c>")
        elif kind is string:
            ws.fh.write(f'{head} t="s"><v>{cell.string}</v></c>')
        else:
            ws.fh.write(f"{head}/>")

    ws._write_cell = write_cell
    if all(hasattr(ws, a) for a in ("_write_rows", "_calculate_spans", "_write_row",
                                    "_write_empty_row", "_xml_end_tag", "row_info", "comments")):
        ws._write_rows = lambda: _write_rows(ws)


def _write_rows(ws: Any) -> None:
    """XlsxWriter's ``_write_rows`` (with its ``_calculate_spans``), visiting each row's own
    cells in column order instead of every column of the sheet's width for each row: the
    Scenarios sheet is 85 columns wide and most rows hold a few (~3-4 ms a workbook). The
    same XML: the same rows, spans and cells in the same order."""
    table, comments, row_info = ws.table, ws.comments, ws.row_info
    lo, hi = ws.dim_colmin, ws.dim_colmax
    last = ws.dim_rowmax

    def columns(cells: Any) -> list[int]:
        return sorted(c for c in cells if lo <= c <= hi)

    spans: dict[int, str] = {}
    span_min: int | None = None
    span_max = 0
    for row_num in range(ws.dim_rowmin, last + 1):
        used = columns(table[row_num]) if row_num in table else []
        if row_num in comments:
            used += columns(comments[row_num])
        if used:
            if span_min is None:
                span_min, span_max = min(used), max(used)
            else:
                span_min, span_max = min(span_min, *used), max(span_max, *used)
        if ((row_num + 1) % 16 == 0 or row_num == last) and span_min is not None:
            spans[row_num // 16] = f"{span_min + 1}:{span_max + 1}"
            span_min, span_max = None, 0
    ws.row_spans = spans
    for row_num in range(ws.dim_rowmin, last + 1):
        cells = table.get(row_num)
        if not (row_num in row_info or row_num in comments or cells):
            continue
        span = spans.get(row_num // 16)
        info = row_info.get(row_num)
        if cells:
            if row_num not in row_info:
                ws._write_row(row_num, span)
            else:
                ws._write_row(row_num, span, info)
            write_cell = ws._write_cell
            for col_num in columns(cells):
                write_cell(row_num, col_num, cells[col_num])
            ws._xml_end_tag("row")
        else:
            ws._write_empty_row(row_num, span, info)


_packager: Any = importlib.import_module("xlsxwriter.packager")
_sst: Any = importlib.import_module("xlsxwriter.sharedstrings")


class _SharedStrings(_sst.SharedStrings):  # type: ignore[misc]
    """XlsxWriter's shared strings part, a plain string written with one f-string: no
    control character, no ``_x`` escape to escape, no whitespace at either end and no rich
    text (each a regular expression per string in XlsxWriter: ~5 ms for the example's
    ~2,500 strings). Any other string is written by XlsxWriter's own ``_write_si``."""

    def _write_si(self, string: str) -> None:
        if ("_x" in string or not string.isprintable() or string[:1].isspace()
                or string[-1:].isspace() or string.startswith("<r>")):
            super()._write_si(string)
        else:
            self.fh.write(f"<si><t>{_escape(string)}</t></si>")


class _Packager(_packager.Packager):  # type: ignore[misc]
    def _write_shared_strings_file(self) -> None:
        # = Packager._write_shared_strings_file, with the writer above
        sst = _SharedStrings()
        sst.string_table = self.workbook.str_table
        if not self.workbook.str_table.count:
            return
        sst._set_xml_writer(self._filename("xl/sharedStrings.xml"))
        sst._assemble_xml_file()


def fast_strings(wb: Any) -> None:
    """Write ``wb``'s shared strings through :class:`_SharedStrings`, by the packager hook
    XlsxWriter offers (``Workbook._get_packager``); nothing if it or the method replaced is
    not there."""
    if (hasattr(wb, "_get_packager") and hasattr(_packager.Packager, "_write_shared_strings_file")
            and hasattr(_sst.SharedStrings, "_write_si")):
        wb._get_packager = _Packager


# zlib level of the file's parts. XlsxWriter gives zipfile none (zlib's default, 6): level 3
# deflates the example's 2 MB of XML in ~10 ms less for a file 14 % larger (280 -> 320 KB;
# level 1: 350 KB, 2 ms faster still). docs/benchmarks.md "The workbook, leaner".
ZIP_LEVEL = 3


class _PartInfo(zipfile.ZipInfo):
    __slots__ = ()

    def __init__(self, filename: str = "NoName",
                 date_time: tuple[int, int, int, int, int, int] = (1980, 1, 1, 0, 0, 0)) -> None:
        super().__init__(filename, date_time)
        self._compresslevel = ZIP_LEVEL  # type: ignore[misc]  # zipfile reads it per part


def deflate_parts() -> None:
    """Deflate XlsxWriter's parts at :data:`ZIP_LEVEL`: XlsxWriter builds a ``ZipInfo`` per
    part and zipfile takes the level from it. Process-wide for XlsxWriter (the batch's
    summary.xlsx too): only speed and size change, never a part."""
    workbook: Any = importlib.import_module("xlsxwriter.workbook")
    if getattr(workbook, "ZipInfo", None) is zipfile.ZipInfo:
        workbook.ZipInfo = _PartInfo
