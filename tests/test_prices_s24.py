"""Session 24 (s24-prices): dated prices and the instance sizes offers are sold in, each with
its source.

1. Lambda's A100 40GB was 1.29 USD a GPU-hour, an undated snapshot (SkyPilot
   lambda/vms.csv @95eaf484 still lists gpu_1x_a100 at 1.29 and gpu_8x_a100 at 10.32). Lambda's
   list was 1.99 by 2026-09-25 (tgarg01/silybench-data prices/gpu_hourly.yaml @9c6715ca:
   "1x A100 SXM 40GB", 1.99, lambda.ai/pricing, checked 2026-09-25), the same 1.99 a GPU for
   gpu_1x/2x/4x/8x_a100 (1.99, 3.98, 7.96, 15.92 USD/h) in the SkyPilot catalog v8 @0f407038.
2. Nebius sells the L40S priced (Intel CPU, 'from 1.55', nebius.com/prices 2026-10-07) only as
   1-GPU VMs (gpu-l40s-a_1gpu-8..40vcpu); its 2- and 4-GPU L40S VMs are the AMD-CPU presets
   gpu-l40s-d_2gpu-64vcpu-384gb (4.5688 USD/h) and gpu-l40s-d_4gpu-128vcpu-768gb (9.1376 USD/h),
   2.2844 a GPU (SkyPilot catalog v8 nebius/vms.csv @0082b043, whose 1-GPU prices 1.5484 and
   1.8172 match the dated page's 1.55 and 1.82). A TP2 L40S replica used to rent two single
   GPUs at 1.55; it now rents a 2-GPU instance at 2.2844 a GPU.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from helpers import example_dict

from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size

HOURS = 8760
ONE_YEAR = 0.6642  # prices.yaml tier_ratios: committed_1yr / gpu_cloud (H100 SXM 2.65 / 3.99)
NEBIUS_CSV = "catalogs/v8/nebius/vms.csv @0082b0435f3912ae4c566856b272455cc78f4f61"


def test_lambda_a100_40gb_is_the_dated_1_99_of_an_sxm_card() -> None:
    """The dated 1.99 is Lambda's "1x A100 SXM 40GB" (the reference row): an SXM4 card. Review
    round 25: it was attached to the catalog's A100 40GB PCIe (250 W, NVLink bridge pairs), a
    different card; that entry now has no cloud price, and says why."""
    import csv

    ref = Path(__file__).parent / "data" / "reference" / "prices.csv"
    with ref.open(encoding="utf-8") as f:
        (row,) = [r for r in csv.DictReader(f) if r["provider"] == "Lambda"
                  and r["item"] == "A100 40GB"]
    assert (row["instance_or_sku"], row["price_per_gpu_hour"], row["date"]) == (
        "1x A100 SXM 40GB", "1.99", "2026-09-25")
    assert "silybench-data" in row["source"] and "9c6715ca" in row["source"]
    cat = load_catalog()
    assert cat.gpus["a100-40gb-pcie"].form_factor.startswith("PCIe")
    assert "a100-40gb-pcie" not in cat.prices.cloud
    assert "not this card's price" in " ".join(cat.gpus["a100-40gb-pcie"].notes.split())
    # sold in 1, 2, 4 and 8 GPUs at the same 1.99 a GPU (SkyPilot v8 @0f407038)
    assert [round(usd / n, 4) for n, usd in ((2, 3.98), (4, 7.96), (8, 15.92))] == [1.99] * 3


def test_nebius_l40s_lists_its_two_and_four_gpu_vms() -> None:
    offer = load_catalog().prices.cloud_offer("l40s", "gpu_cloud")
    assert offer is not None and offer.offer.startswith("Nebius L40S with Intel CPU")
    assert (offer.usd_per_gpu_hour, offer.gpus_per_instance, offer.date) == (1.55, 1, "2026-10-07")
    sizes = offer.other_sizes()
    assert [(s.gpus, s.usd_per_gpu_hour) for s in sizes] == [(2, 2.2844), (4, 2.2844)]
    assert round(4.5688 / 2, 4) == round(9.1376 / 4, 4) == 2.2844
    assert all(NEBIUS_CSV in s.source and s.date is None for s in sizes)  # undated snapshot
    assert offer.sold_in_listed_sizes
    assert offer.sizes_source is not None and NEBIUS_CSV in offer.sizes_source


def test_a_tp2_l40s_replica_rents_a_two_gpu_nebius_instance(tmp_path: Path) -> None:
    """Llama 3.3 70B for 60 users at 10 tok/s, rented (committed one-year, USD) on
    [RTX PRO 6000, L40S]: 4 TP2 L40S replicas = 8 GPUs in 4 x gpu-l40s-d_2gpu at 2.2844 x 0.6642
    = 1.51729848 USD a GPU-hour, x 8,760 = 106,332.28 + storage 10 TB x 70 x 12 = 8,400:
    USD 114,732 a year (80,548 with 8 single GPUs at 1.55 before this session)."""
    data = example_dict()
    data.update(workloads=[{
        "name": "Chat", "model": "llama-3.3-70b", "concurrent_users": 60,
        "prompt_tokens": 2000, "output_tokens": 300,
        "targets": {"tokens_per_s_per_user": 10}}],
        hardware={"gpus": ["rtx-pro-6000", "l40s"]})
    data["policy"] = {"deployment": "cloud"}
    path = tmp_path / "rented.yaml"
    path.write_text(yaml.safe_dump(data))
    r = size(load(path))
    (g,) = r.plan.node_groups
    v = g.values
    assert g.gpu == "l40s"
    assert (v["cloud_sizes_listed"], v["cloud_size_picked"]) == (1, 1)  # the first other size
    assert (v["cloud_replica_instance_gpus"], v["cloud_instances"], v["cloud_gpus_rented"]) == (
        2, 4, 8)
    assert abs(v["cloud_instance_gpu_hour"] - 2.2844 * ONE_YEAR) < 1e-12
    assert abs(v["annual_cloud_rent"] - 8 * 2.2844 * ONE_YEAR * HOURS) < 1e-6
    assert r.totals.annual_cost_cloud is not None
    assert round(r.totals.annual_cost_cloud) == 114_732
    price = next(p for p in r.prices if p.item == "cloud:l40s")
    assert price.source.startswith("4 × Nebius gpu-l40s-d_2gpu-64vcpu-384gb eu-north1")
    assert "for the 2-GPU instances rented (USD 2.284 per GPU-hour" in price.note
