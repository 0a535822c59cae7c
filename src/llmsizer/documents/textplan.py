"""The account's plan and total under the terminal's tables (``llmsizer size``): what is
bought or rented, which workloads share what, the saving, and the total in the cover's words."""

from __future__ import annotations

from rich.console import Console

from ..model.catalog import load_catalog
from ..model.names import short_name
from ..sizing.results import PlanPool, Result, RetrievalWorkloadResult, WorkloadResult
from .proposal.deployment import deployment_context
from .proposal.format import (
    NBSP,
    Formatter,
    batch_words,
    cloud_unpriced_words,
    gpu_list,
    gpu_split,
    group_split,
    option_words,
    retrieval_split,
    shared_gpus_words,
)
from .proposal.plan import (
    alone_rent_words,
    alone_storage_words,
    instances_split,
    spare_words,
    spread_words,
)
from .textwords import counted, headroom_places, headroom_text, money, say

# engine classes the catalog names by their kind ("serving stack (Text Embeddings Inference,
# Infinity, NIM)"): the plan's sentence gives them an article; products keep their name
_KINDS = frozenset({"serving", "hand-fused", "deep-learning"})


def print_total(result: Result, con: Console) -> None:
    """The account's total in the cover's words: none where nothing meets the targets (a
    "Total: 0 GPUs ... USD 0" read as a free plan), the workloads it leaves out named, and the
    GPUs without a purchase price that the capital and on-premises figures leave out."""
    cat, cur, tot = load_catalog(), result.account.currency, result.totals
    every: list[WorkloadResult | RetrievalWorkloadResult] = [*result.workloads, *result.retrieval]
    unmet = [w.name for w in every if w.recommended is None]
    if not result.plan.node_groups and not result.plan.retrieval_groups:
        say(con, "No configuration meets the stated targets: nothing to buy, so no total.",
            style="bold")
        return
    chosen = [o for w in every for o in w.options if o.id == w.recommended]
    no_price = list(dict.fromkeys(o.gpu for o in chosen if not o.priced))
    # GPUs bought, as the plan lines and the PDF count them ("72 GPUs bought, 1 used" on a
    # rack read beside "Total: 1 GPU" as if the rack were one GPU): serving, standby, idle
    split = gpu_split(tot.gpus_serving, tot.gpus_standby, tot.gpus_idle)
    gpus = f"{counted(tot.gpus_purchased, 'GPU')} bought" + (f" ({split})" if split else "")
    cloud = (f"cloud {money(tot.annual_cost_cloud, cur)}/yr" if tot.annual_cost_cloud is not None
             else cloud_unpriced_words(tot.cloud_unpriced, cat.gpus, unheld=tot.cloud_unheld))
    buy = f"{gpus} in {counted(tot.nodes, 'node')}; capex {money(tot.capex, cur)}; " \
          f"on-prem {money(tot.annual_cost_onprem, cur)}/yr"
    way = deployment_context(result, Formatter(cur))["deployment"]
    # the way recommended leads, as on the PDF's cover: renting or an API first, buying after
    if way is not None and way["recommended"] == "cloud":
        say(con, f"Total: {counted(tot.cloud_gpus_rented, 'GPU')} rented in the cloud; {cloud}. "
                 f"The alternative, buying: {buy}")
    elif way is not None and way["recommended"] == "api" and tot.annual_cost_api is not None:
        say(con, f"Total: a hosted API, {money(tot.annual_cost_api, cur)}/yr. The "
                 f"alternative, buying, sized for comparison: {buy}; {cloud}")
    else:
        say(con, f"Total: {buy}; {cloud}")
    if way is not None and way["recommended"] != "on_prem":  # the PDF's sentence: renting or
        # an API recommended read as servers to buy from the plan and capex lines alone
        # the PDF's sections are the proposal's: the terminal names it ("(section 6, prices
        # used)" read as a part of this output, review round 19)
        words = f"{way['lead']} {way['cheaper']}".replace("(section ", "(the PDF proposal's section ")
        say(con, " ".join(words.replace(NBSP, " ").split()), style="bold")
    if unmet:  # the PDF summary's words
        done = len(every) - len(unmet)
        say(con, f"Totals cover the {counted(done, 'workload')} with a recommendation; "
                 f"{counted(len(unmet), 'workload')} ({', '.join(unmet)}) "
                 f"{'needs' if len(unmet) == 1 else 'need'} a change of target, model or "
                 "hardware first.", style="yellow")
    if no_price:
        say(con, "The capital and on-premises figures leave out the GPUs: "
                 f"{gpu_list(no_price, cat.gpus)} {'has' if len(no_price) == 1 else 'have'} "
                 "no purchase price.", style="yellow")


