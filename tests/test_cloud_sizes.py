"""Cloud instances come in sizes (catalog prices.yaml, an offer's ``sizes``): a plan rents the
cheapest single size that holds its largest replica, replicas packed ROUNDDOWN(size / replica)
to an instance; the offer's own size, spanning instances, when no size holds one.

Prices from the project's price reference (the shared reference prices.csv, copied into
prices.yaml with their sources): AWS p5.48xlarge 55.04 USD/h = 6.88 per H100-hour (8 GPUs)
and p5.4xlarge 6.88 (1 GPU), SkyPilot aws/vms.csv v8 (rows 1 and 4); Lambda B200 8x 53.52 USD/h
= 6.69, 1x 6.99, 2x 13.78 = 6.89 per GPU-hour (SkyPilot lambda/vms.csv v8, row 23); Azure
H100 NVL NC40ads 6.98 (1 GPU), NC80adis 17.64 USD/h = 8.82 (2 GPUs), data-receipts 2026-11-09.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import ROOT
from support import gnumeric
from support.libreoffice import read_values, recalculate
from test_workbook import expected_values, formula_cells, same

from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.inputs.schema import Requirements
from llmsizer.model.calculations import CALCULATIONS
from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import Value, evaluate
from llmsizer.sizing.costs import cloud_columns
from llmsizer.sizing.engine import size

JPY = ROOT / "tests" / "data" / "jpy-manufacturer.yaml"
_BY_NAME = {c.name: c for c in CALCULATIONS}
_ROWS = ("cloud_replica_gpus", "cloud_load_instances", "cloud_sizes_listed",
         "cloud_replica_instance_gpus", "cloud_spare_gpus", "cloud_spare_instances",
         "cloud_sold_by_gpu", "cloud_listed_load_instances", "cloud_gpus_by_gpu",
         "cloud_rent_hour_offer", "cloud_rent_hour_size1",
         "cloud_rent_hour_size2", "cloud_size_picked", "cloud_instance_gpus",
         "cloud_instance_gpu_hour", "cloud_instances", "cloud_gpus_rented")


def _req(tier: str) -> Requirements:
    data = yaml.safe_load((ROOT / "inputs" / "example.yaml").read_text())
    data["costs"] = {"cloud_tier": tier}
    return Requirements.model_validate(data)


def _rent(gid: str, tier: str, gpus_per_replica: int, replicas: int) -> dict[str, Value]:
    """The cloud rows of the calculation list for ``replicas`` replicas of
    ``gpus_per_replica`` GPUs on ``gid``, at the catalog's prices in ``tier`` (USD)."""
    env: dict[str, Value] = {k: v for k, v in cloud_columns(_req(tier), load_catalog(), gid).items()
                             if not k.startswith(("cloud_on", "cloud_1", "cloud_3", "cloud_gpu_c"))}
    # no N+1 here: the GPUs in use are the load's (test_rented_spares_r21 covers N+1)
    env.update(gpus_per_replica=gpus_per_replica, disagg_prefill_gpus=0,
               gpus=gpus_per_replica * replicas, load_gpus=gpus_per_replica * replicas,
               survive_node_loss=0, replicas_for_load=replicas, gpus_per_node=8)
    for name in _ROWS:
        env[name] = evaluate(_BY_NAME[name].expr, env)
    return env


def test_one_h100_rents_one_p5_4xlarge_not_eight_gpus() -> None:
    """A TP1 replica on H100 SXM, hyperscaler on-demand: 1 x p5.4xlarge (1 GPU x 6.88 USD/h),
    where the old rule rented ROUNDUP(1 / 8) = 1 whole p5.48xlarge (8 GPUs, 55.04 USD/h)."""
    v = _rent("h100-sxm", "hyperscaler_on_demand", 1, 1)
    assert (v["cloud_instances"], v["cloud_instance_gpus"], v["cloud_gpus_rented"]) == (1, 1, 1)
    assert v["cloud_instance_gpu_hour"] == 6.88
    # 8 replicas: 8 x p5.4xlarge and 1 x p5.48xlarge cost the same (8 x 6.88): the larger
    v = _rent("h100-sxm", "hyperscaler_on_demand", 1, 8)
    assert (v["cloud_instances"], v["cloud_instance_gpus"]) == (1, 8)
    # 9 replicas: 9 x 1 GPU (61.92 USD/h) beats 2 x 8 GPUs (110.08)
    v = _rent("h100-sxm", "hyperscaler_on_demand", 1, 9)
    assert (v["cloud_instances"], v["cloud_instance_gpus"], v["cloud_gpus_rented"]) == (9, 1, 9)


