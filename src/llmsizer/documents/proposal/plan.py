"""The account plan (templates/partials/plan.html.j2; headroom.html.j2 reads it too): what
is bought, which workloads share a pool and which pools share nodes, and the saving against
sizing each workload alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...model.catalog import Catalog
from ...model.names import short_name
from ...sizing.results import NodeGroup, PlanPool, RagFirstToken, Result, RetrievalGroup, Totals
from .format import (
    NBSP,
    Formatter,
    chart_name,
    precision_name,
    shared_gpus_words,
)


@dataclass(frozen=True)
class PoolView:
    label: str  # "Pool 1"
    pool: PlanPool
    workloads: tuple[str, ...]
    model_name: str
    config: str  # "H100 SXM 80GB · FP8 weights · FP8 KV · TP4"
    shared: bool  # more than one workload
    # disaggregated: "3 prefill replicas of 8 GPUs feed the 5 decode replicas; ..." ('' = not)
    disaggregated: str = ""
    # where its N+1 spare capacity is (:func:`spare_words`): a table cell and a sentence's part
    spare: SpareWords | None = None


@dataclass(frozen=True)
class SpareWords:
    """Where a pool's N+1 spare capacity is, in words: ``short`` for a table cell ("1 spare
    running", "spare instance", "shared standby", "standby: 4 GPUs"; two lines at most in the
    PDF plan table's column), ``long`` for a sentence ("its own instance on standby (1 GPU)")."""

    short: str
    long: str


def spare_words(p: PlanPool, g: NodeGroup, rented: bool, n_plus_one: bool) -> SpareWords:
    """Where pool ``p``'s spare capacity is (session 23: "4 replicas (0 spare)" where the plan
    rents a spare instance for it, and "16 replicas (0 spare)" beside a node group's 4 GPUs on
    standby): spare replicas it runs itself; rented by the GPU, the group's one spare instance
    (plan_node_loss.py ``group_cloud_spare_gpus``); bought,
    the node group's standby GPUs (a spare node among them where N+1 added one). Selection
    and words only: every count is a row of the plan."""
    def many(n: float, noun: str) -> str:
        return f"{n:,.0f} {noun if n == 1 else noun + 's'}"

    gv = g.values
    if p.spare_replicas > 0:
        return SpareWords(f"{p.spare_replicas:,} spare running",
                          f"{many(p.spare_replicas, 'replica')} of its own, running")
    if not n_plus_one:
        # once: the plan line goes on to say the service stops with a node down (review
        # round 24: "spare: no spare (surviving a node loss was not asked)" beside it)
        return SpareWords("no spare", "none asked for")
    if rented and gv.get("cloud_sold_by_gpu", 0) > 0:
        # one spare instance for the group, as wide as its widest replica, taking over a lost
        # replica of any of its pools (plan_node_loss.py group_cloud_spare_gpus, session 23)
        spares = float(gv.get("group_cloud_spare_instances", 0.0))
        gpus = float(gv.get("group_cloud_spare_gpus", 0.0))
        if spares > 0 and len(g.pools) > 1:
            # two lines at most in the PDF plan table's column (review round 24: "group's
            # spare instance" took three); the plan's note and the glossary say what it is
            return SpareWords("shared standby",
                              f"the group's instance on standby ({many(gpus, 'GPU')}), shared "
                              "by its pools")
        if spares > 0:
            return SpareWords("spare instance", f"an instance on standby ({many(gpus, 'GPU')})")
    standby = float(gv.get("group_standby_gpus", 0.0))
    if rented and standby > 0 and gv.get("cloud_gpus_rented") == g.gpus_purchased:
        # fixed instance sizes renting the GPUs buying takes: its split ("8 on standby")
        return SpareWords(f"standby: {many(standby, 'GPU').replace(' ', NBSP)}",
                          f"the group's {many(standby, 'GPU')} on standby")
    if rented:  # fixed instance sizes: one instance more than the load (costs.py _instances)
        return SpareWords("free GPUs",
                          "the rented instances' GPUs beyond the replicas (an instance more "
                          "than the load needs)")
    if standby > 0:
        node = ", a spare node" if gv.get("group_spare_nodes_added", 0) else ""
        return SpareWords(f"standby: {many(standby, 'GPU').replace(' ', NBSP)}",
                          f"the node group's {many(standby, 'GPU')} on standby{node}")
    return SpareWords("no spare", "none")


