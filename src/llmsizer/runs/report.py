"""One account in, its outputs out: ``<slug>.json``, ``<slug>.xlsx``, ``<slug>.pdf``.

The three files are published as a set: rendered into temp files, then, under the
account's lock (``.<slug>.lock``), renamed into place and described by a manifest
(``.<slug>.manifest.json``: each file's size and sha256) written last. Two runs writing
the same account at once each publish a whole set, one after the other; a reader that
finds the manifest agreeing with the files has one run's set.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from ..base.atomic import (
    atomic_group,
    clean_temp_files,
    release_quietly,
    work_under,
    write_text_atomic,
)
from ..base.errors import InfeasibleError, InputError
from ..base.version import __version__
from ..inputs.loader import Loaded
from ..sizing.engine import size
from ..sizing.results import Result

FORMATS = ("json", "xlsx", "pdf")
# A batch writes summary.xlsx and batch.json beside the accounts' files: an account whose
# name slugs to one of these gets "--account" appended (slugs never hold "--").
RESERVED_STEMS = frozenset({"summary", "batch"})


def output_stem(slug: str) -> str:
    """An account's file stem: its slug, unless the batch's own files use that name."""
    return f"{slug}--account" if slug in RESERVED_STEMS else slug


def lock_path(out: Path, stem: str) -> Path:
    return out / f".{stem}.lock"


def manifest_path(out: Path, stem: str) -> Path:
    return out / f".{stem}.manifest.json"


def _digest(path: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            size += len(chunk)
            h.update(chunk)
    return size, h.hexdigest()


def _write_manifest(out: Path, stem: str, targets: list[Path], account: str | None) -> None:
    files = []
    for t in targets:
        size, sha = _digest(t)
        files.append({"name": t.name, "bytes": size, "sha256": sha})
    doc = {"llmsizer_version": __version__, "stem": stem, "account": account, "files": files}
    write_text_atomic(manifest_path(out, stem), json.dumps(doc, indent=2) + "\n")


def stem_owner(out: Path, stem: str) -> str | None:
    """The account whose files the stem's manifest describes; None when there is no
    manifest, or one written before manifests named their account."""
    try:
        doc = json.loads(manifest_path(out, stem).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    owner = doc.get("account") if isinstance(doc, dict) else None
    return owner if isinstance(owner, str) else None


def free_stem(out: Path, stem: str, account: str, taken: set[str] | frozenset[str] = frozenset()
              ) -> str:
    """``stem``, unless ``out`` holds another account's files under it: then ``stem-2``,
    ``stem-3`` … (the first that is free or already this account's). "Acme Corp" and
    "ACME CORP", two CJK names, or names that differ after character 60 slug alike, and a
    second run used to replace the first customer's files silently (issue 25, F7)."""
    n, candidate = 2, stem
    while candidate in taken or stem_owner(out, candidate) not in (None, account):
        candidate, n = f"{stem}-{n}", n + 1
    return candidate


def complete_set(out: Path, stem: str, names: list[str]) -> bool:
    """True when the manifest lists exactly ``names`` and every file agrees with it (one
    run's whole set, as published)."""
    try:
        doc = json.loads(manifest_path(out, stem).read_text(encoding="utf-8"))
        files = {f["name"]: (f["bytes"], f["sha256"]) for f in doc["files"]}
        if sorted(files) != sorted(names):
            return False
        return all(_digest(out / n) == files[n] for n in names)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def prepare_out_dir(out: Path) -> list[Path]:
    """Make the output folder (and its missing parents); the folders it made, outermost
    first, for :func:`remove_made` when the run fails before writing anything."""
    try:  # exists() raises, not answers False, for a name too long (ENAMETOOLONG)
        if out.exists() and not out.is_dir():
            raise InputError(f"output folder {str(out)!r} exists and is not a folder")
        made = [p for p in (*reversed(out.absolute().parents), out.absolute())
                if not p.exists()]
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output folder {str(out)!r}: "
                         f"{_why_not_made(exc)}") from None
    clean_temp_files(out)  # those of runs that are gone (a killed run's)
    return made


def _why_not_made(exc: OSError) -> str:
    """The system's reason in a user's words, with what to do (the CLI review, session 24)."""
    words = {
        errno.EACCES: "no permission to write there; choose a folder you can write to",
        errno.EPERM: "no permission to write there; choose a folder you can write to",
        errno.EROFS: "the disk there is read-only; choose a folder on a writable disk",
        errno.ENOSPC: "the disk is full; free some space or choose another disk",
        errno.ENAMETOOLONG: "the name is too long; choose a shorter path",
        errno.ENOTDIR: "part of the path is a file, not a folder; check the path",
        errno.ENOENT: "a folder on the path cannot be made there; check the path",
    }
    return words.get(exc.errno or 0, exc.strerror or "the system refused it")


