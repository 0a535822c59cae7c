"""Disaggregated prefill/decode (xPyD): x prefill replicas feed y decode replicas; a prompt's
KV cache moves once from the prefill pool to the decode pool.

The decode pool's step is the list's own t(B) without the amortised prefill share (no prompt
shares its steps); the prefill pool's time per prompt token is the list's own prefill term
evaluated with the prefill pool's layout. What only a disaggregated deployment needs is
here, as figures over those calculations and the counts a deployment states (``*_given``):
``llmsizer fidelity`` reproduces the published disaggregated benchmarks with them
(docs/calibration.md). They are not printed into the workbook.

``XPYD_CALCULATIONS`` are in the calculation list (and the workbook): an option whose
``disagg_prefill_gpus`` is stated is an xPyD option. Its own layout is the decode pool (no
prompt to prefill, no first-token limit on its batch; a whole-answer target limits it:
``XPYD_BATCH_CALCULATIONS``); the prefill pool's count, queue and the first token are
computed here from the prefill layout's time per prompt token (sizing/xpyd.py evaluates
that layout and states it as the option's inputs).
"""

from __future__ import annotations

import math

from ..expr import AND, IF, LOG, MAX, MIN, POWER, ROUNDDOWN, ROUNDUP, Expr, gt, le, lt
from .benchmarks import Figure
from .core import Calculation, _c, r
from .inputs import PERCENTILES
from .queueing import _linear_batch, _tail

_occupied = MAX(1, r("batch_per_replica"))
# a decode-pool step: t(B) without the amortised prefill (prompts run in the prefill pool)
_decode_tpot = r("tpot_ms") - r("prefill_ms_per_seq_step") * _occupied * r("spec_tpot_factor")

# the closed loop's decode batch: k B^2 b + (T + k a - k b C) B - k a C = 0, with
# k = (output - 1) x the speculative TPOT factor, b the decode pool's step per sequence
_kd = (r("output_tokens") - 1) * r("spec_tpot_factor")
_b = r("step_ms_per_seq") - r("prefill_ms_per_seq_step")
_p = r("ttft_given") + _kd * r("step_fixed_ms") - _kd * _b * r("concurrency_given")

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
           r("prefill_wait_ms_given") + r("prefill_ms_given")
           + r("kv_transfer_ms_given") + r("ttft_overhead_ms")
           + r("scheduler_steps") * _decode_tpot / r("spec_tpot_factor"),
           "The wait in the prefill pool's queue + prefill of the prompt on a prefill replica "
           "+ the cache's move + the fitted request overhead + the engine's request path "
           "(scheduler_steps whole decode steps, as for an aggregated server: "
           "docs/queueing.md). A closed loop's prompts arrive paced by the answers (arrival CV 0), so "
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
    Figure("disagg_closed_loop_batch_per_replica", "sequences",
           MIN(r("concurrency_given"),
               (POWER(_p * _p + 4 * _kd * _kd * r("step_fixed_ms") * _b * r("concurrency_given"),
                      0.5) - _p) / (2 * _kd * _b)),
           "A closed loop of C users per decode replica: a user waiting for its first token "
           "holds no decode slot, so the batch is C x D / (TTFT + D), D = (output - 1) x "
           "t(B) the time it decodes (Little's law); t(B) = a + b x B makes it a quadratic "
           "in B, solved in closed form."),
    Figure("disagg_decode_batch_limit_per_replica", "sequences",
           r("max_batch_size_given") * r("adp"),
           "A decode replica's engine batch limit: the worker's max_batch_size, which "
           "TensorRT-LLM counts per attention data-parallel rank, x its ranks. Users beyond "
           "it wait for a decode slot (InferenceX runs about 1.2 x the limit's users)."),
    Figure("disagg_decode_requests_per_s", "requests/s",
           r("decode_replicas_given") * IF(gt(r("batch_per_replica"), 0), r("batch_per_replica"), 1)
           * 1000 / ((r("output_tokens") - 1) * r("tpot_given")),
           "Requests the decode pool completes per second: its sequences in flight / the time "
           "each decodes, (output - 1) x TPOT (Little's law); one sequence where the memory "
           "rule leaves no room, as the step time assumes."),
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


