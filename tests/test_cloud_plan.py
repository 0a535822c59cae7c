"""A rented account gets the plan that is cheapest to rent (review round 18, helper F).

``policy.deployment`` decided only whether the proposal said buy or rent; the options and
the account plan were always ranked by the on-premises cost per year. The insurer
(tests/data/eur-insurer.yaml, deployment: cloud, committed three-year tier, EUR at 0.92)
was given the plan cheapest to BUY, 16 × H200 renting for EUR 233,873 a year, while 16 × H100
of the same search rent for EUR 220,766. Now the ranking follows the way the account runs it
(search.py ``_rank``, plan.py ``Evaluated.rank``): cloud -> the cloud cost per year first (a
GPU without a cloud price after every priced one, then the buying rank); cheapest -> the
plan searched for both ways, the one cheapest in its own way kept (engine.py).

Review round 21 (s21-rented-spares): renting with N+1 keeps a spare instance (costs.py
``_instances``). The H100 plan's two 8-GPU instances left 8 GPUs against its 10 for the load
with one down; honest, it rents 3 (EUR 307,965), and the 16 one-GPU H200 instances (EUR
233,873, the plan cheapest to buy as well) are now the plan cheapest to rent.

Review round 22 (s22-instance-shapes): the H200's offer (RunPod) is sold by the GPU, so a
replica rents an instance of its own GPUs and N+1 one spare replica-instance per pool, not the
bought XE9680's 8 spare GPUs: the plan cheapest to rent is now Claims 4 x TP1 + the chat 2 x
TP2 + spares of 1 and 2 GPUs = 11 H200 (EUR 165,617).

Session 23 (s23-rented-spares): N+1 rents one spare instance per node group, as wide as its
widest replica (the chat's 2 GPUs), which takes over the failed replica of either pool (as a
bought group keeps one spare node): 8 + 2 = 10 H200 (EUR 151,966).

Session 24 (brief C): the cloud's storage is per GPU rented (costs.py annual_cloud_storage:
GPUs rented / GPUs per node x 10 TB x EUR 64.40 x 12), not per server a purchase would need:
the 10 H200 carry 10 / 8 x 7,728 = 9,660 of storage, not 2 x 7,728 = 15,456: EUR 146,170."""

from __future__ import annotations

import io
import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import EXAMPLE, example_dict
from rich.console import Console
from test_workbook import write_yaml

from llmsizer.documents.proposal.format import NBSP
from llmsizer.documents.proposal.render import render_html
from llmsizer.documents.textreport import print_result
from llmsizer.inputs.loader import load
from llmsizer.sizing import plan_search
from llmsizer.sizing.engine import size
from llmsizer.sizing.plan import Memo
from llmsizer.sizing.results import Option, Result

DATA = Path(__file__).resolve().parent / "data"
INSURER = DATA / "eur-insurer.yaml"
# The insurer's plan: 4 claims replicas of 1 H200 and 2 chat replicas of 2 H200 (8 GPUs) and
# one spare instance for the group for N+1, of its widest replica's 2 GPUs: 10 H200 rented by
# the GPU at the committed three-year price, 4.59 USD x 0.6642 x 0.5556 x 0.92 = EUR
# 1.558337857056 per GPU-hour: 10 x 1.558337857056 x 8,760 = 136,510.40 + storage 10 / 8 x
# 10 TB x EUR 64.40 x 12 = 9,660 = EUR 146,170 a year (session 24; session 23: 2 servers'
# storage, 15,456, 151,966; round 22: a spare per pool, 1 + 2 GPUs, 11 H200, 165,617;
# before: the 16 GPUs the bought plan uses, one per instance, 233,873).
RENT = 146_170


@pytest.fixture(scope="module")
def insurer() -> Result:
    return size(load(INSURER))


def _variant(tmp_path: Path, name: str, **changes: Any) -> Path:
    doc = yaml.safe_load(INSURER.read_text(encoding="utf-8"))
    for key, value in changes.items():
        section, field = key.split("__")
        doc[section][field] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return path


def test_the_insurer_rents_the_plan_cheapest_to_rent(insurer: Result) -> None:
    t = insurer.totals
    assert insurer.deployment.recommended == "cloud"
    assert [g.gpu for g in insurer.plan.node_groups] == ["h200-sxm"]
    # session 23: (10, 16); round 22: (11, 16); before: (16, 16)
    assert (t.cloud_gpus_rented, t.gpus_purchased) == (10, 16)
    assert t.annual_cost_cloud is not None and round(t.annual_cost_cloud) == RENT
    # each workload's ★ is its option cheapest to rent: the classifier's 1 × H200 (EUR 125 k
    # alone; its 1 × H100 rented 8 GPUs for EUR 110 k, 2 instances with N+1 now)
    claims, _chat = insurer.workloads
    first = claims.option(claims.dedicated)
    assert first is not None and first.gpu == "h200-sxm"
    rents = [float(o.values["annual_cost_cloud"]) for o in claims.options if o.feasible]
    assert rents == sorted(rents) and round(rents[0]) == round(
        float(first.values["annual_cost_cloud"]))


