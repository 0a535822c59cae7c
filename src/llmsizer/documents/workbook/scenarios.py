"""Scenarios sheet: what the recommendation needs and costs if one estimate changes (users
x0.5 / x1.5 / x2, prompt and output length +/-50 %, GPU price +/-30 %, each cloud tier,
average load 30 % / 90 %, headroom 0 / 50 %).

Live: each scenario recomputes, for each workload's recommended option, the calculations its
changed input reaches (``scenario_plan.downstream``; the others keep the calculation sheets'
cells) in grouped (collapsed) columns to the right of the table, built from the same
calculation trees as KV/Throughput/Nodes/TCO with one input replaced by the scenario's value
(itself a formula over the input cell, e.g. ``=ROUNDUP(in_w1_users*0.5,0)``). The table sums
those columns over the workloads. Change a price or a requirement on Inputs and every
scenario follows.
"""

from __future__ import annotations

from typing import Any

from ...model.calculations import (
    CALCULATIONS,
    INPUTS,
    SCENARIO_OUTPUTS,
    UNITS,
    Calculation,
    Scenario,
    cloud_priced_formula,
)
from ...model.expr import Lookup, Value, render
from ...model.sheetlookup import lookup_formula
from ...sizing.sensitivity import result_scenario_plans
from ..marker import normalize_formula
from ..proposal.sensitivity import tiers_fixed_words
from .book import Book
from .calc_sheets import option_words
from .formats import (
    clean_text,
    fit_width,
    formula_text,
    number_format,
    unit_text,
    unpriced_text,
    wrapped_height,
)
from .layout import SCOPE, Column, cached, flag_expr, input_name, letter
from .layout import _column as catalog_column
from .plan_sheet import GROUP_ITEMS, POOL_ITEMS, total_cell
from .scenario_plan import Member, PlanRows, downstream, write_plan
from .scenario_retrieval import label_rows, write_retrieval
from .scenario_tiers import TIER_INPUT, TIERS_REPEAT, change_cell, repeat_test

__all__ = ["write"]

ROW_HEAD = 3  # the table's header row
FIRST_BLOCK_COL = 9  # the hidden calculation columns start here (after the table and a gap)
BLOCK_ROW_HEAD = 3  # header rows of the calculation block: scenario, workload, option
BLOCK_ROW_VALUE = 6  # the changed input's value
BLOCK_FIRST_CALC = 7  # then one row per calculation, in CALCULATIONS order
_LABELS = {"gpus_purchased": "GPUs bought", "nodes": "Nodes", "capex": "Capital cost",
           "annual_cost_onprem": "On-prem cost per year",
           "annual_cost_cloud": "Cloud cost per year"}


def _label(key: str, rented: bool) -> str:
    """A column's header; where renting is recommended the buying columns are the
    alternative, said so, and the cloud cost is the recommendation's (review round 21: the
    sheet read "GPUs bought" beside a plan that rents them, as the PDF's table did)."""
    if not rented:
        return _LABELS[key]
    return "Cloud cost per year (recommended)" if key == "annual_cost_cloud" else (
        _LABELS[key].replace("GPUs bought", "GPUs") + " if bought")


_CALC_ROW = {c.name: BLOCK_FIRST_CALC + i for i, c in enumerate(CALCULATIONS)}
_ROWS = PlanRows.after(BLOCK_ROW_VALUE, _CALC_ROW)  # then the pools' and node groups' rows
# The input each row changes, in the words of the Inputs sheet (no input names on a sheet
# the customer reads).
_INPUT_WORDS = {i.name: i.label for i in INPUTS}
# and its unit, for the value cell's number format: General printed 66.66666666666667
# requests/s (a population's busiest hour at +50 %) and 0.7 for "GPU price -30 %"
_INPUT_UNITS = {i.name: i.unit for i in INPUTS}


def _lookup(book: Book, lk: Lookup, key: str) -> str:
    """A catalog lookup as the calculation sheets print it (INDEX/MATCH on the id)."""
    lay = book.lay
    rows = lay.catalog_ids.get(lk.table, [])
    first = lay.catalog_cells[(lk.table, rows[0][0], lk.column)]
    last = lay.catalog_cells[(lk.table, rows[-1][0], lk.column)]
    return lookup_formula(key, catalog_column(rows[0][1], rows[-1][1]),
                          catalog_column(first, last))


