"""Plan sheet: the account's deployment. One column per pool (workloads that share replicas),
then one column per node group (pools that share nodes), then the account totals beside the
totals of sizing each workload alone. Every number is a formula over the workload sheets (the
members' recommended option columns) and over this sheet: double one pooled workload's users
on Inputs and the pool's replicas, the group's nodes and the totals follow. Which workloads
pool and which option each uses are the engine's choices (the ★ columns); the formulas are
:mod:`llmsizer.model.calculations.plan`, printed with :func:`llmsizer.model.expr.render`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ...model.calculations import (
    GROUP_COST_CALCULATIONS,
    GROUP_COUNTS,
    GROUP_HEADROOM_AGGREGATES,
    GROUP_LOAD_AGGREGATES,
    GROUP_NODE_LOSS_AGGREGATES,
    GROUP_NODE_LOSS_CALCULATIONS,
    GROUP_RENTED_LOSS_AGGREGATES,
    GROUP_RENTED_LOSS_CALCULATIONS,
    GROUP_SIZE_AGGREGATES,
    GROUP_SIZE_CALCULATIONS,
    GROUP_SPARE_CALCULATIONS,
    INPUTS,
    PLAN_TOTALS,
    POOL_AGGREGATES,
    POOL_CALCULATIONS,
    POOL_HEADROOM_CALCULATIONS,
    POOL_NODE_LOSS_CALCULATIONS,
    POOL_RENTED_LOSS_CALCULATIONS,
    POOL_SPARE_CALCULATIONS,
    WORKLOAD_SHARE_CALCULATIONS,
    WORKLOAD_SHARE_OF,
    Aggregate,
    Calculation,
    PlanCalculation,
    cloud_priced_formula,
)
from ...model.expr import render, to_text
from ...sizing.results import Result
from ..proposal.sensitivity import cloud_total_words
from .book import Book
from .formats import (
    clean_text,
    fit_width,
    label_width,
    number_format,
    unit_text,
    unpriced_text,
    wrapped_height,
)
from .layout import Column, input_name, letter, sheet_label
from .rerun_check import label as option_label
from .retrieval_sheet import retrieval_alone_refs, retrieval_total_refs

__all__ = ["PlanLayout", "share_cell", "total_cell", "write"]

Item = Aggregate | PlanCalculation | Calculation
POOL_ITEMS: tuple[Item, ...] = (*POOL_AGGREGATES, *POOL_CALCULATIONS, *POOL_SPARE_CALCULATIONS,
                                *POOL_NODE_LOSS_CALCULATIONS, *POOL_HEADROOM_CALCULATIONS,
                                *POOL_RENTED_LOSS_CALCULATIONS)
GROUP_ITEMS: tuple[Item, ...] = (*GROUP_LOAD_AGGREGATES, *GROUP_SPARE_CALCULATIONS,
                                 *GROUP_SIZE_AGGREGATES, *GROUP_SIZE_CALCULATIONS,
                                 *GROUP_NODE_LOSS_AGGREGATES, *GROUP_NODE_LOSS_CALCULATIONS,
                                 *GROUP_HEADROOM_AGGREGATES, *GROUP_COST_CALCULATIONS,
                                 *GROUP_RENTED_LOSS_AGGREGATES, *GROUP_RENTED_LOSS_CALCULATIONS)
# Session 23: an offer sold by the GPU in listed sizes (AWS G6: 1, 4 or 8 GPUs) rents
# cloud_listed_load_instances, not one instance per replica; the Plan sheet shows both rows
# (a group's pools may be rented either way), so each says when it is the count rented, as
# the proposal counts the instances rented (cloud_instances).
RENTED_WHEN = {
    "pool_cloud_load_instances": " (rented when the offer lists no other sizes)",
    "group_cloud_load_instances": " (rented when the offer lists no other sizes)",
    "cloud_listed_load_instances": " (rented when the offer lists other sizes)"}


def plan_label(item: Item) -> str:
    """The row's label on the Plan sheet: the calculation's, with when it is rented."""
    return sheet_label(item.name, item.label) + RENTED_WHEN.get(item.name, "")


POOL_NAMES = frozenset(i.name for i in POOL_ITEMS)
GROUP_NAMES = frozenset(i.name for i in GROUP_ITEMS)
TOTAL_LABELS = {"nodes": ("Nodes", "nodes"), "gpus_used": ("GPUs serving or on standby", "GPUs"),
                "gpus_purchased": ("GPUs purchased", "GPUs"), "capex": ("Capital cost", "currency"),
                "annual_cost_onprem": ("On-prem cost per year", "currency/yr"),
                "annual_cost_cloud": ("Cloud cost per year", "currency/yr")}
# Each workload sized alone: the per-option calculation behind each total.
DEDICATED = {"nodes": "nodes", "gpus_used": "gpus", "gpus_purchased": "gpus_purchased",
             "capex": "capex", "annual_cost_onprem": "annual_cost_onprem",
             "annual_cost_cloud": "annual_cost_cloud"}
FIRST_COL = 3
_SCOPE = {i.name: i.scope for i in INPUTS}


@dataclass
class PlanLayout:
    """Rows of the Plan sheet (0-based), decided from the Result alone."""

    pool_head: int = 5
    pool_rows: dict[str, int] = field(default_factory=dict)
    group_head: int = 0
    group_rows: dict[str, int] = field(default_factory=dict)
    total_head: int = 0
    total_rows: dict[str, int] = field(default_factory=dict)
    share_head: int = 0
    share_rows: dict[str, int] = field(default_factory=dict)
    # workload index -> its column in the shares section (workloads in a pool, in order)
    share_cols: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, r: Result) -> PlanLayout:
        lay = cls()
        row = lay.pool_head + 4  # id, workloads, option, node group
        for item in POOL_ITEMS:
            lay.pool_rows[item.name] = row
            row += 1
        lay.group_head = row + 2
        row = lay.group_head + 4  # id, platform, GPU, pools
        for item in GROUP_ITEMS:
            lay.group_rows[item.name] = row
            row += 1
        lay.total_head = row + 2
        row = lay.total_head + 1
        for key in PLAN_TOTALS:
            lay.total_rows[key] = row
            row += 1
        lay.share_head = row + 2
        row = lay.share_head + 3  # workload, pool, node group
        for c in WORKLOAD_SHARE_CALCULATIONS:
            lay.share_rows[c.name] = row
            row += 1
        planned = sorted(i for p in r.plan.pools for i in p.workload_indices)
        lay.share_cols = {i: FIRST_COL + j for j, i in enumerate(planned)}
        return lay


def share_cell(r: Result, k: int, name: str) -> str | None:
    """The Plan sheet's cell holding workload ``k``'s (1-based) share figure ``name`` (a
    WORKLOAD_SHARE_CALCULATIONS name or a PLAN_TOTALS key); None outside the plan's pools."""
    lay = PlanLayout.of(r)
    name = WORKLOAD_SHARE_OF.get(name, name)
    col = lay.share_cols.get(k - 1)
    if col is None or name not in lay.share_rows:
        return None
    return f"Plan!{letter(col)}{lay.share_rows[name] + 1}"


