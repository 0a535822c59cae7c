"""Disaggregated prefill/decode (xPyD): x prefill replicas feed y decode replicas; a prompt's
KV cache moves once from the prefill pool to the decode pool.

The decode pool's step is the list's own t(B) without the amortised prefill share (no prompt
shares its steps); the prefill pool's time per prompt token is the list's own prefill term
evaluated with the prefill pool's layout. What only a disaggregated deployment needs is
here, as figures over those calculations and the counts a deployment states (``*_given``):
``llmsizer fidelity`` reproduces the published disaggregated benchmarks with them
(docs/calibration.md). They are not printed into the workbook.
"""

from __future__ import annotations

from ..expr import IF, MAX, MIN, gt
from .benchmarks import Figure
from .core import r

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
           r("prefill_ms_given") * r("prefill_time_factor_given")
           + r("kv_transfer_ms_given") + r("ttft_overhead_ms"),
           "Prefill of the prompt on a prefill replica (x the disaggregated prefill factor) + "
           "the cache's move + the fitted request "
           "overhead. A closed loop's prompts arrive paced by the answers (arrival CV 0), so "
           "the prefill queue's Allen-Cunneen wait is 0 below saturation (queueing.py); at "
           "saturation the prefill pool's capacity caps the request rate instead."),
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
