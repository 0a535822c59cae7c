"""The sensitivity section (templates/partials/sensitivity.html.j2): the results'
scenarios against the proposal, as a table, and a tornado chart of the annual on-premises
cost (the cloud tiers move only the cloud figure: table only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...sizing.results import Result
from ...sizing.sensitivity import cloud_tiers_fixed
from .format import Formatter, svg_image
from .views import WorkloadView

# Said under the table (and on the workbook's Scenarios sheet) where the cloud-tier rows are
# left out: each would repeat the account's own cloud price (sensitivity.cloud_tiers_fixed).
TIERS_FIXED = "Cloud price tiers are not varied: this account states its own cloud prices."


@dataclass(frozen=True)
class ScenarioRow:
    label: str
    change: str
    gpus: int
    nodes: int
    capex: float
    onprem: float
    cloud: float | None  # None: a GPU of the plan has no cloud price
    moved: bool  # differs from the proposal


def sensitivity_context(result: Result, views: Sequence[WorkloadView],
                        fmt: Formatter, chart: bool = True) -> dict[str, Any]:
    """The sensitivity section: the scenarios of the results and a tornado of the annual
    on-premises cost (the cloud tiers move only the cloud figure: table only)."""
    from .. import charts

    shown = [wv for wv in views if wv.best is not None]
    if not shown or not result.sensitivity:
        return {"scenarios": [], "tornado_chart": None, "base": None, "retrieval_kept": False,
                "tiers_fixed": ""}
    # the embed and rerank servers are in every row: resized by the rate and headroom rows,
    # priced by the GPU-price, cloud and load rows (sizing.sensitivity.sensitivity)
    kept = bool(result.plan.retrieval_groups)
    fixed = TIERS_FIXED if cloud_tiers_fixed(result.workloads, result.tables,
                                             result.retrieval) else ""
    t = result.totals
    base = ScenarioRow("As proposed", "", t.gpus_purchased, t.nodes, t.capex,
                       t.annual_cost_onprem, t.annual_cost_cloud, False)
    rows = [ScenarioRow(s.label, s.change.replace("x", "×", 1) if s.change.startswith("x")
                        else s.change, s.gpus_purchased, s.nodes, s.capex,
                        s.annual_cost_onprem, s.annual_cost_cloud,
                        (s.gpus_purchased, s.nodes, s.capex, s.annual_cost_onprem,
                         s.annual_cost_cloud) != (base.gpus, base.nodes, base.capex,
                                                  base.onprem, base.cloud)) for s in
            result.sensitivity]
    groups: dict[str, list[ScenarioRow]] = {}
    for r in rows:
        if r.label != "Cloud price":
            groups.setdefault(r.label, []).append(r)
    # The lower change's bar and the higher change's (the scenarios list each estimate's
    # changes from lower to higher), each with its own label: picking them by cost labelled
    # both bars with the first row when the two cost the same.
    if not chart:  # the detailed proposal's only
        return {"scenarios": rows, "tornado_chart": None, "base": base, "retrieval_kept": kept,
                "tiers_fixed": fixed}
    bars = [charts.TornadoRow(label, g[0].onprem, g[-1].onprem, g[0].change, g[-1].change)
            for label, g in groups.items()]
    bars.sort(key=lambda b: -max(abs(b.high - base.onprem), abs(b.low - base.onprem)))
    drawn = svg_image(charts.tornado_chart(bars, base.onprem, fmt.money, fmt.money_short),
                      "Annual on-premises cost under each scenario")
    return {"scenarios": rows, "tornado_chart": drawn, "base": base, "retrieval_kept": kept,
            "tiers_fixed": fixed}
