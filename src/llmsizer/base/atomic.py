"""Atomic output files: write to a temp file in the same folder, fsync, rename.

A reader (or a crash) never sees a half-written workbook, PDF or JSON.

Temp files are created exclusively (``mkstemp``: ``O_CREAT | O_EXCL``, so a file or a
symbolic link planted at the name is never opened, let alone followed) with an
unpredictable name that starts with :data:`TMP_PREFIX` and the creating process's id. Before
a temp file is renamed into place it must still be the regular file that was created (same
device and inode), so nothing else is ever published. A later run removes only the temp
files whose process is gone, never those of a run still going (concurrent batches into one
folder). An account's files are published under a per-account lock (:func:`account_lock`),
so two runs writing the same account never interleave their renames.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .textsafe import printable

TMP_PREFIX = ".llmsizer-tmp-"
# How long a run waits for another run's lock on an account before it gives up (exit 2):
# a live run holds it only while it renames three files, so a longer wait means that run
# is hung (issue 25). LLMSIZER_LOCK_WAIT overrides it (seconds).
LOCK_WAIT_S = 120.0
# After this long waiting, say what the run waits for.
LOCK_NOTICE_S = 2.0

# mkstemp creates files readable by the owner only; outputs get the usual umask instead.
_UMASK = os.umask(0)
os.umask(_UMASK)


_UNWINDING = {signal.SIGINT, signal.SIGTERM}


def _hold_signals() -> set[int | signal.Signals] | None:
    """Hold Ctrl-C and SIGTERM while a temp file is created and recorded for clean-up: their
    handlers unwind (KeyboardInterrupt, SystemExit), and one that fired in between left the
    file behind (CI: a SIGTERM right after the work folder appeared). Release inside the
    ``try`` that removes it: a held signal is handled at the next instruction."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _UNWINDING)


def _release_signals(held: set[int | signal.Signals] | None) -> None:
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@dataclass(frozen=True)
class _Temp:
    path: Path
    ident: tuple[int, int]  # (st_dev, st_ino) of the file mkstemp created


def _temp_beside(target: Path) -> _Temp:
    fd, name = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{os.getpid()}-",
                                suffix=f"-{target.name}.tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        info = os.fstat(fd)
    finally:
        os.close(fd)
    return _Temp(Path(name), (info.st_dev, info.st_ino))


def _seal(temp: _Temp) -> None:
    """fsync the temp file after checking it is still the file we created."""
    info = os.lstat(temp.path)
    if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != temp.ident:
        raise InputError(f"the temporary file {temp.path.name!r} was replaced while it was "
                         "written (another program is writing into the output folder); "
                         "nothing was published")
    fd = os.open(temp.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _discard(temps: list[_Temp]) -> None:
    for t in temps:
        with contextlib.suppress(OSError):
            t.path.unlink()


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # some file systems cannot fsync a folder
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def check_targets(targets: list[Path]) -> None:
    """Refuse, before anything is written, an output name taken by a folder (renaming a
    file over it would fail half-way through a set)."""
    for t in targets:
        try:
            info = os.lstat(t)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise InputError(f"cannot write {str(t)!r}: {exc.strerror or exc}") from None
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"cannot write {str(t)!r}: a folder of that name is in the way; "
                             "rename or remove it, or write into another folder")


def lock_wait_s() -> float:
    """The lock wait limit: LLMSIZER_LOCK_WAIT seconds if set to a number, else LOCK_WAIT_S."""
    try:
        value = float(os.environ.get("LLMSIZER_LOCK_WAIT", ""))
    except ValueError:
        return LOCK_WAIT_S
    return value if 0 <= value < 86_400 else LOCK_WAIT_S


@contextlib.contextmanager
def account_lock(path: Path) -> Iterator[None]:
    """An exclusive lock held on ``path`` (a hidden lock file, created if missing, never
    followed if it is a symbolic link) for as long as the block runs. The holder writes its
    process id into the file; a run that finds the lock taken says (after LOCK_NOTICE_S)
    whose lock it waits for and gives up after :func:`lock_wait_s` with one clean error:
    a hung run holding the lock used to make the next one wait silently for ever."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: renames are still atomic one by one
        yield
        return
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666 & ~_UMASK)
    except OSError as exc:
        raise InputError(f"cannot create the lock file {str(path)!r}: "
                         f"{exc.strerror or exc}") from None
    try:
        limit, start, told = lock_wait_s(), time.monotonic(), False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - start
                holder = _lock_holder(fd)
                if waited >= limit:
                    raise InputError(
                        f"gave up after {limit:.0f} s waiting for the lock {printable(str(path))!r}"
                        f", held by another llmsizer run{holder}: if that run is hung, stop it "
                        "and run again (LLMSIZER_LOCK_WAIT sets the wait in seconds)") from None
                if not told and waited >= LOCK_NOTICE_S:
                    told = True
                    sys.stderr.write(
                        f"waiting up to {limit:.0f} s for the lock {printable(str(path))!r}, held "
                        f"by another llmsizer run{holder} writing the same account\n")
                    sys.stderr.flush()
                time.sleep(0.1)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _lock_holder(fd: int) -> str:
    """" (process N)" from the lock file's content, or "" when it says nothing usable."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (process {text})" if text.isdigit() else ""


