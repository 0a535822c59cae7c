"""The results document (``<slug>.json``): a stable, schema-versioned contract.

Documented in docs/results.md; ``docs/results.schema.json`` is generated from these
models and a test checks it did not drift.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from ..inputs.benchpoints import BenchPoint

RESULTS_SCHEMA_VERSION = 2


class _M(BaseModel):
    # Non-finite numbers serialise as bare constants (Infinity, NaN) only so that
    # Result.to_json can find them and refuse the document: they are not JSON.
    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")


class AccountInfo(_M):
    name: str
    slug: str
    id: str | None
    prepared_by: str | None
    currency: str


class Option(_M):
    id: str
    gpu: str
    platform: str
    weight_precision: str
    kv_precision: str
    tp: int
    feasible: bool
    reason: str
    reason_code: str  # "" | "weights" | "kv" | "speed" | "ttft" | "itl" | "measured" | "xpyd"
    priced: bool
    calibration_gaps: list[str]  # why this option's figures rest on an uncalibrated path
    values: dict[str, float | str]


class MeasuredPoint(_M):
    """One benchmark point of a measured workload (``measured: {file: ...}``), as the
    sizing read it: per replica, against the workload's targets (docs/measured.md)."""

    file: str
    format: str  # vllm | aiperf | genai-perf | trtllm-bench
    label: str  # 'bench/a.json at concurrency 32'
    model: str | None  # as the file records it
    concurrency: float | None
    request_rate: float | None
    input_tokens: float | None  # mean per request
    output_tokens: float | None
    gpu_name: str | None  # as the file records it
    gpus: int  # GPUs the benchmarked server used (the file's, else the block's)
    replicas: float  # gpus / gpus_per_replica
    output_tokens_per_s: float  # the whole server
    tokens_per_s_per_replica: float
    tokens_per_s_per_user: float | None
    speed_basis: str  # e.g. '1000 / median TPOT 30.1 ms'
    ttft_ms: float | None  # the statistic compared with the target
    ttft_basis: str  # p99 | p90 | median | mean | not recorded
    meets_targets: bool
    chosen: bool
    problems: list[str]  # why it does not meet the targets


class Confidence(_M):
    """The recommendation's range from the model's cross-validated error (docs/results.md)."""

    group: str  # error group (evaluate.error_group): hopper_fp8, moe, ...
    error_p10: float  # signed predicted / measured - 1
    error_p90: float
    replica_output_tokens_per_s: float  # as sized
    replica_output_tokens_per_s_low: float  # if the model over-predicts by its p90
    replica_output_tokens_per_s_high: float  # if it under-predicts by its p10
    gpus_purchased: int
    gpus_purchased_if_low: int  # GPUs needed at the low throughput (more)
    gpus_purchased_if_high: int  # at the high throughput (fewer or the same)


class WorkloadResult(_M):
    name: str
    model: str
    model_name: str
    mode: str  # "modelled" | "measured"
    inputs: dict[str, float]
    recommended: str | None
    advice: str | None
    options: list[Option]
    measured_note: str | None = None  # which benchmark figure was used and why
    measured_points: list[MeasuredPoint] = []  # every point of the benchmark files
    measured_warnings: list[str] = []  # the benchmark's shape differs from the workload's
    # The option this workload would use sized alone (``recommended`` is the plan's choice).
    dedicated: str | None = None
    confidence: Confidence | None = None  # None without a recommendation

    def option(self, option_id: str | None) -> Option | None:
        return next((o for o in self.options if o.id == option_id), None)

    @property
    def best(self) -> Option | None:
        return self.option(self.recommended)


