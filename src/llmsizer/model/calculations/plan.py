"""THE one home of every sizing formula (DESIGN §3).

``INPUTS`` declares every value the formulas read; ``CALCULATIONS`` is the ordered list
of named calculations built from :mod:`llmsizer.model.expr`. The engine evaluates them in
Python; the workbook prints the same trees as Excel formulas. Nothing else in the
package may do sizing arithmetic (``tests/test_one_home.py`` scans for it).

Units: the unit is in each name (``_gb`` = 1e9 bytes, ``_ms``, ``_tb_s`` = 1e12 B/s,
``_tflops`` = 1e12 FLOP/s, ``_gb_s``) and in ``unit``. GB / (TB/s) is a millisecond,
which is why memory-time terms below need no conversion factor.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

from ..expr import (
    AND,
    IF,
    MAX,
    MIN,
    OR,
    POWER,
    ROUNDDOWN,
    ROUNDUP,
    SUM,
    Expr,
    Program,
    compile_program,
    eq,
    ge,
    gt,
    le,
    lift,
    lookup,
    ref,
    references,
)
from .core import Calculation, _c, _gpus, r, tp
from .inputs import INPUTS


def _allreduce_bytes(n: Expr) -> Expr:
    """Bytes each GPU moves in one ring all-reduce of a token's hidden vector (2-byte
    activations) over n GPUs: 2(n-1)/n x hidden x 2 (“GenAI Physics”); 0 when n = 1."""
    return 2 * (n - 1) / n * r("hidden_size") * 2


def _tier_column(prefix: str) -> Expr:
    """The catalog column of the what-if cloud tier (1-4): ``<prefix>_on_demand`` etc."""
    return IF(eq(r("cloud_tier_what_if"), 1), lookup("gpus", "gpu", f"{prefix}_on_demand"),
              IF(eq(r("cloud_tier_what_if"), 2), lookup("gpus", "gpu", f"{prefix}_1yr"),
                 IF(eq(r("cloud_tier_what_if"), 3), lookup("gpus", "gpu", f"{prefix}_3yr"),
                    lookup("gpus", "gpu", f"{prefix}_gpu_cloud"))))


def _replicas_at(factor: Expr) -> Expr:
    """Replicas (load + N+1 spares) when each replica serves 1/factor of the modelled users."""
    load = ROUNDUP(r("demand_replicas") * factor * (1 + r("headroom")), 0)
    return load + IF(gt(r("survive_node_loss"), 0), MIN(r("replicas_per_node"), load), 0)


def _nodes_for(gpus: Expr) -> Expr:
    return MAX(ROUNDUP(gpus / r("gpus_per_node"), 0), IF(gt(r("survive_node_loss"), 0), 2, 1))


def _purchased(gpus: Expr, nodes: Expr) -> Expr:
    return IF(gt(r("platform_sold_full"), 0), nodes * r("gpus_per_node"), gpus)

CALCULATIONS: tuple[Calculation, ...] = (
    # ---- catalog values for this option (live lookups into the Catalog sheet) ----------
    _c("gpu_memory_gb", "GPU memory", "GB", "KV", lookup("gpus", "gpu", "memory_gb"),
       "Per GPU, as marketed (GB = 1e9 bytes)."),
    _c("gpu_bandwidth_tb_s", "GPU memory bandwidth", "TB/s", "Throughput",
       lookup("gpus", "gpu", "bandwidth_tb_s"), "Peak HBM/GDDR bandwidth per GPU."),
    _c("gpu_link_gb_s", "Scale-up link", "GB/s", "Throughput",
       lookup("gpus", "gpu", "link_gb_s"), "GPU-to-GPU bandwidth, one direction."),
    _c("weight_bytes_per_param", "Bytes per weight", "B", "KV",
       lookup("precisions", "weight_precision", "bytes_per_param")
       * (1 + lookup("precisions", "weight_precision", "scale_overhead")),
       "Storage bytes per parameter incl. quantisation scales (“The KV cache is your real budget”)."),
    _c("kv_bytes_per_element", "Bytes per KV element", "B", "KV",
       lookup("precisions", "kv_precision", "bytes_per_param"), "KV-cache storage format."),
    _c("gpus_per_replica", "GPUs per replica", "GPUs", "KV", tp * r("pp"),
       "TP x pipeline stages: the GPUs that hold one copy of the model."),
    _c("attention_tp", "Attention tensor-parallel degree", "GPUs", "KV", tp / r("adp"),
       "TP / attention data-parallel ranks: with ADP each rank runs attention for its own "
       "sequences on TP / ADP GPUs."),
    _c("expert_tp", "Expert tensor-parallel degree", "GPUs", "KV", tp / r("ep"),
       "TP / expert-parallel ranks: GPUs that split one expert (or a dense MLP) by tensor "
       "parallelism."),
    _c("peak_tflops", "Peak tensor throughput used", "TFLOP/s", "Throughput",
       IF(eq(lookup("precisions", "weight_precision", "compute_code"), 4),
          IF(gt(lookup("gpus", "gpu", "fp4_tflops"), 0), lookup("gpus", "gpu", "fp4_tflops"),
             lookup("gpus", "gpu", "bf16_tflops")),
          IF(eq(lookup("precisions", "weight_precision", "compute_code"), 2),
             IF(gt(lookup("gpus", "gpu", "fp8_tflops"), 0),
                lookup("gpus", "gpu", "fp8_tflops"), lookup("gpus", "gpu", "bf16_tflops")),
             IF(eq(lookup("precisions", "weight_precision", "compute_code"), 3),
                IF(gt(lookup("gpus", "gpu", "int8_tops"), 0),
                   lookup("gpus", "gpu", "int8_tops"), lookup("gpus", "gpu", "bf16_tflops")),
                lookup("gpus", "gpu", "bf16_tflops")))),
       "Dense peak for the compute path: native FP8/FP4 where the GPU has it, else weights "
       "are dequantised to BF16 (“How fast does it serve?”)."),
    _c("efficiency_scale", "Efficiency scale", "fraction", "Throughput",
       r("stack_efficiency") * r("calibration_derating"),
       "Software-stack efficiency x derating of an uncalibrated option: scales every step-time "
       "term, so t(B) stays linear in B."),
    _c("attention_peak_tflops", "Peak throughput of attention", "TFLOP/s", "Throughput",
       IF(AND(eq(lookup("precisions", "kv_precision", "compute_code"), 2),
              gt(lookup("gpus", "gpu", "fp8_tflops"), 0)),
          lookup("gpus", "gpu", "fp8_tflops"), lookup("gpus", "gpu", "bf16_tflops")),
       "Attention runs at the KV cache's precision: FP8 where the KV is FP8 and the GPU has "
       "FP8, else BF16 (FP4 weights do not make attention FP4)."),
    _c("ridge_point_flop_per_byte", "Ridge point", "FLOP/B", "Throughput",
       r("peak_tflops") / r("gpu_bandwidth_tb_s"),
       "Peak FLOP/s / bandwidth: below this arithmetic intensity a kernel is memory-bound "
       "(“GPU Inference vs Training Requirements”: H100 989 / 3.35 = 295)."),
    _c("gpus_per_node", "GPUs per node", "GPUs", "Nodes",
       lookup("platforms", "platform", "gpus_per_node"), "Platform's GPU count."),
    _c("platform_sold_full", "Bought with all GPUs", "1 = yes", "Nodes",
       lookup("platforms", "platform", "sold_full"),
       "1 for fixed baseboards (HGX/DGX/OAM): a node is bought with every GPU slot filled."),
    _c("node_power_kw", "Node power", "kW", "TCO",
       lookup("platforms", "platform", "node_power_kw"), "Whole node at full GPU load."),
    _c("node_base_price", "Node price without GPUs", "currency", "TCO",
       lookup("platforms", "platform", "base_price"), "Chassis, CPUs, memory, NICs."),
    _c("gpu_price", "GPU price", "currency", "TCO",
       lookup("gpus", "gpu", "price") * r("gpu_price_factor"),
       "Catalog estimate or the account's override, x the what-if multiplier (1 normally)."),
    _c("cloud_gpu_hour", "Cloud price per GPU-hour", "currency/h", "TCO",
       IF(gt(r("cloud_tier_what_if"), 0), _tier_column("cloud"),
          lookup("gpus", "gpu", "cloud_gpu_hour")),
       "The account's cloud tier (the dated price list) or its override; a what-if tier code "
       "picks that tier's catalog price."),
    _c("cloud_gpus_per_instance", "GPUs per cloud instance", "GPUs", "TCO",
       IF(gt(r("cloud_tier_what_if"), 0), _tier_column("cloud_gpus"),
          lookup("gpus", "gpu", "cloud_gpus_per_instance")),
       "How the offer is sold: whole instances of this many GPUs (1 = single GPUs)."),
    _c("context_tokens", "KV reserved per request", "tokens", "KV",
       IF(gt(r("max_context_tokens"), 0), r("max_context_tokens"),
          r("prompt_tokens") + r("output_tokens")),
       "Stated maximum context, else prompt + output."),
    _c("mla_kv_dim", "MLA latent width", "elements", "KV",
       IF(gt(r("kv_lora_rank"), 0), r("kv_lora_rank") + r("qk_rope_head_dim"), 0),
       "kv_lora_rank + qk_rope_head_dim for MLA models; 0 = standard attention."),
    # ---- memory (seed 002) ------------------------------------------------------------
    _c("routed_expert_params", "Parameters in routed experts", "params", "KV",
       IF(gt(r("experts"), r("experts_per_token")), (r("params_total") - r("params_active"))
          / (1 - r("experts_per_token") / r("experts")), 0),
       "From total = shared + experts and active = shared + experts x k/E."),
    _c("shared_params", "Parameters outside routed experts", "params", "KV",
       r("params_total") - r("routed_expert_params"),
       "Attention, shared experts, dense layers and embeddings (dense model: all)."),
    _c("weights_gb", "Weights", "GB", "KV",
       (r("params_total") + r("shared_params") * (r("adp") - 1))
       * r("weight_bytes_per_param") / 1e9,
       "params_total x bytes per weight; the whole model sits in memory (MoE: all experts); "
       "with attention data-parallel each rank holds its own copy of the non-expert weights."),
    _c("kv_bytes_per_token", "KV cache per token", "B", "KV",
       IF(gt(r("mla_kv_dim"), 0), r("layers") * r("mla_kv_dim") * r("kv_bytes_per_element"),
          2 * r("layers") * r("kv_heads") * r("head_dim") * r("kv_bytes_per_element")),
       "2 x layers x KV heads x head dim x bytes (K and V; GQA counts KV heads; “The KV cache is "
       "your real budget”); "
       "MLA: layers x latent width x bytes."),
    _c("kv_replication", "KV copies across the TP group", "x", "KV",
       IF(gt(r("mla_kv_dim"), 0), r("attention_tp"),
          r("attention_tp") / MIN(r("attention_tp"), r("kv_heads"))),
       "TP splits KV heads; when TP > KV heads (or MLA) each GPU keeps a copy. With attention "
       "data-parallel only the rank's TP / ADP GPUs hold a sequence's KV."),
    _c("kv_gb_per_request", "KV cache per request", "GB", "KV",
       r("kv_bytes_per_token") * r("kv_replication") * r("context_tokens") / 1e9,
       "KV per token x reserved context, all TP copies included."),
    _c("usable_memory_gb", "Usable memory per replica", "GB", "KV",
       _gpus * r("gpu_memory_gb") * r("gpu_memory_utilization")
       - _gpus * r("runtime_reserve_gb"),
       "GPUs per replica x (GPU memory x utilisation - runtime reserve)."),
    _c("kv_budget_gb", "KV-cache budget per replica", "GB", "KV",
       (r("usable_memory_gb") - r("weights_gb")) * r("kv_cache_fraction"),
       "(usable - weights) x KV share (“The KV cache is your real budget”: 0.9 x 141 - 70 = 57 GB)."),
    _c("replica_memory_gb", "GPU memory of one replica", "GB", "KV",
       _gpus * r("gpu_memory_gb"), "GPUs per replica x GPU memory."),
    _c("max_sequences_by_memory", "Max sequences by memory", "sequences", "KV",
       IF(gt(r("kv_budget_gb"), 0), ROUNDDOWN(r("kv_budget_gb") / r("kv_gb_per_request"), 0), 0),
       "Whole requests that fit in the KV budget at full reserved context."),
    # ---- decode step time t(B) = a + b x B (seeds 001, 003, 004; fitted: docs/calibration.md) --
    _c("avg_context_tokens", "Average context during decode", "tokens", "Throughput",
       r("prompt_tokens") + r("output_tokens") / 2, "Prompt + half the output."),
    _c("attention_width", "Attention width", "elements", "Throughput",
       IF(gt(r("mla_kv_dim"), 0),
          r("attention_heads") * (r("head_dim") + r("qk_rope_head_dim") / 2),
          r("attention_heads") * r("head_dim")),
       "Heads x head dim (MLA: mean of the 192-wide query/key and 128-wide value heads): "
       "prefill attention FLOPs per token per cached token = 2 x layers x width."),
    _c("prefill_tokens", "Prompt tokens to prefill", "tokens", "Throughput",
       r("prompt_tokens") * (1 - r("prefix_cache_hit")),
       "Prefix-cache hits skip prefill."),
    _c("batch_upper_bound", "Largest batch memory and engine allow", "sequences", "Throughput",
       MAX(1, MIN(r("max_sequences_by_memory"), r("max_batch_per_replica"))),
       "Upper bound used for the MoE expert-read fraction (conservative below it)."),
    _c("experts_read_fraction", "Share of experts read per step", "fraction", "Throughput",
       IF(gt(r("experts"), 0),
          1 - POWER(1 - r("experts_per_token") / r("experts"),
                    MAX(1, r("batch_upper_bound") / r("pp"))), 0),
       "1 - (1 - k/E)^B: expected share of experts a step's B tokens touch (MoE): near k/E at "
       "B = 1, all at large B. B is the step's batch (a micro-batch under pipelining); every "
       "rank's tokens reach the experts, so attention data-parallel does not divide it."),
    _c("weights_read_gb", "Weights read per step", "GB", "Throughput",
       (r("shared_params") * r("adp") + r("routed_expert_params") * r("experts_read_fraction"))
       * r("weight_bytes_per_param") / 1e9,
       "Dense: all weights once per step. MoE: the non-expert weights (each attention "
       "data-parallel rank reads its own copy) + the experts the batch touches."),
    _c("decode_weights_ms", "Weight streaming per step", "ms", "Throughput",
       r("weights_read_gb") / (tp * r("gpu_bandwidth_tb_s") * r("mbu_weights") * r("efficiency_scale")),
       "Bandwidth ceiling: weights / (TP x bandwidth x efficiency) (“How fast does it "
       "serve?”: 70 GB / 3.35 TB/s = 21 ms). Pipeline stages each re-read their weights per "
       "micro-batch, so PP does not divide it."),
    _c("decode_kv_ms_per_seq", "KV read per sequence per step", "ms", "Throughput",
       r("kv_bytes_per_token") * r("kv_replication") * r("avg_context_tokens") / 1e9
       / (_gpus * r("gpu_bandwidth_tb_s") * r("mbu_kv") * r("efficiency_scale")),
       "Each sequence reads its KV cache at the average context."),
    _c("decode_compute_ms_per_seq", "Compute per sequence per step", "ms", "Throughput",
       2 * r("params_active") * IF(gt(r("experts"), 0), r("moe_compute_factor"), 1)
       / (_gpus * r("peak_tflops") * 1e12 * r("mfu_decode") * r("efficiency_scale")) * 1000,
       "2 x active params / (GPUs x peak x efficiency) (“GPU Inference vs Training "
       "Requirements”: roofline); MoE routing factor."),
    _c("attention_flops_per_context_token", "Decode attention FLOPs per context token",
       "FLOP", "Throughput",
       r("layers") * IF(gt(r("mla_kv_dim"), 0),
                        2 * r("attention_heads") * (2 * r("kv_lora_rank") + r("qk_rope_head_dim")),
                        4 * r("attention_heads") * r("head_dim")),
       "Scores and weighted sum over each cached token: 4 x heads x head dim per layer; MLA "
       "(absorbed) 2 x heads x (2 x latent rank + RoPE width)."),
    _c("decode_attention_ms_per_seq", "Attention compute per sequence per step", "ms",
       "Throughput",
       r("attention_flops_per_context_token") * r("avg_context_tokens")
       / (_gpus * r("attention_peak_tflops") * 1e12 * r("mfu_attention")
          * r("efficiency_scale")) * 1000,
       "Attention over the average context at the KV precision's rate: matters for MLA, whose "
       "small KV cache is read with many FLOPs per byte."),
    _c("allreduce_fixed_ms", "All-reduce latency per step", "ms", "Throughput",
       r("layers") * (IF(gt(r("attention_tp"), 1), 1, 0) + IF(gt(r("expert_tp"), 1), 1, 0))
       * r("allreduce_latency_us") / 1000,
       "One all-reduce per layer after attention (when attention is split over GPUs) and one "
       "after the MLP or experts (when they are); 0 at TP 1 (“GenAI Physics”)."),
    _c("alltoall_fixed_ms", "All-to-all latency per step", "ms", "Throughput",
       IF(gt(r("ep"), 1), 2 * r("layers") * r("alltoall_latency_us") / 1000, 0),
       "Dispatch and combine per MoE layer under expert parallelism."),
    _c("comm_fixed_ms", "Communication latency per step", "ms", "Throughput",
       r("allreduce_fixed_ms") + r("alltoall_fixed_ms"), "All-reduce + all-to-all latency."),
    _c("allreduce_ms_per_token", "All-reduce transfer per token", "ms", "Throughput",
       r("layers") * (_allreduce_bytes(r("attention_tp")) + _allreduce_bytes(r("expert_tp")))
       / (r("gpu_link_gb_s") * r("link_efficiency") * 1e9) * 1000 / r("pp"),
       "2(N-1)/N x hidden x 2 bytes over the link per all-reduce (“GenAI Physics”: TP penalty); "
       "pipeline stages run theirs at the same time."),
    _c("alltoall_ms_per_token", "All-to-all transfer per token", "ms", "Throughput",
       IF(gt(r("ep"), 1),
          2 * r("layers") * MIN(r("experts_per_token"), r("ep")) * (r("ep") - 1) / r("ep")
          * r("hidden_size") * 2 / (r("ep") * r("gpu_link_gb_s") * r("link_efficiency") * 1e9)
          * 1000, 0),
       "Dispatch + combine: a token's hidden vector (2 bytes a value) goes to the ranks of its "
       "top-k experts and back, spread over the EP ranks' links."),
    _c("prefill_ms_per_token", "Prefill time per prompt token", "ms", "Throughput",
       (2 * r("params_active") * IF(gt(r("experts"), 0), r("moe_compute_factor"), 1)
        / r("peak_tflops")
        + 2 * r("layers") * r("attention_width") * r("prefill_tokens") / r("attention_peak_tflops"))
       / (_gpus * 1e12 * r("mfu_prefill") * r("efficiency_scale")) * 1000
       + r("allreduce_ms_per_token") + r("alltoall_ms_per_token"),
       "Compute-bound prefill (2 x active params at the weights' rate + causal attention at the "
       "KV precision's rate) + its all-reduce and all-to-all."),
    _c("prefill_ms_per_seq_step", "Prefill share per sequence per step", "ms", "Throughput",
       r("prefill_ms_per_token") * r("prefill_tokens") / r("output_tokens"),
       "Each request's prefill spread over its output tokens: prefill takes time from decode."),
    _c("step_fixed_ms", "Step time at batch 0 (a)", "ms", "Throughput",
       r("decode_weights_ms") + r("comm_fixed_ms") + r("step_overhead_ms"),
       "a of t(B) = a + b x B: weights, all-reduce and all-to-all latency, scheduler overhead."),
    _c("step_ms_per_seq", "Step time per sequence (b)", "ms", "Throughput",
       r("decode_kv_ms_per_seq") + r("decode_compute_ms_per_seq")
       + r("decode_attention_ms_per_seq") + r("allreduce_ms_per_token")
       + r("alltoall_ms_per_token") + r("prefill_ms_per_seq_step"),
       "b of t(B) = a + b x B: KV read, compute, attention, all-reduce, all-to-all, amortised "
       "prefill (fitted additive)."),
    _c("bandwidth_ceiling_tokens_per_s", "Fastest single-user speed", "tok/s", "Throughput",
       1000 / (r("step_fixed_ms") + r("step_ms_per_seq") - r("prefill_ms_per_seq_step")),
       "Tokens/s of one user alone (batch 1): the ceiling no batch size can beat."),
    _c("required_tokens_per_s_per_user", "Required tokens/s per user", "tok/s", "Throughput",
       MAX(r("target_tokens_per_s_per_user"),
           IF(gt(r("target_response_time_s"), 0),
              r("output_tokens") / r("target_response_time_s"), 0)),
       "Stated target, or output / response time (“From Users to GPUs”: 300 in 10 s = 30 tok/s)."),
    _c("target_tpot_ms", "Allowed time per output token", "ms", "Throughput",
       IF(gt(r("required_tokens_per_s_per_user"), 0),
          1000 / r("required_tokens_per_s_per_user"), 0),
       "1000 / required tokens/s; 0 = no per-token target."),
    _c("prefill_ms", "Prefill of one prompt", "ms", "Throughput",
       MAX(r("prefill_tokens") * r("prefill_ms_per_token"), r("decode_weights_ms"))
       + r("comm_fixed_ms") + r("step_overhead_ms"),
       "Compute-bound prefill (at least one weight read) + all-reduce latency + overhead."),
    _c("ttft_queue_steps", "Decode steps a new request waits", "steps", "Throughput",
       0.5 + r("prefill_tokens") / r("prefill_chunk_tokens"),
       "Half a step to join, plus one step per prefill chunk it shares with decode (fitted)."),
    _c("ttft_one_user_ms", "Time to first token, one user alone", "ms", "Throughput",
       r("prefill_ms") + r("ttft_queue_steps") * (r("comm_fixed_ms") + r("step_overhead_ms")
                                                  + r("step_ms_per_seq"))
       + r("ttft_overhead_ms"),
       "The best TTFT this option can give (batch 1): ttft_ms at batch 1."),
    _c("target_ttft_ms", "Allowed time to first token", "ms", "Throughput",
       r("target_ttft_s") * 1000, "Target in ms; 0 = no TTFT target."),
    _c("batch_by_tpot", "Largest batch meeting tokens/s", "sequences", "Throughput",
       IF(gt(r("target_tpot_ms"), 0),
          ROUNDDOWN((r("target_tpot_ms") - r("step_fixed_ms")) / r("step_ms_per_seq"), 0),
          r("max_batch_per_replica")),
       "B_slo = ROUNDDOWN((T - a) / b): closed form because t(B) is linear in B (DESIGN §3)."),
    _c("batch_by_ttft", "Largest batch meeting TTFT", "sequences", "Throughput",
       IF(gt(r("target_ttft_s"), 0),
          ROUNDDOWN(((r("target_ttft_ms") - r("prefill_ms") - r("ttft_overhead_ms"))
                     / r("ttft_queue_steps") - r("comm_fixed_ms") - r("step_overhead_ms"))
                    / r("step_ms_per_seq"), 0),
          r("max_batch_per_replica")),
       "ttft_ms solved for B (it is linear in B)."),
    _c("batch_per_replica", "Batch per replica", "sequences", "Throughput",
       MAX(0, MIN(r("max_sequences_by_memory"), r("batch_by_tpot"), r("batch_by_ttft"),
                  r("max_batch_per_replica"))),
       "MIN(memory, tokens/s SLO, TTFT SLO, engine cap)."),
    _c("tpot_ms", "Time per output token", "ms", "Throughput",
       r("step_fixed_ms") + r("step_ms_per_seq") * MAX(1, r("batch_per_replica")),
       "t(B) = a + b x B at the chosen batch (at least 1)."),
    _c("memory_bound", "Decode is memory-bound", "flag", "Throughput",
       ge(r("decode_weights_ms") + r("decode_kv_ms_per_seq") * MAX(1, r("batch_per_replica")),
          r("decode_compute_ms_per_seq") * MAX(1, r("batch_per_replica"))),
       "1 when reading weights and KV takes longer than the arithmetic."),
    _c("tokens_per_s_per_user", "Tokens/s per user", "tok/s", "Throughput",
       1000 / r("tpot_ms"), "1000 / TPOT."),
    _c("ttft_ms", "Time to first token", "ms", "Throughput",
       r("prefill_ms") + r("ttft_queue_steps") * (r("tpot_ms") - r("decode_weights_ms"))
       + r("ttft_overhead_ms"),
       "Prefill + the decode steps it waits for or shares; a prefill chunk hides the step's "
       "weight read (its GEMMs read the weights anyway), not the other sequences' work, "
       "all-reduce latency or overhead (chosen by cross-validation on published benchmarks)."),
    _c("slo_met", "Meets latency targets", "flag", "Throughput",
       AND(IF(gt(r("target_tpot_ms"), 0), le(r("tpot_ms"), r("target_tpot_ms")), 1),
           IF(gt(r("target_ttft_s"), 0), le(r("ttft_ms"), r("target_ttft_ms")), 1)),
       "1 when TPOT and TTFT meet their targets."),
    _c("replica_output_tokens_per_s", "Output tokens/s per replica", "tok/s", "Throughput",
       IF(gt(r("measured_tokens_per_s_per_replica"), 0), r("measured_tokens_per_s_per_replica"),
          r("batch_per_replica") * 1000 / r("tpot_ms")),
       "B / TPOT, or the customer's measured figure (calibrated mode; “From Users to GPUs”)."),
    _c("modelled_replica_output_tokens_per_s", "Output tokens/s per replica, modelled", "tok/s",
       "Throughput", r("batch_per_replica") * 1000 / r("tpot_ms"),
       "B / TPOT from the model, in measured mode too: the figure a benchmark is compared with."),
    _c("measured_vs_modelled", "Measured vs modelled throughput", "fraction", "Throughput",
       IF(AND(gt(r("measured_tokens_per_s_per_replica"), 0),
              gt(r("modelled_replica_output_tokens_per_s"), 0)),
          r("measured_tokens_per_s_per_replica") / r("modelled_replica_output_tokens_per_s") - 1, 0),
       "Measured / modelled - 1 per replica (0 when nothing is measured): how far the customer's "
       "benchmark is from the model."),
    _c("measured_gap_risk", "Measured and modelled differ by over 25 %", "flag", "Throughput",
       AND(gt(r("measured_tokens_per_s_per_replica"), 0),
           OR(le(r("modelled_replica_output_tokens_per_s"), 0),
              gt(MAX(r("measured_vs_modelled"), 0 - r("measured_vs_modelled")), 0.25))),
       "1 when a measured throughput is more than 25 % above or below the model's (or the model "
       "finds the target unreachable): check the benchmark's setup and the model's assumptions."),
    _c("kv_in_use_gb", "KV cache the chosen batch reserves", "GB", "KV",
       MIN(r("batch_per_replica"), r("max_sequences_by_memory")) * r("kv_gb_per_request"),
       "Batch x KV per request at full reserved context."),
    _c("kv_spare_gb", "KV budget left at the chosen batch", "GB", "KV",
       MAX(0, r("kv_budget_gb") - r("kv_in_use_gb")),
       "Room for longer contexts or bursts before the memory limit."),
    _c("memory_reserved_gb", "Memory held back", "GB", "KV",
       MAX(0, r("replica_memory_gb") - r("weights_gb") - MAX(0, r("kv_budget_gb"))),
       "(1 - utilisation) x memory + runtime reserve (+ the share the engine keeps from KV)."),
    # ---- replicas, nodes, headroom (seed 000) -------------------------------------------
    _c("required_system_tokens_per_s", "Required system throughput", "tok/s", "Nodes",
       MAX(r("users") * r("required_tokens_per_s_per_user"), r("target_system_tokens_per_s")),
       "Users x tokens/s per user (“From Users to GPUs”, step 2), or the stated system target."),
    _c("users_per_replica", "Users per replica", "users", "Nodes",
       IF(gt(r("measured_tokens_per_s_per_replica"), 0),
          IF(gt(r("required_tokens_per_s_per_user"), 0),
             r("measured_tokens_per_s_per_replica") / r("required_tokens_per_s_per_user"), 0),
          r("batch_per_replica")),
       "Concurrent users one replica serves at the target speed."),
    _c("demand_replicas", "Replicas at peak, no headroom", "replicas", "Nodes",
       MAX(IF(AND(gt(r("users_per_replica"), 0), gt(r("required_tokens_per_s_per_user"), 0)),
              r("users") / r("users_per_replica"), 0),
           IF(gt(r("replica_output_tokens_per_s"), 0),
              r("target_system_tokens_per_s") / r("replica_output_tokens_per_s"), 0)),
       "Peak demand in replica units: users / users per replica, or system target / replica "
       "throughput (offline jobs), whichever is larger."),
    _c("replicas_for_load", "Replicas for peak + headroom", "replicas", "Nodes",
       ROUNDUP(r("demand_replicas") * (1 + r("headroom")), 0),
       "ROUNDUP(demand x (1 + headroom)) (“From Users to GPUs”: 6 x 1.25 -> 8)."),
    _c("replicas_per_node", "Replicas per node", "replicas", "Nodes",
       MAX(1, ROUNDDOWN(r("gpus_per_node") / _gpus, 0)), "GPUs per node / GPUs per replica."),
    _c("spare_replicas", "Spare replicas (N+1)", "replicas", "Nodes",
       IF(gt(r("survive_node_loss"), 0), MIN(r("replicas_per_node"), r("replicas_for_load")), 0),
       "As many replicas as one node holds (at most the load), so peak is met with a node down "
       "(“How fast does it serve?”, check 5)."),
    _c("replicas", "Replicas", "replicas", "Nodes", r("replicas_for_load") + r("spare_replicas"),
       "Serving copies of the model."),
    _c("gpus", "GPUs", "GPUs", "Nodes", r("replicas") * _gpus, "Replicas x GPUs per replica."),
    _c("nodes", "Nodes", "nodes", "Nodes",
       MAX(ROUNDUP(r("gpus") / r("gpus_per_node"), 0), IF(gt(r("survive_node_loss"), 0), 2, 1)),
       "ROUNDUP(GPUs / GPUs per node); at least 2 when the service must survive a node loss "
       "(replicas spread evenly)."),
    _c("replicas_lost_with_a_node", "Replicas lost with one node", "replicas", "Nodes",
       MIN(r("replicas_per_node"), ROUNDUP(r("replicas") / r("nodes"), 0)),
       "Replicas on the fullest node when spread evenly."),
    _c("gpus_purchased", "GPUs purchased", "GPUs", "Nodes",
       IF(gt(r("platform_sold_full"), 0), r("nodes") * r("gpus_per_node"), r("gpus")),
       "Fixed baseboards come full: nodes x GPUs per node; PCIe servers: the GPUs used."),
    _c("capacity_output_tokens_per_s", "Installed throughput", "tok/s", "Nodes",
       r("replicas") * r("replica_output_tokens_per_s"), "All replicas at their batch."),
    _c("headroom_achieved", "Headroom achieved at peak", "fraction", "Nodes",
       IF(gt(r("demand_replicas"), 0), r("replicas") / r("demand_replicas") - 1, 0),
       "Capacity / peak demand - 1, all nodes up (after rounding and N+1)."),
    _c("headroom_after_node_loss", "Headroom with one node down", "fraction", "Nodes",
       IF(gt(r("demand_replicas"), 0),
          (r("replicas") - r("replicas_lost_with_a_node")) / r("demand_replicas") - 1,
          0),
       "Negative means peak demand is not met while a node is down."),
    # ---- cost (seeds 003, 004): bill of materials per node, on-prem vs cloud vs API ------
    _c("capex_platforms", "Capex: platforms without GPUs", "currency", "TCO",
       r("nodes") * r("node_base_price"), "Nodes x node price without GPUs."),
    _c("capex_gpus", "Capex: GPUs", "currency", "TCO", r("gpus_purchased") * r("gpu_price"),
       "GPUs purchased x GPU price."),
    _c("capex_network", "Capex: scale-out network", "currency", "TCO",
       r("nodes") * r("network_per_node"), "Nodes x network per node."),
    _c("capex", "Capital cost", "currency", "TCO",
       r("capex_platforms") + r("capex_gpus") + r("capex_network"),
       "Platforms + GPUs + network (the bill of materials per node)."),
    _c("annual_capex", "Capex per year", "currency/yr", "TCO",
       r("capex") / r("amortization_years"), "Straight-line amortisation."),
    _c("annual_power_full_load", "Power per year at full load", "currency/yr", "TCO",
       r("nodes") * r("node_power_kw") * r("pue") * r("hours_per_year")
       * r("electricity_per_kwh"),
       "Node kW x PUE x hours x tariff, every node at full load."),
    _c("annual_power_cost", "Power per year", "currency/yr", "TCO",
       r("annual_power_full_load") * r("average_load"),
       "Node kW x PUE x hours x tariff x average load."),
    _c("annual_colocation", "Colocation per year", "currency/yr", "TCO",
       r("nodes") * r("node_power_kw") * r("colocation_per_kw_month") * 12,
       "Nodes x node kW x price per kW-month x 12: rack space and power capacity are contracted "
       "for the full load."),
    _c("annual_storage", "Storage per year", "currency/yr", "TCO",
       r("nodes") * r("storage_tb_per_node") * r("storage_per_tb_month") * 12,
       "Nodes x TB per node x price per TB-month x 12 (the same on-prem and in the cloud)."),
    _c("annual_software", "Software licences per year", "currency/yr", "TCO",
       r("gpus_purchased") * r("software_per_gpu_year"), "GPUs purchased x licence per GPU-year."),
    _c("annual_support", "Support per year", "currency/yr", "TCO",
       r("capex") * r("support_rate"), "Support rate x capex."),
    _c("annual_fixed_onprem", "On-prem cost per year, load-independent", "currency/yr", "TCO",
       r("annual_capex") + r("annual_colocation") + r("annual_support") + r("annual_storage")
       + r("annual_software"),
       "Everything but power: amortised capex, colocation, support, storage, licences."),
    _c("annual_facility", "Power and colocation per year", "currency/yr", "TCO",
       r("annual_power_cost") + r("annual_colocation"), "Power + colocation."),
    _c("annual_services", "Support, storage and licences per year", "currency/yr", "TCO",
       r("annual_support") + r("annual_storage") + r("annual_software"),
       "Support + storage + licences."),
    _c("annual_cost_onprem", "On-prem cost per year", "currency/yr", "TCO",
       r("annual_capex") + r("annual_facility") + r("annual_services"),
       "Amortised capex + power and colocation + support, storage and licences."),
    _c("cloud_instances", "Cloud instances", "instances", "TCO",
       ROUNDUP(r("gpus") / r("cloud_gpus_per_instance"), 0),
       "Whole instances for the GPUs in use (spares included): the cloud sells instances."),
    _c("cloud_gpus_rented", "GPUs rented", "GPUs", "TCO",
       r("cloud_instances") * r("cloud_gpus_per_instance"),
       "Instances x GPUs per instance: the same capacity as on-prem, rounded to what is sold."),
    _c("annual_cloud_rent", "Cloud rent per year", "currency/yr", "TCO",
       r("cloud_gpus_rented") * r("cloud_gpu_hour") * r("hours_per_year"),
       "GPUs rented x price per GPU-hour x hours, always on."),
    _c("annual_cloud_extras", "Cloud storage and licences per year", "currency/yr", "TCO",
       r("annual_storage") + r("cloud_gpus_rented") * r("software_per_gpu_year"),
       "The same storage and per-GPU licences as on-prem."),
    _c("annual_cost_cloud", "Cloud cost per year", "currency/yr", "TCO",
       r("annual_cloud_rent") + r("annual_cloud_extras"),
       "Rent + storage + licences."),
    _c("million_tokens_per_year", "Output tokens served per year", "M tokens", "TCO",
       r("required_system_tokens_per_s") * r("average_load") * 3600 * r("hours_per_year") / 1e6,
       "Peak demand x average load x seconds per year."),
    _c("million_input_tokens_per_year", "Input tokens served per year", "M tokens", "TCO",
       r("million_tokens_per_year") * r("prompt_tokens") / r("output_tokens"),
       "Output tokens x prompt / output length: each request carries its prompt."),
    _c("million_total_tokens_per_year", "Input + output tokens per year", "M tokens", "TCO",
       r("million_tokens_per_year") + r("million_input_tokens_per_year"), "Input + output."),
    _c("cost_per_million_tokens_onprem", "On-prem cost per million output tokens",
       "currency/M tok", "TCO",
       IF(gt(r("million_tokens_per_year"), 0),
          r("annual_cost_onprem") / r("million_tokens_per_year"), 0),
       "Annual on-prem cost / output tokens served."),
    _c("cost_per_million_tokens_cloud", "Cloud cost per million output tokens",
       "currency/M tok", "TCO",
       IF(gt(r("million_tokens_per_year"), 0),
          r("annual_cost_cloud") / r("million_tokens_per_year"), 0),
       "Annual cloud cost / output tokens served."),
    _c("cost_per_million_total_tokens_onprem", "On-prem cost per million tokens (in + out)",
       "currency/M tok", "TCO",
       IF(gt(r("million_total_tokens_per_year"), 0),
          r("annual_cost_onprem") / r("million_total_tokens_per_year"), 0),
       "Annual on-prem cost / input + output tokens: comparable with an API's blended price."),
    _c("cost_per_million_total_tokens_cloud", "Cloud cost per million tokens (in + out)",
       "currency/M tok", "TCO",
       IF(gt(r("million_total_tokens_per_year"), 0),
          r("annual_cost_cloud") / r("million_total_tokens_per_year"), 0),
       "Annual cloud cost / input + output tokens."),
    _c("annual_cost_api", "Hosted API cost per year", "currency/yr", "TCO",
       r("million_input_tokens_per_year") * r("api_input_per_million")
       + r("million_tokens_per_year") * r("api_output_per_million"),
       "The same tokens bought from a hosted API at its list price (0 = no price listed)."),
    _c("cost_per_million_total_tokens_api", "Hosted API cost per million tokens (in + out)",
       "currency/M tok", "TCO",
       IF(gt(r("million_total_tokens_per_year"), 0),
          r("annual_cost_api") / r("million_total_tokens_per_year"), 0),
       "The API's blended price for this workload's prompt / output mix."),
    _c("breakeven_months", "Buy-vs-rent break-even", "months", "TCO",
       IF(gt(r("annual_cost_cloud"), r("annual_cost_onprem") - r("annual_capex")),
          r("capex") / ((r("annual_cost_cloud") - r("annual_cost_onprem") + r("annual_capex"))
                        / 12), 0),
       "Capex / monthly saving of owning over renting (running costs without amortisation); "
       "0 = renting stays cheaper."),
    _c("breakeven_load_vs_cloud", "Average load above which buying beats renting by the hour",
       "fraction", "TCO",
       IF(gt(r("annual_cloud_rent"), r("annual_power_full_load")),
          (r("annual_fixed_onprem") - r("annual_cloud_extras"))
          / (r("annual_cloud_rent") - r("annual_power_full_load")), 0),
       "Owning costs fixed + power x load; renting only the GPU-hours used costs rent x load + "
       "extras: equal at this load (above 1 or 0 = renting stays cheaper)."),
    _c("breakeven_load_vs_api", "Average load above which buying beats the hosted API",
       "fraction", "TCO",
       IF(gt(r("annual_cost_api") / r("average_load"), r("annual_power_full_load")),
          r("annual_fixed_onprem")
          / (r("annual_cost_api") / r("average_load") - r("annual_power_full_load")), 0),
       "The API's cost grows with tokens (with load); owning costs fixed + power x load: equal "
       "at this load (above 1 or 0 = the API stays cheaper)."),
    # ---- confidence: the model's cross-validated error turned into a GPU range ------------
    _c("confidence_throughput_low", "Throughput per replica, model's low end", "tok/s", "Nodes",
       r("replica_output_tokens_per_s") / (1 + r("confidence_p90")),
       "Modelled throughput / (1 + p90 error): the model over-predicts by its p90."),
    _c("confidence_throughput_high", "Throughput per replica, model's high end", "tok/s",
       "Nodes", r("replica_output_tokens_per_s") / (1 + r("confidence_p10")),
       "Modelled throughput / (1 + p10 error)."),
    _c("confidence_replicas_low_throughput", "Replicas if throughput is at the low end",
       "replicas", "Nodes", _replicas_at(1 + r("confidence_p90")),
       "Demand x (1 + p90) with headroom and N+1 as above: replicas serve fewer users each."),
    _c("confidence_gpus_purchased_low_throughput", "GPUs purchased if throughput is at the low "
       "end", "GPUs", "Nodes",
       _purchased(r("confidence_replicas_low_throughput") * tp,
                  _nodes_for(r("confidence_replicas_low_throughput") * tp)),
       "Replicas x TP in whole nodes, as for the recommendation."),
    _c("confidence_replicas_high_throughput", "Replicas if throughput is at the high end",
       "replicas", "Nodes", _replicas_at(1 + r("confidence_p10")),
       "Demand x (1 + p10) with headroom and N+1 as above."),
    _c("confidence_gpus_purchased_high_throughput", "GPUs purchased if throughput is at the "
       "high end", "GPUs", "Nodes",
       _purchased(r("confidence_replicas_high_throughput") * tp,
                  _nodes_for(r("confidence_replicas_high_throughput") * tp)),
       "Replicas x TP in whole nodes, as for the recommendation."),
)

CALCULATION_NAMES = tuple(c.name for c in CALCULATIONS)

# The account plan's GPU range (plan.confidence_range): each member's peak demand in replica
# units at the model's low or high throughput end, scaled as ``_replicas_at`` scales it above
# (throughput / (1 + error) means demand x (1 + error)); the plan is then evaluated as usual.
CONFIDENCE_DEMAND_REPLICAS = ref("demand_replicas") * (1 + ref("confidence_error"))
UNITS: dict[str, str] = {i.name: i.unit for i in INPUTS} | {c.name: c.unit for c in CALCULATIONS}

# Columns of the lookup tables the formulas read (the engine and the workbook's Catalog
# sheet provide exactly these).
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "gpus": ("memory_gb", "bandwidth_tb_s", "bf16_tflops", "fp8_tflops", "int8_tops",
             "fp4_tflops", "link_gb_s", "price", "cloud_gpu_hour", "cloud_gpus_per_instance",
             "cloud_on_demand", "cloud_gpus_on_demand", "cloud_1yr", "cloud_gpus_1yr",
             "cloud_3yr", "cloud_gpus_3yr", "cloud_gpu_cloud", "cloud_gpus_gpu_cloud"),
    "platforms": ("gpus_per_node", "sold_full", "node_power_kw", "base_price"),
    "precisions": ("bytes_per_param", "scale_overhead", "compute_code"),
}
COMPUTE_CODES = {"bf16": 1, "fp8": 2, "int8": 3, "fp4": 4}


# Figures for reports that combine a calculation with a count the user gave on the command
# line (``llmsizer estimate --replicas R``); still written once, here.
GROUP_OUTPUT_TOKENS_PER_S = ref("replica_output_tokens_per_s") * ref("replicas_given")


# ---- benchmark reproduction (``llmsizer fidelity``, docs/calibration.md) -----------------
# What a measured benchmark reports that the sizing itself does not need. Each combines the
# calculations above with a count the benchmark states (a ``*_given`` name): the replicas
# sharing the load, the closed-loop users or the offered request rate per replica.
@dataclass(frozen=True)
class Figure:
    name: str
    unit: str
    expr: Expr
    note: str


_cycle = r("ttft_ms") + (r("output_tokens") - 1) * r("tpot_ms")
_occupied = MAX(1, r("batch_per_replica"))
# Little's law: a request's cycle = c0 + steps x b x B (ttft_ms + (output - 1) x tpot_ms).
_steps = r("ttft_queue_steps") + r("output_tokens") - 1
_c0 = (r("prefill_ms") + r("ttft_overhead_ms")
       + r("ttft_queue_steps") * (r("comm_fixed_ms") + r("step_overhead_ms"))
       + (r("output_tokens") - 1) * r("step_fixed_ms"))
_rate_ms = r("request_rate_given") / 1000

FIGURES: tuple[Figure, ...] = (
    Figure("per_replica_given", "x", r("group_given") / r("replicas_given"),
           "A load the benchmark states for the whole group (users, requests/s), shared evenly "
           "by its replicas."),
    Figure("single_stream_itl_ms", "ms", 1000 / r("bandwidth_ceiling_tokens_per_s"),
           "Time per token of one stream alone (batch 1)."),
    Figure("request_cycle_ms", "ms", _cycle,
           "Time one request holds a batch slot: TTFT + (output - 1) x TPOT."),
    Figure("closed_loop_output_tokens_per_s", "tok/s",
           ref("replicas_given") * MIN(r("concurrency_given"), _occupied) * r("output_tokens")
           * 1000 / _cycle,
           "Fixed concurrency C per replica (closed loop): MIN(C, batch) requests in flight, "
           "each producing its output once per request cycle."),
    Figure("closed_loop_ttft_ms", "ms",
           r("ttft_ms") + MAX(0, r("concurrency_given") / _occupied - 1) * _cycle,
           "Beyond the batch the engine can hold, users wait for a free slot: "
           "(C / batch - 1) request cycles on top of TTFT (Little's law)."),
    Figure("rate_batch_per_replica", "sequences",
           IF(gt(1 - _rate_ms * _steps * r("step_ms_per_seq"), 0),
              MIN(r("max_batch_per_replica"),
                  _rate_ms * _c0 / (1 - _rate_ms * _steps * r("step_ms_per_seq"))),
              r("max_batch_per_replica")),
           "Open loop at rate L per replica: B = L x (ttft_ms + (output - 1) x tpot_ms), both "
           "linear in B, solved for B (Little's law, closed form); no steady state "
           "(saturated) = the engine's cap."),
    Figure("decode_only_tpot_ms", "ms",
           r("tpot_ms") - r("prefill_ms_per_seq_step") * _occupied,
           "TPOT when prompts are not interleaved with decode (a burst whose prefill ran "
           "first): t(B) without the amortised prefill share."),
    Figure("served_rate_per_s", "requests/s",
           MIN(r("request_rate_given"), r("replica_output_tokens_per_s") / r("output_tokens")),
           "Requests/s a replica serves: the offered rate, or its saturated capacity when the "
           "rate exceeds it (evaluate at the saturated batch)."),
    Figure("rate_output_tokens_per_s", "tok/s",
           ref("replicas_given") * r("served_rate_given") * r("output_tokens"),
           "Steady state at a request rate: requests served x output."),
    Figure("finite_run_output_tokens_per_s", "tok/s",
           ref("replicas_given") * r("requests_given") * r("output_tokens") * 1000
           / (r("requests_given") * 1000 / r("served_rate_given") + r("request_cycle_ms_given")),
           "A run of N requests per replica: N x output over the time the last one arrives "
           "(N / served rate) plus its own request cycle."),
    Figure("total_tokens_per_s", "tok/s",
           r("output_tokens_per_s_given") * (r("prompt_tokens") + r("output_tokens"))
           / r("output_tokens"),
           "Input + output tokens/s from output tokens/s (requests carry prompt + output)."),
)
FIGURE_EXPRS: dict[str, Expr] = {f.name: f.expr for f in FIGURES}

# Account totals across workloads (each workload's recommended option, summed by the
# engine): cost per million tokens of the whole account.
TOTAL_COST_PER_MILLION_ONPREM = IF(gt(ref("million_tokens_per_year"), 0),
                                   ref("annual_cost_onprem") / ref("million_tokens_per_year"), 0)
TOTAL_COST_PER_MILLION_CLOUD = IF(gt(ref("million_tokens_per_year"), 0),
                                  ref("annual_cost_cloud") / ref("million_tokens_per_year"), 0)

TOTAL_COST_PER_MILLION_TOTAL_ONPREM = IF(
    gt(ref("million_total_tokens_per_year"), 0),
    ref("annual_cost_onprem") / ref("million_total_tokens_per_year"), 0)
TOTAL_COST_PER_MILLION_TOTAL_CLOUD = IF(
    gt(ref("million_total_tokens_per_year"), 0),
    ref("annual_cost_cloud") / ref("million_total_tokens_per_year"), 0)
TOTAL_COST_PER_MILLION_TOTAL_API = IF(
    gt(ref("million_total_tokens_per_year"), 0),
    ref("annual_cost_api") / ref("million_total_tokens_per_year"), 0)


# ---- sensitivity (the Scenarios sheet, results ``sensitivity[]``) ----------------------------
# Each scenario changes ONE input to the value of ``value`` (an expression over the base
# inputs) and recomputes the whole calculation list for each workload's recommended option.
@dataclass(frozen=True)
class Scenario:
    name: str  # stable id (results JSON)
    label: str  # what changes, in words
    change: str  # by how much, in words
    input: str  # the input it changes
    value: Expr  # that input's value in the scenario


def _scaled_tokens(name: str, factor: float) -> Expr:
    return MAX(1, ROUNDUP(r(name) * factor, 0))


# Cloud tier codes of ``cloud_tier_what_if`` (the order of catalog.CLOUD_TIERS).
CLOUD_TIER_CODES = {"hyperscaler_on_demand": 1, "committed_1yr": 2, "committed_3yr": 3,
                    "gpu_cloud": 4}

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("users_x0.5", "Concurrent users", "x0.5", "users", ROUNDUP(r("users") * 0.5, 0)),
    Scenario("users_x1.5", "Concurrent users", "x1.5", "users", ROUNDUP(r("users") * 1.5, 0)),
    Scenario("users_x2", "Concurrent users", "x2", "users", r("users") * 2),
    Scenario("prompt_-50%", "Prompt length", "-50 %", "prompt_tokens",
             _scaled_tokens("prompt_tokens", 0.5)),
    Scenario("prompt_+50%", "Prompt length", "+50 %", "prompt_tokens",
             _scaled_tokens("prompt_tokens", 1.5)),
    Scenario("output_-50%", "Output length", "-50 %", "output_tokens",
             _scaled_tokens("output_tokens", 0.5)),
    Scenario("output_+50%", "Output length", "+50 %", "output_tokens",
             _scaled_tokens("output_tokens", 1.5)),
    Scenario("gpu_price_-30%", "GPU price", "-30 %", "gpu_price_factor",
             r("gpu_price_factor") * 0.7),
    Scenario("gpu_price_+30%", "GPU price", "+30 %", "gpu_price_factor",
             r("gpu_price_factor") * 1.3),
    Scenario("cloud_hyperscaler_on_demand", "Cloud price", "hyperscaler on-demand",
             "cloud_tier_what_if", lift(1)),
    Scenario("cloud_committed_1yr", "Cloud price", "committed 1 year", "cloud_tier_what_if",
             lift(2)),
    Scenario("cloud_committed_3yr", "Cloud price", "committed 3 years", "cloud_tier_what_if",
             lift(3)),
    Scenario("cloud_gpu_cloud", "Cloud price", "GPU cloud on-demand", "cloud_tier_what_if",
             lift(4)),
    Scenario("load_0.3", "Average load", "30 %", "average_load", lift(0.3)),
    Scenario("load_0.9", "Average load", "90 %", "average_load", lift(0.9)),
    Scenario("headroom_0", "Headroom", "0 %", "headroom", lift(0)),
    Scenario("headroom_0.5", "Headroom", "50 %", "headroom", lift(0.5)),
)
SCENARIO_OUTPUTS = ("gpus_purchased", "nodes", "capex", "annual_cost_onprem", "annual_cost_cloud")

# Loads at which the break-even table and chart evaluate the cost per million tokens.
BREAKEVEN_LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

# Catalog prices are in US dollars; accounts in another currency give an exchange rate.
PRICE_IN_ACCOUNT_CURRENCY = ref("usd_price") * ref("usd_exchange_rate")


# ---- benchmark result files (``measured: {file: ...}``, docs/measured.md) -----------------
# What llmsizer.inputs.benchfiles derives from a benchmark's recorded figures. A ``*_given`` name is a
# figure read from the file (or the measured block); each expression is evaluated once per
# benchmark point, never printed into the workbook (the chosen point's throughput per replica
# is the workload input ``measured_tokens_per_s_per_replica``).
BENCH_TO_MS = ref("value_given") * ref("ms_per_unit_given")
BENCH_MEAN = ref("total_given") / ref("count_given")
BENCH_REPLICAS = ref("gpu_count_given") / ref("gpus_per_replica_given")
BENCH_TOKENS_PER_S_PER_REPLICA = ref("output_tokens_per_s_given") / ref("replicas_given")
BENCH_TOKENS_PER_S_PER_USER = 1000 / ref("tpot_ms_given")
# How far a point is from the workload's targets: the larger of required / achieved speed
# and achieved / allowed TTFT; a point meets the targets when this is at most 1.
BENCH_SHORTFALL = MAX(
    IF(gt(ref("required_tokens_per_s_per_user"), 0),
       ref("required_tokens_per_s_per_user") / ref("tokens_per_s_per_user_given"), 0),
    IF(gt(ref("target_ttft_ms"), 0), ref("ttft_ms_given") / ref("target_ttft_ms"), 0))
BENCH_GROUP_GPUS = ref("tp_given") * ref("pp_given")
BENCH_LENGTH_RATIO = ref("bench_tokens_given") / ref("workload_tokens_given")


# ==== PLAN: one deployment plan per account (DESIGN §3 "Account plan") ======================
# Workloads sized alone each carry their own rounding and their own N+1. The plan pools
# workloads that run the same model, precisions, GPU and TP (a *pool* shares replicas) and
# packs the pools that share a GPU and platform into the same nodes (a *node group*).
# llmsizer.sizing.plan decides which workloads pool; every number below is evaluated by it with the
# expression machinery and printed by the workbook's Plan sheet as formulas over the workload
# sheets. The stages run in order: member rows, pool load, group load, pool spares, group
# size, pool headroom, group headroom and cost.
#
# Names a plan stage reads beyond its own: the member's option values (calculations above),
# the account inputs, and option constants shared by every member of a pool (same model, GPU,
# precisions and TP): kv_budget_gb, max_batch_per_replica, replicas_per_node, tp, and by
# every pool of a group (same GPU and platform): gpus_per_node, platform_sold_full.
@dataclass(frozen=True)
class Aggregate:
    """``fn`` (SUM, MIN or MAX) over the rows of a pool's members (or a group's pools) of
    ``member``, an expression evaluated on each row."""

    name: str
    label: str
    unit: str
    fn: Literal["SUM", "MIN", "MAX"]
    member: Expr
    note: str


@dataclass(frozen=True)
class PlanCalculation:
    name: str
    label: str
    unit: str
    expr: Expr
    note: str


_FNS = {"SUM": SUM, "MIN": MIN, "MAX": MAX}


def aggregate_expr(agg: Aggregate, row_names: list[str]) -> Expr:
    """The aggregate over rows whose values are held under ``row_names`` (one per row)."""
    return fold(agg.fn, [ref(n) for n in row_names])


def fold(fn: Literal["SUM", "MIN", "MAX"], items: list[Expr]) -> Expr:
    """``fn`` over any number of items (nested by 30: the function table's limit)."""
    while len(items) > 30:
        items = [_FNS[fn](*items[i:i + 30]) for i in range(0, len(items), 30)]
    return _FNS[fn](*items) if items else _FNS[fn](0)


_n1 = gt(r("survive_node_loss"), 0)

# Over a pool's members, each read from the member workload's option for the pool's choice
# (a member row may also read the pool aggregates listed before it). A member's sequences in
# flight at peak are its users (or its system target's sequences). A replica's capacity is
# shared: each member's sequences use 1/B of it for every limit B (tokens/s at the pool's
# strictest target, KV memory, TTFT, engine cap), so the pool needs the largest of the sums
# (closed form, never fewer replicas when users grow, exactly today's sizing for one member).
_seqs = r("demand_replicas") * r("batch_per_replica")
_member_tpot_batch = IF(gt(r("pool_target_tpot_ms"), 0),
                        ROUNDDOWN((r("pool_target_tpot_ms") - r("step_fixed_ms"))
                                  / r("step_ms_per_seq"), 0), r("max_batch_per_replica"))
POOL_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("pool_demand_sequences", "Sequences in flight at peak", "sequences", "SUM", _seqs,
              "Each member's peak demand x its batch: its users, or its system target's "
              "sequences at its own speed."),
    Aggregate("pool_members_demand_replicas", "Members' peak demand, sized alone", "replicas",
              "SUM", r("demand_replicas"), "Used when no member has sequences (measured mode)."),
    Aggregate("pool_member_batch_smallest", "Smallest member batch, sized alone", "sequences",
              "MIN", r("batch_per_replica"), "Used when no member has sequences."),
    Aggregate("pool_target_tpot_largest", "Loosest time per output token", "ms", "MAX",
              r("target_tpot_ms"), "Stands in for members without a per-token target."),
    Aggregate("pool_target_tpot_ms", "Allowed time per output token (strictest)", "ms", "MIN",
              IF(gt(r("target_tpot_ms"), 0), r("target_tpot_ms"), r("pool_target_tpot_largest")),
              "Every member's tokens/s target must hold in the shared batch: the smallest "
              "allowed TPOT; 0 = no per-token target."),
    Aggregate("pool_batch_by_tpot", "Smallest member batch at the strictest TPOT", "sequences",
              "MIN", _member_tpot_batch,
              "ROUNDDOWN((strictest TPOT - a) / b) of each member: below 1 a member cannot "
              "share the pool's speed."),
    Aggregate("pool_tpot_replicas", "Replicas the tokens/s targets need", "replicas", "SUM",
              IF(ge(_member_tpot_batch, 1), _seqs / _member_tpot_batch, 0),
              "Each member's sequences / its batch at the strictest TPOT: a replica's step "
              "time shared by the sequences it holds."),
    Aggregate("pool_memory_replicas", "Replicas the KV cache needs", "replicas", "SUM",
              IF(gt(r("max_sequences_by_memory"), 0), _seqs / r("max_sequences_by_memory"), 0),
              "Each member's sequences / the requests of its context that fit in a replica."),
    Aggregate("pool_ttft_replicas", "Replicas the TTFT targets need", "replicas", "SUM",
              IF(gt(r("batch_by_ttft"), 0), _seqs / r("batch_by_ttft"), 0),
              "Each member's sequences / its TTFT batch (at its own prompt and step time)."),
    Aggregate("pool_kv_sequence_gb", "KV reserved by all sequences", "GB", "SUM",
              _seqs * r("kv_gb_per_request"), "Sequences x KV per request, summed."),
    Aggregate("pool_kv_gb_largest", "Largest member KV per request", "GB", "MAX",
              r("kv_gb_per_request"), "Used when no member has sequences."),
    Aggregate("pool_step_sequence_ms", "Per-sequence step time of all sequences", "ms", "SUM",
              _seqs * r("step_ms_per_seq"),
              "Sequences x step time per sequence (b), summed: a mixed batch's step is a + "
              "the sum of its sequences' b."),
    Aggregate("pool_step_ms_largest", "Largest member step time per sequence", "ms", "MAX",
              r("step_ms_per_seq"), "Used when no member has sequences."),
    Aggregate("pool_step_fixed_ms", "Step time at batch 0 (a)", "ms", "MAX", r("step_fixed_ms"),
              "The same model, GPU and TP give every member the same a (MoE: the largest)."),
    Aggregate("pool_required_system_tokens_per_s", "Required throughput", "tok/s", "SUM",
              r("required_system_tokens_per_s"), "All members' peak output tokens/s."),
)

