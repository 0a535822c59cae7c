"""Measured inference results (calibration_points.csv format) as typed records.

The file has one metric per row and the columns::

    source, model, gpu, gpu_count, tp, precision_weights, precision_kv, isl, osl,
    concurrency, scenario, metric, value, unit, notes

Labels in it are free text ("H200-SXM-141GB (doc label ...)", "TP8 EP8 ADP",
"gguf Q4_K_M", "request rate QPS=8 (rate-driven)"). :func:`read_points` maps them to
llmsizer ids and returns every data row either as a :class:`BenchPoint` or as a
:class:`Skipped` with every reason it could not be read; nothing is dropped silently.
GPU and model labels resolve through the catalogs' ``aliases`` (:class:`LabelIndex`); an
unknown label is not a reason to skip here: the point keeps ``model``/``gpu`` = ``None``
and its ``raw`` text, and ``llmsizer fidelity`` says which catalog names are closest.

The text of each cell is read by :mod:`.benchlabels` (parallelism, precisions, regime,
metric and unit), which also lists the conventions for those labels.

Conventions (each one is a choice a reader should know about):

- ``row`` is the 1-based number of the data record after the header (a quoted field
  spanning lines still counts as one record).
- ``replicas`` = ``gpu_count / (tp x pp)``; a stated replica count must agree with
  ``gpu_count`` (or fills it when ``gpu_count`` is empty).
- ``achieved_rate`` is the request rate the notes say was achieved (rate rows); ``requests``
  the number of requests a run sent when the source or notes say ("500 requests"), else None.
- Metrics: per-GPU throughput (``..._per_gpu`` or unit ``tok/s/gpu``) is multiplied by
  ``gpu_count``, so ``output_tokens_per_s`` is always the whole row's GPUs. ``statistic``
  is ``mean`` unless the metric names another (``p90_tpot_ms``, ``ttft_p99``): a p90/p99
  TPOT is compared as the mean TPOT it implies, ``value`` = measured /
  ``tpot_p90_over_mean`` or ``tpot_p99_over_mean`` (catalogs/constants.yaml, with their
  derivation); ``tail_value`` keeps the measured tail. Other tails keep their value and
  are skipped by ``llmsizer fidelity`` with the reason.
- Lengths: lengths drawn uniformly from ``[f L, L]`` (InferenceX: "lengths U[0.8*L, L]")
  are read as their mean ``(1 + f) / 2 x L`` (0.9 L); ``random_lengths`` keeps ``f``.
  A batch-1 row whose prompt/output length is not stated gets 0 for that length; ``raw``
  keeps the text. Any other non-numeric length skips the row.
- ``tier`` is the ``[tier X]`` tag (or a leading ``tier X``) of ``notes`` ('' when absent).
"""

from __future__ import annotations

import csv
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from ..base.errors import InputError
from ..base.textsafe import printable
from ..model.catalog import Catalog, LabelIndex, load_catalog
from .benchlabels import (
    Parallelism,
    _kv_precision,
    _length,
    _metric,
    _parallelism,
    _positive_int,
    _precision,
    _regime,
    _RowError,
    _value,
    kv_assumed,
    serving_features,
)

T = TypeVar("T")

COLUMNS: tuple[str, ...] = (
    "source",
    "model",
    "gpu",
    "gpu_count",
    "tp",
    "precision_weights",
    "precision_kv",
    "isl",
    "osl",
    "concurrency",
    "scenario",
    "metric",
    "value",
    "unit",
    "notes",
)


@dataclass(frozen=True)
class BenchPoint:
    """One measured value with its configuration, in llmsizer ids and SI-ish units."""

    row: int
    source: str
    model: str | None
    gpu: str | None
    gpu_count: int
    tp: int
    pp: int
    replicas: int
    weight_precision: str
    kv_precision: str
    isl: int
    osl: int
    concurrency: int | None
    regime: str
    metric: str
    value: float
    tier: str
    raw: dict[str, str]
    request_rate: float | None = None
    achieved_rate: float | None = None
    requests: int | None = None
    ep: int = 1
    adp: int = 1
    statistic: str = "mean"
    tail_value: float | None = None
    per_gpu: bool = False
    with_context: bool = False
    random_lengths: float | None = None
    disaggregated: str | None = None
    speculative: bool = False
    kv_assumption: str | None = None  # which default a KV cell left to the engine took


