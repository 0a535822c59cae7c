"""The account plan: one deployment for all of an account's workloads (DESIGN §3, "Account
plan"). The engine sizes each workload alone; this module decides which workloads share what
and evaluates the plan with the PLAN calculations of :mod:`llmsizer.model.calculations`. It does no
arithmetic of its own.

What it decides, and why:

* **pools** — workloads whose chosen options run the same model, weight and KV precisions,
  GPU, platform and TP may share replicas (one pool: one rounding, one set of spares). A
  workload sized from the customer's benchmark (measured mode) stays alone: its throughput
  was measured for that workload's requests, not a mix.
* **node groups** — every pool on the same GPU and platform shares the group's nodes. That
  never costs more than separate nodes (one ROUNDUP over the sum, one node's worth of spares),
  so it is not searched.
* **the search** — :mod:`.plan_search` (it evaluates plans with :func:`evaluate_plan`'s
  stages, memoised in a :class:`Memo`).
* **ties** — lowest annual cost in the way the account runs it (``policy.deployment``:
  bought, the on-prem cost; rented, the cloud cost, a plan with a GPU without a cloud price
  after every priced one, then at equal rent the buying rank below; "cheapest" searches both
  ways and keeps the plan whose cost in its own way is lowest, sizing/engine.py), then fewest
  GPUs bought, then fewest GPUs used, then fewest pools (at equal cost one deployment of a
  model beats two identical ones side by side: that is where pooling saves without saving a
  node), then the lower precision that meets the targets, then most headroom (the weakest
  pool's); the engine ranks options the same way (issue 22, search.py ``_rank``). Review
  round 18: a rented insurer was given the plan cheapest to buy, 16 × H200 renting for EUR
  234 k a year, not the one cheapest to rent.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from ..model.calculations import (
    CONFIDENCE_DEMAND_REPLICAS,
    CONFIDENCE_LOAD_REPLICAS,
    GROUP_COST_CALCULATIONS,
    GROUP_COUNTS,
    GROUP_HEADROOM_AGGREGATES,
    GROUP_LOAD_AGGREGATES,
    GROUP_NODE_LOSS_AGGREGATES,
    GROUP_NODE_LOSS_CALCULATIONS,
    GROUP_RENTED_LOSS_AGGREGATES,
    GROUP_RENTED_LOSS_CALCULATIONS,
    GROUP_SIZE_AGGREGATES,
    GROUP_SIZE_CALCULATIONS,
    GROUP_SPARE_CALCULATIONS,
    PLAN_TOTALS,
    POOL_AGGREGATES,
    POOL_CALCULATIONS,
    POOL_HEADROOM_CALCULATIONS,
    POOL_NODE_LOSS_CALCULATIONS,
    POOL_RENTED_LOSS_CALCULATIONS,
    POOL_SPARE_CALCULATIONS,
    WORKLOAD_SHARE_CALCULATIONS,
    Aggregate,
    Calculation,
    PlanCalculation,
    fold_values,
)
from ..model.expr import Expr, Formula, Value, compile_expr, evaluate, references
from .results import NodeGroup, Option, Plan, PlanPool, WorkloadResult

__all__ = ["WAY_COST", "Memo", "PlanChoice", "ThroughputRange", "confidence_range",
           "evaluate_plan", "plan_key"]

# The cost a way of running the service is ranked by (policy.deployment, search.py _rank).
WAY_COST = {"on_prem": "annual_cost_onprem", "cloud": "annual_cost_cloud"}

PoolKey = tuple[str, str, str]  # model, platform, option id


def plan_key(model: str, o: Option) -> PoolKey:
    """Workloads may pool when this is equal: the same model on the same configuration (the
    option id names GPU, precisions, TP and any other parallelism)."""
    return (model, o.platform, o.id)


@dataclass(frozen=True)
class PlanChoice:
    """Which option each workload uses (by workload index) and which of them pool together
    (lists of workload indices, in workload order)."""

    options: Mapping[int, Option]
    pools: tuple[tuple[int, ...], ...]


# A stage's values: its own results over the option's and the account's (ChainMaps, so the
# search shares what it does not change instead of copying hundreds of values per trial).
Env = MutableMapping[str, Value]


def _f(env: Mapping[str, Value], name: str) -> float:
    return _number(env[name])


def _number(x: Value) -> float:
    assert isinstance(x, float)
    return x


# The plan stages' formulas compiled to Python once per process (expr.compile_expr: the
# same values as evaluate); the search evaluates them some 100,000 times on a 50-workload
# account, where walking their trees was a third of its time.
_COMPILED: dict[int, tuple[object, Formula]] = {}


def _compiled(item: PlanCalculation | Calculation | Aggregate, expr: Expr) -> Formula:
    hit = _COMPILED.get(id(item))
    if hit is None or hit[0] is not item:
        hit = _COMPILED[id(item)] = (item, compile_expr(expr))
    return hit[1]


def _run(calcs: Sequence[PlanCalculation | Calculation], env: Env) -> None:
    for c in calcs:
        env[c.name] = _compiled(c, c.expr)(env, None)


def _aggregate(aggs: Sequence[Aggregate], rows: Sequence[Mapping[str, Value]],
               env: Env) -> None:
    for a in aggs:
        member = _compiled(a, a.member)
        # a member row reads its own values first, then the aggregates before this one
        # read-only: a ChainMap is typed mutable, the rows are never written
        cells = [_number(member(ChainMap(row, env), None)) for row in rows]  # type: ignore[arg-type]
        env[a.name] = fold_values(a.fn, cells)  # = aggregate_expr(a, ...) over the cells


PoolSig = tuple[tuple[int, ...], tuple[str, ...]]  # a pool's members and their option ids


@dataclass
class _Pool:
    members: tuple[int, ...]
    option: Option
    env: Env


@dataclass
class _Group:
    pools: list[_Pool]
    env: Env
    sigs: tuple[PoolSig, ...] = ()
    unfit: int = 0  # pools whose member cannot keep up with the strictest target
    totals: dict[str, float] = field(default_factory=dict)  # its part of PLAN_TOTALS


@dataclass(frozen=True)
class Evaluated:
    choice: PlanChoice
    groups: tuple[_Group, ...]
    totals: Mapping[str, float]
    options_rank: OptionsRank
    way: str = "on_prem"  # the way it is ranked for (WAY_COST)

    @cached_property
    def pools(self) -> tuple[_Pool, ...]:
        """The pools in the choice's order (only the chosen plan needs them: working them out
        for each of a search's thousands of trials was a fifth of its time)."""
        opts = self.choice.options
        pool_of = {sig: pool for g in self.groups
                   for sig, pool in zip(g.sigs, g.pools, strict=True)}
        return tuple(pool_of[(members, tuple(opts[i].id for i in members))]
                     for members in self.choice.pools)

    @cached_property
    def rank(self) -> tuple[float, ...]:
        """Lowest cost, calibrated before extrapolated, fewest GPUs bought, fewest GPUs used,
        fewest pools, lower precision, most headroom; unpriced GPUs last (their cost leaves the
        GPUs out)."""
        # a pool whose member cannot keep up with the strictest target is not a plan
        unfit = sum(g.unfit for g in self.groups)
        headroom = min((_f(g.env, "group_headroom_achieved") for g in self.groups), default=0.0)
        o = self.options_rank
        buying = (o.unpriced, self.totals["annual_cost_onprem"],
                  o.uncalibrated, self.totals["gpus_purchased"], self.totals["gpus_used"],
                  float(len(self.choice.pools)), o.precision, o.kv, -headroom)
        if self.way == "cloud":  # rented: the rent first, then as buying ranks
            return (float(unfit), o.cloud_unpriced, self.totals["annual_cost_cloud"], *buying)
        return (float(unfit), *buying)