@pytest.mark.parametrize("replicas, instances", [(1, 1), (2, 1), (4, 1), (5, 2), (8, 2), (9, 3)])
def test_tp2_on_sizes_1_and_8_packs_four_replicas_per_8_gpu_instance(replicas: int,
                                                                    instances: int) -> None:
    """TP2 on H100 SXM on demand (sizes 1 and 8): a p5.4xlarge cannot hold a replica (NVLink
    inside one instance), a p5.48xlarge holds ROUNDDOWN(8 / 2) = 4."""
    v = _rent("h100-sxm", "hyperscaler_on_demand", 2, replicas)
    assert v["cloud_size1_gpus"] == 1 and v["cloud_rent_hour_size1"] == 0  # cannot hold one
    assert (v["cloud_instances"], v["cloud_instance_gpus"]) == (instances, 8)
    assert v["cloud_gpus_rented"] == 8 * instances


@pytest.mark.parametrize("tp, replicas, expected", [(1, 1, 8), (2, 3, 8), (4, 3, 16), (8, 2, 16)])
def test_a_gpu_sold_only_in_eights_rents_as_before(tp: int, replicas: int, expected: int) -> None:
    """H200 SXM on demand is AWS p5en.48xlarge alone (8 GPUs): ROUNDUP(GPUs / 8) x 8 as before
    (TP1 x 1 -> 8; TP2 x 3 = 6 GPUs -> 8; TP4 x 3 = 12 -> 16)."""
    v = _rent("h200-sxm", "hyperscaler_on_demand", tp, replicas)
    assert v["cloud_size1_gpus"] == 0 and v["cloud_size2_gpus"] == 0
    assert v["cloud_gpus_rented"] == expected
    assert v["cloud_instance_gpu_hour"] == 7.912


def test_b200_gpu_cloud_picks_the_cheapest_lambda_size() -> None:
    """Lambda B200: 1x 6.99, 2x 6.89, 8x 6.69 USD per GPU-hour."""
    one = _rent("b200", "gpu_cloud", 1, 1)  # 6.99 for 1 GPU beats 13.78 and 53.52
    assert (one["cloud_instance_gpus"], one["cloud_instance_gpu_hour"]) == (1, 6.99)
    tp2 = _rent("b200", "gpu_cloud", 2, 1)  # 1x cannot hold it; 2x 13.78 beats 8x 53.52
    assert (tp2["cloud_instance_gpus"], tp2["cloud_instance_gpu_hour"]) == (2, 6.89)
    eight = _rent("b200", "gpu_cloud", 1, 8)  # 8 x 6.99 = 55.92, 4 x 13.78 = 55.12, 53.52
    assert (eight["cloud_instances"], eight["cloud_instance_gpus"]) == (1, 8)
    assert eight["cloud_rent_hour_offer"] == pytest.approx(53.52)


def test_h100_nvl_tp2_rents_the_two_gpu_size_and_tp4_spans_as_before() -> None:
    """Azure sells the H100 NVL in 1 (6.98) and 2 GPUs (8.82 per GPU-hour): a TP2 replica
    needs the 2-GPU NC80adis (17.64 USD/h, not 2 x 6.98 on separate VMs); TP4 fits no size:
    the offer's own single GPUs, as before."""
    tp2 = _rent("h100-nvl", "hyperscaler_on_demand", 2, 1)
    assert (tp2["cloud_instances"], tp2["cloud_instance_gpus"]) == (1, 2)
    assert tp2["cloud_instance_gpu_hour"] == 8.82
    tp4 = _rent("h100-nvl", "hyperscaler_on_demand", 4, 1)
    assert (tp4["cloud_instances"], tp4["cloud_instance_gpus"]) == (4, 1)
    assert tp4["cloud_instance_gpu_hour"] == 6.98


def _jpy_on_demand(tmp_path: Path) -> Path:
    """jpy-manufacturer rented on demand at the catalog's price (its own 1,600 JPY dropped)."""
    data: dict[str, Any] = yaml.safe_load(JPY.read_text())
    del data["costs"]["cloud_gpu_hour"]
    data["costs"]["cloud_tier"] = "hyperscaler_on_demand"
    path = tmp_path / "jpy-on-demand.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_jpy_manufacturer_rents_one_gpu_on_demand(tmp_path: Path) -> None:
    """One H100 serving (TP1): 1 GPU x 6.88 USD x 151.7 JPY/USD (the file's rate) x 8,760 h
    = 9,142,776.96 JPY a year, not 8 GPUs (73,142,215.68); the price list names the instance."""
    result = size(load(_jpy_on_demand(tmp_path)))
    v = result.plan.node_groups[0].values
    assert result.usd_exchange_rate == 151.7
    assert (v["cloud_instances"], v["cloud_gpus_rented"]) == (1, 1)
    assert v["annual_cloud_rent"] == pytest.approx(1 * 6.88 * 151.7 * 8760, rel=1e-12)
    row = next(p for p in result.prices if p.item == "cloud:h100-sxm")
    assert row.source.startswith("1 × AWS p5.4xlarge us-east-1 (1 GPU, 6.88 USD/h);")
    assert row.date is None  # the single-GPU size's snapshot is undated: said so


