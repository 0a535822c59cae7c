"""`size` and `estimate` give one answer for one configuration and load (issue 21, item 5):
the MoE expert-read share is taken at the batch actually served, in both paths.

Before the fix `size` read every expert for any load: DeepSeek-R1 FP8 on 8 x H200 at one
user gave 22.9 tok/s in `size` against 126.7 in `estimate`, and gpt-oss-20b on one
RTX PRO 6000 was rejected for 5 users at a measured 128.5 tok/s each."""

from __future__ import annotations

import pytest

from llmsizer.inputs.loader import Loaded
from llmsizer.inputs.schema import Requirements
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import estimate, size
from llmsizer.sizing.results import Option

CAT = load_catalog()

# (model, GPU, TP, weights, KV): a dense model and two MoE models (catalog ids)
CONFIGS = [
    ("llama-3.1-70b", "h100-sxm", 4, "fp8", "fp8"),
    ("gpt-oss-120b", "h200-sxm", 1, "fp8", "fp8"),
    ("deepseek-r1", "h200-sxm", 8, "fp8", "fp8"),
]


def _sized(model: str, gpu: str, tp: int, weights: str, kv: str, users: int, tps: float, *,
           prompt: int = 1024, output: int = 1024) -> Option:
    """The plain-TP option (no expert parallelism) of `size` for one workload."""
    req = Requirements.model_validate({
        "schema_version": 1, "account": {"name": "t"},
        "workloads": [{"name": "w", "model": model, "concurrent_users": users,
                       "prompt_tokens": prompt, "output_tokens": output,
                       "targets": {"tokens_per_s_per_user": tps}}],
        "hardware": {"gpus": [gpu], "weight_precisions": [weights], "kv_precisions": [kv],
                     "tensor_parallel": [tp]},
        "policy": {"headroom": 0, "survive_node_loss": False}})
    result = size(Loaded(req=req, models={model: CAT.models[model]}, source="t"), CAT)
    option = next(o for o in result.workloads[0].options
                  if o.tp == tp and o.id.count("/") == 3)
    return option


@pytest.mark.parametrize("users", [1, 5, 100])
@pytest.mark.parametrize(("model", "gpu", "tp", "weights", "kv"), CONFIGS)
def test_size_and_estimate_agree(model: str, gpu: str, tp: int, weights: str, kv: str,
                                 users: int) -> None:
    """Per-user tokens/s, TPOT and TTFT within 1 %: `size` with a loose target (5 tok/s, so
    one replica holds every user) against `estimate` at concurrency = users. Both read the
    users as a closed loop (queueing.py, closed_loop_wait_ms)."""
    o = _sized(model, gpu, tp, weights, kv, users, 5.0)
    assert o.feasible, o.reason
    e = estimate(model_id=model, gpu=gpu, tp=tp, replicas=1, weight_precision=weights,
                 kv_precision=kv, prompt_tokens=1024, output_tokens=1024, concurrency=users,
                 catalog=CAT)
    assert e["batch_per_replica"] == users  # one replica serves the whole load
    assert float(o.values["batch_served"]) == users
    assert float(o.values["tokens_per_s_per_user"]) == pytest.approx(
        e["tokens_per_s_per_user"], rel=0.01)
    assert float(o.values["tpot_ms"]) == pytest.approx(e["tpot_ms"], rel=0.01)
    assert float(o.values["ttft_ms"]) == pytest.approx(e["ttft_ms"], rel=0.01)
    assert float(o.values["closed_loop_users"]) == users
    assert float(o.values["prefill_wait_ms"]) == 0  # no open-arrival wait for users


# Row 603 of tests/data/calibration_points.csv: NVIDIA NIM 1.8.0 benchmark, Llama-3.3-70B
# Instruct FP8 TP2 on 2 x H100 80GB, 5,000 prompt / 500 output tokens, closed-loop fixed
# concurrency 100 (AIPerf): TTFT mean 7,996.25 ms (docs.nvidia.com/nim/benchmarking/llm/
# 1.0.0/performance). The engine holds ~85 of the 100 users (917 tok/s x 92.9 ms ITL);
# the rest wait for a slot.
NIM_ROW, NIM_TTFT_MS = 603, 7996.25