@dataclass(frozen=True)
class Skipped:
    """A data row that could not become a :class:`BenchPoint` (or a prediction), and why."""

    row: int
    reasons: tuple[str, ...]
    raw: dict[str, str]

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


_TIER = re.compile(r"\[tier\s+([A-Z][+-]?)\]")
_LEADING_TIER = re.compile(r"^\s*tier\s+([A-Z][+-]?)(?![\w])")
_ACHIEVED = re.compile(r"achieved\s+(\d+(?:\.\d+)?)\s*req/s")
_REQUESTS = re.compile(r"\b(\d[\d,]*)\s+requests\b")
_RANDOM_LENGTHS = re.compile(r"\[\s*(0?\.\d+)\s*\*?\s*l\s*,\s*l\s*\]")
# TensorRT-LLM's Triton MoE backend runs a checkpoint's MXFP4 experts with BF16 activations (the
# Hopper path): TensorRT-LLM examples/models/core/gpt_oss/README.md, "MoE Support Matrix"
# (Hopper: activation bf16, weight mxfp4, TRITON). The 1.2 perf overview's gpt-oss rows on
# Hopper say "MoE backend TRITON" and "kv auto" but label the precision FP8; read as MXFP4,
# "auto" KV takes its default (BF16, the checkpoint's dtype).
_TRITON_MOE = re.compile(r"moe backend triton", re.IGNORECASE)
_WITH_CONTEXT = re.compile(r"w/\s*ctx|includes? context")
# A figure of a row has at most this many digits in a run: every count, length and rate of a
# real benchmark is far smaller, and longer runs overflow a float on the way (issue 25, F19).
MAX_ROW_DIGITS = 15
_LONG_NUMBER = re.compile(rf"\d{{{MAX_ROW_DIGITS + 1},}}")



