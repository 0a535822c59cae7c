"""Mixture-of-experts, expert/attention data-parallel, pipeline stages, FP4 and derating
(DESIGN §3 turn-2 additions; issue 13). Measured figures are pinned from
tests/data/measured_blackwell_moe.csv with the source each row names."""

from __future__ import annotations

import random
from typing import Any

import pytest
from helpers import DATA

from llmsizer.inputs.benchdata import read_points
from llmsizer.inputs.loader import Loaded
from llmsizer.inputs.schema import Requirements
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.evaluate import (
    Choice,
    account_inputs,
    build_tables,
    error_group,
    evaluate_choice,
    workload_inputs,
)
from llmsizer.sizing.fidelity import prepare, score

MOE_CSV = DATA / "measured_blackwell_moe.csv"


def _values(model: str, gpu: str, weights: str, kv: str, tp: int, *, pp: int = 1, ep: int = 1,
            adp: int = 1, prompt: int = 1024, output: int = 1024, cap: int = 256,
            overrides: dict[str, float] | None = None) -> dict[str, Any]:
    cat = load_catalog()
    req = Requirements.model_validate({
        "schema_version": 1, "account": {"name": "t"},
        "workloads": [{"name": "w", "model": model, "concurrent_users": 1,
                       "prompt_tokens": prompt, "output_tokens": output,
                       "targets": {"system_tokens_per_s": 1.0}}],
        "policy": {"max_batch_per_replica": cap}})
    base = {**account_inputs(req, cat), **workload_inputs(req.workloads[0], cat.models[model])}
    choice = Choice(gpu, cat.gpus[gpu].default_platform, weights, kv, tp, pp=pp, ep=ep, adp=adp)
    return evaluate_choice(base, choice, build_tables(req, cat), req, cat, overrides)


# --- the expected experts a batch touches (DESIGN §3, turn 2) ---------------------------------


@pytest.mark.parametrize(("batch", "fraction"), [
    (1, 8 / 256),  # one token reads its top-8 of 256 routed experts
    (64, 1 - (1 - 8 / 256) ** 64),  # 0.869: most, not all
    (256, 1 - (1 - 8 / 256) ** 256),  # 0.9997: all at large B
])
def test_deepseek_experts_read_fraction_follows_the_batch(batch: int, fraction: float) -> None:
    """DeepSeek-R1 (256 routed experts, top-8, config.json): E x (1 - (1 - k/E)^B) distinct
    experts at a step of B tokens."""
    v = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8, cap=batch)
    assert v["batch_per_replica"] == batch
    assert v["experts_read_fraction"] == pytest.approx(fraction, rel=1e-9)


def test_moe_weight_reads_grow_with_batch_between_active_and_total() -> None:
    v1 = _values("deepseek-r1", "b200", "fp4", "fp8", 8, cap=1)
    v256 = _values("deepseek-r1", "b200", "fp4", "fp8", 8, cap=256)
    per_param = v1["weight_bytes_per_param"] / 1e9
    # B = 1 reads the active parameters (37B), B = 256 nearly all 671B
    assert v1["weights_read_gb"] == pytest.approx(37e9 * per_param, rel=0.01)
    assert v256["weights_read_gb"] == pytest.approx(671e9 * per_param, rel=0.01)


# --- attention data-parallel and expert parallel ---------------------------------------------


def test_attention_dp_stores_mla_kv_once_per_rank_and_replicates_attention_weights() -> None:
    """MLA keeps one latent per token (61 x 576 values; 35,136 B in FP8). Under TP8 every GPU
    holds it; with attention data-parallel over 8 ranks each sequence lives on one rank."""
    tp = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8)
    adp = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8, adp=8)
    assert tp["kv_bytes_per_token"] == 61 * 576
    assert tp["kv_gb_per_request"] == pytest.approx(8 * adp["kv_gb_per_request"], rel=1e-12)
    # one copy of the non-expert weights: 10.34 B at NVFP4 + the 6.21 B the FP4 checkpoint
    # keeps in BF16 (models.yaml) at 2 bytes
    shared_gb = ((adp["shared_params"] - 6.210e9) * adp["weight_bytes_per_param"]
                 + 6.210e9 * 2) / 1e9
    assert adp["weights_gb"] - tp["weights_gb"] == pytest.approx(7 * shared_gb, rel=1e-9)
    assert adp["max_sequences_by_memory"] > 5 * tp["max_sequences_by_memory"]


