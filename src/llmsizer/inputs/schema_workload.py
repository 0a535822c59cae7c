"""The account and workload models of a requirements file, and the text rules every model
shares (no control or bidirectional characters; names on one line; no booleans for numbers).

The whole file, its hardware, policy and costs, is :mod:`.schema`; reading a file is
:mod:`.loader`; the messages for what the schema refuses, :mod:`.schema_messages`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .rules import measured_problems, speculative_problems, values_of, workload_problems

SCHEMA_VERSION = 1
PrecisionId = Literal["bf16", "fp16", "fp8", "int8", "int4", "fp4", "mxfp4"]


# C0/C1 control characters (a YAML escape such as "\e[31m" or "\a" can write them even
# though the loader refuses the raw bytes) and the explicit bidirectional formatting characters
# that make text display in another order than it is stored ("Trojan Source"). The marks
# LRM/RLM/ALM stay allowed; tab and line feed are allowed in notes only.
_UNSAFE_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _plain_text(text: str) -> str:
    """Text shown in outputs and terminals: no control or bidirectional-override characters."""
    bad = _UNSAFE_TEXT.search(text)
    if bad is not None:
        code = ord(bad.group())
        what = (f"the bidirectional formatting character U+{code:04X}, which makes text display "
                "in a different order than it is stored" if code >= 0x202A
                else f"the control character U+{code:04X}")
        raise PydanticCustomError(
            "unsafe_text", "contains {what}; delete it (names and notes must be plain text)",
            {"what": what})
    return text


def _one_line(text: str) -> str:
    """Names and ids are shown in titles, cells and file names: one line, not blank."""
    if not text.strip():
        raise PydanticCustomError("single_line", "must not be blank")
    if any(c in text for c in "\t\n\r\u2028\u2029\x85"):
        raise PydanticCustomError(
            "single_line", "must be one line of text (it contains a line break or a tab)")
    return _plain_text(text)


Text = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_one_line)]

# A name pasted from a word processor or an e-mail keeps its typographic quotes (“Acme Corp”):
# YAML reads them as part of the name, and the cover printed them. Quotes around the whole name
# (opening and closing of one pair, none inside) are dropped; the loader warns (unquoted_names).
TYPOGRAPHIC_QUOTES = (("\u201c", "\u201d"), ("\u2018", "\u2019"), ("\u201e", "\u201c"),
                      ("\u201e", "\u201d"), ("\u201a", "\u2018"), ("\u00ab", "\u00bb"),
                      ("\u00bb", "\u00ab"), ("\u300c", "\u300d"))


def without_quotes(text: str) -> str:
    """``Acme Corp`` for “Acme Corp”; any other text as it is (“A” and “B”: two quotes)."""
    for opening, closing in TYPOGRAPHIC_QUOTES:
        inner = text[len(opening):-len(closing)]
        if (len(text) > 2 and text.startswith(opening) and text.endswith(closing)
                and opening not in inner and closing not in inner and inner.strip()):
            return inner.strip()
    return text


Name = Annotated[Text, AfterValidator(without_quotes)]


def _not_a_boolean(value: Any) -> Any:
    """``true`` equals 1 in Python, so a Literal[1, 2, 4, 8] takes it even in strict mode
    (issue 25: `tensor_parallel: [1, true]` was accepted)."""
    if isinstance(value, bool):
        raise PydanticCustomError("literal_error", "must be {expected}",
                                  {"expected": "1, 2, 4, 8, 16, 32, 64 or 72, not true/false"})
    return value


# Past 8: groups inside a rack-scale NVLink domain (NVL72), allowed where the platform has one.
TpDegree = Annotated[Literal[1, 2, 4, 8, 16, 32, 64, 72], BeforeValidator(_not_a_boolean)]

MAX_MODEL_ALTERNATIVES = 4


def _alternatives(value: Any) -> Any:
    """``model: [a, b]``: 2 to 4 different models, checked before the type union so that the
    customer reads one message, not one per branch of the union."""
    if not isinstance(value, list):
        return value
    if not 2 <= len(value) <= MAX_MODEL_ALTERNATIVES:
        raise PydanticCustomError(
            "model_alternatives",
            "lists {n} model{s}; a list gives 2 to {most} alternatives to compare (write one "
            "model without brackets, e.g. `model: {one}`)",
            {"n": len(value), "s": "" if len(value) == 1 else "s",
             "most": MAX_MODEL_ALTERNATIVES,
             # the file's own model, when it names one that reads as an id
             "one": value[0] if value and isinstance(value[0], str)
             and re.fullmatch(r"[\w.-]{1,80}", value[0]) else "llama-3.3-70b"})
    seen = [v for v in value if isinstance(v, str)]
    twice = sorted({v for v in seen if seen.count(v) > 1})
    if twice:
        raise PydanticCustomError(
            "model_alternatives", "lists {dup} twice; name each alternative once",
            {"dup": ", ".join(twice)})
    return value


ModelChoice = Annotated[Text | list[Text], BeforeValidator(_alternatives)]


def _subnormal(value: Any) -> tuple[tuple[str | int, ...], float] | None:
    """The first number in ``value`` (or its lists and mappings) nearer zero than the smallest
    normal double, 2.2e-308, other than zero itself, with its keys below ``value``; or None."""
    if isinstance(value, float) and value != 0 and abs(value) < sys.float_info.min:
        return (), value
    items = value.items() if isinstance(value, Mapping) else (
        enumerate(value) if isinstance(value, list | tuple) else ())
    for key, item in items:
        found = _subnormal(item)
        if found is not None:
            return (key, *found[0]), found[1]
    return None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    # A subnormal such as 5e-324 passes `ge=0` yet no spreadsheet holds it (the workbook's
    # cell reads #VALUE!, its formulas with it) and its reciprocal overflows: refused, with
    # the field's range and "write 0" where 0 is allowed (inputs/schema_messages.py).
    @field_validator("*", mode="after")
    @classmethod
    def _no_subnormal(cls, value: Any) -> Any:
        tiny = _subnormal(value)
        if tiny is not None:
            raise PydanticCustomError("tiny_number", "is nearer zero than a spreadsheet holds",
                                      {"below": tiny[0], "found": tiny[1]})
        return value


class Account(_Strict):
    """Who the proposal is for."""

    name: Name = Field(
        description="Customer name, as printed on the proposal's cover and in file names.",
        json_schema_extra={"example": "Acme Corp"})
    id: Text | None = Field(
        default=None,
        description="Your reference for the account (CRM or opportunity id), printed on the cover.",
        json_schema_extra={"example": "ACME-0042"})
    prepared_by: Text | None = Field(
        default=None,
        description="Who prepared the proposal (person or team), printed on the cover.",
        json_schema_extra={"example": "Solutions Engineering"})
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = Field(
        default="USD",
        description="Currency of every price and cost in the outputs (ISO 4217 code). Catalog prices are "
                    "in US dollars: any other currency needs costs.usd_exchange_rate.",
        json_schema_extra={"example": "EUR"})
    notes: Annotated[str, Field(max_length=2000), AfterValidator(_plain_text)] | None = Field(
        default=None,
        description="Free text kept with the requirements (not printed in the proposal).",
        json_schema_extra={"example": "Pilot in Q3; production in Q1"})
    reasons: Annotated[list[Text], Field(max_length=8)] = Field(
        default_factory=list,
        description="Why the customer chooses its way of deploying (buy, rent or hosted API): up "
                    "to 8 short lines, each up to 200 characters, printed in the executive "
                    "summary beside the cost of each way. Free text, e.g. data residency, "
                    "model control, rate limits.",
        json_schema_extra={"example": "[data residency, model control]",
                           "unit": "lines of text"})


class Targets(_Strict):
    """What each user, or the whole workload, must get at peak."""

    # Lower bounds are realistic minimums, not 0: a subnormal such as 5e-324 is > 0 but its
    # reciprocal overflows to infinity in the sizing arithmetic.
    tokens_per_s_per_user: Annotated[float, Field(ge=0.01, le=10_000)] | None = Field(
        default=None,
        description="Streaming speed each user must see while an answer is generated.",
        json_schema_extra={"example": "30", "unit": "tok/s"})
    response_time_s: Annotated[float, Field(ge=0.01, le=3600)] | None = Field(
        default=None,
        description="Response time: output_tokens / response_time_s is the mean speed each user "
                    "needs after the first token (300 tokens in 10 s = 30 tokens/s), and "
                    "without ttft_s the mean first token must also come within it. The first "
                    "token's time is not taken off: at exactly that speed an answer ends one "
                    "first token later; to bound the whole answer, state e2e_p95_s.",
        json_schema_extra={"example": "10", "unit": "s"})
    ttft_s: Annotated[float, Field(ge=0.01, le=120)] | None = Field(
        default=None,
        description="Time to first token, the mean over requests (the wait for the prompts "
                    "ahead included): some requests wait longer; for a bound most requests "
                    "meet, state ttft_p95_s or ttft_p99_s.",
        json_schema_extra={"example": "2", "unit": "s"})
    ttft_p50_s: Annotated[float, Field(ge=0.01, le=120)] | None = Field(
        default=None, description="Time to first token that half of the requests meet.",
        json_schema_extra={"example": "1", "unit": "s"})
    ttft_p90_s: Annotated[float, Field(ge=0.01, le=120)] | None = Field(
        default=None, description="Time to first token that 90 % of the requests meet.",
        json_schema_extra={"example": "1.5", "unit": "s"})
    ttft_p95_s: Annotated[float, Field(ge=0.01, le=120)] | None = Field(
        default=None, description="Time to first token that 95 % of the requests meet.",
        json_schema_extra={"example": "1.5", "unit": "s"})
    ttft_p99_s: Annotated[float, Field(ge=0.01, le=120)] | None = Field(
        default=None, description="Time to first token that 99 % of the requests meet.",
        json_schema_extra={"example": "3", "unit": "s"})
    itl_p50_ms: Annotated[float, Field(ge=1, le=5000)] | None = Field(
        default=None, description="Inter-token latency (time between two output tokens after "
                                  "the first) that half of the tokens meet.",
        json_schema_extra={"example": "40", "unit": "ms"})
    itl_p90_ms: Annotated[float, Field(ge=1, le=5000)] | None = Field(
        default=None, description="Inter-token latency that 90 % of the tokens meet.",
        json_schema_extra={"example": "60", "unit": "ms"})
    itl_p95_ms: Annotated[float, Field(ge=1, le=5000)] | None = Field(
        default=None, description="Inter-token latency that 95 % of the tokens meet.",
        json_schema_extra={"example": "80", "unit": "ms"})
    itl_p99_ms: Annotated[float, Field(ge=1, le=5000)] | None = Field(
        default=None, description="Inter-token latency that 99 % of the tokens meet.",
        json_schema_extra={"example": "150", "unit": "ms"})
    e2e_p95_s: Annotated[float, Field(ge=0.01, le=3600)] | None = Field(
        default=None, description="Whole answer (first token to last) that 95 % of the "
                                  "requests meet.",
        json_schema_extra={"example": "20", "unit": "s"})
    system_tokens_per_s: Annotated[float, Field(ge=0.01, le=1e9)] | None = Field(
        default=None,
        description="Total output tokens per second across all users, for offline or batch work without a"
                    " per-user target.",
        json_schema_extra={"example": "5000", "unit": "tok/s"})
    latency_p95_s: Annotated[float, Field(ge=0.001, le=60)] | None = Field(
        default=None,
        description="Embed and rerank workloads only: 95th-percentile time from a request's arrival "
                    "to its vectors or scores (batching window + queue + forward pass).",
        json_schema_extra={"example": "0.1", "unit": "s"})


BenchFormat = Literal["vllm", "aiperf", "genai-perf", "trtllm-bench"]
BenchFile = Annotated[str, Field(min_length=1, max_length=500), AfterValidator(_one_line)]


class Measured(_Strict):
    """The customer's benchmark replaces the modelled throughput (“From Users to GPUs”): either the
    figure itself (``tokens_per_s_per_replica``) or the tool's result file(s) (``file``,
    docs/measured.md)."""

    gpu: Text = Field(
        description="Catalog id of the GPU the benchmark ran on (`llmsizer catalog gpus`).",
        json_schema_extra={"example": "h100-sxm"})
    gpus_per_replica: Annotated[int, Field(ge=1, le=72)] = Field(
        description="GPUs that held one copy of the model in the benchmark (its tensor x pipeline "
                    "parallel degree).",
        json_schema_extra={"example": "4", "unit": "GPUs"})
    tokens_per_s_per_replica: Annotated[float, Field(ge=0.01, le=1e8)] | None = Field(
        default=None,
        description="Measured output tokens per second of one model copy at the workload's prompt and "
                    "output lengths; replaces the modelled throughput.",
        json_schema_extra={"example": "1000", "unit": "tok/s"})
    file: BenchFile | Annotated[list[BenchFile], Field(min_length=1, max_length=50)] | None = Field(
        default=None,
        description="Benchmark result file, or a list of files for a curve over concurrency, next to this"
                    " requirements file (docs/measured.md lists the tools).",
        json_schema_extra={"example": "bench/vllm-c64.json"})
    format: BenchFormat | None = Field(
        default=None,
        description="Tool that wrote the benchmark file(s); detected from the content when left out.",
        json_schema_extra={"example": "vllm"})
    gpu_count: Annotated[int, Field(ge=1, le=100_000)] | None = Field(
        default=None,
        description="GPUs the benchmark ran on in total, when the file does not state it (a whole number "
                    "of replicas).",
        json_schema_extra={"example": "8", "unit": "GPUs"})

    @model_validator(mode="after")
    def _one_source(self) -> Measured:
        problems = measured_problems(values_of(self))
        if problems:
            raise ValueError(problems[0])  # the loader tells them all (inputs/rules.py)
        return self

    @property
    def files(self) -> list[str]:
        """The benchmark files named (empty for the numbers form)."""
        if self.file is None:
            return []
        return [self.file] if isinstance(self.file, str) else list(self.file)


SpecMethod = Literal["mtp", "eagle", "draft_model", "ngram"]


class Speculative(_Strict):
    """Speculative decoding or multi-token prediction: a draft proposes tokens that the model
    verifies in one step. How many are accepted depends on the content (code and reasoning
    accept more than free chat): state your own measured figure where you have one."""

    method: SpecMethod = Field(
        description="mtp (the model's multi-token-prediction module, DeepSeek-V3/R1), eagle (an "
                    "EAGLE draft head), draft_model (a smaller model) or ngram (prompt lookup).",
        json_schema_extra={"example": "mtp"})
    draft_tokens: Annotated[int, Field(ge=1, le=16)] = Field(
        description="Tokens the draft proposes per sequence per step.",
        json_schema_extra={"example": "3", "unit": "tokens"})
    acceptance_length: Annotated[float, Field(ge=1, le=17)] | None = Field(
        default=None,
        description="Mean tokens a step yields, the model's own included (1 to draft_tokens + 1); "
                    "default for mtp: the model's published figure (`llmsizer catalog models`).",
        json_schema_extra={"example": "2.8", "unit": "tokens/step"})
    draft_cost: Annotated[float, Field(ge=0, le=1)] | None = Field(
        default=None,
        description="One draft forward as a share of a model step; default mtp and eagle: one "
                    "layer of the model's (1 / layers), ngram: 0; required for draft_model.",
        json_schema_extra={"example": "0.05", "unit": "x step"})

    @model_validator(mode="after")
    def _consistent(self) -> Speculative:
        problems = speculative_problems(values_of(self))
        if problems:
            raise ValueError(problems[0])  # the loader tells them all (inputs/rules.py)
        return self


WorkloadKind = Literal["generate", "embed", "rerank"]

class Workload(_Strict):
    """One workload: a model, its users at peak, the request shape and the targets. ``kind``
    says what it serves: a generating LLM (the default), an embedding model or a reranker."""

    name: Name = Field(
        description="Name of the workload, unique within the file; heads its section of the proposal.",
        json_schema_extra={"example": "Internal assistant"})
    model: ModelChoice = Field(
        description="Catalog model id (`llmsizer catalog models`), or the path of a Hugging Face "
                    "config.json next to this file; or a list of 2 to 4 of them, alternatives "
                    "sized under the same load, targets and hardware: the proposal compares "
                    "them and recommends the cheapest that meets the targets.",
        json_schema_extra={"example": "llama-3.1-70b"})
    kind: WorkloadKind = Field(
        default="generate",
        description="What the workload serves: generate (an LLM answering), embed (text to vectors: "
                    "queries online and/or a corpus offline) or rerank (scoring query-passage pairs). "
                    "Embed and rerank models come from the embedding catalog (NV-Embed-v2, bge-m3, "
                    "Qwen3-Embedding, bge-reranker-v2-m3, ...).",
        json_schema_extra={"example": "generate"})
    concurrent_users: Annotated[int, Field(ge=1, le=10_000_000)] | None = Field(
        default=None,
        description="Load, first form: users generating at the same time at peak (not registered "
                    "users), each sending the next request as the previous answer ends, as "
                    "benchmarks measure; users who pause to read are better stated as a rate. "
                    "State exactly one of concurrent_users, requests_per_s or named_users.",
        json_schema_extra={"example": "200", "unit": "users"})
    requests_per_s: Annotated[float, Field(gt=0, le=1_000_000)] | None = Field(
        default=None,
        description="Load, second form: requests arriving per second at the busiest moment; the "
                    "concurrency follows by Little's law.",
        json_schema_extra={"example": "40", "unit": "requests/s"})
    burstiness: Annotated[float, Field(ge=0, le=10)] | None = Field(
        default=None,
        description="Coefficient of variation of the times between arrivals (requests_per_s or "
                    "named_users): 1 = random (Poisson) arrivals, the default; above 1 = bursts.",
        json_schema_extra={"example": "1.5", "unit": "CV"})
    named_users: Annotated[int, Field(ge=1, le=100_000_000)] | None = Field(
        default=None,
        description="Load, third form: people who may use the service, with "
                    "requests_per_user_per_hour and peak_to_average.",
        json_schema_extra={"example": "2000", "unit": "users"})
    requests_per_user_per_hour: Annotated[float, Field(gt=0, le=10_000)] | None = Field(
        default=None,
        description="Average requests one user sends per hour (with named_users).",
        json_schema_extra={"example": "6", "unit": "requests/h"})
    peak_to_average: Annotated[float, Field(ge=1, le=100)] | None = Field(
        default=None,
        description="Busiest hour's request rate / the average hour's (with named_users).",
        json_schema_extra={"example": "3", "unit": "x"})
    prompt_tokens: Annotated[int, Field(ge=1, le=2_000_000)] | None = Field(
        default=None,
        description="Average input per request: system prompt, history and retrieved context "
                    "included. Required for kind: generate.",
        json_schema_extra={"example": "500", "unit": "tokens"})
    output_tokens: Annotated[int, Field(ge=1, le=1_000_000)] | None = Field(
        default=None,
        description="Average generated tokens per request. Required for kind: generate.",
        json_schema_extra={"example": "300", "unit": "tokens"})
    max_context_tokens: Annotated[int, Field(ge=1, le=10_000_000)] | None = Field(
        default=None,
        description="KV cache reserved per request; default prompt_tokens + output_tokens. Set it to the "
                    "longest context you must serve.",
        json_schema_extra={"example": "8192", "unit": "tokens"})
    prefix_cache_hit: Annotated[float, Field(ge=0, le=0.99)] = Field(
        default=0.0,
        description="Share of prompt tokens served from the prefix cache (a shared system prompt or "
                    "document), which skip prefill.",
        json_schema_extra={"example": "0.3", "unit": "fraction"})
    targets: Targets | None = Field(
        default=None,
        description="What each user or the whole workload must get at peak; generate: at least one "
                    "of tokens_per_s_per_user, response_time_s or system_tokens_per_s; embed "
                    "(online) and rerank: latency_p95_s.",
        json_schema_extra={"example": "{tokens_per_s_per_user: 30, ttft_s: 2}"})
    speculative: Speculative | None = Field(
        default=None,
        description="Speculative decoding or MTP as served: the draft method, the tokens drafted "
                    "per step and the mean acceptance length; TPOT and per-user speed follow.",
        json_schema_extra={"example": "{method: mtp, draft_tokens: 3}"})
    measured: Measured | None = Field(
        default=None,
        description="The customer's own benchmark on one configuration: it replaces the modelled "
                    "throughput for that GPU.",
        json_schema_extra={"example": "{gpu: h100-sxm, gpus_per_replica: 4, tokens_per_s_per_replica: 1000}"})
    tokens_per_request: Annotated[int, Field(ge=1, le=1_000_000)] | None = Field(
        default=None,
        description="Embed only: average tokens in one online request (a query, or the texts sent "
                    "together).",
        json_schema_extra={"example": "64", "unit": "tokens"})
    corpus_tokens: Annotated[float, Field(ge=1, le=1e15)] | None = Field(
        default=None,
        description="Embed only: tokens in the document corpus to embed offline (with "
                    "reindex_within_hours).",
        json_schema_extra={"example": "2e9", "unit": "tokens"})
    reindex_within_hours: Annotated[float, Field(ge=0.01, le=8760)] | None = Field(
        default=None,
        description="Embed only: the whole corpus must be embedded again within this time.",
        json_schema_extra={"example": "8", "unit": "h"})
    search_latency_s: Annotated[float, Field(ge=0, le=60)] | None = Field(
        default=None,
        description="Embed only: time of the vector search between embedding the query and "
                    "reranking (stated: the vector database is not sized); it enters the "
                    "end-to-end RAG time to first token.",
        json_schema_extra={"example": "0.05", "unit": "s"})
    engine: str | None = Field(
        default=None,
        description="Embed and rerank only: the engine the encoder is served with, one of the "
                    "encoder engine classes (catalogs/embedders.yaml encoder_engines): "
                    "serving-stack (the default: Text Embeddings Inference, Infinity, a NIM), "
                    "fused-tensorrt (hand-fused TensorRT or FasterTransformer kernels), "
                    "onnx-runtime, framework (TorchScript, TensorFlow with XLA) or "
                    "naive-no-batching. It sets the share of the GPU's peak a forward pass "
                    "reaches (docs/calibration.md).",
        json_schema_extra={"example": "serving-stack"})
    candidates_per_request: Annotated[int, Field(ge=1, le=10_000)] | None = Field(
        default=None,
        description="Rerank only: passages scored against the query in one request.",
        json_schema_extra={"example": "50", "unit": "passages"})
    tokens_per_pair: Annotated[int, Field(ge=1, le=100_000)] | None = Field(
        default=None,
        description="Rerank only: average tokens of one query + passage pair.",
        json_schema_extra={"example": "320", "unit": "tokens"})

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        problems = self.problems_of(values_of(self))
        if problems:
            raise ValueError(problems[0])  # the loader tells them all (inputs/rules.py)
        return self

    @classmethod
    def problems_of(cls, values: Mapping[str, Any]) -> list[str]:
        """Every cross-field problem of a workload given as its keys (inputs/rules.py)."""
        return workload_problems(values, _defaults())

    @property
    def models(self) -> tuple[str, ...]:
        """Every model the workload names: one, or its 2 to 4 alternatives."""
        return tuple(self.model) if isinstance(self.model, list) else (self.model,)

    @property
    def model_id(self) -> str:
        """The one model of a workload without alternatives (the engine sizes each
        alternative as such a workload)."""
        if isinstance(self.model, list):
            raise TypeError(f"workload {self.name!r} lists alternatives; size each one")
        return self.model

    @property
    def load_form(self) -> str:
        """'users', 'rate' or 'population': how the load was stated."""
        if self.named_users is not None:
            return "population"
        return "rate" if self.requests_per_s is not None else "users"


@cache
def _defaults() -> dict[str, Any]:
    """Each workload field's default: a key of another kind at its default is no statement."""
    return {k: f.default for k, f in Workload.model_fields.items()}
