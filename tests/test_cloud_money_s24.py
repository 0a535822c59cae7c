"""Cloud money, session 24 (brief C).

1. An offer the provider sells as 1-GPU instances only (prices.yaml ``fixed_sizes: true``
   with no other size: Lambda's H100 PCIe ``gpu_1x_h100_pcie``, A10 and GH200, SkyPilot
   catalog v8 lambda/vms.csv) priced a TP2 replica as two 1-GPU virtual machines. Two VMs
   are not one tensor-parallel group (no NVLink or PCIe peer link between them): the replica
   cannot run there. tests/data/lambda-h100pcie-tp2-s24.yaml (Llama 3.3 70B FP8 at TP2, 20
   users, the GPU-cloud tier) read on 02b150e "cloud USD 66,041 a year": 2 instances x 3.29
   USD/GPU-h x 8,760 h = 57,640.80 + one R760xa's storage 10 TB x 70 x 12 = 8,400. Now the
   offer holds no replica (costs.py ``cloud_holds_replica`` = 0, ``cloud_price_known`` = 0):
   no cloud price, the plan's cloud total none and every output says why; "cheapest" never
   picks it, and a rented plan takes another GPU.
2. The cloud's storage was ``annual_storage``, per server a purchase would need. A rented plan
   now pays for what it rents: GPUs rented / GPUs per node x TB per node (``cloud_storage_tb``,
   ``annual_cloud_storage``): an instance carries its GPUs' share of a server's storage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from _rented import ROOT, terminal, words

from llmsizer.documents.proposal.render import render_html
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

TP2 = ROOT / "tests" / "data" / "lambda-h100pcie-tp2-s24.yaml"
H = 8760.0
LAMBDA_H100_PCIE = 3.29  # USD per GPU-hour, prices.yaml h100-pcie gpu_cloud
STORAGE_USD_TB_MONTH = 70.0  # prices.yaml storage_per_tb_month
WHY = ("the cloud offer for NVIDIA H100 PCIe sells only instances smaller than one replica, "
       "and a replica cannot run across instances")


def _variant(tmp_path: Path, name: str, edit: Any) -> Result:
    data = yaml.safe_load(TP2.read_text())
    edit(data)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    return size(load(path))


@pytest.fixture(scope="module")
def tp2() -> Result:
    return size(load(TP2))


def test_a_tp2_replica_on_one_gpu_instances_has_no_cloud_price(tp2: Result) -> None:
    (w,) = tp2.workloads
    o = w.best
    assert o is not None and o.id == "h100-pcie/fp8/kv-fp8/tp2"
    v = o.values
    assert (v["cloud_gpu_hour"], v["cloud_replica_gpus"], v["cloud_replica_instance_gpus"]) \
        == (LAMBDA_H100_PCIE, 2, 1)
    assert (v["cloud_holds_replica"], v["cloud_price_known"], v["annual_cost_cloud"]) == (0, 0, 0)
    # the two VMs' rent is still worked out (2 x 3.29 x 8,760), never counted
    assert v["annual_cloud_rent"] == pytest.approx(2 * LAMBDA_H100_PCIE * H) == 57_640.8
    (g,) = tp2.plan.node_groups
    assert (g.values["cloud_holds_replica"], g.annual_cost_cloud) == (0, 0)
    t = tp2.totals
    assert t.annual_cost_cloud is None and t.cost_per_million_tokens_cloud is None
    assert (t.cloud_unpriced, t.cloud_unheld) == (["h100-pcie"], ["h100-pcie"])
    assert "cloud" not in tp2.deployment.annual_cost


def test_every_output_says_why(tp2: Result, tmp_path: Path) -> None:
    text = " ".join(terminal(tp2).split())
    star = next(line for line in terminal(tp2).splitlines() if "★" in line)
    assert star.rstrip(" │").endswith("no price")  # the options table's cloud column
    assert f"Total: 2 GPUs rented in the cloud; {WHY}, so the cloud cannot be compared." in text
    assert "its cost is not known: the cloud offer sells only instances smaller than one " \
           "replica" in text
    assert "no cloud price is listed" not in text  # it has one: the reason is the size
    pdf = words(render_html(tp2))
    assert f"its cost is not known: {WHY}." in pdf  # the cover
    assert f"{WHY[0].upper()}{WHY[1:]}, so the cloud cannot be compared." in pdf  # section 6
    assert "no cloud price is listed" not in pdf
    # the workbook's TCO sheet: the flag row reads "no" beside its reason, and the cloud's
    # cost per year 0, shown as "no price listed" (its number format's zero section)
    book = tmp_path / "tp2.xlsx"
    write_workbook(tp2, book)
    ws = openpyxl.load_workbook(book, data_only=True)["TCO"]
    rows = {r[1].value: r for r in ws.iter_rows(min_row=1) if len(r) > 5}
    holds, cost = rows["Cloud offer holds the largest replica"], rows["Cloud cost per year"]
    assert (holds[3].value, holds[3].number_format) == (0, '"yes";"yes";"no"')
    assert "cannot run on this offer and it has no cloud price" in str(holds[5].value)
    assert cost[3].value == 0 and cost[3].number_format.endswith(';"no price listed"')


def test_libreoffice_recalculates_no_price_like_the_engine(tp2: Result, tmp_path: Path) -> None:
    """The flag rows are formulas (1/0 numbers, never TRUE/FALSE): LibreOffice recalculates
    every formula cell of the TP2 account's workbook to the engine's value."""
    from test_workbook import libreoffice_check

    book = tmp_path / "tp2.xlsx"
    write_workbook(tp2, book)
    problems, seen, _got = libreoffice_check(tp2, book, tmp_path / "out")
    assert not problems, "\n".join(problems[:20])
    assert {"cloud_holds_replica", "cloud_price_known", "cloud_storage_tb",
            "annual_cloud_storage", "annual_cost_cloud"} <= seen


def test_the_web_page_says_why(tp2: Result) -> None:
    from fastapi.testclient import TestClient

    from llmsizer.web.app import create_app

    with TestClient(create_app()) as client:
        page = client.post("/upload/yaml", files={"file": (
            "tp2.yaml", TP2.read_bytes())}).text
    text = words(page.replace("&nbsp;", " "))
    assert f"{WHY[0].upper()}{WHY[1:]}, so the cloud cannot be compared." in text
    # the plan's cloud cells: no price, not "USD 0" (the account's row crashed on None)
    assert "Account (plan) 2 USD 71.1 k no price" in text


def test_a_tp1_replica_on_the_same_offer_keeps_its_price(tmp_path: Path) -> None:
    """Llama 3.1 8B at TP1 on the same offer: one 1-GPU instance, 3.29 x 8,760 = 28,820.40 +
    its GPU's share of the R760xa's (4 GPUs) storage, 1 / 4 x 10 TB x 70 x 12 = 2,100:
    USD 30,920.40 (02b150e: 37,220.40, a whole server's 8,400)."""
    def tp1(d: dict[str, Any]) -> None:
        d["workloads"][0]["model"] = "llama-3.1-8b"
        d["hardware"]["tensor_parallel"] = [1]

    r = _variant(tmp_path, "tp1", tp1)
    o = r.workloads[0].best
    assert o is not None and o.id == "h100-pcie/fp8/kv-fp8/tp1"
    v = o.values
    assert (v["cloud_holds_replica"], v["cloud_gpus_rented"], v["gpus_per_node"]) == (1, 1, 4)
    assert v["annual_cloud_storage"] == pytest.approx(1 / 4 * 10 * STORAGE_USD_TB_MONTH * 12)
    assert v["annual_cost_cloud"] == pytest.approx(LAMBDA_H100_PCIE * H + 2_100) == 30_920.4
    assert r.totals.annual_cost_cloud == pytest.approx(30_920.4)
    assert r.totals.cloud_unheld == []


def test_cheapest_never_picks_a_cloud_that_cannot_hold_the_replica(tmp_path: Path) -> None:
    """At a stated 1.00 USD/GPU-h and no API price, 02b150e chose the cloud as the cheapest:
    2 x 1.00 x 8,760 + 8,400 = USD 25,920 against 45,871 on-premises, on VMs that cannot run
    the replica. Now the cloud has no price and buying is the cheapest way priced."""
    def cheap(d: dict[str, Any]) -> None:
        d["policy"]["deployment"] = "cheapest"
        d["costs"].update(cloud_gpu_hour={"h100-pcie": 1.0},
                          api_input_per_million={"llama-3.3-70b": 0},
                          api_output_per_million={"llama-3.3-70b": 0})

    r = _variant(tmp_path, "cheapest", cheap)
    d = r.deployment
    assert (d.cheapest, d.recommended) == ("on_prem", "on_prem")
    assert list(d.annual_cost) == ["on_prem"]
    assert round(d.annual_cost["on_prem"]) == 45_871
    lead = words(render_html(r))
    assert "the cloud: no instance sold holds a replica" in lead


def test_a_rented_plan_takes_a_gpu_whose_offer_holds_the_replica(tmp_path: Path) -> None:
    """With the H100 SXM beside it, 02b150e rented the TP2 replica on two Lambda H100 PCIe
    VMs (USD 66,041); now on the H100 SXM, one 2-GPU instance of the GPU cloud's offer sold by
    the GPU: 2 x 3.99 x 8,760 = 69,904.80 + 2 / 8 (an XE9680's GPUs) x 10 TB x 70 x 12 =
    2,100: USD 72,004.80."""
    r = _variant(tmp_path, "mix", lambda d: d["hardware"].update(gpus=["h100-pcie", "h100-sxm"]))
    assert r.deployment.recommended == "cloud"
    o = r.workloads[0].best
    assert o is not None and o.id == "h100-sxm/fp8/kv-fp8/tp2/dell-xe9680"
    assert o.values["annual_cost_cloud"] == pytest.approx(2 * 3.99 * H + 2_100) == 72_004.8
    assert r.totals.annual_cost_cloud == pytest.approx(72_004.8)
    pcie = next(x for x in r.workloads[0].options if x.gpu == "h100-pcie" and x.feasible)
    assert pcie.values["cloud_price_known"] == 0


def test_the_insurer_pays_storage_for_the_gpus_it_rents(insurer: Result) -> None:
    """10 H200 rented in 7 instances (1- and 2-GPU instances of an offer sold by the GPU) on
    a plan that would buy 2 Dell XE9680s of 8 GPUs: the storage rented is 10 / 8 x 10 TB =
    12.5 TB x EUR 64.40 (70 USD x 0.92) x 12 = EUR 9,660 a year, not the 2 servers'
    15,456; rent 10 x 1.558337857056 x 8,760 = 136,510.40; cloud EUR 146,170.40 (151,966
    before)."""
    (g,) = insurer.plan.node_groups
    v = g.values
    assert (v["cloud_gpus_rented"], v["cloud_instances"]) == (10, 7)
    assert {w.best.values["gpus_per_node"] for w in insurer.workloads if w.best} == {8}
    assert v["cloud_storage_tb"] == 12.5
    assert v["annual_cloud_storage"] == pytest.approx(12.5 * 70 * 0.92 * 12) \
        == pytest.approx(9_660)
    assert v["annual_storage"] == pytest.approx(2 * 10 * 70 * 0.92 * 12)  # bought: 15,456
    assert v["annual_cloud_extras"] == pytest.approx(9_660)  # no licence per GPU
    assert insurer.totals.annual_cost_cloud == pytest.approx(136_510.40 + 9_660, abs=0.01)
