"""Batch reports: a folder of accounts in, a folder of workbooks, proposals and JSON out.

Each account runs in a worker process that imports the heavy libraries once. The parent
hands one account at a time to each worker over its own pipe, so when a worker dies
(crash, out of memory) the parent knows exactly which account it lost, records it as an
error and starts a replacement; the rest continue. Outputs are written atomically; a
stamp per account (input, catalog, llmsizer version) lets a re-run skip what is done.

Workers die with the batch: each asks the kernel for SIGTERM when its parent dies
(``prctl(PR_SET_PDEATHSIG)`` on Linux; elsewhere a thread watches the parent's id), and
SIGTERM makes a worker remove its temp files and exit. Several batches may write into one
folder at once: temp files are unique per process, only dead processes' temp files are
swept, and each account's set is published under its lock (:mod:`llmsizer.runs.report`).
"""

from __future__ import annotations

import contextlib
import errno
import gc
import json
import multiprocessing as mp
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from ..base import heap
from ..base.atomic import (
    clean_temp_files,
    release_quietly,
    work_under,
    write_atomic,
    write_text_atomic,
)
from ..base.errors import InputError
from ..base.textsafe import printable
from ..base.version import __version__
from ..sizing.results import slugify
from .account import process as process
from .outcome import Outcome, account_recommendations
from .stamps import (  # the batch's resume stamps (names re-exported as before)
    OUTPUT_SUFFIXES,
    is_fresh,
)
from .stamps import _reference_bytes as _reference_bytes
from .stamps import _referenced_files as _referenced_files
from .stamps import fingerprint as fingerprint
from .stamps import fingerprint_of as fingerprint_of
from .stamps import snapshot as snapshot

# Workers never collect garbage (llmsizer.base.heap): one account leaves ~20 MB of it, and
# collecting it costs more CPU than starting a fresh worker, forked from the warm parent,
# once a worker's memory has grown by RETIRE_GROWTH_MB since it started (measured:
# docs/benchmarks.md). A worker is also replaced after ACCOUNTS_PER_WORKER accounts.
ACCOUNTS_PER_WORKER = 20
RETIRE_GROWTH_MB = 100.0


def _rss_mb() -> float:
    """This process's resident memory (Linux; 0 where /proc is missing)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
BATCH_SCHEMA_VERSION = 1


YAML_SUFFIXES = (".yaml", ".yml")


def _confined(entry: Path, root: Path) -> str | None:
    """Why a folder entry is refused unread, or None. A link is resolved and must stay
    inside the folder, as config.json and benchmark links must: a link to /etc/passwd or a
    token file would otherwise be read, and its first characters echoed in a parse error
    and in batch.json (issue 25, F5). A link loop is reported for its entry alone: resolving
    it raised and stopped the whole batch (F4)."""
    if not entry.is_symlink():
        return None
    shown = printable(str(entry))
    try:
        target = entry.resolve(strict=True)
    except (RuntimeError, OSError) as exc:
        if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP:
            return (f"{shown}: this link is a loop (it points back at itself through links); "
                    "remove it, or point it at a requirements file")
        return f"{shown}: this link points at nothing; remove it or point it at a file"
    if not target.is_relative_to(root):
        return (f"{shown}: this link points outside the folder {printable(str(entry.parent))!r}"
                " and is not read; copy the requirements file into the folder instead")
    return None


def scan(paths: list[Path]) -> tuple[list[Path], dict[Path, str]]:
    """Files as given, folders expanded to their .yaml / .yml files (any case: UP.YAML too),
    sorted; and, for folder entries refused unread (links out of the folder, loops), why."""
    files: list[Path] = []
    refused: dict[Path, str] = {}
    for p in paths:
        if p.is_dir():
            root = p.resolve()
            entries = sorted(e for e in p.iterdir() if e.suffix.lower() in YAML_SUFFIXES)
            for e in entries:
                why = _confined(e, root)
                if why is not None:
                    refused[e] = why
            files += entries
        else:
            files.append(p)
    seen: set[Path] = set()
    unique = []
    for f in files:
        try:
            key = f.absolute() if f in refused else f.resolve()
        except (RuntimeError, OSError):  # a link loop given by name
            key = f.absolute()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique, refused


def collect(paths: list[Path]) -> list[Path]:
    """Files as given; folders expand to their .yaml / .yml files, sorted (see :func:`scan`)."""
    return scan(paths)[0]


def _account_name(path: Path) -> str:
    """The account name if the file is readable enough, else the file stem (never raises)."""
    try:
        from ..inputs.yamlsafe import load_file

        data = load_file(path).data
        name = data.get("account", {}).get("name") if isinstance(data, dict) else None
        return name if isinstance(name, str) and name.strip() else path.stem
    except Exception:
        return path.stem


def stems(files: list[Path], unread: frozenset[Path] = frozenset(),
          out_dir: Path | None = None) -> list[str]:
    """Safe, distinct output stems: the account's slug; accounts sharing a slug get the
    input file's name appended (and a counter if that is not enough). Files in ``unread``
    (refused links) are named by their file name, never opened. A stem under which
    ``out_dir`` holds another account's files (its manifest says whose) is not reused
    (:func:`~llmsizer.runs.report.free_stem`, issue 25 F7)."""
    from .report import free_stem, output_stem

    names = [f.stem if f in unread else _account_name(f) for f in files]
    base = [output_stem(slugify(n)) for n in names]
    out: list[str] = []
    used: set[str] = set()
    for f, b, name in zip(files, base, names, strict=True):
        stem = b if base.count(b) == 1 else f"{b}--{slugify(f.stem, 30)}"
        n, candidate = 2, stem
        while candidate in used:
            candidate, n = f"{stem}-{n}", n + 1
        if out_dir is not None and f not in unread:
            candidate = free_stem(out_dir, candidate, name.strip(), used)
        used.add(candidate)
        out.append(candidate)
    return out


# --- worker processes ----------------------------------------------------------------------


# A small account the parent writes (and throws away) before forking its workers, so that
# each worker starts with fonts, stylesheet, templates and matplotlib caches warm: a cold
# worker's first account took ~0.3 s longer, and workers are replaced every
# ACCOUNTS_PER_WORKER accounts.
_WARM_UP_ACCOUNT = """\
schema_version: 1
account: {name: llmsizer warm-up, currency: USD}
workloads:
  - {name: warm-up, model: llama-3.1-8b, concurrent_users: 10, prompt_tokens: 500,
     output_tokens: 200, targets: {tokens_per_s_per_user: 20}}
