"""Data checks on the shipped GPU, platform and model catalogs.

These pin the catalog numbers to their published sources, so that an edit that slips a
sparse figure in for a dense one, or a marketing capacity for a datasheet one, fails here.
"""

from __future__ import annotations

import re
from importlib import resources

import pytest
import yaml

from llmsizer.model.catalog import LabelIndex, load_catalog

MAIN_GPU_IDS = [
    "a10", "a10g", "l4", "l40s", "a100-40gb-pcie", "a100-80gb-pcie", "a100-sxm",
    "h100-pcie", "h100-sxm", "h100-nvl", "h200-sxm", "h200-nvl", "b200", "b300", "gb200",
    "rtx-4090", "rtx-pro-6000", "mi300x", "mi325x", "mi355x", "gaudi3",
]

REQUIRED_MODEL_IDS = [
    "llama-2-70b", "llama-3-8b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b",
    "llama-3.3-70b", "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b",
    "gemma-2-27b", "deepseek-v3", "gpt-oss-120b", "qwen3-30b-a3b",
]


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _raw(name: str) -> dict:
    text = (resources.files("llmsizer.model") / "catalogs" / f"{name}.yaml").read_text("utf-8")
    return yaml.safe_load(text)[name]


# --- presence -------------------------------------------------------------------------


def test_every_main_gpu_id_exists(cat):
    missing = [g for g in MAIN_GPU_IDS if g not in cat.gpus]
    assert not missing, missing


def test_catalog_sizes(cat):
    """One GPU entry per row of the reference table (21); >= 8 platforms; >= 14 models."""
    assert len(cat.gpus) >= 21
    assert len(cat.platforms) >= 8
    assert len(cat.models) >= 14


def test_required_models_exist(cat):
    missing = [m for m in REQUIRED_MODEL_IDS if m not in cat.models]
    assert not missing, missing


def test_gpu_ids_are_lowercase_hyphen(cat):
    for gid in cat.gpus:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", gid), gid


# --- datasheet values -----------------------------------------------------------------


def test_h100_sxm_datasheet(cat):
    """NVIDIA H100 datasheet, SXM column: 80 GB HBM3, 3.35 TB/s, BF16 1,979 TF with
    sparsity -> 989.5 dense (Glenn Lockwood lists 989.4; aiconfigurator h100_sxm.yaml 989),
    FP8 3,958 sparse -> 1,979 dense, up to 700 W, NVLink 900 GB/s bidirectional."""
    g = cat.gpu("h100-sxm")
    assert g.memory_gb == 80
    assert g.bandwidth_tb_s == pytest.approx(3.35)
    assert g.bf16_tflops == pytest.approx(989, abs=1)
    assert g.fp8_tflops == pytest.approx(1979, abs=1)
    assert g.fp4_tflops is None
    assert g.tdp_w == 700
    assert g.link_gb_s == 450
    assert g.max_tp == 8


def test_h200_datasheet(cat):
    """NVIDIA H200 page: 141 GB HBM3e at 4.8 TB/s; same compute as H100 SXM."""
    g = cat.gpu("h200-sxm")
    assert g.memory_gb == 141
    assert g.bandwidth_tb_s == pytest.approx(4.8)
    assert g.bf16_tflops == pytest.approx(989, abs=1)


def test_l40s_dense(cat):
    """NVIDIA L40S datasheet (via mullet.se): 'BFLOAT16 362.05 | 733*' where * = sparsity,
    so 362 is the DENSE figure; 48 GB, 864 GB/s, 350 W."""
    g = cat.gpu("l40s")
    assert g.bf16_tflops == pytest.approx(362, abs=1)
    assert g.memory_gb == 48
    assert g.bandwidth_tb_s == pytest.approx(0.864)


def test_b200_hgx(cat):
    """NVIDIA Blackwell datasheet, HGX B200 column: 180 GB, 7.7 TB/s (8 TB/s is GB200's),
    BF16 4.5 PF sparse -> 2,250 dense, FP4 9 PF dense, up to 1,000 W."""
    g = cat.gpu("b200")
    assert g.memory_gb == 180
    assert g.bandwidth_tb_s == pytest.approx(7.7)
    assert g.bf16_tflops == pytest.approx(2250)
    assert g.fp4_tflops == pytest.approx(9000)
    assert g.tdp_w == 1000


