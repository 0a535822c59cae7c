"""Review round 21: with N+1 asked, renting keeps one cloud instance spare, as buying keeps a
node spare. Each instance size is costed with its own spare (cost rows, _instances): at least
ROUNDUP(GPUs for the load / the GPUs of the replicas an instance holds) + 1 instances, and never
fewer than the GPUs in use (the plan's running spares) need. One instance down then leaves the
load's replicas running.

Before, the cloud rented the GPUs in use, spares sized by the BOUGHT node: Assurances Rhénanes
(tests/data/eur-insurer.yaml, N+1, rented) had 14 GPUs (10 for the load + one 4-GPU Dell XE8640's
worth) in 2 instances of 8 × H100 and was short of its peak with one instance down (-25 %,
-3.4 %); Sakura Trust Bank's Regulation RAG kept 15.8 % against its 25 % headroom.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from helpers import DATA, ROOT

from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import NodeGroup, PlanPool, Result

EUR = DATA / "eur-insurer.yaml"
SAKURA = DATA / "jpy-bank-cloud.yaml"


@cache
def _sized(path: Path) -> Result:
    return size(load(path))


def _pool(r: Result, workload: str) -> PlanPool:
    return next(p for p in r.plan.pools if workload in p.workloads)


def _group(r: Result, p: PlanPool) -> NodeGroup:
    return next(g for g in r.plan.node_groups if p.id in g.pools)


def test_a_size_rents_a_spare_instance_of_its_own() -> None:
    """Claims classification alone on H100 / Dell XE8640 (an option of eur-insurer): 4 TP1
    replicas for the load + 4 spare (the 4-GPU node's worth) = 8 GPUs, one 8-GPU instance
    before (one instance down: the service stops). Now ROUNDUP(4 / 8) + 1 = 2 instances."""
    w = _sized(EUR).workloads[0]
    o = next(o for o in w.options if o.id == "h100-sxm/fp8/kv-fp8/tp1/dell-xe8640")
    v = o.values
    assert (v["replicas_for_load"], v["spare_replicas"], v["gpus"], v["load_gpus"]) == (
        4, 4, 8, 4)
    assert (v["cloud_instance_gpus"], v["cloud_instances"], v["cloud_gpus_rented"]) == (8, 2, 16)


def test_eur_insurer_on_h100_rents_three_instances_and_keeps_its_peak(tmp_path: Path) -> None:
    """Its H100 plan worked by hand (the account limited to H100): load 4 x TP1 + 3 x TP2 =
    10 GPUs; an 8-GPU instance holds 4 of the widest (TP2) replicas: ROUNDUP(10 / 8) + 1 = 3
    instances, 24 GPUs (the GPUs in use, 10 + one 8-GPU XE9680's worth = 18, need 3 too).
    One instance down: Claims loses its 4 replicas at worst and restarts them on 24 - 10 -
    (8 - 4) = 10 free GPUs (5 TP2 slots x 2): 4 / 2.667 - 1 = 50 %; the chat loses its 3 and
    restarts them on 24 - 10 - (8 - 6) = 12: 3 / 2.070 - 1 = 44.9 % (before: -25 %, -3.4 %)."""
    src = EUR.read_text(encoding="utf-8")
    assert "gpus: [l40s, h100-sxm, h200-sxm]" in src
    path = tmp_path / "eur-h100.yaml"
    path.write_text(src.replace("gpus: [l40s, h100-sxm, h200-sxm]", "gpus: [h100-sxm]"),
                    encoding="utf-8")
    r = size(load(path))
    assert r.account_inputs["plan_rented"] == 1.0
    claims, chat = _pool(r, "Claims document classification"), _pool(r, "Agent-assist chat")
    g = _group(r, claims)
    assert g.values["group_load_gpus"] == 10 and g.values["group_gpus_used"] == 18
    assert (g.values["cloud_instance_gpus"], g.values["cloud_instances"]) == (8, 3)
    assert claims.values["pool_replicas_one_down"] == 4 and chat.values["pool_replicas_one_down"] == 3
    assert claims.headroom_after_node_loss == 4 / claims.demand_replicas - 1
    assert abs(claims.headroom_after_node_loss - 0.5) < 1e-9
    assert abs(chat.headroom_after_node_loss - 0.449) < 0.0005
    assert g.headroom_after_node_loss >= 0


def test_eur_insurer_rents_what_survives_an_instance_down() -> None:
    """As sized (L40S, H100, H200): renting with a spare instance made one-GPU H200 instances
    the cheaper way. Review round 22: the H200's offer is sold by the GPU (RunPod), so a
    replica rents an instance of its own GPUs and N+1 one spare replica-instance per pool,
    not the bought XE9680's 8 spare GPUs (before: the 16 GPUs in use, 16 instances, the chat
    1 x TP4). Now Claims 4 x TP1 and the chat 2 x TP2 (8 GPUs for the load) + spares of 1 and
    2 GPUs: 11 GPUs in 8 instances (test_instance_shapes_r22). Session 23: one spare instance
    for the group, of its widest replica's 2 GPUs: 10 GPUs in 7 instances. One down: the
    spare instance takes the lost replica of either pool (loading that pool's model): Claims
    4 / 2.667 - 1 = 50 %, the chat 2 / 1.556 - 1 = 28.6 % (before: 1 / 0.741 - 1 = 35 %)."""
    r = _sized(EUR)
    assert r.deployment.recommended == "cloud"
    claims, chat = _pool(r, "Claims document classification"), _pool(r, "Agent-assist chat")
    g = _group(r, claims)
    assert (g.values["group_load_gpus"], g.values["group_gpus_used"]) == (8, 16)
    assert (g.values["cloud_instance_gpus"], g.values["cloud_instances"]) == (2, 7)
    assert claims.values["pool_replicas_one_down"] == claims.replicas == 4
    assert chat.values["pool_replicas_one_down"] == chat.replicas == 2
    assert abs(claims.headroom_after_node_loss - 0.5) < 1e-9
    assert abs(chat.headroom_after_node_loss - (2 / chat.demand_replicas - 1)) < 1e-12
    assert abs(chat.headroom_after_node_loss - 0.286) < 0.0005


def test_sakura_keeps_its_load_replicas_with_an_instance_down() -> None:
    """Sakura's plan now shares one H100 group: Branch staff chat 1 x TP1 and Regulation RAG
    7 x TP4 for the load, 29 GPUs + an 8-GPU XE9680's worth = 37 in use. ROUNDUP(29 / 8) + 1 =
    5 = ROUNDUP(37 / 8) instances of 8. One instance down: RAG loses 2 replicas (8 / 4) and
    restarts them on 40 - 29 = 11 free GPUs (2 TP4 slots): 7 replicas, 7 / 5.18 - 1 = 35.1 %
    (before: 6 replicas, 15.8 %, below its 25 % headroom); the chat keeps its replica:
    1 / 0.614 - 1 = 62.7 %."""
    r = _sized(SAKURA)
    assert r.account_inputs["plan_rented"] == 1.0
    rag, chat = _pool(r, "Regulation RAG"), _pool(r, "Branch staff chat")
    g = _group(r, rag)
    assert g is _group(r, chat)
    assert (g.values["group_load_gpus"], g.values["group_gpus_used"]) == (29, 37)
    assert (g.values["cloud_instance_gpus"], g.values["cloud_instances"]) == (8, 5)
    assert (rag.tp, rag.replicas) == (4, 7)
    assert rag.values["pool_replicas_lost_with_an_instance"] == 2
    assert rag.values["pool_restart_slots_rented"] == 2
    assert rag.values["pool_replicas_one_down"] == 7
    assert abs(rag.headroom_after_node_loss - 0.351) < 0.0005
    assert rag.headroom_after_node_loss >= 0.25  # its headroom, as a bought N+1 plan keeps
    assert abs(chat.headroom_after_node_loss - 0.627) < 0.0005


def test_the_cloud_column_beside_a_bought_plan_rents_a_spare_instance() -> None:
    """inputs/moe-chat.yaml buys (N+1): 3 TP1 replicas for the load + 3 spare on Dell XE8640s.
    Renting the same: 6 GPUs fitted one 8-GPU instance (its loss stops the service); now
    ROUNDUP(3 / 8) + 1 = 2 instances, USD 202,512 -> 388,224 a year. The bought figures stay.
    Session 24: the cloud's storage is per GPU rented, 16 / 4 (an XE8640's GPUs) x 10 TB x 70
    x 12 = 33,600, not the 2 servers bought's 16,800: 405,024."""
    r = _sized(ROOT / "inputs" / "moe-chat.yaml")
    assert r.account_inputs["plan_rented"] == 0.0
    (g,) = r.plan.node_groups
    assert (g.values["group_load_gpus"], g.values["group_gpus_used"]) == (3, 6)
    assert (g.values["cloud_instance_gpus"], g.values["cloud_instances"]) == (8, 2)
    assert r.totals.annual_cost_cloud is not None and round(r.totals.annual_cost_cloud) == 405_024
    assert g.nodes == 2 and g.values["group_gpus_purchased"] == 8


def test_without_n_plus_one_nothing_is_added() -> None:
    """Northwind Retail (no N+1): 3 one-GPU instances for its 3 replicas, as before."""
    r = _sized(ROOT / "inputs" / "ref-a-7b-assistant.yaml")
    (g,) = r.plan.node_groups
    assert (g.values["cloud_instances"], g.values["cloud_instance_gpus"]) == (3, 1)


def test_retrieval_servers_with_n_plus_1_size_and_keep_their_load_with_an_instance_down(
        tmp_path: Path) -> None:
    """The knowledge base (inputs/rag-knowledge-base.yaml) with N+1 asked: the cloud lines of
    an embedding or reranking server read its GPUs for the load (retrieval_load_gpus, its 8
    replicas); the merge of this rule stopped every such account with "unknown name
    'load_gpus'". On one-GPU instances one down leaves at least the 8 replicas' GPUs."""
    text = (ROOT / "inputs" / "rag-knowledge-base.yaml").read_text()
    assert "\npolicy:\n" in text and "survive_node_loss" not in text
    path = tmp_path / "rag-n1.yaml"
    path.write_text(text.replace("\npolicy:\n", "\npolicy:\n  survive_node_loss: true\n"))
    r = size(load(path))
    assert [w.kind for w in r.retrieval] == ["embed", "rerank"]
    for w in r.retrieval:
        assert w.best is not None and not w.best.shares_with
        v = w.best.values
        assert float(v["retrieval_load_gpus"]) == float(v["retrieval_replicas"]) == 8
        size_gpus = float(v["cloud_instance_gpus"])
        assert (float(v["cloud_instances"]) - 1) * size_gpus >= 8