class Deployment(_M):
    """Buy, rent or hosted API, decided in the open (issue 22, item 2): what the requirements
    asked (``policy.deployment``), what is recommended, every way's cost per year and the
    customer's reasons (``account.reasons``)."""

    asked: str = "on_prem"  # policy.deployment: on_prem | cloud | cheapest
    # policy.deployment given in the requirements; False: the default (on_prem) applied, and
    # the proposal must not say the requirements asked for it
    stated: bool = True
    recommended: str = "on_prem"  # on_prem | cloud | api
    cheapest: str = "on_prem"  # the way that costs least per year (of those priced)
    annual_cost: dict[str, float] = {}  # per way priced: on_prem, cloud, api (when known)
    cheaper: list[str] = []  # the ways that cost less than the recommended one, cheapest first
    # the ways whose figure leaves a part out (on_prem: GPUs without a purchase price), kept
    # out of "cheapest" (the figure is a floor; it read "on-premises, the cheapest")
    incomplete: list[str] = []
    reasons: list[str] = []  # account.reasons, as given


class RetrievalOption(_M):
    """An embed or rerank workload on one candidate GPU (one GPU per replica)."""

    id: str  # the GPU id: one option per candidate GPU
    gpu: str
    platform: str
    feasible: bool
    reason: str  # why not, when not feasible
    priced: bool  # the GPU has a purchase price (catalog or account)
    values: dict[str, float | str]  # the Retrieval calculations and the TCO lines, by name
    # the language-model node group whose idle GPUs it would use (shares_llm_nodes = 1)
    shares_with: str | None = None


class RentedAlone(_M):
    """An embed or rerank workload's cheapest option rented on instances of its own
    (session 25): the price of a guest on a bought group's idle GPUs that the group's rented
    instances do not carry, where it costs less than more instances of the group's GPU."""

    gpu: str
    platform: str
    instances: int  # its cloud_instances
    instance_gpus: int  # GPUs per instance (cloud_instance_gpus)
    cloud_gpus: int  # GPUs rented (cloud_gpus_rented)
    annual_cost_cloud: float


class RetrievalWorkloadResult(_M):
    """An embed or rerank workload (``kind: embed | rerank``), sized by the Retrieval
    calculations on its own node group (docs/results.md)."""

    name: str
    kind: str  # embed | rerank
    model: str
    model_name: str
    inputs: dict[str, float]  # the workload's Retrieval inputs
    engine: str = "serving-stack"  # the encoder engine class it is sized for (embedders.yaml)
    recommended: str | None  # option id: the cheapest feasible, priced option
    advice: str | None  # why none is recommended
    options: list[RetrievalOption]
    # on a bought group's idle GPUs: its cheapest option rented alone (session 25; None
    # otherwise), offered as the guest's rented price (retrieval_rents_alone)
    rented_alone: RentedAlone | None = None

    def option(self, option_id: str | None) -> RetrievalOption | None:
        return next((o for o in self.options if o.id == option_id), None)

    @property
    def best(self) -> RetrievalOption | None:
        return self.option(self.recommended)


class Totals(_M):
    """The account's totals: ``totals`` over the plan's node groups, ``totals_dedicated``
    over each workload sized alone (workloads without an option count 0). Both include the
    retrieval node groups' GPUs, nodes and costs; the tokens are the generated ones."""

    gpus: int  # GPUs used (= gpus_used)
    nodes: int
    capex: float
    annual_cost_onprem: float
    # None (like annual_cost_api) when a part's GPU has no cloud price: cloud_unpriced names them
    annual_cost_cloud: float | None
    million_tokens_per_year: float
    cost_per_million_tokens_onprem: float
    cost_per_million_tokens_cloud: float | None
    gpus_used: int  # GPUs that serve replicas (spares included)
    gpus_purchased: int  # GPUs bought: whole baseboards on fixed platforms
    # GPUs bought, split: running replicas (running spares included) + spares on standby that
    # run no replica + idle (a full baseboard's GPUs beyond load and spares)
    gpus_serving: int = 0
    gpus_standby: int = 0
    gpus_idle: int = 0

    # input + output tokens (cost_per_million_tokens_* above count output tokens only)
    million_total_tokens_per_year: float = 0.0
    cost_per_million_total_tokens_onprem: float = 0.0
    cost_per_million_total_tokens_cloud: float | None = 0.0
    # catalog ids of the GPUs in the plan without a cloud price in the account's tier (the
    # requirements may give one: costs.cloud_gpu_hour.<gpu>)
    cloud_unpriced: list[str] = []
    # those of cloud_unpriced whose offer has a price but sells no instance that holds the
    # plan's replica (calculations/costs.py cloud_holds_replica: Lambda's H100 PCIe is sold as
    # 1-GPU instances only, a 2-GPU replica cannot run across two): no price for that reason
    cloud_unheld: list[str] = []
    # the same tokens from a hosted API at list price; None unless every recommended
    # workload's model has an API price in the catalog
    annual_cost_api: float | None = None
    cost_per_million_total_tokens_api: float | None = None
    # GPUs rented in the cloud (whole instances: cloud_gpus_rented; a retrieval group's own
    # retrieval_cloud_gpus): what the cover and summary lead with when the cloud is recommended
    cloud_gpus_rented: int = 0


