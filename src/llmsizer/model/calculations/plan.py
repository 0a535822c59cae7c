"""PLAN: one deployment plan per account (DESIGN §3 "Account plan").

Workloads sized alone each carry their own rounding and their own N+1. The plan pools
workloads that run the same model, precisions, GPU and TP (a *pool* shares replicas) and
packs the pools that share a GPU and platform into the same nodes (a *node group*).
llmsizer.sizing.plan decides which workloads pool; every number here is evaluated by it with the
expression machinery and printed by the workbook's Plan sheet as formulas over the workload
sheets. The stages run in order: member rows, pool load, group load, pool spares, group
size, pool headroom, group headroom and cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..expr import AND, IF, MAX, MIN, ROUNDDOWN, ROUNDUP, SUM, Expr, ge, gt, lift, ref, references
from .core import Calculation, r, tp


# ---- benchmark reproduction (``llmsizer fidelity``, docs/calibration.md) -----------------
# What a measured benchmark reports that the sizing itself does not need. Each combines the
# calculations above with a count the benchmark states (a ``*_given`` name): the replicas
# sharing the load, the closed-loop users or the offered request rate per replica.
@dataclass(frozen=True)
class Figure:
    name: str
    unit: str
    expr: Expr
    note: str


_cycle = r("ttft_ms") + (r("output_tokens") - 1) * r("tpot_ms")
_occupied = MAX(1, r("batch_per_replica"))
# Little's law: a request's cycle = c0 + steps x b x B (ttft_ms + (output - 1) x tpot_ms).
_steps = r("ttft_queue_steps") + r("output_tokens") - 1
_c0 = (r("prefill_ms") + r("ttft_overhead_ms")
       + r("ttft_queue_steps") * (r("comm_fixed_ms") + r("step_overhead_ms"))
       + (r("output_tokens") - 1) * r("step_fixed_ms"))
_rate_ms = r("request_rate_given") / 1000

FIGURES: tuple[Figure, ...] = (
    Figure("per_replica_given", "x", r("group_given") / r("replicas_given"),
           "A load the benchmark states for the whole group (users, requests/s), shared evenly "
           "by its replicas."),
    Figure("single_stream_itl_ms", "ms", 1000 / r("bandwidth_ceiling_tokens_per_s"),
           "Time per token of one stream alone (batch 1)."),
    Figure("request_cycle_ms", "ms", _cycle,
           "Time one request holds a batch slot: TTFT + (output - 1) x TPOT."),
    Figure("closed_loop_output_tokens_per_s", "tok/s",
           ref("replicas_given") * MIN(r("concurrency_given"), _occupied) * r("output_tokens")
           * 1000 / _cycle,
           "Fixed concurrency C per replica (closed loop): MIN(C, batch) requests in flight, "
           "each producing its output once per request cycle."),
    Figure("closed_loop_ttft_ms", "ms",
           r("ttft_ms") + MAX(0, r("concurrency_given") / _occupied - 1) * _cycle,
           "Beyond the batch the engine can hold, users wait for a free slot: "
           "(C / batch - 1) request cycles on top of TTFT (Little's law)."),
    Figure("rate_batch_per_replica", "sequences",
           IF(gt(1 - _rate_ms * _steps * r("step_ms_per_seq"), 0),
              MIN(r("max_batch_per_replica"),
                  _rate_ms * _c0 / (1 - _rate_ms * _steps * r("step_ms_per_seq"))),
              r("max_batch_per_replica")),
           "Open loop at rate L per replica: B = L x (ttft_ms + (output - 1) x tpot_ms), both "
           "linear in B, solved for B (Little's law, closed form); no steady state "
           "(saturated) = the engine's cap."),
    Figure("decode_only_tpot_ms", "ms",
           r("tpot_ms") - r("prefill_ms_per_seq_step") * _occupied,
           "TPOT when prompts are not interleaved with decode (a burst whose prefill ran "
           "first): t(B) without the amortised prefill share."),
    Figure("served_rate_per_s", "requests/s",
           MIN(r("request_rate_given"), r("replica_output_tokens_per_s") / r("output_tokens")),
           "Requests/s a replica serves: the offered rate, or its saturated capacity when the "
           "rate exceeds it (evaluate at the saturated batch)."),
    Figure("rate_output_tokens_per_s", "tok/s",
           ref("replicas_given") * r("served_rate_given") * r("output_tokens"),
           "Steady state at a request rate: requests served x output."),
    Figure("finite_run_output_tokens_per_s", "tok/s",
           ref("replicas_given") * r("requests_given") * r("output_tokens") * 1000
           / (r("requests_given") * 1000 / r("served_rate_given") + r("request_cycle_ms_given")),
           "A run of N requests per replica: N x output over the time the last one arrives "
           "(N / served rate) plus its own request cycle."),
    Figure("total_tokens_per_s", "tok/s",
           r("output_tokens_per_s_given") * (r("prompt_tokens") + r("output_tokens"))
           / r("output_tokens"),
           "Input + output tokens/s from output tokens/s (requests carry prompt + output)."),
)
FIGURE_EXPRS: dict[str, Expr] = {f.name: f.expr for f in FIGURES}


# ---- sensitivity (the Scenarios sheet, results ``sensitivity[]``) ----------------------------
# Each scenario changes ONE input to the value of ``value`` (an expression over the base
# inputs) and recomputes the whole calculation list for each workload's recommended option.
@dataclass(frozen=True)
class Scenario:
    name: str  # stable id (results JSON)
    label: str  # what changes, in words
    change: str  # by how much, in words
    input: str  # the input it changes
    value: Expr  # that input's value in the scenario


def _scaled_tokens(name: str, factor: float) -> Expr:
    return MAX(1, ROUNDUP(r(name) * factor, 0))


# Cloud tier codes of ``cloud_tier_what_if`` (the order of catalog.CLOUD_TIERS).
CLOUD_TIER_CODES = {"hyperscaler_on_demand": 1, "committed_1yr": 2, "committed_3yr": 3,
                    "gpu_cloud": 4}

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("users_x0.5", "Concurrent users", "x0.5", "users", ROUNDUP(r("users") * 0.5, 0)),
    Scenario("users_x1.5", "Concurrent users", "x1.5", "users", ROUNDUP(r("users") * 1.5, 0)),
    Scenario("users_x2", "Concurrent users", "x2", "users", r("users") * 2),
    Scenario("prompt_-50%", "Prompt length", "-50 %", "prompt_tokens",
             _scaled_tokens("prompt_tokens", 0.5)),
    Scenario("prompt_+50%", "Prompt length", "+50 %", "prompt_tokens",
             _scaled_tokens("prompt_tokens", 1.5)),
    Scenario("output_-50%", "Output length", "-50 %", "output_tokens",
             _scaled_tokens("output_tokens", 0.5)),
    Scenario("output_+50%", "Output length", "+50 %", "output_tokens",
             _scaled_tokens("output_tokens", 1.5)),
    Scenario("gpu_price_-30%", "GPU price", "-30 %", "gpu_price_factor",
             r("gpu_price_factor") * 0.7),
    Scenario("gpu_price_+30%", "GPU price", "+30 %", "gpu_price_factor",
             r("gpu_price_factor") * 1.3),
    Scenario("cloud_hyperscaler_on_demand", "Cloud price", "hyperscaler on-demand",
             "cloud_tier_what_if", lift(1)),
    Scenario("cloud_committed_1yr", "Cloud price", "committed 1 year", "cloud_tier_what_if",
             lift(2)),
    Scenario("cloud_committed_3yr", "Cloud price", "committed 3 years", "cloud_tier_what_if",
             lift(3)),
    Scenario("cloud_gpu_cloud", "Cloud price", "GPU cloud on-demand", "cloud_tier_what_if",
             lift(4)),
    Scenario("load_0.3", "Average load", "30 %", "average_load", lift(0.3)),
    Scenario("load_0.9", "Average load", "90 %", "average_load", lift(0.9)),
    Scenario("headroom_0", "Headroom", "0 %", "headroom", lift(0)),
    Scenario("headroom_0.5", "Headroom", "50 %", "headroom", lift(0.5)),
)
SCENARIO_OUTPUTS = ("gpus_purchased", "nodes", "capex", "annual_cost_onprem", "annual_cost_cloud")

# Loads at which the break-even table and chart evaluate the cost per million tokens.
BREAKEVEN_LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


# ---- benchmark result files (``measured: {file: ...}``, docs/measured.md) -----------------
# What llmsizer.inputs.benchfiles derives from a benchmark's recorded figures. A ``*_given`` name is a
# figure read from the file (or the measured block); each expression is evaluated once per
# benchmark point, never printed into the workbook (the chosen point's throughput per replica
# is the workload input ``measured_tokens_per_s_per_replica``).
BENCH_TO_MS = ref("value_given") * ref("ms_per_unit_given")
BENCH_MEAN = ref("total_given") / ref("count_given")
BENCH_REPLICAS = ref("gpu_count_given") / ref("gpus_per_replica_given")
BENCH_TOKENS_PER_S_PER_REPLICA = ref("output_tokens_per_s_given") / ref("replicas_given")
BENCH_TOKENS_PER_S_PER_USER = 1000 / ref("tpot_ms_given")
# How far a point is from the workload's targets: the larger of required / achieved speed
# and achieved / allowed TTFT; a point meets the targets when this is at most 1.
BENCH_SHORTFALL = MAX(
    IF(gt(ref("required_tokens_per_s_per_user"), 0),
       ref("required_tokens_per_s_per_user") / ref("tokens_per_s_per_user_given"), 0),
    IF(gt(ref("target_ttft_ms"), 0), ref("ttft_ms_given") / ref("target_ttft_ms"), 0))
BENCH_GROUP_GPUS = ref("tp_given") * ref("pp_given")
BENCH_LENGTH_RATIO = ref("bench_tokens_given") / ref("workload_tokens_given")



# Names a plan stage reads beyond its own: the member's option values (the calculation list),
# the account inputs, and option constants shared by every member of a pool (same model, GPU,
# precisions and TP): kv_budget_gb, max_batch_per_replica, replicas_per_node, tp, and by
# every pool of a group (same GPU and platform): gpus_per_node, platform_sold_full.
@dataclass(frozen=True)
class Aggregate:
    """``fn`` (SUM, MIN or MAX) over the rows of a pool's members (or a group's pools) of
    ``member``, an expression evaluated on each row."""

    name: str
    label: str
    unit: str
    fn: Literal["SUM", "MIN", "MAX"]
    member: Expr
    note: str


@dataclass(frozen=True)
class PlanCalculation:
    name: str
    label: str
    unit: str
    expr: Expr
    note: str


_FNS = {"SUM": SUM, "MIN": MIN, "MAX": MAX}


def aggregate_expr(agg: Aggregate, row_names: list[str]) -> Expr:
    """The aggregate over rows whose values are held under ``row_names`` (one per row)."""
    return fold(agg.fn, [ref(n) for n in row_names])


def fold(fn: Literal["SUM", "MIN", "MAX"], items: list[Expr]) -> Expr:
    """``fn`` over any number of items (nested by 30: the function table's limit)."""
    while len(items) > 30:
        items = [_FNS[fn](*items[i:i + 30]) for i in range(0, len(items), 30)]
    return _FNS[fn](*items) if items else _FNS[fn](0)


_n1 = gt(r("survive_node_loss"), 0)

# Over a pool's members, each read from the member workload's option for the pool's choice
# (a member row may also read the pool aggregates listed before it). A member's sequences in
# flight at peak are its users (or its system target's sequences). A replica's capacity is
# shared: each member's sequences use 1/B of it for every limit B (tokens/s at the pool's
# strictest target, KV memory, TTFT, engine cap), so the pool needs the largest of the sums
# (closed form, never fewer replicas when users grow, exactly today's sizing for one member).
_seqs = r("demand_replicas") * r("batch_per_replica")
_member_tpot_batch = IF(gt(r("pool_target_tpot_ms"), 0),
                        ROUNDDOWN((r("pool_target_tpot_ms") - r("step_fixed_ms"))
                                  / r("step_ms_per_seq"), 0), r("max_batch_per_replica"))
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
    Aggregate("pool_batch_by_tpot", "Smallest member batch at the strictest TPOT", "sequences",
              "MIN", _member_tpot_batch,
              "ROUNDDOWN((strictest TPOT - a) / b) of each member: below 1 a member cannot "
              "share the pool's speed."),
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
               r("pool_demand_sequences") / r("max_batch_per_replica")),
           r("pool_members_demand_replicas")),
        "The largest need: tokens/s, KV memory, TTFT or the engine cap (sequences / cap). "
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
        r("pool_step_fixed_ms") + r("pool_step_ms_per_seq") * MAX(1, r("pool_batch_per_replica")),
        "a + mixed b x batch: what every member's users see (within the strictest target)."),
    PlanCalculation(
        "pool_replicas_for_load", "Replicas for peak + headroom", "replicas",
        ROUNDUP(r("pool_demand_replicas") * (1 + r("headroom")), 0),
        "Headroom and rounding once for the pool, not per workload."),
    PlanCalculation(
        "pool_load_gpus", "GPUs for peak + headroom", "GPUs",
        r("pool_replicas_for_load") * tp, "Replicas x TP, before spares."),
)

