"""Evaluating one option: what the calculation list of :mod:`llmsizer.model.calculations`
reads (the catalog tables with the account's prices, the account's and the workload's inputs,
the option's calibrated efficiencies and error band) and :func:`evaluate_choice`, which runs it.
Shared by the option search (:mod:`.search`), :func:`~.engine.estimate` and the fidelity check.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..inputs.schema import Requirements
from ..inputs.schema_workload import Targets, Workload
from ..model.calculations import (
    COMPUTE_CODES,
    PERCENTILE_TARGETS,
    program,
)
from ..model.catalog import Catalog, Model
from ..model.expr import Value
from . import costs

Tables = dict[str, dict[str, dict[str, float]]]


def _ports(catalog: Catalog, pid: str) -> dict[str, float]:
    """A platform's GPU-fabric and front-end ports per server and the front-end speed
    (infrastructure.yaml; none for a catalog built without it)."""
    rack = catalog.infrastructure.platforms.get(pid) if catalog.infrastructure else None
    if rack is None:
        return {"fabric_ports": 0.0, "frontend_ports": 0.0, "frontend_gbps": 0.0}
    return {"fabric_ports": float(rack.fabric_nics), "frontend_ports": float(rack.frontend_nics),
            "frontend_gbps": rack.frontend_gbps}


def build_tables(req: Requirements, catalog: Catalog) -> Tables:
    """The catalog rows the formulas look up, with the account's price overrides applied."""

    def usd(price: float | None) -> float:
        """A catalog price (USD) in the account's currency; 0 when unknown."""
        return costs.in_account_currency(req, price)

    gpus: dict[str, dict[str, float]] = {}
    for gid, g in catalog.gpus.items():
        gpus[gid] = {
            "memory_gb": g.memory_gb,
            "bandwidth_tb_s": g.bandwidth_tb_s,
            "bf16_tflops": g.bf16_tflops,
            "fp8_tflops": g.fp8_tflops or 0.0,
            "int8_tops": g.int8_tops or 0.0,
            "fp4_tflops": g.fp4_tflops or 0.0,
            "link_gb_s": g.link_gb_s,
            "price": req.costs.gpu_prices.get(gid, usd(g.price_usd)),
            **costs.cloud_columns(req, catalog, gid),
        }
    platforms = {
        pid: {"gpus_per_node": float(p.gpus_per_node), "sold_full": float(p.sold_full),
              "node_power_kw": p.node_power_kw,
              "base_price": req.costs.node_prices.get(pid, usd(p.base_price_usd)),
              "scaleout_gb_s": p.scaleout_gb_s or 0.0,
              # the network a server carries (calculations network_per_node_used): its GPU
              # fabric (1 = built for one) and its ports (infrastructure.yaml)
              "gpu_fabric": float(p.gpu_fabric), **_ports(catalog, pid)}
        for pid, p in catalog.platforms.items()
    }
    precisions = {
        pid: {"bytes_per_param": p.bytes_per_param, "scale_overhead": p.scale_overhead,
              "compute_code": float(COMPUTE_CODES[p.compute_path])}
        for pid, p in catalog.precisions.items()
    }
    return {"gpus": gpus, "platforms": platforms, "precisions": precisions}


def account_inputs(req: Requirements, catalog: Catalog) -> dict[str, float]:
    p, c = req.policy, req.costs
    reserve = p.runtime_reserve_gb
    return {
        "headroom": p.headroom,
        "survive_node_loss": 1.0 if p.survive_node_loss else 0.0,
        "gpu_memory_utilization": p.gpu_memory_utilization,
        "runtime_reserve_gb": catalog.constant("runtime_reserve_gb") if reserve is None else reserve,
        "storage_read_gb_per_s": (catalog.constant("storage_read_gb_per_s")
                                  if p.storage_read_gb_per_s is None else p.storage_read_gb_per_s),
        "electricity_per_kwh": c.electricity_per_kwh,
        "pue": c.pue,
        "amortization_years": c.amortization_years,
        "support_rate": c.support_rate,
        "average_load": c.average_load,
        "hours_per_year": c.hours_per_year,
        **costs.account_cost_inputs(req, catalog),
    }


