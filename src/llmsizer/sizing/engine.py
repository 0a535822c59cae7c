"""The engine: evaluates the calculation list for every candidate option of every
workload and picks the recommendation. All sizing arithmetic is in
:mod:`llmsizer.model.calculations`; this module only assembles inputs, searches and ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..base.version import __version__
from ..inputs.benchfiles import BenchPoint
from ..inputs.requirements import Costs, Loaded, Requirements, Workload
from ..model.calculations import (
    CALCULATIONS,
    GROUP_OUTPUT_TOKENS_PER_S,
    INPUTS,
    TOTAL_COST_PER_MILLION_CLOUD,
    TOTAL_COST_PER_MILLION_ONPREM,
    TOTAL_COST_PER_MILLION_TOTAL_API,
    TOTAL_COST_PER_MILLION_TOTAL_CLOUD,
    TOTAL_COST_PER_MILLION_TOTAL_ONPREM,
    UNITS,
    program,
)
from ..model.catalog import Catalog, Model, load_catalog
from ..model.expr import Value, evaluate
from . import costs
from .evaluate import (
    Choice,
    Tables,
    account_inputs,
    build_tables,
    compute_bits,
    confidence_inputs,
    error_group,
    evaluate_choice,
    stack_constant,
    workload_inputs,
)
from .measured import Pick, pick_point
from .plan import choose_plan, confidence_range, option_sums, plan_sums, to_plan
from .results import (
    AccountInfo,
    Assumption,
    Option,
    Plan,
    Result,
    SourceInfo,
    Totals,
    WorkloadResult,
    slugify,
)

TP_DEGREES = (1, 2, 4, 8)
EP_MIN_LINK_GB_S = 100  # GPU-to-GPU GB/s from which expert parallelism is offered (NVLink class)


def choices(req: Requirements, w: Workload, catalog: Catalog,
            model: Model | None = None) -> list[Choice]:
    hw = req.hardware
    if w.measured:  # calibrated mode: the customer's benchmark fixes GPU and TP
        gid = w.measured.gpu
        plat = hw.platform if hw.platform and gid in catalog.platforms[hw.platform].gpus else (
            catalog.gpus[gid].default_platform)
        wp = hw.weight_precisions[0]
        return [Choice(gid, plat, wp, kv_precisions(hw.kv_precisions, wp, catalog)[0],
                       w.measured.gpus_per_replica)]
    moe = model is not None and model.experts > 0
    out = []
    for gid in hw.gpus or sorted(catalog.gpus):
        gpu = catalog.gpus[gid]
        plat = hw.platform or gpu.default_platform
        per_node = catalog.platforms[plat].gpus_per_node
        for wp in hw.weight_precisions:
            for kp in kv_precisions(hw.kv_precisions, wp, catalog):
                for tp in hw.tensor_parallel or TP_DEGREES:
                    if tp <= min(per_node, gpu.max_tp):
                        out.append(Choice(gid, plat, wp, kp, tp))
                        # how MoE models are served on scale-up fabrics (measured rows); an
                        # all-to-all per layer over PCIe is neither measured nor how it is done
                        if moe and tp > 1 and gpu.link_gb_s >= EP_MIN_LINK_GB_S:
                            out.append(Choice(gid, plat, wp, kp, tp, ep=tp))
                            out.append(Choice(gid, plat, wp, kp, tp, ep=tp, adp=tp))
    return out


def kv_precisions(stated: Sequence[str] | None, weight_precision: str,
                  catalog: Catalog) -> list[str]:
    """The KV precisions to try with these weights: the account's list, or when it states
    none, the weight precision's default (never FP4 KV unless asked for)."""
    return list(stated) if stated else [catalog.precisions[weight_precision].default_kv_precision]