@dataclass(frozen=True)
class OptionsRank:
    """The parts of a plan's rank that depend on its options alone, not on how they pool."""

    unpriced: float
    # options whose GPU has no cloud price, or whose offer cannot hold their replica (a rented
    # plan ranks them last)
    cloud_unpriced: float
    uncalibrated: float  # at equal cost, outside the calibration data last (search._rank_key)
    precision: float  # the summed bytes per weight: lower precision first (issue 22)
    kv: float

    @staticmethod
    def of(options: Mapping[int, Option]) -> OptionsRank:
        opts = options.values()
        return OptionsRank(
            unpriced=float(sum(1 for o in opts if not o.priced)),
            cloud_unpriced=float(sum(1 for o in opts
                                     if float(o.values["cloud_price_known"]) <= 0)),
            uncalibrated=float(sum(1 for o in opts if o.calibration_gaps)),
            precision=_sum([float(o.values["weight_bytes_per_param"]) for o in opts]),
            kv=_sum([float(o.values["kv_bytes_per_element"]) for o in opts]))


def _member_env(acct: Mapping[str, float], w: WorkloadResult, o: Option) -> Mapping[str, Value]:
    return ChainMap(o.values, w.inputs, acct)  # type: ignore[arg-type]


@dataclass
class Memo:
    """Stage results already computed during one plan search, keyed by what they depend on.

    A pool's own stage depends only on its members and their options; a node group's stages
    only on its pools, in order. The search (coordinate descent) changes one workload's
    option at a time, so almost every pool and group of a trial was seen before: without
    this the search was quadratic in workloads (issue #25, docs/benchmarks.md). Only valid
    while an option id stands for one set of values (a plan search, not the scaled options
    of :func:`confidence_range`)."""

    pools: dict[PoolSig, Env] = field(default_factory=dict)
    groups: dict[tuple[PoolSig, ...], _Group] = field(default_factory=dict)
    ranks: dict[tuple[tuple[int, str], ...], OptionsRank] = field(default_factory=dict)
    keys: dict[tuple[int, str], PoolKey] = field(default_factory=dict)
    group_inputs: dict[tuple[int, str], Env] = field(default_factory=dict)  # by first option
    # a node group's pools by its members' options (_best_pooling)
    poolings: dict[tuple[tuple[int, str], ...],
                   tuple[tuple[tuple[int, ...], ...], _Group]] = field(default_factory=dict)
    # work done, counted for tests/test_plan_search.py and benchmarks/big_account.py
    plans: int = 0  # plans evaluated (evaluate_plan's or _best_pooling's)
    base: tuple[Evaluated, dict[PoolKey, tuple[list[tuple[int, str]], bool]]] | None = None
    group_runs: int = 0  # node groups whose stages ran (not found in ``groups``)
    way: str = "on_prem"  # the way the search ranks plans for (WAY_COST)

    def group(self, sigs: tuple[PoolSig, ...], opts: Mapping[int, Option],
              workloads: Sequence[WorkloadResult], acct: Mapping[str, float]) -> _Group:
        """The node group of these pools (``sigs``, in order), evaluated once."""
        if sigs not in self.groups:
            self.group_runs += 1
            self.groups[sigs] = _group(sigs, opts, workloads, acct, self)
        return self.groups[sigs]

    def options_rank(self, options: Mapping[int, Option]) -> OptionsRank:
        sig = tuple((i, o.id) for i, o in options.items())
        if sig not in self.ranks:
            self.ranks[sig] = OptionsRank.of(options)
        return self.ranks[sig]

    def key(self, workloads: Sequence[WorkloadResult], i: int, o: Option) -> PoolKey:
        if (i, o.id) not in self.keys:
            self.keys[i, o.id] = plan_key(workloads[i].model, o)
        return self.keys[i, o.id]


