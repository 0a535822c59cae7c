"""Catalogs: GPUs, server platforms, models, precisions and calibrated constants.

The data lives in ``catalogs/*.yaml`` shipped in the package (SI units or the unit in
the key name, a ``source`` on every entry). This module only loads and validates it;
it computes nothing.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..base.errors import CatalogError

# the price models live in catalog_prices (re-exported here: the loader and its callers)
from .catalog_prices import CLOUD_TIERS, ApiPrice, CloudOffer, CloudTier, Prices, TierRatio

__all__ = ["CLOUD_TIERS", "ApiPrice", "CloudOffer", "CloudTier", "Prices", "TierRatio"]

T = TypeVar("T")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Gpu(_Entry):
    name: str
    vendor: str
    architecture: str
    form_factor: str
    memory_gb: float = Field(gt=0, description="as the vendor markets it, GB = 1e9 bytes")
    bandwidth_tb_s: float = Field(gt=0)
    bf16_tflops: float = Field(gt=0, description="dense")
    fp8_tflops: float | None = Field(default=None, description="dense; null = no native FP8")
    int8_tops: float | None = None
    fp4_tflops: float | None = Field(default=None, description="dense; null = no native FP4")
    tdp_w: float = Field(gt=0)
    interconnect: str
    link_gb_s: float = Field(gt=0, description="scale-up bandwidth per GPU, one direction")
    max_tp: int = Field(ge=1, le=72, description="largest TP group on the fast link")
    price_usd: float | None = Field(default=None, gt=0)
    price_date: str | None = None
    price_source: str | None = None
    default_platform: str
    source: str
    notes: str = ""
    aliases: list[str] = Field(default_factory=list,
                               description="labels benchmark tables use for this GPU")


class Platform(_Entry):
    name: str
    vendor: str
    gpus: list[str] = Field(min_length=1)
    gpus_per_node: int = Field(ge=1, le=72)
    nvlink_domain: int = Field(ge=1, le=72, description="GPUs on one scale-up fabric; 1 = PCIe")
    scaleout_gb_s: float | None = Field(
        default=None, gt=0,
        description="RDMA network per GPU between nodes, one direction, GB/s; null = not stated "
                    "(expert parallelism is then not offered across nodes)")
    scaleout_source: str = ""
    sold_full: bool = Field(description="fixed baseboard: every node is bought with all its GPUs")
    gpu_fabric: bool = Field(
        description="built for an east-west GPU fabric between nodes (one fabric NIC per GPU: "
                    "HGX/DGX/OAM boards, NVL72 racks); false for PCIe servers, whose replicas "
                    "stay inside one server and which plug into the front-end network only")
    node_power_kw: float = Field(gt=0, description="whole node at full GPU load")
    base_price_usd: float = Field(ge=0, description="node without its GPUs")
    source: str
    notes: str = ""


class Model(_Entry):
    name: str
    hf_id: str
    params_total: float = Field(gt=0)
    params_active: float = Field(gt=0)
    layers: int = Field(ge=1)
    hidden_size: int = Field(ge=1)
    attention_heads: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    kv_lora_rank: int = Field(default=0, ge=0, description="MLA only; 0 = standard attention")
    qk_rope_head_dim: int = Field(default=0, ge=0, description="MLA only")
    experts: int = Field(default=0, ge=0)
    experts_per_token: int = Field(default=0, ge=0)
    shared_experts: int = Field(default=0, ge=0, description="always-on experts per MoE layer")
    # DeepSeek-V3 / Kimi K2 / GLM-4.5 keep their first layers dense (first_k_dense_replace),
    # Llama 4 Maverick puts experts on every other layer: the all-to-all and the per-expert
    # work are paid on these layers only.
    moe_layers: int | None = Field(
        default=None, ge=0,
        description="layers with routed experts; null = every layer of an MoE model")
    vocab_size: int | None = Field(default=None, ge=1)
    intermediate_size: int | None = Field(default=None, ge=1, description="dense MLP width")
    moe_intermediate_size: int | None = Field(default=None, ge=1, description="one expert's width")
    # FP4 checkpoints quantise the MLP/expert weights only: attention, the router, embeddings
    # and lm_head stay BF16 (the checkpoint's exclude list), so they cost 2 bytes, not ~0.56.
    fp4_16bit_params: float = Field(
        default=0, ge=0,
        description="parameters the published FP4 checkpoint keeps at 16 bits (0 = none known)")
    fp4_16bit_source: str = ""
    # FP8 / INT8 / INT4 checkpoints keep at least the embeddings, lm_head, norms and routers at
    # 16 bits (DeepSeek's block-FP8 release, ModelOpt/llm-compressor/AWQ/GPTQ exports): null =
    # the same parameters as fp4_16bit_params (whose exclude list is exactly that set for every
    # model whose FP4 export keeps no attention in BF16).
    quantised_16bit_params: float | None = Field(
        default=None, ge=0,
        description="parameters an FP8/INT8/INT4 checkpoint keeps at 16 bits; null = "
                    "fp4_16bit_params")
    quantised_16bit_source: str = ""
    # Attention kinds by layer: the KV cache of a sliding-window layer stops growing at its
    # window, a linear-attention layer keeps a fixed recurrent state instead of a cache.
    sliding_window: int = Field(default=0, ge=0, description="tokens; 0 = no window")
    window_layers: int = Field(default=0, ge=0, description="layers that attend only the window")
    linear_attention_layers: int = Field(default=0, ge=0)
    linear_state_elements: int = Field(
        default=0, ge=0, description="recurrent state values per linear-attention layer")
    # DeepSeek Sparse Attention (V3.2): an indexer caches an FP8 key per token per layer and
    # scores every cached token; attention then reads only the top indexer_topk of them.
    indexer_heads: int = Field(default=0, ge=0, description="config.json index_n_heads")
    indexer_head_dim: int = Field(
        default=0, ge=0, description="config.json index_head_dim; 0 = no sparse-attention indexer")
    indexer_topk: int = Field(default=0, ge=0, description="config.json index_topk")
    max_context: int = Field(ge=1)
    source: str
    notes: str = ""
    aliases: list[str] = Field(default_factory=list,
                               description="labels benchmark tables use for this model")
    mtp_acceptance: list[float] = Field(
        default_factory=list,
        description="published mean acceptance length (tokens a step yields) with 1, 2, ... "
                    "multi-token-prediction drafts per step; empty = none published")
    mtp_acceptance_source: str = ""

    def mtp_acceptance_length(self, draft_tokens: int) -> float | None:
        """The published acceptance length with ``draft_tokens`` MTP drafts, or None where
        none is published (the user states it)."""
        return dict(enumerate(self.mtp_acceptance, start=1)).get(draft_tokens)

    @property
    def moe_layer_count(self) -> int:
        """Layers whose MLP is routed experts: the stated count, else every layer of an MoE
        model (0 for a dense one)."""
        if not self.experts:
            return 0
        return self.layers if self.moe_layers is None else self.moe_layers

    @property
    def quantised_16bit_count(self) -> float:
        """Parameters an FP8/INT8/INT4 checkpoint keeps at 16 bits: the stated count, else the
        FP4 checkpoint's (the same embeddings, lm_head, norms and routers)."""
        if self.quantised_16bit_params is None:
            return self.fp4_16bit_params
        return self.quantised_16bit_params

    @model_validator(mode="after")
    def _layer_kinds(self) -> Model:
        if (self.window_layers > 0) != (self.sliding_window > 0):
            raise ValueError("sliding_window and window_layers go together (both 0 or both > 0)")
        if (self.linear_attention_layers > 0) != (self.linear_state_elements > 0):
            raise ValueError("linear_attention_layers and linear_state_elements go together")
        if len({self.indexer_heads > 0, self.indexer_head_dim > 0, self.indexer_topk > 0}) > 1:
            raise ValueError("indexer_heads, indexer_head_dim and indexer_topk go together")
        if self.window_layers + self.linear_attention_layers > self.layers:
            raise ValueError("window_layers + linear_attention_layers exceed layers")
        if self.moe_layers is not None and not (
                self.moe_layers <= self.layers and (self.moe_layers > 0) == (self.experts > 0)):
            raise ValueError("moe_layers must be at most layers, above 0 exactly when the model "
                             "has experts")
        return self


