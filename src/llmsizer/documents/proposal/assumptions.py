"""The assumptions section (templates/partials/assumptions.html.j2): the model's
assumptions, the account's policy and the prices behind the costs, each with its source in
the customer's words, and the calibration figures; the labels of every named input."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...inputs.schema import Costs
from ...model.calculations import INPUTS
from ...model.catalog import Catalog, customer_source
from ...model.names import short_name
from ...sizing.deployment import DEFAULTED
from ...sizing.results import Result
from .format import NBSP, Formatter, catalog_note
from .views import WorkloadView


@dataclass(frozen=True)
class Row:
    label: str
    value: str
    source: str


ASSUMPTION_LABELS = {
    "mbu_weights": "Bandwidth efficiency, weights",
    "mbu_kv": "Bandwidth efficiency, KV cache",
    "mfu_decode": "Compute efficiency, decode",
    "mfu_decode_8bit": "Compute efficiency, decode (8-bit path)",
    "mfu_decode_16bit": "Compute efficiency, decode (16-bit path)",
    "mfu_prefill": "Compute efficiency, prefill",
    "mfu_prefill_8bit": "Compute efficiency, prefill (8-bit path)",
    "mfu_prefill_16bit": "Compute efficiency, prefill (16-bit path)",
    "mfu_decode_4bit": "Compute efficiency, decode (4-bit path)",
    "mfu_prefill_4bit": "Compute efficiency, prefill (4-bit path)",
    "mfu_attention": "Compute efficiency, decode attention",
    "alltoall_latency_us": "All-to-all latency (expert parallel)",
    "moe_compute_factor": "MoE compute factor",
    "expert_slot_overhead": "Expert overhead width (MoE)",
    "step_overhead_ms": "Per-step overhead",
    "allreduce_latency_us": "All-reduce latency",
    "link_efficiency": "All-reduce link efficiency",
    "scaleout_efficiency": "Network link efficiency (expert parallel across nodes)",
    "prefill_chunk_tokens": "Prefill chunk",
    "ttft_overhead_ms": "Time-to-first-token overhead",
    "first_token_engine_steps": "Serving-engine steps before the first token",
    "closed_loop_round_share": ("Wait for other users' prompts, share of an engine step per "
                                "user in flight"),
    "kv_cache_fraction": "KV share of free memory",
    "max_batch_per_replica": "Serving engine batch cap",
    "runtime_reserve_gb": "Runtime reserve per GPU",
    "cloud_tier": "Cloud price tier",
    "price_max_age_days": "Prices flagged when older than",
    "calibration_offline_median_error": "Throughput error, median (offline benchmarks)",
    "calibration_offline_p90_error": "Throughput error, 90th percentile (offline benchmarks)",
    "calibration_itl_median_error": "Inter-token latency error, median",
    "calibration_ttft_median_error": "Time-to-first-token error, median",
    "calibration_batch1_median_error": "Single-user speed error, median",
    "stack_efficiency_nvidia": "Serving-software efficiency, NVIDIA GPUs",
    "uncalibrated_derating": "Derating of a GPU without benchmark results",
    "mtp_unstated_draft_tokens": "Draft tokens per step (multi-token prediction), when unstated",
    "mtp_random_prompt_acceptance_share": ("Share of the published multi-token-prediction "
                                           "acceptance reached on random benchmark prompts"),
}
# confidence_<family>_p10/p90: the error range of one GPU family, in words
_FAMILIES = {"hopper_fp8": "Hopper GPUs at FP8", "blackwell_fp4": "Blackwell GPUs at FP4",
             "blackwell_fp8": "Blackwell GPUs at FP8", "moe": "mixture-of-experts models",
             "other": "other GPUs and precisions"}
CONFIDENCE = re.compile(r"confidence_(\w+)_p(\d+)")
# "fitted <date> on <n> published benchmark results (<sources>)" opens most sources: the
# appendix states it once above the constants that share it
_FITTED = re.compile(r"^(fitted \d{4}-\d{2}-\d{2} on \d+ published [^()]*\([^()]*\))(?:[;:,] ?(.*))?$",
                     re.DOTALL)
# "p10 of the model's error ...": the percentiles of one error, a group of their own
_PERCENTILE = re.compile(r"^p\d+ of (the model's error .*)$", re.DOTALL)
_INPUT_LABELS = {i.name: i.label for i in INPUTS}
_POLICY_KEYS = ("gpu_memory_utilization", "electricity_per_kwh", "pue", "amortization_years",
                "support_rate", "average_load", "network_per_node", "hours_per_year")
_UNITS = {i.name: i.unit for i in INPUTS}


def assumption_label(name: str) -> str:
    """A constant or input by the words the proposal and the workbook's Assumptions sheet
    give it (one home): 'calibration_itl_median_error' -> 'Inter-token latency error,
    median'."""
    found = ASSUMPTION_LABELS.get(name) or _INPUT_LABELS.get(name)
    if found:
        return found
    conf = CONFIDENCE.fullmatch(name)
    if conf and conf.group(1) in _FAMILIES:
        return f"Model error, {_FAMILIES[conf.group(1)]}: {conf.group(2)}th percentile"
    text = name.removeprefix("calibration_").replace("_", " ")
    return text[:1].upper() + text[1:]