def evaluate_plan(choice: PlanChoice, workloads: Sequence[WorkloadResult],
                  acct: Mapping[str, float], memo: Memo | None = None,
                  options_rank: OptionsRank | None = None) -> Evaluated:
    """Every PLAN calculation for ``choice``, stage by stage (calculations/plan.py's order).
    A search passes its ``memo`` and the options' part of the rank (``options_rank``)."""
    memo = memo if memo is not None else Memo()
    memo.plans += 1
    opts = choice.options
    by_hw: dict[tuple[str, str], list[PoolSig]] = {}
    for members in choice.pools:
        first = opts[members[0]]
        by_hw.setdefault((first.gpu, first.platform), []).append(
            (members, tuple(opts[i].id for i in members)))
    groups = [memo.group(tuple(sigs), opts, workloads, acct) for sigs in by_hw.values()]
    totals = {key: _sum([g.totals[key] for g in groups]) for key in PLAN_TOTALS}
    return Evaluated(choice, tuple(groups), totals,
                     options_rank if options_rank is not None else memo.options_rank(opts),
                     memo.way)


def _group(sigs: Sequence[PoolSig], opts: Mapping[int, Option],
           workloads: Sequence[WorkloadResult], acct: Mapping[str, float], memo: Memo) -> _Group:
    """A node group: its pools' own stage (memoised per pool), then the group's stages."""
    pools = []
    for sig in sigs:
        members = sig[0]
        first = opts[members[0]]
        if sig not in memo.pools:
            rows = [_member_env(acct, workloads[i], opts[i]) for i in members]
            env: Env = ChainMap({}, first.values, acct)  # type: ignore[arg-type]
            _aggregate(POOL_AGGREGATES, rows, env)
            _run(POOL_CALCULATIONS, env)
            memo.pools[sig] = _flat(env, _POOL_KEEPS)
        pools.append(_Pool(members, first, memo.pools[sig]))
    key = (sigs[0][0][0], pools[0].option.id)  # the group's values start from its first option's
    if key not in memo.group_inputs:
        memo.group_inputs[key] = _flat(ChainMap(pools[0].option.values, acct),  # type: ignore[arg-type]
                                       _GROUP_READS)
    pool_envs, genv = _group_stages(pools, dict(memo.group_inputs[key]))
    for p, penv in zip(pools, pool_envs, strict=True):
        p.env = penv
    unfit = sum(1 for p in pools if not _f(p.env, "pool_meets_targets"))
    totals = {key: _f(genv, name) for key, name in PLAN_TOTALS.items()}
    return _Group(pools, genv, tuple(sigs), unfit, totals)


