"""Inter-token latency percentiles are never below the mean step once every step carries
prefill (docs/queueing.md, "Percentile targets"): the mean step (TPOT) averages the
chunk-carrying steps with plain ones, so a chunk-carrying step is at least the mean. A
call-centre review found itl_p50 ... p99 at 14.76 ms under a TPOT of 24.90 ms (the prompts
brought ~2.9 chunks per step, the chunk step added one), so an ITL target of 20 ms read as
met at a mean step of 24.9 ms. Forward (chunk_step_ms) and inverse (_itl_batch) move
together."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from support.hunting import property_settings

from llmsizer.inputs.loader import load
from llmsizer.inputs.schema import Requirements
from llmsizer.model.calculations import CALCULATIONS
from llmsizer.model.calculations.inputs import PERCENTILES
from llmsizer.model.calculations.queueing import _itl_batch
from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import evaluate
from llmsizer.sizing.engine import size
from llmsizer.sizing.evaluate import (
    Choice,
    account_inputs,
    build_tables,
    evaluate_choice,
    workload_inputs,
)

CAT = load_catalog()
ROOT = Path(__file__).resolve().parents[1]
_EXPR = {c.name: c.expr for c in CALCULATIONS}
# The review's account (/tmp/fresh-accounts/03-call-centre.yaml): Llama 3.1 8B, 3,500 named
# agents x 20 requests an hour x peak 2.5 (48.6 requests/s), burstiness 1.5, 1,800-token
# prompts, 120-token answers; recommended H100 SXM FP8, KV FP8, TP1 on a Dell XE8640.
_CALL_CENTRE: dict[str, Any] = {
    "named_users": 3500, "requests_per_user_per_hour": 20, "peak_to_average": 2.5,
    "burstiness": 1.5, "prompt_tokens": 1800, "output_tokens": 120}


def _values(targets: dict[str, float], load: dict[str, Any] | None = None,
            model: str = "llama-3.1-8b", gpu: str = "h100-sxm", tp: int = 1,
            platform: str | None = None,
            overrides: dict[str, float] | None = None) -> dict[str, Any]:
    req = Requirements.model_validate({
        "schema_version": 1, "account": {"name": "t"},
        "workloads": [{"name": "w", "model": model, **(load or _CALL_CENTRE),
                       "targets": targets}]})
    base = {**account_inputs(req, CAT), **workload_inputs(req.workloads[0], CAT.models[model])}
    choice = Choice(gpu, platform or CAT.gpus[gpu].default_platform, "fp8", "fp8", tp)
    return evaluate_choice(base, choice, build_tables(req, CAT), req, CAT, overrides)


def _unclipped_share(v: dict[str, Any]) -> float:
    """chunk_step_share before its MIN(1, ...): prompts started per step x chunks each."""
    return (v["replica_request_rate_per_s"] * v["tpot_ms"] / 1000
            * max(1.0, v["prefill_tokens"] / v["prefill_chunk_tokens"]))


def _one_chunk_step(v: dict[str, Any]) -> float:
    return v["decode_only_step_ms"] + v["prefill_ms_per_token"] * min(
        v["prefill_tokens"], v["prefill_chunk_tokens"])


def test_the_call_centre_itl_is_at_least_its_mean_step() -> None:
    """The review's case at its recommended batch (92, set by 40 tok/s per user): the
    prompts bring ~2.9 chunks of prefill per step, so every step carries prefill and every
    ITL percentile is the mean step (24.90 ms), not one chunk over a plain step (14.76)."""
    v = _values({"tokens_per_s_per_user": 40, "ttft_p99_s": 0.8, "itl_p99_ms": 50},
                platform="dell-xe8640")
    assert v["batch_served"] == 92
    assert 24.8 < v["tpot_ms"] < 25.0
    assert 2.8 < _unclipped_share(v) < 3.0  # 26.9 prompts/s x 24.9 ms x 4.3 chunks each
    assert 14.7 < _one_chunk_step(v) < 14.8 < v["tpot_ms"]
    for q in PERCENTILES:
        assert v[f"itl_p{q}_ms"] == v["chunk_step_ms"] == v["tpot_ms"]


def test_an_itl_target_under_the_mean_step_shrinks_the_call_centre_batch() -> None:
    """The same load with a p99 ITL of 20 ms (the review's example): one chunk over a plain
    step stays under 20 ms up to batch 180, the mean step only up to 69; the inverse is the
    forward's exact largest batch (met there, missed one sequence later)."""
    targets = {"tokens_per_s_per_user": 10, "itl_p99_ms": 20}
    v = _values(targets, platform="dell-xe8640")
    batch = v["batch_by_itl_p99"]
    assert v["batch_per_replica"] == v["batch_served"] == batch == 69
    assert v["itl_p99_ms"] <= 20 and v["percentile_slo_met"] == 1
    over = _values({"tokens_per_s_per_user": 10}, platform="dell-xe8640",
                   overrides={"max_batch_per_replica": batch + 1})
    assert over["batch_served"] == batch + 1
    assert _unclipped_share(over) >= 1 and _one_chunk_step(over) < 20
    assert over["itl_p99_ms"] == over["tpot_ms"] > 20


@property_settings(300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b"]),
       st.sampled_from(["h100-sxm", "h200-sxm", "l40s"]), st.sampled_from([1, 2, 4]),
       st.integers(100, 8000), st.integers(20, 1000), st.floats(0.2, 100),
       st.floats(0.5, 3.0), st.floats(5, 60))
def test_no_itl_percentile_is_below_the_mean_step_once_every_step_carries_prefill(
        model: str, gpu: str, tp: int, prompt: int, output: int, rate: float,
        burstiness: float, tok_s: float) -> None:
    """Random loads through the engine: where the unclipped chunk share is >= 1, every ITL
    percentile is at least TPOT; everywhere the percentiles are ordered p50 <= ... <= p99 and
    lie between the plain step and the chunk step."""
    if tp > CAT.platforms[CAT.gpus[gpu].default_platform].gpus_per_node:
        return
    load = {"requests_per_s": rate, "burstiness": burstiness, "prompt_tokens": prompt,
            "output_tokens": output}
    v = _values({"tokens_per_s_per_user": tok_s}, load, model=model, gpu=gpu, tp=tp)
    itl = [v[f"itl_p{q}_ms"] for q in PERCENTILES]
    assert itl == sorted(itl)
    assert v["decode_only_step_ms"] <= itl[0] and itl[-1] <= v["chunk_step_ms"]
    if _unclipped_share(v) >= 1:
        assert min(itl) >= v["tpot_ms"]


_FORWARD = ("request_slot_ms_per_seq", "tpot_ms", "request_slot_ms",
            "replica_request_rate_per_s", "decode_only_step_ms", "chunk_step_ms",
            "chunk_step_share", *(f"itl_p{q}_ms" for q in PERCENTILES))


def _forward(env: dict[str, float], batch: int) -> dict[str, float]:
    at = {**env, "batch_served": float(batch)}
    for name in _FORWARD:
        at[name] = float(evaluate(_EXPR[name], at))
    return at


@property_settings(300, deadline=None)
@given(st.sampled_from(PERCENTILES), st.floats(2, 40), st.floats(0.005, 1.0),
       st.floats(0.002, 0.5), st.integers(50, 16000), st.sampled_from([256, 418, 2048, 8192]),
       st.integers(10, 2000), st.floats(0.5, 1.5), st.floats(3, 300))
def test_the_itl_inverse_is_the_forward_largest_batch(
        q: int, a: float, b_decode: float, per_token: float, prompt: int, chunk: int,
        output: int, spec: float, target: float) -> None:
    """Random steps (a 2-40 ms, b 0.005-1 ms per sequence, prefill 0.002-0.5 ms per token,
    prompts 50-16,000 tokens, speculation factor 0.5-1.5): ROUNDDOWN of _itl_batch is the
    largest batch whose forward itl_p{q}_ms meets the target (bisection: the forward grows
    with B), the mean-step floor included."""
    pps = per_token * prompt / output
    env = {"step_fixed_ms": a, "step_ms_per_seq": b_decode + pps, "prefill_ms_per_seq_step": pps,
           "prefill_ms_per_token": per_token, "prefill_tokens": float(prompt),
           "prefill_chunk_tokens": float(chunk), "spec_tpot_factor": spec,
           "output_tokens": float(output), "ttft_queue_steps": 0.5 + prompt / chunk,
           "scheduler_steps": 13.0, "disagg_prefill_gpus": 0.0,
           "max_batch_per_replica": 4096.0, f"target_itl_p{q}_ms": target}
    env["prefill_compute_ms"] = per_token * prompt
    for name in ("ttft_own_prefill_ms", "ttft_prefill_excess_ms"):  # short answers: > 0
        env[name] = float(evaluate(_EXPR[name], env))
    env["request_slot_fixed_ms"] = per_token * prompt + (13 + output) * a - env[
        "ttft_own_prefill_ms"]
    env["request_slot_ms_per_seq"] = float(evaluate(_EXPR["request_slot_ms_per_seq"], env))
    lo, hi = 0, 4096
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _forward(env, mid)[f"itl_p{q}_ms"] <= target else (lo, mid - 1)
    inverse = float(evaluate(_itl_batch(q), env))
    if abs(inverse - round(inverse)) < 1e-9:  # a boundary within rounding: either side
        return
    assert max(0, min(4096, math.floor(inverse))) == lo
    if lo and _unclipped_share(_forward(env, lo)) >= 1:
        assert _forward(env, lo)[f"itl_p{q}_ms"] >= _forward(env, lo)["tpot_ms"]


def test_a_speculative_plain_step_is_positive() -> None:
    """tests/data/frontier-mtp-p95.yaml on B200 FP4 TP8 (MTP, speculative TPOT factor 0.37):
    the plain step took the amortised prefill off TPOT without the factor TPOT carries,
    22.2 ms off a 20.0 ms TPOT, and read -2.2 ms, so did its ITL p50 (under half the steps
    carry a chunk). With the factor it is TPOT less 8.2 ms."""
    result = size(load(ROOT / "tests" / "data" / "frontier-mtp-p95.yaml"))
    (option,) = [o for o in result.workloads[0].options if o.id == "b200/fp4/kv-fp8/tp8"]
    v = option.values
    assert 0.3 < v["spec_tpot_factor"] < 0.4
    plain = v["tpot_ms"] - v["prefill_ms_per_seq_step"] * v["batch_served"] * v["spec_tpot_factor"]
    # (every step now carries a chunk at this load, so the p50 is a chunk step: the slot time
    # takes the factor too since round 14, and the users' requests come 2.6 x as often)
    assert v["decode_only_step_ms"] == plain
    assert 11 < v["decode_only_step_ms"] < v["tpot_ms"] <= v["itl_p99_ms"]


def test_the_fidelity_burst_step_takes_the_prefill_off_at_the_speculative_factor() -> None:
    """The fidelity reader's TPOT for a burst whose prompts ran first
    (benchmarks.py ``decode_only_tpot_ms``) had the same slip as the plain step above: the
    amortised prefill came off TPOT without the speculative factor. At the same MTP option's
    full batch it must be t(B) without the prefill share, times the factor, and positive."""
    from llmsizer.model.calculations import FIGURE_EXPRS

    result = size(load(ROOT / "tests" / "data" / "frontier-mtp-p95.yaml"))
    (option,) = [o for o in result.workloads[0].options if o.id == "b200/fp4/kv-fp8/tp8"]
    v = dict(option.values)
    spec, full = v["spec_tpot_factor"], max(1.0, v["batch_per_replica"])
    v["tpot_ms"] = (v["step_fixed_ms"] + v["step_ms_per_seq"] * full) * spec  # saturated
    burst = evaluate(FIGURE_EXPRS["decode_only_tpot_ms"], v)
    plain = (v["step_fixed_ms"] + (v["step_ms_per_seq"] - v["prefill_ms_per_seq_step"]) * full) \
        * spec
    assert isinstance(burst, float) and burst > 0
    assert math.isclose(burst, plain, rel_tol=1e-12)
