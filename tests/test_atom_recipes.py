"""A second published source for ATOM (issue 21): tests/data/measured_atom_recipes.csv, the
"Performance baseline" tables of ROCm/ATOM's own recipes, not InferenceX's harness:

- recipes/Qwen3-235b.md@fd0c735 (2026-01-14): Qwen3-235B-A22B-Instruct-2507-FP8 on MI355X,
  TP8 + EP8 and TP4 + EP4, FP8 KV, prompts 1,000 / 4,000 / 10,000 and 1,000-token answers
  (--random-range-ratio 1.0, 4 x C prompts), mean TTFT, mean TPOT and total tokens/s;
- recipes/Kimi-K2-Thinking.md@c91d1c1 (2026-02-07): amd/Kimi-K2-Thinking-MXFP4 on 4 x MI355X,
  1,024 / 1,024 (--random-range-ratio 0.8, 10 x C prompts) at C 4-128, mean TTFT, mean TPOT
  and output tokens/s.

docs/calibration.md, "A second ATOM source", says what they move.
"""

from __future__ import annotations

import pytest
from helpers import DATA

from llmsizer.inputs.benchdata import read_points
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.fidelity import _atom, lock_step, prepare

CAT = load_catalog()
PATH = DATA / "measured_atom_recipes.csv"
POINTS, SKIPPED = read_points(PATH, CAT)
CASES, NOT_READ = prepare(POINTS, CAT)


def test_every_row_is_read_and_interpreted_as_atom() -> None:
    # Qwen: 6 length / concurrency runs x 2 layouts x 3 figures; Kimi: 6 runs x 3 figures
    assert (len(POINTS), SKIPPED) == (54, [])
    assert (len(CASES), NOT_READ) == (54, [])
    assert {(p.model, p.gpu, p.weight_precision, p.regime) for p in POINTS} == {
        ("qwen3-235b-a22b", "mi355x", "fp8", "concurrency"),
        ("kimi-k2", "mi355x", "fp4", "concurrency")}
    assert all(_atom(c) for c in CASES)
    # the Qwen runs send every prompt and answer at full length (lock-step rounds); Kimi's
    # lengths are U[0.8 L, L], read as 0.9 L (922 tokens)
    assert {c.point.model for c in CASES if lock_step(c)} == {"qwen3-235b-a22b"}
    kimi = {(c.point.isl, c.point.osl) for c in CASES
            if c.point.model == "kimi-k2"}
    assert kimi == {(922, 922)}  # 0.9 x 1,024, as the reader rounds it


@pytest.mark.parametrize(("model", "gpus", "isl", "concurrency", "metric", "value"), [
    # Qwen3-235b.md, row "| 1000 | 1000 | 256 | 1024 | 2452.83 |": TP8 + EP8 Mean TTFT (ms)
    ("qwen3-235b-a22b", 8, 1000, 256, "ttft_ms", 2452.83),
    # row "| 10000 | 1000 | 32 | 128 | ...": TP4 + EP4 Mean TPOT (ms)
    ("qwen3-235b-a22b", 4, 10000, 32, "tpot_ms", 21.44),
    # row "| 4000 | 1000 | 128 | 512 | ...": TP8 + EP8 Total Throughput
    ("qwen3-235b-a22b", 8, 4000, 128, "total_tokens_per_s", 24632.52),
    # Kimi-K2-Thinking.md, row "| 1024 | 1024 | 128 | 1280 | 500.68 |": Mean TTFT (ms)
    ("kimi-k2", 4, 1024, 128, "ttft_ms", 500.68),
    # row "| 1024 | 1024 | 32 | 320 | ...": Output Throughput
    ("kimi-k2", 4, 1024, 32, "output_tokens_per_s", 1632.74),
])
def test_values_as_published(model: str, gpus: int, isl: int, concurrency: int, metric: str,
                             value: float) -> None:
    point = next(p for p in POINTS if p.model == model and p.gpu_count == gpus
                 and round(p.isl / (0.9 if model == "kimi-k2" else 1)) == isl
                 and p.concurrency == concurrency and p.metric == metric)
    assert point.value == pytest.approx(value, rel=1e-9)