class Embedder(_Entry):
    """An embedding or reranking model (catalogs/embedders.yaml): one forward pass per
    request, no generation loop, no KV cache."""

    name: str
    task: Literal["embed", "rerank"]
    hf_id: str
    params_total: float = Field(gt=0)
    layers: int = Field(ge=1)
    hidden_size: int = Field(ge=1)
    attention_heads: int = Field(ge=1)
    max_sequence: int = Field(ge=1)
    encoder: bool
    source: str


class EncoderEngine(_Entry):
    """A class of encoder engines (embedders.yaml ``encoder_engines``): how much of the GPU's
    peak a forward pass reaches depends more on the engine (hand-fused kernels, ONNX Runtime,
    a serving stack) than on the GPU. A class without its own fitted constants (too few
    published rows) uses the retrieval constants fitted on every row."""

    name: str
    matches: list[str] = Field(min_length=1, description="lower-case fragments of the engine "
                               "labels published tables use; the first class that matches wins")
    mfu_encode: float | None = Field(default=None, gt=0, le=1)
    encode_batch_overhead_ms: float | None = Field(default=None, ge=0)
    source: str

    @model_validator(mode="after")
    def _both_or_neither(self) -> EncoderEngine:
        if (self.mfu_encode is None) != (self.encode_batch_overhead_ms is None):
            raise ValueError("mfu_encode and encode_batch_overhead_ms go together")
        return self


