"""Queueing (DESIGN §3 "Load and queueing", docs/queueing.md): the wait a request meets at the
load :mod:`.load` turns into a concurrency, and the largest batch each latency target (mean,
percentile, inter-token, whole answer) allows with that wait, in closed form.

The waiting time (``WAIT_CALCULATIONS``) is the part of the first-token time spent queued
behind other prompts: TTFT = wait + prefill + the steps a prompt shares with decode. Its mean
is the Allen-Cunneen (Kingman) single-server form at the replica's prefill utilisation, with
the stated ``burstiness`` as the arrival CV (docs/queueing.md says why these forms).
"""

from __future__ import annotations

import math

from ..expr import AND, IF, LOG, MAX, MIN, POWER, ROUNDDOWN, Expr, gt, le, lt
from .core import Calculation, _c, r
from .inputs import PERCENTILES
from .load import SLOT_FIXED_MS

# decode.py reads these of the load's from here
from .load import SLOT_MS_PER_SEQ as SLOT_MS_PER_SEQ
from .load import concurrency_by_rate as concurrency_by_rate
from .load import slot_fixed_ms as slot_fixed_ms


def slot_wait_ms(concurrency: Expr, batch: Expr, cycle_ms: Expr) -> Expr:
    """The wait for a free batch slot when more requests are present than the engine holds
    (memory or its cap binds): beyond the batch, (C / batch - 1) request cycles (Little's
    law). 0 in the sizing, whose replicas hold every user present; a closed-loop benchmark
    above the engine's batch pays it (benchmarks.py)."""
    return MAX(0, concurrency / MAX(1, batch) - 1) * cycle_ms


def round_wait_ms(concurrency: Expr, batch: Expr, step_ms: Expr, share: Expr) -> Expr:
    """The wait of a prompt in a closed loop without think time (a fixed-concurrency benchmark
    at request rate "inf"): all C users start together and their answers have nearly one
    length, so prompts arrive in rounds. The round's other prompts are admitted one
    chunk-carrying step at a time, so a prompt waits ``share`` x (in flight - 1) steps, less
    the steps its own chunks ride anyway (``ttft_queue_steps`` - 1/2, already in TTFT: no
    double count; this keeps the NIM 5,000-token rows where they were). ``share`` (constant
    ``closed_loop_round_share``) is fitted, cross-validated leaving one source out
    (benchmarks/calibrate.py, docs/queueing.md): 1/2 would be rounds in perfect lock-step
    with one prompt per step."""
    return MAX(0, share * (MIN(concurrency, MAX(1, batch)) - 1)
               - (r("ttft_queue_steps") - 0.5)) * step_ms


def adp_balance_wait_ms(in_flight: Expr, cycle_ms: Expr, step_ms: Expr, ranks: Expr,
                        timeout_steps: Expr) -> Expr:
    """TensorRT-LLM's attention-DP balance (``attention_dp_config.enable_balance``): a new
    prompt's prefill is held until every one of the ``ranks`` attention-DP ranks has one, at
    most ``timeout_steps`` iterations (``timeout_iters``; the iteration counter runs whether
    or not a prompt waits, so a prompt meets it half-way on average). A closed loop's new
    prompt goes to the rank whose request just ended, a random rank, so covering every rank
    takes ranks x H(ranks - 1) arrivals (coupon collecting; H(n) ~ ln n + 0.5772 + 1/(2n) -
    1/(12 n^2)), arriving in_flight per request cycle. The mean wait is half the shorter of
    the two. 0 without attention DP or with the balance off (timeout 0), as in the sizing."""
    n = MAX(1, ranks - 1)
    harmonic = LOG(n, math.e) + 0.5772 + 1 / (2 * n) - 1 / (12 * n * n)
    cover_ms = ranks * harmonic * cycle_ms / MAX(1, in_flight)
    return IF(AND(gt(ranks, 1), gt(timeout_steps, 0)),
              MIN(timeout_steps * step_ms, cover_ms) / 2, 0)


