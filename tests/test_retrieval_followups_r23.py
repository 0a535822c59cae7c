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
   2 L40S (CAD 22,080) less; with each PCIe server's network its front end (CAD 1,516.10,
   session 23), CAD 88,592.21. A fixed baseboard is still bought full, every GPU of its spare
   node on standby (it comes full; test_a_baseboard_spare_node_is_still_bought_full).
2. The workbook's BOM sheet gave the embedder in the chat server's empty slot a line of
   "0 nodes, 1 GPU" and no word why; it now says where it runs in the CLI's and the PDF's
   words (proposal.format.shared_place_words).
3. The glossary's "Serving engine" spoke of encoder engines in every account; the retrieval
   half is its own entry, listed only where the account has embedding or reranking servers.
4. The web's RAG quick start showed "-20 % with one node down" unexplained; the plan's pool
   lines now say it in the PDF's words (what is down, what runs after, against what).
5. test_gpus_and_capital_cost_add_up was in both tests/test_retrieval_servers_r21.py and
   tests/test_retrieval_packing_r22.py; the latter's (annual cost as well) is kept.
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import openpyxl
import pytest
from support.maple import MAPLE, maple_with_node_loss

from llmsizer.documents.proposal.glossary import glossary_context
from llmsizer.documents.proposal.render import render_html
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.calculations.retrieval import RETRIEVAL_CALCULATIONS
from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import Value, evaluate
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

ROOT = Path(__file__).resolve().parents[1]
CAT = load_catalog()
RATE = 1.38  # the account's costs.usd_exchange_rate
GPU = 8000 * RATE  # gpus.yaml l40s.price_usd
SERVER = 15000 * RATE  # platforms.yaml pcie-4gpu-gen4-350w.base_price_usd
# session 23 (network per server): a PCIe server pays its 2 x 100 GbE front end at the fabric
# port price per Gb/s (prices.yaml network_per_fabric_port 17,578 / 8, / 400 Gb/s), no fabric
NETWORK = 2 * 100 * 17578 / 8 / 400 * RATE


@pytest.fixture(scope="module")
def maple() -> Result:
    return size(load(MAPLE), CAT)


@pytest.fixture(scope="module")
def maple_n1(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """Maple Ridge with N+1 asked (policy.survive_node_loss: true), nothing else changed."""
    return size(load(maple_with_node_loss(tmp_path_factory.mktemp("maple"))), CAT)


def test_a_pcie_spare_server_holds_the_replicas_one_server_holds(maple_n1: Result) -> None:
    assert CAT.platforms["pcie-4gpu-gen4-350w"].sold_full is False
    embed, rerank = maple_n1.plan.retrieval_groups
    # the embedder still sits in empty slots of the chat servers; session 24: one in each
    # of the 2 servers' empty slots, 1 serving + 1 spare (was 1 GPU: the chat servers' N+1
    # does not cover it; tests/test_embed_spare_s24.py)
    assert (embed.shares_with, embed.nodes, embed.gpus_purchased) == ("group-1", 0, 2)
    # the reranker: 2 replicas on 1 server + a spare server with 2 GPUs (was 4: 6 bought)
    assert (rerank.shares_with, rerank.platform, rerank.replicas, rerank.nodes) == (
        None, "pcie-4gpu-gen4-350w", 2, 2)
    assert (rerank.gpus_used, rerank.gpus_purchased, rerank.standby_gpus, rerank.idle_gpus) == (
        4, 4, 2, 0)
    assert rerank.capex == pytest.approx(2 * (SERVER + NETWORK) + 4 * GPU)
    # was CAD 156,155.28 (6 GPUs); 134,075.28 with the InfiniBand share per server
    assert rerank.capex == pytest.approx(88592.205)
    v = maple_n1.retrieval[1].best.values if maple_n1.retrieval[1].best else {}
    assert (v["retrieval_replicas_per_node"], v["retrieval_spare_gpus"],
            v["retrieval_free_slots"]) == (2, 2, 4)


def _rows(**inputs: float) -> dict[str, Value]:
    """The retrieval rows from shares_llm_nodes on, over the stated replicas and platform (the
    rows before them size the replicas, which are stated here)."""
    env: dict[str, Value] = {"llm_free_gpus": 0.0, "llm_free_slots": 0.0,
                             "llm_idle_cloud_gpus": 0.0, "llm_host_nodes": 0.0, **inputs}
    names = [c.name for c in RETRIEVAL_CALCULATIONS]
    # session 24: the rows that size a guest's spare on the shared nodes come first
    for c in RETRIEVAL_CALCULATIONS[names.index("shared_spare_gpus"):]:
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


def _bom_column(result: Result, tmp_path: Path, workload: str) -> dict[str, object]:
    """The BOM sheet's column of ``workload``'s line: {row label: (value, number format)}."""
    path = tmp_path / "book.xlsx"
    write_workbook(result, path)
    ws = openpyxl.load_workbook(path)["BOM"]
    head = next(c for row in ws.iter_rows() for c in row if c.value == workload)
    return {ws.cell(row=k, column=2).value: (ws.cell(row=k, column=head.column).value,
                                             ws.cell(row=k, column=head.column).number_format)
            for k in range(head.row, head.row + 5)}


def test_the_bom_sheet_says_the_embedder_has_no_server_of_its_own(
        maple: Result, tmp_path: Path) -> None:
    """Item 2: the embedder's 1 GPU sits in an empty slot of the chat server; its BOM line read
    "0 nodes, 1 GPU" with nothing saying why. Now in the CLI's and the PDF's words ("use 1 new
    GPU in an empty slot of the language-model servers", "1 GPU bought for it, no server"), and
    its 0 servers as "none of its own"."""
    col = _bom_column(maple, tmp_path, "Question embedding")
    server, _ = col["Server (vendor model)"]
    assert server == ("Generic 2U 4-GPU PCIe Gen4 server (4x L40S, 350 W): 1 new GPU in an "
                      "empty slot of the language-model servers, no server of its own")
    nodes, fmt = col["Servers"]
    assert nodes.startswith("=Retrieval!") and '[=0]"none of its own"' in str(fmt)
    assert col["GPUs"][0].startswith("=Retrieval!")
    # the reranker on a server of its own keeps the platform's name and "0 nodes" format
    own = _bom_column(maple, tmp_path, "Passage reranking")
    assert own["Server (vendor model)"][0] == "Generic 2U 4-GPU PCIe Gen4 server (4x L40S, 350 W)"
    assert "none of its own" not in str(own["Servers"][1])


def test_the_bom_sheet_says_an_idle_gpu_in_words(tmp_path: Path) -> None:
    """rag-shared: the query embedder runs on 1 idle GPU of the chat servers (bought, unused):
    the CLI's "use 1 idle GPU of the language-model servers"."""
    r = size(load(ROOT / "tests" / "data" / "rag-shared.yaml"), CAT)
    (g,) = [g for g in r.plan.retrieval_groups if g.shares_with]
    assert (g.workload, g.replicas, g.gpus_purchased) == ("Query embedding", 1, 0)
    server = str(_bom_column(r, tmp_path, "Query embedding")["Server (vendor model)"][0])
    assert server.endswith(": 1 idle GPU of the language-model servers, no server of its own")


def _glossary(html: str) -> dict[str, str]:
    """The proposal's glossary rows: {term: meaning}, tags removed."""
    start = html.index('id="glossary"')
    section = html[start:html.index("</section>", start)]
    return {unescape(t): " ".join(unescape(re.sub(r"<[^>]+>", " ", m)).split())
            for t, m in re.findall(r'<th scope="row">(.*?)</th>\s*<td>(.*?)</td>', section,
                                   re.DOTALL)}


def test_an_account_without_retrieval_reads_no_encoder_engine_in_its_glossary() -> None:
    """Item 3: "Serving engine" told every account of encoder engines for embedding and
    reranking servers (Acme Corp, inputs/example.yaml, has none). The retrieval half is now its
    own entry, listed only with retrieval servers (only_when "retrieval") and pruned where the
    text names no engine."""
    acme = _glossary(render_html(size(load(ROOT / "inputs" / "example.yaml"), CAT)))
    assert "Serving engine" in acme
    assert not re.search(r"encoder|embedding|reranking|Text Embeddings",
                         acme["Serving engine"], re.IGNORECASE)
    assert "Serving engine for embedding and reranking" not in acme
    terms = {t.term for t in glossary_context(frozenset())["glossary"]}
    assert "Serving engine for embedding and reranking" not in terms


def test_an_account_with_retrieval_reads_both_halves(maple: Result) -> None:
    rows = _glossary(render_html(maple))
    assert "vLLM" in rows["Serving engine"] and "encoder" not in rows["Serving engine"]
    assert rows["Serving engine for embedding and reranking"].startswith(
        "Embedding and reranking servers run an encoder engine (Text Embeddings Inference, "
        "Infinity, a NIM)")


def _words(html: str, anchor: str) -> str:
    start = html.index(f'id="{anchor}"')
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html[start:html.index("</section>", start)]))
                    .replace("\xa0", " ").split())


