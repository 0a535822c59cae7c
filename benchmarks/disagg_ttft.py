"""The disaggregated runs' own first-token times against the model's (issue 23, ninth pass:
docs/calibration-history.md, "Ninth pass: the runs' own first-token times"). A diagnostic: the
measured TTFT is never an input of the model; nothing is fitted.

    PYTHONPATH=src python benchmarks/disagg_ttft.py              # the tables
    PYTHONPATH=src python benchmarks/disagg_ttft.py --rows       # also every run
    PYTHONPATH=src python benchmarks/disagg_ttft.py --extract FIXTURE.json   # rewrite the data

The data (benchmarks/data/disagg_ttft.csv) is, for every DISAGG run that
tests/data/measured_blackwell_moe.csv reads (its output tokens/s and mean TPOT rows), the
run's mean / median / p90 / p99 TTFT and mean end-to-end latency as the InferenceX fixture
states them (vngcloud/InferenceX-app@528c4146 packages/app/cypress/fixtures/api/benchmarks.json;
the CSV left them out). ``--extract`` matches each run by its run URL, users, lengths and both
rows' values, and rewrites the file.

Per run: the model's first-token time (prefill on a prefill replica + the cache's move +
the request overhead + the engine's request path, as sizing/fidelity_disagg.py forms it)
against the measured mean; Little's law with the run's OWN TTFT and TPOT, C x OSL / (TTFT +
(OSL - 1) x TPOT), against its measured throughput (InferenceX's per-GPU figure x the decode
GPUs); and, for the rows above the bar, each row's error with the model's first token
replaced by the measured one (the closed loop's decode batch then holds the users the run's
own first token leaves decoding).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import csv
import json
import math
import statistics
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from disagg_tail import rates  # noqa: E402
from mla_parts import parts_of, stack  # noqa: E402

from llmsizer.inputs.benchdata import read_points  # noqa: E402
from llmsizer.inputs.benchlabels import disagg_pools  # noqa: E402
from llmsizer.model.catalog import Catalog, load_catalog  # noqa: E402
from llmsizer.model.expr import Value  # noqa: E402
from llmsizer.sizing import fidelity_disagg  # noqa: E402
from llmsizer.sizing.evaluate import Tables, evaluate_choice  # noqa: E402
from llmsizer.sizing.fidelity import (  # noqa: E402
    Case,
    _profile,
    prepare,
    quantile,
    score,
    tables_for,
)
from llmsizer.sizing.fidelity_disagg import _figure, _pool, _transfer, exchange_inputs  # noqa: E402

FILE = ROOT / "tests" / "data" / "measured_blackwell_moe.csv"
DATA = ROOT / "benchmarks" / "data" / "disagg_ttft.csv"
SOURCE = ("github:vngcloud/InferenceX-app/packages/app/cypress/fixtures/api/benchmarks.json"
          "@528c4146b8f502fcbce8df7870a935a970cbae25")
# seconds in the fixture, ms here
TIMES = ("mean_ttft", "median_ttft", "p90_ttft", "p99_ttft", "mean_e2el", "mean_tpot")
COLUMNS = ("tok_s_row", "tpot_row", "hardware", "framework", "precision", "spec_method",
           "isl", "osl", "conc", "num_prefill_gpu", "num_decode_gpu", "output_tput_per_gpu",
           *(f"{t}_ms" for t in TIMES), "date", "run_url", "fixture_entry", "source")


def run_url(case: Case) -> str:
    return case.point.raw.get("notes", "").split("run=")[1].split(";")[0]


def disagg_cases(catalog: Catalog) -> list[Case]:
    points, _ = read_points(FILE, catalog)
    return prepare([p for p in points if p.disaggregated], catalog)[0]


def extract(fixture: Path, cases: Sequence[Case]) -> list[dict[str, str]]:
    """One line per run: the fixture entry whose run URL, users, stated lengths and value
    match each of the run's two rows (exactly one entry for each, or it stops)."""
    entries = json.loads(fixture.read_text())
    found: dict[int, dict[str, int]] = collections.defaultdict(dict)
    for c in cases:
        p = c.point
        value = float(p.raw["value"])  # as published (the reader scales tok/s per GPU)
        hits = [i for i, e in enumerate(entries)
                if e["disagg"] and e["run_url"] == run_url(c) and e["conc"] == p.concurrency
                and (e["isl"], e["osl"]) == (int(p.raw["isl"]), int(p.raw["osl"]))
                and math.isclose(e["metrics"]["output_tput_per_gpu"]
                                 if p.metric == "output_tokens_per_s"
                                 else e["metrics"]["mean_tpot"] * 1000, value, rel_tol=1e-4)]
        if len(hits) != 1:
            raise SystemExit(f"row {p.row}: {len(hits)} fixture entries match")
        found[hits[0]][p.metric] = p.row
    out = []
    for i, rows in sorted(found.items(), key=lambda kv: min(kv[1].values())):
        e, m = entries[i], entries[i]["metrics"]
        out.append({
            "tok_s_row": str(rows.get("output_tokens_per_s", "")),
            "tpot_row": str(rows.get("tpot_ms", "")),
            **{k: str(e[k]) for k in COLUMNS[2:11]},
            "output_tput_per_gpu": repr(m["output_tput_per_gpu"]),
            **{f"{t}_ms": (repr(m[t] * 1000) if t in m else "") for t in TIMES},
            "date": e["date"], "run_url": e["run_url"], "fixture_entry": str(i),
            "source": SOURCE})
    return out