def test_a100_sxm(cat):
    """NVIDIA A100 datasheet: 80GB SXM 2,039 GB/s, 312 TF BF16 dense, 400 W; no FP8."""
    g = cat.gpu("a100-sxm")
    assert g.bandwidth_tb_s == pytest.approx(2.039)
    assert g.bf16_tflops == pytest.approx(312)
    assert g.fp8_tflops is None


def test_b300_usable_memory(cat):
    """NVIDIA Blackwell Ultra datasheet, HGX B300: 270 GB usable (288 GB physical), FP4 14 PF
    dense (printed, not half of 18), INT8 307 TOPS sparse -> 153.5 dense."""
    g = cat.gpu("b300")
    assert g.memory_gb == 270
    assert g.fp4_tflops == pytest.approx(14000)
    assert g.int8_tops == pytest.approx(153.5)
    assert "288" in g.notes


def test_a10g_compute_is_a_flagged_estimate(cat):
    """A10G tensor throughput and TDP are not published (Baseten: less than the A10), so the
    catalog must not copy the A10's 125 TF and must say the numbers are estimates."""
    g = cat.gpu("a10g")
    assert g.bf16_tflops < cat.gpu("a10").bf16_tflops
    assert "estimate, not published" in g.notes.lower()


def test_dense_not_sparse(cat):
    """Guard against sparse figures: H100 PCIe 756 dense (1,513 sparse), L4 121 (242 sparse)."""
    assert cat.gpu("h100-pcie").bf16_tflops == pytest.approx(756, abs=1)
    assert cat.gpu("l4").bf16_tflops == pytest.approx(121, abs=1)


def test_fp8_fp4_native_flags(cat):
    """FP8 null on Ampere (A10, A100); FP4 only on Blackwell-class and MI355X."""
    for gid in ("a10", "a10g", "a100-40gb-pcie", "a100-80gb-pcie", "a100-sxm"):
        assert cat.gpu(gid).fp8_tflops is None, gid
    fp4 = {gid for gid, g in cat.gpus.items() if g.fp4_tflops is not None}
    assert fp4 == {"b200", "b300", "gb200", "gb300", "rtx-pro-6000", "mi355x"}


def test_link_is_one_direction(cat):
    """link_gb_s is one direction: NVLink 4 900 bidir -> 450; NVLink 5 1,800 -> 900;
    PCIe Gen4 x16 32 GB/s each way."""
    assert cat.gpu("h200-sxm").link_gb_s == 450
    assert cat.gpu("b200").link_gb_s == 900
    assert cat.gpu("l40s").link_gb_s == 32
    assert cat.gpu("rtx-pro-6000").link_gb_s == 64


# --- sources, prices -------------------------------------------------------------------


def test_every_entry_has_a_source(cat):
    for table in (cat.gpus, cat.platforms, cat.models):
        for key, entry in table.items():
            assert entry.source.strip(), key


def test_every_price_has_date_and_source(cat):
    for gid, g in cat.gpus.items():
        if g.price_usd is not None:
            assert g.price_date and g.price_source, gid
        else:
            assert g.price_date is None and g.price_source is None, gid
    for gid, offers in cat.prices.cloud.items():  # cloud prices: catalogs/prices.yaml
        for tier, o in offers.items():
            assert o.source.strip() and (o.date is None or o.date[:4].isdigit()), (gid, tier)


def test_raw_yaml_numbers_are_numbers():
    """PyYAML reads '7e9' (no dot, unsigned exponent) as a string, which pydantic would then
    coerce silently; keep every numeric field a real YAML number."""
    for name in ("gpus", "platforms", "models"):
        for key, entry in _raw(name).items():
            for field, value in entry.items():
                if field == "price_date":
                    assert value is None or isinstance(value, str), (name, key, field)
                if isinstance(value, str):
                    assert not re.fullmatch(r"[-+]?[0-9.]+([eE][-+]?[0-9]+)?", value), (
                        name, key, field, value)


# --- cross references ------------------------------------------------------------------


