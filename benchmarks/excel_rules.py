"""Audit written .xlsx files against Microsoft Excel's documented rules (Excel cannot run here;
LibreOffice and Gnumeric accept things Excel rejects). Reads the parts' XML straight from the
zip, so it sees exactly what Excel will parse: every cell formula, defined name, data
validation, conditional format and chart reference, the cached values and the shared strings.

    PYTHONPATH=src python benchmarks/excel_rules.py out/*.xlsx      # one line per problem

    PYTHONPATH=src python benchmarks/excel_rules.py --stats out/*.xlsx  # headroom to limits

tests/test_workbook_excel_rules.py runs it over the shipped accounts' workbooks and the batch
summary. Each rule names its source; the numbers are Microsoft's "Excel specifications and
limits" (support.microsoft.com, 1672b34d-7043-467e-8e27-269d656771c3) unless said otherwise.
Rules (their ids in the report): future-prefix, unknown-function, arguments, length,
internal-length, nesting, text-constant, implicit-intersection, at-lookup (displayed @INDEX
only), logical-number, logical-in-range, sheet-quote, reference, sheet-name, name,
cached-type, cached-value, cell-text, validation, validation-text, number-format(s),
hyperlink, layout, merge, syntax.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from excel_book import NS, PRECEDENCE, REF, Book, Node, is_cell, parse, ptg_bytes, split_cell

__all__ = ["FUTURE_FUNCTIONS", "Problem", "check", "stats"]

# Excel specifications and limits, "Calculation specifications and limits".
MAX_FORMULA_CHARS = 8192      # "Length of formula contents"
MAX_NESTING = 64              # "Nested levels of functions"
MAX_ARGUMENTS = 255           # "Arguments in a function"
MAX_FORMULA_TEXT = 255        # "Text values in formulas are limited to 255 characters"
                              # (Microsoft, CONCATENATE function: "Common Problems")
MAX_FORMULA_BYTES = 16384     # "Internal length of formula" (estimated below)
MAX_LINE_FEEDS = 253          # "Maximum number of line feeds per cell"
MAX_HEADER_CHARS = 255        # "Characters in a header or footer"
MAX_COLUMN_WIDTH = 255        # "Column width: 255 characters"
MAX_ROW_HEIGHT = 409          # "Row height: 409 points"
MAX_CELL_CHARS = 32767        # "Total number of characters that a cell can contain"
MAX_NUMBER_FORMATS = 200      # "Number formats in a workbook: between 200 and 250"
MAX_HYPERLINK_CHARS = 2079    # XlsxWriter's write_url: "Excel limits URLs to 2079 characters"
# Data validation (XlsxWriter docs, data_validation(): Excel's dialog limits): input and
# error titles 32 characters, messages 255, a literal list 255 characters in all.
MAX_DV_TITLE, MAX_DV_MESSAGE, MAX_DV_LIST = 32, 255, 255
# Sheet names: Excel's rename dialog ("You typed an invalid name for a sheet"): 1-31
# characters, none of : \ / ? * [ ], not starting or ending with ', not "History".
MAX_SHEET_NAME = 31
SHEET_FORBIDDEN = set(':\\/?*[]')

# Functions of ECMA-376 Part 1 §18.17.7 ("Predefined Function Definitions", the Excel 2007
# set: no prefix in the file). Only those a sizing workbook could plausibly use are listed;
# anything else is reported so that someone checks it against §18.17.7 before it ships.
ECMA_FUNCTIONS = frozenset({
    "ABS", "AND", "AVERAGE", "CEILING", "CHOOSE", "COUNT", "COUNTA", "COUNTIF", "EXP", "FLOOR",
    "HLOOKUP", "IF", "IFERROR", "INDEX", "INT", "ISBLANK", "ISERROR", "ISNUMBER", "ISTEXT", "LEN",
    "LN", "LOG", "LOG10", "LOOKUP", "MATCH", "MAX", "MIN", "MOD", "N", "NOT", "OR", "POWER",
    "ROUND", "ROUNDDOWN", "ROUNDUP", "SQRT", "SUM", "SUMIF", "SUMPRODUCT", "T", "TEXT", "VLOOKUP",
    "TRUE", "FALSE",
})


def _future_functions() -> frozenset[str]:
    """Functions Excel stores with ``_xlfn.`` (added in Excel 2010 and later, and the
    dynamic-array ones): read from XlsxWriter's own formula preparation, the list its docs
    give under "Formulas added in Excel 2010 and later" (xlsxcells.py skips that step, so
    the prefix must be right by construction)."""
    ws = __import__("xlsxwriter.worksheet", fromlist=["Worksheet"]).Worksheet
    source = inspect.getsource(ws._prepare_formula)
    return frozenset(re.findall(r'"_xlfn\.(?:_xlws\.)?([A-Z0-9.]+)\(', source))


FUTURE_FUNCTIONS = _future_functions()

# Parameters that take a reference or an array, where a multi-cell range is not implicitly
# intersected (Microsoft, "Implicit intersection operator: @": no @ where the function
# "accepts an array or range (e.g. SUM() or AVERAGE())"). (function, argument index), -1: all.
RANGE_PARAMS = frozenset({("INDEX", 0), ("MATCH", 1), ("SUM", -1), ("MAX", -1), ("MIN", -1),
                          ("AND", -1), ("OR", -1), ("COUNT", -1), ("COUNTA", -1),
                          ("AVERAGE", -1), ("SUMPRODUCT", -1), ("LOOKUP", 1), ("LOOKUP", 2),
                          ("VLOOKUP", 1), ("HLOOKUP", 1), ("COUNTIF", 0), ("SUMIF", 0),
                          ("SUMIF", 2)})
# Functions that can return a multi-cell range: in a scalar place dynamic-array Excel shows
# them as @INDEX(...) (same page: "Functions that return multi-cell ranges or arrays will be
# prefixed with @ if they were authored in an older version of Excel": INDEX, OFFSET, UDFs).
RANGE_RESULTS = frozenset({"INDEX", "OFFSET", "INDIRECT", "CHOOSE"})
# "If an argument is an array or reference, only numbers in that array or reference are
# used. Empty cells, logical values, or text in the array or reference are ignored."
# (Microsoft, SUM, MAX and MIN functions); LibreOffice counts a logical as 1 or 0.
NUMBERS_ONLY_IN_RANGES = frozenset({"SUM", "MAX", "MIN", "AVERAGE"})
BOOLEAN_FUNCTIONS = frozenset({"AND", "OR", "NOT", "TRUE", "FALSE", "ISBLANK", "ISERROR",
                               "ISNUMBER", "ISTEXT"})
TEXT_FUNCTIONS = frozenset({"TEXT", "T"})

_COLUMN_ONLY = re.compile(r"^(?:.+!)?\$?[A-Z]{1,3}:\$?[A-Z]{1,3}$|^(?:.+!)?\$?\d+:\$?\d+$")
_CELL_LIKE = re.compile(r"^[A-Za-z]{1,3}[0-9]+$|^[RrCc]$|^[Rr][0-9]*[Cc][0-9]*$")
_NAME = re.compile(r"^[A-Za-z_\\][A-Za-z0-9_.\\]*$")
_YES_NO = re.compile(r'^"yes";"yes";"no"$')
_BARE_SHEET = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


@dataclass(frozen=True)
class Problem:
    where: str   # "book.xlsx Sheet!A1" or "book.xlsx defined name x"
    rule: str    # short rule id, e.g. "future-prefix"
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: [{self.rule}] {self.detail}"


# --- the rules ---------------------------------------------------------------------------------


def _multi_cell(book: Book, ref: str, here: str) -> bool:
    if _COLUMN_ONLY.match(ref):
        return True
    span = book.resolve(ref, here)
    return span is not None and span[1] != span[2]


def _exact_lookup(node: Node, book: Book, here: str) -> bool:
    """``INDEX(one column or row, MATCH(key, ids, 0))``: always one cell."""
    if node.value != "INDEX" or len(node.args) != 2 or node.args[0].kind != "ref":
        return False
    span = book.resolve(node.args[0].value, here)
    match = node.args[1]
    if span is None or match.kind != "fn" or match.value != "MATCH" or len(match.args) != 3:
        return False
    (c1, r1), (c2, r2) = split_cell(span[1]), split_cell(span[2])
    return (c1 == c2 or r1 == r2) and match.args[2].kind == "num" and match.args[2].value == "0"


def _walk(node: Node, book: Book, here: str, ranged: bool, depth: int,
          out: list[str]) -> int:
    """Problems of one tree (appended to ``out``); returns the function nesting depth.
    ``ranged``: this place takes a reference (no implicit intersection)."""
    deepest = depth
    if node.kind == "fn":
        name = node.value
        bare = name.removeprefix("_XLFN.").removeprefix("_XLWS.")
        if name.startswith("_XLFN.") and bare not in FUTURE_FUNCTIONS:
            out.append(f"future-prefix: {bare} needs no _xlfn. (ECMA-376 §18.17.7)")
        elif not name.startswith("_XLFN.") and bare in FUTURE_FUNCTIONS:
            out.append(f"future-prefix: {bare} must be written _xlfn.{bare} (#NAME? in Excel)")
        elif bare not in FUTURE_FUNCTIONS and bare not in ECMA_FUNCTIONS:
            out.append(f"unknown-function: {bare} is not a checked ECMA-376 §18.17.7 function")
        if len(node.args) > MAX_ARGUMENTS:
            out.append(f"arguments: {bare} has {len(node.args)} (Excel's limit 255)")
        if bare in RANGE_RESULTS and not ranged:
            if _exact_lookup(node, book, here):
                # Shown as @INDEX(...) by Excel 365 but the same value: MATCH(..., 0) is a
                # row number >= 1 or #N/A, never the 0 that makes INDEX return a range.
                out.append("at-lookup: INDEX(column, MATCH(key, ids, 0)) in a value's place: "
                           "Excel 365 shows @INDEX, the value is unchanged")
            else:
                out.append(f"implicit-intersection: {bare}(...) in a value's place: "
                           f"Excel 365 shows @{bare}")
        if bare in NUMBERS_ONLY_IN_RANGES:
            for arg in node.args:
                if arg.kind == "ref" and _multi_cell(book, arg.value, here):
                    logical = _logical_cells(book, arg.value, here)
                    if logical:
                        out.append(f"logical-in-range: {bare}({arg.value}) holds logicals "
                                   f"({logical[0]}...): Excel ignores them, LibreOffice "
                                   f"counts TRUE as 1")
        for i, arg in enumerate(node.args):
            takes_range = (bare, i) in RANGE_PARAMS or (bare, -1) in RANGE_PARAMS
            if bare == "IF" and i > 0:
                takes_range = ranged  # IF passes its value on to its own place
            deepest = max(deepest, _walk(arg, book, here, takes_range, depth + 1, out))
    elif node.kind == "str" and len(node.value) - 2 > MAX_FORMULA_TEXT:
        out.append(f"text-constant: {len(node.value) - 2} characters (Excel's limit 255)")
    elif node.kind == "ref":
        if not ranged and _multi_cell(book, node.value, here):
            out.append(f"implicit-intersection: range {node.value} in a value's place: "
                       f"Excel 365 shows @ or spills")
        if "!" in node.value:
            sheet = node.value.rsplit("!", 1)[0]
            if not sheet.startswith("'") and (not _BARE_SHEET.match(sheet) or is_cell(sheet)
                                              or sheet.upper() in ("TRUE", "FALSE")):
                out.append(f"sheet-quote: {sheet} must be quoted '{sheet}'! (XlsxWriter "
                           f"issue 1078: Excel's quoting rules)")
            name = sheet[1:-1].replace("''", "'") if sheet.startswith("'") else sheet
            if name not in book.sheets:
                out.append(f"reference: no sheet {name}")
        elif (not REF.match(node.value) and not _COLUMN_ONLY.match(node.value)
              and node.value.lower() not in book.all_names):
            out.append(f"reference: {node.value} is neither a cell nor a defined name")
    else:
        if node.kind == "op" and PRECEDENCE[node.value] == 1:
            left, right = (_types(a, book, here, static=True) for a in node.args)
            if {frozenset(left), frozenset(right)} == {frozenset("b"), frozenset("n")}:
                out.append("logical-number: a logical compared with a number: TRUE=1 is "
                           "FALSE in Excel and Gnumeric, TRUE in LibreOffice")
        for arg in node.args:
            deepest = max(deepest, _walk(arg, book, here, False, depth, out))
    return deepest


def _types(node: Node, book: Book, here: str, seen: int = 0, static: bool = False
           ) -> set[str]:
    """What a formula can return: "n" number, "s" text, "b" logical (ECMA-376 §18.18.11,
    ST_CellType: b, n, e, s, str, inlineStr); errors aside. ``static``: a referenced formula
    cell by its formula, not its cached value (logicals are cached as 1/0 on purpose)."""
    if seen > 50:
        return {"n", "s", "b"}
    k = node.kind
    if k == "num" or k in ("neg", "pos", "pct"):
        return {"n"}
    if k == "str":
        return {"s"}
    if k == "bool":
        return {"b"}
    if k == "err":
        return set()
    if k == "op":
        return {"b"} if PRECEDENCE[node.value] == 1 else {"s"} if node.value == "&" else {"n"}
    if k == "fn":
        bare = node.value.removeprefix("_XLFN.")
        if bare == "IF":
            out: set[str] = set()
            for arg in node.args[1:3]:
                out |= _types(arg, book, here, seen + 1, static)
            return out or {"b"}  # IF(c, x) with no else is FALSE when c is false
        if bare == "INDEX" and node.args and node.args[0].kind == "ref":
            return _range_types(book, node.args[0].value, here)
        if (bare == "VLOOKUP" and len(node.args) >= 3 and node.args[1].kind == "ref"
                and node.args[2].kind == "num"):  # the table's n-th column
            return _range_types(book, node.args[1].value, here, int(float(node.args[2].value)))
        if bare in BOOLEAN_FUNCTIONS:
            return {"b"}
        if bare in TEXT_FUNCTIONS:
            return {"s"}
        return {"n"}
    span = book.resolve(node.value, here) if static else None
    if span is not None and span[1] == span[2] and span[0] in book.cells:
        return _cell_types(book, span[0], span[1], seen + 1)
    return _range_types(book, node.value, here)


def _cell_types(book: Book, sheet: str, cell: str, seen: int) -> set[str]:
    """A cell's type by its formula (memoised), or by its value when it holds none."""
    key = (sheet, cell)
    if key not in book.static:
        t, _value, formula = book.cells[sheet].get(cell, ("n", "", None))
        if formula is None:
            kind = {"s": "s", "str": "s", "inlineStr": "s", "b": "b", "e": ""}.get(t, "n")
            book.static[key] = {kind} - {""} if kind else set()
        else:
            book.static[key] = {"n", "s", "b"}  # while it is worked out (a cycle)
            with contextlib.suppress(ValueError, IndexError, KeyError):
                book.static[key] = _types(parse(formula), book, sheet, seen, static=True)
    return book.static[key]