def total_cell(r: Result, key: str) -> str | None:
    """The Plan sheet's cell holding account total ``key`` (a PLAN_TOTALS key)."""
    row = PlanLayout.of(r).total_rows.get(key)
    return None if row is None else f"Plan!{letter(FIRST_COL)}{row + 1}"


@cache
def _kind(name: str) -> str:
    return _SCOPE.get(name, "calc")


def _namer(book: Book, own: Callable[[str], str | None], member: Column) -> Callable[[str], str]:
    """Where a name of a plan formula lives: this sheet (``own``), an account or workload
    input, else the member's option column on the workload sheets."""

    def name(n: str) -> str:
        here = own(n)
        if here is not None:
            return here
        kind = _kind(n)
        if kind in ("account", "workload"):
            found = input_name(n, member.k)
            assert found is not None
            return found
        cell = book.lay.cell(n, member)
        if cell is None:
            raise KeyError(f"the Plan sheet cannot place {n!r}")
        return cell

    return name


def _formula(item: Item, own: Callable[[str], str | None], rows: Sequence[Column],
             book: Book) -> str:
    """``item`` printed for one column: an aggregate is its function over the member rows'
    expression, each printed for its own member."""
    if isinstance(item, Aggregate):
        parts = [render(item.member, _namer(book, own, c)) for c in rows]
        return f"={item.fn}({','.join(parts)})"
    return "=" + render(item.expr, _namer(book, own, rows[0]))


