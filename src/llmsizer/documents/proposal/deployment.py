"""Buy, rent or hosted API in the executive summary (templates/partials/deployment.html.j2):
the way recommended, in one sentence the ways that would cost less with both figures, and the
customer's reasons (``account.reasons``) or that none was given. The figures are the plan's
totals (sizing.deployment compares them); this module only words them."""

from __future__ import annotations

from typing import Any

from ...sizing.costs import tier_words
from ...sizing.results import Result
from .format import Formatter
from .summary import purchase_unpriced


def _same_gpus(result: Result) -> bool:
    """Whether renting takes as many GPUs as buying (the plan's totals): a rented plan of 11
    GPUs beside 16 bought read "renting the same GPUs" (session 23)."""
    t = result.totals
    return t.cloud_gpus_rented == t.gpus_purchased


def _ways(result: Result) -> dict[str, str]:
    """Each way in words, as the subject of a sentence: renting says what it rents where that
    is not the GPUs buying takes."""
    t = result.totals
    rented = ("the same GPUs" if _same_gpus(result) else
              f"{t.cloud_gpus_rented:,} GPU{'' if t.cloud_gpus_rented == 1 else 's'}")
    return {"on_prem": "buying and running the servers (on-premises)",
            "cloud": f"renting {rented} in the cloud ({tier_words(result.cloud_tier)})",
            "api": "a hosted API (paid per token)"}


SHORT = {"on_prem": "on-premises", "cloud": "the cloud", "api": "the hosted API"}


def deployment_context(result: Result, fmt: Formatter) -> dict[str, Any]:
    """``deployment``: ``recommended`` (on_prem | cloud | api), ``lead`` (the way recommended,
    with its cost a year), ``cheaper`` (one sentence, or ''), ``reasons_intro`` and
    ``reasons`` (the customer's, as given; escaped by the template)."""
    d = result.deployment
    ways = _ways(result)
    cost = d.annual_cost
    if not cost:
        return {"deployment": None}
    rec = d.recommended
    # a way the requirements name, or the default when they say nothing (it read "the way the
    # requirements ask for" for an account that never asked)
    why = ("the way the requirements ask for" if d.stated
           else "the default when the requirements do not say how to run it")
    # a GPU without a purchase price leaves the on-premises figure short of its GPUs (the
    # cover says so): each mention of that figure says it too (Lucerne's GB200 read "at
    # USD 631 k a year" beside cards marked "GPUs not priced")
    unpriced = bool(purchase_unpriced(result))

    def bare(way: str) -> str:
        return " without the GPUs" if unpriced and way == "on_prem" else ""

    rec_cost = fmt.money(cost[rec]) if rec in cost else "no price known"
    # the lead's "a year", with the reason where the figure leaves out the GPUs
    year = "a year" + (bare(rec) and f"{bare(rec)}, which have no purchase price")
    if d.asked == "cheapest" and rec in d.incomplete:  # no way priced in full: none chosen
        lead = (f"Recommended way to run it: {ways[rec]}, at {rec_cost} {year}; no way is priced "
                "in full, so none is shown as the cheapest.")
    elif d.asked == "cheapest":
        ways_priced = [f"{SHORT[w]} {fmt.money(c)}" for w, c in cost.items()
                       if w != rec and w not in d.incomplete]
        if result.totals.cloud_unpriced:  # left out of the comparison: said so (section 6 why)
            ways_priced.append("the cloud: no price listed" if not result.totals.cloud_unheld
                               else "the cloud: no instance sold holds a replica")
        # a figure short of the GPUs is a floor: left out of the comparison, and said so
        ways_priced.extend(f"{SHORT[w]} left out: {fmt.money(cost[w])} a year{bare(w)}, which "
                           "have no purchase price" for w in d.incomplete)
        others = "; ".join(ways_priced)
        full = " in full" if d.incomplete else ""
        lead = (f"Recommended way to run it: {ways[rec]}, at {rec_cost} {year}, the cheapest of "
                f"the ways priced{full}, as the requirements ask"
                + (f" ({others})." if others else "."))
    elif rec in cost and d.cheaper:  # why not the cheaper way: named, or the default
        lead = f"Recommended way to run it: {ways[rec]}, {why}, at {rec_cost} {year}."
    elif rec in cost:
        lead = f"Recommended way to run it: {ways[rec]}, at {rec_cost} {year}."
    else:  # asked for a way without a price (a GPU with no cloud offer): nothing to compare
        # session 24: an offer too small for a replica has a price, but none for this plan
        none = ("the cloud offer sells only instances smaller than one replica"
                if rec == "cloud" and result.totals.cloud_unheld else "no price is listed for it")
        lead = (f"Recommended way to run it: {ways[rec]}, {why}; its cost is "
                f"not known: {none} (section 6).")
    cheaper = ""
    if d.cheaper:
        # rented, buying is the same plan's GPUs bought, and said so: like with like (review
        # round 19: "Buying and running the servers (on-premises) would cost EUR 172 k a
        # year, against EUR 225 k for the cloud" read as another plan, searched for buying)
        same = rec == "cloud" and "on_prem" in d.cheaper
        t = result.totals
        if same and _same_gpus(result):
            ways["on_prem"] = "buying the same GPUs and running the servers (on-premises)"
        elif same:  # renting and buying take different GPU counts: each says its own
            ways["on_prem"] = (f"buying the same plan's servers ({t.gpus_purchased:,} GPUs, "
                               "spares in whole servers) and running them (on-premises)")
        parts = [f"{ways[w]} would cost {fmt.money(cost[w])} a year{bare(w)}" for w in d.cheaper]
        against = (("renting them in the cloud" if _same_gpus(result) else
                    f"renting {t.cloud_gpus_rented:,} GPUs in the cloud")
                   + ": the same plan, priced both ways" if same
                   else f"{SHORT[rec]}{bare(rec)}")
        cheaper = ("; ".join(parts)[:1].upper() + "; ".join(parts)[1:]
                   + f", against {rec_cost} for {against}.")
    if d.reasons:
        intro = (f"The customer's reasons for {SHORT[rec]}:" if d.cheaper and d.stated
                 else "What the customer asked us to weigh:")
    elif not d.cheaper:
        intro = ""
    elif d.stated:
        intro = f"The requirements give no reason for choosing {SHORT[rec]} over the cheaper way."
    else:
        intro = (f"The requirements neither ask for {SHORT[rec]} nor give a reason for it: the "
                 "cheaper way above is worth weighing.")
    derived = {p.item.partition(":")[2] for p in result.prices
               if p.item.startswith("cloud:") and p.derived}
    if ("cloud" in (rec, *d.cheaper)
            and any(w.best is not None and w.best.gpu in derived for w in result.workloads)):
        note = (" The cloud figure rests on a price derived for that tier from another tier's "
                "dated price (section 6, prices used).")
        # said after the sentence that names the cloud figure: the lead names it only when
        # the cloud is the way recommended (it read "The cloud figure ..." before any was given)
        if rec == "cloud" or not cheaper:
            lead += note
        else:
            cheaper += note
    return {"deployment": {"recommended": rec, "asked": d.asked, "lead": lead,
                           "cheaper": cheaper, "reasons_intro": intro,
                           "reasons": list(d.reasons)}}
