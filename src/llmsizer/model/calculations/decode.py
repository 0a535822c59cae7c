"""Decode step time t(B) = a + b x B (seeds 001, 003, 004; fitted: docs/calibration.md), and
what it decides: the largest batch meeting the tokens/s, TTFT, memory and engine limits,
TPOT, TTFT and throughput per replica (modelled or the customer's measured figure).

GB / (TB/s) is a millisecond, which is why memory-time terms need no conversion factor.
"""

from __future__ import annotations

from ..expr import AND, IF, LOG, MAX, MIN, OR, POWER, ROUNDDOWN, ROUNDUP, Expr, ge, gt, le, lt
from .core import Calculation, _c, _gpus, r, tp
from .disagg import XPYD_BATCH_CALCULATIONS
from .first_pass import FIRST, LIMITS, first_pass, served_batch_rows
from .inputs import PERCENTILES
from .queueing import (
    PERCENTILE_CALCULATIONS,
    PERCENTILE_LIMIT_CALCULATIONS,
    SLOT_MS_PER_SEQ,
    TTFT_LIMIT_CALCULATIONS,
    concurrency_by_rate,
    slot_fixed_ms,
)
from .third_solve import CANDIDATE, LINE, SECOND, backoff_rows, checked_read_row, third_solve_rows


def _allreduce_bytes(n: Expr) -> Expr:
    """Bytes each GPU moves in one ring all-reduce of a token's hidden vector (2-byte
    activations) over n GPUs: 2(n-1)/n x hidden x 2 (“GenAI Physics”); 0 when n = 1."""
    return 2 * (n - 1) / n * r("hidden_size") * 2


def _busiest(share: Expr) -> Expr:
    """The share of its own experts the busiest expert-parallel GPU reads when the step's
    tokens touch ``share`` of all experts: each GPU holds E / EP of them, and the step waits
    for the one the batch touches most (mean + standard deviation over E / EP experts x
    sqrt(2 ln EP), the usual bound on the largest of EP such counts); ``share`` itself without
    expert parallelism. It is 0 at share 0, concave and capped at 1, so it is at most
    B x its value for one token (what batch_by_tpot's bound needs)."""
    return IF(AND(gt(r("ep"), 1), gt(r("experts"), 0)),
              MIN(1, share + POWER(share * (1 - share) * r("ep") / r("experts"), 0.5)
                  * POWER(2 * LOG(r("ep"), 2.718281828459045), 0.5)),
              share)


def _share_read(batch: Expr) -> Expr:
    """1 - (1 - k/E)^B: the share of experts the step's tokens at ``batch`` sequences touch."""
    return 1 - POWER(1 - r("expert_share_per_token"),
                     MAX(1, batch / r("pp")) * r("spec_tokens_per_step"))


def _step_fixed(weights_ms: Expr) -> Expr:
    """a of t(B) for a step streaming ``weights_ms`` of weights (before any FP4 saving)."""
    return weights_ms + r("comm_fixed_ms") + r("step_overhead_ms") + r("spec_draft_fixed_ms")


def _prefill(weights_ms: Expr) -> Expr:
    """One prompt's prefill: its compute, at least one read of ``weights_ms``, + latency."""
    return MAX(r("prefill_compute_ms"), weights_ms) + r("comm_fixed_ms") + r("step_overhead_ms")



def _concurrency_bound_rows(suffix: str, batch: Expr, at: str) -> tuple[Calculation, ...]:
    """An upper bound of the concurrency an arrival rate causes, with no circular reference:
    Little's law (queueing.concurrency_by_rate) with every step and prefill reading the
    experts of ``batch`` sequences, a batch at or above the one served. Its slot times are
    at or above those served (no FP4 saving either), so the concurrency is too. Unrolled
    twice: the second pass reads the experts at the first's bound, which tightens it."""
    share, weights = f"experts_read_bound{suffix}_fraction", f"decode_weights_bound{suffix}_ms"
    slot = f"request_slot_fixed_bound{suffix}_ms"
    return (
        _c(share, f"Share of experts read, {at}", "fraction", "Throughput", _share_read(batch),
           f"1 - (1 - k/E)^B at the {at} (as the share read per step): at or above the share "
           "the batch served reads."),
        _c(weights, f"Weight streaming per step, {at}", "ms", "Throughput",
           r("shared_weights_ms") + r("all_experts_ms") * _busiest(r(share)),
           f"The weights a step reads at the {at} (MoE: the experts it touches): at or above "
           "the step served, as its batch is at or below."),
        _c(slot, f"Time a request holds a slot, batch 0, {at}", "ms", "Throughput",
           slot_fixed_ms(_prefill(r(weights)), _step_fixed(r(weights))),
           "First token + (output - 1) steps with no other sequence, each step and the "
           f"prefill reading the weights at the {at} (without the FP4 saving): at or above "
           "the same time at the batch served."),
        _c(f"concurrency_bound{suffix}", f"Concurrent users at peak, at most ({at})", "users",
           "Throughput",
           IF(gt(r("peak_request_rate_per_s"), 0),
              concurrency_by_rate(r(slot), r(slot) + SLOT_MS_PER_SEQ * r("batch_upper_bound")),
              r("users")),
           "The arrival rate's concurrency by Little's law, as for the concurrent users, with "
           f"the slot times at the {at} (full: at the largest batch at this load): at or above "
           "those at the batch served, so this is at or above the concurrency served."),
    )


