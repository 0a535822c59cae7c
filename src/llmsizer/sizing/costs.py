"""Prices the costs rest on.

Selects dated prices from the catalog (``catalogs/prices.yaml``) by the account's cloud tier,
with its overrides (a tier without an offer derived by the catalog's tier ratios), the
workbook's rule for an edited tier price, the bill-of-materials and hosted-API inputs, and
the list of prices used with their dates. Every figure comes from
:mod:`llmsizer.model.calculations`; this module only picks inputs and collects. The ranges
around the recommendation (sensitivity, confidence, cost by load) are :mod:`.sensitivity`'s.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..inputs.schema import Requirements
from ..model.calculations import (
    CLOUD_TIER_CODES,
    DERIVED_TIER_PRICE,
    PRICE_IN_ACCOUNT_CURRENCY,
    TABLE_COLUMNS,
    stated_product,
)
from ..model.catalog import CLOUD_TIERS, Catalog, CloudOffer, CloudTier, TierRatio
from ..model.catalog_prices import MAX_OTHER_SIZES, InstanceSize
from ..model.expr import IF, Value, eq, lift, ref, render
from .results import PriceUsed

_TIER_WORDS: dict[str, str] = {
    "hyperscaler_on_demand": "hyperscaler on-demand",
    "committed_1yr": "committed one-year contract",
    "committed_3yr": "committed three-year contract",
    "gpu_cloud": "GPU cloud on-demand",
}
# Column suffix of each tier in the gpus table (calculations.TABLE_COLUMNS).
_TIER_COLUMN = {"hyperscaler_on_demand": "on_demand", "committed_1yr": "1yr",
                "committed_3yr": "3yr", "gpu_cloud": "gpu_cloud"}
assert tuple(CLOUD_TIER_CODES) == CLOUD_TIERS
# the other instance sizes' columns of the gpus table (calculations.TABLE_COLUMNS)
_SIZE_SLOTS = tuple(range(1, MAX_OTHER_SIZES + 1))
_SIZE_PRICES = tuple(f"cloud_size{k}_gpu_hour" for k in _SIZE_SLOTS)
assert all(f"cloud_size{k}_gpus" in TABLE_COLUMNS["gpus"] for k in _SIZE_SLOTS)


def tier_words(tier: str) -> str:
    return _TIER_WORDS.get(tier, tier)


def in_account_currency(req: Requirements, usd_price: float | None) -> float:
    """A catalog USD price in the account's currency; 0 when unknown."""
    if not usd_price:
        return 0.0
    rate = req.costs.usd_exchange_rate or 1.0
    return stated_product(PRICE_IN_ACCOUNT_CURRENCY,
                          {"usd_price": usd_price, "usd_exchange_rate": rate})


@dataclass(frozen=True)
class TierPrice:
    """A GPU's cloud price in one tier: its own dated offer there, or one derived from its
    offer in another tier by the catalog's tier ratios (``steps``, in the order applied);
    ``sizes``: the offer's other instance sizes (GPUs, price per GPU-hour in the tier, the
    same ratios applied), fewest GPUs first."""

    usd_per_gpu_hour: float
    offer: CloudOffer  # the dated offer the price rests on
    offer_tier: CloudTier  # that offer's tier
    steps: tuple[TierRatio, ...] = ()  # () = the tier's own offer
    sizes: tuple[tuple[int, float], ...] = ()

    @property
    def derived(self) -> bool:
        return bool(self.steps)


