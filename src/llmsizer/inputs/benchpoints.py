"""A benchmark's measured point (:class:`BenchPoint`, every figure within a physical range) and
how a workload sees it: its figures per replica, whether it meets the targets, which point is
used (:func:`view`, :func:`choose`). The points come from :mod:`.benchformats`.

Conventions (docs/measured.md explains each):

* per-user speed = 1000 / median TPOT (else mean TPOT, median ITL, mean ITL, or the
  per-user speed the tool reports);
* TTFT against the target: the 99th percentile (else p90, median, mean), the stricter
  reading of "first token within T";
* throughput per replica = the server's output tokens/s / (GPUs / GPUs per replica).

Arithmetic on these figures is written once in :mod:`llmsizer.model.calculations` (``BENCH_*``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..model.calculations import (
    BENCH_GROUP_GPUS,
    BENCH_LENGTH_RATIO,
    BENCH_MEAN,
    BENCH_REPLICAS,
    BENCH_SHORTFALL,
    BENCH_TO_MS,
    BENCH_TOKENS_PER_S_PER_REPLICA,
    BENCH_TOKENS_PER_S_PER_USER,
)
from ..model.expr import Expr, evaluate

__all__ = [
    "BenchPoint",
    "Latency",
    "PointView",
    "choose",
    "gpu_names_conflict",
    "view",
]

MAX_RECORDS = 200
_LIMIT = 1e9


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# Every figure of a point has a physical range (docs/measured.md). A figure outside it is a
# broken file, and a tiny one is not harmless: a subnormal TPOT such as 5e-324 ms makes
# 1000 / TPOT infinite. 0 stays "not recorded" where a tool writes it for that (the readers
# in benchformats turn it into None before a point is built).
RANGES: dict[str, tuple[float, float, str]] = {
    "latency": (1e-3, 1e8, "ms"),  # 1 microsecond to about 28 hours
    "throughput": (1e-3, _LIMIT, "tokens/s"),
    "concurrency": (1e-3, 1e7, "requests in flight"),
    "request_rate": (1e-3, 1e7, "requests/s"),
    "requests": (0, _LIMIT, "requests"),
    "tokens": (0, 1e8, "tokens per request"),
}


def _within(kind: str) -> Any:
    lo, hi, _ = RANGES[kind]
    return Field(ge=lo, le=hi)


_Ms = Annotated[float, _within("latency")]
_Rate = Annotated[float, _within("throughput")]
_Concurrency = Annotated[float, _within("concurrency")]
_RequestRate = Annotated[float, _within("request_rate")]
_Requests = Annotated[float, _within("requests")]
_Tokens = Annotated[float, _within("tokens")]


class Latency(_Frozen):
    """One latency as the file records it, in ms (``None``: not recorded)."""

    mean: _Ms | None = None
    median: _Ms | None = None
    p90: _Ms | None = None
    p99: _Ms | None = None

    def empty(self) -> bool:
        return all(x is None for x in (self.mean, self.median, self.p90, self.p99))


class BenchPoint(_Frozen):
    """What one benchmark run records, in llmsizer's units (ms, tokens, tokens/s)."""

    file: str  # as the requirements name it
    format: str
    record: Annotated[int, Field(ge=1, le=MAX_RECORDS)] = 1  # 1-based record of a multi-record file
    records: Annotated[int, Field(ge=1, le=MAX_RECORDS)] = 1
    model: str | None = None
    concurrency: _Concurrency | None = None  # closed loop: users in flight
    request_rate: _RequestRate | None = None  # open loop (None: all at once)
    requests: _Requests | None = None
    input_tokens: _Tokens | None = None  # mean per request
    output_tokens: _Tokens | None = None
    output_tokens_per_s: _Rate  # the whole benchmarked server
    tokens_per_s_per_user: _Rate | None = None  # the tool's own
    speed_note: str = ""  # what tokens_per_s_per_user means for this tool
    ttft_ms: Latency = Latency()
    tpot_ms: Latency = Latency()
    itl_ms: Latency = Latency()
    gpu_name: str | None = None
    gpu_count: Annotated[int, Field(ge=1, le=100_000)] | None = None
    tp: Annotated[int, Field(ge=1, le=100_000)] | None = None
    pp: Annotated[int, Field(ge=1, le=100_000)] | None = None

    def label(self) -> str:
        """'bench/a.json at concurrency 32' (record number when the file has several)."""
        text = self.file + (f" #{self.record}" if self.records > 1 else "")
        if self.concurrency is not None:
            c = self.concurrency
            text += f" at concurrency {c:g}" if c == int(c) else f" at concurrency {c:.1f}"
        elif self.request_rate is not None:
            text += f" at {self.request_rate:g} requests/s"
        return text


def _f(x: float | str) -> float:
    if isinstance(x, str):  # pragma: no cover - the BENCH_* expressions are numeric
        raise TypeError(x)
    return x


# --- GPU names ---------------------------------------------------------------------------------

_GPU_TOKEN = re.compile(r"(?<![A-Z0-9])(?:MI\d{3}[A-Z]?|GB\d{3}|[ABHL]\d{2,3}S?)(?![0-9])")


def gpu_names_conflict(recorded: str | None, catalog_name: str) -> bool:
    """True when a file's GPU name ('NVIDIA H100 80GB HBM3') names another GPU model than
    the block's catalog GPU ('NVIDIA H200 SXM 141GB'); unknown names never conflict."""
    if not recorded:
        return False
    mine = set(_GPU_TOKEN.findall(recorded.upper()))
    theirs = set(_GPU_TOKEN.findall(catalog_name.upper()))
    return bool(mine and theirs and not mine & theirs)