class Precision(_Entry):
    bytes_per_param: float = Field(gt=0)
    scale_overhead: float = Field(ge=0, description="extra bytes per byte for scales/zeros")
    compute_path: Literal["bf16", "fp8", "int8", "fp4"]
    default_kv_precision: str = Field(
        description="KV-cache precision served with these weights when none is stated")
    default_kv_source: str
    source: str


class Constant(_Entry):
    value: float
    unit: str
    source: str


class Coverage(_Entry):
    """What the calibration data covers; anything else is an uncalibrated path."""

    gpus: list[str]
    weight_precisions: list[str]
    models: list[str]
    # GPUs with measured expert-parallel / attention data-parallel rows (an EP option elsewhere,
    # e.g. over PCIe, is an extrapolation)
    expert_parallel_gpus: list[str] = []
    source: str


class RackFacts(_Entry):
    """A platform's rack and network facts for the bill of materials (infrastructure.yaml)."""

    rack_units: float = Field(gt=0, le=60)
    frontend_nics: int = Field(ge=0, le=100)
    frontend_gbps: float = Field(ge=0)
    fabric_nics: int = Field(ge=0, le=200)
    fabric_gbps: float = Field(ge=0)
    source: str
    estimate: bool


class InfraDefault(_Entry):
    """An account-wide bill-of-materials figure (infrastructure.yaml ``defaults``)."""

    value: float = Field(ge=0)
    unit: str
    label: str
    source: str
    estimate: bool


class Infrastructure(_Entry):
    platforms: dict[str, RackFacts]
    defaults: dict[str, InfraDefault]


class Catalog(_Entry):
    gpus: dict[str, Gpu]
    platforms: dict[str, Platform]
    models: dict[str, Model]
    precisions: dict[str, Precision]
    constants: dict[str, Constant]
    coverage: Coverage
    prices: Prices
    digest: str
    embedders: dict[str, Embedder] = {}
    # the retrieval model's constants (embedders.yaml): apart from ``constants``, which the
    # LLM workbook's assumptions list in full
    retrieval_constants: dict[str, Constant] = {}
    encoder_engines: dict[str, EncoderEngine] = {}
    infrastructure: Infrastructure | None = None  # the bill of materials' facts

    def engine_constants(self, engine: str) -> dict[str, float]:
        """``mfu_encode`` and ``encode_batch_overhead_ms`` of an encoder engine class: its own
        fitted pair, or the retrieval constants (fitted on every row) when it has none."""
        e = self.encoder_engines[engine]
        if e.mfu_encode is not None and e.encode_batch_overhead_ms is not None:
            return {"mfu_encode": e.mfu_encode, "encode_batch_overhead_ms": e.encode_batch_overhead_ms}
        return {k: self.retrieval_constants[k].value
                for k in ("mfu_encode", "encode_batch_overhead_ms")}

    def engine_class(self, label: str) -> str | None:
        """The encoder engine class a published engine label belongs to (first match)."""
        low = label.lower()
        return next((eid for eid, e in self.encoder_engines.items()
                     if any(m in low for m in e.matches)), None)

    def gpu(self, key: str) -> Gpu:
        return _pick(self.gpus, key, "GPU")

    def platform(self, key: str) -> Platform:
        return _pick(self.platforms, key, "platform")

    def model(self, key: str) -> Model:
        return _pick(self.models, key, "model")

    def precision(self, key: str) -> Precision:
        return _pick(self.precisions, key, "precision")

    def constant(self, key: str) -> float:
        return _pick(self.constants, key, "constant").value


