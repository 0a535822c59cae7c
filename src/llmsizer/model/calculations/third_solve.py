"""The third solve of a mixture of experts' batch: the batch where the line through the first-
token limit at the two solves meets the batch, found by a fixed number of bisection rows
(docs/queueing.md, "A third solve").

The first solve reads the experts of the largest batch the load may cause and can fall far
below the batch whose own experts allow it (b*): with 99.5 % of Kimi-K2's experts read no
batch met a 0.3 s first token, and the plan bought 5,120 H200 where 144 serve. Of the batch
limits only the first-token (TTFT) and inter-token latency ones read the step; memory, the
tokens/s batch and the engine cap do not read the share of experts and bound the top
instead. The two solves give the TTFT limit at two shares of its experts the busiest GPU
reads (u_A at the largest batch, u_B at the first estimate); along the line through them the
limit at a batch b is L(b) = L_B + slope x (u(b) - u_B). The candidate c is the largest whole
batch in [first estimate, top] with L(c) >= c, top = min(every limit at u_B, largest batch).

Session 19's line went through the smallest limit at each solve, which joins two different
limits where a different one is smallest at each (the TTFT limit at u_A, the speed target at
u_B): below both, so c fell short (Qwen3-30B-A3B on L40S at a 0.3 s first token bought 27
GPUs where 20 serve). That line is kept where a TTFT percentile, whole-answer or
inter-token latency target is stated, or the load is an arrival rate or a throughput: there
the limits that read the step fall off a cliff as the prefill queue fills and stop at 0 (no
batch meets the target), so their value at u_A is not on their line, and a line through
that floor overshoots (an option bought up to ten times the GPUs;
benchmarks/moe_fixed_point.py --floored). The TTFT limit's own line is drawn only for
concurrent users with a mean first-token or response-time target.

c is found by 10 rows that each try a step of unit x 2^k sequences (512, 256, ..., 1 units;
unit = 1 while the range is under 1,024 sequences, else range / 1,023: the resolution), each
evaluating the busiest GPU's share at the step with the share rows' own expressions. The rows
below the share (decode.py) are then solved with the experts read at c, and the batch served
is at most c and every limit solved there: conservative whatever the line says. Where the
line finds nothing above the first estimate, c is the first estimate and the batch is as the
second solve gave it.

The batch served is at least the second solve's wherever the first estimate is at least one
sequence, by construction: c is at most the largest batch, so the limits at c read no more
experts than the first solve's and are at least the first estimate, and so is c. Where the
first estimate is below one sequence (no batch meets the targets with the largest batch's
experts) the second solve reads one sequence's experts, and a line that overshoots could
leave less than one (never on the grid, benchmarks/moe_fixed_point.py; session 21's hunt found
one: a limit that falls off a cliff, not along the line). A MAX with the second solve's batch
would not mend it, as the rows below read the experts at c, and a batch above the limits
there would miss its targets in those rows. So c is a candidate (``batch_experts_candidate``):
decode.py solves the limits again with its experts (the rows copied under :data:`LINE`), and
:func:`checked_read_row` reads the experts at c only where those limits allow at least the
batch the first estimate's experts allow, else at the first estimate: the batch is never
below the second solve's.

Where the line's batch overshoots (the limits solved with its experts allow less than it: a
limit fell off a cliff, as the p95 inter-token latency does once over 5 % of steps carry a
prefill chunk), :func:`backoff_rows` bisects between the first estimate and it with the
limits solved again at each trial (session 25), and the experts are read at the largest
batch its own experts allow: a looser target, whose line reached further, no longer serves
less (tests/test_percentile_monotone_s25.py).
"""

from __future__ import annotations

from collections.abc import Callable

from ..expr import AND, IF, MAX, MIN, OR, ROUNDDOWN, ROUNDUP, Expr, ge, gt, le, lt
from .core import Calculation, _c, r
from .first_pass import FIRST, LIMITS, first_pass
from .inputs import PERCENTILES

SECOND = "_second"
LINE = "_line"  # the limits solved again with the experts read at the line's batch
CANDIDATE = "batch_experts_candidate"
STEPS = 10  # bisection rows: exact to one sequence over a range under 2^10 sequences
BACK_STEPS = 5  # back-off solves: exact to one sequence over a range under 2^5 sequences


# where the limits that read the step stop at 0 (queueing.py): a percentile or whole-answer
# target, or a load stated as a rate or a throughput (an open queue's wait grows without
# bound); there the line goes through the smallest limits (session 19)
_FLOORED = OR(*(gt(r(f"target_{t}_p{q}_{u}"), 0) for t, u in (("ttft", "s"), ("itl", "ms"))
                for q in PERCENTILES), gt(r("target_e2e_p95_s"), 0),
              gt(r("peak_request_rate_per_s"), 0), gt(r("target_system_tokens_per_s"), 0))


