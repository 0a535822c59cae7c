"""The account plan's pools (DESIGN §3 "Account plan"), its first four stages: the members'
load on a pool (its replicas for peak + headroom), the node group's load and its N+1 spare
GPUs, a pool's spare replicas, and the group's GPUs packed into whole nodes with the GPUs
that run nothing kept together. :mod:`.plan` lists the stages in order; the next ones are in
:mod:`.plan_node_loss`.
"""

from __future__ import annotations

from ..expr import AND, IF, MAX, MIN, ROUNDDOWN, ROUNDUP, Expr, eq, ge, gt, lift, lt
from .core import r, tp
from .planrows import Aggregate, PlanCalculation
from .spread import layout_cost

# the fewest nodes a pool's load needs (at least one)
_FEWEST_POOL = MAX(1, ROUNDUP(r("pool_load_gpus") / r("gpus_per_node"), 0))

# N+1 asked (the later stages read it too)
N_PLUS_ONE = gt(r("survive_node_loss"), 0)
_n1 = N_PLUS_ONE

# Over a pool's members, each read from the member workload's option for the pool's choice
# (a member row may also read the pool aggregates listed before it). A member's sequences in
# flight at peak are its users (or its system target's sequences). A replica's capacity is
# shared: each member's sequences use 1/B of it for every limit B (tokens/s at the pool's
# strictest target, KV memory, TTFT, engine cap), so the pool needs the largest of the sums
# (closed form, never fewer replicas when users grow, exactly today's sizing for one member).
# A member with its streams stated beside a throughput target has at most those streams in
# flight (review round 22: sized full, 6.6 replicas x 67 counted 441 for 64 streams).
MEMBER_SEQUENCES = IF(gt(r("stream_replicas"), 0),
                      MIN(r("users"), r("demand_replicas") * r("batch_per_replica")),
                      r("demand_replicas") * r("batch_per_replica"))
_seqs = MEMBER_SEQUENCES
# the step a stated-streams member's sequences in flight take over its own replicas at peak:
# its target is made at that step and no longer one (1000 x C / (f x T) where the streams
# bind; its full batch's step where they fill its replicas)
_stream_step = r("step_fixed_ms") + r("step_ms_per_seq") * _seqs / r("demand_replicas")
# Session 22 (streams headroom): the headroom is a margin on the load. A member's sequences
# at its load with headroom: a stated-streams member still has at most its streams (they step
# faster: the target x (1 + headroom)), any other member (1 + headroom) x its sequences; and
# the step the streams' member takes over its own replicas for that load.
_stream = gt(r("stream_replicas"), 0)
_seqs_load = IF(_stream, MIN(r("users"), r("load_replicas_exact") * r("batch_per_replica")),
                _seqs * (1 + r("headroom")))
_stream_step_load = (r("step_fixed_ms")
                     + r("step_ms_per_seq") * _seqs_load / r("load_replicas_exact"))
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
    Aggregate("pool_stream_replicas", "Replicas the stated streams need", "replicas", "MAX",
              IF(AND(gt(r("stream_replicas"), 0), gt(r("demand_replicas"), 0)),
                 IF(gt(_stream_step, r("pool_step_fixed_ms")),
                    r("pool_step_sequence_ms") / (_stream_step - r("pool_step_fixed_ms")), 0), 0),
              "A member with its streams stated makes its target only with its sequences in "
              "flight stepping as they do on its own replicas at peak (a + b x sequences / its "
              "replicas: 1000 x streams / (speculative factor x target) where the streams "
              "bind), so the pool's step may take no longer: replicas = every member's "
              "sequences x b / (that step - a), the most over such members (sized alone: its "
              "own replicas)."),
    Aggregate("pool_step_sequence_load_ms", "Per-sequence step time of all sequences, with "
              "headroom", "ms", "SUM", _seqs_load * r("step_ms_per_seq"),
              "As above at the load with headroom: a stated-streams member's streams (at most "
              "its replicas for that load full), any other member's sequences x (1 + "
              "headroom)."),
    Aggregate("pool_stream_replicas_for_load", "Replicas the stated streams need, with "
              "headroom", "replicas", "MAX",
              IF(AND(_stream, gt(r("load_replicas_exact"), 0)),
                 IF(gt(_stream_step_load, r("pool_step_fixed_ms")),
                    r("pool_step_sequence_load_ms")
                    / (_stream_step_load - r("pool_step_fixed_ms")), 0), 0),
              "As above at the target x (1 + headroom): every member's sequences at that load "
              "x b / (the step the streams' member takes over its own replicas for that load - "
              "a), the most over such members (sized alone: its own replicas before "
              "rounding)."),
    Aggregate("pool_stream_step_limit_largest", "Loosest step the stated streams allow",
              "ms", "MAX", r("stream_step_limit_ms"), "Stands in for members without streams."),
    Aggregate("pool_stream_step_limit_ms", "Longest step every member's stated streams allow",
              "ms", "MIN",
              IF(_stream, r("stream_step_limit_ms"), r("pool_stream_step_limit_largest")),
              "1000 x streams / (speculative factor x target), the smallest over members with "
              "their streams stated; 0 when none has."),
    Aggregate("pool_stream_sequence_ms", "Per-sequence step time, every stream in flight",
              "ms", "SUM", IF(_stream, r("users"), _seqs) * r("step_ms_per_seq"),
              "Sequences x b, summed, a stated-streams member counting all its streams: the "
              "step over R replicas is a + this / R (the headroom those replicas leave)."),
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



