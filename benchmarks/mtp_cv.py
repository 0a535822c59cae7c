"""Cross-validation of the speculative-decoding (``MTP on``) rows (docs/calibration-history.md,
"Speculative decoding on InferenceX's prompts (issue 23)").

MTP rows are predicted, not fitted: the shared constants come from the other rows. The one
figure chosen on MTP rows is ``mtp_random_prompt_acceptance_share`` (the share of the model's
published extra tokens per step that InferenceX's random chat prompts reach). It is chosen on a
grid (median |error| of the training MTP rows, every metric) leaving one source out at a time
(`calibrate.source_of`: each InferenceX framework is a source), and the held-out rows are
scored with the value chosen without them. Every grid value is scored once on all rows; a fold
only picks among them.

    PYTHONPATH=src python benchmarks/mtp_cv.py               # groups and the held-out table
    PYTHONPATH=src python benchmarks/mtp_cv.py --grid 0.7,0.8,0.9,1
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_data import source_of, with_constants  # noqa: E402

from llmsizer.inputs.benchdata import BenchPoint, read_points  # noqa: E402
from llmsizer.model.catalog import load_catalog  # noqa: E402
from llmsizer.sizing.fidelity import prepare, quantile, score, tables_for  # noqa: E402
from llmsizer.sizing.fidelity_stats import RowResult  # noqa: E402

FILE = ROOT / "tests" / "data" / "measured_blackwell_moe.csv"
NAME = "mtp_random_prompt_acceptance_share"
GRID = tuple(round(0.5 + 0.05 * i, 2) for i in range(11))  # 0.5 .. 1.0
# the MTP metrics; throughput rows are shown, the bar is on these two
METRICS = {"TPOT": lambda m: m.startswith("tpot"), "per-user speed": lambda m: "per_user" in m,
           "throughput": lambda m: m.startswith("output_tokens_per_s") and "per_user" not in m}


def kind(point: BenchPoint) -> str:
    return next((k for k, test in METRICS.items() if test(point.metric)), "other")


def line(what: str, errors: Sequence[float]) -> str:
    if not errors:
        return f"| {what} | 0 | | | |"
    absolute = [abs(e) for e in errors]
    return (f"| {what} | {len(errors)} | {statistics.median(absolute) * 100:.1f} % | "
            f"{quantile(absolute, 0.9) * 100:.1f} % | {statistics.median(errors) * 100:+.1f} % |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", default=",".join(map(str, GRID)), help="values of the share")
    args = ap.parse_args()
    grid = tuple(float(v) for v in args.grid.split(","))
    catalog = load_catalog()
    points, _ = read_points(FILE, catalog)
    mtp = [p for p in points if p.speculative and not p.disaggregated]
    tables = tables_for(catalog)
    scored: dict[float, list[RowResult]] = {}
    for value in grid:  # the acceptance is an input of each row: prepare per value
        cat = with_constants(catalog, {NAME: value})
        cases, _ = prepare(mtp, cat)
        scored[value] = [r for r in score(cases, cat, tables) if kind(r.point) != "other"]
    current = catalog.constant(NAME)
    base = scored.get(current)
    if base is None:
        cases, _ = prepare(mtp, catalog)
        base = [r for r in score(cases, catalog, tables) if kind(r.point) != "other"]
    sources = [source_of(r.point) for r in base]

    def pick(train: Sequence[int]) -> float:
        return min(grid, key=lambda v: statistics.median(abs(scored[v][i].error) for i in train))

    held: list[RowResult] = [base[0]] * len(base)
    chosen: dict[str, float] = {}
    for source in sorted(set(sources)):
        value = pick([i for i, s in enumerate(sources) if s != source])
        chosen[source] = value
        for i, s in enumerate(sources):
            if s == source:
                held[i] = scored[value][i]

    print(f"catalog {NAME} = {current:g}; chosen with each source left out: "
          + "; ".join(f"{s} {v:g}" for s, v in chosen.items()))
    print("\n| MTP rows, source / GPU / weights, catalog value | rows | median abs error | "
          "p90 abs error | bias |\n|---|---|---|---|---|")
    groups: dict[str, list[float]] = {}
    for r in base:
        p = r.point
        groups.setdefault(f"{source_of(p)} / {p.gpu} / {p.weight_precision} / {kind(p)}",
                          []).append(r.error)
    for key in sorted(groups):
        print(line(key, groups[key]))
    print("\n| MTP rows | rows | median abs error | p90 abs error | bias |\n|---|---|---|---|---|")
    for what, rows in (("catalog value, in-sample", base), ("source left out", held)):
        for k in METRICS:
            print(line(f"{what}, {k}", [r.error for r in rows if kind(r.point) == k]))
        print(line(f"{what}, TPOT and per-user speed",
                   [r.error for r in rows if kind(r.point) != "throughput"]))
    print("\n| share | TPOT median | throughput median |\n|---|---|---|")
    for value in grid:
        tpot = [abs(r.error) for r in scored[value] if kind(r.point) == "TPOT"]
        thr = [abs(r.error) for r in scored[value] if kind(r.point) == "throughput"]
        print(f"| {value:g} | {statistics.median(tpot) * 100:.1f} % | "
              f"{statistics.median(thr) * 100:.1f} % |")


if __name__ == "__main__":
    main()
