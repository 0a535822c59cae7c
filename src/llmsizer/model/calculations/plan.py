"""PLAN: one deployment plan per account (DESIGN §3 "Account plan").

Workloads sized alone each carry their own rounding and their own N+1. The plan pools
workloads that run the same model, precisions, GPU and TP (a *pool* shares replicas) and
packs the pools that share a GPU and platform into the same nodes (a *node group*).
llmsizer.sizing.plan decides which workloads pool; every number here is evaluated by it with the
expression machinery and printed by the workbook's Plan sheet as formulas over the workload
sheets. The stages run in order: member rows, pool load, group load, pool spares, group
size, pool node loss, group node loss (a spare node where N+1 needs one), pool headroom,
group headroom and cost.
"""

from __future__ import annotations

from ..expr import (
    AND,
    IF,
    MAX,
    MIN,
    ROUNDDOWN,
    ROUNDUP,
    Expr,
    eq,
    ge,
    gt,
    le,
    lift,
    lt,
    ref,
    references,
)
from .core import Calculation, r, tp
from .planrows import Aggregate, PlanCalculation

_n1 = gt(r("survive_node_loss"), 0)

# Over a pool's members, each read from the member workload's option for the pool's choice
# (a member row may also read the pool aggregates listed before it). A member's sequences in
# flight at peak are its users (or its system target's sequences). A replica's capacity is
# shared: each member's sequences use 1/B of it for every limit B (tokens/s at the pool's
# strictest target, KV memory, TTFT, engine cap), so the pool needs the largest of the sums
# (closed form, never fewer replicas when users grow, exactly today's sizing for one member).
_seqs = r("demand_replicas") * r("batch_per_replica")
# a member's batch at the pool's longest allowed step on its line t(B) = a + b B, never above
# its own batch: the line would read a small-batch term (the FP4 saving) as holding at any
# batch
_member_tpot_batch = IF(gt(r("pool_target_tpot_ms"), 0),
                        MIN(ROUNDDOWN((r("pool_step_limit_ms") - r("step_fixed_ms"))
                                      / r("step_ms_per_seq"), 0), r("batch_by_tpot")),
                        r("max_batch_per_replica"))
