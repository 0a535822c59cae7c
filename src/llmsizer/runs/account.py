"""One account of a batch: sized and written, its outcome returned, never raising for a user
error. A local worker process calls :func:`process`; a cluster worker calls
:func:`size_account` on its copy of the bytes (:mod:`llmsizer.runs.cluster`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base.atomic import write_text_atomic
from .outcome import Outcome, account_recommendations
from .stamps import _stamp_path, fingerprint


def process(path: Path, out: Path, stem: str, templates: Path | None,
            appendix: bool = False) -> Outcome:
    """Size one account and write its three outputs; never raises for user errors. The
    stamp is taken before the file is read and again after: a file edited meanwhile gets no
    stamp, so the next run redoes it (it was stamped after sizing, and a re-run skipped an
    account whose JSON held the old input: issue 25, F8)."""
    from .report import write_outputs

    stamp_path = _stamp_path(out, stem)

    def write(result: Any, stamp: str | None) -> list[str]:
        written = write_outputs(
            result, out, stem=stem, templates=templates, appendix=appendix,
            also=None if stamp is None else lambda: write_text_atomic(stamp_path, stamp),
            also_writes=[stamp_path])
        if stamp is None:  # changed while sized: no stamp, the next run sizes it again
            with contextlib.suppress(OSError):
                stamp_path.unlink()
        return [p.name for p in written]

    return size_account(path, stem, lambda: fingerprint(path, templates, appendix), write)


def size_account(path: Path, stem: str, stamp_of: Callable[[], str],
                 write: Callable[[Any, str | None], list[str]], shown: str | None = None
                 ) -> Outcome:
    """Load and size one account and ``write`` its outputs (with the stamp of the content
    sized, or None if it changed while it was read); the outcome, never raising for user
    errors. ``shown`` is the file name for the outcome (a cluster worker sizes a copy)."""
    from ..base.errors import InfeasibleError, InputError, LlmsizerError
    from ..inputs.loader import load
    from ..sizing.engine import size
    from .report import check_feasible

    t0 = time.perf_counter()
    o = Outcome(file=shown or str(path), stem=stem)
    try:
        stamp: str | None = stamp_of()
        loaded = load(path)
        o.warnings = list(loaded.warnings)
        if stamp_of() != stamp:
            stamp = None
        result = size(loaded)
        o.account = result.account.name
        o.currency = result.account.currency
        check_feasible(result)
        # every workload's words and its part of the plan (retrieval ones included), from the
        # parts of the results document they read
        o.recommendations = account_recommendations(result.model_dump(
            include={"workloads", "retrieval", "plan", "deployment"}))
        t = result.totals
        o.gpus, o.nodes, o.capex = t.gpus_purchased, t.nodes, t.capex
        # the GPUs rented where the recommendation rents (the cover's count), else none
        o.cloud_gpus_rented = t.cloud_gpus_rented if result.deployment.recommended == "cloud" else 0
        o.annual_cost_onprem, o.annual_cost_cloud = t.annual_cost_onprem, t.annual_cost_cloud
        o.cost_per_million_tokens_onprem = t.cost_per_million_tokens_onprem
        o.cost_per_million_tokens_cloud = t.cost_per_million_tokens_cloud
        o.outputs = write(result, stamp)
        o.status = "ok"
    except InfeasibleError as exc:
        o.status, o.message = "infeasible", str(exc)
    except InputError as exc:
        o.status, o.message = "invalid input", str(exc)
    except LlmsizerError as exc:
        o.status, o.message = "invalid input", str(exc)
    except Exception as exc:  # a bug: record it, keep the batch going
        o.status, o.message = "error", f"{type(exc).__name__}: {exc}"
    o.seconds = time.perf_counter() - t0
    return o