def _base_name(book: Book, c: Column, n: str) -> str:
    """A reference to input ``n`` as the proposal has it (Inputs sheet or the option's KV
    column)."""
    scope = SCOPE.get(n)
    if scope in ("account", "workload"):
        found = input_name(n, c.k)
        assert found is not None, n
        return found
    ref = book.lay.cell(n, c)
    assert ref is not None, n
    return ref


def _formula(book: Book, expr: Any, c: Column, col: str, sc: Scenario | None) -> str:
    """``expr`` for column ``col`` of the block: calculations refer to this column, the
    scenario's input to its value cell, every other input to the proposal's cell."""

    def name(n: str) -> str:
        if sc is not None and n == sc.input:
            return f"{col}{BLOCK_ROW_VALUE + 1}"
        if n in _CALC_ROW and n not in SCOPE and sc is not None and n in downstream(sc.input):
            return f"{col}{_CALC_ROW[n] + 1}"
        return _base_name(book, c, n)

    return "=" + render(expr, name, lambda lk, key: _lookup(book, lk, key))


# A block's formulas depend on the scenario's input, the block column, the option's column and
# the workload's k only: printed once per input changed with \x02, \x00 and \x01 in their
# places (as Layout.template does), and normalised once for the marker. The example has 38
# block columns of ~77 formulas each; printing and normalising each was ~25 ms of ~250.
# Each: (calculation, row, unit, is a flag, formula, normal form).
_Templates = list[tuple[Calculation, int, str, bool, str, str]]


def _templates(book: Book, sc: Scenario, done: dict[str, _Templates]) -> _Templates:
    """The reached calculations of scenario ``sc`` (see _Templates)."""
    hit = done.get(sc.input)
    if hit is not None:
        return hit
    reached = downstream(sc.input)

    def name(n: str) -> str:
        if n == sc.input:
            return f"\x02{BLOCK_ROW_VALUE + 1}"
        if n in _CALC_ROW and n not in SCOPE and n in reached:
            return f"\x02{_CALC_ROW[n] + 1}"
        return book.lay.ref_template(n, "Scenarios")

    out: _Templates = []
    for calc in CALCULATIONS:
        if calc.name in reached:  # the others keep the proposal's value (calculation sheets)
            text = "=" + render(calc.expr, name, lambda lk, key: _lookup(book, lk, key))
            flag = flag_expr(calc.expr)
            out.append((calc, _CALC_ROW[calc.name], "flag" if flag else calc.unit, flag,
                        text, normalize_formula(text)))
    done[sc.input] = out
    return out


# scenario, change, input changed: wide enough for "Requests/s at peak", "hyperscaler
# on-demand, derived" and the input's words ("Concurrent users at peak (stated)": they were
# cut at the next column)
_WIDTHS = (22, 30, 40)


