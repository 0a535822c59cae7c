"""Replicas, nodes and headroom (seed 000): peak demand in replica units, headroom and N+1
spares in whole replicas, replicas packed into whole nodes, the GPUs bought, and the
headroom left at peak with all nodes up and with one node down.
"""

from __future__ import annotations

from ..expr import AND, IF, MAX, MIN, ROUNDDOWN, ROUNDUP, Expr, gt, le, lt, ref
from .core import Calculation, _c, _gpus, r
from .spread import layout_cost

# Review round 22 (University of Northfield): a throughput target with the parallel request
# streams stated (concurrent_users: the streams an offline pipeline keeps open). The streams
# advance one step together: on N replicas each runs C / N of them, t = a + b x C / N, and
# they make C x 1000 / (f x t) tok/s (f: the speculative TPOT factor, 1 without). Sizing each
# replica full (B = the engine cap) assumed N x B requests in flight where only C exist.
# Sized, modelled: not where the replicas and their users are given (llmsizer estimate, a
# benchmark's closed loop: fixed_users_per_replica) nor a measured replica's figure.
_STREAMS = AND(gt(r("users"), 0), gt(r("target_system_tokens_per_s"), 0),
               le(r("peak_request_rate_per_s"), 0), le(r("fixed_users_per_replica"), 0),
               le(r("measured_tokens_per_s_per_replica"), 0))
_a, _b = r("step_fixed_ms"), r("step_ms_per_seq")

# After the load (load.LOAD_CALCULATIONS), before the batch served (decode.py): the step
# rows at the full batch are known, nothing here reads what follows.
STREAM_CALCULATIONS: tuple[Calculation, ...] = (
    _c("stream_step_limit_ms", "Longest step the stated streams allow", "ms", "Throughput",
       IF(_STREAMS, r("users") * 1000 / (r("target_system_tokens_per_s") * r("spec_tpot_factor")),
          0),
       "Streams x 1000 / (system target x speculative factor): the stated streams advancing "
       "one step together reach the target only at steps this short (C x 1000 / (f x t) >= "
       "T); 0 when the load is not stated as streams with a throughput target."),
    # Session 22 (streams headroom): the policy's headroom is a margin on the load, and for
    # the streams the load is the throughput target; 25 % more replicas gave 64 streams only
    # 10 % more tok/s (9 replicas: 64,000 / (27.76 + 1.535 x 64 / 9) = 1,655 for 1,500).
    _c("stream_step_limit_load_ms", "Longest step the stated streams allow, with headroom",
       "ms", "Throughput",
       IF(gt(r("stream_step_limit_ms"), 0),
          r("stream_step_limit_ms") / (1 + r("headroom")), 0),
       "The longest step / (1 + headroom): the streams make the target x (1 + headroom) at "
       "steps this short; 0 when the load is not stated as streams with a throughput "
       "target."),
    _c("stream_target_load_tokens_per_s", "Throughput the stated streams are sized for",
       "tok/s", "Throughput",
       IF(gt(r("stream_step_limit_ms"), 0),
          r("target_system_tokens_per_s") * (1 + r("headroom")), 0),
       "System target x (1 + headroom): the load with its margin; 0 when not stated as "
       "streams."),
    # a 1/0 number, not TRUE/FALSE: Excel and Gnumeric read TRUE<=0 as FALSE, LibreOffice
    # as TRUE (tests/test_workbook_excel_rules.py)
    _c("streams_short", "The stated streams cannot reach the target with headroom", "1 = yes",
       "Throughput",
       IF(AND(gt(r("stream_step_limit_load_ms"), 0),
              lt(r("stream_step_limit_load_ms"), _a + _b)), 1, 0),
       "1 when even one stream per replica (a step of a + b) is slower than the longest step "
       "the streams allow with the headroom: no replica count meets the target x (1 + "
       "headroom) with these streams."),
    _c("streams_best_tokens_per_s", "Most the stated streams make, one per replica", "tok/s",
       "Throughput",
       IF(gt(r("stream_step_limit_ms"), 0),
          r("users") * 1000 / ((_a + _b) * r("spec_tpot_factor")), 0),
       "Streams x 1000 / ((a + b) x speculative factor): every stream alone on its replica."),
    _c("stream_replicas", "Replicas the stated streams need", "replicas", "Throughput",
       IF(AND(gt(r("stream_step_limit_ms"), 0), le(r("streams_short"), 0)),
          _b * r("users") / (r("stream_step_limit_ms") - _a), 0),
       "t(C / N) = a + b x C / N at most the streams' longest step, solved for N: b x C / "
       "(longest step - a) = b x f x C x T / (1000 x C - a x f x T), in closed form (no "
       "circular reference). At or below the streams (at least one each); the step at the "
       "full batch's experts read (MoE: conservative). 0 when not stated as streams."),
    _c("stream_replicas_for_load", "Replicas the stated streams need, with headroom",
       "replicas", "Throughput",
       IF(gt(r("stream_replicas"), 0),
          _b * r("users") / (r("stream_step_limit_load_ms") - _a), 0),
       "The same at the target x (1 + headroom): b x f x C x T' / (1000 x C - a x f x T'), "
       "T' = T x (1 + headroom), before rounding; 0 when not stated as streams."),
)