def spread_words(g: NodeGroup, currency: str) -> str:
    """Where a node group of PCIe servers bought part full spreads its load over one server
    more to keep a smaller N+1 spare, because that costs less a year (session 25:
    plan_pools.py ``group_spread_layout``, ``group_spread_saving_per_year``): "spread over 3
    servers to keep a smaller spare: USD 5.57 k a year less than 2 servers"; "" otherwise."""
    v = g.values
    if v.get("group_spread_layout", 0) <= 0:
        return ""
    nodes, fewer = int(v["group_nodes"]), int(v["group_packed_layout_nodes"])
    return (f"spread over {nodes:,} servers to keep a smaller spare: "
            f"{Formatter(currency).money(float(v['group_spread_saving_per_year']))} a year "
            f"less than {fewer:,} server{'' if fewer == 1 else 's'}")


def instances_split(g: NodeGroup) -> str:
    """A rented node group's cloud instances split as the offer sold by the GPU rents them:
    "6 serving, 2 spare on standby" (plan_node_loss.py ``group_cloud_load_instances``,
    ``group_cloud_spare_instances``); "" for fixed instance sizes or no spare."""
    v = g.values
    spare = float(v.get("group_cloud_spare_instances", 0.0))
    if v.get("cloud_sold_by_gpu", 0) <= 0 or spare <= 0 or \
            v.get("cloud_instances") != v.get("group_cloud_load_instances", 0.0) + spare:
        return ""
    return f"{v['group_cloud_load_instances']:,.0f} serving, {spare:,.0f} spare on standby"


def alone_storage_words(result: Result) -> str:
    """Why renting the workloads sized alone costs more than the plan (session 23: "would
    rent 11 GPUs, cloud EUR 181 k/yr" beside a plan renting 10 for EUR 152 k): sized alone
    each workload keeps its own spare instance, so they rent more GPUs, and the cloud's
    storage (costs.py ``annual_cloud_storage``, session 24: per GPU rented, a server's
    storage shared by its GPUs) comes with each. Session 23's words, "storage ... priced per
    server a purchase would need", no longer hold: the cloud no longer pays for servers it
    does not rent. '' where the workloads alone rent no more GPUs than the plan."""
    from ...model.calculations import PLAN_GPUS_RENTED_SAVED
    from ...model.expr import evaluate

    ded, tot = result.totals_dedicated, result.totals
    more = int(evaluate(PLAN_GPUS_RENTED_SAVED,
                        {"cloud_gpus_rented_dedicated": float(ded.cloud_gpus_rented),
                         "cloud_gpus_rented": float(tot.cloud_gpus_rented)}))
    if more <= 0:
        return ""
    gpus = f"{more:,} GPU{'s' if more != 1 else ''}"
    return (f"{gpus} more than the plan, with {'its' if more == 1 else 'their'} share of the "
            "storage for the model weights and logs (the cloud prices storage per GPU rented)")


@dataclass(frozen=True)
class GroupView:
    group: NodeGroup
    platform_name: str
    gpu_name: str
    pools: tuple[PoolView, ...]
    # rented by the GPU: "6 serving, 2 spare on standby" (instances_split); '' otherwise
    instances_split: str = ""
    # bought, spread over one server more for a smaller spare (spread_words); '' otherwise
    spread: str = ""


NO_EXTRA_COST = "no extra cost"


def retrieval_cost_words(values: Mapping[str, Any], rented: bool) -> str:
    """An embed or rerank option's cost per year in words where the plan charges it nothing in
    the account's way ("no extra cost": it runs on idle GPUs another group bought or rents,
    rows retrieval_no_extra_cost_onprem / _cloud), else "" (its figure is shown). Session 25:
    the PDF wrote "no extra cost", the CLI 0 and the web page USD 0 for the same server."""
    flag = "retrieval_no_extra_cost_cloud" if rented else "retrieval_no_extra_cost_onprem"
    return NO_EXTRA_COST if float(values.get(flag, 0.0)) > 0 else ""


def group_cost_words(result: Result, group: RetrievalGroup, rented: bool) -> str:
    """:func:`retrieval_cost_words` for a plan's retrieval group (its recommended option's)."""
    w = next((x for x in result.retrieval if x.name == group.workload), None)
    return retrieval_cost_words(w.best.values, rented) if w and w.best else ""