XPYD = gt(r("disagg_prefill_gpus"), 0)  # an xPyD option: this layout is the decode pool
_prompt = MAX(1, r("prompt_tokens") * (1 - r("prefix_cache_hit")))
_rate = r("disagg_request_rate_per_s")
_per = r("disagg_prefill_replica_rate_per_s")
# concurrent users are a closed loop (burstiness 0 on a replica, queueing.py), but the
# prefill pool merges the prompts of every decode replica's users: many independent paced
# streams, which superpose to Poisson arrivals (Palm-Khintchine), CV 1
_k = IF(gt(r("peak_request_rate_per_s"), 0), POWER(r("burstiness"), 2) / 2, 0.5)
_service_ms = 1000 / _per
_budget = r("target_ttft_ms") - r("disagg_ttft_without_wait_ms")
_u = r("disagg_prefill_utilisation")
_ks = _k * _service_ms  # the wait's scale: Allen-Cunneen's wait is this x rho / (1 - rho)


def _load_count(rate: Expr) -> Expr:
    """The fewest prefill replicas for ``rate`` and the headroom: rate x (1 + headroom) / a
    replica's rate, and more than the rate alone needs (a queue at full use never drains)."""
    return MAX(ROUNDUP(rate * (1 + r("headroom")) / _per, 0), ROUNDDOWN(rate / _per, 0) + 1)


def _count_at(busy: Expr) -> Expr:
    """The fewest prefill replicas that keep each one at most ``busy`` (a share of time)."""
    return ROUNDUP(_rate / (_per * busy), 0)


def _mean_count(room: Expr) -> Expr:
    """The fewest replicas whose mean wait, rho / (1 - rho) x k S, fits ``room``: rho <=
    D / (D + k S), so n = rate (D + k S) / (D x a replica's rate), rounded up."""
    return ROUNDUP(_rate * (room + _ks) / (room * _per), 0)


# The prefill pool's tail, the aggregated replica's form (queueing.py, "percentiles"): a
# prompt waits with probability rho, then k S / (1 - rho) on average, so the p-th
# percentile wait is k S / (1 - rho) x ln(rho / (1 - p)) when rho > 1 - p, else 0.
def _wait_tail(p: float, u: Expr = _u) -> Expr:
    return IF(AND(gt(u, _tail(p)), lt(u, 1)), _ks / (1 - u) * LOG(u / _tail(p), math.e), 0)


def _tangent_busy(room: Expr, p: float, rho0: Expr) -> Expr:
    """The largest busy share whose p-th percentile wait fits ``room`` with ln(rho / (1 - p))
    replaced by its tangent at ``rho0``: ln is concave, so the tangent lies above it and the
    share is never too large (queueing._tangent_batch): k S (alpha + rho / rho0) <= D (1 -
    rho), alpha = ln(rho0 / (1 - p)) - 1, so rho <= (D - k S alpha) / (D + k S / rho0); at
    least 1 - p, below which no prompt's p-th wait is above 0."""
    alpha = LOG(rho0 / _tail(p), math.e) - 1
    return MAX(_tail(p), (room - _ks * alpha) / (room + _ks / rho0))


def _busy_start(room: Expr, p: float) -> Expr:
    """A share at or above the answer's: the wait alone, k S ln(rho / (1 - p)) at least, must
    fit the room, so rho <= (1 - p) e^(D / k S), and rho < 1."""
    return MAX(_tail(p), MIN(1, _tail(p) * POWER(math.e, MIN(50, MAX(0, room) / _ks))))


# Each stated percentile target the prefill pool is counted for: (name, target ms, p, the
# time it bounds without the prefill wait). The whole answer adds (output - 1) x TPOT.
_TAIL_TARGETS: tuple[tuple[str, Expr, float, Expr], ...] = (
    *((f"ttft_p{q}", r(f"target_ttft_p{q}_s") * 1000, q / 100,
       r("disagg_ttft_without_wait_ms")) for q in PERCENTILES),
    ("e2e_p95", r("target_e2e_p95_s") * 1000, 0.95,
     r("disagg_ttft_without_wait_ms") + (r("output_tokens") - 1) * r("tpot_ms")),
)


def _tail_applies(target: Expr, unwaited: Expr) -> Expr:
    return AND(XPYD, gt(target, 0), gt(target - unwaited, 0), gt(_k, 0))


def _tail_count(name: str, target: Expr, p: float, unwaited: Expr) -> Expr:
    """The fewest prefill replicas whose p-th percentile wait fits the room the target
    leaves: the third tangent (at the second estimate, ``disagg_{name}_prefill_busy_2``; two
    were up to 8 replicas over the fewest from a start at rho 1) solved for the share, and
    n = rate / (a replica's rate x that share) rounded up. A first-token tail target also
    takes at least the mean's count at its value (a tail target is never looser than the
    mean, as for an aggregated replica: queueing._batch_meeting)."""
    room = target - unwaited
    count = _count_at(_tangent_busy(room, p, r(f"disagg_{name}_prefill_busy_2")))
    if name.startswith("ttft") and p > 0.5:
        count = MAX(count, _mean_count(room))
    return IF(_tail_applies(target, unwaited), count, 0)