def test_every_gpu_default_platform_lists_it(cat):
    for gid, g in cat.gpus.items():
        plat = cat.platform(g.default_platform)
        assert gid in plat.gpus, (gid, g.default_platform)


def test_max_tp_fits_default_platform(cat):
    for gid, g in cat.gpus.items():
        assert g.max_tp <= cat.platform(g.default_platform).gpus_per_node, gid


def test_every_gpu_is_on_some_platform(cat):
    on_platform = {gid for p in cat.platforms.values() for gid in p.gpus}
    assert set(cat.gpus) <= on_platform


def test_a_server_named_for_its_gpus_lists_only_those(cat):
    """A server's name, power and price are for the GPUs it names (the power estimates say so).

    The generic MI325X server listed the MI300X too: every MI300X account was offered it a
    second time, charged the MI325X's 12 kW. Generic card servers ("double-width PCIe") name
    no model and are exempt.
    """
    for pid, plat in cat.platforms.items():
        name = plat.name.upper().replace(" ", "")
        if "PCIE" in name and ("DOUBLE-WIDTH" in name or "SINGLE-SLOT" in name):
            continue
        for gid in plat.gpus:
            assert gid.split("-")[0].upper() in name, (pid, gid, plat.name)


def test_four_gpu_h100_sxm_platform_exists(cat):
    """A golden case sizes '4x H100 80GB' nodes."""
    assert any(
        "h100-sxm" in p.gpus and p.gpus_per_node == 4 for p in cat.platforms.values()
    )


def test_dgx_power_from_vendor(cat):
    """NVIDIA DGX H100 user guide: 10.2 kW max; DGX B200 user guide: 14.3 kW max."""
    assert cat.platform("dgx-h100").node_power_kw == pytest.approx(10.2)
    assert cat.platform("dgx-b200").node_power_kw == pytest.approx(14.3)


# --- models ----------------------------------------------------------------------------


def test_llama_31_70b_shape(cat):
    """Seed 002 / meta-llama/Llama-3.1-70B-Instruct config.json: 80 layers, 64 heads,
    8 KV heads, head_dim 128, hidden 8192; 70.6e9 parameters (model card)."""
    m = cat.model("llama-3.1-70b")
    assert m.layers == 80
    assert m.kv_heads == 8
    assert m.head_dim == 128
    assert m.attention_heads == 64
    assert m.hidden_size == 8192
    assert m.params_total == pytest.approx(70.6e9, rel=0.01)


def test_model_param_counts(cat):
    """Published totals: Llama-3.1 8B 8.03e9 / 405B 405.9e9; Mixtral 46.7e9 total, 12.9e9
    active; DeepSeek-V3 671e9 / 37e9; gpt-oss-120b 116.8e9 / 5.1e9."""
    assert cat.model("llama-3.1-8b").params_total == pytest.approx(8.03e9, rel=0.01)
    assert cat.model("llama-3.1-405b").params_total == pytest.approx(405.9e9, rel=0.01)
    mx = cat.model("mixtral-8x7b")
    assert (mx.params_total, mx.params_active) == (pytest.approx(46.7e9), pytest.approx(12.9e9))
    ds = cat.model("deepseek-v3")
    assert (ds.params_total, ds.params_active) == (pytest.approx(671e9), pytest.approx(37e9))
    go = cat.model("gpt-oss-120b")
    assert (go.params_total, go.params_active) == (pytest.approx(116.8e9), pytest.approx(5.1e9))


def test_deepseek_mla(cat):
    """DeepSeek-V3 config.json: kv_lora_rank 512, qk_rope_head_dim 64, 256 routed experts,
    8 per token, 61 layers."""
    m = cat.model("deepseek-v3")
    assert (m.kv_lora_rank, m.qk_rope_head_dim) == (512, 64)
    assert (m.experts, m.experts_per_token, m.layers) == (256, 8, 61)


def test_kv_heads_divide_attention_heads(cat):
    for mid, m in cat.models.items():
        assert m.attention_heads % m.kv_heads == 0, mid


def test_moe_fields_consistent(cat):
    for mid, m in cat.models.items():
        assert m.params_active <= m.params_total, mid
        if m.experts:
            assert 0 < m.experts_per_token <= m.experts, mid
            assert m.params_active < m.params_total, mid
        else:
            assert m.experts_per_token == 0, mid
            assert m.params_active == m.params_total, mid


