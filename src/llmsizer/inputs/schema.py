"""Customer requirements: the strict schema of ``inputs/<account>.yaml`` and its loader.

Every field carries its description, unit and example: ``python -m llmsizer.documents.docgen`` writes
docs/requirements.md, docs/requirements-reference.yaml and docs/requirements.schema.json from
these models (a test checks they did not drift); ``inputs/example.yaml`` is a commented example.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..base.errors import InputError
from ..model.catalog import Catalog, CloudTier, Model, load_catalog, suggest
from .benchfiles import BenchPoint
from .yamlsafe import Located, load_file

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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class Account(_Strict):
    """Who the proposal is for."""

    name: Text = Field(
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
        description="Whole answer within this time: output_tokens / response_time_s is the speed each "
                    "user needs.",
        json_schema_extra={"example": "10", "unit": "s"})
    ttft_s: Annotated[float, Field(ge=0.01, le=600)] | None = Field(
        default=None,
        description="Time to first token: longest wait before an answer starts.",
        json_schema_extra={"example": "2", "unit": "s"})
    system_tokens_per_s: Annotated[float, Field(ge=0.01, le=1e9)] | None = Field(
        default=None,
        description="Total output tokens per second across all users, for offline or batch work without a"
                    " per-user target.",
        json_schema_extra={"example": "5000", "unit": "tok/s"})


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
        if self.tokens_per_s_per_replica is None and self.file is None:
            raise ValueError("measured needs tokens_per_s_per_replica (the measured figure) or "
                             "file (a benchmark result file, or a list of them for a curve)")
        if self.tokens_per_s_per_replica is not None and self.file is not None:
            raise ValueError("measured takes tokens_per_s_per_replica or file, not both: the "
                             "file's figures would be ignored")
        if self.file is None and (self.format is not None or self.gpu_count is not None):
            raise ValueError("format and gpu_count describe benchmark files: use them with "
                             "`file:` (or delete them)")
        if self.gpu_count is not None and self.gpu_count % self.gpus_per_replica:
            raise ValueError(f"gpu_count ({self.gpu_count}) must be a whole number of replicas "
                             f"of gpus_per_replica ({self.gpus_per_replica}) GPUs")
        return self

    @property
    def files(self) -> list[str]:
        """The benchmark files named (empty for the numbers form)."""
        if self.file is None:
            return []
        return [self.file] if isinstance(self.file, str) else list(self.file)


class Workload(_Strict):
    """One workload: a model, its users at peak, the request shape and the targets."""

    name: Text = Field(
        description="Name of the workload, unique within the file; heads its section of the proposal.",
        json_schema_extra={"example": "Internal assistant"})
    model: Text = Field(
        description="Catalog model id (`llmsizer catalog models`), or the path of a Hugging Face "
                    "config.json next to this file.",
        json_schema_extra={"example": "llama-3.1-70b"})
    concurrent_users: Annotated[int, Field(ge=1, le=10_000_000)] = Field(
        description="Users generating at the same time at peak (not registered users).",
        json_schema_extra={"example": "200", "unit": "users"})
    prompt_tokens: Annotated[int, Field(ge=1, le=2_000_000)] = Field(
        description="Average input per request: system prompt, history and retrieved context included.",
        json_schema_extra={"example": "500", "unit": "tokens"})
    output_tokens: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        description="Average generated tokens per request.",
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
    targets: Targets = Field(
        description="What each user or the whole workload must get at peak; at least one of "
                    "tokens_per_s_per_user, response_time_s or system_tokens_per_s.",
        json_schema_extra={"example": "{tokens_per_s_per_user: 30, ttft_s: 2}"})
    measured: Measured | None = Field(
        default=None,
        description="The customer's own benchmark on one configuration: it replaces the modelled "
                    "throughput for that GPU.",
        json_schema_extra={"example": "{gpu: h100-sxm, gpus_per_replica: 4, tokens_per_s_per_replica: 1000}"})

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        t = self.targets
        if t.tokens_per_s_per_user is None and t.response_time_s is None and (
            t.system_tokens_per_s is None
        ):
            raise ValueError(
                "targets needs tokens_per_s_per_user, response_time_s or system_tokens_per_s"
            )
        if t.ttft_s is not None and t.response_time_s is not None and (
            t.ttft_s >= t.response_time_s
        ):
            raise ValueError(
                f"targets.ttft_s ({t.ttft_s:g} s) must be shorter than targets.response_time_s "
                f"({t.response_time_s:g} s): the first token comes before the whole answer"
            )
        if self.max_context_tokens is not None and (
            self.max_context_tokens < self.prompt_tokens + self.output_tokens
        ):
            raise ValueError(
                f"max_context_tokens ({self.max_context_tokens}) is smaller than prompt_tokens + "
                f"output_tokens ({self.prompt_tokens + self.output_tokens})"
            )
        return self


class Hardware(_Strict):
    """Which GPUs, platforms, precisions and tensor-parallel degrees to consider."""

    gpus: Annotated[list[Text], Field(min_length=1, max_length=50)] | None = Field(
        default=None,
        description="Catalog GPU ids to consider; left out, every catalog GPU.",
        json_schema_extra={"example": "[h100-sxm, h200-sxm]"})
    platform: Text | None = Field(
        default=None,
        description="Catalog platform id (server or node) to use for every GPU; left out, each GPU's "
                    "default platform.",
        json_schema_extra={"example": "dell-xe9680"})
    weight_precisions: Annotated[list[PrecisionId], Field(min_length=1)] = Field(
        default=["fp8", "bf16"],
        description="Weight storage formats to try.",
        json_schema_extra={"example": "[fp8, bf16]"})
    # None = not stated: each weight precision takes its catalog default_kv_precision (FP4
    # weights are served with an FP8 KV cache unless the KV cache is quantised separately).
    kv_precisions: Annotated[list[PrecisionId], Field(min_length=1)] | None = Field(
        default=None,
        description="KV-cache storage formats to try; left out, each weight precision's usual "
                    "KV format (fp4 and fp8 weights: fp8 KV; 16-bit weights: bf16 KV).",
        json_schema_extra={"example": "[fp8]"})
    tensor_parallel: Annotated[list[Literal[1, 2, 4, 8]], Field(min_length=1)] | None = Field(
        default=None,
        description="Tensor-parallel degrees (GPUs per model copy) to try; left out, every degree the "
                    "platform allows.",
        json_schema_extra={"example": "[1, 2, 4, 8]"})


class Policy(_Strict):
    """Headroom, resilience and serving-engine settings."""

    headroom: Annotated[float, Field(ge=0, le=3)] = Field(
        default=0.25,
        description="Extra capacity above peak demand for bursts and growth (0.25 = 25 %).",
        json_schema_extra={"example": "0.25", "unit": "fraction"})
    survive_node_loss: bool = Field(
        default=False,
        description="Add one node's worth of spare replicas so peak demand is still met with a node down "
                    "(N+1).",
        json_schema_extra={"example": "true"})
    gpu_memory_utilization: Annotated[float, Field(ge=0.1, le=1)] = Field(
        default=0.90,
        description="Share of each GPU's memory the serving engine may use (vLLM's "
                    "gpu_memory_utilization).",
        json_schema_extra={"example": "0.9", "unit": "fraction"})
    runtime_reserve_gb: Annotated[float, Field(ge=0, le=100)] | None = Field(
        default=None,
        description="Memory held back per GPU for activations, CUDA graphs and fragmentation; left out, "
                    "the calibrated catalog constant.",
        json_schema_extra={"example": "2", "unit": "GB"})
    max_batch_per_replica: Annotated[int, Field(ge=1, le=100_000)] | None = Field(
        default=None,
        description="The serving engine's cap on sequences in flight per model copy (vLLM max_num_seqs); "
                    "left out, the catalog constant.",
        json_schema_extra={"example": "256", "unit": "sequences"})
    mbu: Annotated[float, Field(gt=0.05, le=1)] | None = Field(
        default=None,
        description="Override the calibrated memory-bandwidth efficiency (share of peak bandwidth "
                    "achieved).",
        json_schema_extra={"example": "0.8", "unit": "fraction"})
    mfu: Annotated[float, Field(gt=0.05, le=1)] | None = Field(
        default=None,
        description="Override the calibrated compute efficiency (share of peak tensor throughput "
                    "achieved).",
        json_schema_extra={"example": "0.5", "unit": "fraction"})


class Costs(_Strict):
    """Power, support, amortisation and price overrides for the cost of ownership."""

    electricity_per_kwh: Annotated[float, Field(ge=0, le=10)] = Field(
        default=0.12,
        description="Electricity tariff for the data centre, in the account's currency.",
        json_schema_extra={"example": "0.21", "unit": "currency/kWh"})
    pue: Annotated[float, Field(ge=1, le=3)] = Field(
        default=1.3,
        description="Power usage effectiveness: facility power / IT power.",
        json_schema_extra={"example": "1.3", "unit": "ratio"})
    amortization_years: Annotated[float, Field(ge=1, le=10)] = Field(
        default=3,
        description="Years over which hardware capital cost is written off.",
        json_schema_extra={"example": "4", "unit": "years"})
    support_rate: Annotated[float, Field(ge=0, le=1)] = Field(
        default=0.10,
        description="Annual support and maintenance as a share of capital cost.",
        json_schema_extra={"example": "0.1", "unit": "fraction of capex per year"})
    average_load: Annotated[float, Field(ge=0.01, le=1)] = Field(
        default=0.6,
        description="Mean demand as a share of peak: scales power and the tokens served per year.",
        json_schema_extra={"example": "0.6", "unit": "fraction"})
    network_per_node: Annotated[float, Field(ge=0, le=10_000_000)] | None = Field(
        default=None,
        description="Scale-out network (switch ports, optics, cables) per node, once; left out, the "
                    "catalog's dated estimate (price list extras).",
        json_schema_extra={"example": "15000", "unit": "currency per node"})
    usd_exchange_rate: Annotated[float, Field(gt=0, le=100_000)] | None = Field(
        default=None,
        description="Units of the account's currency per US dollar; required when account.currency is not"
                    " USD.",
        json_schema_extra={"example": "0.92", "unit": "currency per USD"})
    hours_per_year: Annotated[float, Field(ge=1, le=8784)] = Field(
        default=8760.0,
        description="Hours of service per year (8,760: always on).",
        json_schema_extra={"example": "8760", "unit": "h"})
    gpu_prices: dict[str, Annotated[float, Field(gt=0, le=10_000_000)]] = Field(
        default={},
        description="Purchase price per GPU by catalog GPU id, in the account's currency; replaces the "
                    "catalog price.",
        json_schema_extra={"example": "{h100-sxm: 27000}", "unit": "currency per GPU"})
    cloud_gpu_hour: dict[str, Annotated[float, Field(gt=0, le=1000)]] = Field(
        default={},
        description="Cloud price per GPU-hour by catalog GPU id, in the account's currency; replaces the "
                    "catalog price.",
        json_schema_extra={"example": "{h100-sxm: 2.5}", "unit": "currency per GPU-hour"})
    node_prices: dict[str, Annotated[float, Field(gt=0, le=100_000_000)]] = Field(
        default={},
        description="Price of a node without its GPUs by catalog platform id, in the account's currency; "
                    "replaces the catalog price.",
        json_schema_extra={"example": "{dell-xe9680: 45000}", "unit": "currency per node"})
    cloud_tier: CloudTier = Field(
        default="committed_1yr",
        description="Which cloud offer the comparison rents: hyperscaler_on_demand, committed_1yr, "
                    "committed_3yr or gpu_cloud. Default committed_1yr: a buyer weighing a "
                    "multi-year purchase for an always-on service would rent under contract, not "
                    "by the hour.",
        json_schema_extra={"example": "gpu_cloud"})
    storage_tb_per_node: Annotated[float, Field(ge=0, le=100_000)] = Field(
        default=10.0,
        description="Shared storage per node (model versions, logs).",
        json_schema_extra={"example": "10", "unit": "TB"})
    storage_per_tb_month: Annotated[float, Field(ge=0, le=100_000)] | None = Field(
        default=None,
        description="Storage price per TB-month; left out, the catalog's dated price.",
        json_schema_extra={"example": "20", "unit": "currency per TB-month"})
    software_per_gpu_year: Annotated[float, Field(ge=0, le=1_000_000)] = Field(
        default=0.0,
        description="Software licence per GPU per year (NVIDIA AI Enterprise lists 4,500 USD); "
                    "0 = open-source serving.",
        json_schema_extra={"example": "4500", "unit": "currency per GPU-year"})
    colocation_per_kw_month: Annotated[float, Field(ge=0, le=100_000)] | None = Field(
        default=None,
        description="Rack space and power capacity per kW of node power per month (0 = own data "
                    "centre); left out, the catalog's dated colocation price.",
        json_schema_extra={"example": "184", "unit": "currency per kW-month"})


class Requirements(_Strict):
    """A customer's LLM-serving requirements (inputs/<account>.yaml)."""

    schema_version: Literal[1] = Field(
        description="Version of this file format; write 1.",
        json_schema_extra={"example": "1"})
    account: Account = Field(
        description="Who the proposal is for: name, your reference, author and currency.",
        json_schema_extra={"example": "{name: Acme Corp}"})
    workloads: Annotated[list[Workload], Field(min_length=1, max_length=50)] = Field(
        description="The workloads to size, each separately (1 to 50).",
        json_schema_extra={"example": "[{name: Internal assistant, model: llama-3.1-70b, ...}]"})
    hardware: Hardware = Field(
        default=Hardware(),
        description="The configurations to try; left out, every catalog GPU on its default platform.",
        json_schema_extra={"example": "{gpus: [h100-sxm, h200-sxm]}"})
    policy: Policy = Field(
        default=Policy(),
        description="How much spare capacity to plan and how the serving engine is set up.",
        json_schema_extra={"example": "{headroom: 0.25, survive_node_loss: true}"})
    costs: Costs = Field(
        default=Costs(),
        description="What the cost of ownership assumes: power, support, amortisation, prices.",
        json_schema_extra={"example": "{electricity_per_kwh: 0.12}"})

    @model_validator(mode="after")
    def _currency(self) -> Requirements:
        if self.account.currency != "USD" and self.costs.usd_exchange_rate is None:
            raise ValueError(
                f"account.currency is {self.account.currency}, but catalog prices are in USD: "
                f"add costs.usd_exchange_rate ({self.account.currency} per US dollar, e.g. 0.92)")
        if self.account.currency == "USD" and self.costs.usd_exchange_rate not in (None, 1.0):
            raise ValueError("costs.usd_exchange_rate must be 1 (or left out) when "
                             "account.currency is USD")
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> Requirements:
        seen: set[str] = set()
        for w in self.workloads:
            if w.name.lower() in seen:
                raise ValueError(f"two workloads are named {w.name!r}: names must be unique")
            seen.add(w.name.lower())
        return self


