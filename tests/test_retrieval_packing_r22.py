"""Session 22: embedding and reranking servers packed like the bought servers they run on.
Maple Ridge Credit Union (tests/data/cad-l40s-rag-r21.yaml) buys L40S on premises in Canadian
dollars (1.38 CAD per USD): a chat pool of 3 GPUs on a 4-slot PCIe server, an embedding
workload needing 1 GPU and a reranking workload needing 2.

Two defects left by round 21 (before: 7 GPUs, capital cost CAD 167,195.28, CAD 114,021/yr):
1. a retrieval group always bought its nodes full, even on a PCIe server that the chat pools
   buy with only the GPUs they run (replicas.py / plan_node_loss.py: gpus_purchased is
   nodes x GPUs per node only where platform_sold_full): the embedder bought a 4-GPU server
   for 1 replica ("4 GPUs bought: 1 serving, 2 running retrieval, 1 idle");
2. the chat server's empty fourth slot was never offered: only GPUs bought and left idle were.

After, worked by hand from the catalog (prices in USD x 1.38):
- L40S: USD 8,000 (gpus.yaml l40s.price_usd) = CAD 11,040;
- Generic 2U 4-GPU PCIe Gen4 server: USD 15,000 (platforms.yaml pcie-4gpu-gen4-350w
  .base_price_usd, sold_full false) = CAD 20,700;
- network per node: its 2 x 100 GbE front-end ports (infrastructure.yaml) x USD 5.493125 per
  Gb/s (prices.yaml extras.network_per_frontend_gbps) = USD 1,098.625 = CAD 1,516.10; a PCIe
  server has no GPU fabric (platforms.yaml gpu_fabric false). Before session 23 every node
  paid USD 17,578 (CAD 24,257.64) of InfiniBand fabric: chat 78,077.64, reranker 67,037.64,
  in all CAD 156,155.28;
- chat: 20,700 + 3 x 11,040 + 1,516.10 = CAD 55,336.10;
- the embedder's 1 replica goes in the chat server's empty slot: it buys 1 L40S and no
  server, CAD 11,040 (per year: 11,040 / 3 years + 10 % support = CAD 4,784; the node's
  power, space and storage are the chat server's, counted there);
- the reranker's 2 replicas: a 4-GPU server bought with 2 GPUs,
  20,700 + 2 x 11,040 + 1,516.10 = CAD 44,296.10;
- in all 3 + 1 + 2 = 6 GPUs in 2 servers, 55,336.10 + 11,040 + 44,296.10 = CAD 110,672.21,
  CAD 11,040 (one L40S) less than the 7 GPUs round 21 bought would cost.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from llmsizer.documents.proposal.bom import bom_rows
from llmsizer.documents.proposal.format import Formatter
from llmsizer.documents.proposal.plan import plan_context
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result
from llmsizer.sizing.retrieval import lent_and_idle

ROOT = Path(__file__).resolve().parents[1]
MAPLE = ROOT / "tests" / "data" / "cad-l40s-rag-r21.yaml"
CAT = load_catalog()
RATE = 1.38  # the account's costs.usd_exchange_rate
GPU = 8000 * RATE  # gpus.yaml l40s.price_usd
SERVER = 15000 * RATE  # platforms.yaml pcie-4gpu-gen4-350w.base_price_usd
NETWORK = 2 * 100 * 17578 / 8 / 400 * RATE  # 2 x 100 GbE x extras.network_per_frontend_gbps


@pytest.fixture(scope="module")
def maple() -> Result:
    return size(load(MAPLE), CAT)


def test_the_catalog_figures_the_hand_working_reads(maple: Result) -> None:
    p = CAT.platforms["pcie-4gpu-gen4-350w"]
    assert (CAT.gpus["l40s"].price_usd, p.base_price_usd, p.gpus_per_node, p.sold_full) == (
        8000, 15000, 4, False)
    assert CAT.prices.extras["network_per_frontend_gbps"].value == 17578 / 8 / 400
    assert maple.account_inputs["network_per_frontend_gbps"] * 2 * 100 == pytest.approx(NETWORK)
    rack = CAT.infrastructure.platforms["pcie-4gpu-gen4-350w"] if CAT.infrastructure else None
    assert rack is not None and (rack.frontend_nics, rack.frontend_gbps) == (2, 100)
    assert not p.gpu_fabric  # no GPU-fabric share
    assert (maple.account_inputs["amortization_years"],
            maple.account_inputs["support_rate"]) == (3, 0.1)


def test_a_pcie_retrieval_server_is_bought_with_the_gpus_it_runs(maple: Result) -> None:
    """Defect 1: each workload alone (the plan's "sized alone" figures) buys a 4-GPU PCIe
    server with its replicas' GPUs, as the chat pool does (it bought 4 GPUs each before:
    11 GPUs alone, now 3 + 1 + 2)."""
    embed, rerank = maple.plan.retrieval_groups_alone
    assert (embed.nodes, embed.gpus_purchased, embed.idle_gpus) == (1, 1, 0)
    assert embed.capex == pytest.approx(SERVER + GPU + NETWORK)  # CAD 33,256.10
    assert (rerank.nodes, rerank.gpus_purchased, rerank.idle_gpus) == (1, 2, 0)
    assert rerank.capex == pytest.approx(SERVER + 2 * GPU + NETWORK)
    assert (maple.totals_dedicated.gpus_purchased, maple.totals_dedicated.nodes) == (6, 3)
    # the option's own rows: PCIe, so GPUs bought = GPUs used; no empty slot is "idle"
    v = maple.retrieval[1].best.values if maple.retrieval[1].best else {}
    assert (v["platform_sold_full"], v["retrieval_nodes"], v["retrieval_gpus"],
            v["retrieval_free_slots"]) == (0, 1, 2, 2)


def test_a_baseboard_sold_full_still_buys_every_slot(maple: Result) -> None:
    """A fixed baseboard is bought full, as before (rag-knowledge-base's H100 SXM reranker
    option on the 4-GPU Dell XE8640 baseboard: nodes x 4 GPUs)."""
    r = size(load(ROOT / "inputs" / "rag-knowledge-base.yaml"), CAT)
    full = [o for w in r.retrieval for o in w.options
            if o.feasible and float(o.values["platform_sold_full"]) == 1]
    assert full, "no option on a baseboard sold full"
    for o in full:
        v = o.values
        assert float(v["retrieval_gpus"]) == float(v["retrieval_nodes"]) * float(
            v["gpus_per_node"]), o.id


def test_the_embedder_takes_the_chat_servers_empty_slot(maple: Result) -> None:
    """Defect 2: the chat server (3 GPUs bought in 4 slots) offers its empty slot; the
    embedder's 1 replica fits it and buys 1 GPU, no server."""
    (chat,) = maple.plan.node_groups
    embed, rerank = maple.plan.retrieval_groups
    assert (chat.platform, chat.nodes, chat.gpus_purchased, chat.gpus_used) == (
        "pcie-4gpu-gen4-350w", 1, 3, 3)
    assert chat.capex == pytest.approx(SERVER + 3 * GPU + NETWORK)  # CAD 55,336.10
    assert (embed.shares_with, embed.platform, embed.replicas, embed.nodes,
            embed.gpus_purchased, embed.gpus_used) == (chat.id, chat.platform, 1, 0, 1, 1)
    assert embed.capex == pytest.approx(GPU)  # CAD 11,040
    assert embed.annual_cost_onprem == pytest.approx(GPU / 3 + 0.1 * GPU)  # CAD 4,784
    v = maple.retrieval[0].best.values if maple.retrieval[0].best else {}
    assert (v["llm_free_gpus"], v["llm_free_slots"], v["retrieval_gpus_on_llm_nodes"],
            v["retrieval_slots_filled"]) == (0, 1, 0, 1)
    # the reranker's 2 replicas do not fit what is left (no slot): a server of its own
    assert (rerank.shares_with, rerank.nodes, rerank.gpus_purchased) == (None, 1, 2)
    assert rerank.capex == pytest.approx(SERVER + 2 * GPU + NETWORK)  # CAD 44,296.10
    # the chat server lends no idle GPU: the embedder's GPU is its own
    assert lent_and_idle(chat, maple.plan.retrieval_groups) == (0, 0)