def cloud_price(catalog: Catalog, gid: str, tier: CloudTier,
                _seen: tuple[CloudTier, ...] = ()) -> TierPrice | None:
    """``gid``'s price in ``tier``: its dated offer there, else derived by the first tier
    ratio (in catalog order) whose source tier has an offer for it, else by a chain of
    ratios (3-year from a derived 1-year); no tier is ever used as it stands for another.
    None when no tier prices the GPU."""
    offer = catalog.prices.cloud_offer(gid, tier)
    if offer is not None:
        return TierPrice(offer.usd_per_gpu_hour, offer, tier, (),
                         tuple((s.gpus, s.usd_per_gpu_hour) for s in offer.other_sizes()))
    rules = [r for r in catalog.prices.tier_ratios
             if r.to_tier == tier and r.from_tier not in (*_seen, tier)]
    # one ratio from an offer before a chain of ratios
    direct = [r for r in rules if catalog.prices.cloud_offer(gid, r.from_tier) is not None]
    for rule in direct + [r for r in rules if r not in direct]:
        base = cloud_price(catalog, gid, rule.from_tier, (*_seen, tier))
        if base is not None:
            def derive(usd: float, rule: TierRatio = rule) -> float:
                return stated_product(DERIVED_TIER_PRICE, {
                    "other_tier_price": usd, "tier_ratio": rule.ratio})
            return TierPrice(derive(base.usd_per_gpu_hour), base.offer, base.offer_tier,
                             (*base.steps, rule),
                             tuple((g, derive(usd)) for g, usd in base.sizes))
    return None


def derivation_words(tp: TierPrice, tier: CloudTier, cur: str, base_value: float,
                     size: InstanceSize | None = None) -> str:
    """How a derived price was derived (``base_value``: the price it was derived from in the
    account's currency: the offer's, or that of ``size``, the other instance size the plan
    rents), for the price list and the Assumptions sheet."""
    money = f"{cur} {base_value:.4g}"
    chain = " × ".join(f"{s.ratio:g}" for s in tp.steps)
    why = "; ".join(s.basis for s in tp.steps)
    # session 23: Fabrikam Legal rents 2-GPU B200 instances (13.78 / 2 = 6.89 USD a GPU-hour,
    # x 0.6642 = 4.58 paid); the note named the 8-GPU instance's 6.69 (x 0.6642 = 4.44)
    what = (f"price for the {size.gpus}-GPU instances rented ({money} per GPU-hour: "
            f"{size.offer})" if size is not None else f"price ({money} per GPU-hour)")
    return (f"Derived: no dated {tier_words(tier)} price for this GPU, so its "
            f"{tier_words(tp.offer_tier)} {what} × {chain}, the ratio between the tiers "
            f"({why}).")


def cloud_columns(req: Requirements, catalog: Catalog, gid: str) -> dict[str, float]:
    """The gpus-table cloud columns of one GPU: the account's tier (or override) and every
    tier's price for the what-if scenarios, each in that tier (derived by the catalog's tier
    ratios where the GPU has no offer in it; 0 price, 1 GPU when no tier prices it), with the
    offer's other instance sizes (0 GPUs, 0 price where it has fewer). A GPU the account
    prices itself (costs.cloud_gpu_hour) keeps that price in every tier and size."""
    out: dict[str, float] = {}
    for tier in CLOUD_TIERS:
        found = cloud_price(catalog, gid, tier)
        col = _TIER_COLUMN[tier]
        out[f"cloud_{col}"] = in_account_currency(req, found.usd_per_gpu_hour if found else None)
        out[f"cloud_gpus_{col}"] = float(found.offer.gpus_per_instance) if found else 1.0
        out[f"cloud_fixed_{col}"] = 1.0 if found and found.offer.sold_in_listed_sizes else 0.0
        sizes = found.sizes if found else ()
        for k in _SIZE_SLOTS:
            gpus, usd = sizes[k - 1] if k <= len(sizes) else (0, 0.0)
            out[f"cloud_size{k}_gpus_{col}"] = float(gpus)
            out[f"cloud_size{k}_{col}"] = in_account_currency(req, usd or None)
    chosen = _TIER_COLUMN[req.costs.cloud_tier]
    out["cloud_gpu_hour"] = req.costs.cloud_gpu_hour.get(gid, out[f"cloud_{chosen}"])
    out["cloud_gpus_per_instance"] = out[f"cloud_gpus_{chosen}"]
    out["cloud_fixed_sizes"] = out[f"cloud_fixed_{chosen}"]
    for k in _SIZE_SLOTS:
        out[f"cloud_size{k}_gpus"] = out[f"cloud_size{k}_gpus_{chosen}"]
        out[f"cloud_size{k}_gpu_hour"] = out[f"cloud_size{k}_{chosen}"]
    if gid in req.costs.cloud_gpu_hour:
        # the account's own price is what it pays in every tier and size: a cloud-tier
        # what-if would otherwise put the catalog's price back for this GPU (rows that moved
        # for no reason)
        for k in _SIZE_SLOTS:
            out[f"cloud_size{k}_gpu_hour"] = out["cloud_gpu_hour"]
        for column, fallback in TIER_FALLBACK.items():
            out[column] = out[fallback]
    return out