# A source that names another constant ("fitted jointly with first_token_engine_steps") says
# that constant's label instead
_NAMES = re.compile(r"\b(" + "|".join(map(re.escape, ASSUMPTION_LABELS)) + r")\b")


def _source(text: str) -> str:
    """A constant's source in the customer's words (catalog.customer_source), another
    constant named by its label."""
    return _NAMES.sub(lambda m: assumption_label(m.group(1)).lower(), customer_source(text))


def _policy_value(fmt: Formatter, name: str, x: float) -> str:
    if name == "electricity_per_kwh":
        return fmt.tariff(x) + " per kWh"
    money = {"network_per_node": " per server", "network_per_fabric_port": " per fabric port",
             "network_per_frontend_gbps": " per Gb/s of a server's front-end ports"}
    if name in money:
        return fmt.money(x) + money[name]
    if name == "support_rate":
        return f"{fmt.pct(x)} of the capital cost a year"
    if name == "hours_per_year":
        return f"{fmt.count(x)}{NBSP}h"
    if name == "pue":
        return fmt.decimal(x, 2)
    return fmt.unit(x, _UNITS.get(name, ""))


def _catalog_price(result: Result, usd: float | None) -> float | None:
    """A catalog USD price as the engine would have used it in the account's currency
    (through calculations.PRICE_IN_ACCOUNT_CURRENCY), or None when that is unknown."""
    if not usd:
        return None
    if result.account.currency == "USD":
        return usd
    # the rate the engine applied (review 23: account_inputs holds none, so every converted
    # price read "converted ..., unless overridden" though none was)
    rate = result.usd_exchange_rate
    from ...model.calculations import PRICE_IN_ACCOUNT_CURRENCY, stated_product

    return stated_product(PRICE_IN_ACCOUNT_CURRENCY, {"usd_price": usd, "usd_exchange_rate": rate})


_DATE_ASIDE = re.compile(r" [(](.*)[)]$")  # "2024 (as the article quotes it)"


def _dated(source: str, date: str | None) -> str:
    """``source`` and its date, one bracket deep: "... estimate); dated 2024, as the article
    quotes it" and "account override (...); undated", never "(dated 2024 (as the article
    quotes it))" nor "(dated undated)"."""
    when = "dated " + _DATE_ASIDE.sub(r", \1", date) if date else "undated"
    return f"{source}; {when}" if source.endswith(")") else f"{source} ({when})"


def _price_source(result: Result, used: float, usd: float | None, source: str | None,
                  date: str | None, override_key: str) -> str:
    if not used:
        return "no price known"
    cur = result.account.currency
    catalog = _dated(str(source), date)
    expected = _catalog_price(result, usd)
    if expected is not None and expected == used:
        return catalog if cur == "USD" else f"{catalog}; converted from USD at the account's rate"
    if expected is None and usd and cur != "USD":
        return (f"{catalog}; converted from USD at the account's rate, unless overridden in "
                f"{override_key}")
    return f"account override ({override_key})"


