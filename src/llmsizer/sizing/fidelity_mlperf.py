"""MLPerf Inference rows in ``llmsizer fidelity`` (issue #21 item 6).

A published MLPerf LLM result states no prompt or output length (``isl``/``osl`` =
``dataset``) and, for Server and Interactive, no request rate: LoadGen sends Poisson arrivals
at the rate the submitter chose, and the run is valid only when the p99 time to first token
and the p99 time per output token stay within the scenario's limits. So:

- the lengths are the benchmark dataset's means (``catalogs/mlperf_datasets.yaml``, a source
  per figure): prompt and output tokens per request;
- an Offline row is the saturated throughput at those lengths (the ``offline`` regime);
- a Server / Interactive row is the largest request rate whose forward p99 TTFT
  (``ttft_p99_ms``, queueing.py) and p99 TPOT (``tpot_p99_from_mean_ms``) meet the
  limits, found by bisection over the rate with the forward formulas; tokens/s is then
  rate x mean output tokens (``rate_output_tokens_per_s``).

This module does no sizing arithmetic of its own: every number comes from the engine's
calculation list and benchmark figures, evaluated at the rate being tried.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Protocol

import yaml

from ..inputs.benchdata import BenchPoint
from ..model.calculations import FIGURE_EXPRS
from ..model.catalog import Catalog
from ..model.expr import Value, evaluate

# The benchmark name as MLPerf prints it, from the row's model label:
# "Llama-2-70B (MLPerf llama2-70b-interactive-99.9)" -> "llama2-70b-interactive-99.9".
_BENCHMARK = re.compile(r"\bMLPerf\s+([a-z0-9][a-z0-9.\-]*)", re.IGNORECASE)
_ACCURACY_SUFFIX = re.compile(r"-99(?:\.9)?$")

# Bisection stops when the bracket is this narrow relative to the rate: the tests check
# that the found rate meets the limits and 1.02 x it does not.
RATE_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Limits:
    """A scenario's p99 latency limits (ms)."""

    ttft_p99_ms: float
    tpot_p99_ms: float


@dataclass(frozen=True)
class MlperfDataset:
    """One benchmark's dataset means and latency limits per scenario."""

    name: str
    samples: int
    mean_prompt_tokens: float
    mean_output_tokens: float
    limits: Mapping[str, Limits]


@cache
def load_datasets() -> dict[str, MlperfDataset]:
    """The shipped ``mlperf_datasets.yaml`` (cached: immutable)."""
    path = resources.files("llmsizer.model") / "catalogs" / "mlperf_datasets.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))["mlperf_datasets"]
    return {
        name: MlperfDataset(
            name=name, samples=int(e["samples"]),
            mean_prompt_tokens=float(e["mean_prompt_tokens"]),
            mean_output_tokens=float(e["mean_output_tokens"]),
            limits={scen: Limits(float(v["ttft_p99_ms"]), float(v["tpot_p99_ms"]))
                    for scen, v in e["limits"].items()})
        for name, e in doc.items()}


def benchmark_name(raw: Mapping[str, str]) -> str | None:
    """The MLPerf benchmark a row names in its model label (None: not an MLPerf row)."""
    found = _BENCHMARK.search(raw.get("model", ""))
    return found.group(1).lower() if found else None


def dataset_of(raw: Mapping[str, str]) -> MlperfDataset | str:
    """The row's benchmark dataset, or why it has none in the catalog."""
    name = benchmark_name(raw)
    if name is None:
        return "the lengths are a dataset's, but the row names no MLPerf benchmark"
    key = _ACCURACY_SUFFIX.sub("", name).replace("-interactive", "")
    found = load_datasets().get(key)
    if found is None:
        return (f"MLPerf benchmark {name!r}: no dataset statistics in the catalog "
                f"(known: {', '.join(sorted(load_datasets()))})")
    return found


def dataset_lengths(raw: Mapping[str, str]) -> tuple[int, int] | str:
    """(prompt, output) tokens per request for a row whose lengths are ``dataset``."""
    found = dataset_of(raw)
    if isinstance(found, str):
        return found
    return round(found.mean_prompt_tokens), round(found.mean_output_tokens)