_RATE_LOAD = AND(gt(r("peak_request_rate_per_s"), 0), le(r("target_system_tokens_per_s"), 0))

# Experts spread over GPUs exchange tokens by all-to-all only under attention data-parallel:
# without it every GPU holds every token after attention, computes its own experts, and the
# outputs are summed by an all-reduce over the TP group, as for a split MLP (SGLang --ep-size
# without DP attention; TensorRT-LLM's all-to-all only with enable_attention_dp).
_ALLTOALL = AND(gt(r("ep"), 1), gt(r("adp"), 1))
_MLP_REDUCE = IF(AND(gt(r("ep"), 1), le(r("adp"), 1)), tp, r("expert_tp"))
# all-reduces per layer whose group spans nodes (tensor parallelism wider than a node)
_crossing_allreduces = (IF(gt(r("attention_tp"), r("gpus_per_node")), 1, 0)
                        + IF(gt(_MLP_REDUCE, r("gpus_per_node")), 1, 0))
# The batch the mean TTFT target allows (not capped: the debugger reads how far it reaches).
# the other nodes an expert-parallel group spans (its ranks beyond the first node)
_OTHER_NODES = MAX(1, ROUNDUP((r("ep") - r("gpus_per_node")) / r("gpus_per_node"), 0))
_DISAGG = gt(r("disagg_prefill_gpus"), 0)  # the option is an xPyD decode pool (disagg.py)
_mean_ttft_batch = IF(gt(r("target_ttft_ms"), 0), ROUNDDOWN(r("batch_by_ttft_exact"), 0),
                      r("max_batch_per_replica"))

