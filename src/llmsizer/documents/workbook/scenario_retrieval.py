"""The embed and rerank servers of one scenario on the Scenarios sheet. A scenario that can
move them (``sizing.retrieval.scenario_changes_retrieval``: it changes a retrieval input, the
peak request rate or the headroom, or an account input their costs read, the GPU price, the
cloud tier or the average load, or a server uses a language-model node group's idle GPUs)
gets one column per retrieval workload after its node groups, holding the Retrieval sheet's
formulas with that input replaced by the scenario's value (itself a formula over the
Retrieval sheet's or the Inputs sheet's cell) and the idle GPUs taken from the scenario's
node-group columns; its node counts and costs are what the scenario row sums. The other
scenarios sum the Retrieval sheet's cells, as proposed (``sizing.retrieval.scenario_retrieval``).
"""

from __future__ import annotations

from typing import Any

from ...model.calculations import GROUP_COST_CALCULATIONS, GROUP_COUNTS, SCENARIOS, Scenario
from ...model.calculations.retrieval import RETRIEVAL_CALCULATIONS, RETRIEVAL_RENT_CALCULATIONS
from ...model.expr import Lookup, Value, evaluate, references, render
from ...sizing.plan import Evaluated
from ...sizing.retrieval import (
    CATALOG_ROWS,
    scenario_changes_retrieval,
    scenario_idle,
    scenario_retrieval,
)
from .book import Book
from .formats import clean_text, number_format, unit_text
from .layout import input_name, letter
from .retrieval_sheet import _CATALOG as SHEET_CATALOG
from .retrieval_sheet import _ROWS as SHEET_ROWS
from .retrieval_sheet import (
    COUNT_ROWS,
    TOTAL_ROWS,
    catalog_lookup,
    retrieval_cell,
    retrieval_total_refs,
    zero_text,
)
from .scenario_plan import PlanRows

__all__ = ["label_rows", "retrieval_rows", "write_retrieval"]

_FREE = "llm_free_gpus"
_FREE_CLOUD = "llm_idle_cloud_gpus"
_SLOTS = "llm_free_slots"
_NODES = "llm_host_nodes"
# the account totals the block adds to, and the GPUs each server rents itself (the cloud
# total's "every part priced" test reads them)
_SUMS = "cloud_gpus"


def retrieval_rows(rows: PlanRows) -> dict[str, int]:
    """The block's rows for a retrieval column (0-based): the idle GPUs it may use (bought,
    and rented in the cloud) and the empty GPU slots, then the Retrieval calculations, after
    the node groups' rows; its TCO lines use the node groups' own rows (the same
    calculations)."""
    row = max(rows.group.values()) + 2
    out = {_FREE: row, _FREE_CLOUD: row + 1, _SLOTS: row + 2, _NODES: row + 3}
    for i, c in enumerate(RETRIEVAL_CALCULATIONS, start=4):
        out[c.name] = row + i
    # the catalog values a scenario's input reaches (the GPU price, the cloud tier's price)
    for i, name in enumerate(_REACHED, start=len(out) + 1):
        out[name] = row + i
    # the rented view (after its TCO lines): what the scenario row's cloud total adds
    for i, c in enumerate(RETRIEVAL_RENT_CALCULATIONS, start=len(out) + 1):
        out[c.name] = row + i
    return out


def label_rows(book: Book, ws: Any, col: int, rows: PlanRows) -> None:
    """The labels of the retrieval rows, in the block's label column ``col``."""
    f = book.f
    at = retrieval_rows(rows)
    ws.write_string(at[_FREE], col, "Retrieval: idle GPUs of the nodes it may share (GPUs)",
                    f("label"))
    ws.write_string(at[_FREE_CLOUD], col,
                    "Retrieval: idle rented cloud GPUs of the nodes it may share (GPUs)",
                    f("label"))
    ws.write_string(at[_SLOTS], col,
                    "Retrieval: empty GPU slots of the nodes it may share (GPUs)", f("label"))
    ws.write_string(at[_NODES], col, "Retrieval: nodes of the group it may share (nodes)",
                    f("label"))
    for c in RETRIEVAL_CALCULATIONS:
        ws.write_string(at[c.name], col, f"Retrieval: {c.label} ({unit_text(c.unit, book.cur)})",
                        f("label"))
    for name in _REACHED:
        ws.write_string(at[name], col, f"Retrieval: {_LABELS[name]} "
                        f"({unit_text(_UNITS[name], book.cur)})", f("label"))
    for c in RETRIEVAL_RENT_CALCULATIONS:
        ws.write_string(at[c.name], col, f"Retrieval: {c.label} ({unit_text(c.unit, book.cur)})",
                        f("label"))