def burst_wait_ms(requests: Expr, batch: Expr, cycle_ms: Expr, prefill_ms: Expr) -> Expr:
    """Mean first-token time of N requests that all arrive at once (a benchmark at request
    rate "inf"): the engine takes the first ``batch`` of them, prefills their prompts one
    after another before decoding (prefill first), and starts the next wave when a wave's
    answers end. Request i (from 0) waits floor(i / B) request cycles for a slot, then
    (i mod B) + 1 prefills. Averaged over N = w B + r (w full waves): slot cycles
    (B w (w - 1) / 2 + r w) / N, prefills (w B (B + 1) / 2 + r (r + 1) / 2) / N. No fitted
    constant; with every request in one wave it is (N + 1) / 2 prefills."""
    b = MAX(1, MIN(batch, requests))
    waves = ROUNDDOWN(requests / b, 0)
    rest = requests - waves * b
    slot_cycles = (b * waves * (waves - 1) / 2 + rest * waves) / requests
    prefills = (waves * b * (b + 1) / 2 + rest * (rest + 1) / 2) / requests
    return slot_cycles * cycle_ms + prefills * prefill_ms


def recv_poll_wait_ms(interval_steps: Expr, step_ms: Expr) -> Expr:
    """SGLang's ``--scheduler-recv-interval N``: the scheduler reads new requests only once
    every N decode steps (a prefill step resets the count), so a prompt arriving at a random
    moment waits N / 2 steps on average before it is even queued. The engine's default is 1
    (every step: no wait, as in the sizing); a benchmark harness may set it (fidelity)."""
    return MAX(0, interval_steps) / 2 * step_ms


def closed_loop_wait_ms(concurrency: Expr, batch: Expr, cycle_ms: Expr, step_ms: Expr,
                        share: Expr) -> Expr:
    """A closed loop's wait beyond the steady-state TTFT: the slot wait above the engine's
    batch or the round wait below it, whichever is longer (above the batch the rounds
    dissolve into the slot queue; adding both double counts: docs/queueing.md)."""
    return MAX(slot_wait_ms(concurrency, batch, cycle_ms),
               round_wait_ms(concurrency, batch, step_ms, share))


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
# A load stated as concurrent users is a closed loop: arrivals paced by the answers, no
# open-arrival wait whatever the burstiness cell says (its wait is closed_loop_wait_ms).
_CLOSED = le(r("peak_request_rate_per_s"), 0)
_ARRIVAL_K = IF(_CLOSED, 0, POWER(r("burstiness"), 2) / 2)  # (CVa^2 + CVs^2) / 2, CVs 0
_s0 = r("request_slot_fixed_ms")
_g = SLOT_MS_PER_SEQ - r("prefill_ms")


def _mean_batch(budget: Expr) -> Expr:
    """The mean's inverse above for a room D = ``budget`` (target - ttft_fixed_ms)."""
    beta = _m * _s0 + _ARRIVAL_K * r("prefill_ms") * r("prefill_ms") - budget * _g
    linear = (budget + r("prefill_ms")) / (_m + r("prefill_ms"))
    return IF(gt(budget, 0),
              MAX(2 * budget * _s0 / (beta + POWER(MAX(0, beta * beta + 4 * _m * _g
                                                        * budget * _s0), 0.5)), linear),
              linear)


# A load stated as concurrent users is a closed loop (docs/queueing.md): its arrivals are
# paced by the answers (burstiness 0, so the Allen-Cunneen wait is 0) and its wait is the
# round wait at the batch B the replica runs (the sizing gives every user a slot, so no slot
# wait): TTFT = c + m B + MAX(0, s (B - 1) - q) x f (a + b B), q = ttft_queue_steps - 1/2,
# f = the speculative TPOT factor. Up to B* = 1 + q / s it is c + m B; beyond, a quadratic
# A B^2 + Bq B - C <= 0 with A = s f b, Bq = m + s f (a - b B*), C = s f a B* + D, whose
# root is written 2 C / (Bq + sqrt(Bq^2 + 4 A C)) (finite when A is 0). Exact:
# tests/test_queueing.py checks it against the forward formula.


def _linear_batch(target_ms: Expr, fixed_ms: Expr, per_seq_ms: Expr) -> Expr:
    """The largest B with fixed + per_seq x B <= target (the engine cap when the step does
    not grow with B and already meets it; 0 when it never does)."""
    return IF(gt(per_seq_ms, 0), (target_ms - fixed_ms) / per_seq_ms,
              IF(le(fixed_ms, target_ms), r("max_batch_per_replica"), 0))