def test_expert_and_attention_parallel_replace_all_reduce_by_all_to_all() -> None:
    tp = _values("deepseek-r1", "b200", "fp4", "fp8", 8)
    dep = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8, adp=8)
    assert tp["alltoall_fixed_ms"] == 0 and tp["allreduce_fixed_ms"] > 0
    assert dep["allreduce_fixed_ms"] == 0 and dep["allreduce_ms_per_token"] == 0
    assert dep["alltoall_fixed_ms"] > 0 and dep["alltoall_ms_per_token"] > 0


def test_expert_parallel_without_attention_dp_combines_by_all_reduce() -> None:
    """Without attention data-parallel every GPU holds every token after attention: each
    computes its own experts and an all-reduce over the TP group sums them, as for a split
    MLP (SGLang --ep-size without DP attention, InferenceX dsr1_fp4_b200.sh; TensorRT-LLM's
    all-to-all only with enable_attention_dp). The communication is then TP8's."""
    tp = _values("deepseek-r1", "b200", "fp4", "fp8", 8)
    ep = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8)
    assert ep["alltoall_fixed_ms"] == 0 and ep["alltoall_ms_per_token"] == 0
    assert ep["allreduce_fixed_ms"] == tp["allreduce_fixed_ms"] > 0
    assert ep["allreduce_ms_per_token"] == pytest.approx(tp["allreduce_ms_per_token"], rel=1e-12)


def _busiest_share_simulated(batch: int, ep: int, experts: int = 256, top_k: int = 8,
                             trials: int = 3000) -> float:
    """Mean over random steps of the largest share of its experts one EP rank's tokens
    touch, each token routed uniformly to top_k distinct experts, rank = expert // (E / EP)."""
    rng = random.Random(23)
    per_rank = experts // ep
    total = 0.0
    for _ in range(trials):
        hit = {e for _ in range(batch) for e in rng.sample(range(experts), top_k)}
        loads = [0] * ep
        for e in hit:
            loads[e // per_rank] += 1
        total += max(loads) / per_rank
    return total / trials


@pytest.mark.parametrize("batch", [1, 4, 16])
def test_expert_parallel_step_waits_for_the_busiest_gpu(batch: int) -> None:
    """DeepSeek-R1 (256 routed experts, top-8) at EP8: the GPU whose 32 experts a step's
    tokens touch most reads more than the mean share; the closed form is at or above a
    uniform-routing simulation and within 30 % of it (DeepSeek's group-limited routing, at
    most 4 groups a token, only raises the real figure). Without EP the share is the mean."""
    ep = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8, cap=batch)
    tp = _values("deepseek-r1", "b200", "fp4", "fp8", 8, cap=batch)
    mean, busiest = ep["experts_read_fraction"], ep["experts_read_busiest_fraction"]
    simulated = _busiest_share_simulated(batch, 8)
    assert mean < simulated <= busiest <= 1.3 * simulated
    assert tp["experts_read_busiest_fraction"] == tp["experts_read_fraction"]
    assert ep["decode_weights_ms"] > tp["decode_weights_ms"]
    # batch_by_tpot bounds the experts read by B x the one-token share: it must hold
    one = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8, cap=1)
    assert busiest <= batch * one["experts_read_busiest_fraction"]


