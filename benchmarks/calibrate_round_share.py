"""Fit the two constants of the first token at fixed concurrency (docs/queueing.md,
docs/calibration.md "Fixed-concurrency TTFT: engine steps and the round wait"), and
cross-validate them leaving one source out.

    python benchmarks/calibrate_round_share.py [--write]
    python benchmarks/calibrate_round_share.py --second-sources  # + a second source per engine
    python benchmarks/calibrate_round_share.py --second-sources --first-wave-only  # experiment
    python benchmarks/calibrate.py --round-share [--write]     # the same
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
from collections.abc import Sequence

from calibration_data import (
    CONSTANTS,
    DOC,
    F_SCALE,
    ROOT,
    _stats,
    load_cases,
    replace_section,
    set_constant,
    source_of,
)

from llmsizer.model.catalog import Catalog, load_catalog
from llmsizer.sizing import fidelity
from llmsizer.sizing.fidelity import Case, RowResult, lock_step, tables_for
from llmsizer.sizing.fidelity_fit import closed_loop_ttft

# --- the first token at fixed concurrency: engine steps and round wait (queueing.py) -------
# Two constants, fitted on their own: they enter only the fixed-concurrency TTFT figure (and,
# through the request cycle, the closed loop's throughput a little), which the main objective
# leaves out for the second file, and the first file's TTFT rows run TensorRT-LLM's compiled
# runtime, which has no engine steps (fidelity._profile): refitting the rest cannot move them.
# - first_token_engine_steps: whole engine steps a new request spends in a Python serving
#   engine's request path before its first token (docs/queueing.md);
# - closed_loop_round_share: the round wait of a closed loop without think time.
# Each on the rows it describes (a grid, soft-L1 log loss): the share on the rows at
# concurrency >= ROUND_MIN_CONCURRENCY for every step count, the steps on the rows below with
# the share chosen for them; cross-validated leaving one source out.
ROUND_GRID = tuple(i / 50 for i in range(51))
STEPS_GRID = tuple(float(i) for i in range(41))
ROUND_MIN_CONCURRENCY = 32


def _ttft_rows(cases: Sequence[Case]) -> list[Case]:
    return [c for c in cases if c.point.regime == "concurrency" and c.point.metric == "ttft_ms"
            and getattr(c.point, "statistic", "mean") == "mean"]


def _soft_l1(error: float) -> float:
    z = math.log(1 + error) / F_SCALE
    return 2 * (math.sqrt(1 + z * z) - 1)


def engine_of_source(src: str) -> str:
    """The serving engine a source's rows ran ("InferenceX trt" and "dstack trt-llm" are both
    TensorRT-LLM's PyTorch backend); a source without one is its own engine."""
    word = (src.split(" ")[-1] if src.startswith(("InferenceX ", "dstack ", "ATOM recipes "))
            else src)
    return {"trt-llm": "trt"}.get(word, word)


