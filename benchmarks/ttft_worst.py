"""Where the fixed-concurrency TTFT bars of issue 21 are lost (docs/calibration.md, "The worst
rows"): every row predicted leaving its source out, as ``calibrate.py --round-share`` does,
with the parts of its prediction, then the groups, the prompt-length slopes and one candidate
term tried on the held-out predictions (nothing written, nothing fitted here).

    python benchmarks/ttft_worst.py            # about 1.5 minutes
"""

from __future__ import annotations

import heapq
import random
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from calibrate_round_share import ROUND_MIN_CONCURRENCY, _ttft_rows, fit_round_share
from calibration_data import load_cases, source_of

from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import evaluate
from llmsizer.sizing.fidelity import (
    _closed_loop_env,
    _compiled_runtime,
    _figure,
    _Row,
    harness_givens,
    tables_for,
)
from llmsizer.sizing.fidelity_fit import _SHARE_DEPENDENT

# InferenceX sends inferencex_prompts_per_user x C prompts with answers U[0.8 L, L]
_ROUNDS = 10
_SPREAD = 0.8


@dataclass(frozen=True)
class Part:
    src: str
    gpu: str
    precision: str
    mtp: bool
    isl: float
    osl: float
    users: int
    tp: int
    adp: int
    measured: float
    predicted: float
    prefill: float
    wait: float
    tpot: float
    steps: float
    batch: float
    chunk: float
    wave: float

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1

    @property
    def engine(self) -> str:
        return self.src.split(" ")[-1]

    @property
    def amd(self) -> bool:
        return self.gpu.startswith("mi")


def rows_with_parts() -> list[Part]:
    catalog = load_catalog()
    cases, _, _ = load_cases(catalog, False)
    _, held, folds, _ = fit_round_share(cases, catalog)
    tables = tables_for(catalog)
    error = {id(r.point): r.error for r in held}
    out = []
    for c in _ttft_rows(cases):
        steps, share = folds[source_of(c.point)]
        row = _Row(c, catalog, tables)
        if not _compiled_runtime(c):
            row.profile = {**row.profile, "scheduler_steps": steps}
        users, env = _closed_loop_env(row)
        givens = harness_givens(c, catalog, users)
        env = {**env, "closed_loop_round_share": share}
        for name in ("closed_loop_wait_ms", "ttft_ms"):
            env[name] = evaluate(_SHARE_DEPENDENT[name], env)
        predicted = _figure("closed_loop_ttft_ms", env, **givens)
        p = c.point
        assert abs(predicted / p.value - 1 - error[id(p)]) < 1e-9  # the table's own figure

        def num(name: str, at: dict[str, object] = env) -> float:
            value = at[name]
            assert isinstance(value, float | int)
            return float(value)

        out.append(Part(source_of(p), p.gpu or "", p.weight_precision or "", bool(p.speculative),
                        float(p.isl or 0), float(p.osl or 0), int(p.concurrency or 0), p.tp,
                        p.adp, p.value, predicted, num("prefill_ms"),
                        num("closed_loop_wait_ms"), num("tpot_ms"), num("scheduler_steps"),
                        num("batch_per_replica"), num("prefill_chunk_tokens"),
                        givens["first_wave_share_given"]))
    return out


def _stats(errors: Sequence[float]) -> str:
    if not errors:
        return "0 rows"
    return (f"{len(errors)} rows, median |error| {statistics.median(map(abs, errors)) * 100:.1f} %"
            f", bias {statistics.median(errors) * 100:+.1f} %")


def _high(r: Part) -> bool:
    return r.users >= ROUND_MIN_CONCURRENCY


def worst(rows: Sequence[Part], title: str, want: Callable[[Part], bool], n: int) -> None:
    print(f"\n## worst: {title}")
    print("error | GPU weights MTP | ISL/OSL | C | TP ADP | measured predicted (ms) | "
          "prefill wait TPOT steps batch chunk first-wave")
    for r in sorted((r for r in rows if want(r)), key=lambda r: -abs(r.error))[:n]:
        print(f"{r.error * 100:+7.1f} % | {r.gpu} {r.precision} {'MTP' if r.mtp else '-'} | "
              f"{r.isl:.0f}/{r.osl:.0f} | {r.users} | {r.tp} {r.adp} | {r.measured:.0f} "
              f"{r.predicted:.0f} | {r.prefill:.0f} {r.wait:.0f} {r.tpot:.1f} {r.steps:.0f} "
              f"{r.batch:.0f} {r.chunk:.0f} {r.wave:.2f}  [{r.src}]")


def groups(rows: Sequence[Part]) -> None:
    print("\n## groups (engine, vendor, weights, MTP), held out, ATOM apart")
    for high in (False, True):
        by: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
        for r in rows:
            if _high(r) == high:
                by[(r.engine, "AMD" if r.amd else "NVIDIA", r.precision,
                    "MTP" if r.mtp else "-")].append(r.error)
        print(f"C {'>=' if high else '<'} {ROUND_MIN_CONCURRENCY}:")
        for key, errs in sorted(by.items()):
            print(f"  {' '.join(key)}: {_stats(errs)}")