@contextlib.contextmanager
def atomic_group(targets: list[Path], lock: Path | None = None,
                 publish: Callable[[], None] | None = None,
                 guards: list[Path] | None = None,
                 check: Callable[[], None] | None = None) -> Iterator[list[Path]]:
    """Temp paths for several files that belong together: all are renamed into place only
    after every one was written, under ``lock`` when given, then ``publish`` runs (still
    under the lock: a manifest written last). A failure, or a signal turned into an
    exception, leaves none of the temp files; a rename that fails half-way removes the
    files of the set it had already renamed, so no mixed set is left. (Temp names end in
    ``.tmp``, never in the target's own extension.) ``guards`` are the other names
    ``publish`` writes (a manifest, a stamp): a folder in the way of one of them is refused
    before anything is renamed, so a set that cannot be completed is never published
    (issue 25, F10). ``check`` runs under the lock before the renames and may refuse."""
    check_targets([*targets, *(guards or [])])
    temps: list[_Temp] = []
    try:
        for target in targets:
            held = _hold_signals()
            try:
                temps.append(_temp_beside(target))
            finally:
                _release_signals(held)
        yield [t.path for t in temps]
        for temp in temps:
            _seal(temp)
        with account_lock(lock) if lock else contextlib.nullcontext():
            check_targets([*targets, *(guards or [])])
            if check:
                check()
            done: list[Path] = []
            try:
                for temp, target in zip(temps, targets, strict=True):
                    os.replace(temp.path, target)
                    done.append(target)
            except BaseException:
                for target in done:
                    with contextlib.suppress(OSError):
                        target.unlink()
                raise
            if publish:  # the set is whole; without its manifest a re-run redoes it
                publish()
    except BaseException:
        _discard(temps)
        raise
    if targets:
        _fsync_dir(targets[0].parent)


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """:func:`atomic_group` for one file."""
    with atomic_group([target]) as (tmp,):
        yield tmp


def write_atomic(target: Path, write: Callable[[Path], None]) -> None:
    with atomic_path(target) as tmp:
        write(tmp)


def write_text_atomic(target: Path, text: str) -> None:
    def write(p: Path) -> None:
        p.write_text(text, encoding="utf-8")

    write_atomic(target, write)


def _owner(name: str) -> int | None:
    head = name[len(TMP_PREFIX):].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def clean_temp_files(folder: Path, pids: set[int] | None = None) -> int:
    """Remove temp files an interrupted run left behind: those of ``pids`` (processes this
    run started and has reaped), else those whose process is gone. Never a live run's.
    Return how many."""
    n = 0
    for p in folder.glob(f"{TMP_PREFIX}*"):
        owner = _owner(p.name)
        if pids is not None:
            stale = owner in pids
        else:
            stale = owner is None or (owner != os.getpid() and not _alive(owner))
        if stale:
            with contextlib.suppress(OSError):
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p)
                else:
                    p.unlink()
                n += 1
    return n


@contextlib.contextmanager
def work_under(out: Path) -> Iterator[Path]:
    """Temp work of this run (xlsxwriter's parts, a re-read's reference workbook, the batch
    warm-up) in a folder under ``out`` named after this process: ``tempfile`` and forked
    workers use it while the block runs, it is removed on the way out, and after a kill -9
    the next run's :func:`clean_temp_files` removes it, since its process is gone. Before,
    such work went to $TMPDIR and a killed run left it there for ever (issue 25, F11, F22)."""
    held = _hold_signals()
    try:
        folder = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-", suffix="-work",
                                       dir=out))
    except BaseException:
        _release_signals(held)
        raise
    before = tempfile.tempdir
    try:
        tempfile.tempdir = str(folder)
        _release_signals(held)
        yield folder
    finally:
        tempfile.tempdir = before
        shutil.rmtree(folder, ignore_errors=True)


def release_quietly(exc: BaseException) -> None:
    """Free what a failed writer left open, without its noise: xlsxwriter leaves its zip file
    open when the disk is full, and the zip file's finaliser retries the write and prints a
    traceback ("Exception ignored in ZipFile.__del__") whenever it is collected."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _: None
    try:
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)
        for link in (exc.__context__, exc.__cause__):
            if link is not None and link.__traceback__ is not None:
                traceback.clear_frames(link.__traceback__)
        gc.collect()
    finally:
        sys.unraisablehook = hook