class PlanPool(_M):
    """Workloads that share replicas: same model, precisions, GPU, platform and TP."""

    id: str  # pool-1, pool-2, ...
    workloads: list[str]  # names
    workload_indices: list[int]  # positions in ``workloads``
    option: str  # the option id every member uses
    model: str
    gpu: str
    platform: str
    weight_precision: str
    kv_precision: str
    tp: int
    batch_per_replica: int
    demand_replicas: float
    replicas_for_load: int
    spare_replicas: int
    replicas: int
    gpus: int
    headroom_achieved: float
    headroom_after_node_loss: float
    values: dict[str, float]  # every pool aggregate and calculation, by name
    # disaggregated serving: the prefill replicas feeding the replicas above (0: none; then
    # the replicas above are the decode replicas)
    prefill_replicas: int = 0
    prefill_gpus_per_replica: int = 0
    prefill_gpus: int = 0
    # each member's part of the pool and its node group, in ``workloads`` order
    # (WORKLOAD_SHARE_CALCULATIONS: they sum to the plan's totals)
    shares: list[dict[str, float]] = []


class NodeGroup(_M):
    """Pools on the same GPU and platform, packed into shared nodes."""

    id: str  # group-1, group-2, ...
    platform: str
    gpu: str
    pools: list[str]  # pool ids
    nodes: int
    gpus_used: int
    gpus_purchased: int
    headroom_achieved: float  # the weakest pool's
    headroom_after_node_loss: float  # the weakest pool's
    capex: float
    annual_cost_onprem: float
    annual_cost_cloud: float
    values: dict[str, float]  # every group aggregate and calculation, by name


class RetrievalGroup(_M):
    """One embed or rerank workload's nodes: a node group of its own, or (``shares_with``)
    the idle GPUs of a language-model node group, or of an earlier retrieval group's own
    nodes, of the same GPU type."""

    id: str  # retrieval-1, retrieval-2, ...
    workload: str  # name
    kind: str  # embed | rerank
    model: str
    gpu: str
    platform: str
    replicas: int  # GPUs serving (online + corpus), one replica per GPU
    nodes: int
    gpus_used: int
    gpus_purchased: int
    standby_gpus: int = 0  # the spare node's GPUs that run no replica (retrieval_standby_gpus)
    idle_gpus: int = 0  # its nodes' GPUs beyond replicas and standby (retrieval_idle_gpus)
    # GPUs it rents in the cloud, its TCO lines' cloud_gpus_rented: the whole instances for
    # retrieval_cloud_gpus (on a language-model group's nodes, the replicas that group's whole
    # instances do not already carry; sold by the GPU, its replicas + one spare with N+1)
    cloud_gpus: int
    limited_by: str  # what limits a replica: GPU compute, latency (batch size), tokenisation CPU
    # the node group whose idle GPUs it uses: a language-model one (group-1) or an earlier
    # retrieval group's own nodes (retrieval-1; review round 21)
    shares_with: str | None = None
    capex: float
    annual_cost_onprem: float
    annual_cost_cloud: float  # as rented: retrieval_cloud_cost
    # a guest rented on instances of its own, its cheapest option (retrieval_rents_alone = 1)
    rents_alone: RentedAlone | None = None


