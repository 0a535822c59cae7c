"""Review round 21 (helper E): an embedding and a reranking workload each bought an 8-GPU
server for one or two GPUs. Maple Ridge Credit Union (tests/data/cad-l40s-rag-r21.yaml) buys
L40S on premises in Canadian dollars (1.38 CAD per USD): a chat pool of 3 GPUs, an embedding
workload needing 1 GPU and a reranking workload needing 2.

Before: each retrieval workload was tried on the L40S's default platform only, the 8-GPU
Dell PowerEdge XE7745 (catalog gpus.yaml l40s.default_platform), and never on the idle GPUs
of another retrieval workload: "8 GPUs bought: 1 serving, 7 idle" and "8 GPUs bought: 2
serving, 6 idle", 19 GPUs bought for 6 used, capital cost CAD 386,033, and the bill of
materials listed "Dell PowerEdge XE7745, 1 server" twice.

After, worked by hand from the catalog (prices in USD x 1.38):
- L40S: USD 8,000 (gpus.yaml l40s.price_usd) = CAD 11,040;
- Generic 2U 4-GPU PCIe Gen4 server: USD 15,000 (platforms.yaml pcie-4gpu-gen4-350w
  .base_price_usd, an estimate) = CAD 20,700; Dell PowerEdge XE7745 (8x 350 W PCIe - L40S):
  USD 30,000 = CAD 41,400;
- the embedder's 1 replica on a 4-GPU server: 20,700 + 4 x 11,040 + its network (the same
  per-node figure as the chat server's) = CAD 89,117.64, against 41,400 + 8 x 11,040 +
  network = CAD 153,977.64 on the XE7745;
- the reranker's 2 replicas fit the 3 idle GPUs of the embedder's server: it buys nothing.
GPUs: 3 (chat) + 4 (retrieval) = 7 bought = 3 + 1 serving the chat and the embedder, 2 running
the reranker, 1 idle.

Session 22 (tests/test_retrieval_packing_r22.py) moved these figures: a PCIe server is bought
with the GPUs it runs, as the chat pool's is, and the chat server's empty fourth slot is
offered: the embedder buys 1 L40S for that slot (CAD 11,040, no server) and the reranker a
4-GPU server with 2 GPUs (CAD 67,037.64): 6 GPUs in 2 servers, CAD 156,155.28. What round 21
fixed still holds: no XE7745, every server the generic 4-GPU one. The pins below are the
session-22 figures, each marked.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

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
GENERIC_4 = 15000 * RATE  # platforms.yaml pcie-4gpu-gen4-350w.base_price_usd


@pytest.fixture(scope="module")
def maple() -> Result:
    return size(load(MAPLE), CAT)


def test_the_catalog_figures_the_hand_working_reads() -> None:
    assert CAT.gpus["l40s"].default_platform == "dell-xe7745-350w"
    assert (CAT.gpus["l40s"].price_usd, CAT.platforms["pcie-4gpu-gen4-350w"].base_price_usd,
            CAT.platforms["dell-xe7745-350w"].base_price_usd) == (8000, 15000, 30000)
    assert (CAT.platforms["pcie-4gpu-gen4-350w"].gpus_per_node,
            CAT.platforms["dell-xe7745-350w"].gpus_per_node) == (4, 8)


def test_the_embedder_buys_a_4_gpu_server_and_the_reranker_shares_it(maple: Result) -> None:
    (chat,) = maple.plan.node_groups
    embed, rerank = maple.plan.retrieval_groups
    assert (chat.platform, chat.gpus_purchased, chat.gpus_used) == ("pcie-4gpu-gen4-350w", 3, 3)
    # round 21: the generic 4-GPU server, not the 8-GPU XE7745, for both
    assert embed.platform == rerank.platform == "pcie-4gpu-gen4-350w"
    # session 22: the embedder in the chat server's empty slot (1 GPU bought, no server; it
    # read 1 server, 4 GPUs, 3 idle), the reranker on a server bought with its 2 GPUs (it
    # shared the embedder's idle GPUs)
    assert (embed.workload, embed.shares_with, embed.replicas, embed.nodes,
            embed.gpus_purchased, embed.idle_gpus) == ("Question embedding", chat.id, 1, 0, 1, 0)
    assert embed.capex == pytest.approx(GPU)
    network = chat.values["capex_network"]  # one node's network, the same platform
    assert (rerank.shares_with, rerank.replicas, rerank.nodes, rerank.gpus_purchased,
            rerank.gpus_used, rerank.idle_gpus) == (None, 2, 1, 2, 2, 0)
    assert rerank.capex == pytest.approx(GENERIC_4 + 2 * GPU + network)  # CAD 44,296.10
    assert lent_and_idle(rerank, maple.plan.retrieval_groups) == (0, 0)


# test_gpus_and_capital_cost_add_up: session 23 kept the one of
# tests/test_retrieval_packing_r22.py (the same counts and capital cost, and the annual cost);
# this one's extra pin was arithmetic on constants (two XE7745 with 8 GPUs each, CAD 386,033,
# as the docstring above says) and the dedicated totals, which that file pins too.


def test_the_bill_of_materials_buys_no_xe7745(maple: Result) -> None:
    bought = [(ln.platform, ln.values["line_nodes"], ln.values["line_gpus"])
              for ln in maple.bom.lines if ln.values["line_nodes"] > 0]
    # session 22: the reranker's server with its 2 GPUs (round 21: the embedder's with 4); the
    # embedder's GPU sits in the chat server (a line of 0 servers, 1 GPU)
    assert bought == [("pcie-4gpu-gen4-350w", 1, 3), ("pcie-4gpu-gen4-350w", 1, 2)]


def test_the_plan_says_where_the_reranker_runs(maple: Result) -> None:
    out = subprocess.run([sys.executable, "-m", "llmsizer.cli", "size", str(MAPLE)],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    # session 22: the embedder in the chat server's empty slot, the reranker on its own
    # server (round 21: "(4 GPUs bought: 1 serving, 2 running retrieval, 1 idle) for
    # Question embedding", "use 2 idle GPUs of the Question embedding servers", "Total: 7
    # GPUs bought (6 serving, 1 idle) in 2 nodes")
    assert ("Retrieval serving: use 1 new GPU in an empty slot of the language-model servers "
            "(Generic 2U 4-GPU PCIe Gen4 server) for Question embedding") in text
    assert ("Plan: 1 × Generic 2U 4-GPU PCIe Gen4 server (2 GPUs bought) for Passage "
            "reranking") in text
    assert "Total: 6 GPUs bought in 2 nodes" in text
    assert "XE7745 (8 GPUs bought" not in text
    assert ("shared: on the language-model servers; idle: GPUs they bought and leave idle; "
            "new: GPUs bought for their empty slots") in text
    # the PDF's plan: the host in words
    views = plan_context(maple, CAT)["plan"].retrieval
    assert [(v.host_words, v.guests) for v in views] == [
        ("the language-model servers", ()), ("", ())]


def test_the_workbook_says_so_and_its_scenarios_read_the_hosts_idle_gpus(
        maple: Result, tmp_path: Path) -> None:
    path = tmp_path / "maple.xlsx"
    write_workbook(maple, path)
    book = openpyxl.load_workbook(path)
    summary = [c.value for row in book["Summary"].iter_rows() for c in row
               if isinstance(c.value, str)]
    # session 22: the embedder on the chat nodes (round 21: the reranker "on idle GPUs of the
    # Question embedding nodes")
    assert any("replicas for embedding, on the language-model nodes" in v for v in summary)
    # the Scenarios sheet: where a row gives the embedder a server of its own (50 % more
    # chat users fill the chat server), the reranker's idle GPUs on offer are the embedder
    # column's idle GPUs (a formula), not a language-model node group's
    ws = book["Scenarios"]
    labels = {c.value: c.row for row in ws.iter_rows() for c in row if isinstance(c.value, str)
              and c.value.startswith("Retrieval: ")}
    offered = labels["Retrieval: idle GPUs of the nodes it may share (GPUs)"]
    idle = labels["Retrieval: GPUs bought running nothing (idle) (GPUs)"]
    formulas = [c.value for c in ws[offered] if isinstance(c.value, str)
                and c.value.startswith("=")]
    # "=M521": the embedder's column, its idle row (the engine's retrieval_idle_gpus)
    hosted = [f for f in formulas if re.fullmatch(rf"=[A-Z]+{idle}", f)]
    assert hosted, f"no scenario column offers the embedder's idle GPUs: {formulas}"


def test_libreoffice_recalculates_the_scenarios_to_the_engines_figures(
        maple: Result, tmp_path: Path) -> None:
    """The Scenarios sheet's formulas (the reranker's offered GPUs: the embedder column's idle
    GPUs less nothing taken) recalculated by LibreOffice equal what the engine wrote (each
    scenario's retrieval groups, sizing/retrieval.scenario_retrieval); no cell is an error."""
    from support.libreoffice import read_values, recalculated_values

    path = tmp_path / "maple.xlsx"
    write_workbook(maple, path)
    cached = read_values(path)
    again = recalculated_values(path, tmp_path / "lo")
    errors = [(s, c, v) for s, cells in again.items() for c, v in cells.items()
              if isinstance(v, str) and re.fullmatch(r"#[A-Z/0!?]+[!?]?|#N/A|Err:\d+", v)]
    assert errors == []
    off = [(c, v, again["Scenarios"].get(c)) for c, v in cached["Scenarios"].items()
           if isinstance(v, int | float) and not isinstance(v, bool)
           and again["Scenarios"].get(c) != pytest.approx(v, rel=1e-9, abs=1e-6)]
    assert off == []


def test_the_web_page_says_whose_idle_gpus_the_reranker_uses() -> None:
    from llmsizer.web.account import update_html

    page = " ".join(update_html(MAPLE.read_text(encoding="utf-8")).split())
    # session 22: the embedder on the chat servers, in their empty slot (round 21: the
    # reranker "on idle GPUs already bought for Question embedding")
    assert "Question embedding:" in page
    assert "on the servers of the language model, 1 new GPU in an empty slot" in page
