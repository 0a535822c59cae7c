"""Does an xPyD option's size jump with the load? A sweep of the load from 10 % to 300 % of
an account's (as concurrent users, a rate or named users) for one fixed prefill/decode
pair and for the search's cheapest xPyD option, listing every step where more load buys
fewer GPUs and every jump above 2 x between neighbours (tests/test_xpyd_monotone.py keeps
the properties; docs/queueing.md, "The decode pool's batch under a whole-answer target").

    PYTHONPATH=src python benchmarks/xpyd_load_sweep.py inputs/frontier-moe-rack.yaml \\
        --headroom 0 --form rate --e2e 36 --rate 118
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path
from typing import Any

import yaml

from llmsizer.inputs.loader import load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.evaluate import (
    Choice,
    account_inputs,
    build_tables,
)
from llmsizer.sizing.search import evaluate_pair, reason_for, size_workload

CAT = load_catalog()


def _doc(path: Path, form: str, scale: float, headroom: float, e2e: float | None,
         rate: float) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    w = doc["workloads"][0]
    users = w.pop("concurrent_users", None) or rate * 17
    w.pop("requests_per_s", None)
    if form == "users":
        w["concurrent_users"] = max(1, math.ceil(users * scale))
    elif form == "rate":
        w["requests_per_s"] = round(rate * scale, 6)
    else:  # 60 requests an hour each, the busiest hour twice the average
        w.update(named_users=max(1, math.ceil(rate * scale * 30)),
                 requests_per_user_per_hour=60, peak_to_average=2)
    if e2e is not None:
        w["targets"]["e2e_p95_s"] = e2e
    doc.setdefault("policy", {})["headroom"] = headroom
    return doc


def _gpus(env: dict[str, Any]) -> tuple[int, int, int]:
    prefill = int(float(env["disagg_prefill_pool_gpus"]))
    return prefill, int(float(env["gpus"])) - prefill, int(float(env["gpus"]))


def sized(doc: dict[str, Any], decode: Choice, prefill: Choice
          ) -> tuple[str, tuple[int, int, int] | None, tuple[int, int, int] | None]:
    """The cheapest xPyD option's id and (prefill, decode, all) GPUs, and the fixed pair's
    (None where rejected)."""
    req = load_from_text(yaml.safe_dump(doc), "sweep.yaml", CAT).req
    (w,) = req.workloads
    res = size_workload(req, w, CAT.models[w.model_id], CAT, build_tables(req, CAT),
                        account_inputs(req, CAT))
    best = next((o for o in res.options if o.feasible and "/prefill-" in o.id), None)
    env = evaluate_pair(req, CAT, decode, prefill)
    return (best.id if best else "-", _gpus(best.values) if best else None,
            None if reason_for(env)[1] else _gpus(env))


def _problems(name: str, rows: list[tuple[float, tuple[int, int, int] | None]]) -> list[str]:
    out = []
    for (f0, a), (f1, b) in itertools.pairwise(rows):
        if a is None or b is None:
            continue
        if b[2] < a[2]:
            out.append(f"{name}: more load, fewer GPUs {f0:.3f} -> {f1:.3f}: {a} -> {b}")
        for i, part in enumerate(("prefill", "decode", "all")):
            lo, hi = sorted((a[i], b[i]))
            if lo > 0 and hi > 2 * lo:
                out.append(f"{name}: {part} jumps {f0:.3f} -> {f1:.3f}: {a} -> {b}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--headroom", type=float, default=0.0)
    ap.add_argument("--form", choices=("users", "rate", "named"), default="users")
    ap.add_argument("--e2e", type=float, default=None, help="whole-answer p95 target, s")
    ap.add_argument("--rate", type=float, default=118.0,
                    help="the account's load as requests/s (frontier-moe-rack: ~118)")
    ap.add_argument("--points", type=int, default=50)
    ap.add_argument("--decode", default="16/16/16", help="TP/EP/ADP of the fixed pair's decode")
    ap.add_argument("--prefill", default="8/8/8", help="TP/EP/ADP of its prefill")
    a = ap.parse_args(argv)
    d_tp, d_ep, d_adp = (int(x) for x in a.decode.split("/"))
    p_tp, p_ep, p_adp = (int(x) for x in a.prefill.split("/"))
    nvl72 = ("gb300", "gb300-nvl72", "fp4", "fp8")
    decode = Choice(*nvl72, d_tp, ep=d_ep, adp=d_adp)
    prefill = Choice(*nvl72, p_tp, ep=p_ep, adp=p_adp)
    chosen, fixed = [], []
    print("| load | cheapest xPyD option | its GPUs (prefill, decode, all) | fixed pair |")
    print("|---|---|---|---|")
    for i in range(a.points):
        f = 0.1 + 2.9 * i / (a.points - 1)
        oid, best, pair = sized(_doc(a.file, a.form, f, a.headroom, a.e2e, a.rate),
                                decode, prefill)
        chosen.append((f, best))
        fixed.append((f, pair))
        print(f"| {f:.3f} | {oid.split('/', 3)[-1]} | {best} | {pair} |")
    problems = _problems("cheapest", chosen) + _problems("fixed pair", fixed)
    print("\n" + ("\n".join(problems) if problems else "no step with fewer GPUs, no jump > 2 x"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