GROUP_LOAD_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_load_gpus", "GPUs for peak + headroom", "GPUs", "SUM", r("pool_load_gpus"),
              "All pools of the group."),
)

GROUP_SPARE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "group_spare_gpus", "Spare GPUs (N+1)", "GPUs",
        IF(_n1, MIN(r("gpus_per_node"), r("group_load_gpus")), 0),
        "One node's worth for the group (at most its load): N+1 once, not per workload. "
        "With a node down the rest still hold every pool's load replicas."),
)

POOL_SPARE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_spare_replicas", "Spare replicas (N+1), running", "replicas",
        IF(AND(_n1, gt(r("group_load_gpus"), 0)),
           MIN(r("replicas_per_node"), r("pool_replicas_for_load"),
               ROUNDDOWN(r("pool_replicas_for_load") * r("group_spare_gpus")
                         / r("group_load_gpus"), 0)), 0),
        "The pool's share of the group's spare GPUs by its share of the load, in whole "
        "replicas (what is left of the spare stays on standby). Alone in its group: MIN("
        "replicas per node, load), as a workload sized alone."),
    PlanCalculation(
        "pool_replicas", "Replicas", "replicas",
        r("pool_replicas_for_load") + r("pool_spare_replicas"), "Serving copies of the model."),
    PlanCalculation("pool_gpus", "GPUs", "GPUs", r("pool_replicas") * tp, "Replicas x TP."),
)

