"""KV, Throughput, Nodes and TCO: the calculation list, one row per calculation, one column
per option (the same column on all four). KV starts with the engine's choices for each option
(GPU, platform, precisions, TP, efficiencies) as input cells with catalog dropdowns.
"""

from __future__ import annotations

import math
from typing import Any

from ...model.calculations import CALCULATIONS, Input
from ...model.expr import to_text
from ...model.names import short_name
from ...sizing.results import Option
from ..marker import normalize_formula
from .book import Book
from .formats import (
    clean_text,
    dv_title,
    fit_width,
    label_width,
    number_format,
    shown_width,
    unit_text,
    unpriced_text,
    wrapped_height,
)
from .layout import (
    COL_LABEL,
    COL_NAME,
    COL_UNIT,
    FIRST_OPTION_COL,
    ROW_OPTION,
    ROW_SECTION,
    ROW_STATUS,
    ROW_WORKLOAD,
    TABLE_TITLES,
    cached,
    flag_expr,
    lookup_keys,
    sheet_label,
)
from .rerun_check import label

__all__ = ["SHEET_TITLES", "write"]

SHEET_TITLES = {
    "KV": "KV cache and memory per replica",
    "Throughput": "Throughput and latency: decode step time, prefill, batch, SLOs",
    "Nodes": "Replicas, GPUs, nodes and headroom",
    "TCO": "Cost of ownership: on-prem vs cloud",
}
RISK_FLAGS = frozenset({"measured_gap_risk"})  # flags shown red when TRUE


def _headers(book: Book, ws: Any, sheet: str, words: dict[int, str]) -> str:
    """The header rows; returns the subtitle, written once the columns' widths are known."""
    f = book.f
    lay = book.lay
    sub = ("Each column is one option the engine evaluated (the same column on KV, "
           "Throughput, Nodes and TCO); the recommended option of each workload comes "
           "first. Yellow cells on KV are the engine's choices: change them and all four "
           "sheets follow.")
    if lay.hidden:
        sub += "  " + "; ".join(lay.hidden) + "."
    # the option in the words of the Options sheet and the proposal (its code stays in the
    # Options sheet's hidden column, for matching the results file)
    for row, text in ((ROW_WORKLOAD, "Workload"),
                      (ROW_OPTION, "Option"),
                      (ROW_STATUS, "Status (engine)")):
        ws.write_string(row, COL_NAME, "Name" if row == ROW_WORKLOAD else "", f("header"))
        ws.write_string(row, COL_LABEL, text, f("header"))
        ws.write_string(row, COL_UNIT, "Unit" if row == ROW_WORKLOAD else "", f("header"))
    for c in lay.columns:
        head = f("header_rec") if c.recommended else f("header")
        ws.write_string(ROW_WORKLOAD, c.col, clean_text(c.workload.name), head)
        ws.write_string(ROW_OPTION, c.col, words[c.col], head)
        status = ("status_rec" if c.recommended else
                  "status_bad" if not c.option.feasible else "status")
        ws.write_string(ROW_STATUS, c.col, c.status, f(status))
    ws.write_string(ROW_WORKLOAD, book.tail, "Formula (by name)", f("header"))
    ws.write_string(ROW_WORKLOAD, book.tail + 1, "Note", f("header"))
    for row in (ROW_OPTION, ROW_STATUS):
        ws.write_blank(row, book.tail, None, f("header"))
        ws.write_blank(row, book.tail + 1, None, f("header"))
    ws.set_row(ROW_WORKLOAD, 30)
    # the names (9 pt, about 1.4 per unit of width) whole: 24 cut the longest on screen
    names = [c.name for c in CALCULATIONS if c.sheet == sheet]
    if sheet == "KV":  # the option's own inputs head the KV sheet
        names.extend(i.name for i in book.option_inputs)
    longest = max(map(len, names), default=0)
    ws.set_column(COL_NAME, COL_NAME, max(24, math.ceil(longest / 1.4) + 1))
    ws.set_column(COL_UNIT, COL_UNIT, 11)
    ws.set_column(book.tail, book.tail, 60)
    ws.set_column(book.tail + 1, book.tail + 1, 100)
    ws.freeze_panes(ROW_STATUS + 1, FIRST_OPTION_COL)
    ws.repeat_rows(ROW_WORKLOAD, ROW_STATUS)
    ws.repeat_columns(COL_LABEL, COL_UNIT)
    return sub


