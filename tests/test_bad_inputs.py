"""Issue 7: broken and hostile requirement files (tests/bad_inputs/, expectations in
tests/bad_inputs/expected.yaml).

Every file goes through the loader and the engine in-process (fast); a representative subset
goes through the real command line in subprocesses (real exit codes, no traceback, nothing
written). Hostile *text* is valid input: it must come out literally (JSON, workbook cells that
are text and never formulas, PDF text) and never escape the output folder as a file name.

The last test prints and asserts the summary line: cases tried, clean errors, tracebacks (0),
files leaked or corrupted (0).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from helpers import ROOT

from llmsizer.base.errors import LlmsizerError
from llmsizer.inputs.loader import Loaded, load
from llmsizer.inputs.yamlfile import MAX_BYTES
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

HERE = ROOT / "tests" / "bad_inputs"
EXPECTED: dict[str, dict[str, Any]] = yaml.safe_load((HERE / "expected.yaml").read_text("utf-8"))
CASES = sorted(EXPECTED)
LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]
OPTION_ID = re.compile(r"[a-z0-9.-]+/[a-z0-9]+/kv-[a-z0-9]+/tp\d+")  # 'l4/fp8/kv-fp8/tp4'
MAX_MESSAGE = 1200  # one line; the longest are the 'valid: ...' lists of catalog ids

# Tallied by every test that runs something; printed and asserted by the last test.
TALLY: Counter[str] = Counter()


def _digest_folder() -> dict[str, str]:
    return {str(p.relative_to(HERE)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(HERE.rglob("*")) if p.is_file()}


BEFORE = _digest_folder()


# --- helpers ------------------------------------------------------------------------------


def outcome(path: Path) -> tuple[int, str, Loaded | None, Result | None]:
    """What `llmsizer size` decides, in-process: (exit code, message, loaded, result).
    Any exception other than an LlmsizerError propagates (a bug: it keeps its traceback)."""
    try:
        loaded = load(path)
        result = size(loaded)
    except LlmsizerError as exc:
        return exc.exit_code, str(exc), None, None
    advice = [f"{w.name}: {w.advice}" for w in [*result.workloads, *result.retrieval]
              if w.recommended is None]
    return (3 if advice else 0), "; ".join(advice), loaded, result


def strings(doc: Any) -> Iterator[str]:
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(doc, list | tuple):
        for v in doc:
            yield from strings(v)


def check_message(path: Path, message: str, exp: dict[str, Any]) -> None:
    """One line, naming the file (and line:column), carrying every expected fragment; or,
    for a file with several mistakes, one such line for each (at most 20) under a head line
    that counts them."""
    if "problems" in exp:
        check_block(path, message, exp)
        return
    assert "\n" not in message and "Traceback" not in message, message
    assert len(message) <= MAX_MESSAGE, len(message)
    assert message.startswith(str(path)), message
    if "where" in exp:
        assert message.startswith(f"{path}:{exp['where']}: "), message
    for fragment in exp.get("fragments", []):
        assert fragment in message, (fragment, message)


def check_block(path: Path, message: str, exp: dict[str, Any]) -> None:
    total = exp["problems"]
    shown = min(total, 20)
    head, *lines = message.split("\n")
    assert head == f"{path}: {total} problems:", head
    if total > shown:
        assert lines.pop() == f"  and {total - shown} more (fix these and run again to see them)"
    assert len(lines) == shown, lines
    assert lines[0].startswith(f"  {path}:{exp.get('where', '')}"), lines[0]
    for line in lines:
        assert line.startswith(f"  {path}:") and len(line) <= MAX_MESSAGE, line
    assert len(set(lines)) == shown, "a problem told twice"
    for fragment in exp.get("fragments", []):
        assert fragment in message, (fragment, message)


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*LLMSIZER, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)
    TALLY["cli runs"] += 1
    if "Traceback" in proc.stderr or "Traceback" in proc.stdout:
        TALLY["tracebacks"] += 1
    return proc


def files_under(folder: Path) -> set[str]:
    """Files written under a folder, less each account's publication lock and manifest
    (hidden; docs/security.md). Temp files and anything else still count."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()
            and not (p.name.startswith(".") and p.name.endswith((".lock", ".manifest.json")))}