def workload_inputs(w: Workload, m: Model) -> dict[str, float]:
    # a generating workload: the schema requires its shape and targets (kind: generate)
    t = w.targets or Targets()
    return {
        "users": float(w.concurrent_users or 0),
        "requests_per_s": w.requests_per_s or 0.0,
        # concurrent users are a closed loop, paced by their answers (arrival CV 0): their
        # wait is the closed-loop term (queueing.py); a rate is random (Poisson) by default
        "burstiness": (0.0 if w.load_form == "users" else
                       1.0 if w.burstiness is None else w.burstiness),
        "fixed_users_per_replica": 0.0,
        "named_users": float(w.named_users or 0),
        "requests_per_user_per_hour": w.requests_per_user_per_hour or 0.0,
        "peak_to_average": w.peak_to_average or 1.0,
        "prompt_tokens": float(w.prompt_tokens or 0),
        "output_tokens": float(w.output_tokens or 0),
        "max_context_tokens": float(w.max_context_tokens or 0),
        "prefix_cache_hit": w.prefix_cache_hit,
        "target_tokens_per_s_per_user": t.tokens_per_s_per_user or 0.0,
        "target_response_time_s": t.response_time_s or 0.0,
        "target_ttft_s": t.ttft_s or 0.0,
        **{f"target_{k}": getattr(t, k) or 0.0 for k in PERCENTILE_TARGETS},
        "target_system_tokens_per_s": t.system_tokens_per_s or 0.0,
        # file form: the chosen benchmark point's figure, set by size_workload
        "measured_tokens_per_s_per_replica": (
            w.measured.tokens_per_s_per_replica or 0.0) if w.measured else 0.0,
        "params_total": m.params_total,
        "params_active": m.params_active,
        "fp4_16bit_params": m.fp4_16bit_params,
        "quantised_16bit_params": m.quantised_16bit_count,
        "layers": float(m.layers),
        "hidden_size": float(m.hidden_size),
        "attention_heads": float(m.attention_heads),
        "kv_heads": float(m.kv_heads),
        "head_dim": float(m.head_dim),
        "experts": float(m.experts),
        "experts_per_token": float(m.experts_per_token),
        "moe_layers": float(m.moe_layer_count),
        "kv_lora_rank": float(m.kv_lora_rank),
        "qk_rope_head_dim": float(m.qk_rope_head_dim),
        "sliding_window": float(m.sliding_window),
        "window_layers": float(m.window_layers),
        "linear_attention_layers": float(m.linear_attention_layers),
        "linear_state_elements": float(m.linear_state_elements),
        "indexer_heads": float(m.indexer_heads),
        "indexer_head_dim": float(m.indexer_head_dim),
        "indexer_topk": float(m.indexer_topk),
        # a hosted API's price for the model, set by size_workload where the catalog has one
        "api_input_per_million": 0.0,
        "api_output_per_million": 0.0,
        **speculative_inputs(w, m),
    }


def speculative_inputs(w: Workload, m: Model) -> dict[str, float]:
    """Drafted tokens, acceptance length and draft cost (off: 0, 1, 0). An MTP acceptance left
    out is the model's published one (the loader refuses a model without one)."""
    s = w.speculative
    if s is None:
        return {"spec_draft_tokens": 0.0, "spec_acceptance_length": 1.0,
                "spec_draft_layers": 0.0, "spec_draft_cost": 0.0}
    accept = s.acceptance_length or m.mtp_acceptance_length(s.draft_tokens) or 1.0
    # an MTP module or an EAGLE head is one layer run per drafted token, unless a cost is
    # stated; n-gram lookup is free
    layers = 1.0 if s.draft_cost is None and s.method in ("mtp", "eagle") else 0.0
    return {"spec_draft_tokens": float(s.draft_tokens), "spec_acceptance_length": float(accept),
            "spec_draft_layers": layers, "spec_draft_cost": s.draft_cost or 0.0}


def compute_bits(catalog: Catalog, gpu: str, weight_precision: str) -> str:
    """The efficiency family of the option's GEMMs: '4bit' on native FP4 tensor cores, '8bit'
    on native FP8/INT8, else '16bit' (weights dequantised to BF16)."""
    if not eight_bit_path(catalog, gpu, weight_precision):
        return "16bit"
    return "4bit" if catalog.precisions[weight_precision].compute_path == "fp4" else "8bit"


