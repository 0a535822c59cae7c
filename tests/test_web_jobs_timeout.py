"""A web job past its timeout frees its worker (web/jobs.py): real worker processes running
real slow functions, with a small TIMEOUT_S. A hung job used to say "timeout" while its
process kept the worker, so two hung jobs left none for anyone."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from llmsizer.web import jobs
from llmsizer.web.jobs import Job, Pool


def _hang(pidfile: str) -> None:
    """A job that never ends in time: it says which process it runs in, then sleeps."""
    Path(pidfile).write_text(str(os.getpid()))
    time.sleep(600)


def _until(flag: str, pidfile: str) -> int:
    """Another user's job: runs until the test lets it finish; returns its process id."""
    Path(pidfile).write_text(str(os.getpid()))
    while not Path(flag).exists():
        time.sleep(0.05)
    return os.getpid()


def _wait(what: str, ready: object, limit: float = 60.0) -> None:
    """Poll until ``ready()``; a condition, not a speed (the limit only ends a broken run)."""
    end = time.monotonic() + limit
    while not ready():  # type: ignore[operator]
        assert time.monotonic() < end, f"never: {what}"
        time.sleep(0.05)


def _pid_of(pidfile: Path) -> int:
    _wait(f"{pidfile.name} written", lambda: pidfile.exists() and pidfile.read_text())
    return int(pidfile.read_text())


def _ended(pid: int) -> bool:
    """Gone, or a zombie nobody will run again."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _overdue(job: Job) -> None:
    _wait("the job past TIMEOUT_S", lambda: job.elapsed() > jobs.TIMEOUT_S)


def test_a_hung_job_frees_its_worker_and_another_users_job_still_finishes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jobs, "TIMEOUT_S", 6.0)
    pool = Pool(2)
    try:
        hung = pool.submit("pdf", _hang, str(tmp_path / "hung.pid"))
        hung_pid = _pid_of(tmp_path / "hung.pid")
        # another user's job starts half a timeout later: still within its time when the
        # first one is overdue
        _wait("half the timeout", lambda: hung.elapsed() > jobs.TIMEOUT_S / 2)
        other = pool.submit("pdf", _until, str(tmp_path / "go"), str(tmp_path / "other.pid"))
        other_pid = _pid_of(tmp_path / "other.pid")
        _overdue(hung)
        assert pool.get(hung.id) is hung and hung.state() == "timeout"
        assert "took longer than 6 s" in hung.error()
        # both old workers are busy (one hung, one on the other user's job), yet a new job
        # gets a worker now: a fresh one
        fresh = pool.submit("pdf", os.getpid)
        assert fresh.future.result(timeout=60) not in (hung_pid, other_pid)
        assert not _ended(hung_pid)  # the other user's job shares its executor: not yet
        assert other.state() == "running"
        (tmp_path / "go").write_text("")
        assert other.future.result(timeout=60) == other_pid and other.state() == "done"
        pool.get(other.id)  # the retired executor runs nothing in time now: it is ended
        _wait(f"process {hung_pid} ended", lambda: _ended(hung_pid))
        assert hung.state() == "timeout" and "took longer than" in hung.error()
        assert pool.run("xlsx", os.getpid) not in (hung_pid, other_pid)
    finally:
        pool.shutdown()


def test_two_hung_jobs_leave_the_workers_to_the_next_user(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The defect as met: two hung PDFs held both workers for good."""
    monkeypatch.setattr(jobs, "TIMEOUT_S", 3.0)
    pool = Pool(2)
    try:
        hung = [pool.submit("pdf", _hang, str(tmp_path / f"{i}.pid")) for i in range(2)]
        pids = [_pid_of(tmp_path / f"{i}.pid") for i in range(2)]
        assert len(set(pids)) == 2  # both workers taken
        for job in hung:
            _overdue(job)
        assert [j.state() for j in hung] == ["timeout", "timeout"]
        pid = pool.run("xlsx", os.getpid)
        assert pid not in pids
        for p in pids:
            _wait(f"process {p} ended", lambda p=p: _ended(p))
        assert [pool.get(j.id) for j in hung] == hung  # kept for their "timeout" page
        assert all(j.state() == "timeout" for j in hung)
    finally:
        pool.shutdown()


def test_a_quick_document_that_times_out_ends_its_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pool.run (the workbook, the re-read) raised TimeoutError and left the process
    running; with one worker every later document then waited behind it."""
    monkeypatch.setattr(jobs, "TIMEOUT_S", 2.0)
    pool = Pool(1)
    try:
        with pytest.raises(TimeoutError):
            pool.run("xlsx", _hang, str(tmp_path / "hung.pid"))
        hung_pid = int((tmp_path / "hung.pid").read_text())
        _wait(f"process {hung_pid} ended", lambda: _ended(hung_pid))
        assert pool.run("xlsx", os.getpid) != hung_pid
    finally:
        pool.shutdown()


def test_jobs_waiting_behind_a_hung_one_move_to_a_fresh_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One worker, hung; jobs submitted later wait for it. Those no worker has taken yet
    run in the fresh executor instead of timing out behind it."""
    monkeypatch.setattr(jobs, "TIMEOUT_S", 4.0)
    pool = Pool(1)
    try:
        hung = pool.submit("pdf", _hang, str(tmp_path / "hung.pid"))
        hung_pid = _pid_of(tmp_path / "hung.pid")
        _wait("half the timeout", lambda: hung.elapsed() > jobs.TIMEOUT_S / 2)
        waiting = [pool.submit("pdf", os.getpid) for _ in range(4)]
        assert all(j.state() == "running" for j in waiting)  # none ran: the worker is hung
        _overdue(hung)
        pool.get(hung.id)
        # the executor's own queue holds a job or two it has handed on (no longer
        # cancellable); the rest moved
        moved = [j for j in waiting if j.executor is not hung.executor]
        assert len(moved) >= 2
        for job in moved:
            assert job.future.result(timeout=60) != hung_pid and job.state() == "done"
    finally:
        pool.shutdown()
