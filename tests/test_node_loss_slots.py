"""N+1 that can really host a replica (issue 22, item 3): with the node that hurts a pool
most down, the replicas that still run are those not on that node plus those restarted on
WHOLE free slots -- a replica's GPUs free inside one surviving node (one NVLink domain on a
rack-scale platform), or whole free nodes for a replica wider than a node. Free GPUs
scattered over nodes host nothing. Where N+1 is asked and a pool still falls short, the plan
adds a spare node instead of claiming one.

Each case is computed here by hand and checked against the PLAN calculations
(calculations/plan_node_loss.py), run in the order sizing/plan.py runs them; the last test checks the
wiring on a shipped account.
"""

from __future__ import annotations

import math
from collections import ChainMap
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

from llmsizer.inputs.loader import load
from llmsizer.model.calculations import (
    GROUP_NODE_LOSS_AGGREGATES,
    GROUP_NODE_LOSS_CALCULATIONS,
    GROUP_SIZE_AGGREGATES,
    GROUP_SIZE_CALCULATIONS,
    GROUP_SPARE_CALCULATIONS,
    POOL_CALCULATIONS,
    POOL_HEADROOM_CALCULATIONS,
    POOL_NODE_LOSS_CALCULATIONS,
    POOL_SPARE_CALCULATIONS,
    Aggregate,
    PlanCalculation,
    fold_values,
)
from llmsizer.model.expr import evaluate
from llmsizer.sizing.engine import size