def test_gpus_and_capital_cost_add_up(maple: Result) -> None:
    t = maple.totals
    assert (t.gpus_purchased, t.gpus_serving, t.gpus_standby, t.gpus_idle, t.nodes) == (
        6, 6, 0, 0, 2)
    assert t.capex == pytest.approx((SERVER + 3 * GPU + NETWORK) + GPU
                                    + (SERVER + 2 * GPU + NETWORK))
    # CAD 156,155.28 before session 23 charged each PCIe server its front end, not 17,578 USD
    # of InfiniBand fabric (167,195.28 with round 21's 7 GPUs)
    assert t.capex == pytest.approx(110_672.205)
    assert t.annual_cost_onprem == pytest.approx(sum(
        [g.annual_cost_onprem for g in (*maple.plan.node_groups, *maple.plan.retrieval_groups)]))
    # 109,236.92 before session 23 (114,020.92 with round 21's 7 GPUs)
    assert t.annual_cost_onprem == pytest.approx(89_527.58, abs=0.01)


def test_a_what_if_with_more_chat_users_keeps_the_retrieval_servers_together(
        maple: Result) -> None:
    """With 50 % more chat users the chat pool fills its 4 slots: the embedder buys a server
    of its own (1 GPU), and the reranker -- on a server of its own in the proposal -- is
    offered that server's 3 empty slots (sizing.retrieval.scenario_host), as sizing afresh
    would place it: 4 + 1 + 2 = 7 GPUs in 2 servers, CAD 121,712.21 (167,195.28 before
    session 23's network per server). Without that offer the row read 3 servers, CAD
    212,152.92; round 21's code read 8 GPUs, CAD 178,235.28."""
    row = next(s for s in maple.sensitivity if s.name == "users_x1.5")
    assert (row.gpus_purchased, row.nodes) == (7, 2)
    assert row.capex == pytest.approx(2 * (SERVER + NETWORK) + 7 * GPU)


