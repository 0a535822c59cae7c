"""Confidence: the model's cross-validated error (``confidence_p10``/``_p90``) turned into a
range of throughput per replica and of GPUs purchased, with headroom, N+1 and whole nodes
applied as for the recommendation; the account plan's range reads ``CONFIDENCE_DEMAND_REPLICAS``.
"""

from __future__ import annotations

from ..expr import IF, MAX, MIN, ROUNDUP, Expr, gt, ref
from .core import Calculation, _c, r, tp


def _load_at(factor: Expr) -> Expr:
    """Replicas for peak + headroom, before rounding, when every step takes factor x the
    modelled time: demand x factor x (1 + headroom), or (session 22) the stated streams'
    replicas at the target x (1 + headroom) on the slower line, b x factor x C / (longest
    step with headroom - a x factor), where more; C (one stream a replica, the most they can
    use) where even one stream a replica is then too slow."""
    limit = r("stream_step_limit_load_ms")
    a, b = r("step_fixed_ms") * factor, r("step_ms_per_seq") * factor
    streams = IF(gt(r("stream_replicas"), 0),
                 IF(gt(limit, a + b), b * r("users") / (limit - a), r("users")), 0)
    return MAX(r("demand_replicas") * factor * (1 + r("headroom")), streams)


def _replicas_at(factor: Expr) -> Expr:
    """Replicas (load + N+1 spares) when each replica serves 1/factor of the modelled users."""
    load = ROUNDUP(_load_at(factor), 0)
    return load + IF(gt(r("survive_node_loss"), 0), MIN(r("replicas_per_node"), load), 0)


def _nodes_for(gpus: Expr) -> Expr:
    return MAX(ROUNDUP(gpus / r("gpus_per_node"), 0), IF(gt(r("survive_node_loss"), 0), 2, 1))


def _purchased(gpus: Expr, nodes: Expr) -> Expr:
    return IF(gt(r("platform_sold_full"), 0), nodes * r("gpus_per_node"), gpus)


CALCULATIONS: tuple[Calculation, ...] = (
    _c("confidence_throughput_low", "Throughput per replica, model's low end", "tok/s", "Nodes",
       r("replica_output_tokens_per_s") / (1 + r("confidence_p90")),
       "Modelled throughput / (1 + p90 error): the model over-predicts by its p90."),
    _c("confidence_throughput_high", "Throughput per replica, model's high end", "tok/s",
       "Nodes", r("replica_output_tokens_per_s") / (1 + r("confidence_p10")),
       "Modelled throughput / (1 + p10 error)."),
    _c("confidence_replicas_low_throughput", "Replicas if throughput is at the low end",
       "replicas", "Nodes", _replicas_at(1 + r("confidence_p90")),
       "Demand x (1 + p90) with headroom and N+1 as above: replicas serve fewer users each."),
    _c("confidence_gpus_purchased_low_throughput", "GPUs purchased if throughput is at the low "
       "end", "GPUs", "Nodes",
       _purchased(r("confidence_replicas_low_throughput") * tp,
                  _nodes_for(r("confidence_replicas_low_throughput") * tp)),
       "Replicas x TP in whole nodes, as for the recommendation."),
    _c("confidence_replicas_high_throughput", "Replicas if throughput is at the high end",
       "replicas", "Nodes", _replicas_at(1 + r("confidence_p10")),
       "Demand x (1 + p10) with headroom and N+1 as above."),
    _c("confidence_gpus_purchased_high_throughput", "GPUs purchased if throughput is at the "
       "high end", "GPUs", "Nodes",
       _purchased(r("confidence_replicas_high_throughput") * tp,
                  _nodes_for(r("confidence_replicas_high_throughput") * tp)),
       "Replicas x TP in whole nodes, as for the recommendation."),
)

# The account plan's GPU range (plan.confidence_range): each member's peak demand in replica
# units at the model's low or high throughput end, scaled as ``_replicas_at`` scales it above
# (throughput / (1 + error) means demand x (1 + error)); the plan is then evaluated as usual.
CONFIDENCE_DEMAND_REPLICAS = ref("demand_replicas") * (1 + ref("confidence_error"))
# and its replicas for peak + headroom before rounding (the pools' stated-streams term reads
# them: load_replicas_exact), as ``_load_at`` scales them
CONFIDENCE_LOAD_REPLICAS = _load_at(1 + ref("confidence_error"))
