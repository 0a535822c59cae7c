"""Disaggregated prefill/decode (xPyD): x prefill replicas feed y decode replicas; a prompt's
KV cache moves once from the prefill pool to the decode pool.

The decode pool's step is the list's own t(B) without the amortised prefill share (no prompt
shares its steps); the prefill pool's time per prompt token is the list's own prefill term
evaluated with the prefill pool's layout. What only a disaggregated deployment needs is
here, as figures over those calculations and the counts a deployment states (``*_given``):
``llmsizer fidelity`` reproduces the published disaggregated benchmarks with them
(docs/calibration.md), and sizing/xpyd.py sizes an xPyD option to a load with them (each
pool's count, the prefill queue's wait). They are not printed into the workbook.
"""

from __future__ import annotations

from ..expr import IF, MAX, MIN, POWER, ROUNDDOWN, ROUNDUP, gt, lt
from .benchmarks import Figure
from .core import _gpus, r

_occupied = MAX(1, r("batch_per_replica"))
# a decode-pool step: t(B) without the amortised prefill (prompts run in the prefill pool)
_decode_tpot = r("tpot_ms") - r("prefill_ms_per_seq_step") * _occupied * r("spec_tpot_factor")

# the prefill pool's request rate shared by the decode replicas, per ms
_rate_ms = r("prefill_rate_given") / r("decode_replicas_given") / 1000

