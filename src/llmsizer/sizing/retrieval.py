"""Embed and rerank workloads (issue 24): one option per candidate GPU, evaluated with the
retrieval calculations (model/calculations/retrieval.py) on every platform that hosts the GPU
(the language-model search's list) and costed by the list's own TCO lines (the node group's
cost calculations, as for an LLM node group); the cheapest feasible,
priced option is recommended. Small PCIe GPUs (L4, L40S, A10) are candidates like the rest:
an embedding server is many small stateless replicas (source article "How fast does it
serve?"). Each recommendation is a node group of its own, bought part full on a PCIe server
as the language-model servers are, unless its replicas all fit the idle GPUs (bought, not
used) and the empty GPU slots of a node group of the same GPU type: then it uses them and
buys no server, only the GPUs of the slots it fills (share_idle_gpus, after the plan is
chosen; shares_llm_nodes); in the cloud it rents only the replicas that group's whole
instances do not already carry (retrieval_cloud_gpus).
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..inputs.schema import Requirements
from ..inputs.schema_workload import Workload
from ..model.calculations import (
    CALCULATIONS,
    GROUP_COST_CALCULATIONS,
    GROUP_COST_FIGURES,
    GROUP_COUNTS,
)
from ..model.calculations.load import RATE_CALCULATIONS
from ..model.calculations.retrieval import (
    RAG_TTFT,
    RETRIEVAL_COST_CALCULATIONS,
    RETRIEVAL_INPUTS,
    retrieval_program,
)
from ..model.calculations.scenarios import Scenario
from ..model.catalog import Catalog, Embedder
from ..model.expr import Expr, Value, evaluate, references
from .costs import retrieval_api_price
from .evaluate import Tables
from .results import (
    NodeGroup,
    RagFirstToken,
    RentedAlone,
    RetrievalGroup,
    RetrievalOption,
    RetrievalWorkloadResult,
    WorkloadResult,
)
from .search import Rank, by_way, platforms_for

if TYPE_CHECKING:  # plan imports nothing of this module; only the type is needed here
    from .plan import Evaluated

# a host on offer: (node-group id, platform, idle GPUs bought, idle rented cloud GPUs, empty
# GPU slots of its nodes: a PCIe server bought part full; none when renting; its nodes: with
# N+1 a guest keeps its spare GPUs on another node than its fullest, session 24)
Offer = tuple[str, str, int, int, int, int]
DEFAULT_ENGINE = "serving-stack"  # what an embed or rerank workload is sized for unless stated
_ACCOUNT_CONSTANTS = ("mfu_encode", "encode_batch_overhead_ms", "encode_batch_window_ms",
                      "encode_max_batch_tokens", "encode_activation_bytes_per_hidden",
                      "tokenize_tokens_per_s_per_core", "host_cores_per_gpu")


def _catalog_rows() -> tuple[tuple[str, Expr], ...]:
    """The catalog-value calculations the TCO lines read (GPU price, node price, power,
    cloud price): evaluated per option with its GPU and platform."""
    by_name = {c.name: c for c in CALCULATIONS}
    cost = {c.name for c in GROUP_COST_CALCULATIONS}
    needed = {n for c in GROUP_COST_CALCULATIONS for n in references(c.expr)
              if n in by_name and n not in cost and n not in GROUP_COUNTS}
    # and the catalog values those read (cloud_sizes_listed reads cloud_fixed_sizes)
    while more := {n for m in needed for n in references(by_name[m].expr)
                   if n in by_name and n not in cost and n not in GROUP_COUNTS} - needed:
        needed |= more
    return tuple((c.name, c.expr) for c in CALCULATIONS if c.name in needed)


CATALOG_ROWS = _catalog_rows()


def workload_values(w: Workload, m: Embedder) -> dict[str, float]:
    """The workload's inputs (the schema guarantees each kind's keys)."""
    # the peak rate by the generating workloads' own formula (queueing.py): stated, or a
    # population x requests per user-hour x peak-to-average
    load = {"named_users": float(w.named_users or 0),
            "requests_per_user_per_hour": w.requests_per_user_per_hour or 0.0,
            "peak_to_average": w.peak_to_average or 1.0, "requests_per_s": w.requests_per_s or 0.0}
    rate = float(evaluate(RATE_CALCULATIONS[0].expr, load))
    rerank = w.kind == "rerank"
    t = w.targets
    return {
        "params": m.params_total, "layers": float(m.layers), "hidden": float(m.hidden_size),
        "seq_tokens": float((w.tokens_per_pair if rerank else w.tokens_per_request) or 0),
        "sequences_per_request": float(w.candidates_per_request or 1) if rerank else 1.0,
        "request_rate_per_s": rate,
        "target_latency_p95_s": (t.latency_p95_s or 0.0) if t is not None else 0.0,
        "corpus_tokens": w.corpus_tokens or 0.0,
        "reindex_hours": w.reindex_within_hours or 0.0,
    }


def _reason(v: Mapping[str, Value], gpu_name: str) -> str:
    if v["encoder_fits"] != 1:
        return (f"weights {float(v['encoder_weights_gb']):.1f} GB do not fit the engine's share "
                f"of one {gpu_name} ({float(v['gpu_memory_gb']):.0f} GB)")
    if v["latency_met"] != 1:
        return (f"p95 latency {float(v['latency_p95_s']) * 1000:,.0f} ms over the "
                f"{float(v['target_latency_p95_s']) * 1000:,.0f} ms target even at one request "
                "per batch")
    return ""


def _rank(o: RetrievalOption, way: str) -> Rank:
    """The options' ranking in the account's way, as the language-model options' (search.py
    ``by_way``): buying, the on-premises cost per year, then the fewest GPUs bought; renting,
    the rent per year first (one on a language-model group's instances is priced by that
    group). Review round 18: a rented account's reranker was chosen by its buying cost."""
    rentable = float(o.values["cloud_gpu_hour"]) > 0 or o.shares_with is not None
    return by_way(way, (float(o.values["annual_cost_onprem"]),
                        float(o.values["retrieval_gpus"])), rentable,
                  float(o.values["annual_cost_cloud"]))


