"""Customer requirements: the strict schema of ``inputs/<account>.yaml`` as pydantic models.

Every field carries its description, unit and example: ``python -m llmsizer.documents.docgen`` writes
docs/requirements.md, docs/requirements-reference.yaml and docs/requirements.schema.json from
these models (a test checks they did not drift); ``inputs/example.yaml`` is a commented example.
Reading a file is :mod:`.loader`; the messages for what the schema refuses, :mod:`.schema_messages`.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..model.catalog import CloudTier

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


def _not_a_boolean(value: Any) -> Any:
    """``true`` equals 1 in Python, so a Literal[1, 2, 4, 8] takes it even in strict mode
    (issue 25: `tensor_parallel: [1, true]` was accepted)."""
    if isinstance(value, bool):
        raise PydanticCustomError("literal_error", "Input should be {expected}",
                                  {"expected": "1, 2, 4 or 8, not true/false"})
    return value


TpDegree = Annotated[Literal[1, 2, 4, 8], BeforeValidator(_not_a_boolean)]


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
    ttft_p50_s: Annotated[float, Field(ge=0.01, le=600)] | None = Field(
        default=None, description="Time to first token that half of the requests meet.",
        json_schema_extra={"example": "1", "unit": "s"})
    ttft_p90_s: Annotated[float, Field(ge=0.01, le=600)] | None = Field(
        default=None, description="Time to first token that 90 % of the requests meet.",
        json_schema_extra={"example": "1.5", "unit": "s"})
    ttft_p95_s: Annotated[float, Field(ge=0.01, le=600)] | None = Field(
        default=None, description="Time to first token that 95 % of the requests meet.",
        json_schema_extra={"example": "1.5", "unit": "s"})
    ttft_p99_s: Annotated[float, Field(ge=0.01, le=600)] | None = Field(
        default=None, description="Time to first token that 99 % of the requests meet.",
        json_schema_extra={"example": "3", "unit": "s"})
    itl_p50_ms: Annotated[float, Field(ge=0.1, le=60_000)] | None = Field(
        default=None, description="Inter-token latency (time between two output tokens after "
                                  "the first) that half of the tokens meet.",
        json_schema_extra={"example": "40", "unit": "ms"})
    itl_p90_ms: Annotated[float, Field(ge=0.1, le=60_000)] | None = Field(
        default=None, description="Inter-token latency that 90 % of the tokens meet.",
        json_schema_extra={"example": "60", "unit": "ms"})
    itl_p95_ms: Annotated[float, Field(ge=0.1, le=60_000)] | None = Field(
        default=None, description="Inter-token latency that 95 % of the tokens meet.",
        json_schema_extra={"example": "80", "unit": "ms"})
    itl_p99_ms: Annotated[float, Field(ge=0.1, le=60_000)] | None = Field(
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


# The load keys and what each takes (for the message when one is left without a value).
_LOAD_KEYS = {"concurrent_users": "a whole number from 1 to 10,000,000",
              "requests_per_s": "a number above 0 (requests per second)",
              "burstiness": "a number from 0 to 10 (1 = random arrivals)",
              "named_users": "a whole number from 1 to 100,000,000",
              "requests_per_user_per_hour": "a number above 0",
              "peak_to_average": "a number from 1 to 100"}


class Workload(_Strict):
    """One workload: a model, its users at peak, the request shape and the targets."""

    name: Text = Field(
        description="Name of the workload, unique within the file; heads its section of the proposal.",
        json_schema_extra={"example": "Internal assistant"})
    model: Text = Field(
        description="Catalog model id (`llmsizer catalog models`), or the path of a Hugging Face "
                    "config.json next to this file.",
        json_schema_extra={"example": "llama-3.1-70b"})
    concurrent_users: Annotated[int, Field(ge=1, le=10_000_000)] | None = Field(
        default=None,
        description="Load, first form: users generating at the same time at peak (not registered "
                    "users). State exactly one of concurrent_users, requests_per_s or named_users.",
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

    @model_validator(mode="before")
    @classmethod
    def _load_key_without_value(cls, data: Any) -> Any:
        """A load key with nothing after the colon is a mistake, not "the other form"."""
        if isinstance(data, dict):
            for key, allowed in _LOAD_KEYS.items():
                if key in data and data[key] is None:
                    raise ValueError(f"{key}: has no value (nothing after the colon); write "
                                     f"{allowed}, or delete the line")
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        self._one_load()
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


    def _one_load(self) -> None:
        """Exactly one load form: each alone is a complete statement of the peak."""
        forms = [name for name, given in (
            ("concurrent_users", self.concurrent_users is not None),
            ("requests_per_s", self.requests_per_s is not None),
            ("named_users", self.named_users is not None)) if given]
        if len(forms) != 1:
            found = " and ".join(forms) if forms else "none of them"
            raise ValueError(
                "state the load exactly one way: concurrent_users (users at the same time), "
                "requests_per_s (peak arrivals per second) or named_users with "
                f"requests_per_user_per_hour and peak_to_average; found {found}")
        population = ("requests_per_user_per_hour", "peak_to_average")
        if self.named_users is not None:
            missing = [n for n in population if getattr(self, n) is None]
            if missing:
                raise ValueError(f"named_users needs {' and '.join(missing)} too (e.g. "
                                 "requests_per_user_per_hour: 6, peak_to_average: 3)")
        else:
            extra = [n for n in population if getattr(self, n) is not None]
            if extra:
                raise ValueError(f"{' and '.join(extra)} describe a user population: use them "
                                 "with named_users (or delete them)")
        if self.burstiness is not None and self.concurrent_users is not None:
            raise ValueError("burstiness describes arrivals: use it with requests_per_s or "
                             "named_users (or delete it)")

    @property
    def load_form(self) -> str:
        """'users', 'rate' or 'population': how the load was stated."""
        if self.named_users is not None:
            return "population"
        return "rate" if self.requests_per_s is not None else "users"


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
    tensor_parallel: Annotated[list[TpDegree], Field(min_length=1)] | None = Field(
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


def json_schema() -> dict[str, Any]:
    return Requirements.model_json_schema()


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
