"""Session 25: a guest's rented price (hunt seed 61, tests/test_invariants_s24.py).

tests/data/gb200-guests-tray-rented-s25.yaml: a chat workload bought on a GB200 NVL72 rack (8
GPUs in use), an embedder and a reranker on the rack's idle GPUs (one GPU each).

The catalog rents GB200 as whole 72-GPU racks (prices.yaml gb200 gpu_cloud, session 25
s25-fixed-span: CoreWeave deploys GB200 only as full racks of 18 trays), so there the rack
rented has 64 idle GPUs and the guests add no rent. No other fixed multi-GPU offer in the
catalog is narrower than the node bought with its GPU (H100, H200, B200, A100 SXM: 8-GPU
instances beside 8-GPU servers; the 4-GPU Dell XE8640 is narrower than AWS's p5), so a
bought group's idle GPUs are always idle in its rented instances too: the rule below has no
catalog account. The tests build the offer the hunt found it on: GB200 rented by the
compute tray, CoreWeave's priced instance gb200-4x (4 GPUs, USD 42.00 an hour: USD 10.50 per
GPU-hour, the catalog row's price; 4 GPUs per instance, that row before s25-fixed-span),
TRAY_CAT. The rack's GPUs rented as 4-GPU trays: USD 367,920 a year each (4 x 10.50 x 8,760
h) + USD 466.67 of storage for its 4 of the rack's 72 GPUs: the chat fills 2, none idle.
Before, each guest rented a tray of its own for its one replica (USD 368,386.67 each; the
plan USD 1,473,546.67 a year) and with 2,000 chat users one more tray for the chat held both
(USD 1,105,160.00): more load, less money. Now the tray the embedder adds carries the
reranker (retrieval_idle_cloud_left), and a guest whose own cheapest option rented alone costs
less is priced as that option (retrieval_rents_alone: the embedder on an L4 when the account
lists one).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console
from support.libreoffice import read_values
from test_workbook import formula_cells, libreoffice_check

from llmsizer.documents.proposal.plan import plan_context
from llmsizer.documents.proposal.render import render_html
from llmsizer.documents.textreport import print_result
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load_from_text
from llmsizer.model.catalog import Catalog, load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

CAT = load_catalog()


def _tray_catalog() -> Catalog:
    """The catalog with GB200 rented by the 4-GPU compute tray (CoreWeave gb200-4x, USD 42.00
    an hour), as prices.yaml had it before the whole-rack offer."""
    cloud = {g: dict(t) for g, t in CAT.prices.cloud.items()}
    rack = cloud["gb200"]["gpu_cloud"]
    assert (rack.gpus_per_instance, rack.usd_per_gpu_hour) == (72, 10.5)  # the catalog's offer
    cloud["gb200"]["gpu_cloud"] = rack.model_copy(update={
        "gpus_per_instance": 4, "offer": "CoreWeave gb200-4x (one GB200 NVL72 compute tray, "
        "4 GPUs, 42.00 USD/h)"})
    return CAT.model_copy(update={"prices": CAT.prices.model_copy(update={"cloud": cloud})})


TRAY_CAT = _tray_catalog()
DATA = Path(__file__).parent / "data" / "gb200-guests-tray-rented-s25.yaml"
GB200_YEAR = 4 * 10.5 * 8760  # one 4-GPU GB200 tray a year, always on: USD 367,920
# its 4 of the rack's 72 GPUs' share of the rack's 10 TB (storage_tb_per_node) at USD 70 a
# TB-month (prices.yaml storage_per_tb_month): costs.py cloud_storage_tb
STORAGE = 4 / 72 * 10 * 70 * 12


def _account(users: int = 1500, gpus: tuple[str, ...] = ("gb200",),
             reranker: bool = True) -> dict[str, Any]:
    d = yaml.safe_load(DATA.read_text())
    d = copy.deepcopy(d)
    d["workloads"][0]["concurrent_users"] = users
    d["hardware"]["gpus"] = list(gpus)
    if not reranker:
        d["workloads"] = d["workloads"][:2]
    return d


def _size(d: dict[str, Any], cat: Catalog = TRAY_CAT) -> Result:
    return size(load_from_text(yaml.safe_dump(d), "t.yaml"), cat)


def _text(r: Result) -> str:
    con = Console(record=True, width=100, color_system=None)
    print_result(r, con)
    return re.sub(r"\s*\n\s+", " ", con.export_text())


def test_the_instance_one_guest_adds_carries_the_next() -> None:
    r = _size(_account())
    assert r.deployment.recommended == "on_prem"
    (g,) = r.plan.node_groups
    assert (g.values["group_gpus_used"], g.values["cloud_gpus_rented"]) == (8, 8)  # none idle
    embed, rerank = r.plan.retrieval_groups
    assert embed.shares_with == rerank.shares_with == g.id
    e, k = (next(w for w in r.retrieval if w.name == x.workload).best for x in (embed, rerank))
    assert e is not None and k is not None
    # the embedder rents one 4-GPU GB200 tray beside the chat's 2 and leaves 3 idle
    assert (embed.cloud_gpus, e.values["cloud_instances"]) == (4, 1)
    assert embed.annual_cost_cloud == pytest.approx(GB200_YEAR + STORAGE, rel=1e-12)
    assert e.values["retrieval_idle_cloud_left"] == 3
    # the reranker runs there: it rents nothing (it rented a 4th instance, USD 368,386.67)
    assert k.values["llm_idle_cloud_gpus"] == 3
    assert (rerank.cloud_gpus, rerank.annual_cost_cloud) == (0, 0.0)
    assert k.values["retrieval_idle_cloud_left"] == 2
    # the plan rents 3 trays: 3 x (367,920 + 466.67) = USD 1,105,160 a year (4 trays,
    # USD 1,473,546.67, before)
    assert r.totals.annual_cost_cloud == pytest.approx(3 * (GB200_YEAR + STORAGE), rel=1e-12)
    assert r.totals.annual_cost_cloud == pytest.approx(1_105_160.0, rel=1e-12)


def test_more_chat_users_never_rent_for_less() -> None:
    """The hunt's property on this account: 2,000 chat users rent one tray more for the chat
    (12 GPUs for 10 in use: 3 x (367,920 + 466.67) = USD 1,105,160), which holds both guests;
    1,500 cost no more (the same USD 1,105,160; USD 1,473,546.67 before)."""
    easy, hard = _size(_account(1500)), _size(_account(2000))
    assert [g.shares_with for g in easy.plan.retrieval_groups] == [
        g.shares_with for g in hard.plan.retrieval_groups]
    assert hard.plan.node_groups[0].values["cloud_gpus_rented"] == 12
    assert [g.annual_cost_cloud for g in hard.plan.retrieval_groups] == [0.0, 0.0]
    assert easy.totals.annual_cost_cloud is not None and hard.totals.annual_cost_cloud is not None
    assert easy.totals.annual_cost_cloud <= hard.totals.annual_cost_cloud
    assert hard.totals.annual_cost_cloud == pytest.approx(3 * (GB200_YEAR + STORAGE), rel=1e-12)


def test_the_catalogs_whole_rack_carries_the_guests() -> None:
    """With the catalog's own GB200 offer, whole 72-GPU racks (prices.yaml gb200 gpu_cloud,
    USD 10.50 per GPU-hour): the rack rented for the chat's 8 GPUs has 64 idle, the guests
    run there and add no rent. The plan rents one rack: 72 x 10.50 x 8,760 = USD 6,622,560
    + the rack's 10 TB of storage at USD 70 a TB-month (USD 8,400) = USD 6,630,960 a year,
    the same with 2,000 chat users (10 GPUs in use)."""
    rack = 72 * 10.5 * 8760 + 10 * 70 * 12
    for users in (1500, 2000):
        r = _size(_account(users), CAT)
        (g,) = r.plan.node_groups
        assert g.values["cloud_gpus_rented"] == 72
        assert [(x.shares_with, x.cloud_gpus, x.annual_cost_cloud)
                for x in r.plan.retrieval_groups] == [(g.id, 0, 0.0), (g.id, 0, 0.0)]
        assert r.totals.annual_cost_cloud == pytest.approx(rack, rel=1e-12)
        assert r.totals.annual_cost_cloud == pytest.approx(6_630_960.0, rel=1e-12)


def test_a_guest_rents_its_own_l4_where_that_costs_less() -> None:
    """With the L4 listed too, the embedder alone (the chat stays on the rack) is priced as
    its cheapest option rented alone: one 1-GPU L4 instance (its option's own cloud lines:
    prices.yaml l4 hyperscaler_on_demand USD 0.95 per GPU-hour x the gpu_cloud tier ratio
    0.575 = USD 0.54625, x 8,760 h = USD 4,785.15, + its 1 of a 4-GPU L4 server's 10 TB at USD
    70 a TB-month = USD 2,100: USD 6,885.15 a year), not a 4-GPU GB200 tray for its one
    replica (USD 368,386.67)."""
    r = _size(_account(gpus=("gb200", "l4"), reranker=False))
    assert r.deployment.recommended == "on_prem"
    (embed,) = r.plan.retrieval_groups
    w = r.retrieval[0]
    assert w.best is not None and w.best.gpu == "gb200" and embed.shares_with == "group-1"
    l4 = next(o for o in w.options if o.gpu == "l4")
    assert l4.shares_with is None and l4.values["cloud_instances"] == 1
    alone = embed.rents_alone
    assert alone is not None and (alone.gpu, alone.instances, alone.instance_gpus) == ("l4", 1, 1)
    assert embed.annual_cost_cloud == pytest.approx(float(l4.values["annual_cost_cloud"]),
                                                    rel=1e-12)
    assert embed.annual_cost_cloud == pytest.approx(0.95 * 0.575 * 8760 + 10 / 4 * 70 * 12,
                                                    rel=1e-12)  # USD 6,885.15
    # the plan: the chat's 2 trays + the L4 (2 trays + a third for the embedder before)
    assert (embed.cloud_gpus, w.best.values["retrieval_rents_alone"]) == (1, 1)
    assert r.totals.annual_cost_cloud == pytest.approx(
        2 * (GB200_YEAR + STORAGE) + embed.annual_cost_cloud, rel=1e-12)
    # in words, names not ids: the terminal report and the PDF's plan section
    words = "rented, it rents its own 1 × NVIDIA L4 instance"
    assert words in _text(r)
    (rv,) = plan_context(r, CAT)["plan"].retrieval
    assert rv.alone_words.startswith(words)
    html = re.sub(r"\s+", " ", render_html(r))
    assert words in html


@pytest.mark.parametrize("variant", ["gb200", "gb200+l4"])
def test_libreoffice_prices_the_guests_like_the_engine(tmp_path: Path, variant: str) -> None:
    """The workbook recalculated by LibreOffice: every formula cell equals the engine, the
    guests' rented rows among them (the reranker's idle rented GPUs read the embedder's
    cell; the embedder alone on an L4 reads its cheapest option's inputs)."""
    d = (_account() if variant == "gb200"
         else _account(gpus=("gb200", "l4"), reranker=False))
    r = _size(d)
    book = tmp_path / "guests.xlsx"
    write_workbook(r, book)
    problems, _seen, got = libreoffice_check(r, book, tmp_path / "out")
    assert not problems, "\n".join(problems[:20])
    # the Retrieval sheet's rented rows as LibreOffice recalculated them (one column per
    # guest from D): the engine's figures
    sheet = read_values(book)["Retrieval"]
    rows = {sheet.get(f"A{i}"): i for i in range(1, 400)}
    options = [w.best for w in r.retrieval if w.best is not None]
    for name in ("llm_idle_cloud_gpus", "retrieval_rents_alone", "retrieval_cloud_cost",
                 "retrieval_cloud_gpus_rented", "retrieval_idle_cloud_left"):
        for col, o in zip("DEF", options, strict=False):
            assert got["Retrieval"][f"{col}{rows[name]}"] == pytest.approx(
                float(o.values[name]), rel=1e-9), (name, col)
    if variant == "gb200":  # the reranker's idle rented GPUs: the embedder's cell
        formulas = {(sh, ref): f for sh, ref, f in formula_cells(book)}
        assert formulas[("Retrieval", f"E{rows['llm_idle_cloud_gpus']}")] == (
            f"=D{rows['retrieval_idle_cloud_left']}")
        assert got["Retrieval"][f"E{rows['llm_idle_cloud_gpus']}"] == 3
