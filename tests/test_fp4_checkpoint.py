"""FP4 checkpoints keep attention, the router, embeddings and lm_head at 16 bits (docs/
calibration.md, "Ninth pass: FP4 checkpoints' 16-bit parts"): the catalog's
fp4_16bit_params is counted from config.json shapes and the checkpoint's exclude list, and the
weights priced with it match the published checkpoint sizes."""

from __future__ import annotations

import pytest
from test_moe import _values

from llmsizer.model.catalog import load_catalog

GIB = 2**30


@pytest.mark.parametrize(("model", "gib"), [
    # OpenAI gpt-oss model card (arXiv 2508.10925), table 1: checkpoint size of the MXFP4
    # experts + BF16 rest
    ("gpt-oss-120b", 60.8),
    ("gpt-oss-20b", 12.8),
])
def test_gpt_oss_weights_match_the_published_checkpoint(model: str, gib: float) -> None:
    v = _values(model, "b200", "mxfp4", "bf16", 1)
    assert v["params_kept_16bit"] == load_catalog().models[model].fp4_16bit_params
    # OpenAI's active count leaves the input embedding out: that part is held, not streamed
    assert v["unstreamed_16bit_gb"] > 0
    assert v["weights_gb"] * 1e9 == pytest.approx(gib * GIB, rel=0.005)
    # every parameter at MXFP4 (the count before) was 5 % short on 120b, 19 % on 20b
    assert v["params_total"] * v["weight_bytes_per_param"] < 0.96 * gib * GIB


# Hugging Face safetensors parameter counts of NVIDIA's NVFP4 DeepSeek-R1 checkpoints (FP4
# values packed two to a U8, one FP8 scale per 16 values, the rest BF16), as the model pages
# list them: 393.6 B for nvidia/DeepSeek-R1-0528-FP4-v2, 396.8 B for nvidia/DeepSeek-R1-FP4.
# Both also hold the 14 B multi-token-prediction layer in BF16 (DeepSeek-V3 README: 685 B =
# 671 B main + 14 B MTP; the exclude list names model.layers.61*).
MTP_PARAMS = 14e9
# the attention output projection the v2 checkpoint quantises as well: 61 x 128 x 128 x 7168
WO_PARAMS = 61 * 128 * 128 * 7168


@pytest.mark.parametrize(("kept_extra", "published"), [(0, 393.6e9), (WO_PARAMS, 396.8e9)])
def test_deepseek_r1_fp4_checkpoint_count(kept_extra: int, published: float) -> None:
    v = _values("deepseek-r1", "b200", "fp4", "fp8", 8)
    kept = v["params_kept_16bit"] + kept_extra
    elements = (v["params_total"] - kept) * v["weight_bytes_per_param"] + kept + MTP_PARAMS
    assert elements == pytest.approx(published, rel=0.005)
    # without the 16-bit part the count misses v1 by 1.4 %
    assert abs(v["params_total"] * v["weight_bytes_per_param"] + MTP_PARAMS - 396.8e9) > 5e9


def test_kept_part_priced_at_two_bytes_in_memory() -> None:
    """The 16-bit part costs 2 bytes in memory (and so in the KV budget); FP8 weights keep the
    single price (the field applies to FP4 only). The step's weight reads still price it at
    the FP4 size: at 2 bytes the small-batch FP4 steps came out longer than measured
    (docs/calibration.md, "Ninth pass: FP4 checkpoints' 16-bit parts")."""
    fp4 = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8)
    fp8 = _values("deepseek-r1", "b200", "fp8", "fp8", 8, ep=8)
    kept = 6.210e9  # models.yaml, nvidia/DeepSeek-R1-0528-FP4-v2
    assert fp4["params_kept_16bit"] == kept and fp8["params_kept_16bit"] == 0
    assert fp4["weights_gb"] == pytest.approx(
        ((671e9 - kept) * 0.5625 + kept * 2) / 1e9)  # 386.4 GB, was 377.4
    assert fp8["weights_gb"] == pytest.approx(671.0)
    assert fp4["kv_budget_gb"] == pytest.approx(
        (fp4["usable_memory_gb"] - fp4["weights_gb"]) * fp4["kv_cache_fraction"])
    assert fp4["shared_weights_ms"] == pytest.approx(
        fp4["shared_params"] * 0.5625 / 1e9 / (8 * 7.7 * fp4["mbu_weights"]))  # 7.7 TB/s
