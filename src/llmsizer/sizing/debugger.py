"""The production debugger's numbers for a sized account: per recommended option, where
this deployment meets each symptom of the source article's Production Debugger ("GenAI
Physics, Capacity Planning, and Throughput Estimation"), from the calculation list
(:mod:`llmsizer.model.calculations.debugger`); the words are
:mod:`llmsizer.documents.proposal.debugger`'s. Also the roofline point of one configuration.

The option's values are re-evaluated with the first-token target the account states (or the
article's 2 s when it states none), so the TTFT limit exists for every workload.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.calculations import (
    DEBUG_LOW_UTILISATION_BATCH,
    DEBUG_MEMORY_LIMIT_USERS,
    DEBUG_OOM_CONTEXT_TOKENS,
    DEBUG_TTFT_LIMIT_USERS,
    LOW_UTILISATION,
    TTFT_WHEN_NO_TARGET_S,
    program,
)
from ..model.expr import Value, evaluate
from .results import Result

_TTFT_TARGETS = (("mean", "target_ttft_s"), ("p50", "target_ttft_p50_s"),
                 ("p90", "target_ttft_p90_s"), ("p95", "target_ttft_p95_s"),
                 ("p99", "target_ttft_p99_s"))


@dataclass(frozen=True)
class Figures:
    """One recommended option's edges, as the debugger states them."""

    workload: str
    option: str
    oom_context_tokens: float  # reserved context per request at which KV memory runs out
    planned_context_tokens: float
    ttft_limit_users: float  # concurrent users beyond which the first token is too slow
    memory_limit_users: float  # concurrent users whose KV cache fills the replicas
    ttft_target_s: float
    ttft_target_stated: bool
    # the first-token targets the account states, mean and percentiles: ("p99", 2.5)
    ttft_targets: tuple[tuple[str, float], ...]
    planned_users: float
    low_utilisation_batch: float  # batch per replica below which throughput < 40 % of its best
    planned_batch: float
    low_utilisation_share: float


def figures(result: Result) -> list[Figures]:
    """The debugger's figures for each workload's recommended option."""
    run = program()
    out = []
    for w in result.workloads:
        o = w.option(w.recommended)
        if o is None:
            continue
        env: dict[str, Value] = {**result.account_inputs, **w.inputs, **o.values}
        # a percentile target (ttft_p95_s, ttft_p99_s) bounds the batch as the mean does
        # (batch_by_ttft is the smallest of them): the article's 2 s only where none is stated
        targets = tuple((name, float(env.get(key, 0.0))) for name, key in _TTFT_TARGETS
                        if float(env.get(key, 0.0)) > 0)
        stated = bool(targets)
        if not stated:
            env["target_ttft_s"] = TTFT_WHEN_NO_TARGET_S
        run(env, result.tables)

        out.append(Figures(
            workload=w.name, option=o.id,
            oom_context_tokens=float(evaluate(DEBUG_OOM_CONTEXT_TOKENS, env)),
            planned_context_tokens=float(env["context_tokens"]),
            ttft_limit_users=float(evaluate(DEBUG_TTFT_LIMIT_USERS, env)),
            memory_limit_users=float(evaluate(DEBUG_MEMORY_LIMIT_USERS, env)),
            ttft_target_s=float(env["target_ttft_s"]), ttft_target_stated=stated,
            ttft_targets=targets,
            # the concurrency the load causes: a rate or a population states no users
            planned_users=float(env["concurrent_users"]),
            low_utilisation_batch=float(evaluate(DEBUG_LOW_UTILISATION_BATCH, env)),
            planned_batch=float(env["batch_per_replica"]),
            low_utilisation_share=LOW_UTILISATION))
    return out


@dataclass(frozen=True)
class Roofline:
    """One configuration's decode step against the GPU's two ceilings."""

    intensity_flop_per_byte: float
    achieved_tflops: float  # per GPU
    peak_tflops: float
    bandwidth_tb_s: float
    ridge_flop_per_byte: float
    roof: tuple[tuple[float, float], ...]  # (FLOP/B, TFLOP/s) along the ceilings


# intensities the roof is drawn at: 0.1 to 10,000 FLOP/B, four points a decade
_ROOF_X = tuple(10 ** (k / 4) for k in range(-4, 17))


def roofline(env: dict[str, Value]) -> Roofline:
    """The roofline point of an evaluated configuration (``estimate(..., with_env=env)``)."""
    from ..model.calculations import (
        ROOFLINE_ACHIEVED_TFLOPS,
        ROOFLINE_CEILING_TFLOPS,
        ROOFLINE_INTENSITY,
    )

    ridge = float(env["ridge_point_flop_per_byte"])
    xs = sorted({*_ROOF_X, ridge})
    roof = tuple((x, float(evaluate(ROOFLINE_CEILING_TFLOPS, {**env, "roofline_x": x})))
                 for x in xs)
    return Roofline(roof=roof,
        intensity_flop_per_byte=float(evaluate(ROOFLINE_INTENSITY, env)),
        achieved_tflops=float(evaluate(ROOFLINE_ACHIEVED_TFLOPS, env)),
        peak_tflops=float(env["peak_tflops"]), bandwidth_tb_s=float(env["gpu_bandwidth_tb_s"]),
        ridge_flop_per_byte=float(env["ridge_point_flop_per_byte"]))