def _viable(o: RetrievalOption, way: str) -> bool:
    """Feasible, with a price in ``way`` (renting: a cloud price or a language-model
    group's idle GPUs; buying: a purchase price or those idle GPUs)."""
    return o.feasible and (o.priced or (way == "cloud"
                                        and float(o.values["cloud_gpu_hour"]) > 0))


def _on_best_platform(on_platforms: Sequence[RetrievalOption], way: str) -> RetrievalOption:
    """A GPU's option on the platform that ranks first in ``way`` among those that host it
    (search.platforms_for, the language-model search's list, its default first; at a tie the
    earlier). Review round 21: an L40S embedding server needing 1 GPU was tried on the
    GPU's default 8-GPU Dell PowerEdge XE7745 only ("8 GPUs bought: 1 serving, 7 idle"),
    never on the generic 4-GPU server that hosts the L40S too. Without a viable one, the
    first (the default platform's) gives the reason."""
    viable = [o for o in on_platforms if _viable(o, way)]
    return min(viable, key=lambda o: _rank(o, way)) if viable else on_platforms[0]


def recommend(options: Sequence[RetrievalOption], way: str) -> RetrievalOption | None:
    """The feasible option with a price in ``way`` (renting, a purchase price or a cloud
    one, as a language-model option is recommended; or on a language-model group's idle
    GPUs) that ranks first in ``way``; at a tie, the first by GPU id."""
    viable = sorted((o for o in options if _viable(o, way)), key=lambda o: o.id)
    return min(viable, key=lambda o: _rank(o, way), default=None)


# what to change when options meet the target but none has a price in the account's way
UNPRICED_ADVICE = {
    "on_prem": ("no feasible GPU has a purchase price listed: state one among the GPU prices "
                "of the requirements"),
    # renting: a cloud price, not a purchase price (review round 19: a rented account was told
    # to state a purchase price it would never pay)
    "cloud": ("no feasible GPU has a cloud price listed: state one among the cloud prices per "
              "GPU-hour of the requirements"),
}