def write(book: Book) -> None:
    ws = book.ws["Scenarios"]
    f = book.f
    r = book.r
    book.title(ws, "Scenarios: what if an estimate is off (the account plan)",
               "Each row changes one input and recomputes the plan on the cover: every "
               "workload keeps its recommended configuration (GPU, precision and TP), the "
               "pools keep their workloads and the node groups their pools, with the same "
               "formulas as the calculation sheets and the Plan sheet. The grouped columns to "
               "the right hold those calculations. These are the figures of the proposal's "
               "sensitivity table. Change an input on Inputs (a price, users, load) and the "
               "rows follow."
               + (" Every row includes the embedding and reranking servers (Retrieval sheet): "
                  "the peak request rate and headroom rows resize them, and the GPU price, cloud "
                  "price and average load rows price them, as they do the language models; a "
                  "server on the language-model nodes' idle GPUs gets only those the row's plan "
                  "leaves idle, else nodes of its own (their columns follow the node groups')."
                  if r.plan.retrieval_groups else ""),
               # wrapped over the table's columns: it ran off the printed page
               span=(2 + len(SCENARIO_OUTPUTS), sum(_WIDTHS) + 16 * len(SCENARIO_OUTPUTS)))
    recommended = {c.k: c for c in book.lay.columns if c.recommended}
    runs = result_scenario_plans(r)  # the sensitivity's own, kept by size()
    heads = ["Scenario", "Change", "Input changed",
             *(_label(k, r.deployment is not None and r.deployment.recommended == "cloud")
               for k in SCENARIO_OUTPUTS)]
    for j, text in enumerate(heads):
        ws.write_string(ROW_HEAD, j, text, f("header"))
    # as tall as the longest header wraps ("Cloud cost per year (recommended)" takes 3 lines
    # in a 16-character column: a fixed 30 pt cut it); 11 pt bold, about 13 characters' room
    ws.set_row(ROW_HEAD, max(30.0, *(wrapped_height(h, 13, 11) for h in heads[3:])))
    for j, width in enumerate(_WIDTHS):
        ws.set_column(j, j, width)
    ws.set_column(3, 2 + len(SCENARIO_OUTPUTS), 16)
    # a scenario's cloud cost without a price reads as the proposal's sensitivity table
    fmts = {k: number_format(UNITS[k], [0.0], book.cur, zero_text=unpriced_text(k), name=k)
            for k in SCENARIO_OUTPUTS}
    # the proposal itself: the Plan sheet's account totals
    row = ROW_HEAD + 1
    ws.write_string(row, 0, "As proposed", f("label_bold"))
    for j, k in enumerate(SCENARIO_OUTPUTS, start=3):
        cell = total_cell(r, k)
        assert cell is not None, k
        ws.write_formula(row, j, "=" + cell, f("total", fmts[k]), float(getattr(r.totals, k) or 0.0))
    col = FIRST_BLOCK_COL
    done: dict[str, _Templates] = {}
    retrieval_columns = False
    tiers: str | None = None  # the live test that the cloud-tier rows repeat the proposal
    for (sc, envs, plan), scenario in zip(runs, r.sensitivity, strict=True):
        assert scenario.name == sc.name
        row += 1
        ws.write_string(row, 0, sc.label, f("label"))
        if sc.input == TIER_INPUT:  # says derived, or own price once one is typed
            tiers = tiers or repeat_test(book)
            formula, shows = change_cell(book, sc, tiers)
            ws.write_formula(row, 1, formula, f("text"), shows)
        else:
            ws.write_string(row, 1, sc.change, f("text"))
        ws.write_string(row, 2, _INPUT_WORDS.get(sc.input, sc.input), f("text"))
        members: dict[int, Member] = {}
        for wk, env in envs:
            c = recommended[wk]
            members[wk - 1] = Member(c, letter(col))
            _write_block(book, ws, col, sc, c, env, done)
            col += 1
        col, plan_sums = write_plan(book, ws, col, _ROWS, sc, members, plan)
        # the whole account, as the Plan sheet's totals: the embed and rerank workloads' own
        # node groups, resized by the load and headroom rows, else as proposed
        before = col
        col, extra = write_retrieval(book, ws, col, _ROWS, sc, plan, plan_sums)
        retrieval_columns = retrieval_columns or col > before
        sums = {k: [*plan_sums[k], *extra[k]] for k in plan_sums}
        for j, out in enumerate(SCENARIO_OUTPUTS, start=3):
            text = f"SUM({','.join(sums[out])})" if sums[out] else "0"
            # 0 = no price listed for a GPU of the plan (the results' None)
            value = float(getattr(scenario, out) or 0.0)
            if out == "annual_cost_cloud":
                # a retrieval server's part: the GPUs it rents itself (none on a
                # language-model group's instances: that group's part prices them)
                gpus = [*plan_sums["gpus_used"], *extra["cloud_gpus"]]
                text = f"IF({cloud_priced_formula(sums[out], gpus)},{text},0)"
            ws.write_formula(row, j, "=" + text, f("calc", fmts[out]), value)
    last_table_row = row
    if col > FIRST_BLOCK_COL:
        # The calculation block: labels in the column before it, grouped and collapsed.
        ws.write_string(BLOCK_ROW_HEAD, FIRST_BLOCK_COL - 1, "Scenario", f("header"))
        ws.write_string(BLOCK_ROW_HEAD + 1, FIRST_BLOCK_COL - 1, "Workload, pool or node group",
                        f("header"))
        ws.write_string(BLOCK_ROW_HEAD + 2, FIRST_BLOCK_COL - 1, "Option or platform",
                        f("header"))
        ws.write_string(BLOCK_ROW_VALUE, FIRST_BLOCK_COL - 1, "Value of the input changed",
                        f("label_bold"))
        for calc in CALCULATIONS:
            ws.write_string(_CALC_ROW[calc.name], FIRST_BLOCK_COL - 1,
                            f"{calc.label} ({unit_text(calc.unit, book.cur)})", f("label"))
        for items, where, what in ((POOL_ITEMS, _ROWS.pool, "Pool"),
                                   (GROUP_ITEMS, _ROWS.group, "Node group")):
            for item in items:
                ws.write_string(where[item.name], FIRST_BLOCK_COL - 1,
                                f"{what}: {item.label} ({unit_text(item.unit, book.cur)})",
                                f("label"))
        if retrieval_columns:
            label_rows(book, ws, FIRST_BLOCK_COL - 1, _ROWS)
        ws.set_column(FIRST_BLOCK_COL - 1, FIRST_BLOCK_COL - 1, 40, None,
                      {"level": 1, "hidden": True})
        ws.set_column(FIRST_BLOCK_COL, col - 1, 14, None, {"level": 1, "hidden": True})
        ws.set_column(col, col, None, None, {"collapsed": True})
    # the proposal's line under its table, where the cloud-tier rows are left out
    fixed = tiers_fixed_words(r)
    note = ((fixed + " " if fixed else "")
            + "The grouped columns (+ above the column letters) hold each scenario's "
            "calculations: one column per workload, then one per pool and one per node "
            "group, as on the Plan sheet. A calculation the changed input does not reach "
            "is left blank there: it keeps the proposal's value on the calculation sheets.")
    # wrapped over the table's columns: on one line it ran off the printed page
    last = 2 + len(SCENARIO_OUTPUTS)
    ws.merge_range(last_table_row + 2, 0, last_table_row + 2, last, "", f("wrap_note"))
    if tiers is None:
        ws.write_string(last_table_row + 2, 0, note, f("wrap_note"))
    else:  # the rows shown: a price typed for every GPU of the plan makes them repeat
        ws.write_formula(last_table_row + 2, 0, f'=IF({tiers},{formula_text(TIERS_REPEAT)},"")&'
                         f"{formula_text(note)}", f("wrap_note"), note)
        note = TIERS_REPEAT + note  # the row tall enough for the longer text
    ws.set_row(last_table_row + 2, wrapped_height(note, sum(_WIDTHS) + 16 * len(SCENARIO_OUTPUTS)))
    ws.freeze_panes(ROW_HEAD + 1, 1)
    ws.print_area(0, 0, last_table_row + 2, 2 + len(SCENARIO_OUTPUTS))
    fit_width(ws, sum(_WIDTHS) + 16 * len(SCENARIO_OUTPUTS))  # the table on one page wide