# The whole answer of an xPyD request without its wait is a line in the decode batch B:
# prefill + the cache's move + overhead + (scheduler_steps + (output - 1) x the speculative
# TPOT factor) steps of a + b x B (disagg_ttft_without_wait_ms + (output - 1) x tpot_ms
# written out), so the batch meeting a whole-answer target is queueing._linear_batch's.
_ANSWER_STEPS = r("scheduler_steps") + (r("output_tokens") - 1) * r("spec_tpot_factor")
_ANSWER_LINE = (r("disagg_prefill_ms") + r("disagg_kv_move_ms") + r("ttft_overhead_ms")
                + _ANSWER_STEPS * r("step_fixed_ms"), _ANSWER_STEPS * r("step_ms_per_seq"))
_E2E_MS = r("target_e2e_p95_s") * 1000
_E2E = AND(XPYD, gt(_E2E_MS, 0))

# The whole-answer target is split between the prefill queue's p95 wait and the decode
# steps: a busier prefill pool (fewer prefill GPUs) leaves the decode batch less time (more
# decode GPUs). The split is the cheapest of these busy shares (at most 1 / (1 + headroom)),
# in GPUs per request/s, which do not depend on the rate: the decode batch is then the same
# at every load and both pools grow with it. (Reserving the wait at the share of the count
# the rate needs, as before, swung with that count's rounding: a stated rate just under a
# whole number of replicas left the queue nearly full, its wait took the target and the
# decode pool grew up to 19x for 1 % more load; concurrent users without headroom reserved
# no wait and left the prefill pool only the batch's rounding, up to 20x its count.)
_E2E_SHARES = (0.95, 0.9, 0.8, 0.7, 0.5, 0.05)  # 0.05: the p95 wait is 0 (queueing.py)


def _e2e_share(share: float) -> Expr:
    return MIN(share, 1 / (1 + r("headroom")))


def _e2e_batch(wait: Expr) -> Expr:
    """The largest decode batch whose whole answer meets the target with ``wait`` in the
    prefill queue: the line solved for B, rounded down."""
    return ROUNDDOWN(_linear_batch(_E2E_MS - wait, *_ANSWER_LINE), 0)


def _e2e_split_gpus(share: float) -> Expr:
    """GPUs per request/s at that split: prefill GPUs / (a replica's rate x the share) +
    decode GPUs x (output - 1) x TPOT at the batch / the batch (Little's law), the batch
    capped as the option's is (memory, tokens/s, engine); none where it is under one."""
    busy = _e2e_share(share)
    batch = MIN(_e2e_batch(_wait_tail(0.95, busy)), r("max_sequences_by_memory"),
                r("batch_by_tpot"), r("max_batch_per_replica"))
    return IF(gt(batch, 0.999),
              r("disagg_prefill_gpus") / (_per * busy)
              + r("gpus_per_replica") * (r("output_tokens") - 1) * r("spec_tpot_factor")
              * (r("step_fixed_ms") / MAX(1, batch) + r("step_ms_per_seq")) / 1000,
              1e12)


def _cheapest_share() -> Expr:
    """The share whose split costs least (the busier on a tie)."""
    least = MIN(*(r(f"disagg_e2e_split_gpus_{round(s * 100)}") for s in _E2E_SHARES))
    out: Expr = _e2e_share(_E2E_SHARES[-1])
    for s in reversed(_E2E_SHARES[:-1]):
        out = IF(le(r(f"disagg_e2e_split_gpus_{round(s * 100)}"), least), _e2e_share(s), out)
    return out


