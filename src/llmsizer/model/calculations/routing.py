"""Routing of a disaggregated deployment's requests to its decode replicas (the harness's
router, not the sizing's: ``llmsizer fidelity`` only).

InferenceX runs its multi-node Dynamo deployments through srt-slurm, which puts nginx in
front of up to ten Dynamo frontends (``frontend.enable_multiple_frontends`` true and
``num_additional_frontends`` 9 by default; no recipe of these rows sets a router mode), each
routing round-robin with its own counter (``dynamo.frontend --router-mode``, default
round-robin). Which decode replica a request reaches thus does not depend on which replicas
are full: with a per-replica batch limit a request can wait behind a full replica while
another has a free slot (docs/calibration-history.md, "Fourth pass: routing and large batches").
A single round-robin frontend would keep the slots nearly full, so this is not a property
of the product a customer deploys, and the sizing does not use it.
"""

from __future__ import annotations

import math


def random_routing_batch_per_replica(per_replica: float, replicas: float,
                                     limit: float) -> float:
    """Sequences decoding per replica when ``per_replica`` x ``replicas`` requests sit at
    ``replicas`` decode replicas of ``limit`` slots each, every request's replica drawn
    uniformly and independently of the others: E[min(n, limit)], n ~ Binomial(requests,
    1 / replicas). It counts the requests as placed independently; in a closed loop a request
    queued at a full replica stays there longer, so the loop keeps a little fewer slots busy
    (tests/test_routing.py simulates it: 0-10 % fewer)."""
    y = round(replicas)
    requests = per_replica * max(1, y)
    n = round(requests)
    if y <= 1 or n <= 0 or limit >= n:  # one replica, or none can be full
        return min(per_replica, limit)
    cap = int(limit)
    log_p, log_q = -math.log(y), math.log1p(-1.0 / y)
    # E[min(n, L)] = L - sum over k < L of (L - k) P(n = k); the pmf in logs (large n)
    short = sum((cap - k) * math.exp(math.lgamma(n + 1) - math.lgamma(k + 1)
                                     - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
                for k in range(cap))
    return min(per_replica, cap - short)