class _Reasons:
    """Collects every reason a row cannot be read instead of stopping at the first."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def get(self, fn: Callable[[], T]) -> T | None:
        try:
            return fn()
        except _RowError as exc:
            self.reasons.append(str(exc))
            return None


def _group(par: Parallelism, gpu_count: int | None, disagg_gpus: int | None,
           text: str) -> tuple[int, int]:
    """(gpu_count, replicas) checked against the parallelism."""
    if par.disaggregated:
        return gpu_count or disagg_gpus or par.tp * par.pp, 1
    group = par.tp * par.pp
    if par.replicas is not None:
        expected = group * par.replicas
        if gpu_count is not None and gpu_count != expected:
            raise _RowError(f"gpu_count {gpu_count} does not match {text.strip()!r} "
                            f"({group} GPUs per instance x {par.replicas} replicas = {expected})")
        return expected, par.replicas
    if gpu_count is None:
        return group, 1
    if gpu_count % group:
        raise _RowError(f"gpu_count {gpu_count} is not a multiple of tp {par.tp} x pp {par.pp}")
    return gpu_count, gpu_count // group


def _point(row: int, raw: dict[str, str], catalog: Catalog, labels: LabelIndex,
           ) -> BenchPoint | list[str]:
    """The row as a point, or every reason it cannot be read."""
    why = _Reasons()
    metric = why.get(lambda: _metric(raw["metric"]))
    value_unit = why.get(lambda: _value(raw["value"], raw["unit"], metric)) if metric else None
    count_text = raw["gpu_count"].strip()
    stated_count = why.get(lambda: _positive_int(count_text, "gpu_count")) if count_text else None
    par_disagg = why.get(lambda: _parallelism(raw["tp"], raw["scenario"], raw["notes"]))
    sizes = None
    if par_disagg and (stated_count is not None or not count_text):
        sizes = why.get(lambda: _group(par_disagg[0], stated_count, par_disagg[1], raw["tp"]))
    weights = why.get(lambda: _precision(raw["precision_weights"], "weight"))
    if weights and _TRITON_MOE.search(raw["notes"]):
        weights = "mxfp4"
    kv = (why.get(lambda: _kv_precision(raw["precision_kv"], raw["precision_weights"], weights,
                                        catalog)) if weights else None)
    known_count = sizes[0] if sizes else stated_count
    regime_etc = why.get(lambda: _regime(raw["concurrency"], raw["scenario"],
                                         raw["metric"].strip(), known_count))
    regime = regime_etc[0] if regime_etc else ""
    isl = why.get(lambda: _length(raw["isl"], "isl", regime)) if regime_etc else None
    osl = why.get(lambda: _length(raw["osl"], "osl", regime)) if regime_etc else None
    if why.reasons:
        return why.reasons
    assert (metric and value_unit and par_disagg and sizes and weights and kv and regime_etc
            and isl is not None and osl is not None)

    par = par_disagg[0]
    gpu_count, replicas = sizes
    regime, concurrency, rate = regime_etc
    value, per_gpu_unit = value_unit
    per_gpu = metric.per_gpu or per_gpu_unit
    if per_gpu:  # the whole row's GPUs, as every other throughput row
        value = value * gpu_count
    tail_value = None
    if metric.name == "tpot_ms" and metric.statistic in ("p90", "p99"):
        tail_value = value
        value = value / catalog.constant(f"tpot_{metric.statistic}_over_mean")
    text = " ".join((raw["scenario"], raw["notes"])).lower()
    spread = _RANDOM_LENGTHS.search(text)
    low = float(spread.group(1)) if spread else None
    if low is not None:  # uniform in [low L, L]: the mean length
        isl, osl = round(isl * (1 + low) / 2), round(osl * (1 + low) / 2)
    achieved = _ACHIEVED.search(raw["notes"]) if regime == "rate" else None
    tier = _TIER.search(raw["notes"]) or _LEADING_TIER.match(raw["notes"])
    requests = _REQUESTS.search(f"{raw['source']} {raw['notes']}")
    return BenchPoint(
        row=row,
        source=raw["source"],
        model=labels.model(raw["model"]),
        gpu=labels.gpu(raw["gpu"]),
        gpu_count=gpu_count,
        tp=par.tp,
        pp=par.pp,
        replicas=replicas,
        weight_precision=weights,
        kv_precision=kv,
        isl=isl,
        osl=osl,
        concurrency=concurrency,
        regime=regime,
        metric=metric.name,
        value=value,
        tier=tier.group(1) if tier else "",
        raw=raw,
        request_rate=rate,
        achieved_rate=float(achieved.group(1)) if achieved else None,
        requests=int(requests.group(1).replace(",", "")) if requests else None,
        ep=par.ep,
        adp=par.adp,
        statistic=metric.statistic,
        tail_value=tail_value,
        per_gpu=per_gpu,
        with_context=(metric.name == "tokens_per_s_per_user"
                      and bool(_WITH_CONTEXT.search(raw["notes"].lower()))),
        random_lengths=low,
        disaggregated=par.disaggregated,
        speculative=serving_features(raw)[1],
        kv_assumption=(f"KV precision not stated ({raw['precision_kv'].strip() or 'empty'}): "
                       f"{kv} assumed, the engine default for {weights} weights"
                       if kv_assumed(raw["precision_kv"]) else None),
    )


def _bounded(raw: dict[str, str]) -> list[str]:
    """Why a row's figures are too long to read (source and notes hold commit ids, and are
    read only for a tier, a rate or a request count, which the point's ranges bound)."""
    return [f"{name} holds a number of {len(m.group()):,} digits; no benchmark figure has more "
            f"than {MAX_ROW_DIGITS}" for name, text in raw.items()
            if name not in ("source", "notes") and (m := _LONG_NUMBER.search(text))]


def _valid_point(row: int, raw: dict[str, str], catalog: Catalog, labels: LabelIndex,
                 ) -> BenchPoint | list[str]:
    """:func:`_point`, with a figure out of the point's range as the row's reason."""
    try:
        return _point(row, raw, catalog, labels)
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                for e in exc.errors(include_input=False, include_url=False)]


