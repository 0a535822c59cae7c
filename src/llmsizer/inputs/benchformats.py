"""Benchmark result files as measured points (``measured: {file: ...}``, docs/measured.md).

A workload's ``measured`` block may name one or more result files of a serving benchmark
instead of stating a throughput. Each file gives one point (a JSON array or a JSON-lines
file, as ``vllm bench serve --append-result`` writes, gives one point per record):

=================  ==========================================================================
``vllm``           ``vllm bench serve --save-result`` (and the older
                   ``benchmarks/benchmark_serving.py``): flat keys ``model_id``,
                   ``max_concurrency``, ``request_rate``, ``completed``,
                   ``total_input_tokens``, ``total_output_tokens``, ``output_throughput``,
                   ``mean_/median_/p99_ttft_ms``, ``..._tpot_ms``, ``..._itl_ms``
``aiperf``         AIPerf's ``profile_export_aiperf.json``: one stats block per metric
                   (``{"unit": "ms", "avg", "p50", "p90", "p99", ...}``) and ``input_config``
                   (``endpoint.model_names``, ``loadgen.concurrency`` / ``request_rate``)
``genai-perf``     GenAI-Perf's ``profile_export_genai_perf.json``: the same stats blocks and
                   a flat ``input_config`` (the command-line arguments: ``model``,
                   ``concurrency``, ``request_rate``)
``trtllm-bench``   ``trtllm-bench throughput --report_json``: ``engine``, ``machine``,
                   ``world_info`` (tp/pp/world size), ``request_info``, ``performance``
                   (``system_output_throughput_tok_s``) and, when streamed,
                   ``streaming_metrics`` (``ttft_percentiles``, ``tpot_percentiles``)
=================  ==========================================================================

The format is detected from the keys unless the block names it (``format:``). What a
file lacks (the GPU, the GPU count) comes from the block. Every problem is an
:class:`~llmsizer.base.errors.InputError` naming the file and what is missing.

Conventions (docs/measured.md explains each):

* per-user speed = 1000 / median TPOT (else mean TPOT, median ITL, mean ITL, or the
  per-user speed the tool reports); AIPerf's and GenAI-Perf's ``inter_token_latency`` is
  their per-request (latency - TTFT) / (output - 1), i.e. vLLM's TPOT;
* TTFT against the target: the 99th percentile (else p90, median, mean), the stricter
  reading of "first token within T";
* throughput per replica = the server's output tokens/s / (GPUs / GPUs per replica).

Arithmetic on these figures is written once in :mod:`llmsizer.model.calculations` (``BENCH_*``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..base.errors import InputError
from ..base.textsafe import clean_text, printable
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
    "FORMATS",
    "MAX_BENCH_BYTES",
    "BenchPoint",
    "Latency",
    "PointView",
    "choose",
    "detect_format",
    "gpu_names_conflict",
    "parse_bench",
    "read_bench_files",
    "view",
]

FORMATS = ("vllm", "aiperf", "genai-perf", "trtllm-bench")
MAX_BENCH_BYTES = 50_000_000  # vllm --save-detailed files carry per-request lists
MAX_RECORDS = 200
_LABELS = {"vllm": "vllm bench serve result", "aiperf": "AIPerf profile export",
           "genai-perf": "GenAI-Perf profile export", "trtllm-bench": "trtllm-bench report"}
_MS_PER_UNIT = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "secs": 1000.0, "seconds": 1000.0,
                "us": 0.001, "µs": 0.001, "ns": 0.000001}
_RATE_UNITS = frozenset({"tokens/sec", "tokens/s", "tok/s", "tokens/second", "tps",
                         "tokens/sec/user", "tokens/s/user"})
_LIMIT = 1e9


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# Every figure of a point has a physical range (docs/measured.md). A figure outside it is a
# broken file, and a tiny one is not harmless: a subnormal TPOT such as 5e-324 ms makes
# 1000 / TPOT infinite. 0 stays "not recorded" where a tool writes it for that (readers
# below turn it into None before a point is built).
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


# --- reading ---------------------------------------------------------------------------------


def _problem(rel: str, fmt: str | None, text: str) -> InputError:
    what = f" ({_LABELS[fmt]})" if fmt in _LABELS else ""
    return InputError(f"benchmark file {printable(rel)!r}{what}: {text}")


def _none_for_nan(_name: str) -> None:
    return None  # NaN / Infinity (a tool's mean over no data): "not recorded"


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
        data = json.loads(text, parse_constant=_none_for_nan)
    except json.JSONDecodeError as exc:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if len(lines) > 1 and all(ln.lstrip().startswith("{") for ln in lines):
            data = []  # JSON lines (vllm --append-result): one record per line
            for n, line in enumerate(lines, start=1):
                try:
                    data.append(json.loads(line, parse_constant=_none_for_nan))
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


def parse_bench(records: Sequence[dict[str, Any]], rel: str, fmt: str | None = None
                ) -> list[BenchPoint]:
    """The points of one file's records (already JSON-decoded)."""
    out = []
    for n, data in enumerate(records, start=1):
        kind = fmt or detect_format(data)
        if kind is None:
            raise _problem(rel, None, "cannot tell which tool wrote it: expected the keys of a "
                           "vllm bench serve result (output_throughput), an AIPerf or GenAI-Perf "
                           "profile export (output_token_throughput) or a trtllm-bench report "
                           "(performance); or name it with `format:` in the measured block")
        where = rel if len(records) == 1 else f"{rel} (record {n})"
        reader = _READERS[kind]
        try:
            fields = reader(_Fields(data, where, kind))
            out.append(BenchPoint(file=rel, format=kind, record=n, records=len(records),
                                  **fields))
        except ValidationError as exc:  # a backstop: the readers check ranges by key
            raise _problem(where, kind, _out_of_range(exc)) from None
    return out


