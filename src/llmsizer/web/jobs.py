"""Writing documents for the web app: a bounded pool of worker processes (the PDF and the
workbook take seconds of CPU; a process keeps them off the server's request threads), a
limit on the jobs waiting, and a timeout. The same functions as the CLI write the files
(:func:`llmsizer.runs.report.write_outputs`, :func:`llmsizer.documents.reread.read_workbook`),
into a private temporary folder whose names are ours, never the user's.

A job is found by an unguessable id (``secrets.token_urlsafe``): one user's documents are
never listed or guessable by another. Finished jobs are kept for a short while, bounded.
"""

from __future__ import annotations

import multiprocessing
import secrets
import tempfile
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import LlmsizerError

WORKERS = 2
MAX_PENDING = 6  # jobs queued or running; more is refused ("busy, try again")
TIMEOUT_S = 120.0
KEEP_JOBS = 32  # finished jobs kept for download (bytes in memory), oldest dropped
MEDIA = {"pdf": "application/pdf",
         "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
         "json": "application/json"}


def render_document(yaml_text: str, source: str, fmt: str) -> tuple[str, bytes]:
    """In a worker: size the requirements and write one document; (file stem, bytes)."""
    from ..inputs.loader import load_from_text
    from ..runs.report import check_feasible, output_stem, write_outputs
    from ..sizing.engine import size

    result = size(load_from_text(yaml_text, source))
    check_feasible(result)
    stem = output_stem(result.account.slug)
    with tempfile.TemporaryDirectory(prefix="llmsizer-web-") as tmp:
        [path] = write_outputs(result, Path(tmp), stem="account", formats=(fmt,))
        return stem, path.read_bytes()


def reread_workbook(data: bytes, name: str) -> dict[str, Any]:
    """In a worker: the CLI's bounded re-read of an edited workbook, sized again; the
    requirements it rebuilt (as data for the form) and the ``--diff`` lines."""
    from ..documents.reread import diff_lines, read_workbook
    from ..sizing.engine import size

    with tempfile.TemporaryDirectory(prefix="llmsizer-web-") as tmp:
        path = Path(tmp) / "upload.xlsx"
        path.write_bytes(data)
        reread = read_workbook(path, name=name)
    result = size(reread.loaded)
    req = reread.loaded.req.model_dump(mode="json", exclude_defaults=True)
    return {"requirements": {"schema_version": 1, **req},
            "diff": diff_lines(reread, result), "warnings": list(reread.warnings)}


@dataclass
class Job:
    id: str
    kind: str
    future: Future[Any]
    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def state(self) -> str:
        """running | done | failed | timeout"""
        if not self.future.done():
            return "timeout" if self.elapsed() > TIMEOUT_S else "running"
        return "failed" if self.future.exception() is not None else "done"

    def error(self) -> str:
        exc = self.future.exception() if self.future.done() else None
        if self.state() == "timeout":
            return f"writing the document took longer than {TIMEOUT_S:.0f} s; try again"
        if isinstance(exc, LlmsizerError):
            return str(exc)
        return "the document could not be written (an internal error; see the server's log)"


class Busy(Exception):
    """Too many documents are being written; the user is told to try again."""


class Pool:
    """The worker processes and the jobs they run (bounded)."""

    def __init__(self, workers: int = WORKERS) -> None:
        self._workers = workers
        self._executor: ProcessPoolExecutor | None = None
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # spawn: the server runs threads, and a forked child of a threaded process can
            # inherit a held lock
            self._executor = ProcessPoolExecutor(
                self._workers, mp_context=multiprocessing.get_context("spawn"))
        return self._executor

    def submit(self, kind: str, fn: Any, *args: Any) -> Job:
        with self._lock:
            running = sum(not j.future.done() for j in self._jobs.values())
            if running >= MAX_PENDING:
                raise Busy(f"{running} documents are being written; try again in a moment")
            job = Job(secrets.token_urlsafe(18), kind, self._pool().submit(fn, *args))
            self._jobs[job.id] = job
            done = [k for k, j in self._jobs.items() if j.future.done()]
            for k in done[: max(0, len(self._jobs) - KEEP_JOBS)]:
                del self._jobs[k]
            return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def run(self, kind: str, fn: Any, *args: Any) -> Any:
        """Submit and wait (for the quick documents); raises the job's error or TimeoutError."""
        job = self.submit(kind, fn, *args)
        try:
            return job.future.result(timeout=TIMEOUT_S)
        finally:
            with self._lock:
                self._jobs.pop(job.id, None)

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
