"""Issue 25, third hardening round, the batch and output-folder side: each failure class
reproduced as it was found, and shown to end cleanly (docs/security.md lists each test)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import yaml
from helpers import example_dict
from test_batch import make_accounts, small_account

from llmsizer.base.atomic import TMP_PREFIX, account_lock, clean_temp_files, work_under
from llmsizer.base.errors import InputError
from llmsizer.inputs.loader import load
from llmsizer.runs import batch
from llmsizer.runs.report import (
    free_stem,
    lock_path,
    manifest_path,
    publish_set,
    stem_owner,
    write_outputs,
)
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]


def account_file(folder: Path, file: str, name: str, users: int = 40) -> Path:
    doc = small_account(1)
    doc["account"]["name"] = name
    doc["workloads"][0]["concurrent_users"] = users
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def sized(folder: Path, file: str, name: str, users: int = 40) -> Result:
    return size(load(account_file(folder, file, name, users)))


# --- F6: escape-safe names in progress lines ------------------------------------------------


def test_f6_escape_and_newline_in_a_file_name_cannot_forge_a_progress_line(tmp_path: Path
                                                                           ) -> None:
    """A file named "x<ESC>[2J<newline>[2 of 2] ok    forged.yaml" reached the progress
    line raw: the screen cleared and a second, forged line appeared."""
    src = tmp_path / "in"
    src.mkdir()
    evil = src / "x\x1b[2J\n[2 of 2] ok            forged.yaml"
    evil.write_text("schema_version: 1\naccount: [\n", encoding="utf-8")  # invalid YAML
    (src / "plain.yaml").write_text("schema_version: 1\naccount: [\n", encoding="utf-8")
    r = subprocess.run([*LLMSIZER, "report", str(src), "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert "\x1b" not in r.stderr and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    # two progress lines and the closing count: no third, forged line
    assert len(lines) == 3 and [ln[:5] for ln in lines[:2]] == ["[1/2]", "[2/2]"], r.stderr
    assert sum("\\x1b[2J\\n[2 of 2] ok" in ln for ln in lines) == 1


# --- F7: another account's files under the same stem ----------------------------------------


@pytest.mark.parametrize("first,second", [
    ("Acme Corp", "ACME CORP"),
    ("Сбербанк", "СБЕРБАНК"),  # case-folded in any script
    ("株式会社 東京", "株式会社・東京"),  # the same words
    ("🚀", "!!!"),  # no letters: both "account"
    ("A" * 60 + " Holdings", "A" * 60 + " Ventures"),  # slugs cut at 60 characters
], ids=["case", "cyrillic-case", "cjk", "no-letters", "after-60"])
def test_f7_a_second_account_with_the_same_stem_gets_its_own(tmp_path: Path, first: str,
                                                             second: str) -> None:
    """Separate runs of two accounts whose names slug alike, into one --out: the second
    replaced the first customer's files. The manifest says whose files a stem holds."""
    out = tmp_path / "out"
    out.mkdir()
    a = write_outputs(sized(tmp_path, "a.yaml", first), out, formats=("json",))
    b = write_outputs(sized(tmp_path, "b.yaml", second), out, formats=("json",))
    assert a[0].name != b[0].name and b[0].stem == f"{a[0].stem}-2"
    assert json.loads(a[0].read_text())["account"]["name"] == first  # still the first's
    assert json.loads(b[0].read_text())["account"]["name"] == second
    assert stem_owner(out, a[0].stem) == first and stem_owner(out, b[0].stem) == second
    # the same account again goes back to its own stem: no third copy
    again = write_outputs(sized(tmp_path, "a.yaml", first, users=41), out, formats=("json",))
    assert again == a and json.loads(a[0].read_text())["workloads"][0]["inputs"]["users"] == 41
    assert sorted(p.name for p in out.glob("[!.]*.json")) == sorted([a[0].name, b[0].name])
    # a batch into the same folder chooses the same stems
    for name, stem in ((second, b[0].stem), (first, a[0].stem)):
        one = [account_file(tmp_path / "batch", "x.yaml", name)]
        assert batch.stems(one, frozenset(), out) == [stem]


