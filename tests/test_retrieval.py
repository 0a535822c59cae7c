"""Embed and rerank workloads (issue 24): schema, catalog, the retrieval model's numbers.

Golden numbers from the source article "How fast does it serve?" ("Embedding servers are not
small LLM servers"): NV-Embed-v2 at FP16 is 15.7 GB and fits on one A10 or L4.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.named_cells import cloud_price_name, edit_named

from llmsizer.base.errors import InputError
from llmsizer.inputs.loader import load_from_text
from llmsizer.inputs.schema import Requirements
from llmsizer.model.catalog import load_catalog
from llmsizer.model.names import short_name
from llmsizer.sizing.evaluate import account_inputs, build_tables
from llmsizer.sizing.results import RetrievalWorkloadResult
from llmsizer.sizing.retrieval import size_retrieval

CAT = load_catalog()


def _req(workload: dict[str, Any], gpus: list[str]) -> Requirements:
    return Requirements.model_validate({
        "schema_version": 1, "account": {"name": "Acme"},
        "workloads": [{"name": "Search", **workload}], "hardware": {"gpus": gpus}})


def _size(workload: dict[str, Any], gpus: list[str]) -> RetrievalWorkloadResult:
    req = _req(workload, gpus)
    w = req.workloads[0]
    return size_retrieval(req, w, CAT.embedders[w.model], CAT, build_tables(req, CAT),
                          account_inputs(req, CAT))


EMBED = {"model": "nv-embed-v2", "kind": "embed", "requests_per_s": 50,
         "tokens_per_request": 64, "targets": {"latency_p95_s": 0.2}}


def test_nv_embed_v2_is_15_7_gb_at_fp16_and_fits_one_a10_or_l4() -> None:
    s = _size(EMBED, ["a10", "l4"])
    for o in s.options:
        assert float(o.values["encoder_weights_gb"]) == pytest.approx(15.7, abs=0.05)
        assert o.values["encoder_fits"] == 1, o.gpu  # 24 GB cards, 90 % usable = 21.6 GB


def test_more_requests_never_fewer_gpus() -> None:
    for gpu in ("l4", "l40s", "h100-sxm"):
        before = 0.0
        for rate in (1, 5, 20, 50, 200, 1000, 5000):
            o = _size({**EMBED, "requests_per_s": rate}, [gpu]).options[0]
            gpus = float(o.values["retrieval_gpus"])
            assert gpus >= before, (gpu, rate)
            before = gpus
        assert before > 1  # the sweep reached more than one GPU: the property was exercised


def test_longer_sequence_never_more_throughput() -> None:
    for model in ("bge-m3", "nv-embed-v2", "qwen3-embedding-0.6b"):
        before = float("inf")
        for tokens in (16, 64, 256, 512, 2048, 8192):
            o = _size({**EMBED, "model": model, "tokens_per_request": tokens,
                       "targets": {"latency_p95_s": 2.0}}, ["l40s"]).options[0]
            rate = float(o.values["replica_tokens_per_s"])
            assert rate <= before * (1 + 1e-12), (model, tokens)
            before = rate


SMALL_RERANK = {"model": "ms-marco-minilm-l-6-v2", "kind": "rerank", "requests_per_s": 100,
                "candidates_per_request": 50, "tokens_per_pair": 256,
                "targets": {"latency_p95_s": 0.2}}


def test_tokenisation_ceiling_binds_at_small_models_on_big_gpus() -> None:
    """With the serving stack's constants (MFU 0.33, 1.00 ms per batch; docs/calibration.md)
    a 22.7M cross-encoder on a B200 runs 16,384-token batches in 1.00 + 16,384 x 47.76 MFLOP /
    (2,250 TFLOPS x 0.33) = 2.05 ms: 7.98M tokens/s, above the 5.6M tokens/s eight host cores
    tokenise (700k per core, catalog), so the CPU is what limits the replica. On an H100 the
    same model reaches 4.82M tokens/s (under the ceiling) and on an L4 0.80M: the GPU limits
    there, and a 7.85B embedder never comes near the ceiling."""
    b200 = _size(SMALL_RERANK, ["b200"]).options[0].values
    # 700k tokens/s per core x 8 host cores per GPU (catalog constants)
    assert float(b200["tokenize_tokens_per_s"]) == pytest.approx(5.6e6)
    # 2 x 22.7M parameters + 4 x 6 layers x 384 hidden x 256 tokens
    assert float(b200["flops_per_token"]) == pytest.approx(47.76e6, rel=1e-3)
    assert float(b200["gpu_tokens_per_s"]) == pytest.approx(7.98e6, rel=0.01)
    assert b200["limited_by"] == "tokenisation CPU"
    assert float(b200["replica_tokens_per_s"]) == pytest.approx(5.6e6)
    for gpu, rate in (("h100-sxm", 4.82e6), ("l4", 0.796e6)):
        v = _size(SMALL_RERANK, [gpu]).options[0].values
        assert float(v["gpu_tokens_per_s"]) == pytest.approx(rate, rel=0.01), gpu
        assert v["limited_by"] != "tokenisation CPU", gpu
    big = _size(EMBED, ["b200"]).options[0]
    assert big.values["limited_by"] != "tokenisation CPU"
    assert 5.6e6 / float(big.values["gpu_tokens_per_s"]) > 10


def test_corpus_only_sized_to_the_reindex_window() -> None:
    o = _size({"model": "bge-m3", "kind": "embed", "corpus_tokens": 1e10,
               "reindex_within_hours": 10}, ["l4"]).options[0]
    demand = 1e10 / 36000  # tokens/s
    replicas = float(o.values["retrieval_replicas"])
    rate = float(o.values["replica_tokens_per_s_corpus"])
    assert replicas * rate >= demand > (replicas - 1) * rate


def test_catalog_has_every_named_model_with_its_config_and_a_source() -> None:
    embed = {"nv-embed-v2", "bge-m3", "bge-large-en-v1.5", "e5-mistral-7b-instruct",
             "qwen3-embedding-0.6b", "qwen3-embedding-4b", "qwen3-embedding-8b",
             "gte-qwen2-7b-instruct", "nomic-embed-text-v1.5"}
    rerank = {"bge-reranker-v2-m3", "qwen3-reranker-0.6b", "qwen3-reranker-4b",
              "qwen3-reranker-8b", "ms-marco-minilm-l-6-v2", "ms-marco-minilm-l-12-v2"}
    assert {k for k, e in CAT.embedders.items() if e.task == "embed"} >= embed
    assert {k for k, e in CAT.embedders.items() if e.task == "rerank"} >= rerank
    assert CAT.embedders["bge-m3"].layers == 24  # config.json num_hidden_layers
    assert CAT.embedders["bge-m3"].max_sequence == 8192  # 8194 positions less 2 reserved
    assert all("http" in e.source for e in CAT.embedders.values())


YAML = """schema_version: 1
account: {name: Acme}
workloads:
  - name: Search
    model: %s