_has_demand = gt(r("pool_demand_sequences"), 0)
POOL_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_meets_targets", "Every member can share the pool's speed", "flag",
        IF(ge(r("pool_batch_by_tpot"), 1), 1, 0),
        "0 when a member's sequence alone is slower than the strictest member's target."),
    PlanCalculation(
        "pool_demand_replicas", "Replicas at peak, no headroom", "replicas",
        IF(_has_demand,
           MAX(r("pool_tpot_replicas"), r("pool_memory_replicas"), r("pool_ttft_replicas"),
               r("pool_demand_sequences") / r("max_batch_per_replica")),
           r("pool_members_demand_replicas")),
        "The largest need: tokens/s, KV memory, TTFT or the engine cap (sequences / cap). "
        "One member: users / its batch, as sized alone."),
    PlanCalculation(
        "pool_batch_per_replica", "Batch per replica (mixed)", "sequences",
        IF(AND(_has_demand, gt(r("pool_demand_replicas"), 0)),
           ROUNDDOWN(r("pool_demand_sequences") / r("pool_demand_replicas"), 0),
           r("pool_member_batch_smallest")),
        "Sequences in flight / replicas at peak: the mixed batch a replica carries."),
    PlanCalculation(
        "pool_kv_gb_per_request", "KV cache per request (weighted)", "GB",
        IF(_has_demand, r("pool_kv_sequence_gb") / r("pool_demand_sequences"),
           r("pool_kv_gb_largest")),
        "Mean of the members' KV per request, weighted by their sequences (users)."),
    PlanCalculation(
        "pool_step_ms_per_seq", "Step time per sequence, mixed (b)", "ms",
        IF(_has_demand, r("pool_step_sequence_ms") / r("pool_demand_sequences"),
           r("pool_step_ms_largest")),
        "Mean of the members' b, weighted by their sequences: each reads its own KV and "
        "prefills its own prompts."),
    PlanCalculation(
        "pool_tpot_ms", "Time per output token (mixed batch)", "ms",
        r("pool_step_fixed_ms") + r("pool_step_ms_per_seq") * MAX(1, r("pool_batch_per_replica")),
        "a + mixed b x batch: what every member's users see (within the strictest target)."),
    PlanCalculation(
        "pool_replicas_for_load", "Replicas for peak + headroom", "replicas",
        ROUNDUP(r("pool_demand_replicas") * (1 + r("headroom")), 0),
        "Headroom and rounding once for the pool, not per workload."),
    PlanCalculation(
        "pool_load_gpus", "GPUs for peak + headroom", "GPUs",
        r("pool_replicas_for_load") * tp, "Replicas x TP, before spares."),
)