def test_no_plan_the_search_considers_rents_for_less(insurer: Result) -> None:
    """Every pair of the workloads' best options per GPU and server (the search's seeds:
    plan_search ``_best_per_hardware``), pooled as the search pools them: none that meets
    the targets rents for less than the plan recommended."""
    acct = insurer.account_inputs
    best: list[list[Option]] = []
    for w in insurer.workloads:
        seen: dict[tuple[str, str], Option] = {}
        for o in w.options:
            if o.feasible:
                seen.setdefault((o.gpu, o.platform), o)
        best.append(list(seen.values()))
    assert {o.gpu for o in best[0]} == {"h100-sxm", "h200-sxm"}  # the L40S misses the speed
    rents = []
    for pair in itertools.product(*best):
        e = plan_search._best_pooling(dict(enumerate(pair)), insurer.workloads, acct,
                                      Memo(way="cloud"))
        if e.rank[0] == 0:  # every pool keeps up with its targets
            rents.append(e.totals["annual_cost_cloud"])
    assert len(rents) == len(best[0]) * len(best[1])
    assert round(min(rents)) == RENT


@pytest.mark.parametrize("gpu, rent", [("h100-sxm", 307_965), ("h200-sxm", RENT)])
def test_forcing_each_gpu_rents_for_no_less(tmp_path: Path, gpu: str, rent: int) -> None:
    """The insurer sized with one GPU allowed (hardware.gpus): H100 rents for EUR 307,965
    (3 instances of 8: one spare; its 24 GPUs carry 3 servers' storage either way), H200 for
    the same 146,170; on L40S the classifier meets no speed target (its 8,000-token prompts)
    and the chat alone rents for EUR 775,999: 24 TP4 replicas (96 GPUs) + one spare 4-GPU
    instance = 100 L40S in 4-GPU instances (Nebius gpu-l40s-d_4gpu, 2.2844 USD a GPU x 0.6642
    x 0.5556 x 0.92 = EUR 0.7755705... an hour) x 8,760 = 679,399.45 + storage 100 / 8 x
    7,728 = 96,600 (session 24: Nebius sells the 1.55 Intel-CPU L40S as 1-GPU VMs only, its
    4-GPU VM is the AMD-CPU preset at 9.1376 USD/h, prices.yaml sizes; storage per GPU rented,
    not 13 servers' 100,464; before both: 100 GPUs x 1.55 x ... = 460,982.82 + 100,464 =
    561,447; review round 22; before that: the 104 GPUs in use, 579,886)."""
    r = size(load(_variant(tmp_path, gpu, hardware__gpus=[gpu])))
    assert r.totals.annual_cost_cloud is not None
    assert round(r.totals.annual_cost_cloud) == rent >= RENT
    only_l40s = size(load(_variant(tmp_path, "l40s", hardware__gpus=["l40s"])))
    assert [w.recommended is None for w in only_l40s.workloads] == [True, False]
    assert only_l40s.totals.annual_cost_cloud is not None
    assert round(only_l40s.totals.annual_cost_cloud) == 775_999  # 561,447 before s24


def test_buying_and_cheapest_accounts_get_their_own_plans(tmp_path: Path) -> None:
    """The same insurer bought (on_prem) keeps the plan cheapest to buy, 16 H200 at EUR
    341,143 a year on-premises (339,391 before session 23 priced its servers' 2 x 200 GbE front
    end; renting it: its 1-GPU and 4-GPU pools' 8 GPUs + the group's one spare instance of 4
    GPUs = 12 x 1.558337857056 x 8,760 + 12 / 8 x 7,728 = 175,404; session 24, storage per GPU
    rented; session 23, 2 servers' 15,456: 179,268; round 22 a spare per pool, 1 + 4: 192,920;
    before 233,873); asked for the cheapest way, both plans are searched and the rented one
    wins at 146,170."""
    bought = size(load(_variant(tmp_path, "bought", policy__deployment="on_prem")))
    assert [g.gpu for g in bought.plan.node_groups] == ["h200-sxm"]
    assert round(bought.totals.annual_cost_onprem) == 341_143
    assert bought.totals.annual_cost_cloud is not None
    assert round(bought.totals.annual_cost_cloud) == 175_404
    cheapest = size(load(_variant(tmp_path, "cheapest", policy__deployment="cheapest")))
    d = cheapest.deployment
    assert (d.recommended, d.cheapest, d.cheaper) == ("cloud", "cloud", [])
    assert round(d.annual_cost["cloud"]) == RENT
    assert [g.gpu for g in cheapest.plan.node_groups] == ["h200-sxm"]


