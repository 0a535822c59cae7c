"""The sensitivity section (templates/partials/sensitivity.html.j2): the results'
scenarios against the proposal, as a table, and a tornado chart of the annual on-premises
cost (the cloud tiers move only the cloud figure: table only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...model.catalog import load_catalog
from ...sizing.results import Result
from ...sizing.sensitivity import cloud_tiers_fixed
from .format import Formatter, svg_image
from .views import WorkloadView

# Said under the table (and on the workbook's Scenarios sheet) where the cloud-tier rows are
# left out: each would repeat the account's own cloud price (sensitivity.cloud_tiers_fixed).
TIERS_FIXED = "Cloud price tiers are not varied: this account states its own cloud prices."


def _plan_gpus(result: Result) -> list[str]:
    return list(dict.fromkeys([w.best.gpu for w in result.workloads if w.best is not None]
                              + [w.best.gpu for w in result.retrieval if w.best is not None]))


def cloud_unpriced_gpus(result: Result) -> list[str]:
    """The GPUs of the plan without a cloud price in the account's tier (none derived)."""
    return [g for g in _plan_gpus(result)
            if not float(result.tables["gpus"][g]["cloud_gpu_hour"]) > 0]


def cloud_total_words(result: Result) -> bool:
    """Whether an account's cloud total at 0 reads "not comparable" (some GPUs of the plan
    priced, some not) rather than "no price listed" (none priced: Harrow & Finch's GB300 plan
    read "not comparable" beside columns that all said "no price listed")."""
    return len(cloud_unpriced_gpus(result)) < len(_plan_gpus(result))


def tiers_fixed_words(result: Result) -> str:
    """The line under the what-if table where its cloud-tier rows are left out
    (sensitivity.cloud_tiers_fixed): the account states its own cloud prices (TIERS_FIXED), or
    a GPU of the plan has no cloud price in any tier, which the same test finds (review
    round 20: Harrow & Finch's GB300 plan, with no cloud price anywhere, was told "this
    account states its own cloud prices"); "" where the rows are there."""
    if not cloud_tiers_fixed(result.workloads, result.tables, result.retrieval):
        return ""
    ids = _plan_gpus(result)
    unpriced = cloud_unpriced_gpus(result)
    if not unpriced:
        return TIERS_FIXED
    gpus = load_catalog().gpus
    names = " or ".join(gpus[g].name if g in gpus else g for g in unpriced)
    if len(unpriced) == len(ids):
        return f"Cloud price tiers are not varied: no cloud price is listed for {names} in any tier."
    return ("Cloud price tiers are not varied: this account states its own cloud prices, and "
            f"none is listed for {names} in any tier.")


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
                "tiers_fixed": "", "tornado_cloud": False}
    # the embed and rerank servers are in every row: resized by the rate and headroom rows,
    # priced by the GPU-price, cloud and load rows (sizing.sensitivity.sensitivity)
    kept = bool(result.plan.retrieval_groups)
    fixed = tiers_fixed_words(result)
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
    # renting recommended: the chart is of the cloud cost, what the recommendation pays
    # (review round 21: a rented plan's only chart was of the on-premises cost), where every
    # row has a cloud price
    cloud = (result.deployment is not None and result.deployment.recommended == "cloud"
             and base.cloud is not None
             and all(r.cloud is not None for g in groups.values() for r in g))
    if not chart:  # the detailed proposal's only
        return {"scenarios": rows, "tornado_chart": None, "base": base, "retrieval_kept": kept,
                "tiers_fixed": fixed, "tornado_cloud": False}

    def drawn_figure(r: ScenarioRow) -> float:  # the figure the chart draws
        return float(r.cloud or 0.0) if cloud else r.onprem

    mid = drawn_figure(base)
    bars = [charts.TornadoRow(label, drawn_figure(g[0]), drawn_figure(g[-1]), g[0].change, g[-1].change)
            for label, g in groups.items()]
    bars.sort(key=lambda b: -max(abs(b.high - mid), abs(b.low - mid)))
    what = "Cloud cost per year" if cloud else "On-premises cost per year"
    drawn = svg_image(charts.tornado_chart(bars, mid, fmt.money, fmt.money_short, what),
                      f"Annual {what.removesuffix(' per year').lower()} under each scenario")
    return {"scenarios": rows, "tornado_chart": drawn, "base": base, "retrieval_kept": kept,
            "tiers_fixed": fixed, "tornado_cloud": cloud}
