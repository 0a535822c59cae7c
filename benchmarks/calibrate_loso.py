"""Refit a few constants and check them leaving one source out, on the issue-23 figures.

    python benchmarks/calibrate_loso.py --only expert_slot_overhead
    python benchmarks/calibrate_loso.py --only alltoall_latency_us,step_overhead_ms
    python benchmarks/calibrate_loso.py --only fp4_layer_saving_us --train-without-ep

The named constants are refitted on every datacenter row of both files (the others held at
their catalog values: benchmarks/calibrate.py's objective and solver), then once per source
(a publication or engine release: calibrate.source_of) on the other sources' rows, warm-started
from the full refit, and the held-out source's rows scored. With no --only, the catalog's
constants are scored as they are (in-sample only). --train-without-ep fits (and refits per
fold) on the rows without expert parallelism only, so the expert-parallel rows are held out
by construction (the FP4 small-batch saving: docs/calibration-history.md, "Fifth pass"). Nothing is
written: the figures go into
docs/calibration.md by hand with the command that made them. A refit of two or three
constants takes seconds; the cross-validation a minute or two on the shared machine.

Figures printed (median / p90 of |predicted / measured - 1|, signed median), per group:
the second file's MoE throughput in every regime (the issue's acceptance group), its
non-MTP rows, fixed-concurrency throughput and TPOT, TPOT at concurrency <= 4 on
expert-parallel rows, and the first file's offline throughput, MoE throughput and latency
rows (which a change for the second file must not worsen).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import calibrate as cal  # noqa: E402

from llmsizer.model.catalog import load_catalog  # noqa: E402
from llmsizer.sizing.fidelity import RowResult  # noqa: E402

LATENCY = ("tpot_ms", "itl_ms")


def groups(moe: Callable[[RowResult], bool]) -> dict[str, Callable[[RowResult], bool]]:
    def new(r: RowResult) -> bool:
        return cal.dataset_of(r.point) == "new"

    def tput(r: RowResult) -> bool:
        return r.point.metric in cal.THROUGHPUT

    def tpot(r: RowResult) -> bool:
        return (r.point.regime == "concurrency" and r.point.metric in LATENCY
                and r.point.statistic == "mean")

    return {
        "second file, MoE throughput, all regimes": lambda r: new(r) and moe(r) and tput(r),
        "  the same, rows without MTP": lambda r: (new(r) and moe(r) and tput(r)
                                                   and not r.point.speculative),
        "second file, fixed-concurrency throughput": lambda r: (
            new(r) and tput(r) and r.point.regime == "concurrency"),
        "second file, offline throughput": lambda r: (
            new(r) and tput(r) and r.point.regime == "offline"),
        "second file, fixed-concurrency TPOT": lambda r: new(r) and tpot(r),
        "  TPOT at concurrency <= 4, expert-parallel": lambda r: (
            new(r) and tpot(r) and (r.point.concurrency or 0) <= 4 and r.point.ep > 1),
        "first file, offline throughput": lambda r: (
            not new(r) and tput(r) and r.point.regime == "offline"),
        "first file, MoE throughput": lambda r: not new(r) and moe(r) and tput(r),
        "first file, TPOT/ITL": lambda r: not new(r) and r.point.metric in LATENCY,
        "first file, serving throughput": lambda r: (
            not new(r) and tput(r) and r.point.regime in ("concurrency", "rate")),
    }


def report(title: str, results: list[RowResult],
           picks: dict[str, Callable[[RowResult], bool]]) -> None:
    print(f"\n{title}\n| rows | n | median | p90 | bias |\n|---|---:|---:|---:|---:|")
    for name, want in picks.items():
        n, med, p90, bias = cal._stats([r.error for r in results if want(r)])
        print(f"| {name.strip()} | {n} | {med * 100:.1f} % | {p90 * 100:.1f} % | "
              f"{bias * 100:+.1f} % |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated constants to refit")
    parser.add_argument("--train-without-ep", action="store_true",
                        help="fit on the rows without expert parallelism only")
    args = parser.parse_args()
    t0 = time.perf_counter()
    catalog = load_catalog()
    cases, _, _ = cal.load_cases(catalog)
    dc = [c for c in cases if c.engine != cal.LLAMACPP]
    params = {n: cal.DATACENTER[n] for n in args.only.split(",") if n}
    training = [c for c in dc if c.point.ep <= 1] if args.train_without_ep else dc
    fitted = cal.fit(training, params, catalog) if params else {}
    for name, value in fitted.items():
        print(f"  {name:28} {cal._fmt(value):>10}  (was {cal._fmt(catalog.constant(name))})")
    picks = groups(lambda r: bool(catalog.models[str(r.point.model)].experts))
    report("in-sample", cal.score(dc, cal.with_constants(catalog, fitted)), picks)
    if params:
        held: list[RowResult] = []
        for source in sorted({cal.source_of(c.point) for c in dc}):
            train = [c for c in training if cal.source_of(c.point) != source]
            fold = cal.fit(train, params, catalog, start=fitted)
            held += cal.score([c for c in dc if cal.source_of(c.point) == source],
                              cal.with_constants(catalog, fold))
        report("leave one source out (the named constants refitted per fold)", held, picks)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
