"""Cloud offers of fixed whole instances of several GPUs, session 25 (brief I).

Session 24 gave no cloud price to an offer sold by the GPU whose sizes are all narrower than
the largest replica (two VMs are not one tensor-parallel group). The same holds for an offer
of fixed whole instances of several GPUs: ``cloud_holds_replica`` (calculations/costs.py) is
now 0 when every size the offer sells is narrower than the replica (a node's GPUs at most: a
replica wider than a node spans node-wide instances, as the bought plan spans nodes).

The catalog's one offer of fixed instances narrower than its platform's node was CoreWeave's
GB200 NVL72 instance, 4 GPUs (one compute tray) at 42.00 USD/h = 10.5 a GPU-hour, on the
72-GPU gb200-nvl72 rack. tests/data/gb200-tp8-rented-s25.yaml (Llama 3.3 70B FP8 at TP8, 20
users, the GPU-cloud tier) read on main (5bf28a9): 2 instances x 4 GPUs x 10.5 x 8,760 h =
USD 735,840 a year of rent, the replica spanning two trays. CoreWeave deploys these instances
only as full racks of 18 (docs.coreweave.com/docs/platform/instances/gb200; the price
reference's note: "must deploy full racks (18 nodes)"), one NVLink domain of 72 GPUs, as the
bought platform is: prices.yaml now rents the rack (gpus_per_instance 72), which holds the
replica. With the tray as the instance the new rule gives the replica no cloud price.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from _rented import ROOT

from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.calculations import CALCULATIONS
from llmsizer.model.expr import evaluate
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

RACK = ROOT / "tests" / "data" / "gb200-tp8-rented-s25.yaml"
H = 8760.0
COREWEAVE_GB200 = 10.5  # USD per GPU-hour: 42.00 USD/h a 4-GPU tray (prices.yaml gb200 gpu_cloud)
AWS_G5 = 1.418  # g5.12xlarge, 4 x A10G, 5.672 USD/h (prices.yaml a10g hyperscaler_on_demand)
AWS_P5 = 6.88  # p5.48xlarge, 8 x H100 SXM (prices.yaml h100-sxm hyperscaler_on_demand)
EXPR = {c.name: c.expr for c in CALCULATIONS}


def _variant(tmp_path: Path, name: str, edit: Any) -> Result:
    data = yaml.safe_load(RACK.read_text())
    edit(data)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    return size(load(path))


@pytest.fixture(scope="module")
def rack() -> Result:
    return size(load(RACK))


def test_a_tp8_replica_on_gb200_rents_a_whole_nvl72_rack(rack: Result) -> None:
    (w,) = rack.workloads
    o = w.best
    assert o is not None and o.id == "gb200/fp8/kv-fp8/tp8"
    v = o.values
    assert (v["cloud_gpu_hour"], v["cloud_replica_gpus"], v["gpus_per_node"]) \
        == (COREWEAVE_GB200, 8, 72)
    assert (v["cloud_gpus_per_instance"], v["cloud_instance_gpus"], v["cloud_instances"],
            v["cloud_gpus_rented"]) == (72, 72, 1, 72)
    assert (v["cloud_holds_replica"], v["cloud_price_known"]) == (1, 1)
    # main: 2 trays x 4 GPUs x 10.5 x 8,760 = 735,840; now the rack, 72 x 10.5 x 8,760
    assert v["annual_cloud_rent"] == pytest.approx(72 * COREWEAVE_GB200 * H) == 6_622_560
    assert v["annual_cloud_rent"] != pytest.approx(2 * 4 * COREWEAVE_GB200 * H)
    assert rack.totals.annual_cost_cloud == pytest.approx(v["annual_cost_cloud"])
    assert rack.totals.cloud_unheld == []


def test_a_fixed_instance_narrower_than_the_replica_holds_none(rack: Result) -> None:
    """The same option with the 4-GPU tray as the instance (main's catalog): every size sold
    is narrower than the 8-GPU replica and the rack's 72 GPUs: no cloud price (main: 1, the
    replica priced across two trays)."""
    o = rack.workloads[0].best
    assert o is not None
    env = {**o.values, "cloud_gpus_per_instance": 4.0}
    assert evaluate(EXPR["cloud_holds_replica"], env) == 0
    env["cloud_holds_replica"] = 0.0
    assert evaluate(EXPR["cloud_price_known"], env) == 0
    # a 4-GPU replica fits the tray; a sold-by-the-GPU offer is judged as in session 24
    assert evaluate(EXPR["cloud_holds_replica"], {**env, "cloud_replica_gpus": 4.0}) == 1
    # no offer at all: held (cloud_price_known = 0 says why, not the instance size)
    assert evaluate(EXPR["cloud_holds_replica"], {**env, "cloud_gpus_per_instance": 0.0}) == 1


def test_libreoffice_recalculates_the_rack_account_like_the_engine(rack: Result,
                                                                   tmp_path: Path) -> None:
    from test_workbook import libreoffice_check

    book = tmp_path / "rack.xlsx"
    write_workbook(rack, book)
    problems, seen, _got = libreoffice_check(rack, book, tmp_path / "out")
    assert not problems, "\n".join(problems[:20])
    assert {"cloud_holds_replica", "cloud_price_known", "annual_cloud_rent",
            "annual_cost_cloud"} <= seen


def test_an_offer_whose_instance_holds_the_replica_is_unchanged(tmp_path: Path) -> None:
    """AWS g5.12xlarge (4 x A10G, the node of aws-g5-4gpu) holds a TP4 replica: 25 instances,
    25 x 4 x 1.418 x 8,760 = USD 1,242,168 a year, as on main."""
    def edit(d: dict[str, Any]) -> None:
        d["hardware"] = {"gpus": ["a10g"], "weight_precisions": ["fp8"], "tensor_parallel": [4]}
        d["costs"]["cloud_tier"] = "hyperscaler_on_demand"

    res = _variant(tmp_path, "a10g-tp4", edit)
    o = res.workloads[0].best
    assert o is not None and o.id == "a10g/fp8/kv-fp8/tp4"
    v = o.values
    assert (v["cloud_gpus_per_instance"], v["cloud_replica_gpus"], v["cloud_holds_replica"],
            v["cloud_instances"]) == (4, 4, 1, 25)
    assert v["annual_cloud_rent"] == pytest.approx(25 * 4 * AWS_G5 * H) == 1_242_168


def test_a_replica_wider_than_a_node_spans_node_wide_instances(tmp_path: Path) -> None:
    """DeepSeek-R1 FP8 as one 16-GPU expert-parallel replica over two 8-GPU H100 nodes: AWS
    p5.48xlarge instances are as wide as a node, so the replica spans two of them as the
    bought plan spans two nodes: priced, 2 x 8 x 6.88 x 8,760 = USD 964,300.80 a year."""
    def edit(d: dict[str, Any]) -> None:
        d["workloads"][0]["model"] = "deepseek-r1"
        d["hardware"] = {"gpus": ["h100-sxm"], "weight_precisions": ["fp8"],
                         "tensor_parallel": [16]}
        d["costs"]["cloud_tier"] = "hyperscaler_on_demand"

    res = _variant(tmp_path, "r1-ep16", edit)
    o = res.workloads[0].best
    assert o is not None and o.id == "h100-sxm/fp8/kv-fp8/tp16/ep16/adp16"
    v = o.values
    assert (v["cloud_gpus_per_instance"], v["cloud_replica_gpus"], v["gpus_per_node"]) \
        == (8, 16, 8)
    assert (v["cloud_holds_replica"], v["cloud_price_known"], v["cloud_instances"]) == (1, 1, 2)
    assert v["annual_cloud_rent"] == pytest.approx(2 * 8 * AWS_P5 * H) == 964_300.8
