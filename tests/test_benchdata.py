"""benchdata: calibration_points.csv rows -> typed BenchPoint / Skipped records.

The full-file tests read the project's copy of the reference data,
tests/data/calibration_points.csv (the project never reads the shared reference folder).
The edge-case tests build their own small files.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from pathlib import Path

import pytest

from llmsizer.base.errors import InputError
from llmsizer.inputs.benchdata import COLUMNS, BenchPoint, Skipped, read_points

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "data" / "calibration_points.csv"
TRTLLM_V017 = (
    "github:NVIDIA/TensorRT-LLM/docs/source/performance/perf-overview.md"
    "@258c7540c03517def55d9a5aadfa9288af474e1b (v0.17 table)"
)


def _reference() -> Path:
    assert REFERENCE.is_file(), "tests/data/calibration_points.csv is part of the repository"
    return REFERENCE


@pytest.fixture(scope="module")
def parsed() -> tuple[list[BenchPoint], list[Skipped]]:
    return read_points(_reference())


def _by_row(points: list[BenchPoint]) -> dict[int, BenchPoint]:
    return {p.row: p for p in points}


# --- the reference file ---------------------------------------------------------------


def test_every_row_is_accounted_for(parsed: tuple[list[BenchPoint], list[Skipped]]) -> None:
    points, skipped = parsed
    with _reference().open(newline="", encoding="utf-8") as handle:
        n_rows = sum(1 for _ in csv.DictReader(handle))
    assert n_rows == 655
    rows = sorted([p.row for p in points] + [s.row for s in skipped])
    assert rows == list(range(1, n_rows + 1))
    assert skipped == []  # every reference row maps; a reason is required otherwise


def test_counts_per_regime_and_metric(parsed: tuple[list[BenchPoint], list[Skipped]]) -> None:
    points, _ = parsed
    assert Counter((p.regime, p.metric) for p in points) == {
        ("offline", "output_tokens_per_s"): 301,  # TRT-LLM v0.17 perf-overview table
        ("rate", "output_tokens_per_s"): 72,  # TRT-LLM v0.14 online serving (QPS-driven)
        ("rate", "total_tokens_per_s"): 72,
        ("rate", "ttft_ms"): 72,
        ("rate", "itl_ms"): 72,
        ("concurrency", "output_tokens_per_s"): 9,  # NIM 1.8.0 Llama-3.3-70B TP2
        ("concurrency", "ttft_ms"): 9,
        ("concurrency", "itl_ms"): 9,
        ("batch1", "tokens_per_s_per_user"): 39,  # llama.cpp (XiongjieDai)
    }


def test_label_mapping_counts(parsed: tuple[list[BenchPoint], list[Skipped]]) -> None:
    points, _ = parsed
    assert Counter(p.gpu for p in points) == {
        "h100-sxm": 250,
        "h200-sxm": 234,
        "a100-sxm": 61,
        "l40s": 45,
        "gh200": 26,
        "rtx-4090": 9,
        "h100-pcie": 3,
        None: 27,  # Apple, RTX 3090/4080/6000 Ada/A6000, A100 of unstated form factor
    }
    assert Counter(p.model for p in points) == {
        "llama-3.1-70b": 265,
        "llama-3.1-8b": 189,
        "mixtral-8x7b": 126,
        "llama-3.3-70b": 27,
        "llama-2-7b": 16,
        "llama-3-8b": 10,
        "llama-3.1-405b": 9,
        "llama-2-70b": 8,
        "llama-3-70b": 5,
    }
    assert Counter(p.tier for p in points) == {"A-": 589, "B+": 27, "C": 39}
    assert all(p.replicas * p.tp * p.pp == p.gpu_count for p in points)


def test_row_50_is_the_70b_tp1_h100_kv_cliff(
    parsed: tuple[list[BenchPoint], list[Skipped]],
) -> None:
    # TRT-LLM v0.17 perf-overview: Llama-3.1-70B FP8, 1x H100 80GB, 128/2048 -> 911.62 tok/s
    p = _by_row(parsed[0])[50]
    assert p.source == TRTLLM_V017
    assert (p.model, p.gpu, p.gpu_count, p.tp, p.pp, p.replicas) == (
        "llama-3.1-70b",
        "h100-sxm",
        1,
        1,
        1,
        1,
    )
    assert (p.weight_precision, p.kv_precision, p.isl, p.osl) == ("fp8", "fp8", 128, 2048)
    assert (p.regime, p.concurrency, p.metric) == ("offline", None, "output_tokens_per_s")
    assert p.value == pytest.approx(911.62)
    assert p.tier == "A-"
    assert p.raw["gpu"].startswith("H100-SXM-80GB")


def test_row_1_offline_8b_h200(parsed: tuple[list[BenchPoint], list[Skipped]]) -> None:
    # TRT-LLM v0.17 perf-overview: Llama-3.1-8B FP8, H200 141GB, TP1, 128/128 -> 29,526.04
    p = _by_row(parsed[0])[1]
    assert (p.source, p.model, p.gpu, p.tp) == (TRTLLM_V017, "llama-3.1-8b", "h200-sxm", 1)
    assert (p.isl, p.osl) == (128, 128)
    assert p.value == pytest.approx(29526.04)


def test_rows_302_to_305_online_serving(
    parsed: tuple[list[BenchPoint], list[Skipped]],
) -> None:
    # TRT-LLM "Online Serving Measurements" (v0.14, BF16): Llama-3.1-70B TP4 on 4x H100,
    # 467/256 at QPS=2 -> 498 out tok/s, 1406 total tok/s, TTFT 62 ms, ITL 21 ms.
    points = _by_row(parsed[0])
    got = [(points[r].metric, points[r].value) for r in (302, 303, 304, 305)]
    assert got == [
        ("output_tokens_per_s", 498.0),
        ("total_tokens_per_s", 1406.0),
        ("ttft_ms", 62.0),
        ("itl_ms", 21.0),
    ]
    p = points[302]
    assert p.source.endswith(
        '("Online Serving Measurements", data generated with v0.14.0, 500 requests, BF16)'
    )
    assert (p.model, p.gpu, p.gpu_count, p.tp, p.replicas) == ("llama-3.1-70b", "h100-sxm", 4, 4, 1)
    assert (p.weight_precision, p.kv_precision) == ("bf16", "bf16")
    assert (p.regime, p.concurrency, p.request_rate, p.achieved_rate) == ("rate", None, 2.0, 2.0)
    assert p.requests == 500  # "500 requests" in the source
    # QPS=INF row (324): offered rate infinite, achieved 16 req/s, TTFT 9,123 ms
    inf = points[324]
    assert inf.request_rate == math.inf and inf.achieved_rate == 16.0
    assert (inf.metric, inf.value) == ("ttft_ms", 9123.0)
    # the "H200 131GB HBM3" label of this table is the SXM H200
    assert points[446].gpu == "h200-sxm"


def test_rows_602_to_604_nim_fixed_concurrency(
    parsed: tuple[list[BenchPoint], list[Skipped]],
) -> None:
    # NIM 1.8.0 benchmark page: Llama-3.3-70B FP8 TP2 on 2x H100, 5000/500, c=100
    points = _by_row(parsed[0])
    p = points[604]
    assert p.source.startswith("https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance")
    assert (p.model, p.gpu, p.tp, p.weight_precision, p.kv_precision) == (
        "llama-3.3-70b",
        "h100-sxm",
        2,
        "fp8",
        "fp8",  # KV "not stated" -> weight precision
    )
    assert (p.regime, p.concurrency, p.isl, p.osl) == ("concurrency", 100, 5000, 500)
    assert (p.metric, p.value) == ("itl_ms", 92.91)
    assert (points[602].metric, points[602].value) == ("output_tokens_per_s", 917.26)
    assert (points[603].metric, points[603].value) == ("ttft_ms", 7996.25)
    assert p.tier == "B+"
    assert p.requests is None  # the NIM page does not say how many requests were sent


def test_llama_cpp_batch1_rows(parsed: tuple[list[BenchPoint], list[Skipped]]) -> None:
    points = _by_row(parsed[0])
    # XiongjieDai README, Dec 2023 overview: Llama-2-7B q4_0 on RTX 4090 -> 149.37 tok/s;
    # lengths not stated -> 0, text kept in raw
    p = points[617]
    assert (p.model, p.gpu, p.weight_precision, p.kv_precision) == (
        "llama-2-7b",
        "rtx-4090",
        "int4",
        "fp16",
    )
    assert (p.regime, p.concurrency, p.metric, p.value) == (
        "batch1",
        1,
        "tokens_per_s_per_user",
        149.37,
    )
    assert (p.isl, p.osl, p.raw["isl"]) == (0, 0, "short (text-completion prompt)")
    assert p.raw["precision_weights"] == "gguf q4_0" and p.tier == "C"
    # same README, "4090 24GB * 6", Llama-2-70B f16: layer split = pipeline over 6 GPUs
    q = points[640]
    assert (q.gpu_count, q.tp, q.pp, q.replicas, q.value) == (6, 1, 6, 1, 10.24)
    # May 2024 LLaMA 3 table, tg 512: Llama-3-8B Q4_K_M on RTX 4090 -> 130.58 tok/s
    r = points[641]
    assert (r.model, r.weight_precision, r.isl, r.osl, r.value) == (
        "llama-3-8b",
        "int4",
        0,
        512,
        130.58,
    )
    # Apple M2 Ultra has no llmsizer GPU id: kept, unmapped
    assert points[633].gpu is None and points[633].raw["gpu"].startswith("Apple M2 Ultra")


# --- edge cases on small files ----------------------------------------------------------


def _write(tmp_path: Path, rows: list[dict[str, str]], header: tuple[str, ...] = COLUMNS) -> Path:
    path = tmp_path / "points.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(header))
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    return path


def _row(**overrides: str) -> dict[str, str]:
    base = {
        "source": "test",
        "model": "Llama-3.1-8B",
        "gpu": "H100-SXM-80GB",
        "gpu_count": "2",
        "tp": "TP1",
        "precision_weights": "fp8",
        "precision_kv": "fp8",
        "isl": "1000",
        "osl": "1000",
        "concurrency": "8",
        "scenario": "closed loop",
        "metric": "ttft_mean",
        "value": "0.25",
        "unit": "s",
        "notes": "[tier B+] test",
    }
    base.update(overrides)
    return base


def test_units_replicas_and_unknown_labels(tmp_path: Path) -> None:
    path = _write(tmp_path, [_row(), _row(model="Some-Model-9B", gpu="Mystery GPU")])
    points, skipped = read_points(path)
    assert skipped == []
    first, second = points
    assert (first.metric, first.value) == ("ttft_ms", 250.0)  # seconds -> ms
    assert (first.regime, first.concurrency, first.replicas) == ("concurrency", 8, 2)
    assert (second.model, second.gpu) == (None, None)


@pytest.mark.parametrize(
    ("override", "reason"),
    [
        ({"metric": "p99_latency"}, "unknown metric 'p99_latency'"),
        ({"value": "n/a"}, "value is not a number: 'n/a'"),
        ({"value": "-3"}, "value must be a positive finite number, got '-3'"),
        ({"unit": "tokens/s"}, "unit 'tokens/s' does not fit a time metric"),
        ({"tp": "TP4"}, "gpu_count 2 is not a multiple of tp 4 x pp 1"),
        ({"tp": "PP"}, "cannot read tensor/pipeline parallelism from 'PP'"),
        ({"precision_weights": "gguf iq2_xs"}, "unknown weight precision 'gguf iq2_xs'"),
        ({"isl": "long"}, "isl is not a number of tokens: 'long'"),
        ({"concurrency": "varies"}, "cannot tell the load regime from concurrency 'varies'"),
        ({"gpu_count": "0"}, "gpu_count must be at least 1, got 0"),
    ],
)
def test_bad_rows_are_skipped_with_a_reason(tmp_path: Path, override: dict[str, str], reason: str) -> None:
    points, skipped = read_points(_write(tmp_path, [_row(), _row(**override)]))
    assert [p.row for p in points] == [1]
    assert [(s.row, s.reason) for s in skipped] == [(2, reason)]
    assert skipped[0].raw["source"] == "test"


def test_short_and_empty_records_are_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path, [_row()])
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\r\nonly,three,fields\r\n")
    points, skipped = read_points(path)
    assert len(points) == 1
    assert [(s.row, s.reason) for s in skipped] == [
        (2, "empty row"),
        (3, "has 3 fields, the header has 15"),
    ]


def test_missing_column_is_an_input_error(tmp_path: Path) -> None:
    header = tuple(c for c in COLUMNS if c != "unit")
    path = _write(tmp_path, [{k: v for k, v in _row().items() if k != "unit"}], header)
    with pytest.raises(InputError, match="lacks column"):
        read_points(path)
    # review round 24: a missing file says so and what to check, not the codec's words
    with pytest.raises(InputError, match="file not found: check the path and the file name"):
        read_points(tmp_path / "absent.csv")