def _price_rows(result: Result, views: Sequence[WorkloadView], cat: Catalog,
                fmt: Formatter) -> list[Row]:
    rows: list[Row] = []
    names = {pid: q.name for pid, q in cat.platforms.items()}
    gpus = sorted({wv.best.option.gpu for wv in views if wv.best is not None})
    platforms = sorted({wv.best.option.platform for wv in views if wv.best is not None})
    for gid in gpus:
        used = result.tables["gpus"].get(gid, {})
        g = cat.gpus.get(gid)
        name = g.name if g else gid
        price, cloud = used.get("price", 0.0), used.get("cloud_gpu_hour", 0.0)
        src = _price_source(result, price, g.price_usd if g else None,
                            catalog_note(g.price_source, names) if g and g.price_source
                            else None, g.price_date if g else None,
                            "costs.gpu_prices")
        # an unknown price in words, not "—" before the source's dash: "— — no price known"
        # (review round 20, Harrow & Finch's GB300 cloud price)
        if not price:
            src = "none in the catalog or the requirements: on-premises figures leave the GPUs out"
        rows.append(Row(f"{name}: purchase price per GPU",
                        fmt.money(price) if price else "not known", src))
        used_row = next((p for p in result.prices if p.item == f"cloud:{gid}"), None)
        csrc = (_dated(used_row.source, used_row.date)
                + (f"; {used_row.note}" if used_row.note else "")) if used_row else (
            "none in the catalog or the requirements, in any cloud tier: the cloud is not compared")
        # the price the plan pays, as the costs table shows it (review 23: Fabrikam Legal's
        # 2-GPU instances cost USD 4.58 a GPU-hour in section 6 but read USD 4.44, the 8-GPU
        # offer's, here beside the 2-GPU instance's source)
        paid = used_row.value if used_row is not None and used_row.value else cloud
        rows.append(Row(f"{name}: cloud price per GPU-hour{' paid' if paid else ''}",
                        fmt.money(paid) if paid else "not known", csrc))
    for pid in platforms:
        p = cat.platforms.get(pid)
        row = result.tables["platforms"].get(pid, {})
        label = short_name(p.name) if p else pid
        rows.append(Row(f"{label}: node without GPUs", fmt.money(row.get("base_price", 0.0)),
                        catalog_note(p.notes or p.source, names) if p else "catalog"))
        rows.append(Row(f"{label}: node power at full load",
                        fmt.kw(row.get("node_power_kw", 0.0)),
                        catalog_note(p.source, names) if p else "catalog"))
    return rows


@dataclass(frozen=True)
class RegisterGroup:
    """Constants of the appendix's register that share one source (``source`` empty: each
    row carries its own)."""
    source: str
    rows: list[Row]


def _register(rows: Sequence[Row]) -> list[RegisterGroup]:
    """``register``: the assumptions fitted on the same published results gathered under that
    source, each keeping what its own source adds (the rows it was fitted on), then the others
    with their own sources; the order within a group is the assumptions' order. The same rows
    and sources as ``assumptions``, the shared text said once."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        fitted = _FITTED.match(row.source) or _PERCENTILE.match(row.source)
        source, rest = ("", row.source) if not fitted else (
            (fitted.group(1), fitted.group(2) or "") if fitted.re is _FITTED
            else (f"Percentiles of {fitted.group(1)}", ""))
        groups.setdefault(source[:1].upper() + source[1:], []).append(
            Row(row.label, row.value, rest))
    own = groups.pop("", [])
    return [RegisterGroup(s, r) for s, r in groups.items()] + ([RegisterGroup("", own)]
                                                              if own else [])


def _policy_keys(result: Result) -> tuple[str, ...]:
    """The policy figures the costs read: the account's network per server where it states
    one, else the prices per port each server's network is built from
    (calculations network_per_node_used)."""
    stated = result.account_inputs.get("network_per_node_stated", 0) > 0
    network = (("network_per_node",) if stated
               else ("network_per_fabric_port", "network_per_frontend_gbps"))
    return tuple(n for k in _POLICY_KEYS for n in (network if k == "network_per_node" else (k,)))


def _policy_source(result: Result, key: str) -> str:
    """Where a policy figure comes from: the requirements, or for a price they leave out the
    catalog's dated estimate the costs used (results' prices): "Network per node: GBP 13.9 k
    — the account's requirements" of an account that states none (review round 20)."""
    used = next((p for p in result.prices if p.item == f"extra:{key}"), None)
    if used is not None and not used.source.startswith("account "):  # override, requirements
        where = used.source.split(":", 1)[0].strip()
        return (f"not in the requirements: the catalog's dated estimate, {_dated(where, used.date)}"
                + ("" if result.account.currency == "USD"
                   else "; converted from USD at the account's rate"))
    asked = result.source.requirements if result.source is not None else None
    section = "policy" if key in DEFAULTED["policy"] else "costs"
    if asked is not None and key in DEFAULTED[section] and key not in asked.get(section, {}):
        return ("not in the requirements: llmsizer's default"
                + (f", USD {Costs.model_fields['electricity_per_kwh'].default} per kWh converted "
                   "at the account's rate"
                   if key == "electricity_per_kwh" and result.account.currency != "USD" else ""))
    return "the account's requirements (its policy and running costs)"


