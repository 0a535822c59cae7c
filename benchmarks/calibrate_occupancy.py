"""Fit the offline KV occupancy per engine profile, and cross-validate it.

    python benchmarks/calibrate_occupancy.py            # fit, print the tables
    python benchmarks/calibrate_occupancy.py --write    # ... and update catalogs/constants.yaml
    python benchmarks/calibrate_occupancy.py --hold-out-gpu b200 [--share 0.99]
        # issue 23's Blackwell bar: refit every datacenter constant without that GPU's rows
        # (calibrate.py's fold: warm start, 10 iterations) and predict them (~3-5 minutes)
    python benchmarks/calibrate_occupancy.py --hold-out-gpu b200 --worst 40
        # ... and list the 40 held-out rows with the largest |error| (the tail to explain)

The memory rule reserves KV for prompt + occupancy x output per request
(``context_tokens``); occupancy 1 reserves the whole output. An engine that admits requests by
the cache they hold now runs, in an offline run, with each request part-way through its output.
The share is an engine property, so it is fitted per trtllm-bench backend (fidelity._profile):
the TensorRT-engine backend (v0.17 tables) and the PyTorch backend (v0.19, v0.20, 1.2 tables),
on that backend's offline throughput rows of both calibration files, every other constant held
at its catalog fit. Grid search (step 0.01 within [0, 1]) on the soft-L1 log loss of
benchmarks/calibrate.py; ties go to the larger share (1 is the unfitted default).

Cross-validation: leave one source out within the profile (a profile left with no rows keeps
the default 1, as a profile without data does) and leave one GPU type out within the profile.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from calibration_data import (  # noqa: E402
    CONSTANTS,
    F_SCALE,
    load_cases,
    set_constant,
    source_of,
    with_constants,
)
from calibration_fit import DATACENTER, _fold  # noqa: E402

from llmsizer.inputs.benchdata import BenchPoint  # noqa: E402
from llmsizer.model.catalog import Catalog, load_catalog  # noqa: E402
from llmsizer.sizing.fidelity import (  # noqa: E402
    LLAMACPP,
    TRTLLM_BENCH,
    Case,
    RowResult,
    pytorch_backend,
    quantile,
    score,
    tables_for,
)

PROFILES = {"trtllm_kv_output_occupancy": "trtllm-bench, TensorRT-engine backend",
            "trtllm_pytorch_kv_output_occupancy": "trtllm-bench, PyTorch backend"}
GRID = tuple(i / 100 for i in range(101))
DEFAULT = 1.0  # today's rule: the whole output reserved


def constant_of(case: Case) -> str:
    return ("trtllm_pytorch_kv_output_occupancy" if pytorch_backend(case)
            else "trtllm_kv_output_occupancy")


def offline_rows(cases: Sequence[Case]) -> dict[str, list[Case]]:
    out: dict[str, list[Case]] = {name: [] for name in PROFILES}
    for c in cases:
        if c.engine == TRTLLM_BENCH and c.point.regime == "offline":
            out[constant_of(c)].append(c)
    return out


def _loss(error: float) -> float:
    z = math.log(1 + error) / F_SCALE
    return 2 * (math.sqrt(1 + z * z) - 1)


def _other_than(key: Callable[[Case], str], group: str) -> Callable[[Case], bool]:
    return lambda c: key(c) != group


def _result_of(key: Callable[[BenchPoint], str], group: str) -> Callable[[RowResult], bool]:
    return lambda r: key(r.point) == group


class Scan:
    """The rows' errors at every grid share, computed once (a fit is then a sum)."""

    def __init__(self, name: str, rows: Sequence[Case], catalog: Catalog) -> None:
        tables = tables_for(catalog)
        self.rows = list(rows)
        self.results = {share: score(rows, with_constants(catalog, {name: share}), tables)
                        for share in GRID}

    def fit(self, keep: Callable[[Case], bool]) -> float:
        """The share minimising the loss over the rows ``keep`` selects; none: the default."""
        if not any(keep(c) for c in self.rows):
            return DEFAULT
        totals = {share: sum(_loss(r.error) for c, r in zip(self.rows, res, strict=True)
                             if keep(c)) for share, res in self.results.items()}
        best = min(totals.values())
        return max(share for share, total in totals.items() if total <= best + 1e-9)

    def held_out(self, key: Callable[[Case], str]) -> list[RowResult]:
        """Each group's rows predicted with the share fitted without that group."""
        out = []
        for group in sorted({key(c) for c in self.rows}):
            share = self.fit(_other_than(key, group))
            out += [r for c, r in zip(self.rows, self.results[share], strict=True)
                    if key(c) == group]
        return out


def stats(errors: Sequence[float]) -> str:
    if not errors:
        return "| 0 | | | |"
    absolute = [abs(e) for e in errors]
    return (f"| {len(errors)} | {quantile(absolute, 0.5) * 100:.1f} % "
            f"| {quantile(absolute, 0.9) * 100:.1f} % | {quantile(errors, 0.5) * 100:+.1f} % |")