def _pool(tp: int, load: int, demand: float, gpus_per_node: int) -> dict[str, Any]:
    return {"tp": float(tp), "gpus_per_replica": float(tp), "pool_replicas_for_load": float(load),
            "pool_load_gpus": float(load * tp), "pool_demand_replicas": demand,
            "pool_prefill_gpus": 0.0,
            # read by the pool's cloud rows of the headroom stage (review round 22)
            "disagg_prefill_gpus": 0.0, "pool_prefill_replicas": 0.0,
            "pool_cloud_replica_gpus": float(tp),
            # its cloud offer lists no other instance size (session 23: the spare instance of
            # an offer sold in listed sizes is the smallest listed size that holds a replica)
            "cloud_sizes_listed": 0.0, "cloud_size1_gpus": 0.0, "cloud_size2_gpus": 0.0,
            # no member states streams (session 22: pool_headroom reads the streams' step)
            "pool_stream_step_limit_ms": 0.0,
            "replicas_per_node": float(max(1, gpus_per_node // tp))}


def _run(items: tuple[PlanCalculation, ...], env: Any) -> None:
    for c in items:
        env[c.name] = evaluate(c.expr, env)


def _agg(items: tuple[Aggregate, ...], rows: list[Any], env: Any) -> None:
    for a in items:
        env[a.name] = fold_values(a.fn, [float(evaluate(a.member, ChainMap(row, env)))
                                         for row in rows])  # type: ignore[arg-type]


def _group(pools: list[dict[str, Any]], gpus_per_node: int, n1: bool,
           sold_full: bool = True, node_cost: float = 0.0,
           gpu_cost: float = 0.0) -> tuple[dict[str, Any], list[Any]]:
    """The plan's node-group stages from the group's load on (the pools' own stage given).
    ``node_cost``, ``gpu_cost``: a node's and a GPU's cost per year (session 25: the N+1
    layout on PCIe servers bought part full is the cheaper; unpriced, on the fewest nodes)."""
    g: Any = ChainMap({}, {"gpus_per_node": float(gpus_per_node),
                           "platform_sold_full": float(sold_full),
                           "survive_node_loss": float(n1),
                           "node_cost_per_year": node_cost, "gpu_cost_per_year": gpu_cost})
    envs = [ChainMap({}, p, g) for p in pools]
    g["group_load_gpus"] = sum(p["pool_load_gpus"] for p in pools)
    g["group_pool_count"] = float(len(pools))
    # session 23: a pool alone on PCIe servers bought part full spares its fullest node's GPUs
    # session 25: or spread over one node more where that costs less a year
    for name in ("pool_fullest_node_gpus", "pool_spread_node_gpus"):
        c = next(c for c in POOL_CALCULATIONS if c.name == name)
        for e in envs:
            e[name] = evaluate(c.expr, e)
    g["group_fullest_node_gpus"] = max(e["pool_fullest_node_gpus"] for e in envs)
    g["group_spread_node_gpus"] = max(e["pool_spread_node_gpus"] for e in envs)
    _run(GROUP_SPARE_CALCULATIONS, g)
    for e in envs:
        _run(POOL_SPARE_CALCULATIONS, e)
    _agg(GROUP_SIZE_AGGREGATES, envs, g)
    _run(GROUP_SIZE_CALCULATIONS, g)
    for e in envs:
        _run(POOL_NODE_LOSS_CALCULATIONS, e)
    _agg(GROUP_NODE_LOSS_AGGREGATES, envs, g)
    _run(GROUP_NODE_LOSS_CALCULATIONS, g)
    for e in envs:
        _run(POOL_HEADROOM_CALCULATIONS, e)
    return dict(g), envs


def test_one_tp8_replica_needs_a_second_node_for_n_plus_1() -> None:
    """One TP8 replica for the load (peak 0.8 of it) on 8-GPU nodes. Without N+1: one node,
    and with it down nothing runs (-100 %). With N+1: a spare replica on a second node; a node
    down loses 1, 1 runs: 1 / 0.8 - 1 = +25 %."""
    g, (p,) = _group([_pool(8, 1, 0.8, 8)], 8, n1=False)
    assert g["group_nodes"] == 1 and p["pool_replicas_after_node_loss"] == 0
    assert p["pool_headroom_after_node_loss"] == -1
    g, (p,) = _group([_pool(8, 1, 0.8, 8)], 8, n1=True)
    assert g["group_nodes"] == 2 and g["group_gpus_purchased"] == 16
    assert p["pool_replicas"] == 2 and p["pool_replicas_lost_with_a_node"] == 1
    assert p["pool_replicas_after_node_loss"] == 1
    assert math.isclose(p["pool_headroom_after_node_loss"], 0.25, rel_tol=1e-12)


def test_four_tp4_replicas_on_two_full_nodes_lose_two() -> None:
    """4 x TP4 on 2 x 8-GPU nodes, no GPU free, peak 3.2 replicas: spread 2 + 2, a node down
    leaves 2 and nothing restarts: 2 / 3.2 - 1 = -37.5 %."""
    g, (p,) = _group([_pool(4, 4, 3.2, 8)], 8, n1=False)
    assert g["group_nodes"] == 2 and g["group_free_gpus"] == 0
    assert p["pool_replicas_lost_with_a_node"] == 2
    assert p["pool_replicas_after_node_loss"] == 2
    assert math.isclose(p["pool_headroom_after_node_loss"], 2 / 3.2 - 1, rel_tol=1e-12)


def test_two_free_gpus_in_one_node_restart_one_tp2_replica() -> None:
    """7 x TP2 on 2 x 8-GPU nodes: spread 4 + 3, the second node has 2 GPUs free. The first
    node down loses 4 replicas (and no free GPU); the 2 free GPUs in one node hold 1 TP2
    replica: 3 + 1 = 4 run."""
    g, (p,) = _group([_pool(2, 7, 5.0, 8)], 8, n1=False)
    assert g["group_nodes"] == 2 and g["group_free_gpus"] == 2
    assert p["pool_replicas_lost_with_a_node"] == 4
    assert p["pool_replicas_after_node_loss"] == 4


def test_free_gpus_beside_replicas_cannot_host_a_wider_replica() -> None:
    """Two pools on 4-GPU nodes, no N+1: 4 x TP4 (peak 3.17) and 9 x TP1 (peak 7): 25 GPUs
    in 7 nodes, 3 GPUs free on the last one. A node of the TP4 pool down: its replica cannot
    restart on 3 free GPUs, 3 run (3 / 3.17 - 1 < 0) -- the claim issue 22 found, "26 % with a
    node down", counted those 3 GPUs. The TP1 pool loses at most a node full (4), restarts 3
    on the free GPUs: 8 run; or the partly used node (1 replica beside the 3 free) goes down
    and its replica has nowhere to go: 8 run."""
    g, (tp4, tp1) = _group([_pool(4, 4, 3.17, 4), _pool(1, 9, 7.0, 4)], 4, n1=False)
    assert g["group_nodes"] == 7 and g["group_free_gpus_partial"] == 3
    assert g["group_free_nodes"] == 0
    assert tp4["pool_replicas_after_node_loss"] == 3
    assert tp4["pool_headroom_after_node_loss"] < 0
    assert tp1["pool_replicas_lost_with_a_node"] == 4
    assert tp1["pool_replicas_on_partial_node"] == 1
    assert tp1["pool_replicas_after_node_loss"] == 8


def test_n_plus_1_for_shared_nodes_is_a_standby_node() -> None:
    """The same two pools with N+1: one node's worth of spare GPUs (4) kept together -- a node
    running nothing. 29 GPUs -> 8 nodes; every lost replica restarts on it: 4 and 9 run."""
    g, (tp4, tp1) = _group([_pool(4, 4, 3.17, 4), _pool(1, 9, 7.0, 4)], 4, n1=True)
    assert g["group_spare_gpus"] == 4 and g["group_nodes"] == 8
    assert g["group_free_nodes"] == 1 and g["group_spare_nodes_added"] == 0
    assert tp4["pool_spare_replicas"] == 0 == tp1["pool_spare_replicas"]
    assert tp4["pool_replicas_after_node_loss"] == 4
    assert tp1["pool_replicas_after_node_loss"] == 9


def test_a_replica_wider_than_a_node_restarts_on_its_surviving_nodes() -> None:
    """TP16 on 8-GPU nodes (2 whole nodes a replica), 2 for the load (peak 1.6) beside 4 x TP1,
    N+1: 36 GPUs + 8 spare -> 6 nodes, one of them free. A node down takes a TP16 replica; its
    other node is still up, so it restarts on that node + the free one: 2 run,
    2 / 1.6 - 1 = +25 %, and no spare node is added (6 nodes, 48 GPUs bought)."""
    g, (wide, small) = _group([_pool(16, 2, 1.6, 8), _pool(1, 4, 3.0, 8)], 8, n1=True)
    assert wide["pool_replica_nodes"] == 2
    assert g["group_packed_nodes"] == 6 and g["group_free_nodes"] == 1
    assert wide["pool_replicas_after_node_loss_packed"] == 2
    assert g["group_spare_nodes_added"] == 0
    assert g["group_nodes"] == 6 and g["group_gpus_purchased"] == 48
    assert wide["pool_replicas_after_node_loss"] == 2
    assert math.isclose(wide["pool_headroom_after_node_loss"], 0.25, rel_tol=1e-12)
    assert small["pool_replicas_after_node_loss"] == 4


def test_a_replica_wider_than_a_node_without_a_free_node_stays_down() -> None:
    """3 x TP16 (peak 2.5) beside 8 x TP1, N+1 off: 56 GPUs fill 7 nodes, none free. A node
    down takes a TP16 replica; its surviving node alone cannot host it: 2 run."""
    g, (wide, _small) = _group([_pool(16, 3, 2.5, 8), _pool(1, 8, 7.0, 8)], 8, n1=False)
    assert g["group_free_nodes"] == 0 and g["group_spare_nodes_added"] == 0
    assert wide["pool_replicas_after_node_loss"] == 2


@pytest.mark.parametrize("name", ["enterprise-multi.yaml", "code-assistant.yaml"])
def test_shipped_n_plus_1_accounts_meet_peak_with_a_node_down(name: str) -> None:
    """Every pool of a shipped N+1 account meets its peak with the node that hurts it most
    down; enterprise-multi's three pools share 3 XE9685L nodes (24 B200s, 23 in use, one node
    on standby: the plan search's per-platform seeds found it, 642,538 a year against the 7
    XE8640 nodes' 693,821), so every lost replica restarts and the headroom with a node down
    is the headroom at peak."""
    r = size(load(ROOT / "inputs" / name))
    assert r.account_inputs["survive_node_loss"]
    for p in r.plan.pools:
        assert p.headroom_after_node_loss >= 0, p.id
    if name == "enterprise-multi.yaml":
        (g,) = r.plan.node_groups
        assert (g.platform, g.nodes, g.gpus_purchased) == ("dell-xe9685l", 3, 24)
        assert g.values["group_free_nodes"] == 1
        for p in r.plan.pools:
            assert p.headroom_after_node_loss == p.headroom_achieved


WIDE = """schema_version: 1
account: {name: Spare nodes, currency: USD}
workloads:
  - name: Reasoning chat
    model: deepseek-v3
    concurrent_users: 20000
    prompt_tokens: 2000
    output_tokens: 1000
    targets: {tokens_per_s_per_user: 10}
  - name: Small chat
    model: llama-3.1-8b
    concurrent_users: 100
    prompt_tokens: 1000
    output_tokens: 300
    targets: {tokens_per_s_per_user: 20}
hardware:
  gpus: [h100-sxm]
  platform: dgx-h100
  weight_precisions: [fp8]
  tensor_parallel: [1, 72]
policy:
  max_batch_per_replica: 4096
  survive_node_loss: true
  headroom: 0
"""


def test_spare_nodes_for_a_replica_wider_than_a_node_recalculate(tmp_path: Path) -> None:
    """DeepSeek-V3 on EP72 (a replica spans 72 / 8 = 9 DGX H100 nodes) beside an 8B chat on
    TP1, N+1, no headroom: 5 wide replicas for a peak of 4.88 and 1 small one, 361 GPUs + one
    node's worth of spares = 369 -> 47 nodes, one of them free. A node down takes one wide
    replica; its 8 other nodes are still up, so it restarts on them + the free node: 5 run and
    no spare node is added (47 nodes, 376 GPUs bought). The Plan sheet, recalculated by
    LibreOffice, says the same."""
    from openpyxl.utils import get_column_letter
    from support.libreoffice import read_values, recalculate

    from llmsizer.documents.workbook import write_workbook
    from llmsizer.documents.workbook.plan_sheet import FIRST_COL, PlanLayout

    path = tmp_path / "wide.yaml"
    path.write_text(WIDE)
    r = size(load(path))
    (g,) = r.plan.node_groups
    wide = next(p for p in r.plan.pools if p.tp == 72)
    assert wide.replicas == 5 and wide.values["pool_replica_nodes"] == 9
    assert g.values["group_packed_nodes"] == 47 and g.values["group_free_nodes"] == 1
    assert wide.values["pool_replicas_after_node_loss_packed"] == 5
    assert g.values["group_spare_nodes_added"] == 0
    assert (g.nodes, g.gpus_purchased) == (47, 376)
    assert wide.values["pool_replicas_after_node_loss"] == 5
    assert wide.headroom_after_node_loss >= 0
    assert r.totals.gpus_purchased <= r.totals_dedicated.gpus_purchased

    book = tmp_path / "wide.xlsx"
    write_workbook(r, book)
    sheet = read_values(recalculate([book], tmp_path / "lo")[book])["Plan"]
    lay = PlanLayout.of(r)
    for j, p in enumerate(r.plan.pools):
        col = get_column_letter(FIRST_COL + j + 1)
        for name in ("pool_replicas_after_node_loss_packed", "pool_replicas_after_node_loss",
                     "pool_headroom_after_node_loss"):
            got = sheet.get(f"{col}{lay.pool_rows[name] + 1}")
            assert isinstance(got, int | float), (p.id, name, got)
            assert math.isclose(got, p.values[name], rel_tol=1e-9, abs_tol=1e-12), (p.id, name)
    col = get_column_letter(FIRST_COL + 1)
    for name, want in (("group_spare_nodes_added", 0), ("group_nodes", 47),
                       ("group_gpus_purchased", 376)):
        assert sheet.get(f"{col}{lay.group_rows[name] + 1}") == want, name