@dataclass(frozen=True)
class RetrievalView:
    """An embed or rerank workload's own node group, in the customer's words."""

    group: RetrievalGroup
    kind_text: str  # "embedding" | "reranking"
    model_name: str
    platform_name: str
    gpu_name: str
    latency_ms: float  # the p95 bound of an online request (0 = corpus only)
    tokens_per_s_per_gpu: float  # online, per replica
    million_tokens_per_year: float = 0.0
    cost_per_million_onprem: float = 0.0
    api_name: str = ""  # the compared hosted API ("" = none listed for the kind)
    api_date: str = ""
    api_per_million: float = 0.0
    annual_cost_api: float = 0.0
    engine_name: str = ""  # the encoder engine it is sized for, in words
    engine_fallback: bool = False  # that engine has too few published rows of its own
    # whose idle GPUs it runs on, in words ("the language-model servers"; review round 21:
    # "the Question embedding servers"); "" on nodes of its own
    host_words: str = ""
    guests: tuple[str, ...] = ()  # the retrieval workloads on its own nodes' idle GPUs
    # on another group's nodes, the GPUs it runs on: "1 idle GPU", "1 new GPU in an empty
    # slot" (session 22: bought for a PCIe server's empty slot); "" on nodes of its own
    shared_words: str = ""
    # "no extra cost" where the plan charges it nothing in the account's way; "" = its figure
    cost_words: str = ""
    # a guest rented on instances of its own (session 25): "rented, it rents its own 1 × L4
    # instance (…)"
    alone_words: str = ""


@dataclass(frozen=True)
class PlanView:
    groups: tuple[GroupView, ...]
    pooled: bool  # some pool serves several workloads
    shared_nodes: bool  # some group holds several pools
    pool_of: Mapping[int, PoolView]  # workload index -> its pool
    dedicated: Totals  # each workload sized alone
    # per year against the dedicated sizing, in the account's way (rented: the cloud's);
    # None where a GPU has no cloud price (the rent figures leave it out)
    saving: float | None
    saving_share: float
    retrieval: tuple[RetrievalView, ...] = ()  # embed and rerank workloads' own nodes
    rag: RagFirstToken | None = None  # a RAG request end to end (all three kinds present)
    # why sizing alone rents for more (alone_storage_words); '' where the servers agree
    alone_storage: str = ""


def alone_rent_words(group: Any, gpu_name: str) -> str:
    """What a retrieval group on a bought group's idle GPUs rents in the cloud comparison when
    it rents on instances of its own (session 25, ``rents_alone``): "rented, it rents its own
    1 × NVIDIA L4 instance" (``gpu_name``: the GPU's name); "" otherwise. The hunt's embedder
    beside a GB200 rack was priced as a 4-GPU GB200 instance of its own for one replica."""
    a = getattr(group, "rents_alone", None)
    if a is None:
        return ""
    size = "" if a.instance_gpus == 1 else f" of {a.instance_gpus:,} GPUs"
    return (f"rented, it rents its own {a.instances:,} × {gpu_name} "
            f"instance{'' if a.instances == 1 else 's'}{size} (the rented instances it would "
            "share have no GPU left for it, and more of them cost more)")


def _gpu_name(cat: Catalog, gid: str) -> str:
    """A GPU's name in the catalog (its id when the catalog lacks it)."""
    g = cat.gpus.get(gid)
    return g.name if g else gid


def _disaggregated(p: PlanPool, result: Result) -> str:
    """One plain sentence for a pool whose prefill runs on replicas of its own."""
    if not p.prefill_replicas:
        return ""
    option = next(o for o in result.workloads[p.workload_indices[0]].options
                  if o.id == p.option)
    move = float(option.values["disagg_kv_move_ms"])
    return (f"Disaggregated serving: {p.prefill_replicas:,} prefill "
            f"{'replica' if p.prefill_replicas == 1 else 'replicas'} of "
            f"{p.prefill_gpus_per_replica:,} GPUs read the prompts and feed the "
            f"{p.replicas:,} decode {'replica' if p.replicas == 1 else 'replicas'}; a "
            f"request's cache moves once, in {Formatter.number(move, 2)} ms.")