def _flat(env: Mapping[str, Value], names: frozenset[str]) -> Env:
    """The values of ``names`` that ``env`` holds, as one dict: the group stages run once
    per pool per node group tried, and a plain dict reads several times faster than the
    nested ChainMaps of option, account and stage values (issue #25's big accounts)."""
    return {n: env[n] for n in names if n in env}


def _group_stages(members_pools: Sequence[_Pool], genv: Env) -> tuple[list[Env], Env]:
    """A node group's stages over copies of its pools' own values, ``genv`` holding the
    option and account values they read; returns the pools' finished values and the group's."""
    # copies: the stages write over the memoised pool values, never into them
    envs: list[Env] = [dict(p.env) for p in members_pools]
    _aggregate_pools(GROUP_LOAD_AGGREGATES, envs, genv)
    _run(GROUP_SPARE_CALCULATIONS, genv)
    for env in envs:
        env.update(group_load_gpus=genv["group_load_gpus"],
                   group_spare_gpus=genv["group_spare_gpus"],
                   group_pool_count=genv["group_pool_count"])
        _run(POOL_SPARE_CALCULATIONS, env)
    _aggregate_pools(GROUP_SIZE_AGGREGATES, envs, genv)
    _run(GROUP_SIZE_CALCULATIONS, genv)
    for env in envs:
        env.update({n: genv[n] for n in _GROUP_FOR_POOL_NODE_LOSS})
        _run(POOL_NODE_LOSS_CALCULATIONS, env)
    _aggregate_pools(GROUP_NODE_LOSS_AGGREGATES, envs, genv)
    _run(GROUP_NODE_LOSS_CALCULATIONS, genv)
    for env in envs:
        env.update(group_nodes=genv["group_nodes"],
                   group_spare_nodes_added=genv["group_spare_nodes_added"])
        _run(POOL_HEADROOM_CALCULATIONS, env)
    _aggregate_pools(GROUP_HEADROOM_AGGREGATES, envs, genv)
    genv.update({count: genv[name] for count, name in GROUP_COUNTS.items()})
    _run(GROUP_COST_CALCULATIONS, genv)
    for env in envs:  # a rented plan's node down: one of the cloud instances just costed
        env.update({n: genv[n] for n in _GROUP_FOR_POOL_RENTED_LOSS})
        _run(POOL_RENTED_LOSS_CALCULATIONS, env)
    _aggregate_pools(GROUP_RENTED_LOSS_AGGREGATES, envs, genv)
    _run(GROUP_RENTED_LOSS_CALCULATIONS, genv)
    return envs, genv


