"""Review round 25 (wave 2): what the PDF and workbook review left (words, layout, data)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _size(path: Path):
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    return size(load(path))


def test_batch_summary_lists_every_workload_with_its_gpus() -> None:
    """Wide World's summary row listed the Knowledge assistant alone beside 16 GPUs and 3
    nodes: its embedding (4 L40S, 1 node) and reranking (8 RTX PRO 6000, 1 node) servers are
    recommended too. Every workload is listed with its GPUs, and they add up to the totals."""
    import json

    from llmsizer.runs.outcome import account_recommendations

    r = _size(ROOT / "inputs" / "rag-knowledge-base.yaml")
    rows = account_recommendations(json.loads(r.to_json()))
    assert len(rows) == 3
    assert rows[0].startswith("Knowledge assistant: 2 × NVIDIA H100 SXM 80GB")
    assert rows[0].endswith("— 4 GPUs bought, 1 node")
    assert rows[1].startswith("Query and corpus embedding: 4 × NVIDIA L40S")
    assert rows[1].endswith("— 4 GPUs bought, 1 node")
    assert rows[2].startswith("Passage reranking: 8 × NVIDIA RTX PRO 6000")
    assert rows[2].endswith("— 8 GPUs bought, 1 node")
    assert (r.totals.gpus_purchased, r.totals.nodes) == (16, 3)


def test_batch_summary_rented_rows_add_up() -> None:
    """A rented RAG account (tests/data/rag-kb-cloud-n1-r22.yaml): each row also says the GPUs
    it rents, and they sum to the account's 10 rented GPUs (3 + 3 + 4)."""
    import re

    from llmsizer.runs.outcome import account_recommendations

    r = _size(ROOT / "tests" / "data" / "rag-kb-cloud-n1-r22.yaml")
    assert r.deployment.recommended == "cloud"
    rows = account_recommendations(r.model_dump(
        include={"workloads", "retrieval", "plan", "deployment"}))
    assert len(rows) == 3
    rented = [int(re.search(r"; (\d+) GPUs? rented$", x).group(1)) for x in rows]  # type: ignore[union-attr]
    bought = [int(re.search(r"— (\d+) GPUs? bought", x).group(1)) for x in rows]  # type: ignore[union-attr]
    assert sum(rented) == r.totals.cloud_gpus_rented == 10
    assert sum(bought) == r.totals.gpus_purchased == 35


def test_summary_rented_retrieval_formula_agrees_with_its_cached_text(tmp_path: Path) -> None:
    """The Summary sheet's rented retrieval line read retrieval_cloud_gpus (GPUs in use: 10
    and 11 for tests/data/rag-kb-cloud-n1-r22.yaml) while its cached text held the GPUs as
    rented (retrieval_cloud_gpus_rented: 3 and 4): LibreOffice recalculated "10 × AMD
    Instinct MI325X GPUs rented" over the written "3 × ...". Formula and cache agree now."""
    from test_workbook import libreoffice_check

    from llmsizer.documents.workbook import write_workbook

    r = _size(ROOT / "tests" / "data" / "rag-kb-cloud-n1-r22.yaml")
    assert r.deployment.recommended == "cloud"
    assert [g.cloud_gpus for g in r.plan.retrieval_groups] == [3, 4]
    book = tmp_path / "rag.xlsx"
    write_workbook(r, book)
    problems, _seen, got = libreoffice_check(r, book, tmp_path / "lo")
    # the Summary sheet's cells (the Scenarios sheet's rented rows of this account differ from
    # the engine's on stage too: left for its own fix, see the round's report)
    summary = [p for p in problems if p.startswith("Summary!")]
    assert not summary, "\n".join(summary)
    texts = [v for v in got["Summary"].values() if isinstance(v, str)]
    assert any(t.startswith("3 × AMD Instinct MI325X GPUs rented in the cloud") for t in texts)
    assert any(t.startswith("4 × AMD Instinct MI325X GPUs rented in the cloud") for t in texts)