# The time without any wait is fixed + per_seq x B: the first token's (ttft_fixed_ms,
# ttft_ms_per_seq), or the whole answer's for e2e_p95 (+ (output - 1) x TPOT, a + b B too).
_FIRST_TOKEN = (r("ttft_fixed_ms"), _m)


def _closed_loop_batch(target_ms: Expr, line: tuple[Expr, Expr] = _FIRST_TOKEN) -> Expr:
    fixed, per_seq = line
    d = target_ms - fixed
    s = r("closed_loop_round_share")
    sf = s * r("spec_tpot_factor")
    a, b = r("step_fixed_ms"), r("step_ms_per_seq")
    linear = _linear_batch(target_ms, fixed, per_seq)
    knee = r("closed_loop_knee_batch")
    bq = per_seq + sf * (a - b * knee)
    c = sf * a * knee + d
    root = 2 * c / (bq + POWER(bq * bq + 4 * sf * b * c, 0.5))
    return IF(AND(gt(s, 0), gt(d, 0), le(per_seq * knee, d)), root, linear)


# Read after the prefill (decode.py) and before the TTFT batch limit.
TTFT_LIMIT_CALCULATIONS: tuple[Calculation, ...] = (
    _c("request_slot_fixed_ms", "Time a request holds a slot, batch 0", "ms", "Throughput",
       SLOT_FIXED_MS,
       "First token + (output - 1) steps with no other sequence: the part of the slot time "
       "that does not grow with the batch."),
    _c("ttft_fixed_ms", "First token without waiting, batch 0", "ms", "Throughput",
       r("prefill_ms") + r("ttft_overhead_ms")
       + r("ttft_queue_steps") * (r("comm_fixed_ms") + r("step_overhead_ms"))
       + r("scheduler_steps") * r("step_fixed_ms") - r("ttft_own_prefill_ms"),
       "Prefill + overhead + the shared steps' latency + the engine's request-path steps, "
       "less the prompt's own prefill share (the time each sequence adds counts it): TTFT at "
       "batch 1 less one sequence's steps."),
    _c("ttft_ms_per_seq", "First-token time each sequence adds", "ms", "Throughput",
       (r("ttft_queue_steps") + r("scheduler_steps")) * r("step_ms_per_seq")
       - r("ttft_prefill_excess_ms"),
       "Each sequence in the batch lengthens the steps a new prompt shares or waits through, "
       "by at most its own prompt's prefill."),
    _c("closed_loop_knee_batch", "Batch where a closed loop's round wait starts",
       "sequences", "Throughput",
       IF(gt(r("closed_loop_round_share"), 0),
          1 + MAX(0, r("ttft_queue_steps") - 0.5) / r("closed_loop_round_share"), 0),
       "1 + (shared steps - 1/2) / round share: below it a prompt's own chunks cover the "
       "round's others (0 when the share is 0: no round wait)."),
    _c("ttft_budget_ms", "Room the TTFT target leaves", "ms", "Throughput",
       r("target_ttft_ms") - r("ttft_fixed_ms"),
       "Target - TTFT without wait at batch 0: what the batch and the wait may use."),
    _c("batch_by_ttft_exact", "Batch meeting TTFT, unrounded", "sequences", "Throughput",
       IF(_CLOSED, _closed_loop_batch(r("target_ttft_ms")),
          _mean_batch(_budget)),
       "TTFT with its wait solved for B. Arrivals at a rate: the larger of the Allen-Cunneen "
       "root 2 D S0 / (beta + sqrt(beta^2 + 4 m g D S0)) and the (B - 1) x prefill bound "
       "(D + P) / (m + P). Concurrent users (a closed loop): the round wait's quadratic "
       "(docs/queueing.md)."),
)


