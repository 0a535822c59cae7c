"""Writing documents for the web app: a bounded pool of worker processes (the PDF and the
workbook take seconds of CPU; a process keeps them off the server's request threads), a
limit on the jobs waiting, and a timeout. The same functions as the CLI write the files
(:func:`llmsizer.runs.report.write_outputs`, :func:`llmsizer.documents.reread.read_workbook`),
into a private temporary folder whose names are ours, never the user's.

A job is found by an unguessable id (``secrets.token_urlsafe``): one user's documents are
never listed or guessable by another. Finished jobs are kept for a short while, bounded.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import secrets
import tempfile
import threading
import time
from collections import OrderedDict
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import LlmsizerError
from .forms import Configs

WORKERS = 2
MAX_PENDING = 6  # jobs queued or running; more is refused ("busy, try again")
TIMEOUT_S = 120.0
DRAW_TIMEOUT_S = 30.0  # a live update's charts; past it the chart area says so
KEEP_JOBS = 32  # finished jobs kept for download (bytes in memory), oldest dropped
MEDIA = {"pdf": "application/pdf",
         "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
         "json": "application/json"}


def render_document(yaml_text: str, source: str, fmt: str,
                    configs: Configs = ()) -> tuple[str, bytes]:
    """In a worker: size the requirements and write one document; (file stem, bytes)."""
    from ..inputs.loader import load_from_text
    from ..runs.report import check_feasible, output_stem, write_outputs
    from ..sizing.engine import size
    from .service import models_of

    result = size(load_from_text(yaml_text, source, models=models_of(configs)))
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
            "diff": diff_lines(reread, result), "warnings": [*reread.warnings, *reread.loaded.warnings]}


def _lower_priority() -> None:
    """A document worker yields the CPU to the live updates (seconds of PDF against a user
    waiting for numbers as they type)."""
    import os

    if hasattr(os, "nice"):
        os.nice(4)  # about 40 % of a normal share: it yields, it is not starved


@dataclass
class Job:
    id: str
    kind: str
    future: Future[Any]
    started: float = field(default_factory=time.monotonic)
    executor: ProcessPoolExecutor | None = field(default=None, repr=False)
    call: tuple[Any, ...] = field(default=(), repr=False)  # (fn, *args): to run it elsewhere
    timed_out: bool = False  # its worker was (or will be) stopped: it says "timeout" for good

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def overdue(self) -> bool:
        return not self.future.done() and (self.timed_out or self.elapsed() > TIMEOUT_S)

    def state(self) -> str:
        """running | done | failed | timeout"""
        if self.timed_out or self.overdue():
            return "timeout"
        if not self.future.done() or self.future.cancelled():  # cancelled: being moved
            return "running"
        return "failed" if self.future.exception() is not None else "done"

    def error(self) -> str:
        if self.state() == "timeout":
            return f"writing the document took longer than {TIMEOUT_S:.0f} s; try again"
        exc = self.future.exception() if self.state() == "failed" else None
        if isinstance(exc, LlmsizerError):
            return str(exc)
        if isinstance(exc, BrokenProcessPool):
            return STOPPED
        return "the document could not be written (an internal error; see the server's log)"


class Busy(Exception):
    """Too many documents are being written; the user is told to try again."""


# A worker killed under the job (the kernel's out-of-memory killer, an operator): the pool is
# then broken for good, so it is replaced and the user presses again (every later document
# failed with an internal error until the server was restarted).
STOPPED = ("the process writing the document stopped before it finished (the server may be "
           "short of memory); press the button again")


class Pool:
    """The worker processes and the jobs they run (bounded).

    A job past :data:`TIMEOUT_S` frees its worker. An executor cannot stop one of its
    workers: a worker that ends breaks the whole pool, and every job running in it fails.
    So the executor of an overdue job is retired: new jobs go to a fresh one at once (a
    hung job no longer holds a worker anyone is waiting for), the retired one's other jobs
    run to their end, and its processes are ended as soon as every job it still runs is
    overdue. Meanwhile a retired worker or two may run beside the new ones; jobs waiting
    in the retired executor that no worker has taken are moved to the fresh one."""

    def __init__(self, workers: int = WORKERS) -> None:
        self._workers = workers
        self._executor: ProcessPoolExecutor | None = None
        self._retired: list[ProcessPoolExecutor] = []
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # spawn: the server runs threads, and a forked child of a threaded process can
            # inherit a held lock
            self._executor = ProcessPoolExecutor(
                self._workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_lower_priority)
        return self._executor

    def submit(self, kind: str, fn: Any, *args: Any) -> Job:
        with self._lock:
            self._reap()
            running = sum(not j.future.done() for j in self._jobs.values())
            if running >= MAX_PENDING:
                raise Busy(f"{running} documents are being written; try again in a moment")
            future, executor = self._start(fn, *args)
            job = Job(secrets.token_urlsafe(18), kind, future, executor=executor,
                      call=(fn, *args))
            self._jobs[job.id] = job
            done = [k for k, j in self._jobs.items() if j.future.done()]
            for k in done[: max(0, len(self._jobs) - KEEP_JOBS)]:
                del self._jobs[k]
            return job

    def _start(self, fn: Any, *args: Any) -> tuple[Future[Any], ProcessPoolExecutor]:
        try:
            return self._pool().submit(fn, *args), self._pool()
        except BrokenProcessPool:  # a worker died since the last job
            self._replace()
            return self._pool().submit(fn, *args), self._pool()

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            self._reap()
            return self._jobs.get(job_id)

    def _reap(self) -> None:
        """Under the lock: retire the executor of an overdue job and end a retired one's
        processes once every job it still runs is overdue (see the class)."""
        overdue = [j for j in self._jobs.values() if j.overdue()]
        for job in overdue:
            job.timed_out = True
        if self._executor is not None and any(j.executor is self._executor for j in overdue):
            self._retired.append(self._executor)
            self._executor = None
            for job in list(self._jobs.values()):
                # still waiting for a worker there: run it in the fresh executor instead
                if job.executor is self._retired[-1] and job.future.cancel():
                    job.future, job.executor = self._start(*job.call)
        for executor in list(self._retired):
            if all(j.overdue() for j in self._jobs.values()
                   if j.executor is executor and not j.future.done()):
                _stop(executor)
                self._retired.remove(executor)

    def run(self, kind: str, fn: Any, *args: Any) -> Any:
        """Submit and wait (for the quick documents); raises the job's error or TimeoutError."""
        job = self.submit(kind, fn, *args)
        deadline = time.monotonic() + TIMEOUT_S
        try:
            while True:
                future = job.future
                try:
                    return future.result(timeout=max(0.0, deadline - time.monotonic()))
                except CancelledError:
                    if job.future is future:
                        raise
                    # moved from a retired executor to a fresh one (_reap): wait on that
        except BrokenProcessPool:
            with self._lock:
                if job.timed_out:  # its worker was ended by _reap, as overdue
                    raise TimeoutError from None
                if job.executor is self._executor:  # not a retired one: that one is broken
                    self._replace()
            raise Busy(STOPPED) from None
        except TimeoutError:
            with self._lock:
                job.timed_out = True
                self._reap()  # kept among the jobs until its worker is ended
            raise
        finally:
            with self._lock:
                if job.future.done():
                    self._jobs.pop(job.id, None)

    def _replace(self) -> None:
        """Drop a broken executor (under the lock); the next job starts a fresh one."""
        if self._executor is not None:
            _stop(self._executor)
            self._executor = None

    def shutdown(self) -> None:
        with self._lock:
            for executor in [*self._retired, *([self._executor] if self._executor else [])]:
                _stop(executor)
            self._executor, self._retired = None, []


