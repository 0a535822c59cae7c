"""The plan's bill of materials (issue 22, item 6): one line per node group of the plan and
per retrieval workload's own nodes, then the account's racks, power, switches and storage.
Every figure is a BOM calculation of :mod:`llmsizer.model.calculations.bom`, evaluated here on
the plan's counts and the platforms' rack and network facts (catalogs/infrastructure.yaml);
this module does no arithmetic of its own.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping, Sequence

from ..model.calculations import (
    BOM_LINE_CALCULATIONS,
    BOM_PARAMETERS,
    BOM_TOTAL_AGGREGATES,
    BOM_TOTAL_CALCULATIONS,
    POOL_REPLICA_SPANS_NODES,
    POOL_WEIGHTS_STORED_GB,
    PRICE_IN_ACCOUNT_CURRENCY,
    fold_values,
    stated_product,
)
from ..model.catalog import Catalog
from ..model.expr import Value, evaluate
from .results import (
    BillOfMaterials,
    BomLine,
    BomParameter,
    NodeGroup,
    Plan,
    RetrievalWorkloadResult,
    WorkloadResult,
)

__all__ = ["bill_of_materials", "evaluate_bom", "pool_envs"]

NVAIE = "nvidia_ai_enterprise_per_gpu_year"  # a USD price: shown in the account's currency


def _num(v: Value) -> float:
    assert isinstance(v, float)
    return v


def pool_envs(g: NodeGroup, plan: Plan, workloads: Sequence[WorkloadResult],
              acct: Mapping[str, float]) -> list[Mapping[str, Value]]:
    """Each pool of node group ``g`` read on its first member's option (the pool's option
    values are the same for every member)."""
    envs: list[Mapping[str, Value]] = []
    for pid in g.pools:
        p = next(p for p in plan.pools if p.id == pid)
        w = workloads[p.workload_indices[0]]
        o = next(o for o in w.options if o.id == p.option)
        envs.append(ChainMap(o.values, w.inputs, acct))  # type: ignore[arg-type]
    return envs


def _line(cat: Catalog, lid: str, platform: str, gpu: str,
          facts: dict[str, float]) -> BomLine:
    assert cat.infrastructure is not None
    rack = cat.infrastructure.platforms[platform]
    plat = cat.platforms[platform]
    values = {"line_rack_units_per_node": rack.rack_units,
              "line_frontend_nics_per_node": float(rack.frontend_nics),
              "line_frontend_gbps": rack.frontend_gbps,
              "line_fabric_nics_per_node": float(rack.fabric_nics),
              "line_fabric_gbps": rack.fabric_gbps, **facts}
    return BomLine(id=lid, platform=platform, platform_name=plat.name, vendor=plat.vendor,
                   gpu=gpu, gpu_name=cat.gpus[gpu].name if gpu in cat.gpus else gpu,
                   estimate=rack.estimate, source=rack.source, values=values)


def evaluate_bom(lines: Sequence[dict[str, float]], params: Mapping[str, float],
                 acct: Mapping[str, float]) -> dict[str, float]:
    """The BOM calculations: each line's (added to its ``lines`` dict, which holds the line's
    facts) and the account's totals (returned), over ``params`` (BOM_PARAMETERS) and the
    account inputs ``acct`` (PUE)."""
    for line in lines:
        scope: ChainMap[str, Value] = ChainMap(line, params, acct)  # type: ignore[arg-type]
        for c in BOM_LINE_CALCULATIONS:
            line[c.name] = _num(evaluate(c.expr, scope))
    totals: dict[str, float] = {}
    scope = ChainMap(totals, params, acct)  # type: ignore[arg-type]
    for a in BOM_TOTAL_AGGREGATES:
        totals[a.name] = fold_values(a.fn, [_num(evaluate(a.member, dict(line)))
                                            for line in lines])
    for c in BOM_TOTAL_CALCULATIONS:
        totals[c.name] = _num(evaluate(c.expr, scope))
    return totals


def bill_of_materials(plan: Plan, workloads: Sequence[WorkloadResult],
                      retrieval: Sequence[RetrievalWorkloadResult], acct: Mapping[str, float],
                      cat: Catalog, usd_rate: float,
                      kw_per_rack: float | None = None) -> BillOfMaterials:
    """The BOM of ``plan`` (its node groups, then its retrieval groups); ``usd_rate``: the
    account's currency per US dollar; ``kw_per_rack``: the account's rack power budget
    (None: the catalog's)."""
    if cat.infrastructure is None:
        return BillOfMaterials()
    defaults = cat.infrastructure.defaults
    nvaie = cat.prices.extras["software_per_gpu_year"]  # NVIDIA AI Enterprise's list price
    figures = [BomParameter(name=n, label=d.label, value=d.value, unit=d.unit,
                            source=d.source, estimate=d.estimate)
               for n in BOM_PARAMETERS if n != NVAIE for d in (defaults[n],)]
    if kw_per_rack is not None:  # the account's own data-centre figure
        figures = [f.model_copy(update={"value": kw_per_rack, "estimate": False,
                                        "source": "the customer's data centre (requirements)"})
                   if f.name == "kw_per_rack" else f for f in figures]
    figures.append(BomParameter(
        name=NVAIE, label="NVIDIA AI Enterprise, per GPU-year", unit="currency/GPU-year",
        value=stated_product(PRICE_IN_ACCOUNT_CURRENCY, {"usd_price": nvaie.value,
                                                          "usd_exchange_rate": usd_rate}),
        source=f"{nvaie.source} ({nvaie.date})", estimate=False))
    params = {f.name: f.value for f in figures}
    lines: list[BomLine] = []
    for g in plan.node_groups:
        pools = pool_envs(g, plan, workloads, acct)
        first = pools[0]
        lines.append(_line(cat, g.id, g.platform, g.gpu, {
            "line_nodes": float(g.nodes), "line_gpus": float(g.gpus_purchased),
            "line_node_power_kw": _num(first["node_power_kw"]),
            "line_replica_spans_nodes": fold_values(
                "MAX", [_num(evaluate(POOL_REPLICA_SPANS_NODES, e)) for e in pools]),
            "line_weights_gb": fold_values(
                "SUM", [_num(evaluate(POOL_WEIGHTS_STORED_GB, e)) for e in pools]),
            "line_capex": g.capex, "line_annual_software": g.values["annual_software"],
            "line_annual_support": g.values["annual_support"]}))
    by_name = {w.name: w for w in retrieval}
    for rg in plan.retrieval_groups:
        best = by_name[rg.workload].best
        assert best is not None
        v = best.values
        lines.append(_line(cat, rg.id, rg.platform, rg.gpu, {
            "line_nodes": float(rg.nodes), "line_gpus": float(rg.gpus_purchased),
            "line_node_power_kw": float(v["node_power_kw"]),
            "line_replica_spans_nodes": 0.0,  # one GPU per replica (sizing/retrieval.py)
            "line_weights_gb": float(v["encoder_weights_gb"]),
            "line_capex": rg.capex, "line_annual_software": float(v["annual_software"]),
            "line_annual_support": float(v["annual_support"])}))
    totals = evaluate_bom([ln.values for ln in lines], params, acct)
    return BillOfMaterials(
        lines=lines,
        parameters=figures,
        totals=totals)
