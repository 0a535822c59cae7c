"""Embedding and reranking servers (issue 24; the source article "How fast does it serve?",
"Embedding servers are not small LLM servers"): one forward pass per request, no generation
loop and no KV cache, so throughput is compute- and batching-bound and the host's tokeniser
can be the ceiling.

One replica is one GPU (every catalog embedder fits one): it runs batches the batching window
collects, of at most the engine's max batch tokens, the memory left for activations and the
batch whose forward time still meets the p95 latency. A request waits the window, at most one
batch ahead of it (the queue) and its own batch: latency = window + 2 x forward(batch). This
is a bound, not an average, so it holds at the p95 for any arrival pattern while the replica
keeps up with its share of the load (the replicas are sized with headroom for that).
The offline corpus runs at the full batch, as it has no latency target.

N+1 on another group's nodes (session 24). A workload in the idle GPUs or empty slots of
another group's nodes (shares_llm_nodes) keeps its own spare: the host's N+1 restarts the
host's replicas, not its guest's (Maple Ridge: the embedder's one L40S in a chat server's
empty slot; that server down, the chat still ran 3 replicas, the embedder none). Its
replicas and spare GPUs spread evenly over the host's nodes; one node down takes at most
replicas / (nodes - 1), rounded up, of its replicas, so that many spare GPUs on the other
nodes restart them (shared_spare_gpus), and each node's idle GPUs and empty slots must hold
its share (shared_room_per_node, the host's room spread evenly as its replicas are). A host
of one node cannot hold its spare: the workload then buys nodes of its own with their N+1
spare, as does one whose share does not fit. A host's empty standby node is not counted as
the guest's spare: the rows do not show that its free GPUs hold both the lost node's host
replicas and the guest's. Without N+1 nothing changes.

Kept apart from ``CALCULATIONS``: these rows have inputs of their own (``RETRIEVAL_INPUTS``)
and are evaluated per retrieval option by :func:`retrieval_program`.
"""

from __future__ import annotations

from functools import cache

from ..expr import (
    AND,
    IF,
    MAX,
    MIN,
    OR,
    ROUNDDOWN,
    ROUNDUP,
    Program,
    Text,
    compile_program,
    ge,
    gt,
    le,
    lift,
    lt,
)
from .core import Calculation, Input, _c, r

