"""The fidelity check's row results and their summary statistics (median and p90 of the
absolute error, median of the signed one, per metric and regime), apart from the reader and
the predictions in :mod:`.fidelity`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..inputs.benchdata import BenchPoint


@dataclass(frozen=True)
class RowResult:
    point: BenchPoint
    engine: str
    predicted: float
    batch: float
    error: float  # predicted / measured - 1


@dataclass(frozen=True)
class SummaryRow:
    metric: str
    regime: str
    count: int
    median_abs_error: float
    p90_abs_error: float
    median_signed_error: float


def relative_error(predicted: float, measured: float) -> float:
    return predicted / measured - 1


def quantile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarise(results: Iterable[RowResult]) -> list[SummaryRow]:
    groups: dict[tuple[str, str], list[float]] = {}
    for r in results:  # disaggregated rows apart: a different serving model
        regime = "disaggregated" if r.point.disaggregated else r.point.regime
        groups.setdefault((r.point.metric, regime), []).append(r.error)
    order = {name: i for i, name in enumerate(("offline", "concurrency", "rate", "batch1",
                                               "disaggregated"))}
    rows = []
    for (metric, regime), errs in sorted(groups.items(), key=lambda kv: (order[kv[0][1]], kv[0][0])):
        absolute = [abs(e) for e in errs]
        rows.append(SummaryRow(metric, regime, len(errs), quantile(absolute, 0.5),
                               quantile(absolute, 0.9), quantile(errs, 0.5)))
    return rows
