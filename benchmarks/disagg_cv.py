"""Cross-validation of the disaggregated prefill/decode rows (docs/calibration.md,
"Disaggregated prefill/decode (issue 23)").

All `DISAGG` rows of tests/data/measured_blackwell_moe.csv come from one source (InferenceX),
so there is no leave-one-source-out: the disaggregation constants are chosen on a grid
(median |error| of the training rows) leaving out one serving framework, one GPU type or
one prompt length at a time, and the held-out rows are scored with the value chosen
without them. Every grid value is scored once on all rows; a fold only picks among them.

    PYTHONPATH=src python benchmarks/disagg_cv.py            # the table
    PYTHONPATH=src python benchmarks/disagg_cv.py --grid disagg_prefill_time_factor=1,1.5,2
    PYTHONPATH=src python benchmarks/disagg_cv.py --step   # also the decode step at each
                                                           # run's own batch

``--step`` (issue 23, session 24): a run's two rows (output tokens/s and TPOT) say how many
sequences it decoded, B = output tokens/s x TPOT per decode replica (Little's law; InferenceX's
per-GPU figure is over the decode GPUs). The model's TPOT at that B, against the measured TPOT,
scores the decode step alone, whatever the batch and the prefill pool. Nothing is fitted.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_data import with_constants  # noqa: E402

from llmsizer.inputs.benchdata import read_points  # noqa: E402
from llmsizer.inputs.benchlabels import disagg_pools  # noqa: E402
from llmsizer.model.catalog import Catalog, load_catalog  # noqa: E402
from llmsizer.sizing.evaluate import Tables  # noqa: E402
from llmsizer.sizing.fidelity import (  # noqa: E402
    Case,
    _profile,
    prepare,
    quantile,
    score,
    tables_for,
)
from llmsizer.sizing.fidelity_disagg import decode_tpot_at  # noqa: E402
from llmsizer.sizing.fidelity_stats import RowResult  # noqa: E402

FILE = ROOT / "tests" / "data" / "measured_blackwell_moe.csv"
GRID = {"disagg_prefill_time_factor": (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0)}


def framework(case: Case) -> str:
    notes = case.point.raw.get("notes", "")
    return notes.split("framework=")[1].split(";")[0] if "framework=" in notes else "?"


FOLDS: dict[str, Callable[[Case], str]] = {
    "framework": framework,
    "GPU": lambda c: c.point.gpu or "?",
    "prompt length": lambda c: str(c.point.isl),
}


def stats(errors: Sequence[float]) -> tuple[int, float, float, float]:
    absolute = [abs(e) for e in errors]
    return (len(errors), statistics.median(absolute), quantile(absolute, 0.9),
            statistics.median(errors))


def line(what: str, errors: Sequence[float], note: str = "") -> str:
    n, med, p90, bias = stats(errors)
    return (f"| {what}{note} | {n} | {med * 100:.1f} % | {p90 * 100:.1f} % | "
            f"{bias * 100:+.1f} % |")


class RunStep(NamedTuple):
    """One run (both rows read): its key (GPU, stack, label, ISL, OSL, users, MTP, weights,
    date), the sequences it decoded per decode replica, the model's, the model's step
    error there and both rows' errors."""

    key: tuple[object, ...]
    batch: float
    model_batch: float
    step_error: float
    errors: tuple[float, float]


def run_key(case: Case) -> tuple[object, ...]:
    p = case.point
    return (p.gpu, framework(case), p.raw.get("tp"), p.isl, p.osl, p.concurrency,
            p.speculative, p.weight_precision, p.raw.get("notes", "").split("date=")[-1][:10])


def step_at_run_batch(cases: Sequence[Case], results: Sequence[RowResult],
                      catalog: Catalog, tables: Tables) -> list[RunStep]:
    """Per run with both rows read: the sequences it decoded per decode replica, the model's
    TPOT there against the measured one, and both rows' errors."""
    runs: dict[tuple[object, ...], dict[str, tuple[Case, RowResult]]] = {}
    for case, result in zip(cases, results, strict=True):
        runs.setdefault(run_key(case), {})[case.point.metric] = (case, result)
    out = []
    for key, rows in runs.items():
        if set(rows) != {"output_tokens_per_s", "tpot_ms"}:
            continue
        (rate_case, rate_row), (tpot_case, tpot_row) = (rows["output_tokens_per_s"],
                                                        rows["tpot_ms"])
        p = rate_case.point
        pools = disagg_pools(p.raw.get("tp", ""), p.raw.get("notes", ""))
        assert pools is not None
        _, _, y, dec = pools
        decode_gpus = y * dec.tp * dec.pp
        total = p.value * decode_gpus / p.gpu_count if p.per_gpu else p.value
        batch = total * tpot_case.point.value / 1000 / y
        tpot = decode_tpot_at(p, rate_case.choice, rate_case.base, rate_case.req, catalog,
                              tables, _profile(rate_case, catalog), max(1.0, batch))
        out.append(RunStep(key, batch, rate_row.batch, tpot / tpot_case.point.value - 1,
                           (rate_row.error, tpot_row.error)))
    return out


