"""Each workload's part of the account plan (issue 22), its last stage: a member's share of its
pool and of its node group, and each figure and TCO line of the group taken at that share, so
the workloads' columns add up to the plan's totals. :mod:`.plan` lists the stages in order.
"""

from __future__ import annotations

from ..expr import AND, IF, gt, le
from .core import r
from .plan_pools import MEMBER_SEQUENCES as _seqs
from .planrows import PlanCalculation

# Each workload's part of the plan (issue 22: the per-workload rows show the plan, not each
# workload sized alone). The rule: a member's share of its pool is its share of the pool's
# per-sequence step time (its sequences x its b over the pool's sum) -- the replica time its
# users occupy in the mixed batch, so a long-context member counts for more than its users;
# a pool's share of its node group is its share of the GPUs running replicas (standby spares
# and a full node's unused GPUs follow the same split). The shares of a group's members sum
# to 1, so the workloads' figures sum to the plan's totals.
WORKLOAD_SHARE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "plan_pool_share", "Share of its pool", "fraction",
        IF(gt(r("pool_step_sequence_ms"), 0),
           _seqs * r("step_ms_per_seq") / r("pool_step_sequence_ms"),
           IF(gt(r("pool_members_demand_replicas"), 0),
              r("demand_replicas") / r("pool_members_demand_replicas"),
              1 / r("pool_member_count"))),
        "Its sequences x its step time per sequence / the pool's sum: the share of the mixed "
        "batch's step time its users take. Without sequences (measured): its peak replicas."),
    PlanCalculation(
        "plan_group_share", "Share of its node group", "fraction",
        r("plan_pool_share") * IF(gt(r("group_pool_gpus"), 0),
                                  r("pool_gpus") / r("group_pool_gpus"),
                                  1 / r("group_pool_count")),
        "Share of its pool x the pool's share of the GPUs running replicas in the group."),
    PlanCalculation("plan_headroom_achieved", "Headroom achieved at peak (its pool's)",
                    "fraction", r("pool_headroom_achieved"),
                    "Headroom belongs to the pool: its members share its replicas."),
    PlanCalculation("plan_headroom_after_node_loss", "Headroom with one node down (its pool's)",
                    "fraction", r("pool_headroom_one_down"),
                    "The pool's, on its node group's nodes (rented: its cloud instances)."),
    PlanCalculation("plan_replicas", "Replicas (share of the pool)", "replicas",
                    r("plan_pool_share") * r("pool_replicas"), "Share of its pool x replicas."),
    PlanCalculation("plan_nodes", "Nodes (share)", "nodes",
                    r("plan_group_share") * r("group_nodes"), "Share of its group x nodes."),
    PlanCalculation("plan_gpus_purchased", "GPUs bought (share)", "GPUs",
                    r("plan_group_share") * r("group_gpus_purchased"),
                    "Share of its group x GPUs purchased."),
    PlanCalculation("plan_gpus_used", "GPUs serving or on standby (share)", "GPUs",
                    r("plan_group_share") * r("group_gpus_used"),
                    "Share of its group x GPUs used."),
    PlanCalculation("plan_capex", "Capital cost (share)", "currency",
                    r("plan_group_share") * r("capex"), "Share of its group x capital cost."),
    PlanCalculation("plan_annual_cost_onprem", "On-prem cost per year (share)", "currency/yr",
                    r("plan_group_share") * r("annual_cost_onprem"),
                    "Share of its group x on-prem cost per year."),
    PlanCalculation("plan_annual_cost_cloud", "Cloud cost per year (share)", "currency/yr",
                    r("plan_group_share") * r("annual_cost_cloud"),
                    "Share of its group x cloud cost per year."),
)

# The costs section's lines per workload: its share of each of its group's TCO lines, so a
# workload's column adds up like the group's (every line is the group's x the same share).
_SHARED_LINES = (
    ("capex_platforms", "Platforms without GPUs (share)", "currency"),
    ("capex_gpus", "GPUs (share)", "currency"),
    ("capex_network", "Network (share)", "currency"),
    ("annual_capex", "Capital cost, amortised (share)", "currency/yr"),
    ("annual_power_cost", "Power (share)", "currency/yr"),
    ("annual_colocation", "Colocation (share)", "currency/yr"),
    ("annual_storage", "Storage (share)", "currency/yr"),
    ("annual_software", "Software licences (share)", "currency/yr"),
    ("annual_support", "Support (share)", "currency/yr"),
    ("annual_facility", "Power and colocation (share)", "currency/yr"),
    ("annual_services", "Storage, licences and support (share)", "currency/yr"),
    ("cloud_gpus_rented", "Cloud GPUs rented (share)", "GPUs"),
)
_tokens = r("million_total_tokens_per_year")
WORKLOAD_SHARE_CALCULATIONS += (
    *(PlanCalculation(f"plan_{name}", label, unit, r("plan_group_share") * r(name),
                      "Share of its group x the group's line.")
      for name, label, unit in _SHARED_LINES),
    PlanCalculation(
        "plan_cost_per_million_total_tokens_onprem", "On-prem per million tokens (share)",
        "currency/M tok", IF(gt(_tokens, 0), r("plan_annual_cost_onprem") / _tokens, 0),
        "Its share of the on-prem cost per year / its million tokens (input + output) a year."),
    PlanCalculation(
        "plan_cost_per_million_total_tokens_cloud", "Cloud per million tokens (share)",
        "currency/M tok", IF(gt(_tokens, 0), r("plan_annual_cost_cloud") / _tokens, 0),
        "Its share of the cloud cost per year / its million tokens (input + output) a year."),
    PlanCalculation(
        "plan_cost_per_million_tokens_onprem", "On-prem per million output tokens (share)",
        "currency/M tok", IF(gt(r("million_tokens_per_year"), 0),
                             r("plan_annual_cost_onprem") / r("million_tokens_per_year"), 0),
        "Its share of the on-prem cost per year / its million output tokens a year."),
    PlanCalculation(
        "plan_cost_per_million_tokens_cloud", "Cloud per million output tokens (share)",
        "currency/M tok", IF(gt(r("million_tokens_per_year"), 0),
                             r("plan_annual_cost_cloud") / r("million_tokens_per_year"), 0),
        "Its share of the cloud cost per year / its million output tokens a year."),
    PlanCalculation(
        "plan_breakeven_months", "Buy-vs-rent break-even (share)", "months",
        IF(gt(r("plan_annual_cost_cloud"),
              r("plan_annual_cost_onprem") - r("plan_annual_capex")),
           r("plan_capex") / ((r("plan_annual_cost_cloud") - r("plan_annual_cost_onprem")
                               + r("plan_annual_capex")) / 12), 0),
        "As the TCO break-even, on its shares (the same as its node group's: every share is "
        "the same fraction of the group's line); 0 = renting stays cheaper."),
    PlanCalculation(
        "plan_breakeven_in_writeoff", "Buying pays back within the amortisation period (share)",
        "flag", IF(AND(gt(r("plan_breakeven_months"), 0),
                       le(r("plan_breakeven_months"), r("amortization_years") * 12)), 1, 0),
        "As the TCO row, on its share's break-even: 1 when it comes within the amortisation "
        "period (years x 12 months)."),
)

# A workload's share figure of each plan total (PLAN_TOTALS keys).
WORKLOAD_SHARE_OF = {"gpus_used": "plan_gpus_used", "gpus_purchased": "plan_gpus_purchased",
                     "nodes": "plan_nodes", "capex": "plan_capex",
                     "annual_cost_onprem": "plan_annual_cost_onprem",
                     "annual_cost_cloud": "plan_annual_cost_cloud"}