def _write_rows(book: Book, ws: Any, items: Sequence[Item], rows: dict[str, int],
                columns: Sequence[tuple[int, Callable[[str], str | None], Sequence[Column],
                                        dict[str, float]]], note_col: int) -> None:
    f = book.f
    for item in items:
        row = rows[item.name]
        values = [vals[item.name] for _, _, _, vals in columns]
        fmt = number_format(item.unit, values, book.cur, zero_text=unpriced_text(item.name),
                            name=item.name)
        ws.write_string(row, 0, item.name, f("name"))
        ws.write_string(row, 1, plan_label(item), f("label"))
        ws.write_string(row, 2, unit_text(item.unit, book.cur), f("unit"))
        for (col, own, members, _vals), value in zip(columns, values, strict=True):
            ws.write_formula(row, col, _formula(item, own, members, book), f("calc", fmt), value)
        text = to_text(item.member if isinstance(item, Aggregate) else item.expr)
        text = f"{item.fn}({text}) over members" if isinstance(item, Aggregate) else text
        ws.write_string(row, note_col, f"= {text}", f("note"))
        ws.write_string(row, note_col + 1, item.note, f("note"))
        if (item.name.endswith(("headroom_after_node_loss", "headroom_after_instance_loss",
                                "headroom_one_down")) and columns):
            ws.conditional_format(row, FIRST_COL, row, FIRST_COL + len(columns) - 1, {
                "type": "cell", "criteria": "<", "value": 0, "format": f("bad")})


def _width(r: Result, pl: PlanLayout) -> int:
    """Columns after the unit column: pools, node groups, shares, totals (at least 2)."""
    return max(len(r.plan.pools), len(r.plan.node_groups), len(pl.share_cols), 2)


def plan_names(r: Result) -> dict[str, str]:
    """Pools and node groups in words, as the proposal numbers its pools: 'Pool 1', 'Node
    group 1' (their ids, pool-1 and group-1, are the results file's keys), and a retrieval
    group by its workload's name."""
    names = {p.id: f"Pool {n}" for n, p in enumerate(r.plan.pools, 1)}
    names.update({g.id: f"Node group {n}" for n, g in enumerate(r.plan.node_groups, 1)})
    names.update({g.id: g.workload for g in r.plan.retrieval_groups})
    return names


def _head(book: Book, ws: Any, row: int, label: str, texts: Sequence[str], n: int) -> None:
    ws.write_string(row, 1, label, book.f("header"))
    ws.write_blank(row, 0, None, book.f("header"))
    ws.write_blank(row, 2, None, book.f("header"))
    for j, text in enumerate(texts):
        ws.write_string(row, FIRST_COL + j, clean_text(text), book.f("header"))
    for j in range(len(texts), n):
        ws.write_blank(row, FIRST_COL + j, None, book.f("header"))
    # as tall as its longest words wrapped in their 24-wide column (bold, at word ends: about
    # 0.9 of the plain width), or LibreOffice's print cut "... SXM5, 6U air-cooled)"
    ws.set_row(row, max([15.0] + [wrapped_height(t, 24 * 0.9, 11) for t in texts]))