_BEFORE_SHARE: tuple[Calculation, ...] = (
    _c("avg_context_tokens", "Average context during decode", "tokens", "Throughput",
       r("prompt_tokens") + r("output_tokens") / 2, "Prompt + half the output."),
    _c("attention_width", "Attention width", "elements", "Throughput",
       IF(gt(r("mla_kv_dim"), 0),
          r("attention_heads") * (r("head_dim") + r("qk_rope_head_dim") / 2),
          r("attention_heads") * r("head_dim")),
       "Heads x head dim (MLA: mean of the 192-wide query/key and 128-wide value heads): "
       "prefill attention FLOPs per token per cached token = 2 x layers x width."),
    _c("prefill_tokens", "Prompt tokens to prefill", "tokens", "Throughput",
       IF(_DISAGG, 0, r("prompt_tokens") * (1 - r("prefix_cache_hit"))),
       "Prefix-cache hits skip prefill; a disaggregated option's decode replicas prefill "
       "nothing (the cache arrives from the prefill replicas)."),
    _c("shared_weights_ms", "Non-expert weight streaming per step", "ms", "Throughput",
       r("shared_params") * r("adp") * r("weight_bytes_per_param") / 1e9
       / (tp * r("gpu_bandwidth_tb_s") * r("mbu_weights") * r("efficiency_scale")),
       "Weights every step reads whatever the batch (dense: all; MoE: attention, embeddings "
       "and shared experts, one copy per attention data-parallel rank) / (TP x bandwidth x "
       "efficiency). Priced at the bytes per weight throughout: the part an FP4 checkpoint "
       "keeps at 16 bits is counted in memory only (at 2 bytes here the measured small-batch "
       "FP4 steps came out too long)."),
    _c("all_experts_ms", "Streaming every routed expert", "ms", "Throughput",
       r("routed_expert_params") * r("weight_bytes_per_param") / 1e9
       / (tp * r("gpu_bandwidth_tb_s") * r("mbu_weights") * r("efficiency_scale")),
       "What a step pays when its batch touches every routed expert (0 for a dense model)."),
    _c("expert_share_per_token", "Share of experts one token reads", "fraction", "Throughput",
       IF(gt(r("experts"), 0), r("experts_per_token") / r("experts"), 0),
       "k/E: the top-k routed experts of E (0 for a dense model)."),
    _c("decode_attended_layer_tokens", "Cached tokens attended per sequence per step",
       "layer-tokens", "Throughput",
       r("full_attention_layers")
       * IF(gt(r("indexer_topk"), 0), MIN(r("avg_context_tokens"), r("indexer_topk")),
            r("avg_context_tokens"))
       + r("window_layers") * MIN(r("avg_context_tokens"), r("sliding_window")),
       "Full-attention layers read the average context (sparse attention: at most the "
       "tokens its indexer selects), sliding-window layers at most their window (the "
       "attention kernel stops there, whatever the cache keeps); linear-attention layers no "
       "cache at all."),
    _c("decode_kv_bytes_per_seq", "KV read per sequence per step", "B", "Throughput",
       r("kv_bytes_per_layer_token") * r("decode_attended_layer_tokens")
       + r("indexer_bytes_per_token") * r("avg_context_tokens") + r("linear_state_bytes"),
       "The cache of the tokens attended + the sparse-attention indexer's keys of the whole "
       "average context (it scores every token to pick the few) + the linear-attention state."),
    _c("expert_slot_flops", "Expert overhead per token", "FLOP", "Throughput",
       IF(gt(r("experts"), 0),
          6 * r("moe_layers") * r("experts_per_token") * r("hidden_size")
          * r("expert_slot_overhead"), 0),
       "Work each token costs per routed expert per MoE layer beside the expert's own GEMMs, as "
       "if the expert were that many columns wider (3 matrices x 2 FLOPs x hidden x width): "
       "gathering, scattering and combining the token's hidden vector and the grouped GEMM's "
       "per-row cost. It weighs most where experts are narrow and many are routed per active "
       "parameter (Qwen3-30B-A3B: 8 of 128 experts 768 wide); 0 for a dense model."),
    _c("decode_kv_ms_per_seq", "KV read per sequence per step", "ms", "Throughput",
       r("decode_kv_bytes_per_seq") * r("kv_replication") / 1e9
       / (_gpus * r("gpu_bandwidth_tb_s") * r("mbu_kv") * r("efficiency_scale")),
       "Each sequence reads its KV cache at the average context (sparse attention: the "
       "selected tokens and the indexer's keys), and its linear-attention state."),
    _c("decode_compute_ms_per_seq", "Compute per sequence per step", "ms", "Throughput",
       (2 * r("params_active") * IF(gt(r("experts"), 0), r("moe_compute_factor"), 1)
        + r("expert_slot_flops"))
       / (_gpus * r("peak_tflops") * 1e12 * r("mfu_decode") * r("efficiency_scale")) * 1000,
       "2 x active params / (GPUs x peak x efficiency) (“GPU Inference vs Training "
       "Requirements”: roofline); MoE routing factor and the expert overhead per token."),
    _c("attention_flops_per_layer_token", "Decode attention FLOPs per cached token per layer",
       "FLOP", "Throughput",
       IF(gt(r("mla_kv_dim"), 0),
          2 * r("attention_heads") * (2 * r("kv_lora_rank") + r("qk_rope_head_dim")),
          4 * r("attention_heads") * r("head_dim")),
       "Scores and weighted sum over each cached token: 4 x heads x head dim; MLA "
       "(absorbed) 2 x heads x (2 x latent rank + RoPE width)."),
    _c("indexer_flops_per_layer_token", "Sparse-attention indexer FLOPs per cached token "
       "per layer", "FLOP", "Throughput",
       2 * r("indexer_heads") * r("indexer_head_dim"),
       "The lightning indexer scores every cached token with one dot product per indexer "
       "head (DeepSeek-V3.2-Exp paper, Eq. 1): 2 x heads x key width; 0 for dense "
       "attention."),
    _c("decode_attention_ms_per_seq", "Attention compute per sequence per step", "ms",
       "Throughput",
       (r("attention_flops_per_layer_token") * r("decode_attended_layer_tokens")
        + r("indexer_flops_per_layer_token") * r("full_attention_layers")
        * r("avg_context_tokens"))
       / (_gpus * r("attention_peak_tflops") * 1e12 * r("mfu_attention")
          * r("efficiency_scale")) * 1000,
       "Attention over the average context at the KV precision's rate: matters for MLA, whose "
       "small KV cache is read with many FLOPs per byte. Sparse attention: over the selected "
       "tokens, plus the indexer over the whole context (it runs in FP8; charged at the KV "
       "precision's rate)."),
    _c("allreduce_fixed_ms", "All-reduce latency per step", "ms", "Throughput",
       r("layers") * (IF(gt(r("attention_tp"), 1), 1, 0) + IF(gt(_MLP_REDUCE, 1), 1, 0))
       * r("allreduce_latency_us") / 1000,
       "One all-reduce per layer after attention (when attention is split over GPUs) and one "
       "after the MLP or experts (when they are, or when experts are spread without attention "
       "data-parallel); 0 at TP 1 (“GenAI Physics”)."),
    _c("alltoall_fixed_ms", "All-to-all latency per step", "ms", "Throughput",
       IF(_ALLTOALL, 2 * r("moe_layers") * r("alltoall_latency_us") / 1000, 0),
       "Dispatch and combine per MoE layer under expert parallelism with attention "
       "data-parallel."),
    _c("allreduce_scaleout_fixed_ms", "All-reduce latency across nodes per step", "ms",
       "Throughput",
       r("layers") * _crossing_allreduces * r("allreduce_latency_us") / 1000,
       "Tensor parallelism wider than a node: an all-reduce whose group spans nodes runs in "
       "two stages, inside each node and then between the nodes over the network (NCCL's "
       "tree or ring across nodes), so it pays the all-reduce latency a second time, once "
       "per layer after attention and once after the experts (0 within one node)."),
    _c("comm_fixed_ms", "Communication latency per step", "ms", "Throughput",
       r("allreduce_fixed_ms") + r("alltoall_fixed_ms") + r("allreduce_scaleout_fixed_ms"),
       "All-reduce + all-to-all latency, and what the network adds to all-reduces across "
       "nodes."),
    _c("allreduce_ms_per_token", "All-reduce transfer per token", "ms", "Throughput",
       r("layers") * (_allreduce_bytes(r("attention_tp")) + _allreduce_bytes(_MLP_REDUCE))
       / (r("gpu_link_gb_s") * r("link_efficiency") * 1e9) * 1000 / r("pp"),
       "2(N-1)/N x hidden x 2 bytes over the link per all-reduce (“GenAI Physics”: TP penalty); "
       "pipeline stages run theirs at the same time."),
    _c("allreduce_scaleout_ms_per_token", "All-reduce across nodes per token", "ms",
       "Throughput",
       IF(AND(gt(_crossing_allreduces, 0), gt(r("scaleout_gb_s"), 0)),
          r("layers") * (IF(gt(r("attention_tp"), r("gpus_per_node")),
                            _allreduce_bytes(r("attention_tp")), 0)
                         + IF(gt(_MLP_REDUCE, r("gpus_per_node")),
                              _allreduce_bytes(_MLP_REDUCE), 0))
          / (r("scaleout_gb_s") * r("scaleout_efficiency") * 1e9) * 1000 / r("pp"), 0),
       "An all-reduce over more GPUs than a node holds: a ring's bytes per GPU, 2(N-1)/N x "
       "hidden x 2, pass each GPU's network link, which is slower than the scale-up link "
       "(0 within one node, or where the platform states no network)."),
    _c("alltoall_ms_per_token", "All-to-all transfer per token", "ms", "Throughput",
       IF(_ALLTOALL,
          r("moe_layers") * MIN(r("experts_per_token"), r("ep"))
          * (MIN(r("ep"), r("gpus_per_node")) - 1) / r("ep")
          * r("hidden_size") * (r("alltoall_dispatch_bytes") + 2)
          / (r("ep") * r("gpu_link_gb_s") * r("link_efficiency") * 1e9) * 1000, 0),
       "Dispatch + combine on each MoE layer: a token's hidden vector goes to the ranks of its "
       "top-k experts (at the dispatch bytes a value) and comes back (2 bytes a value), spread "
       "over the EP ranks' links; this part to the ranks in the same node, over the scale-up "
       "link."),
    _c("alltoall_scaleout_ms_per_token", "All-to-all across nodes per token", "ms",
       "Throughput",
       IF(gt(r("ep"), r("gpus_per_node")),
          r("moe_layers") * MIN(r("experts_per_token"), r("ep"))
          * (r("ep") - r("gpus_per_node")) / r("ep")
          * r("hidden_size") * (r("alltoall_dispatch_bytes") + 2)
          / (r("ep") * r("scaleout_gb_s") * r("scaleout_efficiency") * 1e9)
          * 1000, 0),
       "Expert parallelism across nodes: the share of a token's dispatch and combine that goes "
       "to ranks in other nodes, over each GPU's network link at the measured network "
       "efficiency (0 within one node)."),
    _c("alltoall_exposed_ms_per_token", "All-to-all across nodes not hidden", "ms",
       "Throughput",
       IF(gt(r("alltoall_overlap"), 0),
          MAX(0, r("alltoall_scaleout_ms_per_token")
              - (r("decode_kv_ms_per_seq") + r("decode_compute_ms_per_seq")
                 + r("decode_attention_ms_per_seq"))),
          r("alltoall_scaleout_ms_per_token")),
       "Engines that spread experts over nodes with two-batch overlap send one half-batch's "
       "tokens while the other computes (LMSYS, 'Deploying DeepSeek ... on 96 H100 GPUs', "
       "2025; DeepSeek's inference system), so only the network time beyond a token's KV "
       "reads, compute and attention adds to the step; without it (all-to-all overlap 0) the "
       "step waits for the whole exchange."),
    _c("prefill_compute_ms_per_token", "Prefill compute per prompt token", "ms", "Throughput",
       ((2 * r("params_active") * IF(gt(r("experts"), 0), r("moe_compute_factor"), 1)
         + r("expert_slot_flops"))
        / r("peak_tflops")
        + 2 * r("attention_width") * (r("full_attention_layers") + r("window_layers"))
        * r("prefill_tokens")
        / r("attention_peak_tflops"))
       / (_gpus * 1e12 * r("mfu_prefill") * r("efficiency_scale")) * 1000,
       "Compute-bound prefill: 2 x active params at the weights' rate + causal attention at the "
       "KV precision's rate, every attention layer over the whole prompt, as measured gpt-oss "
       "throughput says."),
    _c("prefill_alltoall_scaleout_ms_per_token", "Prefill all-to-all across nodes per token",
       "ms", "Throughput",
       IF(gt(r("ep"), r("gpus_per_node")),
          2 * r("moe_layers") * _OTHER_NODES
          * (1 - POWER(1 - (r("ep") - r("gpus_per_node")) / (_OTHER_NODES * r("ep")),
                       MIN(r("experts_per_token"), r("ep"))))
          * r("hidden_size") * 2
          / (r("ep") * r("scaleout_gb_s") * r("scaleout_efficiency") * 1e9)
          * 1000, 0),
       "Prefill's exchange (DeepEP's normal kernels) sends a token once to each other node "
       "holding one of its experts and forwards it over NVLink inside that node: M other "
       "nodes, each holding a share s of the experts, get M x (1 - (1 - s)^top-k) copies "
       "over the network, not one per expert (EP32 on 8-GPU nodes: 2.7, not 6)."),
    _c("prefill_ms_per_token", "Prefill time per prompt token", "ms", "Throughput",
       r("prefill_compute_ms_per_token")
       + r("allreduce_ms_per_token") + r("alltoall_ms_per_token")
       + r("allreduce_scaleout_ms_per_token")
       + IF(gt(r("alltoall_overlap"), 0),
            MAX(0, r("prefill_alltoall_scaleout_ms_per_token")
                - r("prefill_compute_ms_per_token")),
            r("prefill_alltoall_scaleout_ms_per_token")),
       "Prefill compute + its all-reduce and all-to-all in the node + what the network adds "
       "across nodes beyond the compute it overlaps (two-batch overlap; all of it without)."),
    _c("prefill_ms_per_seq_step", "Prefill share per sequence per step", "ms", "Throughput",
       r("prefill_ms_per_token") * r("prefill_tokens") * r("spec_acceptance_length")
       / r("output_tokens"),
       "Each request's prefill spread over its decode steps (output / accepted tokens per "
       "step): prefill takes time from decode."),
    _c("step_fixed_base_ms", "Step time at batch 0 without the experts (a0)", "ms",
       "Throughput",
       r("shared_weights_ms") + r("comm_fixed_ms") + r("step_overhead_ms")
       + r("spec_draft_fixed_ms"),
       "Non-expert weights, all-reduce and all-to-all latency, scheduler overhead, the draft "
       "forwards' fixed work."),
    _c("step_ms_per_seq", "Step time per sequence (b)", "ms", "Throughput",
       r("decode_kv_ms_per_seq")
       + (r("decode_compute_ms_per_seq") + r("decode_attention_ms_per_seq")
          + r("allreduce_ms_per_token") + r("alltoall_ms_per_token")
          + r("allreduce_scaleout_ms_per_token")
          + r("alltoall_exposed_ms_per_token")) * r("spec_tokens_per_step")
       + r("prefill_ms_per_seq_step"),
       "b of t(B) = a + b x B: KV read, compute, attention, all-reduce, all-to-all (in the node, "
       "and what the network adds across nodes; per token verified: x (1 + drafted) under "
       "speculation), amortised prefill (fitted additive)."),
    _c("required_tokens_per_s_per_user", "Required tokens/s per user", "tok/s", "Throughput",
       MAX(r("target_tokens_per_s_per_user"),
           IF(gt(r("target_response_time_s"), 0),
              r("output_tokens") / r("target_response_time_s"), 0)),
       "Stated target, or output / response time (“From Users to GPUs”: 300 in 10 s = 30 tok/s)."),
    _c("target_tpot_ms", "Allowed time per output token", "ms", "Throughput",
       IF(gt(r("required_tokens_per_s_per_user"), 0),
          1000 / r("required_tokens_per_s_per_user"), 0),
       "1000 / required tokens/s; 0 = no per-token target."),
    _c("batch_by_tpot", "Largest batch meeting tokens/s", "sequences", "Throughput",
       IF(gt(r("target_tpot_ms"), 0),
          ROUNDDOWN(MAX((r("target_tpot_ms") / r("spec_tpot_factor") - r("step_fixed_base_ms"))
                        / (r("step_ms_per_seq")
                           + r("all_experts_ms") * _busiest(r("expert_share_per_token"))
                           * r("spec_tokens_per_step")),
                        (r("target_tpot_ms") / r("spec_tpot_factor") - r("step_fixed_base_ms")
                         - r("all_experts_ms")) / r("step_ms_per_seq")), 0),
          r("max_batch_per_replica")),
       "B_slo = ROUNDDOWN((T - a) / b), closed form because t(B) is linear in B (DESIGN §3). "
       "MoE: the experts a batch reads are bounded by MIN(1, B x k/E) (exact at B = 1; under "
       "expert parallelism the busiest GPU's share, at most B x its share at one token), so "
       "t(B) <= the smaller of a0 + (b + all experts x k/E) x B and a0 + all experts + b x B, "
       "each solved for B: conservative, and it does not depend on the step time it limits. "
       "Speculation: the step may take the allowed time / its TPOT factor, and each sequence "
       "puts 1 + drafted tokens through the experts."),
    _c("prefill_compute_ms", "Compute of one prompt", "ms", "Throughput",
       r("prefill_tokens") * r("prefill_ms_per_token"),
       "The prompt's tokens at the prefill's time per token."),
    _c("ttft_queue_steps", "Decode steps a new request waits", "steps", "Throughput",
       0.5 + r("prefill_tokens") / r("prefill_chunk_tokens"),
       "Half a step to join, plus one step per prefill chunk it shares with decode (fitted)."),
    _c("ttft_own_prefill_ms", "The prompt's own prefill in the steps before its first token",
       "ms", "Throughput",
       MIN((r("ttft_queue_steps") + r("scheduler_steps")) * r("prefill_ms_per_seq_step"),
           r("prefill_compute_ms")),
       "The steps before a first token cost a + b x B with the prompt one of the B, and b "
       "carries each sequence's prefill spread over its answer's steps; the prefill of one "
       "prompt already counts this prompt's, so the first token takes that share off (it grows as prompt^2 "
       "/ (chunk x output): one user, a 100k prompt, 256 tokens out counted it 1.0 x more). "
       "At most one prefill, so every time at batch 0 stays positive."),
    _c("ttft_prefill_excess_ms", "Prefill share the first token's steps count beyond one "
       "prefill", "ms", "Throughput",
       (r("ttft_queue_steps") + r("scheduler_steps")) * r("prefill_ms_per_seq_step")
       - r("ttft_own_prefill_ms"),
       "Steps before a first token x each sequence's prefill share, beyond one whole "
       "prefill: 0 unless those steps outnumber the answer's. A sequence brings at most its "
       "prompt's prefill to a first token's steps (the prompt's own is in prefill), so each "
       "sequence's first-token time leaves it out (queueing.py)."),
    _c("batch_upper_bound", "Largest batch at this load", "sequences", "Throughput",
       MAX(1, MIN(IF(OR(gt(r("target_system_tokens_per_s"), 0),
                        gt(r("peak_request_rate_per_s"), 0)), r("max_batch_per_replica"),
                     r("users")),
                  r("max_sequences_by_memory"), r("max_batch_per_replica"),
                  MAX(1, r("batch_by_tpot")))),
       "The most sequences a replica runs at this load: the users present (a throughput "
       "target or an arrival rate: the engine cap, as such replicas are sized full) within "
       "memory, the engine cap and the tokens/s batch (which "
       "does not depend on it: no circular reference). At or above the batch served; the "
       "TTFT batch is left out because it reads the step time."),
    *_concurrency_bound_rows("", r("batch_upper_bound"), "largest batch at this load"),
    *_concurrency_bound_rows("_2", MAX(1, MIN(r("batch_upper_bound"), r("concurrency_bound"))),
                             "first concurrency bound"),
    _c("batch_experts_bound", "Largest batch the experts may be read at", "sequences",
       "Throughput",
       IF(_RATE_LOAD, MAX(1, MIN(r("batch_upper_bound"), r("concurrency_bound"),
                                 r("concurrency_bound_2"))),
          r("batch_upper_bound")),
       "The largest batch at this load; under an arrival rate, at most the concurrency it "
       "causes (its two bounds), which bounds the batch served (one request at a time reads "
       "k of E experts, stated as a rate or as one user). The first estimate of every batch "
       "limit reads the experts at this batch (first_pass.py)."),
)