def _evaluate(values: dict[str, Value], gid: str, pid: str, api_price: float,
              acct: Mapping[str, float], tables: Tables,
              alone: tuple[float, float] = (0.0, 0.0)) -> None:
    """The retrieval calculations of one option over its inputs (``values``, completed in
    place), then the TCO lines with its node and GPU counts (as for an LLM node group), then
    its rented view and cost per token (``alone``: its cheapest option rented alone, cloud
    cost per year and GPUs rented, :func:`rented_alone`)."""
    retrieval_program()(values, {})
    env: ChainMap[str, Value] = ChainMap(
        {"gpu": gid, "platform": pid, "nodes": values["retrieval_nodes"],
         "gpus": values["retrieval_cloud_gpus"],
         "gpus_purchased": values["retrieval_gpus"],
         "cloud_replica_gpus": values["retrieval_replica_gpus"],
         "load_gpus": values["retrieval_load_gpus"],
         # an offer sold by the GPU (costs.py): one instance per one-GPU replica, one spare
         "cloud_load_instances": values["retrieval_load_gpus"],
         "cloud_spare_gpus": values["retrieval_replica_gpus"],
         "cloud_spare_instances": values["retrieval_replica_gpus"]},
        acct)  # type: ignore[arg-type]
    for name, expr in CATALOG_ROWS:
        env[name] = evaluate(expr, env, tables)
    for c in GROUP_COST_CALCULATIONS:
        env[c.name] = evaluate(c.expr, env, tables)
    values.update({k: v for k, v in env.maps[0].items() if k not in ("gpu", "platform")})
    # cost per embedded token beside the compared hosted API (calculations/retrieval.py)
    values["api_per_million_tokens"] = api_price
    values["alone_cloud_cost"], values["alone_cloud_gpus"] = alone
    costed: ChainMap[str, Value] = ChainMap(values, acct)  # type: ignore[arg-type]
    for c in RETRIEVAL_COST_CALCULATIONS:
        values[c.name] = evaluate(c.expr, costed, tables)


def size_retrieval(req: Requirements, w: Workload, m: Embedder, cat: Catalog, tables: Tables,
                   acct: Mapping[str, float],
                   idle: Mapping[str, Sequence[Offer]] | None = None,
                   way: str = "on_prem",
                   alone: tuple[float, float] = (0.0, 0.0)) -> RetrievalWorkloadResult:
    """Every candidate GPU on each platform that hosts it (search.platforms_for: the
    account's platform when stated), one option per GPU on the platform that ranks first in
    ``way`` (:func:`_on_best_platform`). ``idle``:
    per GPU id, the node groups (id, platform, idle GPUs, idle rented cloud GPUs, empty GPU
    slots: :data:`Offer`) whose idle GPUs and empty slots the replicas may use
    (shares_llm_nodes) on that group's platform, each tried beside the others (when the
    replicas do not all fit, another platform may cost less). The recommendation ranks
    first in ``way`` (:func:`_rank`). ``alone``: its cheapest option rented alone
    (:func:`rented_alone`), the price of a guest whose host's rented instances lack room."""
    base = workload_values(w, m)
    engine = w.engine or DEFAULT_ENGINE
    p = req.policy
    account: dict[str, float] = {
        "headroom": p.headroom, "survive_node_loss": 1.0 if p.survive_node_loss else 0.0,
        "gpu_memory_utilization": p.gpu_memory_utilization,
        **{k: cat.retrieval_constants[k].value for k in _ACCOUNT_CONSTANTS},
        # the engine's share of peak and fixed time per batch (its class's, or the fallback)
        **cat.engine_constants(engine)}
    if p.mfu is not None:
        account["mfu_encode"] = p.mfu
    api_price = retrieval_api_price(req, cat, w.kind)
    options = []
    for gid in req.hardware.gpus or list(cat.gpus):
        gpu = cat.gpus[gid]
        offers = list(idle.get(gid, ())) if idle else []
        tried = platforms_for(cat, gid, req.hardware.platform)
        tried += [o[1] for o in offers if o[1] not in tried]
        # each platform with every host offered on it (none: nodes of its own)
        none: list[Offer | None] = [None]
        candidates = [(pid, o) for pid in tried
                      for o in ([x for x in offers if x[1] == pid] or none)]
        on_platforms = []
        for pid, offer in candidates:
            group, free, free_cloud, slots, host_nodes = None, 0, 0, 0, 0
            if offer is not None:
                group, _, free, free_cloud, slots, host_nodes = offer
            values: dict[str, Value] = {
                **base, **account, "llm_free_gpus": float(free),
                "llm_idle_cloud_gpus": float(free_cloud), "llm_free_slots": float(slots),
                "llm_host_nodes": float(host_nodes),
                "weight_bytes": 2.0, "gpu_tflops": gpu.bf16_tflops,
                "gpu_memory_gb": gpu.memory_gb,
                "gpus_per_node": tables["platforms"][pid]["gpus_per_node"],
                "platform_sold_full": tables["platforms"][pid]["sold_full"]}
            assert set(values) == {i.name for i in RETRIEVAL_INPUTS}
            _evaluate(values, gid, pid, api_price, acct, tables, alone)
            reason = _reason(values, gpu.name)
            shares = group if float(values["shares_llm_nodes"]) > 0 else None
            on_platforms.append(RetrievalOption(
                id=gid, gpu=gid, platform=pid, feasible=not reason, reason=reason,
                priced=float(values["gpu_price"]) > 0 or (
                    shares is not None and float(values["retrieval_gpus"]) == 0),
                values=values,
                shares_with=shares))
        options.append(_on_best_platform(on_platforms, way))
    best = recommend(options, way)
    advice = None
    fitting = [o for o in options if o.values["encoder_fits"] == 1]
    if best is None and not any(o.feasible for o in options) and fitting:
        # the nearest miss and what to change, as the language-model advice says
        near = min(fitting, key=lambda o: float(o.values["latency_p95_s"]))
        advice = (f"no candidate GPU meets the latency target; the nearest, "
                  f"{cat.gpus[near.gpu].name}: {near.reason}; relax the p95 latency target, send "
                  "fewer tokens per request, or choose a smaller model")
    elif best is None:
        advice = ("no candidate GPU both fits the model and meets the latency target"
                  if not any(o.feasible for o in options) else
                  UNPRICED_ADVICE.get(way, UNPRICED_ADVICE["on_prem"]))
    return RetrievalWorkloadResult(
        name=w.name, kind=w.kind, model=w.model_id, model_name=m.name, engine=engine,
        inputs={k: float(v) for k, v in base.items()},
        recommended=best.id if best else None, advice=advice, options=options)