def read_runs(path: Path = DATA) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def model_first_token(case: Case, catalog: Catalog, tables: Tables) -> tuple[float, float, float]:
    """(first token, prefill, the cache's move) in ms, as predict_disagg forms them."""
    pools = disagg_pools(case.point.raw.get("tp", ""), case.point.raw.get("notes", ""))
    assert pools is not None
    x, pre, y, dec = pools
    profile = _profile(case, catalog)
    prefill = evaluate_choice(case.base, replace(case.choice, tp=pre.tp, pp=pre.pp, ep=pre.ep,
                                                 adp=pre.adp), tables, case.req, catalog, profile)
    env = evaluate_choice(case.base, case.choice, tables, case.req, catalog,
                          {**profile, **exchange_inputs(case.point, prefill),
                           "max_batch_per_replica": float(case.point.concurrency or 1) / y,
                           "burstiness": 0.0})
    link, eff = _transfer(catalog, case.choice, _pool(x, pre), _pool(y, dec))
    moved = _figure("disagg_kv_transfer_ms", env, transfer_gb_s_given=link,
                    transfer_efficiency_given=eff, prefill_gpus_given=_pool(1, pre))
    ttft = _figure("disagg_ttft_ms", env, prefill_ms_given=float(prefill["prefill_ms"]),
                   kv_transfer_ms_given=moved, prefill_wait_ms_given=0.0)
    return ttft, float(prefill["prefill_ms"]), moved


@contextlib.contextmanager
def first_token_of(ms: float) -> Iterator[None]:
    """predict_disagg with its first-token figure replaced by ``ms`` (the diagnostic only).
    A run's measured TTFT already holds its users' wait for a decode slot, so the users
    decoding are Little's law's at that TTFT, at most the slots: the random placement over
    the replicas (routing.py), which would add that wait again, is left out."""
    figure_of, routing_of = fidelity_disagg._figure, fidelity_disagg.random_routing_batch_per_replica

    def figure(name: str, env: Mapping[str, Value], **given: float) -> float:
        return ms if name == "disagg_ttft_ms" else figure_of(name, env, **given)

    def routing(per_replica: float, replicas: float, limit: float) -> float:
        return min(per_replica, limit)
    fidelity_disagg._figure = figure
    fidelity_disagg.random_routing_batch_per_replica = routing
    try:
        yield
    finally:
        fidelity_disagg._figure = figure_of
        fidelity_disagg.random_routing_batch_per_replica = routing_of