# Every row here that reads the share of experts read is evaluated twice (first_pass.py):
# first with the experts read at batch_experts_bound, then at the first estimate of the
# batch per replica (batch_experts_read).
_SHARE_ROWS: tuple[Calculation, ...] = (
    _c("experts_read_fraction", "Share of experts read per step", "fraction", "Throughput",
       _share_read(r("batch_experts_read")),
       "1 - (1 - k/E)^B: expected share of experts a step's B tokens touch (MoE): k/E at "
       "B = 1, all at large B. B is the step's tokens at this load (a micro-batch under "
       "pipelining; x (1 + drafted) under speculation); every rank's tokens reach the "
       "experts, so attention data-parallel does not divide it."),
    _c("experts_read_busiest_fraction", "Share of its experts the busiest GPU reads", "fraction",
       "Throughput", _busiest(r("experts_read_fraction")),
       "Expert parallel: the step waits for the GPU whose experts the batch touches most: "
       "the mean share + its standard deviation over the E / EP experts a GPU holds x "
       "sqrt(2 ln EP) (the usual bound on the largest of EP such counts; DeepSeek-R1 at EP8: "
       "0.094 at one token, 0.24 at four, against 0.031 and 0.12 on average); the mean share "
       "without EP."),
    _c("weights_read_gb", "Weights read per step", "GB", "Throughput",
       (r("shared_params") * r("adp") + r("routed_expert_params") * r("experts_read_fraction"))
       * r("weight_bytes_per_param") / 1e9,
       "Dense: all weights once per step. MoE: the non-expert weights (each attention "
       "data-parallel rank reads its own copy) + the experts the batch touches."),
    _c("decode_weights_ms", "Weight streaming per step", "ms", "Throughput",
       r("shared_weights_ms") + r("all_experts_ms") * r("experts_read_busiest_fraction"),
       "Bandwidth ceiling: weights / (TP x bandwidth x efficiency) (“How fast does it "
       "serve?”: 70 GB / 3.35 TB/s = 21 ms); MoE: the experts the batch touches. Pipeline "
       "stages each re-read their weights per micro-batch, so PP does not divide it."),
    _c("all_weights_ms", "Every weight read once", "ms", "Throughput",
       r("shared_weights_ms") + r("all_experts_ms"),
       "The most a step's weight streaming can be, whatever the batch: the workbook's re-run "
       "check asks whether a prompt's compute stays above it."),
    _c("fp4_small_batch_saving_ms", "FP4 small-batch saving per step", "ms", "Throughput",
       IF(AND(gt(r("kv_lora_rank"), 0),
              le(r("batch_experts_read") / r("adp") * r("spec_tokens_per_step"), 16)),
          r("layers") * r("fp4_layer_saving_us") / 1000, 0),
       "NVIDIA's FP4 checkpoints of MLA models (DeepSeek) keep the fused attention "
       "down-projection and the router in BF16, which both engines run through min-latency "
       "kernels at 1-16 tokens per attention rank (published: about 11 µs a layer; fitted "
       "on the rows without expert parallelism); 0 for other models, weights and GPUs."),
    _c("step_fixed_ms", "Step time at batch 0 (a)", "ms", "Throughput",
       _step_fixed(r("decode_weights_ms")) - r("fp4_small_batch_saving_ms"),
       "a of t(B) = a + b x B: weights, all-reduce and all-to-all latency, scheduler overhead, "
       "the draft forwards' fixed work (speculation)."),
    _c("bandwidth_ceiling_tokens_per_s", "Fastest single-user speed", "tok/s", "Throughput",
       1000 / ((r("step_fixed_base_ms") + r("step_ms_per_seq") - r("prefill_ms_per_seq_step")
                - IF(AND(gt(r("kv_lora_rank"), 0), le(r("spec_tokens_per_step"), 16)),
                     r("layers") * r("fp4_layer_saving_us") / 1000, 0)
                + r("all_experts_ms")
                * _busiest(1 - POWER(1 - r("expert_share_per_token"),
                                     r("spec_tokens_per_step"))))
               * r("spec_tpot_factor")),
       "Tokens/s of one user alone (batch 1, k of E experts read per token verified, the "
       "busiest GPU's under expert parallelism; x the speculative TPOT factor): the ceiling no "
       "batch size can beat."),
    _c("prefill_ms", "Prefill of one prompt", "ms", "Throughput",
       _prefill(r("decode_weights_ms")),
       "Compute-bound prefill (at least one weight read) + all-reduce latency + overhead."),
    _c("ttft_one_user_ms", "Time to first token, one user alone", "ms", "Throughput",
       r("prefill_ms") + r("ttft_queue_steps") * (r("comm_fixed_ms") + r("step_overhead_ms")
                                                  + r("step_ms_per_seq"))
       + r("scheduler_steps") * (r("step_fixed_ms") + r("step_ms_per_seq"))
       + r("ttft_overhead_ms") - r("ttft_own_prefill_ms") - r("ttft_prefill_excess_ms"),
       "The best TTFT this option can give (batch 1): ttft_ms at batch 1."),
    _c("target_ttft_ms", "Allowed time to first token", "ms", "Throughput",
       IF(AND(gt(r("target_ttft_s"), 0),
              OR(le(r("target_response_time_s"), 0),
                 lt(r("target_ttft_s"), r("target_response_time_s")))),
          r("target_ttft_s"), r("target_response_time_s")) * 1000,
       "The TTFT target; without a tighter one, the response time (a first token later than "
       "the response time cannot meet it); 0 = neither. Not first token + the answer's "
       "steps: the response time sets the speed (output / time, “From Users to GPUs”: 300 "
       "in 10 s = 30 tok/s, the first token apart), which the whole answer would raise to "
       "31.5 tok/s there and Ref A from 3 to 4 L40S; e2e_p95_s bounds the whole answer."),
    *TTFT_LIMIT_CALCULATIONS,
    *XPYD_BATCH_CALCULATIONS,
    *PERCENTILE_LIMIT_CALCULATIONS,
    _c("batch_by_ttft", "Largest batch meeting TTFT", "sequences", "Throughput",
       IF(_DISAGG, r("batch_by_e2e_p95"),
          IF(OR(*(gt(r(f"target_ttft_p{q}_s"), 0) for q in PERCENTILES),
                gt(r("target_e2e_p95_s"), 0)),
             MIN(_mean_ttft_batch, *(r(f"batch_by_ttft_p{q}") for q in PERCENTILES),
                 r("batch_by_e2e_p95")),
             _mean_ttft_batch)),
       "The mean TTFT, wait for the prompts ahead included, solved for B in closed form "
       "(queueing.py): the larger of the batches meeting the target with the Allen-Cunneen "
       "wait and with the (B - 1) x prefill bound; and the batch each TTFT percentile "
       "target and the p95 whole-answer target allow; the engine cap when neither a TTFT "
       "target nor a response time is stated. Disaggregated: only the whole-answer batch "
       "(the decode replicas prefill nothing: the prefill replicas' count meets the "
       "first-token targets)."),
    _c("batch_per_replica", "Batch per replica", "sequences", "Throughput",
       MAX(0, MIN(r("max_sequences_by_memory"), r("batch_by_tpot"), r("batch_by_ttft"),
                  r("batch_by_itl"), r("max_batch_per_replica"))),
       "MIN(memory, tokens/s SLO, TTFT SLO, inter-token latency percentile SLO, engine cap)."),
)

