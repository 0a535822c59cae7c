"""Invariants a customer relies on, checked with hypothesis over generated accounts: more
load, a tighter target, more headroom or surviving a node's loss never buys fewer GPUs (per
option) nor a cheaper plan; prices never change the GPUs an option needs; the plan's totals
are the sum of its node groups; one load stated two ways, and one configuration sized by
`size` and by `estimate`, give one answer.

Accounts draw catalog models (dense and MoE) and priced GPUs (an unpriced GPU ranks after
every priced one, search._rank: a stricter target that rules out the priced GPUs may then
recommend fewer unpriced ones), users / arrival rates / populations, long prompts, prefix
caching, speculative decoding, mean and percentile targets. Disaggregated options are left
out (policy.disaggregated: never). Deterministic (derandomize): the same cases run every time;
the searches that found the explicit examples ran with max_examples in the hundreds.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given
from hypothesis import strategies as st
from support.hunting import property_settings

from llmsizer.base.errors import LlmsizerError
from llmsizer.inputs.loader import Loaded, load_from_text
from llmsizer.inputs.schema import Requirements
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import estimate, size
from llmsizer.sizing.results import Option, Result

CAT = load_catalog()
DENSE = ["llama-3.1-8b", "llama-3.1-70b", "qwen2.5-72b", "mistral-7b", "gemma-2-27b",
         "qwen3-32b", "llama-3.2-3b"]
MOE = ["mixtral-8x7b", "gpt-oss-120b", "gpt-oss-20b", "qwen3-30b-a3b", "deepseek-v3",
       "qwen3-235b-a22b", "llama-4-scout"]
GPUS = ["h100-sxm", "h200-sxm", "l40s", "a100-sxm", "b200", "mi300x", "l4", "rtx-pro-6000",
        "h100-pcie"]
SETTINGS = property_settings(12, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
PERCENTILE_KEYS = ["ttft_p90_s", "ttft_p95_s", "ttft_p99_s", "itl_p50_ms", "itl_p95_ms",
                   "itl_p99_ms"]


@st.composite
def workloads(draw: st.DrawFn, models: list[str]) -> dict[str, Any]:
    model = draw(st.sampled_from(models))
    w: dict[str, Any] = {"name": "w", "model": model}
    load = draw(st.sampled_from(["users", "rate", "population"]))
    if load == "users":
        w["concurrent_users"] = draw(st.integers(1, 3000))
    elif load == "rate":
        w["requests_per_s"] = draw(st.floats(0.05, 200))
        if draw(st.booleans()):
            w["burstiness"] = draw(st.floats(0, 3, allow_subnormal=False))  # refused
    else:
        w["named_users"] = draw(st.integers(1, 50_000))
        w["requests_per_user_per_hour"] = draw(st.floats(0.5, 60))
        w["peak_to_average"] = draw(st.floats(1, 4))
    out = draw(st.sampled_from([16, 200, 500, 1500, 4000]))
    prompt = draw(st.sampled_from([64, 500, 2000, 8000, 30_000, 100_000]))
    w["prompt_tokens"] = min(prompt, CAT.models[model].max_context - out)
    w["output_tokens"] = out
    if draw(st.booleans()):
        w["prefix_cache_hit"] = draw(st.sampled_from([0.0, 0.3, 0.8]))
    t: dict[str, Any] = {}
    if draw(st.booleans()):
        t["tokens_per_s_per_user"] = draw(st.floats(5, 80))
    else:
        t["response_time_s"] = draw(st.floats(2, 200))
    if draw(st.booleans()):
        t["ttft_s"] = draw(st.floats(0.2, 10))
    if draw(st.booleans()):
        key = draw(st.sampled_from(PERCENTILE_KEYS))
        t[key] = draw(st.floats(0.2, 20) if key.endswith("_s") else st.floats(10, 200))
    if draw(st.booleans()):
        t["e2e_p95_s"] = draw(st.floats(2, 200))
    w["targets"] = t
    if draw(st.integers(0, 5)) == 0:
        w["speculative"] = {"method": draw(st.sampled_from(["eagle", "ngram"])),
                            "draft_tokens": 3, "acceptance_length": 2.2}
    return w


@st.composite
def accounts(draw: st.DrawFn, models: list[str] | None = None) -> dict[str, Any]:
    ws = draw(st.lists(workloads(models or DENSE + MOE), min_size=1, max_size=2))
    for i, w in enumerate(ws):
        w["name"] = f"w{i}"
    return {"schema_version": 1, "account": {"name": "t"}, "workloads": ws,
            "hardware": {"gpus": draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=3,
                                               unique=True)),
                         "weight_precisions": draw(st.sampled_from(
                             [["fp8"], ["fp8", "bf16"], ["bf16"], ["int4", "fp8"]])),
                         "kv_precisions": ["fp8"]},
            "policy": {"headroom": draw(st.sampled_from([0, 0.1, 0.25, 0.5])),
                       "survive_node_loss": draw(st.booleans()), "disaggregated": "never",
                       "deployment": draw(st.sampled_from(["on_prem", "cheapest"]))}}


def _size(d: dict[str, Any]) -> Result | None:
    """The account sized, or None where the loader refuses it (a generated prompt too long
    for a GPU list, say): the invariants concern accounts that size."""
    try:
        return size(load_from_text(yaml.safe_dump(d), "t.yaml"), CAT)
    except LlmsizerError:
        return None


def _options(r: Result) -> dict[tuple[int, str], Option]:
    return {(i, o.id): o for i, w in enumerate(r.workloads) for o in w.options}


def _never_easier(easy: Result, hard: Result) -> None:
    """``hard`` asks more than ``easy``: an option it finds feasible is feasible in ``easy``
    with no more GPUs, and where every workload has a recommendation in both, its plan
    costs no less."""
    before = _options(easy)
    for key, o in _options(hard).items():
        was = before[key]
        if o.feasible:
            assert was.feasible, (key, was.reason)
            assert float(o.values["gpus"]) >= float(was.values["gpus"]), key
    if all(w.recommended for w in [*easy.workloads, *hard.workloads]):
        # the cost of the way recommended: under "cheapest" a light load may rent (2 x H200,
        # USD 61.8 k a year in the cloud, 184 k if bought) where three times the load buys
        # (4 x H100, USD 95.9 k): the bought figure falls, what the customer pays does not
        # (gpt-oss-20b, 30,000-token prompts, 1 -> 3 requests/s, 2 s answers; session 20)
        assert _paid(hard) >= _paid(easy) * (1 - 1e-9)


def _paid(r: Result) -> float:
    """What the plan costs a year the way the proposal recommends running it."""
    d = r.deployment
    return d.annual_cost.get(d.recommended, r.totals.annual_cost_onprem)


def _more_load(w: dict[str, Any], factor: float) -> dict[str, Any]:
    w = copy.deepcopy(w)
    for key in ("concurrent_users", "named_users"):
        if key in w:
            w[key] = max(w[key] + 1, int(w[key] * factor))
            return w
    w["requests_per_s"] *= factor
    return w


@SETTINGS
@given(accounts(), st.floats(1.01, 4))
def test_more_load_never_needs_fewer_gpus(d: dict[str, Any], factor: float) -> None:
    more = copy.deepcopy(d)
    more["workloads"][0] = _more_load(d["workloads"][0], factor)
    easy, hard = _size(d), _size(more)
    if easy is not None and hard is not None:
        _never_easier(easy, hard)


def _tighter(t: dict[str, Any], key: str, factor: float) -> dict[str, Any]:
    t = dict(t)
    t[key] = t[key] * factor if key == "tokens_per_s_per_user" else t[key] / factor
    return t


@SETTINGS
@given(accounts(DENSE), st.floats(1.01, 4), st.data())
def test_a_tighter_target_never_needs_fewer_gpus(d: dict[str, Any], factor: float,
                                                 data: st.DataObject) -> None:
    """Dense models: an MoE model's expert-read share is taken at a bound that grows with a
    looser tokens/s target (test_moe_expert_share_follows_the_target_not_the_batch)."""
    targets = d["workloads"][0]["targets"]
    key = data.draw(st.sampled_from(sorted(targets)))
    tight = copy.deepcopy(d)
    tight["workloads"][0]["targets"] = _tighter(targets, key, factor)
    easy, hard = _size(d), _size(tight)
    if easy is not None and hard is not None:
        _never_easier(easy, hard)


@SETTINGS
@given(accounts(), st.data())
def test_a_higher_percentile_never_needs_fewer_gpus(d: dict[str, Any],
                                                    data: st.DataObject) -> None:
    """The same bound on the p99 as on the p95 (or p95 as p90...) asks more."""
    targets = d["workloads"][0]["targets"]
    stated = [k for k in PERCENTILE_KEYS if k in targets and "_p99" not in k]
    key = stated[0] if stated else "ttft_p90_s"
    targets.setdefault(key, 5.0)
    kind, p = key.split("_p")
    pct, unit = p.split("_")
    higher = data.draw(st.sampled_from([q for q in ("90", "95", "99") if int(q) > int(pct)]))
    strict = copy.deepcopy(d)
    t = strict["workloads"][0]["targets"]
    t[f"{kind}_p{higher}_{unit}"] = t.pop(key)
    easy, hard = _size(d), _size(strict)
    if easy is not None and hard is not None:
        _never_easier(easy, hard)


# Found by this search (headroom 0.1 against 0.474): the plan bought an H100 PCIe node for
# gpt-oss-20b at 285,642 a year on 12 GPUs, while gpt-oss-20b's option on the B200 node the
# plan already bought (past its first 16 options) gives 210,963 on 8; the search now tries
# each workload's best option on every node group the plan buys (plan_search.choose_plan).
HEADROOM_CASE = {
    "schema_version": 1, "account": {"name": "t"},
    "hardware": {"gpus": ["b200", "h100-pcie", "mi300x"], "kv_precisions": ["fp8"],
                 "weight_precisions": ["fp8", "bf16"]},
    "policy": {"deployment": "on_prem", "disaggregated": "never", "headroom": 0.1,
               "survive_node_loss": False},
    "workloads": [
        {"name": "w0", "model": "qwen3-235b-a22b", "output_tokens": 16, "prompt_tokens": 64,
         "requests_per_s": 156.0639201620303,
         "targets": {"e2e_p95_s": 38.83448195432776, "itl_p95_ms": 123.19141529053336,
                     "response_time_s": 10.0, "ttft_p99_s": 11.173757568306195}},
        {"name": "w1", "model": "gpt-oss-20b", "output_tokens": 16, "prompt_tokens": 8000,
         "prefix_cache_hit": 0.3, "requests_per_s": 14.544877825438084,
         "targets": {"itl_p99_ms": 128.74544611846926, "response_time_s": 106.87647269838648,
                     "ttft_p95_s": 12.712884308183893, "ttft_s": 4.5465148592558595}}]}


@SETTINGS
@given(accounts(), st.floats(0.01, 0.5))
@example(HEADROOM_CASE, 0.374090764992003)
def test_more_headroom_never_needs_fewer_gpus(d: dict[str, Any], more: float) -> None:
    roomier = copy.deepcopy(d)
    roomier["policy"]["headroom"] = d["policy"]["headroom"] + more
    easy, hard = _size(d), _size(roomier)
    if easy is not None and hard is not None:
        _never_easier(easy, hard)


def test_the_headroom_case_buys_one_b200_node() -> None:
    """The example above in figures: both workloads on the one B200 node (8 GPUs)."""
    r = _size(HEADROOM_CASE)
    assert r is not None
    assert [g.gpu for g in r.plan.node_groups] == ["b200"]
    assert r.totals.gpus_purchased == 8


@SETTINGS
@given(accounts())
def test_surviving_a_node_loss_never_needs_fewer_gpus(d: dict[str, Any]) -> None:
    d["policy"]["survive_node_loss"] = False
    safe = copy.deepcopy(d)
    safe["policy"]["survive_node_loss"] = True
    easy, hard = _size(d), _size(safe)
    if easy is not None and hard is not None:
        _never_easier(easy, hard)


@SETTINGS
@given(accounts(), st.floats(0.3, 3))
def test_gpu_prices_never_change_the_gpus_an_option_needs(d: dict[str, Any],
                                                          factor: float) -> None:
    d["policy"]["deployment"] = "on_prem"
    repriced = copy.deepcopy(d)
    repriced["costs"] = {"gpu_prices": {g: (CAT.gpus[g].price_usd or 0) * factor
                                        for g in d["hardware"]["gpus"]}}
    a, b = _size(d), _size(repriced)
    if a is None or b is None:
        return
    before = _options(a)
    for key, o in _options(b).items():
        assert o.feasible == before[key].feasible, key
        assert o.values["gpus"] == before[key].values["gpus"], key


@SETTINGS
@given(accounts())
def test_plan_totals_are_the_sum_of_its_node_groups(d: dict[str, Any]) -> None:
    """GPUs, nodes, capex and annual cost: the totals add up the node groups; with
    ``deployment: cheapest`` the recommended way is the one that costs least."""
    r = _size(d)
    if r is None:
        return
    groups = [*r.plan.node_groups, *r.plan.retrieval_groups]
    for name in ("gpus_purchased", "gpus_used", "nodes", "capex", "annual_cost_onprem"):
        assert math.isclose(getattr(r.totals, name), sum(getattr(g, name) for g in groups),
                            rel_tol=1e-9, abs_tol=1e-6), name
    assert sum(p.gpus + p.prefill_gpus for p in r.plan.pools) <= r.totals.gpus_used
    dep = r.deployment
    if d["policy"]["deployment"] == "cheapest" and dep.annual_cost:
        assert dep.annual_cost[dep.recommended] == min(dep.annual_cost.values())


@SETTINGS
@given(accounts())
def test_a_population_and_its_arrival_rate_size_alike(d: dict[str, Any]) -> None:
    """named_users x requests per user-hour x peak-to-average / 3600 stated as
    requests_per_s gives the same options and plan."""
    pop = {"named_users": 1200, "requests_per_user_per_hour": 6.0, "peak_to_average": 2.5}
    w = d["workloads"][0]
    for key in ("concurrent_users", "requests_per_s", "burstiness"):
        w.pop(key, None)
    w.update({k: w.get(k, v) for k, v in pop.items()})
    rate = copy.deepcopy(d)
    r0 = rate["workloads"][0]
    r0["requests_per_s"] = (r0.pop("named_users") * r0.pop("requests_per_user_per_hour")
                            * r0.pop("peak_to_average") / 3600)
    a, b = _size(d), _size(rate)
    if a is None or b is None:
        return
    before = _options(a)
    for key, o in _options(b).items():
        assert (o.feasible, o.values["gpus"]) == (before[key].feasible,
                                                  before[key].values["gpus"]), key
    assert a.totals.gpus_purchased == b.totals.gpus_purchased


@property_settings(100, SETTINGS)
@given(st.sampled_from(DENSE + MOE), st.sampled_from(GPUS), st.sampled_from([1, 2, 4, 8]),
       st.sampled_from(["fp8", "bf16", "int4", "fp4", "mxfp4"]), st.sampled_from(["fp8", "bf16"]),
       st.integers(1, 300), st.sampled_from([64, 500, 2000, 8000, 30_000]),
       st.sampled_from([16, 200, 1024, 4000]))
# found by this search: estimate gave 37.97 tok/s per user, size 34.60 (the H100 PCIe has no
# calibration rows: size derated it by 0.903, estimate did not)
@example("mistral-7b", "h100-pcie", 1, "bf16", "fp8", 144, 64, 16)
@example("qwen3-30b-a3b", "h200-sxm", 4, "fp4", "fp8", 11, 500, 1024)
def test_size_and_estimate_agree_on_any_configuration(model: str, gpu: str, tp: int,
                                                      weights: str, kv: str, users: int,
                                                      prompt: int, output: int) -> None:
    """tests/test_consistency.py's check (per-user tok/s, TPOT, TTFT within 1 %) on random
    configurations: `size` with a loose target, where one replica holds every user, against
    `estimate` at concurrency = users."""
    assume(prompt + output <= CAT.models[model].max_context)
    try:
        req = Requirements.model_validate({
            "schema_version": 1, "account": {"name": "t"},
            "workloads": [{"name": "w", "model": model, "concurrent_users": users,
                           "prompt_tokens": prompt, "output_tokens": output,
                           "targets": {"tokens_per_s_per_user": 0.5}}],
            "hardware": {"gpus": [gpu], "weight_precisions": [weights], "kv_precisions": [kv],
                         "tensor_parallel": [tp]},
            "policy": {"headroom": 0, "survive_node_loss": False, "disaggregated": "never"}})
    except ValueError:  # a TP the GPU's node does not hold, a precision the model lacks
        assume(False)
        raise
    r = size(Loaded(req=req, models={model: CAT.models[model]}, source="t"), CAT)
    plain = [o for o in r.workloads[0].options if o.id.count("/") == 3]
    assume(plain and plain[0].feasible and float(plain[0].values["batch_served"]) == users)
    o = plain[0]
    e = estimate(model_id=model, gpu=gpu, tp=tp, replicas=1, weight_precision=weights,
                 kv_precision=kv, prompt_tokens=prompt, output_tokens=output,
                 concurrency=users, catalog=CAT)
    assert e["batch_per_replica"] == users
    for name in ("tokens_per_s_per_user", "tpot_ms", "ttft_ms"):
        assert float(o.values[name]) == pytest.approx(e[name], rel=0.01), name


def _expert_case(response_time_s: float) -> dict[str, Any]:
    return {"schema_version": 1, "account": {"name": "t"},
            "workloads": [{"name": "w0", "model": "gpt-oss-20b", "requests_per_s": 200,
                           "prompt_tokens": 30_000, "output_tokens": 200,
                           "targets": {"response_time_s": response_time_s,
                                       "ttft_s": 6.439216316240287}}],
            "hardware": {"gpus": ["l4"], "weight_precisions": ["fp8"],
                         "kv_precisions": ["fp8"], "tensor_parallel": [2]},
            "policy": {"headroom": 0, "survive_node_loss": False, "disaggregated": "never"}}


def test_moe_expert_share_follows_the_target_not_the_batch() -> None:
    """Found by this search. gpt-oss-20b on L4 TP2, 200 requests/s, 30,000-token prompts:
    the first-token target holds the looser 23.2 s response time to a batch of 3, yet its
    step read the experts of the 6-sequence batch its tokens/s target allows (55 % of them):
    2,414 GPUs against 2,408 for the tighter 9.1 s (a batch of 2, 23 %). The batch limits
    are now solved a second time with the experts read at the first estimate of the batch
    (first_pass.py): the looser target reads the 3-sequence batch's 33 % and needs 2,186."""
    loose, tight = _size(_expert_case(23.166221375040028)), _size(_expert_case(9.129341673076034))
    assert loose is not None and tight is not None
    a, b = (next(o for o in r.workloads[0].options if o.id == "l4/fp8/kv-fp8/tp2")
            for r in (loose, tight))
    assert a.feasible and b.feasible
    assert a.values["batch_per_replica"] == 3 and b.values["batch_per_replica"] == 2
    for o in (a, b):  # the experts of the batch served: 1 - (1 - 4/32)^B
        assert o.values["batch_experts_read"] == o.values["batch_served"]
        assert float(o.values["experts_read_fraction"]) == pytest.approx(
            1 - (1 - 4 / 32) ** float(o.values["batch_served"]), rel=1e-12)
    assert float(a.values["gpus"]) <= float(b.values["gpus"])