def write_retrieval(book: Book, ws: Any, col: int, rows: PlanRows, sc: Scenario, e: Evaluated,
                    plan_sums: dict[str, list[str]]) -> tuple[int, dict[str, list[str]]]:
    """The retrieval columns of scenario ``sc`` from column ``col`` on (none when it keeps
    the servers as proposed). Returns the next free column and, per account total, the
    cells to add to the plan's (``plan_sums``: the node-group cells of the scenario)."""
    r = book.r
    if not r.plan.retrieval_groups:
        return col, {k: [] for k in (*plan_sums, _SUMS)}
    if not scenario_changes_retrieval(sc, r.retrieval, r.account_inputs):
        return col, {k: retrieval_total_refs(r, k) for k in (*plan_sums, _SUMS)}
    f = book.f
    at = retrieval_rows(rows)
    groups = [ng.id for ng in r.plan.node_groups]
    runs = scenario_retrieval(sc, r.retrieval, scenario_idle(r.plan.node_groups, e),
                              r.account_inputs, r.tables)
    # the input the value cell holds: the retrieval input the row changes, else the account
    # input (GPU price, cloud tier, average load), else none (the idle GPUs alone move)
    changed, value = ((sc.retrieval_input, sc.retrieval_value)
                      if sc.retrieval_input is not None and sc.retrieval_value is not None
                      else (sc.input, sc.value) if sc.input in r.account_inputs
                      else (None, None))
    # the catalog values that input reaches (their other lookups as the Retrieval sheet has
    # them: the engine's, for the option)
    looked_up = _reaching({changed}) if changed is not None else set()
    sums: dict[str, list[str]] = {k: [] for k in (*plan_sums, _SUMS)}
    # node-group id -> the cells of earlier sharers: (idle GPUs taken, empty slots filled)
    taken: dict[str, list[tuple[str, str]]] = {}
    # node-group id -> the idle rented GPUs the latest earlier sharer left there (session 25)
    left: dict[str, str] = {}
    rented = r.account_inputs.get("plan_rented", 0.0) > 0  # a rented plan offers no slot
    hosts: dict[str, str] = {}  # retrieval group id -> its column (review round 21)
    for j, ((group, values), w) in enumerate(zip(runs, [w for w in r.retrieval if w.best],
                                                strict=True)):
        assert w.best is not None
        x = letter(col)
        hosts[group.id] = x
        # the host offered in the scenario (sizing.retrieval.scenario_host): the proposal's,
        # or an earlier retrieval group's own nodes
        shared = str(values["offered_host"]) or None
        # the option's GPU as the Catalog sheet lists it (the key of a lookup)
        gpu = next((c for tid, c in book.lay.catalog_ids.get("gpus", [])
                    if tid == w.best.gpu), None)

        def base(n: str, j: int = j) -> str:
            """An input as the Retrieval sheet (or the Inputs sheet) has it."""
            if n in SHEET_ROWS:
                return retrieval_cell(j, n)
            found = input_name(n)
            if found is None:
                raise KeyError(f"the Scenarios sheet cannot place {n!r}")
            return found

        def name(n: str, x: str = x, shared: str | None = shared,
                 gpu: str | None = gpu) -> str:
            n = COUNT_ROWS.get(n, n) if n in GROUP_COUNTS else n
            if n == "gpu" and gpu is not None:
                return gpu
            if n == changed:
                return f"{x}{rows.value + 1}"
            if n in at and (n not in _REACHED or n in looked_up) and (
                    n not in (_FREE, _FREE_CLOUD, _SLOTS, _NODES) or shared is not None) and (
                    n != _SLOTS or not rented):
                return f"{x}{at[n] + 1}"
            if n in rows.group and n in _COST:
                return f"{x}{rows.group[n] + 1}"
            return base(n)

        def table(lk: Lookup, key: str) -> str:
            """A catalog lookup on the option's GPU (``key``: the Catalog sheet's id cell)."""
            return catalog_lookup(book, lk, key)

        ws.write_string(rows.value - 3, col, f"{sc.label} {sc.change}", f("header"))
        ws.write_string(rows.value - 2, col, clean_text(w.name), f("header"))
        ws.write_string(rows.value - 1, col, "Retrieval servers", f("header"))
        if changed is not None and value is not None:
            # a retrieval input as the engine evaluated it, else the account input's value
            scen = values[changed] if changed in values else evaluate(value, r.account_inputs)
            _cell(book, ws, rows.value, col, "=" + render(value, base), scen, "")
        if shared is not None:
            if shared in hosts:  # an earlier retrieval group's own nodes (review round 21)
                hx = f"{hosts[shared]}1"  # a cell of its column, moved to a row below
                idle = _in_row(hx, at["retrieval_idle_gpus"])
                slots = _in_row(hx, at["retrieval_free_slots"])
                # its rented cloud GPUs (its column's TCO line) beyond those in use
                beyond = (f"{_in_row(hx, rows.group['cloud_gpus_rented'])}"
                          f"-{_in_row(hx, at['retrieval_gpus_used'])}")
                nodes = _in_row(hx, at["retrieval_nodes"])
            else:
                k = groups.index(shared)
                used = plan_sums["gpus_used"][k]
                idle = f"{plan_sums['gpus_purchased'][k]}-{used}"
                # its nodes' slots (the option's platform is the group's) beyond GPUs bought
                slots = (f"{plan_sums['nodes'][k]}*{base('gpus_per_node')}"
                         f"-{plan_sums['gpus_purchased'][k]}")
                # the group's rented cloud GPUs (its column's TCO line) beyond those in use
                beyond = f"{_in_row(used, rows.group['cloud_gpus_rented'])}-{used}"
                nodes = plan_sums["nodes"][k]
            earlier = taken.get(shared, [])
            minus = "".join(f"-{c}" for c, _ in earlier)
            _cell(book, ws, at[_FREE], col, f"={idle}{minus}", values[_FREE], "GPUs")
            # the rented instances' idle GPUs, or those the previous sharer left there (the
            # instances it added carry this one's replicas: session 25)
            _cell(book, ws, at[_FREE_CLOUD], col,
                  f"={left[shared]}" if shared in left else f"=MAX(0,{beyond})",
                  values[_FREE_CLOUD], "GPUs")
            if not rented:
                _cell(book, ws, at[_SLOTS], col,
                      f"={slots}{''.join(f'-{d}' for _, d in earlier)}", values[_SLOTS],
                      "GPUs")
            _cell(book, ws, at[_NODES], col, f"={nodes}", values[_NODES], "nodes")
        for c in RETRIEVAL_CALCULATIONS:
            _cell(book, ws, at[c.name], col, "=" + render(c.expr, name), values[c.name], c.unit,
                  zero_text(c.name, values))
        for n, expr in CATALOG_ROWS:
            if n in looked_up:
                _cell(book, ws, at[n], col, "=" + render(expr, name, table), values[n],
                      _UNITS[n])
        for c in GROUP_COST_CALCULATIONS:
            _cell(book, ws, rows.group[c.name], col, "=" + render(c.expr, name), values[c.name],
                  c.unit, zero_text(c.name, values))
        for c in RETRIEVAL_RENT_CALCULATIONS:
            _cell(book, ws, at[c.name], col, "=" + render(c.expr, name), values[c.name], c.unit,
                  zero_text(c.name, values))
        if shared is not None:  # the replicas it puts on them, when it does (the flag)
            idle_row, slot_row = at["retrieval_gpus_on_llm_nodes"], at["retrieval_slots_filled"]
            taken.setdefault(shared, []).append((f"{x}{idle_row + 1}", f"{x}{slot_row + 1}"))
            left[shared] = f"{x}{at['retrieval_idle_cloud_left'] + 1}"
        for key in sums:
            sums[key].append(name(TOTAL_ROWS[key]))
        col += 1
    return col, sums