def _busiest_share_group_limited(batch: int, trials: int = 1500) -> float:
    """The same under DeepSeek-V3/R1's group-limited routing (config.json: 256 routed experts
    in n_group 8 groups of 32, topk_group 4, top-8): a token keeps the 4 groups whose two best
    scores sum highest and takes its 8 experts among them. At EP8 the engines place experts
    in order (rank = expert // 32), so each rank holds one group and a token reaches at most
    4 ranks. Scores are random: any ordering of them routes the same way."""
    rng = random.Random(23)
    total = 0.0
    for _ in range(trials):
        hit: set[int] = set()
        for _ in range(batch):
            scores = [rng.random() for _ in range(256)]
            groups = sorted(range(8), key=lambda g: sum(sorted(scores[g * 32:g * 32 + 32])[-2:]))
            kept = [e for g in groups[-4:] for e in range(g * 32, g * 32 + 32)]
            hit.update(sorted(kept, key=scores.__getitem__)[-8:])
        loads = [0] * 8
        for e in hit:
            loads[e // 32] += 1
        total += max(loads) / 32
    return total / trials


@pytest.mark.parametrize("batch", [1, 4])
def test_busiest_gpu_share_matches_deepseek_group_limited_routing(batch: int) -> None:
    """Issue 23, EP rows at concurrency <= 4 (docs/calibration-history.md, third pass): the busiest
    EP8 GPU's expert share the step waits for is within 10 % of a simulation of the routing
    DeepSeek-R1 runs (0.094 vs 0.094 at one token, 0.236 vs 0.226 at four), so the
    over-prediction of the FP4 EP8 rows at concurrency 1 is not in the experts read."""
    ep = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8, cap=batch)
    simulated = _busiest_share_group_limited(batch)
    assert ep["experts_read_busiest_fraction"] == pytest.approx(simulated, rel=0.10)
    assert simulated > _busiest_share_simulated(batch, 8)  # grouping concentrates tokens


def test_expert_parallel_option_sized_for_a_speed_meets_it() -> None:
    """The tokens/s batch is solved with the busiest GPU's bound, so an EP option at that
    batch still meets the target (DeepSeek-R1 FP4 on B200, 30 tok/s per user)."""
    doc = _account({"gpus": ["b200"], "weight_precisions": ["fp4"]}, "deepseek-r1")
    doc["workloads"][0]["targets"] = {"tokens_per_s_per_user": 30}
    doc["workloads"][0]["concurrent_users"] = 2000
    options = size(_loaded(doc)).workloads[0].options
    ep = [o for o in options if "/ep" in o.id and o.feasible]
    assert ep
    for o in ep:
        assert float(o.values["tpot_full_ms"]) <= 1000 / 30 * (1 + 1e-9), o.id


def test_dense_option_unchanged_by_the_new_inputs_at_their_defaults() -> None:
    """pp = ep = adp = 1 gives the formulas of before: two all-reduces per layer under TP."""
    v = _values("llama-3.3-70b", "h100-sxm", "fp8", "fp8", 4)
    assert v["gpus_per_replica"] == 4
    assert v["allreduce_fixed_ms"] == pytest.approx(2 * 80 * v["allreduce_latency_us"] / 1000)
    # + the 2.1027e9 embed_tokens, lm_head and norms an FP8 checkpoint keeps at 2 bytes
    # (session 25 weights audit; was 70.6): the ep/adp inputs change nothing at 1
    assert v["weights_gb"] == pytest.approx(70.6 + 2.1027, rel=1e-9)


def test_pipeline_stages_reread_weights_but_split_per_sequence_work() -> None:
    """FIELD-NOTES: pipeline parallelism re-reads each stage's weights per micro-batch: the
    weight term does not shrink with PP, the per-sequence terms do."""
    one = _values("llama-3.3-70b", "rtx-pro-6000", "fp4", "fp8", 1)
    four = _values("llama-3.3-70b", "rtx-pro-6000", "fp4", "fp8", 1, pp=4)
    assert four["gpus_per_replica"] == 4
    assert four["decode_weights_ms"] == pytest.approx(one["decode_weights_ms"], rel=1e-12)
    assert four["decode_compute_ms_per_seq"] == pytest.approx(
        one["decode_compute_ms_per_seq"] / 4, rel=1e-12)


# --- FP4: its own efficiency, attention at the KV precision --------------------------------


def test_fp4_uses_its_own_compute_efficiency_and_fp8_attention() -> None:
    cat = load_catalog()
    v = _values("llama-3.3-70b", "b200", "fp4", "fp8", 1)
    assert v["mfu_decode"] == cat.constant("mfu_decode_4bit")
    assert v["mfu_prefill"] == cat.constant("mfu_prefill_4bit")
    assert v["peak_tflops"] == 9000  # B200 dense FP4 (NVIDIA Blackwell datasheet)
    assert v["attention_peak_tflops"] == 4500  # FP8 KV: attention at the FP8 rate