DISAGG_FIGURES: tuple[Figure, ...] = (
    Figure("disagg_pool_gpus", "GPUs", r("replicas_given") * r("tp_given") * r("pp_given"),
           "GPUs of one pool: its replicas x TP x pipeline stages."),
    Figure("disagg_decode_tpot_ms", "ms", _decode_tpot,
           "Decode pool: t(B) at the batch served without the prefill share (x the speculative "
           "TPOT factor): no prompt interrupts its steps."),
    Figure("disagg_kv_transfer_ms", "ms",
           IF(gt(r("transfer_gb_s_given"), 0),
              r("kv_bytes_per_token") * r("prompt_tokens")
              / (r("prefill_gpus_given") * r("transfer_gb_s_given")
                 * r("transfer_efficiency_given") * 1e9) * 1000, 0),
           "The prompt's KV cache (KV per token x prompt) moves once, each prefill GPU sending "
           "its share over its own link: inside an NVLink domain the scale-up link, across "
           "nodes the network (0 when the platform states neither)."),
    Figure("disagg_ttft_ms", "ms",
           r("prefill_wait_ms_given") + r("prefill_ms_given") * r("prefill_time_factor_given")
           + r("kv_transfer_ms_given") + r("ttft_overhead_ms"),
           "The wait in the prefill pool's queue + prefill of the prompt on a prefill replica "
           "(x the disaggregated prefill factor) + the cache's move + the fitted request "
           "overhead. A closed loop's prompts arrive paced by the answers (arrival CV 0), so "
           "the prefill queue's Allen-Cunneen wait is 0 below saturation (queueing.py); at "
           "saturation the prefill pool's capacity caps the request rate instead. An open "
           "load waits disagg_prefill_wait_ms."),
    Figure("disagg_prefill_requests_per_s", "requests/s",
           r("prefill_replicas_given") * 1000
           / (r("prefill_ms_per_token_given") * r("prefill_time_factor_given")
              * r("prefill_tokens")),
           "Prompts the prefill pool completes per second with its batches full: replicas x "
           "1000 / (ms per prompt token x the disaggregated prefill factor x prompt tokens to "
           "prefill)."),
    Figure("disagg_decode_requests_per_s", "requests/s",
           r("decode_replicas_given") * MIN(r("concurrency_given"), _occupied) * 1000
           / (r("ttft_given") + (r("output_tokens") - 1) * r("tpot_given")),
           "Requests the decode pool completes per second in a closed loop of C users per "
           "decode replica: each user's cycle is TTFT + (output - 1) x TPOT."),
    Figure("disagg_rate_batch_per_replica", "sequences",
           IF(gt(1 - _rate_ms * (r("output_tokens") - 1) * r("spec_tpot_factor")
                 * (r("step_ms_per_seq") - r("prefill_ms_per_seq_step")), 0),
              MIN(r("concurrency_given"),
                  _rate_ms * (r("output_tokens") - 1) * r("spec_tpot_factor")
                  * r("step_fixed_ms")
                  / (1 - _rate_ms * (r("output_tokens") - 1)
                     * r("spec_tpot_factor")
                     * (r("step_ms_per_seq") - r("prefill_ms_per_seq_step")))),
              r("concurrency_given")),
           "When the prefill pool caps the rate (L per decode replica), the decode batch is what "
           "that rate keeps in flight: B = L x (output - 1) x t(B), t linear in B, solved for B "
           "(Little's law, closed form), at most the users."),
    # --- sizing an xPyD option (sizing/xpyd.py): the load's rate, then each pool's count ---
    Figure("disagg_request_rate_per_s", "requests/s",
           IF(gt(r("peak_request_rate_per_s"), 0), r("peak_request_rate_per_s"),
              r("concurrent_users") * 1000
              / (r("ttft_given") + (r("output_tokens") - 1) * r("tpot_given"))),
           "The load's requests/s: the stated peak rate, or each concurrent user starting one "
           "request per cycle of TTFT + (output - 1) x TPOT (Little's law)."),
    Figure("disagg_prefill_replicas_for_load", "replicas",
           MAX(ROUNDUP(r("request_rate_given") * (1 + r("headroom"))
                       / r("prefill_replica_rate_given"), 0),
               ROUNDDOWN(r("request_rate_given") / r("prefill_replica_rate_given"), 0) + 1),
           "Prefill replicas whose prompt rate covers the load with the headroom: ROUNDUP(rate x "
           "(1 + headroom) / prompts one prefill replica completes per second), and more than "
           "the rate alone needs (a queue at full utilisation never drains)."),
    Figure("disagg_prefill_replicas", "replicas",
           r("prefill_replicas_given")
           + IF(gt(r("survive_node_loss"), 0),
                MIN(MAX(1, ROUNDDOWN(r("gpus_per_node") / r("prefill_gpus_given"), 0)),
                    r("prefill_replicas_given")), 0),
           "The load's prefill replicas + N+1 spares: as many as one node holds (at most the "
           "load's), as for an aggregated pool."),
    Figure("disagg_prefill_utilisation", "fraction",
           r("request_rate_given")
           / (r("prefill_replicas_given") * r("prefill_replica_rate_given")),
           "Share of time the prefill replicas are busy at the load's rate."),
    Figure("disagg_prefill_wait_ms", "ms",
           IF(lt(r("utilisation_given"), 1),
              r("utilisation_given") / (1 - r("utilisation_given"))
              * POWER(r("burstiness"), 2) / 2 * 1000 / r("prefill_replica_rate_given"), 0),
           "Allen-Cunneen mean wait for a prefill replica, as for an aggregated replica "
           "(queueing.py): rho / (1 - rho) x burstiness^2 / 2 x the time one prompt takes "
           "(service CV 0). rho < 1 by the prefill count."),
    Figure("disagg_output_tokens_per_s_per_node", "tok/s",
           r("replica_output_tokens_per_s") * r("gpus_per_node") / _gpus,
           "A decode replica's output tokens/s per node it spans."),
    Figure("disagg_gpus", "GPUs",
           r("prefill_replicas_given") * r("prefill_gpus_given")
           + r("decode_replicas_given") * r("decode_gpus_given"),
           "x prefill replicas x their GPUs + y decode replicas x theirs."),
    Figure("disagg_nodes", "nodes",
           ROUNDUP((r("prefill_replicas_given") * r("prefill_gpus_given")
                    + r("decode_replicas_given") * r("decode_gpus_given")) / r("gpus_per_node"), 0),
           "ROUNDUP(both pools' GPUs / GPUs per node): a node's GPUs may serve either pool "
           "(an NVL72 rack holds prefill and decode replicas side by side)."),
    Figure("disagg_reported_output_tokens_per_s", "tok/s",
           r("output_tokens_per_s_given") * r("row_gpus_given") / r("decode_gpus_given"),
           "A per-GPU figure of a disaggregated run as InferenceX reports it: output tokens/s "
           "over the decode GPUs only (SemiAnalysisAI/InferenceX utils/process_result.py), "
           "which the reader multiplies by all the row's GPUs."),
    Figure("disagg_output_tokens_per_s", "tok/s",
           MIN(r("decode_rate_given"), r("prefill_rate_given")) * r("output_tokens"),
           "Requests/s the slower pool allows x output tokens: prefill and decode rates must "
           "match, the deployment runs at the smaller."),
)