def _group(n: int, w: RetrievalWorkloadResult, o: RetrievalOption,
           v: Mapping[str, Value], shares_with: str | None,
           alone: RentedAlone | None = None) -> RetrievalGroup:
    return RetrievalGroup(
        id=f"retrieval-{n}", workload=w.name, kind=w.kind, model=w.model,
        gpu=o.gpu, platform=o.platform, replicas=int(float(v["retrieval_replicas"])),
        nodes=int(float(v["retrieval_nodes"])),
        gpus_used=int(float(v["retrieval_gpus_used"])),
        gpus_purchased=int(float(v["retrieval_gpus"])),
        standby_gpus=int(float(v["retrieval_standby_gpus"])),
        idle_gpus=int(float(v["retrieval_idle_gpus"])),
        # what its TCO lines rent (whole instances; sold by the GPU, one spare replica's, not
        # the bought spare node's: review round 22), as its cloud cost counts them; a guest
        # rented alone, its cheapest option's (session 25)
        cloud_gpus=int(float(v["retrieval_cloud_gpus_rented"])),
        limited_by=str(v["limited_by"]), shares_with=shares_with,
        **{k: float(v[k]) for k in GROUP_COST_FIGURES if k != "annual_cost_cloud"},
        annual_cost_cloud=float(v["retrieval_cloud_cost"]),
        rents_alone=alone if float(v["retrieval_rents_alone"]) > 0 else None)


def retrieval_groups(workloads: Sequence[RetrievalWorkloadResult]) -> list[RetrievalGroup]:
    """One node group per recommended embed or rerank workload."""
    groups: list[RetrievalGroup] = []
    for w in workloads:
        o = w.best
        if o is not None:
            groups.append(_group(len(groups) + 1, w, o, o.values, o.shares_with,
                                 w.rented_alone))
    return groups


_INPUT_NAMES = tuple(i.name for i in RETRIEVAL_INPUTS)


def scenario_idle(node_groups: Sequence[NodeGroup], e: Evaluated
                  ) -> dict[str, tuple[float, float, float, float]]:
    """Idle GPUs of each language-model node group, by its id, in the scenario plan ``e``
    (its groups are the proposal's, in order): bought, not used; rented in the cloud, not
    used (its whole instances' GPUs beyond those in use); and its nodes' empty GPU slots
    (nodes x GPUs per node - GPUs bought: a PCIe server bought part full); and its nodes."""
    return {ng.id: (float(g.env["group_gpus_purchased"]) - float(g.env["group_gpus_used"]),
                    max(0.0, float(g.env["cloud_gpus_rented"])
                        - float(g.env["group_gpus_used"])),
                    float(g.env["group_nodes"]) * float(g.env["gpus_per_node"])
                    - float(g.env["group_gpus_purchased"]), float(g.env["group_nodes"]))
            for ng, g in zip(node_groups, e.groups, strict=True)}