# cloud_columns' rule for a workbook that is edited (its Catalog sheet's tier columns): a
# tier keeps the catalog's price (and instance size) while the account's cloud price cell
# holds the price it was written with; a price typed there is the account's own (the
# workbook, read back, makes it costs.cloud_gpu_hour), which cloud_columns puts in every tier.
TIER_CELL = IF(eq(ref("cloud_gpu_hour"), ref("cloud_gpu_hour_written")), ref("tier_value"),
               ref("account_tier_value"))
# Each tier column of the gpus table and the account-tier column it falls back to.
TIER_FALLBACK = {**{f"cloud_{col}": "cloud_gpu_hour" for col in _TIER_COLUMN.values()},
                 **{f"cloud_gpus_{col}": "cloud_gpus_per_instance"
                    for col in _TIER_COLUMN.values()},
                 **{f"cloud_fixed_{col}": "cloud_fixed_sizes" for col in _TIER_COLUMN.values()},
                 **{f"cloud_size{k}_{col}": f"cloud_size{k}_gpu_hour"
                    for k in _SIZE_SLOTS for col in _TIER_COLUMN.values()},
                 **{f"cloud_size{k}_gpus_{col}": f"cloud_size{k}_gpus"
                    for k in _SIZE_SLOTS for col in _TIER_COLUMN.values()},
                 # the other sizes' prices in the account's tier: its own price, typed on
                 # Inputs, is what it pays for every size
                 **{price: "cloud_gpu_hour" for price in _SIZE_PRICES}}


def tier_cell_formula(column: str, values: dict[str, float], cell: Callable[[str], str]
                      ) -> str:
    """TIER_CELL for tier column ``column`` of one GPU (``values``: its gpus-table row as
    written; ``cell``: where a column of that row is), without the leading ``=``. A tier
    that holds the account tier's value is that cell alone (the same either way)."""
    own = TIER_FALLBACK[column]
    if values[column] == values[own]:
        return cell(own)
    names = {"cloud_gpu_hour": cell("cloud_gpu_hour"),
             # the digits the workbook writes the price cell with (16 significant): an exact
             # match in any spreadsheet (Gnumeric's = is exact; 17 digits never matched)
             "cloud_gpu_hour_written": f"{values['cloud_gpu_hour']:.16G}",
             "tier_value": render(lift(values[column]), str), "account_tier_value": cell(own)}
    return render(TIER_CELL, names.__getitem__)


