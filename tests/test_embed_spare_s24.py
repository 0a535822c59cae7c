"""Session 24 (found by helper G's property hunt): an embedding or reranking workload in the
idle GPUs or empty slots of another group's nodes had no N+1 spare of its own. The row
retrieval_nodes said "0 on the shared nodes: their N+1 covers them", but the host's N+1
restarts the host's replicas, not its guest's.

Maple Ridge Credit Union (tests/data/cad-l40s-rag-r21.yaml) with N+1 asked: the chat runs
3 + 3 L40S on 2 generic 4-slot PCIe servers (platforms.yaml pcie-4gpu-gen4-350w, sold_full
false), one empty slot each; the embedder needs 1 replica. Before: 1 L40S in one server's
empty slot. That server down, the chat still runs 3 replicas, the embedder 0.

The rule now (model/calculations/retrieval.py shared_spare_gpus .. shares_llm_nodes): with
N+1 a guest keeps replicas / (host nodes - 1) spare GPUs, rounded up, its replicas and
spares spread evenly over the host's nodes, so one node down takes at most that many
replicas and the spares on the other nodes restart them. It shares only if each host node's
room (idle GPUs + empty slots / nodes, rounded down) holds its share; else nodes of its own
with their N+1 spare. Maple Ridge: 1 / (2 - 1) = 1 spare, 2 GPUs, 1 per server, room 2 / 2 =
1 per server: it shares, buying 2 L40S at USD 8,000 x 1.38 = CAD 11,040 each (gpus.yaml
l40s.price_usd; costs.usd_exchange_rate 1.38): CAD 22,080 (was 11,040). Its own servers would
cost 2 servers + 2 GPUs, more. Without N+1 nothing moves.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.maple import MAPLE, maple_with_node_loss

from llmsizer.documents.proposal.format import shared_place_words
from llmsizer.inputs.loader import load
from llmsizer.model.calculations.retrieval import RETRIEVAL_CALCULATIONS
from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import Value, evaluate
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

CAT = load_catalog()
GPU = 8000 * 1.38  # gpus.yaml l40s.price_usd x costs.usd_exchange_rate


@pytest.fixture(scope="module")
def maple() -> Result:
    return size(load(MAPLE), CAT)


@pytest.fixture(scope="module")
def maple_n1(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """Maple Ridge with N+1 asked (policy.survive_node_loss: true), nothing else changed."""
    return size(load(maple_with_node_loss(tmp_path_factory.mktemp("maple"))), CAT)


def test_maple_ridge_embedder_keeps_a_spare_in_the_other_servers_slot(maple_n1: Result) -> None:
    chat = maple_n1.plan.node_groups[0]
    # the host: 2 servers of 4 slots, 6 L40S bought (3 + 3), 2 empty slots, 1 per server
    assert (chat.id, chat.gpu, chat.nodes, chat.gpus_purchased) == ("group-1", "l40s", 2, 6)
    embed = maple_n1.plan.retrieval_groups[0]
    v = maple_n1.retrieval[0].best.values if maple_n1.retrieval[0].best else {}
    assert (v["llm_host_nodes"], v["llm_free_slots"], v["shared_room_per_node"]) == (2, 2, 1)
    assert (v["shared_spare_gpus"], v["shared_gpus_needed"]) == (1, 2)
    # one replica + one spare, one in each server's empty slot: was 1 GPU, 0 after a loss
    assert (embed.shares_with, embed.nodes, embed.replicas) == ("group-1", 0, 1)
    assert (embed.gpus_used, embed.gpus_purchased, embed.standby_gpus) == (2, 2, 1)
    assert embed.capex == pytest.approx(2 * GPU) == pytest.approx(22080)
    # either server down leaves one of its GPUs: the replicas it must run
    per_server = embed.gpus_used / chat.nodes
    assert embed.gpus_used - per_server >= embed.replicas
    assert shared_place_words(embed, maple_n1.plan.retrieval_groups) == (
        "2 new GPUs in empty slots (1 on standby) of the language-model servers, no server "
        "of its own")
    # the slots are gone: the reranker keeps its own 2 servers (2 serving + 2 standby)
    rerank = maple_n1.plan.retrieval_groups[1]
    assert (rerank.shares_with, rerank.nodes, rerank.gpus_purchased) == (None, 2, 4)


def test_without_n_plus_1_nothing_moves(maple: Result) -> None:
    embed = maple.plan.retrieval_groups[0]
    assert (embed.shares_with, embed.gpus_used, embed.gpus_purchased, embed.standby_gpus) == (
        "group-1", 1, 1, 0)
    assert embed.capex == pytest.approx(GPU)
    v = maple.retrieval[0].best.values if maple.retrieval[0].best else {}
    assert (v["shared_spare_gpus"], v["retrieval_spare_gpus"]) == (0, 0)


def _rows(**inputs: float) -> dict[str, Value]:
    env: dict[str, Value] = {"llm_free_gpus": 0.0, "llm_free_slots": 0.0,
                             "llm_idle_cloud_gpus": 0.0, "llm_host_nodes": 0.0,
                             "gpus_per_node": 4.0, "platform_sold_full": 0.0, **inputs}
    names = [c.name for c in RETRIEVAL_CALCULATIONS]
    for c in RETRIEVAL_CALCULATIONS[names.index("shared_spare_gpus"):]:
        env[c.name] = evaluate(c.expr, env)
    return env


@pytest.mark.parametrize(("replicas", "nodes", "free", "slots", "shares", "bought"), [
    (1, 2, 0, 2, 1, 2),   # Maple Ridge: 1 + 1 spare, a slot on each server
    (1, 1, 0, 3, 0, 2),   # one host server: its spare cannot sit on another, own servers
    (4, 3, 0, 6, 1, 6),   # 4 + 2 spares over 3 servers, 2 each: room 2 per server
    (4, 3, 0, 5, 0, 8),   # room 5 / 3 = 1 per server: own server of 4 + a spare of 4
    (2, 2, 2, 2, 1, 2),   # 2 + 2 spares: 2 idle GPUs taken, 2 bought for slots
])
def test_the_guest_spare_rows(replicas: int, nodes: int, free: int, slots: int, shares: int,
                              bought: int) -> None:
    env = _rows(retrieval_replicas=replicas, llm_host_nodes=nodes, llm_free_gpus=free,
                llm_free_slots=slots, survive_node_loss=1.0)
    assert env["shares_llm_nodes"] == shares
    assert env["retrieval_gpus"] == bought
    if shares:
        spare = -(-replicas // (nodes - 1))
        assert env["retrieval_spare_gpus"] == env["retrieval_standby_gpus"] == spare
        assert env["retrieval_gpus_used"] == replicas + spare
        # one host node down: at most ceil(used / nodes) of its GPUs lost, the rest run them
        lost = -(-(replicas + spare) // nodes)
        assert replicas + spare - lost >= replicas
        assert env["retrieval_nodes"] == 0


def test_without_n_plus_1_the_rows_are_as_before() -> None:
    # one host server, its one empty slot: shares as before, no spare
    env = _rows(retrieval_replicas=1, llm_host_nodes=1, llm_free_slots=1,
                survive_node_loss=0.0)
    assert (env["shares_llm_nodes"], env["retrieval_gpus"], env["retrieval_standby_gpus"]) == (
        1, 1, 0)


def test_the_workbook_recalculated_by_libreoffice_agrees(maple_n1: Result,
                                                        tmp_path: Path) -> None:
    """The new rows (the host's nodes on the Retrieval sheet and, from the scenario's host
    column, on the Scenarios sheet; the guest's spare) recalculate to the engine's figures."""
    import math

    from support.libreoffice import read_values, recalculate

    from llmsizer.documents.workbook import write_workbook

    book = tmp_path / "maple-n1.xlsx"
    write_workbook(maple_n1, book)
    cached = read_values(book)
    again = read_values(recalculate([book], tmp_path / "lo")[book])
    labels = {v: k for k, v in cached["Retrieval"].items() if isinstance(v, str)}
    spare_row = labels["Spare GPUs it keeps on the shared nodes"][1:]
    assert cached["Retrieval"][f"D{spare_row}"] == 1  # the embedder's column
    checked = 0
    for sheet in ("Retrieval", "Scenarios"):
        for addr, v in cached[sheet].items():
            if isinstance(v, int | float) and not isinstance(v, bool):
                w = again[sheet].get(addr)
                assert isinstance(w, int | float) and math.isclose(
                    v, w, rel_tol=1e-9, abs_tol=1e-6), (sheet, addr, v, w)
                checked += 1
    assert checked > 1000