# The account inputs the retrieval groups' money reads (their catalog values, TCO lines and
# cost per token): a what-if row that changes one of them (GPU price, cloud tier, average
# load) prices the retrieval servers as it prices the language models.
_MONEY_INPUTS = frozenset(
    n for expr in (*(e for _, e in CATALOG_ROWS),
                   *(c.expr for c in (*GROUP_COST_CALCULATIONS, *RETRIEVAL_COST_CALCULATIONS)))
    for n in references(expr))


def scenario_changes_retrieval(sc: Scenario, workloads: Sequence[RetrievalWorkloadResult],
                               acct: Mapping[str, float]) -> bool:
    """Whether scenario ``sc`` can move an embed or rerank node group: it changes a
    retrieval input (the rate and headroom rows), an account input their money reads, or a
    group uses a language-model node group's idle GPUs (the scenario plan decides how many
    are idle). Else every group is as proposed (the Retrieval sheet's cells)."""
    return (sc.retrieval_input is not None or (sc.input in acct and sc.input in _MONEY_INPUTS)
            or any(w.best is not None and w.best.shares_with is not None for w in workloads))


def scenario_retrieval(sc: Scenario, workloads: Sequence[RetrievalWorkloadResult],
                       idle: Mapping[str, tuple[float, float, float, float]],
                       acct: Mapping[str, float],
                       tables: Tables,
                       ) -> list[tuple[RetrievalGroup, dict[str, Value]]]:
    """The embed and rerank node groups under scenario ``sc``, each with the values it was
    evaluated with: each recommended option evaluated again on its GPU and platform, with
    the scenario's retrieval input (``sc.retrieval_input``: the load and headroom rows) and
    account input (GPU price, cloud tier, average load: the TCO lines read them) changed.
    A group on a language-model node group's idle GPUs gets that group's idle GPUs in the
    scenario plan (``idle``: per node-group id, bought and rented in the cloud), less the
    replicas of the groups before it that use them: more replicas than idle GPUs buy nodes
    of its own, as the proposal would (the scenario's language models may have taken the
    GPUs it used: counted twice). The host's empty GPU slots are offered too (buying:
    a rented plan offers none), less those earlier groups fill. A group with nodes of its
    own in the proposal is offered those of the first earlier group of its GPU and platform
    that has nodes of its own in the scenario (:func:`scenario_host`: session 22, Maple
    Ridge's embedder in the chat server's empty slot, on a server of its own once 50 %
    more users fill that slot, hosts the reranker as the proposal would)."""
    out: list[tuple[RetrievalGroup, dict[str, Value]]] = []
    free = {k: v[0] for k, v in idle.items()}
    free_cloud = {k: v[1] for k, v in idle.items()}
    slots = {k: v[2] for k, v in idle.items()}
    host_nodes = {k: v[3] for k, v in idle.items()}
    rented = acct.get("plan_rented", 0.0) > 0
    scen_acct = dict(acct)
    if sc.input in acct:
        scen_acct[sc.input] = float(evaluate(sc.value, acct))
    for w in workloads:
        o = w.best
        if o is None:
            continue
        values: dict[str, Value] = {k: o.values[k] for k in _INPUT_NAMES}
        host = scenario_host(o, [g for g, _ in out], free, slots)
        values["llm_free_gpus"] = free.get(host, 0.0) if host else 0.0
        values["llm_idle_cloud_gpus"] = free_cloud.get(host, 0.0) if host else 0.0
        values["llm_free_slots"] = slots.get(host, 0.0) if host and not rented else 0.0
        values["llm_host_nodes"] = host_nodes.get(host, 0.0) if host else 0.0
        if sc.retrieval_input is not None and sc.retrieval_value is not None:
            values[sc.retrieval_input] = evaluate(sc.retrieval_value, values)
            if sc.retrieval_input in acct:
                scen_acct[sc.retrieval_input] = float(values[sc.retrieval_input])
        _evaluate(values, o.gpu, o.platform, float(o.values["api_per_million_tokens"]),
                  scen_acct, tables, (float(o.values["alone_cloud_cost"]),
                                      float(o.values["alone_cloud_gpus"])))
        values["offered_host"] = host or ""  # the Scenarios sheet's formulas read it
        shares = host if float(values["shares_llm_nodes"]) > 0 else None
        if shares is not None:
            free[shares] = free[shares] - float(values["retrieval_gpus_on_llm_nodes"])
            slots[shares] = slots[shares] - float(values["retrieval_slots_filled"])
            # the rented instances it adds there carry the next one's replicas (session 25)
            free_cloud[shares] = float(values["retrieval_idle_cloud_left"])
        group = _group(len(out) + 1, w, o, values, shares, w.rented_alone)
        if shares is None:  # nodes of its own: their idle GPUs host the groups after it
            # its idle GPUs as the Scenarios sheet offers them (the column's idle row);
            # renting, no slot
            own, (_, _, n_free, n_cloud, n_slots, n_nodes) = _host_offer(
                group.id, o.model_copy(update={"values": values}))
            free[own], free_cloud[own], slots[own], host_nodes[own] = (
                float(n_free), float(n_cloud), float(n_slots), float(n_nodes))
        out.append((group, values))
    return out