# Found by this search (requests/s 74.4 against 153.0): at the lower load the plan bought two
# A100 nodes (16 GPUs, 184,064 a year) while one H100 node held both workloads at the higher
# load (8 GPUs, 167,118). Moving one workload at a time never empties two half-used nodes
# into one; seeding each GPU and platform with every workload's best option there finds it
# (95,901 on 4 H100s). Landed in plan_search.py; it also re-planned enterprise-multi
# (28 GPUs on 7 servers -> 24 B200 on 3).
LOAD_CASE = {
    "schema_version": 1, "account": {"name": "t"},
    "hardware": {"gpus": ["h200-sxm", "a100-sxm", "h100-sxm"], "kv_precisions": ["fp8"],
                 "weight_precisions": ["int4", "fp8"]},
    "policy": {"deployment": "on_prem", "disaggregated": "never", "headroom": 0.1,
               "survive_node_loss": False},
    "workloads": [
        {"name": "w0", "model": "mixtral-8x7b", "output_tokens": 200, "prompt_tokens": 64,
         "prefix_cache_hit": 0.8, "requests_per_s": 74.38703250059108,
         "targets": {"e2e_p95_s": 154.42577547802935, "itl_p99_ms": 155.47486522252655,
                     "response_time_s": 190.71674117574688, "ttft_p90_s": 18.051183382345954,
                     "ttft_s": 0.3333333333333333}},
        {"name": "w1", "model": "llama-3.2-3b", "named_users": 2000, "output_tokens": 16,
         "peak_to_average": 2.613163960981672, "prompt_tokens": 500,
         "requests_per_user_per_hour": 44.708985476042415,
         "targets": {"e2e_p95_s": 2.00001, "itl_p50_ms": 138.0326617457809,
                     "tokens_per_s_per_user": 63.11178363540292, "ttft_p95_s": 1.9}}]}


