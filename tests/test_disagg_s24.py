"""Disaggregated rows, session 24 (issue 23: the DISAGG p90 bar, 35 %, not met).

Data: tests/data/measured_blackwell_moe.csv (InferenceX DeepSeek-R1-0528, one source).
docs/calibration.md, "Disaggregated prefill/decode", "What the tail is made of".
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

import pytest

from llmsizer.inputs.benchlabels import Parallelism, disagg_pools, launch_layouts
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.fidelity import evaluate_file, prepare, quantile, row_text, score, tables_for
from llmsizer.sizing.fidelity_inferencex import sglang_memory_fraction

ROOT = Path(__file__).resolve().parents[1]
MOE = ROOT / "tests" / "data" / "measured_blackwell_moe.csv"
LABEL = "DISAGG P:1x(TP1 ADP) D:4x(TP1 ADP)"


@pytest.fixture(scope="module")
def results():
    got, _, _ = evaluate_file(MOE)
    return [r for r in got if r.point.disaggregated]


def _rows(label: str) -> list[dict[str, str]]:
    with MOE.open(newline="") as f:
        return [r for r in csv.DictReader(f) if r["tp"] == label]


def test_gb200_fp8_1k1k_low_latency_reads_its_launch_script(results):
    """GB200 FP8, 1k/1k, 16 users, "P:1x(TP1 ADP) D:4x(TP1 ADP)" on 4 + 16 GPUs (2025-12-21).
    The run configuration's comment names DEP4 (InferenceX@c4cde0370 nvidia-master.yaml,
    "Bottom of curve"), but its SCRIPT_MODE=1k1k-low-latency runs
    scripts/gb200-fp8/disagg/1k1k-low-latency.sh: --tensor-parallel-size $TOTAL_GPUS (4)
    --data-parallel-size 1 --expert-parallel-size 1 and --mem-fraction-static 0.95 on both
    workers (as read in the forks wxsms/dynamo@cf433e682 and zxue2/dynamo@d9142dee0; the
    8k1k script of the same configuration says the same, test_fidelity_disagg).
    Physics: read as DEP4, every GPU holds DeepSeek-R1's non-expert weights once per
    attention rank plus a quarter of the 8-bit experts, more than its memory, so the model
    found no KV room and decoded one sequence per replica: -73 % on throughput. The run
    reports 89.75 output tok/s per decode GPU at a mean TPOT of 10.116 ms: 89.75 x 16 x
    0.010116 = 14.5 sequences decoding, 3.6 per decode worker of its 4 users. Read as TP4
    the model decodes 3.9 of them: +10.6 % / -2.1 %."""
    rows = _rows(LABEL)
    assert len(rows) == 2 and {r["concurrency"] for r in rows} == {"16"}
    for row in rows:
        assert launch_layouts(row["notes"]) == ("tp4", "tp4")
        assert disagg_pools(row["tp"], row["notes"]) == (1, Parallelism(tp=4), 4,
                                                         Parallelism(tp=4))
        # without the launch script's statement the placeholder reads DEP4
        plain = disagg_pools(row["tp"], row["notes"].split("; launch script:")[0])
        assert plain is not None and plain[3] == Parallelism(tp=4, ep=4, adp=4)
    got = [r for r in results if r.point.raw["tp"] == LABEL]
    assert len(got) == 2
    catalog = load_catalog()
    for r in got:
        assert sglang_memory_fraction(r.point, row_text(r.point), catalog) == 0.95
        assert 3.5 < r.batch < 4.0  # 0 as DEP4: no KV room
    errors = {r.point.metric: r.error for r in got}
    assert errors["output_tokens_per_s"] == pytest.approx(0.106, abs=0.01)  # -0.73 as DEP4
    assert errors["tpot_ms"] == pytest.approx(-0.021, abs=0.01)


def test_gb200_fp4_1k1k_low_latency_reads_its_launch_script(results):
    """GB200 FP4, 1k/1k, 4 users, "P:1x(TP1 ADP) D:2x(TP1 ADP)" on 4 + 8 GPUs (2025-12-21).
    The configuration's comment says "1 prefill worker at DEP4 and 2 decode workers at DEP4"
    (InferenceX@c4cde0370, dsr1-fp4-gb200-dynamo-sglang), its SCRIPT_MODE=1k1k-low-latency
    runs scripts/gb200-fp4/disagg/1k1k-low-latency.sh, read at ai-dynamo/dynamo@75b4a35fc:
    --tensor-parallel-size $TOTAL_GPUS (4) --expert-parallel-size 1 on both workers, no data
    parallelism, --mem-fraction-static 0.95. Read as DEP4: -8 % / +14 %; as the script says
    the model decodes 1.96 of the run's 1.9 sequences per worker: +12.0 % / -6.3 %."""
    label = "DISAGG P:1x(TP1 ADP) D:2x(TP1 ADP)"
    rows = _rows(label)
    assert len(rows) == 2
    for row in rows:
        assert disagg_pools(row["tp"], row["notes"]) == (1, Parallelism(tp=4), 2,
                                                         Parallelism(tp=4))
    got = {r.point.metric: r for r in results if r.point.raw["tp"] == label}
    assert got["output_tokens_per_s"].error == pytest.approx(0.120, abs=0.01)
    assert got["tpot_ms"].error == pytest.approx(-0.063, abs=0.01)
    assert 1.9 < got["tpot_ms"].batch < 2.0


