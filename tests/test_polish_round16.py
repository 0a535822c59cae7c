"""Proposal polish from the sixteenth review round: the thirteen shipped proposals read page by
page as the customer and the finance reader read them (inputs/, 2026-11-29)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from conftest import ShippedOutputs

from llmsizer.documents.proposal.format import NBSP

ROOT = Path(__file__).resolve().parents[1]
RAG = ROOT / "inputs" / "rag-knowledge-base.yaml"


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
    assert sum(listed) == out.result.totals.gpus_purchased == 20, (listed, cover)
    assert ("4 × NVIDIA H100 SXM 80GB in 1 × Dell PowerEdge XE8640 for Knowledge assistant; "
            "8 × NVIDIA L4 in 2 × Generic 2U 4-GPU PCIe Gen4 server for Query and corpus "
            "embedding; 8 × NVIDIA RTX PRO 6000 Blackwell Server Edition in 1 × Dell PowerEdge "
            "XE7745 for Passage reranking, in all 20 GPUs bought in 4 nodes; capital cost "
            "USD 373 k") in cover