def _smallest(suffix: str, copied: set[str]) -> Expr:
    return MIN(*(r(n + suffix if n in copied else n) for n in LIMITS))


def third_solve_rows(busiest_at: Callable[[Expr], Expr], disagg: Expr,
                     first: set[str], second: set[str]) -> tuple[Calculation, ...]:
    """The line's rows, the bisection rows and ``batch_experts_read`` (the batch the final
    solve reads the experts at). ``busiest_at(b)`` is the share of its experts the busiest
    GPU reads at b sequences (decode.py's expression); ``first`` / ``second`` name the rows
    copied by each solve."""
    lo, top, unit = (r("batch_experts_estimate"), r("batch_experts_top"),
                     r("batch_experts_unit"))
    lb, ub = r("line_limit_at_estimate"), r("experts_read_busiest_fraction" + SECOND)
    ttft = "batch_by_ttft"
    assert ttft in first and ttft in second

    def step(k: int) -> Calculation:
        prev = lo if k == 1 else r(f"batch_experts_try_{k - 1}")
        b = prev + unit * 2 ** (STEPS - k)
        return _c(f"batch_experts_try_{k}", f"Batch the line allows, step {k} of {STEPS}",
                  "sequences", "Throughput",
                  IF(AND(le(b, top), ge(lb + r("line_limit_slope") * (busiest_at(b) - ub), b)),
                     b, prev),
                  f"The previous step + {2 ** (STEPS - k)} x the step unit where that batch is "
                  "at most the top and the line's limit at the share of its experts the "
                  "busiest GPU reads there is at least it, else the previous step.")

    return (
        _c("line_limit_at_bound", "Batch limit on the line, first estimate", "sequences",
           "Throughput", IF(_FLOORED, _smallest(FIRST, first), r(ttft + FIRST)),
           "The TTFT batch limit solved with the experts read at the largest batch this load "
           "may cause (not clipped at 0); where a TTFT percentile, whole-answer or "
           "inter-token latency target is stated, or the load is a rate or a throughput "
           "(the limits stop at 0 there), the smallest of MIN(memory, tokens/s, TTFT, "
           "inter-token latency, engine cap) there."),
        _c("line_limit_at_estimate", "Batch limit on the line, second estimate", "sequences",
           "Throughput", IF(_FLOORED, _smallest(SECOND, second), r(ttft + SECOND)),
           "The same limit solved with the experts read at the first estimate."),
        _c("line_limit_slope", "Batch limit per share of experts read", "sequences",
           "Throughput",
           IF(gt(r("experts_read_busiest_fraction" + FIRST), ub),
              (r("line_limit_at_bound") - lb) / (r("experts_read_busiest_fraction" + FIRST) - ub),
              0),
           "The line through the two estimates' limits against the share of its experts the "
           "busiest GPU reads: its slope (0 where the shares are equal)."),
        _c("batch_experts_top", "Largest batch the line may reach", "sequences", "Throughput",
           MAX(lo, ROUNDDOWN(MIN(_smallest(SECOND, second), r("batch_experts_bound")), 0)),
           "Every limit solved with the experts read at the first estimate (memory, tokens/s, "
           "TTFT, inter-token latency, engine cap), at most the largest batch at this load, "
           "at least the first estimate: a batch reading more experts than the first "
           "estimate cannot allow more than the limits at it."),
        _c("batch_experts_unit", "Bisection step unit", "sequences", "Throughput",
           MAX(1, ROUNDUP((top - lo) / (2 ** STEPS - 1), 0)),
           f"(top - first estimate) / {2 ** STEPS - 1}, rounded up, at least 1: one "
           f"sequence (exact) while the range is under {2 ** STEPS:,} sequences."),
        *(step(k) for k in range(1, STEPS + 1)),
        _c(CANDIDATE, "Batch the line allows", "sequences", "Throughput",
           IF(disagg, r("batch_experts_bound"), r(f"batch_experts_try_{STEPS}")),
           "The largest batch from the first estimate up to the top where the line through "
           "the two estimates' TTFT limits allows it (the third solve): at most the largest "
           "batch at this load, at least 1. A disaggregated decode pool keeps the largest "
           "batch: its whole-answer split weighs several batches with one share, and a share "
           "that followed the target made a tighter target cheaper."),
    )