def account_cost_inputs(req: Requirements, catalog: Catalog) -> dict[str, float]:
    """Bill-of-materials inputs: the account's figure, else the catalog's dated price."""
    c, extras = req.costs, catalog.prices.extras

    def pick(given: float | None, name: str) -> float:
        if given is not None:
            return given
        return in_account_currency(req, extras[name].value)  # type: ignore[index]

    return {
        # the account's network per node, on every node, where it states one; else each
        # server's ports at the catalog's prices per port (calculations network_per_node_used)
        "network_per_node": c.network_per_node or 0.0,
        "network_per_node_stated": 0.0 if c.network_per_node is None else 1.0,
        "network_per_fabric_port": pick(None, "network_per_fabric_port"),
        "network_per_frontend_gbps": pick(None, "network_per_frontend_gbps"),
        "storage_tb_per_node": c.storage_tb_per_node,
        "storage_per_tb_month": pick(c.storage_per_tb_month, "storage_per_tb_month"),
        # NVIDIA AI Enterprise, when asked for, at the catalog's published price (a stated
        # licence price wins)
        "software_per_gpu_year": (pick(None, "software_per_gpu_year")
                                  if c.nvidia_ai_enterprise and c.software_per_gpu_year == 0
                                  else c.software_per_gpu_year),
        "colocation_per_kw_month": pick(c.colocation_per_kw_month, "colocation_per_kw_month"),
        "gpu_price_factor": 1.0,
        "cloud_tier_what_if": 0.0,
        "plan_rented": 0.0,  # the engine sets 1 for the plan it rents
    }


def api_inputs(req: Requirements, catalog: Catalog, model_id: str) -> dict[str, float]:
    """A hosted API's prices for the model: the account's (costs.api_*), else the catalog's."""
    api = catalog.prices.api.get(model_id)
    c = req.costs
    given_in, given_out = (c.api_input_per_million.get(model_id),
                           c.api_output_per_million.get(model_id))
    return {
        "api_input_per_million": given_in if given_in is not None else in_account_currency(
            req, api.input_usd_per_million if api else None),
        "api_output_per_million": given_out if given_out is not None else in_account_currency(
            req, api.output_usd_per_million if api else None),
    }


def retrieval_api_price(req: Requirements, catalog: Catalog, kind: str) -> float:
    """The compared hosted embedding or reranking API's price per million tokens: the
    account's (costs.retrieval_api_per_million), else the catalog's in the account currency."""
    own = req.costs.retrieval_api_per_million.get(kind)  # type: ignore[call-overload]
    if own is not None:
        return float(own)
    api = catalog.prices.embedding_reference(kind)
    return in_account_currency(req, api.usd_per_million_tokens if api else None)


def instances_rented(*parts: tuple[str, Mapping[str, Value]]) -> dict[str, dict[int, int]]:
    """Per GPU, the cloud instances its node groups (``parts``: GPU, the group's values) rent,
    by the size picked (calculations cloud_size_picked: 0 = the offer's own size); an offer
    sold by the GPU (cloud_sold_by_gpu) that lists no other size, the GPUs rented: its
    offer is one GPU's; one that lists sizes (cloud_sizes_listed) rents instances of one."""
    out: dict[str, dict[int, int]] = {}
    for gid, v in parts:
        any_count = (float(v.get("cloud_sold_by_gpu", 0)) > 0
                     and float(v.get("cloud_sizes_listed", 0)) <= 0)
        n = int(float(v.get("cloud_gpus_rented" if any_count else "cloud_instances", 0)))
        if n > 0:
            code = int(float(v.get("cloud_size_picked", 0)))
            by_size = out.setdefault(gid, {})
            by_size[code] = by_size.get(code, 0) + n
    return out


def _rented_words(offer: CloudOffer, rented: Mapping[int, int]) -> tuple[str, str]:
    """(the instances the plan rents, e.g. "1 × AWS p5.4xlarge us-east-1 (1 GPU, 6.88 USD/h)",
    or the offer's name when it rents none; the sources of the other sizes it rents)."""
    sizes = offer.other_sizes()

    def name(code: int) -> str:
        return offer.offer if code == 0 or code > len(sizes) else sizes[code - 1].offer

    bought = " and ".join(f"{n:,} × {name(code)}" for code, n in sorted(rented.items()))
    others = " ".join(f"{sizes[code - 1].offer}: {sizes[code - 1].source}."
                      for code in sorted(rented) if 0 < code <= len(sizes))
    return bought or offer.offer, others


