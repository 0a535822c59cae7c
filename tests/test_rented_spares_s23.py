"""Session 23 (s23-rented-spares): what a plan rented from an offer sold by the GPU keeps
for N+1, and which instances an offer sold in listed sizes rents.

1. One spare instance per node group (the rule of a bought group, one spare node for one
   failure at a time: DESIGN.md, account plan), not one per pool. The spare is as wide as
   the group's widest replica (a node's GPUs at most), so it can take over the failed
   replica of any of its pools: it loads that pool's model (a cold start at the catalog's
   storage read rate, constants.yaml storage_read_gb_per_s), as the bought group's standby
   node does. Assurances Rhénanes (tests/data/eur-insurer.yaml: N+1, rented, committed
   three-year tier) rented on c5fbadb 11 × H200 in 8 instances (4 × 1 GPU + 2 × 2 GPUs for
   the load, spares of 1 and 2 GPUs), EUR 165,617 a year; now 10 in 7 (one spare of 2 GPUs),
   EUR 151,966.
2. An offer whose own instance is one GPU but which the provider sells in fixed sizes lists
   them (prices.yaml ``sizes``, as published, with their prices and sources): AWS G6 is sold
   as 1-, 4- and 8-GPU instances only (g6.xlarge-16xlarge 1 × L4, g6.12xlarge and 24xlarge 4,
   g6.48xlarge 8). A replica rents the smallest listed size that holds it, replicas packed;
   on c5fbadb a 2-GPU L4 replica rented a 2-GPU "instance" AWS does not sell.

Prices worked by hand: the H200 has no three-year price, so RunPod's 4.59 USD/GPU-h x 0.6642
(GPU cloud -> one-year) x 0.5556 (one-year -> three-year) x 0.92 EUR/USD = EUR 1.5583 per
GPU-hour; g6.12xlarge 4.602 USD/h / 4 = 1.1505 USD per GPU-hour (InferSave, Table I, AWS
N. Virginia on 2025-02-04); a year is 8,760 hours.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from helpers import DATA
from support.libreoffice import read_values, recalculate
from test_workbook import expected_values, formula_cells, same

from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import PlanPool, Result

EUR = DATA / "eur-insurer.yaml"
G6 = DATA / "g6-l4-rented-s23.yaml"
H200_EUR_HOUR = 4.59 * 0.6642 * 0.5556 * 0.92  # 1.558337857056
G6_12XL_GPU_HOUR = 4.602 / 4  # 1.1505 USD
HOURS = 8760


@cache
def _sized(path: Path) -> Result:
    return size(load(path))


def _pool(r: Result, workload: str) -> PlanPool:
    return next(p for p in r.plan.pools if workload in p.workloads)


def test_the_insurer_rents_one_spare_instance_for_its_node_group() -> None:
    """Claims 4 × TP1 and the chat 2 × TP2 share one H200 node group: 8 GPUs in 6 instances
    for the load + one spare instance of the widest replica's 2 GPUs = 10 GPUs in 7 instances
    (c5fbadb: a spare per pool, 1 + 2 GPUs, 11 in 8). Rent 10 x 1.5583 x 8,760 = EUR
    136,510.40, + storage 15,456 = EUR 151,966 a year (c5fbadb: 11 x ... = 150,161.44 +
    15,456 = 165,617). Session 24: the storage is the 10 GPUs rented's share of the 8-GPU
    servers' 10 TB, 10 / 8 x 10 x EUR 64.40 x 12 = 9,660, not the 2 servers bought's 15,456:
    EUR 146,170."""
    r = _sized(EUR)
    assert r.deployment.recommended == "cloud"
    (g,) = r.plan.node_groups
    v = g.values
    assert (v["group_load_gpus"], v["group_cloud_load_instances"]) == (8, 6)
    assert (v["group_cloud_spare_gpus"], v["group_cloud_spare_instances"]) == (2, 1)
    assert (v["cloud_gpus_rented"], v["cloud_instances"]) == (10, 7)
    assert abs(v["annual_cloud_rent"] - 10 * H200_EUR_HOUR * HOURS) < 1e-6
    assert r.totals.annual_cost_cloud is not None
    assert round(v["annual_cloud_storage"]) == 9_660 == round(10 / 8 * 10 * 64.40 * 12)
    assert round(r.totals.annual_cost_cloud) == 146_170
    assert r.totals.cloud_gpus_rented == 10
    # the bought alternative is unchanged: 16 GPUs in 2 nodes
    assert (g.gpus_purchased, g.nodes) == (16, 2)


def test_the_group_spare_takes_over_either_pools_lost_replica() -> None:
    """One instance down loses one replica of one pool (each replica an instance of its own).
    The spare's 2 GPUs hold ROUNDDOWN(2 / 1) = 2 of the claims' 1-GPU replicas or 1 of the
    chat's 2-GPU ones, so whichever pool loses a replica runs all of its replicas for the
    load again: Claims 4 / 2.667 - 1 = 50 %, the chat 2 / 1.556 - 1 = 28.6 %, the same as
    with a spare per pool, one GPU less."""
    r = _sized(EUR)
    claims, chat = _pool(r, "Claims document classification"), _pool(r, "Agent-assist chat")
    assert (claims.tp, claims.replicas_for_load, chat.tp, chat.replicas_for_load) == (1, 4, 2, 2)
    assert claims.values["pool_restart_slots_rented"] == 2
    assert chat.values["pool_restart_slots_rented"] == 1
    for p in (claims, chat):
        assert p.values["pool_replicas_lost_with_an_instance"] == 1
        assert p.values["pool_replicas_one_down"] == p.replicas_for_load == p.replicas
    assert abs(claims.headroom_after_node_loss - 0.5) < 1e-9
    assert abs(chat.headroom_after_node_loss - (2 / chat.demand_replicas - 1)) < 1e-12
    assert abs(chat.headroom_after_node_loss - 0.286) < 0.0005


def test_g6_lists_the_sizes_aws_sells() -> None:
    """The L4's and L40S's hyperscaler offers (AWS G6 and G6e, one GPU at their own price)
    list the 4- and 8-GPU sizes AWS sells them in, each with its price and source."""
    prices = load_catalog().prices
    for gid, per_gpu in (("l4", (1.1505, 1.6688)), ("l40s", (2.6232, 3.7664))):
        offer = prices.cloud_offer(gid, "hyperscaler_on_demand")
        assert offer is not None and offer.gpus_per_instance == 1
        assert [(s.gpus, s.usd_per_gpu_hour) for s in offer.other_sizes()] == list(
            zip((4, 8), per_gpu, strict=True))
        assert all(s.source for s in offer.other_sizes())


def test_a_two_gpu_l4_replica_rents_a_four_gpu_g6_instance() -> None:
    """Gemma 2 27B on 2 × L4 in FP8 (the XE7745 option): 5 replicas for the load (10 GPUs).
    c5fbadb rented 5 + 1 spare "2-GPU instances" at the 1-GPU price (12 GPUs x 0.95 x 8,760
    = USD 99,864 a year). Now: the smallest listed size that holds a 2-GPU replica is the
    4-GPU g6.12xlarge, two replicas to one: ROUNDUP(10 / 4) = 3 instances + 1 spare = 4
    instances, 16 GPUs x 1.1505 x 8,760 = USD 161,254.08."""
    (w,) = _sized(G6).workloads
    o = next(o for o in w.options if o.id == "l4/fp8/kv-fp8/tp2/dell-xe7745-l4")
    v = {k: float(x) for k, x in o.values.items() if isinstance(x, (int, float))}
    assert (v["gpus_per_replica"], v["replicas_for_load"], v["load_gpus"]) == (2, 5, 10)
    assert (v["cloud_sold_by_gpu"], v["cloud_sizes_listed"]) == (1, 1)
    assert (v["cloud_instance_gpus"], v["cloud_instances"], v["cloud_gpus_rented"]) == (4, 4, 16)
    assert (v["cloud_size_picked"], v["cloud_instance_gpu_hour"]) == (1, G6_12XL_GPU_HOUR)
    assert abs(v["annual_cloud_rent"] - 16 * G6_12XL_GPU_HOUR * HOURS) < 1e-6


def test_the_g6_account_rents_g6_12xlarge_instances() -> None:
    """The plan: 1 × TP4 replica for the load + one spare instance = 2 × g6.12xlarge, 8 GPUs
    x 1.1505 x 8,760 = USD 80,627.04 a year (c5fbadb: 8 GPUs at the 1-GPU price 0.95,
    66,576); the price list names the instances rented."""
    r = _sized(G6)
    (g,) = r.plan.node_groups
    v = g.values
    assert (v["cloud_instance_gpus"], v["cloud_instances"], v["cloud_gpus_rented"]) == (4, 2, 8)
    assert abs(v["annual_cloud_rent"] - 8 * G6_12XL_GPU_HOUR * HOURS) < 1e-6
    price = next(p for p in r.prices if p.item == "cloud:l4")
    assert price.source.startswith("2 × AWS g6.12xlarge us-east-1 (4 GPUs, 4.602 USD/h); sold "
                                   "as single GPUs, or 4-GPU or 8-GPU instances")
    assert price.value == G6_12XL_GPU_HOUR


def test_libreoffice_recalculates_the_rented_spares_like_the_engine(tmp_path: Path) -> None:
    """The insurer's and the G6 account's workbooks recalculated by LibreOffice: every formula
    cell equals the engine, the Plan sheet's group spare (MAX over the pools) and the listed
    sizes' rows among them; the Plan sheet reads the insurer's 10 GPUs in 7 instances and the
    G6 account's 2 instances of 4 GPUs."""
    books = {}
    for path in (EUR, G6):
        book = tmp_path / f"{path.stem}.xlsx"
        write_workbook(_sized(path), book)
        books[path] = book
    out = tmp_path / "out"
    out.mkdir()
    recalculated = recalculate(list(books.values()), out, timeout=300)
    seen: set[str] = set()
    for path, book in books.items():
        cached = read_values(book)
        engine = expected_values(_sized(path), cached)
        got = read_values(recalculated[book])
        problems = []
        for sheet, ref, formula in formula_cells(book):
            expected, name = engine.get((sheet, ref), (cached[sheet].get(ref), ""))
            seen.add(name)
            if not same(expected, got.get(sheet, {}).get(ref), name, rel=1e-9):
                problems.append(f"{path.stem} {sheet}!{ref} ({name}): "
                                f"{got.get(sheet, {}).get(ref)!r} vs {expected!r}: "
                                f"{formula[:200]}")
        assert not problems, "\n".join(problems[:20])
        plan = {cached["Plan"].get(f"A{row}"): got["Plan"].get(f"D{row}")
                for row in range(1, 400) if cached["Plan"].get(f"A{row}")}
        rented = (plan["cloud_gpus_rented"], plan["cloud_instances"], plan["cloud_instance_gpus"])
        assert rented == ((10, 7, 2) if path == EUR else (8, 2, 4))
    assert {"cloud_replica_instance_gpus", "cloud_listed_load_instances",
            "cloud_gpus_by_gpu"} <= seen


def test_azure_sells_the_mi300x_in_eights() -> None:
    """The MI300X's hyperscaler offer (Azure, about 6 USD a GPU-hour) was read as single GPUs;
    Azure sells it only as the 8-GPU ND MI300X v5 VM: whole 8-GPU instances (c5fbadb: 1)."""
    offer = load_catalog().prices.cloud_offer("mi300x", "hyperscaler_on_demand")
    assert offer is not None
    assert (offer.gpus_per_instance, offer.other_sizes()) == (8, [])