def report(name: str, scan: Scan, share: float) -> list[str]:
    by_source = scan.held_out(lambda c: source_of(c.point))
    by_gpu = scan.held_out(lambda c: str(c.point.gpu))
    lines = [f"\n{PROFILES[name]} (`{name}`): fitted {share:.2f}\n",
             "| rows | variant | count | median abs error | p90 abs error | bias |",
             "|---|---|---:|---:|---:|---:|"]
    groups: dict[str, Callable[[RowResult], bool]] = {
        "all": lambda r: True,
        "decode-heavy (OSL >= 2 x ISL)": lambda r: r.point.osl >= 2 * r.point.isl,
        "prefill-heavy (ISL >= 2 x OSL)": lambda r: r.point.isl >= 2 * r.point.osl}
    groups |= {src: _result_of(lambda p: source_of(p), src)
               for src in sorted({source_of(c.point) for c in scan.rows})}
    for label, keep in groups.items():
        for variant, rows in (("before (1)", scan.results[DEFAULT]),
                              (f"fitted ({share:.2f})", scan.results[share]),
                              ("source left out", by_source), ("GPU left out", by_gpu)):
            lines.append(f"| {label} | {variant} "
                         + stats([r.error for r in rows if keep(r)]))
    return lines


def describe(r: RowResult) -> str:
    """One row as the tail listing shows it: error, file row, source, shape, measured, model."""
    p = r.point
    shape = f"TP{p.tp}" + (f" PP{p.pp}" if p.pp > 1 else "") + (f" EP{p.ep}" if p.ep > 1 else "")
    shape += (f" ADP{p.adp}" if p.adp > 1 else "") + (" MTP" if p.speculative else "")
    load = p.regime if p.concurrency is None else f"C{p.concurrency}"
    return (f"| {r.error * 100:+.1f} % | {p.row} | {source_of(p)} | {p.model} | {p.gpu} x"
            f"{p.gpu_count} {shape} | {p.weight_precision}/{p.kv_precision} | {p.isl}/{p.osl} "
            f"| {load} | {p.metric} | {p.value:.4g} | {r.predicted:.4g} |")


def worst(results: Sequence[RowResult], n: int) -> list[str]:
    """The ``n`` rows with the largest |error|, largest first."""
    head = ["| error | row | source | model | GPUs, shape | weights/KV | ISL/OSL | load "
            "| metric | measured | model |", "|" + "---|" * 11]
    ranked = sorted(results, key=lambda r: -abs(r.error))[:n]
    return head + [describe(r) for r in ranked]


def hold_out_gpu(gpu: str, cases: Sequence[Case], catalog: Catalog, tail: int = 0) -> None:
    """One leave-one-GPU-out fold of calibrate.py: the GPU's rows predicted by the constants
    refitted on every other datacenter row."""
    dc = [c for c in cases if c.engine != LLAMACPP]
    warm = {n: catalog.constant(n) for n in DATACENTER}
    held = _fold(([c for c in dc if c.point.gpu != gpu], [c for c in dc if c.point.gpu == gpu],
                  DATACENTER, catalog, warm))
    print("| rows | count | median abs error | p90 abs error | bias |\n|---|---:|---:|---:|---:|")
    groups: dict[str, Callable[[RowResult], bool]] = {
        "all": lambda r: True, "throughput": lambda r: r.point.metric == "output_tokens_per_s"}
    groups |= {f"{k[0]} {k[1]}": _result_of(lambda p: f"{p.regime} {p.metric}", f"{k[0]} {k[1]}")
               for k in sorted({(r.point.regime, r.point.metric) for r in held})}
    for label, keep in groups.items():
        print(f"| {gpu} held out, {label} " + stats([r.error for r in held if keep(r)]))
    if tail:
        print("\n" + "\n".join(worst(held, tail)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update constants.yaml")
    parser.add_argument("--hold-out-gpu", default="",
                        help="instead: predict this GPU's rows from a refit without them")
    parser.add_argument("--share", type=float, default=None,
                        help="with --hold-out-gpu: the TensorRT-engine backend's share to use")
    parser.add_argument("--worst", type=int, default=0,
                        help="with --hold-out-gpu: list this many rows with the largest |error|")
    args = parser.parse_args()
    catalog = load_catalog()
    if args.share is not None:
        catalog = with_constants(catalog, {"trtllm_kv_output_occupancy": args.share})
    cases, _, _ = load_cases(catalog)
    if args.hold_out_gpu:
        hold_out_gpu(args.hold_out_gpu, cases, catalog, args.worst)
        return
    fitted: dict[str, float] = {}
    counts: dict[str, int] = {}
    for name, rows in offline_rows(cases).items():
        scan = Scan(name, rows, catalog)
        fitted[name] = scan.fit(lambda c: True)
        counts[name] = len(rows)
        print("\n".join(report(name, scan, fitted[name])), flush=True)
    if args.write:
        when = dt.date.today().isoformat()
        text = CONSTANTS.read_text(encoding="utf-8")
        for name, share in fitted.items():
            text = set_constant(
                text, name, share,
                f"fitted {when} by benchmarks/calibrate_occupancy.py on the {counts[name]} "
                f"offline throughput rows ({PROFILES[name]}) of calibration_points.csv and "
                "measured_blackwell_moe.csv: the share of its output a request's KV cache "
                "holds on average in an offline run (1 = prompt + output reserved); "
                "cross-validated leaving one source out (docs/calibration.md)", "fraction")
        CONSTANTS.write_text(text, encoding="utf-8")
        print(f"wrote {CONSTANTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