def plan_context(result: Result, cat: Catalog) -> dict[str, Any]:
    """``plan``: the account plan as the proposal states it (templates/partials/plan.html.j2)."""
    from ...model.calculations import (
        PLAN_SAVING,
        PLAN_SAVING_CLOUD,
        PLAN_SAVING_SHARE,
        PLAN_SAVING_SHARE_CLOUD,
    )
    from ...model.expr import evaluate

    names = {i: w.model_name for i, w in enumerate(result.workloads)}
    group_of = {pid: grp for grp in result.plan.node_groups for pid in grp.pools}
    rented = result.deployment.recommended == "cloud"
    n_plus_one = bool(result.account_inputs.get("survive_node_loss"))
    pools: dict[str, PoolView] = {}
    for n, p in enumerate(result.plan.pools, 1):
        g = cat.gpus.get(p.gpu)
        pools[p.id] = PoolView(
            label=f"Pool {n}", pool=p, workloads=tuple(p.workloads),
            model_name=names[p.workload_indices[0]],
            config=f"{chart_name(g.name) if g else p.gpu} · {precision_name(p.weight_precision)} "
                   f"weights · {precision_name(p.kv_precision)} KV · TP{p.tp}",
            shared=len(p.workloads) > 1,
            disaggregated=_disaggregated(p, result),
            spare=spare_words(p, group_of[p.id], rented, n_plus_one))
    groups = []
    for grp in result.plan.node_groups:
        plat, g = cat.platforms.get(grp.platform), cat.gpus.get(grp.gpu)
        groups.append(GroupView(group=grp, platform_name=short_name(plat.name) if plat else grp.platform,
                                gpu_name=g.name if g else grp.gpu,
                                pools=tuple(pools[pid] for pid in grp.pools),
                                instances_split=instances_split(grp) if rented else "",
                                spread="" if rented else spread_words(grp, result.account.currency)))
    rviews = []
    asked = result.source.requirements if result.source is not None else {}
    own_api = (asked.get("costs") or {}).get("retrieval_api_per_million") or {}
    for rg in result.plan.retrieval_groups:
        w = next(x for x in result.retrieval if x.name == rg.workload)
        o = w.best
        assert o is not None  # a retrieval group is a recommended option
        plat, g = cat.platforms.get(rg.platform), cat.gpus.get(rg.gpu)
        online = float(o.values["request_rate_per_s"]) > 0
        api = cat.prices.embedding_reference(rg.kind)
        engine = cat.encoder_engines.get(w.engine)
        rviews.append(RetrievalView(
            group=rg, kind_text="embedding" if rg.kind == "embed" else "reranking",
            model_name=w.model_name,
            platform_name=short_name(plat.name) if plat else rg.platform,
            gpu_name=g.name if g else rg.gpu,
            latency_ms=float(o.values["latency_p95_s"]) * 1000 if online else 0.0,
            tokens_per_s_per_gpu=float(o.values["replica_tokens_per_s"]),
            million_tokens_per_year=float(o.values["retrieval_million_tokens_per_year"]),
            cost_per_million_onprem=float(o.values["retrieval_cost_per_million_tokens_onprem"]),
            api_name=api.name if api else "",
            api_date=("the account's price" if rg.kind in own_api else api.date or "undated")
            if api else "",
            api_per_million=float(o.values["api_per_million_tokens"]),
            annual_cost_api=float(o.values["retrieval_annual_cost_api"]),
            engine_name=engine.name if engine else w.engine,
            engine_fallback=engine is not None and engine.mfu_encode is None,
            host_words=next((f"the {h.workload} servers"
                             for h in result.plan.retrieval_groups if h.id == rg.shares_with),
                            "the language-model servers" if rg.shares_with else ""),
            guests=tuple(x.workload for x in result.plan.retrieval_groups
                         if x.shares_with == rg.id),
            shared_words=shared_gpus_words(rg)
            if rg.shares_with else "",
            cost_words=retrieval_cost_words(o.values, result.deployment.recommended == "cloud"),
            alone_words=alone_rent_words(rg, _gpu_name(cat, rg.rents_alone.gpu))
            if rg.rents_alone else ""))
    ded, tot = result.totals_dedicated, result.totals
    saving: float | None = None
    share = 0.0
    if result.deployment.recommended != "cloud":
        env = {"annual_cost_onprem": tot.annual_cost_onprem,
               "annual_cost_onprem_dedicated": ded.annual_cost_onprem}
        saving, share = (float(evaluate(PLAN_SAVING, env)),
                         float(evaluate(PLAN_SAVING_SHARE, env)))
    elif tot.annual_cost_cloud is not None and ded.annual_cost_cloud is not None:
        env = {"annual_cost_cloud": tot.annual_cost_cloud,
               "annual_cost_cloud_dedicated": ded.annual_cost_cloud}
        saving, share = (float(evaluate(PLAN_SAVING_CLOUD, env)),
                         float(evaluate(PLAN_SAVING_SHARE_CLOUD, env)))
    return {"plan": PlanView(
        groups=tuple(groups), pooled=any(p.shared for p in pools.values()),
        shared_nodes=any(len(gv.pools) > 1 for gv in groups), dedicated=ded,
        pool_of={i: pv for pv in pools.values() for i in pv.pool.workload_indices},
        saving=saving, saving_share=share,
        retrieval=tuple(rviews), rag=result.plan.rag_first_token,
        alone_storage=alone_storage_words(result))}
