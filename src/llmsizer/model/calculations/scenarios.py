"""What-ifs: the sensitivity scenarios (the Scenarios sheet, results ``sensitivity[]``), each
changing one input and recomputing the whole calculation list, and the loads at which the
break-even table and chart evaluate the cost per million tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..expr import IF, MAX, ROUNDUP, Expr, Value, evaluate, gt, lift
from .core import r


# ---- sensitivity (the Scenarios sheet, results ``sensitivity[]``) ----------------------------
# Each scenario changes ONE input to the value of ``value`` (an expression over the base
# inputs) and recomputes the whole calculation list for each workload's recommended option.
@dataclass(frozen=True)
class Scenario:
    name: str  # stable id (results JSON)
    label: str  # what changes, in words
    change: str  # by how much, in words
    input: str  # the input it changes
    value: Expr  # that input's value in the scenario
    # The embed and rerank servers' input it changes (model/calculations/retrieval.py) and
    # its value there: the load and headroom rows resize those servers as they do the
    # language models; the other rows keep their sizes (None), while a row's GPU price,
    # cloud tier and average load price them (sizing/retrieval.py scenario_retrieval).
    retrieval_input: str | None = None
    retrieval_value: Expr | None = None
    # The load rows change one form of load (concurrent users, or a rate or population):
    # nonzero over a workload's inputs (``stated``) or an embed or rerank workload's
    # (``retrieval_stated``) when it states that form. None: every workload (see applies).
    stated: Expr | None = None
    retrieval_stated: Expr | None = None


def _scaled_tokens(name: str, factor: float) -> Expr:
    return MAX(1, ROUNDUP(r(name) * factor, 0))


# The peak arrival rate of a load stated as a rate or a population (queueing.py's
# peak_request_rate_per_s, over the inputs); 0 for concurrent users, whose rows above vary it.
# The rate rows state it as requests_per_s, which the peak rate reads first.
_PEAK_RATE = IF(gt(r("requests_per_s"), 0), r("requests_per_s"),
                r("named_users") * r("requests_per_user_per_hour") * r("peak_to_average") / 3600)


def applies(sc: Scenario, inputs: Iterable[Mapping[str, Value]],
            retrieval_inputs: Iterable[Mapping[str, Value]]) -> bool:
    """Whether row ``sc`` changes an input some workload of the account states: the language
    models' (``inputs``, each recommended workload's) or, through ``sc.retrieval_input``, the
    embed and rerank servers' (``retrieval_inputs``). A load row no workload states changes
    nothing and is not listed (it read as "half the load, the same GPUs"); decided by the
    form the load is stated in, never by the row's figures."""
    if sc.stated is None:
        return True
    if any(evaluate(sc.stated, v) for v in inputs):
        return True
    return sc.retrieval_input is not None and any(
        sc.retrieval_stated is None or evaluate(sc.retrieval_stated, v)
        for v in retrieval_inputs)


_USERS_STATED = gt(r("users"), 0)
_RATE_STATED = gt(_PEAK_RATE, 0)  # a rate or a population
_RETRIEVAL_RATE_STATED = gt(r("request_rate_per_s"), 0)  # not a corpus re-index alone


# Cloud tier codes of ``cloud_tier_what_if`` (the order of catalog.CLOUD_TIERS).
CLOUD_TIER_CODES = {"hyperscaler_on_demand": 1, "committed_1yr": 2, "committed_3yr": 3,
                    "gpu_cloud": 4}

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("users_x0.5", "Concurrent users", "x0.5", "users", ROUNDUP(r("users") * 0.5, 0),
             stated=_USERS_STATED),
    Scenario("users_x1.5", "Concurrent users", "x1.5", "users", ROUNDUP(r("users") * 1.5, 0),
             stated=_USERS_STATED),
    Scenario("users_x2", "Concurrent users", "x2", "users", r("users") * 2,
             stated=_USERS_STATED),
    # an embed or rerank workload states its load as a rate (or a population, turned into its
    # peak rate): these rows change it too
    Scenario("rate_-50%", "Requests/s at peak", "-50 %", "requests_per_s",
             _PEAK_RATE * 0.5, "request_rate_per_s", r("request_rate_per_s") * 0.5,
             stated=_RATE_STATED, retrieval_stated=_RETRIEVAL_RATE_STATED),
    Scenario("rate_+50%", "Requests/s at peak", "+50 %", "requests_per_s",
             _PEAK_RATE * 1.5, "request_rate_per_s", r("request_rate_per_s") * 1.5,
             stated=_RATE_STATED, retrieval_stated=_RETRIEVAL_RATE_STATED),
    Scenario("prompt_-50%", "Prompt length", "-50 %", "prompt_tokens",
             _scaled_tokens("prompt_tokens", 0.5)),
    Scenario("prompt_+50%", "Prompt length", "+50 %", "prompt_tokens",
             _scaled_tokens("prompt_tokens", 1.5)),
    Scenario("output_-50%", "Output length", "-50 %", "output_tokens",
             _scaled_tokens("output_tokens", 0.5)),
    Scenario("output_+50%", "Output length", "+50 %", "output_tokens",
             _scaled_tokens("output_tokens", 1.5)),
    Scenario("gpu_price_-30%", "GPU price", "-30 %", "gpu_price_factor",
             r("gpu_price_factor") * 0.7),
    Scenario("gpu_price_+30%", "GPU price", "+30 %", "gpu_price_factor",
             r("gpu_price_factor") * 1.3),
    Scenario("cloud_hyperscaler_on_demand", "Cloud price", "hyperscaler on-demand",
             "cloud_tier_what_if", lift(1)),
    Scenario("cloud_committed_1yr", "Cloud price", "committed 1 year", "cloud_tier_what_if",
             lift(2)),
    Scenario("cloud_committed_3yr", "Cloud price", "committed 3 years", "cloud_tier_what_if",
             lift(3)),
    Scenario("cloud_gpu_cloud", "Cloud price", "GPU cloud on-demand", "cloud_tier_what_if",
             lift(4)),
    Scenario("load_0.3", "Average load", "30 %", "average_load", lift(0.3)),
    Scenario("load_0.9", "Average load", "90 %", "average_load", lift(0.9)),
    Scenario("headroom_0", "Headroom", "0 %", "headroom", lift(0), "headroom", lift(0)),
    Scenario("headroom_0.5", "Headroom", "50 %", "headroom", lift(0.5), "headroom", lift(0.5)),
)
SCENARIO_OUTPUTS = ("gpus_purchased", "nodes", "capex", "annual_cost_onprem", "annual_cost_cloud")

# Loads at which the break-even table and chart evaluate the cost per million tokens.
BREAKEVEN_LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
