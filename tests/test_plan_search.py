"""The plan search's work on big accounts (issue #25 item 3): counted by the search itself
(``sizing.plan.Memo``: plans evaluated, node groups whose stages ran), never timed; and the
per-node-group split decisions checked against the account-wide greedy they replaced."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from helpers import DATA

from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing import plan, plan_search
from llmsizer.sizing.engine import size
from llmsizer.sizing.evaluate import account_inputs
from llmsizer.sizing.results import Option, WorkloadResult

MODELS = ("llama-3.1-70b", "llama-3.1-8b", "mixtral-8x7b", "qwen2.5-72b", "gpt-oss-120b")
Sized = tuple[list[WorkloadResult], dict[str, float]]


def _big(tmp: Path, n: int) -> Sized:
    """benchmarks/big_account.py's account of ``n`` workloads: five models in turn, users,
    lengths and targets varied, the hardware left out (every catalog GPU a candidate)."""
    lines = ["schema_version: 1", f"account: {{name: Big {n}, currency: USD}}",
             "policy: {headroom: 0.2}", "workloads:"]
    for i in range(n):
        lines += [f"  - name: Workload {i + 1}", f"    model: {MODELS[i % len(MODELS)]}",
                  f"    concurrent_users: {20 + 13 * i}",
                  f"    prompt_tokens: {500 + 100 * (i % 7)}",
                  f"    output_tokens: {200 + 50 * (i % 5)}",
                  f"    targets: {{tokens_per_s_per_user: {20 + (i % 4) * 5}, ttft_s: 3}}"]
    path = tmp / f"big{n}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return _sized(path)


def _sized(path: Path) -> Sized:
    loaded = load(path)
    return list(size(loaded).workloads), account_inputs(loaded.req, load_catalog())


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Sized]:
    tmp = tmp_path_factory.mktemp("big")
    return {n: _big(tmp, n) for n in (10, 40)}


def test_search_work_grows_linearly_with_workloads(big: dict[int, Sized]) -> None:
    """Four times the workloads (and options) cost at most ~4.5 times the plans evaluated.
    Before the split decisions were made per node group, each trial evaluated one plan per
    key two or more workloads shared: 629 plans at 10 workloads and 24,463 at 50 (39x for
    5x the workloads; docs/benchmarks.md "Big accounts")."""
    work = {}
    for n, (workloads, acct) in big.items():
        memo = plan.Memo()
        plan_search.choose_plan(workloads, acct, memo)
        work[n] = memo
    assert work[10].plans > 100  # a real search: seeds and descent, not one trial
    assert work[40].plans <= 4.5 * work[10].plans, (work[10].plans, work[40].plans)
    # every plan was evaluated from memoised node groups: no more stage runs than the
    # node groups the search could have met (a trial changes at most two)
    for memo in work.values():
        assert memo.group_runs == len(memo.groups)


def _account_wide_greedy(options: Mapping[int, Option], workloads: list[WorkloadResult],
                         acct: Mapping[str, float]) -> plan.Evaluated:
    """The pooling rule as it was (before issue #25's third round): every shared key of the
    account in turn split where the whole plan then ranks better."""
    keys = {i: plan.plan_key(workloads[i].model, o) for i, o in options.items()}
    counts: dict[plan.PoolKey, int] = {}
    for i, k in keys.items():
        if workloads[i].mode != "measured":
            counts[k] = counts.get(k, 0) + 1
    best = plan.evaluate_plan(plan.PlanChoice(options, plan_search._pooled(keys, workloads)),
                              workloads, acct)
    split: frozenset[plan.PoolKey] = frozenset()
    for key in (k for k, n in counts.items() if n > 1):
        e = plan.evaluate_plan(plan.PlanChoice(options, plan_search._pooled(keys, workloads,
                                                                     split | {key})),
                               workloads, acct)
        if e.rank < best.rank:
            best, split = e, split | {key}
    return best


@pytest.mark.parametrize("n", [10, 0])
def test_split_decisions_per_node_group_equal_the_account_wide_greedy(
        n: int, big: dict[int, Sized]) -> None:
    """Splitting a key changes only its node group, and a split always adds a pool, so it is
    decided by the group's own unfit pools, cost and GPUs: deciding it per group gives the
    same pools and the same rank as trying it on the whole plan. Checked on the options of
    every seed the search starts from (all workloads of a shared key on it) and on the
    chosen plan's, for the 10-workload account (several shared keys per group) and the
    three-workload one."""
    workloads, acct = big[n] if n else _sized(DATA / "three-workloads.yaml")
    cands = {i: [o for o in w.options if o.feasible][:plan_search.MAX_OPTIONS_PER_WORKLOAD]
             for i, w in enumerate(workloads)}
    dedicated = {i: opts[0] for i, opts in cands.items() if opts}
    shared: dict[plan.PoolKey, dict[int, Option]] = {}
    for i, opts in cands.items():
        for o in opts:
            shared.setdefault(plan.plan_key(workloads[i].model, o), {})[i] = o
    option_sets = [{**dedicated, **m} for m in shared.values() if len(m) > 1]
    option_sets += [dedicated, dict(plan_search.choose_plan(workloads, acct).choice.options)]
    with_splits = 0
    for options in option_sets:
        want = _account_wide_greedy(options, workloads, acct)
        got = plan_search._best_pooling(options, workloads, acct, plan.Memo())
        assert got.choice.pools == want.choice.pools
        assert got.rank == want.rank and got.totals == want.totals
        with_splits += len(got.choice.pools) > len(plan_search._pooled(
            {i: plan.plan_key(workloads[i].model, o) for i, o in options.items()}, workloads))
    if n:
        assert len(option_sets) > 20 and with_splits > 0  # the greedy's both outcomes met
