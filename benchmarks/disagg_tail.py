"""The disaggregated rows above the p90 bar (35 %), each with the modelled parts behind it
(issue 23, eighth pass: docs/calibration-history.md, "Eighth pass: the rows above 35 %").

    PYTHONPATH=src python benchmarks/disagg_tail.py            # the table and the classes
    PYTHONPATH=src python benchmarks/disagg_tail.py --bar 0.5

Per row: the stack, GPU, layout, users, ISL/OSL, MTP layers, metric and error; the prefill
pool's request rate against the decode pool's (at the users decoding, before any prefill
cap), which side binds, the sequences per decode replica the model decodes against the run's
(output tokens/s x TPOT of the same run, both rows measured), and the decode step's parts.
Classes, by the run's two errors: "batch" (TPOT and throughput off in opposite directions:
the served batch), "step" (both the same way: the decode step), "prefill" (the prefill
pool binds in the model or in the run: fewer sequences decoding than its users allow),
"one metric" (the run's other row not read). Nothing is fitted or written.
"""

from __future__ import annotations

import argparse
import collections
import math
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from mla_parts import number, parts_of, stack  # noqa: E402

from llmsizer.inputs.benchdata import read_points  # noqa: E402
from llmsizer.inputs.benchlabels import decode_batch_limit, disagg_pools  # noqa: E402
from llmsizer.model.calculations.routing import random_routing_batch_per_replica  # noqa: E402
from llmsizer.model.catalog import Catalog, load_catalog  # noqa: E402
from llmsizer.model.expr import Value  # noqa: E402
from llmsizer.sizing.evaluate import Tables, evaluate_choice  # noqa: E402
from llmsizer.sizing.fidelity import Case, _profile, prepare, score, tables_for  # noqa: E402
from llmsizer.sizing.fidelity_disagg import (  # noqa: E402
    _figure,
    _pool,
    _transfer,
    exchange_inputs,
)

FILE = ROOT / "tests" / "data" / "measured_blackwell_moe.csv"


def run_key(case: Case) -> tuple[object, ...]:
    p = case.point
    return (p.gpu, p.raw.get("tp", ""), p.concurrency, p.isl, p.osl, p.raw.get("precision", ""),
            p.raw.get("notes", "").split("; ")[0], p.speculative)


