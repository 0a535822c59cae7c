"""The catalog's price models (prices.yaml): dated cloud offers by tier, the ratios between
tiers, bill-of-materials extras, hosted-API prices. Loaded and validated by
:mod:`llmsizer.model.catalog`; nothing here computes a figure.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Entry(BaseModel):
    """A catalog entry: unknown keys are an error, and entries are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


CloudTier = Literal["hyperscaler_on_demand", "committed_1yr", "committed_3yr", "gpu_cloud"]
CLOUD_TIERS: tuple[CloudTier, ...] = ("hyperscaler_on_demand", "committed_1yr", "committed_3yr",
                                      "gpu_cloud")
_DATE = Field(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$",
              description="when the source observed the price (YYYY, YYYY-MM or YYYY-MM-DD); "
                          "null = undated")


# How many other instance sizes an offer may list: the calculation list reads that many
# size columns per tier (model/calculations/catalog_values.py, the gpus table).
MAX_OTHER_SIZES = 2


class InstanceSize(Entry):
    """Another size the offer's instances are sold in (the same provider, GPU and tier),
    with its own price: a small plan rents the size that holds it."""

    gpus: int = Field(ge=1, le=72)
    usd_per_gpu_hour: float = Field(gt=0)
    offer: str
    date: str | None = _DATE
    source: str


class CloudOffer(Entry):
    """One named cloud offer: how the cloud sells the GPU and at what price; ``sizes`` lists
    the other instance sizes the same offer comes in (none = only ``gpus_per_instance``)."""

    usd_per_gpu_hour: float = Field(gt=0)
    gpus_per_instance: int = Field(ge=1, le=72, description="1 = single GPUs are rented")
    offer: str
    date: str | None = _DATE
    source: str
    sizes: list[InstanceSize] = Field(default_factory=list, max_length=MAX_OTHER_SIZES)
    # session 23: the provider sells the offer in its own size (and ``sizes``) only, as
    # published: Lambda sells the H100 PCIe, A10 and GH200 as 1-GPU instances only. An offer
    # with ``sizes`` is read so anyway; without sizes, a single-GPU offer is otherwise sold in
    # any count of one machine's GPUs (a GPU cloud's pod of 1 to 8)
    fixed_sizes: bool = False
    sizes_source: str | None = None  # where the sizes sold were read (fixed_sizes)

    @model_validator(mode="after")
    def _fixed_sizes_sourced(self) -> CloudOffer:
        if self.fixed_sizes and not self.sizes and not self.sizes_source:
            raise ValueError("an offer sold in its own size only cites where that was read "
                             "(sizes_source)")
        return self

    @model_validator(mode="after")
    def _sizes_distinct(self) -> CloudOffer:
        counts = [self.gpus_per_instance, *(s.gpus for s in self.sizes)]
        if len(set(counts)) != len(counts):
            raise ValueError("each instance size of an offer holds a different number of GPUs")
        return self

    @property
    def sold_in_listed_sizes(self) -> bool:
        """Only the offer's own size and its listed ``sizes`` are sold (calculations:
        cloud_fixed_sizes)."""
        return self.fixed_sizes or bool(self.sizes)

    def other_sizes(self) -> list[InstanceSize]:
        """The other sizes, fewest GPUs first (the order of the size columns)."""
        return sorted(self.sizes, key=lambda s: s.gpus)


class PricedItem(Entry):
    value: float = Field(ge=0)
    unit: str
    date: str | None = _DATE
    source: str


class ApiPrice(Entry):
    input_usd_per_million: float = Field(gt=0)
    output_usd_per_million: float = Field(gt=0)
    provider: str
    date: str | None = _DATE
    source: str


class EmbeddingApiPrice(Entry):
    """A hosted embedding or reranking API's list price per million input tokens (its
    output, a vector or a score, is not billed). ``compare`` marks the one offer per kind
    the cost formulas set beside the customer's own servers."""

    name: str
    kind: Literal["embed", "rerank"]
    usd_per_million_tokens: float = Field(gt=0)
    compare: bool = False
    provider: str
    date: str | None = _DATE
    source: str


class TierRatio(Entry):
    """How one cloud tier's price relates to another's: a GPU without a dated offer in
    ``to_tier`` is priced at its ``from_tier`` price times ``ratio`` (and flagged derived)."""

    to_tier: CloudTier
    from_tier: CloudTier
    ratio: float = Field(gt=0, le=10)
    # the catalog GPUs whose dated offers in both tiers give the ratio (tests recompute it);
    # empty when the pair lies outside the catalog's offers (then ``basis`` gives its prices)
    pairs: list[str] = []
    basis: str = Field(min_length=1, description="the arithmetic, in words, from cited prices")
    source: str


class Prices(Entry):
    """prices.yaml: dated cloud offers by tier, the ratios between tiers, bill-of-materials
    extras, hosted-API prices."""

    tier_ratios: list[TierRatio]
    cloud: dict[str, dict[CloudTier, CloudOffer]]
    extras: dict[Literal["network_per_fabric_port", "network_per_frontend_gbps",
                         "storage_per_tb_month", "software_per_gpu_year",
                         "colocation_per_kw_month"], PricedItem]
    api: dict[str, ApiPrice]
    embedding_api: dict[str, EmbeddingApiPrice] = {}

    def embedding_reference(self, kind: str) -> EmbeddingApiPrice | None:
        """The offer of ``kind`` marked ``compare`` (the catalog allows one per kind)."""
        return next((p for p in self.embedding_api.values() if p.kind == kind and p.compare),
                    None)

    def cloud_offer(self, gpu: str, tier: CloudTier) -> CloudOffer | None:
        """The dated offer for ``gpu`` in exactly ``tier`` (none from another tier: a missing
        tier is derived by a ratio, sizing.costs.cloud_price)."""
        return self.cloud.get(gpu, {}).get(tier)
