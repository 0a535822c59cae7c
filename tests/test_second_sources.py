"""A second published source for the engines of the fixed-concurrency TTFT rows (issue 21):
tests/data/measured_second_sources.csv, dstack's DeepSeek-R1 runs on 8 x H200 and 8 x MI300X
(github:dstackai/benchmarks/Deepseek-R1/raw_data/online_results.csv@7f37e66, the raw data of
the blog post "DeepSeek R1 inference performance: MI300X vs. H200", 2025-03-18; engine versions
and launch flags from Deepseek-R1/README.md of the same repository). SGLang, TensorRT-LLM's
PyTorch backend and vLLM; 3,200-token prompts, 800-token answers at concurrency 4-128 and
1,600 / 3,200 / 6,400-token answers at 128. docs/calibration.md, "What limits it", says what
they show against InferenceX.
"""

from __future__ import annotations

import pytest
from helpers import DATA

from llmsizer.inputs.benchdata import BenchPoint, read_points
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.fidelity import (
    DEFAULT,
    TRTLLM_SERVING,
    Case,
    _atom,
    _compiled_runtime,
    harness_givens,
    lock_step,
    prepare,
    pytorch_backend,
)

CAT = load_catalog()
PATH = DATA / "measured_second_sources.csv"
POINTS, SKIPPED = read_points(PATH, CAT)
CASES, NOT_READ = prepare(POINTS, CAT)


def _framework(point: BenchPoint) -> str:
    return point.raw["notes"].split("framework=")[1].split(";")[0]


def _case(gpu: str, framework: str, concurrency: int, osl: int, metric: str) -> Case:
    return next(c for c in CASES if c.point.gpu == gpu and _framework(c.point) == framework
                and c.point.concurrency == concurrency and c.point.osl == osl
                and c.point.metric == metric)


def test_every_row_is_read_and_interpreted() -> None:
    # 15 engine / GPU / length runs x (TTFT, TPOT, output tokens/s): 45 runs, 135 rows
    assert (len(POINTS), SKIPPED) == (135, [])
    assert (len(CASES), NOT_READ) == (135, [])
    assert {(p.model, p.gpu, p.weight_precision, p.regime) for p in POINTS} == {
        ("deepseek-r1", "h200-sxm", "fp8", "concurrency"),
        ("deepseek-r1", "mi300x", "fp8", "concurrency")}
    assert {p.source for p in POINTS} == {POINTS[0].source}
    assert POINTS[0].source.startswith(
        "github:dstackai/benchmarks/Deepseek-R1/raw_data/online_results.csv@7f37e669")


@pytest.mark.parametrize(("gpu", "framework", "concurrency", "osl", "metric", "value"), [
    # online_results.csv@7f37e66, row "h200,sglang,random,,4,,3200,800,...": mean_ttft_ms
    ("h200-sxm", "sglang", 4, 800, "ttft_ms", 3903.903552),
    # row "mi300x,sglang,random,,128,,3200,800,...": mean_tpot_ms
    ("mi300x", "sglang", 128, 800, "tpot_ms", 135.7318958),
    # row "h200,trt-llm,random,,64,,3200,800,...": mean_ttft_ms
    ("h200-sxm", "trt-llm", 64, 800, "ttft_ms", 4158.667155),
    # row "h200,trt-llm,random,,128,,3200,800,...": output_throughput, the 8 GPUs together
    ("h200-sxm", "trt-llm", 128, 800, "output_tokens_per_s", 835.199722),
    # row "h200,vllm,random,,128,,3200,6400,...": mean_ttft_ms (a queue for KV: 17.7 minutes)
    ("h200-sxm", "vllm", 128, 6400, "ttft_ms", 1059605.396),
])
def test_values_as_published(gpu: str, framework: str, concurrency: int, osl: int, metric: str,
                             value: float) -> None:
    point = _case(gpu, framework, concurrency, osl, metric).point
    assert point.value == pytest.approx(value, rel=1e-9)
    # 500 requests each, except MI300X SGLang at 6,400-token answers: 499 completed
    sent = 499 if (gpu, framework, osl) == ("mi300x", "sglang", 6400) else 500
    assert (point.isl, point.gpu_count, point.requests) == (3200, 8, sent)


def test_engines_and_parallelism_as_launched() -> None:
    # Deepseek-R1/README.md: SGLang on H200 with --enable-dp-attention; trtllm-serve --backend
    # pytorch --tp_size 8 --ep_size 4; SGLang on MI300X and vLLM plain TP8
    trt = _case("h200-sxm", "trt-llm", 4, 800, "ttft_ms")
    assert trt.engine == TRTLLM_SERVING and pytorch_backend(trt) and not _compiled_runtime(trt)
    assert (trt.point.tp, trt.point.ep, trt.point.adp) == (8, 4, 1)
    sglang = _case("h200-sxm", "sglang", 4, 800, "ttft_ms")
    assert sglang.engine == DEFAULT and not _atom(sglang) and not _compiled_runtime(sglang)
    assert (sglang.point.tp, sglang.point.adp) == (8, 8)
    assert _case("mi300x", "sglang", 4, 800, "ttft_ms").point.adp == 1


def test_fixed_lengths_keep_the_closed_loop_in_rounds() -> None:
    # random-range-ratio 1 at request rate inf: every answer ends at the same step, so every
    # round's prompts arrive at once (the whole run is bursts); InferenceX's U[0.8 L, L]
    # lengths leave only its first wave of C in 10 x C prompts a burst
    dstack = _case("mi300x", "sglang", 32, 800, "ttft_ms")
    assert lock_step(dstack)
    assert harness_givens(dstack, CAT, 32.0)["first_wave_share_given"] == 1.0
    blackwell, _ = read_points(DATA / "measured_blackwell_moe.csv", CAT)
    inferencex = next(c for c in prepare(blackwell, CAT)[0]
                      if "InferenceX" in c.point.source and c.point.metric == "ttft_ms"
                      and not c.point.disaggregated)
    assert not lock_step(inferencex)
    assert harness_givens(inferencex, CAT, 32.0)["first_wave_share_given"] == pytest.approx(0.1)