def scenario_host(o: RetrievalOption, before: Sequence[RetrievalGroup],
                  free: Mapping[str, float], slots: Mapping[str, float]) -> str | None:
    """The node group whose idle GPUs and empty slots a scenario offers the recommended
    option ``o``: its host in the proposal; else, for one on nodes of its own, the first of
    the scenario's retrieval groups before it (``before``) with nodes of its own, the same
    GPU and platform, and an idle GPU or an empty slot left (``free``, ``slots``). Session 25
    (hunt seed 11): a proposal's host left with neither in the scenario is passed over for
    such a group the same way (50 % more chat users fill the RTX PRO 6000 server, the
    embedder buys a server, and the reranker joins it rather than buying a third)."""
    own = next((g.id for g in before if g.shares_with is None and g.gpu == o.gpu
                and g.platform == o.platform
                and free.get(g.id, 0.0) + slots.get(g.id, 0.0) > 0), None)
    if o.shares_with is not None:
        room = free.get(o.shares_with, 0.0) + slots.get(o.shares_with, 0.0) > 0
        return o.shares_with if room or own is None else own
    return own


def rag_first_token(req: Requirements, workloads: Sequence[WorkloadResult],
                    retrieval: Sequence[RetrievalWorkloadResult]) -> RagFirstToken | None:
    """The end-to-end time to first token of a RAG request (RAG_TTFT), when the account has
    an online embed workload, a rerank workload and a generating workload, each with a
    recommendation: the first of each, as listed."""
    embed = next((w for w in retrieval if w.kind == "embed" and w.best is not None
                  and float(w.best.values["request_rate_per_s"]) > 0), None)
    rerank = next((w for w in retrieval if w.kind == "rerank" and w.best is not None), None)
    llm = next((w for w in workloads if w.best is not None), None)
    if embed is None or rerank is None or llm is None:
        return None
    assert embed.best is not None and rerank.best is not None and llm.best is not None
    stated = next(w for w in req.workloads if w.name == embed.name).search_latency_s
    values: dict[str, float] = {
        "rag_embed_latency_s": float(embed.best.values["latency_p95_s"]),
        "rag_search_s": stated or 0.0,
        "rag_rerank_latency_s": float(rerank.best.values["latency_p95_s"]),
        "rag_llm_ttft_s": float(llm.best.values["ttft_p95_ms"]) / 1000}
    values[RAG_TTFT.name] = float(evaluate(RAG_TTFT.expr, values))
    return RagFirstToken(embed_workload=embed.name, rerank_workload=rerank.name,
                         llm_workload=llm.name, values=values)