_KEEP = (*LIMITS, "experts_read_busiest_fraction")  # what the third solve's line reads
_FIRST_ROWS, _SHARE_COPIED = first_pass(_SHARE_ROWS, "batch_experts_read", "batch_experts_bound",
                                        keep=_KEEP)
_SECOND_COPIES, _ = first_pass(
    _SHARE_COPIED, "batch_experts_read", "batch_experts_estimate", SECOND, "second",
    "the first estimate", keep=_KEEP)
_LINE_COPIES, _ = first_pass(_SHARE_COPIED, "batch_experts_read", CANDIDATE, LINE, "line's",
                             "the line's batch", keep=_KEEP)
_SECOND_ROWS = _SHARE_COPIED
_BY_FIRST_ESTIMATE, _SERVED_BATCH = served_batch_rows(_SECOND_ROWS[-1])
assert _SECOND_ROWS[-1].name == "batch_per_replica"
_COPIED = {c.name for c in _SHARE_COPIED}

CALCULATIONS: tuple[Calculation, ...] = (
    *_BEFORE_SHARE,
    *_FIRST_ROWS,
    _c("batch_experts_estimate", "Batch the experts are read at, second estimate", "sequences",
       "Throughput",
       IF(_DISAGG, r("batch_experts_bound"),
          MAX(1, MIN(r("batch_experts_bound"), r("batch_per_replica" + FIRST)))),
       "The first estimate of the batch per replica (every limit solved with the experts "
       "read at the largest batch this load may cause), at most that largest batch, at "
       "least 1: the second solve reads the experts at it."),
    *(c for c in _SECOND_COPIES if c.name.endswith(SECOND)),
    *third_solve_rows(lambda b: _busiest(_share_read(b)), _DISAGG, _COPIED, _COPIED),
    *(c for c in _LINE_COPIES if c.name.endswith(LINE)),
    *backoff_rows(_SHARE_COPIED),
    checked_read_row(_DISAGG),
    *_SECOND_ROWS[:-1],
    _BY_FIRST_ESTIMATE,
    _SERVED_BATCH,
    _c("tpot_full_ms", "Time per output token, replica full", "ms", "Throughput",
       (r("step_fixed_ms") + r("step_ms_per_seq") * MAX(1, r("batch_per_replica")))
       * r("spec_tpot_factor"),
       "t(B) at the batch per replica (at least 1), x the speculative TPOT factor: the time "
       "per token its throughput rests on."),
)

