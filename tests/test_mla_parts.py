"""``benchmarks/mla_parts.py``: the decode step's parts against the measured TPOT of the MLA
rows (issue 23, fifth pass; docs/calibration-history.md, "Fifth pass: MLA attention at large batch").

Data: tests/data/measured_blackwell_moe.csv, InferenceX DeepSeek-R1-0528 runs (the InferenceX
production-API snapshot, vngcloud/InferenceX-app@528c4146b
``packages/app/cypress/fixtures/api/benchmarks.json``), Dynamo-TensorRT-LLM on a GB200 NVL72.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.fidelity import evaluate_file, tables_for

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import mla_parts  # noqa: E402


@pytest.fixture(scope="module")
def rows() -> dict[int, mla_parts.Parts]:
    catalog = load_catalog()
    tables = tables_for(catalog)
    return {c.point.row: mla_parts.parts_of(c, catalog, tables)
            for c in mla_parts.mla_latency_rows(catalog)}


def test_parts_add_up_to_the_predicted_tpot(rows: dict[int, mla_parts.Parts]) -> None:
    """The script's parts are the engine's step: their sum x the speculative TPOT factor is
    the TPOT the fidelity reader predicts, on every MLA latency row, and it reads every
    disaggregated TPOT row the reader scores."""
    for row in rows.values():
        factor = mla_parts.number(row.env, "spec_tpot_factor")
        assert row.step * factor == pytest.approx(row.predicted, rel=1e-9), row.case.point.row
    scored, _, _ = evaluate_file(ROOT / "tests" / "data" / "measured_blackwell_moe.csv")
    disagg = {r.point.row for r in scored if r.point.disaggregated and r.point.metric == "tpot_ms"}
    assert disagg == {n for n, r in rows.items() if r.case.point.disaggregated}


def test_the_largest_long_context_pool_leaves_nothing_for_attention(rows: dict[int, mla_parts.Parts]) -> None:
    """Row 719: 1 x (TP32 EP32 ADP) decode, 8,192 users, 1k / 8k, mean TPOT 34.3687 ms. The
    modelled attention is over a third of the step, yet the other parts alone exceed the
    measurement: no attention rate explains the over-prediction."""
    row = rows[719]
    assert row.case.point.value == pytest.approx(34.3687)
    assert row.parts["attention"] > row.step / 3
    assert row.left_for_attention < 0
    assert mla_parts.implied(row) is None


def test_one_stack_on_one_rack_leaves_attention_shares_far_apart(rows: dict[int, mla_parts.Parts]) -> None:
    """Same stack (Dynamo-TensorRT-LLM) and GPU (GB200): 16,130 users at 1k / 1k with MTP on
    DEP4 decode replicas (row 691, 53.9112 ms) leave the attention 0.12 of its peak; 8,192
    users at 1k / 8k on DEP16 (row 909, 48.5588 ms) 0.51. One kernel rate cannot fit both."""
    low, high = rows[691], rows[909]
    assert (low.case.point.value, high.case.point.value) == pytest.approx((53.9112, 48.5588))
    assert mla_parts.stack(low.case) == mla_parts.stack(high.case) == "dynamo-trt"
    assert low.case.point.gpu == high.case.point.gpu == "gb200"
    low_share, high_share = mla_parts.implied(low), mla_parts.implied(high)
    assert low_share is not None and high_share is not None
    assert high_share > 3 * low_share


def test_rows_per_expert_gemm_do_not_set_the_compute_efficiency(
        rows: dict[int, mla_parts.Parts]) -> None:
    """Sixth pass (docs/calibration-history.md, "Sixth pass: expert GEMMs and all-to-all at large
    batch"): a grouped-GEMM efficiency that grows with the rows per expert GEMM (DeepGEMM's
    masked-layout table: 0.47 of the FP8 peak at 256 rows, 0.62 at 1,024) cannot explain the
    4-bit decode pools. Rows 717 and 719 (GB200 DEP32, 1k / 8k, 4,096 and 8,192 users: 128
    and 256 rows per expert GEMM) leave nothing for the compute; row 729 (GB200 Dynamo-SGLang,
    15,000 users, 224 rows) needs less than the fitted 4-bit efficiency; and the same recipe
    (DEP4 decode, 1k / 1k, one MTP layer, about 86 rows) on B200 (row 889, 45.38 ms) and
    GB200 (row 691, 53.91 ms) needs shares almost twice apart."""
    assert mla_parts.gemm_rows(rows[719]) == pytest.approx(256, rel=0.01)
    assert mla_parts.gemm_rows(rows[717]) == pytest.approx(128, rel=0.01)
    for n in (717, 719):
        assert mla_parts.left_for_compute(rows[n]) < 0
        assert mla_parts.implied_compute(rows[n]) is None
    fitted = mla_parts.number(rows[729].env, "mfu_decode")
    share_729 = mla_parts.implied_compute(rows[729])
    assert mla_parts.gemm_rows(rows[729]) > 200 and share_729 is not None and share_729 < fitted
    b200, gb200 = rows[889], rows[691]
    assert (b200.case.point.value, gb200.case.point.value) == pytest.approx((45.3829, 53.9112))
    assert mla_parts.gemm_rows(b200) == pytest.approx(mla_parts.gemm_rows(gb200), rel=0.02)
    share_b200, share_gb200 = mla_parts.implied_compute(b200), mla_parts.implied_compute(gb200)
    assert share_b200 is not None and share_gb200 is not None
    assert share_b200 > 1.5 * share_gb200
