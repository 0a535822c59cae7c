"""Session 24: a property hunt over session 23's money rules (one spare cloud instance per
node group, offers sold in listed sizes only, network per server from its own ports, N+1 on
part-filled PCIe servers, the rented views).

Two levels:

1. The plan's node-group stages by hand (tests/test_node_loss_slots.py ``_group``): random
   pools (TP 1 to 8, 1 to 14 replicas for the load, a peak at or below it) on 1- to 8-GPU
   nodes, fixed baseboards and PCIe servers bought part full, one to three pools. With N+1 a
   placement is built from the plan's own rows (a pool alone: its replicas spread evenly over
   the group's nodes; pools sharing: packed node by node, the widest replicas first, the free
   GPUs on the nodes running nothing first) and every node is taken down in turn: the lost
   replicas restart on whole free slots of the surviving nodes (first fit, widest first), and
   every pool must still run its peak -- and at least the replicas the plan says it runs.
2. Accounts sized end to end (catalog GPUs sold by the GPU with and without listed sizes,
   bought and rented, N+1 or not): every pool keeps its peak with one node or rented
   instance down; a listed-size offer rents only a size it lists, each instance holding
   whole replicas; more users never buy or rent fewer GPUs per option nor cost less; the
   network is each server's own ports at the price per port, whatever the node count.

CI runs a few derandomized examples (support/hunting.py); LLMSIZER_HYPOTHESIS_EXAMPLES and
--hypothesis-seed run a hunt.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st
from support.hunting import property_settings
from support.libreoffice import read_values
from test_node_loss_slots import _group, _pool
from test_workbook import libreoffice_check

from llmsizer.base.errors import LlmsizerError
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.evaluate import _ports, account_inputs
from llmsizer.sizing.results import Result

CAT = load_catalog()
ROWS = property_settings(60, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(HealthCheck))
SETTINGS = property_settings(8, deadline=None, derandomize=True, database=None,
                             suppress_health_check=list(HealthCheck))
EPS = 1e-9


# --- 1. the group stages by hand -----------------------------------------------------------

@st.composite
def groups(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int, bool]:
    gpn = draw(st.sampled_from([1, 2, 4, 8]))
    n = draw(st.integers(1, 3))
    pools = []
    for _ in range(n):
        tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if t <= gpn]))
        load = draw(st.integers(1, 14))
        demand = load * draw(st.sampled_from([1.0, 0.99, 0.8, 0.5]))
        pools.append(_pool(tp, load, demand, gpn))
    return pools, gpn, draw(st.booleans())


def _placement(g: dict[str, Any], envs: list[Any], gpn: int,
               sold_full: bool) -> tuple[list[list[int]], list[int]]:
    """The plan's placement, built from its rows: per node the pools' replica indices it runs
    (one entry per replica) and its free GPUs. A pool alone spreads its replicas evenly over
    the group's nodes; pools sharing are packed node by node, widest replicas first, and the
    free GPUs fill the nodes running nothing first (plan_pools.py GROUP_SIZE_CALCULATIONS)."""
    nodes = int(g["group_nodes"])
    run: list[list[int]] = [[] for _ in range(nodes)]
    used = [0] * nodes
    if len(envs) == 1:
        e = envs[0]
        reps, tp = int(e["pool_replicas"]), int(e["tp"])
        for i in range(reps):
            run[i % nodes].append(0)
            used[i % nodes] += tp
    else:
        order = sorted(range(len(envs)), key=lambda i: -int(envs[i]["tp"]))
        k = 0
        for i in order:
            tp = int(envs[i]["tp"])
            for _ in range(int(envs[i]["pool_replicas"])):
                if used[k] + tp > gpn:
                    k += 1
                run[k].append(i)
                used[k] += tp
    free_total = int(g["group_gpus_purchased"]) - sum(used)
    free = [0] * nodes
    # nodes running nothing first, then the partly used one(s)
    for j in sorted(range(nodes), key=lambda j: (used[j] > 0, -used[j])):
        room = gpn - used[j]
        take = min(room, free_total)
        free[j] = take
        free_total -= take
    assert free_total == 0, "GPUs bought beyond the nodes' slots"
    return run, free


def _after_each_node_down(envs: list[Any], run: list[list[int]], free: list[int],
                          gpn: int) -> list[list[int]]:
    """Per node down, each pool's replicas running once its lost ones restarted on whole free
    slots of the other nodes (widest first, first fit)."""
    out = []
    for down in range(len(run)):
        slots = [f for j, f in enumerate(free) if j != down]
        lost = sorted(run[down], key=lambda i: -int(envs[i]["tp"]))
        running = [int(e["pool_replicas"]) for e in envs]
        for i in lost:
            running[i] -= 1
        for i in lost:
            tp = int(envs[i]["tp"])
            for j, f in enumerate(slots):
                if f >= tp:
                    slots[j] -= tp
                    running[i] += 1
                    break
        out.append(running)
    return out


@ROWS
@given(groups())
def test_n_plus_1_every_node_down_leaves_every_pools_peak(
        case: tuple[list[dict[str, Any]], int, bool]) -> None:
    pools, gpn, sold_full = case
    g, envs = _group(copy.deepcopy(pools), gpn, n1=True, sold_full=sold_full)
    # a group's spare never exceeds one node's GPUs, nor the load
    assert g["group_spare_gpus"] <= min(gpn, g["group_load_gpus"])
    if len(envs) == 1 and not sold_full:
        # a part-filled PCIe spare holds at least the fullest node's replicas for the load
        assert g["group_spare_gpus"] >= envs[0]["pool_fullest_node_gpus"]
    for e in envs:
        assert e["pool_headroom_after_node_loss"] >= -EPS, (e["tp"], e["pool_replicas"])
    run, free = _placement(g, envs, gpn, sold_full)
    for j, reps in enumerate(run):
        assert sum(int(envs[i]["tp"]) for i in reps) + free[j] <= gpn, ("node over full", j)
    for running in _after_each_node_down(envs, run, free, gpn):
        for i, e in enumerate(envs):
            assert running[i] >= e["pool_demand_replicas"] - EPS, (i, running, run, free)
            assert running[i] >= e["pool_replicas_after_node_loss"], (i, running, run, free)


@ROWS
@given(groups(), st.data())
def test_one_more_replica_never_buys_fewer_gpus_or_nodes(
        case: tuple[list[dict[str, Any]], int, bool], data: st.DataObject) -> None:
    """One pool's load one replica more (its peak with it): the group never buys fewer GPUs,
    uses fewer, nor needs fewer nodes, with N+1 or without."""
    pools, gpn, sold_full = case
    n1 = data.draw(st.booleans())
    i = data.draw(st.integers(0, len(pools) - 1))
    more = copy.deepcopy(pools)
    p = more[i]
    p["pool_demand_replicas"] += 1
    p["pool_replicas_for_load"] += 1
    p["pool_load_gpus"] += p["tp"]
    g0, _ = _group(copy.deepcopy(pools), gpn, n1=n1, sold_full=sold_full)
    g1, _ = _group(more, gpn, n1=n1, sold_full=sold_full)
    for key in ("group_gpus_purchased", "group_gpus_used", "group_nodes"):
        assert g1[key] >= g0[key], key


@ROWS
@given(st.sampled_from([1, 2, 4]), st.integers(1, 8), st.integers(1, 10),
       st.sampled_from([1.0, 0.9, 0.5]), st.booleans())
def test_a_replica_wider_than_a_node_keeps_its_peak_with_n_plus_1(
        gpn: int, width: int, load: int, share: float, sold_full: bool) -> None:
    """TP wider than the node (2 to 8 nodes a replica): N+1 still leaves the peak with a node
    down (the spare node added restarts the replica that lost one of its nodes)."""
    tp = gpn * (2 ** (width % 3 + 1))
    g, (e,) = _group([_pool(tp, load, load * share, gpn)], gpn, n1=True, sold_full=sold_full)
    assert e["pool_headroom_after_node_loss"] >= -EPS
    assert g["group_spare_gpus"] <= gpn


# --- 2. accounts sized end to end ----------------------------------------------------------

MODELS = ["llama-3.1-8b", "llama-3.1-70b", "gemma-2-27b", "qwen3-32b", "mistral-7b",
          "qwen3-30b-a3b", "gpt-oss-20b"]
# sold by the GPU with listed sizes (l4, l40s: AWS G6/G6e), fixed 1-GPU sizes (a10 on some
# tiers), GPU clouds' pods (h100, h200), whole instances (a10g), PCIe servers
GPUS = ["l4", "l40s", "a10", "h100-sxm", "h200-sxm", "a10g", "rtx-pro-6000", "h100-pcie",
        "a100-sxm", "h100-nvl", "b200", "mi300x", "gb200", "a100-80gb-pcie"]
TIERS = ["hyperscaler_on_demand", "committed_1yr", "committed_3yr", "gpu_cloud"]


@st.composite
def accounts(draw: st.DrawFn) -> dict[str, Any]:
    ws = []
    for i in range(draw(st.integers(1, 3))):
        model = draw(st.sampled_from(MODELS))
        out = draw(st.sampled_from([100, 300, 800]))
        ws.append({"name": f"w{i}", "model": model,
                   "concurrent_users": draw(st.integers(1, 400)),
                   "prompt_tokens": draw(st.sampled_from([200, 1500, 6000])),
                   "output_tokens": out,
                   "targets": {"tokens_per_s_per_user": draw(st.sampled_from([8, 15, 30])),
                               "ttft_s": draw(st.sampled_from([1.0, 3.0, 8.0]))}})
    if draw(st.booleans()):  # embedding and reranking servers beside them
        ws.append({"name": "embed", "kind": "embed", "model": "bge-m3",
                   "requests_per_s": draw(st.sampled_from([5, 50, 400])),
                   "tokens_per_request": 64, "targets": {"latency_p95_s": 0.1}})
        ws.append({"name": "rerank", "kind": "rerank", "model": "bge-reranker-v2-m3",
                   "requests_per_s": draw(st.sampled_from([5, 50, 200])),
                   "candidates_per_request": 30, "tokens_per_pair": 320,
                   "targets": {"latency_p95_s": 0.4}})
    return {"schema_version": 1, "account": {"name": "t"}, "workloads": ws,
            "hardware": {"gpus": draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=2,
                                               unique=True)),
                         "weight_precisions": ["fp8", "bf16"], "kv_precisions": ["fp8"]},
            "policy": {"headroom": draw(st.sampled_from([0, 0.2, 0.5])),
                       "survive_node_loss": draw(st.booleans()), "disaggregated": "never",
                       "deployment": draw(st.sampled_from(["on_prem", "cloud", "cheapest"]))},
            "costs": {"cloud_tier": draw(st.sampled_from(TIERS))}}


# hunt seed 5 (plan): pools sharing rented whole instances, a TP1 and a TP2 pool beside
# 3 x TP4 (test_pools_sharing_rented_instances_restart_on_the_empty_one)
A10G_SHARED = {
    "schema_version": 1, "account": {"name": "t"},
    "workloads": [
        {"name": "w0", "model": "mistral-7b", "concurrent_users": 3, "prompt_tokens": 1500,
         "output_tokens": 300, "targets": {"tokens_per_s_per_user": 8, "ttft_s": 1.0}},
        {"name": "w1", "model": "gpt-oss-20b", "concurrent_users": 88, "prompt_tokens": 6000,
         "output_tokens": 300, "targets": {"tokens_per_s_per_user": 8, "ttft_s": 3.0}},
        {"name": "w2", "model": "gpt-oss-20b", "concurrent_users": 3, "prompt_tokens": 1500,
         "output_tokens": 800, "targets": {"tokens_per_s_per_user": 15, "ttft_s": 1.0}}],
    "hardware": {"gpus": ["a10g"], "weight_precisions": ["fp8", "bf16"],
                 "kv_precisions": ["fp8"]},
    "policy": {"headroom": 0, "survive_node_loss": True, "disaggregated": "never",
               "deployment": "cloud"},
    "costs": {"cloud_tier": "hyperscaler_on_demand"}}
# hunt seed 22 (more load): the embedder moves into a grown host's empty slot
L4_EMBED_MOVES = {
    "schema_version": 1, "account": {"name": "t"},
    "workloads": [
        {"name": "w0", "model": "qwen3-30b-a3b", "concurrent_users": 128, "prompt_tokens": 1500,
         "output_tokens": 800, "targets": {"tokens_per_s_per_user": 15, "ttft_s": 8.0}},
        {"name": "w1", "model": "mistral-7b", "concurrent_users": 128, "prompt_tokens": 6000,
         "output_tokens": 100, "targets": {"tokens_per_s_per_user": 15, "ttft_s": 8.0}},
        {"name": "embed", "kind": "embed", "model": "bge-m3", "requests_per_s": 50,
         "tokens_per_request": 64, "targets": {"latency_p95_s": 0.1}},
        {"name": "rerank", "kind": "rerank", "model": "bge-reranker-v2-m3", "requests_per_s": 50,
         "candidates_per_request": 30, "tokens_per_pair": 320, "targets": {"latency_p95_s": 0.4}}],
    "hardware": {"gpus": ["l4"], "weight_precisions": ["fp8", "bf16"], "kv_precisions": ["fp8"]},
    "policy": {"headroom": 0, "survive_node_loss": True, "disaggregated": "never",
               "deployment": "on_prem"},
    "costs": {"cloud_tier": "committed_3yr"}}


def _size(d: dict[str, Any]) -> Result | None:
    try:
        return size(load_from_text(yaml.safe_dump(d), "t.yaml"), CAT)
    except LlmsizerError:
        return None


def _listed_sizes(v: dict[str, float]) -> set[float]:
    return {1.0, v["cloud_gpus_per_instance"]} | {
        s for s in (v["cloud_size1_gpus"], v["cloud_size2_gpus"]) if s > 0}


def _check_plan(r: Result, d: dict[str, Any]) -> None:
    n1 = d["policy"]["survive_node_loss"]
    groups_by_pool = {p: g for g in r.plan.node_groups for p in g.pools}
    for p in r.plan.pools:
        v, gv = p.values, groups_by_pool[p.id].values
        ov = next(o for o in r.workloads[p.workload_indices[0]].options
                  if o.id == p.option).values  # the catalog's offer for the pool's GPU
        if n1 and v["pool_meets_targets"] > 0:
            # with any one node (bought) or instance (rented) down, the pool runs its peak
            assert v["pool_headroom_after_node_loss"] >= -EPS, (p.id, "bought")
            if ov["cloud_gpu_hour"] > 0:
                assert v["pool_headroom_after_instance_loss"] >= -EPS, (p.id, "rented")
        if (r.deployment.recommended == "cloud" and len(p.workloads) == 1
                and len(groups_by_pool[p.id].pools) == 1):
            # the rented views (rented.py): a pool of one workload alone in its group runs as
            # its option rented (hunt seed 52: beside another pool its bought spares are the
            # group's standby node, not spare replicas of its own: 2 A100 TP4 replicas run, the
            # option sized alone rents 4)
            assert v["pool_replicas_as_run"] == ov["rented_replicas"], p.id
            assert v["pool_headroom_as_run"] == pytest.approx(ov["rented_headroom"], abs=1e-9)
        if ov["cloud_sold_by_gpu"] > 0 and ov["cloud_sizes_listed"] > 0:
            size_ = gv["cloud_instance_gpus"]
            assert size_ in _listed_sizes(ov), (p.id, size_)
            # an instance holds whole replicas, or the replica spans 1-GPU instances
            assert size_ % p.tp == 0 or size_ == 1, (p.id, size_, p.tp)
    for w in r.workloads:
        for o in w.options:
            v = o.values
            if not o.feasible or v["cloud_sold_by_gpu"] <= 0:
                continue
            if v["cloud_sizes_listed"] > 0:
                assert v["cloud_instance_gpus"] in _listed_sizes(v), o.id
                assert v["cloud_gpus_rented"] == v["cloud_instances"] * v["cloud_instance_gpus"]
                assert v["cloud_instance_gpus"] % o.tp == 0 or v["cloud_instance_gpus"] == 1
            # rented, the replicas running keep the policy's headroom (stated streams aside)
            if v["stream_replicas"] <= 0:
                assert v["rented_headroom"] >= d["policy"]["headroom"] - 1e-9, o.id
            if n1 and v["load_gpus"] > 0:
                # one spare instance, as wide as a replica's instance, beside the load's
                assert v["cloud_spare_instances"] == 1, o.id
                assert v["cloud_gpus_rented"] - v["cloud_spare_gpus"] >= v["load_gpus"], o.id
    for rg in r.plan.retrieval_groups:
        assert rg.replicas + rg.standby_gpus + rg.idle_gpus == rg.gpus_purchased or rg.shares_with
        if n1 and rg.shares_with is None and rg.replicas > 0:
            # its own nodes: one node down takes at most its fullest node's replicas, which
            # the spare node's GPUs hold
            gpn = CAT.platforms[rg.platform].gpus_per_node
            fullest = math.ceil(rg.replicas / math.ceil(rg.replicas / gpn))
            assert rg.nodes >= 2 and rg.standby_gpus >= fullest, rg.id
    for g in r.plan.node_groups:
        v = g.values
        # a group's spare never exceeds one node's GPUs (a replica fits in one node here)
        assert v["group_spare_gpus"] <= CAT.platforms[g.platform].gpus_per_node
        if v["cloud_sold_by_gpu"] > 0 and v["cloud_sizes_listed"] > 0:
            assert v["cloud_gpus_rented"] == v["cloud_instances"] * v["cloud_instance_gpus"]


def _network_per_server(pid: str, acct: dict[str, float]) -> float:
    """A server's own ports at the price per port (platforms.yaml gpu_fabric, the catalog's
    ports): the GPU fabric's ports where it is built for one, and its front end's Gb/s."""
    ports = _ports(CAT, pid)
    return (float(CAT.platforms[pid].gpu_fabric) * ports["fabric_ports"]
            * acct["network_per_fabric_port"]
            + ports["frontend_ports"] * ports["frontend_gbps"] * acct["network_per_frontend_gbps"])


def _check_network(r: Result, d: dict[str, Any]) -> None:
    acct = account_inputs(load_from_text(yaml.safe_dump(d), "t.yaml").req, CAT)
    for w in r.workloads:
        for o in w.options:
            if o.feasible:
                per_node = _network_per_server(o.platform, acct)
                v = o.values
                assert v["network_per_node_used"] == pytest.approx(per_node, rel=1e-12), o.id
                assert v["capex_network"] == pytest.approx(v["nodes"] * per_node, rel=1e-12)
    for g in r.plan.node_groups:
        per_node = _network_per_server(g.platform, acct)
        assert g.values["capex_network"] == pytest.approx(g.nodes * per_node, rel=1e-12), g.id


@SETTINGS
@example(A10G_SHARED)
@given(accounts())
def test_a_sized_plan_keeps_n_plus_1_listed_sizes_and_network(d: dict[str, Any]) -> None:
    r = _size(d)
    if r is None:
        return
    _check_plan(r, d)
    _check_network(r, d)


def _choices(r: Result) -> list[Any]:
    return ([w.recommended for w in r.workloads]
            + [(g.workload, g.gpu, g.platform, g.shares_with) for g in r.plan.retrieval_groups])


_GROWS = ("gpus_purchased", "capex", "annual_cost_onprem", "cloud_gpus_rented",
          "annual_cost_cloud")


@SETTINGS
@example(L4_EMBED_MOVES, 2.048027635054324)
@given(accounts(), st.floats(1.05, 4))
def test_more_users_never_buy_or_rent_less(d: dict[str, Any], factor: float) -> None:
    """Per option (the same GPU, precision, TP and platform): more users on the first workload
    (and more requests/s on the embedding and reranking servers) never buy fewer GPUs, rent
    fewer, nor cost less, bought or rented; with the same options chosen, nor does the plan."""
    more = copy.deepcopy(d)
    w = more["workloads"][0]
    w["concurrent_users"] = max(w["concurrent_users"] + 1, math.floor(w["concurrent_users"]
                                                                       * factor))
    for x in more["workloads"]:
        if "requests_per_s" in x:  # the embedding and reranking servers' requests/s too
            x["requests_per_s"] *= factor
    easy, hard = _size(d), _size(more)
    if easy is None or hard is None:
        return
    before = {o.id: o for o in easy.workloads[0].options}
    for o in hard.workloads[0].options:
        was = before[o.id]
        if not (o.feasible and was.feasible):
            continue
        for key in _GROWS:
            if (key == "gpus_purchased" and d["policy"]["survive_node_loss"]
                    and not CAT.platforms[o.platform].sold_full):
                # a PCIe server bought part full spares its fullest server's replicas: more
                # load spread over one server more may need a smaller spare (hunt seed 71:
                # 8 x RTX PRO 6000 replicas on 8-slot XE7745s, 2 full servers = 16 GPUs;
                # 9 spread 5 + 4 + a spare of 5 = 14 GPUs in 3 servers, USD 201,434.50 ->
                # 216,501.75): fewer GPUs, never less money. Session 25: the layout is the
                # one that costs less a year (spread.py), so GPUs still fall with load where
                # the cheaper layout changes (the hunt's case keeps 2 servers of 8: a server
                # costs USD 40,519.76 a year, four GPUs 14,846; Lakeshore Mutual, no
                # colocation, with a licence: 14 GPUs at 7 replicas, 12 at 8, spread over 3).
                # What holds is the money below, the on-prem cost per year the minimum of two
                # layouts that each cost more with more load (tests/test_pcie_spread_s25.py
                # checks both layouts' pools by hand)
                continue
            assert o.values[key] >= was.values[key] * (1 - 1e-12) - EPS, (o.id, key)
    if _choices(easy) == _choices(hard):
        # the same options chosen, each embedding and reranking server where it was: the plan
        # buys, rents and costs no less. A retrieval workload that moves onto a grown host's
        # empty slots may cost less in all (hunt seed 22: the L4 chat group grows from 6 full
        # XE7745s to 7 with 4 empty slots and the embedder leaves its own 2 PCIe servers, N+1,
        # for one slot, USD 254,322 -> 248,474 a year): the plan never grows a host for a
        # retrieval workload, a placement it does not search
        t0, t1 = easy.totals, hard.totals
        assert t1.gpus_purchased >= t0.gpus_purchased
        assert t1.capex >= t0.capex * (1 - 1e-12)
        assert t1.annual_cost_onprem >= t0.annual_cost_onprem * (1 - 1e-12)
        # rented, the whole plan's, its embedding and reranking servers included (hunt seed
        # 61, fixed in session 25: two embedders on a GB200 rack's idle GPUs, bought, each
        # rented a 4-GPU instance of their own for one replica when the group's rented
        # instances had none idle, USD 367,920 a year each; with 3.8 x the chat's users the
        # group rented a third instance and both fit its idle GPUs: USD 1,488,480 ->
        # 1,120,560. Now the instance the first adds carries the second, and a guest is
        # priced as its own cheapest option rented alone where that costs less:
        # tests/test_guest_rent_s25.py)
        if t0.annual_cost_cloud is not None and t1.annual_cost_cloud is not None:
            assert t1.annual_cost_cloud >= t0.annual_cost_cloud * (1 - 1e-12)


# --- what the hunt found -------------------------------------------------------------------

def test_pools_sharing_rented_instances_restart_on_the_empty_one() -> None:
    """Seed 5 of the plan hunt (shrunk by hand to its three pools): A10G rented as AWS's
    4-GPU g5.12xlarge (whole instances), N+1. Pools: 3 x TP4 (12 GPUs), 1 x TP2, 1 x TP1 = 15
    GPUs running, + a standby node's worth (4) = 19 GPUs in use: MAX(ROUNDUP(19 / 4),
    ROUNDUP(15 / 4) + 1) = 5 instances, 20 GPUs. Packed widest first: 3 instances of TP4, the
    4th holds the TP2 and the TP1 replicas (1 GPU free), the 5th runs nothing. The 4th down,
    both restart on the 5th: every pool keeps its replicas. Before: the free GPUs, 20 - 15 -
    (4 - 1) = 2 for the TP1 pool, counted in slots of the group's widest replica (4 GPUs)
    read 0, and the TP1 and TP2 pools read -100 % with one instance down."""
    r = _size(A10G_SHARED)
    assert r is not None and r.deployment.recommended == "cloud"
    (g,) = r.plan.node_groups
    v = g.values
    assert (v["cloud_instances"], v["cloud_instance_gpus"], v["group_pool_gpus"]) == (5, 4, 15)
    by_tp = {p.tp: p for p in r.plan.pools}
    assert sorted(by_tp) == [1, 2, 4]
    for tp, slots in ((1, 4), (2, 2)):  # one empty instance: 4 / 1 and 4 / 2 replicas
        pv = by_tp[tp].values
        assert pv["pool_restart_slots_rented"] == slots
        assert pv["pool_replicas_after_instance_loss"] == 1  # was 0
        assert pv["pool_headroom_one_down"] == pytest.approx(1 / pv["pool_demand_replicas"] - 1)
        assert pv["pool_headroom_one_down"] > 0  # was -1
    assert by_tp[4].values["pool_replicas_after_instance_loss"] == 3


def test_libreoffice_restarts_the_shared_pools_like_the_engine(tmp_path: Path) -> None:
    """The A10G account's workbook recalculated by LibreOffice: every formula cell equals the
    engine, the pools' restart slots on the rented instances among them."""
    r = _size(A10G_SHARED)
    assert r is not None
    book = tmp_path / "a10g.xlsx"
    write_workbook(r, book)
    problems, _seen, got = libreoffice_check(r, book, tmp_path / "out")
    assert not problems, "\n".join(problems[:20])
    cached = read_values(book)
    # the Plan sheet's row, one column per pool (TP1, TP4, TP2), recalculated: 4, 1, 2
    row = next(i for i in range(1, 600)
               if cached["Plan"].get(f"A{i}") == "pool_restart_slots_rented")
    assert [got["Plan"].get(f"{col}{row}") for col in "DEF"] == [4, 1, 2]