def test_more_load_never_finds_a_cheaper_plan() -> None:
    # Once failed: one-at-a-time moves kept two half-used A100 nodes (184,064 a year) where more
    # load found one H100 node at 167,118; plan_search now seeds each GPU and platform with
    # every workload's best option there.
    more = copy.deepcopy(LOAD_CASE)
    more["workloads"][0]["requests_per_s"] = 153.0422362050215
    easy, hard = _size(LOAD_CASE), _size(more)
    assert easy is not None and hard is not None
    assert all(w.recommended for w in [*easy.workloads, *hard.workloads])
    assert hard.totals.annual_cost_onprem >= easy.totals.annual_cost_onprem


def _one_at_a_time(load: dict[str, Any]) -> Option:
    d = {"schema_version": 1, "account": {"name": "t"},
         "workloads": [{"name": "w0", "model": "qwen3-30b-a3b", **load, "prompt_tokens": 2000,
                        "output_tokens": 200, "targets": {"tokens_per_s_per_user": 20}}],
         "hardware": {"gpus": ["h100-pcie"], "weight_precisions": ["fp8"],
                      "kv_precisions": ["fp8"], "tensor_parallel": [1]},
         "policy": {"headroom": 0, "survive_node_loss": False, "disaggregated": "never"}}
    r = _size(d)
    assert r is not None
    return next(o for o in r.workloads[0].options if o.id == "h100-pcie/fp8/kv-fp8/tp1")


