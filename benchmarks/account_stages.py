"""Where one account's CPU goes (issue #25): each stage of `llmsizer report` for one account,
timed in CPU seconds (time.process_time) in a warm process as a batch worker runs it (heap
frozen, automatic garbage collection off; llmsizer.base.heap), median of N repeats.

    PYTHONPATH=src python benchmarks/account_stages.py [N] [ACCOUNT.yaml]

Stages: load and validate, size, results JSON, workbook, proposal context (charts included),
HTML (Jinja), WeasyPrint layout, WeasyPrint PDF writing (drawing, fonts, compression). CPU
time, not wall time: on a shared machine the wall time grows with the load; CPU time grows
less (say the load average, printed first, with the figures).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    path = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "inputs" / "example.yaml"
    with tempfile.TemporaryDirectory(prefix="llmsizer-stages-") as folder:
        _measure(n, path, Path(folder))


def _measure(n: int, path: Path, tmp: Path) -> None:
    from llmsizer.base import heap
    from llmsizer.documents.proposal import build_context, render_pdf
    from llmsizer.documents.proposal import render as proposal
    from llmsizer.documents.workbook import write_workbook
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    result = size(load(path))
    render_pdf(result, tmp / "warm.pdf")  # warm-up: imports, fonts, stylesheet, matplotlib
    write_workbook(result, tmp / "warm.xlsx")
    heap.settle()
    roots = proposal._roots(None)
    times: dict[str, list[float]] = {}
    state: dict[str, Any] = {}

    def stage(name: str, fn: Callable[[], Any]) -> None:
        t0 = time.process_time()
        state[name] = fn()
        times.setdefault(name, []).append(time.process_time() - t0)

    for _ in range(n):
        stage("load and validate", lambda: load(path))
        stage("size", lambda: size(state["load and validate"]))
        stage("results JSON", lambda: (tmp / "a.json").write_text(state["size"].to_json()))
        stage("workbook", lambda: write_workbook(state["size"], tmp / "a.xlsx"))
        stage("proposal context (charts included)",
              lambda: {**build_context(state["size"]), "appendix": False})
        stage("proposal HTML", lambda: proposal._render_template(
            roots, state["proposal context (charts included)"]))
        stage("WeasyPrint layout", lambda: proposal.render_document(state["proposal HTML"],
                                                                    roots))
        stage("WeasyPrint PDF writing", lambda: proposal.write_pdf(state["WeasyPrint layout"],
                                                                   tmp / "a.pdf"))
    pages = len(state["WeasyPrint layout"].pages)
    print(f"{path.name}: {pages} pages; load average {os.getloadavg()[0]:.1f}; "
          f"median of {n}, CPU ms")
    print("| stage | CPU ms |")
    print("|---|---:|")
    total = 0.0
    for name, ts in times.items():
        total += statistics.median(ts)
        print(f"| {name} | {statistics.median(ts) * 1000:.0f} |")
    print(f"| **one account** | **{total * 1000:.0f}** |")


if __name__ == "__main__":
    main()