def test_estimate_at_a_stated_concurrency_is_the_fidelity_figure_on_the_nim_row() -> None:
    """`estimate --concurrency 100` with the row's engine profile (NIM's memory policy, as
    `fidelity` reads it) gives the very figure `fidelity` predicts (one calculation,
    closed_loop_wait_ms), within 25 % of the measured 8.0 s; it gave 2.6 s with the
    open-arrival wait at rate = C / W."""
    from pathlib import Path

    from llmsizer.inputs.benchdata import read_points
    from llmsizer.sizing.fidelity import _profile, predict, prepare, tables_for
    from llmsizer.sizing.fidelity_fit import closed_loop_ttft

    path = Path(__file__).resolve().parent / "data" / "calibration_points.csv"
    points, _ = read_points(path)
    point = next(p for p in points if p.row == NIM_ROW)
    assert (point.metric, point.value, point.concurrency) == ("ttft_ms", NIM_TTFT_MS, 100)
    cases, skipped = prepare([point], CAT)
    assert not skipped
    tables = tables_for(CAT)
    predicted, _ = predict(cases[0], CAT, tables)
    # the round-share fit (benchmarks/calibrate.py) reads the same figure
    share = CAT.constant("closed_loop_round_share")
    assert closed_loop_ttft(cases[0], CAT, tables, [share])[0] == pytest.approx(predicted)
    e = estimate(model_id="llama-3.3-70b", gpu="h100-sxm", tp=2, replicas=1,
                 weight_precision="fp8", kv_precision="fp8", prompt_tokens=5000,
                 output_tokens=500, concurrency=100, catalog=CAT,
                 profile=_profile(cases[0], CAT))
    assert e["ttft_ms"] == pytest.approx(predicted, rel=1e-9)
    assert abs(e["ttft_ms"] / NIM_TTFT_MS - 1) <= 0.25
    assert e["batch_per_replica"] < 100  # memory holds fewer: the rest wait for a slot
    # the product's own engine profile keeps less memory for KV (vLLM-like 0.9): fewer
    # slots, a longer wait, never a shorter one
    plain = estimate(model_id="llama-3.3-70b", gpu="h100-sxm", tp=2, replicas=1,
                     weight_precision="fp8", kv_precision="fp8", prompt_tokens=5000,
                     output_tokens=500, concurrency=100, catalog=CAT)
    assert plain["batch_per_replica"] < e["batch_per_replica"]
    assert plain["ttft_ms"] > e["ttft_ms"]


def test_moe_one_user_reads_k_of_e_experts() -> None:
    """DeepSeek-R1 (256 routed experts, top-8, config.json) at one user: the step reads 8/256
    of the experts in `size` too, not all of them (was 22.9 tok/s; `estimate` 126.7)."""
    o = _sized("deepseek-r1", "h200-sxm", 8, "fp8", "fp8", 1, 5.0)
    assert float(o.values["experts_read_fraction"]) == pytest.approx(8 / 256, rel=1e-9)
    assert float(o.values["tokens_per_s_per_user"]) > 100


def test_measured_gpt_oss_20b_rtx_pro_6000_five_users_is_feasible() -> None:
    """The measured point of issue 21: gpt-oss-20b MXFP4 on 1 x RTX PRO 6000 Blackwell, vLLM,
    1K context, 1,024 output tokens, full-precision KV: "Peak System Throughput 642.5 tok/s
    @ 5 concurrent requests, 1K context" = 128.5 tok/s per user (Millstone AI benchmark
    report, 2026-01-28, https://www.millstoneai.com/inference-benchmark/
    gpt-oss-20b-mxfp4-1x-rtx-pro-6000-blackwell; the row is not in
    tests/data/measured_blackwell_moe.csv). `size` used to reject it: "even one user gets
    only 105.4 tok/s"."""
    o = _sized("gpt-oss-20b", "rtx-pro-6000", 1, "mxfp4", "bf16", 5, 128.5)
    assert o.feasible, o.reason
    assert float(o.values["batch_per_replica"]) >= 5
    assert float(o.values["tokens_per_s_per_user"]) >= 128.5
    assert float(o.values["gpus"]) == 1
