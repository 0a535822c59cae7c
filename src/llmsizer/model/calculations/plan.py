"""PLAN: one deployment plan per account (DESIGN §3 "Account plan").

Workloads sized alone each carry their own rounding and their own N+1. The plan pools
workloads that run the same model, precisions, GPU and TP (a *pool* shares replicas) and
packs the pools that share a GPU and platform into the same nodes (a *node group*).
llmsizer.sizing.plan decides which workloads pool; every number here is evaluated by it with the
expression machinery and printed by the workbook's Plan sheet as formulas over the workload
sheets. The stages run in order: member rows, pool load, group load, pool spares, group
size, pool node loss, group node loss (a spare node where N+1 needs one), pool headroom,
group headroom and cost, then node loss as run (a rented plan's node is a cloud instance).

The stages' rows are in :mod:`.plan_pools` (member rows to group size),
:mod:`.plan_node_loss` (pool node loss to group headroom) and :mod:`.plan_shares` (each
workload's part); this module lists them in order and costs a group, and holds the plan's
account totals.
"""

from __future__ import annotations

from ..expr import IF, gt, ref, references
from .core import Calculation
from .plan_node_loss import (
    GROUP_HEADROOM_AGGREGATES,
    GROUP_NODE_LOSS_AGGREGATES,
    GROUP_NODE_LOSS_CALCULATIONS,
    GROUP_RENTED_LOSS_AGGREGATES,
    GROUP_RENTED_LOSS_CALCULATIONS,
    POOL_HEADROOM_CALCULATIONS,
    POOL_NODE_LOSS_CALCULATIONS,
    POOL_RENTED_LOSS_CALCULATIONS,
)
from .plan_pools import (
    GROUP_LOAD_AGGREGATES,
    GROUP_SIZE_AGGREGATES,
    GROUP_SIZE_CALCULATIONS,
    GROUP_SPARE_CALCULATIONS,
    POOL_AGGREGATES,
    POOL_CALCULATIONS,
    POOL_SPARE_CALCULATIONS,
)
from .plan_shares import WORKLOAD_SHARE_CALCULATIONS
from .planrows import Aggregate, PlanCalculation

# The stages in evaluation order (llmsizer.sizing.plan runs them; docs and the Plan sheet list them).
PLAN_STAGES: tuple[tuple[str, tuple[Aggregate | PlanCalculation, ...]], ...] = (
    ("pool", POOL_AGGREGATES + POOL_CALCULATIONS),
    ("group load", GROUP_LOAD_AGGREGATES + GROUP_SPARE_CALCULATIONS),
    ("pool spares", POOL_SPARE_CALCULATIONS),
    ("group size", GROUP_SIZE_AGGREGATES + GROUP_SIZE_CALCULATIONS),
    ("pool node loss", POOL_NODE_LOSS_CALCULATIONS),
    ("group node loss", GROUP_NODE_LOSS_AGGREGATES + GROUP_NODE_LOSS_CALCULATIONS),
    ("pool headroom", POOL_HEADROOM_CALCULATIONS),
    ("group headroom", GROUP_HEADROOM_AGGREGATES),
    # after the group's cost rows (its cloud instances): a rented plan's node is an instance
    ("pool rented node loss", POOL_RENTED_LOSS_CALCULATIONS),
    ("group rented node loss", GROUP_RENTED_LOSS_AGGREGATES + GROUP_RENTED_LOSS_CALCULATIONS),
    ("workload share", WORKLOAD_SHARE_CALCULATIONS),
)

# A group is costed by the list's own calculations (the TCO lines, whoever edits them),
# read with the group's nodes and GPUs in place of one option's: the ones that depend on the
# counts and lead to the group's figures, in list order.
GROUP_COUNTS: dict[str, str] = {"nodes": "group_nodes", "gpus": "group_gpus_used",
                                "gpus_purchased": "group_gpus_purchased",
                                "cloud_replica_gpus": "group_cloud_replica_gpus",
                                "load_gpus": "group_load_gpus",
                                # an offer sold by the GPU: one instance per replica, one spare
                                # instance per pool (costs.py, plan_node_loss.py)
                                "cloud_load_instances": "group_cloud_load_instances",
                                "cloud_spare_gpus": "group_cloud_spare_gpus",
                                "cloud_spare_instances": "group_cloud_spare_instances"}
GROUP_COST_FIGURES = ("capex", "annual_cost_onprem", "annual_cost_cloud")


def group_cost_calculations(calculations: tuple[Calculation, ...]) -> tuple[Calculation, ...]:
    """The calculations of the whole list (``calculations``) that cost a group."""
    by_name = {c.name: c for c in calculations}
    downstream = set(GROUP_COUNTS)
    for c in calculations:
        if c.name not in GROUP_COUNTS and references(c.expr) & downstream:
            downstream.add(c.name)
    needed: set[str] = set()
    stack = list(GROUP_COST_FIGURES)
    while stack:
        name = stack.pop()
        if name in needed or name not in by_name or name in GROUP_COUNTS:
            continue
        needed.add(name)
        stack.extend(references(by_name[name].expr))
    return tuple(c for c in calculations if c.name in needed and c.name in downstream)


# Account totals of the plan: sums over its node groups (cost per million tokens as for the
# account totals in costs.py).
PLAN_TOTALS = {"gpus_used": "group_gpus_used", "gpus_purchased": "group_gpus_purchased",
               "nodes": "group_nodes", "capex": "capex",
               "annual_cost_onprem": "annual_cost_onprem", "annual_cost_cloud": "annual_cost_cloud"}

# The account's GPUs bought, split three ways that add up to them (the proposal, CLI and web
# say "N serving, N on standby, N idle"): standby counts the spares that run no replica.
TOTAL_GPUS_SERVING = ref("gpus_used") - ref("gpus_standby")
TOTAL_GPUS_IDLE = ref("gpus_purchased") - ref("gpus_used")

# What the plan saves against sizing each workload alone (``*_dedicated``: totals_dedicated),
# bought (on-premises per year) and rented (cloud per year: a rented account's terms).
PLAN_SAVING = ref("annual_cost_onprem_dedicated") - ref("annual_cost_onprem")
PLAN_SAVING_SHARE = IF(gt(ref("annual_cost_onprem_dedicated"), 0),
                       PLAN_SAVING / ref("annual_cost_onprem_dedicated"), 0)
PLAN_SAVING_CLOUD = ref("annual_cost_cloud_dedicated") - ref("annual_cost_cloud")
# the GPUs the workloads sized alone rent beyond the plan's (session 24: the cloud's storage
# follows the GPUs rented, so these, with their storage, are the rented saving's reason)
PLAN_GPUS_RENTED_SAVED = ref("cloud_gpus_rented_dedicated") - ref("cloud_gpus_rented")
PLAN_SAVING_SHARE_CLOUD = IF(gt(ref("annual_cost_cloud_dedicated"), 0),
                             PLAN_SAVING_CLOUD / ref("annual_cost_cloud_dedicated"), 0)