def test_one_request_at_a_time_reads_the_same_experts_stated_either_way() -> None:
    """Found by this search (a longer prompt made an MoE option feasible: fewer sequences fit,
    so fewer experts were read). qwen3-30b-a3b on one H100 PCIe, one request in flight: as
    one concurrent user, 6 % of the experts read and 215 tok/s; as 0.01 requests/s (the
    same single request), 99.8 % and 51 tok/s. The share is now read at most at the
    concurrency the rate causes at the largest batch's step (decode.py concurrency_bound):
    1 here, so 6 % and 215 tok/s either way."""
    users, rate = _one_at_a_time({"concurrent_users": 1}), _one_at_a_time({"requests_per_s": 0.01})
    assert users.values["batch_served"] == rate.values["batch_served"] == 1
    assert float(rate.values["tokens_per_s_per_user"]) == pytest.approx(
        float(users.values["tokens_per_s_per_user"]), rel=0.01)


@pytest.mark.parametrize("rate", [0.01, 1, 10, 100])
def test_the_experts_read_bound_holds_the_concurrency_a_rate_causes(rate: float) -> None:
    """decode.py concurrency_bound(_2): Little's law at the slower steps of a larger batch is
    at or above the concurrency served, so the experts are never read at fewer sequences
    than a replica runs. At 1 request/s the first bound (at the 93-sequence step) is 5 and
    the second (at 5) is 2, the concurrency itself: the share is exact, as for 2 users."""
    v = _one_at_a_time({"requests_per_s": rate}).values
    assert float(v["concurrent_users"]) <= float(v["concurrency_bound_2"]) \
        <= float(v["concurrency_bound"])
    assert float(v["batch_served"]) <= float(v["batch_experts_read"]) \
        <= float(v["batch_upper_bound"])
    if rate == 1:
        users = _one_at_a_time({"concurrent_users": 2}).values
        assert v["batch_experts_read"] == v["batch_served"] == 2
        assert float(v["experts_read_fraction"]) == float(users["experts_read_fraction"])


