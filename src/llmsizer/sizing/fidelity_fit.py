"""The round-share fit's view of a fixed-concurrency TTFT row (benchmarks/calibrate.py
``--round-share``): the row's first token at many round shares and engine step counts,
through the calculation list's own closed-loop wait (queueing.py), evaluated once per row
and step count."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.calculations import CALCULATIONS
from ..model.catalog import Catalog
from ..model.expr import evaluate
from .evaluate import Tables
from .fidelity import Case, _closed_loop_env, _compiled_runtime, _figure, _Row, harness_givens

_SHARE_DEPENDENT = {c.name: c.expr for c in CALCULATIONS
                    if c.name in ("closed_loop_wait_ms", "ttft_ms")}


def closed_loop_ttft(case: Case, catalog: Catalog, tables: Tables, shares: Sequence[float],
                     steps: float | None = None) -> list[float]:
    """A fixed-concurrency row's TTFT at each round share (``closed_loop_round_share``), with
    ``steps`` engine steps before the first token where the row's engine profile has them
    (``first_token_engine_steps``): the two-constant fit in benchmarks/calibrate.py evaluates
    the engine once per row and step count."""
    row = _Row(case, catalog, tables)
    if steps is not None and not _compiled_runtime(case):
        row.profile = {**row.profile, "scheduler_steps": steps}
    users, env = _closed_loop_env(row)
    givens = harness_givens(case, catalog, users)
    out = []
    for s in shares:
        # the share moves only the closed-loop wait and the first token (a row has no TTFT
        # target to move the batch): their own calculations, re-evaluated at this share
        at = {**env, "closed_loop_round_share": s}
        for name in ("closed_loop_wait_ms", "ttft_ms"):
            at[name] = evaluate(_SHARE_DEPENDENT[name], at)
        out.append(_figure("closed_loop_ttft_ms", at, **givens))
    return out