GROUP_SIZE_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_pool_gpus", "GPUs running replicas", "GPUs", "SUM", r("pool_gpus"),
              "All pools' replicas x TP, running spares included."),
)

GROUP_SIZE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "group_gpus_used", "GPUs used", "GPUs", r("group_load_gpus") + r("group_spare_gpus"),
        "Load + one node's worth of spares (as a workload sized alone counts them)."),
    PlanCalculation(
        "group_standby_gpus", "Spare GPUs on standby", "GPUs",
        r("group_gpus_used") - r("group_pool_gpus"),
        "Spare GPUs no pool runs a replica on: they take over a failed node's replicas."),
    PlanCalculation(
        "group_nodes", "Nodes", "nodes",
        MAX(ROUNDUP(r("group_gpus_used") / r("gpus_per_node"), 0), IF(_n1, 2, 1)),
        "Replicas packed into whole nodes: TP is a power of two dividing the node's GPUs, so "
        "no TP group is split across nodes; at least 2 with N+1."),
    PlanCalculation(
        "group_gpus_purchased", "GPUs purchased", "GPUs",
        IF(gt(r("platform_sold_full"), 0), r("group_nodes") * r("gpus_per_node"),
           r("group_gpus_used")),
        "Fixed baseboards come full: nodes x GPUs per node; PCIe servers: the GPUs used."),
)

