"""Load and queueing (DESIGN §3 "Load and queueing", docs/queueing.md): how a stated load
becomes the concurrency the sizing needs.

A workload states its load one of three ways: concurrent users, a peak arrival rate
(requests/s) or a user population (users x requests per user-hour x peak-to-average). A rate
becomes a concurrency by Little's law, L = lambda x W, where W is the time a request holds a
batch slot: its first token plus (output - 1) steps. W itself grows with the batch the load
causes (t(B) = a + b x B), so L appears on both sides; the closed form below solves it for
one replica and bounds it by the time at a full replica, so the workbook has no circular
reference and the concurrency is never under-stated.

The waiting time (``WAIT_CALCULATIONS``) is the part of the first-token time spent queued
behind other prompts: TTFT = wait + prefill + the steps a prompt shares with decode. Its mean
is the Allen-Cunneen (Kingman) single-server form at the replica's prefill utilisation, with
the stated ``burstiness`` as the arrival CV (docs/queueing.md says why these forms).
"""

from __future__ import annotations

from ..expr import IF, MAX, MIN, POWER, ROUNDUP, Expr, gt, lt
from .core import Calculation, _c, r

# The time a request holds a batch slot at batch B is SLOT_FIXED_MS + SLOT_STEPS x b x B:
# ttft_ms + (output - 1) x tpot_ms with both written out as a + b x B (decode.py). The
# benchmark figures (benchmarks.py) solve the same relation for an offered rate.
SLOT_STEPS = r("ttft_queue_steps") + r("output_tokens") - 1
SLOT_FIXED_MS = (r("prefill_ms") + r("ttft_overhead_ms")
                 + r("ttft_queue_steps") * (r("comm_fixed_ms") + r("step_overhead_ms"))
                 + (r("output_tokens") - 1) * r("step_fixed_ms"))

# Read before the step time: the rate depends on inputs alone.
RATE_CALCULATIONS: tuple[Calculation, ...] = (
    _c("peak_request_rate_per_s", "Peak arrival rate", "requests/s", "Throughput",
       IF(gt(r("named_users"), 0),
          r("named_users") * r("requests_per_user_per_hour") * r("peak_to_average") / 3600,
          r("requests_per_s")),
       "A user population: users x requests per user-hour x peak-to-average / 3600; or the "
       "stated rate; 0 when the load is stated as concurrent users."),
)

_rate_ms = r("peak_request_rate_per_s") / 1000
_solo_denominator = 1 - _rate_ms * SLOT_STEPS * r("step_ms_per_seq")

# Read after the full replica's step time and before the batch served.
LOAD_CALCULATIONS: tuple[Calculation, ...] = (
    _c("request_slot_full_ms", "Time a request holds a slot, replica full", "ms", "Throughput",
       SLOT_FIXED_MS + SLOT_STEPS * r("step_ms_per_seq") * MAX(1, r("batch_per_replica")),
       "First token + (output - 1) steps at the batch per replica: the longest a request "
       "holds its slot on a replica sized for this load (t(B) grows with B)."),
    _c("concurrent_users", "Concurrent users at peak", "users", "Throughput",
       IF(gt(r("peak_request_rate_per_s"), 0),
          ROUNDUP(IF(gt(_solo_denominator, 0),
                     MIN(_rate_ms * r("request_slot_full_ms"),
                         _rate_ms * SLOT_FIXED_MS / _solo_denominator),
                     _rate_ms * r("request_slot_full_ms")), 0),
          r("users")),
       "Stated, or from the arrival rate by Little's law L = rate x W, W = the time a request "
       "holds a slot at the batch the load causes (a + b x B, so L = rate x c0 / (1 - rate x "
       "steps x b) on one replica), at most rate x the slot time with the replica full; "
       "rounded up. Both are at or above the true concurrency: conservative, and no "
       "circular reference."),
    _c("request_time_at_load_s", "Time a request lasts at this load", "s", "Throughput",
       IF(gt(r("peak_request_rate_per_s"), 0),
          r("concurrent_users") / r("peak_request_rate_per_s"), 0),
       "Concurrent users / arrival rate: Little's law read backwards (0 when the load is "
       "stated as concurrent users)."),
)


def slot_wait_ms(concurrency: Expr, batch: Expr, cycle_ms: Expr) -> Expr:
    """The wait for a free batch slot when more requests are present than the engine holds
    (memory or its cap binds): beyond the batch, (C / batch - 1) request cycles (Little's
    law). 0 in the sizing, whose replicas hold every user present; a closed-loop benchmark
    above the engine's batch pays it (benchmarks.py)."""
    return MAX(0, concurrency / MAX(1, batch) - 1) * cycle_ms