def test_a_speed_rejection_never_prints_the_target_as_the_speed() -> None:
    """Found while minimising: gpt-oss-120b BF16 on 2 B200s reaches 174.38 tok/s for one
    user against 1,500 tokens in 8.6 s = 174.42; the reason read 'only 174.4 tok/s ...;
    target 174.4 tok/s'."""
    r = _size({"schema_version": 1, "account": {"name": "t"},
               "workloads": [{"name": "w0", "model": "gpt-oss-120b", "requests_per_s": 1.25,
                              "prompt_tokens": 64, "output_tokens": 1500,
                              "targets": {"response_time_s": 8.6}}],
               "hardware": {"gpus": ["b200"], "weight_precisions": ["bf16"],
                            "kv_precisions": ["fp8"], "tensor_parallel": [2]},
               "policy": {"disaggregated": "never"}})
    assert r is not None
    o = next(o for o in r.workloads[0].options if o.id == "b200/bf16/kv-fp8/tp2")
    assert o.reason == ("even one user gets only 174.38 tok/s here (bandwidth ceiling); "
                        "target 174.42 tok/s")


def _speculating(acceptance: float) -> Option:
    d = {"schema_version": 1, "account": {"name": "t"},
         "workloads": [{"name": "w0", "model": "llama-3.2-3b", "named_users": 2802,
                        "requests_per_user_per_hour": 22.121871740891812,
                        "peak_to_average": 3.6945046782548703, "prompt_tokens": 2000,
                        "output_tokens": 500,
                        "speculative": {"method": "eagle", "draft_tokens": 1,
                                        "acceptance_length": acceptance},
                        "targets": {"response_time_s": 196.7345729030319, "ttft_s": 0.2}}],
         "hardware": {"gpus": ["h100-sxm"], "weight_precisions": ["fp8"],
                      "kv_precisions": ["fp8"], "tensor_parallel": [1]},
         "policy": {"headroom": 0.1, "survive_node_loss": False, "disaggregated": "never"}}
    r = _size(d)
    assert r is not None
    return next(o for o in r.workloads[0].options if o.id == "h100-sxm/fp8/kv-fp8/tp1")


