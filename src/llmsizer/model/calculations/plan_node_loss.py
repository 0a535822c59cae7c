"""The account plan with a node down (issue 22, item 3), stages five to eight: the replicas a
node takes with it and the whole free slots they restart on (the placement is written above
:data:`.plan_pools.GROUP_SIZE_CALCULATIONS`), the spare node N+1 adds when a pool falls short,
the group's final counts (nodes, GPUs used, purchased, on standby and idle), and the headroom
each pool keeps at peak, all nodes up and one down. :mod:`.plan` lists the stages in order.
"""

from __future__ import annotations

from ..expr import AND, IF, MAX, MIN, ROUNDDOWN, ROUNDUP, Expr, eq, ge, gt, lift, lt
from .core import r, tp
from .costs import replica_instance_gpus
from .plan_pools import N_PLUS_ONE as _n1
from .plan_pools import pool_headroom
from .planrows import Aggregate, PlanCalculation

_gpr = r("gpus_per_replica")


def _slots_off_node(free_nodes: Expr) -> Expr:
    """Whole replica slots on the nodes running nothing (``free_nodes`` whole ones and the
    standby GPUs of one more). A replica wider than a node that lost one node still has its
    other nodes: one free node brings it back."""
    return IF(gt(r("pool_replica_nodes"), 1),
              ROUNDDOWN((free_nodes + r("pool_replica_nodes") - 1) / r("pool_replica_nodes"), 0),
              free_nodes * ROUNDDOWN(r("gpus_per_node") / _gpr, 0)
              + ROUNDDOWN(r("group_free_gpus_standby_node") / _gpr, 0))


def _slots_alone(spare_nodes: Expr) -> Expr:
    """A pool alone in its group, replicas spread evenly: whole slots in the free GPUs of the
    nodes other than the fullest (``spare_nodes`` whole nodes added on top). A node's free
    GPUs are whole slots here: TP divides the node's GPUs. A replica wider than a node keeps
    its surviving nodes."""
    free_on_lost = IF(gt(r("platform_sold_full"), 0),
                      MAX(0, r("gpus_per_node") - r("pool_replicas_lost_with_a_node") * _gpr), 0)
    survivors = (r("pool_replica_nodes") - 1) * r("gpus_per_node")
    return MAX(0, ROUNDDOWN((r("group_free_gpus") + spare_nodes * r("gpus_per_node")
                             - free_on_lost + survivors) / _gpr, 0))


def _replicas_after_node_loss(slots_alone: str, slots_off_node: str) -> Expr:
    """The pool's replicas running with the node that hurts it most down, once the lost ones
    have restarted on whole free slots. Alone in its group: the other nodes' free slots.
    Sharing a group (packed): the worse of a full node down (restarts on the partly used
    node's free GPUs and on the nodes running nothing) and the partly used node down
    (restarts on the nodes running nothing only)."""
    lost, on_partial = r("pool_replicas_lost_with_a_node"), r("pool_replicas_on_partial_node")
    off = r(slots_off_node)
    alone = r("pool_replicas") - lost + MIN(lost, r(slots_alone))
    shared = MIN(r("pool_replicas") - lost + MIN(lost, r("pool_restart_slots_partial") + off),
                 r("pool_replicas") - on_partial + MIN(on_partial, off))
    return IF(eq(r("group_pool_count"), 1), alone, shared)


def _headroom_after(replicas: Expr) -> Expr:
    return pool_headroom(replicas)  # a margin on the load (stated streams: tokens/s)


