"""Session 25 (hunt seed 71, tests/test_invariants_s24.py): N+1 on PCIe servers bought part
full spares what the fullest server runs, so spreading the load over one server more shrinks
the spare. The plan picked the layout by GPU count (the fewest servers); it now picks the one
that costs less a year by its own prices (calculations/spread.py: a node's and a GPU's part of
the on-prem cost per year; replicas.py spread_layout, plan_pools.py group_spread_layout).

Lakeshore Mutual (tests/data/pcie-spread-s25.yaml): Llama 3.1 8B on RTX PRO 6000 in Dell
PowerEdge XE7745s (8 slots, USD 30,000 + a 2 x 100 GbE front end of USD 2,197.25), N+1, its
own data centre (colocation 0) and NVIDIA AI Enterprise (USD 4,500 a GPU-year). 8 replicas
for the load fill one server.

- A node a year: (30,000 + 2,197.25) x (1/3 + 10 %) + power 6 kW x PUE x 8,760 h x tariff x
  average load (USD 4,919.62) + storage 10 TB x 70 x 12 (8,400) = USD 27,271.76.
- A GPU a year: 8,565 x (1/3 + 10 %) + 4,500 = USD 8,211.50.
- Before (the fewest servers): 2 servers of 8, spare 8: 16 GPUs, capex USD 201,434.50,
  USD 185,927.52 a year.
- After (spread over 3 servers of 4, spare 4): 12 GPUs, capex USD 199,371.75 (2,062.75
  less: the hunt's figure), USD 180,353.27 a year (5,574.24 less); a server down loses 4 and
  the 8 the load needs run.

At the catalog's default running costs (colocation USD 184 a kW-month, no licence) a server
costs USD 40,519.76 a year against four GPUs' 14,846: the hunt's own case (the same servers,
no licence, colocation paid) stays on 2 servers, USD 140,423.52 a year against 166,097.27.
"""

from __future__ import annotations

import copy
import io
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import DATA
from rich.console import Console
from support.libreoffice import read_values
from test_node_loss_slots import _group, _pool
from test_workbook import libreoffice_check

from llmsizer.documents.proposal.render import render_html
from llmsizer.documents.textplan import print_plan
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load, load_from_text
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result
from llmsizer.web.account import update_html

LAKESHORE = DATA / "pcie-spread-s25.yaml"
SERVER, NETWORK, GPU = 30000.0, 2197.25, 8565.0  # platforms.yaml, costs.py, gpus.yaml
CAPEX_A_YEAR = 1 / 3 + 0.10  # amortised over 3 years + 10 % support (account defaults)
NODE_YEAR = (SERVER + NETWORK) * CAPEX_A_YEAR + 4919.616 + 8400  # power, storage; no colocation
GPU_YEAR = GPU * CAPEX_A_YEAR + 4500  # NVIDIA AI Enterprise


@cache
def _lakeshore() -> Result:
    return size(load(LAKESHORE))


def test_the_option_costs_both_layouts_and_spreads() -> None:
    w = _lakeshore().workloads[0]
    assert w.recommended == "rtx-pro-6000/fp8/kv-fp8/tp1"
    v = w.best.values if w.best else {}
    assert v["node_cost_per_year"] == pytest.approx(NODE_YEAR)  # 27,271.76
    assert v["gpu_cost_per_year"] == pytest.approx(GPU_YEAR)  # 8,211.50
    assert (v["replicas_for_load"], v["load_replicas_per_node"],
            v["spread_replicas_per_node"]) == (8, 8, 4)
    assert v["packed_layout_cost_per_year"] == pytest.approx(2 * NODE_YEAR + 16 * GPU_YEAR)
    assert v["spread_layout_cost_per_year"] == pytest.approx(3 * NODE_YEAR + 12 * GPU_YEAR)
    assert v["packed_layout_cost_per_year"] == pytest.approx(185927.515, abs=0.01)
    assert v["spread_layout_cost_per_year"] == pytest.approx(180353.273, abs=0.01)
    assert v["spread_layout"] == 1
    # was 8 spare, 16 GPUs in 2 servers
    assert (v["spare_replicas"], v["gpus_purchased"], v["nodes"]) == (4, 12, 3)
    assert (v["replicas_lost_with_a_node"], v["replicas_after_node_loss"]) == (4, 8)
    # the option's own money is the cheaper layout's: its on-prem cost per year is its figure
    assert v["annual_cost_onprem"] == pytest.approx(v["spread_layout_cost_per_year"])
    assert v["capex"] == pytest.approx(3 * (SERVER + NETWORK) + 12 * GPU)  # 199,371.75


