"""A batch's accounts sized on a Dask ``distributed`` cluster (``report --scheduler``).

The workers need no shared file system. The client reads each account's requirements file
and every file it names (as the loader would: :func:`~llmsizer.runs.stamps.snapshot`),
and sends the bytes with the task; custom ``--templates`` are sent once to every worker.
A worker writes them into a temp folder of its own, sizes and renders there with the same
code as a local batch, and returns the outcome and the three files' bytes. The client
publishes each set into ``--out`` exactly as a local worker would (atomically, under the
account's lock, with its manifest and a resume stamp computed from the bytes it sent), so
the outputs are the local pool's, timestamps aside (tests/test_cluster.py).

A worker lost mid-task: the scheduler gives its accounts to another worker (Dask retries a
task whose worker died; after ``distributed.scheduler.allowed-failures`` deaths the account
is an error, the rest go on). The client writes an account once, when its result arrives,
so none is lost or written twice. Before any task runs, every worker must report the
client's llmsizer version and catalog digest: a cluster with other code or other prices
would produce proposals that disagree with the client's stamps.

Dask is an optional extra (``pip install 'llmsizer[cluster]'``); without ``--scheduler``
nothing here is imported and the batch runs on the local process pool.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..base.atomic import TMP_PREFIX, clean_temp_files
from ..base.errors import InputError
from ..base.textsafe import printable
from ..base.version import __version__
from .outcome import Outcome
from .stamps import _stamp_path, fingerprint_of, snapshot

# Seconds the client tries to reach the scheduler: an unreachable one is one line and exit
# 2 well within 15 s (issue 25).
CONNECT_TIMEOUT_S = 5
# Seconds to wait for a first worker to join a scheduler that has none.
WORKER_WAIT_S = 30
# Custom templates travel with the tasks: bounded like any other input.
MAX_TEMPLATE_BYTES = 20 * 2**20


def identity() -> tuple[str, str]:
    """This process's llmsizer version and catalog digest (run on every worker)."""
    from ..model.catalog import load_catalog

    return __version__, load_catalog().digest


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask logs each failed connection attempt and each lost worker to stderr; the batch
    states what matters in its own one-line messages."""
    roots = ("distributed", "tornado", "asyncio")
    # distributed's config gives some children (distributed.client) a level and a handler of
    # their own, so quieting the parents alone let the lost scheduler's traceback through
    loggers = [logging.getLogger(n) for n in roots] + [
        lg for n, lg in list(logging.root.manager.loggerDict.items())
        if n.startswith(tuple(r + "." for r in roots)) and isinstance(lg, logging.Logger)]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


# A scheduler's address as Dask reads it: an optional protocol, a host (an IPv6 one in
# brackets) and the port. One without a port ('nonsense', 'tcp://host') made Dask's client
# fail half-built, and its clean-up printed a traceback 10 s after the error (review round 21).
_ADDRESS = re.compile(r"(?:[a-z]+://)?(?:\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]@]+):\d{1,5}")


def check_address(address: str) -> None:
    """One clean error for a scheduler address Dask cannot read, before anything is written
    or imported (:func:`connect` checks it again)."""
    if not _ADDRESS.fullmatch(address.strip()):
        raise InputError(f"--scheduler: {printable(address)!r} is not a scheduler address; "
                         "write tcp://HOST:PORT (the port the Dask scheduler listens on, 8786 "
                         "unless it was started with another), or leave --scheduler and "
                         "LLMSIZER_SCHEDULER out to size on this machine")


def connect(address: str) -> Any:
    """A Dask client for the scheduler at ``address``, or one clean error."""
    check_address(address)
    shown = printable(address)
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--scheduler needs Dask's distributed package: pip install "
                         "'llmsizer[cluster]', or leave --scheduler out to size on this "
                         "machine") from None
    try:
        with _quiet_dask():
            return Client(address.strip(), timeout=CONNECT_TIMEOUT_S,  # type: ignore[no-untyped-call]
                          set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        why = printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)[:200]
        raise InputError(f"cannot reach the Dask scheduler at {shown!r} within "
                         f"{CONNECT_TIMEOUT_S} s ({why}); check the address (tcp://HOST:PORT) "
                         "and that the scheduler runs, or leave --scheduler and "
                         "LLMSIZER_SCHEDULER out to size on this machine") from None


def check_workers(client: Any) -> None:
    """Refuse a cluster whose workers run another llmsizer version or catalog."""
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except (TimeoutError, OSError):
        raise InputError(f"the Dask scheduler has no worker (waited {WORKER_WAIT_S} s); start "
                         "workers with `dask worker SCHEDULER` on machines where llmsizer is "
                         "installed") from None
    mine = identity()
    theirs: dict[str, tuple[str, str]] = client.run(identity)
    odd = {w: v for w, v in theirs.items() if tuple(v) != mine}
    if odd:
        worker, (version, digest) = sorted(odd.items())[0]
        raise InputError(
            f"{len(odd)} of {len(theirs)} Dask workers run other llmsizer code or data "
            f"(worker {printable(worker)}: llmsizer {version}, catalog {digest[:12]}; this "
            f"machine: llmsizer {mine[0]}, catalog {mine[1][:12]}); install the same "
            "llmsizer release on every worker, then run again")


def template_bytes(templates: Path | None) -> dict[str, bytes] | None:
    """A custom templates folder as {relative path: bytes}, to be rebuilt on each worker."""
    if templates is None:
        return None
    files: dict[str, bytes] = {}
    total = 0
    root = templates.resolve()
    for p in sorted(root.rglob("*")):
        if not p.is_file() or "__pycache__" in p.parts or not p.resolve().is_relative_to(root):
            continue  # a link out of the folder is not sent (the renderer would refuse it)
        data = p.read_bytes()
        total += len(data)
        if total > MAX_TEMPLATE_BYTES:
            raise InputError(f"--templates {printable(str(templates))!r}: over "
                             f"{MAX_TEMPLATE_BYTES // 2**20} MB, too much to send to the "
                             "cluster's workers; remove what the templates do not use")
        files[p.relative_to(root).as_posix()] = data
    return files


def _place(root: Path, rel: str, data: bytes) -> None:
    """Write ``data`` at ``root/rel``, never outside ``root``."""
    target = (root / rel).resolve()
    if not target.is_relative_to(root.resolve()):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def size_remote(task: dict[str, Any], templates: dict[str, bytes] | None) -> dict[str, Any]:
    """On a worker: one account sized from the bytes in ``task``; its outcome and files."""
    from .account import size_account
    from .report import write_outputs

    if identity() != tuple(task["identity"]):  # a worker that joined after the check
        o = Outcome(file=task["shown"], stem=task["stem"], status="error",
                    message=f"the cluster worker runs llmsizer/catalog {identity()[0]} other "
                            "than this machine's; install the same release on every worker")
        return {"outcome": asdict(o), "files": {}}
    work = Path(tempfile.gettempdir())
    clean_temp_files(work)  # what a killed worker left (only dead processes' folders)
    with tempfile.TemporaryDirectory(prefix=f"{TMP_PREFIX}{os.getpid()}-", dir=work) as tmp:
        root = Path(tmp)
        src = root / "in"
        src.mkdir()
        path = src / task["name"]
        path.write_bytes(task["own"])
        for rel, data in task["refs"]:
            if data is not None:
                _place(src, rel, data)
        tpl: Path | None = None
        if templates is not None:
            tpl = root / "templates"
            for rel, data in templates.items():
                _place(tpl, rel, data)
        out = root / "out"
        out.mkdir()
        files: dict[str, bytes] = {}

        def write(result: Any, stamp: str | None) -> list[str]:
            written = write_outputs(result, out, stem=task["stem"], templates=tpl,
                                    appendix=task["appendix"])
            files.update({p.name: p.read_bytes() for p in written})
            return [p.name for p in written]

        o = size_account(path, task["stem"], lambda: task["stamp"], write, shown=task["shown"])
        # messages name the file as the client gave it, not the worker's copy
        o.message, *o.warnings = (
            m.replace(str(path), task["shown"]).replace(str(src), task["shown_dir"])
            for m in (o.message, *o.warnings))
    return {"outcome": asdict(o), "files": files}


def _publish(res: dict[str, Any], out: Path, stamp: str) -> Outcome:
    """Write a worker's files into ``out`` as one set, with the stamp; the outcome."""
    from .report import FORMATS, publish_set

    o = Outcome(**res["outcome"])
    files: dict[str, bytes] = res["files"]
    if o.status != "ok":
        return o
    stamp_path = _stamp_path(out, o.stem)

    def render(fmt: str, tmp: Path) -> None:
        tmp.write_bytes(files[f"{o.stem}.{fmt}"])

    def also() -> None:
        from ..base.atomic import write_text_atomic

        write_text_atomic(stamp_path, stamp)

    try:
        written = publish_set(out, o.stem, o.account, list(FORMATS), render, also, [stamp_path])
    except InputError as exc:
        o.status, o.message, o.outputs = "invalid input", str(exc), []
        return o
    o.outputs = [p.name for p in written]
    return o