@pytest.mark.parametrize(("weights", "bytes_per_weight"), [
    # NVFP4: 4-bit values + one FP8 (1-byte) scale per 16 of them = 0.5 + 1/16
    ("fp4", 0.5 + 1 / 16),
    # OCP MXFP4: 4-bit values + one E8M0 (1-byte) scale per 32 of them = 0.5 + 1/32
    ("mxfp4", 0.5 + 1 / 32),
])
def test_fp4_block_scales_are_read_with_the_weights(weights: str,
                                                    bytes_per_weight: float) -> None:
    """Each decode step streams the block scales with the 4-bit values (issue 23, fourth
    pass: counted, so no missing bytes explain the FP4 small-batch rows)."""
    v = _values("deepseek-r1", "b200", weights, "fp8", 8, ep=8)
    assert v["weight_bytes_per_param"] == pytest.approx(bytes_per_weight)
    assert v["shared_weights_ms"] == pytest.approx(
        v["shared_params"] * bytes_per_weight / 1e9 / (8 * 7.7 * v["mbu_weights"]))  # 7.7 TB/s


def test_fp4_small_batch_step_is_shorter_than_the_fixed_terms(
        predicted: dict[int, tuple[float, float]]) -> None:
    """Why no FP4 bandwidth efficiency can fit the FP4 rows at small batch (docs/calibration-history.md,
    "Fourth pass: FP4 at small batch"): in one InferenceX run (SGLang v0.5.12 on 8x B200,
    DeepSeek-R1-0528, concurrency 1, 2026-05-22) the FP4 TP8 EP8 step (rows 642/672, 5.87 and
    6.04 ms) is shorter than the model's all-reduce latency and step overhead alone, while the
    FP8 TP8 step (rows 597/612, 7.18 and 7.39 ms) is longer than them: the model's fixed
    part, fitted on FP8 and BF16 rows, is what the FP4 path does not pay. The model now takes a
    per-layer FP4 saving off the step ("Fifth pass: the MTP draft and the FP4 saving": 14.74 µs
    x 61 layers, fitted on the rows without expert parallelism), and nothing off FP8."""
    fp4 = _values("deepseek-r1", "b200", "fp4", "fp8", 8, ep=8, cap=1)  # one user
    fp8 = _values("deepseek-r1", "b200", "fp8", "fp8", 8, cap=1)
    for v, rows, shorter in ((fp4, (642, 672), True), (fp8, (597, 612), False)):
        fixed = v["comm_fixed_ms"] + v["step_overhead_ms"]
        assert fixed == pytest.approx(6.85, abs=0.01)  # 2 x 61 x 35.81 µs + 2.485 ms
        assert v["fp4_small_batch_saving_ms"] == pytest.approx(0.899 if shorter else 0, abs=1e-3)
        for row in rows:
            measured, model = predicted[row]
            assert (measured < fixed) is shorter
            # the weights the step reads: under 0.8 ms, below the FP4 excess (1.7 ms)
            assert v["decode_weights_ms"] < 0.8
            if shorter:  # +1.7 ms before the saving, +0.8 ms after it
                assert 0.7 < model - measured < 0.9


@pytest.mark.parametrize(("gpu", "weights", "cap", "drafts", "saving"), [
    ("b200", "fp4", 16, 0, 0.899),  # 16 tokens a step: the min-latency kernels' range
    ("b200", "fp4", 17, 0, 0.0),  # 17: the engines' regular GEMMs
    ("b200", "fp4", 4, 3, 0.899),  # 4 sequences x (1 + 3 drafts) = 16 tokens
    ("b200", "fp4", 5, 3, 0.0),  # 20 tokens
    ("b200", "fp8", 1, 0, 0.0),  # the FP8 checkpoint's projection is quantized: no saving
    ("mi355x", "fp4", 1, 0, 0.0),  # published for NVIDIA kernels only
])
@pytest.mark.parametrize("model", ["deepseek-r1", "llama-3.3-70b"])
def test_fp4_small_batch_saving_where_the_kernels_run(model: str, gpu: str, weights: str,
                                                      cap: int, drafts: int,
                                                      saving: float) -> None:
    """TensorRT-LLM (modeling_deepseekv3.py, ``1 <= num_tokens <= 16``) and SGLang
    (``use_min_latency_fused_a_gemm``, <= 16 tokens) run the BF16 fused-A projection of
    NVIDIA's FP4 DeepSeek checkpoints through a min-latency kernel only at 1-16 tokens; a model
    without MLA (Llama 3.3 70B, 80 layers) has no such projection."""
    over = {"spec_draft_tokens": float(drafts), "spec_draft_layers": 1.0 if drafts else 0.0,
            "spec_acceptance_length": 1.0 + 0.5 * drafts}
    v = _values(model, gpu, weights, "fp8", 8, cap=cap, overrides=over)
    assert v["batch_upper_bound"] == cap
    mla = model == "deepseek-r1"
    assert v["fp4_small_batch_saving_ms"] == pytest.approx(saving if mla else 0, abs=1e-3)