def write(book: Book) -> None:
    """Write the Plan sheet: pools, node groups, account totals."""
    ws = book.ws["Plan"]
    f = book.f
    r = book.r
    pl = PlanLayout.of(r)
    book.title(ws, "Deployment plan: what is bought and who shares it",
               "Pools: workloads on the same model, precisions, GPU and TP share replicas "
               "(one rounding, one set of spares). Node groups: pools on the same GPU and "
               "platform share nodes, with one node's worth of spare GPUs for N+1. Formulas "
               "over the ★ option columns of KV, Throughput, Nodes and TCO.", 1,
               # wrapped over the printed columns: it ran off the page
               span=(FIRST_COL + _width(r, pl) - 1, 51 + 24 * _width(r, pl)))
    rec = {c.k: c for c in book.lay.columns if c.recommended}
    pools = r.plan.pools
    groups = r.plan.node_groups
    pool_col = {p.id: FIRST_COL + j for j, p in enumerate(pools)}
    group_of = {pid: g for g in groups for pid in g.pools}
    group_col = {g.id: FIRST_COL + j for j, g in enumerate(groups)}
    width = _width(r, pl)
    ws.set_column(0, 0, 28)
    wide = label_width([plan_label(i) for i in (*POOL_ITEMS, *GROUP_ITEMS,
                                          *WORKLOAD_SHARE_CALCULATIONS)], 40)
    ws.set_column(1, 1, wide)
    ws.set_column(2, 2, 11)
    ws.set_column(FIRST_COL, FIRST_COL + width - 1, 24)
    ws.set_column(FIRST_COL + width, FIRST_COL + width, 50)
    ws.set_column(FIRST_COL + width + 1, FIRST_COL + width + 1, 80)
    fit_width(ws, wide + 11 + 24 * width, wide + 11)

    def pool_own(p_col: int, g_col: int) -> Callable[[str], str | None]:
        def own(n: str) -> str | None:
            if n in pl.pool_rows:
                return f"{letter(p_col)}{pl.pool_rows[n] + 1}"
            if n in pl.group_rows:
                return f"{letter(g_col)}{pl.group_rows[n] + 1}"
            return None
        return own

    # -- pools ----------------------------------------------------------------------------
    ws.write_string(pl.pool_head - 1, 1, "Pools (workloads sharing replicas)", f("section"))
    names = plan_names(r)
    _head(book, ws, pl.pool_head, "Pool", [names[p.id] for p in pools], width)
    _head(book, ws, pl.pool_head + 1, "Workloads", [", ".join(p.workloads) for p in pools], width)
    # the option in the proposal's words (its id is the results file's key)
    words = [option_label(book, o) if (o := r.workloads[p.workload_indices[0]].option(p.option))
             else p.option for p in pools]
    _head(book, ws, pl.pool_head + 2, "Option (the ★ column of each member)", words, width)
    _head(book, ws, pl.pool_head + 3, "Node group", [names[group_of[p.id].id] for p in pools],
          width)
    pool_columns = []
    for p in pools:
        members = [rec[i + 1] for i in p.workload_indices]
        g_col = group_col[group_of[p.id].id]
        pool_columns.append((pool_col[p.id], pool_own(pool_col[p.id], g_col), members, p.values))
    _write_rows(book, ws, POOL_ITEMS, pl.pool_rows, pool_columns, FIRST_COL + width)

    # -- node groups ------------------------------------------------------------------------
    ws.write_string(pl.group_head - 1, 1, "Node groups (pools sharing nodes)", f("section"))
    plat = book.catalog.platforms
    _head(book, ws, pl.group_head, "Node group", [names[g.id] for g in groups], width)
    _head(book, ws, pl.group_head + 1, "Platform",
          [plat[g.platform].name if g.platform in plat else g.platform for g in groups], width)
    _head(book, ws, pl.group_head + 2, "GPU", [book.display_name("gpus", g.gpu) for g in groups],
          width)
    _head(book, ws, pl.group_head + 3, "Pools", [", ".join(names[p] for p in g.pools)
                                                 for g in groups], width)
    group_columns = []
    for g in groups:
        g_col = group_col[g.id]
        pool_cols = [pool_col[pid] for pid in g.pools]
        first = rec[next(p for p in pools if p.id == g.pools[0]).workload_indices[0] + 1]

        def own(n: str, g_col: int = g_col) -> str | None:
            n = GROUP_COUNTS.get(n, n)
            if n in pl.group_rows:
                return f"{letter(g_col)}{pl.group_rows[n] + 1}"
            return None

        # aggregates over the group's pools: each "member row" is a pool column
        group_columns.append((g_col, own, [first] * len(pool_cols), g.values, pool_cols))
    for item in GROUP_ITEMS:
        row = pl.group_rows[item.name]
        cols4 = [(c, o, m, v) for c, o, m, v, _ in group_columns]
        if isinstance(item, Aggregate):
            _write_group_aggregate(book, ws, item, row, group_columns, pl, FIRST_COL + width)
        else:
            _write_rows(book, ws, [item], pl.group_rows, cols4, FIRST_COL + width)

    # -- totals -----------------------------------------------------------------------------
    t = pl.total_head
    ws.write_string(t - 1, 1, "Account totals", f("section"))
    _head(book, ws, t, "Total", ["This plan", "Each workload alone"], width)
    for key, row in pl.total_rows.items():
        label, unit = TOTAL_LABELS[key]
        # a cloud total without a price for one of its GPUs is 0, shown "not comparable"
        plan_value = float(getattr(r.totals, key) or 0.0)
        ded_value = float(getattr(r.totals_dedicated, key) or 0.0)
        fmt = number_format(unit, [plan_value, ded_value], book.cur,
                            zero_text=unpriced_text(key, total=cloud_total_words(r)))
        ws.write_string(row, 0, key, f("name"))
        ws.write_string(row, 1, label, f("label"))
        ws.write_string(row, 2, unit_text(unit, book.cur), f("unit"))
        # ``rk``: the retrieval row, when not the total's own (the GPUs a server rents)
        def plan_refs(k: str, rk: str | None = None) -> list[str]:
            name = PLAN_TOTALS[k]
            return ([f"{letter(group_col[g.id])}{pl.group_rows[name] + 1}" for g in groups]
                    # embed and rerank workloads' own node groups
                    + retrieval_total_refs(r, rk or k))

        def alone_refs(k: str, rk: str | None = None) -> list[str]:
            cells = [book.lay.cell(DEDICATED[k], c) for c in book.lay.columns
                     if c.option.id == c.workload.dedicated]
            return [d for d in cells if d] + retrieval_alone_refs(r, rk or k)

        plan_f, ded_f = _sum(plan_refs(key)), _sum(alone_refs(key))
        if key == "annual_cost_cloud":
            # a retrieval server's part: the GPUs it rents itself (on a language-model
            # group's instances, that group's part)
            plan_f = _priced(plan_refs(key), plan_refs("gpus_used", "cloud_gpus"), plan_f)
            ded_f = _priced(alone_refs(key), alone_refs("gpus_used", "cloud_gpus"), ded_f)
        ws.write_formula(row, FIRST_COL, plan_f, f("total", fmt), plan_value)
        ws.write_formula(row, FIRST_COL + 1, ded_f, f("total", fmt), ded_value)
    _write_shares(book, ws, pl, pool_col, group_of, group_col, width)
    ws.freeze_panes(0, FIRST_COL)
    ws.repeat_columns(1, 2)
    # Print the labels and the pool/group columns (names, formulas and notes stay on screen).
    ws.print_area(0, 1, max(pl.share_rows.values()), FIRST_COL + width - 1)