def stack_constant(catalog: Catalog, gpu: str) -> str:
    """The constant holding this GPU family's software-stack efficiency: fitted for AMD CDNA
    generations, 1 for NVIDIA (the reference the efficiencies were fitted on) and others."""
    arch = catalog.gpus[gpu].architecture.lower().replace(" ", "")
    for gen in ("cdna3", "cdna4"):
        if arch.startswith(gen):
            return f"stack_efficiency_{gen}"
    return "stack_efficiency_nvidia"


def eight_bit_path(catalog: Catalog, gpu: str, weight_precision: str) -> bool:
    """True when the weights run on the GPU's native 8-bit (or 4-bit) tensor cores."""
    g = catalog.gpus[gpu]
    path = catalog.precisions[weight_precision].compute_path
    return (path == "fp8" and g.fp8_tflops is not None) or (
        path == "int8" and g.int8_tops is not None) or (path == "fp4" and g.fp4_tflops is not None)


ERROR_GROUPS = ("hopper_fp8", "hopper_bf16", "blackwell_fp4", "blackwell_fp8", "amd", "moe",
                "other")


def error_group(catalog: Catalog, choice: Choice, model: Model) -> str:
    """The cross-validation group whose measured error (constants ``confidence_<group>_p10``
    / ``_p90``) applies to this option: MoE models first, then GPU family and compute path."""
    if model.experts:
        return "moe"
    gpu = catalog.gpus[choice.gpu]
    if gpu.vendor.strip().upper() == "AMD":
        return "amd"
    arch = gpu.architecture.lower()
    bits = compute_bits(catalog, choice.gpu, choice.weight_precision)
    if arch.startswith("hopper"):
        return {"8bit": "hopper_fp8", "16bit": "hopper_bf16"}.get(bits, "other")
    if arch.startswith("blackwell"):
        return {"4bit": "blackwell_fp4", "8bit": "blackwell_fp8"}.get(bits, "other")
    return "other"


def efficiency_inputs(req: Requirements, catalog: Catalog, gpu: str,
                      weight_precision: str) -> dict[str, float]:
    """Calibrated constants for this option's compute path, with the account's overrides
    (policy.mbu / mfu / max batch)."""
    p = req.policy
    k = catalog.constant
    bits = compute_bits(catalog, gpu, weight_precision)
    nvidia = catalog.gpus[gpu].vendor == "NVIDIA"
    return {
        "mbu_weights": p.mbu or k("mbu_weights"),
        "mbu_kv": p.mbu or k("mbu_kv"),
        "mfu_decode": p.mfu or k(f"mfu_decode_{bits}"),
        "mfu_prefill": p.mfu or k(f"mfu_prefill_{bits}"),
        "mfu_attention": k("mfu_attention"),
        "stack_efficiency": k(stack_constant(catalog, gpu)),
        "calibration_derating": 1.0,  # size_workload sets it from the option's calibration gaps
        "step_overhead_ms": k("step_overhead_ms"),
        # measured on NVIDIA's stacks only (docs/calibration-history.md, "Fifth pass")
        "draft_forward_ms": k("draft_forward_ms") if nvidia else 0.0,
        "allreduce_latency_us": k("allreduce_latency_us"),
        "alltoall_latency_us": k("alltoall_latency_us"),
        "link_efficiency": k("link_efficiency"),
        "scaleout_efficiency": k("scaleout_efficiency"),
        # experts spread over nodes: the published deployments split each batch in two and
        # send one half while the other computes (fidelity states it per engine)
        "alltoall_overlap": 1.0,
        # tokens cross the expert all-to-all at 2 bytes a value (fidelity states where an
        # engine's recipe quantises them first)
        "alltoall_dispatch_bytes": 2.0,
        # NVIDIA's FP4 checkpoints' BF16 projections at <= 16 tokens (decode.py)
        "fp4_layer_saving_us": k("fp4_layer_saving_us") if nvidia and bits == "4bit" else 0.0,
        "moe_compute_factor": k("moe_compute_factor"),
        "expert_slot_overhead": k("expert_slot_overhead"),
        "prefill_chunk_tokens": k("prefill_chunk_tokens"),
        "ttft_overhead_ms": k("ttft_overhead_ms"),
        "scheduler_steps": k("first_token_engine_steps"),
        "closed_loop_round_share": k("closed_loop_round_share"),
        "kv_cache_fraction": k("kv_cache_fraction"),
        # the whole output reserved per request: no offline rows fit this engine profile's
        # share (fidelity fits TensorRT-LLM's; docs/calibration.md, Offline occupancy)
        "kv_output_occupancy": 1.0,
        # a sliding-window layer keeps only its window (vLLM's hybrid KV cache manager); the
        # calibration's TensorRT-LLM rows keep the whole context (fidelity._profile)
        "window_kv_cut": 1.0,
        "max_batch_per_replica": float(p.max_batch_per_replica or k("max_batch_per_replica")),
        # aggregated serving; an xPyD option states its prefill replicas (sizing/xpyd.py)
        "disagg_prefill_gpus": 0.0,
        "disagg_prefill_ms_per_token": 0.0,
        "disagg_prefill_ms": 0.0,
        "disagg_prefill_time_factor": k("disagg_prefill_time_factor"),
        "disagg_kv_link_gb_s": 0.0,
        "disagg_kv_link_efficiency": 1.0,
        # the model's error band; size_workload sets the option's group (confidence_inputs)
        "confidence_p10": 0.0,
        "confidence_p90": 0.0,
    }