def option_words(book: Book, o: Option) -> str:
    """The option row's words: the Options sheet's (and the proposal's) name of the option on
    its server, so that options apart only in their platform read apart (the Scenarios
    sheet's grouped columns head theirs with it too, never with the option's code)."""
    server = short_name(book.display_name("platforms", o.platform))
    return f"{label(book, o)} on {clean_text(server)}"


def _section(book: Book, ws: Any, row: int, text: str) -> None:
    ws.write_string(row, COL_LABEL, text, book.f("section"))
    for j in range(book.tail + 2):
        if j != COL_LABEL:
            ws.write_blank(row, j, None, book.f("section"))


def write(book: Book, sheet: str) -> None:
    """Write calculation sheet ``sheet``: one row per calculation, one column per option."""
    ws = book.ws[sheet]
    f = book.f
    lay = book.lay
    words = {c.col: option_words(book, c.option) for c in lay.columns}
    sub = _headers(book, ws, sheet, words)
    # a column as wide as its option's words need to wrap in about nine lines (up to the 28
    # the figures allow): a rack-scale option's ~200 characters in a 14-wide column made a
    # header row of twenty lines, repeated on every printed page (Northwind Research's KV
    # sheet, review round 20); the usual ~80 characters keep the 12 a figure needs
    widths = {c.col: max(12, min(26, math.ceil(len(words[c.col]) / (0.75 * 9))))
              for c in lay.columns}
    if sheet == "KV":
        _section(book, ws, ROW_SECTION, "The engine's choices and calibrated efficiencies "
                 "for each option (inputs)")
        for i in book.option_inputs:
            _write_option_inputs(book, ws, i, lay.option_rows[i.name], widths)
    _section(book, ws, book.lay.calc_section_row[sheet], "Calculations (formulas)")
    last_row = ROW_STATUS
    for calc in CALCULATIONS:
        if calc.sheet != sheet:
            continue
        row = lay.calc_rows[calc.name][1]
        last_row = row
        flag = flag_expr(calc.expr)
        values = [c.option.values[calc.name] for c in lay.columns]
        nums = [float(v) for v in values if not isinstance(v, str)]
        fmt = number_format("flag" if flag else calc.unit, nums, book.cur,
                            zero_text=unpriced_text(calc.name), name=calc.name)
        plain, rec = f("calc", fmt), f("calc_rec", fmt)
        ws.write_string(row, COL_NAME, calc.name, f("name"))
        ws.write_string(row, COL_LABEL, sheet_label(calc.name, calc.label), f("label"))
        ws.write_string(row, COL_UNIT, unit_text(calc.unit, book.cur), f("unit"))
        template = book.lay.template(calc) if lay.columns else ""  # no option at all: no rows
        # the marker's normal form of the row, once: the placeholders for the column and the
        # workload pass normalisation unchanged, as their letters and digits do (normalising
        # a workbook's ~10,000 formulas one by one was ~35 ms of its ~250)
        normal = normalize_formula("=" + template) if template else ""
        for c, value in zip(lay.columns, values, strict=True):
            ws.write_formula(row, c.col, lay.fill(template, c), rec if c.recommended else plain,
                             cached(value, flag))
            book.normal[(sheet, f"{c.letter}{row + 1}")] = lay.fill(normal, c)[1:]
            if fmt and not isinstance(value, str):
                widths[c.col] = max(widths[c.col], shown_width(float(value), fmt))
        ws.write_string(row, book.tail, f"= {to_text(calc.expr)}", f("note"))
        ws.write_string(row, book.tail + 1, calc.note, f("note"))
        if flag and calc.name.endswith("_met") and lay.columns:
            book.pass_fail(ws, row, FIRST_OPTION_COL, row, book.tail - 1)
        if calc.name.startswith("headroom") and lay.columns:
            ws.conditional_format(row, FIRST_OPTION_COL, row, book.tail - 1, {
                "type": "cell", "criteria": "<", "value": 0, "format": f("bad")})
        if calc.name in RISK_FLAGS and lay.columns:
            book.risk(ws, row, FIRST_OPTION_COL, row, book.tail - 1)
    for col, chars in widths.items():
        ws.set_column(col, col, min(chars + 2, 28))
    # the option row grows to its longest words, wrapped in their column (spreadsheets do not
    # grow a row for wrapped text on opening); bold, and wrapped at word ends: LibreOffice
    # printed about 0.85 characters per unit of width, a sixth line cut at 0.9 x 1.15
    ws.set_row(ROW_OPTION, max([30.0] + [
        wrapped_height(text, min(widths[col] + 2, 28) * 0.75, 11) for col, text in words.items()]))
    # the workload row likewise: a long name printed its first two lines only (x-docs review)
    ws.set_row(ROW_WORKLOAD, max([30.0] + [
        wrapped_height(clean_text(c.workload.name), min(widths[c.col] + 2, 28) * 0.75, 11)
        for c in lay.columns]))
    # the status row (8 pt) likewise: a long rejection reason lost its last lines at 66 pt;
    # no longer 66 pt at least (five empty lines under "★ recommended", repeated on every
    # printed page, where every option meets the targets: review round 20)
    ws.set_row(ROW_STATUS, max([30.0] + [
        wrapped_height(c.status, min(widths[c.col] + 2, 28), 8) for c in lay.columns]))
    # Print the labels and the option columns (names, formulas and notes stay on screen).
    labels = [c.label for c in CALCULATIONS if c.sheet == sheet]
    if sheet == "KV":
        labels += [i.label for i in book.option_inputs]
    wide = label_width(labels, 36)
    ws.set_column(COL_LABEL, COL_LABEL, wide)
    ws.print_area(0, COL_LABEL, last_row, max(COL_UNIT, book.tail - 1))
    printed = [min(widths[c.col] + 2, 28) for c in lay.columns]
    pages = fit_width(ws, wide + 11 + sum(printed), wide + 11)
    # The subtitle is merged over the columns the first printed page surely holds: merged
    # over six option columns it ran past the page's edge in LibreOffice (Fabrikam Legal,
    # four 24-wide options a page). A page holds at least its share of the printed width.
    room = (wide + 11 + sum(printed) + (pages - 1) * (wide + 11)) / pages
    fits = sum(1 for k in range(len(printed)) if wide + 11 + sum(printed[:k + 1]) <= room)
    book.title(ws, SHEET_TITLES[sheet], sub, COL_LABEL,
               span=(COL_UNIT + fits, wide + 11 + sum(printed[:fits])))


