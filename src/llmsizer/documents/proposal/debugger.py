"""The production debugger table (partial ``debugger.html.j2`` of the proposal, and the web
app's debugger): each symptom of the Production Debugger in "GenAI Physics, Capacity
Planning, and Throughput Estimation", its likely cause and action, and this deployment's
figure from :func:`llmsizer.sizing.debugger.figures`. Words only; no arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...sizing.debugger import Figures, figures
from ...sizing.results import Result
from .format import Formatter

ARTICLE = "GenAI Physics, Capacity Planning, and Throughput Estimation"


@dataclass(frozen=True)
class DebugRow:
    symptom: str
    cause: str
    action: str
    here: str  # this deployment's figure, in words


@dataclass(frozen=True)
class DebugTable:
    workload: str
    option: str
    rows: tuple[DebugRow, ...]


def _rows(d: Figures, fmt: Formatter) -> tuple[DebugRow, ...]:
    share = fmt.pct(d.low_utilisation_share)
    # a stated target in the words the requirements table uses: "the 2.5 s p99 target"
    named = " and ".join(fmt.seconds(x) + ("" if name == "mean" else f" {name}")
                         for name, x in d.ttft_targets)
    plural = "s" if len(d.ttft_targets) > 1 else ""
    slow, within = ((f"misses the {named} target{plural}", f"meets the {named} target{plural}")
                    if d.ttft_target_stated else
                    (f"takes longer than {fmt.seconds(d.ttft_target_s)} (the article's "
                     "threshold; no target stated)",
                     f"stays within {fmt.seconds(d.ttft_target_s)} (the article's threshold; "
                     "no target stated)"))
    return (
        DebugRow("Out of memory (OOM) crash, requests preempted",
                 "Batch × context exceeds the KV-cache budget",
                 "Cap the context (vLLM --max-model-len) or the batch (--max-num-seqs); an "
                 "FP8 KV cache takes half the memory of 16-bit",
                 # modelled limits to three figures (fmt.approx): "57,603 tokens" claimed a
                 # precision the memory reserve behind it does not have (review round 20)
                 f"Memory runs out at {fmt.approx(d.oom_context_tokens)} tokens per request "
                 f"with {fmt.count(d.planned_batch)} requests per replica (planned: "
                 f"{fmt.count(d.planned_context_tokens)} tokens)"),
        DebugRow("First token too slow",
                 "Prefill waits behind decode steps: too many sequences per replica",
                 "Lower the batch per replica or add replicas; enable prefix caching for "
                 "shared prompts",
                 (f"Beyond {fmt.approx(d.ttft_limit_users)} concurrent users the first token "
                  f"{slow}" if d.ttft_limit_users < d.memory_limit_users
                  else f"The first token {within} until memory is full, at "
                       f"{fmt.approx(d.memory_limit_users)} concurrent users")
                 + f" (planned: {fmt.count(d.planned_users)} users)"),
        DebugRow(f"Low GPU utilisation (under {share})",
                 "Too few sequences per replica to amortise reading the weights",
                 "Raise the batch (fewer, fuller replicas); check the engine batches "
                 "continuously, not statically",
                 (f"Below {fmt.count_of(d.low_utilisation_batch, 'sequence')} per replica a "
                  f"replica gives under {share} of its throughput at full batch"
                  if d.low_utilisation_batch > 1 else  # 'below 1 sequences' said nothing
                  f"Even one sequence per replica gives {share} or more of its throughput at "
                  "full batch")
                 + f" (planned: {fmt.count(d.planned_batch)})"),
        DebugRow("Good throughput but bad latency",
                 "The scheduler favours batching over fairness",
                 "Lower the engine's batch cap (max_num_seqs) towards the planned batch",
                 f"Planned batch: {fmt.count(d.planned_batch)} sequences per replica"),
    )


def debugger_tables(result: Result, fmt: Formatter) -> list[DebugTable]:
    return [DebugTable(d.workload, d.option, _rows(d, fmt)) for d in figures(result)]


def debugger_context(result: Result, fmt: Formatter) -> dict[str, Any]:
    """What ``partials/debugger.html.j2`` reads: ``debugger`` (one table per recommended
    workload) and ``debugger_article`` (the source's title)."""
    return {"debugger": debugger_tables(result, fmt), "debugger_article": ARTICLE}