# --- labels in benchmark tables -> catalog ids -------------------------------------------
#
# The aliases themselves live in gpus.yaml / models.yaml (``aliases:``); this is only the
# normalisation both sides go through before they are compared.

_PARENS = re.compile(r"\([^)]*\)")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
# Words that name the vendor, not the part ("NVIDIA H100", "AMD Instinct MI300X").
_GPU_VENDOR_WORDS = ("nvidia-", "amd-", "instinct-", "tesla-", "intel-")
# Trailing words that name a checkpoint's packaging, not the architecture
# ("Llama-3.3-70B-Instruct-FP4", "Mixtral-8x7B-Instruct-v0.1").
_MODEL_DECORATION = re.compile(
    r"-(instruct|chat|it|hf|base|fp8|fp4|nvfp4|mxfp4|bf16|fp16|awq|gptq|int4|int8|w4a16|"
    r"dynamic|v\d+(-\d+)*)$")


def normalise_label(text: str, *, keep_parens: bool = False) -> str:
    """Lower case, parenthesised remarks removed (unless ``keep_parens``), every run of
    punctuation or spaces turned into one '-'."""
    if not keep_parens:
        text = _PARENS.sub(" ", text)
    return _NOT_ALNUM.sub("-", text.lower()).strip("-")


def _gpu_forms(label: str) -> list[str]:
    forms = [normalise_label(label, keep_parens=True), normalise_label(label)]
    for form in list(forms):
        stripped = form
        while stripped.startswith(_GPU_VENDOR_WORDS):
            stripped = stripped.split("-", 1)[1]
        forms.append(stripped)
    return [f for f in dict.fromkeys(forms) if f]


def _model_forms(label: str) -> list[str]:
    forms = [normalise_label(label, keep_parens=True), normalise_label(label)]
    if "/" in label:  # a Hugging Face id: the organisation is not part of the name
        forms.append(normalise_label(label.rsplit("/", 1)[1]))
    for form in list(forms):
        stripped = form
        while (shorter := _MODEL_DECORATION.sub("", stripped)) != stripped:
            stripped = shorter
            forms.append(stripped)
    return [f for f in dict.fromkeys(forms) if f]


