"""One account in, its outputs out: ``<slug>.json``, ``<slug>.xlsx``, ``<slug>.pdf``."""

from __future__ import annotations

from pathlib import Path

from .atomic import atomic_group
from .engine import size
from .errors import InfeasibleError, InputError
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
    """Write the chosen outputs as one atomic group (all or none); return their paths."""
    stem = stem or result.account.slug
    chosen = [f for f in FORMATS if f in formats]
    targets = [out / f"{stem}.{f}" for f in chosen]
    try:
        with atomic_group(targets) as tmps:
            for fmt, tmp in zip(chosen, tmps, strict=True):
                if fmt == "json":
                    tmp.write_text(result.to_json(), encoding="utf-8")
                elif fmt == "xlsx":
                    from .workbook import write_workbook

                    write_workbook(result, tmp)
                else:
                    from .proposal import render_pdf

                    render_pdf(result, tmp, templates=templates)
    except OSError as exc:
        raise InputError(f"cannot write to {str(out)!r}: {exc.strerror or exc}") from None
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
