"""How far the mixture-of-experts batch per replica is from its fixed point (session 19).

A step reads the share of experts its batch touches, s(B) = 1 - (1 - k/E)^B, and every batch
limit L shrinks as s grows. The product solves the limits at the share of the largest batch
the load may cause (the first estimate b1 = batch_per_replica_first) and again at b1, and
served min(b1, L(s(b1))) before the third solve (model/calculations/first_pass.py). The
largest batch whose own experts still allow it, b* = max{b : L(s(b)) >= b}, may be larger.

Since the third solve (model/calculations/third_solve.py) the product reads the experts at
the batch where the line through the two solves' smallest limits meets the batch, c, and
serves min(c, L(s(c))). This script measures it against two references, both the calculation
list itself with one row changed:
- today (before the third solve): ``batch_experts_read`` reads the first estimate
  (``batch_experts_estimate``), which is the list as it was (:data:`TODAY_PROGRAM`);
- b* by bisection on ``served(b) >= b``, the list with ``batch_per_replica_first`` read as a
  number b and the experts read at min(b, largest batch) (:data:`FORCED`; the limits only
  shrink as b grows; ``--scan`` checks that by a linear scan). Replicas, GPUs, TPOT and TTFT
  at b* are the list's own rows.

Two views per account:
- per option: every feasible aggregated MoE option (disaggregated decode pools keep the
  largest batch's share on purpose, decode.py): batch served today, by the product and at b*,
  the GPUs of each, and whether the product's own slo_met / TPOT / TTFT rows hold; checked on
  every option: today's batch <= the product's <= b*;
- per plan: the account sized by the engine as shipped (the product), then with every
  evaluation of the list replaced by today's and by the fixed-point one (``program`` patched
  in the sizing modules): the GPUs each plan buys.

    python benchmarks/moe_fixed_point.py              # shipped MoE accounts + the grid
    python benchmarks/moe_fixed_point.py --shipped    # shipped accounts only
    python benchmarks/moe_fixed_point.py --scan 40    # also check bisection by linear scan
    python benchmarks/moe_fixed_point.py --worst 15   # list the 15 largest plan gaps
    python benchmarks/moe_fixed_point.py --save a.json  # every plan and option's figures
    python benchmarks/moe_fixed_point.py --floored b.json  # the percentile-target grid

Nothing else is written: two --save files compare two versions of the product per plan and
per option (``--compare a.json b.json``, no sizing). ``--floored`` sizes, with the product
only (no b*, about 2 minutes), a second grid whose targets are a p95 first token or a p95
whole answer (limits solved with a floor at 0, which the third solve's line must not pass
through), with 800-token answers and arrival-rate loads too, and writes each plan's and
option's GPUs; ``--compare-floored a.json b.json`` compares two such files.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import statistics
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from llmsizer.base.errors import LlmsizerError  # noqa: E402
from llmsizer.inputs.loader import load, load_from_text  # noqa: E402
from llmsizer.model import calculations as calc  # noqa: E402
from llmsizer.model.calculations.first_pass import FIRST  # noqa: E402
from llmsizer.model.catalog import load_catalog  # noqa: E402
from llmsizer.model.expr import MAX, MIN, Expr, Program, Ref, compile_program  # noqa: E402
from llmsizer.sizing import engine, evaluate  # noqa: E402
from llmsizer.sizing.results import Result  # noqa: E402

FORCED = "_forced_first_estimate"
SHIPPED = ["moe-chat", "frontier-moe-rack", "enterprise-multi"]
MODELS = ["mixtral-8x7b", "qwen3-30b-a3b", "gpt-oss-120b", "deepseek-v3", "kimi-k2"]
GPUS = ["l40s", "h100-sxm", "h200-sxm", "b200"]
TTFT_S = [0.3, 1.0, 2.0, 5.0]
TOKENS_PER_S = [10, 25, 50]
PROMPTS = [500, 2000, 8000]
USERS = [64, 512]

Tables = dict[str, dict[str, dict[str, float]]]


def _program_with(changed: dict[str, Expr]) -> Program:
    return compile_program([(c.name, changed.get(c.name, c.expr)) for c in calc.CALCULATIONS])


ORIGINAL = calc.program()
FORCED_PROGRAM = _program_with({
    "batch_per_replica" + FIRST: Ref(FORCED),
    "batch_experts_read": MAX(1, MIN(Ref("batch_experts_bound"), Ref(FORCED)))})
TODAY_PROGRAM = _program_with({"batch_experts_read": Ref("batch_experts_estimate")})


def run_forced(env: dict[str, Any], tables: Tables, b: float) -> dict[str, Any]:
    e = {**env, FORCED: float(b)}
    FORCED_PROGRAM(e, tables)
    return e


def aggregated_moe(v: dict[str, Any]) -> bool:
    return float(v.get("experts", 0)) > 0 and float(v.get("disagg_prefill_gpus", 0)) <= 0


def fixed_point(env: dict[str, Any], tables: Tables) -> tuple[int, dict[str, Any]]:
    """b* = the largest integer b whose served batch, with the experts read at b, is b; and
    the list evaluated there. ``env`` holds the inputs (and possibly stale rows)."""
    now = dict(env)
    ORIGINAL(now, tables)
    b1 = max(1, int(float(now["batch_per_replica" + FIRST])))

    def holds(b: int) -> bool:
        return float(run_forced(env, tables, b)["batch_per_replica"]) >= b

    if not holds(b1):  # the first estimate is above the second limits: b* below it
        lo, hi = 0, b1
    else:
        lo = b1
        hi = max(b1, int(float(now["batch_experts_bound"]))) + 1
        while holds(hi):  # the limits never exceed the engine cap; this ends
            lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)
    b = max(1, lo)
    return b, run_forced(env, tables, b)


def today(env: dict[str, Any], tables: Tables) -> tuple[int, dict[str, Any]]:
    """The list as it was before the third solve: the experts read at the first estimate."""
    e = dict(env)
    TODAY_PROGRAM(e, tables)
    return int(float(e["batch_per_replica"])), e


Solver = Callable[[dict[str, Any], Tables], tuple[int, dict[str, Any]]]


def program_with(solver: Solver) -> Callable[[dict[str, Any], Tables], None]:
    """Drop-in for the list's compiled program: the MoE batch's experts read at ``solver``'s
    batch (aggregated MoE options; every other option as the product evaluates it)."""
    def run(env: dict[str, Any], tables: Tables) -> None:
        probe = dict(env)
        ORIGINAL(probe, tables)
        if not aggregated_moe(probe):
            env.update(probe)
            return
        env.update(solver(env, tables)[1])
        env.pop(FORCED, None)
    return run


PATCHED = (evaluate, engine)


def size_with(solver: Solver | None, loaded: Any) -> Result:
    cat = load_catalog()
    prog: Callable[[], Any] = calc.program if solver is None else (
        lambda: program_with(solver))
    saved = [m.program for m in PATCHED]
    try:
        for m in PATCHED:
            m.program = prog  # type: ignore[attr-defined]
        return engine.size(loaded, cat)
    finally:
        for m, p in zip(PATCHED, saved, strict=True):
            m.program = p  # type: ignore[attr-defined]


@dataclass
class OptionGap:
    case: str
    option: str
    served: float
    fixed: int
    gpus_now: float
    gpus_fixed: float
    gpus_today: float
    today: float
    slo_met: bool
    tpot_ok: bool
    ttft_ok: bool


@dataclass
class PlanGap:
    case: str
    now: int  # the product
    fixed: int
    today: int  # before the third solve


def option_gaps(case: str, r: Result, scan: bool) -> Iterator[OptionGap]:
    for w in r.workloads:
        for o in w.options:
            v: dict[str, Any] = {**r.account_inputs, **w.inputs, **o.values}
            if not o.feasible or not aggregated_moe(v):
                continue
            again = dict(v)
            ORIGINAL(again, r.tables)
            for k in ("batch_per_replica", "gpus", "ttft_ms", "tpot_ms"):
                assert float(again[k]) == float(v[k]), (case, o.id, k)
            b, at = fixed_point(v, r.tables)
            _, old = today(v, r.tables)
            assert float(old["batch_per_replica"]) <= float(v["batch_per_replica"]) <= b, \
                (case, o.id, old["batch_per_replica"], v["batch_per_replica"], b)
            assert float(v["batch_served"]) <= float(v["batch_experts_read"]), (case, o.id)
            if scan:
                served = [float(run_forced(v, r.tables, x)["batch_per_replica"]) >= x
                          for x in range(1, int(float(v["max_batch_per_replica"])) + 2)]
                assert b == max([x for x, ok in enumerate(served, 1) if ok], default=1), \
                    (case, o.id, b)
            tpot_t, ttft_t = float(v["target_tpot_ms"]), float(v["target_ttft_ms"])
            yield OptionGap(case, o.id, float(v["batch_per_replica"]), b, float(v["gpus"]),
                            float(at["gpus"]), float(old["gpus"]),
                            float(old["batch_per_replica"]), bool(v["slo_met"]),
                            tpot_t <= 0 or float(v["tpot_ms"]) <= tpot_t * (1 + 1e-9),
                            ttft_t <= 0 or float(v["ttft_ms"]) <= ttft_t * (1 + 1e-9))


def grid() -> Iterator[tuple[str, dict[str, Any]]]:
    for model, gpu, ttft, tps, prompt, users in itertools.product(
            MODELS, GPUS, TTFT_S, TOKENS_PER_S, PROMPTS, USERS):
        name = f"{model} {gpu} ttft {ttft} s {tps} tok/s prompt {prompt} users {users}"
        yield name, {
            "schema_version": 1, "account": {"name": "grid"},
            "workloads": [{"name": "w", "model": model, "concurrent_users": users,
                           "prompt_tokens": prompt, "output_tokens": 400,
                           "targets": {"tokens_per_s_per_user": tps, "ttft_s": ttft}}],
            "hardware": {"gpus": [gpu], "weight_precisions": ["fp8", "bf16", "fp4", "mxfp4"],
                         "kv_precisions": ["fp8"]},
            "policy": {"headroom": 0.25, "survive_node_loss": False,
                       "disaggregated": "never", "deployment": "on_prem"}}


def floored_grid() -> Iterator[tuple[str, dict[str, Any]]]:
    """Targets a p95 first token or whole answer (their batch limits stop at 0)."""
    loads = [("concurrent_users", 64), ("concurrent_users", 512), ("requests_per_s", 5),
             ("requests_per_s", 30)]
    targets = [("e2e_p95_s", 12.5), ("e2e_p95_s", 30), ("ttft_p95_s", 0.5), ("ttft_p95_s", 2)]
    for model, gpu, (target, value), tps, prompt, (rate, n) in itertools.product(
            MODELS, [*GPUS, "gb300"], targets, [10, 40], [500, 3000, 8000], loads):
        yield f"{model} {gpu} {target} {value} {tps} tok/s prompt {prompt} {rate} {n}", {
            "schema_version": 1, "account": {"name": "grid"},
            "workloads": [{"name": "w", "model": model, rate: n, "prompt_tokens": prompt,
                           "output_tokens": 800,
                           "targets": {"tokens_per_s_per_user": tps, target: value}}],
            "hardware": {"gpus": [gpu], "weight_precisions": ["fp8", "fp4"],
                         "kv_precisions": ["fp8"]},
            "policy": {"headroom": 0.25, "survive_node_loss": False,
                       "disaggregated": "never", "deployment": "on_prem"}}


def save_floored(path: Path) -> None:
    cat, out = load_catalog(), {}
    for case, d in floored_grid():
        try:
            r = engine.size(load_from_text(yaml.safe_dump(d), "grid.yaml"), cat)
        except LlmsizerError:
            continue
        w = r.workloads[0]
        out[case] = {"plan": r.totals.gpus_purchased if w.recommended else None,
                     "options": {o.id: float(o.values["gpus"]) for o in w.options
                                 if o.feasible}}
    path.write_text(json.dumps(out), encoding="utf-8")
    print(f"{len(out)} cases sized, written to {path}")


def compare_floored(before: Path, after: Path) -> None:
    a, b = (json.loads(f.read_text(encoding="utf-8")) for f in (before, after))
    cases = [c for c in a if c in b]
    plans = [c for c in cases if a[c]["plan"] is not None and b[c]["plan"] is not None]
    opts = [(c, o) for c in cases for o in a[c]["options"] if o in b[c]["options"]]
    up = sorted(((c, o) for c, o in opts if b[c]["options"][o] > a[c]["options"][o]),
                key=lambda k: a[k[0]]["options"][k[1]] / b[k[0]]["options"][k[1]])
    print(f"{len(plans)} plans: GPUs up on {sum(b[c]['plan'] > a[c]['plan'] for c in plans)}, "
          f"down on {sum(b[c]['plan'] < a[c]['plan'] for c in plans)}; {len(opts)} options: "
          f"up on {len(up)}, down on "
          f"{sum(b[c]['options'][o] < a[c]['options'][o] for c, o in opts)}")
    for c, o in up[:10]:
        print(f"  up: {c} {o}: {a[c]['options'][o]:g} -> {b[c]['options'][o]:g}")


def _q(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(p * (len(s) - 1) + 0.5))]


def _spread(label: str, pairs: list[tuple[float, float]]) -> None:
    """``label``: how many more GPUs the first member of each pair buys than the second."""
    extra = [a / b - 1 for a, b in pairs if b > 0]
    over = sum(a >= 1.2 * b for a, b in pairs if b > 0)
    print(f"{label}: median {statistics.median(extra):+.1%}, p90 {_q(extra, 0.9):+.1%}, "
          f"worst {max(extra):+.1%}; > 0 on {sum(x > 0 for x in extra)}, >= 20 % on {over}, "
          f"< 0 on {sum(x < 0 for x in extra)} of {len(extra)}")


def summary(title: str, gaps: list[OptionGap], plans: list[PlanGap]) -> None:
    print(f"\n== {title}: {len(gaps)} feasible aggregated MoE options, {len(plans)} plans")
    if gaps:
        for label, served in (("today", [g.today for g in gaps]),
                              ("product", [g.served for g in gaps])):
            ratio = [g.fixed / max(1.0, x) for g, x in zip(gaps, served, strict=True)]
            print(f"b*/batch {label}: median {statistics.median(ratio):.2f}, p90 "
                  f"{_q(ratio, 0.9):.2f}, worst {max(ratio):.2f}; equal on "
                  f"{sum(x == 1 for x in ratio)}")
        _spread("option GPUs today / at b* - 1", [(g.gpus_today, g.gpus_fixed) for g in gaps])
        _spread("option GPUs product / at b* - 1", [(g.gpus_now, g.gpus_fixed) for g in gaps])
        print(f"batch product > today on {sum(g.served > g.today for g in gaps)} options "
              "(below today, above b*: never, asserted)")
        bad = [g for g in gaps if not (g.slo_met and g.tpot_ok and g.ttft_ok)]
        print(f"targets, product: slo_met and TPOT/TTFT rows hold on {len(gaps) - len(bad)} "
              f"of {len(gaps)}")
        for g in bad[:5]:
            print("   misses:", g.case, g.option, g.served, g.fixed)
    if plans:
        _spread("plan GPUs today / at b* - 1", [(p.today, p.fixed) for p in plans])
        _spread("plan GPUs product / at b* - 1", [(p.now, p.fixed) for p in plans])
        _spread("plan GPUs product / today - 1", [(p.now, p.today) for p in plans])


def run_case(case: str, loaded: Any, scan: bool,
             gaps: list[OptionGap], plans: list[PlanGap]) -> None:
    now = size_with(None, loaded)
    fixed, old = size_with(fixed_point, loaded), size_with(today, loaded)
    gaps.extend(option_gaps(case, now, scan))
    if all(w.recommended for r in (now, fixed, old) for w in r.workloads):
        plans.append(PlanGap(case, now.totals.gpus_purchased, fixed.totals.gpus_purchased,
                             old.totals.gpus_purchased))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shipped", action="store_true", help="shipped accounts only")
    ap.add_argument("--scan", type=int, default=0, help="check bisection on N options")
    ap.add_argument("--worst", type=int, default=10, help="list the N largest plan gaps")
    ap.add_argument("--models", nargs="*", default=MODELS)
    ap.add_argument("--save", type=Path, help="write every plan and option's figures (JSON)")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"),
                    help="compare two --save files' product GPUs and batches; no sizing")
    ap.add_argument("--floored", type=Path, help="size the percentile-target grid, write it")
    ap.add_argument("--compare-floored", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    a = ap.parse_args()
    if a.compare:
        compare(*a.compare)
        return
    if a.floored:
        save_floored(a.floored)
        return
    if a.compare_floored:
        compare_floored(*a.compare_floored)
        return
    gaps: list[OptionGap] = []
    plans: list[PlanGap] = []
    for name in SHIPPED:
        run_case(name, load(ROOT / "inputs" / f"{name}.yaml"), a.scan > 0, gaps, plans)
    for p in plans:
        print(f"{p.case}: plan buys {p.today} GPUs today, {p.now} with the third solve, "
              f"{p.fixed} at the fixed point")
    by_case: dict[str, list[OptionGap]] = {}
    for g in gaps:
        by_case.setdefault(g.case, []).append(g)
    for case, gs in by_case.items():
        worst = max(gs, key=lambda g: g.gpus_now / max(1.0, g.gpus_fixed))
        print(f"  {case}: {len(gs)} options, largest option gap {worst.option}: batch "
              f"{worst.served:g} -> {worst.fixed}, GPUs {worst.gpus_now:g} -> "
              f"{worst.gpus_fixed:g}")
    summary("shipped accounts", gaps, plans)
    if a.shipped:
        return
    ggaps: list[OptionGap] = []
    gplans: list[PlanGap] = []
    refused = 0
    for k, (case, d) in enumerate(grid()):
        if d["workloads"][0]["model"] not in a.models:
            continue
        try:
            loaded = load_from_text(yaml.safe_dump(d), "grid.yaml")
        except LlmsizerError:
            refused += 1
            continue
        run_case(case, loaded, k < a.scan, ggaps, gplans)
    print(f"\ngrid: {refused} cases refused by the loader")
    summary("grid", ggaps, gplans)
    for model in a.models:
        mine = [p for p in gplans if p.case.startswith(model + " ")]
        if mine:
            summary(f"grid, {model}", [g for g in ggaps if g.case.startswith(model + " ")], mine)
    print("\nplans >= 20 % over the fixed point's (today; product), by first-token target:")
    for ttft in TTFT_S:
        mine = [p for p in gplans if f" ttft {ttft} s " in p.case]
        print(f"  {ttft} s: {sum(p.today >= 1.2 * p.fixed for p in mine)}; "
              f"{sum(p.now >= 1.2 * p.fixed for p in mine)} of {len(mine)}")
    print("\nlargest plan gaps (GPUs bought today -> product; at b*):")
    for p in sorted(gplans, key=lambda p: -p.now / max(1, p.fixed))[:a.worst]:
        print(f"  {p.case}: {p.today} -> {p.now}; {p.fixed}")
    print("\nlargest gaps before the third solve (today -> product; at b*):")
    for p in sorted(gplans, key=lambda p: -p.today / max(1, p.fixed))[:a.worst]:
        print(f"  {p.case}: {p.today} -> {p.now}; {p.fixed}")
    if a.save:
        a.save.write_text(json.dumps({
            "plans": [dataclasses.asdict(p) for p in plans + gplans],
            "options": [dataclasses.asdict(g) for g in gaps + ggaps]}), encoding="utf-8")


def compare(before: Path, after: Path) -> None:
    """Two --save files (the product before and after a change): plans and options whose
    GPUs or batch moved, and how many are above the fixed point's in each."""
    old, new = (json.loads(f.read_text(encoding="utf-8")) for f in (before, after))
    for kind, key, gpus in (("plans", ("case",), "now"), ("options", ("case", "option"),
                                                          "gpus_now")):
        a = {tuple(x[k] for k in key): x for x in old[kind]}
        b = {tuple(x[k] for k in key): x for x in new[kind]}
        both = a.keys() & b.keys()
        up = sorted((k for k in both if b[k][gpus] > a[k][gpus]),
                    key=lambda k: a[k][gpus] / b[k][gpus])
        down = [k for k in both if b[k][gpus] < a[k][gpus]]
        fixed = "fixed" if kind == "plans" else "gpus_fixed"
        print(f"{kind}: {len(both)} in both ({len(a)} before, {len(b)} after); GPUs up on "
              f"{len(up)}, down on {len(down)}")
        for label, d in (("before", a), ("after", b)):
            ks = [k for k in both]
            print(f"  {label}: above b*'s GPUs on {sum(d[k][gpus] > d[k][fixed] for k in ks)}, "
                  f">= 20 % above on {sum(d[k][gpus] >= 1.2 * d[k][fixed] for k in ks)}")
        for k in up[:10]:
            print(f"  up: {k}: {a[k][gpus]:g} -> {b[k][gpus]:g} (b*: {b[k][fixed]:g})")
        if kind == "options":
            moved = sum(b[k]["served"] != a[k]["served"] for k in both)
            lower = sum(b[k]["served"] < a[k]["served"] for k in both)
            print(f"  batch moved on {moved} options, lower on {lower}")


if __name__ == "__main__":
    main()