@dataclass
class Run:
    case: Case  # the run's tok/s row
    tpot_case: Case
    data: dict[str, str]
    model_ttft: float
    prefill: float
    moved: float
    little: float  # Little's law with the run's own TTFT and TPOT / measured throughput - 1

    def ms(self, what: str) -> float:
        return float(self.data[f"{what}_ms"])


@dataclass
class Tail:
    """A row above the bar: its error, its error with the run's own TTFT, its class."""

    case: Case
    run: Run
    error: float
    fixed: float
    kind: str


def little(run: dict[str, str], osl: float) -> float:
    """C x OSL / (TTFT + (OSL - 1) x TPOT) over the measured output tokens/s of the decode
    GPUs (InferenceX's per-GPU figure counts the decode GPUs only), minus 1."""
    implied = (float(run["conc"]) * osl * 1000
               / (float(run["mean_ttft_ms"]) + (osl - 1) * float(run["mean_tpot_ms"])))
    return implied / (float(run["output_tput_per_gpu"]) * float(run["num_decode_gpu"])) - 1


def pct(x: float) -> str:
    return f"{x * 100:+.0f} %"


def classify(case: Case, error: float, other: float, measured_batch: float,
             catalog: Catalog, tables: Tables) -> str:
    """disagg_tail.py's class: prefill (the model's prefill pool binds), batch or step."""
    pr, dr = rates(case, catalog, tables)
    if pr < dr:
        return "prefill"
    tpot_err = error if case.point.metric == "tpot_ms" else other
    batch = parts_of(case, catalog, tables).batch
    return ("batch" if abs(math.log(batch / measured_batch)) > abs(math.log1p(tpot_err))
            else "step")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extract", type=Path, help="the fixture JSON: rewrite the data file")
    ap.add_argument("--bar", type=float, default=0.35)
    ap.add_argument("--rows", action="store_true", help="print every run")
    args = ap.parse_args()
    catalog = load_catalog()
    tables = tables_for(catalog)
    cases = disagg_cases(catalog)
    if args.extract:
        lines = extract(args.extract, cases)
        with DATA.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(lines)
        print(f"{len(lines)} runs -> {DATA.relative_to(ROOT)}")
        return
    by_row = {c.point.row: c for c in cases}
    runs = []
    for d in read_runs():
        c = by_row[int(d["tok_s_row"])]
        ttft, prefill, moved = model_first_token(c, catalog, tables)
        runs.append(Run(c, by_row[int(d["tpot_row"])], d, ttft, prefill, moved,
                        little(d, c.point.osl)))
    results = {r.point.row: r for r in score(cases, catalog, tables)}

    lit = [r.little for r in runs]
    print(f"Little's law with the run's own TTFT and TPOT / measured throughput - 1, "
          f"{len(runs)} runs: median {pct(statistics.median(lit))}, |.| p90 "
          f"{quantile([abs(x) for x in lit], 0.9) * 100:.1f} %, "
          f"range {pct(min(lit))} .. {pct(max(lit))}")
    # every row with the run's own first token in place of the model's
    tail: list[Tail] = []
    swapped: dict[int, float] = {}
    for r in runs:
        pools = disagg_pools(r.case.point.raw.get("tp", ""), r.case.point.raw.get("notes", ""))
        assert pools is not None
        # the run's sequences decoding per decode replica: its output tokens/s x its TPOT
        per_replica = (float(r.data["output_tput_per_gpu"]) * float(r.data["num_decode_gpu"])
                       * r.ms("mean_tpot") / 1000 / pools[2])
        for c, other in ((r.case, r.tpot_case), (r.tpot_case, r.case)):
            err = results[c.point.row].error
            with first_token_of(r.ms("mean_ttft")):
                (fixed,) = score([c], catalog, tables)
            swapped[c.point.row] = fixed.error
            if abs(err) > args.bar:
                tail.append(Tail(c, r, err, fixed.error, classify(
                    c, err, results[other.point.row].error, per_replica, catalog, tables)))

    by_stack: dict[str, list[Run]] = collections.defaultdict(list)
    for r in runs:
        by_stack[f"{stack(r.case)} {r.case.point.gpu}"].append(r)
    print("\n| stack, GPU | runs | users | measured mean TTFT (median, range) | model (median) "
          "| measured / model (median) | Little's law (median) | rows above the bar | under it "
          "with the run's TTFT |\n|---|---:|---|---|---:|---:|---:|---:|---:|")
    for key, rs in sorted(by_stack.items()):
        meas = [r.ms("mean_ttft") for r in rs]
        ts = [t for t in tail if t.run in rs]
        print(f"| {key} | {len(rs)} | {min(r.case.point.concurrency or 0 for r in rs)}-"
              f"{max(r.case.point.concurrency or 0 for r in rs)} | "
              f"{statistics.median(meas):.0f} ms ({min(meas):.0f}-{max(meas):.0f}) | "
              f"{statistics.median(r.model_ttft for r in rs):.0f} ms | "
              f"{statistics.median(r.ms('mean_ttft') / r.model_ttft for r in rs):.1f} x | "
              f"{pct(statistics.median(r.little for r in rs))} | {len(ts)} | "
              f"{sum(abs(t.fixed) <= args.bar for t in ts)} |")
    if args.rows:
        print("\n| row | stack | GPU | users | ISL/OSL | metric | TTFT measured / model ms | "
              "E2E s | error | with the run's TTFT | class |\n|---|---|---|---:|---|---|---|"
              "---:|---:|---:|---|")
        for t in sorted(tail, key=lambda t: t.case.point.row):
            p = t.case.point
            print(f"| {p.row} | {stack(t.case)} | {p.gpu} | {p.concurrency} | {p.isl}/{p.osl} | "
                  f"{'TPOT' if p.metric == 'tpot_ms' else 'tok/s'} | "
                  f"{t.run.ms('mean_ttft'):.0f} / {t.run.model_ttft:.0f} | "
                  f"{t.run.ms('mean_e2el') / 1000:.1f} | {pct(t.error)} | {pct(t.fixed)} | "
                  f"{t.kind} |")
    print(f"\n| rows above {args.bar * 100:.0f} % by class | rows | measured / model TTFT "
          "(median) | TTFT share of E2E (median) | Little's law (median) | under the bar with "
          "the run's TTFT | half the error or more removed | error removed (median) |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|")
    groups: dict[str, list[Tail]] = collections.defaultdict(list)
    for t in tail:
        groups[t.kind].append(t)
        groups["all"].append(t)
    for kind, ts in sorted(groups.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        removed = [1 - abs(t.fixed) / abs(t.error) for t in ts]
        print(f"| {kind} | {len(ts)} | "
              f"{statistics.median(t.run.ms('mean_ttft') / t.run.model_ttft for t in ts):.1f} x | "
              f"{statistics.median(t.run.ms('mean_ttft') / t.run.ms('mean_e2el') for t in ts) * 100:.0f} % | "
              f"{pct(statistics.median(t.run.little for t in ts))} | "
              f"{sum(abs(t.fixed) <= args.bar for t in ts)} | {sum(x >= 0.5 for x in removed)} | "
              f"{statistics.median(removed) * 100:.0f} % |")
    for what, errs in (("the model", [r.error for r in results.values()]),
                       ("every run's own mean TTFT in place of the model's",
                        list(swapped.values()))):
        a = [abs(e) for e in errs]
        print(f"all {len(a)} rows, {what}: median {statistics.median(a) * 100:.1f} %, "
              f"p90 {quantile(a, 0.9) * 100:.1f} %, above the bar "
              f"{sum(x > args.bar for x in a)}")


if __name__ == "__main__":
    main()
