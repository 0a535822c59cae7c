"""Sizing from the customer's benchmark files: which measured point sizes the workload (the
highest throughput per replica among the points that meet its targets), and the note, refusal,
advice and warnings that explain the choice (docs/measured.md). Used by :mod:`.search`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..inputs.benchpoints import BenchPoint, PointView, choose, length_ratio, view
from ..inputs.schema_workload import Measured, Workload
from .results import MeasuredPoint

_TOOL = {"vllm": "vllm bench serve", "aiperf": "AIPerf", "genai-perf": "GenAI-Perf",
         "trtllm-bench": "trtllm-bench"}


@dataclass(frozen=True)
class Pick:
    """The point that sizes the workload and what explains it (the workload's measured note,
    its refusal and advice when no point meets the targets, the Measured sheet's rows)."""

    tokens_per_s_per_replica: float  # the chosen point's (or the closest one's when none meets)
    note: str
    failure: str  # '' when a point meets the targets
    advice: str
    points: list[MeasuredPoint]
    warnings: list[str]


def _targets_text(required: float, target_ttft_ms: float) -> str:
    parts = []
    if required > 0:
        parts.append(f"{required:,.1f} tok/s per user")
    if target_ttft_ms > 0:
        parts.append(f"first token within {target_ttft_ms:,.0f} ms")
    return " and ".join(parts) or "no latency target"


def _figures(v: PointView, gpus_per_replica: int) -> str:
    p = v.point
    text = (f"{p.output_tokens_per_s:,.0f} tok/s on {v.gpu_count} GPU"
            f"{'s' if v.gpu_count != 1 else ''} = {v.replicas:g} replica"
            f"{'s' if v.replicas != 1 else ''} of {gpus_per_replica}, so "
            f"{v.tokens_per_s_per_replica:,.0f} tok/s per replica")
    if v.tokens_per_s_per_user is not None:
        text += f"; {v.tokens_per_s_per_user:,.1f} tok/s per user ({v.speed_basis})"
    if v.ttft_ms is not None:
        text += f"; {v.ttft_basis} TTFT {v.ttft_ms:,.0f} ms"
    return text


def pick_point(w: Workload, m: Measured, points: Sequence[BenchPoint], required: float,
               target_ttft_ms: float) -> Pick:
    """The benchmark point that sizes the workload: the highest throughput per replica among
    the points that meet its per-user speed and TTFT targets (docs/measured.md)."""
    views = [view(p, m.gpus_per_replica, m.gpu_count, required, target_ttft_ms) for p in points]
    chosen, closest = choose(views)
    used = chosen or closest
    rows = [MeasuredPoint(
        file=v.point.file, format=v.point.format, label=v.point.label(), model=v.point.model,
        concurrency=v.point.concurrency, request_rate=v.point.request_rate,
        input_tokens=v.point.input_tokens, output_tokens=v.point.output_tokens,
        gpu_name=v.point.gpu_name, gpus=v.gpu_count, replicas=v.replicas,
        output_tokens_per_s=v.point.output_tokens_per_s,
        tokens_per_s_per_replica=v.tokens_per_s_per_replica,
        tokens_per_s_per_user=v.tokens_per_s_per_user, speed_basis=v.speed_basis,
        ttft_ms=v.ttft_ms, ttft_basis=v.ttft_basis, meets_targets=v.meets,
        chosen=v is chosen, problems=list(v.problems)) for v in views]
    targets = _targets_text(required, target_ttft_ms)
    warnings = _shape_warnings(w, used) if used is not None else []
    if used is None:  # pragma: no cover - a file always yields at least one point
        return Pick(0.0, "", "no benchmark points", "No benchmark points were read.", rows, [])
    p = used.point
    where = f"{_TOOL.get(p.format, p.format)}: {p.label()}" + (f", {p.model}" if p.model else "")
    if chosen is None:
        why = "; ".join(used.problems)
        failure = f"no benchmark point meets {targets}; closest: {p.label()} ({why})"
        advice = (f"No benchmark point meets the targets ({targets}). Closest: {p.label()}: "
                  f"{why}. Benchmark at a lower concurrency or request rate, relax the target, "
                  "or measure a faster configuration.")
        note = f"Measured ({where}): {_figures(used, m.gpus_per_replica)}. No point meets {targets}."
        return Pick(used.tokens_per_s_per_replica, note, failure, advice, rows, warnings)
    meeting = sum(1 for v in views if v.meets)
    if len(views) == 1:
        why = f"the only point, and it meets {targets}"
    else:
        why = (f"the highest throughput per replica of the {meeting} of {len(views)} points that "
               f"meet {targets}")
        others = [v for v in views if not v.meets][:3]
        if others:
            why += "; not met by " + "; ".join(
                f"{v.point.label()} ({', '.join(v.problems)})" for v in others)
    note = f"Measured ({where}): {_figures(chosen, m.gpus_per_replica)}. Used: {why}."
    return Pick(chosen.tokens_per_s_per_replica, note, "", "", rows, warnings)


def _shape_warnings(w: Workload, v: PointView) -> list[str]:
    """The benchmark's request shape against the workload's (beyond 25 % either way)."""
    out = []
    for what, bench, mine in (("prompts", v.point.input_tokens, w.prompt_tokens or 0),
                              ("outputs", v.point.output_tokens, w.output_tokens or 0)):
        ratio = length_ratio(bench, float(mine))
        if ratio is not None and bench is not None and (ratio > 1.25 or ratio < 0.8):
            out.append(f"the benchmark's {what} average {bench:,.0f} tokens, the workload's "
                       f"{mine:,} ({v.point.label()}): throughput and TTFT depend on these "
                       "lengths; benchmark the workload's own shape")
    return out