RETRIEVAL_INPUTS: tuple[Input, ...] = (
    Input("params", "Parameters", "parameters", "workload", "Model parameters (catalog)."),
    Input("layers", "Layers", "layers", "workload", "Transformer layers (config.json)."),
    Input("hidden", "Hidden size", "units", "workload", "Hidden size (config.json)."),
    Input("seq_tokens", "Tokens per sequence", "tokens", "workload",
          "Embed: tokens per request; rerank: tokens of one query + passage pair."),
    Input("sequences_per_request", "Sequences per request", "sequences", "workload",
          "Embed: 1; rerank: candidates scored per request."),
    Input("request_rate_per_s", "Peak requests per second", "requests/s", "workload",
          "Online load at peak (0 = corpus only)."),
    Input("target_latency_p95_s", "p95 latency target", "s", "workload",
          "Online requests (0 = corpus only)."),
    Input("corpus_tokens", "Corpus tokens", "tokens", "workload", "Offline corpus (0 = none)."),
    Input("reindex_hours", "Re-index window", "h", "workload", "Corpus re-embedded within."),
    Input("weight_bytes", "Bytes per weight", "bytes", "option", "2 = FP16/BF16 weights."),
    Input("gpu_tflops", "GPU dense TFLOPS", "TFLOPS", "option", "Dense 16-bit peak."),
    Input("gpu_memory_gb", "GPU memory", "GB", "option", "As marketed."),
    Input("gpus_per_node", "GPUs per node", "GPUs", "option", "The platform's."),
    Input("platform_sold_full", "Bought with all GPUs", "1 = yes", "option",
          "The platform's: 1 for a fixed baseboard (HGX/DGX/OAM), bought with every GPU slot "
          "filled; 0 for a PCIe server, bought with the GPUs it runs (as the language-model "
          "servers are)."),
    Input("llm_free_gpus", "Idle GPUs of the nodes it may share", "GPUs", "option",
          "GPUs of this type that a language-model node group, or an earlier embedding or "
          "reranking workload's own nodes, bought and leave idle (0 = none): the replicas go "
          "there when they all fit."),
    Input("llm_idle_cloud_gpus", "Idle rented cloud GPUs of the nodes it may share", "GPUs",
          "option",
          "GPUs the same group's whole cloud instances rent beyond its GPUs in use (GPUs rented "
          "- GPUs in use; 0 where the cloud sells single GPUs): in the cloud the replicas that "
          "share its nodes run there, already paid for."),
    Input("llm_free_slots", "Empty GPU slots of the nodes it may share", "GPUs", "option",
          "GPU slots of the same nodes left empty (a PCIe server bought with fewer GPUs than "
          "it holds: slots - GPUs bought; 0 for a fixed baseboard, and when renting): a "
          "replica there buys its GPU, not a server."),
    Input("llm_host_nodes", "Nodes of the group it may share", "nodes", "option",
          "The nodes of the same group (0 = none): with N+1 its spare must sit on a node other "
          "than the one that carries most of its replicas."),
    Input("headroom", "Headroom", "fraction", "account", "Spare capacity above peak."),
    Input("survive_node_loss", "N+1", "flag", "account", "1 = one spare node."),
    Input("gpu_memory_utilization", "Memory utilisation", "fraction", "account",
          "Share of GPU memory the engine may use."),
    Input("mfu_encode", "Encoder compute efficiency", "fraction", "account",
          "Catalog: fitted for the workload's serving engine."),
    Input("encode_batch_overhead_ms", "Fixed time per batch", "ms", "account",
          "Catalog: fitted for the workload's serving engine."),
    Input("encode_batch_window_ms", "Batching window", "ms", "account", "Catalog."),
    Input("encode_max_batch_tokens", "Max batch tokens", "tokens", "account", "Catalog."),
    Input("encode_activation_bytes_per_hidden", "Activation bytes", "bytes", "account",
          "Per token per hidden unit (catalog)."),
    Input("tokenize_tokens_per_s_per_core", "Tokeniser speed", "tokens/s", "account",
          "Per CPU core (catalog)."),
    Input("host_cores_per_gpu", "Host cores per GPU", "cores", "account", "Catalog."),
)

_compute_per_ms = r("gpu_tflops") * 1e9 * r("mfu_encode")  # FLOP per ms
_forward_ms = r("encode_batch_overhead_ms") + r("batch_tokens") * r("flops_per_token") / _compute_per_ms
_budget_ms = (r("target_latency_p95_s") * 1000 - r("encode_batch_window_ms")) / 2

