"""One account in, its outputs out: ``<slug>.json``, ``<slug>.xlsx``, ``<slug>.pdf``."""

from __future__ import annotations

from pathlib import Path

from .atomic import write_atomic, write_text_atomic
from .engine import size
from .errors import InputError
from .requirements import Loaded
from .results import Result

FORMATS = ("json", "xlsx", "pdf")


def prepare_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"output folder {str(out)!r} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output folder {str(out)!r}: {exc.strerror}") from None


def write_outputs(result: Result, out: Path, stem: str | None = None,
                  templates: Path | None = None,
                  formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """Write the chosen outputs atomically; return their paths."""
    stem = stem or result.account.slug
    written: list[Path] = []
    try:
        if "json" in formats:
            target = out / f"{stem}.json"
            write_text_atomic(target, result.to_json())
            written.append(target)
        if "xlsx" in formats:
            from .workbook import write_workbook

            target = out / f"{stem}.xlsx"
            write_atomic(target, lambda p: write_workbook(result, p))
            written.append(target)
        if "pdf" in formats:
            from .proposal import render_pdf

            target = out / f"{stem}.pdf"
            write_atomic(target, lambda p: render_pdf(result, p, templates=templates))
            written.append(target)
    except OSError as exc:
        raise InputError(f"cannot write to {str(out)!r}: {exc.strerror}") from None
    return written


def report(loaded: Loaded, out: Path, templates: Path | None = None,
           formats: tuple[str, ...] = FORMATS) -> tuple[Result, list[Path]]:
    result = size(loaded)
    prepare_out_dir(out)
    return result, write_outputs(result, out, templates=templates, formats=formats)
