"""The batch limits evaluated twice, so a mixture of experts reads the experts of the batch it
serves with no circular reference (issue 21 item 5; docs/queueing.md).

The share of experts a step reads grows with the batch, and the first-token batch limit reads
the step time: the batch served cannot be known before the share it reads. decode.py takes
the share first at a batch no smaller than any the load can cause (``batch_experts_bound``:
memory, the engine cap, the tokens/s batch and the concurrency an arrival rate causes) and
solves every batch limit at that step: the first estimate of the batch per replica. The step
rows and the limits are then evaluated again with the experts read at that estimate
(``batch_experts_read``), and the batch per replica is the smaller of the two estimates: the
batch served is never above the one whose experts the step reads (conservative), and where
the second limits hold the first estimate, as they do when a smaller share only shortens the
step, the share is exactly the served batch's.

:func:`first_pass` writes the first evaluation from the rows themselves: every row that reads
the share, directly or through another row, is copied under ``name + FIRST`` reading the
bound and the other copies, so the rows are written once and the two evaluations cannot
drift apart.
"""

from __future__ import annotations

from dataclasses import replace

from ..expr import IF, MAX, MIN, Bin, Call, Expr, Lookup, Ref, lt, references
from .core import Calculation, _c, r

FIRST = "_first"
# the batch per replica's limits (decode.py), each solved with the experts read at the
# first estimate
LIMITS = ("max_sequences_by_memory", "batch_by_tpot", "batch_by_ttft", "batch_by_itl",
          "max_batch_per_replica")


def renamed(expr: Expr, names: dict[str, str]) -> Expr:
    """``expr`` with every reference to a key of ``names`` reading its value instead."""
    if isinstance(expr, Ref):
        return Ref(names.get(expr.name, expr.name))
    if isinstance(expr, Bin):
        return Bin(expr.op, renamed(expr.left, names), renamed(expr.right, names))
    if isinstance(expr, Call):
        return Call(expr.fn, tuple(renamed(a, names) for a in expr.args))
    if isinstance(expr, Lookup):
        return Lookup(expr.table, Ref(names.get(expr.key.name, expr.key.name)), expr.column)
    return expr


def first_pass(rows: tuple[Calculation, ...], seed: str, seed_first: str,
               suffix: str = FIRST, estimate: str = "first",
               at: str = "the largest batch this load may cause",
               keep: tuple[str, ...] = ()) -> tuple[tuple[Calculation, ...],
                                                     tuple[Calculation, ...]]:
    """``rows`` with each one that reads ``seed`` (directly or through an earlier row)
    replaced by its copy ``name + suffix`` (labelled "..., ``estimate`` estimate"), which
    reads ``seed_first`` and the other copies instead, copies that neither the last row's
    copy nor those of ``keep`` read left out; and the rows so copied, in their order (they
    follow the copies in the list: every row they read is then there)."""
    names = {seed: seed_first}
    copies: dict[str, Calculation] = {}
    copied: list[Calculation] = []
    for c in rows:
        if references(c.expr) & names.keys():
            names[c.name] = c.name + suffix
            copies[c.name] = replace(
                c, name=c.name + suffix, label=f"{c.label}, {estimate} estimate",
                expr=renamed(c.expr, names),
                note=f"As '{c.label}' (below), with the experts read at {at}: the {estimate} "
                     "estimate of the batch per replica.")
            copied.append(c)
    needed = {copied[-1].name + suffix} | {n + suffix for n in keep if n in copies}
    for c in reversed(copies.values()):
        if c.name in needed:
            needed |= references(c.expr)
    out = [copies.get(c.name, c) for c in rows
           if c.name not in copies or copies[c.name].name in needed]
    return tuple(out), tuple(copied)


def served_batch_rows(batch: Calculation) -> tuple[Calculation, Calculation]:
    """``batch_by_first_estimate``'s row, and ``batch`` (the batch per replica, from the
    final solve's limits) at most it."""
    limits = [r(n) for n in LIMITS]
    estimate = MAX(1, r("batch_experts_read"), r("batch_per_replica" + FIRST))
    by_first = _c(
        "batch_by_first_estimate", "Largest batch the estimate allows", "sequences",
        "Throughput", IF(lt(estimate, MIN(*limits)), estimate, r("max_batch_per_replica")),
        "The estimate of the batch (the batch the experts are read at, or the first estimate "
        "where it is larger; at least 1) where it is below every limit solved with the "
        "experts read at it (those limits hold only up to the batch whose experts the step "
        "reads), else the engine cap (no limit of its own). A pool needs its sequences / "
        "this batch in replicas, as for each limit.")
    return by_first, replace(
        batch, expr=MAX(0, MIN(*limits, r(by_first.name))),
        note="MIN(memory, tokens/s SLO, TTFT SLO, inter-token latency percentile SLO, engine "
             "cap, the estimate where it is below them all): the batch never touches more "
             "experts than its step reads.")
