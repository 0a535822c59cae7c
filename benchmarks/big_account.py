"""Big accounts (issue #25): `llmsizer size` on one account of 5, 10, 20 and 50 workloads with
the hardware left out (every catalog GPU), each in a fresh process; wall time and peak memory.

    python benchmarks/big_account.py          # prints a Markdown table for docs/benchmarks.md
    python benchmarks/big_account.py 10 40    # other sizes (at most 50: the schema's limit)
    python benchmarks/big_account.py --instructions 5 50   # instructions executed instead

``--instructions`` runs each `llmsizer size` under ``valgrind --tool=callgrind`` and prints
the instructions it executed (Ir): unlike CPU seconds they do not move with the load of a
shared machine, so two commits compare to a fraction of a percent (~100x slower to run).

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
    # --all: every option's row, the long tables this benchmark has always timed (since
    # review round 22 `size` alone prints the best 8 rows a workload)
    subprocess.run([sys.executable, "-m", "llmsizer.cli", "size", str(path), "--all"],
                   check=True, capture_output=True)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, cpu, max(after.ru_maxrss, before.ru_maxrss) / 1024


def instructions(path: Path) -> int:
    """Instructions one `llmsizer size` process executes, counted by callgrind."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           sys.executable, "-m", "llmsizer.cli", "size", str(path), "--all"],
                          check=True, capture_output=True, text=True)
    refs = [line for line in done.stderr.splitlines() if "refs:" in line]
    return int(refs[-1].split()[-1].replace(",", ""))


def main() -> None:
    args = sys.argv[1:]
    if "--instructions" in args:
        args.remove("--instructions")
        print("| workloads | instructions (Ir) |")
        print("|---:|---:|")
        with tempfile.TemporaryDirectory() as tmp:
            for n in [int(a) for a in args] or SIZES:
                path = Path(tmp) / f"big{n}.yaml"
                path.write_text(yaml.safe_dump(account(n), sort_keys=False))
                print(f"| {n} | {instructions(path):,} |", flush=True)
        return
    print("| workloads | options | wall s | CPU s | CPU ms per option | peak MB "
          "| plans evaluated | node groups run | search CPU s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(a) for a in args] or SIZES:
            path = Path(tmp) / f"big{n}.yaml"
            path.write_text(yaml.safe_dump(account(n), sort_keys=False))
            seconds, cpu, peak = run(path)
            options, plans, groups, search = plan_search(path)
            print(f"| {n} | {options:,} | {seconds:.1f} | {cpu:.1f} | "
                  f"{cpu / options * 1000:.2f} | {peak:.0f} | {plans:,} | {groups:,} | "
                  f"{search:.2f} |", flush=True)


def plan_search(path: Path) -> tuple[int, int, int, float]:
    """Options the account's workloads are sized on (the rows `size` prints), then the plan
    search run again in this process on them: plans evaluated and node groups whose stages
    ran (the search's own counters, sizing.plan.Memo), and its CPU seconds."""
    from llmsizer.inputs.loader import load
    from llmsizer.model.catalog import load_catalog
    from llmsizer.sizing.engine import size
    from llmsizer.sizing.evaluate import account_inputs
    from llmsizer.sizing.plan import Memo
    from llmsizer.sizing.plan_search import choose_plan

    loaded = load(path)
    workloads = size(loaded).workloads
    acct = account_inputs(loaded.req, load_catalog())
    memo = Memo()
    t0 = time.process_time()
    choose_plan(workloads, acct, memo)
    search = time.process_time() - t0
    return sum(len(w.options) for w in workloads), memo.plans, memo.group_runs, search


if __name__ == "__main__":
    main()