def read_points(path: str | Path, catalog: Catalog | None = None,
                ) -> tuple[list[BenchPoint], list[Skipped]]:
    """Read a calibration_points.csv-format file.

    Returns ``(points, skipped)``; together they hold every data record exactly once,
    in file order. Raises :class:`InputError` when the file cannot be read or its
    header lacks a required column.
    """
    path = Path(path)
    shown = printable(str(path))
    cat = catalog or load_catalog()
    labels = LabelIndex(cat)
    check_regular(path, shown)
    points: list[BenchPoint] = []
    skipped: list[Skipped] = []
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            # streamed: one row at a time, never the whole file as a list (issue 25, F18)
            records = csv.reader(handle)
            header = [name.strip() for name in next(records, [])]
            if not header:
                raise InputError("benchmark file is empty (no header row)", file=shown)
            missing = [name for name in COLUMNS if name not in header]
            if missing:
                # a spreadsheet saved with ';' between the columns reads as one column
                sep = next((c for c in ";\t|" if len(header) == 1 and c in header[0]), None)
                also = (f"; its columns are separated by {sep!r}, not commas: save it as CSV "
                        "(comma delimited)" if sep else "")
                # review round 25: with every column missing it named the 15 twice ("lacks
                # source, model, ...; expected source, model, ...") and never what it found
                found = printable(", ".join(header[:6]) + (", ..." if len(header) > 6 else ""))
                lacks = (f"is not a measured-results file: its header has {found[:200]} "
                         f"({len(missing)} of the {len(COLUMNS)} columns missing)"
                         if len(missing) > len(COLUMNS) // 2 and not sep
                         else f"header lacks column(s) {', '.join(missing)}")
                raise InputError(f"{lacks}; expected {', '.join(COLUMNS)}{also}",
                                 file=shown, line=1)
            for row, record in enumerate(records, start=1):
                if row > MAX_POINT_ROWS:
                    raise InputError(f"holds more than {MAX_POINT_ROWS:,} rows; split it into "
                                     "files of at most that many", file=shown)
                _row(row, record, header, cat, labels, points, skipped)
    except UnicodeDecodeError as exc:  # it said "'utf-8' codec can't decode byte 0xff in ..."
        raise InputError(f"is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at byte "
                         f"{exc.start:,}): save it as CSV UTF-8 (comma delimited)",
                         file=shown) from None
    except (OSError, csv.Error) as exc:
        raise InputError(f"cannot read benchmark file: {printable(str(exc))[:200]}",
                         file=shown) from None
    return points, skipped


MAX_POINT_BYTES = 20_000_000
"""A measured-results CSV holds at most this many bytes: the largest shipped one
(tests/data/measured_blackwell_moe.csv, 1,090 rows) is 1 MB (issue 25, F18)."""
MAX_POINT_ROWS = 50_000


def check_regular(path: Path, shown: str) -> None:
    """A regular file of at most :data:`MAX_POINT_BYTES`, checked before it is opened: opening
    a FIFO waits for a writer, and /dev/zero never ends (issue 25, F18)."""
    try:
        st = path.stat()
    except FileNotFoundError:  # it said "cannot read benchmark file: No such file or directory"
        raise InputError("file not found: check the path and the file name",
                         file=shown) from None
    except OSError as exc:
        raise InputError(f"cannot read benchmark file: {exc.strerror or exc}",
                         file=shown) from None
    if not stat.S_ISREG(st.st_mode):
        what = ("a folder" if stat.S_ISDIR(st.st_mode) else "a named pipe"
                if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode) else "not a regular file")
        raise InputError(f"is {what}, not a file; give a CSV file of measured results",
                         file=shown)
    if st.st_size > MAX_POINT_BYTES:
        raise InputError(f"is {st.st_size:,} bytes; a measured-results CSV holds at most "
                         f"{MAX_POINT_BYTES:,} bytes ({MAX_POINT_ROWS:,} rows): split it",
                         file=shown)


def _row(row: int, record: list[str], header: list[str], cat: Catalog, labels: LabelIndex,
         points: list[BenchPoint], skipped: list[Skipped]) -> None:
    raw = dict(zip(header, record, strict=False))
    if not any(cell.strip() for cell in record):
        skipped.append(Skipped(row, ("empty row",), raw))
        return
    if len(record) != len(header):
        reason = f"has {len(record)} fields, the header has {len(header)}"
        skipped.append(Skipped(row, (reason,), raw))
        return
    got = _bounded(raw) or _valid_point(row, raw, cat, labels)
    if isinstance(got, BenchPoint):
        points.append(got)
    else:
        skipped.append(Skipped(row, tuple(got), raw))