# After the load (queueing.LOAD_CALCULATIONS): the step users see at the batch served.
SERVED_STEP_CALCULATIONS: tuple[Calculation, ...] = (
    _c("batch_served", "Batch at the stated load", "sequences", "Throughput",
       MAX(1, IF(gt(r("stream_replicas"), 0),
                 MIN(r("batch_per_replica"), r("users") / r("stream_replicas")),
                 IF(gt(r("target_system_tokens_per_s"), 0), r("batch_per_replica"),
                    MIN(r("concurrent_users"), r("batch_per_replica"))))),
       "The sequences a replica runs at peak: the users present, up to the batch per replica "
       "(a throughput target: the batch per replica; with the streams stated, the streams / "
       "the replicas they need, a mean, up to the batch per replica); at least 1."),
    _c("tpot_ms", "Time per output token", "ms", "Throughput",
       (r("step_fixed_ms") + r("step_ms_per_seq") * r("batch_served")) * r("spec_tpot_factor"),
       "t(B) = a + b x B at the batch served (x the speculative TPOT factor): what users see "
       "at the stated load."),
    _c("memory_bound", "Decode is memory-bound", "flag", "Throughput",
       ge(r("decode_weights_ms") + r("decode_kv_ms_per_seq") * MAX(1, r("batch_per_replica")),
          r("decode_compute_ms_per_seq") * MAX(1, r("batch_per_replica"))),
       "1 when reading weights and KV takes longer than the arithmetic."),
    _c("tokens_per_s_per_user", "Tokens/s per user", "tok/s", "Throughput",
       1000 / r("tpot_ms"), "1000 / TPOT."),
)

