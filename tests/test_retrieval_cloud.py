"""A retrieval server on a language-model node group's idle GPUs, rented in the cloud
(calculations/retrieval.py retrieval_cloud_gpus): the group rents whole instances, so the
idle GPUs it takes on premises are rented already when those instances carry them; where the
cloud sells single GPUs they are not, and the server rents its own.

Prices: the catalog's H100 SXM offers (model/catalogs/prices.yaml): the account's default
one-year tier at USD 2.65 per GPU-hour in whole 8-GPU instances, the GPU cloud at USD 3.99
per single GPU; 8,760 hours a year; storage USD 8,400 a year per 4-GPU node. Session 24:
the cloud's storage is per GPU rented (costs.py annual_cloud_storage), GPUs rented / 4 x
8,400 = 2,100 a GPU rented: an 8-GPU instance carries 16,800, a single GPU 2,100.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size

CAT = load_catalog()
DATA = Path(__file__).parent / "data"
SHARED_CLOUD = DATA / "rag-shared-cloud.yaml"
SINGLE_GPU_CLOUD = DATA / "rag-shared-single-gpu-cloud.yaml"
INSTANCE_YEAR = 8 * 2.65 * 8760  # one 8-GPU H100 instance, a year: USD 185,712


def test_a_shared_server_rents_nothing_the_groups_instances_already_carry() -> None:
    """rag-shared-cloud.yaml: Llama 3.1 8B uses 2 GPUs of its 4-GPU H100 server; in the cloud
    it rents one whole 8-GPU instance, 6 GPUs idle. The query embedder's one replica runs on
    an idle GPU: no node and, in the cloud, no GPU of its own (it rented a whole 8-GPU
    instance, USD 185,712 a year, and the account's cloud total was USD 573,936). The
    reranker needs 4 replicas, more than the 1 idle GPU left: it rents and buys its own. The
    account's cloud total is the chat group's plus the reranker's."""
    r = size(load(SHARED_CLOUD), CAT)
    (llm,) = r.plan.node_groups
    assert (llm.gpus_used, llm.gpus_purchased, llm.values["cloud_gpus_rented"]) == (2, 4, 8)
    assert llm.annual_cost_cloud == pytest.approx(INSTANCE_YEAR + 16_800)  # USD 202,512
    embed, rerank = r.plan.retrieval_groups
    assert (embed.shares_with, embed.replicas, embed.nodes, embed.gpus_used) == (llm.id, 1, 0, 1)
    assert (embed.cloud_gpus, embed.annual_cost_cloud, embed.annual_cost_onprem) == (0, 0.0, 0.0)
    v = r.retrieval[0].best.values if r.retrieval[0].best else {}
    assert (v["llm_idle_cloud_gpus"], v["retrieval_cloud_gpus"], v["cloud_instances"]) == (6, 0, 0)
    # its GPUs rented: the one whole 8-GPU instance its cost pays for (review round 22: its
    # cloud lines' cloud_gpus_rented; before, its 4 GPUs in use)
    assert (rerank.shares_with, rerank.replicas, rerank.cloud_gpus) == (None, 4, 8)
    assert rerank.annual_cost_cloud == pytest.approx(INSTANCE_YEAR + 16_800)  # one instance
    t = r.totals
    assert t.annual_cost_cloud == pytest.approx(llm.annual_cost_cloud + rerank.annual_cost_cloud)
    assert t.annual_cost_cloud == pytest.approx(405_024.0)  # 388,224 before session 24
    assert not t.cloud_unpriced  # the embedder's 0 is not "no cloud price"
    assert r.deployment.annual_cost["cloud"] == pytest.approx(t.annual_cost_cloud)
    # the what-if rows: the one-year tier row is the proposal; in the GPU cloud (single
    # GPUs) the chat group rents 2 GPUs only and the embedder rents its own
    rows = {s.name: s for s in r.sensitivity}
    assert rows["cloud_committed_1yr"].annual_cost_cloud == pytest.approx(405_024.0)
    single = 3.99 * 8760
    assert rows["cloud_gpu_cloud"].annual_cost_cloud == pytest.approx(
        (2 + 1 + 4) * (single + 2100))  # chat 2 + embedder 1 + reranker 4, each its storage


def test_where_the_cloud_sells_single_gpus_a_shared_server_rents_its_own() -> None:
    """rag-shared-single-gpu-cloud.yaml: the same chat node and embedder rented in the GPU
    cloud, which sells single H100s: the chat group rents its 2 GPUs in use, none idle, so the
    embedder (still on an idle GPU on premises, no node of its own) rents 1 GPU: USD 34,952
    a year + its storage, 2,100 (session 24: storage per GPU rented; none before, the server
    buying no node), in the account's cloud total."""
    r = size(load(SINGLE_GPU_CLOUD), CAT)
    (llm,) = r.plan.node_groups
    assert (llm.gpus_used, llm.values["cloud_gpus_rented"]) == (2, 2)
    (embed,) = r.plan.retrieval_groups
    assert (embed.shares_with, embed.nodes, embed.cloud_gpus) == (llm.id, 0, 1)
    assert embed.annual_cost_cloud == pytest.approx(3.99 * 8760 + 2100)
    assert embed.annual_cost_onprem == 0.0
    assert r.totals.annual_cost_cloud == pytest.approx(
        llm.annual_cost_cloud + embed.annual_cost_cloud)
    assert r.totals.annual_cost_cloud == pytest.approx(3 * (3.99 * 8760 + 2100))


def test_the_workbook_shows_a_shared_servers_cloud_zero_as_money(tmp_path: Path) -> None:
    """rag-shared-cloud.yaml in the workbook: the embedder's cloud cost on the Retrieval sheet
    and its Summary column is USD 0 a year (its GPU has a cloud price), not "no price listed",
    the words for a GPU without one."""
    import openpyxl

    from llmsizer.documents.workbook import write_workbook
    from llmsizer.documents.workbook.retrieval_sheet import retrieval_cell

    r = size(load(SHARED_CLOUD), CAT)
    book = tmp_path / "shared.xlsx"
    write_workbook(r, book)
    wb = openpyxl.load_workbook(book)
    for name in ("annual_cost_cloud", "retrieval_cloud_cost"):  # as rented: session 25
        embed = wb["Retrieval"][retrieval_cell(0, name).split("!")[1]]
        assert "no price listed" not in embed.number_format
        assert embed.number_format.startswith('"$"#,##0"/yr"')
    # the Summary column reads the cost as rented (session 25: a guest's cheapest option
    # rented alone where its host's instances lack room; here the host carries it: 0)
    (cell,) = [c for row in wb["Summary"].iter_rows() for c in row
               if c.value == f"={retrieval_cell(0, 'retrieval_cloud_cost')}"]
    assert "no price listed" not in cell.number_format
