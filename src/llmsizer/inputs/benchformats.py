"""Benchmark result records as measured points: what each tool writes, read into a
:class:`~.benchpoints.BenchPoint` (``measured: {file: ...}``, docs/measured.md).

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
Finding and decoding the files is :mod:`.benchfiles`; a point against a workload's targets,
:mod:`.benchpoints`. AIPerf's and GenAI-Perf's ``inter_token_latency`` is their per-request
(latency - TTFT) / (output - 1), i.e. vLLM's TPOT. Arithmetic on these figures is written
once in :mod:`llmsizer.model.calculations` (``BENCH_*``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from ..base.errors import InputError
from ..base.textsafe import clean_text, printable
from ..model.calculations import BENCH_MEAN, BENCH_TO_MS
from ..model.expr import evaluate
from .benchpoints import _LIMIT, RANGES, BenchPoint, Latency, _f
from .schema_words import said

__all__ = ["FORMATS", "detect_format", "parse_bench"]

FORMATS = ("vllm", "aiperf", "genai-perf", "trtllm-bench")
_LABELS = {"vllm": "vllm bench serve result", "aiperf": "AIPerf profile export",
           "genai-perf": "GenAI-Perf profile export", "trtllm-bench": "trtllm-bench report"}
_MS_PER_UNIT = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "secs": 1000.0, "seconds": 1000.0,
                "us": 0.001, "µs": 0.001, "ns": 0.000001}
_RATE_UNITS = frozenset({"tokens/sec", "tokens/s", "tok/s", "tokens/second", "tps",
                         "tokens/sec/user", "tokens/s/user"})


def _problem(rel: str, fmt: str | None, text: str) -> InputError:
    what = f" ({_LABELS[fmt]})" if fmt in _LABELS else ""
    return InputError(f"benchmark file {printable(rel)!r}{what}: {text}")


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
        return f"{name}: {printable(said(dict(err))[:80])}"
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
        try:
            x = float(value)
        except OverflowError:  # an integer past float range (records not from benchfiles)
            x = math.inf
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