def _fmt(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def reason_for(v: dict[str, Value]) -> tuple[str, str]:
    """(code, why) an option is rejected (('', '') when feasible). Reads computed values only."""

    def f(name: str) -> float:
        x = v[name]
        assert isinstance(x, float)
        return x

    if f("weights_gb") > f("usable_memory_gb"):
        return "weights", (f"weights {_fmt(f('weights_gb'), 1)} GB do not fit in "
                f"{_fmt(f('usable_memory_gb'), 1)} GB usable on TP{int(f('tp'))}")
    if f("max_sequences_by_memory") < 1:
        return "kv", (f"one full-context request needs {_fmt(f('kv_gb_per_request'), 2)} GB of KV; only "
                f"{_fmt(f('kv_budget_gb'), 2)} GB left beside the weights")
    if f("measured_tokens_per_s_per_replica") > 0:
        return "", ""  # calibrated mode: the customer's benchmark replaces the latency model
    if f("batch_by_tpot") < 1:
        return "speed", (f"even one user gets only {_fmt(f('bandwidth_ceiling_tokens_per_s'), 1)} tok/s "
                f"here (bandwidth ceiling); target {_fmt(f('required_tokens_per_s_per_user'), 1)} "
                "tok/s")
    if f("batch_by_ttft") < 1:
        return "ttft", (f"TTFT {_fmt(f('ttft_one_user_ms'))} ms even for one request; target "
                f"{_fmt(f('target_ttft_ms'))} ms")
    return "", ""


def _model_class(model: Model) -> str:
    return "mla" if model.kv_lora_rank else "moe" if model.experts else "dense"


def calibration_gaps(catalog: Catalog, choice: Choice, model_id: str, model: Model,
                     measured: bool) -> list[str]:
    """Plain reasons why an option's modelled figures are extrapolated (empty = covered): a
    GPU, weight precision or model class (dense, MoE, MLA) with no calibration rows."""
    if measured:
        return []
    cov = catalog.coverage
    gaps = []
    if choice.gpu not in cov.gpus:
        gaps.append(f"no measured reference for {catalog.gpus[choice.gpu].name}")
    if choice.weight_precision not in cov.weight_precisions:
        gaps.append(f"no measured reference for {choice.weight_precision} weights")
    path = catalog.precisions[choice.weight_precision].compute_path
    if path in ("fp8", "fp4") and compute_bits(catalog, choice.gpu, choice.weight_precision) == (
            "16bit") and choice.weight_precision in cov.weight_precisions:
        # measured only on GPUs that compute this format natively
        gaps.append(f"no measured reference for {choice.weight_precision} weights dequantised "
                    f"to BF16 on {catalog.gpus[choice.gpu].name}")
    if (choice.ep > 1 or choice.adp > 1) and choice.gpu not in cov.expert_parallel_gpus:
        gaps.append("no measured reference for expert parallelism on "
                    f"{catalog.gpus[choice.gpu].name}")
    covered = {_model_class(catalog.models[m]) for m in cov.models if m in catalog.models}
    if model_id not in cov.models and _model_class(model) not in covered:
        kind = {"mla": "an MLA model", "moe": "an MoE model"}.get(_model_class(model),
                                                                  "this model")
        gaps.append(f"no measured reference for {kind} ({model.name})")
    return gaps


def derating(catalog: Catalog, gaps: Sequence[str]) -> float:
    """Share of its modelled throughput an uncalibrated option is credited with (constant
    ``uncalibrated_derating``, from cross-validation); 1 for a calibrated option."""
    return catalog.constant("uncalibrated_derating") if gaps else 1.0


def _rank_key(o: Option) -> tuple[int, float, int, float, float, float, float]:
    """Lowest cost; at equal cost a calibrated option before an extrapolated one (the
    recommendation must not rest on uncalibrated optimism), then fewest GPUs bought, most
    headroom, higher precision (issue 15)."""
    v = o.values
    return (0 if o.priced else 1, float(v["annual_cost_onprem"]),
            1 if o.calibration_gaps else 0, float(v["gpus_purchased"]),
            -float(v["headroom_achieved"]), -float(v["weight_bytes_per_param"]),
            -float(v["kv_bytes_per_element"]))


def _advice(w: Workload, model: Model, options: list[Option], catalog: Catalog) -> str:
    if not options:
        return ("No configuration to try: the tensor-parallel degrees listed in "
                "hardware.tensor_parallel exceed what every listed GPU's platform allows (GPUs per "
                "node and the GPU's own limit). Allow a smaller tensor-parallel degree or another "
                "GPU.")
    fitting = [o for o in options if float(o.values["max_sequences_by_memory"]) >= 1]
    if not fitting:
        smallest = min(float(o.values["weights_gb"]) for o in options)
        biggest = max(float(o.values["usable_memory_gb"]) for o in options)
        return (f"{model.name} does not fit on any single node tried: the smallest weights are "
                f"{smallest:,.0f} GB against at most {biggest:,.0f} GB usable in one node's TP group. "
                "Use a lower precision (fp8, int4, fp4), a GPU with more memory (H200, B200, "
                "MI300X), or multi-node tensor/pipeline parallelism (“How fast does it serve?”, "
                "'When the model is too big').")
    best = max(fitting, key=lambda o: float(o.values["bandwidth_ceiling_tokens_per_s"]))
    return (f"No option meets the targets. Best achievable: {best.id} at "
            f"{float(best.values['bandwidth_ceiling_tokens_per_s']):,.1f} tok/s per user and "
            f"TTFT {float(best.values['ttft_one_user_ms']):,.0f} ms for a single user. "
            "Relax the latency target, use a faster GPU, a lower "
            "precision or a smaller model.")


def size_workload(req: Requirements, w: Workload, model: Model, catalog: Catalog,
                  tables: Tables, acct: dict[str, float],
                  points: Sequence[BenchPoint] = ()) -> WorkloadResult:
    winputs = workload_inputs(w, model)
    winputs.update(costs.api_inputs(req, catalog, w.model))
    base: dict[str, Value] = {**acct, **winputs}
    options: list[Option] = []
    candidates = choices(req, w, catalog, model)
    pick: Pick | None = None
    if w.measured is not None and w.measured.file is not None:
        env0 = evaluate_choice(base, candidates[0], tables, req, catalog)
        pick = pick_point(w, w.measured, points, float(env0["required_tokens_per_s_per_user"]),
                          float(env0["target_ttft_ms"]))
        winputs["measured_tokens_per_s_per_replica"] = pick.tokens_per_s_per_replica
        base["measured_tokens_per_s_per_replica"] = pick.tokens_per_s_per_replica
    for ch in candidates:
        gaps = calibration_gaps(catalog, ch, w.model, model, w.measured is not None)
        env = evaluate_choice(base, ch, tables, req, catalog,
                              {"calibration_derating": derating(catalog, gaps),
                               **confidence_inputs(catalog, ch, model, w.measured is not None)})
        code, reason = reason_for(env)
        if not reason and pick is not None and pick.failure:
            code, reason = "measured", pick.failure
        priced = tables["gpus"][ch.gpu]["price"] > 0
        values = {k: env[k] for k in _OPTION_KEYS}
        options.append(Option(id=ch.id, gpu=ch.gpu, platform=ch.platform,
                              weight_precision=ch.weight_precision, kv_precision=ch.kv_precision,
                              tp=ch.tp, feasible=not reason, reason=reason, reason_code=code,
                              priced=priced,
                              calibration_gaps=gaps,
                              values=values))
    feasible = sorted((o for o in options if o.feasible), key=_rank_key)
    rejected = [o for o in options if not o.feasible]
    recommended = feasible[0].id if feasible else None
    advice = None
    if not feasible:
        advice = pick.advice if pick is not None and pick.failure else _advice(
            w, model, options, catalog)
    note = pick.note if pick is not None else None
    if w.measured is not None and w.measured.tokens_per_s_per_replica is not None:
        note = (f"Measured: the customer's figure of {w.measured.tokens_per_s_per_replica:,.0f} "
                f"tok/s per replica of {w.measured.gpus_per_replica} × {w.measured.gpu} "
                "(requirements, measured block).")
    best = next((o for o in feasible[:1]), None)
    conf = None
    if best is not None:
        ch = next(c for c in candidates if c.id == best.id)
        conf = costs.confidence(best, "measured" if w.measured is not None
                                else error_group(catalog, ch, model))
    return WorkloadResult(
        confidence=conf,
        name=w.name, model=w.model, model_name=model.name,
        mode="measured" if w.measured else "modelled", inputs=winputs,
        recommended=recommended, advice=advice, options=feasible + rejected,
        measured_note=note, measured_points=pick.points if pick is not None else [],
        measured_warnings=pick.warnings if pick is not None else [])


_OPTION_KEYS = tuple(i.name for i in INPUTS if i.scope == "option") + tuple(
    c.name for c in CALCULATIONS)


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
    }
    out = []
    for name, const in catalog.constants.items():
        if name.startswith(("trtllm_", "driver_", "llamacpp_", "tpot_p")):
            continue  # fidelity-only (benchmark reproduction)
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
          "GPUs where the provider rents them (GPUs per instance in the price list)"))
    return out