def test_the_plan_buys_the_cheaper_layout() -> None:
    r = _lakeshore()
    (pool,), (g,) = r.plan.pools, r.plan.node_groups
    gv = g.values
    assert (gv["group_fullest_node_gpus"], gv["group_spread_node_gpus"]) == (8, 4)
    assert gv["group_packed_layout_nodes"] == 2
    assert gv["group_packed_cost_per_year"] == pytest.approx(2 * NODE_YEAR + 16 * GPU_YEAR)
    assert gv["group_spread_cost_per_year"] == pytest.approx(3 * NODE_YEAR + 12 * GPU_YEAR)
    assert gv["group_spread_layout"] == 1
    assert gv["group_spread_saving_per_year"] == pytest.approx(4 * GPU_YEAR - NODE_YEAR)
    assert gv["group_spread_saving_per_year"] == pytest.approx(5574.24, abs=0.01)
    # was 2 nodes, 16 GPUs, USD 201,434.50 and 185,927.52 a year
    assert (g.nodes, g.gpus_used, g.gpus_purchased, gv["group_spare_gpus"]) == (3, 12, 12, 4)
    assert gv["group_spare_nodes_added"] == 0
    assert (pool.replicas_for_load, pool.spare_replicas, pool.replicas) == (8, 4, 12)
    assert pool.values["pool_replicas_one_down"] == 8  # the load, with a server down
    assert pool.headroom_after_node_loss >= 0
    t = r.totals
    assert t.capex == pytest.approx(199371.75)  # 201,434.50 - 2,062.75
    assert t.annual_cost_onprem == pytest.approx(180353.273, abs=0.01)


def test_the_cli_and_the_proposal_say_why_and_what_it_saves() -> None:
    r = _lakeshore()
    con = Console(width=200, record=True, color_system=None, file=io.StringIO())
    print_plan(r, con)
    text = con.export_text()
    line = ("Plan: 3 × Dell PowerEdge XE7745 (12 GPUs bought; spread over 3 servers to keep a "
            "smaller spare: USD 5.57 k a year less than 2 servers)")
    assert line in text, text
    html = render_html(r).replace("\u00a0", " ")
    assert ("spread over 3 servers to keep a smaller spare: USD 5.57 k a year less than 2 "
            "servers.") in html
    assert "group_" not in html.split("spread over", 1)[1][:200]  # names, not ids
    web = update_html(LAKESHORE.read_text()).replace("\u00a0", " ")
    assert ("Dell PowerEdge XE7745: spread over 3 servers to keep a smaller spare: USD 5.57 k "
            "a year less than 2 servers.") in web


def _hunt_case(users: int) -> dict[str, Any]:
    """The hunt's case rebuilt by hand: RTX PRO 6000 replicas of 1 GPU on XE7745s, N+1, the
    account's defaults (colocation paid, no licence)."""
    d = yaml.safe_load(LAKESHORE.read_text())
    d["workloads"][0]["concurrent_users"] = users
    del d["costs"]
    return d


@pytest.mark.parametrize(("users", "nodes", "gpus", "annual"), [
    (900, 2, 16, 140423.515),   # 8 replicas: 2 servers of 8 (3 of 4: 166,097.27 a year)
    (1000, 3, 14, 173520.273),  # 9 replicas: 5 + 4, spare 5 (the hunt's 216,501.75 capex)
])
def test_at_the_default_running_costs_the_fewest_servers_stay_cheaper(
        users: int, nodes: int, gpus: int, annual: float) -> None:
    r = size(load_from_text(yaml.safe_dump(_hunt_case(users)), "t.yaml"))
    v = r.workloads[0].best.values if r.workloads[0].best else {}
    assert v["node_cost_per_year"] == pytest.approx(40519.7577, abs=1e-3)  # colocation 13,248
    assert v["gpu_cost_per_year"] == pytest.approx(GPU * CAPEX_A_YEAR)  # 3,711.50
    assert v["spread_layout"] == 0
    (g,) = r.plan.node_groups
    assert (g.nodes, g.gpus_purchased, g.values["group_spread_layout"]) == (nodes, gpus, 0)
    assert g.annual_cost_onprem == pytest.approx(annual, abs=0.01)
    assert v["spread_layout_cost_per_year"] > v["packed_layout_cost_per_year"]


