"""DeepSeek Sparse Attention (DeepSeek-V3.2): the lightning indexer's key cache sized beside
MLA's, and a decode step that attends to at most index_topk cached tokens while its indexer
scores them all.

Sources of the numbers:
- config.json of deepseek-ai/DeepSeek-V3.2 (copy at ai-dynamo/aiconfigurator@0b077da5e
  aic-core/src/aiconfigurator_core/model_configs/deepseek-ai--DeepSeek-V3.2_config.json):
  num_hidden_layers 61, kv_lora_rank 512, qk_rope_head_dim 64 (MLA caches 512 + 64 = 576
  values per token per layer), num_attention_heads 128, index_n_heads 64, index_head_dim 128,
  index_topk 2048.
- The indexer key cache per token per layer: 128 FP8 values + one 4-byte FP32 scale per 128
  values = 132 bytes. vLLM: vllm/model_executor/models/deepseek_v2.py, Indexer, k_cache =
  DeepseekV32IndexerCache(head_dim=head_dim + head_dim // quant_block_size * 4, dtype=uint8),
  quant_block_size 128; SGLang: python/sglang/srt/mem_cache/memory_pool.py, NSATokenToKVPool,
  index_k_with_scale_buffer of page_size x (index_head_dim + index_head_dim //
  quant_block_size x 4) uint8 per layer.
- The indexer's work per (query, cached token) per layer: one dot product of index_head_dim
  per indexer head (DeepSeek-V3.2-Exp paper, Eq. 1), 2 x 64 x 128 FLOPs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import option_values

from llmsizer.inputs.modelconfig import model_from_config
from llmsizer.model.catalog import Model, load_catalog

LAYERS = 61  # num_hidden_layers
MLA_VALUES = 512 + 64  # kv_lora_rank + qk_rope_head_dim
INDEXER_BYTES = 128 * 1 + 128 // 128 * 4  # FP8 key + FP32 scale per 128 values (vLLM, SGLang)
TOPK = 2048  # index_topk
MLA_FLOPS = 2 * 128 * (2 * 512 + 64)  # absorbed MLA: 2 x heads x (2 x latent + RoPE)
INDEXER_FLOPS = 2 * 64 * 128  # 2 x index_n_heads x index_head_dim

# deepseek-ai/DeepSeek-V3.2 config.json, the fields that size the model (copy cited above)
DEEPSEEK_V32 = {
    "architectures": ["DeepseekV32ForCausalLM"], "hidden_size": 7168,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
    "intermediate_size": 18432, "moe_intermediate_size": 2048, "n_routed_experts": 256,
    "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
    "moe_layer_freq": 1, "vocab_size": 129280, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
    "max_position_embeddings": 163840, "index_n_heads": 64, "index_head_dim": 128,
    "index_topk": 2048, "tie_word_embeddings": False,
}


def _values(model: Model, *, prompt: int, output: int, kv: str) -> dict[str, Any]:
    return option_values(model, "h200-sxm", tp=8, weights="fp8", kv=kv, prompt=prompt,
                         output=output)


def test_indexer_fields_from_the_catalog_and_config_json(tmp_path: Path) -> None:
    cat = load_catalog()
    v32 = cat.model("deepseek-v3.2")
    assert (v32.indexer_heads, v32.indexer_head_dim, v32.indexer_topk) == (64, 128, 2048)
    (tmp_path / "config.json").write_text(json.dumps(DEEPSEEK_V32), encoding="utf-8")
    read = model_from_config(tmp_path, "config.json")
    assert (read.indexer_heads, read.indexer_head_dim, read.indexer_topk) == (64, 128, 2048)
    # dense-attention models carry none; only a config.json with index_topk sets them
    for mid, m in cat.models.items():
        if mid != "deepseek-v3.2":
            assert (m.indexer_heads, m.indexer_head_dim, m.indexer_topk) == (0, 0, 0), mid
    with pytest.raises(ValueError, match="go together"):
        v32.model_validate({**v32.model_dump(), "indexer_topk": 0})


@pytest.mark.parametrize(("kv", "element_bytes"), [("bf16", 2), ("fp8", 1)])
def test_kv_per_token_holds_the_indexer_keys(kv: str, element_bytes: int) -> None:
    """61 layers x (576 MLA values at the KV precision + 132 B of FP8 indexer key and scale):
    BF16 78,324 B, FP8 43,188 B a token (DeepSeek-V3: 70,272 and 35,136). The indexer adds
    132 / 1,152 = 11.5 % at BF16 and 132 / 576 = 22.9 % at FP8: fewer sequences fit."""
    cat = load_catalog()
    v = _values(cat.model("deepseek-v3.2"), prompt=31744, output=1024, kv=kv)
    dense = _values(cat.model("deepseek-v3"), prompt=31744, output=1024, kv=kv)
    assert v["indexer_bytes_per_layer_token"] == INDEXER_BYTES == 132
    assert v["kv_bytes_per_token"] == LAYERS * (MLA_VALUES * element_bytes + INDEXER_BYTES)
    assert dense["kv_bytes_per_token"] == LAYERS * MLA_VALUES * element_bytes
    assert v["kv_gb_per_request"] == pytest.approx(
        v["kv_bytes_per_token"] * 32768 * v["kv_replication"] / 1e9)
    assert v["kv_budget_gb"] == dense["kv_budget_gb"]
    assert v["max_sequences_by_memory"] < dense["max_sequences_by_memory"]


def test_decode_reads_topk_tokens_of_mla_and_the_whole_context_of_indexer_keys() -> None:
    """BF16 KV. At a 1k context (prompt 1,000 + half of 1,000 output = 1,500 on average) every
    token is below the top-2,048, so the MLA part is read whole; at a 32k context (31,744 +
    512 = 32,256) it is read for 2,048 tokens while the indexer keys are read for all 32,256."""
    v32 = load_catalog().model("deepseek-v3.2")
    short = _values(v32, prompt=1000, output=1000, kv="bf16")
    long = _values(v32, prompt=31744, output=1024, kv="bf16")
    mla_bytes = MLA_VALUES * 2
    assert short["avg_context_tokens"] == 1500 and long["avg_context_tokens"] == 32256
    assert short["decode_attended_layer_tokens"] == LAYERS * 1500
    assert long["decode_attended_layer_tokens"] == LAYERS * TOPK
    assert short["decode_kv_bytes_per_seq"] == LAYERS * 1500 * (mla_bytes + INDEXER_BYTES)
    assert long["decode_kv_bytes_per_seq"] == LAYERS * (TOPK * mla_bytes + 32256 * INDEXER_BYTES)
    # topk caps only the MLA part: the indexer part grows with the whole context
    indexer_short = short["decode_kv_bytes_per_seq"] - LAYERS * 1500 * mla_bytes
    indexer_long = long["decode_kv_bytes_per_seq"] - LAYERS * TOPK * mla_bytes
    assert indexer_long / indexer_short == pytest.approx(32256 / 1500)
    # at 32k a step reads 17.8 % of what dense MLA reads: (2,048 x 1,152 + 32,256 x 132) /
    # (32,256 x 1,152)
    dense_long = LAYERS * 32256 * mla_bytes
    assert long["decode_kv_bytes_per_seq"] / dense_long == pytest.approx(0.178, abs=5e-4)
    # compute: attention over the selected tokens + the indexer over every cached token
    assert long["attention_flops_per_layer_token"] == MLA_FLOPS
    assert long["indexer_flops_per_layer_token"] == INDEXER_FLOPS
    dense = _values(load_catalog().model("deepseek-v3"), prompt=31744, output=1024, kv="bf16")
    assert long["decode_attention_ms_per_seq"] / dense["decode_attention_ms_per_seq"] == (
        pytest.approx((MLA_FLOPS * TOPK + INDEXER_FLOPS * 32256) / (MLA_FLOPS * 32256)))
    assert long["decode_kv_ms_per_seq"] / dense["decode_kv_ms_per_seq"] == pytest.approx(
        long["decode_kv_bytes_per_seq"] / dense_long)


@pytest.mark.parametrize("mid", ["deepseek-v3", "deepseek-r1"])
def test_dense_mla_is_unchanged(mid: str) -> None:
    """DeepSeek-V3/R1 (dense MLA, no indexer): 61 x 576 x 2 B a token, every cached token
    attended and read, no indexer work: the figures the sizing gave before sparse attention
    was represented, exactly (not approximately)."""
    m = load_catalog().model(mid)
    v = _values(m, prompt=31744, output=1024, kv="bf16")
    assert v["indexer_bytes_per_token"] == 0 and v["indexer_flops_per_layer_token"] == 0
    assert v["kv_bytes_per_token"] == LAYERS * MLA_VALUES * 2
    assert v["decode_attended_layer_tokens"] == LAYERS * 32256
    assert v["decode_kv_bytes_per_seq"] == LAYERS * MLA_VALUES * 2 * 32256
    # the same model with the V3.2 indexer fields set differs exactly in those terms
    sparse = _values(m.model_copy(update={"indexer_heads": 64, "indexer_head_dim": 128,
                                          "indexer_topk": 2048}),
                     prompt=31744, output=1024, kv="bf16")
    assert sparse["kv_bytes_per_token"] - v["kv_bytes_per_token"] == LAYERS * INDEXER_BYTES
    assert sparse["weights_gb"] == v["weights_gb"]
