"""Per-token latency at batch 1 and concurrency <= 4, per GPU family: the rows where the
decode step's fixed terms (all-reduce and all-to-all latency, step overhead) are most of
the step (issue 23 item 4).

    python benchmarks/low_concurrency.py            # every such row of both files
    python benchmarks/low_concurrency.py --ep       # expert-parallel rows only
    python benchmarks/low_concurrency.py --residuals  # grouped, disaggregated decode pools too
    python benchmarks/low_concurrency.py --bytes    # FP4/FP8 rows: residual against bytes read

Prints, per row, the measured and predicted TPOT/ITL (per-user tokens/s for batch-1 rows)
with the catalog's constants, the error and the step's parts at the batch served, then the
median / p90 of |error| and the signed median per GPU family (architecture in gpus.yaml)
and for the expert-parallel rows. In-sample only: the held-out figure of the issue's group
(TPOT at concurrency <= 4 on expert-parallel rows, leaving one source out) is printed by
benchmarks/calibrate_loso.py --only NAMES. Disaggregated rows are left out (their decode
pool is predicted by sizing/fidelity_disagg.py, not this step alone); llama.cpp rows too
(their own step constant). With --residuals, every such latency row of both files and every
disaggregated decode pool at a decode batch <= 4 (not fitted: its TPOT is the decode step with
no prefill) is grouped by GPU family, weight precision, engine and layout, with the median of
predicted - measured in ms: a term missing from the fixed part of the step shows as the same
milliseconds in every group that shares its cause. With --bytes, the same rows with FP4 or FP8
weights, one per line with the weights each GPU reads per step (GB and ms at the catalog's
bandwidth efficiency) beside the residual, then per GPU family and precision a least-squares
line residual = a + k x weight ms: a bandwidth shortfall shows as k (the residual grows with
the bytes), a fixed cost per step or per layer as a (docs/calibration-history.md, "Fourth pass").
Nothing is written.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import calibrate as cal  # noqa: E402
import calibration_data  # noqa: E402

from llmsizer.inputs.benchdata import read_points  # noqa: E402
from llmsizer.model.catalog import load_catalog  # noqa: E402
from llmsizer.sizing.evaluate import evaluate_choice  # noqa: E402
from llmsizer.sizing.fidelity import (  # noqa: E402
    _REGIMES,
    LLAMACPP,
    Case,
    RowResult,
    _profile,
    _Row,
    prepare,
    score,
    tables_for,
)
from llmsizer.sizing.fidelity_disagg import exchange_inputs  # noqa: E402

LATENCY = ("tpot_ms", "itl_ms")
_Env = Mapping[str, object]


def _ms(name: str) -> Callable[[_Env], float]:
    return lambda env: float(env[name])  # type: ignore[arg-type]


# The step's parts at the batch served: every weight read (of which the routed experts the
# busiest GPU reads at that batch), the fixed communication and overhead, and per sequence
# the whole b term (of which the decode attention).
PARTS: tuple[tuple[str, Callable[[_Env], float]], ...] = (
    ("weights", _ms("decode_weights_ms")),
    ("of which experts", lambda env: float(env["decode_weights_ms"])  # type: ignore[arg-type]
     - float(env["shared_weights_ms"])),  # type: ignore[arg-type]
    ("all-reduce", _ms("allreduce_fixed_ms")), ("all-to-all", _ms("alltoall_fixed_ms")),
    ("overhead", _ms("step_overhead_ms")), ("per seq", _ms("step_ms_per_seq")),
    ("of which attention", _ms("decode_attention_ms_per_seq")),
)


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


def _layout(result: RowResult) -> str:
    """TP / EP / attention data-parallel of the pool that decodes (a disaggregated row's D:)."""
    p = result.point
    if p.disaggregated:
        found = re.search(r"D:\d+x\(([^)]*)\)", p.raw.get("tp", ""))
        return f"decode {found.group(1) if found else '?'}"
    return f"TP{p.tp}" + (f" EP{p.ep}" if p.ep > 1 else "") + (" ADP" if p.adp > 1 else "")


def _residual_ms(result: RowResult) -> float:
    """Predicted - measured step in ms (per-user tokens/s rows converted to ms a token)."""
    p = result.point
    if p.metric == "tokens_per_s_per_user":
        return 1000 / result.predicted - 1000 / p.value
    return result.predicted - p.value


def _low_batch(catalog: object) -> list[tuple[Case, RowResult]]:
    """Every latency row at a decode batch <= 4 of both files, disaggregated decode pools
    included, with its scored result."""
    tables = tables_for(catalog)  # type: ignore[arg-type]
    picked: list[tuple[Case, RowResult]] = []
    for path in (calibration_data.DATA, calibration_data.NEW_DATA):
        points, _ = read_points(path, catalog)  # type: ignore[arg-type]
        cases, _ = prepare(points, catalog)  # type: ignore[arg-type]
        for case, res in zip(cases, score(cases, catalog, tables), strict=True):  # type: ignore[arg-type]
            p = res.point
            per_user = p.regime == "batch1" and p.metric == "tokens_per_s_per_user"
            if not (res.engine == LLAMACPP or p.statistic != "mean" or res.batch > 4.5
                    or not (p.metric in LATENCY or per_user)):
                picked.append((case, res))
    return picked


def residuals() -> None:
    """Every low-batch latency row, disaggregated decode pools included, grouped."""
    catalog = load_catalog()
    groups: dict[tuple[str, ...], list[RowResult]] = {}
    for _, res in _low_batch(catalog):
        p = res.point
        arch = str(catalog.gpus[str(p.gpu)].architecture).split(" (")[0]
        weights = p.weight_precision + (" MTP" if p.speculative else "")
        group = (arch.replace(" + Grace CPU", ""), weights, cal.source_of(p), _layout(res))
        groups.setdefault(group, []).append(res)
    print("| family | weights | engine | layout | rows | batch | median predicted - measured "
          "(ms) | median error | median abs error |\n|---|---|---|---|---:|---|---:|---:|---:|")
    for key, rows in sorted(groups.items()):
        batches = sorted(r.batch for r in rows)
        print(f"| {' | '.join(key)} | {len(rows)} | {batches[0]:.1f}-{batches[-1]:.1f} | "
              f"{statistics.median(_residual_ms(r) for r in rows):+.2f} | "
              f"{statistics.median(r.error for r in rows) * 100:+.1f} % | "
              f"{statistics.median(abs(r.error) for r in rows) * 100:.1f} % |")


def _step_env(case: Case, res: RowResult, catalog: object) -> _Env:
    """The calculation list at the row's decode step (a disaggregated row: its decode pool at
    the batch it serves)."""
    tables = tables_for(catalog)  # type: ignore[arg-type]
    if case.point.disaggregated:
        inputs = {**_profile(case, catalog),  # type: ignore[arg-type]
                  "max_batch_per_replica": res.batch, "burstiness": 0.0}
        env = evaluate_choice(case.base, case.choice, tables, case.req, catalog,  # type: ignore[arg-type]
                              inputs)
        exchange = exchange_inputs(case.point, env)
        return (evaluate_choice(case.base, case.choice, tables, case.req,  # type: ignore[arg-type]
                                catalog, {**inputs, **exchange})  # type: ignore[arg-type]
                if exchange else env)
    return _REGIMES[case.point.regime](_Row(case, catalog, tables))[1]  # type: ignore[arg-type]


def by_bytes() -> None:
    """FP4 and FP8 rows at a decode batch <= 4: residual against the weights read per step."""
    catalog = load_catalog()
    print("| family | weights | engine | layout | row | batch | weights GB per GPU | weights "
          "(ms) | fixed: communication + overhead (ms) | predicted - measured (ms) |\n"
          "|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    lines: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for case, res in _low_batch(catalog):
        p = res.point
        if p.weight_precision not in ("fp4", "mxfp4", "fp8"):
            continue
        env = _step_env(case, res, catalog)
        weights = float(env["decode_weights_ms"])  # type: ignore[arg-type]
        rate = (float(env["gpu_bandwidth_tb_s"]) * float(env["mbu_weights"])  # type: ignore[arg-type]
                * float(env["efficiency_scale"]))  # type: ignore[arg-type]
        fixed = float(env["comm_fixed_ms"]) + float(env["step_overhead_ms"])  # type: ignore[arg-type]
        fam = family(case, catalog)
        prec = p.weight_precision + (" MTP" if p.speculative else "")
        print(f"| {fam} | {prec} | {cal.source_of(p)} | {_layout(res)} | {p.row} | "
              f"{res.batch:.1f} | {weights * rate:.2f} | {weights:.2f} | {fixed:.2f} | "
              f"{_residual_ms(res):+.2f} |")
        if not p.speculative:  # drafts add their own content-dependent share
            lines.setdefault((fam, p.weight_precision), []).append((weights, _residual_ms(res)))
    print("\n| family | weights | rows | weights (ms) | a (ms) | k (ms per weight ms) |"
          "\n|---|---|---:|---|---:|---:|")
    for (fam, prec), pts in sorted(lines.items()):
        xs = [x for x, _ in pts]
        ys = [y for _, y in pts]
        if len(pts) < 3 or max(xs) - min(xs) < 1e-6:
            continue
        k, a = statistics.linear_regression(xs, ys)
        print(f"| {fam} | {prec} | {len(pts)} | {min(xs):.2f}-{max(xs):.2f} | {a:+.2f} | "
              f"{k:+.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ep", action="store_true", help="expert-parallel rows only")
    parser.add_argument("--residuals", action="store_true",
                        help="group every low-batch row, disaggregated decode pools too")
    parser.add_argument("--bytes", action="store_true",
                        help="FP4/FP8 low-batch rows: residual against the weights read")
    args = parser.parse_args()
    if args.residuals:
        residuals()
        return
    if args.bytes:
        by_bytes()
        return
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
        parts = " | ".join(f"{part(env):.2f}" for _, part in PARTS)
        print(f"| {fam} | {p.row} | {cal.source_of(p)} | {p.gpu} | {p.weight_precision}{mtp} | "
              f"{p.tp}/{p.ep}/{p.adp} | {p.concurrency or 1} | {p.isl}/{p.osl} | {p.metric} | "
              f"{p.value:.2f} | {value:.2f} | {error * 100:+.1f} % | {parts} |")
    print("\n| family | rows | median | p90 | signed median |\n|---|---:|---:|---:|---:|")
    for fam, errs in sorted(errors.items(), key=lambda kv: kv[0].startswith("expert")):
        n, med, p90, bias = cal._stats(errs)
        print(f"| {fam} | {n} | {med * 100:.1f} % | {p90 * 100:.1f} % | {bias * 100:+.1f} % |")


if __name__ == "__main__":
    main()
