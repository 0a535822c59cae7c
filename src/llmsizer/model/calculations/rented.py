"""One option as rented in the cloud (session 23): the replicas it runs, the spare it keeps
and the headroom it leaves when the account rents it, beside the figures above that buy it.

An offer sold by the GPU (costs.py ``cloud_sold_by_gpu``) rents an instance per replica for
the load and, with N+1, a spare instance on standby that runs nothing: the bought option's
spare replicas (a node's worth) are not rented. An offer of fixed instance sizes rents the
option's replicas, spares included, in whole instances (costs.py ``cloud_instances``). The
options tables of a rented account (terminal, PDF, web, the workbook's Options sheet) show
these rows with the GPUs rented and the instances; a single-workload pool's rows as run
(plan_node_loss.py ``pool_replicas_as_run``, ``pool_headroom_as_run``) equal them.
"""

from __future__ import annotations

from ..expr import AND, IF, gt
from .core import Calculation, _c, r
from .replicas import _headroom

# rented by the GPU with a load to carry: the instances are the replicas for the load
_BY_GPU_LOAD = AND(gt(r("cloud_sold_by_gpu"), 0), gt(r("load_gpus"), 0))

CALCULATIONS: tuple[Calculation, ...] = (
    _c("rented_replicas", "Replicas running, rented", "replicas", "TCO",
       IF(_BY_GPU_LOAD, r("replicas_for_load"), r("replicas")),
       "Rented by the GPU: the replicas for peak + headroom (the spare instance runs none); "
       "fixed instance sizes: the replicas above, spares included."),
    _c("rented_spare_replicas", "Spare replicas running (N+1), rented", "replicas", "TCO",
       IF(_BY_GPU_LOAD, 0, r("spare_replicas")),
       "Rented by the GPU: none (the N+1 spare is an instance on standby); fixed instance "
       "sizes: the spare replicas above."),
    _c("rented_spare_instances", "Spare instances on standby (N+1), rented", "instances", "TCO",
       IF(AND(_BY_GPU_LOAD, gt(r("survive_node_loss"), 0)), r("cloud_spare_instances"), 0),
       "Rented by the GPU with N+1: the spare instance that takes over a lost one's replica; "
       "0 otherwise (fixed sizes run their spares)."),
    _c("rented_headroom", "Headroom achieved at peak, rented", "fraction", "TCO",
       _headroom(r("rented_replicas")),
       "Replicas running, rented / peak demand - 1 (stated streams: their tokens/s / the "
       "target - 1), all instances up."),
)