def test_speculation_shortens_the_time_a_request_holds_its_slot() -> None:
    """Found by this search (a lower acceptance length needed 5 GPUs, a higher one 6).
    llama-3.2-3b on one H100, 2802 users at 22 requests an hour: accepting 1.6 tokens a step
    cuts the time per token from 10.6 to 6.6 ms, so a request lasts ~3.5 s instead of ~5.5 s;
    the slot time counted each output token as a whole step (queueing.py SLOT_STEPS), so it
    (5.29 against 5.33 s) and the concurrency (337 against 339) hardly moved."""
    fast, plain = _speculating(1.6052024013292971), _speculating(1.0)
    assert float(fast.values["tpot_ms"]) < 0.7 * float(plain.values["tpot_ms"])
    assert float(fast.values["concurrent_users"]) <= 0.8 * float(plain.values["concurrent_users"])
    assert float(fast.values["gpus"]) <= float(plain.values["gpus"])  # 4 against 5 (was 6)


def test_three_times_the_load_may_buy_where_one_rents_and_pays_more() -> None:
    """Found in session 20's suite run: gpt-oss-20b, 30,000-token prompts, 2 s answers,
    deployment cheapest. At 1 request/s the cheapest way rents 2 x H200 (USD 61.8 k a year;
    buying them would cost 184 k), at 3 requests/s it buys 4 x H100 (95.9 k): the bought
    figure falls while what the customer pays rises, so the invariant above compares the
    way recommended, not the bought figure."""
    d = {"schema_version": 1, "account": {"name": "t"},
         "workloads": [{"name": "w0", "model": "gpt-oss-20b", "requests_per_s": 1.0,
                        "prompt_tokens": 30000, "output_tokens": 200,
                        "targets": {"response_time_s": 2.0}}],
         "hardware": {"gpus": ["h100-sxm", "h200-sxm"], "weight_precisions": ["fp8"],
                      "kv_precisions": ["fp8"]},
         "policy": {"headroom": 0, "survive_node_loss": False, "disaggregated": "never",
                    "deployment": "cheapest"}}
    more = copy.deepcopy(d)
    more["workloads"][0] = _more_load(d["workloads"][0], 3.0)
    easy, hard = _size(d), _size(more)
    assert easy is not None and hard is not None
    assert (easy.deployment.recommended, easy.totals.gpus) == ("cloud", 2)
    assert (hard.deployment.recommended, hard.totals.gpus) == ("on_prem", 4)
    assert hard.totals.annual_cost_onprem < easy.totals.annual_cost_onprem
    assert _paid(hard) > _paid(easy)
    _never_easier(easy, hard)


