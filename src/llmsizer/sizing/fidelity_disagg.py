"""``llmsizer fidelity`` for disaggregated prefill/decode rows (``DISAGG P:ax(...) D:bx(...)``):
the decode pool and the prefill pool each evaluated through the engine's calculation list
with their own layout, combined by the figures of :mod:`llmsizer.model.calculations.disagg`.

A closed loop of C users spread over the y decode replicas: TPOT is the decode pool's step
without prefill; each request also waits its prefill on one of the x prefill replicas and
the move of its cache (TTFT). The deployment serves the smaller of the two pools' request
rates; when the prefill pool is the slower, the decode batch is what its rate keeps in
flight. No arithmetic here beyond choosing inputs (``tests/test_one_home.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from ..inputs.benchdata import BenchPoint
from ..inputs.benchlabels import Parallelism, decode_batch_limit, disagg_pools, stated_pools
from ..inputs.schema import Requirements
from ..model.calculations import FIGURE_EXPRS
from ..model.calculations.routing import random_routing_batch_per_replica
from ..model.catalog import Catalog
from ..model.expr import Value, evaluate
from .evaluate import Choice, Tables, evaluate_choice
from .fidelity_recipes import QUANTISED_DISPATCH, decode_moe_backend


def _figure(name: str, env: Mapping[str, Value], **given: float) -> float:
    value = evaluate(FIGURE_EXPRS[name], {**env, **given})
    assert isinstance(value, float | int)
    return float(value)


def _pool(replicas: int, p: Parallelism) -> int:
    """GPUs of ``replicas`` copies of layout ``p``."""
    return int(_figure("disagg_pool_gpus", {}, replicas_given=replicas, tp_given=p.tp,
                       pp_given=p.pp))


def disagg_reasons(point: BenchPoint, catalog: Catalog) -> list[str]:
    """Why a disaggregated row cannot be predicted (empty = it can)."""
    pools = disagg_pools(point.raw.get("tp", ""), point.raw.get("notes", ""))
    if pools is None:
        return [f"disaggregated serving without both pools' layouts ({point.disaggregated})"]
    x, pre, y, dec = pools
    reasons = []
    stated = stated_pools(point.raw.get("notes", ""))
    pools_gpus = (_pool(x, pre), _pool(y, dec))
    if stated and stated != pools_gpus:
        reasons.append(f"the label's pools ({pools_gpus[0]} prefill + {pools_gpus[1]} decode "
                       f"GPUs) disagree with the stated {stated[0]} prefill + "
                       f"{stated[1]} decode GPUs")
    gpu = catalog.gpus.get(point.gpu or "")
    if gpu is not None:
        plat = catalog.platforms[gpu.default_platform]
        for what, p in (("prefill", pre), ("decode", dec)):
            if p.tp > plat.gpus_per_node and p.ep == 1:
                reasons.append(f"{what} tensor parallelism across nodes (TP{p.tp} on "
                               f"{plat.gpus_per_node}-GPU nodes, no expert parallelism) is "
                               "not modelled")
            elif p.ep > plat.gpus_per_node and plat.scaleout_gb_s is None:
                reasons.append(f"{what} expert parallelism across nodes (EP{p.ep}) on "
                               f"{plat.name}, whose network per GPU the catalog does not state")
    if point.metric not in ("output_tokens_per_s", "tpot_ms"):
        reasons.append(f"metric {point.metric} is not predicted for disaggregated serving")
    if point.regime != "concurrency":
        reasons.append("disaggregated serving is predicted at fixed concurrency only")
    return reasons


def _transfer(catalog: Catalog, choice: Choice, prefill: int, decode: int
              ) -> tuple[float, float]:
    """(link GB/s one way, efficiency) the caches move over: the scale-up link when both
    pools (``prefill`` and ``decode`` GPUs) fit one NVLink domain, else the platform's
    network (0 when not stated)."""
    plat = catalog.platforms[choice.platform]
    if plat.nvlink_domain > 1 and sum((prefill, decode)) <= plat.nvlink_domain:
        return catalog.gpus[choice.gpu].link_gb_s, catalog.constant("link_efficiency")
    if plat.scaleout_gb_s:
        return plat.scaleout_gb_s, catalog.constant("scaleout_efficiency")
    return 0.0, 1.0


def exchange_inputs(point: BenchPoint, env: Mapping[str, Value]) -> dict[str, float]:
    """The decode pool's expert exchange as the row's recipe runs it: where the decode
    worker's MoE backend quantises an NVFP4 checkpoint's tokens before the dispatch
    (fidelity_recipes.py), they cross at the checkpoint's bytes a value (``env``: any
    evaluation of the same checkpoint); otherwise the default 2 bytes."""
    if (decode_moe_backend(point.raw.get("notes", "")) in QUANTISED_DISPATCH
            and point.weight_precision == "fp4"):
        return {"alltoall_dispatch_bytes": float(env["weight_bytes_per_param"])}
    return {}


def _prefill_env(point: BenchPoint, choice: Choice, base: dict[str, Value],
                 req: Requirements, catalog: Catalog, tables: Tables,
                 profile: dict[str, float]) -> dict[str, Value]:
    """The prefill pool: the row's evaluation with the prefill layout of its label."""
    pools = disagg_pools(point.raw.get("tp", ""), point.raw.get("notes", ""))
    assert pools is not None
    pre = pools[1]
    return evaluate_choice(base, replace(choice, tp=pre.tp, pp=pre.pp, ep=pre.ep, adp=pre.adp),
                           tables, req, catalog, profile)