class Drawer:
    """The live update's charts, drawn in one worker process of their own: matplotlib takes
    longer than the sizing, and in the server's process it would hold the interpreter lock
    the next user's numbers wait for. The worker gets the requirements text and returns
    HTML (nothing else crosses); its bounded cache keeps a sizing's charts, so the same text
    is drawn once. Without a worker (not started, or it died) the server draws them, in a
    thread of its own and under the same limit.

    A drawing past :data:`DRAW_TIMEOUT_S` gets the chart area's message, and its worker is
    ended (:func:`_stop`, as the documents' pool ends a retired executor's) and replaced: a
    hung drawing held the only worker, and every later page waited behind it. A drawing
    queued behind the hung one is cut off with it and runs again in the fresh worker."""

    def __init__(self) -> None:
        self._executor: ProcessPoolExecutor | None = None
        self._thread: ThreadPoolExecutor | None = None  # drawings without a worker
        self._lock = threading.Lock()

    def start(self, warm: bool = True) -> None:
        from .render import warm_charts

        with self._lock:
            if self._executor is None:
                self._executor = _draw_executor()
                if warm:
                    self._executor.submit(warm_charts)

    async def draw(self, yaml_text: str, configs: Configs = ()) -> str:
        from .render import charts_html, charts_late_html

        for attempt in range(2):  # once more where a hung drawing's replacement cut this one off
            executor = self._executor
            if executor is None:
                break
            try:
                future: Future[Any] = executor.submit(charts_html, yaml_text, configs)
            except (BrokenProcessPool, RuntimeError):  # the worker was killed, or shut down
                self._drop(executor)
                break
            try:
                return str(await asyncio.wait_for(asyncio.wrap_future(future), DRAW_TIMEOUT_S))
            except TimeoutError:
                if self._executor is not executor and attempt == 0:
                    # its time ran out waiting behind a hung drawing whose worker was just
                    # replaced (the wait includes the queue): the fresh worker draws it
                    continue
                self._replace(executor)
                return charts_late_html(DRAW_TIMEOUT_S)
            except asyncio.CancelledError:
                if self._executor is executor or not future.cancelled():
                    raise  # the request itself was cancelled (the page left)
                continue  # queued behind a drawing past its time, whose worker was replaced
            except (BrokenProcessPool, RuntimeError):
                if self._executor is not executor:
                    continue  # the same, handed to the ended worker already: run again
                self._drop(executor)  # the worker was killed
                break
        # no worker: drawn here, in a thread of its own and with the same limit (the request
        # waited as long as the drawing took; a thread cannot be ended, so a hung one is left
        # to finish while later drawings queue behind it and get the same message)
        local = asyncio.get_running_loop().run_in_executor(
            self._server_thread(), charts_html, yaml_text, configs)
        try:
            return str(await asyncio.wait_for(local, DRAW_TIMEOUT_S))
        except TimeoutError:
            return charts_late_html(DRAW_TIMEOUT_S)

    def _server_thread(self) -> ThreadPoolExecutor:
        """One thread for the drawings without a worker: a hung one holds that thread only,
        never the request threads the live numbers need."""
        with self._lock:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(1, thread_name_prefix="llmsizer-charts")
            return self._thread

    def _drop(self, executor: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is executor:
                self._executor = None

    def _replace(self, executor: ProcessPoolExecutor) -> None:
        """End a worker past its time and start a fresh one (unwarmed: the next user's
        drawing would wait behind the warm-up)."""
        with self._lock:
            if self._executor is executor:
                _stop(executor)
                self._executor = _draw_executor()

    def shutdown(self) -> None:
        with self._lock:
            if self._executor is not None:
                _stop(self._executor)
                self._executor = None
            if self._thread is not None:
                self._thread.shutdown(wait=False, cancel_futures=True)
                self._thread = None


def _draw_executor() -> ProcessPoolExecutor:
    # spawn, as the pool's: the server runs threads
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))


STOP_JOIN_S = 10.0  # bounds the wait for an ended executor's own thread to finish


def _stop(executor: ProcessPoolExecutor) -> None:
    """Stop the workers with the server: a job still running is ended, not left behind (a
    stopped server left its spawned workers running, orphaned).

    The executor is kept until its manager thread has finished: a job cancelled while it
    waited (moved by :meth:`Pool._reap`, or a drawing cut off by the limit) stays in the
    executor's table until that thread reads the shutdown. Dropped before, the executor
    was collected, the thread skipped the shutdown's clean-up (it needs the executor) and,
    seeing the workers ended, set an error on the cancelled job: Python 3.11's
    InvalidStateError killed the thread and left its queues open ("leaked semaphore")."""
    # the executor's own table of its worker processes and its thread (no public way)
    processes = list((getattr(executor, "_processes", None) or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    if manager is not None and manager is not threading.current_thread():
        manager.join(STOP_JOIN_S)
