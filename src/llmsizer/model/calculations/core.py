"""What the calculation list is made of: an ``Input`` (a value the formulas read) and a
``Calculation`` (a named expression, shown on one workbook sheet), with the shorthand the
topic modules write their formulas in (``_c``, ``r``, ``tp``, ``_gpus``: this package's own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..expr import Expr, ref

Scope = Literal["account", "workload", "option"]
Sheet = Literal["KV", "Throughput", "Nodes", "TCO", "Retrieval"]


@dataclass(frozen=True)
class Input:
    name: str
    label: str
    unit: str
    scope: Scope
    note: str
    kind: Literal["number", "text", "flag"] = "number"
    low: float | None = None  # validation bounds for the workbook
    high: float | None = None
    integer: bool = False


@dataclass(frozen=True)
class Calculation:
    name: str
    label: str
    unit: str
    sheet: Sheet
    expr: Expr
    note: str


def _c(name: str, label: str, unit: str, sheet: Sheet, expr: Expr, note: str) -> Calculation:
    return Calculation(name, label, unit, sheet, expr, note)


r = ref
tp = r("tp")
_gpus = r("gpus_per_replica")
