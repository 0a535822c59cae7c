"""MLPerf Inference rows (tests/data/mlperf_inference.csv, issue 21 item 6) as the reader
takes them: scenario as MLPerf prints it, the published parallelism glosses, KV precision
left to the engine, and every row it does not predict with its reason."""

from __future__ import annotations

from pathlib import Path

from llmsizer.inputs.benchdata import read_points
from llmsizer.inputs.benchlabels import Parallelism, _regime, _spec
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.fidelity import evaluate_file
from llmsizer.sizing.fidelity_report import coverage

DATA = Path(__file__).parent / "data"
MLPERF = DATA / "mlperf_inference.csv"


def test_collection_spans_rounds_submitters_and_vendors() -> None:
    # 44 published rows: v4.0 NVIDIA H200 LoadGen summaries and v5.0 closed results
    # tables (sources per row in the file)
    import csv
    rows = list(csv.DictReader(MLPERF.open(encoding="utf-8")))
    assert len(rows) == 44
    submitters = {r["source"].split("submitter ")[1].split(",")[0] for r in rows}
    assert {"NVIDIA", "AMD", "ASUSTeK", "GigaComputing", "Google", "Dell", "HPE", "Cisco",
            "Fujitsu"} == submitters
    assert {r["scenario"] for r in rows} == {"Server", "Interactive", "Offline"}
    assert any("MI325X" in r["gpu"] for r in rows) and any("H200" in r["gpu"] for r in rows)
    # v4.0 NVIDIA H200 x8 llama2-70b-99.9 Server: 26485.43 completed tokens/s
    # (mlperf_log_summary.txt, target_qps 91.5)
    assert rows[0]["value"] == "26485.43" and "v4.0" in rows[0]["source"]


def test_mlperf_scenarios_are_read_as_load_regimes() -> None:
    # Server / Interactive: Poisson arrivals, the rate is what the result states
    assert _regime("Poisson arrivals (MLPerf Server; target QPS chosen by the submitter)",
                   "Server", "output_tokens_per_s", 8) == ("rate", None, None)
    assert _regime("Poisson arrivals (MLPerf Server with the interactive latency limits)",
                   "Interactive", "output_tokens_per_s", 8) == ("rate", None, None)
    assert _regime("all queries issued at once (MLPerf Offline)", "Offline",
                   "output_tokens_per_s", 8) == ("offline", None, None)


def test_published_parallelism_glosses_are_read() -> None:
    # the remark in parentheses is the table's gloss (issue 21: "DEP4 (attention-DP +
    # expert-parallel)", "TP1 (one die)")
    assert _spec("DEP4 (attention-DP + expert-parallel)") == Parallelism(tp=4, ep=4, adp=4)
    assert _spec("TP1 (one die)") == Parallelism(tp=1)
    assert _spec("TP2 x4 replicas") == Parallelism(tp=2, replicas=4)


def test_kv_left_to_the_engine_says_which_default_was_assumed() -> None:
    # measured_blackwell_moe.csv row 1: TRT-LLM v0.19 Llama-3.3-70B FP4 on B200, KV "auto"
    points, _ = read_points(DATA / "measured_blackwell_moe.csv", load_catalog())
    first = next(p for p in points if p.row == 1)
    assert first.kv_precision == "fp8"
    assert first.kv_assumption == ("KV precision not stated (auto): fp8 assumed, the engine "
                                   "default for fp4 weights")


def test_every_unread_mlperf_row_has_a_reason_and_coverage_counts_every_row() -> None:
    results, skipped, n_rows = evaluate_file(MLPERF)
    assert n_rows == 44 and len(results) + len(skipped) == 44
    assert all(k.reasons for k in skipped)
    groups = coverage(results, skipped)
    assert {g: total for g, (_, total) in groups.items()} == {
        "Interactive": 6, "Offline": 19, "Server": 19}
    # every row read: the mixtral / llama3.1-405b rows whose results table states no
    # parallelism take it from the submitters' published harness configs (notes per row)
    assert skipped == [] and len(results) == 44