def size(loaded: Loaded, catalog: Catalog | None = None) -> Result:
    """Size every workload of an account."""
    cat = catalog or load_catalog()
    req = loaded.req
    tables = build_tables(req, cat)
    acct = account_inputs(req, cat)
    workloads = [size_workload(req, w, loaded.models[w.model], cat, tables, acct,
                               loaded.bench.get(i, ()))
                 for i, w in enumerate(req.workloads)]
    chosen = [w.best for w in workloads if w.best is not None]
    # the API comparison holds only when every recommended workload's model has an API price
    api_known = bool(chosen) and all(float(o.values["annual_cost_api"]) > 0 for o in chosen)
    dedicated = _totals(option_sums(chosen), api_known)
    # The account plan (plan.py) chooses each workload's option: that is the recommendation.
    chosen_plan = choose_plan(workloads, acct)
    workloads = [w.model_copy(update={
        "dedicated": w.recommended,
        "recommended": chosen_plan.choice.options[i].id if i in chosen_plan.choice.options
        else None}) for i, w in enumerate(workloads)]
    used = _used_ids(workloads)
    option_gpus = sorted(used["gpus"])  # the workbook's Catalog sheet lists them all
    rec_models = sorted({w.model for w in workloads if w.best is not None})
    return Result(
        cloud_tier=req.costs.cloud_tier,
        prices=costs.prices_used(req, cat, option_gpus, rec_models),
        sensitivity=costs.sensitivity(workloads, acct, tables, chosen_plan.choice.pools),
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
        plan=_with_range(to_plan(chosen_plan, workloads),
                         confidence_range(chosen_plan, workloads, acct)),
        totals=_totals(plan_sums(chosen_plan), api_known),
        totals_dedicated=dedicated,
        assumptions=assumptions(req, cat, acct, workloads),
        units=dict(UNITS),
        source=SourceInfo(
            requirements=req.model_dump(mode="json"),
            models={k: m.model_dump(mode="json") for k, m in loaded.models.items()
                    if k not in cat.models},
            bench={str(i): list(p) for i, p in sorted(loaded.bench.items())}),
    )


