"""Measured inference results (calibration_points.csv format) as typed records.

The file has one metric per row and the columns::

    source, model, gpu, gpu_count, tp, precision_weights, precision_kv, isl, osl,
    concurrency, scenario, metric, value, unit, notes

Labels in it are free text ("H200-SXM-141GB (doc label ...)", "TP4",
"gguf Q4_K_M", "request rate QPS=8 (rate-driven)"). :func:`read_points` maps them to
llmsizer ids with the explicit tables below and returns every data row either as a
:class:`BenchPoint` or as a :class:`Skipped` with a plain reason; nothing is dropped
silently. An unknown model or GPU label is not a reason to skip: the point keeps
``model``/``gpu`` = ``None`` and its ``raw`` text.

Conventions (each one is a choice a reader should know about):

- ``row`` is the 1-based number of the data record after the header (a quoted field
  spanning lines still counts as one record).
- Regimes: ``offline`` (unbounded queue, saturated throughput), ``concurrency``
  (closed loop with a fixed number of users), ``batch1`` (single stream), and
  ``rate`` (open loop at a request rate: ``request_rate`` is the offered rate in
  requests/s, ``inf`` for "QPS=INF (all at once)", ``achieved_rate`` what the notes say
  was achieved). ``concurrency`` is ``None`` for offline and rate rows. ``requests`` is the
  number of requests a run sent when the source or notes say ("500 requests"), else None.
- Lengths: a batch-1 row whose prompt/output length is not stated ("short
  (text-completion prompt)", "generation run (length not stated ...)") gets 0 for that
  length; ``raw`` keeps the text. Any other non-numeric length skips the row.
- KV precision "not stated" takes the weight precision (TensorRT-LLM FP8 builds keep
  the KV cache in FP8); GGUF weights take fp16 KV (llama.cpp default).
- GGUF quantisations map to the nearest plain precision by bytes per weight
  (Q4_0 4.5 bits, Q4_K_M ~4.8 bits -> ``int4``; Q8_0 8.5 bits -> ``int8``).
- llama.cpp "layer split across N GPUs" is pipeline parallelism: tp 1, pp N.
- ``tier`` is the ``[tier X]`` tag at the start of ``notes`` ('' when absent).
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

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

REGIMES: tuple[str, ...] = ("offline", "concurrency", "batch1", "rate")


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


@dataclass(frozen=True)
class Skipped:
    """A data row that could not become a :class:`BenchPoint`, and why."""

    row: int
    reason: str
    raw: dict[str, str]


# --- label tables -------------------------------------------------------------------

# Whole labels whose meaning needs the page they came from. Checked first, verbatim.
GPU_LABELS_EXACT: dict[str, str | None] = {
    # NIM page "2 x H100 80G": the form factor is not printed, but its c=1 ITL of
    # 18.6 ms for 35 GB of FP8 weights per GPU needs > 1.9 TB/s per GPU even at
    # perfect efficiency, which only the SXM (3.35 TB/s) delivers; NIM's published
    # runs use DGX/HGX H100.
    "H100 80GB (form factor not stated on page)": "h100-sxm",
    # RunPod "A100 80GB" (Dec 2023) could be either card: leave unmapped.
    "A100 80GB (form factor not stated)": None,
}

# Normalised labels (lower case, parenthesised remarks removed, spaces/underscores
# turned into '-') to llmsizer GPU ids. None = known label, not in the catalog.
GPU_LABELS: dict[str, str | None] = {
    "h100-sxm-80gb": "h100-sxm",
    "h100-sxm": "h100-sxm",
    "h100-sxm5-80gb": "h100-sxm",
    "h100-80gb-hbm3": "h100-sxm",
    "h100-pcie-80gb": "h100-pcie",
    "h100-pcie": "h100-pcie",
    "h100-nvl": "h100-nvl",
    "h100-nvl-94gb": "h100-nvl",
    # The TRT-LLM online-serving table labels its H200 "H200 131GB HBM3"; it is the
    # SXM part (same doc, same node type as the 141 GB rows).
    "h200": "h200-sxm",
    "h200-sxm": "h200-sxm",
    "h200-sxm-141gb": "h200-sxm",
    "h200-141gb-hbm3": "h200-sxm",
    "h200-nvl": "h200-nvl",
    # GH200 is not in the product's GPU catalog; FIELD-NOTES: 96 GB HBM3, 4.0 TB/s,
    # H100-class compute.
    "gh200": "gh200",
    "gh200-480gb": "gh200",
    "l40s": "l40s",
    "l40s-48gb": "l40s",
    "l4": "l4",
    "l4-24gb": "l4",
    "a10": "a10",
    "a10-24gb": "a10",
    "a100-sxm4-80gb": "a100-sxm",
    "a100-sxm-80gb": "a100-sxm",
    "a100-sxm": "a100-sxm",
    "a100-80gb-pcie": "a100-80gb-pcie",
    "a100-pcie-80gb": "a100-80gb-pcie",
    "a100-40gb-pcie": "a100-40gb-pcie",
    "a100-pcie-40gb": "a100-40gb-pcie",
    "b200": "b200",
    "b200-180gb": "b200",
    "b300": "b300",
    "gb200": "gb200",
    "rtx-4090": "rtx-4090",
    "rtx-4090-24gb": "rtx-4090",
    "rtx-pro-6000": "rtx-pro-6000",
    "mi300x": "mi300x",
    "mi300x-192gb": "mi300x",
    # Known labels with no llmsizer id (consumer/workstation/Apple parts).
    "rtx-3090-24gb": None,
    "rtx-4080-16gb": None,
    "rtx-6000-ada-48gb": None,
    "rtx-a6000-48gb": None,
    "apple-m2-ultra-76-core-gpu-192gb": None,
    "apple-m3-max-40-core-gpu-64gb": None,
}

# Normalised model labels ("-instruct" and "-instruct-v0.1" suffixes removed).
MODEL_LABELS: dict[str, str] = {
    "llama-2-7b": "llama-2-7b",
    "llama-2-13b": "llama-2-13b",
    "llama-2-70b": "llama-2-70b",
    "llama-3-8b": "llama-3-8b",
    "llama-3-70b": "llama-3-70b",
    "llama-3.1-8b": "llama-3.1-8b",
    "llama-3.1-70b": "llama-3.1-70b",
    "llama-3.1-405b": "llama-3.1-405b",
    "llama-3.3-70b": "llama-3.3-70b",
    "mixtral-8x7b": "mixtral-8x7b",
    "mixtral-8x22b": "mixtral-8x22b",
}

PRECISIONS: dict[str, str] = {
    "fp8": "fp8",
    "bf16": "bf16",
    "fp16": "fp16",
    "f16": "fp16",
    "fp32": "fp32",
    "int8": "int8",
    "int4": "int4",
    "fp4": "fp4",
    "nvfp4": "fp4",
    "mxfp4": "fp4",
    "w4a16": "int4",
    "awq": "int4",
    "gptq": "int4",
    # GGUF: nearest plain precision by bytes per weight.
    "gguf q4_0": "int4",
    "gguf q4_k_m": "int4",
    "gguf q4_k_s": "int4",
    "gguf q8_0": "int8",
    "gguf f16": "fp16",
    "gguf fp16": "fp16",
}

# Source metric name -> (llmsizer metric, unit family).
METRICS: dict[str, tuple[str, str]] = {
    "output_tokens_per_s_total": ("output_tokens_per_s", "rate"),
    "output_tokens_per_s": ("output_tokens_per_s", "rate"),
    "total_tokens_per_s (in+out)": ("total_tokens_per_s", "rate"),
    "total_tokens_per_s": ("total_tokens_per_s", "rate"),
    "decode_tokens_per_s_batch1": ("tokens_per_s_per_user", "rate"),
    "tokens_per_s_per_user": ("tokens_per_s_per_user", "rate"),
    "ttft_mean": ("ttft_ms", "time"),
    "ttft": ("ttft_ms", "time"),
    "itl_mean": ("itl_ms", "time"),
    "itl": ("itl_ms", "time"),
    "tpot_mean": ("tpot_ms", "time"),
    "tpot": ("tpot_ms", "time"),
}

# Unit -> factor to the metric's unit (tokens/s for rates, ms for times).
UNITS: dict[str, dict[str, float]] = {
    "rate": {"tokens/s": 1.0, "tok/s": 1.0, "tokens/sec": 1.0},
    "time": {"ms": 1.0, "s": 1000.0, "us": 0.001},
}

_PAREN = re.compile(r"\([^)]*\)")
_TIER = re.compile(r"\[tier\s+([A-Z][+-]?)\]")
_TP = re.compile(r"^tp\s*=?\s*(\d+)(?:\s*[x×,]?\s*pp\s*=?\s*(\d+))?$")
_LAYER_SPLIT = re.compile(r"layer split across (\d+) gpus?")
_QPS = re.compile(r"request rate qps\s*=\s*(inf|\d+(?:\.\d+)?)")
_ACHIEVED = re.compile(r"achieved\s+(\d+(?:\.\d+)?)\s*req/s")
_LEADING_INT = re.compile(r"^(\d+)\b")
_REQUESTS = re.compile(r"\b(\d[\d,]*)\s+requests\b")


class _RowError(Exception):
    """A reason to skip one row (internal)."""


def _norm_label(text: str) -> str:
    text = _PAREN.sub(" ", text).strip().lower()
    return re.sub(r"[\s_]+", "-", text)


def _gpu_id(label: str) -> str | None:
    if label in GPU_LABELS_EXACT:
        return GPU_LABELS_EXACT[label]
    return GPU_LABELS.get(_norm_label(label))


def _model_id(label: str) -> str | None:
    key = _norm_label(label)
    key = re.sub(r"-instruct(-v\d+(\.\d+)*)?$", "", key)
    return MODEL_LABELS.get(key)


def _precision(text: str, what: str) -> str:
    key = re.sub(r"\s+", " ", _PAREN.sub(" ", text).strip().lower())
    if key not in PRECISIONS:
        raise _RowError(f"unknown {what} precision {text!r}")
    return PRECISIONS[key]


def _kv_precision(text: str, weights_raw: str, weights: str) -> str:
    key = _PAREN.sub(" ", text).strip().lower()
    if key in ("", "not stated", "unknown", "auto"):
        return "fp16" if weights_raw.strip().lower().startswith("gguf") else weights
    return _precision(text, "KV")


def _positive_int(text: str, what: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise _RowError(f"{what} is not a whole number: {text!r}") from None
    if value < 1:
        raise _RowError(f"{what} must be at least 1, got {value}")
    return value


def _parallelism(text: str) -> tuple[int, int]:
    key = text.strip().lower()
    split = _LAYER_SPLIT.search(key)
    if split:
        return 1, int(split.group(1))
    if key.isdigit():
        return int(key), 1
    match = _TP.match(key)
    if not match:
        raise _RowError(f"cannot read tensor/pipeline parallelism from {text!r}")
    return int(match.group(1)), int(match.group(2) or 1)


def _length(text: str, what: str, regime: str) -> int:
    key = text.strip()
    if key.isdigit():
        return int(key)
    if regime == "batch1":
        return 0
    raise _RowError(f"{what} is not a number of tokens: {text!r}")


def _regime(concurrency: str, scenario: str, metric: str) -> tuple[str, int | None, float | None]:
    """(regime, concurrency, offered request rate)."""
    key = concurrency.strip().lower()
    qps = _QPS.search(key)
    if qps:
        rate = math.inf if qps.group(1) == "inf" else float(qps.group(1))
        return "rate", None, rate
    if key.startswith("unbounded") or (not key and "offline" in scenario.lower()):
        return "offline", None, None
    if "batch 1" in key or metric == "decode_tokens_per_s_batch1":
        return "batch1", 1, None
    lead = _LEADING_INT.match(key)
    if lead:
        users = int(lead.group(1))
        if users < 1:
            raise _RowError(f"concurrency must be at least 1, got {users}")
        return "concurrency", users, None
    raise _RowError(f"cannot tell the load regime from concurrency {concurrency!r}")


def _value(text: str, unit: str, family: str) -> float:
    try:
        number = float(text.replace(",", "").strip())
    except ValueError:
        raise _RowError(f"value is not a number: {text!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise _RowError(f"value must be a positive finite number, got {text!r}")
    factors = UNITS[family]
    key = unit.strip().lower()
    if key not in factors:
        raise _RowError(f"unit {unit!r} does not fit a {family} metric")
    return number * factors[key]


def _point(row: int, raw: dict[str, str]) -> BenchPoint:
    metric_raw = raw["metric"].strip()
    if metric_raw not in METRICS:
        raise _RowError(f"unknown metric {metric_raw!r}")
    metric, family = METRICS[metric_raw]
    value = _value(raw["value"], raw["unit"], family)

    gpu_count = _positive_int(raw["gpu_count"], "gpu_count")
    tp, pp = _parallelism(raw["tp"])
    if tp < 1 or pp < 1:
        raise _RowError(f"parallelism must be at least 1: {raw['tp']!r}")
    if gpu_count % (tp * pp):
        raise _RowError(f"gpu_count {gpu_count} is not a multiple of tp {tp} x pp {pp}")

    weights = _precision(raw["precision_weights"], "weight")
    kv = _kv_precision(raw["precision_kv"], raw["precision_weights"], weights)
    regime, concurrency, rate = _regime(raw["concurrency"], raw["scenario"], metric_raw)
    achieved = _ACHIEVED.search(raw["notes"]) if regime == "rate" else None
    tier = _TIER.search(raw["notes"])
    requests = _REQUESTS.search(f"{raw['source']} {raw['notes']}")

    return BenchPoint(
        row=row,
        source=raw["source"],
        model=_model_id(raw["model"]),
        gpu=_gpu_id(raw["gpu"]),
        gpu_count=gpu_count,
        tp=tp,
        pp=pp,
        replicas=gpu_count // (tp * pp),
        weight_precision=weights,
        kv_precision=kv,
        isl=_length(raw["isl"], "isl", regime),
        osl=_length(raw["osl"], "osl", regime),
        concurrency=concurrency,
        regime=regime,
        metric=metric,
        value=value,
        tier=tier.group(1) if tier else "",
        raw=raw,
        request_rate=rate,
        achieved_rate=float(achieved.group(1)) if achieved else None,
        requests=int(requests.group(1).replace(",", "")) if requests else None,
    )


def read_points(path: str | Path) -> tuple[list[BenchPoint], list[Skipped]]:
    """Read a calibration_points.csv-format file.

    Returns ``(points, skipped)``; together they hold every data record exactly once,
    in file order. Raises :class:`InputError` when the file cannot be read or its
    header lacks a required column.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            records = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read benchmark file: {exc}", file=str(path)) from None
    if not records:
        raise InputError("benchmark file is empty (no header row)", file=str(path))
    header = [name.strip() for name in records[0]]
    missing = [name for name in COLUMNS if name not in header]
    if missing:
        raise InputError(
            f"header lacks column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}",
            file=str(path),
            line=1,
        )

    points: list[BenchPoint] = []
    skipped: list[Skipped] = []
    for row, record in enumerate(records[1:], start=1):
        raw = dict(zip(header, record, strict=False))
        if not any(cell.strip() for cell in record):
            skipped.append(Skipped(row, "empty row", raw))
            continue
        if len(record) != len(header):
            reason = f"has {len(record)} fields, the header has {len(header)}"
            skipped.append(Skipped(row, reason, raw))
            continue
        try:
            points.append(_point(row, raw))
        except _RowError as exc:
            skipped.append(Skipped(row, str(exc), raw))
    return points, skipped