def fit_round_share(cases: Sequence[Case], catalog: Catalog, per_engine: bool = False,
                    own_engine: frozenset[str] = frozenset()
                    ) -> tuple[tuple[float, float], list[RowResult],
                               dict[str, tuple[float, float]], str]:
    """((engine steps, round share) fitted on every row, the rows predicted leaving one source
    out, each fold's pair, the docs table). Grid search on the soft-L1 log loss.
    ``per_engine``: a source is scored with the constants fitted on the other sources of its
    own engine only (leave one source out within the engine); an engine with one source keeps
    the fit on every other source, and the table says so. ``own_engine``: those engines only
    are scored so, the others with the fit on every other source (the bars' method)."""
    rows = _ttft_rows(cases)
    tables = tables_for(catalog)
    # preds[row][steps index][share index]
    preds = {id(c): [closed_loop_ttft(c, catalog, tables, ROUND_GRID, steps)
                     for steps in STEPS_GRID] for c in rows}

    def loss(part: Sequence[Case], i: int, j: int) -> float:
        return sum(_soft_l1(preds[id(c)][i][j] / c.point.value - 1) for c in part)

    def best(train: Sequence[Case]) -> tuple[int, int]:
        # each constant on the rows it describes: the round share on the rows at or above
        # ROUND_MIN_CONCURRENCY (given the steps), the steps on the rows below it (given the
        # share the rows above choose with them)
        high = [c for c in train if (c.point.concurrency or 0) >= ROUND_MIN_CONCURRENCY]
        low = [c for c in train if (c.point.concurrency or 0) < ROUND_MIN_CONCURRENCY]
        share_for = {i: min(range(len(ROUND_GRID)), key=lambda j: loss(high, i, j))
                     for i in range(len(STEPS_GRID))}
        i = min(range(len(STEPS_GRID)), key=lambda i: loss(low, i, share_for[i]))
        return i, share_for[i]

    full = best(rows)
    held: list[RowResult] = []
    folds: dict[str, tuple[float, float]] = {}
    sources = sorted({source_of(c.point) for c in rows})
    alone: set[str] = set()
    flat: set[str] = set()  # training rows whose loss no step count moves (bursts every round)
    for src in sources:
        train = [c for c in rows if source_of(c.point) != src]
        if per_engine or engine_of_source(src) in own_engine:
            own = [c for c in train
                   if engine_of_source(source_of(c.point)) == engine_of_source(src)]
            if own:
                train = own
            else:
                alone.add(src)
        i, j = best(train)
        folds[src] = (STEPS_GRID[i], ROUND_GRID[j])
        low = [c for c in train if (c.point.concurrency or 0) < ROUND_MIN_CONCURRENCY]
        losses = [loss(low, k, j) for k in range(len(STEPS_GRID))]
        if max(losses) - min(losses) < 1e-9:
            flat.add(src)
        for c in rows:
            if source_of(c.point) == src:
                held.append(RowResult(c.point, c.engine, preds[id(c)][i][j], 0.0,
                                      preds[id(c)][i][j] / c.point.value - 1))
    before = {id(c.point): preds[id(c)][0][0] / c.point.value - 1 for c in rows}
    out = ["| rows (held-out source) | steps, share fitted without it | rows | median abs error "
           "| bias | without either term: median abs error | bias |",
           "|---|---:|---:|---:|---:|---:|---:|"]

    def line(name: str, fold: str, picked: list[RowResult]) -> None:
        if not picked:
            return
        n, med, _, bias = _stats([r.error for r in picked])
        _, med0, _, bias0 = _stats([before[id(r.point)] for r in picked])
        out.append(f"| {name} | {fold} | {n} | {med * 100:.1f} % | {bias * 100:+.1f} % | "
                   f"{med0 * 100:.1f} % | {bias0 * 100:+.1f} % |")

    def high(r: RowResult) -> bool:
        return (r.point.concurrency or 0) >= ROUND_MIN_CONCURRENCY

    for src, (steps, share) in folds.items():
        fold = f"{steps:.0f}, {share:.2f}" + (" (its engine's only source)" if src in alone
                                               else " (no step count moves the rows fitted on)"
                                               if src in flat else "")
        line(f"{src}, C >= {ROUND_MIN_CONCURRENCY}", fold,
             [r for r in held if source_of(r.point) == src and high(r)])
        line(f"{src}, C < {ROUND_MIN_CONCURRENCY}", fold,
             [r for r in held if source_of(r.point) == src and not high(r)])
    groups = [("all", held)]
    if per_engine or own_engine:  # the issue's bars are on the first two files' rows
        def second_source(r: RowResult) -> bool:
            return "dstack" in r.point.source or "ROCm/ATOM recipe" in r.point.source
        groups += [("the first two files", [r for r in held if not second_source(r)]),
                   ("second sources", [r for r in held if second_source(r)])]
    for name, part in groups:
        line(f"{name}, C >= {ROUND_MIN_CONCURRENCY}", "", [r for r in part if high(r)])
        line(f"{name}, C < {ROUND_MIN_CONCURRENCY}", "", [r for r in part if not high(r)])
    return (STEPS_GRID[full[0]], ROUND_GRID[full[1]]), held, folds, "\n".join(out)