class Loaded(BaseModel):
    """Validated requirements plus what the engine needs to know about where they came from."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    req: Requirements
    models: dict[str, Model]  # workload model string -> resolved model (catalog or config.json)
    source: str  # file name for messages
    bench: dict[int, tuple[BenchPoint, ...]] = {}  # workload index -> its benchmark points


def json_schema() -> dict[str, Any]:
    return Requirements.model_json_schema()


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


# --- error formatting -------------------------------------------------------------------


def _model_at(loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The pydantic model class that owns the field at ``loc`` (for 'did you mean')."""
    cls: Any = Requirements
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = cls.model_fields.get(part)
        if field is None:
            return None
        ann = field.annotation
        nxt = None
        for cand in (ann, *getattr(ann, "__args__", ())):
            for inner in (cand, *getattr(cand, "__args__", ())):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    nxt = inner
        if nxt is None:
            return None
        cls = nxt
    return cls if isinstance(cls, type) else None


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = str(part) if len(str(part)) <= 40 else str(part)[:37] + "..."
            out += f".{text}" if out else text
    return out


_ABSENT = object()


def _value_at(data: Any, loc: tuple[str | int, ...]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return _ABSENT
    return data


def _short(text: str, limit: int = 60) -> str:
    """``repr`` of untrusted text, bounded (a 1 MB key must not make a 1 MB message)."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _num(x: float) -> str:
    """A bound or a suggested value as a person writes it: 10,000,000 / 0.99 / 1e-05."""
    if isinstance(x, int) or (math.isfinite(x) and x == int(x) and abs(x) < 1e15):
        return f"{int(x):,}"
    return f"{x:g}"


def _plain(x: float) -> str:
    """A number as it should be typed into the YAML file (no thousands separators)."""
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


@cache
def _schema() -> dict[str, Any]:
    return Requirements.model_json_schema()


def _schema_at(loc: tuple[str | int, ...]) -> dict[str, Any] | None:
    """The JSON-schema node of the field at ``loc`` (refs resolved, ``| None`` removed)."""
    root = _schema()
    defs: dict[str, Any] = root.get("$defs", {})

    def settle(node: dict[str, Any]) -> dict[str, Any]:
        for _ in range(10):
            if "$ref" in node:
                node = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
            elif "anyOf" in node:
                options = [o for o in node["anyOf"] if o.get("type") != "null"]
                node = options[0] if options else {}
            else:
                break
        return node

    node: dict[str, Any] | None = root
    for part in loc:
        if node is None:
            return None
        node = settle(node)
        if isinstance(part, int):
            node = node.get("items")
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return None
    return settle(node) if node is not None else None


def _allowed(schema: dict[str, Any] | None) -> str:
    """What a field accepts, in words: 'a number more than 0 and at most 600'."""
    if not schema:
        return ""
    if "const" in schema:
        return str(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(str(e) for e in schema["enum"])
    kind = schema.get("type")
    if kind in ("integer", "number"):
        what = "a whole number" if kind == "integer" else "a number"
        lo, hi = schema.get("minimum"), schema.get("maximum")
        xlo = schema.get("exclusiveMinimum")
        if lo is not None and hi is not None:
            return f"{what} from {_num(lo)} to {_num(hi)}"
        if xlo is not None and hi is not None:
            return f"{what} more than {_num(xlo)} and at most {_num(hi)}"
        if lo is not None:
            return f"{what} of at least {_num(lo)}"
        return what
    if kind == "string":
        if schema.get("pattern") == "^[A-Z]{3}$":
            return "a three-letter currency code in capitals, such as USD, EUR or GBP"
        lo, hi = schema.get("minLength"), schema.get("maxLength")
        if hi is not None and lo:
            return f"one line of text, {lo} to {_num(hi)} characters"
        if hi is not None:
            return f"text of at most {_num(hi)} characters"
        return "text"
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        items = _allowed(schema.get("items"))
        size = ""
        if schema.get("maxItems") is not None:
            size = f" of {schema.get('minItems', 0)} to {schema['maxItems']} items"
        elif schema.get("minItems"):
            size = f" of at least {schema['minItems']} item" + ("s" if schema["minItems"] > 1 else "")
        return f"a list{size}" + (f", each {items}" if items else "")
    if kind == "object":
        return "a mapping of `key: value` lines indented under this key"
    return ""


_MISSING_EXAMPLES = {
    "schema_version": "`schema_version: 1` as the first line",
    "account": "`account: {name: Acme Corp}`",
    "workloads": "`workloads:` followed by one `- name: ...` item per workload (see inputs/example.yaml)",
    "model": "`model: llama-3.1-70b` (`llmsizer catalog models` lists the ids; a path to a "
             "config.json works too)",
    "concurrent_users": "`concurrent_users: 200`",
    "prompt_tokens": "`prompt_tokens: 500`",
    "output_tokens": "`output_tokens: 300`",
    "targets": "`targets: {tokens_per_s_per_user: 30}`",
    "gpu": "`gpu: h100-sxm`",
    "gpus_per_replica": "`gpus_per_replica: 8`",
    "tokens_per_s_per_replica": "`tokens_per_s_per_replica: 2500`",
}

# A number written with its unit: '2s', '500 ms', '10%', '$0.12', '10k', '1,000 tok/s'.
_NUMBER_WITH_UNIT = re.compile(
    r"^\s*(?P<cur>[$€£¥])?\s*(?P<num>[-+]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*"
    r"(?P<unit>[A-Za-z%µ]+(?:\s*/\s*[A-Za-z]+)?)?\s*$"
)
_TIME_UNITS = {"ms": 0.001, "msec": 0.001, "millisecond": 0.001, "milliseconds": 0.001, "s": 1.0,
               "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0, "mins": 60.0,
               "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0, "hour": 3600.0,
               "hours": 3600.0}
_MULTIPLIERS = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9, "bn": 1e9}
_NOISE_UNITS = {"tok/s", "tokens/s", "t/s", "tps", "tok", "tokens", "token", "users", "user",
                "gb", "kwh", "usd", "eur", "gbp", "years", "year", "yrs", "y", "x", "gpus", "gpu"}


def _number_fix(key: str, text: str) -> str | None:
    """``'ttft_s: 2'`` for ``ttft_s`` written as ``'2s'`` (or ``'2000 ms'``); None if ``text``
    is not a number with a unit this can read."""
    m = _NUMBER_WITH_UNIT.match(text)
    if m is None:
        return None
    num_text = m["num"].replace("_", "")
    if re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d*)?", num_text):
        num_text = num_text.replace(",", "")  # 10,000 -> 10000
    elif "," in num_text:
        num_text = num_text.replace(",", ".", 1) if num_text.count(",") == 1 else ""
    try:
        value = float(num_text)
    except ValueError:
        return None
    unit = re.sub(r"\s+", "", m["unit"] or "")
    if unit == "" and not m["cur"] and num_text == m["num"]:
        return None  # nothing to strip: not this helper's case
    if unit == "%":
        value /= 100
    elif unit in _TIME_UNITS and key.endswith("_s"):
        value *= _TIME_UNITS[unit]
    elif unit in _MULTIPLIERS:
        value *= _MULTIPLIERS[unit]
    elif unit and unit.lower() not in _NOISE_UNITS:
        return None
    if not math.isfinite(value):
        return None
    return f"{key}: {_plain(value)}"


def _leading_zero_fix(key: str, text: str) -> str | None:
    if re.fullmatch(r"[-+]?0\d+(?:\.\d*)?", text):
        return f"{key}: {_plain(float(text))}"
    return None


def _quoted(key: str, raw: str) -> str:
    return f'{key}: "{raw}"'


def _type_hint(kind: str, loc: tuple[str | int, ...], found: Any, located: Located,
               schema: dict[str, Any] | None) -> str:
    """How to fix a value of the wrong type, as concretely as the value allows."""
    key = next((str(p) for p in reversed(loc) if isinstance(p, str)), "value")
    numeric = (schema or {}).get("type") in ("integer", "number")
    if numeric and isinstance(found, str):
        fix = _leading_zero_fix(key, found.strip())
        if fix:
            return f"write `{fix}` (with a leading zero the value is read as text)"
        if re.fullmatch(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", found.strip()):
            return f"write the number without quotes: `{key}: {found.strip()}`"
        fix = _number_fix(key, found)
        if fix:
            unit = " (seconds: the unit is in the key name)" if key.endswith("_s") else ""
            return f"write a plain number without units: `{fix}`{unit}"
        return ("write a plain number without units or quotes, e.g. "
                f"`{key}: {'300' if schema and schema.get('type') == 'integer' else '2'}`")
    if numeric and isinstance(found, bool):
        return f"write a number, e.g. `{key}: 2`, not true/false"
    if numeric and isinstance(found, float) and (schema or {}).get("type") == "integer":
        return "write a whole number, e.g. 300"
    if kind == "string_type" and isinstance(found, bool | int | float):
        raw = located.source_text(loc) or str(found).lower()
        if _inline(raw) and isinstance(loc[-1], int):
            return f'put it in quotes so it is read as text: "{raw}"'
        if _inline(raw):
            return f"put it in quotes so it is read as text: `{_quoted(key, raw)}`"
        return "put the text in quotes"
    if kind == "bool_type" and isinstance(found, str):
        return (f"write `{key}: true` or `{key}: false` (yes/no/on/off are read as text, "
                "not as a boolean)")
    if kind == "list_type" and isinstance(found, str) and loc[-1:] in _ID_LISTS:
        items = [x.strip() for x in found.split(",") if x.strip()] or [found]
        if not all(_inline(x) for x in items) or len(items) > 10:
            return "write a list: [a, b] or one `- item` per line"
        extra = ""
        if loc[-1:] == ("gpus",):
            gpus = load_catalog().gpus
            unknown = [x for x in items if x not in gpus]
            if unknown:
                close = suggest(unknown[0], sorted(gpus))
                fixed = [x if x in gpus else (_best(x, sorted(gpus)) or x) for x in items]
                extra = f"; {_short(unknown[0], 40)} is not a catalog GPU id{close}"
                items = fixed
        return f"write a list, e.g. `{key}: [{', '.join(items)}]`{extra}"
    if kind == "list_type" and isinstance(found, dict):
        return "write a list: start each item with `- ` (e.g. `- name: ...`), as in inputs/example.yaml"
    if kind in ("model_type", "dict_type"):
        example = _MISSING_EXAMPLES.get(key, "")
        return (f"write `{key}:` followed by `key: value` lines indented under it"
                + (f", or e.g. {example}" if example.startswith(f"`{key}: {{") else ""))
    hint = _HINTS.get(kind)
    return hint or ""


_ID_LISTS = frozenset({("gpus",), ("weight_precisions",), ("kv_precisions",), ("tensor_parallel",)})


def _inline(text: str) -> bool:
    """True when untrusted text is short and plain enough to quote inside a suggestion."""
    return 0 < len(text) <= 40 and text.isprintable() and "`" not in text


def _best(word: str, names: list[str]) -> str | None:
    close = difflib.get_close_matches(word.lower(), [n.lower() for n in names], n=1, cutoff=0.5)
    if not close:
        return None
    return next(n for n in names if n.lower() == close[0])


_HINTS = {
    "list_type": "write a list, e.g. [h100-sxm] or one '- item' per line",
    "float_parsing": "write a plain number without units, e.g. 2 or 0.5",
    "int_parsing": "write a whole number without units, e.g. 300",
    "float_type": "write a plain number without units, e.g. 2 or 0.5",
    "int_type": "write a whole number without units, e.g. 300",
    "int_from_float": "write a whole number, e.g. 300",
    "string_type": "put the text in quotes",
    "bool_type": "write true or false",
    "finite_number": "use a finite number",
    "dict_type": "write a mapping of 'key: value' lines indented under this key",
    "model_type": "write a mapping of 'key: value' lines indented under this key",
}

_RANGE_KINDS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})
_LENGTH_KINDS = frozenset({"string_too_short", "string_too_long", "too_short", "too_long"})


def _clean_loc(loc: tuple[str | int, ...], data: Any) -> tuple[str | int, ...]:
    """The error's path without pydantic's union/validator branch markers (such as
    ``function-after[...]``), which it inserts between field names. A part that exists in the
    data is a field, whatever it looks like (a user's key may well contain ``[``)."""
    out: list[str | int] = []
    cur: Any = data
    for part in loc:
        in_dict = isinstance(cur, dict) and part in cur
        in_list = (isinstance(cur, list) and isinstance(part, int) and not isinstance(part, bool)
                   and -len(cur) <= part < len(cur))
        if in_dict or in_list:
            cur = cur[part]
        elif isinstance(part, str) and ("[" in part or part.startswith("function")):
            continue
        else:
            cur = None
        out.append(part)
    return tuple(out)


def _format(err: dict[str, Any], data: Any, located: Located, filename: str) -> InputError:
    loc = _clean_loc(tuple(err["loc"]), data)
    kind = err["type"]
    pos = located.position(loc)
    line, col = pos if pos else (None, None)
    field = _dotted(loc) or None
    schema = _schema_at(loc)
    allowed = _allowed(schema)
    found = _value_at(data, loc)
    shown = _short(found) if isinstance(found, str) else (
        "nothing" if found is _ABSENT else repr(found))
    if len(shown) > 60:
        shown = shown[:57] + "..."
    if kind == "extra_forbidden":
        owner = _model_at(loc)
        names = sorted(owner.model_fields) if owner else []
        key = str(loc[-1]) if loc else "?"
        msg = f"unknown key {_short(key)}{suggest(key, names)}"
        best = _best(key, names)
        if best is not None and not isinstance(found, dict | list):
            value = found if found is not _ABSENT else None
            fix = _number_fix(best, value) if isinstance(value, str) else None
            if fix is None and value is not None:
                text = located.source_text(loc) or str(value)
                fix = f"{best}: {text}" if _inline(text) else None
            msg += f"; write it as `{fix}`" if fix else f"; rename it to `{best}:`"
        elif best is not None:
            msg += f"; rename it to `{best}:`"
        msg += f"; allowed here: {', '.join(names)}"
        field = _dotted(loc[:-1]) or None
    elif kind == "missing":
        name = str(loc[-1]) if loc else "?"
        msg = f"required key {name!r} is missing"
        example = _MISSING_EXAMPLES.get(name)
        if name == "name":
            example = "`name: Acme Corp`" if loc[:1] == ("account",) else "`name: Internal assistant`"
        if example:
            msg += f"; add it, e.g. {example}"
        field = _dotted(loc[:-1]) or None
    elif kind == "value_error":
        msg = str(err["msg"]).removeprefix("Value error, ")
        # a cross-field rule names the field it is about first: point at that line
        named = re.match(r"[a-z_]+(?:\.[a-z_]+)*", msg)
        if named is not None:
            sub = (*loc, *named.group().split("."))
            if _value_at(data, sub) is not _ABSENT and (pos := located.position(sub)):
                line, col = pos
        if loc == () and msg.startswith("two workloads are named") and isinstance(data, dict):
            seen: set[str] = set()
            for i, w in enumerate(data.get("workloads") or []):
                wname = w.get("name") if isinstance(w, dict) else None
                if isinstance(wname, str) and wname.lower() in seen:
                    pos = located.position(("workloads", i, "name"))
                    line, col = pos if pos else (line, col)
                    field = f"workloads[{i}].name"
                    break
                if isinstance(wname, str):
                    seen.add(wname.lower())
    elif found is None and kind not in _RANGE_KINDS:
        msg = "has no value (nothing after the colon)"
        if allowed:
            msg += f"; write {allowed}"
        msg += ", or delete the line if the key is optional"
    elif isinstance(found, float) and not math.isfinite(found):
        msg = f"must be a finite number (found {shown})"
        if allowed:
            msg += f"; allowed: {allowed}"
    elif kind in _RANGE_KINDS:
        msg = f"{err['msg']} (found {shown})"
        if allowed:
            msg += f"; allowed: {allowed}"
        maximum = (schema or {}).get("maximum")
        if (isinstance(found, int | float) and maximum is not None and maximum <= 1
                and 1 < found <= 100):
            msg += f"; this is a fraction: write {_plain(found / 100)} for {_plain(found)} %"
    elif kind in _LENGTH_KINDS:
        size = f", {len(found):,} characters" if isinstance(found, str) else (
            f", {len(found):,} items" if isinstance(found, list | dict) else "")
        msg = f"{err['msg']} (found {shown}{size})"
        if allowed:
            msg += f"; allowed: {allowed}"
    elif kind == "literal_error":
        choices = [str(e) for e in (schema or {}).get("enum", [])]
        msg = f"{err['msg']} (found {shown})"
        if isinstance(found, str) and choices:
            msg += suggest(found, choices)
    elif kind == "string_pattern_mismatch":
        msg = f"must be {allowed or 'text in the documented format'} (found {shown})"
        if isinstance(found, str) and re.fullmatch(r"[A-Za-z]{3}", found.strip()):
            msg += f"; write `{loc[-1]}: {found.strip().upper()}`"
    elif kind in ("single_line", "unsafe_text"):
        msg = f"{err['msg']} (found {shown})"
    else:
        problem = str(err["msg"])
        if kind in ("model_type", "dict_type"):
            problem = "must be a mapping of `key: value` lines"
        msg = f"{problem} (found {shown})"
        hint = _type_hint(kind, loc, found, located, schema)
        if hint:
            msg += f"; {hint}"
        if allowed and (schema or {}).get("type") in ("integer", "number"):
            msg += f" (allowed: {allowed})"
    return InputError(msg, file=filename, line=line, column=col, field=field)


# --- loading ----------------------------------------------------------------------------


def parse(located: Located, filename: str) -> Requirements:
    data = located.data
    if not isinstance(data, dict):
        raise InputError("the top level must be a mapping (key: value lines)", file=filename,
                         line=1, column=1)
    version = data.get("schema_version", SCHEMA_VERSION)
    if type(version) is not int or version != SCHEMA_VERSION:
        pos = located.position(("schema_version",))
        if isinstance(version, str) and version.strip() == str(SCHEMA_VERSION):
            msg = f"write the version as a number without quotes: `schema_version: {SCHEMA_VERSION}`"
        elif isinstance(version, int | float) and not isinstance(version, bool):
            msg = (f"schema_version {_plain(version)} is not supported; this llmsizer reads "
                   f"`schema_version: {SCHEMA_VERSION}`")
        else:
            shown = _short(version) if isinstance(version, str) else (
                "nothing" if version is None else type(version).__name__)
            msg = (f"must be the number {SCHEMA_VERSION} (found {shown}); write "
                   f"`schema_version: {SCHEMA_VERSION}`")
        raise InputError(msg, file=filename, line=pos[0] if pos else None,
                         column=pos[1] if pos else None, field="schema_version")
    try:
        return Requirements.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_input=False, include_url=False)
        # A misspelt key shows up as 'unknown key' AND 'missing key': the first explains both.
        errors.sort(key=lambda e: e["type"] != "extra_forbidden")
        raise _format(dict(errors[0]), data, located, filename) from None


def _err_at(located: Located, filename: str, loc: tuple[str | int, ...], msg: str) -> InputError:
    pos = located.position(loc)
    return InputError(msg, file=filename, line=pos[0] if pos else None,
                      column=pos[1] if pos else None, field=_dotted(loc))


def resolve(req: Requirements, located: Located, path: Path, catalog: Catalog, *,
            models: dict[str, Model] | None = None,
            bench: dict[int, tuple[BenchPoint, ...]] | None = None) -> Loaded:
    """Check every catalog id the requirements name; resolve models (catalog or config.json)
    and read the benchmark files of measured workloads.

    ``models`` (config.json models by workload model string) and ``bench`` (points by
    workload index) are given when the requirements come from a workbook that embeds them
    (:mod:`llmsizer.documents.reread`): then no file beside the requirements is read."""
    fname = located.filename

    def known(value: str, table: dict[str, Any], kind: str, loc: tuple[str | int, ...]) -> None:
        if value not in table:
            names = sorted(table)
            hint = ""
            if kind == "model":
                hint = " (or the path of a Hugging Face config.json next to this file)"
            raise _err_at(located, fname, loc,
                          f"unknown {kind} {_short(value)}{suggest(value, names)}; "
                          f"valid: {', '.join(names)}{hint}")

    for i, gid in enumerate(req.hardware.gpus or []):
        known(gid, catalog.gpus, "GPU", ("hardware", "gpus", i))
    if req.hardware.platform:
        known(req.hardware.platform, catalog.platforms, "platform", ("hardware", "platform"))
        plat = catalog.platforms[req.hardware.platform]
        for i, gid in enumerate(req.hardware.gpus or []):
            if gid not in plat.gpus:
                raise _err_at(located, fname, ("hardware", "gpus", i),
                              f"GPU {gid!r} does not fit platform {req.hardware.platform!r}, "
                              f"which takes {', '.join(plat.gpus)}")
    for section in ("gpu_prices", "cloud_gpu_hour"):
        for gid in getattr(req.costs, section):
            known(gid, catalog.gpus, "GPU", ("costs", section, gid))
    for pid in req.costs.node_prices:
        known(pid, catalog.platforms, "platform", ("costs", "node_prices", pid))
    resolved: dict[str, Model] = {}
    points: dict[int, tuple[BenchPoint, ...]] = {}
    for i, w in enumerate(req.workloads):
        if w.measured:
            known(w.measured.gpu, catalog.gpus, "GPU", ("workloads", i, "measured", "gpu"))
            if w.measured.file is not None:
                if bench is not None:
                    points[i] = bench.get(i, ())
                else:
                    points[i] = _bench_points(w.measured, located, path, catalog, i)
        if w.model in resolved:
            continue
        if w.model.endswith(".json"):
            from .modelconfig import model_from_config

            if models is not None and w.model in models:
                resolved[w.model] = models[w.model]
                continue
            try:
                resolved[w.model] = model_from_config(path.parent, w.model)
            except InputError as exc:
                raise _err_at(located, fname, ("workloads", i, "model"), exc.message) from None
        else:
            known(w.model, catalog.models, "model", ("workloads", i, "model"))
            resolved[w.model] = catalog.models[w.model]
    return Loaded(req=req, models=resolved, source=fname, bench=points)


def _bench_points(m: Measured, located: Located, path: Path, catalog: Catalog,
                  i: int) -> tuple[BenchPoint, ...]:
    """The points of a workload's benchmark files, checked against its measured block."""
    from .benchfiles import gpu_names_conflict, group_gpus, read_bench_files

    fname = located.filename
    loc: tuple[str | int, ...] = ("workloads", i, "measured", "file")
    try:
        found = read_bench_files(path.parent, m.files, m.format)
    except InputError as exc:
        raise _err_at(located, fname, loc, exc.message) from None
    gpu = catalog.gpus[m.gpu]
    for p in found:
        where = f"benchmark file {p.file!r}"
        if gpu_names_conflict(p.gpu_name, gpu.name):
            raise _err_at(located, fname, ("workloads", i, "measured", "gpu"),
                          f"{where} ran on {p.gpu_name!r}, but the block says gpu: {m.gpu} "
                          f"({gpu.name}); state the GPU the benchmark ran on")
        group = group_gpus(p)
        if group is not None and group != m.gpus_per_replica:
            raise _err_at(located, fname, ("workloads", i, "measured", "gpus_per_replica"),
                          f"{where} ran {group} GPUs per model copy (tp {p.tp}, pp {p.pp or 1}), "
                          f"but the block says gpus_per_replica: {m.gpus_per_replica}")
        if p.gpu_count is not None and m.gpu_count is not None and p.gpu_count != m.gpu_count:
            raise _err_at(located, fname, ("workloads", i, "measured", "gpu_count"),
                          f"{where} ran on {p.gpu_count} GPUs, but the block says gpu_count: "
                          f"{m.gpu_count}; delete gpu_count (the file states it)")
        if p.gpu_count is not None and p.gpu_count % m.gpus_per_replica:
            raise _err_at(located, fname, ("workloads", i, "measured", "gpus_per_replica"),
                          f"{where} ran on {p.gpu_count} GPUs, not a whole number of replicas of "
                          f"gpus_per_replica: {m.gpus_per_replica}")
    return tuple(found)


def load(path: Path | str, catalog: Catalog | None = None) -> Loaded:
    """Read, validate and resolve one requirements file; raises InputError."""
    p = Path(path)
    located = load_file(p)
    req = parse(located, located.filename)
    return resolve(req, located, p, catalog or load_catalog())