class RagFirstToken(_M):
    """A RAG request end to end (issue 24): embed the query, search, rerank, first token
    (calculations/retrieval.py RAG_TTFT), when the account has all three kinds."""

    embed_workload: str
    rerank_workload: str
    llm_workload: str
    values: dict[str, float]  # RAG_INPUTS and rag_ttft_s


class Plan(_M):
    pools: list[PlanPool]
    node_groups: list[NodeGroup]
    retrieval_groups: list[RetrievalGroup] = []  # embed and rerank workloads' own nodes
    rag_first_token: RagFirstToken | None = None  # all three kinds in the account
    # the retrieval groups as each workload alone would have them (nodes of their own): the
    # dedicated totals' figures where a group shares a language-model node group's idle GPUs
    retrieval_groups_alone: list[RetrievalGroup] = []
    # GPUs the same plan buys if every option's throughput is at the model's low end (its
    # group's p90 error) or high end (p10); None when the figures are measured
    gpus_purchased_if_throughput_low: int | None = None
    gpus_purchased_if_throughput_high: int | None = None
    # GPUs the same plan rents in the cloud at those ends (its node groups' whole instances,
    # plus what the retrieval groups rent themselves as sized): the range of a rented plan
    cloud_gpus_rented_if_throughput_low: int | None = None
    cloud_gpus_rented_if_throughput_high: int | None = None


class BomLine(_M):
    """One line of the bill of materials: a node group of the plan, or a retrieval workload's
    own nodes (calculations/bom.py)."""

    id: str  # the node group's or retrieval group's id
    platform: str  # catalog id
    platform_name: str  # the vendor's model, as the proposal names it
    vendor: str
    gpu: str  # catalog id
    gpu_name: str
    estimate: bool  # the platform's rack and network facts are estimates (infrastructure.yaml)
    source: str  # where those facts come from
    values: dict[str, float]  # the line's facts and calculations, by name


class BomParameter(_M):
    """An account-wide figure of the bill of materials (an input cell on the BOM sheet)."""

    name: str
    label: str
    value: float
    unit: str
    source: str
    estimate: bool


class BillOfMaterials(_M):
    lines: list[BomLine] = []
    parameters: list[BomParameter] = []
    totals: dict[str, float] = {}  # the BOM totals (bom_*), by name


class ScenarioResult(_M):
    """One sensitivity scenario: one input changed, every recommended option recomputed."""

    name: str  # stable id, e.g. users_x2
    label: str  # what changes, e.g. Concurrent users
    change: str  # by how much, e.g. x2
    input: str  # the calculation input it changes
    gpus_purchased: int
    nodes: int
    capex: float
    annual_cost_onprem: float
    annual_cost_cloud: float | None  # None: a GPU of the plan has no cloud price (Totals)


class PriceUsed(_M):
    """A dated price the costs rest on (catalog or the account's override)."""

    item: str  # cloud:<gpu> | gpu:<gpu> | extra:<name> | api:<model>
    label: str
    value: float  # in the unit below (account currency)
    unit: str
    date: str | None  # YYYY, YYYY-MM or YYYY-MM-DD as the source gives it; None = undated
    source: str
    note: str = ""  # e.g. how a derived price was derived, in words
    # A cloud price derived for the account's tier from another tier's offer by the catalog's
    # tier ratios (prices.yaml tier_ratios): never a silent mix of tiers.
    derived: bool = False
    flag: str = ""  # 'derived' when derived, else ''
    derived_from_tier: str | None = None  # the tier of the offer the price rests on
    derived_from_value: float | None = None  # that offer's price (account currency)
    ratios: list[float] = []  # the tier ratios applied, in order


