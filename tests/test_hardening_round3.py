"""Issue 25, third hardening round: each failure class found by probing, reproduced and shown
to end as a clean outcome (one line, exit 2, no traceback; or a skipped row with its reason).
docs/security.md lists each class with its test."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import DATA, EXAMPLE

from llmsizer.base.errors import InputError
from llmsizer.inputs.loader import load

LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]
BENCH = DATA / "bench"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LLMSIZER, *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def one_clean_line(out: subprocess.CompletedProcess[str]) -> str:
    """Exit 2 and exactly one line on stderr, no traceback."""
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]


# --- huge integers (F3, F12) ----------------------------------------------------------------


def test_huge_integers_are_refused_before_conversion(tmp_path: Path) -> None:
    """F3: `schema_version:` and 4,299 digits (one under Python's 4,300-digit limit for
    int-from-text) overflowed turning it into a float for the message. Every plain integer
    over 100 digits is refused while parsing, at its line; up to that the schema's ranges
    answer, and a long integer is shown shortened."""
    text = EXAMPLE.read_text()
    assert "schema_version: 1\n" in text
    path = tmp_path / "f3.yaml"
    path.write_text(text.replace("schema_version: 1\n", "schema_version: " + "9" * 4299 + "\n"))
    line = one_clean_line(run("validate", path))
    assert re.search(r"f3\.yaml:\d+:17: the number starting 9{20}… has too many digits", line)
    path.write_text(text.replace("schema_version: 1\n", "schema_version: " + "9" * 29 + "\n"))
    line = one_clean_line(run("validate", path))
    assert "schema_version 999999999999… (29 digits) is not supported" in line


def bench_account(tmp_path: Path, figures: str) -> Path:
    """seed000.yaml (32 H100s measured at 1,000 tok/s output) beside a copy of its result
    file whose text starts with ``figures``."""
    (tmp_path / "seed000.yaml").write_text((BENCH / "seed000.yaml").read_text())
    result = (BENCH / "vllm-llama70b-4xh100-c32.json").read_text()
    assert json.loads(result)["output_throughput"] == 1000.0  # the file's own figure
    (tmp_path / "vllm-llama70b-4xh100-c32.json").write_text(result.replace("{", "{" + figures,
                                                                         1))
    return tmp_path / "seed000.yaml"


def test_a_benchmark_figure_with_thousands_of_digits_is_one_line(tmp_path: Path) -> None:
    """F12: a 4,000-digit `output_throughput` overflowed in the benchmark reader."""
    path = bench_account(tmp_path, '"request_rate": ' + "7" * 4000 + ", ")
    line = one_clean_line(run("size", path))
    assert ("benchmark file 'vllm-llama70b-4xh100-c32.json': holds a number with 4,000 digits "
            "(starting 777777777777…)") in line
    assert "seed000.yaml:18:7: workloads[0].measured.file" in line


def test_duplicate_json_keys_in_a_benchmark_file_are_refused(tmp_path: Path) -> None:
    """F15: a second `output_throughput` silently won (the account got 4 GPUs instead of
    32, as the file's last value decides). Both the JSON and JSON-lines forms refuse it."""
    path = bench_account(tmp_path, '"output_throughput": 9000.0, ')
    line = one_clean_line(run("size", path))
    assert "gives the key 'output_throughput' twice" in line
    assert "seed000.yaml:18:7: workloads[0].measured.file" in line
    lines = tmp_path / "vllm-llama70b-4xh100-c32.json"
    record = json.loads((BENCH / "vllm-llama70b-4xh100-c32.json").read_text())
    lines.write_text(json.dumps(record) + "\n" + json.dumps(record).replace("{", '{"a": 1, "a": 2, ',
                                                                            1) + "\n")
    with pytest.raises(InputError, match=r"line 2 gives the key 'a' twice"):
        load(path)


# --- the command line validates as the schema does (F16, F17, TP, F9) ------------------------

ESTIMATE = ["estimate", "--model", "llama-3.1-8b", "--prompt-tokens", "100",
            "--output-tokens", "100"]


@pytest.mark.parametrize(("args", "needle"), [
    (["--gpu", "h100-sxm", "--concurrency", "100001"],  # F16: was a pydantic ValidationError
     "'--concurrency': 100001 is not in the range 1<=x<=100000"),
    (["--gpu", "h100-sxm", "--concurrency", "8", "--mbu", "nan"],  # F17
     "'--mbu': 'nan' is not a number; give a value in 0.05<x<=1"),
    (["--gpu", "h100-sxm", "--concurrency", "8", "--mfu", "nan"],
     "'--mfu': 'nan' is not a number"),
    (["--gpu", "h100-sxm", "--concurrency", "8", "--mbu", "0.05"],  # the schema's gt=0.05
     "'--mbu': 0.05 is not in the range 0.05<x<=1"),
    (["--gpu", "h100-sxm", "--concurrency", "8", "--tp", "3"],  # answered without a word
     "'--tp': '3' is not one of '1', '2', '4', '8'"),
    (["--gpu", "l4", "--concurrency", "8", "--tp", "8"],  # the search never tries past max_tp
     "'--tp': 8 is more than l4 allows (tensor parallelism up to 4 GPUs"),
])
def test_cli_options_are_validated_as_the_schema_validates(args: list[str], needle: str) -> None:
    line = one_clean_line(run(*ESTIMATE, *args))
    assert line.startswith("error: Invalid value for ") and needle in line, line


def test_empty_out_is_refused(tmp_path: Path) -> None:
    """F9: `--out ""` wrote into the current folder and exited 0; `report ""` read it."""
    (tmp_path / "acme.yaml").write_text(EXAMPLE.read_text())
    line = one_clean_line(run("report", "acme.yaml", "--out", "", cwd=tmp_path))
    assert "'--out': is empty (an unset variable?)" in line
    line = one_clean_line(run("report", "", "--out", "o", cwd=tmp_path))
    assert "'PATHS...': is empty" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acme.yaml"]


@pytest.mark.parametrize("after_s", [0.3, 0.5])
def test_ctrl_c_on_a_single_report_exits_130(tmp_path: Path, after_s: float) -> None:
    """Ctrl-C exited 1, which the README reserves for "some accounts failed". SIGINT comes
    while the command imports its libraries (CI saw the process die of SIGINT, -2,
    after printing "interrupted") or while it loads and sizes; nothing is published."""
    proc = subprocess.Popen([*LLMSIZER, "report", str(EXAMPLE), "--out", str(tmp_path / "o")],
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(after_s)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip() == "interrupted" and "Traceback" not in err
    out = tmp_path / "o"
    assert not out.exists() or not any(out.iterdir())


# --- the input folder: links, loops, upper-case names (F4, F5) --------------------------------


def test_folder_links_loops_and_upper_case_names(tmp_path: Path) -> None:
    """F4: a link loop raised RuntimeError while collecting, and no account ran. F5: a link
    to /etc/passwd was read and its first characters echoed to stderr, batch.json and
    summary.xlsx. UP.YAML was skipped silently. Now the loop and the link out are each an
    invalid entry named by its file, never read; the two valid accounts run."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.yaml").write_text(EXAMPLE.read_text())
    (folder / "UP.YAML").write_text(EXAMPLE.read_text().replace("Acme Corp", "Upper Corp"))
    (folder / "loop.yaml").symlink_to("loop.yaml")
    secret = tmp_path / "token"
    secret.write_text("schema_version: SECRET-TOKEN-1234\n")
    (folder / "secret.yaml").symlink_to(secret)
    (folder / "same.yml").symlink_to("a.yaml")  # inside the folder: read once, as a.yaml
    out = run("report", folder, "--out", tmp_path / "out", "--jobs", "2", "--quiet")
    assert out.returncode == 1, out.stderr  # some accounts failed
    assert "Traceback" not in out.stderr and "SECRET" not in out.stderr
    doc = json.loads((tmp_path / "out" / "batch.json").read_text())
    rows = {Path(a["file"]).name: a for a in doc["accounts"]}
    assert sorted(rows) == ["UP.YAML", "a.yaml", "loop.yaml", "secret.yaml"]
    assert rows["a.yaml"]["status"] == rows["UP.YAML"]["status"] == "ok"
    assert "this link is a loop" in rows["loop.yaml"]["message"]
    assert "points outside the folder" in rows["secret.yaml"]["message"]
    assert rows["secret.yaml"]["status"] == "invalid input"
    for name in ("batch.json", "summary.xlsx"):
        assert b"SECRET" not in (tmp_path / "out" / name).read_bytes()
    assert {p.name for p in (tmp_path / "out").glob("*.pdf")} == {"acme-corp.pdf",
                                                                  "upper-corp.pdf"}
    # A folder holding only the link out: one line, nothing written.
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "p.yaml").symlink_to(secret)
    line = one_clean_line(run("report", tmp_path / "one", "--out", tmp_path / "o2"))
    assert "p.yaml: this link points outside the folder" in line and "SECRET" not in line
    assert not (tmp_path / "o2").exists()


# --- silent acceptance: booleans as numbers, impossible architectures -------------------------


def test_booleans_are_refused_where_numbers_are_expected(tmp_path: Path) -> None:
    """`tensor_parallel: [1, true]` was accepted (True == 1 satisfies Literal[1, 2, 4, 8]
    even in pydantic's strict mode); integer and float fields already refused booleans."""
    text = EXAMPLE.read_text()
    assert "  kv_precisions: [fp8]\n" in text
    path = tmp_path / "tp.yaml"
    for value, found in (("[1, true]", "true"), ("[false]", "false")):
        path.write_text(text.replace("  kv_precisions: [fp8]\n",
                                     f"  kv_precisions: [fp8]\n  tensor_parallel: {value}\n"))
        line = one_clean_line(run("validate", path))
        assert re.search(r"tp\.yaml:\d+:\d+: hardware\.tensor_parallel\[\d\]: must be "
                         rf"1, 2, 4, 8, 16, 32, 64 or 72, not true/false \(found {found}\)", line), line
    path.write_text(text.replace("  kv_precisions: [fp8]\n",
                                 "  kv_precisions: [fp8]\n  tensor_parallel: [1, 2]\n"))
    assert load(path).req.hardware.tensor_parallel == [1, 2]


def test_more_kv_heads_than_attention_heads_is_refused(tmp_path: Path) -> None:
    """A config.json with 64 attention heads and 128 KV heads was accepted (and sized with
    16 times the Llama-3-70B KV cache). The real one (64 and 8) loads."""
    config = json.loads((DATA / "llama-70b-class" / "config.json").read_text())
    assert (config["num_attention_heads"], config["num_key_value_heads"]) == (64, 8)
    (tmp_path / "m").mkdir()
    path = tmp_path / "a.yaml"
    path.write_text(EXAMPLE.read_text().replace("model: llama-3.1-70b", "model: m/config.json"))
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    assert load(path).models["m/config.json"].kv_heads == 8
    (tmp_path / "m" / "config.json").write_text(json.dumps({**config, "num_key_value_heads": 128}))
    line = one_clean_line(run("validate", path))
    assert ("'m/config.json': num_key_value_heads (128) is larger than num_attention_heads (64)"
            in line)


# --- fidelity rows (F19) ----------------------------------------------------------------------


@pytest.mark.parametrize(("column", "value", "reason"), [
    ("model", "()", "model '()' is not in the llmsizer catalog"),  # was IndexError
    ("isl", "9" * 400, "isl holds a number of 400 digits; no benchmark figure has more than 15"),
    ("osl", "9" * 400, "osl holds a number of 400 digits"),  # was a ValidationError
    ("concurrency", "9" * 400, "concurrency holds a number of 400 digits"),  # OverflowError
    ("gpu_count", "9" * 400, "gpu_count holds a number of 400 digits"),  # OverflowError
    ("isl", "3000000", "isl must be at most 2,000,000"),  # the schema's range
])
def test_fidelity_rows_out_of_bounds_are_skipped_with_a_reason(
        tmp_path: Path, column: str, value: str, reason: str) -> None:
    """A broken row is skipped with its reason; the valid row beside it is still predicted
    (TensorRT-LLM v0.17's Llama-3.1-8B on one H200 at FP8, 128/128: 29,526 tok/s)."""
    import csv

    with (DATA / "calibration_points.csv").open(newline="") as fh:
        header, good = list(csv.reader(fh))[:2]
    assert (good[header.index("value")], good[header.index("isl")]) == ("29526.04", "128")
    bad = list(good)
    bad[header.index(column)] = value
    points = tmp_path / "points.csv"
    with points.open("w", newline="") as fh:
        csv.writer(fh).writerows([header, good, bad])
    out = run("fidelity", points, "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    doc = json.loads(out.stdout)
    assert [r["measured"] for r in doc["rows"]] == [29526.04]
    assert [s["row"] for s in doc["skipped"]] == [2]
    assert any(reason in r for r in doc["skipped"][0]["reasons"]), doc["skipped"]