def _logical_cells(book: Book, ref: str, here: str) -> list[str]:
    """The cells of a range whose formulas return a logical."""
    span = book.resolve(ref, here)
    if span is None or span[0] not in book.cells:
        return []
    sheet, a, b = span
    (c1, r1), (c2, r2) = split_cell(a), split_cell(b)
    return [f"{sheet}!{r}" for r, (_t, _v, f) in book.cells[sheet].items()
            if f is not None and c1 <= split_cell(r)[0] <= c2 and r1 <= split_cell(r)[1] <= r2
            and _cell_types(book, sheet, r, 0) == {"b"}]


def _range_types(book: Book, ref: str, here: str, column: int = 0) -> set[str]:
    """What the cells of a range hold; ``column``: only its n-th column (1-based)."""
    span = book.resolve(ref, here)
    if span is None or span[0] not in book.cells:
        return {"n", "s", "b"}
    key = (*span, column)
    if key in book.spans:
        return book.spans[key]
    sheet, a, b = span
    (c1, r1), (c2, r2) = split_cell(a), split_cell(b)
    if column:
        c1 = c2 = c1 + column - 1
    out = {k for col, row, k in book.kinds[sheet] if c1 <= col <= c2 and r1 <= row <= r2}
    book.spans[key] = (out - {""}) or {"n"}  # an empty cell reads as 0
    return book.spans[key]


