"""Per-token latency at batch 1 and concurrency <= 4, per GPU family: the rows where the
decode step's fixed terms (all-reduce and all-to-all latency, step overhead) are most of
the step (issue 23 item 4).

    python benchmarks/low_concurrency.py            # every such row of both files
    python benchmarks/low_concurrency.py --ep       # expert-parallel rows only

Prints, per row, the measured and predicted TPOT/ITL (per-user tokens/s for batch-1 rows)
with the catalog's constants, the error and the step's parts at the batch served, then the
median / p90 of |error| and the signed median per GPU family (architecture in gpus.yaml)
and for the expert-parallel rows. In-sample only: the held-out figure of the issue's group
(TPOT at concurrency <= 4 on expert-parallel rows, leaving one source out) is printed by
benchmarks/calibrate_loso.py --only NAMES. Disaggregated rows are left out (their decode
pool is predicted by sizing/fidelity_disagg.py, not this step alone); llama.cpp rows too
(their own step constant). Nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import calibrate as cal  # noqa: E402

from llmsizer.model.catalog import load_catalog  # noqa: E402
from llmsizer.sizing.fidelity import _REGIMES, LLAMACPP, Case, _Row, tables_for  # noqa: E402

LATENCY = ("tpot_ms", "itl_ms")
PARTS = (("weights", "decode_weights_ms"), ("all-reduce", "allreduce_fixed_ms"),
         ("all-to-all", "alltoall_fixed_ms"), ("overhead", "step_overhead_ms"),
         ("per seq", "step_ms_per_seq"))


def low_concurrency(case: Case) -> bool:
    p = case.point
    if case.engine == LLAMACPP or p.statistic != "mean":
        return False
    if p.regime == "batch1":
        return p.metric in (*LATENCY, "tokens_per_s_per_user")
    return p.regime == "concurrency" and p.metric in LATENCY and (p.concurrency or 0) <= 4


def family(case: Case, catalog: object) -> str:
    arch = catalog.gpus[str(case.point.gpu)].architecture  # type: ignore[attr-defined]
    return str(arch).split(" (")[0].replace(" + Grace CPU", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ep", action="store_true", help="expert-parallel rows only")
    args = parser.parse_args()
    catalog = load_catalog()
    tables = tables_for(catalog)
    cases, _, _ = cal.load_cases(catalog)
    picked = [c for c in cases if low_concurrency(c) and (c.point.ep > 1 or not args.ep)]
    picked.sort(key=lambda c: (family(c, catalog), str(c.point.gpu), c.point.row))
    print("| family | row | source | GPU | weights | TP/EP/ADP | C | ISL/OSL | metric | "
          "measured | predicted | error | " + " | ".join(n for n, _ in PARTS) + " (ms) |")
    print("|---" * (12 + len(PARTS)) + "|")
    errors: dict[str, list[float]] = {}
    for case in picked:
        p = case.point
        value, env = _REGIMES[p.regime](_Row(case, catalog, tables))
        error = value / p.value - 1
        fam = family(case, catalog)
        errors.setdefault(fam, []).append(error)
        if p.ep > 1:
            errors.setdefault("expert-parallel (every family)", []).append(error)
        mtp = " MTP" if p.speculative else ""
        parts = " | ".join(f"{float(env[k]):.2f}" for _, k in PARTS)  # type: ignore[arg-type]
        print(f"| {fam} | {p.row} | {cal.source_of(p)} | {p.gpu} | {p.weight_precision}{mtp} | "
              f"{p.tp}/{p.ep}/{p.adp} | {p.concurrency or 1} | {p.isl}/{p.osl} | {p.metric} | "
              f"{p.value:.2f} | {value:.2f} | {error * 100:+.1f} % | {parts} |")
    print("\n| family | rows | median | p90 | signed median |\n|---|---:|---:|---:|---:|")
    for fam, errs in sorted(errors.items(), key=lambda kv: kv[0].startswith("expert")):
        n, med, p90, bias = cal._stats(errs)
        print(f"| {fam} | {n} | {med * 100:.1f} % | {p90 * 100:.1f} % | {bias * 100:+.1f} % |")


if __name__ == "__main__":
    main()