%s
"""


def _message(model: str, body: str) -> str:
    with pytest.raises(InputError) as exc:
        load_from_text(YAML % (model, body), "acme.yaml", CAT)
    return exc.value.message


def test_generating_key_on_an_embed_workload_is_named() -> None:
    msg = _message("bge-m3", "    kind: embed\n    requests_per_s: 5\n    tokens_per_request: 64\n"
                   "    output_tokens: 300\n    targets: {latency_p95_s: 0.1}")
    assert "output_tokens is for kind: generate" in msg and "\n" not in msg


def test_embed_key_on_a_generating_workload_is_named() -> None:
    msg = _message("llama-3.1-70b", "    concurrent_users: 5\n    prompt_tokens: 500\n"
                   "    output_tokens: 300\n    corpus_tokens: 1e9\n"
                   "    targets: {tokens_per_s_per_user: 20}")
    assert "corpus_tokens is for kind: embed" in msg


def test_rerank_needs_its_shape_and_an_llm_is_not_an_embedder() -> None:
    assert "candidates_per_request" in _message(
        "bge-reranker-v2-m3", "    kind: rerank\n    requests_per_s: 5\n    tokens_per_pair: 300\n"
        "    targets: {latency_p95_s: 0.1}")
    assert "unknown embed model" in _message(
        "llama-3.1-70b", "    kind: embed\n    corpus_tokens: 1e9\n    reindex_within_hours: 4")


def test_the_encoder_engine_is_stated_or_the_serving_stack() -> None:
    """An embed or rerank workload names the engine it is served with (an encoder engine
    class); the default is the serving stack. A hand-fused engine reaches about twice the
    serving stack's share of peak (docs/calibration.md: MFU 0.69 against 0.33, fitted on
    published rows), so the same corpus needs fewer GPUs."""
    corpus = {"model": "bge-large-en-v1.5", "kind": "embed", "corpus_tokens": 5e10,
              "reindex_within_hours": 4}
    default = _size(corpus, ["l4"])
    fused = _size({**corpus, "engine": "fused-tensorrt"}, ["l4"])
    assert (default.engine, fused.engine) == ("serving-stack", "fused-tensorrt")
    d, f = default.options[0].values, fused.options[0].values
    assert (float(d["mfu_encode"]), float(f["mfu_encode"])) == (0.33, 0.69)
    assert float(f["encode_batch_overhead_ms"]) == 0.85
    assert float(f["gpu_tokens_per_s_full"]) > 1.9 * float(d["gpu_tokens_per_s_full"])
    assert float(f["retrieval_replicas"]) < float(d["retrieval_replicas"])


def test_an_unknown_engine_and_an_engine_on_a_generating_workload_are_named() -> None:
    msg = _message("bge-m3", "    kind: embed\n    corpus_tokens: 1e9\n"
                   "    reindex_within_hours: 4\n    engine: tensorrt")
    assert "unknown encoder engine" in msg and "fused-tensorrt" in msg and "serving-stack" in msg
    msg = _message("llama-3.1-70b", "    concurrent_users: 5\n    prompt_tokens: 500\n"
                   "    output_tokens: 300\n    engine: vllm\n"
                   "    targets: {tokens_per_s_per_user: 20}")
    assert "engine is for kind: embed and kind: rerank" in msg


def test_a_valid_rag_account_loads() -> None:
    loaded = load_from_text(YAML % ("bge-m3", "    kind: embed\n    named_users: 2000\n"
                                    "    requests_per_user_per_hour: 6\n    peak_to_average: 3\n"
                                    "    tokens_per_request: 64\n"
                                    "    targets: {latency_p95_s: 0.1}"), "acme.yaml", CAT)
    w = loaded.req.workloads[0]
    o = size_retrieval(loaded.req, w, CAT.embedders[w.model], CAT, build_tables(loaded.req, CAT),
                       account_inputs(loaded.req, CAT)).options[0]
    assert float(o.values["request_rate_per_s"]) == pytest.approx(2000 * 6 * 3 / 3600)


# --- a mixed account: the retrieval workloads reach the results ---------------------------

SHARED = Path(__file__).parent / "data" / "rag-shared.yaml"
MIXED = Path(__file__).parent / "data" / "rag-mixed.yaml"
WIDE_WORLD = Path(__file__).parents[1] / "inputs" / "rag-knowledge-base.yaml"
SHARED_BUSY = Path(__file__).parent / "data" / "rag-shared-busy.yaml"
SHARED_CLOUD = Path(__file__).parent / "data" / "rag-shared-cloud.yaml"
SHARED_SINGLE_GPU_CLOUD = Path(__file__).parent / "data" / "rag-shared-single-gpu-cloud.yaml"


def test_mixed_account_results_hold_the_retrieval_workloads_and_their_costs() -> None:
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    result = size(load(MIXED), CAT)
    doc = json.loads(result.to_json())
    assert [w["name"] for w in doc["workloads"]] == ["Chat"]
    retrieval = {w["name"]: w for w in doc["retrieval"]}
    assert set(retrieval) == {"Query embedding", "Rerank"}
    for w in retrieval.values():
        ids = {o["id"] for o in w["options"]}
        assert {"l4", "a10", "l40s"} <= ids  # small PCIe servers are candidates
    # bge-m3 (568M parameters) at 64 tokens, 100 ms p95: since session 23 (a PCIe server pays
    # its front-end network, not 17,578 of fabric) 4 L40S in a generic 4-GPU server are the
    # cheapest (USD 35,904 a year; 8 L4 in an XE7745 35,932); the reranker's 50 x 320-token
    # batch needs a 943 ms p95 on an L4 (fitted constants), over 300 ms
    assert retrieval["Query embedding"]["recommended"] == "l40s"
    l4 = next(o for o in retrieval["Rerank"]["options"] if o["id"] == "l4")
    assert not l4["feasible"] and "over the 300 ms target" in l4["reason"]
    groups = doc["plan"]["retrieval_groups"]
    assert [g["workload"] for g in groups] == ["Query embedding", "Rerank"]
    # the totals are the LLM node groups plus the retrieval groups, figure by figure
    llm = doc["plan"]["node_groups"]
    for key, figure in (("capex", "capex"), ("annual_cost_onprem", "annual_cost_onprem"),
                        ("annual_cost_cloud", "annual_cost_cloud"), ("nodes", "nodes"),
                        ("gpus_purchased", "gpus_purchased")):
        expected = sum(g[figure] for g in llm) + sum(g[figure] for g in groups)
        assert sum(g[figure] for g in groups) > 0
        unpriced = {g["gpu"] for g in [*llm, *groups]
                    if g["annual_cost_cloud"] == 0 and g["gpus_used"] > 0}
        if key == "annual_cost_cloud" and unpriced:
            # a group without a cloud price (0: no price listed): the cloud total is unknown,
            # never the priced groups' sum (tests/test_cloud_unpriced.py)
            assert doc["totals"][key] is None and doc["totals"]["cloud_unpriced"] == sorted(
                unpriced), key
            continue
        assert doc["totals"][key] == pytest.approx(expected), key
    # the hosted API serves the generated tokens only: its way adds the retrieval servers
    llm_api = sum(float(w["options"][[o["id"] for o in w["options"]].index(w["recommended"])]
                        ["values"]["annual_cost_api"]) for w in doc["workloads"])
    assert doc["totals"]["annual_cost_api"] == pytest.approx(
        llm_api + sum(g["annual_cost_onprem"] for g in groups))
    # a retrieval group's capex is the TCO lines' with its counts: GPUs x price + nodes x
    # (node price + the server's network: its 2 x 100 GbE front end, session 23)
    emb = groups[0]
    rec = next(o for o in retrieval["Query embedding"]["options"] if o["id"] == "l40s")
    v = rec["values"]
    assert v["network_per_node_used"] == pytest.approx(2 * 100 * 17578 / 8 / 400)
    assert emb["capex"] == pytest.approx(v["retrieval_gpus"] * 8000 + v["retrieval_nodes"]
                                         * (v["node_base_price"] + v["network_per_node_used"]))


def test_cost_per_million_embedded_tokens_beside_the_hosted_api() -> None:
    """Tokens per year = online peak x average load x seconds per year + the corpus once;
    on-prem price per million = the group's annual cost / those tokens; the compared API is
    prices.yaml's dated offer of the kind (OpenAI text-embedding-3-small 0.02 USD, Voyage
    rerank-2.5 0.05 USD per million tokens, litellm 1.109.1 price map of 2026-11-12)."""
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    doc = json.loads(size(load(MIXED), CAT).to_json())
    acct = doc["account_inputs"]
    assert (acct["average_load"], acct["hours_per_year"]) == (0.6, 8760)
    best = {w["name"]: next(o["values"] for o in w["options"] if o["id"] == w["recommended"])
            for w in doc["retrieval"]}
    emb, rr = best["Query embedding"], best["Rerank"]
    # 50 requests/s x 64 tokens = 3,200 tokens/s at peak; the 2e10-token corpus once
    assert emb["retrieval_million_tokens_per_year"] == pytest.approx(
        (3200 * 0.6 * 3600 * 8760 + 2e10) / 1e6)  # 80,549 M tokens
    assert emb["api_per_million_tokens"] == 0.02
    assert emb["retrieval_annual_cost_api"] == pytest.approx(80549.12 * 0.02)  # USD 1,611
    assert emb["retrieval_cost_per_million_tokens_onprem"] == pytest.approx(
        emb["annual_cost_onprem"] / 80549.12)
    # 50 requests/s x 50 pairs x 320 tokens = 800,000 tokens/s at peak, no corpus
    assert rr["retrieval_million_tokens_per_year"] == pytest.approx(8e5 * 0.6 * 3600 * 8760 / 1e6)
    assert rr["api_per_million_tokens"] == 0.05
    # the verdicts differ: a light query embedder costs more per token on premises than the
    # cheapest hosted API; a heavy reranker costs a tenth of the API's price
    assert emb["retrieval_cost_per_million_tokens_onprem"] > 10 * 0.02
    assert rr["retrieval_cost_per_million_tokens_onprem"] < 0.05 / 5
    ref = CAT.prices.embedding_reference("embed")
    assert ref is not None and (ref.name, ref.date) == ("OpenAI text-embedding-3-small",
                                                        "2026-11-12")


def test_rag_time_to_first_token_adds_the_four_steps() -> None:
    """All three kinds in the account: embed the query (its p95 bound) + the stated 50 ms
    search + rerank (its p95 bound) + the Chat workload's TTFT p95, in the results JSON and
    in the proposal's words; without a reranker there is none."""
    from llmsizer.documents.proposal.plan import plan_context
    from llmsizer.inputs.loader import load, load_from_text
    from llmsizer.sizing.engine import size

    result = size(load(MIXED), CAT)
    doc = json.loads(result.to_json())
    rag = doc["plan"]["rag_first_token"]
    assert (rag["embed_workload"], rag["rerank_workload"], rag["llm_workload"]) == (
        "Query embedding", "Rerank", "Chat")
    best = {w["name"]: next(o["values"] for o in w["options"] if o["id"] == w["recommended"])
            for w in [*doc["workloads"], *doc["retrieval"]]}
    v = rag["values"]
    assert v["rag_embed_latency_s"] == best["Query embedding"]["latency_p95_s"]
    assert v["rag_search_s"] == 0.05  # search_latency_s in the account
    assert v["rag_rerank_latency_s"] == best["Rerank"]["latency_p95_s"]
    assert v["rag_llm_ttft_s"] == pytest.approx(best["Chat"]["ttft_p95_ms"] / 1000)
    assert v["rag_ttft_s"] == pytest.approx(v["rag_embed_latency_s"] + 0.05
                                            + v["rag_rerank_latency_s"] + v["rag_llm_ttft_s"])
    # 0.1 s + 0.05 s + the reranker's 239 ms + the 70B's 897 ms TTFT p95: Chat states
    # concurrent users, a closed loop whose wait is the round's, not a Poisson queue's
    # (904 ms while the prompt's own prefill was counted again in the steps before its
    # first token; 1,187 ms with the Poisson tail; 568 ms before the engine's request-path
    # steps; 949 ms while the round share was 0.02: it refits to 0 once the InferenceX
    # harness's first wave is modelled, docs/calibration.md; docs/queueing.md)
    assert v["rag_ttft_s"] == pytest.approx(1.286, abs=0.005)
    assert plan_context(result, CAT)["plan"].rag == result.plan.rag_first_token
    text = MIXED.read_text(encoding="utf-8").split("  - name: Rerank")[0]
    assert size(load_from_text(text, "no-rerank.yaml"), CAT).plan.rag_first_token is None