RETRIEVAL_CALCULATIONS: tuple[Calculation, ...] = (
    _c("flops_per_token", "Forward FLOPs per token", "FLOP", "Retrieval",
       2 * r("params") + 4 * r("layers") * r("hidden") * r("seq_tokens"),
       "2 x parameters (the matrix multiplies) + 4 x layers x hidden x sequence (scores and "
       "weighted sum over the whole sequence: every token attends to every other)."),
    _c("encoder_weights_gb", "Weights", "GB", "Retrieval",
       r("params") * r("weight_bytes") / 1e9,
       "Parameters x bytes per weight; no KV cache."),
    _c("encoder_fits", "Fits one GPU", "flag", "Retrieval",
       IF(lt(r("encoder_weights_gb"), r("gpu_memory_gb") * r("gpu_memory_utilization")), 1, 0),
       "1 when the weights fit the engine's share of one GPU's memory."),
    _c("activation_batch_tokens", "Batch tokens the memory holds", "tokens", "Retrieval",
       MAX(0, (r("gpu_memory_gb") * r("gpu_memory_utilization") - r("encoder_weights_gb")) * 1e9
           / (r("encode_activation_bytes_per_hidden") * r("hidden"))),
       "Memory left after the weights / activation bytes per token."),
    _c("full_batch_tokens", "Largest batch", "tokens", "Retrieval",
       MAX(r("seq_tokens"), MIN(r("encode_max_batch_tokens"), r("activation_batch_tokens"))),
       "The engine's max batch tokens or the activation memory, whichever is less (at least "
       "one sequence)."),
    _c("latency_batch_tokens", "Largest batch within the latency", "tokens", "Retrieval",
       IF(gt(r("request_rate_per_s"), 0),
          MAX(0, (_budget_ms - r("encode_batch_overhead_ms")) * _compute_per_ms
              / r("flops_per_token")),
          r("full_batch_tokens")),
       "The batch whose forward time is half of (p95 target - window): a request waits one "
       "batch ahead of it and its own."),
    _c("batch_tokens", "Batch served online", "tokens", "Retrieval",
       MAX(r("seq_tokens") * r("sequences_per_request"),
           MIN(r("full_batch_tokens"), r("latency_batch_tokens"))),
       "The largest batch within the latency and the largest batch, at least one request."),
    _c("forward_ms", "Forward time of the batch", "ms", "Retrieval", _forward_ms,
       "Fixed time per batch + batch tokens x FLOPs per token / (peak x MFU)."),
    _c("latency_p95_s", "p95 latency", "s", "Retrieval",
       (r("encode_batch_window_ms") + 2 * r("forward_ms")) / 1000,
       "Batching window + one batch ahead (the queue) + its own batch."),
    _c("latency_met", "Meets the p95 latency", "flag", "Retrieval",
       IF(gt(r("request_rate_per_s"), 0),
          IF(ge(r("target_latency_p95_s"), r("latency_p95_s")), 1, 0), 1),
       "1 when the latency bound is within the target (always 1 for a corpus alone)."),
    _c("gpu_tokens_per_s", "GPU tokens per second, online", "tokens/s", "Retrieval",
       r("batch_tokens") * 1000 / r("forward_ms"),
       "Batch tokens / forward time: a small batch pays the fixed time per batch."),
    _c("gpu_tokens_per_s_full", "GPU tokens per second, full batch", "tokens/s", "Retrieval",
       r("full_batch_tokens") * 1000 / (r("encode_batch_overhead_ms") + r("full_batch_tokens")
                                        * r("flops_per_token") / _compute_per_ms),
       "The same at the largest batch: the offline corpus rate."),
    _c("tokenize_tokens_per_s", "Tokeniser ceiling per GPU", "tokens/s", "Retrieval",
       r("tokenize_tokens_per_s_per_core") * r("host_cores_per_gpu"),
       "Tokens per second per core x host cores per GPU: the CPU ceiling."),
    _c("replica_tokens_per_s", "Tokens per second per replica, online", "tokens/s", "Retrieval",
       MIN(r("gpu_tokens_per_s"), r("tokenize_tokens_per_s")),
       "The GPU rate or the tokeniser ceiling, whichever is lower."),
    _c("replica_tokens_per_s_corpus", "Tokens per second per replica, corpus", "tokens/s",
       "Retrieval", MIN(r("gpu_tokens_per_s_full"), r("tokenize_tokens_per_s")),
       "The full-batch GPU rate or the tokeniser ceiling, whichever is lower."),
    _c("limited_by", "What limits a replica", "text", "Retrieval",
       IF(lt(r("tokenize_tokens_per_s"), r("gpu_tokens_per_s")), Text("tokenisation CPU"),
          IF(lt(r("batch_tokens"), r("full_batch_tokens")), Text("latency (batch size)"),
             Text("GPU compute"))),
       "Tokenisation when the CPU ceiling is below the GPU rate; else the latency when it keeps "
       "batches below the largest; else the GPU."),
    _c("online_tokens_per_s", "Online demand", "tokens/s", "Retrieval",
       r("request_rate_per_s") * r("sequences_per_request") * r("seq_tokens"),
       "Requests/s x sequences per request x tokens per sequence."),
    _c("corpus_tokens_per_s", "Corpus demand", "tokens/s", "Retrieval",
       IF(gt(r("reindex_hours"), 0), r("corpus_tokens") / (r("reindex_hours") * 3600), 0),
       "Corpus tokens / re-index window."),
    _c("retrieval_replicas", "Replicas (GPUs)", "GPUs", "Retrieval",
       ROUNDUP(r("online_tokens_per_s") * (1 + r("headroom")) / r("replica_tokens_per_s"), 0)
       + ROUNDUP(r("corpus_tokens_per_s") / r("replica_tokens_per_s_corpus"), 0),
       "Online demand x (1 + headroom) / the online rate, plus the corpus demand / the corpus "
       "rate (re-indexing is its own pool: it must not take the online replicas' headroom)."),
    _c("shared_spare_gpus", "Spare GPUs it keeps on the shared nodes", "GPUs", "Retrieval",
       IF(AND(gt(r("survive_node_loss"), 0), gt(r("llm_host_nodes"), 1)),
          ROUNDUP(r("retrieval_replicas") / (r("llm_host_nodes") - 1), 0), 0),
       "With N+1, on the shared nodes: replicas / (their nodes - 1), rounded up. Its replicas "
       "and these spares spread evenly over the nodes, so one node down takes at most this "
       "many of its replicas and the spares on the other nodes restart them (session 24: the "
       "shared nodes' own N+1 covers their replicas, not the guest's). 0 without N+1."),
    _c("shared_gpus_needed", "GPUs it needs on the shared nodes", "GPUs", "Retrieval",
       r("retrieval_replicas") + r("shared_spare_gpus"),
       "Its replicas + the spare GPUs it keeps there."),
    _c("shared_room_per_node", "Idle GPUs and empty slots per shared node", "GPUs",
       "Retrieval",
       IF(gt(r("llm_host_nodes"), 0),
          ROUNDDOWN((r("llm_free_gpus") + r("llm_free_slots")) / r("llm_host_nodes"), 0), 0),
       "The shared nodes' idle GPUs and empty slots / their nodes, rounded down: the fewest "
       "one node has when they spread evenly over the nodes (as the nodes' replicas do)."),
    _c("shares_llm_nodes", "Shares another group's nodes", "flag", "Retrieval",
       IF(gt(r("llm_free_gpus") + r("llm_free_slots"), 0),
          IF(gt(r("survive_node_loss"), 0),
             IF(AND(gt(r("llm_host_nodes"), 1),
                    ge(r("shared_room_per_node"),
                       ROUNDUP(r("shared_gpus_needed") / MAX(1, r("llm_host_nodes")), 0))),
                1, 0),
             IF(ge(r("llm_free_gpus") + r("llm_free_slots"), r("retrieval_replicas")), 1, 0)),
          0),
       "1 when every replica fits a GPU the shared nodes (a language-model node group's, or "
       "an earlier embedding or reranking workload's own) bought and leave idle, or one of "
       "their empty GPU slots (same GPU type; one replica needs one whole GPU, so memory and "
       "compute allow): no nodes of its own. With N+1 its replicas and spare GPUs, spread "
       "evenly over two nodes or more, must fit each node's idle GPUs and empty slots "
       "(GPUs it needs / nodes, rounded up, at most the room per node); else nodes of its "
       "own with their N+1 spare."),
    _c("retrieval_replicas_per_node", "Replicas on its fullest node", "replicas", "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), 0,
          ROUNDUP(r("retrieval_replicas")
                  / MAX(1, ROUNDUP(r("retrieval_replicas") / r("gpus_per_node"), 0)), 0)),
       "Replicas / the nodes they need (replicas / GPUs per node, rounded up), rounded up: "
       "the replicas spread evenly, what one node down takes with it (0 on the shared "
       "nodes)."),
    _c("retrieval_spare_gpus", "GPUs of the N+1 spare node", "GPUs", "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), r("shared_spare_gpus"),
          r("survive_node_loss") * IF(gt(r("platform_sold_full"), 0), r("gpus_per_node"),
                                      r("retrieval_replicas_per_node"))),
       "With N+1: a PCIe server holding the replicas its fullest node holds (one node down "
       "restarts them there; session 23: not a full server of GPUs it never runs); a fixed "
       "baseboard's every GPU (it comes full); on the shared nodes, the spare GPUs it keeps "
       "there. 0 without N+1."),
    _c("retrieval_nodes", "Nodes", "nodes", "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), 0,
          ROUNDUP(r("retrieval_replicas") / r("gpus_per_node"), 0) + r("survive_node_loss")),
       "Replicas / GPUs per node, plus one node for N+1 (0 on the shared nodes: its "
       "replicas and spare GPUs sit in theirs)."),
    _c("retrieval_gpus_on_llm_nodes", "Idle shared GPUs it takes", "GPUs", "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), MIN(r("shared_gpus_needed"), r("llm_free_gpus")), 0),
       "Its replicas and spare GPUs on the shared nodes' idle GPUs (as many as there are), "
       "else 0: a retrieval workload listed after it finds that many fewer idle GPUs there."),
    _c("retrieval_slots_filled", "GPUs it adds in the shared nodes' empty slots", "GPUs",
       "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), r("shared_gpus_needed") - r("retrieval_gpus_on_llm_nodes"),
          0),
       "Its replicas and spare GPUs beyond the idle GPUs taken, each on a GPU bought for an "
       "empty slot of the shared nodes (no server bought); a workload after it finds that "
       "many fewer slots."),
    _c("retrieval_gpus_used", "GPUs serving or on standby", "GPUs", "Retrieval",
       r("retrieval_replicas") + r("retrieval_spare_gpus"),
       "Replicas + the GPUs of the N+1 spare node, or its spare GPUs on the shared nodes."),
    _c("retrieval_gpus", "GPUs bought", "GPUs", "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), r("retrieval_slots_filled"),
          IF(gt(r("platform_sold_full"), 0), r("retrieval_nodes") * r("gpus_per_node"),
             r("retrieval_gpus_used"))),
       "Fixed baseboards come full: nodes x GPUs per node; PCIe servers: the GPUs used (as "
       "for the language-model servers); on the shared nodes, the GPUs it adds in their "
       "empty slots (the capital cost is the TCO lines' with these counts)."),
    _c("retrieval_standby_gpus", "Spare GPUs on standby", "GPUs", "Retrieval",
       r("retrieval_gpus_used") - r("retrieval_replicas"),
       "The GPUs of the N+1 spare node, or its spare GPUs on the shared nodes: they run no "
       "replica."),
    _c("retrieval_idle_gpus", "GPUs bought running nothing (idle)", "GPUs", "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), 0, r("retrieval_gpus") - r("retrieval_gpus_used")),
       "Its nodes' GPUs beyond replicas and standby (0 on the shared nodes, and on PCIe "
       "servers): replicas + standby + idle = GPUs bought + idle shared GPUs it takes."),
    _c("retrieval_free_slots", "Empty GPU slots of its nodes", "GPUs", "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), 0,
          r("retrieval_nodes") * r("gpus_per_node") - r("retrieval_gpus")),
       "Its nodes' slots beyond the GPUs bought (a PCIe server bought part full; 0 on the "
       "shared nodes): a workload after it may add its GPUs there."),
    _c("retrieval_replica_gpus", "GPUs per replica", "GPUs", "Retrieval", lift(1),
       "An embedding or reranking replica runs on one GPU: any cloud instance size holds it."),
    _c("retrieval_cloud_gpus", "GPUs it rents in the cloud", "GPUs", "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0),
          MAX(0, r("retrieval_gpus_used") - r("llm_idle_cloud_gpus")), r("retrieval_gpus_used")),
       "On the shared nodes: its replicas and spare GPUs their rented instances do not "
       "already carry (0 when they carry them all); else its GPUs in use. The cloud lines "
       "round them up to whole instances."),
    _c("retrieval_load_gpus", "GPUs for the load, before N+1", "GPUs", "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), 0, r("retrieval_replicas")),
       "Its replicas, one GPU each (0 on the shared nodes: its spare GPUs there are counted "
       "in the GPUs it rents). With N+1 "
       "asked, the cloud lines rent one instance more than these need."),
)