def print_plan(result: Result, con: Console, places: int | None = None) -> None:
    """The account plan: what is bought, which workloads share what, and the saving, in the
    words of the proposal (platform and GPU names, precisions), not option ids. ``places``:
    the decimals of every headroom (textwords.headroom_places; None: worked out here)."""
    cat = load_catalog()
    if places is None:
        places = headroom_places(result)
    cur = result.account.currency
    pools = {p.id: p for p in result.plan.pools}

    def platform(pid: str) -> str:
        return short_name(cat.platforms[pid].name) if pid in cat.platforms else pid

    def gpu(gid: str) -> str:
        return cat.gpus[gid].name if gid in cat.gpus else gid

    def pool_batch(p: PlanPool) -> str:
        # one member: its batch limit and the batch the load keeps it at, the options'
        # figure; shared: the pool's mixed batch (plan_pools.py pool_batch_per_replica)
        best = result.workloads[p.workload_indices[0]].best
        if len(p.workload_indices) == 1 and best is not None:
            return batch_words(float(best.values["batch_per_replica"]),
                               float(best.values["batch_served"]))
        return f"mixed batch {p.batch_per_replica:,} at peak"

    rented = result.deployment.recommended == "cloud"
    n_plus_one = bool(result.account_inputs.get("survive_node_loss"))
    for g in result.plan.node_groups:
        added = int(g.values.get("group_spare_nodes_added", 0.0))
        # the GPUs bought in the proposal's words: serving, on standby (the N+1 spares that
        # run no replica: a failed node's replicas restart on them), idle
        split = group_split(g, result.plan.retrieval_groups)
        notes = [f": {split}" if split else "",
                 f"; {added} spare node{'' if added == 1 else 's'} added for N+1" if added else ""]
        spread = "" if rented else spread_words(g, cur).replace(NBSP, " ")
        notes += [f"; {spread}" if spread else ""]
        if rented:  # the PDF cover's terms, from the group's rows (GPUs rented, instances)
            n_rented = int(g.values["cloud_gpus_rented"])
            n_instances = int(g.values["cloud_instances"])
            # GPU counts after an instance count read as instances ("3 cloud instances (16
            # serving, 8 on standby)", session 24): name them GPUs unless each is one GPU
            gpus_of = "" if n_instances == n_rented else "GPUs: "
            say(con, f"Plan, rented in the cloud: {n_rented:,} × {gpu(g.gpu)} in "
                     f"{counted(n_instances, 'cloud instance')}"
                     + (f" ({gpus_of}{split})" if split and n_rented == g.gpus_purchased else
                        f" ({instances_split(g)})" if instances_split(g) else ""),
                style="bold")
        else:
            say(con, f"Plan: {g.nodes:,} × {platform(g.platform)} "
                     f"({counted(g.gpus_purchased, 'GPU')} bought{''.join(notes)})", style="bold")
        for pid in g.pools:
            p = pools[pid]
            words = option_words(gpu(p.gpu), p.tp, p.weight_precision, p.kv_precision)
            say(con, f"Pool {pid.removeprefix('pool-')}: {', '.join(p.workloads)} — "
                          f"{words}; {p.replicas:,} "
                          + ("decode " if p.prefill_replicas else "")
                          + f"replica{'' if p.replicas == 1 else 's'}"
                          + (f" fed by {p.prefill_replicas:,} prefill replicas of "
                             f"{p.prefill_gpus_per_replica} GPUs" if p.prefill_replicas else "")
                          + f", {pool_batch(p)}; spare: "
                          f"{spare_words(p, g, rented, n_plus_one).long}; "
                          f"headroom {headroom_text(p.headroom_achieved, places)}, "
                          + node_down(p.headroom_after_node_loss,
                                      p.values.get("pool_replicas_one_down"),
                                      int(g.values.get("group_nodes_as_run", g.nodes)),
                                      "instance" if rented else "node", places),
                first="  ", rest="    ")
    for rg in result.plan.retrieval_groups:
        engine = next((w.engine for w in result.retrieval if w.name == rg.workload), "")
        served = cat.encoder_engines[engine].name if engine in cat.encoder_engines else engine
        if served.split(" ", 1)[0] in _KINDS:  # "served by serving stack (…)" (round 22)
            served = f"a {served}"
        what = (f"{rg.workload} ({'embedding' if rg.kind == 'embed' else 'reranking'}), "
                f"{counted(rg.replicas, 'replica')} on {gpu(rg.gpu)} served by {served}, limited by "
                f"{rg.limited_by}")
        rhost = next((g for g in result.plan.retrieval_groups if g.id == rg.shares_with), None)
        if rg.shares_with:  # the PDF's words: it buys no server ("0 × Dell PowerEdge XE9680"
            # read as a bug); on a language-model group's or (review round 21) an earlier
            # retrieval group's idle GPUs, or (session 22) GPUs it adds in their empty slots
            bought = ("no GPUs or servers bought for it" if not rg.gpus_purchased else
                      f"{counted(rg.gpus_purchased, 'GPU')} bought for it, no server")
            alone = (f"; {alone_rent_words(rg, gpu(rg.rents_alone.gpu))}"
                     if rg.rents_alone else "")
            say(con, f"Retrieval serving: use {shared_gpus_words(rg)}"
                     f" of the {rhost.workload if rhost else 'language-model'} servers "
                     f"({platform(rg.platform)}) for {what}; {bought}{alone}", style="bold")
        elif result.deployment.recommended == "cloud":  # the PDF's: the GPUs it rents
            say(con, f"Plan, rented in the cloud: {rg.cloud_gpus:,} × {gpu(rg.gpu)} for {what}; "
                     "on instances of its own, not shared with the language models",
                style="bold")
        else:
            split = retrieval_split(rg, result.plan.retrieval_groups)
            say(con, f"Plan: {rg.nodes:,} × {platform(rg.platform)} "
                     f"({counted(rg.gpus_purchased, 'GPU')} bought{': ' + split if split else ''}) for "
                     f"{what}; on its own servers, not shared with the language models",
                style="bold")
    ded, tot = result.totals_dedicated, result.totals
    if result.deployment.recommended == "cloud":  # a rented account's terms, as the PDF's
        if ded.annual_cost_cloud is not None and ded.annual_cost_cloud != tot.annual_cost_cloud:
            why = alone_storage_words(result)
            say(con, f"Sized alone the workloads would rent {counted(ded.cloud_gpus_rented, 'GPU')}, "
                     f"cloud {money(ded.annual_cost_cloud, cur)}/yr" + (f": {why}." if why else "."))
    elif ded.annual_cost_onprem != tot.annual_cost_onprem or ded.nodes != tot.nodes:
        say(con, f"Sized alone the workloads would need {counted(ded.gpus_purchased, 'GPU')} in "
                 f"{counted(ded.nodes, 'node')}, on-prem {money(ded.annual_cost_onprem, cur)}/yr.")


def node_down(headroom: float, left: float | None, nodes: int, node: str = "node",
              places: int | None = None) -> str:
    """The headroom with a node down in the PDF's words: where no replica is left the service
    stops (a "-100%" headroom read as a figure, not as an outage). ``node``: what goes down
    ("instance" where the plan is rented: a cloud plan has no node); ``places``: the
    decimals of the result's every headroom (textwords.headroom_places)."""
    a = "an" if node[0] in "aeiou" else "a"
    if nodes == 1:
        return f"the service stops while its one {node} is down"
    if (left is not None and left <= 0) or headroom <= -1:
        return f"the service stops while {a} {node} is down"
    # below zero the PDF says what it means: "peak demand is not met while a node is down"
    return (f"{headroom_text(headroom, places)} with {a} {node} down"
            + (" (peak demand not met)" if headroom < 0 else ""))
