"""Fit llmsizer's efficiency constants on measured benchmarks, and cross-validate them.

    python benchmarks/calibrate.py            # fit, print constants and error tables
    python benchmarks/calibrate.py --write    # ... and update catalogs/constants.yaml + docs
    python benchmarks/calibrate.py --round-share [--write]   # fixed-concurrency TTFT terms only
    python benchmarks/calibrate.py --round-share --second-sources  # + dstack, per engine
    python benchmarks/calibrate.py --round-share --atom-recipes  # + ATOM's recipes for ATOM
    python benchmarks/calibrate.py --only a,b --no-cv [--write]   # refit only constants a, b
        (the others stay at their catalog fit; writes them and the in-sample tables only)

Data: tests/data/calibration_points.csv (the project's copy of the reference set).
Every prediction goes through the product itself (llmsizer.sizing.fidelity -> the engine's
compiled calculation list), so the fitted constants are the ones the product uses.

Method (deterministic; no random restarts): residual = log(predicted / measured) per row,
soft-L1 robust loss (scale 0.15, i.e. errors beyond ~15 % count linearly, not squared),
each (regime, metric) weighted so that regimes count, not row counts; projected
Levenberg-Marquardt with forward-difference Jacobians from a fixed start point within
fixed bounds. Datacenter rows (TensorRT-LLM / NIM) and llama.cpp batch-1 rows are fitted
separately: different engines, separate constants.

Cross-validation: leave one GPU type out and leave one model out (Llama-3.3-70B counts
as Llama-3.1-70B: same architecture); each fold is refitted from the same start on the
rest and scored on what was left out. Those figures are the ones to trust.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from llmsizer.model.catalog import Catalog, load_catalog  # noqa: E402
from llmsizer.sizing.evaluate import error_group  # noqa: E402
from llmsizer.sizing.fidelity import (  # noqa: E402
    LLAMACPP,
    Case,
    RowResult,
    SummaryRow,
    quantile,
    score,
    summarise,
)

sys.path.insert(0, str(ROOT / "benchmarks"))
from calibrate_round_share import (  # noqa: E402
    _ttft_rows,
    fit_round_share,
    round_share_main,
    write_round_share,
)
from calibration_data import (  # noqa: E402
    CONSTANTS,
    DOC,
    _fmt,
    _stats,
    dataset_of,
    load_cases,
    replace_section,
    set_constant,
    source_of,
    with_constants,
)
from calibration_fit import DATACENTER, LLAMA_CPP, cross_validate, fit  # noqa: E402


def table(rows: Sequence[SummaryRow]) -> str:
    out = ["| metric | regime | rows | median abs error | p90 abs error | bias (signed median) |",
           "|---|---|---:|---:|---:|---:|"]
    for s in rows:
        out.append(f"| {s.metric} | {s.regime} | {s.count} | {s.median_abs_error * 100:.1f} % | "
                   f"{s.p90_abs_error * 100:.1f} % | {s.median_signed_error * 100:+.1f} % |")
    return "\n".join(out)


def group_table(per_group: dict[str, list[RowResult]], what: str) -> str:
    out = [f"| held-out {what} | regime, metric | rows | median abs error | p90 abs error | bias |",
           "|---|---|---:|---:|---:|---:|"]
    for group, results in per_group.items():
        for s in summarise(results):
            out.append(f"| {group} | {s.regime}, {s.metric} | {s.count} | "
                       f"{s.median_abs_error * 100:.1f} % | {s.p90_abs_error * 100:.1f} % | "
                       f"{s.median_signed_error * 100:+.1f} % |")
    return "\n".join(out)


def _find(rows: Sequence[SummaryRow], regime: str, metric: str) -> SummaryRow:
    return next(s for s in rows if s.regime == regime and s.metric == metric)


THROUGHPUT = ("output_tokens_per_s", "total_tokens_per_s")
GROUPS = ("hopper_fp8", "hopper_bf16", "blackwell_fp4", "blackwell_fp8", "amd", "moe", "other")


def group_of(case: Case, catalog: Catalog) -> str:
    model = catalog.models[str(case.point.model)]
    return error_group(catalog, case.choice, model)



def facet_table(results: Sequence[RowResult], cases: dict[int, Case], catalog: Catalog,
                what: str) -> str:
    """Held-out error per group, model class and regime (throughput and TPOT/ITL rows)."""
    out = [f"| {what}: rows | metric | rows | median abs error | p90 abs error | bias |",
           "|---|---|---:|---:|---:|---:|"]
    facets: dict[tuple[str, str], list[float]] = {}
    for r in results:
        case = cases[id(r.point)]
        metric = ("throughput" if r.point.metric in THROUGHPUT else
                  "TPOT/ITL" if r.point.metric in ("tpot_ms", "itl_ms") else r.point.metric)
        if r.point.regime == "batch1":
            continue
        regime = "offline" if r.point.regime == "offline" else "fixed concurrency / rate"
        dense = "MoE" if catalog.models[str(r.point.model)].experts else "dense"
        for facet in (group_of(case, catalog), dense, regime, f"{dense}, {regime}"):
            facets.setdefault((facet, metric), []).append(r.error)
    order = {g: i for i, g in enumerate((*GROUPS, "dense", "MoE", "offline"))}
    for (facet, metric), errs in sorted(facets.items(),
                                        key=lambda kv: (order.get(kv[0][0], 99), kv[0])):
        n, med, p90, bias = _stats(errs)
        out.append(f"| {facet} | {metric} | {n} | {med * 100:.1f} % | {p90 * 100:.1f} % | "
                   f"{bias * 100:+.1f} % |")
    return "\n".join(out)


def acceptance(loso: Sequence[RowResult], logo: Sequence[RowResult], cases: dict[int, Case],
               catalog: Catalog) -> tuple[str, dict[str, float]]:
    """The issue-13 acceptance figures: leave-one-source-out on the new data, Hopper FP8
    leave-one-GPU-out on the first file."""
    def pick(results: Sequence[RowResult], want: Callable[[RowResult, Case], bool]) -> list[float]:
        return [r.error for r in results if want(r, cases[id(r.point)])]

    def new(r: RowResult) -> bool:
        return dataset_of(r.point) == "new"

    def moe(r: RowResult) -> bool:
        return bool(catalog.models[str(r.point.model)].experts)

    fp4_dense = pick(loso, lambda r, c: new(r) and not moe(r) and r.point.regime == "offline"
                     and r.point.metric in THROUGHPUT and group_of(c, catalog) == "blackwell_fp4")
    moe_tput = pick(loso, lambda r, c: new(r) and moe(r) and r.point.metric in THROUGHPUT)
    tpot = pick(loso, lambda r, c: new(r) and r.point.regime == "concurrency"
                and r.point.metric in ("tpot_ms", "itl_ms")
                and getattr(r.point, "statistic", "mean") == "mean")
    hopper = pick(logo, lambda r, c: not new(r) and r.point.regime == "offline"
                  and r.point.metric in THROUGHPUT and group_of(c, catalog) == "hopper_fp8")
    first = pick(logo, lambda r, c: not new(r) and r.point.regime == "offline"
                 and r.point.metric in THROUGHPUT)
    rows = [("Blackwell FP4 dense, offline throughput (leave-one-source-out)", fp4_dense,
             "<= 12 % / <= 30 %"),
            ("MoE throughput, all regimes (leave-one-source-out)", moe_tput, "<= 20 % median"),
            ("fixed-concurrency TPOT (leave-one-source-out)", tpot, "<= 20 % median"),
            ("Hopper FP8 dense offline throughput, first file (leave-one-GPU-out)", hopper,
             "no worse than before"),
            ("all offline throughput of the first file (leave-one-GPU-out; before: 4.8 % / "
             "15.5 %)", first, "<= 4.8 % / <= 15.5 %")]
    out = ["| figure | rows | median abs error | p90 abs error | bias | target (median / p90) |",
           "|---|---:|---:|---:|---:|---|"]
    heads: dict[str, float] = {}
    for title, errs, target in rows:
        n, med, p90, bias = _stats(errs)
        out.append(f"| {title} | {n} | {med * 100:.1f} % | {p90 * 100:.1f} % | "
                   f"{bias * 100:+.1f} % | {target} |")
    return "\n".join(out), heads


POOLED_GROUPS: set[str] = set()  # groups with too few held-out rows: the pooled spread


def confidence(results: Sequence[RowResult], cases: dict[int, Case], catalog: Catalog
               ) -> tuple[dict[str, float], str]:
    """p10/p90 of the signed held-out error of throughput rows per group (both
    cross-validations pooled: a new GPU and a new engine release are both ways to be wrong)."""
    errs: dict[str, list[float]] = {g: [] for g in GROUPS}
    for r in results:
        if r.point.metric in THROUGHPUT and r.point.regime != "batch1":
            errs[group_of(cases[id(r.point)], catalog)].append(r.error)
    pooled = [e for g in GROUPS for e in errs[g]]
    values: dict[str, float] = {}
    out = ["| group | held-out predictions | p10 (predicted / measured - 1) | p90 |",
           "|---|---:|---:|---:|"]
    for g in GROUPS:
        # a group with too few rows takes the pooled spread (stated in the table)
        data = errs[g] if len(errs[g]) >= 10 else pooled
        values[f"confidence_{g}_p10"] = quantile(data, 0.1)
        values[f"confidence_{g}_p90"] = quantile(data, 0.9)
        note = "" if len(errs[g]) >= 10 else " (too few rows: all groups pooled)"
        if note:
            POOLED_GROUPS.add(g)
        out.append(f"| {g}{note} | {len(errs[g])} | {values[f'confidence_{g}_p10'] * 100:+.1f} % | "
                   f"{values[f'confidence_{g}_p90'] * 100:+.1f} % |")
    return values, "\n".join(out)


def uncalibrated_derating(logo: Sequence[RowResult]) -> float:
    """1 / (1 + p75 of the signed throughput error on GPUs the fit did not see): three times
    in four an unseen GPU is over-predicted by no more than this, so crediting an
    uncalibrated option with this share of its modelled speed removes most of the optimism."""
    errs = [r.error for r in logo if r.point.metric in THROUGHPUT and r.point.regime != "batch1"]
    return 1 / (1 + max(0.0, quantile(errs, 0.75)))


def headline(logo: Sequence[SummaryRow], logo_b1: Sequence[SummaryRow]) -> dict[str, float]:
    off = _find(logo, "offline", "output_tokens_per_s")
    return {
        "calibration_offline_median_error": off.median_abs_error,
        "calibration_offline_p90_error": off.p90_abs_error,
        "calibration_itl_median_error": _find(logo, "concurrency", "itl_ms").median_abs_error,
        "calibration_ttft_median_error": _find(logo, "concurrency", "ttft_ms").median_abs_error,
        "calibration_batch1_median_error":
            _find(logo_b1, "batch1", "tokens_per_s_per_user").median_abs_error,
    }


# --- writing -------------------------------------------------------------------------


SOURCES = {
    "mbu_weights": "{fit}; at the physical bound: the per-step overhead absorbs the rest",
    "mbu_kv": "{fit}",
    "mfu_decode_8bit": "{fit}; FP8-path rows (H100/H200/GH200/L40S FP8, NIM FP8)",
    "mfu_decode_16bit": "{fit}; BF16/FP16-path rows (A100 FP16 offline, H100/H200 BF16 online)",
    "mfu_prefill_8bit": "{fit}; FP8-path rows",
    "mfu_prefill_16bit": "{fit}; BF16/FP16-path rows",
    "mfu_decode_4bit": "{fit}; FP4-path rows (B200/GB200/RTX PRO 6000/MI355X FP4)",
    "mfu_prefill_4bit": "{fit}; FP4-path rows",
    "mfu_attention": "{fit}; decode attention at the KV precision's rate (matters for MLA)",
    "stack_efficiency_cdna3": "{fit}; MI300X/MI325X rows (InferenceX SGLang): AMD serving "
                              "stacks vs the NVIDIA-fitted efficiencies",
    "stack_efficiency_cdna4": "{fit}; MI355X rows (InferenceX SGLang and ATOM)",
    "alltoall_latency_us": ("{fit}: per expert-parallel dispatch or combine, two per MoE layer, "
                            "under attention data-parallel (without it the experts are "
                            "combined by all-reduce)"),
    "moe_compute_factor": "{fit}; set mostly by Mixtral-8x7B (wide experts)",
    "expert_slot_overhead": "{fit}; work per routed expert, token and layer beyond the "
                            "expert's matrix products (narrow experts: Qwen3-30B-A3B)",
    "step_overhead_ms": "{fit}: scheduler, sampling and launch time per decode step",
    "allreduce_latency_us": "{fit}: per all-reduce, two per layer",
    "link_efficiency": "{fit}: achieved share of one-direction link bandwidth (NVLink and PCIe alike)",
    "trtllm_runtime_reserve_gb": "{fit}: activations + runtime outside the KV pool under "
                                 "TensorRT-LLM's TensorRT-engine backend (v0.17 tables)",
    "trtllm_pytorch_runtime_reserve_gb": "{fit}: the same under TensorRT-LLM's PyTorch backend "
                                         "(v0.19 on; TensorRT-LLM 1.x releases)",
    "prefill_chunk_tokens": "{fit}; TTFT rows (NIM fixed concurrency, Triton request rate)",
    "ttft_overhead_ms": "{fit}; TTFT rows: request admission, tokenisation, first sampling",
    "llamacpp_mbu": "{fit_b1}: llama.cpp batch-1 bandwidth efficiency (weights and KV)",
    "llamacpp_step_overhead_ms": "{fit_b1}: llama.cpp time per token beyond the memory reads",
}


def write(values: dict[str, float], heads: dict[str, float], conf: dict[str, float],
          sections: dict[str, str], n_dc: int, n_b1: int) -> None:
    when = dt.date.today().isoformat()
    fits = {"fit": f"fitted {when} by benchmarks/calibrate.py on the {n_dc} TensorRT-LLM/NIM/"
                   "InferenceX rows of calibration_points.csv and measured_blackwell_moe.csv",
            "fit_b1": f"fitted {when} by benchmarks/calibrate.py on the {n_b1} llama.cpp batch-1 rows "
                      "of calibration_points.csv on catalog GPUs"}
    text = CONSTANTS.read_text(encoding="utf-8")
    cat = load_catalog()
    for name, value in values.items():
        text = set_constant(text, name, value, SOURCES[name].format(**fits),
                            cat.constants[name].unit)
    for name, value in heads.items():
        text = set_constant(text, name, round(value, 3),
                            f"leave-one-GPU-out cross-validation, benchmarks/calibrate.py, {when}",
                            "fraction")
    for name, value in conf.items():
        if name == "uncalibrated_derating":
            text = set_constant(text, name, round(value, 3),
                                "1 / (1 + p75 of the signed throughput error of leave-one-GPU-out "
                                f"cross-validation), benchmarks/calibrate.py, {when}: the share "
                                "of its modelled speed an option without calibration rows is "
                                "credited with", "fraction")
            continue
        group = name.removeprefix("confidence_").rsplit("_", 1)[0]
        text = set_constant(text, name, round(value, 3),
                            f"{name.rsplit('_', 1)[1]} of predicted / measured - 1 over the "
                            "held-out throughput rows of "
                            + ("all groups pooled (group " + group + " has fewer than 10)"
                               if group in POOLED_GROUPS else f"group {group}")
                            + " (leave-one-GPU-out and "
                            f"leave-one-source-out pooled), benchmarks/calibrate.py, {when}",
                            "fraction")
    write_files(text, sections)


def write_files(constants: str, sections: dict[str, str]) -> None:
    """constants.yaml as ``constants``, and docs/calibration.md with ``sections`` replaced."""
    CONSTANTS.write_text(constants, encoding="utf-8")
    doc = DOC.read_text(encoding="utf-8")
    for name, body in sections.items():
        doc = replace_section(doc, name, body)
    DOC.write_text(doc, encoding="utf-8")
    print(f"wrote {CONSTANTS.relative_to(ROOT)} and {DOC.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update constants.yaml and docs")
    parser.add_argument("--round-share", action="store_true",
                        help="fit only first_token_engine_steps and closed_loop_round_share "
                             "(about a minute)")
    parser.add_argument("--second-sources", action="store_true",
                        help="with --round-share: add tests/data/measured_second_sources.csv "
                             "and leave one source out within each engine (a report)")
    parser.add_argument("--atom-recipes", action="store_true",
                        help="with --round-share: add tests/data/measured_atom_recipes.csv and "
                             "fit ATOM's held-out source on ATOM's other one only (a report)")
    parser.add_argument("--only", default="",
                        help="comma-separated constants to refit; the others keep their "
                             "catalog values")
    parser.add_argument("--no-cv", action="store_true",
                        help="skip the cross-validation; --write then updates the refitted "
                             "constants and the in-sample tables only")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes for the folds (default 1: the machine is shared)")
    args = parser.parse_args()
    if args.round_share:
        round_share_main(args.write, args.second_sources, args.atom_recipes)
        return
    t0 = time.perf_counter()

    catalog = load_catalog()
    cases, n_rows, n_cases = load_cases(catalog)
    dc = [c for c in cases if c.engine != LLAMACPP]
    b1 = [c for c in cases if c.engine == LLAMACPP and c.point.regime == "batch1"]
    by_id = {id(c.point): c for c in cases}
    print(f"{n_rows} rows: {len(dc)} datacenter (TensorRT-LLM, NIM, InferenceX), {len(b1)} "
          f"llama.cpp batch-1, {n_rows - n_cases} not interpreted", flush=True)

    if args.no_cv:
        only_main(args, dc, catalog, t0)
        return
    fitted = fit(dc, DATACENTER, catalog)
    datacenter = with_constants(catalog, fitted)  # llama.cpp rows read mfu_* for compute
    fitted |= fit(b1, LLAMA_CPP, datacenter)
    final = with_constants(catalog, fitted)
    print("\nfitted constants:")
    for name, value in fitted.items():
        print(f"  {name:28} {_fmt(value):>10}  (was {_fmt(catalog.constant(name))})")

    insample_rows = score(dc, final)
    insample = summarise(insample_rows) + summarise(score(b1, final))
    by_gpu: Callable[[Case], str] = lambda c: str(c.point.gpu)  # noqa: E731
    by_source: Callable[[Case], str] = lambda c: source_of(c.point)  # noqa: E731
    print("leave one GPU out:", flush=True)
    warm = {n: v for n, v in fitted.items() if n in DATACENTER}
    logo_rows, logo_groups = cross_validate(dc, DATACENTER, catalog, by_gpu, args.jobs, warm)
    print("leave one source out:", flush=True)
    loso_rows, loso_groups = cross_validate(dc, DATACENTER, catalog, by_source, args.jobs, warm)
    logo_b1_rows, logo_b1_groups = cross_validate(b1, LLAMA_CPP, datacenter, by_gpu, args.jobs)
    logo = summarise(logo_rows)
    logo_b1 = summarise(logo_b1_rows)
    loso = summarise(loso_rows)
    accept, _ = acceptance(loso_rows, logo_rows, by_id, catalog)
    conf, conf_table = confidence(logo_rows + loso_rows, by_id, catalog)
    conf["uncalibrated_derating"] = uncalibrated_derating(logo_rows)
    conf_table += (f"\n\nDerating of an option without calibration rows "
                   f"(`uncalibrated_derating`): {conf['uncalibrated_derating']:.3f} = 1 / (1 + p75 "
                   "of the signed leave-one-GPU-out throughput error, floored at 0).")

    sections = {
        "constants": "\n".join(["| constant | value | was |", "|---|---:|---:|"] + [
            f"| `{n}` | {_fmt(v)} | {_fmt(catalog.constant(n))} |" for n, v in fitted.items()]),
        "insample": table(insample),
        "insample-facets": facet_table(insample_rows, by_id, catalog, "in-sample"),
        "logo": table(logo + logo_b1),
        "loso": table(loso),
        "logo-facets": facet_table(logo_rows, by_id, catalog, "GPU left out"),
        "loso-facets": facet_table(loso_rows, by_id, catalog, "source left out"),
        "logo-groups": group_table(logo_groups | logo_b1_groups, "GPU"),
        "loso-groups": group_table(loso_groups, "source"),
        "acceptance": accept,
        "confidence": conf_table,
    }
    # the register's headline stays the first file's (its TTFT rows are what the formula
    # models; the second file's closed-loop TTFT is reported above, not fitted)
    heads = headline(summarise([r for r in logo_rows if dataset_of(r.point) == "old"]), logo_b1)
    sections["headline"] = "\n".join([
        "| figure (leave-one-GPU-out) | value | target |", "|---|---:|---:|",
        f"| offline throughput, median abs error | "
        f"{heads['calibration_offline_median_error'] * 100:.1f} % | <= 15 % |",
        f"| offline throughput, p90 abs error | "
        f"{heads['calibration_offline_p90_error'] * 100:.1f} % | <= 35 % |",
        f"| fixed-concurrency ITL, median abs error | "
        f"{heads['calibration_itl_median_error'] * 100:.1f} % | <= 15 % |",
        f"| fixed-concurrency TTFT, median abs error | "
        f"{heads['calibration_ttft_median_error'] * 100:.1f} % | <= 25 % |",
        f"| batch-1 decode (llama.cpp), median abs error | "
        f"{heads['calibration_batch1_median_error'] * 100:.1f} % | <= 20 % |",
    ])
    for title, key in (("in-sample", "insample"), ("in-sample by group", "insample-facets"),
                       ("leave-one-GPU-out", "logo"), ("leave-one-source-out", "loso"),
                       ("acceptance", "acceptance"), ("confidence", "confidence"),
                       ("headline", "headline"), ("GPU out by group", "logo-facets"),
                       ("source out by group", "loso-facets"),
                       ("per held-out GPU", "logo-groups"), ("per held-out source", "loso-groups")):
        print(f"\n{title}\n{sections[key]}")
    pair, _, _, round_table = fit_round_share(dc, final)
    print(f"\nfirst_token_engine_steps, closed_loop_round_share {pair}\n{round_table}")
    print(f"\n{time.perf_counter() - t0:.1f} s")
    if args.write:
        write(fitted, heads, conf, sections, len(dc), len(b1))
        write_round_share(pair, round_table, len(_ttft_rows(dc)))


def only_main(args: argparse.Namespace, dc: list[Case], catalog: Catalog, t0: float) -> None:
    """Refit the constants named by --only (all datacenter constants when empty) on every
    datacenter row, the others held at their catalog values; no cross-validation. Writes the
    refitted constants and the in-sample tables (the cross-validated tables keep the run that
    wrote them: docs/calibration.md says which)."""
    names = [n for n in args.only.split(",") if n] or list(DATACENTER)
    params = {n: DATACENTER[n] for n in names}
    fitted = fit(dc, params, catalog)
    final = with_constants(catalog, fitted)
    for name, value in fitted.items():
        print(f"  {name:28} {_fmt(value):>10}  (was {_fmt(catalog.constant(name))})")
    rows = score(dc, final)
    by_id = {id(c.point): c for c in dc}
    sections = {
        "constants": "\n".join(["| constant | value | was |", "|---|---:|---:|"] + [
            f"| `{n}` | {_fmt(final.constant(n))} | {_fmt(catalog.constant(n))} |"
            for n in DATACENTER]),
        "insample": table(summarise(rows)),
        "insample-facets": facet_table(rows, by_id, catalog, "in-sample"),
    }
    for key, body in sections.items():
        print(f"\n{key}\n{body}")
    print(f"\n{time.perf_counter() - t0:.1f} s")
    if args.write:
        when = dt.date.today().isoformat()
        text = CONSTANTS.read_text(encoding="utf-8")
        fits = {"fit": f"fitted {when} by benchmarks/calibrate.py on the {len(dc)} "
                       "TensorRT-LLM/NIM/InferenceX rows of calibration_points.csv and "
                       "measured_blackwell_moe.csv; the other constants held at their "
                       "previous fit",
                "fit_b1": ""}
        for name, value in fitted.items():
            text = set_constant(text, name, value, SOURCES[name].format(**fits),
                                catalog.constants[name].unit)
        write_files(text, sections)


if __name__ == "__main__":
    main()