def _check_formula(book: Book, where: str, formula: str, here: str,
                   tree: Node | None = None) -> list[str]:
    out: list[str] = []
    if len(formula) + 1 > MAX_FORMULA_CHARS:
        out.append(f"length: {len(formula) + 1} characters (Excel's limit 8,192)")
    try:
        tree = tree or parse(formula)
    except (ValueError, IndexError, KeyError) as exc:
        return [f"syntax: {exc}"]
    size = ptg_bytes(tree)
    if size > MAX_FORMULA_BYTES:
        out.append(f"internal-length: about {size} bytes parsed (Excel's limit 16,384)")
    depth = _walk(tree, book, here, False, 0, out)
    if depth > MAX_NESTING:
        out.append(f"nesting: {depth} levels of functions (Excel's limit 64)")
    return out


def check(path: Path) -> list[Problem]:
    """Every rule over one workbook."""
    book = Book(path)
    name = path.name
    problems: list[Problem] = []

    def add(where: str, rule_detail: str) -> None:
        rule, _, detail = rule_detail.partition(": ")
        problems.append(Problem(f"{name} {where}", rule, detail))

    seen_sheets: set[str] = set()
    for sheet in book.sheets:
        if not 1 <= len(sheet) <= MAX_SHEET_NAME or SHEET_FORBIDDEN & set(sheet) \
                or sheet.startswith("'") or sheet.endswith("'") or sheet.lower() == "history" \
                or sheet.lower() in seen_sheets:
            add(f"sheet {sheet!r}", "sheet-name: breaks Excel's sheet-name rules")
        seen_sheets.add(sheet.lower())

    # ECMA-376 Part 1 §18.2.5 (definedName) and the formula grammar's "name": a letter, _
    # or \ first; letters, digits, _ . \ after; not TRUE/FALSE nor a cell reference (A1 or
    # R1C1); unique case-insensitively in its scope. Excel: at most 255 characters.
    seen_names: set[tuple[str, str | None]] = set()
    for dname, text, local in book.names:
        bare = dname.removeprefix("_xlnm.")
        if (not _NAME.match(bare) or is_cell(bare) or _CELL_LIKE.match(bare)
                or bare.upper() in ("TRUE", "FALSE") or len(dname) > 255
                or (dname.lower(), local) in seen_names):
            add(f"defined name {dname}", "name: breaks Excel's defined-name rules")
        seen_names.add((dname.lower(), local))
        if not dname.startswith("_xlnm."):
            for msg in _check_formula(book, f"name {dname}", text, ""):
                add(f"defined name {dname}", msg)

    number_formats = book._xml("xl/styles.xml").findall("m:numFmts/m:numFmt", NS)
    if len(number_formats) > MAX_NUMBER_FORMATS:
        add("styles", f"number-formats: {len(number_formats)} custom (Excel: 200-250)")
    for fmt in number_formats:
        code = fmt.get("formatCode") or ""
        # ECMA-376 §18.8.31: at most four sections (positive;negative;zero;text)
        if code.replace('\\;', "").count(";") - len(re.findall(r'"[^"]*;[^"]*"', code)) > 3:
            add("styles", f"number-format: {code!r} has more than four sections")

    for sheet, cells in book.cells.items():
        for ref, (t, value, formula) in cells.items():
            where = f"{sheet}!{ref}"
            if len(value) > MAX_CELL_CHARS:
                add(where, f"cell-text: {len(value)} characters (Excel's limit 32,767)")
            if value.count("\n") > MAX_LINE_FEEDS:
                add(where, f"cell-text: {value.count(chr(10))} line feeds (Excel's limit 253)")
            if t == "n" and value:
                try:
                    float(value)  # ECMA-376 §18.18.11: n is an xsd:double; Excel has no NaN
                    if value.lower() in ("nan", "inf", "-inf", "infinity", "-infinity"):
                        raise ValueError
                except ValueError:
                    add(where, f"cached-value: {value!r} is not a number Excel can read")
            if formula is None:
                continue
            try:
                tree = parse(formula)
            except (ValueError, IndexError, KeyError) as exc:
                add(where, f"syntax: {exc}")
                continue
            for msg in _check_formula(book, where, formula, sheet, tree):
                add(where, f"{msg} in ={formula[:80]}")
            if t == "e" or (not value and t == "n"):
                continue  # an error or no cached value: nothing to compare
            kinds = _types(tree, book, sheet)
            cached = {"n": "n", "str": "s", "s": "s", "b": "b"}.get(t, t)
            if (kinds == {"b"} and t == "n" and value in ("0", "1")
                    and _YES_NO.match(book.formats[book.styles[sheet, ref]])):
                # A logical cached as 1/0 in a yes/no number format, on purpose: LibreOffice
                # 7.4 drops cached booleans and its PDF export then aborts (docs/
                # libreoffice-findings.md section 6); Excel recalculates on load
                # (calcPr fullCalcOnLoad) and until then shows the cached 1/0 as yes/no.
                continue
            if cached not in kinds:
                add(where, f"cached-type: cached as {t!r} but ={formula[:60]} returns "
                           f"{'/'.join(sorted(kinds))}")

        root = book.xml[sheet]
        for dv in root.iter(f"{{{NS['m']}}}dataValidation"):
            where = f"{sheet} validation {dv.get('sqref')}"
            for attr, limit in (("promptTitle", MAX_DV_TITLE), ("errorTitle", MAX_DV_TITLE),
                                ("prompt", MAX_DV_MESSAGE), ("error", MAX_DV_MESSAGE)):
                if len(dv.get(attr) or "") > limit:
                    add(where, f"validation: {attr} {len(dv.get(attr) or '')} characters "
                               f"(Excel's limit {limit})")
            for attr in ("promptTitle", "errorTitle", "prompt", "error"):
                text = dv.get(attr) or ""
                if text.count("(") != text.count(")"):  # a title cut at 32 characters
                    add(where, f"validation-text: {attr} {text!r} leaves a bracket open")
            for tag in ("formula1", "formula2"):
                f = dv.find(f"m:{tag}", NS)
                if f is None or not f.text:
                    continue
                text = f.text
                if dv.get("type") == "list" and text.startswith('"'):
                    if len(text) - 2 > MAX_DV_LIST:
                        add(where, f"validation: list {len(text) - 2} characters "
                                   f"(Excel's limit 255)")
                    continue
                for msg in _check_formula(book, where, text, sheet):
                    if not msg.startswith("implicit-intersection"):  # a range is a list
                        add(where, msg)
        for cf in root.iter(f"{{{NS['m']}}}conditionalFormatting"):
            for f in cf.iter(f"{{{NS['m']}}}formula"):
                for msg in _check_formula(book, f"{sheet} format {cf.get('sqref')}",
                                          f.text or "", sheet):
                    if not msg.startswith("implicit-intersection"):  # relative to each cell
                        add(f"{sheet} format {cf.get('sqref')}", msg)
        part = book.sheets[sheet]
        rels_part = part.rsplit("/", 1)[0] + "/_rels/" + part.rsplit("/", 1)[1] + ".rels"
        urls: dict[str | None, str] = {}
        if rels_part in book.zip.namelist():
            urls = {r.get("Id"): r.get("Target") or "" for r in
                    book._xml(rels_part).findall("pr:Relationship", NS)}
        for link in root.iter(f"{{{NS['m']}}}hyperlink"):
            target = link.get("location") or ""
            url = urls.get(link.get(f"{{{NS['r']}}}id"), "")
            if len(target) > MAX_HYPERLINK_CHARS or len(url) > MAX_HYPERLINK_CHARS:
                add(f"{sheet} link {link.get('ref')}", "hyperlink: over 2,079 characters")
            if target:  # an internal link: Sheet!A1, the sheet must exist
                sheet_name = target.rsplit("!", 1)[0].strip("'").replace("''", "'")
                if "!" in target and sheet_name not in book.sheets:
                    add(f"{sheet} link {link.get('ref')}", f"hyperlink: no sheet {sheet_name}")
        for col in root.iter(f"{{{NS['m']}}}col"):
            if float(col.get("width") or 0) > MAX_COLUMN_WIDTH:
                add(f"{sheet} column {col.get('min')}", "layout: column wider than 255")
        for row in root.iter(f"{{{NS['m']}}}row"):
            if float(row.get("ht") or 0) > MAX_ROW_HEIGHT:
                add(f"{sheet} row {row.get('r')}", "layout: row taller than 409 points")
        for hf in root.iter(f"{{{NS['m']}}}headerFooter"):
            for element in hf:
                if len(element.text or "") > MAX_HEADER_CHARS:
                    add(f"{sheet} header", "layout: header or footer over 255 characters")
        merged: list[tuple[int, int, int, int]] = []
        for mc in root.iter(f"{{{NS['m']}}}mergeCell"):
            a, _, b = (mc.get("ref") or "").partition(":")
            (c1, r1), (c2, r2) = split_cell(a), split_cell(b or a)
            for (d1, s1, d2, s2) in merged:  # Excel repairs a file whose merges overlap
                if c1 <= d2 and d1 <= c2 and r1 <= s2 and s1 <= r2:
                    add(f"{sheet} merge {mc.get('ref')}", "merge: overlaps another merge")
            merged.append((c1, r1, c2, r2))

    for part, ref in book.charts():
        for msg in _check_formula(book, part, ref, ""):
            if not msg.startswith("implicit-intersection"):  # a series is a range
                add(part, f"{msg} in {ref}")
    return problems


