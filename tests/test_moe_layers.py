"""MoE layers from config.json (issue 23): the all-to-all and the per-expert work are charged
on the layers that hold routed experts, not on every layer. DeepSeek-V3/R1 keep their first
3 of 61 layers dense (first_k_dense_replace 3), Kimi K2 its first (1), GLM-4.5/4.6 their first
3 of 92; Llama 4 Maverick puts experts on every other layer (interleave_moe_layer_step 2);
Qwen3 MoE, Mixtral, gpt-oss and Llama 4 Scout on every layer. The fields are the models'
Hugging Face config.json, cited per test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmsizer.base.errors import InputError
from llmsizer.inputs.modelconfig import model_from_config
from llmsizer.inputs.schema import Requirements
from llmsizer.model.catalog import Model, load_catalog
from llmsizer.sizing.evaluate import (
    Choice,
    account_inputs,
    build_tables,
    evaluate_choice,
    workload_inputs,
)

# deepseek-ai/DeepSeek-R1 config.json (as copied in ai-dynamo/aiconfigurator@0b077da5e
# aic-core/src/aiconfigurator_core/model_configs/deepseek-ai--DeepSeek-R1_config.json): the
# fields that size the model
DEEPSEEK_R1 = {
    "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
    "num_key_value_heads": 128, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "first_k_dense_replace": 3, "moe_layer_freq": 1, "vocab_size": 129280,
    "kv_lora_rank": 512, "qk_rope_head_dim": 64, "max_position_embeddings": 163840,
    "tie_word_embeddings": False,
}
# meta-llama/Llama-4-Maverick-17B-128E-Instruct config.json text_config (same mirror,
# meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json)
MAVERICK_TEXT = {
    "head_dim": 128, "hidden_size": 5120, "interleave_moe_layer_step": 2,
    "intermediate_size": 8192, "intermediate_size_mlp": 16384,
    "max_position_embeddings": 1048576, "num_attention_heads": 40, "num_experts_per_tok": 1,
    "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 128,
    "vocab_size": 202048,
}
# Qwen/Qwen3-30B-A3B config.json (same mirror, Qwen--Qwen3-30B-A3B_config.json)
QWEN3_30B = {
    "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32,
    "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
    "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936,
    "max_position_embeddings": 40960, "tie_word_embeddings": False,
}


def _write(tmp_path: Path, cfg: dict[str, Any]) -> Model:
    (tmp_path / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return model_from_config(tmp_path, "config.json")


def _values(model: Model, *, tp: int = 8, ep: int = 8, adp: int = 8,
            gpu: str = "b200") -> dict[str, Any]:
    cat = load_catalog()
    req = Requirements.model_validate({
        "schema_version": 1, "account": {"name": "t"},
        "workloads": [{"name": "w", "model": "deepseek-r1", "concurrent_users": 1,
                       "prompt_tokens": 1024, "output_tokens": 1024,
                       "targets": {"system_tokens_per_s": 1.0}}]})
    base = {**account_inputs(req, cat), **workload_inputs(req.workloads[0], model)}
    choice = Choice(gpu, cat.gpus[gpu].default_platform, "fp4", "fp8", tp, ep=ep, adp=adp)
    return evaluate_choice(base, choice, build_tables(req, cat), req, cat, None)


@pytest.mark.parametrize(("model", "moe_layers", "layers"), [
    ("deepseek-r1", 58, 61),  # first_k_dense_replace 3
    ("deepseek-v3", 58, 61),
    ("deepseek-v3.2", 58, 61),
    ("kimi-k2", 60, 61),  # first_k_dense_replace 1
    ("glm-4.5", 89, 92),  # first_k_dense_replace 3
    ("llama-4-maverick", 24, 48),  # interleave_moe_layer_step 2
    ("llama-4-scout", 48, 48),  # interleave_moe_layer_step 1
    ("qwen3-235b-a22b", 94, 94),  # decoder_sparse_step 1, mlp_only_layers []
    ("gpt-oss-120b", 36, 36),
    ("mixtral-8x7b", 32, 32),
])
def test_catalog_states_the_moe_layers(model: str, moe_layers: int, layers: int) -> None:
    m = load_catalog().model(model)
    assert (m.moe_layer_count, m.layers) == (moe_layers, layers)


def test_every_moe_model_in_the_catalog_states_its_moe_layers() -> None:
    """The count is read from each config.json, never left to the every-layer default."""
    for mid, m in load_catalog().models.items():
        assert (m.moe_layers is not None) == (m.experts > 0), mid
        if not m.experts:
            assert m.moe_layer_count == 0, mid


def test_config_first_k_dense_replace(tmp_path: Path) -> None:
    """DeepSeek-R1: layers 3-60 hold the experts (58); the 3 dense layers' MLP (3 x 7,168 x
    18,432 each) stays in the parameter count."""
    m = _write(tmp_path, DEEPSEEK_R1)
    assert (m.moe_layers, m.experts, m.experts_per_token) == (58, 256, 8)
    dense_mlp = 3 * 3 * 7168 * 18432
    experts = 58 * 256 * 3 * 7168 * 2048
    embed = 2 * 129280 * 7168
    # no head_dim in the config: hidden / heads = 56 (the reader's MLA attention is rough; the
    # catalog entry states the published totals)
    attn = 61 * (7168 * 128 * 56 * 2 + 7168 * 128 * 56 * 2)
    assert m.params_total == embed + attn + dense_mlp + experts
    assert m.params_active == embed + attn + dense_mlp + 58 * 8 * 3 * 7168 * 2048


def test_config_interleave_step_and_dense_width(tmp_path: Path) -> None:
    """Llama 4 Maverick: experts on layers 1, 3, ..., 47 (24 of 48); the other 24 run the
    dense MLP of intermediate_size_mlp 16,384, the experts intermediate_size 8,192."""
    m = _write(tmp_path, {"architectures": ["Llama4ForConditionalGeneration"],
                          "text_config": MAVERICK_TEXT})
    assert m.moe_layers == 24
    embed = 2 * 202048 * 5120
    attn = 48 * (5120 * 40 * 128 * 2 + 5120 * 8 * 128 * 2)
    assert m.params_total == embed + attn + 24 * 3 * 5120 * 16384 + 24 * 128 * 3 * 5120 * 8192


def test_config_every_layer_and_listed_dense_layers(tmp_path: Path) -> None:
    """Qwen3-30B-A3B: decoder_sparse_step 1 and no mlp_only_layers, every layer (48); the same
    config listing two layers in mlp_only_layers has 46; Mixtral 8x7B states no field: 32."""
    assert _write(tmp_path, QWEN3_30B).moe_layers == 48
    assert _write(tmp_path, {**QWEN3_30B, "mlp_only_layers": [0, 47]}).moe_layers == 46
    mixtral = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
               "num_key_value_heads": 8, "intermediate_size": 14336, "num_local_experts": 8,
               "num_experts_per_tok": 2, "vocab_size": 32000}
    assert _write(tmp_path, mixtral).moe_layers == 32
    dense = {k: v for k, v in mixtral.items() if k not in ("num_local_experts",
                                                           "num_experts_per_tok")}
    m = _write(tmp_path, dense)
    assert (m.moe_layers, m.moe_layer_count) == (None, 0)


def test_config_without_a_moe_layer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no layer that holds"):
        _write(tmp_path, {**DEEPSEEK_R1, "first_k_dense_replace": 61})


def test_all_to_all_and_expert_overhead_on_moe_layers_only() -> None:
    """DeepSeek-R1 FP4 on B200, DEP8: dispatch + combine on 58 layers, not 61: the latency
    term is 2 x 58 x the fitted all-to-all latency, and the per-token transfer and the
    expert overhead per token are 58 / 61 of the every-layer figures."""
    cat = load_catalog()
    r1 = cat.model("deepseek-r1")
    v = _values(r1)
    every = _values(r1.model_copy(update={"moe_layers": 61}))
    assert v["moe_layers"] == 58
    assert v["alltoall_fixed_ms"] == pytest.approx(
        2 * 58 * cat.constant("alltoall_latency_us") / 1000, rel=1e-12)
    for name in ("alltoall_fixed_ms", "alltoall_ms_per_token", "expert_slot_flops"):
        assert v[name] == pytest.approx(every[name] * 58 / 61, rel=1e-12), name
    # the weights are the published totals either way: 3 dense layers' MLP are in them
    assert v["weights_gb"] == every["weights_gb"]
    assert v["routed_expert_params"] == every["routed_expert_params"]


def test_moe_layers_cannot_exceed_the_layers() -> None:
    r1 = load_catalog().model("deepseek-r1")
    with pytest.raises(ValueError, match="moe_layers"):
        Model.model_validate({**r1.model_dump(), "moe_layers": 62})