def test_the_cli_says_the_gpu_is_new_in_an_empty_slot() -> None:
    out = subprocess.run([sys.executable, "-m", "llmsizer.cli", "size", str(MAPLE)],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert ("Retrieval serving: use 1 new GPU in an empty slot of the language-model servers "
            "(Generic 2U 4-GPU PCIe Gen4 server) for Question embedding") in text
    assert "1 GPU bought for it, no server" in text
    assert "no GPUs or servers bought for it" not in text
    assert ("Plan: 1 × Generic 2U 4-GPU PCIe Gen4 server (2 GPUs bought) for Passage "
            "reranking") in text
    assert "Total: 6 GPUs bought in 2 nodes" in text
    assert "1 idle │ shared" not in text and "1 new │ shared" in text


def test_the_proposal_names_the_gpu_and_the_bill_of_materials_counts_it(maple: Result) -> None:
    views = plan_context(maple, CAT)["plan"].retrieval
    assert [(v.host_words, v.shared_words) for v in views] == [
        ("the language-model servers", "1 new GPU in an empty slot"), ("", "")]
    rows = bom_rows(maple, Formatter("CAD"))
    servers = [(r.item, r.quantity, r.detail.split(";")[1].strip()) for r in rows
               if r.item.startswith("Servers:")]
    assert servers == [
        ("Servers: Generic 2U 4-GPU PCIe Gen4 server", "1 server",
         "3 × NVIDIA L40S, and 1 for Question embedding in an empty slot"),
        ("Servers: Generic 2U 4-GPU PCIe Gen4 server", "1 server", "2 × NVIDIA L40S in all")]
    assert next(r.quantity for r in rows if r.item == "GPUs") == "6 GPUs"


def test_the_workbook_says_so_and_offers_the_slot_as_a_formula(
        maple: Result, tmp_path: Path) -> None:
    path = tmp_path / "maple.xlsx"
    write_workbook(maple, path)
    book = openpyxl.load_workbook(path)
    summary = [c.value for row in book["Summary"].iter_rows() for c in row
               if isinstance(c.value, str)]
    assert any("replicas for embedding, on the language-model nodes (1 new GPU in an empty "
               "slot)" in v for v in summary)
    ws = book["Scenarios"]
    labels = {c.value: c.row for row in ws.iter_rows() for c in row if isinstance(c.value, str)
              and c.value.startswith("Retrieval: ")}
    slots = labels["Retrieval: empty GPU slots of the nodes it may share (GPUs)"]
    formulas = [c.value for c in ws[slots] if isinstance(c.value, str)
                and c.value.startswith("=")]
    # the embedder's columns: the chat group's nodes x GPUs per node - its GPUs bought (the
    # scenario's node-group column; GPUs per node: the Retrieval sheet's lookup) ...
    chat = [f for f in formulas if re.fullmatch(r"=[A-Z]+\d+\*Retrieval!D\d+-[A-Z]+\d+", f)]
    # ... the reranker's, where the embedder has a server of its own: that column's empty
    # slots (its retrieval_free_slots row)
    own = labels["Retrieval: Empty GPU slots of its nodes (GPUs)"]
    embedder = [f for f in formulas if re.fullmatch(rf"=[A-Z]+{own}", f)]
    assert chat and embedder and len(chat) + len(embedder) == len(formulas), formulas
