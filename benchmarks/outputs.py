"""Output speed (issues 3 and 4): workbook generation and warm PDF render of the example in
a running process, and the cold `llmsizer report` of one file in a new process.

    python benchmarks/outputs.py        # prints a Markdown table for docs/benchmarks.md
"""

from __future__ import annotations

import gc
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "inputs" / "example.yaml"


def times(fn: Callable[[], object], n: int) -> tuple[float, float]:
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts)


def main() -> None:
    from llmsizer.base import heap
    from llmsizer.documents.proposal import build_context, render_pdf
    from llmsizer.documents.workbook import write_workbook
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    tmp = Path(tempfile.mkdtemp(prefix="llmsizer-bench-"))
    result = size(load(EXAMPLE))
    render_pdf(result, tmp / "warm.pdf")  # warm-up: imports, fonts, matplotlib
    # A long-running process: warm heap frozen (llmsizer.base.heap), automatic collection off,
    # and one collection per proposal, timed as part of it (a batch worker skips that
    # collection and is replaced instead; see docs/benchmarks.md).
    heap.settle()
    wb = times(lambda: write_workbook(result, tmp / "a.xlsx"), 20)
    charts = times(lambda: build_context(result), 5)

    def warm() -> None:
        render_pdf(result, tmp / "a.pdf")
        gc.collect()

    pdf = times(warm, 10)

    def cold() -> None:
        subprocess.run([sys.executable, "-m", "llmsizer.cli", "report", str(EXAMPLE), "--out",
                        str(tmp / "cold")], check=True, capture_output=True)

    cold_t = times(cold, 5)
    shutil.rmtree(tmp, ignore_errors=True)
    print("| measurement (inputs/example.yaml) | best | median | target |")
    print("|---|---|---|---|")
    print(f"| workbook generation, in-process | {wb[0] * 1000:.0f} ms | {wb[1] * 1000:.0f} ms "
          "| < 150 ms |")
    print(f"| proposal context incl. 4 matplotlib charts | {charts[0]:.2f} s | {charts[1]:.2f} s | |")
    print("| proposal warm render (context + WeasyPrint + its garbage collection), in-process | "
          f"{pdf[0]:.2f} s | {pdf[1]:.2f} s | < 0.8 s |")
    print(f"| cold `llmsizer report` (JSON + xlsx + PDF, new process) | {cold_t[0]:.2f} s | "
          f"{cold_t[1]:.2f} s | < 3 s |")


if __name__ == "__main__":
    main()