def test_a_rate_load_asks_for_the_same_tokens_whatever_its_targets() -> None:
    """Found with the test above (session 20): a tighter first token made the hosted API
    cheaper (USD 157 k -> 94 k a year for Llama 3.1 8B at 1 request/s, 30,000 tokens in, 200
    out, 4 s answers, first token 2 s -> 1 s), and "cheapest" then recommended it. Output
    tokens a year were Little's law's users (rounded up) x the speed each must see (200 /
    (4 - first token) tok/s); at a stated rate they are rate x output tokens: 1 x 200 x 60 %
    average load x 3,600 x 8,760 h / 1e6 = 3,784.32 million (schema defaults)."""
    d = {"schema_version": 1, "account": {"name": "t"},
         "workloads": [{"name": "w0", "model": "llama-3.1-8b", "requests_per_s": 1.0,
                        "prompt_tokens": 30000, "output_tokens": 200,
                        "targets": {"response_time_s": 4.0, "ttft_s": 2.0}}],
         "hardware": {"gpus": ["h100-sxm"], "weight_precisions": ["fp8"],
                      "kv_precisions": ["fp8"]},
         "policy": {"headroom": 0, "disaggregated": "never", "deployment": "cheapest"}}
    tighter = copy.deepcopy(d)
    tighter["workloads"][0]["targets"]["ttft_s"] = 1.0
    a, b = _size(d), _size(tighter)
    assert a is not None and b is not None
    for r in (a, b):
        o = next(o for o in r.workloads[0].options if o.id == r.workloads[0].recommended)
        assert float(o.values["million_tokens_per_year"]) == pytest.approx(3784.32)
    assert a.deployment.annual_cost["api"] == pytest.approx(b.deployment.annual_cost["api"])
    assert _paid(b) >= _paid(a)
