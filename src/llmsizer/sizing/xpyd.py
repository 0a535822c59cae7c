"""Sizing one disaggregated prefill/decode option (xPyD, issue 23 item 1): x prefill
replicas of one layout feed y decode replicas of another, on the same GPU and platform.

* **decode pool** — the calculation list with the decode layout and no prompt to prefill
  (every prompt token arrives as cache: the context stays, the prefill share of each step
  goes, as on the LMSYS decode nodes); its own TTFT targets are left out, since the first
  token comes from the prefill pool. Its batch (tokens/s target, memory, engine cap) and
  replica count with headroom and N+1 spares are the list's own: that is y.
* **prefill pool** — the calculation list with the prefill layout gives the time per prompt
  token; x covers the load's prompts with the headroom (``disagg_prefill_replicas_for_load``)
  and grows while the first token misses its target.
* **TTFT** — the prefill queue's wait at the pool's utilisation + the prompt's prefill + the
  move of its KV cache over the fabric (the NVLink domain when both pools fit in it, else the
  platform's network) + the fitted overhead; TPOT is the decode pool's.

Arithmetic is in :mod:`llmsizer.model.calculations.disagg`; this module chooses inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..inputs.schema import Requirements
from ..inputs.schema_workload import Workload
from ..model.calculations import PERCENTILE_TARGETS
from ..model.catalog import Catalog, Model
from ..model.expr import Value
from .evaluate import Choice, Tables, evaluate_choice, workload_inputs
from .fidelity_disagg import _figure, _transfer
from .search import calibration_gaps, reason_for

__all__ = ["Xpyd", "best_xpyd", "pool_envs", "size_pair", "size_xpyd"]

MAX_PREFILL_REPLICAS = 512  # the first-token search stops here (a target no count can meet)


@dataclass(frozen=True)
class Xpyd:
    """A sized xPyD option: both pools' layouts and counts and what users see."""

    prefill: Choice
    decode: Choice
    prefill_replicas: int
    decode_replicas: int
    prefill_gpus: int  # per prefill replica
    decode_gpus: int  # per decode replica
    gpus: int
    nodes: int
    ttft_ms: float
    prefill_wait_ms: float
    kv_transfer_ms: float
    tpot_ms: float
    prefill_utilisation: float
    output_tokens_per_s_per_decode_node: float
    reason: str = ""  # why it is not feasible ('' = it is)
    calibration_gaps: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.prefill_replicas}P{self.decode_replicas}D"

    @property
    def feasible(self) -> bool:
        return not self.reason


def _f(env: Mapping[str, Value], name: str) -> float:
    x = env[name]
    assert isinstance(x, float | int)
    return float(x)


def _gaps(catalog: Catalog, w: Workload, model: Model, prefill: Choice,
          decode: Choice) -> list[str]:
    gaps = ["no measured reference for a disaggregated deployment sized to a load: the "
            "prefill pool's time carries a factor fitted on one source"]
    for ch in (prefill, decode):
        gaps += [g for g in calibration_gaps(catalog, ch, w.model, model, False) if g not in gaps]
    return gaps


Env = Mapping[str, Value]
_NO_TTFT = {k: 0.0 for k in ("target_ttft_s", *(f"target_{t}" for t in PERCENTILE_TARGETS
                                                 if t.startswith(("ttft", "e2e"))))}


def pool_envs(req: Requirements, w: Workload, model: Model, catalog: Catalog, tables: Tables,
              acct: Mapping[str, float], choice: Choice) -> tuple[Env, Env]:
    """(as a prefill pool, as a decode pool): the calculation list with this layout, and with
    it holding no prompt to prefill and no first-token target of its own."""
    base: dict[str, Value] = {**acct, **workload_inputs(w, model)}
    return (evaluate_choice(base, choice, tables, req, catalog),
            evaluate_choice(base, choice, tables, req, catalog,
                            {"prefix_cache_hit": 1.0, **_NO_TTFT}))


def size_xpyd(req: Requirements, w: Workload, model: Model, catalog: Catalog, tables: Tables,
              acct: Mapping[str, float], prefill: Choice, decode: Choice) -> Xpyd:
    """Size the xPyD option with these two layouts for workload ``w``."""
    pre = pool_envs(req, w, model, catalog, tables, acct, prefill)[0]
    dec = pool_envs(req, w, model, catalog, tables, acct, decode)[1]
    return size_pair(catalog, w, model, prefill, pre, decode, dec)


