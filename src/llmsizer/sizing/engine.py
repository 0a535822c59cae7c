"""The engine: sizes every workload of an account (the option search is in :mod:`.search`)
and assembles the result: the account plan, totals, sensitivity, assumptions. Also
:func:`estimate` (one configuration, no targets) and :func:`curve` (an option's figures over
batch sizes). All sizing arithmetic is in :mod:`llmsizer.model.calculations`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

from ..base.version import __version__
from ..inputs.doubts import target_doubts
from ..inputs.loader import Loaded
from ..inputs.schema import Costs, Requirements
from ..model.calculations import (
    GROUP_OUTPUT_TOKENS_PER_S,
    PERCENTILE_TARGETS,
    TOTAL_COST_PER_MILLION_CLOUD,
    TOTAL_COST_PER_MILLION_ONPREM,
    TOTAL_COST_PER_MILLION_TOTAL_API,
    TOTAL_COST_PER_MILLION_TOTAL_CLOUD,
    TOTAL_COST_PER_MILLION_TOTAL_ONPREM,
    TOTAL_GPUS_IDLE,
    TOTAL_GPUS_SERVING,
    UNITS,
    cloud_priced,
    fold_values,
    program,
)
from ..model.catalog import Catalog, load_catalog
from ..model.expr import Expr, Value, evaluate
from . import costs, sensitivity
from .alternatives import compare, has_alternatives
from .bom import bill_of_materials
from .deployment import PLANNED_WAYS, decide, embedded_requirements, purchase_unpriced
from .evaluate import (
    Choice,
    Tables,
    account_inputs,
    build_tables,
    evaluate_choice,
    stack_constant,
    workload_inputs,
)
from .plan import (
    Evaluated,
    ThroughputRange,
    confidence_range,
    evaluate_plan,
    option_sums,
    plan_sums,
    to_plan,
)
from .plan_search import choose_plan
from .results import (
    AccountInfo,
    Assumption,
    InputWarning,
    Plan,
    Result,
    RetrievalGroup,
    RetrievalWorkloadResult,
    SourceInfo,
    Totals,
    WorkloadResult,
    slugify,
)
from .retrieval import (
    rag_first_token,
    retrieval_groups,
    scenario_changes_retrieval,
    scenario_idle,
    scenario_retrieval,
    share_idle_gpus,
    size_retrieval,
)
from .search import SearchMemo, calibration_gaps, derating, size_workload_ways


def assumptions(req: Requirements, catalog: Catalog, acct: dict[str, float],
                workloads: Sequence[WorkloadResult] = ()) -> list[Assumption]:
    """Every constant and default the sizing used, with its source: per-family constants
    (software-stack efficiency, model-error band) only for the families the recommended
    options use."""
    used = set()
    for w in workloads:
        o = w.best
        if o is not None:
            used.add(stack_constant(catalog, o.gpu))
        if w.confidence is not None and w.confidence.group != "measured":
            used.update({f"confidence_{w.confidence.group}_p10",
                         f"confidence_{w.confidence.group}_p90"})
    pol = req.policy
    overridden = {
        "mbu_weights": pol.mbu, "mbu_kv": pol.mbu, "mfu_decode_8bit": pol.mfu,
        "mfu_decode_16bit": pol.mfu, "mfu_prefill_8bit": pol.mfu, "mfu_prefill_16bit": pol.mfu,
        "mfu_decode_4bit": pol.mfu, "mfu_prefill_4bit": pol.mfu,
        "max_batch_per_replica": pol.max_batch_per_replica,
        "runtime_reserve_gb": pol.runtime_reserve_gb,
        "storage_read_gb_per_s": pol.storage_read_gb_per_s,
    }
    out = []
    for name, const in catalog.constants.items():
        if name.startswith(("trtllm_", "driver_", "llamacpp_", "tpot_p", "inferencex_",
                            "sglang_", "atom_")):
            continue  # fidelity-only (benchmark reproduction: engine profiles, harness settings)
        if name.startswith(("stack_efficiency_", "confidence_")) and name not in used:
            continue  # another GPU family's or error group's
        value = overridden.get(name)
        out.append(Assumption(
            name=name, value=float(value) if value is not None else const.value, unit=const.unit,
            source="account policy override" if value is not None else const.source))
    tier = req.costs.cloud_tier
    # From the value alone (not whether it was given): a re-read workbook restates defaults.
    asked = tier != Costs.model_fields["cloud_tier"].default
    out.append(Assumption(
        name="cloud_tier", value=f"{costs.tier_words(tier)} ({tier})", unit="tier",
        source=("account requirements (costs.cloud_tier)" if asked else
                "the default tier: an always-on service weighed against a multi-year purchase is rented "
                "under a one-year contract, the commonest term with current price evidence "
                "(SemiAnalysis H100 index); on-demand list prices are 2-3x higher and shown in "
                "the scenarios")
        + "; the cloud is priced as each offer sells: whole instances (e.g. 8 GPUs) or single "
          "GPUs where the provider rents them, in the cheapest of the offer's instance sizes "
          "that holds a replica (the instances rented in the price list)"))
    return out


def size(loaded: Loaded, catalog: Catalog | None = None) -> Result:
    """Size every workload of an account; a workload that lists alternative models is sized
    with each (:mod:`.alternatives`) and the plan uses the one recommended."""
    cat = catalog or load_catalog()
    if has_alternatives(loaded):
        return compare(loaded, cat, lambda one: _size_one(one, cat))
    return _size_one(loaded, cat)


def _size_one(loaded: Loaded, cat: Catalog) -> Result:
    """Size an account whose workloads each name one model."""
    req = loaded.req
    tables = build_tables(req, cat)
    acct = account_inputs(req, cat)
    memo = SearchMemo(req, cat)
    # the ways the plan is searched for: the account's, or for "cheapest" buying and renting
    ways = PLANNED_WAYS if req.policy.deployment == "cheapest" else (req.policy.deployment,)
    # each workload's options searched once, ranked (and its disaggregated pairs kept) per way
    sized = [size_workload_ways(req, w, loaded.models[w.model_id], cat, tables, acct,
                                loaded.bench.get(i, ()), memo, ways)
             for i, w in enumerate(req.workloads) if w.kind == "generate"]
    # embed and rerank workloads: sized by sizing/retrieval.py, node groups of their own,
    # per way (each GPU on the platform that ranks first in that way); a plan rented in the
    # cloud loses a rented instance with a node down (plan_node_loss.py)
    searched = [_planned(req, cat, tables, {**acct, "plan_rented": float(way == "cloud")}, way,
                         [s[n] for s in sized],
                         [size_retrieval(req, w, cat.embedders[w.model_id], cat, tables, acct,
                                         way=way)
                          for w in req.workloads if w.kind != "generate"])
                for n, way in enumerate(ways)]
    # the way whose plan costs least in that way (a tie: buying); a plan with a GPU without a
    # price in its way never wins (its figure leaves those GPUs out)
    pick = min(searched, key=lambda s: (s.own_cost is None, s.own_cost or 0.0,
                                        PLANNED_WAYS.index(s.way)))
    workloads, chosen_plan, plan, retrieval, rgroups, totals, dedicated, alone = (
        pick.workloads, pick.chosen, pick.plan, pick.retrieval, pick.rgroups, pick.totals,
        pick.dedicated, pick.alone)
    used = _used_ids(workloads)
    option_gpus = sorted(used["gpus"])  # the workbook's Catalog sheet lists them all
    rec_models = sorted({w.model for w in workloads if w.best is not None})
    # the plan as above (computed once), with the retrieval groups
    plan = plan.model_copy(update={"retrieval_groups": rgroups, "retrieval_groups_alone": alone,
                                   "rag_first_token": rag_first_token(req, workloads, retrieval)})
    deployment = decide(req, totals, purchase_unpriced(workloads, retrieval, plan))
    # a node down is a rented instance down where renting is recommended (the words of every
    # document follow the way recommended); a plan searched for another way is re-read so
    rented = deployment.recommended == "cloud"
    acct = {**acct, "plan_rented": float(rented)}
    if rented != (pick.way == "cloud"):
        again = to_plan(evaluate_plan(chosen_plan.choice, workloads, acct), workloads, acct)
        plan = plan.model_copy(update={"pools": again.pools, "node_groups": again.node_groups})
    runs = sensitivity.scenario_plans(workloads, acct, tables, chosen_plan.choice.pools, retrieval)
    result = Result(
        cloud_tier=req.costs.cloud_tier,
        prices=costs.prices_used(req, cat, option_gpus, rec_models, costs.instances_rented(
            *((g.gpu, g.values) for g in plan.node_groups),
            *((w.best.gpu, w.best.values) for w in retrieval
              if w.best is not None and not w.best.shares_with))),
        # a scenario that cannot move an embed or rerank group keeps them as proposed, as the
        # Scenarios sheet does (re-placed, a reranker on its own nodes moved onto the
        # embedder's: 18 GPUs where the sheet recalculated 34; tests/test_scenario_retrieval_s25)
        sensitivity=sensitivity.sensitivity(runs, [
            list(plan.retrieval_groups) if not scenario_changes_retrieval(sc, retrieval, acct)
            else [g for g, _ in scenario_retrieval(sc, retrieval,
                                                   scenario_idle(plan.node_groups, e),
                                                   acct, tables)]
            for sc, _envs, e in runs]),
        llmsizer_version=__version__,
        catalog_digest=cat.digest,
        account=AccountInfo(name=req.account.name, slug=slugify(req.account.name),
                            id=req.account.id, prepared_by=req.account.prepared_by,
                            currency=req.account.currency),
        usd_exchange_rate=req.costs.usd_exchange_rate or 1.0,
        account_inputs=acct,
        tables={name: {k: row for k, row in t.items() if k in used[name]}
                for name, t in tables.items()},
        workloads=workloads,
        retrieval=retrieval,
        plan=plan,
        bom=bill_of_materials(plan, workloads, retrieval, acct, cat,
                              req.costs.usd_exchange_rate or 1.0, req.costs.kw_per_rack),
        totals=totals,
        deployment=deployment,
        totals_dedicated=dedicated,
        assumptions=assumptions(req, cat, acct, workloads),
        units=dict(UNITS),
        input_warnings=[InputWarning(workload=d.name, key=d.key, text=d.text)
                        for d in target_doubts(req)],
        source=SourceInfo(
            requirements=embedded_requirements(req),
            models={k: m.model_dump(mode="json") for k, m in loaded.models.items()
                    if k not in cat.models},
            bench={str(i): list(p) for i, p in sorted(loaded.bench.items())}),
    )
    sensitivity.keep_scenario_plans(result, chosen_plan.choice.pools, runs)
    return result


class _Planned(NamedTuple):
    """The account planned for one way of running it (:func:`_planned`)."""

    way: str
    workloads: list[WorkloadResult]  # ranked for the way, the plan's options recommended
    chosen: Evaluated
    plan: Plan
    retrieval: list[RetrievalWorkloadResult]  # on the plan's idle GPUs where they fit
    rgroups: list[RetrievalGroup]
    totals: Totals
    dedicated: Totals  # each workload sized alone on its own first option
    own_cost: float | None  # the way's cost per year; None where a GPU has no price in it
    alone: list[RetrievalGroup]  # the retrieval workloads' groups before any shares a node


def _planned(req: Requirements, cat: Catalog, tables: Tables, acct: dict[str, float],
             way: str, workloads: list[WorkloadResult],
             retrieval: list[RetrievalWorkloadResult]) -> _Planned:
    """The plan searched for ``way`` (plan.py WAY_COST) over workloads (and embed and rerank
    workloads) ranked for it, and its totals."""
    alone = retrieval_groups(retrieval)  # before any shares the plan's nodes
    chosen = [w.best for w in workloads if w.best is not None]
    # the API comparison holds only when every recommended workload's model has an API price
    api_known = bool(chosen) and all(float(o.values["annual_cost_api"]) > 0 for o in chosen)
    dedicated = _totals(sensitivity.with_retrieval(option_sums(chosen), alone), api_known,
                        _unpriced([(o.gpu, float(o.values["annual_cost_cloud"]),
                                    float(o.values["gpus"])) for o in chosen], alone),
                        _unheld([(o.gpu, float(o.values["cloud_holds_replica"]))
                                 for o in chosen]))
    # The account plan (plan.py) chooses each workload's option: that is the recommendation.
    chosen_plan = choose_plan(workloads, acct, way=way)
    workloads = [w.model_copy(update={
        "dedicated": w.recommended,
        "recommended": chosen_plan.choice.options[i].id if i in chosen_plan.choice.options
        else None}) for i, w in enumerate(workloads)]
    plan = to_plan(chosen_plan, workloads, acct)
    # with the plan's node groups known, a retrieval workload may use their idle GPUs
    retrieval = share_idle_gpus(req, cat, tables, acct, retrieval, plan.node_groups, way)
    rgroups = retrieval_groups(retrieval)
    plan = _with_range(plan, confidence_range(chosen_plan, workloads, acct), rgroups)
    totals = _totals(sensitivity.with_retrieval(plan_sums(chosen_plan), rgroups), api_known,
                     _unpriced([(g.gpu, g.annual_cost_cloud, g.gpus_used)
                                for g in plan.node_groups], rgroups),
                     _unheld([(g.gpu, float(g.values.get("cloud_holds_replica", 1.0)))
                              for g in plan.node_groups]))
    own = totals.annual_cost_cloud if way == "cloud" else (
        None if purchase_unpriced(workloads, retrieval, plan) else totals.annual_cost_onprem)
    return _Planned(way, workloads, chosen_plan, plan, retrieval, rgroups, totals, dedicated,
                    own if own is not None and own > 0 else None, alone)


def _with_range(plan: Plan, ends: ThroughputRange | None,
                rgroups: Sequence[RetrievalGroup] = ()) -> Plan:
    """The plan with its GPUs bought and rented at both ends of the model's throughput error:
    the language-model servers' (plan.confidence_range) plus the GPUs the embedding and
    reranking servers buy, and rent themselves (retrieval_cloud_gpus), as sized, so that both
    ends count what the totals count (review round 19: a knowledge base read "18 GPUs if
    bought; 2-3 GPUs if throughput is off", the range leaving out the 16 GPUs of its retrieval
    servers; round 21: a rented plan had no range of GPUs rented)."""
    if ends is None:
        return plan

    def with_own(pair: tuple[int, int], own: float) -> tuple[int, int]:
        low, high = (int(fold_values("SUM", [float(n), own])) for n in pair)
        return low, high

    bought = with_own(ends.gpus_purchased,
                      fold_values("SUM", [float(g.gpus_purchased) for g in rgroups]))
    rented = with_own(ends.cloud_gpus_rented,
                      fold_values("SUM", [float(g.cloud_gpus) for g in rgroups]))
    return plan.model_copy(update={"gpus_purchased_if_throughput_low": bought[0],
                                   "gpus_purchased_if_throughput_high": bought[1],
                                   "cloud_gpus_rented_if_throughput_low": rented[0],
                                   "cloud_gpus_rented_if_throughput_high": rented[1]})


def _unpriced(parts: Sequence[tuple[str, float, float]],
              rgroups: Sequence[RetrievalGroup]) -> list[str]:
    """The GPUs of the parts of a total (GPU, cloud cost per year, GPUs in use) and of its
    retrieval groups that run without a cloud price (calculations/costs.py cloud_priced): a
    retrieval group's part is the GPUs it rents itself (none where it runs on a language-model
    group's rented instances: that group's part prices them)."""
    rows = [*parts, *((g.gpu, g.annual_cost_cloud, float(g.cloud_gpus)) for g in rgroups)]
    return sorted({gpu for gpu, cost, gpus in rows if not cloud_priced([(cost, gpus)])})


def _unheld(parts: Sequence[tuple[str, float]]) -> list[str]:
    """The GPUs of the parts (GPU, cloud_holds_replica) whose cloud offer sells no instance
    that holds their replica: no cloud price for that reason (retrieval groups' replicas are
    one GPU, held by any offer)."""
    return sorted({gpu for gpu, holds in parts if holds <= 0})


def _totals(total: Callable[[str], float], api_known: bool, unpriced: list[str],
            unheld: Sequence[str] = ()) -> Totals:
    env: dict[str, Value] = {k: total(k) for k in (
        "gpus", "nodes", "capex", "annual_cost_onprem", "annual_cost_cloud",
        "million_tokens_per_year", "million_total_tokens_per_year", "annual_cost_api",
        "gpus_used", "gpus_purchased", "gpus_standby")}
    cloud_known = not unpriced

    def cloud(expr: Expr) -> float | None:
        return float(evaluate(expr, env)) if cloud_known else None

    return Totals(
        gpus=int(total("gpus")), nodes=int(total("nodes")), capex=total("capex"),
        annual_cost_onprem=total("annual_cost_onprem"),
        annual_cost_cloud=total("annual_cost_cloud") if cloud_known else None,
        million_tokens_per_year=total("million_tokens_per_year"),
        cost_per_million_tokens_onprem=float(evaluate(TOTAL_COST_PER_MILLION_ONPREM, env)),
        cost_per_million_tokens_cloud=cloud(TOTAL_COST_PER_MILLION_CLOUD),
        million_total_tokens_per_year=total("million_total_tokens_per_year"),
        cost_per_million_total_tokens_onprem=float(evaluate(TOTAL_COST_PER_MILLION_TOTAL_ONPREM,
                                                            env)),
        cost_per_million_total_tokens_cloud=cloud(TOTAL_COST_PER_MILLION_TOTAL_CLOUD),
        cloud_unpriced=unpriced,
        cloud_unheld=[g for g in unpriced if g in unheld],
        annual_cost_api=total("annual_cost_api") if api_known else None,
        cost_per_million_total_tokens_api=(
            float(evaluate(TOTAL_COST_PER_MILLION_TOTAL_API, env)) if api_known else None),
        gpus_used=int(total("gpus_used")), gpus_purchased=int(total("gpus_purchased")),
        gpus_serving=int(float(evaluate(TOTAL_GPUS_SERVING, env))),
        gpus_standby=int(total("gpus_standby")),
        gpus_idle=int(float(evaluate(TOTAL_GPUS_IDLE, env))),
        cloud_gpus_rented=int(total("cloud_gpus_rented")))


def _used_ids(workloads: Iterable[WorkloadResult]) -> dict[str, set[str]]:
    used: dict[str, set[str]] = {"gpus": set(), "platforms": set(), "precisions": set()}
    for w in workloads:
        for o in w.options:
            used["gpus"].add(o.gpu)
            used["platforms"].add(o.platform)
            used["precisions"].update((o.weight_precision, o.kv_precision))
    return used


def estimate_refusal(model_id: str, prompt_tokens: int, output_tokens: int,
                     catalog: Catalog | None = None) -> tuple[str, str] | None:
    """Why ``llmsizer estimate`` refuses a model (the option, the message), or None: an embed
    or rerank model is sized from a requirements file; a request beyond the model's context
    window is refused as a requirements file refuses it (its figures would describe no
    service that can run)."""
    from ..inputs.rules import context_problem

    cat = catalog or load_catalog()
    if model_id not in cat.models and model_id in cat.embedders:
        task = cat.embedders[model_id].task
        return "--model", (f"{model_id} is {'an embedding' if task == 'embed' else 'a reranking'}"
                           " model: estimate covers language models; size it in a requirements "
                           f"file (a workload with kind: {task})")
    model = cat.models.get(model_id)
    msg = model and context_problem(model_id, model.max_context, prompt_tokens, output_tokens,
                                    None, options=True)
    return ("--prompt-tokens", msg) if msg else None


def estimate(*, model_id: str, gpu: str, tp: int, replicas: int, weight_precision: str,
             kv_precision: str, prompt_tokens: int, output_tokens: int,
             concurrency: int | None, mbu: float | None = None, mfu: float | None = None,
             catalog: Catalog | None = None,
             with_env: dict[str, Value] | None = None,
             profile: Mapping[str, float] | None = None) -> dict[str, float | str]:
    """One configuration, no targets: ``concurrency`` users per replica in a closed loop
    (those beyond the batch memory allows wait for a slot), or offline (``None``: batch
    limited only by KV memory and the engine cap). ``with_env``, when given, receives every
    calculated value (the web app's roofline reads them); ``profile`` sets engine-profile
    inputs (a benchmark's memory policy, as ``llmsizer fidelity`` reads it)."""
    from ..inputs.schema import Policy, Requirements
    from ..inputs.schema_workload import Account, Targets
    from ..inputs.schema_workload import Workload as W

    cat = catalog or load_catalog()
    model = cat.model(model_id)
    g = cat.gpu(gpu)
    cat.precision(weight_precision)
    cat.precision(kv_precision)
    cap = concurrency or int(cat.constant("max_batch_per_replica"))
    req = Requirements(
        schema_version=1, account=Account(name="estimate"),
        workloads=[W(name="estimate", model=model_id, concurrent_users=cap,
                     prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                     targets=Targets(system_tokens_per_s=1.0))],
        policy=Policy(mbu=mbu, mfu=mfu, max_batch_per_replica=cap, headroom=0))
    tables = build_tables(req, cat)
    base: dict[str, Value] = {**account_inputs(req, cat),
                              **workload_inputs(req.workloads[0], model)}
    if concurrency is not None:  # C users on each of the given replicas: a closed loop
        base["fixed_users_per_replica"] = float(concurrency)
    choice = Choice(gpu, g.default_platform, weight_precision, kv_precision, tp)
    # The speed `size` credits this option with: an uncalibrated GPU, precision or model class
    # is derated there (search.derating), so `estimate` gave up to 11 % more tok/s for the same
    # configuration and users. A benchmark's profile reproduces the model's own figure, as
    # `fidelity` predicts it.
    stated = {} if profile is not None else {"calibration_derating": derating(
        cat, calibration_gaps(cat, choice, model_id, model, False))}
    env = evaluate_choice(base, choice, tables, req, cat, {**stated, **(profile or {})})
    if with_env is not None:
        with_env.update(env)

    def f(name: str) -> float:
        x = env[name]
        assert isinstance(x, float)
        return x

    batch = f("batch_per_replica")
    if f("max_sequences_by_memory") < 1:
        bound = "does not fit (weights or one request's KV exceed memory)"
    elif f("max_sequences_by_memory") <= batch and f("max_sequences_by_memory") < cap:
        bound = "KV capacity"
    else:
        bound = "memory bandwidth" if f("memory_bound") else "compute"
    return {
        "batch_per_replica": batch,
        "tpot_ms": f("tpot_ms"),
        "ttft_ms": f("ttft_ms"),
        "tokens_per_s_per_user": f("tokens_per_s_per_user"),
        "output_tokens_per_s": float(evaluate(GROUP_OUTPUT_TOKENS_PER_S,
                                              {**env, "replicas_given": float(replicas)})),
        "max_sequences_by_memory": f("max_sequences_by_memory"),
        "weights_gb": f("weights_gb"),
        "usable_memory_gb": f("usable_memory_gb"),
        "kv_gb_per_request": f("kv_gb_per_request"),
        "kv_bytes_per_token": f("kv_bytes_per_token"),
        "decode_weights_ms": f("decode_weights_ms"),
        "calibration_derating": f("calibration_derating"),  # < 1: no calibration rows
        "bound": bound,
    }


_CLEARED_TARGETS = ("target_tokens_per_s_per_user", "target_response_time_s", "target_ttft_s",
                    "target_system_tokens_per_s",
                    *(f"target_{k}" for k in PERCENTILE_TARGETS))


def curve(result: Result, workload_index: int, option_id: str,
          batches: Sequence[int]) -> list[dict[str, float]]:
    """The option's figures at each batch size B in ``batches`` (for the throughput-vs-batch
    chart): the calculation list re-evaluated with the engine cap at B and no latency
    targets, so only memory can clip B."""
    w = result.workloads[workload_index]
    option = w.option(option_id)
    if option is None:
        raise KeyError(option_id)
    base: dict[str, Value] = {**result.account_inputs, **w.inputs, **option.values}
    for name in _CLEARED_TARGETS:
        base[name] = 0.0
    rows = []
    for b in batches:
        env = dict(base)
        env["max_batch_per_replica"] = float(b)
        env["users"] = float(b)  # B users on the replica: the batch served and the experts read
        program()(env, result.tables)
        rows.append({"batch": float(b)} | {k: float(env[k]) for k in (
            "batch_per_replica", "tpot_ms", "tokens_per_s_per_user",
            "replica_output_tokens_per_s", "ttft_ms")})
    return rows