def group_gpus(point: BenchPoint) -> int | None:
    """GPUs per model copy the file records (tp x pp), when it records tp."""
    if point.tp is None:
        return None
    return int(_f(evaluate(BENCH_GROUP_GPUS, {"tp_given": float(point.tp),
                                              "pp_given": float(point.pp or 1)})))


# --- a point against the workload's targets ----------------------------------------------------


@dataclass(frozen=True)
class PointView:
    """One point seen from a workload: its figures per replica and whether it meets the
    targets (``shortfall`` <= 1), with the reasons in words when it does not."""

    point: BenchPoint
    gpu_count: int
    replicas: float
    tokens_per_s_per_replica: float
    tokens_per_s_per_user: float | None
    speed_basis: str
    ttft_ms: float | None
    ttft_basis: str
    shortfall: float
    meets: bool
    problems: tuple[str, ...]


def _speed(p: BenchPoint) -> tuple[float | None, str]:
    for lat, basis in ((p.tpot_ms.median, "median TPOT"), (p.tpot_ms.mean, "mean TPOT"),
                       (p.itl_ms.median, "median ITL"), (p.itl_ms.mean, "mean ITL")):
        if lat is not None and lat > 0:
            return _f(evaluate(BENCH_TOKENS_PER_S_PER_USER, {"tpot_ms_given": lat})), (
                f"1000 / {basis} {lat:,.1f} ms")
    if p.tokens_per_s_per_user is not None:
        return p.tokens_per_s_per_user, p.speed_note
    return None, "not recorded"


def _ttft(p: BenchPoint) -> tuple[float | None, str]:
    for value, basis in ((p.ttft_ms.p99, "p99"), (p.ttft_ms.p90, "p90"),
                         (p.ttft_ms.median, "median"), (p.ttft_ms.mean, "mean")):
        if value is not None:
            return value, basis
    return None, "not recorded"


def view(p: BenchPoint, gpus_per_replica: int, gpu_count: int | None,
         required_tokens_per_s_per_user: float, target_ttft_ms: float) -> PointView:
    gpus = p.gpu_count or gpu_count or gpus_per_replica
    replicas = _f(evaluate(BENCH_REPLICAS, {"gpu_count_given": float(gpus),
                                            "gpus_per_replica_given": float(gpus_per_replica)}))
    per_replica = _f(evaluate(BENCH_TOKENS_PER_S_PER_REPLICA, {
        "output_tokens_per_s_given": p.output_tokens_per_s, "replicas_given": replicas}))
    speed, speed_basis = _speed(p)
    ttft, ttft_basis = _ttft(p)
    problems: list[str] = []
    if required_tokens_per_s_per_user > 0 and speed is None:
        problems.append("records no TPOT or ITL, so the per-user speed cannot be checked")
    if target_ttft_ms > 0 and ttft is None:
        problems.append("records no time to first token (run the benchmark with streaming)")
    if problems:
        shortfall = math.inf
    else:
        shortfall = _f(evaluate(BENCH_SHORTFALL, {
            "required_tokens_per_s_per_user": required_tokens_per_s_per_user,
            "tokens_per_s_per_user_given": speed or 0.0, "target_ttft_ms": target_ttft_ms,
            "ttft_ms_given": ttft or 0.0}))
        if required_tokens_per_s_per_user > 0 and speed is not None and (
                speed < required_tokens_per_s_per_user):
            problems.append(f"{speed:,.1f} tok/s per user, below the "
                            f"{required_tokens_per_s_per_user:,.1f} required")
        if target_ttft_ms > 0 and ttft is not None and ttft > target_ttft_ms:
            problems.append(f"{ttft_basis} TTFT {ttft:,.0f} ms, above the {target_ttft_ms:,.0f} ms "
                            "target")
    return PointView(point=p, gpu_count=gpus, replicas=replicas,
                     tokens_per_s_per_replica=per_replica, tokens_per_s_per_user=speed,
                     speed_basis=speed_basis, ttft_ms=ttft, ttft_basis=ttft_basis,
                     shortfall=shortfall, meets=shortfall <= 1 and not problems,
                     problems=tuple(problems))


def choose(views: Sequence[PointView]) -> tuple[PointView | None, PointView | None]:
    """(the point used, the closest one when none meets the targets): the highest
    throughput per replica among the points that meet the targets."""
    meeting = [v for v in views if v.meets]
    if meeting:
        return max(meeting, key=lambda v: v.tokens_per_s_per_replica), None
    if not views:
        return None, None
    return None, min(views, key=lambda v: v.shortfall)


def length_ratio(bench_tokens: float | None, workload_tokens: float) -> float | None:
    """Benchmark length / workload length (prompt or output), ``None`` when unknown."""
    if bench_tokens is None or workload_tokens <= 0:
        return None
    return _f(evaluate(BENCH_LENGTH_RATIO, {"bench_tokens_given": bench_tokens,
                                            "workload_tokens_given": workload_tokens}))


def expressions() -> dict[str, Expr]:
    """The named BENCH_* expressions (for docs and tests)."""
    return {"BENCH_TO_MS": BENCH_TO_MS, "BENCH_MEAN": BENCH_MEAN, "BENCH_REPLICAS": BENCH_REPLICAS,
            "BENCH_TOKENS_PER_S_PER_REPLICA": BENCH_TOKENS_PER_S_PER_REPLICA,
            "BENCH_TOKENS_PER_S_PER_USER": BENCH_TOKENS_PER_S_PER_USER,
            "BENCH_SHORTFALL": BENCH_SHORTFALL, "BENCH_GROUP_GPUS": BENCH_GROUP_GPUS,
            "BENCH_LENGTH_RATIO": BENCH_LENGTH_RATIO}