_KINDS = {"ttft_ms": "latency", "tpot_ms": "latency", "itl_ms": "latency",
          "output_tokens_per_s": "throughput", "tokens_per_s_per_user": "throughput",
          "concurrency": "concurrency", "request_rate": "request_rate",
          "requests": "requests", "input_tokens": "tokens", "output_tokens": "tokens"}


def _out_of_range(exc: ValidationError) -> str:
    """'tpot_ms.median is 5e-324 ms; allowed: 0.001 to 1e+08 ms (a physical range)'."""
    err = exc.errors()[0]
    loc = [str(p) for p in err.get("loc", ())]
    name = ".".join(loc) or "a figure"
    kind = _KINDS.get(loc[0]) if loc else None
    if kind is None:
        return f"{name}: {printable(str(err.get('msg', 'invalid'))[:80])}"
    lo, hi, unit = RANGES[kind]
    return (f"{name} is {_shown(err.get('input'))} {unit}; allowed: {lo:g} to {hi:g} {unit} "
            "(a physical range: is the figure in the unit the tool writes?)")


def detect_format(data: dict[str, Any]) -> str | None:
    """The tool that wrote ``data``, from its keys (``None`` when none matches)."""
    if isinstance(data.get("performance"), dict) and any(
            k in data for k in ("world_info", "request_info", "engine")):
        return "trtllm-bench"
    if "output_throughput" in data and any(k in data for k in (
            "completed", "mean_ttft_ms", "median_ttft_ms", "model_id", "total_output_tokens")):
        return "vllm"
    if isinstance(data.get("output_token_throughput"), dict):
        cfg = data.get("input_config")
        nested = isinstance(cfg, dict) and any(isinstance(cfg.get(k), dict)
                                               for k in ("endpoint", "loadgen"))
        if "aiperf_version" in data or "benchmark_id" in data or nested:
            return "aiperf"
        return "genai-perf"
    return None