GROUP_LOAD_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_load_gpus", "GPUs for peak + headroom", "GPUs", "SUM", r("pool_load_gpus"),
              "All pools of the group."),
)

GROUP_SPARE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "group_spare_gpus", "Spare GPUs (N+1)", "GPUs",
        IF(_n1, MIN(r("gpus_per_node"), r("group_load_gpus")), 0),
        "One node's worth for the group (at most its load): N+1 once, not per workload. "
        "With a node down the rest still hold every pool's load replicas."),
)

POOL_SPARE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_spare_replicas", "Spare replicas (N+1), running", "replicas",
        IF(AND(_n1, gt(r("group_load_gpus"), 0)),
           MIN(r("replicas_per_node"), r("pool_replicas_for_load"),
               ROUNDDOWN(r("pool_replicas_for_load") * r("group_spare_gpus")
                         / r("group_load_gpus"), 0)), 0),
        "The pool's share of the group's spare GPUs by its share of the load, in whole "
        "replicas (what is left of the spare stays on standby). Alone in its group: MIN("
        "replicas per node, load), as a workload sized alone."),
    PlanCalculation(
        "pool_replicas", "Replicas", "replicas",
        r("pool_replicas_for_load") + r("pool_spare_replicas"), "Serving copies of the model."),
    PlanCalculation("pool_gpus", "GPUs", "GPUs", r("pool_replicas") * tp, "Replicas x TP."),
)

