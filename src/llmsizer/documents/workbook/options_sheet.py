"""Options sheet: every option the engine evaluated, feasible and rejected, one row each.

The calculation sheets show at most 12 options per workload as live formula columns; this
sheet lists all of them (the proposal says the other configurations are in the workbook), with
the engine's status, the reason a rejected one fails, and its headline figures. The figures
are the engine's results at generation time, written as values: an option without a column
has no formulas to point at. Where the option has a column, the sheet names it.
"""

from __future__ import annotations

from ...model.calculations import CALCULATIONS
from .book import Book
from .formats import (
    clean_text,
    fit_width,
    label_width,
    number_format,
    unpriced_text,
    wrapped_height,
)
from .layout import OPTIONS_HEADER_ROW, OPTIONS_LABEL_COL, option_statuses
from .rerun_check import NOT_ELIGIBLE, cost, label, live_cost

__all__ = ["LIVE_COL", "write"]

_UNITS = {c.name: c.unit for c in CALCULATIONS}
# (header, option value, unit): the figures a reader compares options by.
# Bought (GPUs, nodes, replicas, headroom: spares a node's worth), then as rented beside the
# cloud's cost (calculations/rented.py; session 23: a rented account's options read "8 GPUs,
# 200 %" bought beside a plan renting 5 GPUs at 50 %): both, each labelled.
_FIGURES: tuple[tuple[str, str], ...] = (
    ("GPUs", "gpus"), ("Nodes", "nodes"), ("Replicas", "replicas"),
    ("Headroom at peak", "headroom_achieved"),
    ("Tokens/s per user at peak", "tokens_per_s_per_user"),
    ("Time to first token at peak", "ttft_ms"), ("Meets latency targets", "slo_met"),
    ("Capital cost", "capex"), ("On-prem cost per year", "annual_cost_onprem"),
    ("Cloud cost per year", "annual_cost_cloud"),
    ("Replicas running, rented", "rented_replicas"), ("GPUs rented", "cloud_gpus_rented"),
    ("Cloud instances rented", "cloud_instances"),
    ("Headroom at peak, rented", "rented_headroom"),
)
# Figures that buy the GPUs: an option whose GPU has no purchase price says so, as the
# proposal's alternatives do, instead of a cost with its GPUs at 0 (x-docs review: an unpriced
# A10 option read USD 2.05 M capital beside "no price" in the PDF).
_PURCHASE = frozenset({"capex", "annual_cost_onprem"})
# The option's code in the results file (JSON): no formula reads it, so its column is
# hidden (unhide it to match a row with the results file); it does not print.
_CODE_HEAD = "Configuration code in the results file"
_WIDTHS = {"Workload": 20, "Option": 52, _CODE_HEAD: 24, "Status": 34, "Platform": 60,
           "Column": 8}
_FIGURE_WIDTH = 15
_LIVE_HEAD = "On-prem cost per year now"
# the way the account runs it (rerun_check.cost): a rented account compares the cloud's cost
_LIVE_HEADS = {"annual_cost_onprem": _LIVE_HEAD, "annual_cost_cloud": "Cloud cost per year now"}
_LIVE_WORDS = {"annual_cost_onprem": "on-premises", "annual_cost_cloud": "cloud"}
_HEADS = ("Workload", "Option", _CODE_HEAD, "Status", "Platform", *(h for h, _ in _FIGURES),
          "Column", _LIVE_HEAD)
# The re-run check's column (rerun_check.py): live where the option has a column.
LIVE_COL = len(_HEADS) - 1