def test_mla_fields_only_on_mla_models(cat):
    for mid, m in cat.models.items():
        assert (m.kv_lora_rank == 0) == (m.qk_rope_head_dim == 0), mid


# (layers, hidden, heads, KV heads, head_dim, experts, top-k, window, window layers, vocab)
# from each model's Hugging Face config.json, as each entry's source cites it (issue 23).
NEW_MODEL_CONFIGS = {
    "qwen2.5-coder-32b": (64, 5120, 40, 8, 128, 0, 0, 0, 0, 152064),
    "qwen3-coder-30b-a3b": (48, 2048, 32, 4, 128, 128, 8, 0, 0, 151936),
    "qwen3-coder-480b-a35b": (62, 6144, 96, 8, 128, 160, 8, 0, 0, 151936),
    "qwen3-8b": (36, 4096, 32, 8, 128, 0, 0, 0, 0, 151936),
    "qwen3-14b": (40, 5120, 40, 8, 128, 0, 0, 0, 0, 151936),
    "llama-3.2-1b": (16, 2048, 32, 8, 64, 0, 0, 0, 0, 128256),
    "llama-3.2-3b": (28, 3072, 24, 8, 128, 0, 0, 0, 0, 128256),
    "llama-4-scout": (48, 5120, 40, 8, 128, 16, 1, 8192, 36, 202048),
    "llama-4-maverick": (48, 5120, 40, 8, 128, 128, 1, 8192, 36, 202048),
    "gemma-3-27b": (62, 5376, 32, 16, 128, 0, 0, 1024, 52, 262208),
    "kimi-k2": (61, 7168, 64, 64, 128, 384, 8, 0, 0, 163840),
    "glm-4.5": (92, 5120, 96, 8, 128, 160, 8, 0, 0, 151552),
    "glm-4.6": (92, 5120, 96, 8, 128, 160, 8, 0, 0, 151552),
    "qwen3-next-80b-a3b": (48, 2048, 16, 2, 256, 512, 10, 0, 0, 151936),
    "mistral-small-3.1": (40, 5120, 32, 8, 128, 0, 0, 0, 0, 131072),
    "mistral-large-2": (88, 12288, 96, 8, 128, 0, 0, 0, 0, 32768),
    "deepseek-v3.1": (61, 7168, 128, 128, 128, 256, 8, 0, 0, 129280),
    "deepseek-v3.2": (61, 7168, 128, 128, 128, 256, 8, 0, 0, 129280),
}


@pytest.mark.parametrize("mid", sorted(NEW_MODEL_CONFIGS))
def test_new_models_match_their_config(cat, mid):
    m = cat.model(mid)
    assert (m.layers, m.hidden_size, m.attention_heads, m.kv_heads, m.head_dim, m.experts,
            m.experts_per_token, m.sliding_window, m.window_layers,
            m.vocab_size) == NEW_MODEL_CONFIGS[mid]
    assert f"https://huggingface.co/{m.hf_id}/blob/main/config.json" in m.source.replace(
        "\n", " ") or "config.json" in m.source, mid
    assert "model card" in m.source, mid


def test_new_model_parameter_counts(cat):
    """Model cards: Qwen3-Coder-480B-A35B 480B / 35B; Llama 4 Maverick 400B / 17B; Kimi K2
    1T / 32B; GLM-4.5 355B / 32B; Qwen2.5-Coder-32B 32.5B; Qwen3-Next 80B / 3B."""
    pairs = {"qwen3-coder-480b-a35b": (480e9, 35e9), "llama-4-maverick": (400e9, 17e9),
             "kimi-k2": (1.04e12, 32e9), "glm-4.5": (355e9, 32e9),
             "qwen2.5-coder-32b": (32.5e9, 32.5e9), "qwen3-next-80b-a3b": (80e9, 3e9)}
    for mid, (total, active) in pairs.items():
        m = cat.model(mid)
        assert (m.params_total, m.params_active) == (pytest.approx(total), pytest.approx(active))