def pool_headroom(replicas: Expr) -> Expr:
    """The margin on the load these replicas leave: replicas / peak demand - 1, and where a
    member's streams are stated at most their step limit / the step over these replicas - 1
    (their tokens/s over their target - 1; a pool of that member alone: its own figure)."""
    plain = IF(gt(r("pool_demand_replicas"), 0), replicas / r("pool_demand_replicas") - 1, 0)
    return IF(AND(gt(r("pool_stream_step_limit_ms"), 0), gt(replicas, 0)),
              MIN(plain, r("pool_stream_step_limit_ms")
                  / (r("pool_step_fixed_ms") + r("pool_stream_sequence_ms") / replicas) - 1),
              plain)


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
               r("pool_demand_sequences") / r("max_batch_per_replica"),
               r("pool_stream_replicas")),
           r("pool_members_demand_replicas")),
        "The largest need: tokens/s, KV memory, TTFT, inter-token latency, the engine cap "
        "(sequences / cap) or the stated streams' target. "
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
        ROUNDUP(MAX(r("pool_demand_replicas") * (1 + r("headroom")),
                    r("pool_stream_replicas_for_load")), 0),
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
    # Session 23: what one server down takes from a pool alone in its group, its replicas for
    # the load spread evenly over the fewest servers that hold them (as the retrieval rows'
    # retrieval_replicas_per_node): a PCIe server bought part full needs a spare of that size
    PlanCalculation(
        "pool_fullest_node_gpus", "GPUs of its fullest node (load spread evenly)", "GPUs",
        IF(gt(r("pool_prefill_gpus"), 0), MIN(r("gpus_per_node"), r("pool_load_gpus")),
           ROUNDUP(r("pool_replicas_for_load")
                   / MAX(1, ROUNDUP(r("pool_load_gpus") / r("gpus_per_node"), 0)), 0) * tp),
        "Replicas for the load / the nodes they need (their GPUs / GPUs per node, rounded up), "
        "rounded up, x TP: what one node down takes with it. Disaggregated: a node's GPUs (at "
        "most the load)."),
    # Session 25 (hunt seed 71): or spread over one node more where that costs less a year
    PlanCalculation(
        "pool_spread_node_gpus", "GPUs of its fullest node, spread over one node more", "GPUs",
        IF(gt(r("pool_prefill_gpus"), 0), r("pool_fullest_node_gpus"),
           ROUNDUP(r("pool_replicas_for_load") / (_FEWEST_POOL + 1), 0) * tp),
        "Replicas for the load / (the nodes they need + 1), rounded up, x TP: what one node "
        "down takes with the load spread over one node more. Disaggregated: as on the fewest."),
)

GROUP_LOAD_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_load_gpus", "GPUs for peak + headroom", "GPUs", "SUM", r("pool_load_gpus"),
              "All pools of the group."),
    Aggregate("group_pool_count", "Pools", "pools", "SUM", lift(1),
              "One pool: its spares run as replicas; several: the spares are a standby node."),
    Aggregate("group_fullest_node_gpus", "GPUs of the fullest node (load spread evenly)",
              "GPUs", "MAX", r("pool_fullest_node_gpus"),
              "The largest of its pools' (one pool alone: that pool's)."),
    Aggregate("group_spread_node_gpus", "GPUs of the fullest node, spread over one node more",
              "GPUs", "MAX", r("pool_spread_node_gpus"),
              "The largest of its pools' (one pool alone: that pool's)."),
)