# Read after the step at the batch served (tpot_ms) and before the first-token time.
WAIT_CALCULATIONS: tuple[Calculation, ...] = (
    _c("ttft_unqueued_ms", "First token without waiting", "ms", "Throughput",
       r("prefill_ms")
       + r("ttft_queue_steps") * (r("tpot_ms") / r("spec_tpot_factor") - r("decode_weights_ms"))
       + r("scheduler_steps") * r("tpot_ms") / r("spec_tpot_factor") + r("ttft_overhead_ms")
       - r("ttft_own_prefill_ms") - r("batch_served") * r("ttft_prefill_excess_ms"),
       "Prefill + the decode steps it waits for or shares (each sequence's prefill share in "
       "them at most one prefill, the prompt's own once); a prefill chunk hides the step's "
       "weight read (its GEMMs read the weights anyway), not the other sequences' work, "
       "all-reduce latency or overhead (chosen by cross-validation on published benchmarks); "
       "+ the whole steps the engine's request path takes (tokeniser, scheduler, "
       "detokeniser; fitted, docs/queueing.md)."),
    _c("request_cycle_ms", "Time a request holds a batch slot", "ms", "Throughput",
       r("ttft_unqueued_ms") + (r("output_tokens") - 1) * r("tpot_ms"),
       "First token without waiting + (output - 1) x TPOT: a prompt waiting for its turn "
       "holds no slot yet."),
    _c("closed_loop_users", "Users on a replica, closed loop", "users", "Throughput",
       IF(_CLOSED, MAX(r("batch_served"), r("fixed_users_per_replica")), 0),
       "Concurrent users are a closed loop: each sends the next request when the previous "
       "answer ends. On one replica: the batch served (the sizing gives every user a slot), "
       "or the users a fixed deployment puts on it; 0 for a load stated as a rate."),
    _c("closed_loop_wait_ms", "Wait in a closed loop", "ms", "Throughput",
       IF(AND(gt(r("closed_loop_users"), 0), le(r("disagg_prefill_gpus"), 0)),
          closed_loop_wait_ms(r("closed_loop_users"), r("batch_per_replica"),
                              r("request_cycle_ms"), r("tpot_ms"),
                              r("closed_loop_round_share")), 0),
       "The longer of the wait for a free slot ((users / batch - 1) request cycles, when "
       "memory or the engine cap holds fewer than the users on the replica) and the round "
       "wait (share x (in flight - 1) steps, less the steps a prompt's own chunks ride: the "
       "users' prompts arrive in rounds); 0 for a rate or a disaggregated option."),
    _c("request_slot_ms", "Time a request holds a slot at this load", "ms", "Throughput",
       r("request_slot_fixed_ms") + SLOT_MS_PER_SEQ * r("batch_served"),
       "First token (without its wait) + (output - 1) steps at the batch served."),
    _c("replica_request_rate_per_s", "Requests a replica starts per second", "requests/s",
       "Throughput", r("batch_served") * 1000 / r("request_slot_ms"),
       "Batch served / slot time: Little's law per replica at this load."),
    _c("prefill_utilisation", "Share of time a replica is prefilling", "fraction",
       "Throughput", r("replica_request_rate_per_s") * r("prefill_ms") / 1000,
       "Requests per second x prefill of one prompt: how busy the prefill work keeps the "
       "replica (the utilisation the queue of prompts sees)."),
    _c("prefill_wait_ms", "Wait for the prompts ahead", "ms", "Throughput",
       IF(_CLOSED, 0,
          IF(lt(r("prefill_utilisation"), 1),
             MIN((r("batch_served") - 1) * r("prefill_ms"),
                 r("prefill_utilisation") / (1 - r("prefill_utilisation"))
                 * _ARRIVAL_K * r("prefill_ms")),
             (r("batch_served") - 1) * r("prefill_ms"))),
       "Allen-Cunneen mean wait for one server: rho / (1 - rho) x (CVa^2 + CVs^2) / 2 x "
       "prefill, arrival CV = burstiness, service CV 0 (prompts of one length; exact for "
       "Poisson arrivals: M/D/1). At most the other requests of the batch, each prefilled "
       "once ahead: (batch - 1) x prefill, also when rho >= 1. 0 for concurrent users (a "
       "closed loop: closed_loop_wait_ms)."),
)