GROUP_SIZE_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_pool_gpus", "GPUs running replicas", "GPUs", "SUM", r("pool_gpus"),
              "All pools' replicas x TP, running spares included."),
)

GROUP_SIZE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "group_gpus_used", "GPUs used", "GPUs", r("group_load_gpus") + r("group_spare_gpus"),
        "Load + one node's worth of spares (as a workload sized alone counts them)."),
    PlanCalculation(
        "group_standby_gpus", "Spare GPUs on standby", "GPUs",
        r("group_gpus_used") - r("group_pool_gpus"),
        "Spare GPUs no pool runs a replica on: they take over a failed node's replicas."),
    PlanCalculation(
        "group_nodes", "Nodes", "nodes",
        MAX(ROUNDUP(r("group_gpus_used") / r("gpus_per_node"), 0), IF(_n1, 2, 1)),
        "Replicas packed into whole nodes: TP is a power of two dividing the node's GPUs, so "
        "no TP group is split across nodes; at least 2 with N+1."),
    PlanCalculation(
        "group_gpus_purchased", "GPUs purchased", "GPUs",
        IF(gt(r("platform_sold_full"), 0), r("group_nodes") * r("gpus_per_node"),
           r("group_gpus_used")),
        "Fixed baseboards come full: nodes x GPUs per node; PCIe servers: the GPUs used."),
)

