"""Load (DESIGN §3 "Load and queueing", docs/queueing.md): how a stated load becomes the
concurrency the sizing needs, and the time a request holds a batch slot.

A workload states its load one of three ways: concurrent users, a peak arrival rate
(requests/s) or a user population (users x requests per user-hour x peak-to-average). A rate
becomes a concurrency by Little's law, L = lambda x W, where W is the time a request holds a
batch slot: its first token plus (output - 1) steps. W itself grows with the batch the load
causes (t(B) = a + b x B), so L appears on both sides; the closed form below solves it for
one replica and bounds it by the time at a full replica, so the workbook has no circular
reference and the concurrency is never under-stated.

The waiting time and the latency percentiles that follow from this load are in
:mod:`.queueing`.
"""

from __future__ import annotations

from ..expr import IF, MAX, MIN, ROUNDUP, Expr, gt
from .core import Calculation, _c, r

# The time a request holds a batch slot at batch B is SLOT_FIXED_MS + SLOT_MS_PER_SEQ x B:
# ttft_ms + (output - 1) x tpot_ms with both written out as a + b x B (decode.py). The
# benchmark figures (benchmarks.py) solve the same relation for an offered rate.
# The engine's request path (``scheduler_steps`` whole steps before the first token, decode.py
# ``ttft_ms``) is a + b x B per step too. Under speculation each output token takes
# spec_tpot_factor of a step (tpot_ms): counted as a whole step, a request held its slot as
# long as without speculation, and the concurrency a rate causes hardly fell.
# Each sequence brings at most one prefill to a first token's steps (ttft_prefill_excess_ms):
# the slot time each sequence adds is SLOT_STEPS x b less that excess (0 for most answers).
_OUTPUT_STEPS = (r("output_tokens") - 1) * r("spec_tpot_factor")
SLOT_STEPS = r("ttft_queue_steps") + r("scheduler_steps") + _OUTPUT_STEPS
SLOT_MS_PER_SEQ = SLOT_STEPS * r("step_ms_per_seq") - r("ttft_prefill_excess_ms")


def slot_fixed_ms(prefill_ms: Expr, step_fixed_ms: Expr) -> Expr:
    """The slot time at batch 0 for a prompt's prefill and a step's fixed part: written once
    for the step served (SLOT_FIXED_MS) and the slower one at the largest batch (decode.py
    ``concurrency_bound``)."""
    return (prefill_ms + r("ttft_overhead_ms")
            + r("ttft_queue_steps") * (r("comm_fixed_ms") + r("step_overhead_ms"))
            + (r("scheduler_steps") + _OUTPUT_STEPS) * step_fixed_ms - r("ttft_own_prefill_ms"))


SLOT_FIXED_MS = slot_fixed_ms(r("prefill_ms"), r("step_fixed_ms"))

# Read before the step time: the rate depends on inputs alone.
RATE_CALCULATIONS: tuple[Calculation, ...] = (
    _c("peak_request_rate_per_s", "Peak arrival rate", "requests/s", "Throughput",
       IF(gt(r("requests_per_s"), 0), r("requests_per_s"),
          r("named_users") * r("requests_per_user_per_hour") * r("peak_to_average") / 3600),
       "The stated rate; or a user population: users x requests per user-hour x "
       "peak-to-average / 3600; 0 when the load is stated as concurrent users. (A file "
       "states one form; the rate is read first so a what-if can set it.)"),
)

_rate_ms = r("peak_request_rate_per_s") / 1000
_solo_denominator = 1 - _rate_ms * SLOT_MS_PER_SEQ


def concurrency_by_rate(slot_fixed: Expr, slot_full: Expr) -> Expr:
    """Little's law under the arrival rate, rounded up: the smaller of rate x the slot time
    with the replica full (``slot_full``) and the one-replica solution rate x c0 / (1 - rate
    x steps x b) (c0 = ``slot_fixed``). Both grow with the step time, so at a slower step
    (decode.py ``concurrency_bound``) it is at or above the concurrency served."""
    return ROUNDUP(IF(gt(_solo_denominator, 0),
                      MIN(_rate_ms * slot_full, _rate_ms * slot_fixed / _solo_denominator),
                      _rate_ms * slot_full), 0)

# Read after the full replica's step time and before the batch served.
LOAD_CALCULATIONS: tuple[Calculation, ...] = (
    _c("request_slot_full_ms", "Time a request holds a slot, replica full", "ms", "Throughput",
       SLOT_FIXED_MS + SLOT_MS_PER_SEQ * MAX(1, r("batch_per_replica")),
       "First token + (output - 1) steps at the batch per replica: the longest a request "
       "holds its slot on a replica sized for this load (t(B) grows with B)."),
    _c("concurrent_users", "Concurrent users at peak", "users", "Throughput",
       IF(gt(r("peak_request_rate_per_s"), 0),
          concurrency_by_rate(SLOT_FIXED_MS, r("request_slot_full_ms")), r("users")),
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