POOL_HEADROOM_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation(
        "pool_replicas_lost_with_a_node", "Replicas lost with one node", "replicas",
        MIN(r("replicas_per_node"), ROUNDUP(r("pool_replicas") / r("group_nodes"), 0)),
        "The pool's replicas on the fullest node, spread evenly over the group's nodes."),
    PlanCalculation(
        "pool_headroom_achieved", "Headroom achieved at peak", "fraction",
        IF(gt(r("pool_demand_replicas"), 0),
           r("pool_replicas") / r("pool_demand_replicas") - 1, 0),
        "Capacity / peak demand - 1, all nodes up."),
    PlanCalculation(
        "pool_headroom_after_node_loss", "Headroom with one node down", "fraction",
        IF(gt(r("pool_demand_replicas"), 0),
           IF(_n1, MAX(r("pool_replicas") - r("pool_replicas_lost_with_a_node"),
                       r("pool_replicas_for_load")),
              r("pool_replicas") - r("pool_replicas_lost_with_a_node"))
           / r("pool_demand_replicas") - 1, 0),
        "Replicas left on the other nodes; with N+1 at least the load replicas, restarted "
        "on the group's spare GPUs. Negative: the pool's peak is not met while a node is down."),
)

GROUP_HEADROOM_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("group_headroom_achieved", "Headroom achieved at peak (weakest pool)",
              "fraction", "MIN", r("pool_headroom_achieved"), "The least of the group's pools."),
    Aggregate("group_headroom_after_node_loss", "Headroom with one node down (weakest pool)",
              "fraction", "MIN", r("pool_headroom_after_node_loss"),
              "The least of the group's pools."),
)