def size_pair(catalog: Catalog, w: Workload, model: Model, prefill: Choice, pre: Env,
              decode: Choice, dec: Env) -> Xpyd:
    """The xPyD option of a prefill layout's and a decode layout's evaluations."""
    assert (prefill.gpu, prefill.platform) == (decode.gpu, decode.platform)
    y = int(_f(dec, "replicas"))
    pre_gpus, dec_gpus = int(_f(pre, "gpus_per_replica")), int(_f(dec, "gpus_per_replica"))
    factor = catalog.constant("disagg_prefill_time_factor")
    per_replica = _figure("disagg_prefill_requests_per_s", pre, prefill_replicas_given=1,
                          prefill_ms_per_token_given=_f(pre, "prefill_ms_per_token"),
                          prefill_time_factor_given=factor)
    tpot = _figure("disagg_decode_tpot_ms", dec)
    link, efficiency = _transfer(catalog, decode, pre_gpus, dec_gpus)
    moved = _figure("disagg_kv_transfer_ms", dec, transfer_gb_s_given=link,
                    transfer_efficiency_given=efficiency, prefill_gpus_given=pre_gpus)
    x = 0
    ttft = wait = rho = rate = 0.0

    def first_token(x: int, rate: float) -> tuple[float, float, float]:
        rho = _figure("disagg_prefill_utilisation", {}, request_rate_given=rate,
                      prefill_replicas_given=x, prefill_replica_rate_given=per_replica)
        wait = _figure("disagg_prefill_wait_ms", dec, utilisation_given=rho,
                       prefill_replica_rate_given=per_replica)
        ttft = _figure("disagg_ttft_ms", dec, prefill_wait_ms_given=wait,
                       prefill_ms_given=_f(pre, "prefill_ms"), kv_transfer_ms_given=moved,
                       prefill_time_factor_given=factor)
        return ttft, wait, rho

    # the closed loop's rate depends on TTFT, which depends on the count: start from the
    # TTFT without a wait (the highest rate), then re-read the rate at the TTFT reached
    ttft, _, _ = first_token(1, 0.0)
    # the decode pool must fit and keep the tokens/s; the prefill pool must hold the weights
    reason = reason_for(dict(dec))[1] or (
        reason_for(dict(pre))[1] if reason_for(dict(pre))[0] == "weights" else "")
    if not reason:
        rate = _figure("disagg_request_rate_per_s", dec, ttft_given=ttft, tpot_given=tpot)
        x = int(_figure("disagg_prefill_replicas_for_load", dec, request_rate_given=rate,
                        prefill_replica_rate_given=per_replica))
        target = _f(pre, "target_ttft_ms")  # the workload's (the decode env's is zeroed)
        while True:
            ttft, wait, rho = first_token(x, rate)
            if not target or ttft <= target or x >= MAX_PREFILL_REPLICAS:
                break
            x += 1
        if target and ttft > target:
            reason = (f"TTFT {ttft:,.0f} ms with {x} prefill replicas; target "
                      f"{target:,.0f} ms")
        x = int(_figure("disagg_prefill_replicas", dec, prefill_gpus_given=pre_gpus,
                        prefill_replicas_given=x))
    sized = {"prefill_replicas_given": x, "prefill_gpus_given": pre_gpus,
             "decode_replicas_given": y, "decode_gpus_given": dec_gpus}
    return Xpyd(
        prefill=prefill, decode=decode, prefill_replicas=x, decode_replicas=y,
        prefill_gpus=pre_gpus, decode_gpus=dec_gpus,
        gpus=int(_figure("disagg_gpus", {}, **sized)),
        nodes=int(_figure("disagg_nodes", dec, **sized)),
        ttft_ms=ttft, prefill_wait_ms=wait, kv_transfer_ms=moved, tpot_ms=tpot,
        prefill_utilisation=rho,
        output_tokens_per_s_per_decode_node=_figure("disagg_output_tokens_per_s_per_node", dec),
        reason=reason, calibration_gaps=_gaps(catalog, w, model, prefill, decode))



def networked(catalog: Catalog, choice: Choice) -> bool:
    """Whether the search offers xPyD here: only where the platform states its network per
    GPU, the fabric the caches move over between nodes (inside one NVLink domain they move
    over the scale-up link instead)."""
    return catalog.platforms[choice.platform].scaleout_gb_s is not None


def _rank(x: Xpyd, catalog: Catalog) -> tuple[float, ...]:
    plat = catalog.platforms[x.prefill.platform]
    bought = x.nodes * plat.gpus_per_node if plat.sold_full else x.gpus
    return (bought, x.gpus, x.ttft_ms)


def best_xpyd(req: Requirements, w: Workload, model: Model, catalog: Catalog, tables: Tables,
              acct: Mapping[str, float], candidates: list[Choice]) -> Xpyd | None:
    """The cheapest feasible xPyD option (fewest GPUs bought, then used, then the quicker
    first token) over every pair of the candidate layouts that share GPU, platform and
    precisions, on platforms whose network is stated; None when no pair meets the targets.
    Each layout is evaluated once as a prefill pool and once as a decode pool."""
    usable = [c for c in candidates if networked(catalog, c)]
    envs = {c: pool_envs(req, w, model, catalog, tables, acct, c) for c in usable}
    sized = [size_pair(catalog, w, model, p, envs[p][0], d, envs[d][1])
             for p in usable for d in usable
             if (p.gpu, p.platform, p.weight_precision, p.kv_precision)
             == (d.gpu, d.platform, d.weight_precision, d.kv_precision)]
    feasible = [x for x in sized if x.feasible]
    return min(feasible, key=lambda x: _rank(x, catalog)) if feasible else None