def _write_option_inputs(book: Book, ws: Any, i: Input, row: int, widths: dict[int, int]) -> None:
    f = book.f
    lay = book.lay
    ws.write_string(row, COL_NAME, i.name, f("name"))
    ws.write_string(row, COL_LABEL, i.label, f("label"))
    ws.write_string(row, COL_UNIT, unit_text(i.unit, book.cur), f("unit"))
    values = [c.option.values.get(i.name, getattr(c.option, i.name, "")) for c in lay.columns]
    if i.kind == "text":
        fmt = f("input", "@")
        for c, value in zip(lay.columns, values, strict=True):
            ws.write_string(row, c.col, str(value), fmt)
            widths[c.col] = max(widths[c.col], len(str(value)))
        table = lookup_keys().get(i.name)
        source = lay.catalog_id_ranges.get(table or "")
        if source and lay.columns:
            ws.data_validation(row, FIRST_OPTION_COL, row, book.tail - 1, {
                "validate": "list", "source": source, "input_title": dv_title(i.label),
                "input_message": f"{i.note} Choose a {TABLE_TITLES.get(table or '', '')} "
                                 "id from the Catalog sheet."[:255],
                "error_message": "Pick an id from the list (rows of the Catalog sheet)."})
    else:
        nums = [float(v) for v in values]
        num_format = number_format(i.unit, nums, book.cur)
        fmt = f("input", num_format)
        for c, value in zip(lay.columns, nums, strict=True):
            ws.write_number(row, c.col, value, fmt)
            widths[c.col] = max(widths[c.col], shown_width(value, num_format))
        if lay.columns:
            ws.data_validation(row, FIRST_OPTION_COL, row, book.tail - 1,
                               book.validation(i))
    ws.write_string(row, book.tail, "input: the engine's choice or calibrated default",
                    f("note"))
    ws.write_string(row, book.tail + 1, i.note, f("note"))