def _write_block(book: Book, ws: Any, col: int, sc: Scenario, c: Column,
                 env: dict[str, Value], done: dict[str, _Templates]) -> None:
    f = book.f
    x = letter(col)
    ws.write_string(BLOCK_ROW_HEAD, col, f"{sc.label} {sc.change}", f("header"))
    ws.write_string(BLOCK_ROW_HEAD + 1, col, clean_text(c.workload.name), f("header"))
    # the option in the calculation sheets' words (review round 21: its code,
    # "h200-sxm/fp8/kv-fp8/tp1/dell-xe9680", headed the column)
    ws.write_string(BLOCK_ROW_HEAD + 2, col, option_words(book, c.option), f("header"))
    changed = _number(env[sc.input])
    ws.write_formula(BLOCK_ROW_VALUE, col, _formula(book, sc.value, c, x, None),
                     f("calc", number_format(_INPUT_UNITS.get(sc.input, ""), [changed] if
                                             isinstance(changed, float) else [], book.cur)),
                     changed)
    o, k = c.letter, str(c.k)
    write, normal, cur = ws.write_formula, book.normal, book.cur
    for calc, row, unit, flag, text, norm in _templates(book, sc, done):
        value = _number(env[calc.name])
        fmt = number_format(unit, [value] if isinstance(value, float) else [], cur,
                            zero_text=unpriced_text(calc.name), name=calc.name)
        write(row, col, text.replace("\x02", x).replace("\x00", o).replace("\x01", k),
              f("calc", fmt), cached(value, flag))
        normal[("Scenarios", f"{x}{row + 1}")] = (
            norm.replace("\x02", x).replace("\x00", o).replace("\x01", k))


def _number(v: Value) -> float | str:
    return v if isinstance(v, str) else float(v)
