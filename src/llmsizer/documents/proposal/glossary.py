"""The glossary (templates/partials/glossary.html.j2): one plain sentence for each term the
proposal uses, for a reader who has never sized a GPU cluster. tests/test_glossary.py keeps a
list of the jargon that may reach the PDF and checks every term it finds there against this
one."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Term:
    term: str
    meaning: str
    # listed only when the proposal uses it (the page is nearly full): "disaggregated"
    only_when: str = ""

    @property
    def used(self) -> re.Pattern[str]:
        """Where the proposal's text uses the term (any case): :func:`prune_glossary` keeps
        the entry only then."""
        return _USED[self.term]


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
         "p10 to p90 is the range that holds eight cases in ten; p50, p95 and p99 read the same "
         "way (p99: the value 99 cases in 100 stay below)."),
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
         "the hardware's speed is reached."),
    # the retrieval half its own entry (session 23: an account without retrieval read of
    # encoder engines), listed only with embedding or reranking servers
    Term("Serving engine for embedding and reranking", "Embedding and reranking servers run "
         "an encoder engine (Text Embeddings Inference, Infinity, a NIM), not a language "
         "model's: one pass over each request, no answer written; the share of the GPU's peak "
         "it reaches is fitted on its own benchmarks.", only_when="retrieval"),
    Term("Speculative decoding", "A draft (an extra layer of the model, a small head or a "
         "smaller model) guesses the next few tokens and the model checks them all in one "
         "step, keeping those it agrees with: answers stream faster; how many are kept depends "
         "on the content.", only_when="speculative"),
    Term("Serving, on standby, idle", "The GPUs bought or rented: serving GPUs run replicas (spare "
         "replicas included); GPUs on standby run nothing until they take over a failed "
         "node's replicas (N+1); idle GPUs are left over because servers come with all their "
         "GPUs.", only_when="standby-idle"),
    Term("Shared standby", "One spare cloud instance rented for the pools of a group: it runs "
         "nothing until it takes over a lost replica of any of them (N+1)."),
    Term("Free GPUs", "GPUs of a server (or cloud instance) that run no replica: a lost "
         "replica restarts only where all its GPUs are free inside one of them."),
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


# Where each term is used: the words of the proposal that need it (tests/test_customer_pdf.py
# keeps its own list of the jargon, by design; each of its patterns finds a subset of these).
_USED: dict[str, re.Pattern[str]] = {term: re.compile(p, re.IGNORECASE) for term, p in {
    'Attention data parallelism': 'data[- ]parallel',
    'Batch': '\\bbatch',
    'BF16, FP16, FP8, FP4, INT8, INT4, MXFP4': '\\b(?:FP8|FP4|BF16|FP16|INT8|INT4|MXFP4)\\b',
    'Break-even': '\\bbreak-even\\b',
    'Calibration': '\\bcalibrat',
    'Continuous batching': '\\bcontinuous batching\\b',
    'Cross-validation': '\\bcross-validat',
    'Decode': '\\bdecod',
    'Disaggregated serving': '\\bdisaggregat',
    'Embedding and reranking': '\\b(?:embedding|reranking)\\b',
    'Expert parallelism (EP)': '\\bexpert[- ]parallel|\\bEP\\d*\\b',
    'GB': '\\d\\s?GB\\b',
    'GPU': '\\bGPUs?\\b',
    'Headroom': '\\bheadroom\\b',
    'Inter-token latency': '\\binter-token latency\\b',
    'Hosted API': '\\bhosted API\\b',
    'KV cache': '\\bKV\\b',
    'Leaf and spine switches': '\\b(?:leaf|spine)\\b',
    'LLM': '\\bLLMs?\\b',
    'Mixture of experts (MoE)': '\\bMoE\\b|\\bexperts?\\b',
    'N+1': '\\bN\\+1\\b',
    'Node': '\\bnodes?\\b',
    'p10, p90, p95': '\\bp(?:10|50|90|95|99)\\b',
    'PDU': '\\bPDUs?\\b',
    'Prefix cache': '\\bprefix[- ]cach',
    'Prefill': '\\bprefill',
    'PUE': '\\bPUE\\b',
    'Replica': '\\breplicas?\\b',
    'Serving engine': '\\bserving engines?\\b',
    # listed only for an account with retrieval servers (only_when), where the plan names
    # their engine ("Serving engine assumed: serving stack (Text Embeddings Inference, ...)")
    'Serving engine for embedding and reranking': '\\b(?:serving|encoder) engines?\\b',
    'Speculative decoding': '\\bspeculative decoding\\b',
    'Serving, on standby, idle': '\\bon standby\\b|\\bstandby:|\\bidle\\b',
    'Shared standby': '\\bshared standby\\b',
    'Free GPUs': '\\bfree GPUs\\b',
    'TCO': '\\bTCO\\b',
    'Token': '\\btokens?\\b',
    'Tensor parallelism (TP)': '\\bTP\\d|\\btensor[- ]parallel',
    'TTFT': '\\bTTFT\\b',
    'TPOT': '\\bTPOT\\b',
}.items()}

_SECTION = re.compile(r'<section\b[^>]*\bid="glossary"[^>]*>.*?</section>', re.DOTALL)
_ROW = re.compile(r'\s*<tr><th scope="row">(.*?)</th>.*?</tr>', re.DOTALL)
_UNSEEN = re.compile(r"<!--.*?-->|<(style|script|title)\b.*?</\1>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")


def prune_glossary(html_text: str) -> str:
    """The proposal ``html_text`` with the glossary rows left out whose term its text does
    not use (review round 22: a dense model's proposal explained experts and expert
    parallelism). The text is everything outside the glossary section, tags removed; a row
    whose term is not one of :data:`GLOSSARY` (a user's own template) is kept, and so is a
    document without the shipped glossary section."""
    m = _SECTION.search(html_text)
    if m is None:
        return html_text
    rest = _TAG.sub(" ", _UNSEEN.sub(" ", html_text[:m.start()] + html_text[m.end():]))
    text = " ".join(html.unescape(rest).split())
    by_term = {html.escape(t.term, quote=False): t for t in GLOSSARY}

    def keep(row: re.Match[str]) -> str:
        t = by_term.get(row.group(1).strip())
        return row.group(0) if t is None or t.used.search(text) else ""

    section = _ROW.sub(keep, m.group(0))
    return html_text[:m.start()] + section + html_text[m.end():]