# Read before the batch limits (decode.py): what a prompt costs the prefill pool, and the
# decode batch a whole-answer target allows. The decode batch leaves the prefill queue the
# p95 wait at the split's share and takes the rest of the target.
XPYD_BATCH_CALCULATIONS: tuple[Calculation, ...] = (
    _c("disagg_prefill_replica_rate_per_s", "Prompts a prefill replica completes per second",
       "requests/s", "Throughput",
       IF(XPYD, 1000 / (r("disagg_prefill_ms_per_token") * r("disagg_prefill_time_factor")
                        * _prompt), 0),
       "Disaggregated: 1000 / (prefill time per prompt token of the prefill layout x the "
       "disaggregated prefill factor x prompt tokens to prefill); 0 otherwise."),
    _c("disagg_kv_move_ms", "Move of a prompt's KV cache to the decode pool", "ms",
       "Throughput",
       IF(AND(XPYD, gt(r("disagg_kv_link_gb_s"), 0)),
          r("kv_bytes_per_token") * r("prompt_tokens")
          / (r("disagg_prefill_gpus") * r("disagg_kv_link_gb_s")
             * r("disagg_kv_link_efficiency") * 1e9) * 1000, 0),
       "KV per token x prompt, each prefill GPU sending its share over its own link (the "
       "scale-up link inside one NVLink domain, else the network)."),
    *(_c(f"disagg_e2e_split_gpus_{round(s * 100)}",
         f"GPUs per request/s with the prefill pool {round(s * 100)} % busy", "GPUs",
         "Throughput", IF(_E2E, _e2e_split_gpus(s), 0),
         f"With a p95 whole-answer target, the prefill queue at {round(s * 100)} % busy (at "
         f"most 1 / (1 + headroom)): prefill GPUs per replica / (a replica's rate x that "
         f"share) + decode GPUs per replica x (output - 1) x TPOT / the decode batch that "
         f"the rest of the target allows (capped by memory, tokens/s and the engine); "
         f"10^12 where not even one sequence fits; 0 without that target.")
      for s in _E2E_SHARES),
    _c("disagg_e2e_prefill_busy", "Prefill busy share the whole-answer batch allows for",
       "fraction", "Throughput", IF(_E2E, _cheapest_share(), 0),
       "With a p95 whole-answer target: of the shares above, the one whose GPUs per "
       "request/s are fewest (the busier on a tie); it does not depend on the rate, so the "
       "decode batch is the same at every load; 0 otherwise."),
    _c("disagg_e2e_prefill_wait_p95_ms", "Prefill p95 wait the whole-answer batch allows for",
       "ms", "Throughput", IF(_E2E, _wait_tail(0.95, r("disagg_e2e_prefill_busy")), 0),
       "The prefill queue's p95 wait at that share (the exponential tail of the pool's "
       "reported p95 wait); the prefill count then meets what the answer leaves (the "
       "whole-answer tail count), at most the share's count (+1 for the tangent solve)."),
    _c("disagg_batch_by_e2e_p95", "Largest decode batch meeting the p95 whole answer",
       "sequences", "Throughput",
       IF(_E2E, _e2e_batch(r("disagg_e2e_prefill_wait_p95_ms")), r("max_batch_per_replica")),
       "Disaggregated: the largest B whose whole answer, prefill + the cache's move + "
       "overhead + that p95 wait + (the engine's request-path steps + (output - 1) x the "
       "speculative TPOT factor) x t(B), meets the target; t(B) = a + b x B, so B = "
       "(target - wait - fixed) / per sequence, rounded down (0 or less: even one sequence "
       "misses it); the engine cap without that target."),
)