POOL_HEADROOM_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_replicas_lost_with_a_node", "Replicas lost with one node", "replicas",
        MIN(r("replicas_per_node"), ROUNDUP(r("pool_replicas") / r("group_nodes"), 0)),
        "The pool's replicas on the fullest node, spread evenly over the group's nodes."),
    PlanCalculation(
        "pool_headroom_achieved", "Headroom achieved at peak", "fraction",
        IF(gt(r("pool_demand_replicas"), 0),
           r("pool_replicas") / r("pool_demand_replicas") - 1, 0),
        "Capacity / peak demand - 1, all nodes up."),
    PlanCalculation(
        "pool_headroom_after_node_loss", "Headroom with one node down", "fraction",
        IF(gt(r("pool_demand_replicas"), 0),
           IF(_n1, MAX(r("pool_replicas") - r("pool_replicas_lost_with_a_node"),
                       r("pool_replicas_for_load")),
              r("pool_replicas") - r("pool_replicas_lost_with_a_node"))
           / r("pool_demand_replicas") - 1, 0),
        "Replicas left on the other nodes; with N+1 at least the load replicas, restarted "
        "on the group's spare GPUs. Negative: the pool's peak is not met while a node is down."),
)

GROUP_HEADROOM_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_headroom_achieved", "Headroom achieved at peak (weakest pool)",
              "fraction", "MIN", r("pool_headroom_achieved"), "The least of the group's pools."),
    Aggregate("group_headroom_after_node_loss", "Headroom with one node down (weakest pool)",
              "fraction", "MIN", r("pool_headroom_after_node_loss"),
              "The least of the group's pools."),
)