def _stream_capacity(replicas: Expr) -> Expr:
    """Tokens/s the stated streams make spread over these replicas, at most the replicas
    full: C x 1000 / ((a + b x C / replicas) x speculative factor)."""
    return IF(gt(replicas, 0),
              MIN(replicas * r("replica_output_tokens_per_s"),
                  r("users") * 1000 / ((_a + _b * r("users") / replicas)
                                       * r("spec_tpot_factor"))), 0)


def _headroom(replicas: Expr) -> Expr:
    """The margin on the load these replicas leave: the stated streams' tokens/s over the
    throughput target - 1; otherwise replicas / peak demand - 1 (the same margin: a full
    replica's tok/s and users scale with its count)."""
    return IF(gt(r("stream_replicas"), 0),
              _stream_capacity(replicas) / r("required_system_tokens_per_s") - 1,
              IF(gt(r("demand_replicas"), 0), replicas / r("demand_replicas") - 1, 0))


# the fewest nodes the load's replicas need (at least one)
_FEWEST = MAX(1, ROUNDUP(r("replicas_for_load") * _gpus / r("gpus_per_node"), 0))

# The demand terms of replicas running full (users / users per replica, the system target /
# a full replica's throughput): demand_replicas, and full_replicas_for_load beside the streams.
_USERS_DEMAND = IF(AND(gt(r("users_per_replica"), 0), gt(r("required_tokens_per_s_per_user"), 0)),
                   r("concurrent_users") / r("users_per_replica"), 0)
_TARGET_DEMAND = IF(gt(r("replica_output_tokens_per_s"), 0),
                    r("target_system_tokens_per_s") / r("replica_output_tokens_per_s"), 0)