def _aggregate_pools(aggs: Sequence[Aggregate], envs: Sequence[Env], genv: Env) -> None:
    """A group aggregate over its pools' values: read from each pool's dict alone where the
    member formula reads pool values only (the same numbers, without a ChainMap per cell)."""
    for a in aggs:
        if a.name in _POOL_ONLY_MEMBERS:
            member = _compiled(a, a.member)
            genv[a.name] = fold_values(a.fn, [_number(member(env, None)) for env in envs])
        else:
            _aggregate((a,), envs, genv)


# The group's values the pools' node-loss stage reads (the free GPUs' placement).
_GROUP_FOR_POOL_NODE_LOSS = ("group_packed_nodes", "group_free_gpus", "group_free_nodes",
                             "group_free_gpus_standby_node", "group_free_gpus_partial")
# ... and the rented node-loss stage (its cloud instances, after the group's cost rows).
_GROUP_FOR_POOL_RENTED_LOSS = ("cloud_instances", "cloud_instance_gpus", "cloud_gpus_rented",
                               "group_pool_gpus", "group_cloud_replica_gpus",
                               "cloud_sold_by_gpu", "group_cloud_spare_gpus")


def workload_shares(e: Evaluated, workloads: Sequence[WorkloadResult],
                    acct: Mapping[str, float]) -> dict[int, dict[str, float]]:
    """Each planned workload's part of its pool and node group (WORKLOAD_SHARE_CALCULATIONS),
    by workload index. A name the calculations read is the pool's where the pool stages
    define it, else the group's, else the member's own (as the Plan sheet places it)."""
    shares: dict[int, dict[str, float]] = {}
    for g in e.groups:
        group_vals = {n: g.env[n] for n in _GROUP_NAMES}
        for p in g.pools:
            pool_vals = {n: p.env[n] for n in _POOL_NAMES}
            for i in p.members:
                member = _member_env(acct, workloads[i], e.choice.options[i])
                env: Env = ChainMap({}, pool_vals, group_vals, member)  # type: ignore[arg-type]
                _run(WORKLOAD_SHARE_CALCULATIONS, env)
                shares[i] = {c.name: _f(env, c.name) for c in WORKLOAD_SHARE_CALCULATIONS}
    return shares