# Cost per embedded token beside a hosted API (evaluated after the group's TCO lines, which
# give annual_cost_onprem; average_load and hours_per_year are the account's inputs).
RETRIEVAL_COST_INPUTS: tuple[Input, ...] = (
    Input("api_per_million_tokens", "Hosted API price", "currency/M tok", "workload",
          "The compared hosted embedding or reranking API, per million input tokens "
          "(catalog, dated; 0 = none listed)."),
    Input("alone_cloud_cost", "Rented alone, its cheapest option: cloud cost per year",
          "currency/yr", "workload",
          "Its own cheapest option rented on instances of its own (the GPU it would run on "
          "alone, in the sizes its offer lists), for a workload on a bought group's idle "
          "GPUs (0 = none priced, or the plan is rented: its options are then ranked by "
          "their rent already)."),
    Input("alone_cloud_gpus", "Rented alone, its cheapest option: GPUs rented", "GPUs",
          "workload", "The GPUs that option rents (0 = none)."),
)

# Session 25 (hunt seed 61): the rented view of a guest on a bought group's idle GPUs. Where
# the group's rented instances have no idle GPU left for it, the guest rented whole instances
# of the host's GPU for itself: two 1-GPU embedders beside a GB200 rack each rented a 4-GPU
# GB200 instance (USD 367,920 a year each), and with more chat users, one more instance for
# the chat held both: more load, less money. Now the instances it rents there carry the next
# guest's replicas (retrieval_idle_cloud_left), and it is priced as its own cheapest rented
# option where that costs less (retrieval_rents_alone).
RETRIEVAL_RENT_CALCULATIONS: tuple[Calculation, ...] = (
    _c("retrieval_rents_alone", "Rented on instances of its own", "1 = yes", "Retrieval",
       IF(AND(gt(r("shares_llm_nodes"), 0), gt(r("retrieval_cloud_gpus"), 0),
              gt(r("alone_cloud_cost"), 0),
              OR(le(r("cloud_price_known"), 0), lt(r("alone_cloud_cost"),
                                                   r("annual_cost_cloud")))), 1, 0),
       "1 = on a bought group's idle GPUs, rented: the group's rented instances do not carry "
       "all its GPUs, and its own cheapest option rented alone costs less than the instances "
       "of the group's GPU it would add (or those have no price): it is priced as that "
       "option. 0 = the cloud lines above (the group's instances, and any it adds there)."),
    _c("retrieval_cloud_cost", "Cloud cost per year, as rented", "currency/yr", "Retrieval",
       IF(gt(r("retrieval_rents_alone"), 0), r("alone_cloud_cost"), r("annual_cost_cloud")),
       "Its cheapest option rented alone where it rents on instances of its own; else the "
       "cloud cost above. The account's cloud total adds this row."),
    _c("retrieval_cloud_gpus_rented", "GPUs rented, as rented", "GPUs", "Retrieval",
       IF(gt(r("retrieval_rents_alone"), 0), r("alone_cloud_gpus"), r("cloud_gpus_rented")),
       "The GPUs its cheapest option rents alone where it rents on instances of its own; "
       "else the GPUs rented above."),
    _c("retrieval_idle_cloud_left", "Idle rented cloud GPUs it leaves on the shared nodes",
       "GPUs", "Retrieval",
       IF(AND(gt(r("shares_llm_nodes"), 0), le(r("retrieval_rents_alone"), 0)),
          r("llm_idle_cloud_gpus") + r("cloud_gpus_rented") - r("retrieval_gpus_used"),
          r("llm_idle_cloud_gpus")),
       "On the shared nodes, rented there: their idle rented GPUs + the GPUs it rents beside "
       "them (whole instances of their GPU) - its GPUs in use; else those it found. The next "
       "workload offered the same nodes finds these: two embedders that each rented a "
       "4-GPU instance for one replica now share one."),
)