# The stages in evaluation order (llmsizer.sizing.plan runs them; docs and the Plan sheet list them).
PLAN_STAGES: tuple[tuple[str, tuple[Aggregate | PlanCalculation, ...]], ...] = (
    ("pool", POOL_AGGREGATES + POOL_CALCULATIONS),
    ("group load", GROUP_LOAD_AGGREGATES + GROUP_SPARE_CALCULATIONS),
    ("pool spares", POOL_SPARE_CALCULATIONS),
    ("group size", GROUP_SIZE_AGGREGATES + GROUP_SIZE_CALCULATIONS),
    ("pool headroom", POOL_HEADROOM_CALCULATIONS),
    ("group headroom", GROUP_HEADROOM_AGGREGATES),
)

# A group is costed by the calculations above themselves (the TCO lines, whoever edits them),
# read with the group's nodes and GPUs in place of one option's: the ones that depend on the
# counts and lead to the group's figures, in list order.
GROUP_COUNTS: dict[str, str] = {"nodes": "group_nodes", "gpus": "group_gpus_used",
                                "gpus_purchased": "group_gpus_purchased"}
GROUP_COST_FIGURES = ("capex", "annual_cost_onprem", "annual_cost_cloud")


def _group_cost_calculations() -> tuple[Calculation, ...]:
    by_name = {c.name: c for c in CALCULATIONS}
    downstream = set(GROUP_COUNTS)
    for c in CALCULATIONS:
        if c.name not in GROUP_COUNTS and references(c.expr) & downstream:
            downstream.add(c.name)
    needed: set[str] = set()
    stack = list(GROUP_COST_FIGURES)
    while stack:
        name = stack.pop()
        if name in needed or name not in by_name or name in GROUP_COUNTS:
            continue
        needed.add(name)
        stack.extend(references(by_name[name].expr))
    return tuple(c for c in CALCULATIONS if c.name in needed and c.name in downstream)


GROUP_COST_CALCULATIONS: tuple[Calculation, ...] = _group_cost_calculations()

# Account totals of the plan: sums over its node groups (cost per million tokens as above).
PLAN_TOTALS = {"gpus_used": "group_gpus_used", "gpus_purchased": "group_gpus_purchased",
               "nodes": "group_nodes", "capex": "capex",
               "annual_cost_onprem": "annual_cost_onprem", "annual_cost_cloud": "annual_cost_cloud"}

# What the plan saves against sizing each workload alone (``*_dedicated``: totals_dedicated).
PLAN_SAVING = ref("annual_cost_onprem_dedicated") - ref("annual_cost_onprem")
PLAN_SAVING_SHARE = IF(gt(ref("annual_cost_onprem_dedicated"), 0),
                       PLAN_SAVING / ref("annual_cost_onprem_dedicated"), 0)


@cache
def program() -> Program:
    """The whole list compiled once: what the engine, costs and fidelity evaluate."""
    return compile_program([(c.name, c.expr) for c in CALCULATIONS])