def _with_range(plan: Plan, gpus: tuple[int, int] | None) -> Plan:
    if gpus is None:
        return plan
    return plan.model_copy(update={"gpus_purchased_if_throughput_low": gpus[0],
                                   "gpus_purchased_if_throughput_high": gpus[1]})


def _totals(total: Callable[[str], float], api_known: bool) -> Totals:
    env: dict[str, Value] = {k: total(k) for k in (
        "gpus", "nodes", "capex", "annual_cost_onprem", "annual_cost_cloud",
        "million_tokens_per_year", "million_total_tokens_per_year", "annual_cost_api")}
    return Totals(
        gpus=int(total("gpus")), nodes=int(total("nodes")), capex=total("capex"),
        annual_cost_onprem=total("annual_cost_onprem"), annual_cost_cloud=total("annual_cost_cloud"),
        million_tokens_per_year=total("million_tokens_per_year"),
        cost_per_million_tokens_onprem=float(evaluate(TOTAL_COST_PER_MILLION_ONPREM, env)),
        cost_per_million_tokens_cloud=float(evaluate(TOTAL_COST_PER_MILLION_CLOUD, env)),
        million_total_tokens_per_year=total("million_total_tokens_per_year"),
        cost_per_million_total_tokens_onprem=float(evaluate(TOTAL_COST_PER_MILLION_TOTAL_ONPREM,
                                                            env)),
        cost_per_million_total_tokens_cloud=float(evaluate(TOTAL_COST_PER_MILLION_TOTAL_CLOUD,
                                                           env)),
        annual_cost_api=total("annual_cost_api") if api_known else None,
        cost_per_million_total_tokens_api=(
            float(evaluate(TOTAL_COST_PER_MILLION_TOTAL_API, env)) if api_known else None),
        gpus_used=int(total("gpus_used")), gpus_purchased=int(total("gpus_purchased")))


def _used_ids(workloads: Iterable[WorkloadResult]) -> dict[str, set[str]]:
    used: dict[str, set[str]] = {"gpus": set(), "platforms": set(), "precisions": set()}
    for w in workloads:
        for o in w.options:
            used["gpus"].add(o.gpu)
            used["platforms"].add(o.platform)
            used["precisions"].update((o.weight_precision, o.kv_precision))
    return used


def estimate(*, model_id: str, gpu: str, tp: int, replicas: int, weight_precision: str,
             kv_precision: str, prompt_tokens: int, output_tokens: int,
             concurrency: int | None, mbu: float | None = None, mfu: float | None = None,
             catalog: Catalog | None = None) -> dict[str, float | str]:
    """One configuration, no targets: ``concurrency`` sequences per replica, or offline
    (``None``: batch limited only by KV memory and the engine cap)."""
    from ..inputs.requirements import Account, Policy, Requirements, Targets
    from ..inputs.requirements import Workload as W

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
    env = evaluate_choice(base, Choice(gpu, g.default_platform, weight_precision, kv_precision,
                                       tp), tables, req, cat)

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
        "bound": bound,
    }


_CLEARED_TARGETS = ("target_tokens_per_s_per_user", "target_response_time_s", "target_ttft_s",
                    "target_system_tokens_per_s")


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
        program()(env, result.tables)
        rows.append({"batch": float(b)} | {k: float(env[k]) for k in (
            "batch_per_replica", "tpot_ms", "tokens_per_s_per_user",
            "replica_output_tokens_per_s", "ttft_ms")})
    return rows
