"""The Retrieval sheet's figures that have a home elsewhere in the workbook are links to it
(one figure, one home): the GPU's peak TFLOPS and memory and the server's GPUs per node are
Catalog lookups, the compared hosted API's price an Inputs cell. Finance edits the home and
LibreOffice, forced to recalculate, moves the retrieval servers as the engine does when
sized with the edited figure (the engine's catalog edited the same way).

Without LibreOffice these tests FAIL, never skip (tests/support/libreoffice.py).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from support.libreoffice import read_values, recalculate
from support.named_cells import edit_named

from llmsizer.documents.workbook import write_workbook
from llmsizer.documents.workbook.retrieval_sheet import retrieval_cell
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size

openpyxl: Any = importlib.import_module("openpyxl")

CAT = load_catalog()
WIDE_WORLD = Path(__file__).parents[1] / "inputs" / "rag-knowledge-base.yaml"
# an L40S at 420 dense BF16 TFLOPS (the catalog: 362; at 450 the reranker moves to L40S too)
# and the compared embedding API at 0.13 USD per million tokens (the catalog's reference
# offer: 0.02)
TFLOPS, API = 420.0, 0.13


def _catalog_cell(book: Path, gpu: str, head: str) -> str:
    """The Catalog sheet's cell of GPU ``gpu`` in the column headed ``head``."""
    ws = openpyxl.load_workbook(book)["Catalog"]
    (row,) = [r for r in ws.iter_rows() if r[0].value == gpu]
    heads = next(r for r in ws.iter_rows() if str(r[0].value).startswith("GPU code"))
    (col,) = [c.column_letter for c in heads if c.value == head]
    return f"Catalog!{col}{row[0].row}"


def test_edited_catalog_tflops_and_api_price_move_the_retrieval_servers(
        tmp_path: Path) -> None:
    """Wide World Importers (inputs/rag-knowledge-base.yaml) embeds on L40S (on L4s before
    session 23 priced a PCIe server's network as its front end). Finance types the L40S's
    dense BF16 TFLOPS on the Catalog sheet and the embedding API's price on Inputs:
    the recalculated Retrieval sheet has the engine's forward time, replicas, nodes, costs
    and hosted-API cost at those figures. Both were typed numbers on the Retrieval sheet,
    which kept the written 362 TFLOPS and 0.02 USD."""
    base = size(load(WIDE_WORLD), CAT)
    assert [g.gpu for g in base.plan.retrieval_groups] == ["l40s", "rtx-pro-6000"]
    book = tmp_path / "base.xlsx"
    write_workbook(base, book)
    edited = edit_named(book, tmp_path / "edited.xlsx", {
        _catalog_cell(book, "l40s", "BF16 dense"): TFLOPS, "in_api_embed": API})

    gpus = {**CAT.gpus, "l40s": CAT.gpus["l40s"].model_copy(update={"bf16_tflops": TFLOPS})}
    ref = CAT.prices.embedding_reference("embed")
    assert ref is not None and ref.usd_per_million_tokens != API
    prices = CAT.prices.model_copy(update={"embedding_api": {
        k: (p.model_copy(update={"usd_per_million_tokens": API}) if p is ref else p)
        for k, p in CAT.prices.embedding_api.items()}})
    fresh = size(load(WIDE_WORLD), CAT.model_copy(update={"gpus": gpus, "prices": prices}))
    was, now = base.retrieval[0], fresh.retrieval[0]
    assert was.best is not None and now.best is not None and now.best.gpu == "l40s"
    # the edit moves the embedder: larger batches within the latency (the forward time is
    # half the target either way), fewer replicas, a dearer API to compare
    for name in ("batch_tokens", "retrieval_replicas", "retrieval_annual_cost_api"):
        assert now.best.values[name] != was.best.values[name], name

    lo = read_values(recalculate([edited], tmp_path / "out", timeout=300)[edited])
    for name in ("gpu_tflops", "api_per_million_tokens", "batch_tokens", "gpu_tokens_per_s",
                 "retrieval_replicas", "retrieval_nodes", "capex", "annual_cost_onprem",
                 "retrieval_cost_per_million_tokens_onprem", "retrieval_annual_cost_api"):
        cell = retrieval_cell(0, name).split("!")[1]
        assert lo["Retrieval"][cell] == pytest.approx(float(now.best.values[name]),
                                                      rel=1e-9), name
    # the reranker (an RTX PRO 6000 and the reranking API) did not move
    rerank = fresh.retrieval[1].best
    assert rerank is not None
    cell = retrieval_cell(1, "annual_cost_onprem").split("!")[1]
    assert lo["Retrieval"][cell] == pytest.approx(float(rerank.values["annual_cost_onprem"]),
                                                  rel=1e-9)


def test_the_retrieval_sheet_types_no_figure_the_catalog_or_inputs_hold(tmp_path: Path) -> None:
    """The GPU's TFLOPS and memory, the GPUs per node and the API price are formulas (links),
    never typed numbers, in every workload column."""
    result = size(load(WIDE_WORLD), CAT)
    book = tmp_path / "rag.xlsx"
    write_workbook(result, book)
    ws = openpyxl.load_workbook(book)["Retrieval"]
    for j in range(len(result.plan.retrieval_groups)):
        for name in ("gpu_tflops", "gpu_memory_gb", "gpus_per_node", "api_per_million_tokens"):
            value = ws[retrieval_cell(j, name).split("!")[1]].value
            assert isinstance(value, str) and value.startswith("="), (j, name, value)
    assert ws[retrieval_cell(0, "api_per_million_tokens").split("!")[1]].value == "=in_api_embed"
    assert ws[retrieval_cell(1, "api_per_million_tokens").split("!")[1]].value == (
        "=in_api_rerank")