class LabelIndex:
    """Resolves free-text GPU and model labels to catalog ids through the catalog's ids,
    names, Hugging Face ids and ``aliases`` (one place for every alias)."""

    def __init__(self, catalog: Catalog) -> None:
        self._gpus = self._index({gid: [gid, g.name, *g.aliases]
                                  for gid, g in catalog.gpus.items()}, _gpu_forms)
        self._models = self._index({mid: [mid, m.name, m.hf_id, *m.aliases]
                                    for mid, m in catalog.models.items()}, _model_forms)
        # for "closest to" suggestions: the most reduced form of each id and name
        self._gpu_names = {_gpu_forms(label)[-1]: gid for gid, g in catalog.gpus.items()
                           for label in (gid, g.name)}
        self._model_names = {_model_forms(label)[-1]: mid for mid, m in catalog.models.items()
                             for label in (mid, m.name)}

    @staticmethod
    def _index(names: dict[str, list[str]], forms: Callable[[str], list[str]]
               ) -> dict[str, str]:
        index: dict[str, str] = {}
        derived: list[tuple[str, str]] = []
        for key, labels in names.items():
            for label in labels:
                first, *rest = forms(label)
                if index.setdefault(first, key) != key:
                    raise CatalogError(f"label {label!r} names both {index[first]!r} and {key!r}")
                # a label with a parenthesised remark is specific: only its exact form counts
                derived.extend((form, key) for form in rest if "(" not in label)
        for form, key in derived:  # shorter forms never override an exact one
            index.setdefault(form, key)
        return index

    @staticmethod
    def _find(index: dict[str, str], forms: list[str]) -> str | None:
        return next((index[f] for f in forms if f in index), None)

    def gpu(self, label: str) -> str | None:
        return self._find(self._gpus, _gpu_forms(label))

    def model(self, label: str) -> str | None:
        return self._find(self._models, _model_forms(label))

    def _closest(self, names: dict[str, str], forms: list[str]) -> list[str]:
        found: list[str] = []
        if not forms:  # a label with no letters or digits, such as "()"
            return found
        for near in difflib.get_close_matches(forms[-1], list(names), n=6, cutoff=0.5):
            if names[near] not in found:
                found.append(names[near])
        return found[:3]

    def closest_gpus(self, label: str) -> list[str]:
        """Catalog GPUs whose id or name is nearest to an unknown label (up to three)."""
        return self._closest(self._gpu_names, _gpu_forms(label))

    def closest_models(self, label: str) -> list[str]:
        """Catalog models whose id or name is nearest to an unknown label (up to three)."""
        return self._closest(self._model_names, _model_forms(label))


def suggest(word: str, choices: list[str]) -> str:
    """' (did you mean X?)' or '' — shared by every 'unknown name' message."""
    close = close_matches(word, choices)
    return " (did you mean " + " or ".join(close) + "?)" if close else ""


def close_matches(word: str, choices: list[str]) -> list[str]:
    """The (at most three) choices closest to ``word``, closest first: what :func:`suggest`
    names, for a message that words them otherwise (the web app names a catalog id by the
    name its form shows)."""
    w = word.lower()
    # a name that starts with what was typed first ("h200" -> h200-sxm, not gh200): difflib's
    # ratio alone ranks the shorter near-miss higher
    starts = sorted((c.lower() for c in choices if c.lower().startswith(w) and c.lower() != w),
                    key=lambda c: (difflib.SequenceMatcher(None, w, c).ratio(), c), reverse=True)
    close = (starts + [c for c in difflib.get_close_matches(w, [c.lower() for c in choices],
                                                             n=3, cutoff=0.5)
                       if c not in starts])[:3]
    original = {c.lower(): c for c in choices}
    return [original[c] for c in close]


def _pick(table: dict[str, T], key: str, kind: str) -> T:
    try:
        return table[key]
    except KeyError:
        names = sorted(table)
        raise CatalogError(
            f"unknown {kind} {key!r}{suggest(key, names)}; valid: {', '.join(names)}"
        ) from None


_FILES = ("gpus", "platforms", "models", "precisions", "constants", "coverage", "prices")


