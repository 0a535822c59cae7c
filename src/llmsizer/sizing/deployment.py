"""Buy, rent or hosted API, decided in the open (issue 22, item 2).

The plan's totals already price three ways of running the same service for a year: buying
the servers (on-premises), renting the same GPUs at the account's cloud tier, and paying a
hosted API per token. This module only compares those figures (computed in
model/calculations) with the account's ``policy.deployment`` and keeps the customer's
``account.reasons``, so that the proposal can say when the way recommended is not the
cheapest, and why the customer chose it."""

from __future__ import annotations

from ..inputs.schema import Requirements
from .results import Deployment, Totals

# The ways, in the order a tie is broken: buying first (the default), then renting.
WAYS = ("on_prem", "cloud", "api")


def decide(req: Requirements, totals: Totals) -> Deployment:
    """The way to recommend and the ways that cost less than it. A way without a price
    (no cloud offer, a model without a hosted API) is left out of the comparison."""
    costs = {"on_prem": totals.annual_cost_onprem, "cloud": totals.annual_cost_cloud,
             "api": totals.annual_cost_api}
    priced = {way: float(c) for way, c in costs.items() if c is not None and c > 0}
    ranked = sorted(priced, key=lambda way: (priced[way], WAYS.index(way)))
    cheapest = ranked[0] if ranked else "on_prem"
    asked = req.policy.deployment
    recommended = cheapest if asked == "cheapest" else asked
    cheaper = [way for way in ranked
               if recommended in priced and priced[way] < priced[recommended]]
    return Deployment(asked=asked, stated="deployment" in req.policy.model_fields_set,
                      recommended=recommended, cheapest=cheapest,
                      annual_cost=priced, cheaper=cheaper, reasons=list(req.account.reasons))
