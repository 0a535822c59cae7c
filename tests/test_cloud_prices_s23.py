"""Session 23 (s23-cloud-prices): the instance sizes cloud offers are sold in, as published,
and the price the plan pays, stated where it is shown.

1. Lambda sells the A10, the H100 PCIe and the GH200 as 1-GPU instances only: the SkyPilot
   catalog's Lambda price list (skypilot-org/skypilot-catalog, catalogs/v8/lambda/vms.csv at
   0f4070387edc953d7004cff197940e1918a1d6aa) has gpu_1x_a10 (1.29 USD/h), gpu_1x_h100_pcie
   (3.29) and gpu_1x_gh200 (2.29) and no 2x, 4x or 8x instance of those GPUs in any region
   (beside gpu_1x/2x/8x_b200_sxm6, gpu_1x/2x/4x/8x_h100_sxm5 ...). prices.yaml marks them
   ``fixed_sizes``; the plan rents 1-GPU instances, a wider replica spanning as many of them
   as it has GPUs (costs.py: the offer's own size when no listed size holds the replica, as
   for every offer of fixed sizes). The university (tests/data/gbp-university-r22.yaml)
   rented on stage 35 H100 PCIe in 18 "2-GPU instances" Lambda does not sell; now 16 TP2
   replicas x 2 + the chat's 1 + one 1-GPU spare = 34 GPUs in 34 instances.
2. Fabrikam Legal (inputs/legal-128k.yaml) rents 2-GPU B200 instances (Lambda 2x B200, 13.78
   USD/h = 6.89 a GPU-hour) at the derived one-year price 6.89 x 0.6642 = 4.5763 USD; the
   note said "GPU cloud on-demand price (USD 6.69 per GPU-hour) x 0.6642" (the 8-GPU
   instance's, 4.44), and the workbook's B200 cloud cell, 4.44 (the offer's own size, which
   the formulas read for that size), stood beside the 2-GPU instance's source without saying
   which price the plan pays.
3. The Plan sheet shows both the instances one per replica (group_cloud_load_instances) and
   the instances of the listed size (cloud_listed_load_instances): each row now says when it
   is the count rented (the university: 17 one per replica, 33 rented for the load).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from helpers import DATA, ROOT
from support.libreoffice import read_values
from test_workbook import libreoffice_check

from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

UNIVERSITY = DATA / "gbp-university-r22.yaml"
LEGAL = ROOT / "inputs" / "legal-128k.yaml"
HOURS = 8760
LAMBDA_CSV = "catalogs/v8/lambda/vms.csv @0f4070387edc953d7004cff197940e1918a1d6aa"


@cache
def _sized(path: Path) -> Result:
    return size(load(path))


def test_lambda_sells_these_gpus_as_one_gpu_instances_only() -> None:
    prices = load_catalog().prices
    for gid, usd in (("a10", 1.29), ("h100-pcie", 3.29), ("gh200", 2.29)):
        offer = prices.cloud_offer(gid, "gpu_cloud")
        assert offer is not None and offer.offer.startswith("Lambda")
        assert (offer.gpus_per_instance, offer.usd_per_gpu_hour, offer.sizes) == (1, usd, [])
        assert offer.fixed_sizes and offer.sold_in_listed_sizes
        assert offer.sizes_source is not None and LAMBDA_CSV in offer.sizes_source


def test_the_university_rents_one_gpu_h100_pcie_instances() -> None:
    """The node group (H100 PCIe, committed one-year: 3.29 x 0.6642 USD, x 0.79 GBP/USD):
    16 x TP2 (the batch job) + 1 x TP1 (the chat) = 33 GPUs for the load in 33 1-GPU
    instances, + one 1-GPU spare instance (N+1) = 34 (stage: 33 + a 2-GPU spare = 35 GPUs in
    17 + 1 = 18 2-GPU instances)."""
    r = _sized(UNIVERSITY)
    (g,) = r.plan.node_groups
    v = g.values
    assert g.gpu == "h100-pcie"
    assert (v["cloud_sizes_listed"], v["cloud_sold_by_gpu"]) == (1, 1)
    assert (v["group_cloud_replica_gpus"], v["cloud_replica_instance_gpus"]) == (2, 1)
    assert (v["group_load_gpus"], v["cloud_listed_load_instances"]) == (33, 33)
    assert (v["cloud_instance_gpus"], v["cloud_instances"], v["cloud_gpus_rented"]) == (1, 34, 34)
    paid = 3.29 * 0.6642 * 0.79
    assert abs(v["annual_cloud_rent"] - 34 * paid * HOURS) < 1e-6  # GBP 514,168
    price = next(p for p in r.prices if p.item == "cloud:h100-pcie")
    assert "sold as 1-GPU instances only" in price.source


def test_legal_derived_price_names_the_two_gpu_instance_price() -> None:
    r = _sized(LEGAL)
    price = next(p for p in r.prices if p.item == "cloud:b200")
    assert abs(price.value - 6.89 * 0.6642) < 1e-9  # 4.576338, what annual_cloud_rent uses
    assert price.derived_from_value == 6.89
    assert ("GPU cloud on-demand price for the 2-GPU instances rented (USD 6.89 per GPU-hour: "
            "Lambda 2x B200 (13.78 USD/h)) × 0.6642") in price.note
    assert "6.69" not in price.note
    (g,) = [g for g in r.plan.node_groups if g.gpu == "b200"]
    assert g.values["cloud_instance_gpu_hour"] == price.value


def _cells(book: Path) -> dict[str, dict[str, object]]:
    return read_values(book)


def test_legal_workbook_says_which_b200_price_the_plan_pays(tmp_path: Path) -> None:
    """The Inputs sheet's B200 cloud cell keeps the offer's own size's 4.44 (the formulas read
    it for that size); its note states the 2-GPU instances' 4.58 the plan pays."""
    book = tmp_path / "legal.xlsx"
    write_workbook(_sized(LEGAL), book)
    inputs = _cells(book)["Inputs"]
    row = next(ref[1:] for ref, v in inputs.items()
               if ref.startswith("A") and isinstance(v, str) and v.startswith("Cloud price")
               and "B200" in v)
    assert abs(float(inputs[f"C{row}"]) - 6.69 * 0.6642) < 1e-9  # type: ignore[arg-type]
    note = next(str(v) for ref, v in inputs.items()
                if ref[1:] == row and isinstance(v, str) and "the price used" in v)
    assert note.startswith("This cell is the offer's own instance size; the plan rents another "
                           "size at USD 4.58 per GPU-hour, the price used")


