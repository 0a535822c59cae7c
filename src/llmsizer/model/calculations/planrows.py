"""The rows a plan stage is made of: an aggregate over a pool's members (or a group's pools)
and a calculation on a pool's or group's own figures, and the folds that nest SUM, MIN and MAX
within the function table's limit (the plan's stages are in plan.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..expr import FUNCTIONS, MAX, MIN, SUM, Expr, ref


# Names a plan stage reads beyond its own: the member's option values (the calculation list),
# the account inputs, and option constants shared by every member of a pool (same model, GPU,
# precisions and TP): kv_budget_gb, max_batch_per_replica, replicas_per_node, tp, and by
# every pool of a group (same GPU and platform): gpus_per_node, platform_sold_full.
@dataclass(frozen=True)
class Aggregate:
    """``fn`` (SUM, MIN or MAX) over the rows of a pool's members (or a group's pools) of
    ``member``, an expression evaluated on each row."""

    name: str
    label: str
    unit: str
    fn: Literal["SUM", "MIN", "MAX"]
    member: Expr
    note: str


@dataclass(frozen=True)
class PlanCalculation:
    name: str
    label: str
    unit: str
    expr: Expr
    note: str


_FNS = {"SUM": SUM, "MIN": MIN, "MAX": MAX}


def aggregate_expr(agg: Aggregate, row_names: list[str]) -> Expr:
    """The aggregate over rows whose values are held under ``row_names`` (one per row)."""
    return fold(agg.fn, [ref(n) for n in row_names])


def fold(fn: Literal["SUM", "MIN", "MAX"], items: list[Expr]) -> Expr:
    """``fn`` over any number of items (nested by 30: the function table's limit)."""
    while len(items) > 30:
        items = [_FNS[fn](*items[i:i + 30]) for i in range(0, len(items), 30)]
    return _FNS[fn](*items) if items else _FNS[fn](0)


def fold_values(fn: Literal["SUM", "MIN", "MAX"], values: list[float]) -> float:
    """What ``evaluate(fold(fn, [lift(v) ...]), {})`` gives, without building the tree: the
    same nesting by 30 and the function table's own Python meaning, so the same float.
    The plan search folds several hundred thousand times on a 50-workload account."""
    python = FUNCTIONS[fn].python
    assert python is not None
    while len(values) > 30:
        values = [float(python(*values[i:i + 30])) for i in range(0, len(values), 30)]
    return float(python(*values)) if values else float(python(0.0))