def backoff_rows(share_rows: tuple[Calculation, ...]) -> tuple[Calculation, ...]:
    """The back-off search: :data:`BACK_STEPS` bisection steps around the line's batch,
    each solving every limit again with the experts read at its trial
    batch (``share_rows`` copied under ``_back_{k}``), keeping the trial where those limits
    allow it. The limits only fall as the batch (and so the experts read) grows, so the
    batches they allow form one range from 1 up, and the steps find its top to one step
    unit; ``batch_experts_back_{BACK_STEPS}`` is it (the start where no trial holds). The
    search runs below the line's batch where it overshot (the limits at its experts allow
    less than it: a limit fell off a cliff), else up from it to what those limits allow."""
    lo, c, line = r("batch_experts_estimate"), r(CANDIDATE), r("batch_per_replica" + LINE)
    start, end, unit = (r("batch_experts_back_start"), r("batch_experts_back_end"),
                        r("batch_experts_back_unit"))
    rows: list[Calculation] = [
        _c("batch_experts_back_start", "Back-off search from", "sequences", "Throughput",
           IF(lt(line, c), lo, c),
           "Where the limits solved with the line's experts allow less than the line's batch "
           "(it overshot), the search runs from the first estimate up to it; else from the "
           "line's batch up (the line stopped short of what its experts allow)."),
        _c("batch_experts_back_end", "Back-off search below", "sequences", "Throughput",
           IF(lt(line, c), c, MIN(r("batch_experts_top"), line) + 1),
           "The line's batch where it overshot; else one above the smaller of the top and "
           "what the limits at the line's experts allow (a larger batch reads more experts "
           "and is allowed no more)."),
        _c("batch_experts_back_unit", "Back-off step unit", "sequences", "Throughput",
           MAX(1, ROUNDUP((end - 1 - start) / (2 ** BACK_STEPS - 1), 0)),
           f"(end - 1 - start) / {2 ** BACK_STEPS - 1}, rounded up, at least 1: one sequence "
           f"(exact) while the range is under {2 ** BACK_STEPS} sequences."),
    ]
    prev = start
    for k in range(1, BACK_STEPS + 1):
        trial = prev + unit * 2 ** (BACK_STEPS - k)
        seed, suffix = f"batch_experts_back_try_{k}", f"_back_{k}"
        rows.append(_c(seed, f"Back-off trial batch, step {k} of {BACK_STEPS}", "sequences",
                       "Throughput", MAX(1, MIN(trial, end - 1)),
                       f"The previous step's batch + {2 ** BACK_STEPS // 2 ** k} x the "
                       "back-off unit, at most the line's batch: the limits below are solved "
                       "with the experts read at it."))
        copies, _ = first_pass(share_rows, "batch_experts_read", seed, suffix,
                               f"back-off step {k}", f"back-off step {k}'s trial batch")
        rows.extend(x for x in copies if x.name.endswith(suffix))
        rows.append(_c(f"batch_experts_back_{k}", f"Batch the back-off keeps, step {k} of "
                       f"{BACK_STEPS}", "sequences", "Throughput",
                       IF(AND(lt(trial, end), ge(r("batch_per_replica" + suffix), trial)),
                          trial, prev),
                       "The trial batch where it is below the line's batch and every limit "
                       "solved with the experts read at it allows it, else the previous "
                       "step's."))
        prev = r(f"batch_experts_back_{k}")
    return tuple(rows)


def checked_read_row(disagg: Expr) -> Calculation:
    """``batch_experts_read``: the line's batch where the limits solved with its experts
    (the rows copied under :data:`LINE`) allow it, unless the back-off search
    (:func:`backoff_rows`) kept a batch that serves more; else the back-off's batch, or the
    first estimate."""
    lo, c, first = (r("batch_experts_estimate"), r(CANDIDATE), r("batch_per_replica" + FIRST))
    back, line = r(f"batch_experts_back_{BACK_STEPS}"), r("batch_per_replica" + LINE)
    at_line = MIN(line, MAX(1, c, first))
    at_estimate = MIN(r("batch_per_replica" + SECOND), MAX(1, lo, first))
    return _c("batch_experts_read", "Batch the experts are read at", "sequences", "Throughput",
              IF(disagg, r("batch_experts_bound"),
                 IF(AND(gt(back, r("batch_experts_back_start")), gt(back, at_line)), back,
                    IF(OR(ge(line, c), ge(at_line, at_estimate)), c, lo))),
              "The back-off search's batch where it kept one above where it started and "
              "that batch is more than the limits at the line's experts serve; else the "
              "line's batch where those limits allow it, or allow at least what the first "
              "estimate's experts allow; else the first estimate. A line through a limit "
              "that falls off a cliff (a target no batch meets once a step reads more "
              "experts, or a p95 inter-token latency that "
              "jumps to a prefill-carrying step once over 5 % of steps carry one) can "
              "overshoot it: at the line's batch the limits allow less than a smaller batch "
              "would, and a looser target, whose line reached further, served a smaller "
              "batch (gpt-oss-120b on H100 at a 25 ms p95 inter-token latency: 4 sequences "
              "where 20 ms allowed 15). The back-off takes the largest batch below the "
              "line's that its own experts allow, so a looser target never serves less. "
              "The batch per replica is at most it and every limit solved with its "
              "experts, so the share of experts read is the batch served's, or above it "
              "(conservative); no circular reference.")
