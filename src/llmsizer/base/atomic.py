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
import stat
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

TMP_PREFIX = ".llmsizer-tmp-"

# mkstemp creates files readable by the owner only; outputs get the usual umask instead.
_UMASK = os.umask(0)
os.umask(_UMASK)


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


@contextlib.contextmanager
def account_lock(path: Path) -> Iterator[None]:
    """An exclusive lock held on ``path`` (a hidden lock file, created if missing, never
    followed if it is a symbolic link) for as long as the block runs."""
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
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def atomic_group(targets: list[Path], lock: Path | None = None,
                 publish: Callable[[], None] | None = None) -> Iterator[list[Path]]:
    """Temp paths for several files that belong together: all are renamed into place only
    after every one was written, under ``lock`` when given, then ``publish`` runs (still
    under the lock: a manifest written last). A failure, or a signal turned into an
    exception, leaves none of the temp files; a rename that fails half-way removes the
    files of the set it had already renamed, so no mixed set is left. (Temp names end in
    ``.tmp``, never in the target's own extension.)"""
    check_targets(targets)
    temps: list[_Temp] = []
    try:
        for target in targets:
            temps.append(_temp_beside(target))
        yield [t.path for t in temps]
        for temp in temps:
            _seal(temp)
        with account_lock(lock) if lock else contextlib.nullcontext():
            check_targets(targets)
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
                p.unlink()
                n += 1
    return n


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