def _loaded(doc: dict[str, Any]) -> Loaded:
    cat = load_catalog()
    req = Requirements.model_validate(doc)
    return Loaded(req=req, models={w.model: cat.models[w.model] for w in req.workloads},
                  source="test")


def _account(hardware: dict[str, Any], model: str = "llama-3.3-70b") -> dict[str, Any]:
    return {"schema_version": 1, "account": {"name": "t"},
            "workloads": [{"name": "w", "model": model, "concurrent_users": 50,
                           "prompt_tokens": 1000, "output_tokens": 500,
                           "targets": {"tokens_per_s_per_user": 20}}],
            "hardware": hardware}


def test_kv_precision_not_stated_takes_the_weights_default() -> None:
    """TensorRT-LLM serves NVFP4 checkpoints with an FP8 KV cache (precisions.yaml
    default_kv_precision): FP4 weights are never paired with FP4 KV unless the account asks."""
    res = size(_loaded(_account({"gpus": ["b200"], "weight_precisions": ["fp4", "bf16"]})))
    kv = {(o.weight_precision, o.kv_precision) for o in res.workloads[0].options}
    assert kv == {("fp4", "fp8"), ("bf16", "bf16")}
    res = size(_loaded(_account({"gpus": ["b200"], "weight_precisions": ["fp4"],
                                 "kv_precisions": ["fp4"]})))
    assert {o.kv_precision for o in res.workloads[0].options} == {"fp4"}


def test_moe_models_get_expert_and_attention_parallel_options_dense_models_do_not() -> None:
    moe = size(_loaded(_account({"gpus": ["b200"], "weight_precisions": ["fp4"]},
                                "deepseek-r1")))
    ids = {o.id for o in moe.workloads[0].options}
    assert "b200/fp4/kv-fp8/tp8/ep8" in ids and "b200/fp4/kv-fp8/tp8/ep8/adp8" in ids
    dense = size(_loaded(_account({"gpus": ["b200"], "weight_precisions": ["fp4"]})))
    assert all("/ep" not in o.id for o in dense.workloads[0].options)


# --- derating of uncalibrated options ---------------------------------------------------------


def test_uncalibrated_gpu_is_derated_and_says_so() -> None:
    cat = load_catalog()
    res = size(_loaded(_account({"gpus": ["gaudi3", "h100-sxm"], "weight_precisions": ["fp8"],
                                 "tensor_parallel": [2]})))
    opts = {o.gpu: o for o in res.workloads[0].options}
    gaudi, h100 = opts["gaudi3"], opts["h100-sxm"]
    assert gaudi.calibration_gaps and not h100.calibration_gaps
    assert gaudi.values["calibration_derating"] == cat.constant("uncalibrated_derating") < 1
    assert h100.values["calibration_derating"] == 1
    undera = _values("llama-3.3-70b", "gaudi3", "fp8", "fp8", 2, prompt=1000, output=500)
    assert float(gaudi.values["bandwidth_ceiling_tokens_per_s"]) < float(
        undera["bandwidth_ceiling_tokens_per_s"])