def test_f7_a_race_for_a_stem_is_refused_under_the_lock(tmp_path: Path) -> None:
    """Two runs that both found a stem free: the one publishing second sees the first's
    manifest under the lock and refuses, leaving the first's files as they were."""
    out = tmp_path / "out"
    out.mkdir()
    (first,) = write_outputs(sized(tmp_path, "a.yaml", "Acme Corp"), out, formats=("json",))
    before = first.read_bytes()
    with pytest.raises(InputError, match=r"already holds the files of the account 'Acme Corp'"
                                         r" under the name 'acme-corp'; nothing was written"):
        publish_set(out, "acme-corp", "ACME CORP", ["json"],
                    lambda fmt, tmp: tmp.write_text("{}"))
    assert first.read_bytes() == before
    assert free_stem(out, "acme-corp", "ACME CORP") == "acme-corp-2"
    assert not list(out.glob(f"{TMP_PREFIX}*"))


# --- F8: stamps from the content that was sized ---------------------------------------------


def test_f8_a_file_edited_while_it_is_sized_is_not_stamped(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """The stamp was taken after sizing: an edit made meanwhile was stamped with outputs of
    the old content, and the re-run said "skipped" (6 of 12 trials)."""
    import llmsizer.inputs.loader as loader

    path = account_file(tmp_path / "in", "acme.yaml", "Acme", users=40)
    real_load = loader.load

    def load_then_edit(p: Path) -> object:
        loaded = real_load(p)  # the content that is sized: 40 users
        account_file(tmp_path / "in", "acme.yaml", "Acme", users=90)  # the user saves
        return loaded

    monkeypatch.setattr(loader, "load", load_then_edit)
    out = tmp_path / "out"
    out.mkdir()
    o = batch.process(path, out, "acme", None)
    assert o.status == "ok", o.message
    assert json.loads((out / "acme.json").read_text())["workloads"][0]["inputs"]["users"] == 40
    assert not (out / ".acme.stamp").exists()
    assert not batch.is_fresh(path, out, "acme", None)  # the next run sizes 90 users


# --- F10: nothing published when the set cannot be completed --------------------------------


def test_f10_a_folder_named_like_the_manifest_publishes_nothing(tmp_path: Path) -> None:
    """A folder `.acme-corp.manifest.json` in --out: exit 2, yet the outputs were already
    published over the previous set."""
    out = tmp_path / "out"
    out.mkdir()
    (old,) = write_outputs(sized(tmp_path, "a.yaml", "Acme Corp", 40), out, formats=("json",))
    before = old.read_bytes()
    manifest_path(out, "acme-corp").unlink()
    manifest_path(out, "acme-corp").mkdir()
    with pytest.raises(InputError, match=r"\.acme-corp\.manifest\.json'?: a folder of that "
                                         r"name is in the way") as info:
        write_outputs(sized(tmp_path, "a.yaml", "Acme Corp", 90), out, formats=("json",))
    assert info.value.exit_code == 2
    assert old.read_bytes() == before
    assert not list(out.glob(f"{TMP_PREFIX}*"))


def test_f10_a_folder_named_like_the_stamp_publishes_nothing_in_a_batch(tmp_path: Path
                                                                        ) -> None:
    path = account_file(tmp_path / "in", "acme.yaml", "Acme")
    out = tmp_path / "out"
    (out / ".acme.stamp").mkdir(parents=True)
    o = batch.process(path, out, "acme", None)
    assert o.status == "invalid input" and "a folder of that name is in the way" in o.message
    assert sorted(p.name for p in out.iterdir()) == [".acme.stamp"]  # nothing published


# --- F11, F22: temp work under --out, swept after a kill ------------------------------------


def test_f11_summary_parts_never_touch_tmpdir(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """xlsxwriter wrote summary.xlsx's parts to $TMPDIR first, and a full disk left them
    there. Now they are built in memory: $TMPDIR stays empty even when the write fails."""
    private = tmp_path / "tmpdir"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    from llmsizer.runs.outcome import Outcome
    from llmsizer.runs.summary import write_summary

    rows = [Outcome(file=f"{i}.yaml", stem=f"a{i}", status="ok", gpus=8) for i in range(50)]
    write_summary(rows, tmp_path / "summary.xlsx")
    assert (tmp_path / "summary.xlsx").stat().st_size > 0
    with pytest.raises(Exception, match="No such file or directory"):  # xlsxwriter's own
        write_summary(rows, tmp_path / "no-such-folder" / "summary.xlsx")
    assert list(private.iterdir()) == []


def test_f22_temp_work_lives_under_out(tmp_path: Path) -> None:
    """A re-read's reference workbook and the batch warm-up used /tmp (llmsizer-reread-*,
    tmp*): now tempfile points into a work folder under --out for the run."""
    out = tmp_path / "out"
    out.mkdir()
    with work_under(out) as work:
        assert work.parent == out and work.name.startswith(f"{TMP_PREFIX}{os.getpid()}-")
        made = Path(tempfile.mkdtemp(prefix="llmsizer-reread-"))
        assert made.parent == work
    assert not work.exists() and not made.exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_f22_kill_9_during_the_warm_up_leaves_nothing_outside_out(tmp_path: Path) -> None:
    """kill -9 while the batch warms up: its work folder stays under --out (nothing in
    $TMPDIR) and the next run sweeps it."""
    src = tmp_path / "in"
    make_accounts(src, 2)
    out = tmp_path / "out"
    private = tmp_path / "tmpdir"
    private.mkdir()
    proc = subprocess.Popen([*LLMSIZER, "report", str(src), "--out", str(out), "--jobs", "1"],
                            env={**os.environ, "TMPDIR": str(private)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 180
    warm = None
    while time.time() < deadline and proc.poll() is None and warm is None:
        warm = next((p for p in out.glob(f"{TMP_PREFIX}*-work/*") if p.is_dir()), None)
        time.sleep(0.01)
    assert warm is not None, "no warm-up folder seen under --out"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    time.sleep(0.5)  # its workers (if any had started) die with it
    assert list(private.iterdir()) == []
    assert [p.name.startswith(f"{TMP_PREFIX}{proc.pid}-") for p in out.glob(f"{TMP_PREFIX}*")
            ] == [True]
    assert clean_temp_files(out) >= 1  # what the next run does first
    assert not list(out.glob(f"{TMP_PREFIX}*"))


# --- a lock held by a live, hung run --------------------------------------------------------


def test_a_hung_runs_lock_is_waited_for_with_a_notice_and_a_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    """The next run waited silently with no limit. Now it says whose lock it waits for and
    gives up after LLMSIZER_LOCK_WAIT seconds (default 120) with one clean error, exit 2."""
    out = tmp_path / "out"
    out.mkdir()
    held, release = threading.Event(), threading.Event()

    def hung_run() -> None:
        with account_lock(lock_path(out, "acme-corp")):
            held.set()
            release.wait(60)

    t = threading.Thread(target=hung_run)
    t.start()
    try:
        assert held.wait(10)
        monkeypatch.setenv("LLMSIZER_LOCK_WAIT", "3")
        t0 = time.monotonic()
        with pytest.raises(InputError) as info:
            write_outputs(sized(tmp_path, "a.yaml", "Acme Corp"), out, formats=("json",))
        took = time.monotonic() - t0
    finally:
        release.set()
        t.join()
    assert 3 <= took < 10 and info.value.exit_code == 2
    assert str(info.value).startswith(
        f"gave up after 3 s waiting for the lock '{out}/.acme-corp.lock', held by another "
        f"llmsizer run (process {os.getpid()})")
    notice = capsys.readouterr().err
    assert notice.count("\n") == 1 and notice.startswith("waiting up to 3 s for the lock")
    assert not (out / "acme-corp.json").exists() and not list(out.glob(f"{TMP_PREFIX}*"))
    # once the hung run is gone, the same write goes through
    assert write_outputs(sized(tmp_path, "a.yaml", "Acme Corp"), out, formats=("json",))


def test_example_account_is_unaffected(tmp_path: Path) -> None:
    """Control: an ordinary run writes its set under its own stem, with a manifest naming
    the account (what F7's check reads)."""
    doc = example_dict()
    path = tmp_path / "example.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    (tmp_path / "out").mkdir()
    (j,) = write_outputs(size(load(path)), tmp_path / "out", formats=("json",))
    assert j.name == f"{j.stem}.json" and stem_owner(tmp_path / "out", j.stem) == \
        doc["account"]["name"]