POOL_NODE_LOSS_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_replica_nodes", "Nodes one replica spans", "nodes",
        ROUNDUP(_gpr / r("gpus_per_node"), 0),
        "1 when a replica fits in one node (or one NVLink domain on a rack-scale platform)."),
    PlanCalculation(
        "pool_replicas_lost_with_a_node", "Replicas lost with one node", "replicas",
        MIN(r("pool_replicas"), r("replicas_per_node"),
            IF(eq(r("group_pool_count"), 1),
               ROUNDUP(r("pool_replicas") / r("group_packed_nodes"), 0), r("pool_replicas"))),
        "Alone in its group: the fullest node when spread evenly. Sharing: at most a node "
        "full of the pool's replicas (true of any packing)."),
    PlanCalculation(
        "pool_replicas_on_partial_node", "Replicas on the partly used node", "replicas",
        IF(gt(r("group_free_gpus_partial"), 0),
           MIN(r("pool_replicas"), ROUNDDOWN((r("gpus_per_node") - r("group_free_gpus_partial"))
                                             / _gpr, 0)), 0),
        "At most what fits beside its free GPUs; 0 when there is no such node."),
    PlanCalculation(
        "pool_restart_slots_partial", "Restart slots on the partly used node", "replicas",
        ROUNDDOWN(r("group_free_gpus_partial") / _gpr, 0),
        "Whole replicas its free GPUs hold: free GPUs / GPUs per replica, rounded down."),
    PlanCalculation(
        "pool_restart_slots_alone", "Restart slots on the other nodes (pool alone)", "replicas",
        _slots_alone(lift(0)),
        "Alone in its group: (free GPUs - those of the fullest node) / GPUs per replica."),
    PlanCalculation(
        "pool_restart_slots_off_node", "Restart slots on nodes running nothing", "replicas",
        _slots_off_node(r("group_free_nodes")),
        "Whole free nodes x replicas per node (a replica wider than a node: its surviving "
        "nodes + one free node bring it back) + what the standby GPUs of one more node hold."),
    PlanCalculation(
        "pool_replicas_after_node_loss_packed", "Replicas with one node down, before a spare "
        "node", "replicas",
        _replicas_after_node_loss("pool_restart_slots_alone", "pool_restart_slots_off_node"),
        "Replicas not on the node that hurts the pool most + those restarted on whole free "
        "slots (a replica's GPUs free in one node, or whole free nodes)."),
    PlanCalculation(
        "pool_headroom_after_node_loss_packed", "Headroom with one node down, before a spare "
        "node", "fraction", _headroom_after(r("pool_replicas_after_node_loss_packed")),
        "Negative with N+1 asked: the group gets a spare node."),
)

GROUP_NODE_LOSS_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_headroom_after_node_loss_packed",
              "Headroom with one node down, before a spare node (weakest pool)", "fraction",
              "MIN", r("pool_headroom_after_node_loss_packed"), "The least of the group's pools."),
)

GROUP_NODE_LOSS_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "group_spare_nodes_added", "Spare nodes added for N+1", "nodes",
        IF(AND(_n1, lt(r("group_headroom_after_node_loss_packed"), 0)),
           1, 0),
        "With N+1 asked and a pool short of its peak with a node down: one whole free node. "
        "A node down loses at most a node's worth of replicas, and a replica wider than a "
        "node restarts on its surviving nodes + the free one."),
    PlanCalculation(
        "group_nodes", "Nodes", "nodes", r("group_packed_nodes") + r("group_spare_nodes_added"),
        "Nodes for load and spares + the spare nodes N+1 needs."),
    PlanCalculation(
        "group_gpus_used", "GPUs serving or on standby", "GPUs",
        r("group_load_spare_gpus") + r("group_spare_nodes_added") * r("gpus_per_node"),
        "Load + spares + the spare nodes' GPUs (as a workload sized alone counts spares)."),
    PlanCalculation(
        "group_standby_gpus", "Spare GPUs on standby", "GPUs",
        r("group_gpus_used") - r("group_pool_gpus"),
        "Spare GPUs no pool runs a replica on: they take over a failed node's replicas."),
    PlanCalculation(
        "group_gpus_purchased", "GPUs purchased", "GPUs",
        IF(gt(r("platform_sold_full"), 0), r("group_nodes") * r("gpus_per_node"),
           r("group_gpus_used")),
        "Fixed baseboards come full: nodes x GPUs per node; PCIe servers: the GPUs used."),
    PlanCalculation(
        "group_idle_gpus", "GPUs bought beyond replicas and standby (idle)", "GPUs",
        r("group_gpus_purchased") - r("group_gpus_used"),
        "GPUs purchased - GPUs used: a full baseboard's GPUs beyond load and spares. GPUs "
        "running replicas + on standby + idle = GPUs purchased. Embedding and reranking "
        "servers may run on these (Retrieval sheet): the plan then counts them as running "
        "retrieval, not idle."),
)

