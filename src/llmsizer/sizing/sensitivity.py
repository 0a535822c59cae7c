"""The ranges around the recommendation: the model-confidence range of an option, the
sensitivity what-ifs (calculations.SCENARIOS re-evaluated with one input changed, for the
options and for the account plan), the cost per million tokens by load, and the account
totals with the retrieval node groups added. Every figure comes from
:mod:`llmsizer.model.calculations`; this module only sets inputs and collects. The prices
these rest on are :mod:`.costs`'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..model.calculations import (
    BREAKEVEN_LOADS,
    INPUTS,
    SCENARIOS,
    Scenario,
    applies,
    cloud_priced,
    fold_values,
    program,
)
from ..model.expr import Value, evaluate
from .costs import TIER_FALLBACK
from .plan import Evaluated, PlanChoice, evaluate_plan
from .results import (
    Confidence,
    Kept,
    Option,
    Result,
    RetrievalGroup,
    RetrievalWorkloadResult,
    ScenarioResult,
    WorkloadResult,
)

# ---- confidence ----------------------------------------------------------------------------


def confidence(option: Option, group: str) -> Confidence:
    v = option.values

    def f(name: str) -> float:
        x = v[name]
        assert isinstance(x, float)
        return x

    return Confidence(
        group=group, error_p10=f("confidence_p10"), error_p90=f("confidence_p90"),
        replica_output_tokens_per_s=f("replica_output_tokens_per_s"),
        replica_output_tokens_per_s_low=f("confidence_throughput_low"),
        replica_output_tokens_per_s_high=f("confidence_throughput_high"),
        gpus_purchased=int(f("gpus_purchased")),
        gpus_purchased_if_low=int(f("confidence_gpus_purchased_low_throughput")),
        gpus_purchased_if_high=int(f("confidence_gpus_purchased_high_throughput")))


# ---- sensitivity and break-even by load ----------------------------------------------------

_OPTION_INPUTS = tuple(i.name for i in INPUTS if i.scope == "option")
Tables = dict[str, dict[str, dict[str, float]]]


def _base_env(acct: dict[str, float], w: WorkloadResult, o: Option) -> dict[str, Value]:
    return {**acct, **w.inputs, **{k: o.values[k] for k in _OPTION_INPUTS}}


def tier_moves_price(tables: Tables, gpus: Iterable[str]) -> bool:
    """Whether a cloud-tier what-if changes the price or instance size of one of ``gpus``:
    not where the account prices every one itself (cloud_columns puts its own price in every
    tier), so the cloud-tier rows would all show the proposal's figure again."""
    for gid in gpus:
        row = tables["gpus"].get(gid)
        if row is None or any(row[column] != row[own] for column, own in TIER_FALLBACK.items()):
            return True
    return False


def _recommended_gpus(workloads: Sequence[WorkloadResult],
                      retrieval: Sequence[RetrievalWorkloadResult]) -> set[str]:
    return {w.best.gpu for w in workloads if w.best is not None} | {
        w.best.gpu for w in retrieval if w.best is not None}


def cloud_tiers_fixed(workloads: Sequence[WorkloadResult], tables: Tables,
                      retrieval: Sequence[RetrievalWorkloadResult]) -> bool:
    """Whether the sensitivity leaves out its cloud-tier rows (scenario_envs) because the
    account states its own cloud price for every GPU of the plan (tier_moves_price): the
    proposal's table and the workbook's Scenarios sheet say so under the rows."""
    gpus = _recommended_gpus(workloads, retrieval)
    return bool(gpus) and not tier_moves_price(tables, gpus)


def scenario_envs(workloads: Sequence[WorkloadResult], acct: dict[str, float],
                  tables: Tables, retrieval: Sequence[RetrievalWorkloadResult],
                  ) -> list[tuple[Scenario, list[tuple[int, dict[str, Value]]]]]:
    """Each scenario of calculations.SCENARIOS that applies to the account (its workloads
    state the input it changes: calculations.applies, with the embed and rerank workloads
    ``retrieval``) evaluated for every recommended option (the option is kept: the scenario
    asks what the same configuration would need): the whole calculation list per (1-based
    workload index, environment). The workbook's Scenarios sheet prints the same
    calculations as formulas and caches these values."""

    stated = [w.inputs for w in workloads if w.best is not None]
    stated_retrieval = [w.inputs for w in retrieval if w.best is not None]
    fixed = cloud_tiers_fixed(workloads, tables, retrieval)
    out = []
    for sc in SCENARIOS:
        if not applies(sc, stated, stated_retrieval):
            continue  # e.g. the rate rows of a load stated as concurrent users alone
        if sc.input == "cloud_tier_what_if" and fixed:
            continue  # the account's own cloud price in every tier: rows that all repeat
        envs: list[tuple[int, dict[str, Value]]] = []
        for k, w in enumerate(workloads, start=1):
            if w.best is None:
                continue
            env = _base_env(acct, w, w.best)
            env[sc.input] = evaluate(sc.value, env)
            program()(env, tables)
            envs.append((k, env))
        out.append((sc, envs))
    return out


