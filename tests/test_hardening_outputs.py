"""Issue 17, output names and concurrent runs: reserved names, temp files that follow no
planted link, a folder in the way, an account's set published whole, four batches into one
folder (docs/security.md, "Output files")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_batch import make_accounts, small_account, valid_outputs

from llmsizer.base.atomic import TMP_PREFIX, atomic_group, clean_temp_files, write_text_atomic
from llmsizer.base.errors import InputError
from llmsizer.runs import batch
from llmsizer.runs.report import RESERVED_STEMS, complete_set, manifest_path, output_stem

LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]


def _named(folder: Path, name: str, users: int = 20) -> Path:
    doc = small_account(1)
    doc["account"]["name"] = name
    doc["workloads"][0]["concurrent_users"] = users
    path = folder / f"{name.lower().replace(' ', '-')}-{users}.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_reserved_names_get_their_own_stem(tmp_path: Path) -> None:
    """Accounts called "Summary" and "Batch" no longer write summary.xlsx / batch.json
    (which the batch then overwrote, and re-runs skipped as unchanged)."""
    assert {Path(batch.SUMMARY_NAME).stem, Path(batch.BATCH_NAME).stem} <= RESERVED_STEMS
    assert output_stem("summary") == "summary--account" and output_stem("acme") == "acme"
    src = tmp_path / "in"
    files = [_named(src, "Summary"), _named(src, "Batch"), _named(src, "Summary Account")]
    names = batch.stems(files)
    assert names == ["summary--account", "batch--account", "summary-account"]
    out = tmp_path / "out"
    proc = subprocess.run([*LLMSIZER, "report", str(src), "--out", str(out), "--jobs", "2"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "batch.json").read_text())
    assert doc["counts"]["ok"] == 3
    for stem in names:
        assert valid_outputs(out, stem) and complete_set(out, stem, [
            f"{stem}.json", f"{stem}.xlsx", f"{stem}.pdf"])
    assert json.loads((out / "summary--account.json").read_text())["account"]["name"] == "Summary"
    again = subprocess.run([*LLMSIZER, "report", str(src), "--out", str(out)],
                           capture_output=True, text=True, timeout=600)
    assert "3 skipped" in again.stderr, again.stderr


def test_planted_links_are_never_followed(tmp_path: Path) -> None:
    """A link planted at the old predictable temp name, or at the output name itself,
    pointing at a file outside: the file is untouched; the output replaces the link."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    target = out / "a.json"
    for pid in range(os.getpid() - 50, os.getpid() + 50):  # the old names: pid + target
        (out / f"{TMP_PREFIX}{pid}-a.json").symlink_to(victim)
    (out / "a.json").symlink_to(victim)
    write_text_atomic(target, '{"ok": true}\n')
    assert victim.read_text() == "precious"
    assert not target.is_symlink() and json.loads(target.read_text()) == {"ok": True}
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # not mkstemp's 0600


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_replaced_temp_file_is_not_published(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "a.json"
    with pytest.raises(InputError, match="was replaced while it was written"), \
            atomic_group([target]) as (tmp,):
        tmp.unlink()
        tmp.symlink_to(victim)  # swapped by someone else after it was created
    assert not target.exists() and victim.read_text() == "precious"
    assert not list(tmp_path.glob(f"{TMP_PREFIX}*"))


def test_a_folder_in_the_way_is_a_clean_error_and_leaves_nothing(tmp_path: Path) -> None:
    src = _named(tmp_path / "in", "Acme")
    out = tmp_path / "out"
    (out / "acme.xlsx").mkdir(parents=True)
    proc = subprocess.run([*LLMSIZER, "report", str(src), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "acme.xlsx" in proc.stderr and "folder of that name is in the way" in proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["acme.xlsx"]  # no stray JSON, no temp


def test_two_runs_on_one_account_leave_one_runs_whole_set(tmp_path: Path) -> None:
    """Two `report` runs of the same account (different users) at once, three times: the
    JSON, the workbook and the PDF always come from one run (the manifest, written last
    under the account's lock, agrees with all three; the workbook's embedded requirements
    and the JSON name the same users)."""
    from llmsizer.documents.marker import read_metadata
    from llmsizer.documents.xlsxsafe import custom_properties, open_workbook

    a, b = _named(tmp_path / "a", "Acme", 20), _named(tmp_path / "b", "Acme", 90)
    out = tmp_path / "out"
    for _ in range(3):
        procs = [subprocess.Popen([*LLMSIZER, "report", str(p), "--out", str(out)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for p in (a, b)]
        for p in procs:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0, err
        assert complete_set(out, "acme", ["acme.json", "acme.xlsx", "acme.pdf"])
        users = json.loads((out / "acme.json").read_text())["workloads"][0]["inputs"]["users"]
        wb = open_workbook(out / "acme.xlsx", "acme.xlsx")
        meta = read_metadata(custom_properties(wb), "acme.xlsx")
        wb.close()
        assert meta["source"]["requirements"]["workloads"][0]["concurrent_users"] == users
        manifest = json.loads(manifest_path(out, "acme").read_text())
        assert [f["name"] for f in manifest["files"]] == ["acme.json", "acme.xlsx", "acme.pdf"]
    assert not list(out.glob(f"{TMP_PREFIX}*"))


def test_four_concurrent_batches_into_one_folder_all_succeed(tmp_path: Path) -> None:
    """Each batch used to sweep the folder's temp files at its start, deleting those the
    others were writing ("No such file or directory"). Now only dead runs' are swept."""
    src = tmp_path / "in"
    make_accounts(src, 3)
    out = tmp_path / "out"
    procs = [subprocess.Popen([*LLMSIZER, "report", str(src), "--out", str(out), "--jobs", "1",
                               "--force"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        assert "3 written, 0 skipped (unchanged), 0 failed" in err, err
    for stem in ("account-000", "account-001", "account-002"):
        assert valid_outputs(out, stem)
        assert complete_set(out, stem, [f"{stem}.json", f"{stem}.xlsx", f"{stem}.pdf"])
    assert not list(out.glob(f"{TMP_PREFIX}*"))


def test_only_dead_runs_temp_files_are_swept(tmp_path: Path) -> None:
    mine = tmp_path / f"{TMP_PREFIX}{os.getpid()}-abc-x.json.tmp"
    parent = tmp_path / f"{TMP_PREFIX}{os.getppid()}-abc-x.json.tmp"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    gone = tmp_path / f"{TMP_PREFIX}{dead}-abc-x.json.tmp"
    for p in (mine, parent, gone):
        p.write_text("x")
    assert clean_temp_files(tmp_path) == 1
    assert mine.exists() and parent.exists() and not gone.exists()