_LABELS = {n: label for n, label, _ in SHEET_CATALOG}
_UNITS = {n: unit for n, _, unit in SHEET_CATALOG}
def _reaching(inputs: set[str]) -> set[str]:
    """The catalog values that read ``inputs``, directly or through another of them (the
    offer sold by the GPU reads the tier's instance size, which the cloud tier picks);
    CATALOG_ROWS come in the list's order, each after the values it reads."""
    reached: set[str] = set()
    for n, expr in CATALOG_ROWS:
        if references(expr) & (inputs | reached):
            reached.add(n)
    return reached


# the catalog values some scenario's input reaches (each a row of the block)
_REACHED = tuple(n for n, _ in CATALOG_ROWS
                 if n in _reaching({sc.input for sc in SCENARIOS}))
_COST = frozenset(c.name for c in GROUP_COST_CALCULATIONS)


def _in_row(cell: str, row: int) -> str:
    """``cell``'s column (an A1 address) in 0-based ``row``: a cell address, not a figure."""
    return f"{cell.rstrip('0123456789')}{row + 1}"


def _cell(book: Book, ws: Any, row: int, col: int, formula: str, value: Value,
          unit: str, zero_text: str = "") -> None:
    cached: float | str = value if isinstance(value, str) else float(value)
    fmt = number_format(unit, [cached] if isinstance(cached, float) else [0.0], book.cur,
                        zero_text=zero_text)
    ws.write_formula(row, col, formula, book.f("calc", fmt), cached)
