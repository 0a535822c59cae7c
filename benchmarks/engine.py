"""Engine speed (issue 2): time to size inputs/example.yaml with every catalog GPU x 3
weight precisions, in-process, and the cold start of `llmsizer --help`.

    python benchmarks/engine.py            # prints a Markdown table for docs/benchmarks.md
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def best_of(fn: object, n: int) -> tuple[float, float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main() -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from llmsizer.inputs.loader import load
    from llmsizer.inputs.schema import Requirements
    from llmsizer.model.catalog import load_catalog
    from llmsizer.sizing.engine import size

    cat = load_catalog()
    loaded = load(ROOT / "inputs" / "example.yaml")
    # what the file states (a key written with no value is an input error, so unset fields
    # stay out), then every catalog GPU: the hardware block without its GPU list
    doc = loaded.req.model_dump(exclude_unset=True)
    doc["hardware"].pop("gpus", None)
    doc["hardware"]["weight_precisions"] = ["fp8", "bf16", "int4"]
    wide = loaded.model_copy(update={"req": Requirements.model_validate(doc)})
    n_opts = sum(len(w.options) for w in size(wide, cat).workloads)
    size_min, size_med = best_of(lambda: size(wide, cat), 20)
    load_min, load_med = best_of(lambda: load(ROOT / "inputs" / "example.yaml", cat), 20)

    def help_cold() -> None:
        subprocess.run([sys.executable, "-m", "llmsizer.cli", "--help"], check=True,
                       capture_output=True)

    help_min, help_med = best_of(help_cold, 10)
    print("| measurement | best | median | target |")
    print("|---|---|---|---|")
    print(f"| size example.yaml, every GPU x 3 weight precisions ({n_opts} options) | "
          f"{size_min * 1000:.0f} ms | {size_med * 1000:.0f} ms | < 200 ms |")
    print(f"| load + validate example.yaml | {load_min * 1000:.1f} ms | {load_med * 1000:.1f} ms | |")
    print(f"| cold `llmsizer --help` (new process) | {help_min * 1000:.0f} ms | "
          f"{help_med * 1000:.0f} ms | < 500 ms |")


if __name__ == "__main__":
    main()
