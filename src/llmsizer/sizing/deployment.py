"""Buy, rent or hosted API, decided in the open (issue 22, item 2).

The plan's totals already price three ways of running the same service for a year: buying
the servers (on-premises), renting the same GPUs at the account's cloud tier, and paying a
hosted API per token. This module only compares those figures (computed in
model/calculations) with the account's ``policy.deployment`` and keeps the customer's
``account.reasons``, so that the proposal can say when the way recommended is not the
cheapest, and why the customer chose it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..inputs.schema import Requirements, default_tariff
from .results import Deployment, Plan, RetrievalWorkloadResult, Totals, WorkloadResult

# The ways, in the order a tie is broken: buying first (the default), then renting.
WAYS = ("on_prem", "cloud", "api")
# The ways a plan is searched for (sizing/engine.py): a hosted API buys no GPUs.
PLANNED_WAYS = WAYS[:2]


def purchase_unpriced(workloads: Sequence[WorkloadResult],
                      retrieval: Sequence[RetrievalWorkloadResult], plan: Plan) -> list[str]:
    """GPU ids of the plan without a purchase price, in plan order: its capital and
    on-premises figures leave them out (the PDF's cover and cards, the workbook's Summary)."""
    groups = {g.workload for g in plan.retrieval_groups}
    chosen = [w.best for w in workloads] + [w.best for w in retrieval if w.name in groups]
    return list(dict.fromkeys(o.gpu for o in chosen if o is not None and not o.priced))


def decide(req: Requirements, totals: Totals, unpriced_gpus: Sequence[str] = ()) -> Deployment:
    """The way to recommend and the ways that cost less than it. A way without a price
    (no cloud offer, a model without a hosted API) is left out of the comparison; so is, for
    "cheapest", a way whose figure is incomplete: on-premises when ``unpriced_gpus`` (GPUs
    without a purchase price) is not empty, its figure leaving their cost out (a GB200 plan
    read "on-premises, the cheapest" at a figure without its GPUs)."""
    costs = {"on_prem": totals.annual_cost_onprem, "cloud": totals.annual_cost_cloud,
             "api": totals.annual_cost_api}
    priced = {way: float(c) for way, c in costs.items() if c is not None and c > 0}
    incomplete = ["on_prem"] if unpriced_gpus and "on_prem" in priced else []
    # an incomplete figure is a floor: it can lose a comparison but never win one
    ranked = sorted((w for w in priced if w not in incomplete),
                    key=lambda way: (priced[way], WAYS.index(way)))
    cheapest = ranked[0] if ranked else "on_prem"
    asked = req.policy.deployment
    recommended = cheapest if asked == "cheapest" else asked
    cheaper = [way for way in ranked
               if recommended in priced and priced[way] < priced[recommended]]
    return Deployment(asked=asked, stated="deployment" in req.policy.model_fields_set,
                      recommended=recommended, cheapest=cheapest,
                      annual_cost=priced, cheaper=cheaper, incomplete=incomplete,
                      reasons=list(req.account.reasons))


# The policy and running-cost figures the proposal's register attributes to their source
# (documents/proposal/assumptions.py): one the file leaves out is llmsizer's default, not
# "the account's requirements" (review round 20).
DEFAULTED = {"policy": ("deployment", "gpu_memory_utilization"),
             "costs": ("electricity_per_kwh", "pue", "amortization_years", "support_rate",
                       "average_load", "hours_per_year")}


def embedded_requirements(req: Requirements) -> dict[str, Any]:
    """The requirements as the workbook embeds them: every default filled in, except those of
    :data:`DEFAULTED` the file did not state, so a re-read workbook (which fills the same
    defaults) still says they were the defaults (``Deployment.stated``, the register's
    sources), not that the customer asked for them. A tariff the schema converted from the
    USD default for another currency (``default_tariff``) counts as not stated."""
    data = req.model_dump(mode="json")
    tariff = default_tariff(req.account.currency, req.costs.usd_exchange_rate)
    for section, keys in DEFAULTED.items():
        stated = getattr(req, section).model_fields_set
        for key in keys:
            if key not in stated or (key == "electricity_per_kwh" and tariff is not None
                                     and req.costs.electricity_per_kwh == tariff):
                data[section].pop(key, None)
    return data
