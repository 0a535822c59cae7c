"""Issue 21's worst held-out first-token row is a memory figure (session 24, helper H;
docs/calibration.md, "KV memory at a tight fraction").

InferenceX ran DeepSeek-R1-0528 FP8 on four B200 (TP4, 8k/1k, 32 users; SGLang v0.5.12,
tests/data/measured_blackwell_moe.csv lines 621-623): 1,508 ms to the first token, 33.1 ms
per output token. Its launch script (SemiAnalysisAI/InferenceX
``benchmarks/single_node/dsr1_fp8_b200.sh``, TP4 branch) sets ``--mem-fraction-static 0.95
--kv-cache-dtype fp8_e4m3 --max-running-requests 32 --disable-radix-cache``.

SGLang sizes its KV pool (``model_runner_kv_cache_mixin.py``, ``profile_max_num_token``) as
the memory free after the weights less ``(1 - mem_fraction_static)`` x the memory free before
them, in bytes the driver reports: a B200 shows 183,359 MiB = 192.27 GB, the catalog's
"180 GB" x ``driver_memory_ratio`` 1.069 = 192.42 GB. The row read the 0.95 as a share of
the marketed 180 GB: 4 x (180 x 0.95 - 1) - 671 = 9.0 GB of KV, 7 of the 32 sequences, a
45.6 s wait for a slot (+2,804 % held out). Of the memory the driver reports:
4 x (180 x 1.069 x 0.95 - 1) - 671 = 56.2 GB, 48 sequences.

By hand, as SGLang counts: a token's cell is (kv_lora_rank 512 + qk_rope_head_dim 64) x 61
layers x 1 byte (fp8_e4m3) = 35,136 B on every rank (``get_cell_size_per_token`` does not
divide the MLA latent by TP). Weights per GPU: 671 GB of FP8 / 4, plus embed_tokens and
lm_head kept in BF16 (2 x 129,280 x 7,168 = 1.85 G parameters, one more byte each) and the
replicated ``fused_qkv_a_proj_with_mqa`` (7,168 x 2,112 x 61 = 0.92 G FP8 parameters on each
of the 4 ranks): (671 + 1.85 + 3 x 0.92) / 4 = 168.9 GB. Pool per GPU:
0.95 x (192.27 - 1) - 168.9 = 12.8 GB = 364 k tokens: 43 sequences of the mean 8,295
tokens, 39 of the nominal 9,216. Both hold the 32; the product's 48 is 11 % above (it counts
neither the BF16 embeddings nor the replicated down-projections).
"""

from __future__ import annotations

import pytest
from helpers import DATA

from llmsizer.inputs.benchdata import read_points
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.fidelity import _profile, _Row, prepare, score, tables_for

CAT = load_catalog()
POINTS, _ = read_points(DATA / "measured_blackwell_moe.csv", CAT)
CASES, _ = prepare(POINTS, CAT)
# B200 nvidia-smi: "0MiB / 183359MiB" (driver 570.172.08 and later)
B200_DRIVER_GB = 183_359 * 2**20 / 1e9


def _run(metric: str):  # the B200 SGLang FP8 TP4 8k/1k run at 32 users
    return next(c for c in CASES if c.point.gpu == "b200" and c.point.tp == 4
                and c.point.weight_precision == "fp8" and c.point.concurrency == 32
                and (c.point.isl or 0) > 5000 and c.point.metric == metric
                and "framework=sglang" in c.point.raw.get("notes", ""))


def test_the_driver_ratio_is_the_b200s() -> None:
    """180 GB x 1.069 is what a B200's driver reports (183,359 MiB) within 0.1 %."""
    assert CAT.gpus["b200"].memory_gb * CAT.constant("driver_memory_ratio") == pytest.approx(
        B200_DRIVER_GB, rel=1e-3)


def test_sglang_memory_fraction_is_of_the_memory_the_driver_reports() -> None:
    """The launch script's 0.95 applies to 192.4 GB per B200, not to the marketed 180."""
    case = _run("ttft_ms")
    assert _profile(case, CAT)["gpu_memory_utilization"] == pytest.approx(0.95 * 1.069)
    env = _Row(case, CAT, tables_for(CAT)).env()
    assert env["kv_bytes_per_token"] == 35_136  # (512 + 64) x 61 layers x 1 B, as SGLang
    assert env["kv_replication"] == 4  # every rank keeps the whole latent
    # + the 1.9608e9 embeddings, lm_head, norms and routers the FP8 release keeps in BF16
    # (session 25 weights audit; was 671.0)
    assert env["weights_gb"] == pytest.approx(671.0 + 1.9608)
    assert env["usable_memory_gb"] == pytest.approx(4 * (180 * 1.069 * 0.95 - 1))  # 727.2
    # 54.235 and 46 since session 25 (the 16-bit part: 1.96 GB less; 56.196 and 48 before)
    assert env["kv_budget_gb"] == pytest.approx(54.235, abs=0.01)  # was 9.0
    assert env["max_sequences_by_memory"] == 46  # was 7; measured: all 32 held


def test_the_hand_count_as_sglang_sizes_its_pool() -> None:
    """SGLang's own arithmetic with the weights as loaded holds 39-43 of the 32 sequences:
    the product's 46 is within 7 % and on the same side of 32 (48 before session 25 priced the
    BF16 embeddings and lm_head the hand count below already adds)."""
    weights = (671 + 2 * 129_280 * 7_168 / 1e9 + 3 * 7_168 * 2_112 * 61 / 1e9) / 4
    assert weights == pytest.approx(168.9, abs=0.05)
    pool = 0.95 * (B200_DRIVER_GB - 1) - weights
    assert pool == pytest.approx(12.8, abs=0.05)
    tokens = pool * 1e9 / 35_136
    assert int(tokens / 8_295) == 43 and int(tokens / 9_216) == 39
    env = _Row(_run("ttft_ms"), CAT, tables_for(CAT)).env()
    assert 32 <= int(tokens / 8_295) < env["max_sequences_by_memory"] <= 1.12 * 43


def test_the_run_is_no_longer_a_memory_wait() -> None:
    """All 32 users are batched: the first token 1,508 ms measured is predicted at -42 %
    (was +2,804 % held out, a 45.6 s slot wait in the fidelity run too); throughput 901 tok/s
    at +18 % (was -45 %), TPOT 33.1 ms at -11 %."""
    results = {m: score([_run(m)], CAT)[0] for m in ("ttft_ms", "output_tokens_per_s",
                                                     "tpot_ms")}
    assert {r.batch for r in results.values()} == {32.0}
    assert results["ttft_ms"].error == pytest.approx(-0.42, abs=0.03)
    assert results["output_tokens_per_s"].error == pytest.approx(0.18, abs=0.03)
    assert results["tpot_ms"].error == pytest.approx(-0.11, abs=0.03)