def test_every_surface_says_the_same_rent(insurer: Result, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from llmsizer.web.app import create_app

    words = "EUR 146 k"  # session 24; session 23: 152 k; round 22: EUR 166 k; before: 234 k
    assert '"annual_cost_cloud": 146170.39' in insurer.to_json()
    pdf = render_html(insurer).replace(NBSP, " ")
    assert f"{words} per year in the cloud" in pdf
    con = Console(width=200, file=io.StringIO())
    print_result(insurer, con)
    out = con.file.getvalue()  # type: ignore[attr-defined]
    assert f"cloud {words}/yr" in out and f"at {words} a year" in out
    with TestClient(create_app()) as client:
        page = client.post("/upload/yaml", files={"file": (
            "insurer.yaml", INSURER.read_bytes())}).text
    assert f"{words} per year in the cloud" in page.replace(NBSP, " ").replace("&nbsp;", " ")


def test_an_account_that_buys_is_unchanged() -> None:
    """Acme (inputs/example.yaml, on-premises by default): the same plan as before, 20 H100
    in 5 × XE8640 at USD 465,224 a year (479,506 before session 23 priced each server's network
    from its ports), options in the order of their on-premises cost."""
    r = size(load(EXAMPLE))
    assert r.deployment.recommended == "on_prem"
    assert [w.recommended for w in r.workloads] == ["h100-sxm/fp8/kv-fp8/tp4/dell-xe8640"] * 2
    assert round(r.totals.annual_cost_onprem) == 465_224
    for w in r.workloads:
        costs = [float(o.values["annual_cost_onprem"]) for o in w.options
                 if o.feasible and o.priced]
        assert costs == sorted(costs)


def test_a_cloud_account_whose_cheapest_gpu_to_buy_has_no_cloud_price(tmp_path: Path) -> None:
    """Llama 3.3 70B for 60 users at 10 tok/s on [RTX PRO 6000, L40S]: the RTX PRO 6000
    (USD 8,565, 96 GB: one GPU a replica) is the cheapest to buy, 3 GPUs at USD 51,654 a
    year (58,319 before session 23: its PCIe server's network is now its front end), but has
    no cloud offer. Rented, stage planned it anyway and the proposal had no
    cloud figure (cloud_unpriced); the plan is now the priced L40S (TP2, 8 GPUs) at USD
    114,732 a year (8 GPUs in 2-GPU Nebius instances, gpu-l40s-d_2gpu at 4.5688 USD/h =
    2.2844 a GPU x the one-year ratio 0.6642 x 8,760 = 106,332.28 + storage 8,400; session
    24, prices.yaml sizes: before, 8 single GPUs at 1.55: 72,148.06 + 8,400 = 80,548), the
    RTX options ranked after every option with a cloud price."""
    data = example_dict()
    data.update(workloads=[{
        "name": "Chat", "model": "llama-3.3-70b", "concurrent_users": 60,
        "prompt_tokens": 2000, "output_tokens": 300,
        "targets": {"tokens_per_s_per_user": 10}}],
        hardware={"gpus": ["rtx-pro-6000", "l40s"]})
    data["policy"] = {"deployment": "on_prem"}
    bought = size(load(write_yaml(data, tmp_path / "bought.yaml")))
    assert [g.gpu for g in bought.plan.node_groups] == ["rtx-pro-6000"]
    assert round(bought.totals.annual_cost_onprem) == 51_654
    assert bought.totals.annual_cost_cloud is None  # no cloud offer for the RTX PRO 6000
    data["policy"] = {"deployment": "cloud"}
    rented = size(load(write_yaml(data, tmp_path / "rented.yaml")))
    assert [g.gpu for g in rented.plan.node_groups] == ["l40s"]
    assert rented.totals.cloud_unpriced == []
    assert rented.totals.annual_cost_cloud is not None
    assert round(rented.totals.annual_cost_cloud) == 114_732  # 80,548 before s24
    (w,) = rented.workloads
    # priced: a price per GPU-hour on an offer that holds the replica (session 24: an L40S TP8
    # replica is wider than Nebius's 4-GPU instances, so it ranks with the unpriced)
    priced = [float(o.values["cloud_price_known"]) > 0 for o in w.options if o.feasible]
    assert priced == sorted(priced, reverse=True) and not priced[-1]