def confidence_inputs(catalog: Catalog, choice: Choice, model: Model,
                      measured: bool) -> dict[str, float]:
    """The option's error band: its group's p10 / p90, or none when the throughput is the
    customer's measurement."""
    if measured:
        return {"confidence_p10": 0.0, "confidence_p90": 0.0}
    group = error_group(catalog, choice, model)
    return {"confidence_p10": catalog.constant(f"confidence_{group}_p10"),
            "confidence_p90": catalog.constant(f"confidence_{group}_p90")}

@dataclass(frozen=True)
class Choice:
    gpu: str
    platform: str
    weight_precision: str
    kv_precision: str
    tp: int
    pp: int = 1  # pipeline-parallel stages (1 = off)
    ep: int = 1  # expert-parallel degree (1 = off)
    adp: int = 1  # attention data-parallel degree (1 = off)
    # the platform is named in the id when it is not the GPU's default (the search tries
    # every platform that carries the GPU; ids must stay unique within a workload)
    platform_in_id: bool = False
    # disaggregated (xPyD): the prefill replicas' (TP, EP, attention-DP); this layout is then
    # the decode replicas'. None: prefill and decode share the replicas.
    prefill: tuple[int, int, int] | None = None

    @property
    def id(self) -> str:
        # Unchanged when pp/ep/adp are off, so existing option ids and snapshots stay put.
        base = f"{self.gpu}/{self.weight_precision}/kv-{self.kv_precision}/tp{self.tp}"
        extra = "".join(f"/{name}{n}" for name, n in
                        (("pp", self.pp), ("ep", self.ep), ("adp", self.adp)) if n > 1)
        if self.prefill is not None:
            extra += "/prefill-" + "-".join(f"{name}{n}" for name, n in zip(
                ("tp", "ep", "adp"), self.prefill, strict=True) if n > 1 or name == "tp")
        return base + extra + (f"/{self.platform}" if self.platform_in_id else "")


def evaluate_choice(base: dict[str, Value], choice: Choice, tables: Tables,
                    req: Requirements, catalog: Catalog,
                    overrides: dict[str, float] | None = None,
                    efficiency: dict[str, float] | None = None) -> dict[str, Value]:
    """The calculation list run for one option; ``efficiency``: this GPU and weight
    precision's :func:`efficiency_inputs` when the caller keeps them (the option search)."""
    if efficiency is None:
        efficiency = efficiency_inputs(req, catalog, choice.gpu, choice.weight_precision)
    env = {**base, **efficiency, **(overrides or {})}
    env.update(gpu=choice.gpu, platform=choice.platform, weight_precision=choice.weight_precision,
               kv_precision=choice.kv_precision, tp=float(choice.tp), pp=float(choice.pp),
               ep=float(choice.ep), adp=float(choice.adp))
    program()(env, tables)
    return env