def test_jpy_manufacturer_as_written_keeps_whole_8_gpu_contracts() -> None:
    """As written the account rents in the default one-year committed tier at its own 1,600
    JPY per GPU-hour; that tier's H100 offer (SemiAnalysis contract index) covers whole 8-GPU
    HGX nodes and lists no other size: 8 x 1,600 x 8,760 = 112,128,000 JPY, as before."""
    result = size(load(JPY))
    v = result.plan.node_groups[0].values
    assert result.cloud_tier == "committed_1yr"
    assert v["cloud_gpus_rented"] == 8
    assert v["annual_cloud_rent"] == 8 * 1600 * 8760


def test_what_if_tiers_rent_each_tiers_sizes(tmp_path: Path) -> None:
    """The cloud-tier rows of the sensitivity: the GPU-cloud tier (RunPod, single GPUs at
    3.99) rents 1 GPU; the one-year tier (contract index, whole 8-GPU nodes, 2.65) rents 8.
    Session 24: each tier's storage is its own GPUs rented's share (costs.py
    annual_cloud_storage: per GPU rented), 1 or 8 GPUs' worth, not one figure for all."""
    result = size(load(_jpy_on_demand(tmp_path)))
    rows = {s.name: s for s in result.sensitivity}
    v = result.plan.node_groups[0].values
    per_gpu = v["annual_cloud_extras"] / v["cloud_gpus_rented"]  # storage a GPU, no licence
    assert rows["cloud_gpu_cloud"].annual_cost_cloud == pytest.approx(
        1 * (3.99 * 151.7 * 8760 + per_gpu), rel=1e-12)
    assert rows["cloud_committed_1yr"].annual_cost_cloud == pytest.approx(
        8 * (2.65 * 151.7 * 8760 + per_gpu), rel=1e-12)
    assert rows["cloud_hyperscaler_on_demand"].annual_cost_cloud == pytest.approx(
        1 * (6.88 * 151.7 * 8760 + per_gpu), rel=1e-12)


def test_a_node_group_rents_for_its_widest_replica(tmp_path: Path) -> None:
    """inputs/code-assistant.yaml on demand: one H100 node group of a TP1 pool and a TP4 pool,
    15 GPUs in use, 11 of them for the load (N+1 asked). A p5.4xlarge (1 GPU) cannot hold the
    TP4 replica, so the group rents p5.48xlarge (8 GPUs), not 15 single GPUs (the TP1 pool's
    size): ROUNDUP(11 / 8) + 1 = 3 of them, one spare instance (ROUNDUP(15 / 8) = 2 left 8
    GPUs against the load's 11 with one down)."""
    data: dict[str, Any] = yaml.safe_load((ROOT / "inputs" / "code-assistant.yaml").read_text())
    data.setdefault("costs", {})["cloud_tier"] = "hyperscaler_on_demand"
    path = tmp_path / "code-assistant-on-demand.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = size(load(path))
    (group,) = result.plan.node_groups
    v = group.values
    assert group.gpu == "h100-sxm" and group.gpus_used == 15
    assert v["group_cloud_replica_gpus"] == 4 and v["group_load_gpus"] == 11
    assert (v["cloud_instances"], v["cloud_instance_gpus"], v["cloud_gpus_rented"]) == (3, 8, 24)


def test_spreadsheets_recalculate_the_sizes_like_the_engine(tmp_path: Path) -> None:
    """The jpy on-demand workbook recalculated by LibreOffice and by Gnumeric: every formula
    cell equals the engine (the size columns on the Catalog sheet, the rows above on TCO)."""
    result = size(load(_jpy_on_demand(tmp_path)))
    book = tmp_path / "jpy.xlsx"
    write_workbook(result, book)
    out = tmp_path / "out"
    out.mkdir()
    cached = read_values(book)
    engine = expected_values(result, cached)
    for label, got in (
            ("LibreOffice", read_values(recalculate([book], out, timeout=300)[book])),
            ("Gnumeric", read_values(gnumeric.recalculate(book, tmp_path / "gn.xlsx")))):
        seen, problems = set(), []
        for sheet, ref, formula in formula_cells(book):
            expected, name = engine.get((sheet, ref), (cached[sheet].get(ref), ""))
            seen.add(name)
            if not same(expected, got.get(sheet, {}).get(ref), name, rel=1e-9):
                problems.append(f"{label} {sheet}!{ref} ({name}): "
                                f"{got.get(sheet, {}).get(ref)!r} vs {expected!r}: {formula[:200]}")
        assert not problems, "\n".join(problems[:20])
        assert {"cloud_instance_gpus", "cloud_size_picked", "annual_cloud_rent"} <= seen
