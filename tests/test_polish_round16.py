"""Proposal polish from the sixteenth review round: the thirteen shipped proposals read page by
page as the customer and the finance reader read them (inputs/, 2026-11-29)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ShippedOutputs

from llmsizer.documents.proposal.format import NBSP
from llmsizer.documents.proposal.glossary import GLOSSARY

ROOT = Path(__file__).resolve().parents[1]
RAG = ROOT / "inputs" / "rag-knowledge-base.yaml"
INPUTS = sorted((ROOT / "inputs").glob("*.y*ml"))


def _page_text(pdf: Path, first: int, last: int) -> str:
    out = subprocess.run(["pdftotext", "-f", str(first), "-l", str(last), str(pdf), "-"],
                         check=True, capture_output=True, text=True).stdout
    return re.sub(r"\s+", " ", out.replace(NBSP, " "))


def test_the_cover_lists_every_server_its_capital_cost_pays_for(
        shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    """Wide World Importers: the cover read "4 × NVIDIA H100 SXM 80GB in 1 × Dell PowerEdge
    XE8640; capital cost USD 373 k", while the summary says 20 GPUs bought in 4 nodes: the
    USD 373 k pays for the embedding and reranking servers too (16 GPUs in 3 servers)."""
    out = shipped_outputs(RAG)
    cover = _page_text(out.pdf, 1, 1)
    listed = [int(n) for n in re.findall(r"(\d+) × NVIDIA", cover)]
    # session 23: 16 (a PCIe server pays its front-end network only, so the embedder moves
    # from 8 L4 in an XE7745 to 4 L40S in a generic 4-GPU server)
    assert sum(listed) == out.result.totals.gpus_purchased == 16, (listed, cover)
    # review round 21: every platform that hosts the L4 is tried, and its 8 replicas cost
    # less in one 8-GPU Dell PowerEdge XE7745 than in two generic 4-GPU servers (it read
    # "8 × NVIDIA L4 in 2 × Generic 2U 4-GPU PCIe Gen4 server", 4 nodes, USD 373 k)
    assert ("4 × NVIDIA H100 SXM 80GB in 1 × Dell PowerEdge XE8640 for Knowledge assistant; "
            "4 × NVIDIA L40S in 1 × Generic 2U 4-GPU PCIe Gen4 server for Query and corpus "
            "embedding; 8 × NVIDIA RTX PRO 6000 Blackwell Server Edition in 1 × Dell PowerEdge "
            "XE7745 for Passage reranking, in all 16 GPUs bought in 3 nodes; capital cost "
            "USD 315 k") in cover


def test_burst_risk_of_a_shared_plan_gives_the_pools_headroom(
        shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    """Acme Corp: the plan pools both workloads on 5 replicas, 85.4 % headroom (summary and
    section 5), but the risks' "Burst above peak" read each workload sized alone: "Internal
    assistant: 14,236 tok/s installed against 6,000 tok/s at peak (137 % headroom)". The pool's
    own figures: 6,000 + 3,300 tok/s at peak, 5 replicas against 2.7 needed."""
    out = shipped_outputs(ROOT / "inputs" / "example.yaml")
    (pool,) = out.result.plan.pools
    assert (pool.replicas, round(pool.headroom_achieved, 3)) == (5, 0.854)
    text = _page_text(out.pdf, 1, 99)
    burst = text.split("Burst above peak", 1)[1].split("Model or engine change", 1)[0]
    # 85.4 % in whole percents: every headroom of the proposal to one precision, and its
    # alternatives reach 100 % (session 23)
    assert ("Pool 1 (Internal assistant, Contract RAG): 9,300 tok/s at peak; its 5 replicas "
            "hold 85 % headroom above the 2.7 replicas that peak needs.") in burst
    assert "137 %" not in burst and "installed against" not in burst


def test_burst_risk_of_pools_sharing_nodes_reads_each_pools_figures(
        shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    """Adventure Works Group: three pools on 3 shared servers. The risk read "Company-wide chat:
    339,486 tok/s installed against 30,000 tok/s at peak (156 % headroom)", the chat sized alone
    on 12 GPUs, where the plan runs it on 6 replicas with 28 % headroom."""
    out = shipped_outputs(ROOT / "inputs" / "enterprise-multi.yaml")
    text = _page_text(out.pdf, 1, 99)
    burst = text.split("Burst above peak", 1)[1].split("Model or engine change", 1)[0]
    for pool in out.result.plan.pools:
        assert f"its {pool.replicas} replica" in burst
    assert ("Pool 1 (Company-wide chat): 30,000 tok/s at peak; its 6 replicas hold 28 % "
            "headroom above the 4.69 replicas that peak needs.") in burst
    assert "Pool 3 (Agent platform): 3,200 tok/s at peak; its 1 replica holds 220 %" in burst
    assert "339,486" not in burst


def test_the_headroom_table_and_burst_risk_state_it_in_replicas(
        shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    """Fabrikam Legal: section 5 defined headroom as "installed capacity ÷ peak demand − 1" and
    its table showed 1,139 tok/s installed against 360 tok/s at peak, which divide to 216 %, beside
    "175 %": the headroom counts replicas (6 against the 2.18 peak needs), and the tokens/s of six
    replicas at full batch serve each user at 17.3 tok/s, above the 15.0 target."""
    out = shipped_outputs(ROOT / "inputs" / "legal-128k.yaml")
    text = _page_text(out.pdf, 1, 99)
    assert "installed capacity ÷ peak demand" not in text
    assert "(replicas installed ÷ the replicas peak demand needs − 1)" in text
    # the table's row (pdftotext reads the name cell apart): policy, achieved, one node down,
    # spare, replicas installed, replicas peak needs
    assert "Replicas installed Replicas peak needs" in text
    # one node down 83.3 %, in whole percents beside the 175 % (session 23: one precision for
    # every headroom of the proposal)
    assert "20 % 175 % 83 % 3 6 2.18" in text
    assert ("Contract review 128K: 360 tok/s at peak; its 6 replicas hold 175 % headroom above "
            "the 2.18 replicas that peak needs.") in text
    assert "1,139" not in text


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_every_burst_figure_divides_to_its_headroom(
        path: Path, shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    """The burst risk's replicas ÷ replicas needed − 1 is the headroom it prints beside them, to
    the rounding of the printed figures, on every shipped account (pooled or not)."""
    text = _page_text(shipped_outputs(path).pdf, 1, 99)
    burst = text.split("Burst above peak", 1)[1].split("Model or engine change", 1)[0]
    found = re.findall(r"its ([\d,]+) replicas? holds? ([\d.,]+) % headroom above the "
                       r"([\d.,]+) replicas? that peak needs", burst)
    assert found, burst
    for replicas, headroom, needs in found:
        r, h, d = (float(x.replace(",", "")) for x in (replicas, headroom, needs))
        assert abs((r / d - 1) * 100 - h) <= max(0.6, 0.01 * r / d * 100), (replicas, headroom, needs)


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_the_glossary_heading_never_ends_a_page_above_one_term(
        path: Path, shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    """Acme Corp's page 11 ended with "9 Glossary" and its first term, "Batch", alone; the
    other terms followed on page 12."""
    pdf = shipped_outputs(path).pdf
    pages = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                           capture_output=True, text=True).stdout.split("\f")
    (page,) = [p for p in pages if re.search(r"^9 Glossary$", p, re.M)]
    after = page.split("9 Glossary", 1)[1]
    heads = {t.term.split(",")[0].split(" ")[0] for t in GLOSSARY}
    rows = [ln for ln in after.splitlines() if ln.strip() and ln.split()[0].rstrip(",") in heads]
    assert len(rows) >= 2, after


def test_the_plans_time_per_token_says_it_is_the_full_batchs(
        shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    """Proseware Clinic Network: the plan table's "Time per token 66.3 ms" (a full batch of 52)
    sat above "18.2 tok/s per user" (the 40 users at peak: 54.8 ms a step); 1,000 / 66.3 is
    15.1 tok/s. The walk-through says both; the table says which it shows."""
    out = shipped_outputs(ROOT / "inputs" / "small-l4-l40s.yaml")
    text = _page_text(out.pdf, 1, 99)
    assert "Time per token (full batch)" in text
    assert ("Time per token (full batch) Headroom One node down 1 66.3 ms 30 %"
            in _page_text(out.pdf, 2, 2))
    assert "full, a step takes 66.3 ms" in text
    assert "Modelled alone at peak: 18.2 tok/s per user" in text


def test_a_whole_replica_share_reads_as_a_whole_number(
        shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    """Adventure Works Group's walk-through: "its part of the plan is 40 % of the node group:
    6.00 replicas, 1.20 nodes" for a pool of 6 whole replicas; a pooled workload's share keeps
    its fraction (Acme Corp: 2.78 replicas)."""
    awg = _page_text(shipped_outputs(ROOT / "inputs" / "enterprise-multi.yaml").pdf, 1, 99)
    assert "40 % of the node group: 6 replicas, 1.20 nodes, 9.6 GPUs bought" in awg
    assert "6.00 replicas" not in awg
    assert "6.7 % of the node group: 1 replica, 0.20 nodes" in awg  # the agent platform's pool
    acme = _page_text(shipped_outputs(ROOT / "inputs" / "example.yaml").pdf, 1, 99)
    assert "55.6 % of the node group: 2.78 replicas, 2.78 nodes, 11.1 GPUs bought" in acme
