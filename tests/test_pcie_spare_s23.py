"""Session 23: N+1 for a language model on PCIe servers bought part full (platforms.yaml
sold_full false: a server is bought with the GPUs it runs), as the retrieval rows were fixed
earlier today (retrieval_replicas_per_node, retrieval_spare_gpus).

Harbourside Clinics (tests/data/pcie-spare-s23.yaml): Llama 3.1 8B on L40S in the generic
4-slot PCIe server (pcie-4gpu-gen4-350w), N+1 asked. Its peak needs 3.727 replicas (the
option's demand_replicas), x 1.25 headroom = 4.66 -> 5 replicas for the load, of 1 GPU each.

Before (stage at eaa1329): the spare was a server's every slot, MIN(4 replicas per node, 5) =
4 spare replicas: 9 replicas, 9 L40S in 3 servers, USD 169,734 (3 x (15,000 server + 17,578
network) + 9 x 8,000). One server down loses its share of 9 spread 3 + 3 + 3: 3, and 6 of the 5
needed run (headroom 6 / 3.727 - 1 = +61 %): a spare GPU no failure ever needs.

After: the 5 replicas for the load need ROUNDUP(5 / 4) = 2 servers, spread 3 + 2; one server
down takes the fullest one's 3 (load_replicas_per_node), so the spare holds 3: 8 replicas, 8
L40S in 3 servers (spread 3 + 3 + 2), USD 161,734 = 3 x (15,000 + 17,578) + 8 x 8,000, one
L40S (USD 8,000) less; a server down loses 3 and the 5 the load needs run (5 / 3.727 - 1 =
+34 %). The annual cost falls by 8,000 / 3 years + 10 % support = USD 3,466.67 (118,735.78 ->
115,269.11). Merged with session 23's network per server (a PCIe server pays its 2 x 100 GbE
front end, USD 1,098.63, not 17,578 of fabric): USD 112,295.88 and 93,845.92 a year. A fixed
baseboard still comes full, and pools sharing a group keep a standby of
one packed node's GPUs (their fullest node, packed node by node), both unchanged.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from helpers import DATA
from support.libreoffice import read_values
from test_node_loss_slots import _group, _pool  # the hand-built group stages
from test_workbook import libreoffice_check

from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

CLINIC = DATA / "pcie-spare-s23.yaml"
L40S, SERVER = 8000.0, 15000.0  # gpus.yaml, platforms.yaml
# session 23 (network per server): a PCIe server pays its 2 x 100 GbE front end at the fabric
# port price per Gb/s (prices.yaml network_per_fabric_port 17,578 / 8, / 400 Gb/s), no fabric
NETWORK = 2 * 100 * 17578 / 8 / 400


@cache
def _clinic() -> Result:
    return size(load(CLINIC))


def test_the_clinics_spare_holds_the_fullest_servers_replicas() -> None:
    r = _clinic()
    w = r.workloads[0]
    assert w.recommended == "l40s/fp8/kv-fp8/tp1/pcie-4gpu-gen4-350w"
    v = w.best.values if w.best else {}
    assert v["demand_replicas"] == pytest.approx(3.7267, abs=1e-4)
    assert (v["replicas_for_load"], v["replicas_per_node"], v["load_replicas_per_node"]) == (
        5, 4, 3)
    # was 4 spare replicas, 9 replicas and GPUs
    assert (v["spare_replicas"], v["replicas"], v["gpus"], v["nodes"]) == (3, 8, 8, 3)
    assert (v["replicas_lost_with_a_node"], v["replicas_after_node_loss"]) == (3, 5)
    assert v["headroom_after_node_loss"] == pytest.approx(5 / v["demand_replicas"] - 1)  # +34 %
    (pool,), (group,) = r.plan.pools, r.plan.node_groups
    assert (pool.replicas_for_load, pool.spare_replicas, pool.replicas) == (5, 3, 8)
    assert (group.values["group_fullest_node_gpus"], group.values["group_spare_gpus"]) == (3, 3)
    assert (group.nodes, group.gpus_used, group.gpus_purchased) == (3, 8, 8)
    assert group.values["group_spare_nodes_added"] == 0
    t = r.totals
    assert (t.gpus_serving, t.gpus_standby, t.gpus_purchased, t.nodes) == (8, 0, 8, 3)
    assert t.capex == pytest.approx(3 * (SERVER + NETWORK) + 8 * L40S)  # 161,734 (was 169,734)
    assert t.capex == pytest.approx(112295.875)  # 161,734 with 17,578 of fabric a server
    # 115,269.11 with 17,578 of fabric a server; the front end instead: 3 x (17,578 - 1,098.63)
    # less capex, amortised over 3 years + 10 % support: 93,845.92
    assert t.annual_cost_onprem == pytest.approx(
        118735.7776 - L40S * (1 / 3 + 0.1) - 3 * (17578 - NETWORK) * (1 / 3 + 0.1))


@pytest.mark.parametrize(("tp", "load", "gpn", "spare", "nodes"), [
    (1, 1, 4, 1, 2),    # one replica: a spare server with one GPU, as before
    (1, 3, 4, 3, 2),    # 3 replicas on one server: the spare holds 3, as before
    (1, 5, 4, 3, 3),    # 5 spread 3 + 2: 3 (was 4: 9 GPUs, now 8)
    (1, 9, 8, 5, 3),    # 9 spread 5 + 4 on 8-slot servers: 5 (was 8: 17 GPUs, now 14)
    (2, 5, 8, 6, 3),    # 5 TP2 spread 3 + 2: 3 replicas, 6 GPUs (was 8)
    (1, 8, 4, 4, 3),    # full servers: a full spare, as before
])
def test_a_pool_alone_spares_its_fullest_server(tp: int, load: int, gpn: int, spare: int,
                                                nodes: int) -> None:
    """The plan rows by hand (demand = the load: no headroom left over), PCIe: the group's
    spare GPUs are the fullest server's for the load, and a server down still leaves the load."""
    g, (p,) = _group([_pool(tp, load, float(load), gpn)], gpn, n1=True, sold_full=False)
    assert (g["group_spare_gpus"], g["group_nodes"]) == (spare, nodes)
    assert g["group_gpus_used"] == g["group_gpus_purchased"] == load * tp + spare
    assert g["group_spare_nodes_added"] == 0
    assert p["pool_replicas_after_node_loss"] == load  # headroom 0 with one server down