def run_on_cluster(address: str, items: list[tuple[int, Path, str]], out: Path,
                   templates: Path | None, appendix: bool,
                   finish: Callable[[int, Outcome], None]) -> None:
    """Size ``items`` (index, file, stem) on the cluster at ``address``; ``finish`` gets
    each account's outcome as its files are published in ``out``."""
    client = connect(address)
    try:
        with _quiet_dask():
            _run(client, items, out, templates, appendix, finish, printable(address))
    finally:
        with contextlib.suppress(Exception), _quiet_dask():
            client.close(timeout=5)


def _lost(exc: Exception, shown: str, connected: bool) -> str:
    """Why the cluster gave no result for an account, in words."""
    name = type(exc).__name__
    if name == "KilledWorker":
        return ("the cluster lost the worker sizing this account several times (out of "
                "memory or a crash); other accounts continue")
    # the futures cancelled when the client lost it, or a result fetch cut (CommClosedError)
    # (not any OSError: one raised on a worker, a full disk say, comes back as itself)
    if (getattr(exc, "reason", None) == "scheduler-connection-lost" or not connected
            or name == "CommClosedError"):
        return (f"the connection to the Dask scheduler {shown} was lost before this account "
                "was sized (the scheduler stopped or the network failed); run the batch "
                "again: the accounts already written are skipped")
    return f"{name}: {printable(str(exc))[:300]}"