def remove_made(made: list[Path]) -> None:
    """Remove the folders :func:`prepare_out_dir` made, innermost first, each only while
    empty: a batch that could not start (an unreachable Dask scheduler) left an empty
    output folder behind (review round 22)."""
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:  # not empty (something was written), or gone
            return


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While a set is written by a plain `report`: SIGTERM unwinds (the temp files are
    removed on the way out, exit 143) instead of killing the process on the spot. A
    handler someone else installed (a batch's) is left alone."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return

    def unwind(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, unwind)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def write_outputs(result: Result, out: Path, stem: str | None = None,
                  templates: Path | None = None,
                  formats: tuple[str, ...] = FORMATS,
                  also: Callable[[], None] | None = None,
                  also_writes: list[Path] | None = None,
                  appendix: bool = False) -> list[Path]:
    """Write the chosen outputs as one set (all or none; module docstring); ``also`` runs
    under the account's lock after the manifest (a batch's stamp, at ``also_writes``).
    Without ``stem``, the account's own stem, or a free one if another account's files hold
    it (:func:`free_stem`). Return their paths."""
    account = result.account.name
    stem = stem or free_stem(out, output_stem(result.account.slug), account)
    chosen = [f for f in FORMATS if f in formats]

    def render(fmt: str, tmp: Path) -> None:
        if fmt == "json":
            tmp.write_text(result.to_json(), encoding="utf-8")
        elif fmt == "xlsx":
            from ..documents.workbook import write_workbook

            write_workbook(result, tmp)
        else:
            from ..documents.proposal import render_pdf

            render_pdf(result, tmp, templates=templates, appendix=appendix)

    return publish_set(out, stem, account, chosen, render, also, also_writes)


def publish_set(out: Path, stem: str, account: str, chosen: list[str],
                render: Callable[[str, Path], None], also: Callable[[], None] | None = None,
                also_writes: list[Path] | None = None) -> list[Path]:
    """Render each format into its temp file, then publish the set under the account's lock
    with its manifest (module docstring). The manifest, lock and ``also_writes`` are checked
    first: a folder in the way of any of them refuses the whole set, unpublished (F10). A
    stem whose manifest names another account is refused under the lock (F7: a second run
    racing the first for a free stem)."""
    targets = [out / f"{stem}.{f}" for f in chosen]

    def check() -> None:
        owner = stem_owner(out, stem)
        if owner not in (None, account):
            raise InputError(f"{str(out)!r} already holds the files of the account "
                             f"{owner!r} under the name {stem!r}; nothing was written: run "
                             "again (another name is then chosen) or write into another folder")

    def publish() -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(manifest_path(out, stem))
        _write_manifest(out, stem, targets, account)
        if also:
            also()

    from xlsxwriter.exceptions import XlsxFileError

    guards = [manifest_path(out, stem), lock_path(out, stem), *(also_writes or [])]
    try:
        with _sigterm_unwinds(), atomic_group(targets, lock=lock_path(out, stem),
                                              publish=publish, guards=guards,
                                              check=check) as tmps:
            for fmt, tmp in zip(chosen, tmps, strict=True):
                render(fmt, tmp)
    except (OSError, XlsxFileError) as exc:
        cause = exc.args[0] if isinstance(exc, XlsxFileError) and exc.args else exc
        why = getattr(cause, "strerror", None) or str(cause)
        release_quietly(exc)
        raise InputError(f"cannot write to {str(out)!r}: {why}") from None
    return targets


def check_feasible(result: Result) -> None:
    """Refuse to write a proposal for an account with a workload nothing can serve."""
    # an embed or rerank workload too: a proposal without it would read as if it were served
    bad = [f"{w.name}: {w.advice}" for w in result.workloads if w.recommended is None]
    bad += [f"{w.name}: {w.advice}" for w in result.retrieval if w.recommended is None]
    if bad:
        raise InfeasibleError("; ".join(bad))


def report(loaded: Loaded, out: Path, templates: Path | None = None,
           formats: tuple[str, ...] = FORMATS, appendix: bool = False
           ) -> tuple[Result, list[Path]]:
    result = size(loaded)
    check_feasible(result)
    prepare_out_dir(out)
    with working(out):
        return result, write_outputs(result, out, templates=templates, formats=formats,
                                     appendix=appendix)


@contextlib.contextmanager
def working(out: Path) -> Iterator[None]:
    """This run's temp work under ``out`` (:func:`~llmsizer.base.atomic.work_under`), with
    SIGTERM unwinding from before the work folder exists, so a terminated run removes it."""
    with _sigterm_unwinds(), work_under(out):
        yield
