"""Batch mode (issue 5): one bad file never stops the rest, crashes lose one account,
interrupts leave no truncated file, re-runs skip finished work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from helpers import example_dict
from support.libreoffice import recalculated_values

from llmsizer.base.atomic import TMP_PREFIX
from llmsizer.runs import batch
from llmsizer.runs.outcome import Outcome

LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]


def small_account(i: int) -> dict:
    doc = example_dict()
    doc["account"]["name"] = f"Account {i:03d}"
    doc["workloads"] = doc["workloads"][:1]
    doc["workloads"][0]["concurrent_users"] = 20 + 7 * i
    doc["hardware"]["gpus"] = ["h100-sxm", "h200-sxm"]
    doc["hardware"]["weight_precisions"] = ["fp8"]
    return doc


def make_accounts(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / f"acct-{i:03d}.yaml"
        p.write_text(yaml.safe_dump(small_account(i), sort_keys=False))
        paths.append(p)
    return paths


def valid_outputs(out: Path, stem: str) -> bool:
    """All three files exist and are complete (JSON parses, xlsx opens, PDF has an EOF)."""
    try:
        json.loads((out / f"{stem}.json").read_text())
        openpyxl.load_workbook(out / f"{stem}.xlsx", read_only=True).close()
        return (out / f"{stem}.pdf").read_bytes().rstrip().endswith(b"%%EOF")
    except Exception:
        return False


def test_thirty_accounts_three_broken(tmp_path: Path) -> None:
    """Acceptance: 30 accounts, 3 broken (bad YAML, unknown GPU, infeasible target) ->
    27 complete output sets, 3 clear failures, summary + batch.json list all 30, exit 1."""
    src = tmp_path / "in"
    make_accounts(src, 27)
    (src / "bad-yaml.yaml").write_text("schema_version: 1\naccount: {name: Bad YAML\n")
    unknown = small_account(90)
    unknown["account"]["name"] = "Unknown GPU"
    unknown["hardware"]["gpus"] = ["h100-sxn"]
    (src / "unknown-gpu.yaml").write_text(yaml.safe_dump(unknown))
    slow = small_account(91)
    slow["account"]["name"] = "Impossible Target"
    slow["workloads"][0]["targets"] = {"tokens_per_s_per_user": 5000}
    (src / "infeasible.yaml").write_text(yaml.safe_dump(slow))
    out = tmp_path / "out"
    proc = subprocess.run([*LLMSIZER, "report", str(src), "--out", str(out), "--jobs", "2"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads((out / "batch.json").read_text())
    assert len(doc["accounts"]) == 30
    by_file = {Path(a["file"]).name: a for a in doc["accounts"]}
    assert by_file["bad-yaml.yaml"]["status"] == "invalid input"
    assert "bad-yaml.yaml:3" in by_file["bad-yaml.yaml"]["message"]
    assert by_file["unknown-gpu.yaml"]["status"] == "invalid input"
    assert "did you mean h100-sxm" in by_file["unknown-gpu.yaml"]["message"]
    assert by_file["infeasible.yaml"]["status"] == "infeasible"
    assert "per-user speed target: the best is" in by_file["infeasible.yaml"]["message"]
    ok = [a for a in doc["accounts"] if a["status"] == "ok"]
    assert len(ok) == 27
    assert all(valid_outputs(out, a["stem"]) for a in ok)
    # nothing written for the failures that could not be sized
    assert not list(out.glob("bad-yaml*")) and not list(out.glob("unknown-gpu*"))
    for name in ("bad-yaml.yaml", "unknown-gpu.yaml", "infeasible.yaml"):
        assert name in proc.stderr
    ws = openpyxl.load_workbook(out / "summary.xlsx").active
    files = [ws.cell(r, 1).value for r in range(2, 32)]
    assert sorted(Path(f).name for f in files) == sorted(by_file)
    assert not list(out.glob(f"{TMP_PREFIX}*"))


def test_summary_recalculated_by_libreoffice_equals_batch_json(tmp_path: Path) -> None:
    src = tmp_path / "in"
    make_accounts(src, 3)
    out = tmp_path / "out"
    outcomes = batch.run_batch(batch.collect([src]), out, jobs=2, force=False, templates=None)
    from llmsizer.runs.summary import write_summary

    write_summary(outcomes, out / "summary.xlsx")
    got = recalculated_values(out / "summary.xlsx", tmp_path / "lo")["Accounts"]
    assert got["F5"] == sum(o.gpus for o in outcomes)  # GPUs total, a live SUM
    assert got["G5"] == sum(o.nodes for o in outcomes)
    assert got["H5"] == sum(o.cloud_gpus_rented for o in outcomes)  # GPUs rented (round 20)
    assert got["J5"] == pytest.approx(sum(o.capex for o in outcomes), rel=1e-12)
    assert got["K5"] == pytest.approx(sum(o.annual_cost_onprem for o in outcomes), rel=1e-12)
    for r, o in enumerate(outcomes, start=2):
        assert got[f"F{r}"] == o.gpus and got[f"C{r}"] == o.status


def _crash_on(target: str):  # type: ignore[no-untyped-def]
    real = batch.process

    def process(path: Path, out: Path, stem: str, templates: Path | None,
                appendix: bool = False) -> Outcome:
        if path.name == target:
            os._exit(137)  # what the OOM killer leaves behind
        return real(path, out, stem, templates, appendix)

    return process


def test_a_dying_worker_loses_only_its_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    src = tmp_path / "in"
    files = make_accounts(src, 6)
    monkeypatch.setattr(batch, "process", _crash_on(files[2].name))
    outcomes = batch.run_batch(files, tmp_path / "out", jobs=2, force=False, templates=None)
    statuses = {Path(o.file).name: o.status for o in outcomes}
    assert statuses.pop(files[2].name) == "error"
    assert set(statuses.values()) == {"ok"}
    crashed = next(o for o in outcomes if Path(o.file) == files[2])
    assert "worker process died (exit code 137)" in crashed.message


def test_workers_over_the_memory_bound_are_replaced(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers never collect garbage; one whose memory grew by RETIRE_GROWTH_MB is replaced
    by a fresh fork. With the bound at zero every account gets a new worker: all complete."""
    src = tmp_path / "in"
    files = make_accounts(src, 5)
    monkeypatch.setattr(batch, "RETIRE_GROWTH_MB", -1e9)
    started: list[int] = []
    real_start = batch.mp.get_context("fork").Process.start

    def counting_start(self: Any) -> None:
        started.append(1)
        real_start(self)

    monkeypatch.setattr(batch.mp.get_context("fork").Process, "start", counting_start)
    outcomes = batch.run_batch(files, tmp_path / "out", jobs=2, force=False, templates=None)
    assert [o.status for o in outcomes] == ["ok"] * 5
    assert all(valid_outputs(tmp_path / "out", o.stem) for o in outcomes)
    assert len(started) >= 5  # two at the start, then one per retired worker


