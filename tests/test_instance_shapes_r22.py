"""Review round 22: a cloud offer sold by the GPU rents instances of the right shape.

The H200's GPU-cloud offer (catalog prices.yaml, h200-sxm gpu_cloud: RunPod Secure Cloud H200,
gpus_per_instance 1, no other size) is rented by the GPU: a pod holds 1 to 8 GPUs of one
machine. Before, Assurances Rhénanes (tests/data/eur-insurer.yaml: N+1, rented, committed
three-year tier) read "16 × NVIDIA H200 SXM in 16 cloud instances (8 serving, 8 on standby)":
a TP4 replica spread over four 1-GPU "instances", and the bought plan's spare node (one XE9680's
8 GPUs: group_spare_gpus = MIN(8 GPUs a node, 8 for the load)) rented as 8 one-GPU spares.
Now (costs.py cloud_sold_by_gpu) a replica is an instance of its own GPUs, N+1 rents one spare
replica-instance per pool, and one instance down loses one replica. Offers of fixed instance
sizes (the H100's 8-GPU contract here) keep the rule of review round 21.

Prices worked by hand: the H200 has no three-year price, so RunPod's 4.59 USD/GPU-h x 0.6642
(GPU cloud -> one-year) x 0.5556 (one-year -> three-year) x 0.92 EUR/USD = EUR 1.5583 per
GPU-hour; a year is 8,760 hours.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from helpers import DATA

from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import PlanPool, Result

EUR = DATA / "eur-insurer.yaml"
RAG = DATA / "rag-kb-cloud-n1-r22.yaml"
H200_EUR_HOUR = 4.59 * 0.6642 * 0.5556 * 0.92  # 1.558337857056
HOURS = 8760


@cache
def _sized(path: Path) -> Result:
    return size(load(path))


def _option(r: Result, workload: int, oid: str) -> dict[str, float]:
    o = next(o for o in r.workloads[workload].options if o.id == oid)
    return {k: float(v) for k, v in o.values.items() if isinstance(v, (int, float))}


def _pool(r: Result, workload: str) -> PlanPool:
    return next(p for p in r.plan.pools if workload in p.workloads)


def test_a_tp4_replica_rents_one_four_gpu_instance() -> None:
    """The chat on 4 × H200 (TP4): 1 replica for the load; N+1 rents one spare 4-GPU
    instance: 2 instances of 4 GPUs, 8 GPUs (before: 8 one-GPU instances, the replica spread
    over four of them)."""
    v = _option(_sized(EUR), 1, "h200-sxm/fp8/kv-fp8/tp4/dell-xe9680")
    assert v["cloud_sold_by_gpu"] == 1
    assert (v["replicas_for_load"], v["load_gpus"]) == (1, 4)
    assert (v["cloud_instance_gpus"], v["cloud_instances"], v["cloud_gpus_rented"]) == (4, 2, 8)
    assert abs(v["annual_cloud_rent"] - 8 * H200_EUR_HOUR * HOURS) < 1e-6


def test_one_gpu_replicas_rent_one_spare_not_the_bought_node() -> None:
    """Claims on 1 × H200: 4 replicas for the load + 4 running spares bought (a node's worth
    over 2 XE9680s: 8 GPUs in use). Rented by the GPU: 4 + 1 spare = 5 one-GPU instances
    (before: the 8 GPUs in use)."""
    v = _option(_sized(EUR), 0, "h200-sxm/fp8/kv-fp8/tp1/dell-xe9680")
    assert (v["replicas_for_load"], v["spare_replicas"], v["gpus"]) == (4, 4, 8)
    assert (v["cloud_instance_gpus"], v["cloud_instances"], v["cloud_gpus_rented"]) == (1, 5, 5)
    assert abs(v["annual_cloud_rent"] - 5 * H200_EUR_HOUR * HOURS) < 1e-6


def test_fixed_instances_keep_their_rule() -> None:
    """The H100's three-year price rests on an 8-GPU contract (not sold by the GPU): Claims on
    H100 / XE8640 still rents ROUNDUP(4 / 8) + 1 = 2 whole 8-GPU instances (round 21)."""
    v = _option(_sized(EUR), 0, "h100-sxm/fp8/kv-fp8/tp1/dell-xe8640")
    assert v["cloud_sold_by_gpu"] == 0
    assert (v["cloud_instance_gpus"], v["cloud_instances"], v["cloud_gpus_rented"]) == (8, 2, 16)


def test_eur_insurer_plan_rents_one_spare_instance_for_the_group() -> None:
    """The plan: Claims 4 × TP1 and the chat 2 × TP2 (TP2 now rents for less than TP4: 4 + 2
    spare = 6 GPUs against 4 + 4 = 8) = 8 GPUs for the load. Session 23: one spare instance
    for the node group, of its widest replica's 2 GPUs (round 22: one per pool, 1 GPU and 2
    GPUs, 11 GPUs in 8 instances): 10 GPUs in 4 + 2 + 1 = 7 instances; rent 10 x 1.5583 x
    8,760 = EUR 136,510 a year. One instance down loses one replica, which the spare instance
    takes over (Claims: 2 of its 1-GPU replicas fit it, the chat: 1): each pool keeps its
    replicas for the load (Claims 4 / 2.667 - 1 = 50 %, the chat 2 / 1.556 - 1 = 28.6 %).
    Buying still counts 16 GPUs in 2 nodes."""
    r = _sized(EUR)
    assert r.deployment.recommended == "cloud" and r.account_inputs["plan_rented"] == 1.0
    claims, chat = _pool(r, "Claims document classification"), _pool(r, "Agent-assist chat")
    assert (claims.tp, claims.replicas_for_load, chat.tp, chat.replicas_for_load) == (1, 4, 2, 2)
    (g,) = r.plan.node_groups
    v = g.values
    assert (v["group_load_gpus"], v["group_cloud_spare_gpus"]) == (8, 2)
    assert (v["group_cloud_load_instances"], v["group_cloud_spare_instances"]) == (6, 1)
    assert (v["cloud_gpus_rented"], v["cloud_instances"]) == (10, 7)
    assert abs(v["annual_cloud_rent"] - 10 * H200_EUR_HOUR * HOURS) < 1e-6
    assert r.totals.cloud_gpus_rented == 10
    assert (claims.values["pool_restart_slots_rented"],
            chat.values["pool_restart_slots_rented"]) == (2, 1)
    for p in (claims, chat):
        assert p.values["pool_replicas_lost_with_an_instance"] == 1
        assert p.values["pool_replicas_one_down"] == p.replicas_for_load == p.replicas
        assert p.spare_replicas == 0
    assert abs(claims.headroom_after_node_loss - 0.5) < 1e-9
    assert abs(chat.headroom_after_node_loss - (2 / chat.demand_replicas - 1)) < 1e-12
    assert (g.gpus_purchased, g.nodes, r.totals.gpus_purchased) == (16, 2, 16)
    price = next(p for p in r.prices if p.item == "cloud:h200-sxm")
    assert price.source.startswith("10 × RunPod Secure Cloud H200; sold as single GPUs, one "
                                   "instance holding one replica's GPUs")


def test_a_rented_retrieval_pool_rents_one_spare_replica() -> None:
    """inputs/rag-knowledge-base.yaml rented with N+1 (tests/data/rag-kb-cloud-n1-r22.yaml):
    the embedding service's 8 one-GPU replicas on L4, whose offer (AWS G6, 1 GPU; session
    23: its 4- and 8-GPU sizes listed, a one-GPU replica still rents the 1-GPU size) is sold
    by the GPU, rent 8 + 1 spare = 9 GPUs, not the 16 the bought plan uses
    (8 + a spare XE7745 node's 8). The one-year tier derives 0.95 USD x 0.3852 = 0.36594 USD
    per GPU-hour: 9 x 0.36594 x 8,760 = USD 28,851 a year. Session 24: the storage rented is
    per GPU rented, so the plan now rents the embedder on MI325X (its 2 GPUs' share of an
    8-GPU server's storage); the L4 option, read here, still rents 9 GPUs."""
    r = _sized(RAG)
    emb = next(g for g in r.plan.retrieval_groups if g.kind == "embed")
    (w,) = [w for w in r.retrieval if w.name == emb.workload]
    assert emb.gpu == "mi325x"  # l4 before session 24
    l4 = next(o for o in w.options if o.gpu == "l4" and o.feasible)
    v = l4.values
    assert float(v["retrieval_replicas"]) == 8
    assert float(v["retrieval_gpus_used"]) == 16 and float(v["cloud_sold_by_gpu"]) == 1
    assert (float(v["cloud_instances"]), float(v["cloud_gpus_rented"])) == (9, 9)
    assert abs(float(v["annual_cloud_rent"]) - 9 * 0.95 * 0.3852 * HOURS) < 1e-6
