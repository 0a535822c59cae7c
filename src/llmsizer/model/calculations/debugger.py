"""The production debugger's figures, made specific to one sized option (the source article
"GenAI Physics, Capacity Planning, and Throughput Estimation", its Production Debugger).

They sit beside the list, like :data:`.replicas.GROUP_OUTPUT_TOKENS_PER_S`: evaluated by
:mod:`llmsizer.sizing.debugger` on an option's calculated values, shown in the web app and the
proposal's risks, and not printed in the workbook (they restate the workbook's figures at
the edges of the plan, they do not size anything).
"""

from __future__ import annotations

from ..expr import IF, MAX, MIN, ROUNDDOWN, ROUNDUP, gt, ref

# The article's thresholds: "Low GPU Utilization (<40%)" and "High TTFT (>2 seconds)".
LOW_UTILISATION = 0.4
TTFT_WHEN_NO_TARGET_S = 2.0

# Out of memory: the reserved context per request at which the KV budget holds only the
# planned batch (beyond it the engine preempts or refuses requests); the sliding-window
# layers' full window and the linear-attention state come off first, as they stop growing.
DEBUG_OOM_CONTEXT_TOKENS = IF(
    gt(ref("kv_bytes_per_token"), 0),
    MAX(0, ROUNDDOWN((ref("kv_budget_gb") * 1e9
                      / (MAX(1, ref("batch_per_replica")) * ref("kv_replication"))
                      - ref("window_kv_bytes_per_token") * ref("sliding_window")
                      - ref("linear_state_bytes")) / ref("kv_bytes_per_token"), 0)),
    0)

# First token too slow: the concurrent users all replicas carry while each replica's batch
# still meets the first-token target (batch_by_ttft); and the users whose KV cache fills the
# replicas' memory (beyond it requests queue or are preempted, whatever the first token).
DEBUG_TTFT_LIMIT_USERS = MAX(0, ref("batch_by_ttft")) * ref("replicas")
DEBUG_MEMORY_LIMIT_USERS = ref("max_sequences_by_memory") * ref("replicas")

# Low utilisation: throughput at batch B is B / (a + b B) (t(B) = a + b B, decode.py); the
# batch below which a replica delivers under LOW_UTILISATION of its throughput at the
# largest batch memory and the engine allow (batch_upper_bound), solved for B.
DEBUG_LOW_UTILISATION_BATCH = IF(
    gt(ref("batch_upper_bound"), 0),
    ROUNDUP(LOW_UTILISATION * ref("step_fixed_ms") * ref("batch_upper_bound")
            / (ref("step_fixed_ms")
               + (1 - LOW_UTILISATION) * ref("step_ms_per_seq") * ref("batch_upper_bound")), 0),
    0)

# The roofline of one decode step (the article's "dynamic Roofline plotting"), per replica at
# its batch: FLOPs over bytes read, and the FLOP/s achieved per GPU at the modelled step
# time. The ceilings are the GPU's peak_tflops and gpu_bandwidth_tb_s (their ratio is
# ridge_point_flop_per_byte).
_FLOP_PER_SEQ = (2 * ref("params_active") * IF(gt(ref("experts"), 0), ref("moe_compute_factor"), 1)
                 + ref("expert_slot_flops"))
ROOFLINE_INTENSITY = (
    MAX(1, ref("batch_per_replica")) * _FLOP_PER_SEQ
    / (ref("weights_read_gb") * 1e9
       + MAX(1, ref("batch_per_replica")) * ref("kv_replication")
       * ref("decode_kv_bytes_per_seq")))
ROOFLINE_ACHIEVED_TFLOPS = (MAX(1, ref("batch_per_replica")) * _FLOP_PER_SEQ
                            / (ref("tpot_full_ms") / 1000) / ref("gpus_per_replica") / 1e12)
# The roof at an arithmetic intensity ``roofline_x`` (FLOP/B): the lower of the compute and
# the bandwidth ceiling, per GPU.
ROOFLINE_CEILING_TFLOPS = MIN(ref("peak_tflops"), ref("gpu_bandwidth_tb_s") * ref("roofline_x"))