def _sold_words(offer: CloudOffer) -> str:
    sizes = offer.other_sizes()
    if offer.gpus_per_instance == 1 and not sizes:  # calculations: cloud_sold_by_gpu
        if offer.fixed_sizes:  # calculations: cloud_fixed_sizes
            # session 24: a wider replica cannot run across instances (cloud_holds_replica)
            return ("1-GPU instances only (a replica of more GPUs cannot run across them: "
                    "it has no cloud price on this offer)")
        return "single GPUs, one instance holding one replica's GPUs (a server's at most)"
    sold = ("single GPUs" if offer.gpus_per_instance == 1
            else f"whole {offer.gpus_per_instance}-GPU instances")
    if sizes:
        sold += ", or " + " or ".join(f"{s.gpus}-GPU" for s in sizes) + " instances"
    return sold


def listed_source(catalog: Catalog, gid: str, tier: CloudTier, cur: str, rate: float
                  ) -> tuple[str, str | None] | None:
    """(source words, date) of ``gid``'s offer in its own instance size, the price "as
    listed" that the account's price cell holds; None when no tier prices the GPU. Session
    24: Fabrikam Legal's 4.44 listed cell (Lambda's 8-GPU instance, 6.69 x 0.6642) read the
    2-GPU size's source, "6 × Lambda 2x B200 (13.78 USD/h)", the price paid (4.58)."""
    found = cloud_price(catalog, gid, tier)
    if found is None:
        return None
    offer = found.offer
    text = f"{offer.offer}; sold as {_sold_words(offer)}. {offer.source}"
    if found.derived:
        base = stated_product(PRICE_IN_ACCOUNT_CURRENCY, {
            "usd_price": offer.usd_per_gpu_hour, "usd_exchange_rate": rate or 1.0})
        text += ". " + derivation_words(found, tier, cur, base)
    return text, offer.date