# ---- percentiles (issue #21 item 2; definitions: LATENCY_DEFINITIONS) ----------------------
# The wait's tail is taken as exponential (the M/G/1 waiting time is exponential in heavy
# traffic, Kingman 1962): a prompt waits at all with probability rho, and then W / rho on
# average, so P(wait > t) = rho x exp(-t rho / W) and the p-th percentile of the wait is
# W / rho x ln(rho / (1 - p)) when rho > 1 - p, else 0. With W from Allen-Cunneen, W / rho =
# k P / (1 - rho). No wait exceeds (B - 1) x prefill (the rest of the batch ahead).
_K = _ARRIVAL_K
_rho = r("prefill_utilisation")


def _tail(p: float) -> float:
    """1 - p written as typed (0.05, not 0.050000000000000044 in every formula)."""
    return round(1 - p, 12)


def _wait_percentile(p: float) -> Expr:
    tail = IF(gt(_rho, _tail(p)),
              _K * r("prefill_ms") / (1 - _rho) * LOG(_rho / _tail(p), math.e), 0)
    cap = (r("batch_served") - 1) * r("prefill_ms")
    return IF(_CLOSED, 0, IF(lt(_rho, 1), MIN(cap, tail), cap))


def _busy_at(batch: Expr) -> Expr:
    """rho(B) = B P / (S0 + K B) = P / (S0 / B + K), B written once (a short cell); a batch
    of 0 or less reads as 1e-9 sequences, a utilisation of ~0."""
    return r("prefill_ms") / (r("request_slot_fixed_ms") / MAX(1e-9, batch)
                              + r("request_slot_ms_per_seq"))


def _tangent_batch(target_ms: Expr, p: float, rho0: Expr,
                   line: tuple[Expr, Expr] = _FIRST_TOKEN) -> Expr:
    """The largest B whose p-th percentile TTFT meets ``target_ms`` with ln(rho / (1 - p))
    replaced by its tangent at ``rho0`` (>= 1 - p): ln is concave, so the tangent lies above
    it and the batch is never too large; at rho0 = rho(B) it is exact. The wait bound
    k P (alpha + rho / rho0) / (1 - rho), alpha = ln(rho0 / (1 - p)) - 1, with rho(B) written
    out is a quadratic, (D - m B)(S0 + g B) >= k P (alpha (S0 + K B) + P B / rho0), solved in
    the stable form of the mean's; at most the batch with no wait at all (D / m), as the
    tail's max(0, ln) is not below 0."""
    fixed, m = line
    d = target_ms - fixed
    s0, kk, pf = r("request_slot_fixed_ms"), r("request_slot_ms_per_seq"), r("prefill_ms")
    kp, g = r("prefill_wait_scale_ms"), kk - pf
    alpha = LOG(rho0 / _tail(p), math.e) - 1
    e = (d - kp * alpha) * s0
    beta = m * s0 + kp * alpha * kk + kp * pf / rho0 - d * g
    root = 2 * e / (beta + POWER(MAX(0, POWER(beta, 2) + 4 * m * g * e), 0.5))
    return IF(gt(e, 0), MIN(_linear_batch(target_ms, fixed, m), root), 0)


def _busy_start(target_ms: Expr, p: float, line: tuple[Expr, Expr] = _FIRST_TOKEN) -> Expr:
    """A utilisation at or above the answer's: the wait alone, k P ln(rho / (1 - p)) at
    least, must fit the room D, so rho <= (1 - p) e^(D / k P); and B <= D / m. The tangent
    there leaves room (e > 0), and each solve from below climbs to the answer."""
    d = target_ms - line[0]
    kp = r("prefill_wait_scale_ms")
    by_wait = IF(gt(kp, 0), _tail(p) * POWER(math.e, MIN(50, MAX(0, d) / kp)), 1)
    return MAX(_tail(p), MIN(1, by_wait, _busy_at(_linear_batch(target_ms, *line))))


def _ttft_target_ms(q: int) -> Expr:
    return r(f"target_ttft_p{q}_s") * 1000


# The whole answer without waiting: the first token + (output - 1) x TPOT, TPOT = spec x
# (a + b B), so again fixed + per_seq x B; its p95 adds the first token's p95 wait.
_WHOLE_ANSWER = (r("ttft_fixed_ms")
                 + (r("output_tokens") - 1) * r("spec_tpot_factor") * r("step_fixed_ms"),
                 _m + (r("output_tokens") - 1) * r("spec_tpot_factor") * r("step_ms_per_seq"))
