"""The alternatives section (templates/partials/alternatives.html.j2): the best feasible
option per GPU and server platform, why a cheaper-looking row is not the recommendation,
the rejected options grouped by reason, and the account's memory-budget chart."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from ...model.calculations import IMPRACTICAL
from ...model.catalog import Catalog
from ...model.expr import evaluate
from ...sizing.results import Option, Plan, Result, WorkloadResult
from .format import CONTROL_CHARS, Formatter, chart_name, clip, precision_name, svg_image
from .views import NotChosen, OptionView, RejectGroup, RejectRow, WorkloadView, option_view

_REASONS = {
    "weights": "Model weights do not fit in the GPU memory of the TP group",
    "kv": "No room for one full-context request's KV cache",
    "speed": "Too slow even for a single user (bandwidth ceiling below the target)",
    "ttft": "Time to first token above the target even for a single request",
    "itl": "Inter-token latency above the target even for a single request",
    "measured": "No benchmark point meets the targets",
}


def _practical(o: Option, w: WorkloadResult) -> bool:
    """Not impractical (calculations' IMPRACTICAL: more than 3x the recommendation's GPUs)."""
    best = w.best
    return best is None or o.id == best.id or not evaluate(IMPRACTICAL, {
        "gpus_purchased": o.values["gpus_purchased"],
        "best_gpus_purchased": best.values["gpus_purchased"]})


def alternative_views(w: WorkloadResult, cat: Catalog) -> list[OptionView]:
    """The best feasible option per GPU and server platform, in the engine's rank order (by
    the cost of the account's way of running it, search.py ``_rank``: a rented account by
    cloud cost), and the recommendation wherever it ranks; impractical options
    (:func:`impractical`) left out."""
    seen: set[tuple[str, str]] = set()
    out = []
    for o in w.options:  # feasible options first, best first
        key = (o.gpu, o.platform)
        if o.feasible and _practical(o, w) and (key not in seen or o.id == w.recommended):
            seen.add(key)
            out.append(option_view(o, w, cat))
    return out


def shown_headrooms(result: Result, cat: Catalog) -> list[float]:
    """Every headroom the proposal shows: the plan's pools and node groups, at peak and with a
    node down, each workload's recommendation, and its alternatives (as rented where the
    account rents, deployment_context's way). The PDF, the terminal and the web page print
    them all to the one precision :meth:`.format.Formatter.headroom_digits` gives over this
    list (the university's pool read "26 %" in the PDF and "25.9%" in `llmsizer size`)."""
    d = result.deployment
    # deployment_context: no cost, no way recommended (the alternatives show the bought)
    alt = "rented_headroom" if d.annual_cost and d.recommended == "cloud" else "headroom_achieved"
    ways = ("headroom_achieved", "headroom_after_node_loss")
    return [*(float(getattr(p, k)) for p in result.plan.pools for k in ways),
            *(float(getattr(g, k)) for g in result.plan.node_groups for k in ways),
            *(float(a.v[alt]) for w in result.workloads for a in alternative_views(w, cat)),
            *(float(w.best.values[k]) for w in result.workloads if w.best for k in ways)]


def impractical(w: WorkloadResult, cat: Catalog) -> tuple[tuple[str, int], ...]:
    """(GPU name, fewest GPUs bought) for each GPU that meets the targets only with more than
    calculations' IMPRACTICAL_FACTOR x the recommendation's GPUs: "L40S would need 608 GPUs"."""
    shown = {o.gpu for o in w.options if o.feasible and _practical(o, w)}
    fewest: dict[str, int] = {}
    for o in w.options:
        if o.feasible and o.gpu not in shown:
            n = int(float(o.values["gpus_purchased"]))
            fewest[o.gpu] = min(fewest.get(o.gpu, n), n)
    return tuple((cat.gpus[g].name if g in cat.gpus else g, n) for g, n in fewest.items())


def not_chosen(w: WorkloadResult, index: int, plan: Plan, cat: Catalog,
               way: str = "on_prem") -> NotChosen | None:
    """Set when the cheapest row for the workload alone is not the plan's choice; its costs
    in the account's way (``way``: deployment.recommended; renting, the cloud's)."""
    rec, alone = w.best, w.option(w.dedicated)
    if rec is None or alone is None or rec.id == alone.id:
        return None
    cost = "annual_cost_cloud" if way == "cloud" else "annual_cost_onprem"
    pool_ids = {p.id for p in plan.pools if index in p.workload_indices}
    group = next((g for g in plan.node_groups if pool_ids & set(g.pools)), None)
    names = [n for p in plan.pools if group is not None and p.id in group.pools
             for i, n in zip(p.workload_indices, p.workloads, strict=True) if i != index]
    return NotChosen(row=option_view(alone, w, cat), recommended=option_view(rec, w, cat),
                     shared_with=tuple(dict.fromkeys(names)),
                     equal_cost=alone.values[cost] == rec.values[cost],
                     row_cost=float(alone.values[cost]), recommended_cost=float(rec.values[cost]),
                     rented=way == "cloud")


def _reason_title(o: Option) -> str:
    # "xpyd" (the nearest disaggregated pair of a platform where none met the targets): its
    # own reason, which names the platform, so the proposal's list says why
    title = _REASONS.get(o.reason_code, o.reason)
    return title[:1].upper() + title[1:]


def rejected_groups(w: WorkloadResult, cat: Catalog) -> list[RejectGroup]:
    groups: dict[str, dict[tuple[str, str, str], list[Option]]] = {}
    for o in w.options:
        if not o.feasible:
            groups.setdefault(_reason_title(o), {}).setdefault(
                (o.gpu, o.weight_precision, o.kv_precision), []).append(o)
    out = []
    for title, by_config in groups.items():
        rows = []
        for (gid, wp, kp), opts in by_config.items():
            opts = sorted(opts, key=lambda o: o.tp)
            gpu = cat.gpus.get(gid)
            # every platform carrying the GPU is tried: one TP list for them all
            rows.append(RejectRow(
                gpu_name=gpu.name if gpu else gid,
                precision=f"{precision_name(wp)} weights, {precision_name(kp)} KV",
                tps=", ".join(f"TP{tp}" for tp in sorted({o.tp for o in opts})),
                reason=opts[-1].reason))
        out.append(RejectGroup(title=title, count=sum(len(v) for v in by_config.values()),
                               rows=tuple(rows)))
    return out


def _precisions(o: OptionView) -> str:
    """A memory bar's precisions by their usual names: 'FP8', or 'FP8 · BF16 KV' where the KV
    cache differs from the weights (two bars of one GPU and TP never read alike)."""
    weights, kv = o.option.weight_precision, o.option.kv_precision
    kv_words = f" · {precision_name(kv)} KV" if kv != weights else ""
    return f"{precision_name(weights)}{kv_words}"


def memory_svg(views: Sequence[WorkloadView], fmt: Formatter) -> Markup | None:
    """One chart for the account: each recommended workload's options, the recommendation
    first, under the workload's name when there are several."""
    from .. import charts

    shown = [wv for wv in views if wv.best is not None]
    bars: list[charts.MemoryBar] = []
    for wv in shown:
        if len(shown) > 1:
            bars.append(charts.MemoryBar(label=clip(CONTROL_CHARS.sub("", wv.w.name), 56),
                                         segments={}, chosen=False))
        ranked = ([o for o in wv.alternatives if o.recommended]
                  + [o for o in wv.alternatives if not o.recommended])
        # one bar per GPU and configuration: a replica's memory does not depend on the server
        firsts: dict[tuple[str, str, str, int], OptionView] = {}
        for o in ranked:
            firsts.setdefault((o.option.gpu, o.option.weight_precision, o.option.kv_precision,
                               o.option.tp), o)
        options = list(firsts.values())
        bars += [charts.MemoryBar(
            label=f"{chart_name(o.gpu_name)}\n{_precisions(o)} · TP{o.option.tp}",
            segments=charts.memory_segments(o.option), chosen=o.recommended)
            for o in options[:8 if len(shown) == 1 else 5]]
    if not bars:
        return None
    return svg_image(charts.memory_chart(bars, fmt.gb), "Memory budget of one replica per option")
