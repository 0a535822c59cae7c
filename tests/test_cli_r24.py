"""Review round 24: every subcommand on bad input, as a user would run it (the web's half:
test_web_r24.py). What fell short:

- a misspelt key was taken for a key its block already has: `tpot_sms: 3` under `ttft_s: 2`
  said "(did you mean ttft_s?); write it as `ttft_s: 3`", a second ttft_s; and `tpot_ms`
  (time per output token, the targets' inter-token latency) guessed ttft_s, not itl_p50_ms;
- `fidelity` on a missing CSV said "cannot read benchmark file: No such file or directory",
  on a non-UTF-8 one Python's "'utf-8' codec can't decode byte 0xff ...", and on one saved
  with ';' between its columns that the header lacked every column, nothing of why;
- `report --quiet` put a literal "\\n" between a file's problems on its one line;
- `size FOLDER` said click's "File 'x' is a directory."; `estimate --tp 3` named no degree.
Each: the file, line and field where there is one, what to do, exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = (ROOT / "inputs" / "example.yaml").read_text()


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "llmsizer.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _three_mistakes(tmp_path: Path, key: str) -> Path:
    text = EXAMPLE.replace("model: llama-3.1-70b\n", "model: lama-3.1-70b\n", 1)
    text = text.replace("concurrent_users: 200", "concurrent_users: -5", 1)
    text = text.replace("      ttft_s: 2\n", f"      ttft_s: 2\n      {key}\n", 1)
    path = tmp_path / "acme.yaml"
    path.write_text(text)
    return path


def test_three_mistakes_are_told_at_once_and_a_key_is_never_guessed_twice(
        tmp_path: Path) -> None:
    _three_mistakes(tmp_path, "tpot_sms: 3")
    for command in ("validate", "size"):
        proc = _run(command, "acme.yaml", cwd=tmp_path)
        assert proc.returncode == 2 and proc.stdout == ""
        lines = proc.stderr.splitlines()
        assert lines[0] == "error: acme.yaml: 3 problems:"
        assert lines[1].startswith("  acme.yaml:11:5: workloads[0].model: unknown model "
                                   "'lama-3.1-70b': did you mean llama-3.1-70b? ")
        assert lines[2] == ("  acme.yaml:12:5: workloads[0].concurrent_users: must be at least "
                            "1 (found -5); allowed: a whole number from 1 to 10,000,000")
        # it said "(did you mean ttft_s?); write it as `ttft_s: 3`": ttft_s is on line 17
        assert lines[3].startswith("  acme.yaml:18:7: workloads[0].targets: unknown key "
                                   "'tpot_sms'; allowed here: e2e_p95_s, "), lines[3]
    proc = _run("report", "acme.yaml", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 2 and not (tmp_path / "out").exists()  # nothing half-written


def test_tpot_is_the_inter_token_latency(tmp_path: Path) -> None:
    _three_mistakes(tmp_path, "tpot_ms: 30")
    told = _run("validate", "acme.yaml", cwd=tmp_path).stderr.splitlines()[3]
    assert told.startswith("  acme.yaml:18:7: workloads[0].targets: unknown key 'tpot_ms' (did "
                           "you mean itl_p50_ms?); write it as `itl_p50_ms: 30`; allowed here: ")


def test_a_bad_fidelity_csv_says_what_to_do(tmp_path: Path) -> None:
    header = (ROOT / "tests" / "data" / "calibration_points.csv").read_text().splitlines()[0]
    (tmp_path / "semicolons.csv").write_text(header.replace(",", ";") + "\n")
    (tmp_path / "latin1.csv").write_bytes(header.encode() + b"\nx,Caf\xe9\n")
    said = {}
    for name in ("missing.csv", "semicolons.csv", "latin1.csv"):
        proc = _run("fidelity", name, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stdout == ""
        said[name] = proc.stderr.strip()
    assert said["missing.csv"] == ("error: missing.csv: file not found: check the path and the "
                                   "file name")
    assert said["semicolons.csv"].startswith("error: semicolons.csv:1: header lacks column(s) ")
    assert said["semicolons.csv"].endswith("; its columns are separated by ';', not commas: "
                                           "save it as CSV (comma delimited)")
    assert said["latin1.csv"] == (f"error: latin1.csv: is not UTF-8 text (byte 0xe9 at byte "
                                  f"{len(header) + 6:,}): save it as CSV UTF-8 (comma delimited)")


def test_a_batchs_quiet_line_joins_a_files_problems(tmp_path: Path) -> None:
    folder = tmp_path / "accounts"
    folder.mkdir()
    _three_mistakes(tmp_path, "tpot_sms: 3").rename(folder / "bad.yaml")
    (folder / "worse.yaml").write_text("account: [\n")
    proc = _run("report", "accounts", "--out", "out", "--quiet", "--jobs", "1", cwd=tmp_path)
    assert proc.returncode in (1, 2), proc.stderr
    line = next(x for x in proc.stderr.splitlines() if "accounts/bad.yaml: 3 problems" in x)
    assert "\\n" not in line  # it read "3 problems:\n  accounts/bad.yaml:11:5: ..."
    assert ("invalid input accounts/bad.yaml: 3 problems: accounts/bad.yaml:11:5: "
            "workloads[0].model: unknown model 'lama-3.1-70b'") in line
    assert " | accounts/bad.yaml:12:5: workloads[0].concurrent_users: must be at least 1" in line


def test_a_folder_where_a_file_belongs_and_a_tp_between_degrees(tmp_path: Path) -> None:
    (tmp_path / "accounts").mkdir()
    proc = _run("size", "accounts", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith(
        "error: Invalid value for 'FILE': 'accounts' is a folder, not a file: give the path of a "
        "file in it; `llmsizer report FOLDER --out DIR` sizes every requirements file in a "
        "folder (see '") and proc.stderr.strip().endswith(" size --help')")
    proc = _run("estimate", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--tp", "3",
                cwd=tmp_path)
    assert proc.returncode == 2
    assert "'3' is not one of '1', '2', '4', '8', '16', '32', '64', '72'. (did you mean 2 or 4?)" \
        in proc.stderr


def test_report_on_a_missing_file_names_the_one_beside_it(tmp_path: Path) -> None:
    """`report acme.yml` said "no such file or folder: acme.yml", where `validate acme.yml`
    said to check the path and named acme.yaml beside it: now as `validate` says it."""
    (tmp_path / "acme.yaml").write_text(EXAMPLE)
    proc = _run("report", "acme.yml", "gone/x.yaml", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 2 and not (tmp_path / "out").exists()
    assert proc.stderr.startswith(
        "error: acme.yml: no such file or folder: check the path and the name (did you mean "
        "acme.yaml?); gone/x.yaml: no such file or folder: check the path and the name; the "
        "folder gone does not exist (see '"), proc.stderr
