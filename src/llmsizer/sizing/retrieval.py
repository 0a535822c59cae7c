"""Embed and rerank workloads (issue 24): one option per candidate GPU, evaluated with the
retrieval calculations (model/calculations/retrieval.py), the cheapest that fits and meets
the latency recommended. Small PCIe GPUs (L4, L40S, A10) are candidates like the rest: an
embedding server is many small stateless replicas (source article "How fast does it serve?").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..inputs.schema import Requirements, Workload
from ..model.calculations.queueing import RATE_CALCULATIONS
from ..model.calculations.retrieval import RETRIEVAL_INPUTS, retrieval_program
from ..model.catalog import Catalog, Embedder
from ..model.expr import Value, evaluate

_ACCOUNT_CONSTANTS = ("mfu_encode", "encode_batch_overhead_ms", "encode_batch_window_ms",
                      "encode_max_batch_tokens", "encode_activation_bytes_per_hidden",
                      "tokenize_tokens_per_s_per_core", "host_cores_per_gpu")


@dataclass(frozen=True)
class RetrievalOption:
    gpu: str
    platform: str
    values: dict[str, Value]

    @property
    def viable(self) -> bool:
        return self.values["encoder_fits"] == 1 and self.values["latency_met"] == 1


@dataclass(frozen=True)
class RetrievalSizing:
    workload: str
    kind: str
    model: str
    options: tuple[RetrievalOption, ...]
    recommended: RetrievalOption | None


def workload_values(w: Workload, m: Embedder) -> dict[str, float]:
    """The workload's inputs (the schema guarantees each kind's keys)."""
    # the peak rate by the generating workloads' own formula (queueing.py): stated, or a
    # population x requests per user-hour x peak-to-average
    load = {"named_users": float(w.named_users or 0),
            "requests_per_user_per_hour": w.requests_per_user_per_hour or 0.0,
            "peak_to_average": w.peak_to_average or 1.0, "requests_per_s": w.requests_per_s or 0.0}
    rate = float(evaluate(RATE_CALCULATIONS[0].expr, load))
    rerank = w.kind == "rerank"
    t = w.targets
    return {
        "params": m.params_total, "layers": float(m.layers), "hidden": float(m.hidden_size),
        "seq_tokens": float((w.tokens_per_pair if rerank else w.tokens_per_request) or 0),
        "sequences_per_request": float(w.candidates_per_request or 1) if rerank else 1.0,
        "request_rate_per_s": rate,
        "target_latency_p95_s": (t.latency_p95_s or 0.0) if t is not None else 0.0,
        "corpus_tokens": w.corpus_tokens or 0.0,
        "reindex_hours": w.reindex_within_hours or 0.0,
    }


def size_retrieval(req: Requirements, w: Workload, m: Embedder, cat: Catalog) -> RetrievalSizing:
    """Every candidate GPU on its platform (the account's platform when stated)."""
    base = workload_values(w, m)
    p = req.policy
    account: dict[str, float] = {
        "headroom": p.headroom, "survive_node_loss": 1.0 if p.survive_node_loss else 0.0,
        "gpu_memory_utilization": p.gpu_memory_utilization,
        **{k: cat.retrieval_constants[k].value for k in _ACCOUNT_CONSTANTS}}
    if p.mfu is not None:
        account["mfu_encode"] = p.mfu
    ids = req.hardware.gpus or list(cat.gpus)
    options = []
    for gid in ids:
        gpu = cat.gpus[gid]
        pid = req.hardware.platform or gpu.default_platform
        plat = cat.platforms[pid]
        values: dict[str, Value] = {
            **base, **account, "weight_bytes": 2.0, "gpu_tflops": gpu.bf16_tflops,
            "gpu_memory_gb": gpu.memory_gb, "gpus_per_node": float(plat.gpus_per_node),
            "gpu_price": float(req.costs.gpu_prices.get(gid, gpu.price_usd or 0.0)),
            "node_price": float(req.costs.node_prices.get(pid, plat.base_price_usd))}
        assert set(values) == {i.name for i in RETRIEVAL_INPUTS}
        retrieval_program()(values, {})
        options.append(RetrievalOption(gid, pid, values))
    viable = [o for o in options if o.viable and float(o.values["gpu_price"]) > 0]
    best = min(viable, key=lambda o: float(o.values["retrieval_capex"]), default=None)
    return RetrievalSizing(w.name, w.kind, w.model, tuple(options), best)
