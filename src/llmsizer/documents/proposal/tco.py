"""The costs section (templates/partials/tco.html.j2): the annual cost chart, the dated
prices behind the costs (stale ones flagged), and the cost per million tokens by average
load for each recommendation."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from ...model.catalog import Catalog
from ...sizing.costs import tier_words
from ...sizing.results import Result
from .format import (
    CONTROL_CHARS,
    Formatter,
    clip,
    cloud_no_price_words,
    cloud_unpriced_words,
    gpu_list,
    svg_image,
)
from .summary import purchase_unpriced
from .views import WorkloadView, as_number


@dataclass(frozen=True)
class CostColumn:
    """One column of the costs table: a workload's share of the plan (``view``), or an embed or
    rerank workload's servers (its retrieval group: nodes of its own, or what it adds on a
    language-model node group's idle GPUs). The columns add up to the account's totals."""

    name: str
    costs: Mapping[str, float | str]
    gpu: str
    priced: bool
    view: WorkloadView | None = None
    shares_with: str | None = None  # retrieval on a language-model node group's idle GPUs


def cost_columns(views: Sequence[WorkloadView], result: Result) -> list[CostColumn]:
    """The workloads with a recommendation, then the retrieval workloads in the plan."""
    cols = [CostColumn(wv.w.name, wv.costs, wv.best.option.gpu, wv.best.option.priced, wv)
            for wv in views if wv.best is not None]
    groups = {g.workload: g for g in result.plan.retrieval_groups}
    for rw in result.retrieval:
        best, g = rw.best, groups.get(rw.name)
        if best is None or g is None:
            continue
        # the group's counts; every cost line is its option's (the group's figures are those)
        costs = {**best.values, "nodes": float(g.nodes), "gpus_purchased": float(g.gpus_purchased),
                 # as rented: a guest's cheapest option alone where its host lacks room
                 "annual_cost_cloud": g.annual_cost_cloud}
        cols.append(CostColumn(rw.name, costs, best.gpu, best.priced, None, g.shares_with))
    return cols


def cost_svg(views: Sequence[WorkloadView], result: Result, fmt: Formatter) -> Markup | None:
    from .. import charts

    bars = []
    for col in cost_columns(views, result):
        v = col.costs  # its share of the plan, or its retrieval servers
        bars.append(charts.CostBar(
            # two lines of label (charts.cost_chart wraps it): 28 characters cut "Claims
            # document classification" (review round 19)
            label=clip(CONTROL_CHARS.sub("", col.name), 56), annual_capex=as_number(v, "annual_capex"),
            annual_power=as_number(v, "annual_facility"), annual_support=as_number(v, "annual_services"),
            onprem_total=as_number(v, "annual_cost_onprem"),
            cloud=(as_number(v, "annual_cost_cloud") if as_number(v, "cloud_price_known") > 0
                   else None),
            priced=col.priced))
    if not bars:
        return None
    if len(bars) > 1:
        t = result.totals
        bars.append(charts.CostBar(
            label="Account total", annual_capex=None, annual_power=None, annual_support=None,
            onprem_total=t.annual_cost_onprem, cloud=t.annual_cost_cloud,
            priced=all(c.priced for c in cost_columns(views, result))))
    years = fmt.unit(result.account_inputs["amortization_years"], "years")
    return svg_image(charts.cost_chart(bars[:9], years, fmt.money, fmt.money_short),
                     "Annual cost, on-premises against cloud")


@dataclass(frozen=True)
class PriceRow:
    label: str
    value: str
    date: str
    source: str
    note: str
    stale: str  # '' | 'undated' | 'over N months old'


def _price_list(result: Result, cat: Catalog, fmt: Formatter, day: dt.date) -> list[PriceRow]:
    """The dated prices behind the costs, each flagged when older than the catalog's
    ``price_max_age_days`` (or undated)."""
    from ...sizing.costs import price_age_days

    limit = cat.constant("price_max_age_days")
    rows = []
    recommended = {w.best.gpu for w in result.workloads if w.best is not None}
    for p in result.prices:
        kind, _, rest = p.item.partition(":")
        if kind in ("cloud", "gpu") and rest not in recommended:
            continue  # the price list covers the recommendation; the workbook lists all
        age = price_age_days(p.date, day)
        overridden = p.source.startswith("account")
        stale = "" if overridden else ("undated" if age is None else (
            f"about {fmt.count(age / 30.4)} months old" if age > limit else ""))
        per = p.unit.split("/", 1)[1] if "/" in p.unit else (
            p.unit.split(" per ", 1)[1] if " per " in p.unit else "")
        value = fmt.money(p.value) + (f" per {per}" if per else "")
        rows.append(PriceRow(label=p.label, value=value, date=p.date or "undated",
                             source=p.source, note=p.note, stale=stale))
    return rows


@dataclass(frozen=True)
class LoadRow:
    load: float
    onprem: float
    cloud: float
    api: float
    account: bool  # the account's own load


@dataclass(frozen=True)
class BreakEvenView:
    wv: WorkloadView
    rows: tuple[LoadRow, ...]
    chart: Markup | None  # the detailed proposal's only
    api_known: bool
    cloud_known: bool  # the GPU has a cloud price in the account's tier
    api_source: str
    # why not, where cloud_known is False: none listed, or no instance holds the replica
    cloud_no_price: str = ""


# A hosted API's provider as the catalog cites it: "AWS Bedrock (meta.llama3-1-70b-instruct-v1:0,
# us-east-1)". The provider's own model id (no space; a '.' or ':' in it, or long) means
# nothing to a finance reader beside the model's name: the sentence keeps provider and region.
_API_ID = re.compile(r"[^\s,()]*[.:][^\s,()]*|[^\s,()]{13,}")


def provider_words(provider: str) -> str:
    """'AWS Bedrock (meta.llama3-1-70b-instruct-v1:0, us-east-1)' -> 'AWS Bedrock, us-east-1'."""
    name, _, rest = provider.partition(" (")
    kept = [part for part in rest.removesuffix(")").split(", ")
            if part and not _API_ID.fullmatch(part)]
    return ", ".join([name, *kept])


def _breakeven(result: Result, views: Sequence[WorkloadView], cat: Catalog,
               fmt: Formatter, chart: bool) -> list[BreakEvenView]:
    """Cost per million tokens by average load for each recommendation (sensitivity.by_load)."""
    from ...sizing.sensitivity import by_load
    from .. import charts

    out = []
    load = result.account_inputs["average_load"]
    for wv in views:
        if wv.best is None:
            continue
        points = by_load(result.account_inputs, wv.w, result.tables)
        api = wv.w.inputs.get("api_output_per_million", 0.0) > 0
        cloud = as_number(wv.best.v, "cloud_price_known") > 0
        price = cat.prices.api.get(wv.w.model)
        rows = tuple(LoadRow(p["load"], p["cost_per_million_total_tokens_onprem"],
                             p["cost_per_million_total_tokens_cloud"],
                             p["cost_per_million_total_tokens_api"],
                             abs(p["load"] - load) < 1e-9) for p in points)
        drawn = svg_image(charts.breakeven_chart(points, load, fmt.money, fmt.pct, api, cloud),
                          "Cost per million tokens against average load") if chart else None
        source = f"{provider_words(price.provider)}, {price.date}" if price else ""
        unheld = [wv.best.option.gpu] if as_number(wv.best.v, "cloud_holds_replica") <= 0 else []
        out.append(BreakEvenView(wv=wv, rows=rows, chart=drawn, api_known=api, cloud_known=cloud,
                                 api_source=source, cloud_no_price=cloud_no_price_words(
                                     [wv.best.option.gpu], cat.gpus, unheld)))
    return out


def tco_context(result: Result, views: Sequence[WorkloadView], cat: Catalog, fmt: Formatter,
                day: dt.date, charts: bool = True) -> dict[str, Any]:
    """``cost_columns``, ``cloud_tier`` (in words), ``derived_cloud``, ``prices``, ``price_max_age_days``,
    ``breakeven`` and ``account_column`` (the cost table adds the account's totals when they
    differ from the one column: several workloads, or retrieval servers beside them)."""
    recommended = [v for v in views if v.best is not None]
    unpriced = result.totals.cloud_unpriced
    columns = cost_columns(views, result)
    no_purchase = purchase_unpriced(result)
    return {
        # the costs table's columns: workloads' plan shares, then retrieval servers
        "cost_columns": columns,
        # the plan's GPUs without a purchase price: the capital and on-premises totals leave
        # them out, and the cover and the summary's figures say so (x-docs review)
        "purchase_unpriced_gpus": gpu_list(no_purchase, cat.gpus),
        "purchase_unpriced_count": len(no_purchase),
        "account_column": len(recommended) > 1 or bool(result.plan.retrieval_groups),
        # several workloads on the plan: their columns are shares (views' ``costs``)
        "plan_shares": sum(1 for v in recommended if v.share) > 1,
        "cloud_tier": tier_words(result.cloud_tier),
        # GPU ids whose cloud price in the account's tier is derived by a tier ratio: every
        # table that shows a cloud figure for them marks it
        "derived_cloud": sorted(p.item.partition(":")[2] for p in result.prices
                                if p.item.startswith("cloud:") and p.derived),
        "prices": _price_list(result, cat, fmt, day),
        "price_max_age_days": cat.constant("price_max_age_days"),
        "breakeven": _breakeven(result, views, cat, fmt, charts),
        # the GPUs without a cloud price that keep the account's cloud total from a number
        "cloud_unpriced": (_first_up(cloud_unpriced_words(unpriced, cat.gpus, True, "",
                                                          result.totals.cloud_unheld))
                           if unpriced else ""),
        "cloud_unpriced_gpus": gpu_list(unpriced, cat.gpus),
        # why they have none (none listed, or an offer too small for a replica: session 24)
        "cloud_no_price": cloud_no_price_words(unpriced, cat.gpus, result.totals.cloud_unheld),
        "cloud_unheld": bool(result.totals.cloud_unheld),
    }


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]