def assumptions_context(result: Result, views: Sequence[WorkloadView], cat: Catalog,
                        fmt: Formatter) -> dict[str, Any]:
    """``assumptions`` (and grouped by source, ``register``), ``policy_rows``, ``price_rows``
    and ``calibration``: label, value and source of each figure the sizing assumed."""
    assumptions = [Row(assumption_label(a.name), fmt.unit(a.value, a.unit), _source(a.source))
                   for a in result.assumptions if not a.name.startswith("calibration_")]
    policy = [Row(assumption_label(k), _policy_value(fmt, k, result.account_inputs[k]),
                  _policy_source(result, k))
              for k in _policy_keys(result) if k in result.account_inputs]
    if result.account.currency != "USD":  # review 23: "converted at the exchange rate given
        # in the requirements", and the rate was given nowhere in the proposal
        policy.append(Row("Exchange rate", f"{fmt.stated(result.usd_exchange_rate)} "
                          f"{result.account.currency} per USD",
                          "the account's requirements (its costs): every catalog price, in US "
                          "dollars, is converted at this rate"))
    calibration = [Row(assumption_label(name), fmt.unit(c.value, c.unit), _source(c.source))
                   for name, c in cat.constants.items() if name.startswith("calibration_")]
    return {"assumptions": assumptions, "register": _register(assumptions),
            "policy_rows": policy,
            "price_rows": _price_rows(result, views, cat, fmt), "calibration": calibration,
            "errors": _errors(cat, fmt), "engine": _engine(result, fmt),
            "within_error": _within_error(views, cat)}


# The calibration errors the confidence statements quote (constants written by the calibration)
_ERRORS = {"throughput": "calibration_offline_median_error",
           "throughput_p90": "calibration_offline_p90_error",
           "speed": "calibration_itl_median_error", "ttft": "calibration_ttft_median_error"}


def _errors(cat: Catalog, fmt: Formatter) -> dict[str, str] | None:
    """``errors``: the median (and p90) errors of throughput, per-user speed (the time between
    tokens) and first-token time in cross-validation, formatted; None before calibration."""
    if not all(name in cat.constants for name in _ERRORS.values()):
        return None
    return {key: fmt.pct(cat.constants[name].value) for key, name in _ERRORS.items()}


def _engine(result: Result, fmt: Formatter) -> dict[str, str]:
    """``engine``: the serving-engine settings the figures assume (the policy's memory share,
    the batch cap), formatted for the engine paragraph."""
    cap = next((a.value for a in result.assumptions if a.name == "max_batch_per_replica"), None)
    memory = result.account_inputs.get("gpu_memory_utilization")
    return {"batch_cap": fmt.count(cap) if isinstance(cap, float | int) else "",
            "memory": fmt.pct(memory) if memory is not None else ""}


def _within_error(views: Sequence[WorkloadView], cat: Catalog) -> dict[int, list[str]]:
    """``within_error``: workload index -> the latency targets its recommendation meets by less
    than the model's median error for that figure ('per-user speed', 'first-token time'), which
    a benchmark should confirm. A comparison only: no figure is computed here."""
    speed_err = cat.constants.get("calibration_itl_median_error")
    first_err = cat.constants.get("calibration_ttft_median_error")
    out: dict[int, list[str]] = {}
    for wv in views:
        if wv.best is None or wv.w.mode == "measured":
            continue
        v = wv.best.v
        num = {k: float(x) for k, x in v.items() if isinstance(x, float | int)}.get
        tight = []
        need = num("required_tokens_per_s_per_user", 0.0)
        speed = num("tokens_per_s_per_user", 0.0)
        if speed_err and need > 0 and speed < need * (1 + speed_err.value):
            tight.append("per-user speed")
        # a shown figure against its target and error band: wording, not a sizing figure
        allowed, got = num("target_ttft_ms", 0.0), num("ttft_ms", 0.0)
        if first_err and allowed > 0 and got * (1 + first_err.value) > allowed:
            tight.append("first-token time")
        if tight:
            out[wv.index] = tight
    return out