def burst_lines(cases: Sequence[Case]) -> str:
    """Measured only, no model: for each engine and GPU of the lock-step rows (every round a
    burst, fidelity.lock_step) below ROUND_MIN_CONCURRENCY, the least-squares line through the
    mean first token against the prompts a burst's request waits for, (C + 1) / 2: its slope
    (one prompt's prefill) and what it leaves at none (the request path), also in the run's
    own steps (its TPOT at the lowest concurrency)."""
    runs: dict[tuple[str, str], dict[int, dict[str, float]]] = {}
    for c in cases:
        p = c.point
        if lock_step(c) and p.concurrency and p.concurrency < ROUND_MIN_CONCURRENCY \
                and p.metric in ("ttft_ms", "tpot_ms") and p.osl == min(
                    q.point.osl for q in cases if q.point.source == p.source):
            key = (source_of(p), p.gpu or "")
            runs.setdefault(key, {}).setdefault(p.concurrency, {})[p.metric] = p.value
    out = ["| run | concurrencies | prefill per prompt ahead | left at none | in its steps |",
           "|---|---|---:|---:|---:|"]
    for (src, gpu), by_c in sorted(runs.items()):
        xs = [(c + 1) / 2 for c in sorted(by_c)]
        ys = [by_c[c]["ttft_ms"] for c in sorted(by_c)]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
                 / sum((x - mx) ** 2 for x in xs))
        left = my - slope * mx
        tpot = by_c[min(by_c)]["tpot_ms"]
        out.append(f"| {src}, {gpu} | {', '.join(map(str, sorted(by_c)))} | {slope:.0f} ms | "
                   f"{left:.0f} ms | {left / tpot:.1f} |")
    return "\n".join(out)


def write_round_share(pair: tuple[float, float], table_md: str, n_rows: int) -> None:
    steps, share = pair
    when = dt.date.today().isoformat()
    # worded so that catalog.customer_source reads them for the proposal
    where = (f"fitted {when} by benchmarks/calibrate.py on the {n_rows} fixed-concurrency TTFT "
             "rows of calibration_points.csv and measured_blackwell_moe.csv, jointly with ")
    how = (" (grid search, soft-L1 log loss), cross-validated leaving one source out "
           "(docs/calibration.md)")
    text = set_constant(CONSTANTS.read_text(encoding="utf-8"), "closed_loop_round_share", share,
                        where + "first_token_engine_steps" + how, "fraction")
    # first_token_engine_steps is not written: the fit on all rows picks more steps than
    # the catalog's, which would push the Blackwell rows' in-sample bias past
    # tests/test_queueing.py's +-15 % (docs/calibration.md, "The term"); the held-out table
    # refits it per fold and does not depend on the catalog's value
    kept = load_catalog().constant("first_token_engine_steps")
    print(f"first_token_engine_steps: the catalog keeps {kept:g} (the fit on all rows picks "
          f"{steps:g}); not written")
    CONSTANTS.write_text(text, encoding="utf-8")
    DOC.write_text(replace_section(DOC.read_text(encoding="utf-8"), "round-share", table_md),
                   encoding="utf-8")
    print(f"wrote {CONSTANTS.relative_to(ROOT)} and {DOC.relative_to(ROOT)}")


def round_share_main(write_out: bool, second: bool = False, atom_recipes: bool = False) -> None:
    """``second``: add tests/data/measured_second_sources.csv and score each source with the
    constants fitted on its own engine's other source (a report: never written).
    ``atom_recipes``: add ATOM's own recipes (tests/data/measured_atom_recipes.csv) and score
    ATOM's sources with the constants fitted on ATOM's other source, every other source as
    the bars are scored (a report: never written)."""
    if write_out and (second or atom_recipes):
        raise SystemExit("--second-sources / --atom-recipes are reports; --write fits the "
                         "first two files only")
    catalog = load_catalog()
    cases, _, _ = load_cases(catalog, second, atom_recipes)
    pair, _, folds, table_md = fit_round_share(
        cases, catalog, per_engine=second,
        own_engine=frozenset({"atom"}) if atom_recipes else frozenset())
    print(f"first_token_engine_steps, closed_loop_round_share = {pair} (was "
          f"{catalog.constant('first_token_engine_steps')}, "
          f"{catalog.constant('closed_loop_round_share')}); folds: {folds}\n{table_md}")
    if second:
        print(f"\nthe second sources' bursts, measured only:\n{burst_lines(cases)}")
    if write_out:
        write_round_share(pair, table_md, len(_ttft_rows(cases)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update constants.yaml and docs")
    parser.add_argument("--second-sources", action="store_true",
                        help="add measured_second_sources.csv; leave one source out per engine")
    parser.add_argument("--atom-recipes", action="store_true",
                        help="add ATOM's own recipes; ATOM's sources fitted on ATOM's other one")
    parser.add_argument("--first-wave-only", action="store_true",
                        help="an experiment: read the second sources' rows as InferenceX's, "
                             "a burst in their first wave only (fidelity.lock_step off)")
    args = parser.parse_args()
    if args.first_wave_only:
        fidelity.lock_step = lambda case: False  # harness_givens looks it up at each call
    round_share_main(args.write, args.second_sources, args.atom_recipes)
