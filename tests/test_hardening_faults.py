"""Issue 17, faults: a full disk while the batch summary is written, SIGKILL of a batch's
process (its workers must die too), SIGTERM (temp files removed, non-zero exit)
(docs/security.md, "Faults")."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_batch import make_accounts

from llmsizer.base.atomic import TMP_PREFIX, clean_temp_files
from llmsizer.base.errors import InputError
from llmsizer.runs import batch
from llmsizer.runs.outcome import Outcome

LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]


def _children(pid: int) -> set[int]:
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for whoever adopts it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _start_batch(tmp_path: Path, n: int) -> tuple[subprocess.Popen[str], Path]:
    src = tmp_path / "in"
    make_accounts(src, n)
    out = tmp_path / "out"
    proc = subprocess.Popen([*LLMSIZER, "report", str(src), "--out", str(out), "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out


def _wait_for_workers(proc: subprocess.Popen[str], want: int = 2) -> set[int]:
    deadline = time.time() + 180
    workers: set[int] = set()
    while time.time() < deadline and len(workers) < want and proc.poll() is None:
        workers = _children(proc.pid)
        time.sleep(0.05)
    assert workers, "the batch started no worker"
    return workers


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_sigkill_of_the_batch_kills_its_workers(tmp_path: Path) -> None:
    proc, out = _start_batch(tmp_path, 8)
    workers = _wait_for_workers(proc)
    time.sleep(0.5)  # mid-account
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.time() + 5
    while time.time() < deadline and any(_running(w) for w in workers):
        time.sleep(0.05)
    orphans = [w for w in workers if _running(w)]
    for w in orphans:  # do not leave them behind even when the test fails
        os.kill(w, signal.SIGKILL)
    assert not orphans, f"{len(orphans)} worker(s) outlived the batch by 5 s"
    # only the killed batch's own work folder remains (it cannot remove it after kill -9);
    # the next run sweeps it, its process being gone (issue 25, F22)
    left = list(out.glob(f"{TMP_PREFIX}*"))
    assert [p.name.startswith(f"{TMP_PREFIX}{proc.pid}-") and p.is_dir() for p in left] == [
        True] * len(left), "a dying worker left its temp files"
    assert clean_temp_files(out) == len(left) and not list(out.glob(f"{TMP_PREFIX}*"))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_sigterm_removes_temp_files_and_exits_non_zero(tmp_path: Path) -> None:
    proc, out = _start_batch(tmp_path, 8)
    workers = _wait_for_workers(proc)
    deadline = time.time() + 180
    while time.time() < deadline and not list(out.glob("account-*.pdf")):
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err  # 128 + SIGTERM; Ctrl-C is 130
    assert "terminated" in err and "Traceback" not in err
    assert not [w for w in workers if _running(w)]
    assert not list(out.glob(f"{TMP_PREFIX}*")), "temp files left after SIGTERM"


def test_a_full_disk_while_writing_the_summary_is_one_clean_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC raised where the summary is renamed into place (the real write site)."""
    real_replace = os.replace

    def full(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).name == batch.SUMMARY_NAME:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", full)
    outcomes = [Outcome(file="a.yaml", stem="a", status="ok", gpus=8, capex=1.0)]
    with pytest.raises(InputError) as info:
        batch.write_batch_files(outcomes, tmp_path)
    msg = str(info.value)
    assert "\n" not in msg and "No space left on device" in msg and str(tmp_path) in msg
    assert not list(tmp_path.iterdir())  # neither a temp file nor a half summary


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            "mount -t tmpfs -o size=64k none /mnt"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="no user+mount namespace to mount a tmpfs")
def test_a_really_full_disk_while_writing_the_summary(tmp_path: Path) -> None:
    """A real full disk: the batch's outputs copied onto a small tmpfs (in a private mount
    namespace), filled up; the re-run skips every account and then writes the summary."""
    src = tmp_path / "in"
    make_accounts(src, 2)
    out = tmp_path / "out"
    first = subprocess.run([*LLMSIZER, "report", str(src), "--out", str(out), "--jobs", "2"],
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    (out / "summary.xlsx").unlink()
    (out / "batch.json").unlink()
    small = tmp_path / "small"
    small.mkdir()
    script = (f'mount -t tmpfs -o size=4m none "{small}" && cp -a "{out}/." "{small}/" && '
              f'(dd if=/dev/zero of="{small}/filler" bs=4k 2>/dev/null || true) && '
              f'"{sys.executable}" -m llmsizer.cli report "{src}" --out "{small}" --jobs 2; '
              f'echo "rc=$?"; ls -a "{small}"')
    proc = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                           script], capture_output=True, text=True, timeout=600)
    assert "rc=2" in proc.stdout, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "No space left on device" in errors[0], proc.stderr
    assert "cannot write the batch summary" in errors[0]
    listing = proc.stdout.split()
    assert "summary.xlsx" not in listing and not [n for n in listing if n.startswith(TMP_PREFIX)]


def test_sigterm_during_a_single_report_removes_its_temp_files(tmp_path: Path) -> None:
    src = tmp_path / "in"
    (account,) = make_accounts(src, 1)
    out = tmp_path / "out"
    proc = subprocess.Popen([*LLMSIZER, "report", str(account), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None and not (
            out.is_dir() and list(out.glob(f"{TMP_PREFIX}*"))):
        time.sleep(0.005)
    assert proc.poll() is None, "the report finished before a temp file was seen"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    assert not list(out.glob(f"{TMP_PREFIX}*")) and not list(out.glob("*.json"))