# the fewest nodes the group's load needs (at least one)
_FEWEST_GROUP = MAX(1, ROUNDUP(r("group_load_gpus") / r("gpus_per_node"), 0))

GROUP_SPARE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    # Session 25 (hunt seed 71): a pool alone on PCIe servers bought part full, N+1: on the
    # fewest nodes or spread over one more (a smaller fullest node, a smaller spare), the
    # layout that costs less a year by the plan's prices (spread.py)
    PlanCalculation(
        "group_packed_layout_nodes", "N+1 on the fewest nodes: nodes", "nodes",
        _FEWEST_GROUP + 1, "The nodes the load needs (at least one) + 1."),
    PlanCalculation(
        "group_packed_cost_per_year", "N+1 on the fewest nodes: cost per year", "currency/yr",
        layout_cost(r("group_packed_layout_nodes"),
                    r("group_load_gpus") + MIN(r("gpus_per_node"), r("group_load_gpus"),
                                               r("group_fullest_node_gpus"))),
        "(The load's nodes + 1) x a node's cost per year + (the load's GPUs + its fullest "
        "node's) x a GPU's cost per year."),
    PlanCalculation(
        "group_spread_cost_per_year", "N+1 spread over one node more: cost per year",
        "currency/yr",
        layout_cost(r("group_packed_layout_nodes") + 1,
                    r("group_load_gpus") + MIN(r("gpus_per_node"), r("group_load_gpus"),
                                               r("group_spread_node_gpus"))),
        "(The load's nodes + 2) x a node's cost per year + (the load's GPUs + the fullest "
        "node's, spread over one node more) x a GPU's cost per year."),
    PlanCalculation(
        "group_spread_layout", "Spread over one node more for a smaller spare", "1 = yes",
        IF(AND(_n1, eq(r("group_pool_count"), 1), eq(r("platform_sold_full"), 0),
               lt(r("group_spread_cost_per_year"), r("group_packed_cost_per_year"))), 1, 0),
        "1 when one pool alone on PCIe servers bought part full, N+1, costs less a year spread "
        "over one node more than on the fewest nodes: the cheaper of the two layouts."),
    PlanCalculation(
        "group_spread_saving_per_year", "Saved a year by spreading over one node more",
        "currency/yr",
        IF(gt(r("group_spread_layout"), 0),
           r("group_packed_cost_per_year")
           - MIN(r("group_packed_cost_per_year"), r("group_spread_cost_per_year")), 0),
        "Where spread: on the fewest nodes' cost per year - the cheaper of the two; 0 "
        "otherwise."),
    PlanCalculation(
        "group_spare_gpus", "Spare GPUs (N+1)", "GPUs",
        IF(_n1, IF(AND(eq(r("group_pool_count"), 1), eq(r("platform_sold_full"), 0)),
                   MIN(r("gpus_per_node"), r("group_load_gpus"),
                       IF(gt(r("group_spread_layout"), 0), r("group_spread_node_gpus"),
                          r("group_fullest_node_gpus"))),
                   MIN(r("gpus_per_node"), r("group_load_gpus"))), 0),
        "One node's worth for the group (at most its load): N+1 once, not per workload. "
        "Several pools: kept together as a standby node that can host any replica a failed "
        "node ran (a node holds at most a node's worth). One pool on PCIe servers bought part "
        "full: the GPUs of its fullest node, what one node down takes (session 23: not a "
        "server's every slot), on the fewest nodes or spread over one more, whichever costs "
        "less (session 25); a fixed baseboard comes full."),
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
        MAX(ROUNDUP(r("group_load_spare_gpus") / r("gpus_per_node"), 0),
            IF(_n1, _FEWEST_GROUP + 1 + r("group_spread_layout"), 1)),
        "Replicas packed into whole nodes: TP is a power of two dividing the node's GPUs, so "
        "no TP group is split across nodes; with N+1 at least the load's nodes + 1 (at least "
        "2: the spares spread over one node more), + 1 more where spread for a smaller "
        "spare."),
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