@cache
def load_catalog() -> Catalog:
    """Load and cross-check the shipped catalogs (cached: they are immutable)."""
    raw: dict[str, Any] = {}
    digest = hashlib.sha256()
    base = resources.files("llmsizer.model") / "catalogs"
    for name in _FILES:
        text = (base / f"{name}.yaml").read_text(encoding="utf-8")
        digest.update(text.encode())
        doc = yaml.safe_load(text)
        if not isinstance(doc, dict) or (name not in doc and name != "prices"):
            raise CatalogError(f"catalogs/{name}.yaml: top-level key {name!r} missing")
        raw[name] = doc[name] if name != "prices" else doc
    # embedders.yaml: its models and the retrieval model's constants
    text = (base / "embedders.yaml").read_text(encoding="utf-8")
    digest.update(text.encode())
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict) or "embedders" not in doc:
        raise CatalogError("catalogs/embedders.yaml: top-level key 'embedders' missing")
    raw["embedders"] = doc["embedders"]
    raw["retrieval_constants"] = doc.get("retrieval_constants", {})
    raw["encoder_engines"] = doc.get("encoder_engines", {})
    text = (base / "infrastructure.yaml").read_text(encoding="utf-8")
    digest.update(text.encode())
    raw["infrastructure"] = yaml.safe_load(text)
    try:
        cat = Catalog(**raw, digest=digest.hexdigest()[:16])
    except ValidationError as exc:
        first = exc.errors(include_input=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"catalog invalid at {loc}: {first['msg']}") from None
    for gid, gpu in cat.gpus.items():
        if gpu.default_platform not in cat.platforms:
            raise CatalogError(f"GPU {gid}: default_platform {gpu.default_platform!r} unknown")
    for pid, prec in cat.precisions.items():
        if prec.default_kv_precision not in cat.precisions:
            raise CatalogError(f"precision {pid}: default_kv_precision "
                               f"{prec.default_kv_precision!r} unknown")
    for pid, plat in cat.platforms.items():
        for gid in plat.gpus:
            if gid not in cat.gpus:
                raise CatalogError(f"platform {pid}: GPU {gid!r} unknown")
    infra = cat.infrastructure
    if infra is not None and set(infra.platforms) != set(cat.platforms):
        raise CatalogError("infrastructure.yaml: platforms differ from platforms.yaml: "
                           f"{sorted(set(infra.platforms) ^ set(cat.platforms))}")
    for pid, plat in cat.platforms.items():
        # a replica spans nodes only over a stated scale-out network (sizing.search): such a
        # platform must carry its GPU fabric in the costs
        if plat.scaleout_gb_s is not None and not plat.gpu_fabric:
            raise CatalogError(f"platform {pid}: states a scale-out network but no GPU fabric")
    for gid in cat.prices.cloud:
        if gid not in cat.gpus:
            raise CatalogError(f"prices.yaml: cloud prices for unknown GPU {gid!r}")
    for rule in cat.prices.tier_ratios:
        if rule.to_tier == rule.from_tier:
            raise CatalogError(f"prices.yaml: tier ratio from {rule.from_tier} to itself")
        for gid in rule.pairs:
            offers = cat.prices.cloud.get(gid, {})
            if rule.to_tier not in offers or rule.from_tier not in offers:
                raise CatalogError(f"prices.yaml: tier ratio {rule.from_tier} -> "
                                   f"{rule.to_tier} cites {gid!r}, which lacks an offer in both")
    for mid in cat.prices.api:
        if mid not in cat.models:
            raise CatalogError(f"prices.yaml: API price for unknown model {mid!r}")
    for kind in ("embed", "rerank"):
        marked = [k for k, p in cat.prices.embedding_api.items() if p.kind == kind and p.compare]
        if len(marked) > 1:
            raise CatalogError(f"prices.yaml: embedding_api marks {marked} for comparison; "
                               f"one {kind} offer at most")
    LabelIndex(cat)  # an alias that names two entries is a catalog error, found at load
    return cat


# How the catalog's sources name the fit (script, data files) -> how a customer reads them.
_FITTED = re.compile(r"fitted (\S+) by benchmarks/calibrate\.py on the (\d+) [^;]*?rows of "
                     r"calibration_points\.csv and measured_blackwell_moe\.csv")
_HELD_OUT = re.compile(r"(p\d0) of predicted / measured - 1 over the held-out throughput rows of "
                       r"(?:group \w+|all groups pooled \(group \w+ has fewer than 10\)) \(leave-one-GPU-out "
                       r"and leave-one-source-out pooled\), benchmarks/calibrate\.py, (\S+)")


_SCRIPT = re.compile(r",? (?:by )?benchmarks/calibrate\.py|,? \(docs/calibration\.md\)")


def customer_source(text: str) -> str:
    """A constant's source in the proposal's words: the published results it was fitted on,
    not the script and data files that reproduce the fit (docs/calibration.md names those)."""
    text = _FITTED.sub(r"fitted \1 on \2 published benchmark results (TensorRT-LLM performance "
                       r"overview tables, NVIDIA NIM benchmarks, SemiAnalysis InferenceX)", text)
    text = _HELD_OUT.sub(r"\1 of the model's error (predicted / measured - 1) on published "
                         r"benchmark results it was not fitted on (cross-validation, \2)", text)
    return _SCRIPT.sub("", text)
