"""One account in, its outputs out: ``<slug>.json``, ``<slug>.xlsx``, ``<slug>.pdf``.

The three files are published as a set: rendered into temp files, then, under the
account's lock (``.<slug>.lock``), renamed into place and described by a manifest
(``.<slug>.manifest.json``: each file's size and sha256) written last. Two runs writing
the same account at once each publish a whole set, one after the other; a reader that
finds the manifest agreeing with the files has one run's set.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from ..base.atomic import atomic_group, clean_temp_files, release_quietly, write_text_atomic
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


def _write_manifest(out: Path, stem: str, targets: list[Path]) -> None:
    files = []
    for t in targets:
        size, sha = _digest(t)
        files.append({"name": t.name, "bytes": size, "sha256": sha})
    doc = {"llmsizer_version": __version__, "stem": stem, "files": files}
    write_text_atomic(manifest_path(out, stem), json.dumps(doc, indent=2) + "\n")


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


def prepare_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"output folder {str(out)!r} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output folder {str(out)!r}: {exc.strerror}") from None
    clean_temp_files(out)  # those of runs that are gone (a killed run's)


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
                  also: Callable[[], None] | None = None) -> list[Path]:
    """Write the chosen outputs as one set (all or none; module docstring); ``also`` runs
    under the account's lock after the manifest (a batch's stamp). Return their paths."""
    stem = stem or output_stem(result.account.slug)
    chosen = [f for f in FORMATS if f in formats]
    targets = [out / f"{stem}.{f}" for f in chosen]

    def publish() -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(manifest_path(out, stem))
        _write_manifest(out, stem, targets)
        if also:
            also()

    from xlsxwriter.exceptions import XlsxFileError

    try:
        with _sigterm_unwinds(), atomic_group(targets, lock=lock_path(out, stem),
                                              publish=publish) as tmps:
            for fmt, tmp in zip(chosen, tmps, strict=True):
                if fmt == "json":
                    tmp.write_text(result.to_json(), encoding="utf-8")
                elif fmt == "xlsx":
                    from ..documents.workbook import write_workbook

                    write_workbook(result, tmp)
                else:
                    from ..documents.proposal import render_pdf

                    render_pdf(result, tmp, templates=templates)
    except (OSError, XlsxFileError) as exc:
        cause = exc.args[0] if isinstance(exc, XlsxFileError) and exc.args else exc
        why = getattr(cause, "strerror", None) or str(cause)
        release_quietly(exc)
        raise InputError(f"cannot write to {str(out)!r}: {why}") from None
    return targets


def check_feasible(result: Result) -> None:
    """Refuse to write a proposal for an account with a workload nothing can serve."""
    bad = [w for w in result.workloads if w.recommended is None]
    if bad:
        raise InfeasibleError("; ".join(f"{w.name}: {w.advice}" for w in bad))


def report(loaded: Loaded, out: Path, templates: Path | None = None,
           formats: tuple[str, ...] = FORMATS) -> tuple[Result, list[Path]]:
    result = size(loaded)
    check_feasible(result)
    prepare_out_dir(out)
    return result, write_outputs(result, out, templates=templates, formats=formats)
