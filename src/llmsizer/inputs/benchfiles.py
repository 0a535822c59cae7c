"""Finding and decoding the benchmark result files that ``measured: {file: ...}`` names
(docs/measured.md): a path must stay inside the requirements file's folder, a file holds at
most :data:`MAX_BENCH_BYTES` and one JSON object, a JSON array or JSON lines (as
``vllm bench serve --append-result`` writes); :mod:`.benchformats` reads each record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..base.errors import InputError
from ..base.jsonsafe import DuplicateKeyError, no_duplicates
from ..base.textsafe import printable
from .benchformats import _problem, parse_bench
from .benchpoints import MAX_RECORDS, BenchPoint

__all__ = ["MAX_BENCH_BYTES", "MAX_LIST_BYTES", "MAX_LIST_RECORDS", "read_bench_files"]

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


MAX_JSON_CONTAINERS = 100_000
"""Objects and arrays in one file: a vllm ``--save-detailed`` result of 10,000 requests holds
about 10,000 (one per-token list per request). Each costs 56 to 64 bytes decoded from 2
characters of text, so 16 M ``{}`` in 49 MB took 1.23 GB (issue 25, F13)."""
MAX_JSON_VALUES = 5_000_000
"""Values in one file (about 160 MB decoded at most): the per-token latencies of 5,000
requests of 1,000 output tokens."""

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # unrolled: no per-character branch


def _count_values(raw: bytes) -> str:
    """What is wrong with decoding ``raw`` at all, by counting before decoding: the strings'
    contents blanked, each ``{``/``[`` opens a container and each ``,`` adds a value. An
    upper bound of what decoding builds, counted at C speed (0.3 s for 50 MB)."""
    bare = _JSON_STRING.sub(b'""', raw)
    containers = bare.count(b"{") + bare.count(b"[")
    if containers > MAX_JSON_CONTAINERS:
        return (f"holds {containers:,} JSON objects and lists; a benchmark result holds at most "
                f"{MAX_JSON_CONTAINERS:,}: save the summary without per-request details")
    values = containers + bare.count(b",")
    if values > MAX_JSON_VALUES:
        return (f"holds {values:,} JSON values; a benchmark result holds at most "
                f"{MAX_JSON_VALUES:,}: save the summary without per-request details")
    return ""


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
    counted = _count_values(raw)
    if counted:
        raise _problem(rel, None, counted)
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


MAX_LIST_BYTES = 100_000_000
"""A ``file:`` list reads at most this many bytes in all (each file once): 50 files of 49 MB
took 76 s and 2.3 GB (issue 25, F14)."""
MAX_LIST_RECORDS = 1_000
"""...and at most this many records in all: 50 files of 200 records took 87 s and 1.7 GB."""


def read_bench_files(base: Path, files: Sequence[str], fmt: str | None = None) -> list[BenchPoint]:
    """Every point of every file (in the order given), each file parsed in its format. A file
    named twice (or through two paths) is read once; the list is bounded in bytes (checked
    before any file is read) and in records."""
    targets: dict[Path, str] = {}
    for rel in files:
        targets.setdefault(_resolve(base, rel), rel)
    total = 0
    for target, rel in targets.items():
        try:
            total += target.stat().st_size
        except OSError as exc:
            raise _problem(rel, None, f"cannot be read ({exc.strerror or exc})") from None
    if total > MAX_LIST_BYTES:
        raise InputError(f"the benchmark files listed hold {total:,} bytes together; a file: "
                         f"list reads at most {MAX_LIST_BYTES:,} bytes in all: save the "
                         "summaries without per-request details, or list fewer files")
    points: list[BenchPoint] = []
    records_seen = 0
    for target, rel in targets.items():
        records = _load(target, rel)
        records_seen += len(records)
        if records_seen > MAX_LIST_RECORDS:
            raise InputError(f"the benchmark files listed hold more than {MAX_LIST_RECORDS:,} "
                             f"records together (at {printable(rel)!r}); a file: list takes at "
                             f"most {MAX_LIST_RECORDS:,}: list the runs the curve needs")
        points += parse_bench(records, rel, fmt)
    return points