def prices_used(req: Requirements, catalog: Catalog, gpus: Sequence[str],
                models: Sequence[str], rented: Mapping[str, Mapping[int, int]] | None = None,
                ) -> list[PriceUsed]:
    """The dated prices behind the recommended options' costs, in the order a reader needs
    them: cloud offers (naming the instances the plan rents: ``rented``, instances_rented),
    GPU purchase prices, bill-of-materials extras, API prices."""
    cur = req.account.currency
    tier: CloudTier = req.costs.cloud_tier
    rows: list[PriceUsed] = []
    for gid in gpus:
        g = catalog.gpus[gid]
        override = req.costs.cloud_gpu_hour.get(gid)
        found = cloud_price(catalog, gid, tier)
        if override is not None:
            bought = ("; rented: " + _rented_words(found.offer, (rented or {}).get(gid, {}))[0]
                      if found is not None and (rented or {}).get(gid) else "")
            rows.append(PriceUsed(item=f"cloud:{gid}", label=f"{g.name}, cloud per GPU-hour",
                                  value=override, unit=f"{cur}/GPU-hour", date=None,
                                  source="account override (costs.cloud_gpu_hour)" + bought))
        elif found is not None:
            offer = found.offer
            codes = sorted((rented or {}).get(gid, {}))
            bought, others = _rented_words(offer, (rented or {}).get(gid, {}))
            # the plan rents one other size alone: its price and date are the ones paid, and
            # a derived price is derived from that size's price
            size = (offer.other_sizes()[codes[0] - 1]
                    if len(codes) == 1 and 0 < codes[0] <= len(found.sizes) else None)
            base = in_account_currency(
                req, size.usd_per_gpu_hour if size is not None else offer.usd_per_gpu_hour)
            paid = found.sizes[codes[0] - 1][1] if size is not None else found.usd_per_gpu_hour
            rows.append(PriceUsed(
                item=f"cloud:{gid}", label=f"{g.name}, cloud per GPU-hour ({tier_words(tier)}"
                + (", derived)" if found.derived else ")"),
                value=in_account_currency(req, paid), unit=f"{cur}/GPU-hour",
                date=size.date if size is not None else offer.date,
                source=f"{bought}; sold as {_sold_words(offer)}. {offer.source}"
                + (f". {others}" if others else ""),
                note=derivation_words(found, tier, cur, base, size) if found.derived else "",
                derived=found.derived, flag="derived" if found.derived else "",
                derived_from_tier=found.offer_tier if found.derived else None,
                derived_from_value=base if found.derived else None,
                ratios=[st.ratio for st in found.steps]))
        price = req.costs.gpu_prices.get(gid)
        if price is not None:
            rows.append(PriceUsed(item=f"gpu:{gid}", label=f"{g.name}, purchase per GPU",
                                  value=price, unit=cur, date=None,
                                  source="account override (costs.gpu_prices)"))
        elif g.price_usd:
            rows.append(PriceUsed(item=f"gpu:{gid}", label=f"{g.name}, purchase per GPU",
                                  value=in_account_currency(req, g.price_usd), unit=cur,
                                  date=g.price_date, source=g.price_source or ""))
    given = {"storage_per_tb_month": req.costs.storage_per_tb_month,
             "software_per_gpu_year": None,
             "colocation_per_kw_month": req.costs.colocation_per_kw_month}
    labels = {"network_per_fabric_port": "GPU-fabric network per port (servers built for one)",
              "network_per_frontend_gbps": "Front-end network per Gb/s of a server's ports",
              "storage_per_tb_month": "Storage per TB-month",
              "software_per_gpu_year": "Software licence per GPU-year (reference)",
              "colocation_per_kw_month": "Colocation per kW-month"}
    if req.costs.network_per_node is not None:  # the account's figure, on every server
        rows.append(PriceUsed(item="extra:network_per_node", label="Network per server",
                              value=req.costs.network_per_node, unit=f"{cur} per server",
                              date=None, source="account requirements (costs)"))
    for name, item in catalog.prices.extras.items():
        if name.startswith("network_") and req.costs.network_per_node is not None:
            continue  # not read: the account states its network per server
        value = given.get(name)
        rows.append(PriceUsed(
            item=f"extra:{name}", label=labels[name],
            value=value if value is not None else in_account_currency(req, item.value),
            unit=item.unit.replace("USD", cur),
            date=None if value is not None else item.date,
            source="account requirements (costs)" if value is not None else item.source))
    for mid in models:
        api = catalog.prices.api.get(mid)
        model_name = catalog.models[mid].name if mid in catalog.models else mid
        for kind, usd, own in (
                ("input", api.input_usd_per_million if api else None,
                 req.costs.api_input_per_million.get(mid)),
                ("output", api.output_usd_per_million if api else None,
                 req.costs.api_output_per_million.get(mid))):
            if own is not None:
                rows.append(PriceUsed(
                    item=f"api:{mid}:{kind}", label=f"{model_name} hosted API, {kind} tokens",
                    value=own, unit=f"{cur} per million tokens", date=None,
                    source=f"account override (costs.api_{kind}_per_million)"))
            elif api is not None:
                rows.append(PriceUsed(
                    item=f"api:{mid}:{kind}", label=f"{model_name} hosted API, {kind} tokens",
                    value=in_account_currency(req, usd), unit=f"{cur} per million tokens",
                    date=api.date, source=f"{api.provider}. {api.source}"))
    return rows


_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?")


def price_age_days(date: str | None, today: dt.date) -> int | None:
    """Days between a price's date and ``today`` (a month or year counts from its end, so a
    price is never older than it can be); None when undated."""
    m = _DATE.match(date or "")
    if not m:
        return None
    year = int(m.group(1))
    month = int(m.group(2) or 12)
    if m.group(3):
        day = dt.date(year, month, int(m.group(3)))
    else:  # the last day of that month
        nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
        day = nxt - dt.timedelta(days=1)
    return (today - day).days


def is_stale(date: str | None, today: dt.date, max_age_days: float) -> bool:
    age = price_age_days(date, today)
    return age is None or age > max_age_days