# --- the folder itself --------------------------------------------------------------------


def test_every_file_has_an_expectation_and_the_issue_is_covered() -> None:
    on_disk = {p.name for p in HERE.glob("*.yaml")} - {"expected.yaml"}
    assert on_disk == set(EXPECTED)
    assert len(on_disk) >= 40
    by_exit = Counter(e["exit"] for e in EXPECTED.values())
    assert by_exit[2] >= 40 and by_exit[3] >= 2 and by_exit[0] >= 5
    assert sum(bool(e.get("realistic")) for e in EXPECTED.values()) == 5
    for prefix in ("missing-", "misspelt-", "type-", "number-", "price-", "unknown-", "config-",
                   "hostile-", "yaml11-", "contradiction-", "infeasible-"):
        assert any(c.startswith(prefix) for c in CASES), prefix


# --- every file, in-process ---------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_case(case: str) -> None:
    path = HERE / case
    exp = EXPECTED[case]
    code, message, loaded, result = outcome(path)
    assert code == exp["exit"], (code, message)
    if code == 2:
        check_message(path, message, exp)
        return
    assert loaded is not None and result is not None
    if code == 3:
        for fragment in exp["fragments"]:
            assert fragment in message, (fragment, message)
        # the advice reaches the summary workbook: a configuration in words, not its option id
        assert not OPTION_ID.search(message), message
        return
    doc = json.loads(result.to_json())
    for key, value in exp.get("account", {}).items():
        assert doc["account"][key] == value, (key, doc["account"][key])
    if "workloads" in exp:
        assert [w["name"] for w in doc["workloads"]][: len(exp["workloads"])] == exp["workloads"]
    texts = set(strings(doc)) | set(strings(loaded.req.model_dump()))
    for fragment in exp.get("fragments", []):
        assert any(fragment in t for t in texts), fragment


def test_realistic_mistakes_say_how_to_fix_them() -> None:
    """The five mistakes a new user makes: each message names a concrete fix."""
    realistic = [c for c in CASES if EXPECTED[c].get("realistic")]
    for case in realistic:
        code, message, _, _ = outcome(HERE / case)
        assert code == 2
        fix = message.split(": ", 1)[1]
        assert any(cue in fix for cue in ("write it as `", "write a list, e.g. `", "use spaces",
                                          "indent line")), message


# --- generated at run time: too big, too deep, a link out of the folder -------------------