def slopes(rows: Sequence[Part]) -> None:
    """Pairs of rows that differ only in the prompt (1k vs 8k, 1k answers): the measured and
    predicted first-token growth and what a line through them leaves at no prompt."""
    print("\n## prompt-length pairs (answers of 1k): measured vs predicted growth, 1k -> 8k")
    by: dict[tuple[object, ...], dict[float, Part]] = defaultdict(dict)
    for r in rows:
        if r.osl < 2000:
            by[(r.src, r.gpu, r.precision, r.tp, r.adp, r.mtp, r.users)][r.isl] = r
    for key, pair in sorted(by.items(), key=lambda kv: str(kv[0])):
        if len(pair) != 2:
            continue
        lo, hi = pair[min(pair)], pair[max(pair)]
        dm, dp = hi.measured - lo.measured, hi.predicted - lo.predicted
        at0 = lo.measured - dm / (hi.isl - lo.isl) * lo.isl
        at0p = lo.predicted - dp / (hi.isl - lo.isl) * lo.isl
        print(f"  {' '.join(map(str, key))}: growth {dm:.0f} vs {dp:.0f} ms "
              f"(x {dm / dp:.2f}); at no prompt {at0:.0f} vs {at0p:.0f} ms")


def later_rounds_wait_ms(users: int, nominal_output: float, tpot_ms: float, prefill_ms: float,
                         seed: int) -> float:
    """A candidate, not in the product: do InferenceX's later rounds queue their prefills?
    A closed loop of ``users`` users, ``_ROUNDS`` prompts each, answers U[0.8 L, L] tokens at
    ``tpot_ms``, every prompt prefilled in turn by one server in ``prefill_ms`` (first come,
    first served); the first C prompts arrive together. The mean wait of the prompts after the
    first wave (the first is ``burst_wait_ms``'s)."""
    rng = random.Random(seed)
    arrivals = [(0.0, u, 0) for u in range(users)]
    heapq.heapify(arrivals)
    free, waits = 0.0, []
    while arrivals:
        t, u, k = heapq.heappop(arrivals)
        start = max(t, free)
        free = start + prefill_ms
        if k > 0:
            waits.append(start - t)
        if k + 1 < _ROUNDS:
            answer = rng.uniform(_SPREAD * nominal_output, nominal_output) * tpot_ms
            heapq.heappush(arrivals, (free + answer, u, k + 1))
    return statistics.mean(waits) if waits else 0.0


def _later_rounds(r: Part) -> float:
    if "InferenceX" not in r.src or r.wave >= 1:
        return 0.0
    nominal = r.osl / ((1 + _SPREAD) / 2)
    n = int(min(r.users, r.batch))
    return statistics.mean(later_rounds_wait_ms(n, nominal, r.tpot, r.prefill, s) for s in range(3))


def candidate(rows: Sequence[Part]) -> None:
    print("\n## candidate: InferenceX's later rounds queue their prefills (simulated; not in "
          "the product)")
    extra = {id(r): _later_rounds(r) for r in rows}

    def new(r: Part) -> float:
        return (r.predicted + (1 - r.wave) * extra[id(r)]) / r.measured - 1

    print(f"  largest wait added: {max(extra.values()):.0f} ms")
    for name, want in (("all, C >= 32", _high), ("all, C < 32", lambda r: not _high(r)),
                       ("without ATOM, C >= 32", lambda r: _high(r) and r.engine != "atom"),
                       ("ATOM, C >= 32", lambda r: _high(r) and r.engine == "atom"),
                       ("TensorRT-LLM, C >= 32", lambda r: _high(r) and r.engine == "trt"),
                       ("SGLang, C >= 32", lambda r: _high(r) and r.engine == "sglang"),
                       ("SGLang, C < 32", lambda r: not _high(r) and r.engine == "sglang")):
        picked = [r for r in rows if want(r)]
        print(f"  {name}: today {_stats([r.error for r in picked])}; with it "
              f"{_stats([new(r) for r in picked])}")


def main() -> None:
    rows = rows_with_parts()
    print("## the bars, held out by source")
    for name, want in (("all, C >= 32", _high), ("all, C < 32", lambda r: not _high(r))):
        print(f"  {name}: {_stats([r.error for r in rows if want(r)])}; without ATOM "
              f"{_stats([r.error for r in rows if want(r) and r.engine != 'atom'])}")
    rest = [r for r in rows if r.engine != "atom"]
    worst(rest, "C >= 32, ATOM apart", _high, 25)
    worst(rest, "SGLang, C < 32", lambda r: not _high(r) and r.engine == "sglang", 25)
    worst(rest, "TensorRT-LLM, C >= 32", lambda r: _high(r) and r.engine == "trt", 22)
    groups(rest)
    slopes(rest)
    candidate(rows)


if __name__ == "__main__":
    main()
