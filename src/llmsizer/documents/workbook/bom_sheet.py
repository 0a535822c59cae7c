"""BOM sheet: the plan's bill of materials (issue 22, item 6). The account-wide figures
(rack power budget, usable height, PDUs, switch ports, versions kept, logs) are input cells
with their source; one column per line (a node group of the Plan sheet, or a retrieval
workload's own nodes); then the account's totals. Counts and costs are formulas over the Plan
and Retrieval sheets, the platform's height and network ports are input cells from the
catalog, and every line and total is :mod:`llmsizer.model.calculations.bom` printed with
:func:`llmsizer.model.expr.render`: a finance analyst changes a count or a figure and racks,
power, switches and storage follow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...model.calculations import (
    BOM_LINE_CALCULATIONS,
    BOM_LINE_FACTS,
    BOM_TOTAL_AGGREGATES,
    BOM_TOTAL_CALCULATIONS,
    BOM_TOTAL_LABELS,
    INPUTS,
    POOL_REPLICA_SPANS_NODES,
    POOL_WEIGHTS_STORED_GB,
)
from ...model.expr import Expr, render, to_text
from ..proposal.format import shared_place_words
from .book import Book
from .formats import clean_text, fit_width, number_format, unit_text, wrapped_height
from .layout import Column, input_name, letter
from .plan_sheet import FIRST_COL as PLAN_FIRST_COL
from .plan_sheet import PlanLayout, plan_names
from .retrieval_sheet import retrieval_cell

__all__ = ["BomLayout", "write"]

FIRST_COL = 3
FIGURE_HEAD = 4
_SCOPE = {i.name: i.scope for i in INPUTS}
# line facts read from the Plan sheet's node-group rows / the Retrieval sheet's rows
_PLAN_ROWS = {"line_nodes": "group_nodes", "line_gpus": "group_gpus_purchased",
              "line_capex": "capex", "line_annual_software": "annual_software",
              "line_annual_support": "annual_support"}
_RETRIEVAL_ROWS = {"line_nodes": "retrieval_nodes", "line_gpus": "retrieval_gpus",
                   "line_capex": "capex", "line_annual_software": "annual_software",
                   "line_annual_support": "annual_support",
                   "line_node_power_kw": "node_power_kw", "line_weights_gb": "encoder_weights_gb"}
# the platform's facts (infrastructure.yaml): input cells a finance analyst may change
_NO_SERVER = "none of its own"  # a retrieval line on another group's nodes: 0 servers
_CATALOG_FACTS = frozenset({"line_rack_units_per_node", "line_frontend_nics_per_node",
                            "line_frontend_gbps", "line_fabric_nics_per_node",
                            "line_fabric_gbps"})


class BomLayout:
    """Rows of the BOM sheet (0-based), from the number of parameters alone."""

    def __init__(self, n_figures: int) -> None:
        row = FIGURE_HEAD + 1
        self.first_figure = row
        self.n_figures = n_figures
        row += n_figures + 2
        self.line_head = row
        row += 3  # line, platform, GPU
        self.line_rows: dict[str, int] = {}
        for name, *_ in BOM_LINE_FACTS:
            self.line_rows[name] = row
            row += 1
        for c in BOM_LINE_CALCULATIONS:
            self.line_rows[c.name] = row
            row += 1
        self.total_head = row + 2
        row = self.total_head + 1
        self.total_rows: dict[str, int] = {}
        for name in BOM_TOTAL_LABELS:
            self.total_rows[name] = row
            row += 1


def _member_namer(book: Book, member: Column) -> Callable[[str], str]:
    def name(n: str) -> str:
        if _SCOPE.get(n) in ("account", "workload"):
            found = input_name(n, member.k)
            assert found is not None
            return found
        cell = book.lay.cell(n, member)
        if cell is None:
            raise KeyError(f"the BOM sheet cannot place {n!r}")
        return cell
    return name


def write(book: Book) -> None:
    """Write the BOM sheet."""
    ws = book.ws["BOM"]
    f = book.f
    r = book.r
    bom = r.bom
    lay = BomLayout(len(bom.parameters))
    n = max(len(bom.lines), 1)
    note_col = FIRST_COL + n
    ws.set_column(0, 0, 28)
    ws.set_column(1, 1, 40)
    ws.set_column(2, 2, 11)
    ws.set_column(FIRST_COL, FIRST_COL + n - 1, 24)
    ws.set_column(note_col, note_col, 60)
    fit_width(ws, 51 + 24 * n, 51)
    book.title(ws, "Bill of materials",
               "Servers, GPUs, racks, power, network and storage of the plan. Counts and costs "
               "are formulas over the Plan sheet; the yellow cells are figures you may change "
               "(the customer's own quote replaces an estimate). These figures change this "
               "sheet only.", 1, span=(FIRST_COL + n - 1, 51 + 24 * n))

    # -- account-wide figures ---------------------------------------------------------------
    ws.write_string(FIGURE_HEAD - 1, 1, "Figures for the whole account", f("section"))
    _head(book, ws, FIGURE_HEAD, "Figure", ["Value"], 1)
    ws.write_string(FIGURE_HEAD, note_col, "Source", f("header"))
    src_col = note_col
    own: dict[str, str] = {}
    for i, p in enumerate(bom.parameters):
        row = lay.first_figure + i
        own[p.name] = f"${letter(FIRST_COL)}${row + 1}"
        ws.write_string(row, 0, p.name, f("name"))
        ws.write_string(row, 1, p.label, f("label"))
        ws.write_string(row, 2, unit_text(p.unit, book.cur), f("unit"))
        ws.write_number(row, FIRST_COL, p.value, f("input", number_format(p.unit, [p.value],
                                                                           book.cur)))
        ws.write_string(row, src_col, clean_text(("Estimate. " if p.estimate else "")
                                                 + p.source), f("note"))

    # -- lines ------------------------------------------------------------------------------
    ws.write_string(lay.line_head - 1, 1, "Lines (servers of one kind)", f("section"))
    names = plan_names(r)
    # a retrieval group on another group's nodes buys no server: its line says where it runs
    # in the CLI's and the PDF's words (session 23: it read "0 nodes, 1 GPU")
    guests = {g.id: shared_place_words(g, r.plan.retrieval_groups)
              for g in r.plan.retrieval_groups if g.shares_with}
    heads = (("Line", [names.get(ln.id, ln.id) for ln in bom.lines]),
             ("Server (vendor model)", [f"{ln.platform_name}: {guests[ln.id]}"
                                        if ln.id in guests else ln.platform_name
                                        for ln in bom.lines]),
             ("GPU", [ln.gpu_name for ln in bom.lines]))
    for k, (head, texts) in enumerate(heads):
        _head(book, ws, lay.line_head + k, head, texts, n)
        # names wrap in the 24-character columns (bold: about a tenth wider); vendor model
        # names run to four lines
        ws.set_row(lay.line_head + k, max((wrapped_height(t, 24 * 0.9, 11) for t in texts),
                                          default=15))
    pl = PlanLayout.of(r)
    rec = {c.k: c for c in book.lay.columns if c.recommended}
    group_j = {g.id: j for j, g in enumerate(r.plan.node_groups)}
    retrieval_j = {g.id: j for j, g in enumerate(r.plan.retrieval_groups)}
    pools = {p.id: p for p in r.plan.pools}
    line_cells: dict[str, list[str]] = {}

    def line_formula(j: int, name: str) -> str | None:
        """The formula of fact ``name`` for line ``j`` (None: an input cell)."""
        ln = bom.lines[j]
        if name in _CATALOG_FACTS:
            return None
        if ln.id in group_j:
            g = r.plan.node_groups[group_j[ln.id]]
            col = letter(PLAN_FIRST_COL + group_j[ln.id])
            if name in _PLAN_ROWS:
                return f"=Plan!{col}{pl.group_rows[_PLAN_ROWS[name]] + 1}"
            members = [rec[pools[pid].workload_indices[0] + 1] for pid in g.pools]
            if name == "line_node_power_kw":
                cell = book.lay.cell("node_power_kw", members[0])
                return f"={cell}"
            expr: Expr = (POOL_REPLICA_SPANS_NODES if name == "line_replica_spans_nodes"
                          else POOL_WEIGHTS_STORED_GB)
            fn = "MAX" if name == "line_replica_spans_nodes" else "SUM"
            parts = [render(expr, _member_namer(book, m)) for m in members]
            return f"={fn}({','.join(parts)})"
        k = retrieval_j[ln.id]
        if name == "line_replica_spans_nodes":
            return None  # one GPU per replica: a figure, 0
        return f"={retrieval_cell(k, _RETRIEVAL_ROWS[name])}"

    for name, label, unit in BOM_LINE_FACTS:
        row = lay.line_rows[name]
        values = [ln.values[name] for ln in bom.lines]
        fmt = number_format(unit, values, book.cur)
        _label(book, ws, row, name, label, unit)
        for j, value in enumerate(values):
            formula = line_formula(j, name)
            if formula is None:
                ws.write_number(row, FIRST_COL + j, value, f("input", fmt))
            else:
                # a guest line's 0 servers in words (a what-if edit may still give it some)
                shown = (number_format(unit, values, book.cur, zero_text=_NO_SERVER)
                         if name == "line_nodes" and bom.lines[j].id in guests else fmt)
                ws.write_formula(row, FIRST_COL + j, formula, f("calc", shown), value)
        line_cells[name] = [f"{letter(FIRST_COL + j)}{row + 1}" for j in range(len(values))]
    ws.write_string(lay.line_rows["line_rack_units_per_node"], note_col,
                    "Height and ports: the platform's datasheet (yellow: an estimate you "
                    "may replace).", f("note"))
    for c in BOM_LINE_CALCULATIONS:
        row = lay.line_rows[c.name]
        values = [ln.values[c.name] for ln in bom.lines]
        fmt = number_format(c.unit, values, book.cur)
        _label(book, ws, row, c.name, c.label, c.unit)
        for j, value in enumerate(values):
            ws.write_formula(row, FIRST_COL + j, "=" + render(c.expr, _namer(own, lay, j)),
                             f("calc", fmt), value)
        line_cells[c.name] = [f"{letter(FIRST_COL + j)}{row + 1}" for j in range(len(values))]
        ws.write_string(row, note_col, f"= {to_text(c.expr)}. {c.note}", f("note"))

    # -- totals -----------------------------------------------------------------------------
    ws.write_string(lay.total_head - 1, 1, "Account totals", f("section"))
    _head(book, ws, lay.total_head, "Total", ["Value"], 1)
    totals_own = dict(own)
    for name, row in lay.total_rows.items():
        totals_own[name] = f"{letter(FIRST_COL)}{row + 1}"
    for a in BOM_TOTAL_AGGREGATES:
        row = lay.total_rows[a.name]
        value = bom.totals[a.name]
        _label(book, ws, row, a.name, a.label, a.unit)
        line_name = to_text(a.member)
        cells = line_cells.get(line_name, [])
        formula = "=SUM(" + ",".join(cells) + ")" if cells else "=0"
        ws.write_formula(row, FIRST_COL, formula,
                         f("total", number_format(a.unit, [value], book.cur)), value)
        ws.write_string(row, note_col, f"= SUM({line_name}) over lines", f("note"))
    for c in BOM_TOTAL_CALCULATIONS:
        row = lay.total_rows[c.name]
        value = bom.totals[c.name]
        _label(book, ws, row, c.name, c.label, c.unit)

        def name_of(nm: str) -> str:
            if nm in totals_own:
                return totals_own[nm]
            found = input_name(nm)
            if found is None:
                raise KeyError(f"the BOM sheet cannot place {nm!r}")
            return found

        ws.write_formula(row, FIRST_COL, "=" + render(c.expr, name_of),
                         f("total", number_format(c.unit, [value], book.cur)), value)
        ws.write_string(row, note_col, f"= {to_text(c.expr)}. {c.note}", f("note"))
    ws.freeze_panes(0, FIRST_COL)
    ws.repeat_columns(1, 2)
    ws.print_area(0, 1, max(lay.total_rows.values()), note_col - 1)


def _namer(own: dict[str, str], lay: BomLayout, j: int) -> Callable[[str], str]:
    def name(n: str) -> str:
        if n in lay.line_rows:
            return f"{letter(FIRST_COL + j)}{lay.line_rows[n] + 1}"
        if n in own:
            return own[n]
        found = input_name(n)
        if found is None:
            raise KeyError(f"the BOM sheet cannot place {n!r}")
        return found
    return name


def _label(book: Book, ws: Any, row: int, name: str, label: str, unit: str) -> None:
    f = book.f
    ws.write_string(row, 0, name, f("name"))
    ws.write_string(row, 1, label, f("label"))
    ws.write_string(row, 2, unit_text(unit, book.cur), f("unit"))


def _head(book: Book, ws: Any, row: int, label: str, texts: Sequence[str], n: int) -> None:
    ws.write_string(row, 1, label, book.f("header"))
    ws.write_blank(row, 0, None, book.f("header"))
    ws.write_blank(row, 2, None, book.f("header"))
    for j, text in enumerate(texts):
        ws.write_string(row, FIRST_COL + j, clean_text(text), book.f("header"))
    for j in range(len(texts), n):
        ws.write_blank(row, FIRST_COL + j, None, book.f("header"))
