"""Measured mode from benchmark result files (``measured: {file: ...}``, docs/measured.md).

One sample file per supported format lives in tests/data/bench/ (written from each tool's
documented output; the sources are in tests/data/bench/README.md): vllm bench serve (and the
older benchmark_serving.py), AIPerf, GenAI-Perf and trtllm-bench. Three vLLM files at
concurrency 16 / 32 / 64 form a curve on which the workload's targets pick the point.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import DATA

from llmsizer.base.errors import InputError
from llmsizer.inputs.benchfiles import read_bench_files
from llmsizer.inputs.benchformats import detect_format, parse_bench
from llmsizer.inputs.benchpoints import BenchPoint, gpu_names_conflict
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

openpyxl: Any = importlib.import_module("openpyxl")

BENCH = DATA / "bench"
CURVE = ["vllm-llama70b-4xh100-c16.json", "vllm-llama70b-4xh100-c32.json",
         "vllm-llama70b-4xh100-c64.json"]


def _account(tmp: Path, measured: dict[str, Any], *, targets: dict[str, float] | None = None,
             model: str = "llama-3.1-70b", prompt: int = 500, output: int = 300,
             users: int = 200, files: list[str] | None = None) -> Path:
    """A requirements file in ``tmp`` beside copies of the benchmark files it names."""
    for name in files or []:
        shutil.copy(BENCH / name, tmp / name)
    data = {
        "schema_version": 1, "account": {"name": "Bench test"},
        "workloads": [{"name": "Assistant", "model": model, "concurrent_users": users,
                       "prompt_tokens": prompt, "output_tokens": output,
                       "targets": targets or {"response_time_s": 10, "ttft_s": 2},
                       "measured": measured}],
        "hardware": {"platform": "dell-xe8640"},
        "policy": {"headroom": 0.25, "survive_node_loss": False},
    }
    path = tmp / "account.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _sized(path: Path) -> Result:
    return size(load(path))


# --- seed 000's worked example, from a result file ---------------------------------------------


def test_seed000_worked_example_from_a_vllm_result_file_gives_8_nodes() -> None:
    """Seed 000 Steps 2-4 with the measured figure read from a `vllm bench serve` result:
    200 users x 30 tok/s (300 tokens in 10 s) = 6,000 tok/s; the file reports 1,000 output
    tok/s for one 4 x H100 replica -> 6 replicas -> x 1.25 headroom -> 8 four-GPU nodes."""
    res = _sized(BENCH / "seed000.yaml")
    w = res.workloads[0]
    best = w.best
    assert best is not None and w.mode == "measured"
    v = best.values
    assert w.inputs["measured_tokens_per_s_per_replica"] == 1000.0
    assert v["replica_output_tokens_per_s"] == 1000.0
    assert v["required_tokens_per_s_per_user"] == pytest.approx(30.0, rel=1e-12)
    assert v["required_system_tokens_per_s"] == pytest.approx(6000.0, rel=1e-12)
    assert v["demand_replicas"] == pytest.approx(6.0, rel=1e-12)
    assert v["gpus_per_node"] == 4 and v["tp"] == 4
    assert v["nodes"] == 8 and res.totals.nodes == 8
    [point] = w.measured_points
    assert point.chosen and point.meets_targets and point.format == "vllm"
    assert point.concurrency == 32 and point.replicas == 1 and point.gpus == 4
    assert w.measured_note is not None and "at concurrency 32" in w.measured_note


# --- one sample per format -----------------------------------------------------------------------

FORMATS = {
    "vllm-llama70b-4xh100-c32.json": dict(
        format="vllm", model="meta-llama/Llama-3.1-70B-Instruct", concurrency=32.0,
        request_rate=None, input_tokens=500.0, output_tokens=300.0, output_tokens_per_s=1000.0,
        tpot_median=31.2, ttft_p99=1480.6, gpu_count=None),
    "benchmark-serving-legacy-llama3-8b.json": dict(
        format="vllm", model="meta-llama/Meta-Llama-3-8B-Instruct", concurrency=None,
        request_rate=4.0, input_tokens=512.0, output_tokens=128.0, output_tokens_per_s=104.05,
        tpot_median=13.11, ttft_p99=233.38, gpu_count=None),
    "aiperf-llama8b-1xh100-c10.json": dict(
        format="aiperf", model="meta-llama/Llama-3.1-8B-Instruct", concurrency=10.0,
        request_rate=None, input_tokens=550.0, output_tokens=200.0, output_tokens_per_s=1254.3,
        tpot_median=7.52, ttft_p99=88.41, gpu_count=None),
    "genai-perf-llama8b-1xh100-c8_genai_perf.json": dict(
        format="genai-perf", model="meta-llama/Llama-3.1-8B-Instruct", concurrency=8.0,
        request_rate=None, input_tokens=550.0, output_tokens=200.0, output_tokens_per_s=1060.2,
        tpot_median=7.0, ttft_p99=75.94, gpu_count=None),
    "trtllm-bench-llama70b-tp4-h100.json": dict(
        format="trtllm-bench", model="meta-llama/Llama-3.1-70B-Instruct", concurrency=63.41,
        request_rate=None, input_tokens=500.0, output_tokens=300.0, output_tokens_per_s=1525.7,
        tpot_median=40.5, ttft_p99=1988.1, gpu_count=4),
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_is_read_with_its_figures(name: str) -> None:
    want = FORMATS[name]
    [p] = read_bench_files(BENCH, [name])
    assert p.format == want["format"]
    assert p.model == want["model"]
    assert p.concurrency == want["concurrency"]
    assert p.request_rate == want["request_rate"]
    assert p.input_tokens == pytest.approx(want["input_tokens"], rel=1e-12)
    assert p.output_tokens == pytest.approx(want["output_tokens"], rel=1e-12)
    assert p.output_tokens_per_s == want["output_tokens_per_s"]
    assert p.tpot_ms.median == pytest.approx(want["tpot_median"], rel=1e-12)
    assert p.ttft_ms.p99 == pytest.approx(want["ttft_p99"], rel=1e-12)
    assert p.gpu_count == want["gpu_count"]
    # naming the format gives the same point as detecting it
    assert read_bench_files(BENCH, [name], want["format"]) == [p]


def test_formats_are_told_apart_by_their_keys() -> None:
    for name, want in FORMATS.items():
        data = json.loads((BENCH / name).read_text())
        assert detect_format(data) == want["format"], name
    assert detect_format({"throughput": 5}) is None


def test_recorded_gpu_details_are_kept() -> None:
    [trt] = read_bench_files(BENCH, ["trtllm-bench-llama70b-tp4-h100.json"])
    assert (trt.gpu_name, trt.gpu_count, trt.tp, trt.pp) == ("NVIDIA H100 80GB HBM3", 4, 4, 1)
    assert trt.tokens_per_s_per_user == 24.57
    [ai] = read_bench_files(BENCH, ["aiperf-llama8b-1xh100-c10.json"])
    assert ai.gpu_name == "NVIDIA H100 80GB HBM3" and ai.tokens_per_s_per_user == 131.9
    assert gpu_names_conflict("NVIDIA H100 80GB HBM3", "NVIDIA H200 SXM 141GB")
    assert not gpu_names_conflict("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM 80GB")
    assert not gpu_names_conflict("Unknown", "NVIDIA H100 SXM 80GB")
    assert not gpu_names_conflict(None, "NVIDIA H100 SXM 80GB")


def test_each_format_sizes_a_workload(tmp_path: Path) -> None:
    """Every sample drives a measured sizing; GPU and GPU count come from the block unless
    the file records them (trtllm-bench: world size 4 = one TP4 replica)."""
    cases = [
        ("vllm-llama70b-4xh100-c32.json", "llama-3.1-70b", "h100-sxm", 4, 500, 300, 1000.0),
        ("trtllm-bench-llama70b-tp4-h100.json", "llama-3.1-70b", "h100-sxm", 4, 500, 300,
         1525.7),
        ("aiperf-llama8b-1xh100-c10.json", "llama-3.1-8b", "h100-sxm", 1, 550, 200, 1254.3),
        ("genai-perf-llama8b-1xh100-c8_genai_perf.json", "llama-3.1-8b", "h100-sxm", 1, 550,
         200, 1060.2),
        ("benchmark-serving-legacy-llama3-8b.json", "llama-3.1-8b", "h100-sxm", 1, 512, 128,
         104.05),
    ]
    for i, (name, model, gpu, per_replica, prompt, output, tps) in enumerate(cases):
        tmp = tmp_path / str(i)
        tmp.mkdir()
        path = _account(tmp, {"file": name, "gpu": gpu, "gpus_per_replica": per_replica},
                        model=model, prompt=prompt, output=output, users=20,
                        targets={"tokens_per_s_per_user": 20, "ttft_s": 3}, files=[name])
        w = _sized(path).workloads[0]
        assert w.recommended is not None, (name, w.advice)
        assert w.inputs["measured_tokens_per_s_per_replica"] == pytest.approx(tps, rel=1e-12)
        assert w.measured_points[0].chosen, name


def test_gpu_count_from_the_block_makes_replicas(tmp_path: Path) -> None:
    """A vLLM file does not record its GPUs: gpu_count: 8 with 4 per replica = 2 replicas,
    so the 1,000 tok/s server is 500 tok/s per replica."""
    path = _account(tmp_path, {"file": CURVE[1], "gpu": "h100-sxm", "gpus_per_replica": 4,
                               "gpu_count": 8}, files=[CURVE[1]])
    w = _sized(path).workloads[0]
    [p] = w.measured_points
    assert (p.gpus, p.replicas, p.tokens_per_s_per_replica) == (8, 2.0, 500.0)
    assert w.inputs["measured_tokens_per_s_per_replica"] == 500.0


# --- a curve: the targets pick the point ------------------------------------------------------------


@pytest.mark.parametrize(
    ("targets", "chosen"),
    [
        ({"response_time_s": 10, "ttft_s": 2}, 32),  # 30 tok/s, 2 s: c64 is too slow
        ({"tokens_per_s_per_user": 20, "ttft_s": 3.5}, 64),  # looser: the busiest point
        ({"tokens_per_s_per_user": 35}, 16),  # faster users: only c16 (40.8 tok/s)
    ],
)
def test_the_slo_picks_the_highest_throughput_point_that_meets_it(
        tmp_path: Path, targets: dict[str, float], chosen: int) -> None:
    """c16 / c32 / c64: 620 / 1,000 / 1,480 tok/s at median TPOT 24.5 / 31.2 / 41.0 ms and
    p99 TTFT 650 / 1,481 / 2,901 ms. The point used is the highest throughput among those
    meeting per-user speed (1000 / median TPOT) and TTFT (p99)."""
    path = _account(tmp_path, {"file": CURVE, "gpu": "h100-sxm", "gpus_per_replica": 4},
                    targets=targets, files=CURVE)
    w = _sized(path).workloads[0]
    assert w.recommended is not None
    used = [p for p in w.measured_points if p.chosen]
    assert [p.concurrency for p in used] == [chosen]
    throughput = {16: 620.0, 32: 1000.0, 64: 1480.0}[chosen]
    assert w.inputs["measured_tokens_per_s_per_replica"] == throughput
    meeting = [p.concurrency for p in w.measured_points if p.meets_targets]
    assert max(meeting or [0.0]) == chosen
    note = w.measured_note or ""
    assert f"at concurrency {chosen}" in note and "Used: the highest throughput" in note
    for p in w.measured_points:
        assert p.meets_targets == (not p.problems)


def test_a_curve_says_why_points_were_not_used(tmp_path: Path) -> None:
    path = _account(tmp_path, {"file": CURVE, "gpu": "h100-sxm", "gpus_per_replica": 4},
                    files=CURVE)
    w = _sized(path).workloads[0]
    c64 = next(p for p in w.measured_points if p.concurrency == 64)
    assert not c64.meets_targets and not c64.chosen
    assert any("24.4 tok/s per user, below the 30.0 required" in x for x in c64.problems)
    assert any("p99 TTFT 2,901 ms, above the 2,000 ms target" in x for x in c64.problems)
    assert "not met by" in (w.measured_note or "") and "concurrency 64" in (w.measured_note or "")


def test_no_point_meeting_the_targets_makes_the_workload_infeasible(tmp_path: Path) -> None:
    path = _account(tmp_path, {"file": CURVE, "gpu": "h100-sxm", "gpus_per_replica": 4},
                    targets={"tokens_per_s_per_user": 45}, files=CURVE)
    w = _sized(path).workloads[0]
    assert w.recommended is None
    assert w.options[0].reason_code == "measured"
    advice = w.advice or ""
    assert advice.startswith("No benchmark point meets the targets (45.0 tok/s per user)")
    assert "Closest: vllm-llama70b-4xh100-c16.json at concurrency 16" in advice
    assert not any(p.chosen for p in w.measured_points)


def test_json_lines_of_several_runs_are_a_curve(tmp_path: Path) -> None:
    """`vllm bench serve --append-result` writes one JSON object per line."""
    lines = [(BENCH / name).read_text().strip() for name in CURVE]
    (tmp_path / "sweep.jsonl").write_text("\n".join(lines) + "\n")
    points = read_bench_files(tmp_path, ["sweep.jsonl"])
    assert [p.concurrency for p in points] == [16, 32, 64]
    assert [p.label() for p in points][1] == "sweep.jsonl #2 at concurrency 32"


def test_missing_ttft_or_tpot_cannot_meet_a_target() -> None:
    from llmsizer.inputs.benchpoints import view

    p = BenchPoint(file="x.json", format="vllm", output_tokens_per_s=900.0)
    v = view(p, 4, None, 30.0, 2000.0)
    assert not v.meets
    assert any("per-user speed cannot be checked" in x for x in v.problems)
    assert any("no time to first token" in x for x in v.problems)
    assert view(p, 4, None, 0.0, 0.0).meets  # nothing to check: a system-throughput target


# --- measured vs modelled ---------------------------------------------------------------------------


def test_measured_and_modelled_throughput_side_by_side_with_the_gap() -> None:
    res = _sized(BENCH / "seed000.yaml")
    best = res.workloads[0].best
    assert best is not None
    v = best.values
    modelled = float(v["modelled_replica_output_tokens_per_s"])
    assert modelled == pytest.approx(float(v["batch_per_replica"]) * 1000 / float(v["tpot_ms"]),
                                     rel=1e-12)
    assert v["measured_vs_modelled"] == pytest.approx(1000.0 / modelled - 1, rel=1e-12)
    assert abs(float(v["measured_vs_modelled"])) > 0.25 and v["measured_gap_risk"] == 1.0


def test_a_modelled_workload_has_no_gap() -> None:
    from helpers import EXAMPLE

    for w in size(load(EXAMPLE)).workloads:
        for o in w.options:
            assert o.values["measured_vs_modelled"] == 0 and o.values["measured_gap_risk"] == 0
            assert o.values["modelled_replica_output_tokens_per_s"] == o.values[
                "replica_output_tokens_per_s"]


def test_a_measurement_close_to_the_model_is_no_risk(tmp_path: Path) -> None:
    seed = _sized(BENCH / "seed000.yaml").workloads[0].best
    assert seed is not None
    modelled = float(seed.values["modelled_replica_output_tokens_per_s"])
    path = _account(tmp_path, {"gpu": "h100-sxm", "gpus_per_replica": 4,
                               "tokens_per_s_per_replica": round(modelled * 1.1, 1)})
    best = _sized(path).workloads[0].best
    assert best is not None
    assert best.values["measured_vs_modelled"] == pytest.approx(0.1, abs=1e-3)
    assert best.values["measured_gap_risk"] == 0


def test_workbook_shows_measured_and_modelled_and_flags_the_gap(tmp_path: Path) -> None:
    from llmsizer.documents.workbook import write_workbook

    res = _sized(BENCH / "seed000.yaml")
    book = tmp_path / "seed.xlsx"
    write_workbook(res, book)
    wb = openpyxl.load_workbook(book)
    summary = {row[0].value: row[2] for row in wb["Summary"].iter_rows() if row[0].value}
    assert str(summary["Sizing basis"].value).startswith("Measured (vllm bench serve: ")
    assert summary["Measured output tokens/s per replica"].value == (
        "=in_w1_measured_tokens_per_s_per_replica")
    assert summary["Modelled output tokens/s per replica"].value.startswith("=Throughput!")
    assert summary["Measured vs modelled"].value.startswith("=Throughput!")
    risk = summary["Measured and modelled differ by over 25 % (risk)"]
    ws = wb["Throughput"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    red = [str(rng) for rng in ws.conditional_formatting
           if re.search(rf"[A-Z]+{rows['measured_gap_risk']}\b", str(rng))]
    assert red, "the gap flag is formatted red when TRUE"
    assert risk.value == f"=Throughput!D{rows['measured_gap_risk']}"
    wb.close()


def test_proposal_says_measured_shows_both_and_lists_the_risk(tmp_path: Path) -> None:
    from llmsizer.documents.proposal import render_html

    for name in CURVE:
        shutil.copy(BENCH / name, tmp_path / name)
    path = _account(tmp_path, {"file": CURVE, "gpu": "h100-sxm", "gpus_per_replica": 4})
    html = render_html(_sized(path))
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "Measured, not modelled" in text
    assert "the model predicts" in text and "Throughput per replica Measured Modelled" in text
    assert "Measured and modelled throughput disagree" in text
    assert "vllm-llama70b-4xh100-c32.json at concurrency 32" in text
    assert "used : meets the targets, highest throughput" in text


# --- errors name the benchmark file and what is wrong ----------------------------------------------


def _error(tmp: Path, measured: dict[str, Any], files: list[str] | None = None,
           **kw: Any) -> str:
    path = _account(tmp, measured, files=files, **kw)
    with pytest.raises(InputError) as exc:
        load(path)
    return str(exc.value)


def test_a_file_without_the_throughput_is_refused_by_name(tmp_path: Path) -> None:
    data = json.loads((BENCH / CURVE[1]).read_text())
    del data["output_throughput"]
    data["completed"] = 320
    (tmp_path / "broken.json").write_text(json.dumps(data))
    msg = _error(tmp_path, {"file": "broken.json", "gpu": "h100-sxm", "gpus_per_replica": 4,
                            "format": "vllm"})
    assert "account.yaml:" in msg and "workloads[0].measured.file" in msg
    assert "benchmark file 'broken.json' (vllm bench serve result): lacks 'output_throughput'" in msg


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "is not valid JSON (line 1"),
        ('{"hello": 1}', "cannot tell which tool wrote it"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"output_throughput": "fast", "completed": 3}', "'output_throughput' must be a number"),
        ('{"output_throughput": -5, "completed": 3}', "must be a positive number"),
        ('{"output_token_throughput": {"unit": "tokens/sec", "avg": 10},'
         ' "time_to_first_token": {"unit": "fortnights", "avg": 1}}',
         "'time_to_first_token' is in 'fortnights'"),
    ],
)
def test_bad_benchmark_files_are_one_clear_line(tmp_path: Path, content: str,
                                                fragment: str) -> None:
    (tmp_path / "bad.json").write_text(content)
    msg = _error(tmp_path, {"file": "bad.json", "gpu": "h100-sxm", "gpus_per_replica": 4})
    assert "benchmark file 'bad.json'" in msg and fragment in msg, msg


def test_paths_stay_inside_the_requirements_folder(tmp_path: Path) -> None:
    inner = tmp_path / "acct"
    inner.mkdir()
    shutil.copy(BENCH / CURVE[1], tmp_path / "outside.json")
    msg = _error(inner, {"file": "../outside.json", "gpu": "h100-sxm", "gpus_per_replica": 4})
    assert "points outside the requirements file's folder" in msg
    msg = _error(inner, {"file": "missing.json", "gpu": "h100-sxm", "gpus_per_replica": 4})
    assert "benchmark file 'missing.json': not found" in msg


def test_the_block_must_match_what_the_file_records(tmp_path: Path) -> None:
    trt = ["trtllm-bench-llama70b-tp4-h100.json"]
    msg = _error(tmp_path, {"file": trt[0], "gpu": "h200-sxm", "gpus_per_replica": 4}, trt)
    assert "ran on 'NVIDIA H100 80GB HBM3'" in msg and "measured.gpu" in msg
    msg = _error(tmp_path, {"file": trt[0], "gpu": "h100-sxm", "gpus_per_replica": 8}, trt)
    assert "ran 4 GPUs per model copy (tp 4, pp 1)" in msg
    msg = _error(tmp_path, {"file": trt[0], "gpu": "h100-sxm", "gpus_per_replica": 4,
                            "gpu_count": 8}, trt)
    assert "ran on 4 GPUs, but the block says gpu_count: 8" in msg


@pytest.mark.parametrize(
    ("measured", "fragment"),
    [
        ({"gpu": "h100-sxm", "gpus_per_replica": 4}, "measured needs tokens_per_s_per_replica"),
        ({"gpu": "h100-sxm", "gpus_per_replica": 4, "tokens_per_s_per_replica": 1000,
          "file": "a.json"}, "not both"),
        ({"gpu": "h100-sxm", "gpus_per_replica": 4, "tokens_per_s_per_replica": 1000,
          "format": "vllm"}, "use them with `file:`"),
        ({"gpu": "h100-sxm", "gpus_per_replica": 4, "file": "a.json", "gpu_count": 6},
         "gpu_count (6) must be a whole number of replicas"),
        ({"gpu": "h100-sxm", "gpus_per_replica": 4, "file": "a.json", "format": "vllmm"},
         "did you mean vllm"),
    ],
)
def test_the_measured_block_is_checked(tmp_path: Path, measured: dict[str, Any],
                                       fragment: str) -> None:
    msg = _error(tmp_path, measured)
    assert "workloads[0].measured" in msg and fragment in msg, msg


def test_parse_errors_name_the_record_of_a_multi_record_file() -> None:
    records = [json.loads((BENCH / CURVE[0]).read_text()), {"output_throughput": "x",
                                                           "completed": 1}]
    with pytest.raises(InputError, match=r"'sweep.jsonl \(record 2\)'"):
        parse_bench(records, "sweep.jsonl")


def test_sample_files_cite_their_documentation() -> None:
    readme = (BENCH / "README.md").read_text()
    for path in sorted(BENCH.glob("*.json")):
        assert path.name in readme, path.name
    assert readme.count("https://") >= 4


def test_libreoffice_recalculates_the_measured_workbook(tmp_path: Path) -> None:
    """The measured-mode workbook is as live as any: LibreOffice reproduces every formula,
    the measured vs modelled rows and seed 000's 8 nodes included."""
    from support.libreoffice import read_values, recalculate
    from test_workbook import expected_values, same

    from llmsizer.documents.workbook import write_workbook

    res = _sized(BENCH / "seed000.yaml")
    book = tmp_path / "seed.xlsx"
    write_workbook(res, book)
    lo = read_values(recalculate([book], tmp_path / "lo")[book])
    expected = expected_values(res, read_values(book))
    names = {name for _, name in expected.values()}
    assert {"measured_vs_modelled", "measured_gap_risk", "nodes"} <= names
    for (sheet, ref), (value, name) in expected.items():
        assert same(value, lo[sheet].get(ref), name, rel=1e-9), (sheet, ref, name)