def to_plan(e: Evaluated, workloads: Sequence[WorkloadResult],
            acct: Mapping[str, float]) -> Plan:
    """The plan as the results document states it."""
    pool_ids: dict[int, str] = {}
    pools = []
    shares = workload_shares(e, workloads, acct)
    for n, p in enumerate(e.pools, 1):
        pool_ids[id(p)] = f"pool-{n}"
        o, v = p.option, p.env
        pools.append(PlanPool(
            id=f"pool-{n}", workloads=[workloads[i].name for i in p.members],
            workload_indices=list(p.members), option=o.id, model=workloads[p.members[0]].model,
            gpu=o.gpu, platform=o.platform, weight_precision=o.weight_precision,
            kv_precision=o.kv_precision, tp=o.tp,
            batch_per_replica=int(_f(v, "pool_batch_per_replica")),
            demand_replicas=_f(v, "pool_demand_replicas"),
            replicas_for_load=int(_f(v, "pool_replicas_for_load")),
            # as run: a plan rented by the GPU runs its replicas for the load, its N+1 spare
            # instance on standby (plan_node_loss.py)
            spare_replicas=int(_f(v, "pool_spare_replicas_as_run")),
            replicas=int(_f(v, "pool_replicas_as_run")), gpus=int(_f(v, "pool_gpus")),
            headroom_achieved=_f(v, "pool_headroom_as_run"),
            headroom_after_node_loss=_f(v, "pool_headroom_one_down"),
            values={c: _f(v, c) for c in _POOL_NAMES},
            prefill_replicas=int(_f(v, "pool_prefill_replicas")),
            prefill_gpus_per_replica=int(_f(o.values, "disagg_prefill_gpus")),
            prefill_gpus=int(_f(v, "pool_prefill_gpus")),
            shares=[shares[i] for i in p.members]))
    groups = []
    for n, g in enumerate(e.groups, 1):
        v = g.env
        first = g.pools[0].option
        groups.append(NodeGroup(
            id=f"group-{n}", platform=first.platform, gpu=first.gpu,
            pools=[pool_ids[id(p)] for p in g.pools], nodes=int(_f(v, "group_nodes")),
            gpus_used=int(_f(v, "group_gpus_used")),
            gpus_purchased=int(_f(v, "group_gpus_purchased")),
            headroom_achieved=_f(v, "group_headroom_achieved"),
            headroom_after_node_loss=_f(v, "group_headroom_one_down"),
            capex=_f(v, "capex"), annual_cost_onprem=_f(v, "annual_cost_onprem"),
            annual_cost_cloud=_f(v, "annual_cost_cloud"),
            # cloud_sold_by_gpu: how the cloud counts what it rents (sizing/costs.py)
            values={c: _f(v, c) for c in (*_GROUP_NAMES, "cloud_sold_by_gpu",
                                          "cloud_sizes_listed")}))
    return Plan(pools=pools, node_groups=groups)


_POOL_STAGES: tuple[Sequence[Aggregate | PlanCalculation], ...] = (
    POOL_AGGREGATES, POOL_CALCULATIONS, POOL_SPARE_CALCULATIONS, POOL_NODE_LOSS_CALCULATIONS,
    POOL_HEADROOM_CALCULATIONS, POOL_RENTED_LOSS_CALCULATIONS)
_GROUP_STAGES: tuple[Sequence[Aggregate | PlanCalculation | Calculation], ...] = (
    GROUP_LOAD_AGGREGATES, GROUP_SPARE_CALCULATIONS, GROUP_SIZE_AGGREGATES,
    GROUP_SIZE_CALCULATIONS, GROUP_NODE_LOSS_AGGREGATES, GROUP_NODE_LOSS_CALCULATIONS,
    GROUP_HEADROOM_AGGREGATES, GROUP_COST_CALCULATIONS, GROUP_RENTED_LOSS_AGGREGATES,
    GROUP_RENTED_LOSS_CALCULATIONS)
_POOL_NAMES = tuple(c.name for stage in _POOL_STAGES for c in stage)
_GROUP_NAMES = tuple(c.name for stage in _GROUP_STAGES for c in stage)


def _reads(items: Sequence[Aggregate | PlanCalculation | Calculation]) -> set[str]:
    return set().union(*(references(i.member if isinstance(i, Aggregate) else i.expr)
                         for i in items))