class _Fields:
    """Typed access to one record, with errors that name the file and the key."""

    def __init__(self, data: dict[str, Any], rel: str, fmt: str) -> None:
        self.data = data
        self.rel = rel
        self.fmt = fmt

    def fail(self, text: str) -> InputError:
        return _problem(self.rel, self.fmt, text)

    def at(self, *path: str) -> Any:
        cur: Any = self.data
        for key in path:
            if not isinstance(cur, dict) or key not in cur:
                return None
            cur = cur[key]
        return cur

    def number(self, *path: str, positive: bool = False, required: bool = False,
               kind: str | None = None) -> float | None:
        value = self.at(*path)
        name = ".".join(path)
        if value is None or (isinstance(value, str) and value.strip().lower() in ("inf", "")):
            if required:
                raise self.fail(f"lacks {name!r}, the figure llmsizer sizes from; is this the "
                                "file the tool wrote?")
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(f"{name!r} must be a number (found {_shown(value)})")
        x = float(value)
        if kind is not None and math.isfinite(x) and x > 0:
            self.in_range(name, x, kind)
        if not math.isfinite(x) or x < 0 or x > _LIMIT or (positive and x == 0):
            if positive and x == 0 and not required:
                return None
            raise self.fail(f"{name!r} must be a {'positive ' if positive else ''}number up to "
                            f"{_LIMIT:.0e} (found {_shown(value)})")
        return x

    def in_range(self, name: str, x: float, kind: str) -> None:
        lo, hi, unit = RANGES[kind]
        if not lo <= x <= hi:
            raise self.fail(f"{name!r} is {_shown(x)} {unit}; allowed: {lo:g} to {hi:g} {unit} "
                            "(a physical range: is the figure in the unit the tool writes?)")

    def text(self, *path: str) -> str | None:
        value = self.at(*path)
        if isinstance(value, list) and value and isinstance(value[0], str):
            value = value[0]
        if not isinstance(value, str) or not value.strip():
            return None
        return clean_text(value).strip()[:200]

    def stats(self, *path: str) -> dict[str, Any] | None:
        block = self.at(*path)
        if block is None:
            return None
        if not isinstance(block, dict):
            raise self.fail(f"{'.'.join(path)!r} must be a stats object "
                            '({"unit": ..., "avg": ...})')
        return block

    def ms(self, block: dict[str, Any] | None, name: str) -> Latency:
        """A stats block of a latency in ms ({"unit": "ms", "avg", "p50", "p90", "p99"})."""
        if block is None:
            return Latency()
        unit = block.get("unit", "ms")
        factor = _MS_PER_UNIT.get(str(unit).strip().lower()) if isinstance(unit, str) else None
        if factor is None:
            raise self.fail(f"{name!r} is in {_shown(unit)}; llmsizer reads ms, s, us or ns")

        def conv(key: str) -> float | None:
            x = _stat(self, block, name, key)
            if not x:  # 0: not measured (a tool's mean over no streamed responses)
                return None
            ms = _f(evaluate(BENCH_TO_MS, {"value_given": x, "ms_per_unit_given": factor}))
            self.in_range(f"{name}.{key}", ms, "latency")
            return ms

        return Latency(mean=conv("avg"), median=conv("p50"), p90=conv("p90"), p99=conv("p99"))

    def rate(self, block: dict[str, Any] | None, name: str) -> float | None:
        if block is None:
            return None
        unit = block.get("unit")
        if isinstance(unit, str) and unit.strip().lower() not in _RATE_UNITS:
            raise self.fail(f"{name!r} is in {_shown(unit)}; llmsizer reads tokens/sec")
        return _stat(self, block, name, "avg")


def _stat(f: _Fields, block: dict[str, Any], name: str, key: str) -> float | None:
    value = block.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(float(value)) and 0 <= float(value) <= _LIMIT):
        raise f.fail(f"{name}.{key} must be a number from 0 to {_LIMIT:.0e} "
                     f"(found {_shown(value)})")
    return float(value)


def _f(x: float | str) -> float:
    if isinstance(x, str):  # pragma: no cover - the BENCH_* expressions are numeric
        raise TypeError(x)
    return x


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, int | float | str | bool) or value is None else (
        type(value).__name__)
    return printable(text if len(text) <= 40 else text[:37] + "...")


def _mean(f: _Fields, total: str, count: str) -> float | None:
    t, n = f.number(total), f.number(count, positive=True)
    if t is None or n is None:
        return None
    return _f(evaluate(BENCH_MEAN, {"total_given": t, "count_given": n}))


def _whole(f: _Fields, *path: str) -> int | None:
    x = f.number(*path, positive=True)
    if x is None:
        return None
    if x != int(x) or x > 100_000:
        raise f.fail(f"{'.'.join(path)!r} must be a whole number of GPUs (found {x:g})")
    return int(x)


def _vllm(f: _Fields) -> dict[str, Any]:
    def lat(metric: str) -> Latency:
        # 0 means not measured (older versions wrote the mean of nothing as 0 when the
        # backend did not stream): positive=True reads it as absent.
        def get(stat: str) -> float | None:
            return f.number(f"{stat}_{metric}_ms", positive=True, kind="latency")

        return Latency(mean=get("mean"), median=get("median"), p90=get("p90"), p99=get("p99"))

    rate = f.at("request_rate")
    return {
        "model": f.text("model_id") or f.text("model"),
        "concurrency": f.number("max_concurrency", positive=True),
        "request_rate": f.number("request_rate", positive=True) if rate != "inf" else None,
        "requests": f.number("completed"),
        "input_tokens": _mean(f, "total_input_tokens", "completed"),
        "output_tokens": _mean(f, "total_output_tokens", "completed"),
        "output_tokens_per_s": f.number("output_throughput", positive=True, required=True,
                                        kind="throughput"),
        "ttft_ms": lat("ttft"), "tpot_ms": lat("tpot"), "itl_ms": lat("itl"),
    }