RETRIEVAL_COST_CALCULATIONS: tuple[Calculation, ...] = (
    *RETRIEVAL_RENT_CALCULATIONS,
    _c("retrieval_million_tokens_per_year", "Tokens embedded per year", "M tokens", "Retrieval",
       (r("online_tokens_per_s") * r("average_load") * 3600 * r("hours_per_year")
        + r("corpus_tokens")) / 1e6,
       "Online peak demand x average load x seconds per year, plus the corpus once (a corpus "
       "re-embedded more often adds its tokens and lowers the price per token on premises)."),
    _c("retrieval_cost_per_million_tokens_onprem", "On-prem cost per million tokens",
       "currency/M tok", "Retrieval",
       IF(gt(r("retrieval_million_tokens_per_year"), 0),
          r("annual_cost_onprem") / r("retrieval_million_tokens_per_year"), 0),
       "Annual on-prem cost of the node group / tokens embedded per year."),
    _c("retrieval_annual_cost_api", "Hosted API cost per year", "currency/yr", "Retrieval",
       r("retrieval_million_tokens_per_year") * r("api_per_million_tokens"),
       "The same tokens sent to the compared hosted API at its list price."),
    # session 25: what the plan charges a server on another group's nodes, said the same way on
    # every surface (the PDF wrote "no extra cost", the CLI 0, the web page USD 0)
    _c("retrieval_no_extra_cost_onprem", "Adds no cost when bought (on idle GPUs)", "1 = yes",
       "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), IF(gt(r("retrieval_gpus"), 0), 0, 1), 0),
       "1 = it runs on idle GPUs another group bought and buys none: no extra cost on "
       "premises (its cost is in that group's); 0 = its cost is its own GPUs' or servers'."),
    _c("retrieval_no_extra_cost_cloud", "Adds no rent (on idle rented GPUs)", "1 = yes",
       "Retrieval",
       IF(gt(r("shares_llm_nodes"), 0), IF(gt(r("retrieval_cloud_gpus_rented"), 0), 0, 1), 0),
       "1 = the rented instances of the group it shares carry it and it rents no GPU: no "
       "extra cost in the cloud; 0 = its rent is its own GPUs'."),
)