# The largest batch whose mean first-token time, wait included, meets the target: the
# forward formula (ttft_ms with prefill_wait_ms) solved for B in closed form. Wait-free TTFT
# is c + m x B; the wait is the smaller of two terms, so meeting the target with either is
# enough and the batch is the larger of the two solutions:
# - the (B - 1) x prefill bound: c + m B + (B - 1) P <= T, B = (D + P) / (m + P), D = T - c;
# - Allen-Cunneen with rho(B) = B P / (S0 + K B) (S0 + K B = the slot time at B):
#   c + m B + k P^2 B / (S0 + g B) <= T, g = K - P, k = CV^2 / 2, a quadratic with one root
#   below saturation, written 2 D S0 / (beta + sqrt(beta^2 + 4 m g D S0)), beta = m S0 +
#   k P^2 - D g, which stays finite when m or g is 0.
# Exact, not a bound: tests/test_queueing.py checks it against the forward formula.
_budget = r("ttft_budget_ms")
_m = r("ttft_ms_per_seq")
_s0 = r("request_slot_fixed_ms")
_g = SLOT_STEPS * r("step_ms_per_seq") - r("prefill_ms")
_beta = (_m * _s0 + POWER(r("burstiness"), 2) / 2 * r("prefill_ms") * r("prefill_ms")
         - _budget * _g)
_linear = (_budget + r("prefill_ms")) / (_m + r("prefill_ms"))

# Read after the prefill (decode.py) and before the TTFT batch limit.
TTFT_LIMIT_CALCULATIONS: tuple[Calculation, ...] = (
    _c("request_slot_fixed_ms", "Time a request holds a slot, batch 0", "ms", "Throughput",
       SLOT_FIXED_MS,
       "First token + (output - 1) steps with no other sequence: the part of the slot time "
       "that does not grow with the batch."),
    _c("ttft_fixed_ms", "First token without waiting, batch 0", "ms", "Throughput",
       r("prefill_ms") + r("ttft_overhead_ms")
       + r("ttft_queue_steps") * (r("comm_fixed_ms") + r("step_overhead_ms")),
       "Prefill + overhead + the shared steps' latency: TTFT without wait at batch 0."),
    _c("ttft_ms_per_seq", "First-token time each sequence adds", "ms", "Throughput",
       r("ttft_queue_steps") * r("step_ms_per_seq"),
       "Each sequence in the batch lengthens the steps a new prompt shares."),
    _c("ttft_budget_ms", "Room the TTFT target leaves", "ms", "Throughput",
       r("target_ttft_ms") - r("ttft_fixed_ms"),
       "Target - TTFT without wait at batch 0: what the batch and the wait may use."),
    _c("batch_by_ttft_exact", "Batch meeting TTFT, unrounded", "sequences", "Throughput",
       IF(gt(_budget, 0),
          MAX(2 * _budget * _s0 / (_beta + POWER(MAX(0, _beta * _beta + 4 * _m * _g * _budget
                                                          * _s0), 0.5)), _linear),
          _linear),
       "TTFT with its wait solved for B: the larger of the Allen-Cunneen root "
       "2 D S0 / (beta + sqrt(beta^2 + 4 m g D S0)) and the (B - 1) x prefill bound "
       "(D + P) / (m + P) (docs/queueing.md)."),
)


# Read after the step at the batch served (tpot_ms) and before the first-token time.
WAIT_CALCULATIONS: tuple[Calculation, ...] = (
    _c("request_slot_ms", "Time a request holds a slot at this load", "ms", "Throughput",
       r("request_slot_fixed_ms") + SLOT_STEPS * r("step_ms_per_seq") * r("batch_served"),
       "First token (without its wait) + (output - 1) steps at the batch served."),
    _c("replica_request_rate_per_s", "Requests a replica starts per second", "requests/s",
       "Throughput", r("batch_served") * 1000 / r("request_slot_ms"),
       "Batch served / slot time: Little's law per replica at this load."),
    _c("prefill_utilisation", "Share of time a replica is prefilling", "fraction",
       "Throughput", r("replica_request_rate_per_s") * r("prefill_ms") / 1000,
       "Requests per second x prefill of one prompt: how busy the prefill work keeps the "
       "replica (the utilisation the queue of prompts sees)."),
    _c("prefill_wait_ms", "Wait for the prompts ahead", "ms", "Throughput",
       IF(lt(r("prefill_utilisation"), 1),
          MIN((r("batch_served") - 1) * r("prefill_ms"),
              r("prefill_utilisation") / (1 - r("prefill_utilisation"))
              * POWER(r("burstiness"), 2) / 2 * r("prefill_ms")),
          (r("batch_served") - 1) * r("prefill_ms")),
       "Allen-Cunneen mean wait for one server: rho / (1 - rho) x (CVa^2 + CVs^2) / 2 x "
       "prefill, arrival CV = burstiness, service CV 0 (prompts of one length; exact for "
       "Poisson arrivals: M/D/1). At most the other requests of the batch, each prefilled "
       "once ahead: (batch - 1) x prefill, also when rho >= 1."),
)