def test_the_spread_is_only_for_a_pool_alone_on_part_full_servers() -> None:
    """The plan rows by hand, priced so that one node costs less than 2 GPUs: a pool alone on
    PCIe servers spreads (8 x TP1 on 8 slots: 3 servers of 4, a server down leaves 8); a
    fixed baseboard and two pools sharing a group keep their node's worth, as before."""
    g, (p,) = _group([_pool(1, 8, 8.0, 8)], 8, n1=True, sold_full=False,
                     node_cost=1.0, gpu_cost=1.0)
    assert (g["group_spread_layout"], g["group_spare_gpus"], g["group_nodes"]) == (1, 4, 3)
    assert g["group_gpus_purchased"] == 12 and g["group_spare_nodes_added"] == 0
    assert p["pool_replicas_after_node_loss"] == 8
    g, _ = _group([_pool(1, 8, 8.0, 8)], 8, n1=True, sold_full=False, node_cost=5.0,
                  gpu_cost=1.0)  # a node dearer than the 4 GPUs it saves: the fewest
    assert (g["group_spread_layout"], g["group_spare_gpus"], g["group_nodes"]) == (0, 8, 2)
    g, _ = _group([_pool(1, 8, 8.0, 8)], 8, n1=True, sold_full=True, node_cost=1.0,
                  gpu_cost=1.0)
    assert (g["group_spread_layout"], g["group_nodes"]) == (0, 2)
    g, _ = _group([_pool(1, 4, 4.0, 8), _pool(2, 2, 2.0, 8)], 8, n1=True, sold_full=False,
                  node_cost=1.0, gpu_cost=1.0)
    assert g["group_spread_layout"] == 0


def test_more_users_never_cost_less_a_year_across_the_spread() -> None:
    """Lakeshore from 800 to 1,100 users (7 to 10 replicas for the load): the option's GPUs
    fall where it spreads (14 -> 12), its on-prem cost per year never does."""
    d = yaml.safe_load(LAKESHORE.read_text())
    before = 0.0
    seen = []
    for users in (800, 900, 1000, 1100):
        more = copy.deepcopy(d)
        more["workloads"][0]["concurrent_users"] = users
        r = size(load_from_text(yaml.safe_dump(more), "t.yaml"))
        v = r.workloads[0].best.values if r.workloads[0].best else {}
        seen.append((int(v["gpus_purchased"]), int(v["spread_layout"])))
        assert v["annual_cost_onprem"] >= before
        assert r.totals.annual_cost_onprem == pytest.approx(v["annual_cost_onprem"])
        before = v["annual_cost_onprem"]
    assert seen[:2] == [(14, 0), (12, 1)]


def test_libreoffice_recalculates_the_spread_like_the_engine(tmp_path: Path) -> None:
    book = tmp_path / "lakeshore.xlsx"
    write_workbook(_lakeshore(), book)
    problems, seen, got = libreoffice_check(_lakeshore(), book, tmp_path / "out")
    assert not problems, "\n".join(problems[:20])
    assert {"node_cost_per_year", "gpu_cost_per_year", "spread_layout", "spare_replicas",
            "nodes"} <= seen
    cached = read_values(book)
    plan = {cached["Plan"].get(f"A{row}"): got["Plan"].get(f"D{row}")
            for row in range(1, 400) if cached["Plan"].get(f"A{row}")}
    assert (plan["group_spread_layout"], plan["group_spare_gpus"], plan["group_nodes"],
            plan["group_gpus_purchased"]) == (1, 4, 3, 12)
    assert plan["group_spread_saving_per_year"] == pytest.approx(5574.24, abs=0.01)


@pytest.mark.parametrize("node_cost", [0.5, 1.0, 1.5, 2.5, 3.5, 6.0])
def test_every_pool_alone_keeps_its_load_and_costs_more_with_more_load(
        node_cost: float) -> None:
    """The plan rows by hand, a GPU costing 1 a year and a node 0.5 to 6 (every side of the
    choice): every pool alone on a PCIe group (TP 1, 2, 4 up to the node; 1 to 24 replicas for
    the load; 4- and 8-slot servers; demand = the load) keeps its load with a server down, adds
    no spare node, and costs no less a year with one replica more for the load (the cheaper
    of two layouts, each costing more with more load; the fewest nodes grow with the load)."""
    spread = 0
    for gpn in (4, 8):
        for tp in (t for t in (1, 2, 4) if t <= gpn):
            before = 0.0
            for reps in range(1, 25):
                g, (p,) = _group([_pool(tp, reps, float(reps), gpn)], gpn, n1=True,
                                 sold_full=False, node_cost=node_cost, gpu_cost=1.0)
                assert p["pool_headroom_after_node_loss"] >= 0, (gpn, tp, reps)
                assert g["group_spare_nodes_added"] == 0
                cost = g["group_nodes"] * node_cost + g["group_gpus_purchased"]
                assert cost == min(g["group_packed_cost_per_year"],
                                   g["group_spread_cost_per_year"])
                assert cost >= before, (gpn, tp, reps)
                before = cost
                spread += int(g["group_spread_layout"])
    assert spread > 0 if node_cost < 4 else spread == 0