_GROUP_ITEMS = [i for stage in _GROUP_STAGES for i in stage]
_POOL_GROUP_ITEMS = [i for stage in _POOL_STAGES[2:] for i in stage]  # run in _group_stages
# What a pool's memoised values keep: its own stage's, and every other name the pool stages
# and the group aggregates over pools read (option and account values).
_POOL_KEEPS = frozenset(_POOL_NAMES) | frozenset(
    _reads(_POOL_GROUP_ITEMS + [i for i in _GROUP_ITEMS if isinstance(i, Aggregate)])
    - set(_GROUP_NAMES))
# What a group's values start from: the option and account values its stages read.
_GROUP_READS = frozenset(_reads([i for i in _GROUP_ITEMS if not isinstance(i, Aggregate)])
                         - set(_GROUP_NAMES) - set(GROUP_COUNTS))
_POOL_ONLY_MEMBERS = frozenset(a.name for a in _GROUP_ITEMS if isinstance(a, Aggregate)
                               and references(a.member) <= _POOL_KEEPS)


class ThroughputRange(NamedTuple):
    """A plan at the model's low throughput end (its error group's p90) and high end (p10):
    the GPUs it buys and the GPUs it rents in the cloud (its node groups' whole instances,
    cloud_gpus_rented), each as (low end, high end)."""

    gpus_purchased: tuple[int, int]
    cloud_gpus_rented: tuple[int, int]


def confidence_range(e: Evaluated, workloads: Sequence[WorkloadResult],
                     acct: Mapping[str, float]) -> ThroughputRange | None:
    """The same plan evaluated with every option's throughput at the model's low end and at
    its high end: the GPUs it buys and rents at each (review round 21: a rented plan had no
    range of GPUs rented); None when every figure is measured."""
    options = e.choice.options.values()
    if all(float(o.values["confidence_p90"]) == 0 == float(o.values["confidence_p10"])
           for o in options):
        return None

    def at(error: str) -> tuple[int, int]:
        def values(i: int, v: dict[str, float | str]) -> dict[str, float | str]:
            env = {**acct, **workloads[i].inputs, **v, "confidence_error": v[error]}
            return {**v, "demand_replicas": float(evaluate(CONFIDENCE_DEMAND_REPLICAS, env)),
                    "load_replicas_exact": float(evaluate(CONFIDENCE_LOAD_REPLICAS, env))}

        scaled = {i: o.model_copy(update={"values": values(i, o.values)})
                  for i, o in e.choice.options.items()}
        scaled_plan = evaluate_plan(PlanChoice(scaled, e.choice.pools), workloads, acct)
        return (int(scaled_plan.totals["gpus_purchased"]),
                int(plan_sums(scaled_plan)("cloud_gpus_rented")))

    low, high = at("confidence_p90"), at("confidence_p10")
    return ThroughputRange((low[0], high[0]), (low[1], high[1]))


def _sum(values: Sequence[float]) -> float:
    return fold_values("SUM", list(values))


def option_sums(options: Sequence[Option]) -> Callable[[str], float]:
    """Totals of options each sized alone (the dedicated sizing): ``total(key)`` sums the
    options' value of ``key`` (``gpus_used`` is their ``gpus``)."""
    def total(key: str) -> float:
        if key == "gpus_standby":
            return 0.0  # sized alone, a workload's spares run as replicas (spare_replicas)
        name = "gpus" if key == "gpus_used" else key
        return _sum([float(o.values[name]) for o in options])

    return total


def plan_sums(e: Evaluated) -> Callable[[str], float]:
    """The plan's totals: node groups summed for what is bought and what it costs, the
    chosen options summed for what the workloads serve (tokens)."""
    per_option = option_sums(list(e.choice.options.values()))

    def total(key: str) -> float:
        name = "gpus_used" if key == "gpus" else key
        if name == "cloud_gpus_rented":  # the node groups' whole instances, not the options'
            return _sum([float(g.env[name]) for g in e.groups])
        if name == "gpus_standby":  # the node groups' spares that run no replica
            return _sum([float(g.env["group_standby_gpus"]) for g in e.groups])
        return e.totals[name] if name in e.totals else per_option(key)

    return total
