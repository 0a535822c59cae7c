"""Cross-row checks of a measured file: a row its own run's other figures contradict.

A fixed-concurrency run of C users in a closed loop (each sends its next request when its
answer ends) has, by Little's law, output throughput = C x output tokens / (TTFT + output
tokens x TPOT). A file that reports the run's throughput, mean TPOT and mean TTFT on three
rows therefore states one figure twice. On every InferenceX run of the shared Blackwell/AMD
file the two agree within 6 % (measured / implied 0.95-1.00 on 177 runs); one ATOM run
(DeepSeek-R1 FP8 on MI355X, MTP, concurrency 512) reports 25 tok/s per GPU against the
1,060 its own TPOT and TTFT give, 0.024 times: a run whose throughput counts only the
requests that completed (or a capture error), not a speed any model should reproduce. Such a
throughput row is not predicted, with the figures in its reason (docs/calibration.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..inputs.benchdata import BenchPoint

# measured / implied outside [1 / F, F] contradicts: the agreeing runs are within 6 %, the
# contradicting one is 42 times off; 2 leaves room for ramp-up and length spread
LITTLE_FACTOR = 2.0
_RUN = re.compile(r"\brun=(\S+?)(?:;|\s|$)")
_KEY_COLUMNS = ("source", "model", "gpu", "gpu_count", "tp", "precision_weights",
                "precision_kv", "isl", "osl", "concurrency", "scenario")


def _run_key(point: BenchPoint) -> tuple[str, ...]:
    """The run a row belongs to: its configuration columns and the run id its notes name."""
    run = _RUN.search(point.raw.get("notes", ""))
    return (*(point.raw.get(c, "").strip() for c in _KEY_COLUMNS), run.group(1) if run else "")


def contradicted_rows(points: Iterable[BenchPoint]) -> dict[int, str]:
    """{row: reason} for fixed-concurrency output-throughput rows that their own run's mean
    TPOT and TTFT contradict by more than LITTLE_FACTOR (Little's law, above). A run with
    more than one row of a metric is ambiguous and left alone."""
    runs: dict[tuple[str, ...], dict[str, list[BenchPoint]]] = {}
    for p in points:
        if p.regime == "concurrency" and p.statistic == "mean" and p.concurrency:
            runs.setdefault(_run_key(p), {}).setdefault(p.metric, []).append(p)
    out: dict[int, str] = {}
    for metrics in runs.values():
        rows = [metrics.get(m, []) for m in ("output_tokens_per_s", "tpot_ms", "ttft_ms")]
        if any(len(r) != 1 for r in rows):
            continue
        (tput,), (tpot,), (ttft,) = rows
        users = float(tput.concurrency or 0)
        cycle_s = ttft.value / 1000 + tput.osl * tpot.value / 1000
        if cycle_s <= 0 or users * tput.osl <= 0:  # nothing to compare (no length or time)
            continue
        implied = users * tput.osl / cycle_s
        ratio = tput.value / implied
        if not 1 / LITTLE_FACTOR <= ratio <= LITTLE_FACTOR:
            out[tput.row] = (
                f"output throughput contradicts its own run: {tput.value:,.0f} tok/s is "
                f"{ratio:.3g} times the {implied:,.0f} tok/s that {users:.0f} users in a closed "
                f"loop give at the run's mean TPOT {tpot.value:.4g} ms and TTFT "
                f"{ttft.value:.4g} ms (Little's law; rows {tpot.row} and {ttft.row})")
    return out
