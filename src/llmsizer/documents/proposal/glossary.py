"""The glossary (templates/partials/glossary.html.j2): one plain sentence for each term the
proposal uses, for a reader who has never sized a GPU cluster. tests/test_glossary.py keeps a
list of the jargon that may reach the PDF and checks every term it finds there against this
one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Term:
    term: str
    meaning: str
    # listed only when the proposal uses it (the page is nearly full): "disaggregated"
    only_when: str = ""


GLOSSARY: tuple[Term, ...] = (
    Term("Attention data parallelism", "In a mixture-of-experts model, running the attention "
         "layers as several independent copies (ranks), each with its own requests, on the GPUs "
         "over which the experts are spread.", only_when="data-parallel"),
    Term("Batch", "The number of users' requests one replica works on at the same time; larger "
         "batches serve more users per GPU but give each user fewer tokens per second."),
    Term("BF16, FP16, FP8, FP4, INT8, INT4, MXFP4", "Number formats for the model's weights or "
         "its KV cache, 16, 8 or 4 bits a value: fewer bits need less memory and run faster, "
         "at some risk to answer quality."),
    Term("Break-even", "The load or the month at which buying the hardware costs the same as "
         "renting the same capacity in the cloud."),
    Term("Calibration", "Fitting the model's efficiency factors to published benchmark results, "
         "so that its estimates match what real servers achieved."),
    Term("Continuous batching", "A serving engine's way of letting new requests join the "
         "running batch at every step, instead of waiting for the batch to finish, so the GPUs "
         "stay busy."),
    Term("Cross-validation", "Checking the calibrated model on benchmarks it was not fitted "
         "on; the errors it shows there are the error ranges quoted in this proposal."),
    Term("Decode", "The phase in which the model writes its answer, one token per step for "
         "every request in the batch."),
    Term("Disaggregated serving", "Reading prompts (prefill) on some replicas and writing "
         "answers (decode) on others; each request's cache moves once between them.",
         only_when="disaggregated"),
    Term("Embedding and reranking", "The two steps that find the documents a question needs "
         "before the LLM answers: embedding turns the question and the documents into vectors "
         "that a vector database compares by meaning; reranking scores the passages found "
         "against the question, so that the best ones reach the LLM.", only_when="retrieval"),
    Term("Expert parallelism (EP)", "Spreading a mixture-of-experts model's experts over "
         "several GPUs, so each GPU holds and computes only some of them."),
    Term("GB", "Gigabyte, 10⁹ bytes: every memory size in this proposal; a GPU's memory is "
         "taken as its vendor prints it (80 GB for an H100)."),
    Term("GPU", "The accelerator card that holds the model in its memory and does the "
         "arithmetic; servers (nodes) carry several."),
    # bought or rented alike (review round 19: a rented plan's glossary spoke only of buying)
    Term("Headroom", "Capacity above the expected peak demand, bought or rented, as a share of "
         "that peak, to absorb bursts and growth."),
    Term("Inter-token latency", "The time between two tokens of one answer; a percentile "
         "target counts the slower steps that also read a new user's prompt."),
    Term("Hosted API", "A model run by a provider on its own servers and billed per token "
         "at a list price; the alternative to buying or renting GPUs."),
    Term("KV cache", "The memory in which the model keeps each conversation's context while it "
         "answers; it grows with the length of prompt and answer and limits the batch."),
    Term("Leaf and spine switches", "Network switches: servers plug into leaves; "
         "spines link the leaves."),
    Term("LLM", "Large language model: the AI model that reads the prompt and writes the "
         "answer."),
    Term("Mixture of experts (MoE)", "A model design in which each token uses only a few of "
         "many expert sub-networks, so it computes less than its size suggests but must still "
         "hold every expert in memory."),
    Term("N+1", "One node's worth more than peak demand needs, bought or rented, as spare replicas or "
         "GPUs on standby that can host a whole replica, so that peak demand is still served "
         "while any one node is down."),
    Term("Node", "One server with its GPUs, powered and failing as a unit; rented, one cloud "
         "instance."),
    Term("p10, p90, p95", "Percentiles: p90 is the value that 90 % of cases stay below, so "
         "p10 to p90 is the range that holds eight cases in ten."),
    Term("PDU", "Power distribution unit: a rack's power strip, usually two per rack."),
    Term("Prefix cache", "Memory in which the serving engine keeps prompt beginnings it has "
         "already read (a shared instruction, a document); a request that starts the same way "
         "skips reading them again. The hit rate is the share of prompt tokens found there."),
    Term("Prefill", "The phase in which the model reads the whole prompt before it writes the "
         "first token of the answer."),
    Term("PUE", "Power usage effectiveness: the data centre's total power divided by the power "
         "of the IT equipment in it (cooling and losses on top)."),
    Term("Replica", "One complete copy of the model serving users, on one GPU or on a group of "
         "GPUs that work as one."),
    Term("Serving engine", "The software that runs the model on the GPUs and answers "
         "requests (vLLM, SGLang, TensorRT-LLM); its scheduling and kernels decide how much of "
         "the hardware's speed is reached. Embedding and reranking servers run an encoder "
         "engine (Text Embeddings Inference, Infinity, a NIM); its share of peak differs too."),
    Term("Speculative decoding", "A draft (an extra layer of the model, a small head or a "
         "smaller model) guesses the next few tokens and the model checks them all in one "
         "step, keeping those it agrees with: answers stream faster; how many are kept depends "
         "on the content.", only_when="speculative"),
    Term("Serving, on standby, idle", "The GPUs bought or rented: serving GPUs run replicas (spare "
         "replicas included); GPUs on standby run nothing until they take over a failed "
         "node's replicas (N+1); idle GPUs are left over because servers come with all their "
         "GPUs.", only_when="standby-idle"),
    Term("TCO", "Total cost of ownership: the purchase spread over its write-off period plus "
         "power, space, support and network each year."),
    Term("Token", "A piece of text of about three quarters of a word; models read and write "
         "text as tokens, and speed is counted in tokens per second (tok/s)."),
    Term("Tensor parallelism (TP)", "Splitting each layer of the model across several GPUs "
         "that work on every token together; TP4 means one replica spans four GPUs."),
    Term("TTFT", "Time to first token: how long a user waits from sending a prompt until the "
         "first word of the answer appears."),
    Term("TPOT", "Time per output token: the time between two tokens of an answer once it "
         "has started; its inverse is the per-user speed in tokens per second."),
)


def glossary_context(uses: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``glossary``: the terms in alphabetical order; a term marked ``only_when`` only when
    the proposal ``uses`` it."""
    terms = (t for t in GLOSSARY if not t.only_when or t.only_when in uses)
    return {"glossary": tuple(sorted(terms, key=lambda t: t.term.lower()))}