# Each percentile target the batch is solved for: (row prefix, target ms, p, line).
_TARGETS: tuple[tuple[str, Expr, float, tuple[Expr, Expr]], ...] = (
    *((f"ttft_p{q}", _ttft_target_ms(q), q / 100, _FIRST_TOKEN) for q in PERCENTILES),
    ("e2e_p95", r("target_e2e_p95_s") * 1000, 0.95, _WHOLE_ANSWER),
)


def _busy_step(target_ms: Expr, p: float, line: tuple[Expr, Expr], rho0: Expr) -> Expr:
    return MAX(_tail(p), MIN(1, _busy_at(_tangent_batch(target_ms, p, rho0, line))))


def _batch_meeting(name: str, target_ms: Expr, p: float, line: tuple[Expr, Expr]) -> Expr:
    """The largest batch whose p-th percentile (``name``) meets its target: the third
    tangent solve (from ``{name}_busy_2``) or the (B - 1) P cap, whichever allows more. A
    p50 also takes the mean's batch at its value: the median of an exponential-tailed wait,
    W / rho x ln(2 rho), is at most its mean W (ln(2 x) <= x), so a p50 target never needs
    more than a mean one; a p90, p95 or p99 first-token target allows at most the mean's
    batch. tests/test_queueing_percentiles.py checks it against the forward percentile."""
    fixed, m = line
    linear = (target_ms - fixed + r("prefill_ms")) / (m + r("prefill_ms"))
    best = MAX(linear, _tangent_batch(target_ms, p, r(f"{name}_busy_2"), line))
    if p == 0.5:
        best = MAX(best, _mean_batch(target_ms - fixed))
    elif name.startswith("ttft"):
        # a tail target is never looser than the mean at the same value: below about 1 - p
        # busy the modelled p-th wait is 0 and under the mean wait, but the model's
        # percentile carries only the wait's spread, not the prompts' or the steps', which
        # put any measured p90 first token above its mean (issue 21's ordering property)
        best = MIN(best, _mean_batch(target_ms - fixed))
    # a closed loop's percentiles are its mean (no arrival randomness): exact, as the mean
    return IF(_CLOSED, _closed_loop_batch(target_ms, line), best)


def _itl_batch(q: int) -> Expr:
    """The largest batch whose p-th percentile inter-token latency (``itl_p{q}_ms``) meets the
    target, in closed form and exact: the forward ITL is a chunk-carrying step when more than
    1 - p of steps carry a chunk, else a plain decode step, and all three pieces are
    monotone in B. A plain step is spec x (a + (b - pps) B) (linear); a chunk step adds
    ppt x MIN(prompt, chunk) and is at least the mean step spec x (a + b B) (chunk_step_ms:
    a second line, so its batch is the smaller of two); the share of chunk steps,
    n x B x spec x (a + b B) / (S0 + K B), stays within s = 1 - p below the root
    2 s S0 / (beta + sqrt(beta^2 + 4 n spec b s S0)), beta = n spec a - s K. So ITL <= T
    exactly when B is at most the chunk step's batch, or at most both the plain step's batch
    and the share's root (the larger of the two)."""
    target = r(f"target_itl_p{q}_ms")
    spec = r("spec_tpot_factor")
    fixed = spec * r("step_fixed_ms")
    per_seq = spec * (r("step_ms_per_seq") - r("prefill_ms_per_seq_step"))
    chunk = r("prefill_ms_per_token") * MIN(r("prefill_tokens"), r("prefill_chunk_tokens"))
    n = MAX(1, r("prefill_tokens") / r("prefill_chunk_tokens"))
    s = _tail(q / 100)  # the forward's own threshold (itl_p{q}_ms), the same float
    s0, kk = r("request_slot_fixed_ms"), r("request_slot_ms_per_seq")
    beta = n * fixed - s * kk
    root = 2 * s * s0 / (beta + POWER(POWER(beta, 2) + 4 * n * spec * r("step_ms_per_seq") * s
                                      * s0, 0.5))
    by_chunk_step = MIN(_linear_batch(target - chunk, fixed, per_seq),
                        _linear_batch(target, fixed, spec * r("step_ms_per_seq")))
    return MAX(by_chunk_step, MIN(_linear_batch(target, fixed, per_seq), root))