POOL_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("pool_demand_sequences", "Sequences in flight at peak", "sequences", "SUM", _seqs,
              "Each member's peak demand x its batch: its users, or its system target's "
              "sequences at its own speed."),
    Aggregate("pool_members_demand_replicas", "Members' peak demand, sized alone", "replicas",
              "SUM", r("demand_replicas"), "Used when no member has sequences (measured mode)."),
    Aggregate("pool_member_batch_smallest", "Smallest member batch, sized alone", "sequences",
              "MIN", r("batch_per_replica"), "Used when no member has sequences."),
    Aggregate("pool_target_tpot_largest", "Loosest time per output token", "ms", "MAX",
              r("target_tpot_ms"), "Stands in for members without a per-token target."),
    Aggregate("pool_target_tpot_ms", "Allowed time per output token (strictest)", "ms", "MIN",
              IF(gt(r("target_tpot_ms"), 0), r("target_tpot_ms"), r("pool_target_tpot_largest")),
              "Every member's tokens/s target must hold in the shared batch: the smallest "
              "allowed TPOT; 0 = no per-token target."),
    # x-frontier review: a member that speculates turns one step into several tokens (its
    # time per output token = the step x spec_tpot_factor), so the step every member shares is
    # bounded by each member's target over its own factor; each member's target over its own
    # factor let a plain member's users get 23.9 ms a token against a 16.7 ms target beside
    # a speculating one
    Aggregate("pool_step_limit_ms", "Longest step every member's target allows", "ms", "MIN",
              IF(gt(r("target_tpot_ms"), 0), r("target_tpot_ms"), r("pool_target_tpot_largest"))
              / r("spec_tpot_factor"),
              "Each member's allowed time per output token / its speculative factor (1 without "
              "speculation): the shared step's bound, the smallest over the members."),
    Aggregate("pool_spec_factor_largest", "Largest speculative factor", "x", "MAX",
              r("spec_tpot_factor"),
              "The members' time per output token / step time: the largest is the slowest "
              "member's (1 for a member without speculative decoding)."),
    Aggregate("pool_batch_by_tpot", "Smallest member batch at the strictest TPOT", "sequences",
              "MIN", _member_tpot_batch,
              "ROUNDDOWN((longest allowed step - a) / b) of each member: below 1 a member "
              "cannot share the pool's speed."),
    Aggregate("pool_tpot_replicas", "Replicas the tokens/s targets need", "replicas", "SUM",
              IF(ge(_member_tpot_batch, 1), _seqs / _member_tpot_batch, 0),
              "Each member's sequences / its batch at the strictest TPOT: a replica's step "
              "time shared by the sequences it holds."),
    Aggregate("pool_memory_replicas", "Replicas the KV cache needs", "replicas", "SUM",
              IF(gt(r("max_sequences_by_memory"), 0), _seqs / r("max_sequences_by_memory"), 0),
              "Each member's sequences / the requests of its context that fit in a replica."),
    Aggregate("pool_ttft_replicas", "Replicas the TTFT targets need", "replicas", "SUM",
              IF(gt(r("batch_by_ttft"), 0), _seqs / r("batch_by_ttft"), 0),
              "Each member's sequences / its TTFT batch (at its own prompt and step time)."),
    Aggregate("pool_first_estimate_replicas", "Replicas the experts read need", "replicas",
              "SUM", _seqs / r("batch_by_first_estimate"),
              "Each member's sequences / the first estimate of its batch where that binds "
              "(the batch whose experts its step reads; decode.py), else / the engine cap."),
    Aggregate("pool_itl_replicas", "Replicas the inter-token latency targets need", "replicas",
              "SUM", IF(gt(r("batch_by_itl"), 0), _seqs / r("batch_by_itl"), 0),
              "Each member's sequences / its inter-token latency percentile batch."),
    Aggregate("pool_kv_sequence_gb", "KV reserved by all sequences", "GB", "SUM",
              _seqs * r("kv_gb_per_request"), "Sequences x KV per request, summed."),
    Aggregate("pool_kv_gb_largest", "Largest member KV per request", "GB", "MAX",
              r("kv_gb_per_request"), "Used when no member has sequences."),
    Aggregate("pool_step_sequence_ms", "Per-sequence step time of all sequences", "ms", "SUM",
              _seqs * r("step_ms_per_seq"),
              "Sequences x step time per sequence (b), summed: a mixed batch's step is a + "
              "the sum of its sequences' b."),
    Aggregate("pool_step_ms_largest", "Largest member step time per sequence", "ms", "MAX",
              r("step_ms_per_seq"), "Used when no member has sequences."),
    Aggregate("pool_step_fixed_ms", "Step time at batch 0 (a)", "ms", "MAX", r("step_fixed_ms"),
              "The same model, GPU and TP give every member the same a (MoE: the largest)."),
    Aggregate("pool_required_system_tokens_per_s", "Required throughput", "tok/s", "SUM",
              r("required_system_tokens_per_s"), "All members' peak output tokens/s."),
    Aggregate("pool_prefill_gpus", "Prefill GPUs for peak + headroom (disaggregated)", "GPUs",
              "SUM", r("disagg_prefill_gpus_for_load"),
              "Each member's prefill replicas for its load x their GPUs (0 when prefill and "
              "decode share the replicas)."),
    Aggregate("pool_cloud_replica_gpus", "GPUs of the largest replica", "GPUs", "MAX",
              r("cloud_replica_gpus"),
              "The widest replica of its members (a disaggregated prefill replica included): "
              "what one cloud instance must hold."),
    Aggregate("pool_member_count", "Members", "workloads", "SUM", lift(1),
              "Shares the pool equally among members only when none has any load."),
)

