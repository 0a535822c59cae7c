"""Cross-validation of the disaggregated prefill/decode rows (docs/calibration.md,
"Disaggregated prefill/decode (issue 23)").

All `DISAGG` rows of tests/data/measured_blackwell_moe.csv come from one source (InferenceX),
so there is no leave-one-source-out: the disaggregation constants are chosen on a grid
(median |error| of the training rows) leaving out one serving framework, one GPU type or
one prompt length at a time, and the held-out rows are scored with the value chosen
without them. Every grid value is scored once on all rows; a fold only picks among them.

    PYTHONPATH=src python benchmarks/disagg_cv.py            # the table
    PYTHONPATH=src python benchmarks/disagg_cv.py --grid disagg_prefill_time_factor=1,1.5,2
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_data import with_constants  # noqa: E402

from llmsizer.inputs.benchdata import read_points  # noqa: E402
from llmsizer.model.catalog import load_catalog  # noqa: E402
from llmsizer.sizing.fidelity import Case, prepare, quantile, score, tables_for  # noqa: E402
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", action="append", default=[],
                    help="NAME=v1,v2,... (replaces the default grid; repeat for several)")
    ap.add_argument("--each", action="store_true", help="also print every grid point in-sample")
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


if __name__ == "__main__":
    main()