def write(book: Book) -> None:
    """Write the Options sheet (its rows are planned in Layout)."""
    ws = book.ws["Options"]
    f = book.f
    r = book.r
    total = sum(len(w.options) for w in r.workloads)
    # the workload's name whole and a gap after it: "Maintenance manual Q&A" filled 20 and
    # printed against the option's words ("Q&A1 × NVIDIA"); one unit more (a page more wide
    # at 24 for jpy-manufacturer)
    widths = {**_WIDTHS, "Workload": min(36, label_width(
        (clean_text(w.name) for w in r.workloads), _WIDTHS["Workload"] - 1) + 1)}
    book.title(ws, "Every option evaluated, feasible and rejected",
               f"{total} options. Figures are the engine's at generation time (values, not "
               "formulas); an option with a column on KV, Throughput, Nodes and TCO "
               "recalculates there (its column is named in the Column column). The last "
               f"column is live: the annual {_LIVE_WORDS[cost(book)]} cost now of each "
               "feasible, priced option with a column (— when it no longer meets the "
               "targets); the Summary's re-run check names the cheapest.",
               span=(1, widths["Workload"] + widths["Option"]))  # the repeated columns
    shown = {(c.k, c.option.id): c.letter for c in book.lay.columns}
    heads = [*_HEADS[:-1], _LIVE_HEADS[cost(book)]]
    row = OPTIONS_HEADER_ROW
    for j, head in enumerate(heads):
        ws.write_string(row, j, head, f("header"))
        ws.set_column(j, j, widths.get(head, _FIGURE_WIDTH), None,
                      {"hidden": head == _CODE_HEAD})
    ws.set_row(row, 30)
    ws.freeze_panes(row + 1, 2)
    ws.repeat_rows(row, row)
    fit_width(ws, sum(widths.get(h, _FIGURE_WIDTH) for h in heads if h != _CODE_HEAD),
              widths["Workload"] + widths["Option"])
    ws.repeat_columns(0, 1)
    first_figure = heads.index(_FIGURES[0][0])
    for k, w in enumerate(r.workloads, start=1):
        feasible, rejected = option_statuses(w)
        for o, status in feasible + rejected:
            row = book.lay.options_rows[(k, o.id)]
            rec = o.id == w.recommended
            ws.write_string(row, 0, clean_text(w.name), f("label"))
            words = label(book, o)
            platform = clean_text(book.display_name("platforms", o.platform))
            # wrapped: the label and the platform's full name (the check quotes both) show
            # whole on screen and on paper instead of being cut at the next column
            ws.write_string(row, OPTIONS_LABEL_COL, words, f("wrap_bold" if rec else "wrap"))
            ws.write_string(row, 2, o.id, f("name"))
            ws.write_string(row, 3, status, f("status_rec" if rec else (
                "status" if o.feasible else "status_bad")))
            ws.write_string(row, 4, platform, f("wrap"))
            for j, (_, name) in enumerate(_FIGURES, start=first_figure):
                value = o.values.get(name)
                if not o.feasible or not isinstance(value, int | float):
                    ws.write_string(row, j, "—", f("unit"))
                    continue
                if not o.priced and name in _PURCHASE:  # its GPUs counted at 0: not a cost
                    ws.write_string(row, j, unpriced_text("annual_cost_cloud"), f("unit"))
                    continue
                fmt = number_format(_UNITS[name], [float(value)], book.cur,
                                    zero_text=unpriced_text(name), name=name)
                ws.write_number(row, j, float(value), f("calc", fmt))
            ws.write_string(row, LIVE_COL - 1, shown.get((k, o.id), "—"), f("unit"))
            live = live_cost(book, k, o)
            if live is None:
                ws.write_string(row, LIVE_COL, NOT_ELIGIBLE, f("unit"))
            else:
                ws.write_formula(row, LIVE_COL, live[0], f("calc", number_format(
                    _UNITS[cost(book)], [live[1]], book.cur)), live[1])
            ws.set_row(row, max(wrapped_height(status, _WIDTHS["Status"], 8),
                                # bold (the recommendation) runs about a tenth wider
                                wrapped_height(words, _WIDTHS["Option"] * (0.9 if rec else 1),
                                               11),
                                wrapped_height(platform, _WIDTHS["Platform"] * 0.85, 11)))