def _run(client: Any, items: list[tuple[int, Path, str]], out: Path, templates: Path | None,
         appendix: bool, finish: Callable[[int, Outcome], None], shown: str = "") -> None:
    from distributed import as_completed

    check_workers(client)
    tpl = template_bytes(templates)
    shared = client.scatter(tpl, broadcast=True) if tpl is not None else None
    me = identity()
    pending: dict[Any, tuple[int, Path, str, str]] = {}
    for i, path, stem in items:
        own, refs = snapshot(path)
        stamp = fingerprint_of(own, refs, templates, appendix)
        if own is None:  # unreadable here: the local path reports it the same way
            from .account import process

            finish(i, process(path, out, stem, templates, appendix))
            continue
        task = {"name": path.name, "own": own, "refs": refs, "stem": stem, "stamp": stamp,
                "appendix": appendix, "shown": str(path), "shown_dir": str(path.parent),
                "identity": me}
        fut = client.submit(size_remote, task, shared, pure=False,
                            key=f"llmsizer-{i}-{stem}-{os.getpid()}-{id(task):x}")
        pending[fut] = (i, path, stem, stamp)
    for fut in as_completed(list(pending), loop=client.loop):  # type: ignore[no-untyped-call]
        i, path, stem, stamp = pending.pop(fut)
        try:
            res = fut.result()
        except Exception as exc:  # a worker died too often, the scheduler went, a bug
            finish(i, Outcome(file=str(path), stem=stem, status="error",
                              message=_lost(exc, shown, client.status == "running")))
            continue
        finally:
            fut.release()
        finish(i, _publish(res, out, stamp))