def test_retrieval_shares_idle_gpus_of_the_llm_nodes_of_the_same_type() -> None:
    """rag-shared.yaml: Llama 3.1 8B on one 4-GPU H100 server uses 2 GPUs; the query embedder
    (one H100 replica: bge-m3 at 50 requests/s x 64 tokens in 100 ms) goes on one of the 2
    idle GPUs: no node, no GPU, no capex of its own, and the proposal and the CLI say so.
    Sized alone (the dedicated totals) it buys a server of its own."""
    from llmsizer.documents.proposal.plan import plan_context
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    result = size(load(SHARED), CAT)
    (llm,) = result.plan.node_groups
    assert (llm.gpu, llm.gpus_purchased, llm.gpus_used) == ("h100-sxm", 4, 2)
    (rg,) = result.plan.retrieval_groups
    assert (rg.shares_with, rg.gpu, rg.platform) == (llm.id, "h100-sxm", llm.platform)
    assert (rg.replicas, rg.nodes, rg.gpus_purchased, rg.gpus_used) == (1, 0, 0, 1)
    assert rg.capex == 0
    best = result.retrieval[0].best
    assert best is not None and best.values["shares_llm_nodes"] == 1
    assert best.values["llm_free_gpus"] == 2
    t = result.totals
    assert (t.gpus_purchased, t.gpus_used, t.nodes) == (4, 3, 1)
    assert t.capex == llm.capex
    # alone (dedicated): the LLM's 4-GPU server plus a 4-GPU server for the embedder (review
    # round 21: every platform that hosts the H100 SXM is tried, and its one replica costs
    # less on a 4-GPU Dell PowerEdge XE8640 than on the 8-GPU default, which bought 12 GPUs)
    assert (result.totals_dedicated.nodes, result.totals_dedicated.gpus_purchased) == (2, 8)
    words = plan_context(result, CAT)["plan"].retrieval[0]
    assert words.group.shares_with == llm.id
    out = subprocess.run([sys.executable, "-m", "llmsizer.cli", "size", str(SHARED)],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    host = short_name(CAT.platforms[llm.platform].name)
    said = " ".join(out.stdout.split())
    # the PDF's words (y-cli review: "Plan: 0 × ... (0 GPUs bought, 1 used)" read as a bug)
    assert (f"Retrieval serving: use 1 idle GPU of the language-model servers ({host}) "
            f"for {rg.workload}") in said
    assert "no GPUs or servers bought for it" in said
    assert llm.id not in said  # the node group by its platform, never its id


def test_a_scenario_that_outgrows_the_idle_gpus_buys_nodes_for_retrieval() -> None:
    """rag-shared-busy.yaml: the embedder's 2 replicas use the chat node's 2 idle H100s (4
    GPUs, 1 node in all). At 50 % more queries it needs 3: they no longer fit, so that row
    buys a node of the same 4-GPU server for it (8 GPUs, 2 nodes); 50 % fewer need 1 and
    stay on the idle GPUs. The row kept the 2 replicas on idle GPUs before."""
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    r = size(load(SHARED_BUSY), CAT)
    (g,) = r.plan.retrieval_groups
    assert (g.replicas, g.nodes, g.shares_with) == (2, 0, r.plan.node_groups[0].id)
    assert (r.totals.gpus_purchased, r.totals.nodes) == (4, 1)
    rows = {s.name: s for s in r.sensitivity}
    assert (rows["rate_+50%"].gpus_purchased, rows["rate_+50%"].nodes) == (8, 2)
    assert (rows["rate_-50%"].gpus_purchased, rows["rate_-50%"].nodes) == (4, 1)
    assert rows["rate_+50%"].capex > r.totals.capex


@pytest.mark.parametrize("account", [SHARED_BUSY, WIDE_WORLD], ids=["shared", "own-nodes"])
def test_no_scenario_row_counts_a_shared_gpu_twice(account: Path) -> None:
    """In every what-if row a retrieval server on a language-model node group's idle GPUs
    gets only the GPUs that group leaves idle in that row's plan (bought, not used), as the
    proposal does; more replicas than that buy nodes of their own. rag-shared-busy.yaml:
    with twice the chat users the chat model uses all 4 GPUs of its node, so the embedder's
    2 replicas need a node of their own (8 GPUs, 2 nodes); the row kept them on the busy
    GPUs (4 GPUs, 1 node: 2 GPUs serving two things), as did users x1.5, prompt +50 % and
    output -50 % (3 of 4 GPUs in use). Half the users leave 3 idle: they stay there."""
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size
    from llmsizer.sizing.retrieval import scenario_idle, scenario_retrieval
    from llmsizer.sizing.sensitivity import result_scenario_plans

    r = size(load(account), CAT)
    rows = {s.name: s for s in r.sensitivity}
    moved = set()
    for sc, _envs, e in result_scenario_plans(r):
        idle = scenario_idle(r.plan.node_groups, e)
        parts = [g for g, _ in scenario_retrieval(sc, r.retrieval, idle, r.account_inputs,
                                                  r.tables)]
        for ng in r.plan.node_groups:  # the replicas on a group's GPUs fit its idle ones
            assert sum(g.replicas for g in parts if g.shares_with == ng.id) <= idle[ng.id][0]
        for g, proposed in zip(parts, r.plan.retrieval_groups, strict=True):
            if proposed.shares_with is not None and g.shares_with is None:
                assert g.nodes > 0 and g.gpus_purchased >= g.replicas, sc.name
                moved.add(sc.name)
        s = rows[sc.name]
        assert s.gpus_purchased == e.totals["gpus_purchased"] + sum(g.gpus_purchased
                                                                   for g in parts)
        # nor rents one twice: a server whose replicas the group's rented instances carry
        # (GPUs rented beyond those in use, less earlier sharers') rents nothing of its own
        carried = {k: v[1] for k, v in idle.items()}
        for g in parts:
            if g.shares_with is not None:
                if g.replicas <= carried[g.shares_with]:
                    assert (g.cloud_gpus, g.annual_cost_cloud) == (0, 0.0), sc.name
                carried[g.shares_with] = max(0.0, carried[g.shares_with] - g.replicas)
    if account == SHARED_BUSY:
        assert moved == {"users_x1.5", "users_x2", "rate_+50%", "prompt_+50%", "output_-50%",
                         "headroom_0.5"}
        assert (rows["users_x2"].gpus_purchased, rows["users_x2"].nodes) == (8, 2)
        assert rows["users_x2"].capex == pytest.approx(2 * r.totals.capex)
        assert (rows["users_x0.5"].gpus_purchased, rows["users_x0.5"].nodes) == (4, 1)
    else:  # nothing shares: no row moves a group onto nodes of its own
        assert not moved and all(g.shares_with is None for g in r.plan.retrieval_groups)


def test_retrieval_keeps_its_own_nodes_without_idle_gpus_of_its_type() -> None:
    """rag-mixed.yaml: the 70B fills its 4 H100s; the embedder and the reranker keep nodes of
    their own (no idle GPU to share)."""
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    result = size(load(MIXED), CAT)
    assert all(g.gpus_used == g.gpus_purchased for g in result.plan.node_groups)
    assert all(rg.shares_with is None and rg.nodes > 0 for rg in result.plan.retrieval_groups)


def test_size_shows_retrieval_tables_readable_at_100_columns() -> None:
    env = {**os.environ, "COLUMNS": "100"}
    out = subprocess.run([sys.executable, "-m", "llmsizer.cli", "size", str(MIXED)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)
    assert any("Query embedding — BGE-M3 (embed)" in ln for ln in lines)
    assert any("Rerank — BGE reranker v2 M3 (rerank)" in ln for ln in lines)
    starred = [ln.split() for ln in lines if ln.lstrip().startswith("★")]
    # small PCIe cards win where they are cheaper: the query embedder on L4s; the reranker
    # (50 pairs x 320 tokens = 16,000 tokens per request in 300 ms) on RTX PRO 6000 PCIe
    # cards with the fitted constants (MFU 0.33); named as the proposal names them. Review
    # round 21: every platform that hosts the GPU is tried, and the 8 L4 replicas are
    # cheaper in one 8-GPU Dell PowerEdge XE7745 (42.6 k a year) than in two
    # generic 4-GPU servers (59.8 k), so the L4 line names its platform
    # session 23: 4 L40S in a generic 4-GPU server are cheaper than the XE7745's 8 L4 (a
    # PCIe server pays its front-end network only), the server on a line of its own
    assert [r[1:3] for r in starred][-2] == ["L40S", "4,864"]
    assert [r[1] for r in starred][-1] == "RTX"
    assert starred[-1][:5] == ["★", "RTX", "PRO", "6000", "Blackwell"]
    # GPUs are named in words; the one id printed is the requirement key that gives the
    # reranker's GPU a cloud price (the CLI speaks to whoever writes the YAML)
    key = "costs.cloud_gpu_hour.rtx-pro-6000"
    assert key in " ".join(out.stdout.split())
    assert "rtx-pro-6000" not in out.stdout.replace(key, "") and " l4 " not in out.stdout
    assert "on its own servers, not shared with the language models" in " ".join(
        out.stdout.split())
    # the engine each plan line is sized for, in words (the default: the serving stack)
    assert "served by a serving stack (Text Embeddings Inference, Infinity, NIM)" in " ".join(
        out.stdout.split())


@pytest.mark.parametrize("account", [MIXED, SHARED, WIDE_WORLD, SHARED_BUSY, SHARED_CLOUD,
                                     SHARED_SINGLE_GPU_CLOUD],
                         ids=["own-nodes", "shared", "resized-in-scenarios", "outgrows-idle",
                              "shared-and-own-cloud", "shared-single-gpu-cloud"])
def test_workbook_retrieval_sheet_recalculates_like_the_engine(tmp_path: Path,
                                                              account: Path) -> None:
    """LibreOffice, forced to recalculate, reproduces every Retrieval formula and the Plan
    sheet's account totals, which now include the retrieval node groups (on nodes of their
    own, or on the language-model nodes' idle GPUs), and the Scenarios sheet's rows, which
    include them too, resized by the rate and headroom rows (the results' sensitivity)."""
    import openpyxl
    from support.libreoffice import read_values, recalculated_values

    from llmsizer.documents.workbook import write_workbook
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    result = size(load(account), CAT)
    book = tmp_path / "rag.xlsx"
    write_workbook(result, book)
    assert "Retrieval" in openpyxl.load_workbook(book).sheetnames
    cached = read_values(book)
    lo = recalculated_values(book, tmp_path / "lo")
    formulas = openpyxl.load_workbook(book)
    checked = 0
    for sheet in ("Retrieval", "Plan", "Summary", "Scenarios"):
        for row in formulas[sheet].iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    want, got = cached[sheet][cell.coordinate], lo[sheet].get(cell.coordinate)
                    if isinstance(want, str | bool):
                        assert got == want, (sheet, cell.coordinate, cell.value)
                    else:
                        assert got == pytest.approx(want, rel=1e-9), (sheet, cell.coordinate,
                                                                      cell.value)
                    checked += 1
    assert checked > 60
    # each Scenarios row, recalculated, is the results' sensitivity row (the table's header
    # is row 4, "As proposed" row 5, the scenarios after it in order)
    scen = lo["Scenarios"]
    heads4 = {v: k[:-1] for k, v in scen.items() if re.fullmatch(r"[A-Z]4", k)}
    for i, sc in enumerate(result.sensitivity, start=6):
        for field, head in (("gpus_purchased", "GPUs bought"), ("nodes", "Nodes"),
                            ("capex", "Capital cost"),
                            ("annual_cost_onprem", "On-prem cost per year")):
            got = scen[f"{heads4[head]}{i}"]
            assert isinstance(got, int | float)
            assert got == pytest.approx(float(getattr(sc, field)), rel=1e-9), (sc.name, field)
        got = scen[f"{heads4['Cloud cost per year']}{i}"]  # 0 = no cloud price
        assert got == pytest.approx(sc.annual_cost_cloud or 0.0, rel=1e-9), sc.name
    # the Plan sheet's "This plan" capex is the results' total (LLM groups + retrieval groups)
    plan = cached["Plan"]
    assert result.totals.capex in [v for v in plan.values() if isinstance(v, float | int)]
    # the Summary: a column per embed or rerank workload (its retrieval group) beside the
    # workloads' plan shares; after LibreOffice's recalculation each row adds up to the total
    # column, and the retrieval columns are the engine's groups
    summary = lo["Summary"]
    # a rented plan's buying rows say "if bought" (review round 19): the same rows
    labels = {str(v).replace("GPUs if bought", "GPUs bought").replace(" if bought", ""): int(k[1:])
              for k, v in summary.items() if re.fullmatch(r"A\d+", k)}
    heads = {str(v): k.rstrip("0123456789") for k, v in summary.items()
             if re.fullmatch(r"[A-Z]+5", k) and v}
    names = [w.name for w in result.workloads] + [g.workload for g in result.plan.retrieval_groups]
    assert [heads[n] for n in names] == [chr(ord("C") + i) for i in range(len(names))]
    total = heads["Total (account plan)"]
    for label, field in (("Nodes (its share of the plan)", "nodes"),
                         ("GPUs bought (its share)", "gpus_purchased"),
                         ("GPUs serving or on standby (its share)", "gpus_used"),
                         ("Capital cost (its share)", "capex"),
                         ("On-prem cost per year (its share)", "annual_cost_onprem"),
                         ("Cloud cost per year (its share, rented at the cloud tier)",
                          "annual_cost_cloud")):
        row = labels[label]
        got = [float(summary[f"{heads[n]}{row}"]) for n in names]  # type: ignore[arg-type]
        if getattr(result.totals, field) is None:  # a GPU without a cloud price: total 0
            assert result.totals.cloud_unpriced and float(summary[f"{total}{row}"]) == 0, label
        else:
            assert sum(got) == pytest.approx(float(summary[f"{total}{row}"]), rel=1e-9), label
            assert sum(got) == pytest.approx(float(getattr(result.totals, field)), rel=1e-9), (
                label)
        for g in result.plan.retrieval_groups:
            assert got[names.index(g.workload)] == pytest.approx(float(getattr(g, field))), (
                label, g.workload)


def test_edited_cloud_prices_reach_the_retrieval_servers_and_their_what_ifs(
        tmp_path: Path) -> None:
    """Wide World Importers (inputs/rag-knowledge-base.yaml): its reranker's RTX PRO 6000 has
    no cloud price (the account's cloud: no price listed) and its embedder's L4 one derived
    for the one-year tier. Finance types both on Inputs (USD 1.80 and 0.50 per GPU-hour);
    after LibreOffice recalculates, the Retrieval sheet's cloud prices and costs and every
    Scenarios row's cloud cost (the cloud-tier rows included) are the engine's on the
    requirements with those prices. The Retrieval sheet's prices were typed numbers: its
    cloud costs stayed at the written prices and the account stayed unpriced."""
    import yaml
    from support.libreoffice import read_values, recalculate

    from llmsizer.documents.workbook import write_workbook
    from llmsizer.documents.workbook.retrieval_sheet import retrieval_cell
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    prices = {"rtx-pro-6000": 1.8, "l40s": 0.9}
    base = size(load(WIDE_WORLD), CAT)
    # the embedder on L40S since session 23 (a PCIe server's network is its front end)
    assert [g.gpu for g in base.plan.retrieval_groups] == ["l40s", "rtx-pro-6000"]
    assert base.totals.annual_cost_cloud is None  # the reranker's GPU: no cloud price
    book = tmp_path / "base.xlsx"
    write_workbook(base, book)
    edited = edit_named(book, tmp_path / "edited.xlsx",
                        {cloud_price_name(gpu): price for gpu, price in prices.items()})
    data = yaml.safe_load(WIDE_WORLD.read_text("utf-8"))
    data.setdefault("costs", {}).setdefault("cloud_gpu_hour", {}).update(prices)
    path = tmp_path / "edited.yaml"
    path.write_text(yaml.safe_dump(data), "utf-8")
    fresh = size(load(path), CAT)
    assert [(g.gpu, g.replicas, g.nodes) for g in fresh.plan.retrieval_groups] == [
        (g.gpu, g.replicas, g.nodes) for g in base.plan.retrieval_groups]
    assert fresh.totals.annual_cost_cloud is not None

    lo = read_values(recalculate([edited], tmp_path / "out", timeout=300)[edited])
    for j, g in enumerate(fresh.plan.retrieval_groups):
        cell = retrieval_cell(j, "cloud_gpu_hour").split("!")[1]
        assert lo["Retrieval"][cell] == pytest.approx(prices[g.gpu]), g.gpu
        cell = retrieval_cell(j, "annual_cost_cloud").split("!")[1]
        assert lo["Retrieval"][cell] == pytest.approx(g.annual_cost_cloud, rel=1e-9), g.gpu
    scen = lo["Scenarios"]
    cloud = next(k[:-1] for k, v in scen.items()
                 if re.fullmatch(r"[A-Z]4", k) and v == "Cloud cost per year")
    for i, sc in enumerate(fresh.sensitivity, start=6):  # row 5 is the proposal
        assert sc.annual_cost_cloud is not None, sc.name
        assert scen[f"{cloud}{i}"] == pytest.approx(sc.annual_cost_cloud, rel=1e-9), sc.name


def test_proposal_plan_lists_the_retrieval_groups_in_customer_words() -> None:
    from llmsizer.documents.proposal.plan import plan_context
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    result = size(load(MIXED), CAT)
    views = plan_context(result, CAT)["plan"].retrieval
    assert [(v.group.workload, v.kind_text, v.gpu_name) for v in views] == [
        ("Query embedding", "embedding", "NVIDIA L40S"), ("Rerank", "reranking",
                                             "NVIDIA RTX PRO 6000 Blackwell Server Edition")]
    # the online p95 bound within each target (100 ms, 300 ms)
    assert views[0].latency_ms <= 100 + 1e-9 and views[1].latency_ms <= 300
    # the cost per million tokens beside the compared hosted API, as the PDF prints it
    assert (views[0].api_name, views[0].api_date, views[0].api_per_million) == (
        "OpenAI text-embedding-3-small", "2026-11-12", 0.02)
    assert views[1].api_name == "Voyage rerank-2.5"
    assert views[0].annual_cost_api == pytest.approx(views[0].million_tokens_per_year * 0.02)
    # the engine each is sized for, in words; the serving stack has too few rows of its own
    assert views[0].engine_name.startswith("serving stack (Text Embeddings Inference")
    assert views[0].engine_fallback


def test_workbook_retrieval_sheet_names_each_engine_as_the_pdf_does(tmp_path: Path) -> None:
    """The Retrieval sheet's "Serving engine" row holds each workload's encoder engine in
    the PDF's words (a text cell, never a formula), and its note the catalog's source for the
    engine's fitted figures; a workload served with hand-fused kernels says so beside one on
    the serving stack."""
    import openpyxl

    from llmsizer.documents.proposal.plan import plan_context
    from llmsizer.documents.workbook import write_workbook
    from llmsizer.sizing.engine import size

    text = MIXED.read_text().replace("    tokens_per_pair: 320\n",
                                     "    tokens_per_pair: 320\n    engine: fused-tensorrt\n")
    result = size(load_from_text(text, "rag-mixed.yaml"), CAT)
    views = plan_context(result, CAT)["plan"].retrieval
    words = [v.engine_name for v in views]
    assert words == [CAT.encoder_engines["serving-stack"].name,
                     CAT.encoder_engines["fused-tensorrt"].name]
    book = tmp_path / "rag.xlsx"
    write_workbook(result, book)
    ws = openpyxl.load_workbook(book)["Retrieval"]
    (row,) = [r for r in ws.iter_rows() if r[1].value == "Serving engine"]
    cells = row[3:3 + len(views)]
    assert [c.value for c in cells] == words
    assert all(c.data_type == "s" for c in cells)  # text, not a formula
    heads = [r[1].value for r in ws.iter_rows(max_row=row[0].row)]
    assert "Encoder compute efficiency" not in heads  # named above the fitted figures
    note = str(row[3 + len(views)].value)  # the note column follows the workloads
    for key in ("serving-stack", "fused-tensorrt"):
        engine = CAT.encoder_engines[key]
        assert f"{engine.name}: {engine.source[:60]}" in note
    assert "serving-stack" not in note and "fused-tensorrt" not in note  # no ids
    # the GPU above it by name too (the PDF's words), never the catalog id
    (gpu_row,) = [r for r in ws.iter_rows() if r[1].value == "GPU (one replica each)"]
    assert [c.value for c in gpu_row[3:3 + len(views)]] == [v.gpu_name for v in views]


@pytest.mark.parametrize("account", [MIXED.parents[2] / "inputs" / "rag-knowledge-base.yaml",
                                     SHARED],
                         ids=["own-nodes", "shared"])
def test_pdf_cost_columns_include_retrieval_and_add_up_to_the_plan(tmp_path: Path,
                                                                   account: Path) -> None:
    """The costs table has a column per embed or rerank workload beside the language-model
    workloads' plan shares: its own servers (the retrieval group's figures), or on a
    language-model node group's idle GPUs what it adds (nothing bought). The columns add up to
    the account's totals, and the PDF prints each column's figures."""
    import re

    from llmsizer.documents.proposal.context import build_context
    from llmsizer.documents.proposal.format import Formatter
    from llmsizer.inputs.loader import load
    from llmsizer.runs.report import write_outputs
    from llmsizer.sizing.engine import size

    result = size(load(account), CAT)
    ctx = build_context(result, CAT)
    cols = ctx["cost_columns"]
    assert [c.name for c in cols] == [w.name for w in result.workloads] + [
        g.workload for g in result.plan.retrieval_groups]
    for key in ("capex", "annual_cost_onprem", "annual_cost_cloud"):
        if getattr(result.totals, key) is None:  # a column without a cloud price
            assert any(float(c.costs["cloud_gpu_hour"]) == 0 for c in cols), key
            continue
        total = float(getattr(result.totals, key))
        assert abs(sum(float(c.costs[key]) for c in cols) - total) < 0.01 * max(total, 1), key
    for g in result.plan.retrieval_groups:
        col = next(c for c in cols if c.name == g.workload)
        assert (col.costs["capex"], col.costs["annual_cost_onprem"], col.costs["nodes"]) == (
            g.capex, g.annual_cost_onprem, g.nodes)
        assert (col.shares_with is not None) == (g.shares_with is not None)
        if g.shares_with:
            assert g.capex == 0 and g.gpus_purchased == 0  # its GPUs are the pool's, bought
    (pdf,) = write_outputs(result, tmp_path, formats=("pdf",))
    text = re.sub(r"\s+", " ", subprocess.run(["pdftotext", str(pdf), "-"], check=True,
                                              capture_output=True, text=True).stdout)
    costs = text.split("TCO and cost per million tokens", 1)[1].split("Owning, renting", 1)[0]
    fmt = Formatter(result.account.currency)
    for col in cols:
        assert col.name in costs
        assert fmt.money(float(col.costs["capex"])).replace("\u00a0", " ") in \
            costs.replace("\u00a0", " ")
    if any(c.shares_with for c in cols):
        # session 22: "on GPUs they bought and leave idle, or on GPUs it buys for their empty
        # slots" (it read "idle GPUs already bought for a language-model pool")
        assert "runs on the servers of a language-model pool" in costs
        assert "on GPUs they bought and leave idle" in costs


def test_a_rerank_reason_groups_its_milliseconds() -> None:
    """The sizing's reason for a reranker over its target printed "p95 latency 2014 ms" (the
    terminal and the advice); every other figure we print groups its thousands. The H100's
    2,014 ms for 20 passages of 512 tokens (tests/data/rag-reranker-unmet.yaml) is the
    calculation list's latency_p95_s."""
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    path = Path(__file__).parent / "data" / "rag-reranker-unmet.yaml"
    (rerank,) = [w for w in size(load(path)).retrieval if w.kind == "rerank"]
    h100 = next(o for o in rerank.options if o.gpu == "h100-sxm")
    ms = float(h100.values["latency_p95_s"]) * 1000
    assert ms > 1000
    assert f"p95 latency {ms:,.0f} ms over the 250 ms target" in h100.reason
    assert rerank.advice is not None and f"{ms:,.0f} ms" in rerank.advice