def test_a_baseboard_and_a_shared_group_keep_a_servers_worth() -> None:
    """A fixed baseboard (sold_full) keeps MIN(GPUs per node, load) = 4 spare GPUs for 5 x TP1
    on 8-GPU nodes; two pools sharing a PCIe group, packed node by node, lose a full node
    (4 GPUs of 3 + 2 replicas packed on 4-slot servers): the standby is 4, as before."""
    g, _ = _group([_pool(1, 5, 5.0, 4)], 4, n1=True, sold_full=True)
    assert (g["group_spare_gpus"], g["group_gpus_used"], g["group_gpus_purchased"]) == (4, 9, 12)
    g, _ = _group([_pool(1, 3, 3.0, 4), _pool(1, 2, 2.0, 4)], 4, n1=True, sold_full=False)
    assert (g["group_spare_gpus"], g["group_gpus_used"], g["group_gpus_purchased"]) == (4, 9, 9)


def test_libreoffice_recalculates_the_clinics_spare_like_the_engine(tmp_path: Path) -> None:
    """The clinic's workbook recalculated by LibreOffice: every formula cell equals the engine,
    the new rows among them, and the Plan sheet reads the spare of 3 GPUs, 8 GPUs in 3 nodes."""
    book = tmp_path / "clinic.xlsx"
    write_workbook(_clinic(), book)
    problems, seen, got = libreoffice_check(_clinic(), book, tmp_path / "out")
    assert not problems, "\n".join(problems[:20])
    cached = read_values(book)
    assert {"load_replicas_per_node", "spare_replicas", "nodes"} <= seen
    # the Plan sheet's cells are checked above against the values the engine wrote; its rows:
    plan = {cached["Plan"].get(f"A{row}"): got["Plan"].get(f"D{row}")
            for row in range(1, 400) if cached["Plan"].get(f"A{row}")}
    assert plan["pool_fullest_node_gpus"] == 3
    assert (plan["group_fullest_node_gpus"], plan["group_spare_gpus"], plan["group_nodes"],
            plan["group_gpus_purchased"]) == (3, 3, 3, 8)


def test_n_plus_1_still_holds_for_every_pool_alone_on_pcie() -> None:
    """Every pool alone on a PCIe group (TP 1, 2, 4 up to the node; 1 to 12 replicas for the
    load; 4- and 8-slot servers; demand = the load, no margin left): with the smaller spare a
    server down still leaves the load (headroom 0 or more), no spare node is added, and the
    group never uses more GPUs than a server's worth of spare would (load + MIN(node, load))."""
    fewer = 0
    for gpn in (4, 8):
        for tp in (t for t in (1, 2, 4) if t <= gpn):
            for reps in range(1, 13):
                g, (p,) = _group([_pool(tp, reps, float(reps), gpn)], gpn, n1=True,
                                 sold_full=False)
                assert p["pool_headroom_after_node_loss"] >= 0, (gpn, tp, reps)
                assert g["group_spare_nodes_added"] == 0
                before = reps * tp + min(gpn, reps * tp)
                assert g["group_gpus_used"] <= before
                fewer += g["group_gpus_used"] < before
    assert fewer == 10  # of 84 cases, e.g. 5 x TP1 on 4 slots, 9 x TP1 and 5 x TP2 on 8 (the cases above)