def test_gb200_fp4_8k1k_low_latency_rows_are_read_from_their_launch_script(results):
    """GB200 FP4, 8k/1k, 4 and 32 users, "P:1x(TP1) D:4x(TP1 ADP)" on 4 + 16 GPUs
    (2025-12-21). The configuration (InferenceX@c4cde0370 dsr1-fp4-gb200-dynamo-sglang,
    isl 8192) sets tp 1, ep 1 and dp-attn false on the prefill side, the placeholders its
    1k/1k entries say are hardcoded; SCRIPT_MODE=8k1k-low-latency runs
    scripts/gb200-fp4/disagg/8k1k-low-latency.sh: --dp-size 1 --tp-size $TOTAL_GPUS (4)
    --ep-size 1 on both workers (wxsms/dynamo@cf433e682, zxue2/dynamo@93631cb9f, the same).
    Read from the label the prefill "TP1" is 1 GPU against the 4 stated, so the rows were
    not read; read from the script: +17.6 % / -11.3 % at 4 users, +12.5 % / +4.1 % at 32."""
    label = "DISAGG P:1x(TP1) D:4x(TP1 ADP)"
    rows = _rows(label)
    assert len(rows) == 4
    for row in rows:
        assert disagg_pools(row["tp"], row["notes"]) == (1, Parallelism(tp=4), 4,
                                                         Parallelism(tp=4))
        plain = disagg_pools(row["tp"], row["notes"].split("; launch script:")[0])
        assert plain is not None and plain[1] == Parallelism()  # 1 GPU: disagrees
    got = {(r.point.concurrency, r.point.metric): r.error for r in results
           if r.point.raw["tp"] == label}
    assert got == pytest.approx({(4, "output_tokens_per_s"): 0.176, (4, "tpot_ms"): -0.113,
                                 (32, "output_tokens_per_s"): 0.125, (32, "tpot_ms"): 0.041},
                                abs=0.01)


def test_the_decode_step_at_each_runs_own_batch_is_the_tail():
    """A run's two rows give the sequences it decoded: B = output tokens/s x TPOT per decode
    replica (Little's law). The model's TPOT at that B against the measured TPOT scores the
    decode step apart from the batch and the prefill pool: over the 140 runs, median |error|
    11.4 %, p90 39.9 %. The step alone is past the 35 % bar at the 90th percentile, so no
    term in the disaggregation figures (batch, prefill pool, the cache's move) can bring the
    DISAGG p90 under it. Of the 55 rows above 35 %, 37 have the step more than 25 % off at
    the run's own batch (23 the step only, 14 step and batch), 11 the batch only
    (docs/calibration.md, "What the tail is made of"; benchmarks/disagg_cv.py --step)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from disagg_cv import step_at_run_batch

    from llmsizer.inputs.benchdata import read_points

    catalog = load_catalog()
    points, _ = read_points(MOE, catalog)
    cases, _ = prepare([p for p in points if p.disaggregated], catalog)
    tables = tables_for(catalog)
    base = score(cases, catalog, tables)
    runs = step_at_run_batch(cases, base, catalog, tables)
    assert len(runs) == 140
    steps = [abs(r.step_error) for r in runs]
    assert statistics.median(steps) == pytest.approx(0.114, abs=0.002)
    assert quantile(steps, 0.9) == pytest.approx(0.399, abs=0.002)
    # at >= 500 sequences a replica on GB200 the same batches run too slow under
    # Dynamo-TensorRT-LLM and about right under Dynamo-SGLang: a stack, not a term
    by_stack: dict[object, list[float]] = {}
    for r in runs:
        if r.key[0] == "gb200" and r.batch >= 500:
            by_stack.setdefault(r.key[1], []).append(r.step_error)
    assert statistics.median(by_stack["dynamo-trt"]) == pytest.approx(0.22, abs=0.01)
    assert statistics.median(by_stack["dynamo-sglang"]) == pytest.approx(-0.08, abs=0.01)