class ModelAlternative(_M):
    """One of a workload's alternative models (``model: [a, b]``), sized as if it were the only
    one: the account's plan with this model, under the same load, targets, hardware and policy."""

    model: str  # as the requirements name it
    model_name: str
    params_total: float
    params_active: float
    chosen: bool  # the alternative the plan uses
    meets_targets: bool  # some option meets the workload's targets
    gpu: str | None  # the plan's configuration for this workload (None: nothing meets)
    gpu_name: str | None
    tp: int | None
    weight_precision: str | None
    kv_precision: str | None
    weights_gb: float | None  # the weights in memory at that precision
    tokens_per_s_per_user: float | None
    ttft_ms: float | None
    gpus_purchased: int  # the whole account's plan with this alternative
    gpus_used: int
    capex: float
    annual_cost: float  # of the way recommended (on-premises, cloud or API)
    way: str  # that way: on_prem | cloud | api
    cost_per_million_tokens: float  # on-premises, the generated tokens


class ModelAlternatives(_M):
    """A workload's alternative models side by side and the one recommended (issue 22, item 8)."""

    workload: str
    workload_index: int  # position in ``Result.workloads``
    rule: str  # how the recommended one was chosen, in words
    alternatives: list[ModelAlternative]  # in the order the requirements list them


class InputWarning(_M):
    """A target inside its allowed range but doubtful (inputs/doubts.py): the PDF shows it."""

    workload: str  # the workload's name
    key: str  # the key under targets
    text: str  # in the customer's words


class Assumption(_M):
    name: str
    value: float | str
    unit: str
    source: str


class SourceInfo(_M):
    """What the result was sized from, so it can be sized again (the workbook embeds it:
    ``llmsizer report edited.xlsx``)."""

    requirements: dict[str, Any]  # the validated requirements, every default filled in
    models: dict[str, dict[str, Any]] = {}  # models read from config.json files
    bench: dict[str, list[BenchPoint]] = {}  # workload index -> its benchmark points


class Kept:
    """Work kept beside a Result for its documents, never part of its value: equal to any
    other (Results compare by their fields), dropped by pickle and deepcopy (a Result sent
    to another process or copied recomputes it)."""

    __slots__ = ("value",)

    def __init__(self, value: Any = None) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Kept)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[Kept], tuple[()]]:
        return (Kept, ())

    def __deepcopy__(self, memo: dict[int, Any]) -> Kept:
        return Kept()


class Result(_M):
    schema_version: int = RESULTS_SCHEMA_VERSION
    llmsizer_version: str
    catalog_digest: str
    account: AccountInfo
    usd_exchange_rate: float  # account currency per USD applied to catalog prices
    account_inputs: dict[str, float]
    tables: dict[str, dict[str, dict[str, float]]]
    workloads: list[WorkloadResult]  # the generating workloads (kind: generate)
    retrieval: list[RetrievalWorkloadResult] = []  # embed and rerank workloads
    plan: Plan
    totals: Totals  # over the plan's node groups
    totals_dedicated: Totals  # each workload sized alone, summed
    assumptions: list[Assumption]
    units: dict[str, str]
    input_warnings: list[InputWarning] = []  # doubtful targets, sized as written
    cloud_tier: str = "committed_1yr"  # costs.cloud_tier the cloud comparison rents at
    deployment: Deployment = Deployment()  # buy, rent or hosted API
    prices: list[PriceUsed] = []  # every dated price the costs use
    sensitivity: list[ScenarioResult] = []
    bom: BillOfMaterials = BillOfMaterials()  # the plan's bill of materials
    model_alternatives: list[ModelAlternatives] = []  # workloads given 2-4 models
    source: SourceInfo | None = None
    # sensitivity.keep_scenario_plans: the sensitivity's plans, for the workbook (not serialised)
    _scenario_plans: Kept = PrivateAttr(default_factory=lambda: Kept())

    def to_json(self) -> str:
        """The results document. A NaN or an infinity is refused (json.dumps' allow_nan=False
        semantics): every input is bounded so that none can arise, and a document holding
        one is not JSON. pydantic's own serialiser is 7x faster than json.dumps with indent;
        the precise check parses the text only when the words appear at all."""
        text = self.model_dump_json(indent=2) + "\n"
        if "NaN" in text or "Infinity" in text:  # maybe only inside a string: parse to know
            json.loads(text, parse_constant=_refuse_constant)
        return text


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"the results hold a non-finite number ({name}): not JSON, refused")


