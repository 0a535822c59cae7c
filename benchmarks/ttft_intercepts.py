"""First-token time at low concurrency split into a fixed part and a part per prompt token,
per InferenceX engine, GPU, weight precision and image (docs/calibration-history.md, "Seventh
session: SGLang"): which of the two the model misses, on which stack.

For each group of InferenceX fixed-concurrency TTFT rows at C <= 8 without attention DP that
has both prompt lengths (922 and 7,373 tokens, read back from 1k and 8k nominal), the median
measured TTFT at each length gives a measured slope (ms per 1,000 prompt tokens) and an
intercept at 0 tokens; the modelled prefill of the same rows gives the model's slope. Nothing
is fitted.

    PYTHONPATH=src python benchmarks/ttft_intercepts.py
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from calibrate_round_share import _ttft_rows  # noqa: E402
from calibration_data import load_cases, source_of  # noqa: E402

from llmsizer.model.catalog import load_catalog  # noqa: E402
from llmsizer.sizing.fidelity import _closed_loop_env, _Row, tables_for  # noqa: E402

MAX_USERS = 8


def main() -> None:
    catalog = load_catalog()
    cases, _, _ = load_cases(catalog)
    tables = tables_for(catalog)
    # (engine, gpu, precision, mtp, image) -> prompt length -> [(measured ms, prefill ms)]
    groups: dict[tuple[str, ...], dict[int, list[tuple[float, float]]]] = defaultdict(
        lambda: defaultdict(list))
    for case in _ttft_rows(cases):
        p = case.point
        source = source_of(p)
        if not source.startswith("InferenceX") or (p.concurrency or 0) > MAX_USERS or p.adp > 1:
            continue
        image = re.search(r"image=([^;]+);", p.raw.get("notes", ""))
        _, env = _closed_loop_env(_Row(case, catalog, tables))
        key = (source.split()[1], str(p.gpu), str(p.weight_precision),
               "MTP" if p.speculative else "", image.group(1).split(":")[-1] if image else "")
        groups[key][round(p.isl or 0)].append((p.value, float(env["prefill_ms"])))
    print("| engine | GPU | weights | MTP | image | TTFT, short / long prompt (ms) "
          "| measured ms per 1k tokens | modelled | ratio | intercept (ms) | rows |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for key, by_length in sorted(groups.items()):
        if len(by_length) < 2:
            continue
        short, long = min(by_length), max(by_length)
        measured = [statistics.median(v[0] for v in by_length[n]) for n in (short, long)]
        modelled = [statistics.median(v[1] for v in by_length[n]) for n in (short, long)]
        slope = (measured[1] - measured[0]) / (long - short) * 1000
        model_slope = (modelled[1] - modelled[0]) / (long - short) * 1000
        intercept = measured[0] - slope * short / 1000
        print(f"| {' | '.join(key)} | {measured[0]:.0f} / {measured[1]:.0f} | {slope:.1f} "
              f"| {model_slope:.1f} | {slope / model_slope:.1f} | {intercept:.0f} "
              f"| {len(by_length[short])} + {len(by_length[long])} |")


if __name__ == "__main__":
    main()
