"""Memory of one replica (seed 002): weights (MoE: every expert; attention data-parallel:
a copy of the non-expert weights per rank), KV cache per token and per request by layer kind
(full attention grows with the context, sliding-window layers stop at their window,
linear-attention layers hold a fixed state, a sparse-attention indexer adds its keys), the KV
budget left after weights, and how many requests fit in it at full reserved context.
"""

from __future__ import annotations

from ..expr import IF, MIN, ROUNDDOWN, eq, gt, lookup, lt
from .core import Calculation, _c, _gpus, r

CALCULATIONS: tuple[Calculation, ...] = (
    _c("routed_expert_params", "Parameters in routed experts", "params", "KV",
       IF(gt(r("experts"), r("experts_per_token")), (r("params_total") - r("params_active"))
          / (1 - r("experts_per_token") / r("experts")), 0),
       "From total = shared + experts and active = shared + experts x k/E."),
    _c("shared_params", "Parameters outside routed experts", "params", "KV",
       r("params_total") - r("routed_expert_params"),
       "Attention, shared experts, dense layers and embeddings (dense model: all)."),
    _c("params_kept_16bit", "Parameters kept at 16 bits", "params", "KV",
       IF(eq(lookup("precisions", "weight_precision", "compute_code"), 4),
          r("fp4_16bit_params"),
          IF(lt(lookup("precisions", "weight_precision", "bytes_per_param"), 2),
             r("quantised_16bit_params"), 0)),
       "The parameters the quantised checkpoint leaves in BF16: FP4 its exclude list "
       "(attention, router, embeddings, lm_head), FP8/INT8/INT4 the embeddings, lm_head, norms "
       "and routers (DeepSeek-R1 FP8: 1.96 B); 0 at 16 bits."),
    _c("shared_kept_16bit", "Non-expert parameters kept at 16 bits", "params", "KV",
       MIN(r("params_kept_16bit"), r("shared_params")),
       "The 16-bit part, at most the non-expert parameters (gpt-oss: its active count leaves "
       "the input embedding out, so the rest sits in the routed share)."),
    _c("shared_weights_gb", "Non-expert weights (one copy)", "GB", "KV",
       ((r("shared_params") - r("shared_kept_16bit")) * r("weight_bytes_per_param")
        + r("shared_kept_16bit") * 2) / 1e9,
       "Quantised part x bytes per weight + the part kept at 16 bits x 2 bytes."),
    _c("expert_weights_gb", "Routed-expert weights", "GB", "KV",
       r("routed_expert_params") * r("weight_bytes_per_param") / 1e9,
       "Routed-expert parameters x bytes per weight (0 for a dense model)."),
    _c("unstreamed_16bit_gb", "16-bit weights no step streams", "GB", "KV",
       (r("params_kept_16bit") - r("shared_kept_16bit"))
       * (2 - r("weight_bytes_per_param")) / 1e9,
       "The 16-bit part beyond the non-expert parameters x the bytes it adds: held in memory, "
       "never read whole (gpt-oss's embedding table, a lookup)."),
    _c("weights_gb", "Weights", "GB", "KV",
       r("expert_weights_gb") + r("shared_weights_gb") * r("adp") + r("unstreamed_16bit_gb"),
       "Every expert + the non-expert weights + the unstreamed 16-bit rest; the whole model "
       "sits in memory; with attention data-parallel each rank holds its own copy of the "
       "non-expert weights."),
    _c("full_attention_layers", "Layers that keep every token", "layers", "KV",
       r("layers") - r("window_layers") - r("linear_attention_layers"),
       "All layers but the sliding-window and linear-attention ones (config.json layer_types)."),
    _c("kv_bytes_per_layer_token", "KV cache per token per layer", "B", "KV",
       IF(gt(r("mla_kv_dim"), 0), r("mla_kv_dim") * r("kv_bytes_per_element"),
          2 * r("kv_heads") * r("head_dim") * r("kv_bytes_per_element")),
       "2 x KV heads x head dim x bytes (K and V; GQA counts KV heads; “The KV cache is "
       "your real budget”); MLA: latent width x bytes."),
    _c("indexer_bytes_per_layer_token", "Sparse-attention indexer key per token per layer",
       "B", "KV",
       r("indexer_head_dim") + r("indexer_head_dim") / 128 * 4,
       "DeepSeek Sparse Attention keeps the lightning indexer's key of every token beside "
       "the MLA cache, in FP8 whatever the KV precision: key width x 1 byte + a 4-byte scale "
       "per 128 values (128 + 4 = 132 B in vLLM's and SGLang's indexer caches); 0 for dense "
       "attention."),
    _c("indexer_bytes_per_token", "Sparse-attention indexer keys per token", "B", "KV",
       r("full_attention_layers") * r("indexer_bytes_per_layer_token"),
       "Layers x indexer key per token per layer: kept for every token of context, as the "
       "indexer scores them all."),
    _c("kv_bytes_per_token", "KV cache per token", "B", "KV",
       r("full_attention_layers") * r("kv_bytes_per_layer_token") + r("indexer_bytes_per_token"),
       "Full-attention layers x KV per token per layer (+ the sparse-attention indexer's keys): "
       "what grows with every token of context."),
    _c("window_kv_bytes_per_token", "KV per token of the sliding-window layers", "B", "KV",
       r("window_layers") * r("kv_bytes_per_layer_token"),
       "Sliding-window layers x KV per token per layer: held only for the last window tokens "
       "(gpt-oss 128, Gemma 2 4,096, Gemma 3 1,024)."),
    _c("linear_state_bytes", "Linear-attention state per request", "B", "KV",
       r("linear_attention_layers") * r("linear_state_elements") * 2,
       "Linear-attention layers x state values x 2 bytes: a fixed state whatever the context "
       "(kept in BF16, not at the KV cache's precision)."),
    _c("kv_replication", "KV copies across the TP group", "x", "KV",
       IF(gt(r("mla_kv_dim"), 0), r("attention_tp"),
          r("attention_tp") / MIN(r("attention_tp"), r("kv_heads"))),
       "TP splits KV heads; when TP > KV heads (or MLA) each GPU keeps a copy. With attention "
       "data-parallel only the rank's TP / ADP GPUs hold a sequence's KV."),
    _c("kv_gb_per_request", "KV cache per request", "GB", "KV",
       (r("kv_bytes_per_token") * r("context_tokens")
        + r("window_kv_bytes_per_token")
        * IF(gt(r("window_kv_cut"), 0), MIN(r("context_tokens"), r("sliding_window")),
             r("context_tokens"))
        + r("linear_state_bytes")) * r("kv_replication") / 1e9,
       "(KV per token x reserved context + window layers' KV x the window, or x the context "
       "where the engine keeps it whole + linear state), all TP copies included."),
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
)
