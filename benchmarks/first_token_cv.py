"""Held-out check of a split of the first token's engine steps (docs/calibration-history.md, "Seventh
session: ATOM and TensorRT-LLM"): an experiment, not part of the model.

``calibrate.py --round-share`` fits one count of engine steps before the first token for every
Python-scheduled engine. Read per engine and GPU, the fixed-concurrency residuals look like
two parts: on AMD GPUs SGLang pays a fixed cost per prompt (about the same milliseconds at every
concurrency) that ATOM, which compiles its forward, does not; beyond it the AMD rows take few
steps (ATOM and SGLang alike) and the NVIDIA rows many. This script fits, on the rows below
``ROUND_MIN_CONCURRENCY`` as calibrate.py does (soft-L1 log loss, grid; round share 0):

- ``shared``: one step count (calibrate.py's form, share fixed at 0);
- ``split``: a step count per GPU vendor, plus a fixed cost added to the first token of an
  eager-prefill engine on AMD (SGLang; not ATOM, not a compiled runtime);

and scores each source with the values fitted without it. The SGLang fold has no other
eager-prefill AMD source to fit the fixed cost on: ``split`` gives it the value fitted on all
rows (so that fold is not held out; the table says so), ``split, every fold held out`` none;
``--amd-cost MS`` states the cost for every fold, as a source of its own would.

    PYTHONPATH=src python benchmarks/first_token_cv.py [--amd-cost 300]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from calibrate_round_share import ROUND_MIN_CONCURRENCY, _soft_l1, _ttft_rows  # noqa: E402
from calibration_data import load_cases, source_of  # noqa: E402

from llmsizer.model.catalog import load_catalog  # noqa: E402
from llmsizer.sizing.fidelity import (  # noqa: E402
    Case,
    _atom,
    _closed_loop_env,
    _compiled_runtime,
    _Row,
    harness_givens,
    tables_for,
)
from llmsizer.sizing.fidelity_fit import closed_loop_ttft  # noqa: E402

STEPS = tuple(range(41))
FIXED_MS = tuple(range(0, 801, 20))
Params = tuple[int, int, float]  # steps on NVIDIA, steps on AMD, eager-prefill AMD cost (ms)


class Rows:
    def __init__(self) -> None:
        catalog = load_catalog()
        cases, _, _ = load_cases(catalog)
        tables = tables_for(catalog)
        self.rows: list[Case] = _ttft_rows(cases)
        # the first token at every step count (round share 0, as fitted today)
        self.at_steps = [[closed_loop_ttft(c, catalog, tables, (0.0,), float(s))[0]
                          for s in STEPS] for c in self.rows]
        self.wave = []  # the harness's first wave takes the burst's first token instead
        for c in self.rows:
            users, _ = _closed_loop_env(_Row(c, catalog, tables))
            self.wave.append(harness_givens(c, catalog, users)["first_wave_share_given"])
        self.amd = [catalog.gpus[c.point.gpu or ""].vendor.strip().upper() == "AMD"
                    for c in self.rows]
        self.eager_amd = [a and not _atom(c) and not _compiled_runtime(c)
                          for a, c in zip(self.amd, self.rows, strict=True)]
        self.low = [(c.point.concurrency or 0) < ROUND_MIN_CONCURRENCY for c in self.rows]

    def predict(self, i: int, p: Params) -> float:
        steps_nv, steps_amd, fixed = p
        base = self.at_steps[i][steps_amd if self.amd[i] else steps_nv]
        return base + (fixed * (1 - self.wave[i]) if self.eager_amd[i] else 0.0)

    def error(self, i: int, p: Params) -> float:
        return self.predict(i, p) / self.rows[i].point.value - 1

    def loss(self, idx: Sequence[int], p: Params) -> float:
        return sum(_soft_l1(self.error(i, p)) for i in idx)


def fit_shared(r: Rows, train: Sequence[int]) -> Params:
    low = [i for i in train if r.low[i]]
    s = min(STEPS, key=lambda k: r.loss(low, (k, k, 0.0)))
    return s, s, 0.0


def fit_split(r: Rows, train: Sequence[int], given: float | None = None) -> Params:
    """``given``: the eager-prefill AMD cost stated, not fitted (as a source would give it)."""
    low = [i for i in train if r.low[i]]
    nv = [i for i in low if not r.amd[i]]
    amd = [i for i in low if r.amd[i]]
    s_nv = min(STEPS, key=lambda k: r.loss(nv, (k, 0, 0.0)))
    fixed: Sequence[float] = ((given,) if given is not None
                              else FIXED_MS if any(r.eager_amd[i] for i in amd) else (0,))
    s_amd, f = min(((k, f) for k in STEPS for f in fixed),
                   key=lambda t: r.loss(amd, (s_nv, t[0], float(t[1]))))
    return s_nv, s_amd, float(f)


def held_out(r: Rows, fit: Callable[[Rows, Sequence[int]], Params], borrow: bool = True
             ) -> tuple[dict[int, float], dict[str, str]]:
    every = fit(r, range(len(r.rows)))
    errors: dict[int, float] = {}
    folds: dict[str, str] = {}
    for src in sorted({source_of(c.point) for c in r.rows}):
        mine = [i for i, c in enumerate(r.rows) if source_of(c.point) == src]
        p = fit(r, [i for i in range(len(r.rows)) if i not in set(mine)])
        note = ""
        if borrow and any(r.eager_amd[i] for i in mine) and every[2] > 0:
            p, note = (p[0], p[1], every[2]), " (fixed cost fitted on all rows: not held out)"
        folds[src] = f"{p[0]}, {p[1]}, {p[2]:.0f} ms{note}"
        errors.update({i: r.error(i, p) for i in mine})
    return errors, folds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--amd-cost", type=float, default=None,
                    help="state the eager-prefill AMD cost (ms) instead of fitting it")
    args = ap.parse_args()
    r = Rows()
    runs: list[tuple[str, Callable[[Rows, Sequence[int]], Params], bool]] = [
        ("shared", fit_shared, True), ("split", fit_split, True),
        ("split, every fold held out", fit_split, False)]
    if args.amd_cost is not None:
        runs = [(f"split, AMD cost stated: {args.amd_cost:.0f} ms",
                 partial(fit_split, given=args.amd_cost), False)]
    for name, fit, borrow in runs:
        errors, folds = held_out(r, fit, borrow)
        print(f"\n{name}: fitted without each source (steps NVIDIA, steps AMD, eager AMD cost)")
        for src, p in folds.items():
            print(f"  {src}: {p}")
        print("| rows (held-out source) | rows | median abs error | bias |\n|---|---:|---:|---:|")
        groups = [(f"{s}, C {'<' if lo else '>='} {ROUND_MIN_CONCURRENCY}",
                   [i for i in errors if source_of(r.rows[i].point) == s and r.low[i] == lo])
                  for s in folds for lo in (False, True)]
        groups += [(f"all, C {'<' if lo else '>='} {ROUND_MIN_CONCURRENCY}",
                    [i for i in errors if r.low[i] == lo]) for lo in (False, True)]
        for label, idx in groups:
            if idx:
                e = [errors[i] for i in idx]
                print(f"| {label} | {len(e)} | "
                      f"{statistics.median(abs(x) for x in e) * 100:.1f} % | "
                      f"{statistics.median(e) * 100:+.1f} % |")


if __name__ == "__main__":
    main()
