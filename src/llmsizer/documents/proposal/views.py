"""The per-workload view of the PDF proposal: selections and labels, no arithmetic.

:class:`WorkloadView` (one per workload; nearly every section reads it) and the
:class:`OptionView` of an option with the limit that binds it. walkthrough.py assembles the
workload views; alternatives.py picks the options shown and groups the rejected ones."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from markupsafe import Markup

from ...model.catalog import Catalog
from ...model.names import platform_words
from ...sizing.results import Option, WorkloadResult

# Alternatives per workload in the lean proposal (`report --appendix` shows every GPU and
# platform): the best few are what a reader compares; each row costs layout time.
SHORTLIST = 5


@dataclass(frozen=True)
class OptionView:
    option: Option
    v: Mapping[str, float | str]
    gpu_name: str
    platform_name: str
    platform_short: str
    recommended: bool
    binding: str


@dataclass(frozen=True)
class RejectRow:
    gpu_name: str
    precision: str
    tps: str
    reason: str


@dataclass(frozen=True)
class RejectGroup:
    title: str
    count: int
    rows: tuple[RejectRow, ...]


@dataclass(frozen=True)
class NotChosen:
    """Why the table's first row (the cheapest configuration for this workload alone) is
    not the recommendation: the plan puts the workload on nodes it shares with others
    (``shared_with``), or the row costs the same and a tie rule decides (``equal_cost``).
    Costs are the way the account runs it (``rented``: the cloud's per year, as its options
    are ranked; else on-premises)."""

    row: OptionView
    recommended: OptionView
    shared_with: tuple[str, ...]
    equal_cost: bool
    row_cost: float = 0.0
    recommended_cost: float = 0.0
    rented: bool = False


@dataclass(frozen=True)
class WorkloadView:
    index: int
    anchor: str
    w: WorkloadResult
    best: OptionView | None
    demand: Mapping[str, float | str]  # workload-level values (same in every option)
    alternatives: tuple[OptionView, ...]
    # why the cheapest row alone is not the recommendation (alternatives.not_chosen)
    not_chosen: NotChosen | None
    # GPUs left out of the table as impractical: (name, fewest GPUs bought)
    impractical: tuple[tuple[str, int], ...]
    more_feasible: int
    feasible_count: int
    rejected: tuple[RejectGroup, ...]
    rejected_count: int
    throughput_chart: Markup | None
    # the curve at batch 1 (one user alone), as the chart draws it; None when infeasible
    one_user: Mapping[str, float] | None
    max_context: int | None
    model_source: str
    load_sentence: str  # how the stated load became a concurrency, one sentence
    # what more streams would save (streams_sentence); '' where the streams do not bind
    streams_sentence: str = ""
    # its share of the plan (plan.pools[].shares, WORKLOAD_SHARE_CALCULATIONS); {} outside it
    share: Mapping[str, float] = field(default_factory=dict)
    # the recommendation's values with the plan's shares in place of the costs and counts
    # sized alone (plan_capex -> capex, ...): what the costs section prints per workload
    costs: Mapping[str, float | str] = field(default_factory=dict)
    # why no option is recommended (the sizing names its nearest option in words); '' when
    # one is
    advice: str = ""

    @property
    def shortlist(self) -> tuple[OptionView, ...]:
        """The lean proposal's alternatives: the first SHORTLIST rows, and the recommendation
        where it ranks below them (the workbook's Options sheet lists every option)."""
        top = self.alternatives[:SHORTLIST]
        return top + tuple(a for a in self.alternatives[SHORTLIST:] if a.recommended)


def load_sentence(w: WorkloadResult, demand: Mapping[str, float | str], count: Callable[[float], str],
                  decimal: Callable[[float, int], str]) -> str:
    """How the stated load became the concurrency the sizing used, in one sentence."""
    users = count(as_number(demand, "concurrent_users")) if demand else "—"
    if not demand or as_number(demand, "peak_request_rate_per_s") <= 0:
        return f"The load is stated as {users} users generating at the same time at peak."
    i = w.inputs
    rate = decimal(as_number(demand, "peak_request_rate_per_s"), 1)
    stated = (f"{count(i['named_users'])} users × {i['requests_per_user_per_hour']:g} "
              f"requests an hour × {i['peak_to_average']:g} in the busiest hour = "
              f"{rate} requests/s at peak" if i.get("named_users", 0) > 0 else
              f"{rate} requests/s arrive at peak")
    last = decimal(as_number(demand, "request_time_at_load_s"), 1)
    return (f"{stated}; each request lasts about {last} s (first token plus the answer at the "
            f"speed this load leaves), so by Little's law (users at the same time = arrivals "
            f"per second × seconds each) {users} users are served at the same time.")


def streams_sentence(v: Mapping[str, float | str], count: Callable[[float], str]) -> str:
    """What more streams would save, one sentence, where the stated streams bind (their
    replicas above those the load needs with the replicas full: replicas.py
    full_replicas_for_load, streams_to_fill); "" elsewhere. The PDF's workload callout, the
    command line under the workload's table and the web page read it alike."""
    full = as_number(v, "full_replicas_for_load") if "full_replicas_for_load" in v else 0.0
    if full <= 0 or as_number(v, "replicas_for_load") <= full:
        return ""
    # the replicas sized are told, not a batch per replica: batch_served is the streams over
    # the replicas before headroom, not over those bought
    return (f"Its {count(as_number(v, 'concurrent_users'))} streams are spread over "
            f"{count(as_number(v, 'replicas_for_load'))} replicas that could each run "
            f"{count(as_number(v, 'batch_per_replica'))} sequences; the pipeline running "
            f"{count(as_number(v, 'streams_to_fill'))} streams at once would need "
            f"{count(full)} {'replica' if full == 1 else 'replicas'} instead of "
            f"{count(as_number(v, 'replicas_for_load'))}.")


_BINDING = (
    ("batch_by_tpot", "the per-user speed target"),
    ("batch_by_ttft", "the time-to-first-token target"),
    ("batch_by_itl", "the inter-token latency target"),
    ("max_sequences_by_memory", "KV-cache memory"),
    ("max_batch_per_replica", "the serving engine's batch cap"),
)


_TARGET_LIMITS = ("batch_by_tpot", "batch_by_ttft", "batch_by_itl")


def as_number(v: Mapping[str, float | str], name: str) -> float:
    x = v[name]
    if isinstance(x, str):
        raise TypeError(f"{name} is text, not a number")
    return x


def _binding(v: Mapping[str, float | str], measured: bool) -> str:
    if measured:
        return "the customer's measured throughput"
    batch = as_number(v, "batch_per_replica")
    # An MoE batch held at the estimate (first_pass.py, third_solve.py: the experts read are
    # those of that batch) is set by what limited the first solve: read its copies. Held at
    # the third solve's batch, it is the first solve's smallest limit (the line followed it
    # down from the largest batch's experts).
    held = ("batch_by_first_estimate" in v and as_number(v, "batch_by_first_estimate") == batch
            and batch in (as_number(v, "batch_per_replica_first"),
                          as_number(v, "batch_experts_read")))
    first = "_first" if held else ""

    def at(name: str) -> float:
        return as_number(v, name + first if name + first in v else name)

    limit = batch if not held or as_number(v, "batch_per_replica_first") == batch else min(
        at(name) for name, _ in _BINDING)
    for name, label in _BINDING:
        if (name == "batch_by_ttft" and at("batch_by_e2e_p95") == limit
                < as_number(v, "max_batch_per_replica")):
            # folded into the first-token batch (decode.py), but not a first-token target;
            # below the engine cap only when a whole-answer target is stated
            return "the whole-answer target"
        # a target's batch at the engine's cap is the cap, not the target: with no
        # inter-token latency target, its batch is the cap itself (review 23: Adventure Works'
        # chat read "the inter-token latency target" sets 256 without one stated)
        if name in _TARGET_LIMITS and at(name) >= as_number(v, "max_batch_per_replica"):
            continue
        if at(name) == limit:
            return label
    return "the tightest limit"


def option_view(o: Option, w: WorkloadResult, cat: Catalog) -> OptionView:
    gpu = cat.gpus.get(o.gpu)
    plat = cat.platforms.get(o.platform)
    return OptionView(
        option=o, v=o.values, gpu_name=gpu.name if gpu else o.gpu,
        platform_name=plat.name if plat else o.platform,
        platform_short=platform_words(cat.platforms, o.platform),
        recommended=o.id == w.recommended, binding=_binding(o.values, w.mode == "measured"))