def test_error_groups() -> None:
    cat = load_catalog()

    def group(model: str, gpu: str, weights: str) -> str:
        return error_group(cat, Choice(gpu, cat.gpus[gpu].default_platform, weights, "fp8", 1),
                           cat.models[model])

    assert group("deepseek-r1", "b200", "fp4") == "moe"
    assert group("llama-3.3-70b", "h100-sxm", "fp8") == "hopper_fp8"
    assert group("llama-3.3-70b", "h200-sxm", "bf16") == "hopper_bf16"
    assert group("llama-3.3-70b", "b200", "fp4") == "blackwell_fp4"
    assert group("llama-3.3-70b", "b200", "fp8") == "blackwell_fp8"
    assert group("llama-3.3-70b", "mi300x", "fp8") == "amd"
    assert group("llama-3.3-70b", "l40s", "fp8") == "other"


# --- measured rows (tests/data/measured_blackwell_moe.csv) -------------------------------------


@pytest.fixture(scope="module")
def predicted() -> dict[int, tuple[float, float]]:
    cat = load_catalog()
    points, _ = read_points(MOE_CSV, cat)
    cases, _ = prepare(points, cat)
    return {r.point.row: (r.point.value, r.predicted) for r in score(cases, cat)}


@pytest.mark.parametrize(("row", "measured", "tolerance"), [
    # TensorRT-LLM v0.19 perf overview: Llama-3.3-70B NVFP4 on 1x B200, 128/128, offline
    (1, 11_253.28, 0.15),
    # TensorRT-LLM 1.2 perf overview: DeepSeek-R1-0528 NVFP4 on 4x B200, DEP4 (TP4 EP4 attention
    # DP), 1024/1024, offline: 5,757 tok/s per GPU. -17 % since the expert overhead per token
    # (issue 23; -1 % before): the fit trades these offline rows for the InferenceX DeepSeek
    # rows and the narrow-expert models (docs/calibration.md, "Expert overhead per token")
    (116, 4 * 5_757.0, 0.20),
    # InferenceX (SemiAnalysis), SGLang on 4x MI355X, DeepSeek-R1-0528 FP4, 1k/1k, concurrency 4, mean TPOT
    (239, 9.6187, 0.15),
    # InferenceX, SGLang on 8x H200, DeepSeek-R1-0528 FP8, 1k/1k, concurrency 4, mean TPOT
    (417, 9.6997, 0.15),
    # InferenceX, SGLang on 8x MI300X, DeepSeek-R1-0528 FP8, 1k/1k, concurrency 4, mean TPOT
    (552, 14.8616, 0.15),
    # InferenceX, SGLang on 8x B200, DeepSeek-R1-0528 FP8 TP8 EP8, concurrency 4, mean TPOT,
    # 1k/1k and 8k/1k (issue 23 item 4: -5 % and -13 %; +7.5 % and -2.2 % before)
    (600, 10.2715, 0.15),
    (615, 11.9296, 0.15),
    # the same on FP4 TP8 EP8 at concurrency 1, 1k/1k and 8k/1k: +14 % and +14 % with the FP4
    # small-batch saving (+30 % and +29 % without; +66 % and +64 % when every EP option paid an
    # all-to-all; the runs use symmetric-memory all-reduce, --enable-symm-mem, which the model
    # does not know: docs/calibration.md)
    (642, 5.8709, 0.17),
    (672, 6.0359, 0.17),
])
def test_measured_rows_reproduced(predicted: dict[int, tuple[float, float]], row: int,
                                  measured: float, tolerance: float) -> None:
    value, model = predicted[row]
    assert value == pytest.approx(measured, rel=1e-6)
    assert model == pytest.approx(measured, rel=tolerance)


def test_no_expert_parallel_over_pcie() -> None:
    """An all-to-all per MoE layer over PCIe is neither measured nor how MoE models are served:
    L40S (32 GB/s per direction) gets no EP options; an NVLink GPU without EP rows gets them
    with a calibration gap."""
    l40s = size(_loaded(_account({"gpus": ["l40s"], "weight_precisions": ["fp8"]},
                                 "mixtral-8x7b")))
    assert all("/ep" not in o.id for o in l40s.workloads[0].options)
    mi = size(_loaded(_account({"gpus": ["mi300x"], "weight_precisions": ["fp8"],
                                "tensor_parallel": [8]}, "deepseek-r1")))
    ep = next(o for o in mi.workloads[0].options if o.id.endswith("/ep8"))
    assert any("expert parallelism" in g for g in ep.calibration_gaps)