def test_a_rack_scale_platform_is_counted_in_racks() -> None:
    """Northwind Research (inputs/frontier-moe-rack.yaml) buys 8 GB300 NVL72 racks: its BOM
    read "NVIDIA GB300 NVL72 rack — 8 servers". One node of an NVL72 platform is the whole
    rack (gpus_per_node = nvlink_domain = 72, platforms.yaml), so the line counts racks; an
    8-GPU server stays a server."""
    from llmsizer.documents.proposal.bom import bom_rows, unit_word
    from llmsizer.documents.proposal.format import Formatter

    r = _size(ROOT / "inputs" / "frontier-moe-rack.yaml")
    rows = {row.item: row for row in bom_rows(r, Formatter(r.account.currency))}
    assert rows["Servers: NVIDIA GB300 NVL72 rack"].quantity == "8 racks"
    assert (unit_word("gb200-nvl72"), unit_word("dell-xe9680")) == ("rack", "server")


def _words(html: str) -> str:
    import re
    from html import unescape

    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace("\u00a0", " ").split())
    return re.sub(r" ([,.;:])", r"\1", text)


def _risks(html: str) -> str:
    text = _words(html)
    return text[text.index("Node loss"):text.index("Burst above peak")]


def test_a_single_workload_accounts_node_loss_names_the_workload() -> None:
    """Contoso Developer Tools (inputs/code-assistant-alternatives.yaml), one workload: the node-loss
    bullet read "Pool 1 (Coding assistant): ..." while the other risks' bullets read "Coding
    assistant: ...". Without pools shared by several workloads, it names the workload."""
    from llmsizer.documents.proposal.render import render_html

    r = _size(ROOT / "inputs" / "code-assistant-alternatives.yaml")
    assert r.account.name == "Contoso Developer Tools" and len(r.plan.pools) == 1
    risks = _risks(render_html(r))
    assert "Pool 1" not in risks
    assert "Coding assistant: " in risks


def test_the_storage_needed_and_the_storage_costed_reconcile_in_words() -> None:
    """Acme Corp (inputs/example.yaml): the BOM gave "5.2 TB" and then "the costs provide
    50 TB" with no word on which is which. 5.2 TB is needed (model repository 0.22 TB + logs
    5 TB); 50 TB is what the cost table charges for (10 TB per server x 5 servers). Both say
    so, and the cost table's storage note names the same two figures."""
    from llmsizer.documents.proposal.bom import bom_rows
    from llmsizer.documents.proposal.format import Formatter
    from llmsizer.documents.proposal.render import render_html

    r = _size(ROOT / "inputs" / "example.yaml")
    assert r.account.name == "Acme Corp"
    row = next(x for x in bom_rows(r, Formatter(r.account.currency)) if x.item == "Storage")
    assert row.quantity == "5.2\u00a0TB needed"
    detail = row.detail.replace("\u00a0", " ")
    assert detail.startswith("Needed: model repository 0.22 TB")
    assert detail.endswith("The cost table charges for 50 TB, the 10 TB per server of the "
                           "5 servers: more than the 5.2 TB needed")
    text = _words(render_html(r))
    assert ("storage (10 TB per node at USD 70.0 per TB-month: 50 TB over the 5 servers, more "
            "than the 5.2 TB the bill of materials needs)") in text


def test_a_negative_headroom_with_one_instance_down_is_said_in_words() -> None:
    """Northwind Retail rented (tests/data/ref-a-rented.yaml): the plan table's "One instance
    down" cell read "−12 %" with no words. The cell says "short of peak" and the table's note
    says what the column means."""
    from llmsizer.documents.proposal.render import render_html

    r = _size(ROOT / "tests" / "data" / "ref-a-rented.yaml")
    assert r.account.name.startswith("Northwind Retail")
    (pool,) = r.plan.pools
    assert pool.headroom_after_node_loss < 0
    text = _words(render_html(r))
    assert "−12 % short of peak" in text or "-12 % short of peak" in text
    assert ("One instance down: the headroom left with the instance that hurts the pool most "
            "down and its lost replicas restarted where they fit; below zero, the pool is short "
            "of its peak demand until the instance is back.") in text
    assert "was requested. One instance down" in text  # a sentence of its own
