"""Inputs sheet: every lever a user may change, as named, unlocked, validated cells.

Account inputs are ``in_<name>``; prices ``in_price_<gpu>``, ``in_cloud_<gpu>``,
``in_node_price_<platform>``, the hosted embedding and reranking APIs' ``in_api_<kind>``;
workload inputs one column per workload, ``in_w<k>_<name>``.
"""

from __future__ import annotations

from typing import Any

from ...model.calculations import Input
from ...model.catalog import Model
from ..inputcells import speculative_lock
from .book import Book
from .formats import clean_text, dv_title, fit_width, number_format, unit_text, wrapped_height
from .layout import TABLE_COLUMN_INFO, letter, price_label
from .options_sheet import LIVE_COL
from .rerun_check import write_checks

__all__ = ["write"]

# Workload inputs that describe the model (fields of a catalog model), not the business.
MODEL_FIELDS = frozenset(Model.model_fields)
# the unit column: "% of capex / year" whole (at 13 its last letter was cut)
UNIT_WIDTH = 17
ZERO_IS_NONE = "0 = none"  # an input's note says so: 0 is shown as "none", not "0 s"


def write(book: Book) -> None:
    """Write the Inputs sheet; define the input names and record their values."""
    wb = book.wb
    ws = book.ws["Inputs"]
    f = book.f
    r = book.r
    note_col = 2 + book.n_wl
    name_col = note_col + 1
    book.title(ws, f"Inputs: {r.account.name}",
               "Yellow cells with blue numbers are inputs: change them and every other sheet "
               "recalculates. Each has a name (last column) that the formulas use.",
               span=(note_col, 38 + UNIT_WIDTH + 24 * book.n_wl + 70))
    ws.set_column(0, 0, 38)
    ws.set_column(1, 1, UNIT_WIDTH)
    ws.set_column(2, 1 + book.n_wl, 24)
    ws.set_column(note_col, note_col, 70)
    ws.set_column(name_col, name_col, 34)
    fit_width(ws, 38 + UNIT_WIDTH + 24 * book.n_wl + 70, 38 + UNIT_WIDTH)
    ws.repeat_columns(0, 1)
    row = 3
    header = ("Input", "Unit", "Value")
    for j, text in enumerate(header):
        ws.write_string(row, j, text, f("header"))
    for j in range(3, note_col):
        ws.write_blank(row, j, None, f("header"))
    ws.write_string(row, note_col, "What it means", f("header"))
    ws.write_string(row, name_col, "Cell name", f("header"))
    ws.freeze_panes(row + 1, 2)
    row += 1
    ws.write_string(row, 0, "Account-wide policy and costs", f("section"))
    row += 1
    for i in book.account_inputs:
        value = float(r.account_inputs[i.name])
        fmt = number_format(i.unit, [value], book.cur)
        ws.write_string(row, 0, i.label, f("label"))
        ws.write_string(row, 1, unit_text(i.unit, book.cur), f("unit"))
        ws.write_number(row, 2, value, f("input", fmt))
        ws.data_validation(row, 2, row, 2, book.validation(i))
        book.note(ws, row, note_col, i.note)
        ws.write_string(row, name_col, f"in_{i.name}", f("name"))
        wb.define_name(f"in_{i.name}", f"=Inputs!$C${row + 1}")
        book.named_values[f"in_{i.name}"] = value
        row += 1
    row += 1
    ws.write_string(row, 0, "Prices (catalog estimates or the account's overrides)", f("section"))
    row += 1
    for (table, tid, colname), name in book.lay.price_names.items():
        value = float(r.tables[table][tid][colname])
        label, unit = TABLE_COLUMN_INFO.get(colname, (colname, "currency"))
        # the GPU's or platform's catalog name (its id is the cell name's, last column); a
        # cloud price as the offer lists it, for its own size (the plan may rent another)
        what = (f"{price_label(r.tables, table, tid, colname)}: "
                f"{clean_text(book.display_name(table, tid))}")
        ws.write_string(row, 0, what, f("wrap"))
        ws.write_string(row, 1, unit_text(unit, book.cur), f("unit"))
        ws.write_number(row, 2, value, f("input", number_format(unit, [value], book.cur,
                                                                 dash_zero=True)))
        ws.data_validation(row, 2, row, 2, {
            "validate": "decimal", "criteria": ">=", "value": 0,
            "input_title": dv_title(label),
            "input_message": f"{label} of {book.display_name(table, tid)[:120]} in {book.cur}; "
                             "0 = no price known "
                             "(the option is then ranked after priced ones).",
            "error_message": f"{label}: a number of at least 0."})
        book.note(ws, row, note_col, book.price_source(table, tid, colname))
        if len(what) > 38:  # a long name wraps: the row at least as tall as its lines
            ws.set_row(row, max(wrapped_height(what, 38 * 0.85, 11),
                                wrapped_height(book.price_source(table, tid, colname), 70)))
        ws.write_string(row, name_col, name, f("name"))
        wb.define_name(name, f"=Inputs!$C${row + 1}")
        book.named_values[name] = value
        row += 1
    row = _api_rows(book, ws, row, note_col, name_col)
    row += 1
    ws.write_string(row, 0, "Workloads (one column each)", f("section"))
    row += 1
    ws.write_string(row, 0, "Workload", f("label_bold"))
    ws.write_string(row + 1, 0, "Model", f("label"))
    ws.write_string(row + 2, 0, "Sizing mode", f("label"))
    for k, w in enumerate(r.workloads, start=1):
        ws.write_string(row, 1 + k, clean_text(w.name), f("header"))
        ws.write_string(row + 1, 1 + k, clean_text(w.model_name), f("text"))
        ws.write_string(row + 2, 1 + k, w.mode, f("text"))
    # the workload names wrap (bold) in their 24-wide columns: "Customer service chat (MoE)"
    # showed its first line only at the default height
    ws.set_row(row, max(wrapped_height(clean_text(w.name), 24 * 0.9, 11) for w in r.workloads))
    ws.write_string(row + 2, note_col, "modelled = roofline model with calibrated "
                    "efficiencies; measured = the customer's benchmark replaces it.",
                    f("note"))
    row += 3
    business = [i for i in book.workload_inputs if i.name not in MODEL_FIELDS]
    model = [i for i in book.workload_inputs if i.name in MODEL_FIELDS]
    for i in business:
        _workload_row(book, ws, row, i)
        row += 1
    # after an edit above: is the frozen hardware still the cheapest? (the Summary has it too)
    row = write_checks(book, ws, row, "label_bold", LIVE_COL, 24)
    if model:
        row += 1
        ws.write_string(row, 0, "Model architecture (one column per workload)", f("section"))
        book.note(ws, row, note_col, "Read from each model's config.json or the model catalog; "
                  "not requirements. Change them only to size a different model.")
        row += 1
        for i in model:
            _workload_row(book, ws, row, i)
            row += 1
    ws.print_area(0, 0, row, note_col)


