"""The account plan of one scenario on the Scenarios sheet: one column per pool and one per
node group beside the scenario's member columns, holding the Plan sheet's formulas
(:mod:`llmsizer.model.calculations.plan`) over those member columns instead of the
workload sheets. The scenario's totals are sums over its node-group columns, so a scenario
row buys what the proposal's sensitivity table says (``sizing.sensitivity.scenario_plans``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...model.calculations import CALCULATIONS, GROUP_COUNTS, PLAN_TOTALS, Aggregate, Scenario
from ...model.expr import Value, references, render
from ...sizing.plan import Evaluated
from .book import Book
from .calc_sheets import option_words
from .formats import number_format, unpriced_text
from .layout import SCOPE, Column, input_name, letter
from .plan_sheet import GROUP_ITEMS, POOL_ITEMS, Item

__all__ = ["Member", "PlanRows", "downstream", "write_plan"]


@cache
def downstream(name: str) -> frozenset[str]:
    """The calculations input ``name`` reaches, directly or through other calculations. A
    scenario recomputes only these; every other calculation keeps the proposal's value, so
    its formula refers to the calculation sheets' cell instead of being written again (the
    Scenarios sheet held 8,650 of a workbook's 13,573 formulas: docs/benchmarks.md)."""
    reached = {name}
    grew = True
    while grew:  # to a fixed point, whatever the order of the list
        grew = False
        for calc in CALCULATIONS:
            if calc.name not in reached and references(calc.expr) & reached:
                reached.add(calc.name)
                grew = True
    reached.discard(name)
    return frozenset(reached)


@dataclass(frozen=True)
class PlanRows:
    """Where the block's rows are (0-based): the value of the input changed, each
    calculation of a member column, each pool item, each node-group item."""

    value: int
    calc: dict[str, int]
    pool: dict[str, int]
    group: dict[str, int]

    @classmethod
    def after(cls, value: int, calc: dict[str, int]) -> PlanRows:
        row = max(calc.values()) + 2  # a blank row, then the pools' rows
        pool = {item.name: row + i for i, item in enumerate(POOL_ITEMS)}
        row += len(POOL_ITEMS) + 1
        group = {item.name: row + i for i, item in enumerate(GROUP_ITEMS)}
        return cls(value, calc, pool, group)


@dataclass(frozen=True)
class Member:
    """A workload's column in the scenario's block: its recommended option's column on the
    calculation sheets (for the inputs it keeps) and the block column (for the rest)."""

    column: Column
    col: str  # the block column's letter


def _namer(book: Book, rows: PlanRows, sc: Scenario, own: Callable[[str], str | None],
           m: Member) -> Callable[[str], str]:
    """Where a name of a plan formula lives in the scenario: this column's own rows, the
    member's block column (the input changed and every calculation), else the proposal's
    cells (inputs on Inputs, option inputs on KV)."""

    def name(n: str) -> str:
        here = own(n)
        if here is not None:
            return here
        if n == sc.input:
            return f"{m.col}{rows.value + 1}"
        scope = SCOPE.get(n)
        if n in rows.calc and scope is None and n in downstream(sc.input):
            return f"{m.col}{rows.calc[n] + 1}"
        if scope in ("account", "workload"):
            found = input_name(n, m.column.k)
            assert found is not None, n
            return found
        found = book.lay.cell(n, m.column)
        if found is None:
            raise KeyError(f"the Scenarios sheet cannot place {n!r}")
        return found

    return name


def _placed(name: Callable[[str], str]) -> Callable[[str], str]:
    """``name`` remembered per name: a column's formulas read the same names many times
    (~10 % of the Scenarios sheet's plan columns went to placing them again)."""
    seen: dict[str, str] = {}

    def placed(n: str) -> str:
        found = seen.get(n)
        if found is None:
            found = seen[n] = name(n)
        return found

    return placed


def _number(v: Value) -> float:
    assert isinstance(v, float)
    return v