# The stages in evaluation order (llmsizer.sizing.plan runs them; docs and the Plan sheet list them).
PLAN_STAGES: tuple[tuple[str, tuple[Aggregate | PlanCalculation, ...]], ...] = (
    ("pool", POOL_AGGREGATES + POOL_CALCULATIONS),
    ("group load", GROUP_LOAD_AGGREGATES + GROUP_SPARE_CALCULATIONS),
    ("pool spares", POOL_SPARE_CALCULATIONS),
    ("group size", GROUP_SIZE_AGGREGATES + GROUP_SIZE_CALCULATIONS),
    ("pool headroom", POOL_HEADROOM_CALCULATIONS),
    ("group headroom", GROUP_HEADROOM_AGGREGATES),
)

# A group is costed by the list's own calculations (the TCO lines, whoever edits them),
# read with the group's nodes and GPUs in place of one option's: the ones that depend on the
# counts and lead to the group's figures, in list order.
GROUP_COUNTS: dict[str, str] = {"nodes": "group_nodes", "gpus": "group_gpus_used",
                                "gpus_purchased": "group_gpus_purchased"}
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

# What the plan saves against sizing each workload alone (``*_dedicated``: totals_dedicated).
PLAN_SAVING = ref("annual_cost_onprem_dedicated") - ref("annual_cost_onprem")
PLAN_SAVING_SHARE = IF(gt(ref("annual_cost_onprem_dedicated"), 0),
                       PLAN_SAVING / ref("annual_cost_onprem_dedicated"), 0)