def _decode_env(choice: Choice, base: dict[str, Value], req: Requirements, catalog: Catalog,
                tables: Tables, inputs: dict[str, float], batch: float) -> dict[str, Value]:
    """The decode pool at ``batch`` sequences per decode replica (closed loop, paced)."""
    return evaluate_choice(base, choice, tables, req, catalog,
                           {**inputs, "max_batch_per_replica": batch, "burstiness": 0.0})


def decode_tpot_at(point: BenchPoint, choice: Choice, base: dict[str, Value],
                   req: Requirements, catalog: Catalog, tables: Tables,
                   profile: dict[str, float], batch: float) -> float:
    """The decode pool's TPOT (ms) at ``batch`` sequences per decode replica, as
    :func:`predict_disagg` evaluates it at the batch it settles on. With the run's own batch
    (its output tokens/s x TPOT, Little's law) it scores the decode step apart from the
    batch and the prefill pool (``benchmarks/disagg_cv.py --step``)."""
    dispatch = exchange_inputs(point, _prefill_env(point, choice, base, req, catalog, tables,
                                                   profile))
    env = _decode_env(choice, base, req, catalog, tables, {**profile, **dispatch}, batch)
    return _figure("disagg_decode_tpot_ms", env)


def predict_disagg(point: BenchPoint, choice: Choice, base: dict[str, Value],
                   req: Requirements, catalog: Catalog, tables: Tables,
                   profile: dict[str, float]) -> tuple[float, float]:
    """(predicted value of the row's metric, decode batch per replica)."""
    pools = disagg_pools(point.raw.get("tp", ""), point.raw.get("notes", ""))
    assert pools is not None
    x, pre, y, dec = pools
    # the row's users, spread over the decode pool
    users = _figure("per_replica_given", {}, group_given=float(point.concurrency or 1),
                    replicas_given=y)

    prefill = _prefill_env(point, choice, base, req, catalog, tables, profile)
    dispatch = exchange_inputs(point, prefill)

    def decode_env(batch: float) -> dict[str, Value]:
        return _decode_env(choice, base, req, catalog, tables, {**profile, **dispatch}, batch)

    link, efficiency = _transfer(catalog, choice, _pool(x, pre), _pool(y, dec))
    env = decode_env(users)
    moved = _figure("disagg_kv_transfer_ms", env, transfer_gb_s_given=link,
                    transfer_efficiency_given=efficiency, prefill_gpus_given=_pool(1, pre))
    factor = catalog.constant("disagg_prefill_time_factor")
    # the factor is the prefill pool's rate; a prompt's own prefill is the list's time.
    # Closed loop: no wait below saturation
    ttft = _figure("disagg_ttft_ms", env, prefill_ms_given=float(prefill["prefill_ms"]),
                   kv_transfer_ms_given=moved, prefill_wait_ms_given=0.0)
    prefill_rate = _figure("disagg_prefill_requests_per_s", prefill, prefill_replicas_given=x,
                           prefill_ms_per_token_given=float(prefill["prefill_ms_per_token"]),
                           prefill_time_factor_given=factor)

    def decode_rate(e: Mapping[str, Value]) -> float:
        return _figure("disagg_decode_requests_per_s", e, decode_replicas_given=y,
                       tpot_given=_figure("disagg_decode_tpot_ms", e))

    # the stated recipe's decode batch limit; users beyond it wait for a slot
    stated = decode_batch_limit(point.raw.get("notes", ""))
    limit = (_figure("disagg_decode_batch_limit_per_replica", env,
                     max_batch_size_given=stated) if stated else math.inf)
    # the users waiting for their first token hold no decode slot (Little's law)
    decoding = _figure("disagg_closed_loop_batch_per_replica", env, concurrency_given=users,
                       ttft_given=ttft)
    # the harness routes a request to a replica whether it is full or not (routing.py)
    env = decode_env(random_routing_batch_per_replica(decoding, y, limit))
    rate = decode_rate(env)
    if prefill_rate < rate:  # prefill-bound: fewer sequences in flight in the decode pool
        batch = _figure("disagg_rate_batch_per_replica", env, concurrency_given=users,
                        prefill_rate_given=prefill_rate, decode_replicas_given=y)
        env = decode_env(min(limit, max(1.0, math.floor(batch))))
        rate = decode_rate(env)
    if point.metric == "tpot_ms":
        value = _figure("disagg_decode_tpot_ms", env)
    else:
        value = _figure("disagg_output_tokens_per_s", env, decode_rate_given=rate,
                        prefill_rate_given=prefill_rate)
        if point.per_gpu:  # reported per decode GPU (InferenceX)
            value = _figure("disagg_reported_output_tokens_per_s", {},
                            output_tokens_per_s_given=value, row_gpus_given=point.gpu_count,
                            decode_gpus_given=_pool(y, dec))
    return value, float(env["batch_per_replica"])