def scenario_plans(workloads: Sequence[WorkloadResult], acct: dict[str, float],
                   tables: Tables, pools: Sequence[Sequence[int]],
                   retrieval: Sequence[RetrievalWorkloadResult],
                   ) -> list[tuple[Scenario, list[tuple[int, dict[str, Value]]], Evaluated]]:
    """Each scenario of the account plan: each workload keeps its recommended option, the
    pools keep their members (``pools``: 0-based workload indices), and the plan's formulas
    (plan.evaluate_plan) turn each scenario's option values into what is bought. With the
    option environments of :func:`scenario_envs`: the workbook's Scenarios sheet prints the
    same plan per scenario as formulas and caches these values."""

    out = []
    for sc, envs in scenario_envs(workloads, acct, tables, retrieval):
        if not envs:  # no workload has a recommendation: nothing to vary
            continue
        scen_acct = {**acct, sc.input: float(envs[0][1][sc.input])} if sc.input in acct else acct
        options: dict[int, Option] = {}
        members = list(workloads)
        for k, env in envs:
            w = workloads[k - 1]
            assert w.best is not None
            options[k - 1] = w.best.model_copy(update={"values": {
                name: env[name] for name in w.best.values}})
            if sc.input in w.inputs:
                members[k - 1] = w.model_copy(update={"inputs": {**w.inputs,
                                                                 sc.input: env[sc.input]}})
        kept = tuple(tuple(i for i in pool if i in options) for pool in pools)
        out.append((sc, envs, evaluate_plan(PlanChoice(options, tuple(p for p in kept if p)),
                                            members, scen_acct)))
    return out


ScenarioPlans = list[tuple[Scenario, list[tuple[int, dict[str, Value]]], Evaluated]]


def sensitivity(runs: ScenarioPlans,
                retrieval: Sequence[Sequence[RetrievalGroup]] = ()) -> list[ScenarioResult]:
    """The scenarios of the account plan (``runs``: :func:`scenario_plans`), as the results
    list them: the whole account, as its totals are, so each with the embed and rerank
    workloads' own node groups (``retrieval``: per run, retrieval.scenario_retrieval's:
    resized by the load and headroom rows, as proposed by the others)."""
    out = []
    for i, (sc, _envs, e) in enumerate(runs):
        groups = retrieval[i] if retrieval else ()
        total = with_retrieval(e.totals.__getitem__, groups)
        priced = cloud_priced([*((g.totals["annual_cost_cloud"], g.totals["gpus_used"])
                                 for g in e.groups),
                               *((g.annual_cost_cloud, float(g.cloud_gpus)) for g in groups)])
        out.append(ScenarioResult(
            name=sc.name, label=sc.label, change=sc.change, input=sc.input,
            gpus_purchased=int(total("gpus_purchased")), nodes=int(total("nodes")),
            capex=total("capex"), annual_cost_onprem=total("annual_cost_onprem"),
            annual_cost_cloud=total("annual_cost_cloud") if priced else None))
    return out


def keep_scenario_plans(r: Result, pools: Sequence[Sequence[int]], runs: ScenarioPlans) -> None:
    """Keep on ``r`` the scenario plans its sensitivity came from (``runs``, of ``pools``),
    so that the workbook's Scenarios sheet does not evaluate them again (~6 ms an account).
    They are kept with the inputs they came from: a copy of ``r`` with other workloads
    (language-model or retrieval), inputs, tables or pools (a model alternative, a re-read)
    recomputes them."""
    r._scenario_plans = Kept((r.workloads, r.account_inputs, r.tables, [list(p) for p in pools],
                              runs, r.retrieval))


def result_scenario_plans(r: Result) -> ScenarioPlans:
    """The scenario plans of ``r`` (:func:`scenario_plans`), computed once per Result."""
    pools = [p.workload_indices for p in r.plan.pools]
    kept = r._scenario_plans.value
    if (kept is not None and kept[0] is r.workloads and kept[1] is r.account_inputs
            and kept[2] is r.tables and kept[3] == pools and kept[5] is r.retrieval):
        return kept[4]  # type: ignore[no-any-return]
    return scenario_plans(r.workloads, r.account_inputs, r.tables, pools, r.retrieval)


def by_load(acct: dict[str, float], w: WorkloadResult,
            tables: Tables) -> list[dict[str, float]]:
    """Cost per million tokens (input + output) at each load of calculations.BREAKEVEN_LOADS
    for the recommended option: on-prem, cloud (rented always on) and the hosted API."""

    if w.best is None:
        return []
    rows = []
    for load in BREAKEVEN_LOADS:
        env = _base_env(acct, w, w.best)
        env["average_load"] = load
        program()(env, tables)
        rows.append({"load": load} | {k: float(env[k]) for k in (
            "cost_per_million_total_tokens_onprem", "cost_per_million_total_tokens_cloud",
            "cost_per_million_total_tokens_api", "annual_cost_onprem", "annual_cost_cloud",
            "annual_cost_api")})
    return rows


# Totals keys (engine._totals) and the retrieval group figure each adds.
# A hosted LLM API serves the generated tokens only: the retrieval servers are still run by
# the customer, so the API way's annual cost adds their on-premises cost (else a RAG account
# compared the API for part of the service with on-premises for all of it).
_TOTAL_FIGURES = {"gpus": "gpus_used", "gpus_used": "gpus_used",
                  "gpus_purchased": "gpus_purchased", "gpus_standby": "standby_gpus",
                  "nodes": "nodes", "capex": "capex",
                  "annual_cost_onprem": "annual_cost_onprem",
                  "annual_cost_cloud": "annual_cost_cloud",
                  "annual_cost_api": "annual_cost_onprem", "cloud_gpus_rented": "cloud_gpus"}


def with_retrieval(total: Callable[[str], float],
                   groups: Sequence[RetrievalGroup]) -> Callable[[str], float]:
    """The account totals with the retrieval node groups' counts and costs added."""
    def combined(key: str) -> float:
        figure = _TOTAL_FIGURES.get(key)
        if figure is None:
            return total(key)
        return fold_values("SUM", [total(key), *(float(getattr(g, figure)) for g in groups)])

    return combined