hardware: {gpus: [l40s], weight_precisions: [fp8], kv_precisions: [fp8]}
"""


def _warm_up(templates: Path | None) -> None:
    """In the parent, before forking: import the heavy libraries and write one throw-away
    account's outputs (any failure only means colder workers); then freeze the warm heap
    so no worker's garbage collection ever scans it. Its folder is made under the run's
    work folder (:func:`~llmsizer.base.atomic.work_under`): a kill -9 here used to leave
    it in /tmp for ever (F22)."""
    import tempfile

    with contextlib.suppress(Exception), tempfile.TemporaryDirectory() as tmp:
        from ..inputs.loader import load
        from ..sizing.engine import size
        from .report import write_outputs

        source = Path(tmp) / "warm-up.yaml"
        source.write_text(_WARM_UP_ACCOUNT, encoding="utf-8")
        write_outputs(size(load(source)), Path(tmp), templates=templates)
    gc.collect()
    gc.freeze()


def _on_sigterm(signum: int, frame: object) -> None:
    """In a worker: unwind (the temp files of the set being written are removed on the way
    out), and if that does not end the process within 5 s, SIGALRM's default action does."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.alarm(5)
    raise SystemExit(128 + signum)


def _die_with_parent(parent: int) -> None:
    """SIGTERM this worker when the batch's process dies, even by SIGKILL."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1  # <linux/prctl.h>
        if libc.prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):  # not Linux: a thread watches the parent's id

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, daemon=True, name="llmsizer-parent-watch").start()
    if os.getppid() != parent:  # it died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def _worker(conn: Connection, out: Path, templates: Path | None, parent: int,
            appendix: bool) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    signal.signal(signal.SIGTERM, _on_sigterm)
    _die_with_parent(parent)
    heap.settle()
    start_mb = _rss_mb()
    conn.send(("ready", None))
    while True:
        try:
            item = conn.recv()
        except EOFError:
            return
        if item is None:
            return
        index, path, stem = item
        outcome = process(Path(path), out, stem, templates, appendix)
        conn.send(("done", (index, asdict(outcome), _rss_mb() - start_mb)))


@dataclass
class _Slot:
    proc: Any
    conn: Connection
    task: int | None = None
    served: int = 0


def run_batch(files: list[Path], out: Path, *, jobs: int, force: bool, templates: Path | None,
              on_done: Callable[[Outcome, int, int], None] | None = None,
              refused: dict[Path, str] | None = None, appendix: bool = False,
              scheduler: str | None = None) -> list[Outcome]:
    """Process every file; return one Outcome per file, in input order. Files in
    ``refused`` (from :func:`scan`) are never read: each is an invalid input with its reason.
    With ``scheduler`` (a Dask scheduler's address), the accounts are sized on that cluster
    (:mod:`llmsizer.runs.cluster`) instead of local worker processes."""
    if scheduler:  # an address Dask cannot read is refused before the output folder is made
        from .cluster import check_address

        check_address(scheduler)
    out.mkdir(parents=True, exist_ok=True)
    clean_temp_files(out)  # only those of runs that are gone: other batches may be writing
    with work_under(out):
        return _run_batch(files, out, jobs, force, templates, on_done, refused or {}, appendix,
                          scheduler)


def _run_batch(files: list[Path], out: Path, jobs: int, force: bool, templates: Path | None,
               on_done: Callable[[Outcome, int, int], None] | None, refused: dict[Path, str],
               appendix: bool, scheduler: str | None) -> list[Outcome]:
    names = stems(files, frozenset(refused), out)
    outcomes = [Outcome(file=str(f), stem=s) for f, s in zip(files, names, strict=True)]
    todo: list[int] = []
    done = 0
    for i, (f, stem) in enumerate(zip(files, names, strict=True)):
        if f in refused:
            outcomes[i].status, outcomes[i].message = "invalid input", refused[f]
            done += 1
            if on_done:
                on_done(outcomes[i], done, len(files))
        elif not force and is_fresh(f, out, stem, templates, appendix):
            outcomes[i].status = "skipped"
            outcomes[i].message = "unchanged since its outputs were written"
            _fill_from_json(outcomes[i], out)
            outcomes[i].warnings = _warnings_of(f)
            done += 1
            if on_done:
                on_done(outcomes[i], done, len(files))
        else:
            todo.append(i)
    if scheduler and todo:
        from .cluster import run_on_cluster

        def finish(i: int, o: Outcome) -> None:
            nonlocal done
            outcomes[i], done = o, done + 1
            if on_done:
                on_done(o, done, len(files))

        run_on_cluster(scheduler, [(i, files[i], names[i]) for i in todo], out, templates,
                       appendix, finish)
        return outcomes
    ctx = mp.get_context("fork")
    slots: list[_Slot] = []
    pids: set[int] = set()
    if todo:
        _warm_up(templates)  # once, in the parent: every forked worker inherits it

    def start() -> _Slot:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, out, templates, os.getpid(), appendix),
                           daemon=True)
        proc.start()
        child.close()
        if proc.pid is not None:
            pids.add(proc.pid)
        slot = _Slot(proc, parent)
        slots.append(slot)
        return slot

    def assign(slot: _Slot) -> None:
        if todo:
            i = todo.pop(0)
            slot.task = i
            slot.conn.send((i, str(files[i]), names[i]))
        else:
            slot.task = None

    try:
        for _ in range(max(1, min(jobs, len(todo)))):
            start()
        busy = True
        while busy:
            ready = wait([s.conn for s in slots] + [s.proc.sentinel for s in slots])
            for slot in list(slots):
                if slot.conn in ready:
                    try:
                        kind, payload = slot.conn.recv()
                    except (EOFError, OSError):
                        kind, payload = "dead", None
                    if kind == "done":
                        i, data, grown_mb = payload
                        outcomes[i] = Outcome(**data)
                        done += 1
                        slot.served += 1
                        if on_done:
                            on_done(outcomes[i], done, len(files))
                        if (slot.served >= ACCOUNTS_PER_WORKER
                                or grown_mb >= RETIRE_GROWTH_MB) and todo:
                            slot.task = None
                            _retire(slot)
                            slots.remove(slot)
                            start()  # gets work when it reports ready
                            continue
                    if kind in ("ready", "done"):
                        assign(slot)
                        continue
                if not slot.proc.is_alive() or (slot.conn in ready and kind == "dead"):
                    slot.proc.join(timeout=1)
                    slots.remove(slot)
                    if slot.task is not None:
                        i = slot.task
                        outcomes[i].status = "error"
                        outcomes[i].message = (
                            f"worker process died (exit code {slot.proc.exitcode}) while sizing "
                            "this account: out of memory or a crash; other accounts continue")
                        done += 1
                        if on_done:
                            on_done(outcomes[i], done, len(files))
                    if todo:
                        start()
            busy = any(s.task is not None for s in slots) or bool(todo)
            if not slots and todo:
                start()
        for sl in slots:
            with contextlib.suppress(OSError):
                sl.conn.send(None)
        for sl in slots:
            sl.proc.join(timeout=10)
    finally:
        for sl in slots:
            if sl.proc.is_alive():
                sl.proc.terminate()  # SIGTERM: the worker removes its temp files
        for sl in slots:
            sl.proc.join(timeout=10)
            if sl.proc.is_alive():
                sl.proc.kill()
                sl.proc.join(timeout=5)
        clean_temp_files(out, pids)  # what a killed or crashed worker left
    return outcomes


def _retire(slot: _Slot) -> None:
    """Let an idle worker exit (it has no task) and reap it."""
    with contextlib.suppress(OSError):
        slot.conn.send(None)
    slot.proc.join(timeout=10)
    if slot.proc.is_alive():
        slot.proc.terminate()
        slot.proc.join(timeout=5)


def _fill_from_json(o: Outcome, out: Path) -> None:
    """A skipped account keeps its row in the summary: read its existing results JSON."""
    with contextlib.suppress(Exception):
        doc = json.loads((out / f"{o.stem}.json").read_text())
        o.account = doc["account"]["name"]
        o.currency = doc["account"]["currency"]
        t = doc["totals"]
        o.gpus, o.nodes, o.capex = t["gpus_purchased"], t["nodes"], t["capex"]
        o.cloud_gpus_rented = (t.get("cloud_gpus_rented", 0)
                               if doc.get("deployment", {}).get("recommended") == "cloud" else 0)
        o.annual_cost_onprem, o.annual_cost_cloud = t["annual_cost_onprem"], t["annual_cost_cloud"]
        o.cost_per_million_tokens_onprem = t.get("cost_per_million_tokens_onprem", 0.0)
        o.cost_per_million_tokens_cloud = t.get("cost_per_million_tokens_cloud", 0.0)
        o.recommendations = account_recommendations(doc)
        o.outputs = [f"{o.stem}{s}" for s in OUTPUT_SUFFIXES]


def _warnings_of(path: Path) -> list[str]:
    """A skipped account's input warnings, read again (loading checks, it does not size): an
    unchanged file still holds the doubtful target it held when its outputs were written."""
    from ..inputs.loader import load

    try:
        return list(load(path).warnings)
    except Exception:  # changed into something unreadable since: its next run says why
        return []


def batch_json(outcomes: list[Outcome]) -> str:
    doc = {
        "schema_version": BATCH_SCHEMA_VERSION,
        "llmsizer_version": __version__,
        "accounts": [asdict(o) for o in outcomes],
        "counts": {s: sum(o.status == s for o in outcomes)
                   for s in ("ok", "skipped", "invalid input", "infeasible", "error")},
    }
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


SUMMARY_NAME = "summary.xlsx"
BATCH_NAME = "batch.json"


def write_batch_files(outcomes: list[Outcome], out: Path) -> str:
    """Write summary.xlsx and batch.json (each atomically); return batch.json's text. A
    failure (a full disk) is one clean error: the accounts' own files are already in place."""
    from xlsxwriter.exceptions import XlsxFileError

    from .summary import write_summary

    doc = batch_json(outcomes)
    try:
        write_atomic(out.joinpath(SUMMARY_NAME), lambda p: write_summary(outcomes, p))
        write_text_atomic(out.joinpath(BATCH_NAME), doc)
    except (OSError, XlsxFileError) as exc:
        cause = exc.args[0] if isinstance(exc, XlsxFileError) and exc.args else exc
        why = getattr(cause, "strerror", None) or str(cause)
        release_quietly(exc)
        raise InputError(f"cannot write the batch summary into {str(out)!r}: {why}; the "
                         "accounts' own files are in place: free some space and run again") from None
    return doc


class Terminated(KeyboardInterrupt):
    """SIGTERM during a batch: it unwinds as Ctrl-C does, and exits 143 (128 + 15), not 130."""


@contextlib.contextmanager
def terminate_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt (:class:`Terminated`) so the batch stops the same
    clean way as on Ctrl-C."""

    def handler(signum: int, frame: object) -> None:
        raise Terminated

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