_has_demand = gt(r("pool_demand_sequences"), 0)
POOL_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_meets_targets", "Every member can share the pool's speed", "flag",
        IF(ge(r("pool_batch_by_tpot"), 1), 1, 0),
        "0 when a member's sequence alone is slower than the strictest member's target."),
    PlanCalculation(
        "pool_demand_replicas", "Replicas at peak, no headroom", "replicas",
        IF(_has_demand,
           MAX(r("pool_tpot_replicas"), r("pool_memory_replicas"), r("pool_ttft_replicas"),
               r("pool_itl_replicas"), r("pool_first_estimate_replicas"),
               r("pool_demand_sequences") / r("max_batch_per_replica")),
           r("pool_members_demand_replicas")),
        "The largest need: tokens/s, KV memory, TTFT, inter-token latency or the engine cap "
        "(sequences / cap). "
        "One member: users / its batch, as sized alone."),
    PlanCalculation(
        "pool_batch_per_replica", "Batch per replica (mixed)", "sequences",
        IF(AND(_has_demand, gt(r("pool_demand_replicas"), 0)),
           ROUNDDOWN(r("pool_demand_sequences") / r("pool_demand_replicas"), 0),
           r("pool_member_batch_smallest")),
        "Sequences in flight / replicas at peak: the mixed batch a replica carries."),
    PlanCalculation(
        "pool_kv_gb_per_request", "KV cache per request (weighted)", "GB",
        IF(_has_demand, r("pool_kv_sequence_gb") / r("pool_demand_sequences"),
           r("pool_kv_gb_largest")),
        "Mean of the members' KV per request, weighted by their sequences (users)."),
    PlanCalculation(
        "pool_step_ms_per_seq", "Step time per sequence, mixed (b)", "ms",
        IF(_has_demand, r("pool_step_sequence_ms") / r("pool_demand_sequences"),
           r("pool_step_ms_largest")),
        "Mean of the members' b, weighted by their sequences: each reads its own KV and "
        "prefills its own prompts."),
    PlanCalculation(
        "pool_tpot_ms", "Time per output token (mixed batch)", "ms",
        (r("pool_step_fixed_ms") + r("pool_step_ms_per_seq") * MAX(1, r("pool_batch_per_replica")))
        * r("pool_spec_factor_largest"),
        "(a + mixed b x batch) x the largest speculative factor: what the slowest member's "
        "users see (within the strictest target)."),
    PlanCalculation(
        "pool_replicas_for_load", "Replicas for peak + headroom", "replicas",
        ROUNDUP(r("pool_demand_replicas") * (1 + r("headroom")), 0),
        "Headroom and rounding once for the pool, not per workload."),
    PlanCalculation(
        "pool_load_gpus", "GPUs for peak + headroom", "GPUs",
        r("pool_replicas_for_load") * tp + r("pool_prefill_gpus"),
        "Replicas x TP (+ the prefill GPUs when disaggregated), before spares."),
    PlanCalculation(
        "pool_prefill_replicas", "Prefill replicas (disaggregated)", "replicas",
        IF(gt(r("disagg_prefill_gpus"), 0), r("pool_prefill_gpus") / r("disagg_prefill_gpus"),
           0),
        "The prefill replicas that feed the pool's (decode) replicas: prefill GPUs / GPUs per "
        "prefill replica; 0 when prefill and decode share the replicas. Their N+1 spares come "
        "from the group's spare GPUs."),
)

GROUP_LOAD_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_load_gpus", "GPUs for peak + headroom", "GPUs", "SUM", r("pool_load_gpus"),
              "All pools of the group."),
    Aggregate("group_pool_count", "Pools", "pools", "SUM", lift(1),
              "One pool: its spares run as replicas; several: the spares are a standby node."),
)

GROUP_SPARE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "group_spare_gpus", "Spare GPUs (N+1)", "GPUs",
        IF(_n1, MIN(r("gpus_per_node"), r("group_load_gpus")), 0),
        "One node's worth for the group (at most its load): N+1 once, not per workload. "
        "Several pools: kept together as a standby node that can host any replica a failed "
        "node ran (a node holds at most a node's worth)."),
)

POOL_SPARE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_spare_replicas", "Spare replicas (N+1), running", "replicas",
        IF(AND(_n1, gt(r("group_load_gpus"), 0), eq(r("group_pool_count"), 1)),
           MIN(r("replicas_per_node"), r("pool_replicas_for_load"),
               ROUNDDOWN(r("pool_replicas_for_load") * r("group_spare_gpus")
                         / r("group_load_gpus"), 0)), 0),
        "Alone in its group: MIN(replicas per node, load), as a workload sized alone, spread "
        "over the nodes. Sharing a group: none (the spare GPUs wait as a standby node; spare "
        "GPUs shared out by load would leave no whole slot for a wide replica)."),
    PlanCalculation(
        "pool_replicas", "Replicas", "replicas",
        r("pool_replicas_for_load") + r("pool_spare_replicas"), "Serving copies of the model."),
    PlanCalculation("pool_gpus", "GPUs", "GPUs", r("pool_replicas") * tp + r("pool_prefill_gpus"),
                    "Replicas x TP (+ the prefill GPUs when disaggregated)."),
)

GROUP_SIZE_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_pool_gpus", "GPUs running replicas", "GPUs", "SUM", r("pool_gpus"),
              "All pools' replicas x TP, running spares included."),
)

