"""The third solve of a mixture of experts' batch: the batch where each batch limit's line
through the two solves meets the batch, found by a fixed number of bisection rows
(docs/queueing.md, "A third solve").

The first solve reads the experts of the largest batch the load may cause and can fall far
below the batch whose own experts allow it (b*): with 99.5 % of Kimi-K2's experts read no
batch met a 0.3 s first token, and the plan bought 5,120 H200 where 144 serve. The two solves
give each limit that reads the step (TTFT, inter-token latency) at two shares of its experts
the busiest GPU reads (u_A at the largest batch, u_B at the first estimate); along its line
the limit at a batch b is L_i(b) = L_i(u_B) + slope_i x (u(b) - u_B). The candidate c is the
largest whole batch in [first estimate, top] with every L_i(c) >= c, top = min(every limit at
u_B, largest batch): memory, the tokens/s batch and the engine cap do not read the share and
bound the top. Session 19 drew one line through the smallest limit at each share, which joins
two different limits where a different one is smallest at each (the first token at u_A, the
speed target at u_B) and falls below both; the smallest of the per-limit lines is at or above
that line between the two shares (a minimum of lines through the same end points), so c is
never below session 19's. It is found by 10 rows that each try a step of unit x 2^k sequences
(512, 256, ..., 1 units; unit = 1 while the range is under 1,024 sequences, else range / 1,023:
the resolution), each evaluating the busiest GPU's share at the step with the share rows' own
expressions. The rows below the share (decode.py) are then solved with the experts read at c,
and the batch served is at most c and every limit solved there: conservative whatever the
lines say. Where they find nothing above the first estimate, c is the first estimate and the
batch is as the second solve gave it.

The batch served is at least the second solve's wherever the first estimate is at least one
sequence, by construction: c is at most the largest batch, so the limits at c read no more
experts than the first solve's and are at least the first estimate, and so is c. Where the
first estimate is below one sequence (no batch meets the targets with the largest batch's
experts) the second solve reads one sequence's experts, and a line that overshoots could
leave less than one; a MAX with the second solve's batch would not mend it, as the rows
below read the experts at c (docs/queueing.md).
"""

from __future__ import annotations

from collections.abc import Callable

from ..expr import AND, IF, MAX, MIN, ROUNDDOWN, ROUNDUP, Expr, ge, gt, le
from .core import Calculation, _c, r
from .first_pass import FIRST, LIMITS

SECOND = "_second"
STEPS = 10  # bisection rows: exact to one sequence over a range under 2^10 sequences


# the words for the limits that read the experts (a line each); the others (memory, the
# tokens/s batch, the engine cap) do not change with the share and bound the top instead
WORDS = {"batch_by_ttft": "TTFT", "batch_by_itl": "inter-token latency"}


def _smallest(suffix: str, copied: set[str]) -> Expr:
    return MIN(*(r(n + suffix if n in copied else n) for n in LIMITS))


def third_solve_rows(busiest_at: Callable[[Expr], Expr], disagg: Expr,
                     first: set[str], second: set[str]) -> tuple[Calculation, ...]:
    """The lines' rows, the bisection rows and ``batch_experts_read`` (the batch the final
    solve reads the experts at). ``busiest_at(b)`` is the share of its experts the busiest
    GPU reads at b sequences (decode.py's expression); ``first`` / ``second`` name the rows
    copied by each solve (the limits among them each get a line)."""
    lo, top, unit = (r("batch_experts_estimate"), r("batch_experts_top"),
                     r("batch_experts_unit"))
    ua, ub = (r("experts_read_busiest_fraction" + FIRST),
              r("experts_read_busiest_fraction" + SECOND))
    lines = [n for n in LIMITS if n in first and n in second]
    assert set(lines) == WORDS.keys(), lines  # a new limit reading the share needs its words

    def slope(n: str) -> Calculation:
        return _c(f"{n}_slope", f"{WORDS[n]} batch limit per share of experts read",
                  "sequences", "Throughput",
                  IF(gt(ua, ub), (r(n + FIRST) - r(n + SECOND)) / (ua - ub), 0),
                  f"The line through the {WORDS[n]} batch limit solved at the two estimates "
                  "against the share of its experts the busiest GPU reads there: its slope "
                  "(0 where the shares are equal).")

    def step(k: int) -> Calculation:
        prev = lo if k == 1 else r(f"batch_experts_try_{k - 1}")
        b = prev + unit * 2 ** (STEPS - k)
        return _c(f"batch_experts_try_{k}", f"Batch the line allows, step {k} of {STEPS}",
                  "sequences", "Throughput",
                  IF(AND(le(b, top), *(ge(r(n + SECOND) + r(f"{n}_slope")
                                          * (busiest_at(b) - ub), b) for n in lines)),
                     b, prev),
                  f"The previous step + {2 ** (STEPS - k)} x the step unit where that batch is "
                  "at most the top and each limit's line (TTFT, inter-token latency) at the "
                  "share of its experts the busiest GPU reads there is at least it, else the "
                  "previous step.")

    return (
        _c("line_limit_at_estimate", "Smallest batch limit, second estimate", "sequences",
           "Throughput", _smallest(SECOND, second),
           "MIN(memory, tokens/s, TTFT, inter-token latency, engine cap), each solved with "
           "the experts read at the first estimate."),
        *(slope(n) for n in lines),
        _c("batch_experts_top", "Largest batch the line may reach", "sequences", "Throughput",
           MAX(lo, ROUNDDOWN(MIN(r("line_limit_at_estimate"), r("batch_experts_bound")), 0)),
           "The second estimate's smallest limit, at most the largest batch at this load, "
           "at least the first estimate: a batch reading more experts than the first "
           "estimate cannot allow more than the limits at it (memory, the tokens/s batch and "
           "the engine cap, which do not read the experts, bound the batch here)."),
        _c("batch_experts_unit", "Bisection step unit", "sequences", "Throughput",
           MAX(1, ROUNDUP((top - lo) / (2 ** STEPS - 1), 0)),
           f"(top - first estimate) / {2 ** STEPS - 1}, rounded up, at least 1: one "
           f"sequence (exact) while the range is under {2 ** STEPS:,} sequences."),
        *(step(k) for k in range(1, STEPS + 1)),
        _c("batch_experts_read", "Batch the experts are read at", "sequences", "Throughput",
           IF(disagg, r("batch_experts_bound"), r(f"batch_experts_try_{STEPS}")),
           "The largest batch from the first estimate up to the top where each limit's line "
           "through its two estimates allows it (the third solve): at most the largest batch "
           "at this load, at least 1. The batch per replica is at most it and "
           "every limit solved with its experts, so the share of experts read is the batch "
           "served's, or above it (conservative); no circular reference. A disaggregated "
           "decode pool keeps the largest batch: its whole-answer split weighs several "
           "batches with one share, and a share that followed the target made a tighter "
           "target cheaper."),
    )