def print_step(runs: Sequence[RunStep]) -> None:
    steps = [r.step_error for r in runs]
    n, med, p90, bias = stats(steps)
    print(f"\nThe decode step at each run's own batch ({n} runs with both rows read): "
          f"median |error| {med * 100:.1f} %, p90 {p90 * 100:.1f} %, bias {bias * 100:+.1f} %")
    print("\n| GPU | stack | runs at >= 500 sequences per decode replica | median step error "
          "| range |")
    print("|---|---|---:|---:|---|")
    groups: dict[tuple[object, object], list[float]] = {}
    for r in runs:
        if r.batch >= 500:
            groups.setdefault((r.key[0], r.key[1]), []).append(r.step_error)
    for (gpu, fw), errs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        print(f"| {gpu} | {fw} | {len(errs)} | {statistics.median(errs) * 100:+.0f} % | "
              f"{min(errs) * 100:+.0f} % to {max(errs) * 100:+.0f} % |")
    kinds: dict[str, int] = {}
    for r in runs:
        over = sum(abs(e) > 0.35 for e in r.errors)
        if not over:
            continue
        step = abs(r.step_error) > 0.25
        off = r.model_batch / max(r.batch, 0.5)
        batch = abs(off - 1) > 0.25
        kind = ("step and batch" if step and batch else "step" if step
                else "batch" if batch else "neither over 25 %")
        kinds[kind] = kinds.get(kind, 0) + over
    print("\n| rows above 35 %: what is more than 25 % off | rows |")
    print("|---|---:|")
    for kind in ("step", "step and batch", "batch", "neither over 25 %"):
        print(f"| {kind} | {kinds.get(kind, 0)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", action="append", default=[],
                    help="NAME=v1,v2,... (replaces the default grid; repeat for several)")
    ap.add_argument("--each", action="store_true", help="also print every grid point in-sample")
    ap.add_argument("--step", action="store_true",
                    help="also score the decode step at each run's own batch")
    args = ap.parse_args()
    grid = {k: tuple(float(v) for v in vs.split(","))
            for k, vs in (g.split("=", 1) for g in args.grid)} or GRID
    catalog = load_catalog()
    points, _ = read_points(FILE, catalog)
    cases, _ = prepare([p for p in points if p.disaggregated], catalog)
    tables = tables_for(catalog)
    names = list(grid)
    combos = list(itertools.product(*(grid[n] for n in names)))
    scored: dict[tuple[float, ...], list[RowResult]] = {
        combo: score(cases, with_constants(catalog, dict(zip(names, combo, strict=True))),
                     tables)
        for combo in combos}
    current = tuple(catalog.constant(n) for n in names)
    base = scored.get(current) or score(cases, catalog, tables)

    def pick(train: Sequence[int]) -> tuple[float, ...]:
        return min(combos, key=lambda c: statistics.median(abs(scored[c][i].error)
                                                           for i in train))

    if args.each:
        for combo in combos:
            print(line(str(dict(zip(names, combo, strict=True))),
                       [r.error for r in scored[combo]]))
    print("| DISAGG rows | rows | median abs error | p90 abs error | bias |")
    print("|---|---|---|---|---|")
    print(line("in-sample, all", [r.error for r in base]))
    for metric in ("output_tokens_per_s", "tpot_ms"):
        print(line(f"in-sample, {metric}",
                   [r.error for r in base if r.point.metric == metric]))
    for what, key in FOLDS.items():
        labels = [key(c) for c in cases]
        errors, chosen = [], []
        for held in sorted(set(labels)):
            train = [i for i, k in enumerate(labels) if k != held]
            combo = pick(train)
            chosen.append(combo)
            errors += [scored[combo][i].error for i, k in enumerate(labels) if k == held]
        spread = "; ".join(
            f"{n} {min(c[j] for c in chosen):g}-{max(c[j] for c in chosen):g}"
            for j, n in enumerate(names))
        print(line(f"leave-one-{what.replace(' ', '-')}-out", errors,
                   f" ({len(set(labels))} folds; {spread})"))
    print(f"\nin-sample best on the grid: {dict(zip(names, pick(range(len(cases))), strict=True))}"
          f"; catalog: {dict(zip(names, current, strict=True))}")
    if args.step:
        print_step(step_at_run_batch(cases, base, catalog, tables))


if __name__ == "__main__":
    main()