def _write_shares(book: Book, ws: Any, pl: PlanLayout, pool_col: dict[str, int],
                  group_of: dict[str, Any], group_col: dict[str, int], width: int) -> None:
    """Each workload's share of its pool and node group: the Summary's per-workload rows
    read these, and they sum to the account totals above."""
    r = book.r
    rec = {c.k: c for c in book.lay.columns if c.recommended}
    ws.write_string(pl.share_head - 1, 1, "Each workload's share of the plan", book.f("section"))
    pool_of = {i: p for p in r.plan.pools for i in p.workload_indices}
    order = sorted(pl.share_cols)
    _head(book, ws, pl.share_head, "Workload", [r.workloads[i].name for i in order],
          width)
    names = plan_names(r)
    _head(book, ws, pl.share_head + 1, "Pool", [names[pool_of[i].id] for i in order],
          width)
    _head(book, ws, pl.share_head + 2, "Node group",
          [names[group_of[pool_of[i].id].id] for i in order], width)
    columns = []
    for i in order:
        p = pool_of[i]
        p_col, g_col = pool_col[p.id], group_col[group_of[p.id].id]

        def own(n: str, p_col: int = p_col, g_col: int = g_col, s_col: int = pl.share_cols[i],
                ) -> str | None:
            if n in pl.share_rows:
                return f"{letter(s_col)}{pl.share_rows[n] + 1}"
            if n in pl.pool_rows:
                return f"{letter(p_col)}{pl.pool_rows[n] + 1}"
            if n in pl.group_rows:
                return f"{letter(g_col)}{pl.group_rows[n] + 1}"
            return None

        values = p.shares[p.workload_indices.index(i)]
        columns.append((pl.share_cols[i], own, [rec[i + 1]], values))
    _write_rows(book, ws, WORKLOAD_SHARE_CALCULATIONS, pl.share_rows, columns,
                FIRST_COL + width)


