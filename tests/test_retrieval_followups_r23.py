"""Session 23: embedding and reranking servers, follow-ups of session 22. Maple Ridge Credit
Union (tests/data/cad-l40s-rag-r21.yaml) buys L40S on premises in Canadian dollars (1.38 CAD
per USD): a chat pool, an embedding workload needing 1 GPU and a reranking workload needing 2,
on the generic 4-slot PCIe server (platforms.yaml pcie-4gpu-gen4-350w: sold_full false, a
server is bought with the GPUs it runs).

1. N+1 on a partly populated server. With survive_node_loss the reranker's 2 replicas (one
   server of 4 slots holding 2 L40S) bought a spare server *full*: 2 servers, 6 GPUs (2
   serving, 4 on standby), CAD 156,155.28 (retrieval_gpus_used = MIN(nodes x 4, replicas +
   4)). One server down loses the replicas that server holds, 2 here, so the spare server
   needs those 2 GPUs, not 4 it never runs: a PCIe spare is bought with the replicas its
   fullest node holds (retrieval_replicas_per_node, retrieval_spare_gpus). After, by hand:
   2 x (server CAD 20,700 + network CAD 24,257.64) + 4 x L40S CAD 11,040 = CAD 134,075.28,
   2 L40S (CAD 22,080) less. A fixed baseboard is still bought full, every GPU of its spare
   node on standby (it comes full; test_a_baseboard_spare_node_is_still_bought_full).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from llmsizer.inputs.loader import load
from llmsizer.model.calculations.retrieval import RETRIEVAL_CALCULATIONS
from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import Value, evaluate
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

ROOT = Path(__file__).resolve().parents[1]
MAPLE = ROOT / "tests" / "data" / "cad-l40s-rag-r21.yaml"
CAT = load_catalog()
RATE = 1.38  # the account's costs.usd_exchange_rate
GPU = 8000 * RATE  # gpus.yaml l40s.price_usd
SERVER = 15000 * RATE  # platforms.yaml pcie-4gpu-gen4-350w.base_price_usd
NETWORK = 17578 * RATE  # prices.yaml extras.network_per_node


@pytest.fixture(scope="module")
def maple_n1(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """Maple Ridge with N+1 asked (policy.survive_node_loss: true), nothing else changed."""
    text = MAPLE.read_text(encoding="utf-8")
    assert "  headroom: 0.25\n" in text
    path = tmp_path_factory.mktemp("maple") / "maple-n1.yaml"
    path.write_text(text.replace("  headroom: 0.25\n",
                                 "  headroom: 0.25\n  survive_node_loss: true\n"),
                    encoding="utf-8")
    return size(load(path), CAT)


def test_a_pcie_spare_server_holds_the_replicas_one_server_holds(maple_n1: Result) -> None:
    assert CAT.platforms["pcie-4gpu-gen4-350w"].sold_full is False
    embed, rerank = maple_n1.plan.retrieval_groups
    # the embedder still sits in an empty slot of the chat servers (their N+1 covers it)
    assert (embed.shares_with, embed.nodes, embed.gpus_purchased) == ("group-1", 0, 1)
    # the reranker: 2 replicas on 1 server + a spare server with 2 GPUs (was 4: 6 bought)
    assert (rerank.shares_with, rerank.platform, rerank.replicas, rerank.nodes) == (
        None, "pcie-4gpu-gen4-350w", 2, 2)
    assert (rerank.gpus_used, rerank.gpus_purchased, rerank.standby_gpus, rerank.idle_gpus) == (
        4, 4, 2, 0)
    assert rerank.capex == pytest.approx(2 * (SERVER + NETWORK) + 4 * GPU)
    assert rerank.capex == pytest.approx(134075.28)  # was CAD 156,155.28 (6 GPUs)
    v = maple_n1.retrieval[1].best.values if maple_n1.retrieval[1].best else {}
    assert (v["retrieval_replicas_per_node"], v["retrieval_spare_gpus"],
            v["retrieval_free_slots"]) == (2, 2, 4)


def _rows(**inputs: float) -> dict[str, Value]:
    """The retrieval rows from shares_llm_nodes on, over the stated replicas and platform (the
    rows before them size the replicas, which are stated here)."""
    env: dict[str, Value] = {"llm_free_gpus": 0.0, "llm_free_slots": 0.0,
                             "llm_idle_cloud_gpus": 0.0, **inputs}
    names = [c.name for c in RETRIEVAL_CALCULATIONS]
    for c in RETRIEVAL_CALCULATIONS[names.index("shares_llm_nodes"):]:
        env[c.name] = evaluate(c.expr, env)
    return env


@pytest.mark.parametrize(("replicas", "per_node", "spare", "nodes"), [
    (1, 1, 1, 2),   # one replica: a spare server with one GPU (was 4 standby, 5 bought)
    (5, 3, 3, 3),   # 5 replicas spread 3 + 2 over 2 servers: the spare holds 3
    (8, 4, 4, 3),   # full servers: a full spare, as before
])
def test_the_spare_gpus_are_the_fullest_servers_replicas(
        replicas: int, per_node: int, spare: int, nodes: int) -> None:
    env = _rows(retrieval_replicas=float(replicas), gpus_per_node=4.0,
                platform_sold_full=0.0, survive_node_loss=1.0)
    assert (env["retrieval_replicas_per_node"], env["retrieval_spare_gpus"],
            env["retrieval_nodes"]) == (per_node, spare, nodes)
    assert env["retrieval_gpus"] == env["retrieval_gpus_used"] == replicas + spare
    assert env["retrieval_standby_gpus"] == spare and env["retrieval_idle_gpus"] == 0
    # without N+1: no spare
    env = _rows(retrieval_replicas=float(replicas), gpus_per_node=4.0,
                platform_sold_full=0.0, survive_node_loss=0.0)
    assert (env["retrieval_spare_gpus"], env["retrieval_gpus"]) == (0, replicas)


def test_a_baseboard_spare_node_is_still_bought_full() -> None:
    """A fixed baseboard (sold_full) comes with every GPU: its spare node's 8 are bought and on
    standby, as before (1 replica: 2 nodes, 16 GPUs, 1 serving, 8 standby, 7 idle)."""
    env = _rows(retrieval_replicas=1.0, gpus_per_node=8.0, platform_sold_full=1.0,
                survive_node_loss=1.0)
    assert (env["retrieval_nodes"], env["retrieval_gpus"], env["retrieval_gpus_used"],
            env["retrieval_standby_gpus"], env["retrieval_idle_gpus"]) == (2, 16, 9, 8, 7)