# Read after the step at the batch served (tpot_ms), before the first-token time.
XPYD_CALCULATIONS: tuple[Calculation, ...] = (
    _c("disagg_ttft_without_wait_ms", "First token without waiting, disaggregated", "ms",
       "Throughput",
       IF(XPYD, r("disagg_prefill_ms") + r("disagg_kv_move_ms") + r("ttft_overhead_ms")
          + r("scheduler_steps") * r("tpot_ms") / r("spec_tpot_factor"), 0),
       "Prefill of the prompt on a prefill replica (the list's own time: the factor is the "
       "pool's rate, not a prompt's) + the cache's move + the fitted request overhead + the "
       "engine's request path, scheduler_steps decode steps as for an aggregated server."),
    _c("disagg_request_rate_per_s", "Requests per second at peak, disaggregated",
       "requests/s", "Throughput",
       IF(XPYD, IF(gt(r("peak_request_rate_per_s"), 0), r("peak_request_rate_per_s"),
                   r("concurrent_users") * 1000
                   / (r("disagg_ttft_without_wait_ms")
                      + (r("output_tokens") - 1) * r("tpot_ms"))), 0),
       "The stated peak rate, or each concurrent user starting one request per cycle of "
       "first token + (output - 1) x TPOT (Little's law; the first token without its wait: "
       "the highest rate)."),
    *(_c(f"disagg_{name}_prefill_busy_{n}",
         f"Prefill busy share the {label} target allows, estimate {n}", "fraction",
         "Throughput",
         IF(_tail_applies(target, unwaited),
            _tangent_busy(target - unwaited, p,
                          _busy_start(target - unwaited, p) if n == 1
                          else r(f"disagg_{name}_prefill_busy_1")), 0),
         ("The tangent of ln(rho / (1 - p)) at a share above the answer's ((1 - p) x "
          "e^(room / k x one prompt's time), at most 1) solved for rho: at most the share at "
          "which the p-th percentile wait fits the room the target leaves; 0 without that "
          "target." if n == 1 else
          "The tangent at the first estimate solved for rho: closer to the answer, from "
          "below (never too large a share)."))
      for name, target, p, unwaited in _TAIL_TARGETS for n in (1, 2)
      for label in [f"p{name[6:]} first-token" if name.startswith("ttft")
                    else "p95 whole-answer"]),
    _c("disagg_prefill_replicas_for_load", "Prefill replicas for peak + headroom",
       "replicas", "Throughput",
       IF(XPYD, MAX(_load_count(_rate),
                    IF(AND(gt(r("target_ttft_ms"), 0), gt(_budget, 0), gt(_k, 0)),
                       _mean_count(_budget), 0),
                    *(_tail_count(*t) for t in _TAIL_TARGETS)), 0),
       "The most of: the rate x (1 + headroom) / a replica's prompt rate; more than the rate "
       "alone needs (a queue at full use never drains); the count whose mean queue wait "
       "leaves the first-token target met (rho / (1 - rho) x k x one prompt's time <= the "
       "room the target leaves, solved for the count); and for each stated percentile "
       "target (first token, whole answer) the count whose p-th percentile wait, k x one "
       "prompt's time / (1 - rho) x ln(rho / (1 - p)), fits its room: the tangent of ln at "
       "the second estimate solved for rho (never too large), at least the mean's count for a "
       "p90, p95 or p99 first token (docs/queueing.md)."),
    _c("disagg_prefill_utilisation", "Share of time the prefill replicas are busy",
       "fraction", "Throughput",
       IF(XPYD, _rate / (r("disagg_prefill_replicas_for_load") * _per), 0),
       "Rate / (prefill replicas x a replica's prompt rate)."),
    _c("disagg_prefill_wait_ms", "Wait in the prefill queue", "ms", "Throughput",
       IF(AND(XPYD, lt(_u, 1)), _u / (1 - _u) * _k * _service_ms, 0),
       "Allen-Cunneen mean wait as for an aggregated replica (queueing.py): rho / (1 - rho) "
       "x burstiness^2 / 2 x one prompt's time (service CV 0)."),
    *(_c(f"disagg_prefill_wait_p{q}_ms", f"Wait in the prefill queue, p{q}", "ms",
         "Throughput", IF(XPYD, _wait_tail(q / 100), 0),
         f"The wait {q} % of prompts stay within (exponential tail, as for an aggregated "
         f"replica): k x one prompt's time / (1 - rho) x ln(rho / (1 - p)) when rho > 1 - p, "
         f"else 0.")
      for q in PERCENTILES),
    _c("disagg_ttft_ms", "Time to first token, disaggregated", "ms", "Throughput",
       r("disagg_prefill_wait_ms") + r("disagg_ttft_without_wait_ms"),
       "Wait in the prefill queue + prefill + the cache's move + overhead."),
)

# Read before the replicas (replicas.py): the prefill pool's GPUs join the option's.
XPYD_NODE_CALCULATIONS: tuple[Calculation, ...] = (
    _c("disagg_prefill_spare_replicas", "Spare prefill replicas (N+1)", "replicas", "Nodes",
       IF(AND(XPYD, gt(r("survive_node_loss"), 0)),
          MIN(MAX(1, ROUNDDOWN(r("gpus_per_node") / MAX(1, r("disagg_prefill_gpus")), 0)),
              r("disagg_prefill_replicas_for_load")), 0),
       "As many prefill replicas as one node holds (at most the load's), as for the decode "
       "replicas."),
    _c("disagg_prefill_gpus_for_load", "Prefill GPUs for peak + headroom", "GPUs", "Nodes",
       r("disagg_prefill_replicas_for_load") * r("disagg_prefill_gpus"),
       "Prefill replicas for the load x GPUs per prefill replica (0 when not disaggregated)."),
    _c("disagg_prefill_pool_gpus", "Prefill GPUs", "GPUs", "Nodes",
       (r("disagg_prefill_replicas_for_load") + r("disagg_prefill_spare_replicas"))
       * r("disagg_prefill_gpus"),
       "All prefill replicas, spares included, x GPUs per prefill replica."),
)