def _profile_export(f: _Fields, aiperf: bool) -> dict[str, Any]:
    throughput = f.rate(f.stats("output_token_throughput"), "output_token_throughput")
    if throughput is None or throughput <= 0:
        raise f.fail("lacks a positive 'output_token_throughput.avg', the figure llmsizer sizes "
                     "from; is this the profile export the tool wrote?")
    f.in_range("output_token_throughput.avg", throughput, "throughput")
    if aiperf:
        model = f.text("input_config", "endpoint", "model_names") or f.text(
            "input_config", "model_names")
        concurrency = f.number("input_config", "loadgen", "concurrency", positive=True)
        rate = f.number("input_config", "loadgen", "request_rate", positive=True)
        gpu_name = _telemetry_gpu(f)
    else:
        model = f.text("input_config", "model") or f.text("input_config", "model_names")
        concurrency = f.number("input_config", "concurrency", positive=True)
        rate = f.number("input_config", "request_rate", positive=True)
        gpu_name = None
    requests = f.stats("request_count")
    per_user = f.rate(f.stats("output_token_throughput_per_user"),
                      "output_token_throughput_per_user")
    if per_user:
        f.in_range("output_token_throughput_per_user.avg", per_user, "throughput")
    return {
        "model": model, "concurrency": concurrency,
        "request_rate": rate if concurrency is None else None,
        "requests": _stat(f, requests, "request_count", "avg") if requests else None,
        "input_tokens": _stat(f, f.stats("input_sequence_length") or {}, "input_sequence_length",
                              "avg"),
        "output_tokens": _stat(f, f.stats("output_sequence_length") or {},
                               "output_sequence_length", "avg"),
        "output_tokens_per_s": throughput,
        "tokens_per_s_per_user": per_user or None,
        "speed_note": "output tokens/s per user as the tool reports it",
        "ttft_ms": f.ms(f.stats("time_to_first_token"), "time_to_first_token"),
        # Their inter_token_latency is per request (latency - TTFT) / (output - 1): vLLM's TPOT.
        "tpot_ms": f.ms(f.stats("inter_token_latency"), "inter_token_latency"),
        "gpu_name": gpu_name,
    }


def _telemetry_gpu(f: _Fields) -> str | None:
    endpoints = f.at("telemetry_data", "endpoints")
    if not isinstance(endpoints, dict):
        return None
    for ep in endpoints.values():
        gpus = ep.get("gpus") if isinstance(ep, dict) else None
        if isinstance(gpus, dict):
            for g in gpus.values():
                name = g.get("gpu_name") if isinstance(g, dict) else None
                if isinstance(name, str) and name.strip():
                    return clean_text(name).strip()[:200]
    return None


def _trtllm(f: _Fields) -> dict[str, Any]:
    throughput = f.number("performance", "system_output_throughput_tok_s", positive=True,
                          kind="throughput")
    if throughput is None:
        throughput = f.number("performance", "output_throughput_tok_s", positive=True,
                              required=True, kind="throughput")

    def pct(block: str) -> Latency:
        def get(key: str) -> float | None:
            return f.number("streaming_metrics", block, key, positive=True, kind="latency")

        return Latency(mean=get("average"), median=get("p50"), p90=get("p90"), p99=get("p99"))

    ttft, tpot = pct("ttft_percentiles"), pct("tpot_percentiles")
    if ttft.mean is None:
        ttft = ttft.model_copy(update={"mean": f.number("streaming_metrics", "avg_ttft_ms",
                                                        positive=True, kind="latency")})
    if tpot.mean is None:
        tpot = tpot.model_copy(update={"mean": f.number("streaming_metrics", "avg_tpot_ms",
                                                        positive=True, kind="latency")})
    speed = f.number("streaming_metrics", "token_output_speed_tok_s", positive=True,
                     kind="throughput")
    note = "per-user output speed as trtllm-bench reports it"
    if speed is None:
        speed = f.number("performance", "output_throughput_per_user_tok_s", positive=True,
                         kind="throughput")
        note = "per-user output throughput including the first token (trtllm-bench, not streamed)"
    return {
        "model": f.text("engine", "model"),
        "concurrency": f.number("request_info", "avg_num_concurrent_requests", positive=True),
        "requests": f.number("request_info", "num_requests"),
        "input_tokens": f.number("request_info", "avg_input_length"),
        "output_tokens": f.number("request_info", "avg_output_length"),
        "output_tokens_per_s": throughput,
        "tokens_per_s_per_user": speed, "speed_note": note,
        "ttft_ms": ttft, "tpot_ms": tpot,
        "gpu_name": f.text("machine", "name"),
        "gpu_count": _whole(f, "world_info", "world_size"),
        "tp": _whole(f, "world_info", "tp_size"), "pp": _whole(f, "world_info", "pp_size"),
    }


_READERS = {
    "vllm": _vllm,
    "aiperf": lambda f: _profile_export(f, aiperf=True),
    "genai-perf": lambda f: _profile_export(f, aiperf=False),
    "trtllm-bench": _trtllm,
}


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