# Node loss (issue 22, item 3). A lost replica restarts only on a whole slot: its GPUs free
# inside ONE surviving node (a rack-scale platform's node is its NVLink domain; a replica
# wider than a node needs that many whole free nodes). Free GPUs scattered over nodes host
# nothing. The plan's placement: one pool alone in its group spreads its replicas evenly
# over the nodes (as a workload sized alone); pools sharing a group are packed node by node,
# the largest replicas first (TP and GPUs per node are powers of two: no gaps), and the GPUs
# that run nothing are kept together -- on nodes of their own first, the rest on the one
# partly used node. A node down then loses at most a node full of a pool's replicas.
GROUP_SIZE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "group_load_spare_gpus", "GPUs for load and spares", "GPUs",
        r("group_load_gpus") + r("group_spare_gpus"),
        "Load + one node's worth of spares (as a workload sized alone counts them)."),
    PlanCalculation(
        "group_packed_nodes", "Nodes for load and spares", "nodes",
        MAX(ROUNDUP(r("group_load_spare_gpus") / r("gpus_per_node"), 0), IF(_n1, 2, 1)),
        "Replicas packed into whole nodes: TP is a power of two dividing the node's GPUs, so "
        "no TP group is split across nodes; at least 2 with N+1."),
    PlanCalculation(
        "group_free_gpus", "GPUs running no replica", "GPUs",
        MAX(0, IF(gt(r("platform_sold_full"), 0), r("group_packed_nodes") * r("gpus_per_node"),
                  r("group_load_spare_gpus")) - r("group_pool_gpus")),
        "GPUs in those nodes (PCIe servers: the GPUs bought) - the GPUs running replicas."),
    PlanCalculation(
        "group_free_node_gpus", "Free GPUs on nodes running nothing", "GPUs",
        MIN(r("group_free_gpus"),
            MAX(0, r("group_packed_nodes") - ROUNDUP(r("group_pool_gpus") / r("gpus_per_node"), 0))
            * r("gpus_per_node")),
        "The free GPUs kept together: on the nodes the packed replicas leave empty first."),
    PlanCalculation(
        "group_free_nodes", "Whole free nodes", "nodes",
        ROUNDDOWN(r("group_free_node_gpus") / r("gpus_per_node"), 0),
        "Nodes whose every GPU is free."),
    PlanCalculation(
        "group_free_gpus_standby_node", "Free GPUs on one more node", "GPUs",
        r("group_free_node_gpus") - r("group_free_nodes") * r("gpus_per_node"),
        "A PCIe server's standby GPUs short of a whole node, on a node running nothing."),
    PlanCalculation(
        "group_free_gpus_partial", "Free GPUs on the partly used node", "GPUs",
        r("group_free_gpus") - r("group_free_node_gpus"),
        "The rest, beside replicas on the last packed node."),
)

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
    return IF(gt(r("pool_demand_replicas"), 0), replicas / r("pool_demand_replicas") - 1, 0)


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
        "group_idle_gpus", "GPUs bought running nothing (idle)", "GPUs",
        r("group_gpus_purchased") - r("group_gpus_used"),
        "GPUs purchased - GPUs used: a full baseboard's GPUs beyond load and spares. GPUs "
        "running replicas + on standby + idle = GPUs purchased."),
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
    PlanCalculation(
        "pool_headroom_achieved", "Headroom achieved at peak", "fraction",
        IF(gt(r("pool_demand_replicas"), 0),
           r("pool_replicas") / r("pool_demand_replicas") - 1, 0),
        "Capacity / peak demand - 1, all nodes up."),
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
)

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
                    "fraction", r("pool_headroom_after_node_loss"),
                    "The pool's, on its node group's nodes."),
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
    ("capex_network", "Scale-out network (share)", "currency"),
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
    ("workload share", WORKLOAD_SHARE_CALCULATIONS),
)

# A group is costed by the list's own calculations (the TCO lines, whoever edits them),
# read with the group's nodes and GPUs in place of one option's: the ones that depend on the
# counts and lead to the group's figures, in list order.
GROUP_COUNTS: dict[str, str] = {"nodes": "group_nodes", "gpus": "group_gpus_used",
                                "gpus_purchased": "group_gpus_purchased",
                                "cloud_replica_gpus": "group_cloud_replica_gpus"}
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
PLAN_SAVING_SHARE_CLOUD = IF(gt(ref("annual_cost_cloud_dedicated"), 0),
                             PLAN_SAVING_CLOUD / ref("annual_cost_cloud_dedicated"), 0)
