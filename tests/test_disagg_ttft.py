"""The disaggregated runs' own first-token times (benchmarks/data/disagg_ttft.csv; issue 23,
docs/calibration-history.md "Ninth pass: the runs' own first-token times").

Source of every figure: the InferenceX production-API snapshot,
vngcloud/InferenceX-app@528c4146b8f502fcbce8df7870a935a970cbae25
``packages/app/cypress/fixtures/api/benchmarks.json`` (seconds there, ms here), the same
snapshot tests/data/measured_blackwell_moe.csv's DISAGG rows cite.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

from llmsizer.model.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import disagg_ttft  # noqa: E402


@pytest.fixture(scope="module")
def runs() -> dict[int, dict[str, str]]:
    return {int(r["tok_s_row"]): r for r in disagg_ttft.read_runs()}


def test_every_disaggregated_run_read_is_there_with_the_csv_values(
        runs: dict[int, dict[str, str]]) -> None:
    """One line per run the fidelity reader scores, holding both its rows; its throughput and
    TPOT are the CSV's (as published: tok/s per GPU, TPOT s -> ms), so the file cannot drift
    from the rows it explains."""
    cases = disagg_ttft.disagg_cases(load_catalog())
    by_row = {c.point.row: c for c in cases}
    # 280 / 140 since session 24: the GB200 FP4 8k/1k low-latency pair read from its launch
    # script (test_disagg_s24), its runs extracted from the same fixture
    assert len(cases) == 280 and len(runs) == 140
    assert sorted(by_row) == sorted(int(r[k]) for r in runs.values()
                                    for k in ("tok_s_row", "tpot_row"))
    for r in runs.values():
        tok, tpot = by_row[int(r["tok_s_row"])], by_row[int(r["tpot_row"])]
        assert (tok.point.metric, tpot.point.metric) == ("output_tokens_per_s", "tpot_ms")
        assert float(r["output_tput_per_gpu"]) == pytest.approx(float(tok.point.raw["value"]),
                                                                rel=1e-4)
        assert float(r["mean_tpot_ms"]) == pytest.approx(float(tpot.point.raw["value"]),
                                                         rel=1e-4)
        assert disagg_ttft.run_url(tok) == r["run_url"] == disagg_ttft.run_url(tpot)
        assert int(r["conc"]) == tok.point.concurrency
        assert r["source"] == disagg_ttft.SOURCE


def test_the_fixture_facts(runs: dict[int, dict[str, str]]) -> None:
    """Three runs as the fixture states them (entry index, run URL, seconds -> ms)."""
    # B200 Dynamo-SGLang FP4, 1 TP4 prefill + 5 TP8 decode workers, 1k/1k, 16 users
    # (actions/runs/21888944497): seconds to the first token where the prefill takes ms
    b200 = runs[1020]
    assert (b200["hardware"], b200["framework"], b200["conc"]) == ("b200", "dynamo-sglang", "16")
    assert b200["run_url"].endswith("/runs/21888944497/attempts/1")
    assert float(b200["mean_ttft_ms"]) == pytest.approx(2971.28, abs=0.01)
    assert float(b200["median_ttft_ms"]) == pytest.approx(2980.27, abs=0.01)
    assert float(b200["mean_e2el_ms"]) == pytest.approx(9439.76, abs=0.01)
    # GB200 Dynamo-TensorRT-LLM FP4, 1 DEP4 prefill + 4 TEP8 decode workers, 24 users
    gb200 = runs[686]
    assert gb200["fixture_entry"] == "151" and gb200["date"] == "2026-03-23"
    assert float(gb200["mean_ttft_ms"]) == pytest.approx(220.98, abs=0.01)
    assert float(gb200["p99_ttft_ms"]) == pytest.approx(431.18, abs=0.01)
    # H100 Dynamo-TensorRT-LLM FP8, 6 users on 3 decode replicas of one sequence each
    assert float(runs[1000]["mean_ttft_ms"]) == pytest.approx(12345.08, abs=0.01)


def test_littles_law_with_the_runs_own_ttft_and_tpot_gives_their_throughput(
        runs: dict[int, dict[str, str]]) -> None:
    """C x OSL / (TTFT + (OSL - 1) x TPOT) against the measured output tokens/s of the decode
    GPUs: +4.3 % median over the 140 runs, every run -1 % to +14 % (the aggregated runs:
    0.95-1.00, docs/calibration.md row 782). The runs are self-consistent, so their
    first-token times are part of what their throughput measures."""
    osl = {c.point.row: c.point.osl for c in disagg_ttft.disagg_cases(load_catalog())}
    gaps = [disagg_ttft.little(r, osl[row]) for row, r in runs.items()]
    assert statistics.median(gaps) == pytest.approx(0.043, abs=0.001)
    assert min(gaps) > -0.015 and max(gaps) < 0.145