def test_plan_sheet_says_which_instance_count_is_rented(tmp_path: Path) -> None:
    """The university's Plan sheet: 17 instances one per replica (not rented: Lambda lists
    1-GPU instances only) beside the 33 rented for the load, each row saying when it is the
    count rented; LibreOffice recalculates the workbook like the engine (the new input row
    cloud_fixed_sizes on the calculation sheets and the Catalog sheet's columns)."""
    book = tmp_path / "university.xlsx"
    r = _sized(UNIVERSITY)
    write_workbook(r, book)
    cached = read_values(book)
    plan = cached["Plan"]
    rows = {plan.get(f"A{n}"): n for n in range(1, 400) if plan.get(f"A{n}")}
    one_per = rows["group_cloud_load_instances"]
    listed = rows["cloud_listed_load_instances"]
    assert plan[f"B{one_per}"] == ("Cloud instances for the load, one per replica (rented when "
                                   "the offer lists no other sizes)")
    assert plan[f"B{listed}"] == ("Cloud instances of the listed size for the load (rented "
                                  "when the offer lists other sizes)")
    assert (plan[f"D{one_per}"], plan[f"D{listed}"]) == (17, 33)
    problems, _seen, got = libreoffice_check(r, book, tmp_path / "out")
    assert not problems, "\n".join(problems[:20])
    assert (got["Plan"][f"D{rows['cloud_instances']}"],
            got["Plan"][f"D{rows['cloud_gpus_rented']}"]) == (34, 34)