# After the waiting time (queueing.WAIT_CALCULATIONS): first token, targets, throughput.
SERVED_CALCULATIONS: tuple[Calculation, ...] = (
    _c("ttft_ms", "Time to first token", "ms", "Throughput",
       IF(_DISAGG, r("disagg_ttft_ms"),
          r("prefill_wait_ms") + r("closed_loop_wait_ms") + r("ttft_unqueued_ms")),
       "Wait for the prompts ahead (arrivals at a rate) or in the closed loop (concurrent "
       "users) + the first token without waiting (docs/queueing.md). Disaggregated: the "
       "prefill replicas' first token."),
    *PERCENTILE_CALCULATIONS,
    _c("slo_met", "Meets latency targets", "flag", "Throughput",
       AND(IF(gt(r("target_tpot_ms"), 0), le(r("tpot_ms"), r("target_tpot_ms")), 1),
           IF(gt(r("target_ttft_ms"), 0), le(r("ttft_ms"), r("target_ttft_ms")), 1),
           r("percentile_slo_met")),
       "1 when TPOT, TTFT and every stated percentile meet their targets."),
    _c("replica_output_tokens_per_s", "Output tokens/s per replica", "tok/s", "Throughput",
       IF(gt(r("measured_tokens_per_s_per_replica"), 0), r("measured_tokens_per_s_per_replica"),
          r("batch_per_replica") * 1000 / r("tpot_full_ms")),
       "B / TPOT with the replica full, or the customer's measured figure (calibrated mode; "
       "“From Users to GPUs”)."),
    _c("modelled_replica_output_tokens_per_s", "Output tokens/s per replica, modelled", "tok/s",
       "Throughput", r("batch_per_replica") * 1000 / r("tpot_full_ms"),
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
)