POOL_HEADROOM_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_restart_slots_alone_final", "Restart slots on the other nodes, spare nodes "
        "included (pool alone)", "replicas", _slots_alone(r("group_spare_nodes_added")),
        "As before, with the spare nodes' GPUs free as well."),
    PlanCalculation(
        "pool_restart_slots_off_node_final", "Restart slots on nodes running nothing, spare "
        "nodes included", "replicas",
        _slots_off_node(r("group_free_nodes") + r("group_spare_nodes_added")),
        "As before, with the spare nodes free as well."),
    PlanCalculation(
        "pool_replicas_after_node_loss", "Replicas with one node down", "replicas",
        _replicas_after_node_loss("pool_restart_slots_alone_final",
                                  "pool_restart_slots_off_node_final"),
        "As before the spare node, with the spare nodes free as well: the replicas that "
        "still run once the lost ones have restarted."),
    # a cloud offer sold by the GPU (costs.py: cloud_sold_by_gpu) rents an instance of each
    # replica's own GPUs (review round 22)
    PlanCalculation(
        "pool_cloud_load_instances", "Cloud instances for the load, one per replica",
        "instances",
        r("pool_replicas_for_load") * ROUNDUP(tp / r("gpus_per_node"), 0)
        + IF(gt(r("disagg_prefill_gpus"), 0), r("pool_prefill_replicas")
             * ROUNDUP(r("disagg_prefill_gpus") / r("gpus_per_node"), 0), 0),
        "Replicas for peak + headroom (and prefill replicas) x the instances one spans (a "
        "node's GPUs at most; offers sold by the GPU)."),
    PlanCalculation(
        "pool_cloud_spare_gpus", "GPUs of the N+1 spare instance", "GPUs",
        IF(gt(r("pool_load_gpus"), 0), replica_instance_gpus(r("pool_cloud_replica_gpus")), 0),
        "The instance of the largest replica: its GPUs, a node's at most, or the smallest "
        "listed size that holds it (offers sold by the GPU)."),
    PlanCalculation(
        "pool_headroom_achieved", "Headroom achieved at peak", "fraction",
        pool_headroom(r("pool_replicas")),
        "Capacity / peak demand - 1, all nodes up (stated streams: their tokens/s / their "
        "target - 1)."),
    PlanCalculation(
        "pool_headroom_after_node_loss", "Headroom with one node down", "fraction",
        _headroom_after(r("pool_replicas_after_node_loss")),
        "Replicas with the node that hurts the pool most down / peak demand - 1. Negative: "
        "the pool's peak is not met while a node is down; N+1 holds at 0 or more."),
)

GROUP_HEADROOM_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_headroom_achieved", "Headroom achieved at peak (weakest pool)",
              "fraction", "MIN", r("pool_headroom_achieved"), "The least of the group's pools."),
    Aggregate("group_headroom_after_node_loss", "Headroom with one node down (weakest pool)",
              "fraction", "MIN", r("pool_headroom_after_node_loss"),
              "The least of the group's pools."),
    Aggregate("group_cloud_replica_gpus", "GPUs of the largest replica", "GPUs", "MAX",
              r("pool_cloud_replica_gpus"),
              "The widest replica of the group's pools: what one cloud instance must hold."),
    # what a cloud offer sold by the GPU rents (costs.py: cloud_sold_by_gpu): an instance of
    # each replica's own GPUs, and with N+1 one spare instance for the group (session 23): as
    # a bought group keeps one spare node, not one per pool, for one failure at a time, its
    # spare is of the widest replica's shape (a node's GPUs at most), so it can take over the
    # replica of any of its pools: it loads the failed replica's model (a cold start,
    # constants.yaml storage_read_gb_per_s), as the bought group's standby node does
    Aggregate("group_cloud_load_instances", "Cloud instances for the load, one per replica",
              "instances", "SUM", r("pool_cloud_load_instances"),
              "All pools' (offers sold by the GPU)."),
    Aggregate("group_cloud_spare_gpus", "GPUs of the N+1 spare instance", "GPUs", "MAX",
              r("pool_cloud_spare_gpus"),
              "One spare instance for the group, as wide as its widest replica (a node's GPUs at "
              "most): one instance down loses one replica of one pool, which the spare takes "
              "over, loading that pool's model (offers sold by the GPU)."),
    Aggregate("group_cloud_spare_instances", "Spare instances for N+1", "instances", "MAX",
              IF(gt(r("pool_load_gpus"), 0), 1, 0),
              "One for the group, whatever its pools (offers sold by the GPU)."),
)

