"""A batch `report` of several files tells each file's input warnings (inputs/doubts.py: a
target that looks typed in the other unit; a name's typographic quotes) under that file's
line, as `validate`, `size` and a single `report` print them; before, a batch printed
nothing of them. batch.json keeps them per account."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner
from helpers import example_dict

from llmsizer.cli import main


def account(name: str, ttft_s: float) -> dict:
    doc = example_dict()
    doc["account"]["name"] = name
    doc["workloads"] = doc["workloads"][:1]  # Internal assistant: 200 users, 500-token prompts
    doc["workloads"][0]["targets"] = {"tokens_per_s_per_user": 30, "ttft_s": ttft_s}
    doc["hardware"]["gpus"] = ["h100-sxm"]
    doc["hardware"]["weight_precisions"] = ["fp8"]
    return doc


def test_a_batch_tells_each_files_input_warnings_under_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    # 45 s before the first token for a 500-token prompt: beyond the doubt limit of
    # 20 s + 500 / 2,000 s (inputs/doubts.py), inside the schema's 120 s
    (folder / "a-doubtful.yaml").write_text(
        yaml.safe_dump(account("“Adventure Works”", 45), sort_keys=False, allow_unicode=True),
        encoding="utf-8")
    (folder / "b-clean.yaml").write_text(yaml.safe_dump(account("Contoso", 2), sort_keys=False))
    out = tmp_path / "out"
    runner = CliRunner()
    res = runner.invoke(main, ["report", str(folder), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    lines = res.stderr.splitlines()
    doubtful = folder / "a-doubtful.yaml"
    at = next(i for i, line in enumerate(lines) if line.endswith(f"ok            {doubtful}"))
    assert lines[at + 1:at + 3] == [
        f"    warning: {doubtful}:3:3: account.name: the typographic quotes around "
        "“Adventure Works” are left out: the proposal names it Adventure Works",
        f"    warning: {doubtful}:15:5: workloads[0].targets.ttft_s: 45 s before the first "
        "token is far beyond the usual 0.2–10 s for a 500-token prompt: check it was not "
        "meant in milliseconds (0.045 s); if so, write `ttft_s: 0.045`"]
    clean = next(i for i, line in enumerate(lines) if line.endswith(str(folder / "b-clean.yaml")))
    assert not lines[clean + 1].startswith("    warning:"), lines
    doc = json.loads((out / "batch.json").read_text("utf-8"))
    warned = {Path(a["file"]).name: a["warnings"] for a in doc["accounts"]}
    assert [len(warned["a-doubtful.yaml"]), warned["b-clean.yaml"]] == [2, []]
    assert {a["account"] for a in doc["accounts"]} == {"Adventure Works", "Contoso"}

    # --quiet keeps one line per account: the count, the lines in batch.json
    res = runner.invoke(main, ["report", str(folder), "--out", str(out), "--jobs", "1",
                               "--quiet", "--force"])
    assert res.exit_code == 0, res.output
    assert f"ok            {doubtful} (2 input warnings: see batch.json)" in res.stderr
    assert "warning:" not in res.stderr


def test_an_unchanged_account_still_tells_its_warnings(tmp_path: Path) -> None:
    # Once failed: the second run skipped the unchanged file (its outputs were fresh) and
    # printed and kept no warning for it, as if its 45 s first-token target had been fixed.
    folder = tmp_path / "in"
    folder.mkdir()
    doubtful = folder / "a-doubtful.yaml"
    doubtful.write_text(yaml.safe_dump(account("Contoso", 45), sort_keys=False))
    (folder / "b-clean.yaml").write_text(yaml.safe_dump(account("Fabrikam", 2), sort_keys=False))
    out = tmp_path / "out"
    runner = CliRunner()
    first = runner.invoke(main, ["report", str(folder), "--out", str(out), "--jobs", "1"])
    assert first.exit_code == 0, first.output
    again = runner.invoke(main, ["report", str(folder), "--out", str(out), "--jobs", "1"])
    assert again.exit_code == 0, again.output
    lines = again.stderr.splitlines()
    at = next(i for i, line in enumerate(lines) if line.endswith(str(doubtful)))
    assert f"skipped       {doubtful}" in lines[at], lines
    assert lines[at + 1].startswith(f"    warning: {doubtful}:") and "45 s before the first" \
        in lines[at + 1], lines
    doc = json.loads((out / "batch.json").read_text("utf-8"))
    assert [len(a["warnings"]) for a in doc["accounts"]] == [1, 0]