# Read before batch_by_ttft: the batch each stated TTFT percentile allows.
PERCENTILE_LIMIT_CALCULATIONS: tuple[Calculation, ...] = (
    _c("request_slot_ms_per_seq", "Slot time each sequence adds", "ms", "Throughput",
       SLOT_MS_PER_SEQ,
       "(First token's shared steps + output - 1) x b, less the prefill share beyond one "
       "prefill: the slot time grows by this per sequence in the batch."),
    _c("prefill_wait_scale_ms", "Wait scale of the prompt queue", "ms", "Throughput",
       _K * r("prefill_ms"),
       "(CVa^2 + CVs^2) / 2 x prefill (CVs 0): Allen-Cunneen's wait is this x rho / (1 - rho)."),
    *(_c(f"{name}_busy_{n}", f"Prefill busy share near the {label} batch, estimate {n}",
         "fraction", "Throughput",
         _busy_start(target, p, line) if n == 0
         else _busy_step(target, p, line, r(f"{name}_busy_{n - 1}")),
         "At most the utilisation the target allows: the wait alone, k P ln(rho / (1 - p)), "
         "fits the room, and the batch no more than with no wait (queueing.py)." if n == 0 else
         "The prefill utilisation at the batch the tangent of ln(rho / (1 - p)) at the "
         "previous estimate allows: each estimate is closer to the answer's, from below.")
      for name, target, p, line in _TARGETS for n in (0, 1, 2)
      for label in [f"p{name[6:]} TTFT" if name.startswith("ttft") else "p95 whole-answer"]),
    *(_c(f"batch_by_ttft_p{q}", f"Largest batch meeting the p{q} TTFT", "sequences",
         "Throughput",
         IF(gt(r(f"target_ttft_p{q}_s"), 0),
            ROUNDDOWN(_batch_meeting(f"ttft_p{q}", _ttft_target_ms(q), q / 100, _FIRST_TOKEN),
                      0),
            r("max_batch_per_replica")),
         f"The p{q} wait W / rho x ln(rho / (1 - p)) with ln replaced by its tangent at the "
         f"second estimate's utilisation (above ln: never too large a batch, and within a "
         f"hundredth of a sequence of the exact one), or the (B - 1) x prefill bound, solved "
         f"for B in closed form"
         + (", and at least the mean's batch at this value (a median wait is at most its "
            "mean)" if q == 50 else ", and at most the mean's batch at this value (a tail "
            "target is never looser than the mean)")
         + f"; the engine cap when no p{q} target is stated.")
      for q in PERCENTILES),
    _c("batch_by_e2e_p95", "Largest batch meeting the p95 whole-answer time", "sequences",
       "Throughput",
       IF(gt(r("target_e2e_p95_s"), 0),
          IF(gt(r("disagg_prefill_gpus"), 0), r("disagg_batch_by_e2e_p95"),
             ROUNDDOWN(_batch_meeting("e2e_p95", r("target_e2e_p95_s") * 1000, 0.95,
                                      _WHOLE_ANSWER), 0)),
          r("max_batch_per_replica")),
       "The p95 first token + (output - 1) steps, solved for B like the p95 TTFT (the steps "
       "are a + b x B too); disaggregated: the decode pool's (disagg_batch_by_e2e_p95); the "
       "engine cap when no whole-answer target is stated."),
    *(_c(f"batch_by_itl_p{q}", f"Largest batch meeting the p{q} ITL", "sequences", "Throughput",
         IF(gt(r(f"target_itl_p{q}_ms"), 0), ROUNDDOWN(_itl_batch(q), 0),
            r("max_batch_per_replica")),
         f"The p{q} inter-token latency solved for B (exact): a step carrying a prefill chunk "
         f"meets the target, or a plain decode step does while at most {100 - q} % of steps "
         f"carry a chunk (queueing.py); the engine cap when no p{q} target is stated.")
      for q in PERCENTILES),
    _c("batch_by_itl", "Largest batch meeting the ITL targets", "sequences", "Throughput",
       MIN(*(r(f"batch_by_itl_p{q}") for q in PERCENTILES)),
       "The strictest of the inter-token latency percentile batches."),
)