def fifty_mb(tmp_path: Path) -> Path:
    path = tmp_path / "fifty-mb.yaml"
    with path.open("wb") as handle:
        line = b"# padding padding padding padding padding padding padding padding padding\n"
        handle.write(b"schema_version: 1\n")
        for _ in range(50_000_000 // len(line) + 1):
            handle.write(line)
    assert path.stat().st_size > 50_000_000
    return path


def ten_thousand_deep(tmp_path: Path) -> Path:
    path = tmp_path / "deep.yaml"
    path.write_text("schema_version: 1\naccount: " + "[" * 10_000 + "]" * 10_000 + "\n")
    return path


def too_many_values(tmp_path: Path) -> Path:
    path = tmp_path / "dense.yaml"
    item = ("  - {name: a, model: llama-3.1-8b, concurrent_users: 1, prompt_tokens: 1, "
            "output_tokens: 1, targets: {ttft_s: 1}}\n")
    path.write_text("schema_version: 1\naccount: {name: A}\nworkloads:\n" + item * 2_000)
    return path


def outside_link(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(HERE / "models" / "ok" / "config.json", outside / "config.json")
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "model.json").symlink_to(outside / "config.json")
    path = inside / "link.yaml"
    path.write_text((HERE / "config-valid.yaml").read_text().replace(
        "models/ok/config.json", "model.json"))
    return path


GENERATED: dict[str, tuple[Callable[[Path], Path], dict[str, Any]]] = {
    "fifty-mb": (fifty_mb, {"fragments": ["file is too large", f"the limit is {MAX_BYTES:,}"]}),
    "ten-thousand-deep": (ten_thousand_deep, {"where": "2:49", "fragments": [
        "nests mappings/lists more than 40 levels deep"]}),
    "too-many-values": (too_many_values, {"fragments": ["more than 20,000 values"]}),
    "symlink-out": (outside_link, {"where": "8:5", "fragments": [
        "'model.json' points outside the requirements file's folder"]}),
}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_case(tmp_path: Path, name: str) -> None:
    make, exp = GENERATED[name]
    path = make(tmp_path)
    code, message, _, _ = outcome(path)
    assert code == 2
    check_message(path, message, exp)
    TALLY["generated cases"] += 1


def test_generated_cases_through_the_cli(tmp_path: Path) -> None:
    for name in sorted(GENERATED):
        make, exp = GENERATED[name]
        folder = tmp_path / name
        folder.mkdir()
        path = make(folder)
        proc = run("validate", path)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
        check_message(path, lines[0].removeprefix("error: "), exp)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")
def test_named_pipe_does_not_hang(tmp_path: Path) -> None:
    """A FIFO called *.yaml (nobody writing to it) used to block the loader for ever."""
    fifo = tmp_path / "acme.yaml"
    os.mkfifo(fifo)
    proc = run("validate", fifo)
    assert proc.returncode == 2 and "file is empty" in proc.stderr, proc.stderr


def test_file_name_with_a_terminal_escape_is_shown_escaped(tmp_path: Path) -> None:
    path = tmp_path / "evil\x1b[31m\nname.yaml"
    shutil.copy(HERE / "mistake-tab.yaml", path)
    proc = run("validate", path)
    assert proc.returncode == 2
    assert "\x1b" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "evil\\x1b[31m\\nname.yaml:11:1: not valid YAML" in proc.stderr



def test_a_key_holding_a_line_break_stays_on_its_line(tmp_path: Path) -> None:
    """A key made of a line break (found by tests/test_fuzz.py) was echoed raw in the fix
    (`write ... e.g. `<newline>: 2``) and split its problem over two lines."""
    doc = yaml.safe_load((ROOT / "inputs" / "example.yaml").read_text())
    doc["costs"] = {**(doc.get("costs") or {}), "gpu_prices": {"\n": '=HYPERLINK("x")'}}
    doc["workloads"][0]["bad\x1bkey"] = 3
    path = tmp_path / "keys.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    with pytest.raises(LlmsizerError) as caught:
        load(path)
    head, *lines = str(caught.value).split("\n")
    assert head == f"{path}: 2 problems:" and len(lines) == 2, str(caught.value)
    assert all(line.startswith(f"  {path}:") and "\x1b" not in line for line in lines)
    assert "costs.gpu_prices.\\n: must be a number" in lines[0]
    assert "e.g. `\\n: 2`" in lines[0] and "unknown key 'bad\\x1bkey'" in lines[1]

# --- the command line: real exit codes, one line, nothing written -------------------------

CLI_SUBSET = [
    "mistake-indentation.yaml", "mistake-tab.yaml", "mistake-concurrent-user.yaml",
    "mistake-gpus-string.yaml", "mistake-ttft-2s.yaml", "not-yaml.yaml", "empty.yaml",
    "binary.yaml", "latin1.yaml", "billion-laughs.yaml", "python-tag.yaml",
    "duplicate-key.yaml", "number-nan.yaml", "unknown-gpu.yaml", "config-outside.yaml",
    "hostile-control-chars.yaml", "hostile-10000-chars.yaml",
]


# `size` loads exactly as `validate` does; run it on the realistic mistakes and two hostile files.
SIZE_TOO = {c for c in CLI_SUBSET if EXPECTED[c].get("realistic")} | {
    "billion-laughs.yaml", "binary.yaml"}


@pytest.mark.parametrize("case", CLI_SUBSET)
def test_cli_exits_2_with_one_line(tmp_path: Path, case: str) -> None:
    path = HERE / case
    exp = EXPECTED[case]
    assert exp["exit"] == 2
    for command in ("validate", "size") if case in SIZE_TOO else ("validate",):
        proc = run(command, path, cwd=tmp_path)
        assert proc.returncode == 2, (command, proc.stderr)
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
        check_message(path, lines[0].removeprefix("error: "), exp)
    assert files_under(tmp_path) == set(), "the command wrote into its working folder"


@pytest.mark.parametrize("case", ["many-schema-errors.yaml", "many-twenty-five-errors.yaml",
                                  "many-mixed-errors.yaml"])
def test_cli_tells_every_problem_of_a_file_in_one_block(tmp_path: Path, case: str) -> None:
    """Issue 25: all of a file's problems at once (up to 20), exit 2, no traceback."""
    path = HERE / case
    for command in ("validate", "size"):
        proc = run(command, path, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stdout == "", (command, proc.stderr)
        assert proc.stderr.startswith("error: "), proc.stderr
        check_message(path, proc.stderr.removeprefix("error: ").rstrip("\n"), EXPECTED[case])
    assert files_under(tmp_path) == set()


@pytest.mark.parametrize("case", ["not-yaml.yaml", "billion-laughs.yaml", "unknown-gpu.yaml",
                                  "hostile-rtl-override.yaml", "infeasible-fit.yaml",
                                  "infeasible-embed-latency.yaml"])
def test_cli_report_writes_nothing_for_a_failing_account(tmp_path: Path, case: str) -> None:
    out = tmp_path / "out"
    proc = run("report", HERE / case, "--out", out, cwd=tmp_path)
    assert proc.returncode == EXPECTED[case]["exit"], proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for fragment in EXPECTED[case]["fragments"]:
        assert fragment in lines[0], (fragment, lines[0])
    leaked = files_under(tmp_path)
    TALLY["files leaked"] += len(leaked)
    assert leaked == set()


@pytest.mark.parametrize("case", ["infeasible-speed.yaml", "infeasible-fit.yaml",
                                  "infeasible-embed-latency.yaml"])
def test_cli_infeasible_exits_3_and_says_what_would_work(case: str) -> None:
    path = HERE / case
    proc = run("size", path)
    assert proc.returncode == 3, proc.stderr
    said = " ".join((proc.stdout + proc.stderr).split())  # the table wraps long lines
    for fragment in EXPECTED[case]["fragments"]:
        assert fragment in said, fragment
    assert run("validate", path).returncode == 0  # the file itself is valid


# --- hostile text comes out literally, as text, inside the output folder ------------------


def test_report_shows_hostile_text_literally(tmp_path: Path) -> None:
    """Formulas stay text in the workbook, markup and templates stay text in the PDF."""
    case = "hostile-formulas.yaml"
    exp = EXPECTED[case]
    out = tmp_path / "out"
    proc = run("report", HERE / case, "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    stem = "hyperlink-http-evil-example-leak-a1-click"
    assert files_under(tmp_path) == {f"out/{stem}.{ext}" for ext in ("json", "xlsx", "pdf")}

    doc = json.loads((out / f"{stem}.json").read_text("utf-8"))
    for key, value in exp["account"].items():
        assert doc["account"][key] == value
    assert [w["name"] for w in doc["workloads"]] == exp["workloads"]

    hostile = [*exp["account"].values(), *exp["workloads"]]
    wb = openpyxl.load_workbook(out / f"{stem}.xlsx")
    seen: set[str] = set()
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if not isinstance(cell.value, str):
                    continue
                for text in hostile:
                    if text in cell.value:
                        seen.add(text)
                        assert cell.data_type == "s", (ws.title, cell.coordinate, cell.value)
    assert exp["account"]["name"] in seen and set(exp["workloads"]) <= seen
    exact = {c.value for ws in wb.worksheets for row in ws.iter_rows() for c in row
             if c.data_type == "s"}
    assert set(exp["workloads"]) <= exact, "a workload name cell holds the name as typed"

    pdf = subprocess.run(["pdftotext", "-layout", str(out / f"{stem}.pdf"), "-"],
                         capture_output=True, text=True, check=True).stdout
    flat = " ".join(pdf.split())
    for text in (exp["account"]["name"], exp["account"]["id"], *exp["workloads"]):
        assert text in flat, text


def test_batch_keeps_going_and_path_like_names_stay_inside(tmp_path: Path) -> None:
    """One valid hostile-name account among failing ones: it is written (as x.*, inside
    --out); the others write nothing; batch.json lists all of them."""
    src = tmp_path / "in"
    src.mkdir()
    failing = ["not-yaml.yaml", "billion-laughs.yaml", "unknown-gpu.yaml", "infeasible-fit.yaml"]
    for name in ["hostile-path.yaml", *failing]:
        shutil.copy(HERE / name, src / name)
    out = tmp_path / "deep" / "er" / "out"
    proc = run("report", src, "--out", out, "--jobs", "2", "--quiet", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads((out / "batch.json").read_text("utf-8"))
    status = {Path(a["file"]).name: a["status"] for a in doc["accounts"]}
    assert status["hostile-path.yaml"] == "ok"
    assert status["infeasible-fit.yaml"] == "infeasible"
    assert all(status[n] == "invalid input" for n in failing[:3])
    written = files_under(tmp_path) - {f"in/{f}" for f in files_under(src)}
    allowed = {f"deep/er/out/x.{ext}" for ext in ("json", "xlsx", "pdf")} | {
        "deep/er/out/batch.json", "deep/er/out/summary.xlsx"}
    extra = {f for f in written if f not in allowed and not Path(f).name.startswith(".")}
    TALLY["files leaked"] += len(extra)
    assert extra == set(), extra
    assert {f"deep/er/out/x.{ext}" for ext in ("json", "xlsx", "pdf")} <= written
    assert json.loads((out / "x.json").read_text("utf-8"))["account"]["name"] == "../../x"
    # the failures left nothing behind, and nothing appeared above the output folder
    for name in failing:
        assert not list(out.glob(f"{Path(name).stem}*"))
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "deep" / "x.json").exists()


def test_size_table_shows_markup_like_names_literally() -> None:
    proc = subprocess.run([*LLMSIZER, "size", str(HERE / "hostile-rich-markup.yaml")],
                          capture_output=True, text=True, timeout=300)
    TALLY["cli runs"] += 1
    TALLY["tracebacks"] += "Traceback" in proc.stderr
    assert proc.returncode == 0, proc.stderr[-400:]
    assert "[/] Acme [bold red]" in proc.stdout
    assert "[link=file:///etc/passwd]x[/link]" in proc.stdout


# --- the summary line ---------------------------------------------------------------------


def test_zz_summary_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every stored and generated case once more, in-process: the only outcomes are a valid
    result or a clean error; the input folder is unchanged; nothing leaked."""
    counts: Counter[str] = Counter()
    paths = [HERE / c for c in CASES]
    for name in sorted(GENERATED):
        (tmp_path / name).mkdir()
        paths.append(GENERATED[name][0](tmp_path / name))
    for path in paths:
        counts["tried"] += 1
        try:
            code, _, _, _ = outcome(path)
        except Exception:
            counts["tracebacks"] += 1
            print(traceback.format_exc())
            continue
        counts["clean errors" if code else "valid"] += 1
    after = _digest_folder()
    corrupted = sum(BEFORE.get(k) != v for k, v in after.items()) + len(set(BEFORE) - set(after))
    leaked = TALLY["files leaked"] + len(set(after) - set(BEFORE))
    tracebacks = counts["tracebacks"] + TALLY["tracebacks"]
    line = (f"bad inputs: {counts['tried']} cases tried in-process + {TALLY['cli runs']} CLI runs, "
            f"{counts['clean errors']} clean errors, {counts['valid']} valid, "
            f"{tracebacks} tracebacks, {leaked + corrupted} files leaked or corrupted")
    with capsys.disabled():
        print("\n" + line)
    assert tracebacks == 0 and leaked == 0 and corrupted == 0, line
    assert counts["tried"] >= 40 + len(GENERATED)