# A rented plan (review round 21): a node down is one rented cloud instance down (the instance
# size and count of the group's cost rows, cloud_instance_gpus and cloud_instances), not a node
# of the platform the bought plan would buy. Run after the group's cost rows.
_S = MAX(1, r("cloud_instance_gpus"))
_R = MAX(1, r("group_cloud_replica_gpus"))
_lost_i = r("pool_replicas_lost_with_an_instance")
_rented = gt(r("plan_rented"), 0)
# an offer sold by the GPU (costs.py): each replica is an instance of its own; the pool runs
# its replicas for the load, its N+1 spare instance on standby (review round 22)
_by_gpu = gt(r("cloud_sold_by_gpu"), 0)
_by_gpu_run = AND(_rented, _by_gpu)
# the group's one spare instance (group_cloud_spare_gpus) holds ROUNDDOWN(its GPUs / the
# pool's replica GPUs) of the pool's replicas; a replica wider than a node restarts on its
# surviving instances + the spare (a node's GPUs), one replica
_spare_slots = IF(AND(_n1, gt(r("pool_load_gpus"), 0)),
                  IF(gt(_gpr, MIN(r("gpus_per_node"), r("group_cloud_spare_gpus"))), 1,
                     ROUNDDOWN(r("group_cloud_spare_gpus") / _gpr, 0)), 0)
# Session 24 (hunt): pools sharing a group of whole instances are packed instance by instance,
# widest replicas first (powers of two: no gaps), so the instances beyond ROUNDUP(GPUs running
# replicas / instance size) run nothing. One of them holds every replica a lost instance ran,
# of every pool (they fitted in one instance of that size), so each pool restarts its lost
# ones there: its whole slots, ROUNDDOWN(size / its replica GPUs) each. The free GPUs counted
# in slots of the group's widest replica alone read 0 for a TP1 pool beside TP4 ones (5 x 4
# A10G rented, 15 GPUs running, one instance empty: -100 % with one instance down).
_free_instances = MAX(0, r("cloud_instances") - ROUNDUP(r("group_pool_gpus") / _S, 0))
_free_instance_slots = IF(AND(gt(r("group_pool_count"), 1), ge(_S, _R)),
                          _free_instances * ROUNDDOWN(_S / _gpr, 0), 0)