CALCULATIONS: tuple[Calculation, ...] = (
    _c("required_system_tokens_per_s", "Required system throughput", "tok/s", "Nodes",
       MAX(r("concurrent_users") * r("required_tokens_per_s_per_user"), r("target_system_tokens_per_s")),
       "Users x tokens/s per user (“From Users to GPUs”, step 2), or the stated system target."),
    _c("users_per_replica", "Users per replica", "users", "Nodes",
       IF(gt(r("measured_tokens_per_s_per_replica"), 0),
          IF(gt(r("required_tokens_per_s_per_user"), 0),
             r("measured_tokens_per_s_per_replica") / r("required_tokens_per_s_per_user"), 0),
          r("batch_per_replica")),
       "Concurrent users one replica serves at the target speed."),
    _c("demand_replicas", "Replicas at peak, no headroom", "replicas", "Nodes",
       MAX(_USERS_DEMAND, _TARGET_DEMAND, r("stream_replicas")),
       "Peak demand in replica units: users / users per replica, or system target / replica "
       "throughput (offline jobs), or the replicas the stated streams need, whichever is "
       "largest (streams beyond full replicas wait a turn: the replicas full then make the "
       "target)."),
    _c("load_replicas_exact", "Replicas for peak + headroom, before rounding", "replicas",
       "Nodes", MAX(r("demand_replicas") * (1 + r("headroom")), r("stream_replicas_for_load")),
       "Demand x (1 + headroom), or the replicas the stated streams need at the target x (1 + "
       "headroom) where more: the headroom is a margin on the load."),
    _c("replicas_for_load", "Replicas for peak + headroom", "replicas", "Nodes",
       ROUNDUP(r("load_replicas_exact"), 0),
       "ROUNDUP(demand x (1 + headroom)) (“From Users to GPUs”: 6 x 1.25 -> 8); stated "
       "streams: ROUNDUP(their replicas at the target x (1 + headroom))."),
    # Session 22 (streams hint): the streams are a client setting the customer controls;
    # with enough of them the replicas run full and the full replicas' demand is the load.
    _c("full_replicas_for_load", "Replicas for peak + headroom, the replicas full",
       "replicas", "Nodes",
       IF(gt(r("stream_replicas"), 0),
          ROUNDUP(MAX(_USERS_DEMAND, _TARGET_DEMAND) * (1 + r("headroom")), 0), 0),
       "ROUNDUP(system target / replica throughput x (1 + headroom)): the replicas the load "
       "would need were each replica running its full batch (enough streams open); 0 when "
       "the load is not stated as streams with a throughput target."),
    _c("streams_to_fill", "Streams that would fill those replicas", "streams", "Nodes",
       r("full_replicas_for_load") * r("batch_per_replica"),
       "Replicas for peak + headroom, the replicas full x batch per replica: the streams "
       "the pipeline would keep open to run them full; 0 when not stated as streams."),
    _c("replicas_per_node", "Replicas per node", "replicas", "Nodes",
       MAX(1, ROUNDDOWN(r("gpus_per_node") / _gpus, 0)), "GPUs per node / GPUs per replica."),
    # Session 23: a PCIe server is bought with the GPUs it runs (platforms.yaml sold_full
    # false), so N+1 needs only what one server down takes: the replicas of the fullest server
    # with the load spread evenly over the fewest servers (as retrieval_replicas_per_node)
    _c("load_replicas_per_node", "Replicas for the load on its fullest node", "replicas",
       "Nodes",
       ROUNDUP(r("replicas_for_load")
               / MAX(1, ROUNDUP(r("replicas_for_load") * _gpus / r("gpus_per_node"), 0)), 0),
       "Replicas for peak + headroom / the nodes they need (their GPUs / GPUs per node, "
       "rounded up), rounded up: the replicas spread evenly, what one node down takes."),
    # Session 25 (hunt seed 71): or spread over one node more, where that costs less a year
    # (spread.py): a smaller fullest node, a smaller spare
    _c("spread_replicas_per_node", "Replicas on its fullest node, spread over one node more",
       "replicas", "Nodes",
       ROUNDUP(r("replicas_for_load") / (_FEWEST + 1), 0),
       "Replicas for peak + headroom / (the nodes they need + 1), rounded up: what one node "
       "down takes when the load is spread over one node more."),
    _c("packed_layout_cost_per_year", "N+1 on the fewest nodes: cost per year",
       "currency/yr", "Nodes",
       layout_cost(_FEWEST + 1, (r("replicas_for_load")
                                 + MIN(r("replicas_per_node"), r("replicas_for_load"),
                                       r("load_replicas_per_node"))) * _gpus),
       "(The load's nodes + 1) x a node's cost per year + (replicas for the load + its "
       "fullest node's) x GPUs per replica x a GPU's cost per year."),
    _c("spread_layout_cost_per_year", "N+1 spread over one node more: cost per year",
       "currency/yr", "Nodes",
       layout_cost(_FEWEST + 2, (r("replicas_for_load")
                                 + MIN(r("replicas_per_node"), r("replicas_for_load"),
                                       r("spread_replicas_per_node"))) * _gpus),
       "(The load's nodes + 2) x a node's cost per year + (replicas for the load + the "
       "fullest node's, spread over one node more) x GPUs per replica x a GPU's cost per "
       "year."),
    _c("spread_layout", "Spread over one node more for a smaller spare", "1 = yes", "Nodes",
       IF(AND(gt(r("survive_node_loss"), 0), le(r("platform_sold_full"), 0),
              le(r("disagg_prefill_gpus_for_load"), 0),
              lt(r("spread_layout_cost_per_year"), r("packed_layout_cost_per_year"))), 1, 0),
       "1 when N+1 on PCIe servers bought part full (not disaggregated) costs less a year "
       "spread over one node more than on the fewest nodes: the cheaper of the two layouts."),
    _c("spare_replicas", "Spare replicas (N+1)", "replicas", "Nodes",
       IF(gt(r("survive_node_loss"), 0),
          IF(AND(le(r("platform_sold_full"), 0), le(r("disagg_prefill_gpus_for_load"), 0)),
             MIN(r("replicas_per_node"), r("replicas_for_load"),
                 IF(gt(r("spread_layout"), 0), r("spread_replicas_per_node"),
                    r("load_replicas_per_node"))),
             MIN(r("replicas_per_node"), r("replicas_for_load"))), 0),
       "As many replicas as one node holds (at most the load), so peak is met with a node down "
       "(“How fast does it serve?”, check 5). PCIe servers bought part full: the replicas "
       "of the fullest node for the load (session 23: not a server's every slot; not "
       "disaggregated), on the fewest nodes or spread over one more, whichever costs less "
       "(session 25)."),
    _c("replicas", "Replicas", "replicas", "Nodes", r("replicas_for_load") + r("spare_replicas"),
       "Serving copies of the model."),
    _c("gpus", "GPUs", "GPUs", "Nodes", r("replicas") * _gpus + r("disagg_prefill_pool_gpus"),
       "Replicas x GPUs per replica (+ the prefill replicas' GPUs when disaggregated)."),
    _c("load_gpus", "GPUs for peak + headroom", "GPUs", "Nodes",
       r("replicas_for_load") * _gpus + r("disagg_prefill_gpus_for_load"),
       "Replicas for peak + headroom x GPUs per replica (+ the prefill GPUs for the load): "
       "the GPUs before N+1 spares, which a rented instance down must leave running."),
    _c("nodes", "Nodes", "nodes", "Nodes",
       MAX(ROUNDUP(r("gpus") / r("gpus_per_node"), 0),
           IF(gt(r("survive_node_loss"), 0),
              MAX(1, ROUNDUP(r("load_gpus") / r("gpus_per_node"), 0)) + 1 + r("spread_layout"),
              1)),
       "ROUNDUP(GPUs / GPUs per node); when the service must survive a node loss, at least "
       "the load's nodes + 1 (at least 2; replicas spread evenly), + 1 more where spread for "
       "a smaller spare."),
    _c("replicas_lost_with_a_node", "Replicas lost with one node", "replicas", "Nodes",
       MIN(r("replicas_per_node"), ROUNDUP(r("replicas") / r("nodes"), 0)),
       "Replicas on the fullest node when spread evenly."),
    _c("restart_s", "Time to reload a replica's weights", "s", "Nodes",
       r("weights_gb") / r("storage_read_gb_per_s"),
       "Weights / storage read bandwidth: the least time a replica takes to come back on "
       "another node (engine start and warm-up come on top)."),
    _c("gpus_purchased", "GPUs purchased", "GPUs", "Nodes",
       IF(gt(r("platform_sold_full"), 0), r("nodes") * r("gpus_per_node"), r("gpus")),
       "Fixed baseboards come full: nodes x GPUs per node; PCIe servers: the GPUs used."),
    _c("capacity_output_tokens_per_s", "Installed throughput", "tok/s", "Nodes",
       IF(gt(r("stream_replicas"), 0), _stream_capacity(r("replicas")),
          r("replicas") * r("replica_output_tokens_per_s")),
       "All replicas at their batch; stated streams: at most what the streams make spread "
       "over every replica (C x 1000 / ((a + b x C / replicas) x speculative factor))."),
    _c("headroom_achieved", "Headroom achieved at peak", "fraction", "Nodes",
       _headroom(r("replicas")),
       "Capacity / peak demand - 1, all nodes up (after rounding and N+1): replicas / demand "
       "- 1; stated streams: the tokens/s they make over every replica / the target - 1."),
    _c("replicas_after_node_loss", "Replicas with one node down", "replicas", "Nodes",
       r("replicas") - r("replicas_lost_with_a_node")
       + MIN(r("replicas_lost_with_a_node"),
             MAX(0, ROUNDDOWN((r("gpus_purchased") - r("gpus")
                               - IF(gt(r("platform_sold_full"), 0),
                                    MAX(0, r("gpus_per_node")
                                        - r("replicas_lost_with_a_node") * _gpus), 0))
                              / _gpus, 0))),
       "Replicas on the other nodes + the lost ones restarted on whole free slots: a "
       "replica's GPUs free inside one surviving node (the free GPUs of the fullest node "
       "go down with it; free GPUs scattered over nodes host nothing)."),
    _c("headroom_after_node_loss", "Headroom with one node down", "fraction", "Nodes",
       _headroom(r("replicas_after_node_loss")),
       "As at peak, with the replicas left; negative means peak demand is not met while a "
       "node is down."),
)


# Figures for reports that combine a calculation with a count the user gave on the command
# line (``llmsizer estimate --replicas R``); still written once, here.
GROUP_OUTPUT_TOKENS_PER_S = ref("replica_output_tokens_per_s") * ref("replicas_given")

# Issue 22: an option needing more than this many times the GPUs the recommendation buys is
# no alternative a customer weighs; the proposal names it in one line instead of a table row
# (the workbook's Options sheet and the results JSON still list every option).
IMPRACTICAL_FACTOR = 3
IMPRACTICAL = gt(ref("gpus_purchased"), IMPRACTICAL_FACTOR * ref("best_gpus_purchased"))
