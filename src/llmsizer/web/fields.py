"""The form's fields: each requirement the account page shows, by the field path the loader's
messages use below its section (``targets.ttft_s`` under ``workloads[i]``), with its label,
its kind of box, the schema's help in the form's words and the schema's default as the
placeholder. The groups a workload shows by the way its load is stated (``LOAD_FORMS``) and
by what it serves (``KIND_FORMS``) are here too; :mod:`.forms` turns a submitted form into
requirements and back. No number is computed here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic_core import PydanticUndefined

from ..documents.proposal.format import precision_name
from ..inputs.schema import Costs, Hardware, Policy, default_tariff
from ..inputs.schema_workload import Account, Measured, Targets, Workload
from ..model.catalog import CLOUD_TIERS, Catalog, load_catalog
from ..sizing.costs import tier_words
from . import percent

CONFIG = "model_config"  # a workload's hidden field: the content of its uploaded config.json



@dataclass(frozen=True)
class Field:
    """One form field: its path below its section, the words shown, how it is typed."""

    key: str
    label: str
    kind: str  # text | number | choice | bool | list | lines (a textarea, one item a line)
    help: str = ""
    choices: tuple[str, ...] = ()
    default: str = ""  # the schema's default, shown as the placeholder
    words: tuple[str, ...] = ()  # the choices in customer words, when their ids are not

    def word(self, choice: str) -> str:
        """The words shown for one choice ('' when the choice has none of its own)."""
        return dict(zip(self.choices, self.words, strict=False)).get(choice, "")


def display(catalog_id: str) -> str:
    """A catalog id (GPU, model, platform, embedder) as the form shows it: the catalog's name (the
    value sent stays the id the YAML holds)."""
    cat = load_catalog()
    for table in (cat.gpus, cat.models, cat.platforms, cat.embedders):
        entry = table.get(catalog_id)
        if entry is not None:
            return str(entry.name)
    return precision_name(catalog_id) if catalog_id in cat.precisions else catalog_id


def shown(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))  # 2e10 tokens shows as 20000000000, not 20000000000.0
    return "" if v is None else str(v)


def _help(model: Any, name: str) -> str:
    return str(model.model_fields[name].description or "")


def _default(model: Any, name: str) -> str:
    d = model.model_fields[name].default
    return "" if d is None or d is PydanticUndefined or isinstance(d, dict | list) else shown(d)


# A catalog file or a doc the schema's help cites: the form's reader has neither
_FILE_NOTE = re.compile(r"\s*\((?:[^()]*\s)?(?:catalogs|docs)/[^()]*\)")


# A choice's id where the help names it: an id that is no English word ("serving-stack",
# "on_prem") wherever it stands; a word ("cloud", "cheapest") only where the help lists it
# with what it means, "cloud (rent …)", not in "cheapest to rent".
_CHOICE_AT = re.compile(r"(?<![\w“-])([a-z0-9]+(?:[-_][a-z0-9]+)*)(?![\w”-])( \([^()]*\))?")


def _chosen(m: re.Match[str], *, choice: str, word: str) -> str:
    if m[1] != choice or not (m[2] or re.search(r"[-_]", choice)):
        return m[0]
    # the list's words already say what its parentheses said ("serving stack (Text Embeddings
    # Inference, …)"): keep only whether it is the default
    said = m[2] or ""
    if "(" in word and said:
        said = " (the default)" if "default" in said else ""
    return f"“{word}”{said}"


def _f(model: Any, key: str, label: str, kind: str = "number",
       choices: Iterable[str] = (), words: Iterable[str] = ()) -> Field:
    """A field with the schema's help in the form's words: each choice by the words its list
    shows ("cloud (rent …)" -> "“Renting the GPUs in a cloud” (rent …)"), no file cited."""
    name = key.rpartition(".")[2]
    choices, words = tuple(choices), tuple(words)
    helped = _FILE_NOTE.sub("", _help(model, name))
    for choice, word in sorted(zip(choices, words, strict=False), key=lambda c: -len(c[0])):
        if word:
            helped = _CHOICE_AT.sub(functools.partial(_chosen, choice=choice, word=word), helped)
    default = _default(model, name)
    if percent.is_fraction(model, name):  # the form takes a fraction in percent
        helped, default = percent.help_words(helped), percent.shown(default) if default else ""
    return Field(key, label, kind, helped, choices, default, words)


ACCOUNT_FIELDS = (
    _f(Account, "name", "Customer name", "text"),
    _f(Account, "id", "Your reference", "text"),
    _f(Account, "prepared_by", "Prepared by", "text"),
    _f(Account, "currency", "Currency", "text"),
    _f(Account, "notes", "Notes", "text"),
    _f(Account, "reasons", "Why this way of running it (one reason a line)", "lines"),
)
WORKLOAD_FIELDS = (
    _f(Workload, "name", "Workload name", "text"),
    # the schema's help says "the path of a config.json next to this file": the form has no
    # folder, it takes the file itself (review round 19)
    Field("model", "Model", "choice",
          "A model of the catalog, or your model's Hugging Face config.json: choose the file "
          "under this field and press Use it. Compare with: alternatives sized under the same "
          "load, targets and hardware; the proposal compares them and recommends the cheapest "
          "that meets the targets."),
)
# Models compared with the workload's model (``model: [it, these...]``): a list of its own in the
# form, sent after the model, joined to it by form_to_data and split from it by form_values.
COMPARE = "compare_models"
# What the workload serves: one kind per workload; each kind has fields of its own.
KIND = _f(Workload, "kind", "Serves", "choice", ("generate", "embed", "rerank"),
          ("Answers (a language model)", "Embeddings (text to vectors)",
           "Reranking (query-passage scores)"))
EMBED_FIELDS = (
    _f(Workload, "tokens_per_request", "Tokens per query"),
    _f(Workload, "corpus_tokens", "Corpus tokens (re-indexed offline)"),
    _f(Workload, "reindex_within_hours", "Re-index the corpus within (hours)"),
    _f(Workload, "search_latency_s", "Vector search time per query (s)"),
)
RERANK_FIELDS = (
    _f(Workload, "candidates_per_request", "Passages scored per query"),
    _f(Workload, "tokens_per_pair", "Tokens per query-passage pair"),
)
LATENCY_FIELDS = (_f(Targets, "targets.latency_p95_s", "95 % of queries within (s)"),)
# the encoder's serving engine: embed and rerank share it (catalog encoder engine classes)
_ENGINES = load_catalog().encoder_engines
ENGINE_FIELDS = (_f(Workload, "engine", "Serving engine", "choice", tuple(_ENGINES),
                    (e.name for e in _ENGINES.values())),)
# How the load is stated: the schema's three ways, one chosen per workload (``load_as``).
LOAD_AS = "load_as"  # the chooser's name below the workload; no requirement of its own
USERS_FIELDS = (_f(Workload, "concurrent_users", "Concurrent users at peak"),)
RATE_FIELDS = (_f(Workload, "requests_per_s", "Requests per second at peak"),)
POPULATION_FIELDS = (
    _f(Workload, "named_users", "Named users"),
    _f(Workload, "requests_per_user_per_hour", "Requests per user per hour"),
    _f(Workload, "peak_to_average", "Busiest hour / average hour"),
)
ARRIVAL_FIELDS = (_f(Workload, "burstiness", "Burstiness (1 = random arrivals)"),)
# (key, words, its fields): the arrival fields belong to the rate and population ways
LOAD_FORMS = (
    ("users", "Concurrent users", USERS_FIELDS),
    ("rate", "Request rate", (*RATE_FIELDS, *ARRIVAL_FIELDS)),
    ("population", "User population", (*POPULATION_FIELDS, *ARRIVAL_FIELDS)),
)
LOAD_FIELDS = (*USERS_FIELDS, *RATE_FIELDS, *POPULATION_FIELDS, *ARRIVAL_FIELDS)

SHAPE_FIELDS = (
    _f(Workload, "prompt_tokens", "Prompt tokens"),
    _f(Workload, "output_tokens", "Output tokens"),
    _f(Workload, "max_context_tokens", "KV reserved per request (tokens)"),
    _f(Workload, "prefix_cache_hit", "Prefix-cache hit share (%)"),
)
TARGET_FIELDS = (
    _f(Targets, "targets.tokens_per_s_per_user", "Tokens/s per user"),
    _f(Targets, "targets.response_time_s", "Response time (s): sets tokens/s per user"),
    _f(Targets, "targets.ttft_s", "First token within (s)"),
    _f(Targets, "targets.system_tokens_per_s", "System tokens/s"),
    # percentile targets (issue 21): definitions in docs/calculations.md, "Latency targets"
    _f(Targets, "targets.ttft_p50_s", "First token, median (s)"),
    _f(Targets, "targets.ttft_p90_s", "First token, 90th percentile (s)"),
    _f(Targets, "targets.ttft_p95_s", "First token, 95th percentile (s)"),
    _f(Targets, "targets.ttft_p99_s", "First token, 99th percentile (s)"),
    _f(Targets, "targets.itl_p50_ms", "Inter-token latency, median (ms)"),
    _f(Targets, "targets.itl_p90_ms", "Inter-token latency, 90th percentile (ms)"),
    _f(Targets, "targets.itl_p95_ms", "Inter-token latency, 95th percentile (ms)"),
    _f(Targets, "targets.itl_p99_ms", "Inter-token latency, 99th percentile (ms)"),
    _f(Targets, "targets.e2e_p95_s", "Whole answer, 95th percentile (s)"),
)
MEASURED_FIELDS = (
    _f(Measured, "measured.gpu", "Benchmark GPU", "choice"),
    _f(Measured, "measured.gpus_per_replica", "GPUs per model copy"),
    _f(Measured, "measured.tokens_per_s_per_replica", "Measured tokens/s per copy"),
    _f(Measured, "measured.gpu_count", "GPUs in the benchmark"),
)
HARDWARE_LISTS = (
    _f(Hardware, "gpus", "GPUs to consider", "list"),
    _f(Hardware, "weight_precisions", "Weight precisions", "list",
       ("bf16", "fp16", "fp8", "int8", "int4", "fp4", "mxfp4")),
    _f(Hardware, "kv_precisions", "KV-cache precisions", "list",
       ("bf16", "fp16", "fp8", "int8", "int4", "fp4", "mxfp4")),
    _f(Hardware, "tensor_parallel", "Tensor-parallel degrees", "list", ("1", "2", "4", "8")),
)
POLICY_FIELDS = (
    _f(Policy, "deployment", "Recommend", "choice", ("on_prem", "cloud", "cheapest"),
       ("Buying the servers", "Renting the GPUs in a cloud",
        "Whichever costs least (buy, rent or hosted API)")),
    _f(Policy, "headroom", "Headroom (%)"),
    _f(Policy, "survive_node_loss", "Survive a node loss (N+1)", "bool"),
    _f(Policy, "gpu_memory_utilization", "GPU memory utilisation (%)"),
    _f(Policy, "runtime_reserve_gb", "Runtime reserve per GPU (GB)"),
    _f(Policy, "storage_read_gb_per_s", "Weight storage read bandwidth (GB/s)"),
    _f(Policy, "max_batch_per_replica", "Engine batch cap"),
    _f(Policy, "mbu", "Bandwidth efficiency override (%)"),
    _f(Policy, "mfu", "Compute efficiency override (%)"),
)
COST_FIELDS = (
    _f(Costs, "electricity_per_kwh", "Electricity per kWh"),
    _f(Costs, "pue", "PUE"),
    _f(Costs, "amortization_years", "Amortisation (years)"),
    _f(Costs, "support_rate", "Support (% of capex per year)"),
    _f(Costs, "average_load", "Average load (% of peak)"),
    _f(Costs, "network_per_node", "Network per node"),
    _f(Costs, "usd_exchange_rate", "Units per US dollar"),
    _f(Costs, "hours_per_year", "Hours of service per year"),
    _f(Costs, "cloud_tier", "Cloud offer", "choice", CLOUD_TIERS,
       tuple(tier_words(t) for t in CLOUD_TIERS)),
    _f(Costs, "storage_tb_per_node", "Storage per node (TB)"),
    _f(Costs, "storage_per_tb_month", "Storage per TB-month"),
    _f(Costs, "software_per_gpu_year", "Software per GPU-year"),
    _f(Costs, "nvidia_ai_enterprise", "NVIDIA AI Enterprise licences", "bool"),
    _f(Costs, "kw_per_rack", "Power budget per rack (kW)"),
    _f(Costs, "colocation_per_kw_month", "Colocation per kW-month"),
)


def tariff_placeholder(values: Mapping[str, Any]) -> str:
    """The electricity field's placeholder: the default the engine applies when it is left
    empty, in the account's currency (schema.default_tariff: 0.12 US dollars at the exchange
    rate, "0.1116 (0.12 USD)": short enough for the field at 390 px, where "0.1104 (= 0.12 USD)"
    lost its bracket, review round 24); "0.12 USD converted" while no
    usable rate is given; "" for USD (the field's own default). app.js says the same, without
    the figure, while currency or rate is edited."""
    currency = str(values.get("account.currency") or "USD").strip()
    if currency == "USD":
        return ""
    usd = _default(Costs, "electricity_per_kwh")
    try:
        rate: float | None = float(str(values.get("costs.usd_exchange_rate", "")))
    except ValueError:
        rate = None
    tariff = default_tariff(currency, rate)
    return f"{usd} USD converted" if tariff is None else f"{tariff:g} ({usd} USD)"


PRICE_MAPS = ("gpu_prices", "cloud_gpu_hour", "node_prices")  # costs.<map>.<catalog id>
PRICE_LABELS = {"gpu_prices": "Purchase per GPU", "cloud_gpu_hour": "Cloud per GPU-hour",
                "node_prices": "Node without GPUs"}  # the price overrides' headings

# (key, words, its fields): embed and rerank share the latency target; the model's list is
# the kind's own (catalog.models, or catalog.embedders of that task)
KIND_FORMS = (
    ("generate", KIND.words[0], (*SHAPE_FIELDS, *TARGET_FIELDS, *MEASURED_FIELDS)),
    ("embed", KIND.words[1], (*EMBED_FIELDS, *ENGINE_FIELDS, *LATENCY_FIELDS)),
    ("rerank", KIND.words[2], (*RERANK_FIELDS, *ENGINE_FIELDS, *LATENCY_FIELDS)),
)
KIND_FIELDS = (*SHAPE_FIELDS, *TARGET_FIELDS, *MEASURED_FIELDS, *EMBED_FIELDS, *RERANK_FIELDS,
               *ENGINE_FIELDS, *LATENCY_FIELDS)


def platform_field(ids: Iterable[str]) -> Field:
    return Field("platform", "Platform (server or node)", "choice", _help(Hardware, "platform"),
                 tuple(ids))



def model_choices(cat: Catalog, kind: str) -> tuple[str, ...]:
    """The models a workload of this kind can name: the language models, or the embedding
    catalog's models of that task (the loader accepts no other)."""
    if kind == "generate":
        return tuple(cat.models)
    return tuple(k for k, e in cat.embedders.items() if e.task == kind)
