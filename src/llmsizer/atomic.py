"""Atomic output files: write to a temp file in the same folder, fsync, rename.

A reader (or a crash) never sees a half-written workbook, PDF or JSON. Temp files
carry a fixed prefix so a later run can clean up after an interrupted one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

TMP_PREFIX = ".llmsizer-tmp-"


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temp path beside ``target``; on success fsync it and rename it over
    ``target``; on any error remove it and re-raise."""
    tmp = target.with_name(f"{TMP_PREFIX}{os.getpid()}-{target.name}")
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def atomic_group(targets: list[Path]) -> Iterator[list[Path]]:
    """Like :func:`atomic_path` for several files that belong together: all are renamed
    into place only after every one was written, so a failure leaves none of them."""
    tmps = [t.with_name(f"{TMP_PREFIX}{os.getpid()}-{t.name}") for t in targets]
    try:
        yield tmps
        for tmp in tmps:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        for tmp, target in zip(tmps, targets, strict=True):
            os.replace(tmp, target)
    except BaseException:
        for tmp in tmps:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        raise


def write_atomic(target: Path, write: Callable[[Path], None]) -> None:
    with atomic_path(target) as tmp:
        write(tmp)


def write_text_atomic(target: Path, text: str) -> None:
    def write(p: Path) -> None:
        p.write_text(text, encoding="utf-8")

    write_atomic(target, write)


def clean_temp_files(folder: Path) -> int:
    """Remove temp files an interrupted run left behind; return how many."""
    n = 0
    for p in folder.glob(f"{TMP_PREFIX}*"):
        with contextlib.suppress(OSError):
            p.unlink()
            n += 1
    return n
