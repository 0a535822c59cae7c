"""Finding and decoding the benchmark result files that ``measured: {file: ...}`` names
(docs/measured.md): a path must stay inside the requirements file's folder, a file holds at
most :data:`MAX_BENCH_BYTES` and one JSON object, a JSON array or JSON lines (as
``vllm bench serve --append-result`` writes); :mod:`.benchformats` reads each record.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..base.jsonsafe import DuplicateKeyError, no_duplicates
from .benchformats import _problem, parse_bench
from .benchpoints import MAX_RECORDS, BenchPoint

__all__ = ["MAX_BENCH_BYTES", "read_bench_files"]

MAX_BENCH_BYTES = 50_000_000  # vllm --save-detailed files carry per-request lists


MAX_JSON_DIGITS = 100
"""Integers with more digits are refused while decoding: every figure's range ends far below
10**100, and turning such an integer into a float overflows (issue 25, F12)."""


class _Refused(Exception):
    """A decoding hook's refusal: carries the message, raised past ``json.loads``."""


def _none_for_nan(_name: str) -> None:
    return None  # NaN / Infinity (a tool's mean over no data): "not recorded"


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_JSON_DIGITS:
        raise _Refused(f"holds a number with {len(text.lstrip('-')):,} digits (starting "
                       f"{text[:12]}…); no benchmark figure is that large")
    return int(text)


def _decode(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_none_for_nan, parse_int=_bounded_int,
                          object_pairs_hook=no_duplicates)
    except DuplicateKeyError as exc:  # issue 25, F15
        raise _Refused(f"{exc}; a result file holds each figure once: remove one of "
                       "them") from None


def _load(target: Path, rel: str) -> list[dict[str, Any]]:
    too_big = _problem(rel, None, f"is larger than {MAX_BENCH_BYTES:,} bytes; save the summary "
                       "without per-request details")
    try:
        if target.stat().st_size > MAX_BENCH_BYTES:
            raise too_big
        with target.open("rb") as handle:
            raw = handle.read(MAX_BENCH_BYTES + 1)
    except OSError as exc:
        raise _problem(rel, None, f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_BENCH_BYTES:
        raise too_big
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _problem(rel, None, "is not UTF-8 text (is it really a result JSON?)") from None
    try:
        data = _decode(text)
    except _Refused as exc:
        raise _problem(rel, None, str(exc)) from None
    except json.JSONDecodeError as exc:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if len(lines) > 1 and all(ln.lstrip().startswith("{") for ln in lines):
            data = []  # JSON lines (vllm --append-result): one record per line
            for n, line in enumerate(lines, start=1):
                try:
                    data.append(_decode(line))
                except _Refused as bad:
                    raise _problem(rel, None, f"line {n} {bad}") from None
                except (json.JSONDecodeError, RecursionError, ValueError):
                    raise _problem(rel, None, f"line {n} is not valid JSON") from None
        else:
            raise _problem(rel, None, f"is not valid JSON (line {exc.lineno}, column "
                           f"{exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise _problem(rel, None, "nests too deeply to be a benchmark result") from None
    except ValueError as exc:  # an integer with thousands of digits
        raise _problem(rel, None, f"is not usable JSON: {str(exc)[:80]}") from None
    records = data if isinstance(data, list) else [data]
    if not records or not all(isinstance(r, dict) for r in records):
        raise _problem(rel, None, "must hold a JSON object ({...}) with the benchmark's "
                       "results (or a list of them)")
    if len(records) > MAX_RECORDS:
        raise _problem(rel, None, f"holds {len(records):,} records; at most {MAX_RECORDS} "
                       "points per file")
    return records


def _resolve(base: Path, rel: str) -> Path:
    """``rel`` inside ``base`` (the requirements file's folder), symlinks resolved."""
    if not rel.strip() or "\x00" in rel:
        raise _problem(rel, None, "is not a usable path")
    try:
        root = base.resolve()
        target = (root / rel).resolve()
    except (OSError, RuntimeError, ValueError):
        raise _problem(rel, None, "path cannot be resolved") from None
    if Path(rel).is_absolute() or not target.is_relative_to(root):
        raise _problem(rel, None, "points outside the requirements file's folder; copy the "
                       "result next to the YAML file (or into a folder beside it)")
    if not target.is_file():
        what = "is a folder, not a file" if target.is_dir() else "not found"
        raise _problem(rel, None, f"{what} (looked in {str(target.parent)!r}); paths are "
                       "relative to the requirements file")
    return target


def read_bench_files(base: Path, files: Sequence[str], fmt: str | None = None) -> list[BenchPoint]:
    """Every point of every file (in the order given), each file parsed in its format."""
    points: list[BenchPoint] = []
    for rel in files:
        records = _load(_resolve(base, rel), rel)
        points += parse_bench(records, rel, fmt)
    return points
