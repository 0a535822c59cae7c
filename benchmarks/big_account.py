"""Big accounts (issue #25): `llmsizer size` on one account of 5, 10, 20 and 50 workloads with
the hardware left out (every catalog GPU), each in a fresh process; wall time and peak memory.

    python benchmarks/big_account.py          # prints a Markdown table for docs/benchmarks.md

The workloads cycle through five catalog models and vary users, lengths and targets, so the
plan search has many candidate options and several shareable pools per account.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("llama-3.1-70b", "llama-3.1-8b", "mixtral-8x7b", "qwen2.5-72b", "gpt-oss-120b")
SIZES = (5, 10, 20, 50)


def account(n: int) -> dict[str, object]:
    workloads = [{
        "name": f"Workload {i + 1}", "model": MODELS[i % len(MODELS)],
        "concurrent_users": 20 + 13 * i,
        "prompt_tokens": 500 + 100 * (i % 7), "output_tokens": 200 + 50 * (i % 5),
        "targets": {"tokens_per_s_per_user": 20 + (i % 4) * 5, "ttft_s": 3},
    } for i in range(n)]
    return {"schema_version": 1, "account": {"name": f"Big {n}", "currency": "USD"},
            "workloads": workloads, "policy": {"headroom": 0.2}}


def run(path: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident MB of one `llmsizer size`
    process (children's peak so far: the sizes run in increasing order). CPU is the figure to
    compare on a shared machine; wall time grows with the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "llmsizer.cli", "size", str(path)], check=True,
                   capture_output=True)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, cpu, max(after.ru_maxrss, before.ru_maxrss) / 1024


def main() -> None:
    print("| workloads | options | wall s | CPU s | CPU ms per option | peak MB |")
    print("|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in SIZES:
            path = Path(tmp) / f"big{n}.yaml"
            path.write_text(yaml.safe_dump(account(n), sort_keys=False))
            seconds, cpu, peak = run(path)
            options = count_options(path)
            print(f"| {n} | {options:,} | {seconds:.1f} | {cpu:.1f} | "
                  f"{cpu / options * 1000:.2f} | {peak:.0f} |", flush=True)


def count_options(path: Path) -> int:
    """Options the account's workloads are sized on (the rows `size` prints)."""
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    return sum(len(w.options) for w in size(load(path)).workloads)


if __name__ == "__main__":
    main()
