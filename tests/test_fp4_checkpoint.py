"""FP4 checkpoints keep attention, the router, embeddings and lm_head at 16 bits (docs/
calibration-history.md, "Ninth pass: FP4 checkpoints' 16-bit parts"): the catalog's
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
    """The 16-bit part costs 2 bytes in memory (and so in the KV budget); FP8 weights keep
    only the embeddings, lm_head, norms and routers at 16 bits (session 25 weights audit:
    1.96 B, DeepSeek's FP8 release; tests/test_weights_audit_s25.py, was 0, the whole model
    at 1 byte). The step's weight reads still price it at
    the FP4 size: at 2 bytes the small-batch FP4 steps came out longer than measured
    (docs/calibration-history.md, "Ninth pass: FP4 checkpoints' 16-bit parts")."""
    fp4 = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8)
    fp8 = _values("deepseek-r1", "b200", "fp8", "fp8", 8, ep=8)
    kept = 6.210e9  # models.yaml, nvidia/DeepSeek-R1-0528-FP4-v2
    assert fp4["params_kept_16bit"] == kept and fp8["params_kept_16bit"] == 1.9608e9
    assert fp4["weights_gb"] == pytest.approx(
        ((671e9 - kept) * 0.5625 + kept * 2) / 1e9)  # 386.4 GB, was 377.4
    assert fp8["weights_gb"] == pytest.approx(671.0 + 1.9608)  # was 671.0 (session 25)
    assert fp4["kv_budget_gb"] == pytest.approx(
        (fp4["usable_memory_gb"] - fp4["weights_gb"]) * fp4["kv_cache_fraction"])
    assert fp4["shared_weights_ms"] == pytest.approx(
        fp4["shared_params"] * 0.5625 / 1e9 / (8 * 7.7 * fp4["mbu_weights"]))  # 7.7 TB/s


# --- the rest of the catalog: the kept part recounted from config.json shapes ----------------


def _mla_attention(hidden: int, heads: int) -> int:
    """One MLA layer (DeepSeek-V3 / Kimi K2 config.json: q_lora_rank 1536, kv_lora_rank 512,
    qk_nope and v head 128, rope 64): q_a, q_a_norm, q_b, kv_a (512 + 64), kv_a_norm, kv_b, o."""
    return (hidden * 1536 + 1536 + 1536 * heads * 192 + hidden * 576 + 512
            + 512 * heads * 256 + heads * 128 * hidden)


# (model, layers, hidden, vocab, MoE layers, routed experts, per-layer extra kept):
# config.json shapes; each line keeps embed_tokens + lm_head (untied in every one), a router
# (experts x hidden, + a correction bias where config.json has noaux_tc / GLM's
# e_score_correction_bias) per MoE layer, two RMS norms a layer + the final one.
KEPT_CASES = [
    # DeepSeek-V3 exclude list: all of self_attn stays BF16 (V3.1 / V3.2 shapes = V3's)
    ("deepseek-v3.1", 61, 7168, 129280, 58, 256, _mla_attention(7168, 128), 256),
    ("deepseek-v3.2", 61, 7168, 129280, 58, 256, _mla_attention(7168, 128), 256),
    ("kimi-k2", 61, 7168, 163840, 60, 384, _mla_attention(7168, 64), 384),
    # ModelOpt's defaults: attention is FP4
    ("glm-4.5", 92, 5120, 151552, 89, 160, 0, 160),
    ("glm-4.6", 92, 5120, 151552, 89, 160, 0, 160),
    ("llama-4-scout", 48, 5120, 202048, 48, 16, 0, 0),
    ("llama-4-maverick", 48, 5120, 202048, 24, 128, 0, 0),
    # Qwen3 MoE exclude list (mlp.gate, lm_head); q_norm and k_norm (head_dim 128) a layer
    ("qwen3-coder-30b-a3b", 48, 2048, 151936, 48, 128, 256, 0),
    ("qwen3-coder-480b-a35b", 62, 6144, 151936, 62, 160, 256, 0),
]


@pytest.mark.parametrize(("model", "layers", "hidden", "vocab", "moe", "experts", "per_layer",
                          "bias"), KEPT_CASES)
def test_kept_part_counted_from_the_config_shapes(model: str, layers: int, hidden: int,
                                                  vocab: int, moe: int, experts: int,
                                                  per_layer: int, bias: int) -> None:
    m = load_catalog().models[model]
    assert (m.layers, m.hidden_size, m.vocab_size, m.moe_layers, m.experts) == (
        layers, hidden, vocab, moe, experts)
    kept = (2 * vocab * hidden + moe * (experts * hidden + bias)
            + layers * (per_layer + 2 * hidden) + hidden)
    assert m.fp4_16bit_params == pytest.approx(kept, rel=1e-4)


def test_qwen3_next_kept_part() -> None:
    """Qwen3-Next (config.json): embed_tokens + lm_head 2 x 151936 x 2048, 48 routers 512 x
    2048 and shared_expert_gate 1 x 2048, two norms a layer; each of the 36 Gated DeltaNet
    layers keeps its conv1d (key 2 x 16 x 128 + value 32 x 128 channels x kernel 4), A_log,
    dt_bias (32 value heads) and gated norm (128); each of the 12 attention layers its q_norm
    and k_norm (256)."""
    conv = (2 * 16 * 128 + 32 * 128) * 4
    kept = (2 * 151936 * 2048 + 48 * (512 + 1) * 2048 + 48 * 2 * 2048 + 2048
            + 36 * (conv + 32 + 32 + 128) + 12 * 2 * 256)
    assert load_catalog().models["qwen3-next-80b-a3b"].fp4_16bit_params == pytest.approx(
        kept, rel=1e-4)


@pytest.mark.parametrize(("model", "tp"), [
    ("kimi-k2", 8), ("glm-4.6", 4), ("llama-4-maverick", 4), ("qwen3-coder-480b-a35b", 4)])
def test_fp4_weights_price_the_kept_part_at_two_bytes(model: str, tp: int) -> None:
    """NVFP4 weights: the quantised part at 0.5625 byte, the kept part at 2 (every kept part
    here lies in the non-expert parameters); the FP8 weights of the same model keep their own
    16-bit part (session 25: the embeddings, lm_head, norms and routers; was 0)."""
    v = _values(model, "b200", "fp4", "fp8", tp)
    kept = load_catalog().models[model].fp4_16bit_params
    assert v["params_kept_16bit"] == kept and v["unstreamed_16bit_gb"] == 0
    assert v["weights_gb"] == pytest.approx(((v["params_total"] - kept) * 0.5625 + kept * 2)
                                            / 1e9)
    assert _values(model, "b200", "fp8", "fp8", tp)["params_kept_16bit"] == (
        load_catalog().models[model].quantised_16bit_count)


# Dense and Mixtral models: NVIDIA's dense NVFP4 exports exclude lm_head only
# (nvidia/Qwen3-32B-NVFP4 hf_quant_config.json), plus ModelOpt's routers; embeddings stay BF16.
# (model, layers, hidden, vocab, tied embeddings, norms a layer, per-layer extra, routers):
# config.json shapes; extras are Qwen2.5's q/k/v biases and Qwen3 / Gemma 3's q_norm + k_norm.
DENSE_CASES = [
    ("llama-2-70b", 80, 8192, 32000, False, 2, 0, 0),
    ("llama-3.1-8b", 32, 4096, 128256, False, 2, 0, 0),
    ("llama-3.1-70b", 80, 8192, 128256, False, 2, 0, 0),
    ("llama-3.2-1b", 16, 2048, 128256, True, 2, 0, 0),
    ("mistral-7b", 32, 4096, 32768, False, 2, 0, 0),
    ("mistral-large-2", 88, 12288, 32768, False, 2, 0, 0),
    ("mixtral-8x7b", 32, 4096, 32000, False, 2, 0, 32 * 8),
    ("mixtral-8x22b", 56, 6144, 32768, False, 2, 0, 56 * 8),
    ("qwen2.5-72b", 80, 8192, 152064, False, 2, 8192 + 2 * 1024, 0),
    ("qwen3-32b", 64, 5120, 151936, False, 2, 2 * 128, 0),
    ("gemma-2-27b", 46, 4608, 256000, True, 4, 0, 0),
    ("gemma-3-27b", 62, 5376, 262208, True, 4, 2 * 128, 0),
]


@pytest.mark.parametrize(("model", "layers", "hidden", "vocab", "tied", "norms", "per_layer",
                          "routers"), DENSE_CASES)
def test_dense_kept_part_counted_from_the_config_shapes(model: str, layers: int, hidden: int,
                                                        vocab: int, tied: bool, norms: int,
                                                        per_layer: int, routers: int) -> None:
    m = load_catalog().models[model]
    assert (m.layers, m.hidden_size) == (layers, hidden)
    kept = ((1 if tied else 2) * vocab * hidden + layers * (norms * hidden + per_layer)
            + hidden + routers * hidden)
    assert m.fp4_16bit_params == pytest.approx(kept, rel=1e-4)


def test_llama_31_70b_fp4_weights() -> None:
    """Llama-3.1-70B at NVFP4: 68.5 B parameters at 0.5625 byte + 2.10 B at 2 = 42.7 GB (every
    weight at 0.5625 gave 39.7 GB): Llama-3.3-70B's shapes, whose NVIDIA FP4 export
    (nvidia/Llama-3.3-70B-Instruct-FP4) keeps the same part (models.yaml)."""
    v = _values("llama-3.1-70b", "b200", "fp4", "fp8", 1)
    assert v["weights_gb"] == pytest.approx((70.6e9 - 2.1027e9) * 0.5625 / 1e9
                                            + 2.1027e9 * 2 / 1e9)
    assert v["weights_gb"] == pytest.approx(42.7, abs=0.05)