def stats(path: Path) -> dict[str, int]:
    """How close one workbook comes to the limits (for the report and docs)."""
    book = Book(path)
    formulas = [(sheet, f) for sheet, cells in book.cells.items()
                for _t, _v, f in cells.values() if f is not None]
    deepest = longest = biggest = args = 0
    for sheet, f in formulas:
        tree = parse(f)
        out: list[str] = []
        deepest = max(deepest, _walk(tree, book, sheet, False, 0, out))
        longest = max(longest, len(f) + 1)
        biggest = max(biggest, ptg_bytes(tree))
        stack = [tree]
        while stack:
            n = stack.pop()
            args = max(args, len(n.args) if n.kind == "fn" else 0)
            stack.extend(n.args)
    return {"formulas": len(formulas), "longest": longest, "nesting": deepest,
            "bytes": biggest, "arguments": args, "names": len(book.names),
            "number_formats": len(book._xml("xl/styles.xml").findall("m:numFmts/m:numFmt", NS)),
            "chart_refs": sum(1 for _ in book.charts())}


def main(paths: list[str]) -> int:
    if paths and paths[0] == "--stats":
        for path in paths[1:]:
            print(Path(path).name, stats(Path(path)))
        return 0
    problems = [p for path in paths for p in check(Path(path))]
    for p in problems:
        print(p)
    by_rule: dict[str, int] = {}
    for p in problems:
        by_rule[p.rule] = by_rule.get(p.rule, 0) + 1
    print(f"{len(paths)} workbooks, {len(problems)} problems {by_rule}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
