"""The golden numbers of DESIGN §3, each pinned to the seed article it comes from."""

from __future__ import annotations

import pytest
from helpers import option_values, seed_70b

from llmsizer.inputs.loader import Loaded
from llmsizer.inputs.schema import Requirements
from llmsizer.sizing.engine import size

MBU1 = {"mbu_weights": 1.0, "mbu_kv": 1.0, "step_overhead_ms": 0.0}


def _loaded(doc: dict) -> Loaded:
    from llmsizer.model.catalog import load_catalog

    req = Requirements.model_validate(doc)
    cat = load_catalog()
    return Loaded(req=req, models={w.model: cat.models[w.model] for w in req.workloads},
                  source="test")


# --- seed 000: users -> TPS -> nodes --------------------------------------------------------


def test_seed000_worked_example_6000_tps_and_8_nodes() -> None:
    """Seed 000 Steps 2-4: 200 users, 300 tokens in 10 s -> 30 tok/s -> 6,000 TPS; a measured
    1,000 TPS per 4x H100 node -> 6 nodes -> x1.25 headroom -> 8 nodes."""
    res = size(_loaded({
        "schema_version": 1, "account": {"name": "Seed 000"},
        "workloads": [{"name": "assistant", "model": "llama-3.1-70b", "concurrent_users": 200,
                       "prompt_tokens": 500, "output_tokens": 300,
                       "targets": {"response_time_s": 10, "ttft_s": 2},
                       "measured": {"gpu": "h100-sxm", "gpus_per_replica": 4,
                                    "tokens_per_s_per_replica": 1000}}],
        "hardware": {"platform": "dell-xe8640"},
        "policy": {"headroom": 0.25, "survive_node_loss": False}}))
    w = res.workloads[0]
    best = w.best
    assert best is not None
    v = best.values
    assert v["required_tokens_per_s_per_user"] == pytest.approx(30.0, rel=1e-12)
    assert v["required_system_tokens_per_s"] == pytest.approx(6000.0, rel=1e-12)
    assert v["demand_replicas"] == pytest.approx(6.0, rel=1e-12)
    assert v["gpus_per_node"] == 4
    assert v["nodes"] == 8
    assert res.totals.nodes == 8
    assert w.mode == "measured"


@pytest.mark.parametrize(
    ("users", "output", "seconds", "tps"),
    [
        (500, 250, 10, 12_500),  # seed 000 Ref A: 7B assistant, ~500 users, ~250 out, 8-10 s
        (100, 500, 15, 3_333.33),  # seed 000 Ref B: 70B RAG, ~100 users, ~500 out, 12-15 s
    ],
)
def test_seed000_reference_system_tps(users: int, output: int, seconds: float, tps: float) -> None:
    """Seed 000 reference table: Ref A ≈ 12,500 TPS, Ref B ≈ 3,300 TPS (decode)."""
    v = option_values(seed_70b(), "h100-sxm", output=output, users=users,
                      targets={"response_time_s": seconds})
    assert v["required_system_tokens_per_s"] == pytest.approx(tps, rel=1e-3)


# --- seed 001: the bandwidth ceiling ---------------------------------------------------------


@pytest.mark.parametrize(
    ("gpu", "ms", "tok_s"),
    [
        ("h100-sxm", 21.0, 48.0),  # seed 001: 70 GB / 3.35 TB/s ≈ 21 ms ≈ 48 tok/s
        ("h200-sxm", 14.5, 70.0),  # seed 001: 70 GB / 4.8 TB/s ≈ 14.5 ms ≈ 70 tok/s
        ("h100-pcie", 35.0, 28.0),  # seed 001: ~2 TB/s on HBM2e -> about 28 tok/s
    ],
)
def test_seed001_bandwidth_ceiling(gpu: str, ms: float, tok_s: float) -> None:
    """70 GB of FP8 weights at MBU 1, batch 1: step time = weights / bandwidth."""
    v = option_values(seed_70b(), gpu, weights="fp8", overrides=MBU1)
    assert v["weights_gb"] == pytest.approx(70.0, rel=1e-12)
    assert v["decode_weights_ms"] == pytest.approx(ms, rel=0.03)
    assert 1000 / v["decode_weights_ms"] == pytest.approx(tok_s, rel=0.03)


# --- seed 002: the KV-cache budget -----------------------------------------------------------


def test_seed002_kv_per_token_and_per_request() -> None:
    """2 x 80 x 8 x 128 x 2 = 327,680 B/token; x 8,192 ≈ 2.68 GB; x 131,072 ≈ 42.9 GB."""
    v8k = option_values(seed_70b(), "h200-sxm", kv="bf16", context=8192)
    assert v8k["kv_bytes_per_token"] == 327_680
    assert v8k["kv_gb_per_request"] == pytest.approx(2.68, abs=0.005)
    v128k = option_values(seed_70b(), "h200-sxm", kv="bf16", context=131_072)
    assert v128k["kv_gb_per_request"] == pytest.approx(42.9, abs=0.05)


@pytest.mark.parametrize(("kv", "expected"), [("bf16", 21), ("fp8", 42)])
def test_seed002_concurrency_on_one_h200(kv: str, expected: int) -> None:
    """H200: 0.9 x 141 - 70 = 57 GB -> 57 / 2.68 ≈ 21 requests at 8K; FP8 KV -> ~42."""
    v = option_values(seed_70b(), "h200-sxm", weights="fp8", kv=kv, context=8192,
                      policy={"gpu_memory_utilization": 0.9, "runtime_reserve_gb": 0})
    assert v["kv_budget_gb"] == pytest.approx(56.9, abs=0.01)
    assert v["max_sequences_by_memory"] == expected


# --- seed 003: roofline ----------------------------------------------------------------------


def test_seed003_ridge_point_and_fp16_weights() -> None:
    """H100 SXM: 989 TFLOP/s / 3.35 TB/s ≈ 295 FLOP/byte; Llama-70B at FP16 = 140 GB."""
    v = option_values(seed_70b(), "h100-sxm", weights="fp16")
    assert v["ridge_point_flop_per_byte"] == pytest.approx(295, rel=0.01)
    assert v["weights_gb"] == pytest.approx(140.0, rel=1e-12)
