"""Model alternatives (issue 22, item 8): a workload may name 2 to 4 models (``model: [a, b]``).

Each alternative is sized as the account's model for that workload, under the same load,
targets, hardware and policy (the whole account, so that shared pools and node groups count);
the plan uses the recommended one (:data:`RULE`). This module only runs the engine once per
alternative and compares the results; every figure it shows is one the engine computed.

Several workloads with alternatives are settled one after another, in file order: each is
compared with the earlier ones at their recommended model and the later ones at their first.
"""

from __future__ import annotations

from collections.abc import Callable

from ..inputs.loader import Loaded
from ..model.catalog import Catalog
from .deployment import embedded_requirements
from .results import ModelAlternative, ModelAlternatives, Result, SourceInfo

RULE = ("the cheapest per year that meets the targets; at equal cost, the one that buys fewer "
        "GPUs, then the larger model")


def has_alternatives(loaded: Loaded) -> bool:
    return any(isinstance(w.model, list) for w in loaded.req.workloads)


def _variant(loaded: Loaded, picks: dict[int, str]) -> Loaded:
    """The account with each listed workload sized with one model (``picks``: file index ->
    model)."""
    req = loaded.req
    workloads = [w.model_copy(update={"model": picks[i]}) if i in picks else w
                 for i, w in enumerate(req.workloads)]
    return loaded.model_copy(update={"req": req.model_copy(update={"workloads": workloads})})


def _row(result: Result, index: int, name: str, loaded: Loaded, catalog: Catalog,
         ) -> ModelAlternative:
    w = result.workloads[index]
    m = loaded.models[name]
    o = w.best
    way = result.deployment.recommended
    annual = result.deployment.annual_cost.get(way, result.totals.annual_cost_onprem)

    def value(key: str) -> float | None:
        return float(o.values[key]) if o is not None else None

    return ModelAlternative(
        model=name, model_name=m.name, params_total=m.params_total,
        params_active=m.params_active, chosen=False, meets_targets=o is not None,
        gpu=o.gpu if o else None, gpu_name=catalog.gpus[o.gpu].name if o else None,
        tp=o.tp if o else None, weight_precision=o.weight_precision if o else None,
        kv_precision=o.kv_precision if o else None, weights_gb=value("weights_gb"),
        tokens_per_s_per_user=value("tokens_per_s_per_user"), ttft_ms=value("ttft_ms"),
        gpus_purchased=result.totals.gpus_purchased, gpus_used=result.totals.gpus_used,
        capex=result.totals.capex, annual_cost=annual, way=way,
        cost_per_million_tokens=result.totals.cost_per_million_tokens_onprem)


def rank_key(row: ModelAlternative) -> tuple[bool, float, int, float]:
    """:data:`RULE` as a sort key (cost to the whole currency unit: cents are no tie-breaker)."""
    return (not row.meets_targets, round(row.annual_cost), row.gpus_purchased, -row.params_total)


def compare(loaded: Loaded, catalog: Catalog, size_one: Callable[[Loaded], Result]) -> Result:
    """Size every alternative; the result of the recommended ones, with the comparison."""
    req = loaded.req
    picks = {i: w.models[0] for i, w in enumerate(req.workloads) if isinstance(w.model, list)}
    sized: dict[tuple[tuple[int, str], ...], Result] = {}

    def run(p: dict[int, str]) -> Result:
        key = tuple(sorted(p.items()))
        if key not in sized:
            sized[key] = size_one(_variant(loaded, p))
        return sized[key]

    generating = [i for i, w in enumerate(req.workloads) if w.kind == "generate"]
    tables: list[ModelAlternatives] = []
    for i in sorted(picks):
        index = generating.index(i)
        rows = [_row(run({**picks, i: name}), index, name, loaded, catalog)
                for name in req.workloads[i].models]
        meeting = [r for r in rows if r.meets_targets]
        # none meets the targets: the first listed carries the advice (no cheapest to pick)
        best = min(meeting, key=rank_key) if meeting else rows[0]
        picks[i] = best.model
        tables.append(ModelAlternatives(
            workload=req.workloads[i].name, workload_index=index, rule=RULE,
            alternatives=[r.model_copy(update={"chosen": r is best}) for r in rows]))
    final = run(picks)
    # The result is sized again from what the customer asked (the workbook embeds it): the
    # alternatives, not the one recommended.
    source = final.source or SourceInfo(requirements={})
    return final.model_copy(update={
        "model_alternatives": tables,
        "source": source.model_copy(update={"requirements": embedded_requirements(req)})})
