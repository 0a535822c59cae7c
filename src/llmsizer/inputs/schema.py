"""Customer requirements: the strict schema of ``inputs/<account>.yaml`` as pydantic models.

Every field carries its description, unit and example: ``python -m llmsizer.documents.docgen`` writes
docs/requirements.md, docs/requirements-reference.yaml and docs/requirements.schema.json from
these models (a test checks they did not drift); ``inputs/example.yaml`` is a commented example.
Reading a file is :mod:`.loader`; the messages for what the schema refuses, :mod:`.schema_messages`.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from ..model.catalog import CloudTier
from .rules import MONEY_LIMITS_USD, requirements_problems, values_of
from .schema_workload import (
    Account,
    PrecisionId,
    Text,
    TpDegree,
    Workload,
    _Strict,
)


class Hardware(_Strict):
    """Which GPUs, platforms, precisions and tensor-parallel degrees to consider."""

    gpus: Annotated[list[Text], Field(min_length=1, max_length=50)] | None = Field(
        default=None,
        description="Catalog GPU ids to consider; left out, every catalog GPU.",
        json_schema_extra={"example": "[h100-sxm, h200-sxm]"})
    platform: Text | None = Field(
        default=None,
        description="Catalog platform id (server or node) to use for every GPU; left out, every "
                    "catalog platform that carries the GPU is tried and the cheapest kept.",
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

    @field_validator("gpus", "weight_precisions", "kv_precisions", "tensor_parallel")
    @classmethod
    def _each_once(cls, items: list[Any] | None) -> list[Any] | None:
        # a repeat would size (and list) every option of that item twice; every repeat is
        # told, so that a list with two is fixed in one run
        counts: dict[Any, int] = {}
        for item in items or ():
            counts[item] = counts.get(item, 0) + 1
        repeats = [f"{item} {_TIMES.get(n, f'{n} times')}" for item, n in counts.items() if n > 1]
        if repeats:
            told = repeats[0] if len(repeats) == 1 else (
                f"{', '.join(repeats[:-1])} and {repeats[-1]}")
            raise ValueError(f"lists {told}; list each once")
        return items


_TIMES = {2: "twice", 3: "three times"}


class Policy(_Strict):
    """Headroom, resilience and serving-engine settings."""

    deployment: Literal["on_prem", "cloud", "cheapest"] = Field(
        default="on_prem",
        description="How the proposal recommends running the service: on_prem (buy the servers, "
                    "the default), cloud (rent the same GPUs at costs.cloud_tier) or cheapest "
                    "(whichever of buying, renting and the hosted API costs least per year). "
                    "It also chooses the plan: the one cheapest to buy (on_prem), cheapest to "
                    "rent (cloud, GPUs without a cloud price last) or, for cheapest, the "
                    "cheaper of the two, each in its own way. "
                    "Whenever another way costs less than the one recommended, the executive "
                    "summary says so with both figures and the customer's account.reasons.",
        json_schema_extra={"example": "cheapest", "unit": "mode"})

    headroom: Annotated[float, Field(ge=0, le=3)] = Field(
        default=0.25,
        description="Extra capacity above peak demand for bursts and growth (0.25 = 25 %).",
        json_schema_extra={"example": "0.25", "unit": "fraction"})
    survive_node_loss: bool = Field(
        default=False,
        description="Add one node's worth of spare replicas so peak demand is still met with a node down "
                    "(N+1).",
        json_schema_extra={"example": "true"})
    disaggregated: Literal["auto", "never"] = Field(
        default="auto",
        description="Disaggregated serving (separate prefill and decode replicas, a prompt's "
                    "cache moved once between them): auto (also tried where the platform "
                    "states its network, recommended only when it costs less at the targets) "
                    "or never.",
        json_schema_extra={"example": "never", "unit": "mode"})
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
    storage_read_gb_per_s: Annotated[float, Field(ge=0.01, le=1000)] | None = Field(
        default=None,
        description="Read bandwidth of the storage a node loads model weights from when a replica "
                    "restarts; left out, the catalog constant (local NVMe).",
        json_schema_extra={"example": "5", "unit": "GB/s"})
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


def _usd_at_most(key: str) -> Any:
    # A money amount's upper bound is in US dollars, checked at the account's exchange rate
    # (inputs/rules.py): 31 JPY per kWh is a usual tariff, 31 USD is not.
    return Field(json_schema_extra={"usd_maximum": MONEY_LIMITS_USD[key]})


class Costs(_Strict):
    """Power, support, amortisation and price overrides for the cost of ownership."""

    electricity_per_kwh: Annotated[float, Field(ge=0), _usd_at_most("electricity_per_kwh")] = Field(
        default=0.12,
        description="Electricity tariff for the data centre, in the account's currency; left out, "
                    "0.12 US dollars converted at usd_exchange_rate.",
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
    network_per_node: Annotated[float, Field(ge=0), _usd_at_most("network_per_node")] | None = Field(
        default=None,
        description="Network (switch ports, optics, cables) per node, once, on every node; left "
                    "out, each server's from the catalog's dated prices per port (price list "
                    "extras): the GPU fabric's share on servers built for one (HGX/DGX, NVL72), "
                    "plus its front-end ports.",
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
    gpu_prices: dict[str, Annotated[float, Field(gt=0), _usd_at_most("gpu_prices")]] = Field(
        default={},
        description="Purchase price per GPU by catalog GPU id, in the account's currency; replaces the "
                    "catalog price.",
        json_schema_extra={"example": "{h100-sxm: 27000}", "unit": "currency per GPU"})
    cloud_gpu_hour: dict[str, Annotated[float, Field(gt=0), _usd_at_most("cloud_gpu_hour")]] = Field(
        default={},
        description="Cloud price per GPU-hour by catalog GPU id, in the account's currency; replaces the "
                    "catalog price.",
        json_schema_extra={"example": "{h100-sxm: 2.5}", "unit": "currency per GPU-hour"})
    node_prices: dict[str, Annotated[float, Field(gt=0), _usd_at_most("node_prices")]] = Field(
        default={},
        description="Price of a node without its GPUs by catalog platform id, in the account's currency; "
                    "replaces the catalog price.",
        json_schema_extra={"example": "{dell-xe9680: 45000}", "unit": "currency per node"})
    api_input_per_million: dict[str, Annotated[
            float, Field(ge=0), _usd_at_most("api_input_per_million")]] = Field(
        default={},
        description="A hosted API's price per million input tokens by model id, in the account's "
                    "currency; replaces the catalog's listed price (0 = none listed).",
        json_schema_extra={"example": "{deepseek-r1: 1.2}", "unit": "currency per million tokens"})
    api_output_per_million: dict[str, Annotated[
            float, Field(ge=0), _usd_at_most("api_output_per_million")]] = Field(
        default={},
        description="A hosted API's price per million output tokens by model id, in the "
                    "account's currency; replaces the catalog's listed price (0 = none listed).",
        json_schema_extra={"example": "{deepseek-r1: 5}", "unit": "currency per million tokens"})
    retrieval_api_per_million: dict[Literal["embed", "rerank"], Annotated[
            float, Field(ge=0), _usd_at_most("retrieval_api_per_million")]] = Field(
        default={},
        description="The compared hosted embedding (embed) or reranking (rerank) API's price "
                    "per million input tokens, in the account's currency; replaces the "
                    "catalog's listed price (0 = none listed).",
        json_schema_extra={"example": "{embed: 0.02}", "unit": "currency per million tokens"})
    cloud_tier: CloudTier = Field(
        default="committed_1yr",
        description="Which cloud offer the comparison rents: hyperscaler_on_demand, committed_1yr, "
                    "committed_3yr or gpu_cloud. Default committed_1yr: a buyer weighing a "
                    "multi-year purchase for an always-on service would rent under contract, not "
                    "by the hour. Every GPU is priced in this one tier; a GPU without a dated "
                    "price in it gets one derived by the catalog's ratio between tiers, flagged "
                    "'derived'.",
        json_schema_extra={"example": "gpu_cloud", "unit": "tier"})
    storage_tb_per_node: Annotated[float, Field(ge=0, le=100_000)] = Field(
        default=10.0,
        description="Shared storage per node (model versions, logs).",
        json_schema_extra={"example": "10", "unit": "TB"})
    storage_per_tb_month: Annotated[float, Field(ge=0), _usd_at_most("storage_per_tb_month")] | None = Field(
        default=None,
        description="Storage price per TB-month; left out, the catalog's dated price.",
        json_schema_extra={"example": "20", "unit": "currency per TB-month"})
    software_per_gpu_year: Annotated[float, Field(ge=0), _usd_at_most("software_per_gpu_year")] = Field(
        default=0.0,
        description="Software licence per GPU per year (NVIDIA AI Enterprise lists 4,500 USD); "
                    "0 = open-source serving.",
        json_schema_extra={"example": "4500", "unit": "currency per GPU-year"})
    nvidia_ai_enterprise: bool = Field(
        default=False,
        description="true: license NVIDIA AI Enterprise for every GPU bought, at its published "
                    "price per GPU-year (the catalog's dated price), when software_per_gpu_year "
                    "is not given. Default false: open-source serving needs no licence.",
        json_schema_extra={"example": "true", "unit": "yes/no"})
    kw_per_rack: Annotated[float, Field(gt=0, le=1000)] | None = Field(
        default=None,
        description="Power budget of one rack in the data centre, for the bill of materials' "
                    "rack count; left out, the catalog's estimate (40 kW).",
        json_schema_extra={"example": "17", "unit": "kW"})
    colocation_per_kw_month: Annotated[
        float, Field(ge=0), _usd_at_most("colocation_per_kw_month")] | None = Field(
        default=None,
        description="Rack space and power capacity per kW of node power per month (0 = own data "
                    "centre); left out, the catalog's dated colocation price.",
        json_schema_extra={"example": "184", "unit": "currency per kW-month"})


def default_tariff(currency: Any, rate: Any) -> float | None:
    """The electricity tariff a file that leaves it out gets, in a currency other than USD:
    the default 0.12 US dollars at ``usd_exchange_rate``; None for USD, or without a usable
    rate (its own message says so). The web form's placeholder shows it too (web/forms.py)."""
    if (not isinstance(currency, str) or currency == "USD" or isinstance(rate, bool)
            or not isinstance(rate, int | float) or not 0 < rate < math.inf):
        return None
    usd = float(Costs.model_fields["electricity_per_kwh"].default)
    return round(usd * rate, 6)


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
        description="The configurations to try; left out, every catalog GPU on every platform "
                    "that carries it.",
        json_schema_extra={"example": "{gpus: [h100-sxm, h200-sxm]}"})
    policy: Policy = Field(
        default=Policy(),
        description="How much spare capacity to plan and how the serving engine is set up.",
        json_schema_extra={"example": "{headroom: 0.25, survive_node_loss: true}"})
    costs: Costs = Field(
        default=Costs(),
        description="What the cost of ownership assumes: power, support, amortisation, prices.",
        json_schema_extra={"example": "{electricity_per_kwh: 0.12}"})

    @model_validator(mode="before")
    @classmethod
    def _tariff_in_currency(cls, data: Any) -> Any:
        """The default tariff is in US dollars: 0.12 yen per kWh would make power free."""
        if not isinstance(data, dict):
            return data
        account, costs = data.get("account"), data.get("costs", {})
        currency = account.get("currency") if isinstance(account, dict) else None
        rate = costs.get("usd_exchange_rate") if isinstance(costs, dict) else None
        tariff = default_tariff(currency, rate)
        if not isinstance(costs, dict) or tariff is None or "electricity_per_kwh" in costs:
            return data
        return {**data, "costs": {**costs, "electricity_per_kwh": tariff}}

    @model_validator(mode="after")
    def _consistent(self) -> Requirements:
        problems = requirements_problems(values_of(self))
        if problems:
            raise ValueError(problems[0])  # the loader tells them all (inputs/rules.py)
        return self


def json_schema() -> dict[str, Any]:
    return Requirements.model_json_schema()


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
