"""Embedding calibration data (tests/data/embedding_points.csv) and its fit (issue 24).

Rows are published encoder throughputs, copied as published with their source: NVIDIA's
TensorRT demo/BERT README (BERT base and large on an A100 40GB, an L4 and an L40S),
huggingface/optimum-benchmark examples/fast-mteb (bge-base-en-v1.5 on an A100-SXM4-80GB,
forward pass only) and michaelfeil/infinity docs/docs/benchmarking.md (bge-large-en-v1.5 on
an L4 behind five servers). The fitted constants live in catalogs/embedders.yaml.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.fidelity_embed import (
    COLUMNS,
    catalog_constants,
    is_embedding_file,
    load,
    median_abs_error,
    score,
    source_balanced_error,
)

ROOT = Path(__file__).resolve().parents[1]
POINTS = ROOT / "tests" / "data" / "embedding_points.csv"
CAT = load_catalog()


def _rows() -> list[dict[str, str]]:
    with open(POINTS, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_every_row_has_its_columns_and_a_pinned_source() -> None:
    rows = _rows()
    assert len(rows) >= 40
    assert len({r["source"] for r in rows}) == 3
    for r in rows:
        assert tuple(r) == COLUMNS
        # a repository path at a commit: the table can be re-read as it was
        assert r["source"].startswith("github:") and "@" in r["source"], r["source"]
        for k in ("model", "gpu", "engine", "precision", "batch_sequences", "seq_tokens",
                  "metric", "value", "unit"):
            assert r[k].strip(), (k, r)
    assert is_embedding_file(POINTS)
    assert not is_embedding_file(ROOT / "tests" / "data" / "calibration_points.csv")


def test_rows_are_read_as_published() -> None:
    """Three rows converted to tokens/s by hand from their tables."""
    cases, skipped = load(POINTS, CAT)
    assert len(cases) == 158 and len(skipped) == 18
    assert all("FP32" in why for _, why in skipped)  # the PyTorch baseline: torch_dtype null
    assert {c.gpu for c in cases} == {"a100-sxm", "a100-40gb-pcie", "l4", "l40s"}
    by_row = {c.row: c for c in cases}
    # optimum-benchmark: ONNX Runtime CUDA provider, batch 32 x 256 tokens, 1,920 samples/s
    ort = by_row[36]
    assert (ort.gpu, ort.model, ort.batch_sequences) == ("a100-sxm", "bge-base-en-v1.5", 32)
    assert ort.measured == pytest.approx(1920 * 256)
    # Infinity: TEI on an L4, 0.54 requests/s of 256 sentences = 115,000 tokens
    tei = by_row[53]
    assert (tei.gpu, tei.model, tei.host_cores) == ("l4", "bge-large-en-v1.5", 16)
    assert tei.measured == pytest.approx(0.54 * 115_000, rel=1e-3)
    # TensorRT demoBERT: BERT large (= bge-large's shape), A100 40GB, 128 x 384 tokens in
    # 155.47 ms on average (FP16)
    trt = by_row[97]
    assert (trt.gpu, trt.model, trt.batch_sequences, trt.seq_tokens) == (
        "a100-40gb-pcie", "bge-large-en-v1.5", 128, 384)
    assert trt.measured == pytest.approx(128 * 384 / 0.15547)


def test_fitted_constants_and_their_errors() -> None:
    """The catalog's constants (MFU 0.33, 0.95 ms per batch) size like a serving stack: the
    ONNX Runtime sweep within 10 % (median), TEI on the L4 within 15 %; a hand-fused TensorRT
    engine runs about twice as fast as predicted on an A100 (docs/calibration.md)."""
    k = catalog_constants(CAT)
    assert (k["mfu_encode"], k["encode_batch_overhead_ms"]) == (0.33, 0.95)
    results = score(load(POINTS, CAT)[0], CAT)
    by_row = {r.case.row: r for r in results}
    ort = [r for r in results if r.case.source.endswith("optimum-benchmark/examples/fast-mteb"
                                                       "/artifacts/short_report.csv")]
    assert len(ort) == 33 and median_abs_error(ort) <= 0.10
    assert abs(by_row[36].error) <= 0.15 and abs(by_row[53].error) <= 0.15
    assert by_row[97].error == pytest.approx(-0.54, abs=0.02)
    assert 0.35 <= median_abs_error(results) <= 0.42  # in sample, all 158 rows


def test_catalog_constants_are_a_minimum_of_the_fit() -> None:
    """Moving either constant one grid step either way makes the source-balanced error no
    better (the full grid search and the cross-validation: benchmarks/calibrate_embed.py)."""
    cases = load(POINTS, CAT)[0]
    k = catalog_constants(CAT)
    at = source_balanced_error(score(cases, CAT, k))
    for dm, do in ((0.01, 0), (-0.01, 0), (0, 0.05), (0, -0.05)):
        moved = {**k, "mfu_encode": k["mfu_encode"] + dm,
                 "encode_batch_overhead_ms": k["encode_batch_overhead_ms"] + do}
        assert source_balanced_error(score(cases, CAT, moved)) >= at - 1e-12, (dm, do)


def test_calibration_page_reports_the_fit_and_the_cross_validation() -> None:
    text = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    table = text.split("<!-- calibrate_embed:table -->")[1].split("<!-- /calibrate_embed")[0]
    assert "| catalog constants, all rows | 158 | 0.33 | 0.95 | 39% |" in table
    assert "**leave one source out, pooled** | 158 | | | **43%**" in table
    assert "**leave one gpu out, pooled** | 158 | | | **45%**" in table
    assert "The acceptance target is not met" in text


def test_fidelity_command_reads_the_embedding_rows() -> None:
    out = subprocess.run([sys.executable, "-m", "llmsizer.cli", "fidelity", str(POINTS),
                          "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["summary"]["predicted"] == 158 and doc["summary"]["skipped"] == 18
    assert doc["summary"]["median_abs_error"] == pytest.approx(0.39, abs=0.01)
    summary = subprocess.run([sys.executable, "-m", "llmsizer.cli", "fidelity", str(POINTS),
                              "--summary"], capture_output=True, text=True, timeout=120)
    assert summary.returncode == 0 and "158 of 176 rows predicted" in summary.stdout
    lines = summary.stdout.splitlines()
    assert max(map(len, lines)) <= 100
    # per source and GPU: the TensorRT A100 rows 54 % slow, the ONNX Runtime sweep within 7 %
    assert any("NVIDIA/TensorRT/demo/BERT/README.md" in ln and "a100-40gb-pcie" in ln
               and "(signed -54%)" in ln for ln in lines)
    assert any("optimum-benchmark" in ln and "median |error|   7%" in ln for ln in lines)