def write_plan(book: Book, ws: Any, col: int, rows: PlanRows, sc: Scenario,
               members: dict[int, Member], e: Evaluated) -> tuple[int, dict[str, list[str]]]:
    """Write the pools' and node groups' columns of scenario ``sc`` from column ``col`` on
    (``members``: 0-based workload index -> its block column; ``e``: the plan evaluated for
    the scenario, whose values are cached). Returns the next free column and, per key of
    PLAN_TOTALS, the group cells to sum."""
    f = book.f
    pool_cols: dict[int, int] = {}  # id() of an evaluated pool -> its column
    group_cols = {id(g): col + sum(len(h.pools) for h in e.groups) + j
                  for j, g in enumerate(e.groups)}
    for g in e.groups:
        g_col = group_cols[id(g)]
        for p in g.pools:
            p_col = col
            pool_cols[id(p)] = p_col
            col += 1
            ms = [members[i] for i in p.members]

            def pool_own(n: str, p_col: int = p_col, g_col: int = g_col) -> str | None:
                if n in rows.pool:
                    return f"{letter(p_col)}{rows.pool[n] + 1}"
                if n in rows.group:
                    return f"{letter(g_col)}{rows.group[n] + 1}"
                return None

            ws.write_string(rows.value - 3, p_col, f"{sc.label} {sc.change}", f("header"))
            ws.write_string(rows.value - 2, p_col, "Pool: " + ", ".join(
                m.column.workload.name for m in ms), f("header"))
            ws.write_string(rows.value - 1, p_col, option_words(book, ms[0].column.option),
                            f("header"))
            namers = [_placed(_namer(book, rows, sc, pool_own, m)) for m in ms]
            for item in POOL_ITEMS:
                _write_cell(book, ws, rows.pool[item.name], p_col, item, namers, p.env)
    for g in e.groups:
        g_col = group_cols[id(g)]
        first = members[g.pools[0].members[0]]

        def group_own(n: str, g_col: int = g_col) -> str | None:
            n = GROUP_COUNTS.get(n, n)
            if n in rows.group:
                return f"{letter(g_col)}{rows.group[n] + 1}"
            return None

        def at_pool(p_col: int) -> Callable[[str], str]:
            def name(n: str) -> str:
                if n in rows.pool:
                    return f"{letter(p_col)}{rows.pool[n] + 1}"
                raise KeyError(f"the Scenarios sheet cannot place {n!r} in a group aggregate")
            return name

        ws.write_string(rows.value - 3, g_col, f"{sc.label} {sc.change}", f("header"))
        ws.write_string(rows.value - 2, g_col, "Node group", f("header"))
        plat = book.catalog.platforms.get(first.column.option.platform)
        ws.write_string(rows.value - 1, g_col, plat.name if plat else first.column.option.platform,
                        f("header"))
        over_pools = [_placed(at_pool(pool_cols[id(p)])) for p in g.pools]
        own = [_placed(_namer(book, rows, sc, group_own, first))]
        for item in GROUP_ITEMS:
            _write_cell(book, ws, rows.group[item.name], g_col, item,
                        over_pools if isinstance(item, Aggregate) else own, g.env)
    col = max(group_cols.values(), default=col - 1) + 1
    totals = {key: [f"{letter(group_cols[id(g)])}{rows.group[name] + 1}" for g in e.groups]
              for key, name in PLAN_TOTALS.items()}
    return col, totals


def _write_cell(book: Book, ws: Any, row: int, col: int, item: Item,
                namers: Sequence[Callable[[str], str]], env: Any) -> None:
    """``item`` in one column: an aggregate is its function over the rows each namer places
    (a member or a pool), a calculation its expression placed by the first namer."""
    value = _number(env[item.name])
    if isinstance(item, Aggregate):
        text = f"={item.fn}({','.join(render(item.member, n) for n in namers)})"
    else:
        text = "=" + render(item.expr, namers[0])
    fmt = number_format(item.unit, [value], book.cur, zero_text=unpriced_text(item.name),
                        name=item.name)
    ws.write_formula(row, col, text, book.f("calc", fmt), value)