def test_the_rag_quick_start_says_what_one_node_down_means(tmp_path: Path) -> None:
    """Item 4: the web's RAG / agent quick start (web/archetypes.py "rag": Llama 3.1 70B, 100
    users, 24,000-token prompts) sizes 13 replicas of one B200 on 2 eight-GPU nodes, no N+1.
    Its plan read "headroom 30 % at peak, -20 % with one node down" and nothing more. The
    figure is now told as the PDF's section 5 tells it: the node that hurts the pool most
    takes 7 replicas (13 spread 7 + 6), 2 restart on the other node's free GPUs (16 - 13 = 3,
    one of them on the lost node), so 8 run against the 10 peak demand needs:
    8 / 10 - 1 = -20 %, peak not met, ask for a spare node."""
    from llmsizer.web import archetypes, forms
    from llmsizer.web.account import update_html

    text = forms.to_yaml(archetypes.requirements("rag"))
    plan = _words(update_html(text), "plan")
    assert ("Pool 1: RAG agent runs on 13 replicas of 1 × NVIDIA B200 (HGX), FP8 weights, FP8 "
            "KV cache; spare: none asked for; headroom 30 % "
            "at peak with both nodes up (replicas installed ÷ the "
            "replicas peak demand needs − 1). With the node that hurts it most down it loses 7 "
            "of its 13 replicas; 8 run once the lost ones have restarted: headroom -20 %, so "
            "peak demand is not met while a node is down — consider asking for a spare node "
            "(N+1).") in plan
    assert "-20 % with one node down." not in plan
    # the PDF's figures for the same account: 13 installed, 10 needed, -20 % with one down
    path = tmp_path / "rag.yaml"
    path.write_text(text, encoding="utf-8")
    r = size(load(path), CAT)
    (pool,) = r.plan.pools
    assert (pool.replicas, pool.values["pool_replicas_lost_one_down"],
            pool.values["pool_replicas_one_down"]) == (13, 7, 8)
    assert pool.values["pool_demand_replicas"] == pytest.approx(10, abs=0.05)
    assert pool.headroom_after_node_loss == pytest.approx(-0.2, abs=0.005)
    headroom = _words(render_html(r), "headroom")
    assert ("with one node down, once the lost replicas that fit on free GPUs of another node "
            "have restarted, the headroom is -20 %, so peak demand is not met while a node is "
            "down") in headroom