def test_mistral_and_deepseek_v3x_parameters_weights_and_kv(cat):
    """Model cards: Mistral Small 3.1 24B, Mistral Large 2 123B, DeepSeek-V3.1 / V3.2 671B
    total, 37B activated. Weights at BF16 = parameters x 2 B. KV per token at BF16 from the
    configs: GQA 2 (K, V) x layers x 8 KV heads x 128 x 2 B (Mistral Small 40 layers:
    163,840 B; Mistral Large 88 layers: 360,448 B); MLA (512 + 64) x 61 layers x 2 B =
    70,272 B for both DeepSeek checkpoints, + V3.2's indexer keys, 61 x 132 B (128 FP8 values
    + a 4-byte scale: tests/test_sparse_attention.py) = 78,324 B."""
    want = {"mistral-small-3.1": (24.0e9, 24.0e9, 163840),
            "mistral-large-2": (123.0e9, 123.0e9, 360448),
            "deepseek-v3.1": (671e9, 37e9, 70272), "deepseek-v3.2": (671e9, 37e9, 70272 + 61 * 132)}
    for mid, (total, active, kv) in want.items():
        m = cat.model(mid)
        assert (m.params_total, m.params_active) == (pytest.approx(total), pytest.approx(active))
        v = _values(m)
        assert v["weights_gb"] == pytest.approx(total * 2 / 1e9, rel=1e-9), mid
        assert v["kv_bytes_per_token"] == kv, mid
    v32 = cat.model("deepseek-v3.2")
    assert (v32.kv_lora_rank, v32.qk_rope_head_dim, v32.shared_experts) == (512, 64, 1)
    # DSA: what the sizing represents and what it still leaves out (dense prefill)
    assert "Not represented: prefill" in v32.notes and "2,048" in v32.notes
    assert (v32.indexer_heads, v32.indexer_head_dim, v32.indexer_topk) == (64, 128, 2048)
    # the V3.1 label reads as V3.1 now, not as V3
    assert LabelIndex(cat).model("DeepSeek-V3.1") == "deepseek-v3.1"
    assert LabelIndex(cat).model("DeepSeek-V3.2-Exp") == "deepseek-v3.2"


def _values(model):
    from llmsizer.inputs.schema import Requirements
    from llmsizer.sizing.evaluate import (
        Choice,
        account_inputs,
        build_tables,
        evaluate_choice,
        workload_inputs,
    )
    cat = load_catalog()
    req = Requirements.model_validate({
        "schema_version": 1, "account": {"name": "t"},
        "workloads": [{"name": "w", "model": "llama-3.1-8b", "concurrent_users": 1,
                       "prompt_tokens": 1024, "output_tokens": 256,
                       "targets": {"system_tokens_per_s": 1.0}}]})
    base = {**account_inputs(req, cat), **workload_inputs(req.workloads[0], model)}
    choice = Choice("b200", cat.gpus["b200"].default_platform, "bf16", "bf16", 8)
    return evaluate_choice(base, choice, build_tables(req, cat), req, cat, None)


def test_kimi_k2_is_mla_and_qwen3_next_hybrid(cat):
    """Kimi K2 config.json: kv_lora_rank 512, qk_rope_head_dim 64, 1 shared expert. Qwen3-Next
    config.json: full_attention_interval 4 (36 of 48 layers linear), state 32 x 128 x 128 +
    3 x (2 x 16 x 128 + 32 x 128)."""
    k2 = cat.model("kimi-k2")
    assert (k2.kv_lora_rank, k2.qk_rope_head_dim, k2.shared_experts) == (512, 64, 1)
    nx = cat.model("qwen3-next-80b-a3b")
    assert nx.linear_attention_layers == 48 - 48 // 4
    assert nx.linear_state_elements == 32 * 128 * 128 + 3 * (2 * 16 * 128 + 32 * 128)


def test_window_fields_go_together(cat):
    for mid, m in cat.models.items():
        assert (m.sliding_window == 0) == (m.window_layers == 0), mid
        assert m.window_layers + m.linear_attention_layers <= m.layers, mid
    assert (cat.model("gpt-oss-120b").sliding_window, cat.model("gpt-oss-120b").window_layers) \
        == (128, 18)