def rates(case: Case, catalog: Catalog, tables: Tables) -> tuple[float, float]:
    """(prefill pool requests/s, decode pool requests/s at the users decoding), as
    fidelity_disagg.predict_disagg forms them before the prefill cap."""
    pools = disagg_pools(case.point.raw.get("tp", ""), case.point.raw.get("notes", ""))
    assert pools is not None
    x, pre, y, dec = pools
    profile = _profile(case, catalog)
    users = float(case.point.concurrency or 1) / y

    prefill = evaluate_choice(case.base, replace(case.choice, tp=pre.tp, pp=pre.pp, ep=pre.ep,
                                                 adp=pre.adp), tables, case.req, catalog, profile)
    exchange = exchange_inputs(case.point, prefill)

    def env_at(batch: float) -> dict[str, Value]:
        return evaluate_choice(case.base, case.choice, tables, case.req, catalog,
                               {**profile, **exchange, "max_batch_per_replica": batch,
                                "burstiness": 0.0})
    factor = catalog.constant("disagg_prefill_time_factor")
    env = env_at(users)
    link, eff = _transfer(catalog, case.choice, _pool(x, pre), _pool(y, dec))
    moved = _figure("disagg_kv_transfer_ms", env, transfer_gb_s_given=link,
                    transfer_efficiency_given=eff, prefill_gpus_given=_pool(1, pre))
    ttft = _figure("disagg_ttft_ms", env, prefill_ms_given=float(prefill["prefill_ms"]),
                   kv_transfer_ms_given=moved, prefill_time_factor_given=factor,
                   prefill_wait_ms_given=0.0)
    prefill_rate = _figure("disagg_prefill_requests_per_s", prefill, prefill_replicas_given=x,
                           prefill_ms_per_token_given=float(prefill["prefill_ms_per_token"]),
                           prefill_time_factor_given=factor)
    stated = decode_batch_limit(case.point.raw.get("notes", ""))
    limit = (_figure("disagg_decode_batch_limit_per_replica", env, max_batch_size_given=stated)
             if stated else math.inf)
    decoding = _figure("disagg_closed_loop_batch_per_replica", env, concurrency_given=users,
                       ttft_given=ttft)
    env = env_at(random_routing_batch_per_replica(decoding, y, limit))
    decode_rate = _figure("disagg_decode_requests_per_s", env, decode_replicas_given=y,
                          tpot_given=_figure("disagg_decode_tpot_ms", env))
    return prefill_rate, decode_rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bar", type=float, default=0.35, help="|error| above which a row is listed")
    args = ap.parse_args()
    catalog = load_catalog()
    tables = tables_for(catalog)
    points, _ = read_points(FILE, catalog)
    cases, _ = prepare([p for p in points if p.disaggregated], catalog)
    results = score(cases, catalog, tables)
    runs: dict[tuple[object, ...], dict[str, tuple[Case, float]]] = collections.defaultdict(dict)
    for c, r in zip(cases, results, strict=True):
        runs[run_key(c)][c.point.metric] = (c, r.error)
    print("| row | stack | GPU | layout | users | ISL/OSL | MTP | metric | error | other metric "
          "| prefill / decode req/s | binds | seq/replica model / run | step ms: weights, fixed, "
          "KV, compute, attention, comm/token | class |\n"
          "|---|---|---|---|---:|---|---|---|---:|---:|---|---|---|---|---|")
    classes: collections.Counter[str] = collections.Counter()
    for c, r in sorted(zip(cases, results, strict=True), key=lambda cr: cr[0].point.row):
        if abs(r.error) <= args.bar:
            continue
        p = c.point
        run = runs[run_key(c)]
        other = run.get("tpot_ms" if p.metric == "output_tokens_per_s" else "output_tokens_per_s")
        pr, dr = rates(c, catalog, tables)
        parts = parts_of(c, catalog, tables)
        pools = disagg_pools(p.raw.get("tp", ""), p.raw.get("notes", ""))
        assert pools is not None
        y, dec = pools[2], pools[3]
        # the run's sequences decoding per replica: its output tokens/s (the reader's figure
        # is per GPU x all the row's GPUs) x its TPOT
        measured: float | None = None
        if "tpot_ms" in run and "output_tokens_per_s" in run:
            out = run["output_tokens_per_s"][0].point
            measured = (out.value / (out.gpu_count or 1) * _pool(y, dec)
                        * run["tpot_ms"][0].point.value / 1000 / y)
        tpot_err = (r.error if p.metric == "tpot_ms" else other[1] if other else None)
        if pr < dr:
            kind = "prefill"
        elif measured is None or tpot_err is None:
            kind = "one metric"
        else:  # the larger of the two logs: sequences decoding, or the step at them
            kind = ("batch" if abs(math.log(parts.batch / measured)) > abs(math.log1p(tpot_err))
                    else "step")
        classes[kind] += 1
        mtp = int(number(parts.env, "spec_draft_tokens")) if p.speculative else 0
        step = ", ".join(f"{parts.parts[k]:.1f}" for k in (
            "weights", "comm fixed", "KV read", "compute", "attention", "comm/token"))
        print(f"| {p.row} | {stack(c)} | {p.gpu} | {p.raw.get('tp', '')} | {p.concurrency} | "
              f"{p.isl}/{p.osl} | {mtp} | {'TPOT' if p.metric == 'tpot_ms' else 'tok/s'} | "
              f"{r.error * 100:+.0f} % | "
              + ("-" if other is None else f"{other[1] * 100:+.0f} %")
              + f" | {pr:.2f} / {dr:.2f} | {'prefill' if pr < dr else 'decode'} | "
              f"{parts.batch:.1f} / " + ("-" if measured is None else f"{measured:.1f}")
              + f" | {step} | {kind} |")
    print("\n| class | rows |\n|---|---:|")
    for kind, n in classes.most_common():
        print(f"| {kind} | {n} |")
    print(f"| all above {args.bar * 100:.0f} % | {sum(classes.values())} of {len(results)} |")


if __name__ == "__main__":
    main()