def _host_offer(group_id: str, o: RetrievalOption, way: str = "on_prem"
                ) -> tuple[str, tuple[str, str, int, int, int, int]]:
    """A retrieval group's own nodes as a host for the retrieval workloads after it: its idle
    GPUs (bought, running nothing: retrieval_idle_gpus), its rented cloud GPUs beyond
    those in use (its TCO lines' cloud_gpus_rented - retrieval_gpus_used), its nodes'
    empty GPU slots (retrieval_free_slots) and its nodes (retrieval_nodes). Renting
    (``way``), only the rented ones are idle and no slot is offered: its nodes are not
    bought, and a workload "on" them would rent every GPU it runs on all the same."""
    v = o.values
    cloud = max(0, int(float(v["cloud_gpus_rented"])) - int(float(v["retrieval_gpus_used"])))
    idle = int(float(v["retrieval_idle_gpus"]))
    rented = way == "cloud"
    return group_id, (o.gpu, o.platform, min(idle, cloud) if rented else idle, cloud,
                      0 if rented else int(float(v["retrieval_free_slots"])),
                      int(float(v["retrieval_nodes"])))


def share_idle_gpus(req: Requirements, cat: Catalog, tables: Tables, acct: Mapping[str, float],
                    retrieval: Sequence[RetrievalWorkloadResult],
                    node_groups: Sequence[NodeGroup], way: str = "on_prem"
                    ) -> list[RetrievalWorkloadResult]:
    """The embed and rerank workloads sized again with idle GPUs and empty GPU slots on
    offer, in account order: the plan's language-model node groups' (bought, not used:
    gpus_purchased - gpus_used; and, session 22, the slots of a PCIe server bought part
    full: nodes x GPUs per node - gpus_purchased, where a replica buys its GPU but no
    server) and, review round 21, those of the retrieval workloads before it that buy nodes
    of their own (an embedder's 4-GPU server running 1 replica leaves 3 slots for the
    reranker). A workload whose replicas all fit one host's idle GPUs and empty slots of the
    same type, at a lower annual cost than its own nodes (in ``way``), takes them and they
    are gone for the next. Renting offers no slot (nothing is bought). Hosts are named by
    node-group id (``group-1``, ``retrieval-1``: the ids :func:`retrieval_groups` gives, in
    the same order)."""
    # idle rented cloud GPUs: the group's whole instances beyond its GPUs in use (its TCO
    # lines' cloud_gpus_rented); empty slots: its nodes' slots beyond the GPUs bought
    rented = way == "cloud"
    idle = {g.id: (g.gpu, g.platform, g.gpus_purchased - g.gpus_used,
                   # rented by the GPU, fewer than the bought plan's GPUs in use: none idle
                   max(0, int(g.values["cloud_gpus_rented"]) - g.gpus_used),
                   0 if rented else max(0, g.nodes * int(tables["platforms"][g.platform][
                       "gpus_per_node"]) - g.gpus_purchased), g.nodes)
            for g in node_groups}
    first = _share_pass(req, cat, tables, acct, retrieval, idle, way, not rented)
    if not any(w.best is not None and float(w.best.values.get("retrieval_rents_alone", 0)) > 0
               for w in first):
        return first
    # session 25: a guest priced alone where the host's instances lack room for it may leave
    # a later guest renting an instance of the host's GPU whose idle GPUs would have carried
    # it (an L4 embedder alone beside a reranker's added 4-GPU GB200 instance, 3 GPUs idle):
    # the guests' rent is the lower of that and of every guest on the host's instances, so it
    # never exceeds the host's instances for all of them (more load renting one more host
    # instance that carries them all never costs less)
    pooled = _share_pass(req, cat, tables, acct, retrieval, idle, way, False)
    return first if _guests_rent(first) < _guests_rent(pooled) else pooled


def _guests_rent(workloads: Sequence[RetrievalWorkloadResult]) -> float:
    """The rented view of the workloads on another group's nodes (retrieval_cloud_cost)."""
    return sum(float(w.best.values["retrieval_cloud_cost"]) for w in workloads
               if w.best is not None and w.best.shares_with is not None)


