"""Review round 24, the leftovers of the web/CLI review (helper F's notes), fixed in staging:

- `fidelity` on a CSV of which no row can be read exited 0, as if the check had passed, and
  said "1 rows not interpreted";
- an output folder that cannot be made printed the system's words ("No such file or
  directory" for a path through a file) with nothing to do;
- the debugger table said "Below 1 sequences per replica a replica gives under 40 % ..."
  where even one sequence gives more: a statement about nothing, with a wrong plural."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from llmsizer.documents.proposal.debugger import _rows
from llmsizer.documents.proposal.format import Formatter
from llmsizer.sizing.debugger import Figures

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "llmsizer.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_a_fidelity_file_with_no_readable_row_fails(tmp_path: Path) -> None:
    lines = (ROOT / "tests" / "data" / "calibration_points.csv").read_text().splitlines()
    # a real row with a GPU no catalog has: unreadable, with its reason
    row = lines[1].replace("Llama-3.1-8B", "Zebra-9000", 1)
    assert row is not None and row != lines[1], lines[1][:200]
    (tmp_path / "one.csv").write_text(lines[0] + "\n" + row + "\n")
    proc = _run("fidelity", "one.csv", cwd=tmp_path)
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-500:])
    assert "\n1 row not interpreted (every reason):" in proc.stdout
    assert proc.stderr.strip() == ("error: no row of this file could be predicted; each row's "
                                   "reason is listed above")
    # a file with readable rows still passes (exit 0): the MLPerf table reads 44 of 44
    ok = _run("fidelity", ROOT / "tests" / "data" / "mlperf_inference.csv", "--summary",
              cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr


def test_an_output_folder_through_a_file_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    proc = _run("report", ROOT / "inputs" / "example.yaml", "--out", "notes.txt/out",
                cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("error: cannot create output folder 'notes.txt/out': part "
                                   "of the path is a file, not a folder; check the path")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def _figures(low_batch: float) -> Figures:
    return Figures(workload="Chat", option="H100", oom_context_tokens=9000.0,
                   planned_context_tokens=3000.0, ttft_limit_users=500.0,
                   memory_limit_users=800.0, ttft_target_s=2.0, ttft_target_stated=True,
                   ttft_targets=(), planned_users=300.0, low_utilisation_batch=low_batch,
                   planned_batch=24.0, low_utilisation_share=0.4)


def test_the_debugger_says_something_when_one_sequence_is_enough() -> None:
    fmt = Formatter("USD")
    low = {r.symptom: r.here for r in _rows(_figures(1.0), fmt)}
    assert low["Low GPU utilisation (under 40\xa0%)"] == (
        "Even one sequence per replica gives 40\xa0% or more of its throughput at full batch "
        "(planned: 24)")
    many = {r.symptom: r.here for r in _rows(_figures(6.0), fmt)}
    assert many["Low GPU utilisation (under 40\xa0%)"] == (
        "Below 6 sequences per replica a replica gives under 40\xa0% of its throughput at full "
        "batch (planned: 24)")


def test_a_rented_plans_gpu_split_is_named_gpus_after_an_instance_count(tmp_path: Path) -> None:
    """The insurer's chat on DeepSeek-V3 in BF16 (TP16 on H200, sold by the GPU: 3 instances
    of 8, tests/test_words_s24.py's case) read "24 × NVIDIA H200 SXM in 3 cloud instances (16
    serving, 8 on standby)": GPU counts right after an instance count, read as instances."""
    import io

    import yaml
    from rich.console import Console

    from llmsizer.documents.textreport import print_result
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    data = yaml.safe_load((ROOT / "tests" / "data" / "eur-insurer.yaml").read_text())
    data["hardware"] = {"gpus": ["h200-sxm"], "weight_precisions": ["bf16"],
                        "tensor_parallel": [16]}
    data["workloads"] = [{**data["workloads"][1], "model": "deepseek-v3", "named_users": 100}]
    path = tmp_path / "tp16.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    con = Console(width=200, file=io.StringIO())
    print_result(size(load(path)), con)
    out = con.file.getvalue()  # type: ignore[attr-defined]
    line = next(x for x in out.splitlines() if x.startswith("Plan, rented in the cloud:"))
    assert line == ("Plan, rented in the cloud: 24 × NVIDIA H200 SXM in 3 cloud instances "
                    "(GPUs: 16 serving, 8 on standby)"), line
