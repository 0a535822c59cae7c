"""The walk-through (templates/partials/walkthrough.html.j2, and measured_points.html.j2
that it includes): each workload's :class:`~.views.WorkloadView`, assembled here because the
walk-through reads the most of it (the engine's curve over batch sizes and the throughput
chart, the single-user speed, the model's context limit); the other sections read it too."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from markupsafe import Markup

from ...model.catalog import Catalog
from ...sizing.engine import curve
from ...sizing.results import Result
from .alternatives import alternative_views, impractical, not_chosen, rejected_groups
from .format import Formatter, catalog_note, proposal_words, svg_image
from .views import (
    OptionView,
    WorkloadView,
    as_number,
    load_sentence,
    option_view,
    streams_sentence,
)


def _batches(upper: float) -> list[int]:
    import numpy as np

    return sorted({int(b) for b in np.linspace(1, max(upper, 1), 48).round()} | {1})


def _curve_points(result: Result, index: int, best: OptionView) -> list[dict[str, float]]:
    """The engine's figures over the batch sizes the throughput chart shows (batch 1 first:
    the single-user speed the walk-through quotes is this curve's first point)."""
    v = best.v
    upper = min(as_number(v, "max_sequences_by_memory"), as_number(v, "max_batch_per_replica"))
    batches = sorted(set(_batches(upper)) | {int(as_number(v, "batch_per_replica"))})
    # the curve through the batch at peak too, where the chart's per-user dot sits (a mean
    # batch such as 9.71: the whole batches either side of it)
    served = as_number(v, "batch_served")
    batches = sorted(set(batches) | {max(1, math.floor(served)), max(1, math.ceil(served))})
    return curve(result, index, best.option.id, batches)


def _throughput_svg(points: Sequence[Mapping[str, float]], best: OptionView,
                    fmt: Formatter) -> Markup:
    from .. import charts

    v = best.v
    upper = min(as_number(v, "max_sequences_by_memory"), as_number(v, "max_batch_per_replica"))
    caps = []
    if as_number(v, "max_batch_per_replica") == upper:
        caps.append((upper, "engine batch cap"))
    elif as_number(v, "max_sequences_by_memory") == upper:
        caps.append((upper, "KV cache full"))
    # each dot at the batch its figure is read at (the walk-through's words): the replica's
    # output at the batch limit, the per-user speed at the batch the stated load keeps
    chosen = {k: as_number(v, k) for k in ("batch_per_replica", "batch_served",
                                           "tokens_per_s_per_user",
                                           "replica_output_tokens_per_s")}
    svg = charts.throughput_chart(points, chosen, as_number(v, "required_tokens_per_s_per_user"),
                                  caps, fmt.tok_s, fmt.count, batch=fmt.batch)
    return svg_image(svg, "Throughput and per-user speed against batch")


def workload_view(result: Result, index: int, cat: Catalog, fmt: Formatter,
                  chart: bool = True) -> WorkloadView:
    w = result.workloads[index]
    best = option_view(w.best, w, cat) if w.best is not None else None
    alternatives = alternative_views(w, cat)
    feasible = [o for o in w.options if o.feasible]
    rejected = rejected_groups(w, cat)
    model = cat.models.get(w.model)
    source = w.best or (w.options[0] if w.options else None)
    demand: Mapping[str, float | str] = source.values if source else {}
    throughput_chart = None
    one_user: Mapping[str, float] | None = None
    if best is not None:
        points = _curve_points(result, index, best)
        one_user = points[0]
        if chart and w.mode != "measured":
            throughput_chart = _throughput_svg(points, best, fmt)
    shown_ids = {a.option.id for a in alternatives}
    pool = next((p for p in result.plan.pools if index in p.workload_indices and p.shares),
                None)
    share = pool.shares[pool.workload_indices.index(index)] if pool is not None else {}
    costs: dict[str, float | str] = dict(best.v) if best is not None else {}
    costs.update({k.removeprefix("plan_"): v for k, v in share.items()})
    # a share of a node group is rented at the group's price paid, for the instance size the
    # group rents (session 24, E's review: the shared plan's column read the catalog's price)
    group = next((g for g in result.plan.node_groups if pool is not None and pool.id in g.pools),
                 None)
    if group is not None and "cloud_instance_gpu_hour" in group.values:
        costs["cloud_instance_gpu_hour"] = group.values["cloud_instance_gpu_hour"]
    return WorkloadView(
        index=index, anchor=f"w{index}", w=w, best=best, demand=demand,
        alternatives=tuple(alternatives),
        not_chosen=not_chosen(w, index, result.plan, cat, result.deployment.recommended),
        impractical=impractical(w, cat),
        more_feasible=len([o for o in feasible if o.id not in shown_ids]),
        feasible_count=len(feasible), rejected=tuple(rejected),
        rejected_count=len([o for o in w.options if not o.feasible]),
        throughput_chart=throughput_chart, one_user=one_user,
        max_context=model.max_context if model else None,
        model_source=catalog_note(model.source) if model else "model config supplied with the requirements",
        load_sentence=load_sentence(w, demand, fmt.count, fmt.decimal), share=share,
        streams_sentence=streams_sentence(best.v, fmt.count) if best is not None else "",
        costs=costs, advice=proposal_words(w.advice or ""))