def test_equal_cost_prefers_the_calibrated_option() -> None:
    """H200 has no FP4 tensor cores: FP4 weights there are dequantised to BF16, a path with no
    calibration row. At equal cost (two 8-GPU nodes either way) the calibrated FP8 option is
    recommended, not the extrapolated one. (On one platform: the DGX H200, as before issue 22
    tried every platform carrying the GPU.)"""
    doc = _account({"gpus": ["h200-sxm"], "platform": "dgx-h200",
                    "weight_precisions": ["fp4", "fp8"], "tensor_parallel": [8]}, "deepseek-r1")
    # 300 users: two nodes either way (400 needed a third for the dequantised FP4 option once
    # the expert overhead per token was fitted, issue 23)
    doc["workloads"][0]["concurrent_users"] = 300
    w = size(_loaded(doc)).workloads[0]
    fp4 = next(o for o in w.options if o.id == "h200-sxm/fp4/kv-fp8/tp8")
    assert any("dequantised" in g for g in fp4.calibration_gaps)
    best = w.best
    assert best is not None and best.weight_precision == "fp8" and not best.calibration_gaps
    assert best.values["annual_cost_onprem"] == fp4.values["annual_cost_onprem"]


# --- the expert overhead per token (issue 23: small-active MoE over-predicted) -----------------


def test_expert_overhead_counts_routed_slots_not_parameters() -> None:
    """Qwen3-30B-A3B config.json: 48 layers, hidden 2048, top-8 of 128 experts. Each token
    costs 6 x 48 x 8 x 2048 x w FLOPs beside its 2 x 3.3e9 x moe_compute_factor: with w at
    the calibrated width the overhead is a large share of its compute (narrow experts, many
    routed per active parameter), a small one for Mixtral-8x7B (32 layers, 4096, top-2 of 8,
    12.9e9 active) and 0 for a dense model."""
    cat = load_catalog()
    w = cat.constant("expert_slot_overhead")
    assert w > 0
    qwen = _values("qwen3-30b-a3b", "b200", "fp4", "fp8", 1)
    assert qwen["expert_slot_flops"] == pytest.approx(6 * 48 * 8 * 2048 * w, rel=1e-12)
    active = 2 * 3.3e9 * cat.constant("moe_compute_factor")
    mixtral = _values("mixtral-8x7b", "h100-sxm", "fp8", "fp8", 1)
    assert mixtral["expert_slot_flops"] == pytest.approx(6 * 32 * 2 * 4096 * w, rel=1e-12)
    mixtral_active = 2 * 12.9e9 * cat.constant("moe_compute_factor")
    assert qwen["expert_slot_flops"] / active > 3 * mixtral["expert_slot_flops"] / mixtral_active
    assert _values("llama-3.1-8b", "b200", "fp4", "fp8", 1)["expert_slot_flops"] == 0
    # it is compute: decode and prefill per token both carry it
    off = _values("qwen3-30b-a3b", "b200", "fp4", "fp8", 1, overrides={"expert_slot_overhead": 0})
    assert qwen["decode_compute_ms_per_seq"] > off["decode_compute_ms_per_seq"]
    assert qwen["prefill_compute_ms_per_token"] > off["prefill_compute_ms_per_token"]


def test_small_active_moe_rows_no_longer_over_predicted(
    predicted: dict[int, tuple[float, float]],
) -> None:
    """TensorRT-LLM 1.2 perf overview, Qwen3-30B-A3B NVFP4 on one B200, offline: 1024/1024
    26,431, 1024/8192 13,940, 8192/1024 5,945 output tok/s per GPU. Before the expert
    overhead they came out +59 %, +13 %, +30 % (docs/calibration.md, issue 23); the
    1024/1024 row, the largest batch, must now be within 35 % and the three together within
    25 % on median."""
    errors = [predicted[row][1] / predicted[row][0] - 1 for row in (199, 201, 204)]
    assert [predicted[row][0] for row in (199, 201, 204)] == [26431.0, 13940.0, 5945.0]
    assert abs(errors[0]) < 0.35
    assert sorted(abs(e) for e in errors)[1] < 0.25
