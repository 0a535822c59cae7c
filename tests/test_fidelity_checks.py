"""A throughput row its own run contradicts is not predicted (issue 23, sizing/fidelity_checks).

Data: tests/data/measured_blackwell_moe.csv (InferenceX runs report throughput, mean TPOT and
mean TTFT of one fixed-concurrency run on three rows). Rows are cited by their number
(1-based data record).
"""

from __future__ import annotations

from helpers import ROOT

from llmsizer.inputs.benchdata import BenchPoint, read_points
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.fidelity import evaluate_file
from llmsizer.sizing.fidelity_checks import LITTLE_FACTOR, _run_key, contradicted_rows

MOE = ROOT / "tests" / "data" / "measured_blackwell_moe.csv"
CALIBRATION = ROOT / "tests" / "data" / "calibration_points.csv"


def _implied_ratios() -> dict[int, float]:
    """measured / Little's-law throughput of every run with one row of each of the three."""
    points, _ = read_points(MOE, load_catalog())
    runs: dict[tuple[str, ...], dict[str, list[BenchPoint]]] = {}
    for p in points:
        if p.regime == "concurrency" and p.statistic == "mean" and p.concurrency:
            runs.setdefault(_run_key(p), {}).setdefault(p.metric, []).append(p)
    out = {}
    for m in runs.values():
        if all(len(m.get(k, [])) == 1 for k in ("output_tokens_per_s", "tpot_ms", "ttft_ms")):
            (t,), (tpot,), (ttft,) = m["output_tokens_per_s"], m["tpot_ms"], m["ttft_ms"]
            implied = t.concurrency * t.osl / (ttft.value / 1000 + t.osl * tpot.value / 1000)
            out[t.row] = t.value / implied
    return out


def test_only_the_atom_mi355x_mtp_run_contradicts_itself() -> None:
    # row 782: ATOM, DeepSeek-R1 FP8 on 8 MI355X, MTP, concurrency 512, 1k/1k: 25.28 tok/s per
    # GPU (202 for 8) against TPOT 59.18 ms (row 783) and TTFT 1,038 ms (row 784)
    points, _ = read_points(MOE, load_catalog())
    found = contradicted_rows(points)
    assert list(found) == [782]
    assert "202 tok/s is 0.0238 times the 8,490 tok/s that 512 users" in found[782]
    assert "rows 783 and 784" in found[782]
    ratios = _implied_ratios()
    assert len(ratios) == 178
    agreeing = [r for row, r in ratios.items() if row != 782]
    # every other run agrees within 6 %: the factor of 2 leaves them far inside
    assert min(agreeing) > 0.94 and max(agreeing) < 1.01
    assert min(agreeing) > 1 / LITTLE_FACTOR and ratios[782] < 1 / LITTLE_FACTOR / 10


def test_the_contradicted_row_is_skipped_with_its_reason_and_its_run_still_read() -> None:
    results, skipped, _ = evaluate_file(MOE)
    reasons = {k.row: k.reason for k in skipped}
    assert reasons[782].startswith("output throughput contradicts its own run")
    read = {r.point.row for r in results}
    assert 782 not in read and {783, 784} <= read  # its TPOT and TTFT are still predicted


def test_the_first_file_has_no_contradicted_run() -> None:
    points, _ = read_points(CALIBRATION, load_catalog())
    assert contradicted_rows(points) == {}