def api_name(kind: str) -> str:
    """The defined name of the hosted API price the embed or rerank servers are set beside."""
    return f"in_api_{kind}"


def _api_rows(book: Book, ws: Any, row: int, note_col: int, name_col: int) -> int:
    """The compared hosted embedding / reranking API's list price per million tokens, one row
    per kind the Retrieval sheet costs: a price finance edits with the others (the Retrieval
    sheet's cost-per-token rows read it; it was a typed number there). Returns the next row."""
    f = book.f
    seen: set[str] = set()
    for w in book.r.retrieval:
        api = book.catalog.prices.embedding_reference(w.kind)
        if w.best is None or api is None or w.kind in seen:
            continue
        seen.add(w.kind)
        value = float(w.best.values["api_per_million_tokens"])
        what = f"Hosted API price per million tokens ({w.kind}): {clean_text(api.name)}"
        unit = "currency/M tok"
        ws.write_string(row, 0, what, f("wrap"))
        ws.write_string(row, 1, unit_text(unit, book.cur), f("unit"))
        ws.write_number(row, 2, value, f("input", number_format(unit, [value], book.cur)))
        ws.data_validation(row, 2, row, 2, {
            "validate": "decimal", "criteria": ">=", "value": 0,
            "input_title": "Hosted API price",
            "input_message": f"{api.name[:120]} per million input tokens in {book.cur}.",
            "error_message": "Hosted API price: a number of at least 0."})
        asked = book.r.source.requirements if book.r.source is not None else {}
        own = w.kind in ((asked.get("costs") or {}).get("retrieval_api_per_million") or {})
        source = ("Account override (requirements file, costs.retrieval_api_per_million)."
                  if own else f"{api.provider} list price"
                  f"{f' ({api.date})' if api.date else ''}: {api.source}")
        book.note(ws, row, note_col, source)
        if len(what) > 38:
            ws.set_row(row, max(wrapped_height(what, 38 * 0.85, 11), wrapped_height(source, 70)))
        ws.write_string(row, name_col, api_name(w.kind), f("name"))
        book.wb.define_name(api_name(w.kind), f"=Inputs!$C${row + 1}")
        book.named_values[api_name(w.kind)] = value
        row += 1
    return row


def _workload_row(book: Book, ws: Any, row: int, i: Input) -> None:
    """One workload input: a named, validated cell per workload (``in_w<k>_<name>``)."""
    f = book.f
    vals = [float(w.inputs[i.name]) for w in book.r.workloads]
    note_col = 2 + book.n_wl
    fmt = number_format(i.unit, vals, book.cur,
                        zero_text="none" if ZERO_IS_NONE in i.note else "")
    ws.write_string(row, 0, i.label, f("label"))
    ws.write_string(row, 1, unit_text(i.unit, book.cur), f("unit"))
    for k, value in enumerate(vals, start=1):
        w = book.r.workloads[k - 1].inputs
        # a speculative-decoding figure that is not read back is shown, locked, not an input
        locked = speculative_lock(i.name, float(w.get("spec_draft_tokens", 0)),
                                  float(w.get("spec_draft_layers", 0))) is not None
        ws.write_number(row, 1 + k, value, f("calc" if locked else "input", fmt))
        book.wb.define_name(f"in_w{k}_{i.name}", f"=Inputs!${letter(1 + k)}${row + 1}")
        book.named_values[f"in_w{k}_{i.name}"] = value
    if vals:
        ws.data_validation(row, 2, row, 1 + len(vals), book.validation(i))
    book.note(ws, row, note_col, i.note)
    ws.write_string(row, note_col + 1, f"in_w1_{i.name} … in_w{len(vals)}_{i.name}"
                    if len(vals) > 1 else f"in_w1_{i.name}", f("name"))