POOL_RENTED_LOSS_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_replicas_lost_with_an_instance", "Replicas lost with one rented instance",
        "replicas",
        IF(_by_gpu, MIN(IF(gt(r("cloud_sizes_listed"), 0), MAX(1, ROUNDDOWN(_S / _gpr, 0)), 1),
                         r("pool_replicas_for_load")),
           MIN(r("pool_replicas"), MAX(1, ROUNDDOWN(_S / _gpr, 0)),
               IF(eq(r("group_pool_count"), 1),
                  ROUNDUP(r("pool_replicas") / MAX(1, r("cloud_instances")), 0),
                  r("pool_replicas")))),
        "What one instance holds (at least the one replica a wider replica spans it with); alone "
        "in its group, its replicas spread evenly over the instances: the fullest one. Sold by "
        "the GPU: one replica, its own instance (listed sizes: the replicas one holds)."),
    PlanCalculation(
        "pool_restart_slots_rented", "Restart slots on the other rented instances", "replicas",
        IF(_by_gpu, _spare_slots,
           MAX(ROUNDDOWN(MAX(0, r("cloud_gpus_rented") - r("group_pool_gpus")
                             - MAX(0, _S - _lost_i * _gpr)) / _R, 0) * ROUNDDOWN(_R / _gpr, 0),
               _free_instance_slots)),
        "GPUs rented running no replica, less the rest of the lost instance (its free GPUs go "
        "with it; other pools' replicas on it restart too), in whole slots of the group's widest "
        "replica x the pool's replicas a slot holds; pools sharing the group, at least the "
        "instances running nothing x the pool's replicas one holds (one such instance holds "
        "all a lost instance ran). Sold by the GPU: with N+1 the replicas the group's spare "
        "instance holds (its GPUs / the replica's; 1 for a replica wider than a node)."),
    PlanCalculation(
        "pool_replicas_after_instance_loss", "Replicas with one rented instance down", "replicas",
        IF(_by_gpu, r("pool_replicas_for_load"), r("pool_replicas"))
        - _lost_i + MIN(_lost_i, r("pool_restart_slots_rented")),
        "Replicas not on the lost instance + those restarted on whole free slots (sold by the "
        "GPU: of its replicas for the load)."),
    PlanCalculation(
        "pool_headroom_after_instance_loss", "Headroom with one rented instance down", "fraction",
        _headroom_after(r("pool_replicas_after_instance_loss")),
        "Replicas with one instance down / peak demand - 1."),
    PlanCalculation(
        "pool_replicas_as_run", "Replicas (as run)", "replicas",
        IF(_by_gpu_run, r("pool_replicas_for_load"), r("pool_replicas")),
        "Rented by the GPU: its replicas for the load, its N+1 spare instance on standby; "
        "else the replicas above."),
    PlanCalculation(
        "pool_spare_replicas_as_run", "Spare replicas (N+1), running (as run)", "replicas",
        IF(_by_gpu_run, 0, r("pool_spare_replicas")),
        "Rented by the GPU: none running (the spare instance waits); else as above."),
    PlanCalculation(
        "pool_headroom_as_run", "Headroom achieved at peak (as run)", "fraction",
        IF(_by_gpu_run, _headroom_after(r("pool_replicas_for_load")),
           r("pool_headroom_achieved")),
        "Replicas as run / peak demand - 1, all instances (nodes) up."),
    PlanCalculation(
        "pool_replicas_lost_one_down", "Replicas lost with one node down (as run)", "replicas",
        IF(_rented, _lost_i, r("pool_replicas_lost_with_a_node")),
        "Rented: with one rented instance; bought: with one node."),
    PlanCalculation(
        "pool_replicas_one_down", "Replicas with one node down (as run)", "replicas",
        IF(_rented, r("pool_replicas_after_instance_loss"), r("pool_replicas_after_node_loss")),
        "Rented: a node is a rented instance; bought: a node of the platform."),
    PlanCalculation(
        "pool_headroom_one_down", "Headroom with one node down (as run)", "fraction",
        IF(_rented, r("pool_headroom_after_instance_loss"), r("pool_headroom_after_node_loss")),
        "Rented: with one rented instance down; bought: with one node down. Negative: peak is "
        "not met while it is down."),
)

GROUP_RENTED_LOSS_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_headroom_after_instance_loss",
              "Headroom with one rented instance down (weakest pool)", "fraction", "MIN",
              r("pool_headroom_after_instance_loss"), "The least of the group's pools."),
    Aggregate("group_headroom_one_down", "Headroom with one node down, as run (weakest pool)",
              "fraction", "MIN", r("pool_headroom_one_down"), "The least of the group's pools."),
)

GROUP_RENTED_LOSS_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "group_nodes_as_run", "Nodes as run (rented: cloud instances)", "nodes",
        IF(_rented, r("cloud_instances"), r("group_nodes")),
        "What one node down is one of: a rented instance when renting, else a node bought. "
        "1: the service stops while it is down."),
)
