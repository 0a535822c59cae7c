"""The account plan's search (DESIGN §3, "Account plan"): which option each workload uses
and which workloads pool; :mod:`.plan` evaluates each plan tried (its module docstring gives
the ranking).

It starts from each workload's own best option (today's sizing: the plan never costs more
than that), tries the option keys several workloads could share, then moves one workload at
a time to another of its feasible options (its first 16, and its best on each GPU and
platform the plan buys) while that ranks better. A key's workloads pool
only where pooling ranks better than separate pools. That is decided per node group (a split
changes only its group), once per set of the group's options; a group with more than
MAX_KEYS_RETRIED shared keys re-decides only the keys a trial changed, and the chosen
options are re-decided in full at the end.

So the work grows with the trials (at most MAX_OPTIONS_PER_WORKLOAD options per workload,
MAX_PASSES passes), each re-deciding at most the node groups it changes (issue #25, big
accounts); tests/test_plan_search.py counts it (``Memo.plans``, ``Memo.group_runs``) and
docs/benchmarks.md "Big accounts" measures it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..model.calculations import PLAN_TOTALS
from .plan import (
    Evaluated,
    Memo,
    PlanChoice,
    PoolKey,
    _Group,
    _sum,
    plan_key,
)
from .results import Option, WorkloadResult

__all__ = ["MAX_OPTIONS_PER_WORKLOAD", "choose_plan"]

MAX_OPTIONS_PER_WORKLOAD = 16  # feasible options tried per workload, best first
MAX_PASSES = 4


def _pooled(keys: Mapping[int, PoolKey], workloads: Sequence[WorkloadResult],
            split: frozenset[PoolKey] = frozenset()) -> tuple[tuple[int, ...], ...]:
    """Workloads with the same key (``keys``: each workload's, by index) in one pool
    (measured ones and keys in ``split`` alone)."""
    keyed: dict[PoolKey, list[int]] = {}
    alone: list[tuple[int, ...]] = []
    for i in sorted(keys):
        key = keys[i]
        if workloads[i].mode == "measured" or key in split:
            alone.append((i,))
        else:
            keyed.setdefault(key, []).append(i)
    return tuple(sorted([tuple(v) for v in keyed.values()] + alone))


def _best_pooling(options: Mapping[int, Option], workloads: Sequence[WorkloadResult],
                  acct: Mapping[str, float], memo: Memo,
                  base: Evaluated | None = None) -> Evaluated:
    """``options`` with each shared key pooled, or split where separate pools rank better.

    Splitting a key changes only its node group (a key names one GPU and platform), and the
    rank compares the split by parts that add up over the groups (unfit pools, cost, GPUs,
    pools: a split always adds a pool, so headroom never decides it), so each group decides
    its own splits, once per set of its members' options (``memo.poolings``): a trial that
    moves one workload re-decides at most two groups, not every key of the account. A
    group with more than MAX_KEYS_RETRIED shared keys re-decides only the keys whose members
    differ from ``base`` (the plan the trial starts from) and keeps its other decisions."""
    by_hw: dict[tuple[str, str], list[int]] = {}
    for i in sorted(options):
        by_hw.setdefault((options[i].gpu, options[i].platform), []).append(i)
    pools: list[tuple[int, ...]] = []
    groups = []
    for members in by_hw.values():
        sig = tuple((i, options[i].id) for i in members)
        if sig not in memo.poolings:
            memo.poolings[sig] = _group_pooling(members, options, workloads, acct, memo, base)
        group_pools, group = memo.poolings[sig]
        pools.extend(group_pools)
        groups.append(group)
    # = evaluate_plan of these pools (its groups come in the same order: by first member),
    # without walking every pool of the account again
    memo.plans += 1
    totals = {key: _sum([g.totals[key] for g in groups]) for key in PLAN_TOTALS}
    return Evaluated(PlanChoice(options, tuple(sorted(pools))), tuple(groups), totals,
                     memo.options_rank(options), memo.way)


MAX_KEYS_RETRIED = 2  # a node group with more shared keys re-decides only those a trial changed


def _group_pooling(members: Sequence[int], options: Mapping[int, Option],
                   workloads: Sequence[WorkloadResult], acct: Mapping[str, float],
                   memo: Memo, base: Evaluated | None,
                   ) -> tuple[tuple[tuple[int, ...], ...], _Group]:
    """One node group's pools: every key its workloads share pooled, then each key in turn
    (in workload order) split where that ranks the group better; past MAX_KEYS_RETRIED
    shared keys, only the keys whose members changed from ``base`` are tried, the others
    split as they were in ``base``."""
    keys = {i: memo.key(workloads, i, options[i]) for i in members}
    key_members: dict[PoolKey, list[tuple[int, str]]] = {}
    for i in members:
        if workloads[i].mode != "measured":
            key_members.setdefault(keys[i], []).append((i, options[i].id))
    shared = [k for k, m in key_members.items() if len(m) > 1]
    split: frozenset[PoolKey] = frozenset()
    if base is not None and len(shared) > MAX_KEYS_RETRIED:
        if memo.base is None or memo.base[0] is not base:
            memo.base = (base, _key_members(base, workloads, memo))
        was = memo.base[1]
        kept = [k for k in shared if was.get(k, ([], False))[0] == key_members[k]]
        split = frozenset(k for k in kept if was[k][1])
        shared = [k for k in shared if k not in kept]

    # the way's cost first (a node group is one GPU: priced in the way or not, split or not)
    costs = ("annual_cost_cloud", "annual_cost_onprem") if memo.way == "cloud" else (
        "annual_cost_onprem",)

    def group(pools: tuple[tuple[int, ...], ...]) -> tuple[tuple[float, ...], _Group]:
        g = memo.group(tuple((m, tuple(options[i].id for i in m)) for m in pools), options,
                       workloads, acct)
        return (float(g.unfit), *(g.totals[c] for c in costs), g.totals["gpus_purchased"],
                g.totals["gpus_used"], float(len(pools))), g

    best = _pooled(keys, workloads, split)
    best_rank, best_group = group(best)
    for key in shared:
        pools = _pooled(keys, workloads, split | {key})
        r, g = group(pools)
        if r < best_rank:
            best, best_rank, best_group, split = pools, r, g, split | {key}
    return best, best_group


def _key_members(e: Evaluated, workloads: Sequence[WorkloadResult], memo: Memo,
                 ) -> dict[PoolKey, tuple[list[tuple[int, str]], bool]]:
    """Each key of a plan: its members (workload, option id) and whether they are split."""
    opts = e.choice.options
    out: dict[PoolKey, tuple[list[tuple[int, str]], bool]] = {}
    for pool in e.choice.pools:
        if workloads[pool[0]].mode != "measured":
            key = memo.key(workloads, pool[0], opts[pool[0]])
            had, alone = out.get(key, ([], True))
            out[key] = (had + [(i, opts[i].id) for i in pool], alone and len(pool) == 1)
    return {k: (sorted(m), alone and len(m) > 1) for k, (m, alone) in out.items()}


def _best_per_hardware(options: Sequence[Option]) -> dict[tuple[str, str], Option]:
    """The first feasible option (the engine's rank order) on each GPU and platform."""
    out: dict[tuple[str, str], Option] = {}
    for o in options:
        if o.feasible:
            out.setdefault((o.gpu, o.platform), o)
    return out


def choose_plan(workloads: Sequence[WorkloadResult], acct: Mapping[str, float],
                memo: Memo | None = None, way: str = "on_prem") -> Evaluated:
    """The best-ranked plan found for the workloads that have a feasible option (see the
    module docstring), ranked for ``way`` (plan.py WAY_COST). Each workload's option list is
    in the engine's rank order for that way; ``memo`` (a new one by default, ranking for
    ``way``) keeps the search's stages and counts its work."""
    cands = {i: [o for o in w.options if o.feasible][:MAX_OPTIONS_PER_WORKLOAD]
             for i, w in enumerate(workloads)}
    cands = {i: opts for i, opts in cands.items() if opts}
    dedicated = {i: opts[0] for i, opts in cands.items()}
    # Each workload's best option on each GPU and platform, past the first 16 too: a node the
    # plan already buys may hold it for nothing (a B200 node's free GPUs beat a cheaper
    # H100 node of its own), and more headroom must never find a cheaper plan than less.
    on_hw = {i: _best_per_hardware(workloads[i].options) for i in cands}
    cache: dict[tuple[str, ...], Evaluated] = {}
    memo = memo if memo is not None else Memo(way=way)

    def trial(options: Mapping[int, Option], base: Evaluated | None) -> Evaluated:
        sig = tuple(options[i].id for i in sorted(options))
        if sig not in cache:
            cache[sig] = _best_pooling(options, workloads, acct, memo, base)
        return cache[sig]

    best = first = trial(dedicated, None)
    # Seeds: every option key that several workloads could share, used by all of them.
    shared: dict[PoolKey, dict[int, Option]] = {}
    for i, opts in cands.items():
        for o in opts:
            shared.setdefault(plan_key(workloads[i].model, o), {})[i] = o
    # And every GPU and platform several workloads could run on, each on its best option
    # there: different models share a node group, never a pool, and moving one workload at a
    # time cannot empty two half-used nodes into one (two A100 nodes at 184,064 a year kept
    # while one H100 node at 167,118 held both: more load found the cheaper plan).
    on_one: dict[tuple[str, str], dict[int, Option]] = {}
    for i, best_on in on_hw.items():
        for hw, o in best_on.items():
            on_one.setdefault(hw, {})[i] = o
    for members in [*shared.values(), *on_one.values()]:
        if len(members) > 1:
            e = trial({**dedicated, **members}, first)
            if e.rank < best.rank:
                best = e
    for _ in range(MAX_PASSES):
        improved = False
        for i, opts in cands.items():
            bought = {(o.gpu, o.platform) for o in best.choice.options.values()}
            ids = {o.id for o in opts}
            extra = [on_hw[i][hw] for hw in sorted(bought)
                     if hw in on_hw[i] and on_hw[i][hw].id not in ids]
            for o in [*opts, *extra]:
                if o.id == best.choice.options[i].id:
                    continue
                e = trial({**best.choice.options, i: o}, best)
                if e.rank < best.rank:
                    best, improved = e, True
        if not improved:
            break
    # the chosen options with every shared key re-decided (the groups' stages are memoised)
    full = Memo(memo.pools, memo.groups, memo.ranks, memo.keys, memo.group_inputs,
                way=memo.way)
    e = _best_pooling(best.choice.options, workloads, acct, full)
    memo.plans, memo.group_runs = memo.plans + full.plans, memo.group_runs + full.group_runs
    return e if e.rank <= best.rank else best  # at a tie, the full rule's pools