# A RAG request end to end (issue 24): the account's first online embed workload, its first
# rerank workload and its first generating workload, each on its recommended configuration.
RAG_INPUTS: tuple[Input, ...] = (
    Input("rag_embed_latency_s", "Embedding the query, p95", "s", "workload",
          "The embed workload's p95 latency bound (latency_p95_s)."),
    Input("rag_search_s", "Vector search", "s", "workload",
          "Stated on the embed workload (search_latency_s; 0 when not stated)."),
    Input("rag_rerank_latency_s", "Reranking, p95", "s", "workload",
          "The rerank workload's p95 latency bound (latency_p95_s)."),
    Input("rag_llm_ttft_s", "Language model's first token, p95", "s", "workload",
          "The generating workload's TTFT p95 (ttft_p95_ms / 1000)."),
)
RAG_TTFT = _c("rag_ttft_s", "RAG time to first token", "s", "Retrieval",
              r("rag_embed_latency_s") + r("rag_search_s") + r("rag_rerank_latency_s")
              + r("rag_llm_ttft_s"),
              "Embed the query + search + rerank + the language model's first token: the "
              "steps run one after the other, so the sum of their p95 bounds bounds the "
              "request's p95 from above.")


@cache
def retrieval_program() -> Program:
    """The retrieval list compiled once (what sizing/retrieval.py evaluates)."""
    return compile_program([(c.name, c.expr) for c in RETRIEVAL_CALCULATIONS])
