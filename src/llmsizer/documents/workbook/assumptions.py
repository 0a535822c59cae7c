"""Assumptions sheet: every default and assumption with its source, prices with their dates,
and the modelling conventions (units, currency, what the columns show)."""

from __future__ import annotations

from ...model.calculations import INPUTS, LATENCY_DEFINITIONS
from ...model.catalog import customer_source
from ..proposal.assumptions import ASSUMPTION_LABELS, CONFIDENCE, assumption_label
from ..proposal.format import Formatter
from .book import Book
from .formats import clean_text, fit_width, number_format, unit_text, wrapped_height
from .layout import MAX_COLUMNS_PER_WORKLOAD, SCOPE, TABLE_COLUMN_INFO, price_label

__all__ = ["write"]


def _assumption_label(book: Book, name: str) -> str:
    """``mfu_decode_8bit`` -> 'Compute efficiency, decode (8-bit path)': the proposal's words
    (proposal.assumptions.assumption_label) where it has them, never the bare key."""
    if name in book.inputs:
        return book.inputs[name].label
    if name in ASSUMPTION_LABELS or CONFIDENCE.fullmatch(name):
        return assumption_label(name)
    for i in INPUTS:
        if name.startswith(f"{i.name}_"):
            return f"{i.label} ({name.removeprefix(i.name + '_').replace('_', ' ')})"
    return assumption_label(name)


def write(book: Book) -> None:
    """Write the Assumptions sheet."""
    ws = book.ws["Assumptions"]
    f = book.f
    r = book.r
    book.title(ws, "Assumptions, defaults and their sources",
               "Values in formulas follow the Inputs sheet; efficiencies are per option "
               "(KV sheet, top block).", span=(3, 44 + 16 + 19 + 95))
    ws.set_column(0, 0, 44)
    ws.set_column(1, 1, 16)
    ws.set_column(2, 2, 19)
    ws.set_column(3, 3, 95)
    fit_width(ws, 44 + 16 + 19 + 95)
    row = 3
    for j, text in enumerate(("Assumption", "Value", "Unit", "Source")):
        ws.write_string(row, j, text, f("header"))
    ws.freeze_panes(row + 1, 1)
    row += 1

    def line(label: str, value: float | str | None, unit: str, source: str,
             formula: str | None = None) -> None:
        nonlocal row
        ws.write_string(row, 0, clean_text(label), f("wrap"))  # a platform's full name is long
        if isinstance(value, str):  # wrapped: "hyperscaler on-demand" was cut at 16 characters
            ws.write_string(row, 1, clean_text(value), f("wrap"))
        elif value is not None:
            fmt = f("calc", number_format(unit, [value], book.cur))
            if formula:
                ws.write_formula(row, 1, formula, fmt, value)
            else:
                ws.write_number(row, 1, value, fmt)
        ws.write_string(row, 2, unit_text(unit, book.cur), f("unit_apart"))
        ws.write_string(row, 3, clean_text(source), f("wrap_note"))
        ws.set_row(row, max(wrapped_height(source, 95), wrapped_height(label, 44, 11),  # 11 pt
                            wrapped_height(value, 16, 11) if isinstance(value, str) else 0))
        row += 1

    def section(text: str) -> None:
        nonlocal row
        row += 1
        ws.write_string(row, 0, text, f("section"))
        for j in range(1, 4):
            ws.write_blank(row, j, None, f("section"))
        row += 1

    section("Policy and costs (account inputs; edit them on the Inputs sheet)")
    for i in book.account_inputs:
        line(i.label, float(r.account_inputs[i.name]), i.unit,
             f"{i.note} Value from the account's requirements file or llmsizer's default.",
             f"=in_{i.name}")
    section("Efficiencies and engine defaults (per option on the KV sheet)")
    for a in r.assumptions:
        if SCOPE.get(a.name) != "account":  # those are listed above
            line(_assumption_label(book, a.name), a.value, a.unit, customer_source(a.source))
    section("Prices and their dates (edit them on the Inputs sheet)")
    derived = {p.item.partition(":")[2] for p in r.prices
               if p.item.startswith("cloud:") and p.derived}
    for (table, tid, colname), name in book.lay.price_names.items():
        unit = TABLE_COLUMN_INFO.get(colname, (colname, "currency"))[1]
        label = price_label(r.tables, table, tid, colname)  # the Inputs sheet's words
        if colname == "cloud_gpu_hour" and tid in derived:  # never a silent mix of tiers
            label = f"{label} (DERIVED for the tier)"
        line(f"{label}: {book.display_name(table, tid)}", float(r.tables[table][tid][colname]),
             unit,
             book.price_source(table, tid, colname), f"={name}")
    section("Latency targets: what each one means")
    for _key, label, text in LATENCY_DEFINITIONS:
        line(label, None, "", text)
    section("Modelling conventions")
    for label, text in (
        ("Units", "GB = 1e9 bytes (as GPU memory is marketed); TB/s = 1e12 B/s; tokens/s."),
        ("Currency", f"Money is in {r.account.currency}; catalog prices are USD estimates "
                     "(not quotes) unless the account overrides them"
                     + ("." if r.account.currency == "USD" else
                        f", converted at the account's rate of {Formatter.stated(r.usd_exchange_rate)} "
                        f"{r.account.currency} per USD.")),
        ("One definition, two renderings", "Every derived number here is printed from "
         "llmsizer's calculation list; the engine evaluates the same list in Python."),
        ("Option columns", "The calculation sheets show at most "
         f"{MAX_COLUMNS_PER_WORKLOAD} options per workload; the Options sheet lists every "
         "option the engine evaluated, feasible and rejected."),
        ("Engine status", "The Status row (feasible / rejected and why) is the engine's at "
         "generation time; the formulas recompute, the status text does not."),
        ("Version", f"llmsizer {r.llmsizer_version}, catalog digest {r.catalog_digest}."),
    ):
        line(label, None, "", text)