# An xPyD option's first token queues in its prefill pool, not on this (decode) replica:
# its percentiles are that pool's (disagg.py, read before this list) + the unqueued first token.
_XPYD = gt(r("disagg_prefill_gpus"), 0)

PERCENTILE_CALCULATIONS: tuple[Calculation, ...] = (
    _c("prefill_wait_p95_ms", "Wait 1 request in 20 exceeds", "ms", "Throughput",
       IF(_XPYD, r("disagg_prefill_wait_p95_ms"), _wait_percentile(0.95)),
       "The p95 of the wait for the prompts ahead (exponential tail, at most (B - 1) x "
       "prefill; disaggregated: the prefill pool's queue): the proposal's \"1 request in 20 "
       "waits more than ...\"."),
    *(_c(f"ttft_p{q}_ms", f"Time to first token, p{q}", "ms", "Throughput",
         IF(_XPYD,
            r("disagg_ttft_without_wait_ms")
            + (r("prefill_wait_p95_ms") if q == 95 else r(f"disagg_prefill_wait_p{q}_ms")),
            r("ttft_ms") - r("prefill_wait_ms")
            + (r("prefill_wait_p95_ms") if q == 95 else _wait_percentile(q / 100))),
         f"TTFT without its wait + the wait {q} % of requests stay within (exponential tail: "
         f"W / rho x ln(rho / (1 - p)), at most (B - 1) x prefill; disaggregated: the prefill "
         f"pool's queue and first token).")
      for q in PERCENTILES),
    _c("decode_only_step_ms", "Step without a prefill chunk", "ms", "Throughput",
       r("tpot_ms") - r("prefill_ms_per_seq_step") * r("batch_served") * r("spec_tpot_factor"),
       "t(B) without the amortised prefill share, both x the speculative TPOT factor as in "
       "TPOT: the step most tokens see."),
    _c("chunk_step_ms", "Step carrying a prefill chunk", "ms", "Throughput",
       MAX(r("decode_only_step_ms")
           + r("prefill_ms_per_token") * MIN(r("prefill_tokens"), r("prefill_chunk_tokens")),
           r("tpot_ms")),
       "A decode step that also prefills one chunk of a new prompt, and never less than the "
       "mean step (TPOT): the mean averages these steps with plain ones, so when the prompts "
       "bring more than one chunk per step, a step carries the mean prefill per step."),
    _c("chunk_step_share", "Share of steps carrying a prefill chunk", "fraction", "Throughput",
       MIN(1, r("replica_request_rate_per_s") * r("tpot_ms") / 1000
           * MAX(1, r("prefill_tokens") / r("prefill_chunk_tokens"))),
       "Prompts started per step x chunks per prompt: the share of output tokens that wait "
       "for a chunk."),
    *(_c(f"itl_p{q}_ms", f"Inter-token latency, p{q}", "ms", "Throughput",
         IF(_XPYD, r("tpot_ms"),
            IF(gt(r("chunk_step_share"), _tail(q / 100)), r("chunk_step_ms"),
               r("decode_only_step_ms"))),
         f"The step {q} % of tokens stay within: a chunk-carrying step when more than "
         f"{100 - q} % of steps carry one, else a plain decode step; disaggregated: the "
         f"decode pool's TPOT (no prompt shares its steps).")
      for q in PERCENTILES),
    _c("e2e_p95_ms", "Whole answer, p95", "ms", "Throughput",
       r("ttft_p95_ms") + (r("output_tokens") - 1) * r("tpot_ms"),
       "p95 first token + (output - 1) mean steps: over hundreds of tokens the steps "
       "average out, the first token's wait does not."),
    _c("percentile_slo_met", "Meets latency percentile targets", "flag", "Throughput",
       AND(*(IF(gt(r(f"target_ttft_p{q}_s"), 0), le(r(f"ttft_p{q}_ms"), _ttft_target_ms(q)), 1)
             for q in PERCENTILES),
           *(IF(gt(r(f"target_itl_p{q}_ms"), 0), le(r(f"itl_p{q}_ms"), r(f"target_itl_p{q}_ms")),
                1) for q in PERCENTILES),
           IF(gt(r("target_e2e_p95_s"), 0), le(r("e2e_p95_ms"), r("target_e2e_p95_s") * 1000),
              1)),
       "1 when every stated percentile target holds."),
)