def _share_pass(req: Requirements, cat: Catalog, tables: Tables, acct: Mapping[str, float],
                retrieval: Sequence[RetrievalWorkloadResult],
                hosts: Mapping[str, tuple[str, str, int, int, int, int]], way: str,
                offer_alone: bool) -> list[RetrievalWorkloadResult]:
    """:func:`share_idle_gpus`'s pass over the workloads in account order (``hosts``: the
    node groups' idle GPUs, idle rented GPUs, empty slots and nodes); ``offer_alone``: each
    guest offered its cheapest option rented alone (:func:`rented_alone`)."""
    idle = dict(hosts)
    out: list[RetrievalWorkloadResult] = []
    for w in retrieval:
        offer: dict[str, list[Offer]] = {}
        for gid_group, (gpu, platform, free, free_cloud, slots, nodes) in idle.items():
            if free > 0 or slots > 0:
                offer.setdefault(gpu, []).append((gid_group, platform, free, free_cloud, slots,
                                                  nodes))
        spec = next(x for x in req.workloads if x.name == w.name)
        assert isinstance(spec.model, str)  # the schema refuses alternatives on embed/rerank
        # its cheapest option rented alone: the price of its replicas that the host's rented
        # instances do not carry, where that is less than more instances of the host's GPU
        # (a rented plan ranks its options by rent already: none)
        cheapest = rented_alone(w.options) if offer_alone else None
        again = size_retrieval(req, spec, cat.embedders[spec.model], cat, tables, acct, offer,
                               way, (cheapest.annual_cost_cloud, cheapest.cloud_gpus)
                               if cheapest else (0.0, 0.0))
        if cheapest is not None:
            again = again.model_copy(update={"rented_alone": cheapest})
        best = again.best
        group_id = f"retrieval-{sum(1 for x in out if x.best is not None) + 1}"
        if best is None or best.shares_with is None:
            out.append(w)
            if w.best is not None:  # nodes of its own: their idle GPUs host the next
                host, offered = _host_offer(group_id, w.best, way)
                idle[host] = offered
            continue
        gpu, platform, free, free_cloud, slots, nodes = idle[best.shares_with]
        v = best.values
        idle[best.shares_with] = (
            gpu, platform, free - int(float(v["retrieval_gpus_on_llm_nodes"])),
            # the rented instances it adds there carry the next one's replicas (session 25)
            int(float(v["retrieval_idle_cloud_left"])),
            slots - int(float(v["retrieval_slots_filled"])), nodes)
        out.append(again)
    return out


def rented_alone(options: Sequence[RetrievalOption]) -> RentedAlone | None:
    """A workload's cheapest option rented on instances of its own (``options``: sized with no
    host, each GPU on its platform): feasible, with a cloud price; at a tie the first by GPU
    id. What a guest on a bought group's idle GPUs is priced at, rented, when the group's
    rented instances do not carry it and this costs less than more instances of the group's
    GPU (calculations/retrieval.py retrieval_rents_alone; session 25, hunt seed 61)."""
    priced = sorted((o for o in options if o.feasible and o.shares_with is None
                     and float(o.values["cloud_price_known"]) > 0
                     and float(o.values["annual_cost_cloud"]) > 0), key=lambda o: o.id)
    o = min(priced, key=lambda o: float(o.values["annual_cost_cloud"]), default=None)
    if o is None:
        return None
    v = o.values
    return RentedAlone(gpu=o.gpu, platform=o.platform,
                       instances=int(float(v["cloud_instances"])),
                       instance_gpus=int(float(v["cloud_instance_gpus"])),
                       cloud_gpus=int(float(v["cloud_gpus_rented"])),
                       annual_cost_cloud=float(v["annual_cost_cloud"]))


def shared_split(group: RetrievalGroup) -> tuple[int, int]:
    """(the idle GPUs it takes, the GPUs it buys for empty slots) of a retrieval group on
    another group's nodes: its GPUs serving or on standby (with N+1 its spare GPUs there,
    session 24) less its GPUs bought, and those GPUs (session 22)."""
    return group.gpus_used - group.gpus_purchased, group.gpus_purchased


def lent_and_idle(group: NodeGroup | RetrievalGroup,
                  retrieval: Sequence[RetrievalGroup]) -> tuple[int, int]:
    """(the GPUs of a node group that the retrieval groups sharing it run, its idle GPUs
    left): the plan's words split a group's GPUs with them ("128 serving, 5 running
    retrieval, 11 idle"), so they add up to the account's total. The group is a
    language-model node group or, review round 21, a retrieval group's own nodes. A guest's
    GPUs bought for the group's empty slots (its gpus_purchased) are its own, not lent."""
    lent = sum(r.gpus_used - r.gpus_purchased for r in retrieval if r.shares_with == group.id)
    idle = (group.idle_gpus if isinstance(group, RetrievalGroup)
            else int(group.values["group_idle_gpus"]))
    return lent, idle - lent
