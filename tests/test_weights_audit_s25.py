"""Session 25 weights audit: 8-bit (and INT4) checkpoints keep the embeddings, lm_head, norms
and routers at 16 bits, so the weights the replica loads are the published checkpoint's, not
params x 1 byte. Each test prices a model at FP8 and compares with the published safetensors
total of that checkpoint (docs/calibration.md, "Weights audit (session 25)")."""

from __future__ import annotations

import pytest
from test_moe import _values

from llmsizer.model.catalog import load_catalog

# --- DeepSeek-V3 / R1: the native block-FP8 release --------------------------------------------

# Safetensors total of deepseek-ai/DeepSeek-R1 (revision 56d4cbbb) and deepseek-ai/DeepSeek-V3
# (revision afb92e1f): 688,586,727,753 bytes each (the repositories' weight files), main model
# plus the multi-token-prediction (MTP) layer 61.
PUBLISHED_BYTES = 688_586_727_753
HIDDEN, VOCAB, EXPERTS, EXPERT_WIDTH = 7168, 129280, 256, 2048  # config.json


def _mtp_layer_bytes() -> float:
    """Layer 61 (README_WEIGHTS.md: 11.5 B unique parameters, plus its own copies of the
    embedding and the head, 685 B - 671 B = 14 B in all), from config.json shapes: the routed
    and shared experts, MLA attention and eh_proj (2 x 7168 -> 7168) in FP8 at 1 byte; the
    embedding, the head and the router in BF16."""
    experts = (EXPERTS + 1) * 3 * HIDDEN * EXPERT_WIDTH
    attention = (HIDDEN * 1536 + 1536 * 128 * 192 + HIDDEN * 576 + 512 * 128 * 256
                 + 128 * 128 * HIDDEN)
    eh_proj = 2 * HIDDEN * HIDDEN
    bf16 = 2 * VOCAB * HIDDEN + EXPERTS * HIDDEN
    return experts + attention + eh_proj + 2 * bf16


@pytest.mark.parametrize("model", ["deepseek-r1", "deepseek-v3"])
def test_deepseek_fp8_weights_match_the_published_checkpoint(model: str) -> None:
    v = _values(model, "h200-sxm", "fp8", "fp8", 8)
    main_model_gb = (PUBLISHED_BYTES - _mtp_layer_bytes()) / 1e9  # 673.3 GB
    # 0.1 %: the FP8 block scales (one float32 per 128x128 block, 0.024 % of the FP8 bytes,
    # 0.16 GB) are not priced, and params_total 671.0e9 is rounded to 0.1 B
    assert v["weights_gb"] == pytest.approx(main_model_gb, rel=1e-3)
    assert v["params_kept_16bit"] == pytest.approx(1.9608e9)  # embeddings, lm_head, routers
    # every parameter at 1 byte (the count before) was 2.3 GB short: 0.34 %
    assert v["params_total"] * v["weight_bytes_per_param"] / 1e9 < main_model_gb - 2.0


def test_deepseek_fp8_kept_part_from_config_shapes() -> None:
    """1,960,795,136: embed_tokens + lm_head, 58 routers, 4 norms a layer + the final norm."""
    kept = (2 * VOCAB * HIDDEN + 58 * EXPERTS * HIDDEN
            + 61 * (HIDDEN + HIDDEN + 1536 + 512) + HIDDEN)
    for model in ("deepseek-v3", "deepseek-r1", "deepseek-v3.1", "deepseek-v3.2"):
        assert load_catalog().models[model].quantised_16bit_count == pytest.approx(
            kept, rel=1e-4)


# --- a dense FP8 export: neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8 ----------------------------


def test_llama_31_8b_fp8_weights_match_the_published_checkpoint() -> None:
    """neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8 (revision 4d24bdfe): two safetensors shards
    of 5 GB + 4.08 GB as Hugging Face lists them = 9.08 GB; the FP8 recipe quantises the
    decoder's Linear layers only (lm_head ignored, the embedding is no Linear layer). The
    catalog's 16-bit part is embed_tokens + lm_head 2 x 128256x4096 + norms = 1.05 B."""
    v = _values("llama-3.1-8b", "h100-sxm", "fp8", "fp8", 1)
    # 1 %: Hugging Face rounds each shard to three digits (+-0.01 GB in all) and the
    # per-channel weight scales (about 2 MB) are not priced
    assert v["weights_gb"] == pytest.approx(9.08, rel=0.01)
    assert v["params_total"] * v["weight_bytes_per_param"] / 1e9 == pytest.approx(8.03)  # before


def test_bf16_keeps_the_single_price() -> None:
    """At 16 bits nothing is kept apart: the weights stay params x 2 bytes."""
    v = _values("llama-3.1-8b", "h100-sxm", "bf16", "bf16", 1)
    assert v["params_kept_16bit"] == 0
    assert v["weights_gb"] == pytest.approx(16.06)


def test_int4_keeps_embeddings_and_lm_head_at_16_bits() -> None:
    """AWQ/GPTQ INT4 exports quantise the decoder's Linear layers only: the same 1.05 B of
    embeddings, lm_head and norms stay 16-bit, the rest costs 0.5 x 1.0625 bytes."""
    v = _values("llama-3.1-8b", "h100-sxm", "int4", "bf16", 1)
    kept = load_catalog().models["llama-3.1-8b"].fp4_16bit_params
    assert v["params_kept_16bit"] == kept
    assert v["weights_gb"] == pytest.approx(((8.03e9 - kept) * 0.53125 + kept * 2) / 1e9)