def limits_of(point: BenchPoint) -> Limits | str:
    """The p99 TTFT/TPOT limits of a Server / Interactive row's scenario."""
    found = dataset_of(point.raw)
    if isinstance(found, str):
        return found
    scenario = point.raw.get("scenario", "").strip().capitalize()
    limits = found.limits.get(scenario)
    if limits is None:
        return f"MLPerf {found.name} has no {scenario} latency limits in the catalog"
    return limits


def largest_rate(meets: Callable[[float], bool], high: float) -> float:
    """The largest rate in (0, high) for which ``meets`` holds, by bisection (``meets`` is
    taken to hold below some rate and fail above it: latency grows with load). 0 when it
    fails at every rate."""
    lo, hi = 0.0, high
    if meets(hi * (1 - RATE_TOLERANCE)):
        return hi * (1 - RATE_TOLERANCE)
    while hi - lo > RATE_TOLERANCE * hi:
        mid = (lo + hi) / 2
        if meets(mid):
            lo = mid
        else:
            hi = mid
    return lo


class RowLike(Protocol):
    """What :func:`server_rate` needs of fidelity's row evaluator."""

    catalog: Catalog
    replicas: float

    def env(self, **extra: float) -> dict[str, Value]: ...

    def open_env(self, rate: float, **extra: float) -> dict[str, Value]: ...


def _figure(name: str, env: Mapping[str, Value], **given: float) -> float:
    value = evaluate(FIGURE_EXPRS[name], {**env, **given})
    assert isinstance(value, float | int)
    return float(value)


def _num(env: Mapping[str, Value], name: str) -> float:
    value = env[name]
    assert isinstance(value, float | int)
    return float(value)


def env_at_rate(row: RowLike, rate: float, saturated: Mapping[str, Value]) -> dict[str, Value]:
    """The engine's inputs at ``rate`` requests/s per replica (Poisson arrivals: burstiness
    1), the batch by Little's law (``rate_batch_per_replica``)."""
    return row.open_env(rate, max_batch_per_replica=_figure("rate_batch_per_replica", saturated,
                                                            request_rate_given=rate))


def p99_latencies(env: Mapping[str, Value], catalog: Catalog) -> tuple[float, float]:
    """(p99 TTFT, p99 TPOT) in ms: the queueing term's percentile, and the TPOT at the batch
    a p99 request sees under Poisson arrivals times the measured p99/mean ratio
    (``tpot_p99_from_mean_ms``: each request's TPOT is a mean over its tokens)."""
    return (_num(env, "ttft_p99_ms"),
            _figure("tpot_p99_from_mean_ms", env,
                    tpot_p99_over_mean_given=catalog.constant("tpot_p99_over_mean")))


def meets_limits(env: Mapping[str, Value], limits: Limits, catalog: Catalog) -> bool:
    ttft, tpot = p99_latencies(env, catalog)
    return ttft <= limits.ttft_p99_ms and tpot <= limits.tpot_p99_ms


def server_rate(row: RowLike, limits: Limits) -> tuple[float, dict[str, Value]]:
    """(largest rate per replica meeting ``limits``, the engine's inputs there)."""
    saturated = row.env()
    capacity = _figure("served_rate_per_s", saturated, request_rate_given=float("inf"))

    def meets(rate: float) -> bool:
        return meets_limits(env_at_rate(row, rate, saturated), limits, row.catalog)

    rate = largest_rate(meets, capacity)
    return rate, env_at_rate(row, rate, saturated)


def server_output_tokens_per_s(row: RowLike, limits: Limits) -> tuple[float, dict[str, Value]]:
    """A Server / Interactive row's tokens/s: the largest rate meeting the limits x mean
    output tokens, over all the row's replicas."""
    rate, env = server_rate(row, limits)
    return _figure("rate_output_tokens_per_s", env, served_rate_given=rate,
                   replicas_given=row.replicas), env