def _priced(costs: Sequence[str], gpus: Sequence[str], total: str) -> str:
    """A cloud total formula ``total`` that is 0 unless every part with GPUs has a cloud
    price (calculations/costs.py cloud_priced)."""
    return f"=IF({cloud_priced_formula(costs, gpus)},{total.removeprefix('=')},0)"


def _sum(refs: Sequence[str]) -> str:
    if not refs:
        return "=0"
    return "=" + "+".join(f"SUM({','.join(refs[i:i + 30])})" for i in range(0, len(refs), 30))


def _write_group_aggregate(book: Book, ws: Any, item: Aggregate, row: int,
                           group_columns: Sequence[tuple[int, Callable[[str], str | None],
                                                         Sequence[Column], dict[str, float],
                                                         list[int]]],
                           pl: PlanLayout, note_col: int) -> None:
    """A group aggregate: its function over the group's pool columns (the member expression
    names pool rows of this sheet)."""
    f = book.f
    values = [vals[item.name] for _, _, _, vals, _ in group_columns]
    fmt = number_format(item.unit, values, book.cur, zero_text=unpriced_text(item.name),
                        name=item.name)
    ws.write_string(row, 0, item.name, f("name"))
    ws.write_string(row, 1, plan_label(item), f("label"))
    ws.write_string(row, 2, unit_text(item.unit, book.cur), f("unit"))
    for (col, _, _members, _, pool_cols), value in zip(group_columns, values, strict=True):

        def at(p_col: int) -> Callable[[str], str]:
            def name(n: str) -> str:
                if n in pl.pool_rows:
                    return f"{letter(p_col)}{pl.pool_rows[n] + 1}"
                raise KeyError(f"the Plan sheet cannot place {n!r} in a group aggregate")
            return name

        parts = [render(item.member, at(pc)) for pc in pool_cols]
        ws.write_formula(row, col, f"={item.fn}({','.join(parts)})", f("calc", fmt), value)
    ws.write_string(row, note_col, f"= {item.fn}({to_text(item.member)}) over pools", f("note"))
    ws.write_string(row, note_col + 1, item.note, f("note"))