def test_interrupt_leaves_no_truncated_file_and_rerun_skips_finished(tmp_path: Path) -> None:
    src = tmp_path / "in"
    make_accounts(src, 8)
    out = tmp_path / "out"
    cmd = [*LLMSIZER, "report", str(src), "--out", str(out), "--jobs", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    # Interrupt once an account has finished (its stamp is written last), mid-batch.
    while time.time() < deadline and not list(out.glob(".*.stamp")):
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err  # SIGTERM: 128 + 15 (Ctrl-C gives 130)
    assert "terminated" in err and "Traceback" not in err
    finished = {p.name for p in out.glob(".*.stamp")}  # a stamp marks a finished account
    assert finished, "nothing finished before the interrupt"
    for stem in {p.stem for p in out.iterdir() if not p.name.startswith(".")}:
        assert valid_outputs(out, stem), f"{stem} incomplete after the interrupt"
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"{len(finished)} skipped" in again.stderr
    doc = json.loads((out / "batch.json").read_text())
    assert {a["status"] for a in doc["accounts"]} == {"ok", "skipped"}
    assert all(valid_outputs(out, a["stem"]) for a in doc["accounts"])
    assert not list(out.glob(f"{TMP_PREFIX}*"))
    forced = subprocess.run([*cmd, "--force"], capture_output=True, text=True, timeout=600)
    assert "0 skipped" in forced.stderr


def test_same_account_name_twice_both_survive(tmp_path: Path) -> None:
    src = tmp_path / "in"
    a, b = make_accounts(src, 2)
    for p in (a, b):
        doc = yaml.safe_load(p.read_text())
        doc["account"]["name"] = "../../Same Name/\x07"
        p.write_text(yaml.safe_dump(doc))
    names = batch.stems([a, b])
    assert len(set(names)) == 2
    assert all("/" not in n and ".." not in n and n.startswith("same-name") for n in names)


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run([*LLMSIZER, "report", str(tmp_path / "nope"), "--out",
                           str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = subprocess.run([*LLMSIZER, "report", str(tmp_path / "empty"), "--out",
                           str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 2 and "no *.yaml" in proc.stderr


def test_a_changed_benchmark_file_is_not_skipped(tmp_path: Path) -> None:
    """The stamp covers files the account names (bench results, config.json), not just the
    YAML: editing the benchmark must re-run the account."""
    src = tmp_path / "in"
    src.mkdir()
    (src / "m.json").write_text('{"hidden_size": 4096, "num_hidden_layers": 32, '
                                '"num_attention_heads": 32, "num_key_value_heads": 8}')
    doc = small_account(1)
    doc["workloads"][0]["model"] = "m.json"
    yaml_path = src / "a.yaml"
    yaml_path.write_text(yaml.safe_dump(doc))
    before = batch.fingerprint(yaml_path, None)
    (src / "m.json").write_text('{"hidden_size": 4096, "num_hidden_layers": 40, '
                                '"num_attention_heads": 32, "num_key_value_heads": 8}')
    assert batch.fingerprint(yaml_path, None) != before


def test_summary_names_each_recommendation_in_words(tmp_path: Path) -> None:
    """summary.xlsx's recommendation column speaks as the proposal does (GPUs, precisions,
    platform by name), never an option id; a skipped account's row, rebuilt from its JSON,
    says the same."""
    src = tmp_path / "in"
    make_accounts(src, 2)
    out = tmp_path / "out"
    first = batch.run_batch(batch.collect([src]), out, jobs=1, force=False, templates=None)
    again = batch.run_batch(batch.collect([src]), out, jobs=1, force=False, templates=None)
    assert [o.status for o in again] == ["skipped", "skipped"]
    for o, s in zip(first, again, strict=True):
        doc = json.loads((out / f"{o.stem}.json").read_text())
        for line, w in zip(o.recommendations, doc["workloads"], strict=True):
            rec = next(x for x in w["options"] if x["id"] == w["recommended"])
            assert w["recommended"] not in line and "/" not in line
            assert line.startswith(f"{w['name']}: {rec['tp']} × ")
            assert f"{rec['weight_precision'].upper()} weights" in line
        assert s.recommendations == o.recommendations


def test_summary_rows_are_as_tall_as_their_wrapped_recommendations(tmp_path: Path) -> None:
    """summary.xlsx wrote a recommendation wider than its 50-character column (two lines when
    wrapped, more for accounts with several workloads) without a row height: LibreOffice
    keeps an .xlsx row at its default 15 points unless the file states one, so the wrapped
    lines printed over the next account's row."""
    src = tmp_path / "in"
    make_accounts(src, 2)
    out = tmp_path / "out"
    outcomes = batch.run_batch(batch.collect([src]), out, jobs=1, force=False, templates=None)
    from llmsizer.runs.summary import COLUMNS, LINE_HEIGHT, write_summary

    write_summary(outcomes, out / "summary.xlsx")
    ws = openpyxl.load_workbook(out / "summary.xlsx").active
    width = next(w for head, attr, _k, w in COLUMNS if attr == "recommendations")
    for r, o in enumerate(outcomes, start=2):
        (line,) = o.recommendations
        # 'Internal assistant: 2 × NVIDIA H100 ... — 8 GPUs bought, 1 node' (its GPUs since
        # review round 25: three lines of the 50-character column)
        assert 2 * (width - 2) < len(line) <= 3 * (width - 2)
        assert ws.row_dimensions[r].height == 3 * LINE_HEIGHT