def results_schema() -> dict[str, Any]:
    return Result.model_json_schema()


_UNSAFE = re.compile(r"[^a-z0-9]+")
# Windows reserves these device names, with any extension: an account named "CON" or "Nul"
# would write files a Windows share cannot hold (issue 25). A slug has no dots, so the
# whole slug is the name Windows checks.
_WINDOWS_DEVICES = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                              *(f"lpt{i}" for i in range(10))})


def slugify(name: str, max_len: int = 60) -> str:
    """A safe file stem: letters, digits and single hyphens, bounded, never empty.

    A name whose every letter and digit has an ASCII spelling (``Contoso Bank``, ``Café
    Ñandú``, ``COM¹``) keeps the ASCII slug it always had (``contoso-bank``, ``cafe-nandu``):
    shipped file names do not move. Any other name keeps its letters in its own script
    (``日本電気``, ``сбербанк``, ``ελληνική-τράπεζα``), NFKC-normalised and case-folded,
    combining marks kept with their letter; a name without letters or digits (emoji only,
    punctuation only) becomes ``account``. Everything else becomes one hyphen; format
    characters (bidi overrides, zero-width) are dropped, so there is never a path
    separator, a dot (so never ``..``), a control or an invisible character. At most
    ``max_len`` characters and ``2 * max_len`` UTF-8 bytes (120: with a batch's
    ``--<file>`` and ``-2``, the manifest's name and the atomic writer's temp-file affixes
    the longest name written stays under the 255-byte limit of Linux and macOS), cut before
    a letter's combining marks, never between them. A Windows device name gets
    ``-account``."""
    folded = unicodedata.normalize("NFKD", name)
    if all(c.isascii() or not _kept(c) for c in folded):  # nothing would be lost in ASCII
        slug = _UNSAFE.sub("-", folded.encode("ascii", "ignore").decode().lower())
    else:
        slug = _unicode_slug(unicodedata.normalize("NFKC", unicodedata.normalize(
            "NFKC", name).casefold()))
    slug = _cut(slug.strip("-"), max_len, 2 * max_len).strip("-")
    if slug in _WINDOWS_DEVICES:  # `con.pdf` cannot be created on a Windows share
        slug += "-account"
    return slug or "account"


def _kept(c: str) -> bool:
    """A letter or a digit (any script): what a slug keeps."""
    return unicodedata.category(c)[0] in "LN"


def _unicode_slug(text: str) -> str:
    out: list[str] = []
    for c in text:
        kind = unicodedata.category(c)
        if _kept(c) or (kind[0] == "M" and out and out[-1] != "-"):  # a mark with its letter
            out.append(c)
        elif kind != "Cf" and out and out[-1] != "-":  # Cf is invisible: it separates nothing
            out.append("-")
    return "".join(out)


def _cut(slug: str, max_len: int, max_bytes: int) -> str:
    """At most ``max_len`` characters and ``max_bytes`` UTF-8 bytes, never leaving a
    letter without its combining marks."""
    end = min(len(slug), max_len)
    while len(slug[:end].encode()) > max_bytes:
        end -= 1
    while 0 < end < len(slug) and unicodedata.category(slug[end])[0] == "M":
        end -= 1  # the cut fell among a letter's marks: cut before the letter
    return slug[:end]
