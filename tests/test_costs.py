"""Costs (issue 16): dated prices by cloud tier, the bill of materials, cloud rented as the
cloud sells, cost per million input + output tokens against a hosted API, break-even by
load, sensitivity scenarios (engine, workbook, PDF) and the model-confidence range.

Prices are asserted with their source and date (catalogs/prices.yaml, copied from the
project's price reference); the H100 rows of that reference used by the acceptance test are
in tests/data/cloud_prices_h100.csv.
"""

from __future__ import annotations

import csv
import datetime as dt
import importlib
import json
import math
import pickle
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import DATA, EXAMPLE, ROOT, example_dict
from support.named_cells import cloud_price_name, edit_named
from test_workbook import write_yaml

from llmsizer.documents.proposal import Formatter, render_pdf
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.inputs.schema import Costs
from llmsizer.model.calculations import SCENARIOS
from llmsizer.model.catalog import CLOUD_TIERS, load_catalog
from llmsizer.sizing.costs import is_stale, price_age_days
from llmsizer.sizing.engine import size
from llmsizer.sizing.evaluate import Choice, error_group
from llmsizer.sizing.results import Result
from llmsizer.sizing.sensitivity import cloud_tiers_fixed

openpyxl: Any = importlib.import_module("openpyxl")

# prices.csv tiers that mean each of llmsizer's tiers
_CSV_TIERS = {"hyperscaler_on_demand": {"hyperscaler_on_demand"},
              "committed_1yr": {"index_contract_1y", "hyperscaler_committed_1y"},
              "committed_3yr": {"hyperscaler_committed_3y"},
              "gpu_cloud": {"neocloud_on_demand"}}


def _reference_rows() -> list[dict[str, str]]:
    with (DATA / "cloud_prices_h100.csv").open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def example() -> Result:
    return size(load(EXAMPLE))


def _best(result: Result, k: int = 0) -> dict[str, float | str]:
    best = result.workloads[k].best
    assert best is not None
    return best.values


def _f(v: dict[str, float | str], name: str) -> float:
    x = v[name]
    assert isinstance(x, float)
    return x


# --- prices ---------------------------------------------------------------------------------


def test_default_h100_cloud_price_is_within_the_dated_sources_of_its_tier() -> None:
    """The default tier (committed one-year) prices an H100 SXM at 2.65 USD/GPU-h: the
    SemiAnalysis one-year contract index of 2026-06; the reference's one-year rows for the H100
    are 1.70 (2025-10), 2.35 (2026-03) and 2.65 (2026-06). Every tier the catalog prices for
    the H100 SXM lies in its rows' range."""
    tier = Costs().cloud_tier
    assert tier == "committed_1yr"
    cat = load_catalog()
    rows = _reference_rows()
    checked = 0
    for t in CLOUD_TIERS:
        offer = cat.prices.cloud_offer("h100-sxm", t)
        if offer is None:
            continue  # no dated offer in this tier: derived (tests/test_price_tier.py)
        refs = [float(r["price_per_gpu_hour"]) for r in rows if r["tier"] in _CSV_TIERS[t]]
        assert refs, t
        assert min(refs) <= offer.usd_per_gpu_hour <= max(refs), (t, offer, refs)
        assert offer.date and offer.source
        checked += 1
    assert checked == 3  # on-demand, committed 1-yr and GPU cloud have H100 offers
    default = cat.prices.cloud_offer("h100-sxm", tier)
    assert default is not None and default.usd_per_gpu_hour == 2.65
    assert default.date == "2026-06" and "SemiAnalysis" in default.source
    # AWS p5.48xlarge after the June-2025 cut: 55.04 USD/h for 8 GPUs (data-receipts 2026-11-09)
    od = cat.prices.cloud["h100-sxm"]["hyperscaler_on_demand"]
    assert (od.usd_per_gpu_hour, od.gpus_per_instance, od.date) == (6.88, 8, "2026-11-09")


def test_every_cloud_offer_and_extra_is_dated_or_marked_undated() -> None:
    cat = load_catalog()
    for gid, offers in cat.prices.cloud.items():
        assert gid in cat.gpus
        for tier, o in offers.items():
            assert o.source.strip() and o.offer.strip(), (gid, tier)
            assert o.date is None or re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", o.date), (gid, tier)
    assert {k: v.value for k, v in cat.prices.extras.items()} == {
        # 17,578 USD per 8-GPU node / its 8 fabric ports; the front end: that port / 400 Gb/s
        "network_per_fabric_port": 17578 / 8, "network_per_frontend_gbps": 17578 / 8 / 400,
        "storage_per_tb_month": 70, "software_per_gpu_year": 4500,
        "colocation_per_kw_month": 184}
    assert cat.prices.extras["colocation_per_kw_month"].date == "2025-06"  # CBRE H1-2025
    api = cat.prices.api["llama-3.1-70b"]
    assert (api.input_usd_per_million, api.output_usd_per_million, api.date) == (
        0.72, 0.72, "2026-11-12")  # AWS Bedrock via litellm 1.109.1


def test_prices_older_than_the_limit_are_stale() -> None:
    today = dt.date(2026, 11, 23)
    limit = load_catalog().constant("price_max_age_days")
    assert limit == 365
    assert price_age_days("2026-11-09", today) == 14
    assert price_age_days("2025-06", today) == (today - dt.date(2025, 6, 30)).days
    assert price_age_days(None, today) is None
    assert is_stale("2025-06", today, limit)  # CBRE colocation, H1-2025
    assert is_stale(None, today, limit)  # undated snapshot
    assert not is_stale("2026-06", today, limit)  # the H100 one-year index


# --- bill of materials, cloud by instance, tokens, API ----------------------------------------


def test_bill_of_materials_of_the_example(example: Result) -> None:
    """Internal assistant on TP4 DGX H100 alone: 2 nodes, 16 GPUs bought. Node without GPUs
    50,000 (derived from SemiAnalysis' 270,000 DGX H100 estimate), H100 30,000 (aiinframap
    mid-2026), network per node 19,775.25: its 8 GPU-fabric ports x 2,197.25 (yobitel NDR
    fabric, 17,578 per 8-GPU node, 2026) + its 2 x 200 GbE front-end ports x 5.493125 per
    Gb/s (2,197.25, unpriced before session 23): capex 2 x 50,000 + 16 x 30,000 + 2 x
    19,775.25. (The plan now buys 4-GPU XE8640 nodes: tests/test_platform_search.)"""
    dgx = example.workloads[0].option("h100-sxm/fp8/kv-fp8/tp4")
    assert dgx is not None and dgx.platform == "dgx-h100"
    v = dgx.values
    assert (_f(v, "nodes"), _f(v, "gpus_purchased")) == (2, 16)
    assert _f(v, "capex_platforms") == 100_000
    assert _f(v, "capex_gpus") == 480_000
    assert _f(v, "network_per_node_used") == pytest.approx(8 * 2197.25 + 2 * 200 * 5.493125)
    assert _f(v, "capex_network") == pytest.approx(2 * 19_775.25)
    assert _f(v, "capex") == pytest.approx(619_550.5)
    # colocation: 2 nodes x 10.2 kW x 184 USD/kW-month (CBRE) x 12
    assert math.isclose(_f(v, "annual_colocation"), 2 * 10.2 * 184 * 12)
    # storage: 2 nodes x 10 TB x 70 USD/TB-month (CoreWeave file storage) x 12
    assert math.isclose(_f(v, "annual_storage"), 2 * 10 * 70 * 12)
    assert _f(v, "annual_software") == 0  # open-source serving by default
    parts = sum(_f(v, k) for k in ("annual_capex", "annual_power_cost", "annual_colocation",
                                   "annual_storage", "annual_software", "annual_support"))
    assert math.isclose(_f(v, "annual_cost_onprem"), parts)


def test_cloud_rents_whole_instances_or_single_gpus(example: Result, tmp_path: Path) -> None:
    """Committed one-year H100 contracts cover whole 8-GPU nodes: 16 GPUs in use -> 2
    instances, 16 x 2.65 x 8,760 h rent. RunPod rents single H100s: 6 GPUs -> 6 rented."""
    v = _best(example)
    assert (_f(v, "cloud_instances"), _f(v, "cloud_gpus_rented")) == (2, 16)
    assert math.isclose(_f(v, "annual_cloud_rent"), 16 * 2.65 * 8760)
    data = example_dict()
    data["workloads"] = [data["workloads"][0] | {"concurrent_users": 40}]
    data["hardware"] = {"gpus": ["h100-sxm"], "tensor_parallel": [2]}
    data["policy"] = {"headroom": 0.25}
    for tier, per_instance in (("committed_1yr", 8), ("gpu_cloud", 1)):
        data["costs"] = {"cloud_tier": tier}
        r = size(load(write_yaml(data, tmp_path / f"{tier}.yaml")))
        w = _best(r)
        gpus = _f(w, "gpus")
        assert gpus % 8 != 0, gpus  # the case that shows the rounding
        assert _f(w, "cloud_gpus_per_instance") == per_instance
        assert _f(w, "cloud_gpus_rented") == math.ceil(gpus / per_instance) * per_instance


def test_cost_per_million_tokens_counts_input_and_output_and_compares_the_api(
        example: Result) -> None:
    """Llama 3.1 70B on AWS Bedrock: 0.72 / 0.72 USD per million input / output tokens
    (2026-11-12), so its blended price is 0.72 whatever the mix."""
    v = _best(example)
    w = example.workloads[0].inputs
    ratio = w["prompt_tokens"] / w["output_tokens"]
    assert math.isclose(_f(v, "million_input_tokens_per_year"),
                        _f(v, "million_tokens_per_year") * ratio)
    assert math.isclose(_f(v, "cost_per_million_total_tokens_api"), 0.72)
    assert _f(v, "cost_per_million_total_tokens_onprem") < _f(v, "cost_per_million_tokens_onprem")
    t = example.totals
    assert t.annual_cost_api is not None and t.cost_per_million_total_tokens_api is not None
    assert math.isclose(t.cost_per_million_total_tokens_api, 0.72)
    assert math.isclose(t.cost_per_million_total_tokens_onprem,
                        t.annual_cost_onprem / t.million_total_tokens_per_year)
    # break-even against the API: the load where owning's cost per token meets the API's
    load = _f(v, "breakeven_load_vs_api")
    fixed, power_full = _f(v, "annual_fixed_onprem"), _f(v, "annual_power_full_load")
    api_full = _f(v, "annual_cost_api") / example.account_inputs["average_load"]
    assert math.isclose(fixed + power_full * load, api_full * load)


def test_a_model_without_an_api_price_has_none(tmp_path: Path) -> None:
    data = example_dict()
    data["workloads"] = [data["workloads"][0] | {"model": "qwen2.5-72b"}]
    r = size(load(write_yaml(data, tmp_path / "noapi.yaml")))
    assert _f(_best(r), "annual_cost_api") == 0
    assert r.totals.annual_cost_api is None and r.totals.cost_per_million_total_tokens_api is None


# --- sensitivity -----------------------------------------------------------------------------


def test_sensitivity_rows_of_the_example(example: Result) -> None:
    rows = {s.name: s for s in example.sensitivity}
    # every row but the peak-rate ones: both workloads state concurrent users
    # (tests/test_scenario_rows.py)
    assert list(rows) == [s.name for s in SCENARIOS if not s.name.startswith("rate_")]
    assert len(rows) == 17
    # the scenarios are the account plan's (issue 15): the same pools and node groups
    t = example.totals
    base_gpus = t.gpus_purchased
    # users x2 needs more; x0.5 never more (more users never fewer GPUs)
    assert rows["users_x2"].gpus_purchased > base_gpus
    assert rows["users_x0.5"].gpus_purchased <= base_gpus <= rows["users_x1.5"].gpus_purchased
    # GPU price -30 %: capex falls by 30 % of the GPUs' share, nothing else moves
    gpus_capex = sum(g.values["capex_gpus"] for g in example.plan.node_groups)
    assert math.isclose(rows["gpu_price_-30%"].capex, t.capex - 0.3 * gpus_capex)
    assert rows["gpu_price_-30%"].annual_cost_cloud == t.annual_cost_cloud
    # cloud tiers: on demand (AWS p5, 6.88) costs more than the one-year contract (2.65)
    assert rows["cloud_hyperscaler_on_demand"].annual_cost_cloud > t.annual_cost_cloud
    assert rows["cloud_committed_1yr"].annual_cost_cloud == t.annual_cost_cloud
    assert rows["cloud_hyperscaler_on_demand"].capex == t.capex
    # load moves power only
    assert rows["load_0.3"].annual_cost_onprem < t.annual_cost_onprem < rows[
        "load_0.9"].annual_cost_onprem


def test_cloud_tier_rows_keep_the_accounts_own_cloud_price(tmp_path: Path) -> None:
    """inputs/example.yaml with its H100 SXM cloud price given by the account (USD 2.00 per
    GPU-hour, below the catalog's 2.65 one-year and 6.88 on-demand): the main cloud figure
    rents at 2.00, and so does every cloud-tier row; a tier row read the catalog's price
    (the on-demand row 6.88/2.00 = 3.4 times the proposal's cloud cost)."""
    data = example_dict()
    data.setdefault("costs", {})["cloud_gpu_hour"] = {"h100-sxm": 2.0}
    r = size(load(write_yaml(data, tmp_path / "own-price.yaml")))
    t = r.totals
    rented = sum(_f(g.values, "cloud_gpus_rented") for g in r.plan.node_groups)
    assert {g.gpu for g in r.plan.node_groups} == {"h100-sxm"}
    assert t.annual_cost_cloud is not None
    assert math.isclose(sum(_f(g.values, "annual_cloud_rent") for g in r.plan.node_groups),
                        rented * 2.0 * 8760)
    # every tier rents at 2.00 (cloud_columns), so the tier rows would all repeat the
    # proposal's cloud cost: they are not listed (tier_moves_price); the example without the
    # override lists them, each at its tier's price (its own test above)
    assert r.sensitivity and not [s for s in r.sensitivity if s.input == "cloud_tier_what_if"]
    assert all(r.tables["gpus"]["h100-sxm"][f"cloud_{c}"] == 2.0
               for c in ("on_demand", "1yr", "3yr", "gpu_cloud"))


def test_northwind_lists_no_cloud_tier_rows_its_own_price_makes_repeat(tmp_path: Path) -> None:
    """Northwind Research (inputs/frontier-moe-rack.yaml): the catalog has no GB300 cloud
    offer in any tier, so the account prices it itself (costs.cloud_gpu_hour: USD 17.802 per
    GPU-hour, the AWS p6-b300 on-demand offer its comment cites) and is costed on demand at
    that price. Its own price is paid whatever the tier, so the four cloud-tier rows all
    showed the proposal's cloud cost again: they are not listed, in the JSON, the PDF's
    what-if table or the workbook's Scenarios sheet (sensitivity.tier_moves_price)."""
    r = size(load(ROOT / "inputs" / "frontier-moe-rack.yaml"))
    t = r.totals
    assert r.cloud_tier == "hyperscaler_on_demand" and t.annual_cost_cloud is not None
    rented = sum(_f(g.values, "cloud_gpus_rented") for g in r.plan.node_groups)
    assert t.annual_cost_cloud == pytest.approx(rented * 17.802 * 8760 + sum(
        _f(g.values, "annual_cloud_extras") for g in r.plan.node_groups), rel=1e-12)
    names = [s["name"] for s in json.loads(r.to_json())["sensitivity"]]
    assert names and not [n for n in names if n.startswith("cloud_")]
    assert "gpu_price_-30%" in names  # the other rows stay
    pdf = tmp_path / "nwr.pdf"
    render_pdf(r, pdf, appendix=True)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    assert re.search(r"GPU price:? -30 %", text)
    for words in ("hyperscaler on-demand", "committed 1 year", "committed 3 years",
                  "GPU cloud on-demand"):
        assert f"Cloud price: {words}" not in text, words
    # and both say why, under the rows (presales review: the rows were missing unsaid)
    said = "Cloud price tiers are not varied: this account states its own cloud prices."
    assert said in " ".join(text.split()) and cloud_tiers_fixed(r.workloads, r.tables,
                                                                     r.retrieval)
    book = tmp_path / "nwr.xlsx"
    write_workbook(r, book)
    ws = openpyxl.load_workbook(book, data_only=True)["Scenarios"]
    labels = [row[0].value for row in ws.iter_rows(min_row=6)]
    assert "GPU price" in labels and "Cloud price" not in labels
    assert any(str(v).startswith(said) for v in labels if v), labels
    # an account priced by the catalog lists the tier rows and says nothing of the kind
    example = size(load(EXAMPLE))
    assert [s for s in example.sensitivity if s.input == "cloud_tier_what_if"]
    assert not cloud_tiers_fixed(example.workloads, example.tables, example.retrieval)


def test_sensitivity_rows_are_the_whole_account_with_its_retrieval_servers(
        tmp_path: Path) -> None:
    """Wide World Importers (inputs/rag-knowledge-base.yaml): one language model (4 GPUs, 1
    node) beside an embedding and a reranking server (12 GPUs, 2 nodes of their own: 4 L40S
    and 8 RTX PRO 6000; 8 L4 embedded before session 23 priced a PCIe server's network as
    an InfiniBand fabric's 17,578 USD). Each
    scenario row is the whole account, as "As proposed" is: the scenario's language-model
    plan plus the retrieval groups. The peak-rate and headroom rows resize those groups (each
    on its proposed GPU) as they do the language models; the GPU-price, cloud-tier and
    average-load rows price them as they price the language models; the other rows keep them
    as proposed. They were kept as proposed in every row: 50 % more requests per second cost
    nothing more."""
    from llmsizer.documents.proposal.context import build_context
    from llmsizer.sizing.retrieval import scenario_idle, scenario_retrieval
    from llmsizer.sizing.sensitivity import result_scenario_plans

    path = ROOT / "inputs" / "rag-knowledge-base.yaml"
    r = size(load(path))
    t, groups = r.totals, r.plan.retrieval_groups
    assert [g.kind for g in groups] == ["embed", "rerank"] and t.gpus_purchased == 16
    # a retrieval GPU has no cloud price: the account has no cloud total (cloud_priced)
    assert t.annual_cost_cloud is None and t.cloud_unpriced
    runs = {sc.name: (sc, e) for sc, _envs, e in result_scenario_plans(r)}
    resized = {"rate_-50%", "rate_+50%", "headroom_0", "headroom_0.5"}
    priced = {"gpu_price_-30%", "gpu_price_+30%", "load_0.3", "load_0.9"}
    for s in r.sensitivity:
        sc, e = runs[s.name]
        llm = e.totals
        parts = [g for g, _ in scenario_retrieval(sc, r.retrieval,
                                                  scenario_idle(r.plan.node_groups, e),
                                                  r.account_inputs, r.tables)]
        cloud = s.name.startswith("cloud_")  # the cloud tier's price: the cloud cost alone
        if s.name not in resized | priced and not cloud:
            assert parts == groups, s.name
        if cloud:
            assert [g.model_copy(update={"annual_cost_cloud": 0.0}) for g in parts] == [
                g.model_copy(update={"annual_cost_cloud": 0.0}) for g in groups], s.name
        if s.name in priced:  # the same servers, priced differently
            assert [(g.gpus_purchased, g.nodes) for g in parts] == [
                (g.gpus_purchased, g.nodes) for g in groups], s.name
            assert [g.annual_cost_onprem for g in parts] != [
                g.annual_cost_onprem for g in groups], s.name
        assert s.gpus_purchased == llm["gpus_purchased"] + sum(g.gpus_purchased for g in parts)
        assert s.nodes == llm["nodes"] + sum(g.nodes for g in parts)
        assert s.capex == pytest.approx(llm["capex"] + sum(g.capex for g in parts))
        assert s.annual_cost_onprem == pytest.approx(
            llm["annual_cost_onprem"] + sum(g.annual_cost_onprem for g in parts))
        assert s.annual_cost_cloud is None, s.name  # no price for part of the account
    # each resized group is the proposed GPU's option when the account is sized afresh with
    # the scenario's input (the rate on the embed and rerank workloads, the headroom)
    rows = {s.name: s for s in r.sensitivity}
    for name, change in (("rate_+50%", 1.5), ("rate_-50%", 0.5), ("headroom_0.5", None)):
        data = yaml.safe_load(path.read_text("utf-8"))
        for w in data["workloads"]:
            if change is not None and w.get("kind") in ("embed", "rerank"):
                w["requests_per_s"] *= change
        if change is None:
            data["policy"]["headroom"] = 0.5
        fresh = size(load(write_yaml(data, tmp_path / f"{name}.yaml")))
        sc, e = runs[name]
        parts = [g for g, _ in scenario_retrieval(sc, r.retrieval,
                                                  scenario_idle(r.plan.node_groups, e),
                                                  r.account_inputs, r.tables)]
        for g, w in zip(parts, fresh.retrieval, strict=True):
            o = next(o for o in w.options if o.gpu == g.gpu and o.platform == g.platform)
            assert (g.replicas, g.nodes, g.gpus_purchased) == (
                _f(o.values, "retrieval_replicas"), _f(o.values, "retrieval_nodes"),
                _f(o.values, "retrieval_gpus")), name
            assert g.capex == pytest.approx(_f(o.values, "capex")), name
    # 50 % more requests: the embedder (8 L4s, most of them re-indexing the corpus) keeps
    # up; the reranker needs 11 replicas, not 8: a second 8-GPU node (the language model's
    # load is concurrent users, which this row does not change). 4 nodes: the language
    # model's, the embedder's one 8-GPU Dell PowerEdge XE7745 (review round 21: every
    # platform that hosts the L4 is tried; it was two generic 4-GPU servers, 5 nodes) and
    # the reranker's two. Session 22: the Dell PowerEdge XE7745 is a PCIe server
    # (sold_full false), bought with the GPUs it runs as the chat servers are: the reranker's
    # 2 nodes hold its 11 RTX PRO 6000s, 4 + 8 + 11 = 23 GPUs (it bought 16: 28 in all).
    # Session 23: a PCIe server's network is its front-end ports, so the embedder is one
    # 4-GPU server of 4 L40S, not the XE7745's 8 L4 (its 2 x 200 GbE cost 1,098.63 USD more
    # than 2 x 100 GbE): 4 + 4 + 11 = 19
    assert rows["rate_+50%"].gpus_purchased == 19 and rows["rate_+50%"].nodes == 4
    assert rows["headroom_0.5"].gpus_purchased == 4 + 4 + 9  # 9 reranker replicas (was 28)
    # half the requests and no headroom: the reranker's 4 and 6 replicas on one XE7745
    # bought with 4 and 6 GPUs (session 22; both rows read the proposal's 20 GPUs before)
    assert (rows["rate_-50%"].gpus_purchased, rows["rate_-50%"].nodes) == (4 + 4 + 4, 3)
    assert (rows["headroom_0"].gpus_purchased, rows["headroom_0"].nodes) == (4 + 4 + 6, 3)
    # the rows that buy nothing more are the proposal itself, and not in bold
    same = {"users_x0.5", "users_x1.5", "prompt_-50%",
            "prompt_+50%", "output_-50%", "output_+50%",
            *(f"cloud_{tier}" for tier in CLOUD_TIERS)}
    for name in same:
        s = rows[name]
        assert (s.gpus_purchased, s.nodes, s.capex, s.annual_cost_onprem) == (
            t.gpus_purchased, t.nodes, t.capex, t.annual_cost_onprem), name
    # twice the users: a second language-model node; the retrieval servers as proposed (3
    # nodes before review round 21, when the embedder's L4s took two 4-GPU servers)
    assert rows["users_x2"].gpus_purchased == 20 and rows["users_x2"].nodes == 4  # 24 with 8 L4
    context = build_context(r)
    assert context["retrieval_kept"]  # the table's note says which rows resize them
    bold = {row.label + " " + row.change for row in context["scenarios"] if row.moved}
    # session 22: half the requests and no headroom buy fewer reranker GPUs: in bold too
    assert bold == {"Concurrent users ×2", "Requests/s at peak +50 %", "GPU price -30 %",
                    "GPU price +30 %", "Average load 30 %", "Average load 90 %", "Headroom 50 %",
                    "Requests/s at peak -50 %", "Headroom 0 %"}


# --- confidence ------------------------------------------------------------------------------


def test_confidence_constants_and_groups() -> None:
    cat = load_catalog()
    for g in ("hopper_fp8", "hopper_bf16", "blackwell_fp4", "blackwell_fp8", "amd", "moe",
              "other"):
        lo, hi = cat.constant(f"confidence_{g}_p10"), cat.constant(f"confidence_{g}_p90")
        assert lo < 0 < hi, g
        assert "held-out" in cat.constants[f"confidence_{g}_p90"].source
    # docs/calibration.md, confidence table (benchmarks/calibrate.py --write): hopper_fp8 is
    # -23.6 % / +16.5 % over 252 held-out rows
    doc = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    assert "| hopper_fp8 | 252 | -23.6 % | +16.5 % |" in doc
    assert cat.constant("confidence_hopper_fp8_p10") == -0.236
    assert cat.constant("confidence_hopper_fp8_p90") == 0.165
    llama = cat.models["llama-3.1-70b"]
    mixtral = cat.models["mixtral-8x7b"]
    assert error_group(cat, Choice("h100-sxm", "dgx-h100", "fp8", "fp8", 2), llama) == "hopper_fp8"
    assert error_group(cat, Choice("h200-sxm", "dgx-h200", "bf16", "fp8", 2), llama) == (
        "hopper_bf16")
    assert error_group(cat, Choice("b200", "dgx-b200", "fp4", "fp8", 1), llama) == "blackwell_fp4"
    assert error_group(cat, Choice("mi300x", "dell-xe9680-mi300x", "fp8", "fp8", 1), llama) == "amd"
    assert error_group(cat, Choice("h100-sxm", "dgx-h100", "fp8", "fp8", 2), mixtral) == "moe"
    assert error_group(cat, Choice("l40s", cat.gpus["l40s"].default_platform, "fp8", "fp8", 1),
                       llama) == "other"


def test_confidence_range_widens_with_demand(tmp_path: Path) -> None:
    """At 2,000 users the whole-node rounding no longer hides the error: throughput 15.9 %
    lower needs more GPUs, 15.9 % higher fewer."""
    data = example_dict()
    data["workloads"] = [data["workloads"][0] | {"concurrent_users": 2000}]
    r = size(load(write_yaml(data, tmp_path / "conf.yaml")))
    c = r.workloads[0].confidence
    assert c is not None and c.group == "hopper_fp8"
    assert c.gpus_purchased_if_high < c.gpus_purchased < c.gpus_purchased_if_low
    assert math.isclose(c.replica_output_tokens_per_s_low,
                        c.replica_output_tokens_per_s / (1 + c.error_p90))


# --- the PDF ---------------------------------------------------------------------------------


def test_money_is_rounded_to_three_figures() -> None:
    fmt = Formatter("USD")
    shown = {x: fmt.money(x).replace("\u00a0", " ") for x in (1_080_000, 501_453, 17_578, 2.65)}
    assert shown == {1_080_000: "USD 1.08 M", 501_453: "USD 501 k", 17_578: "USD 17.6 k",
                     2.65: "USD 2.65"}


def test_proposal_cost_pages(example: Result, tmp_path: Path) -> None:
    pdf = tmp_path / "example.pdf"
    render_pdf(example, pdf, appendix=True)  # the what-if section is in the detailed PDF
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    flat = " ".join(text.split())
    assert "if throughput is off by the model's p90 error" in flat
    # sized alone: 6 XE8640 nodes x 35,000 + 24 H100 x 30,000 + 6 x 10,986.25 network (4
    # GPU-fabric ports x 2,197.25 + 2 x 200 GbE front end x 5.493125; 17,578 a node before
    # session 23, as if the 4-GPU board had 8 fabric ports and no front end)
    assert example.totals_dedicated.capex == pytest.approx(
        6 * 35_000 + 24 * 30_000 + 6 * 10_986.25) == 995_917.5
    assert "USD 996 k" in flat and "USD 995,917" not in flat
    for words in ("Network (once)", "Colocation", "Hosted API", "AWS Bedrock",
                  "break-even by load", "Prices used", "What if: sensitivity",
                  "committed one-year contract"):
        assert words in flat, words
    assert "2025-06 —" in flat and "months old" in flat  # CBRE colocation, flagged as stale


# --- the workbook: Scenarios live and equal to LibreOffice ------------------------------------


def test_scenarios_sheet_is_live_and_matches_libreoffice(example: Result, tmp_path: Path) -> None:
    """Every Scenarios formula equals LibreOffice's recalculation; after the H100 price is
    edited on Inputs, the scenario rows equal a fresh engine run with that price."""
    from support.libreoffice import read_values, recalculate

    book = tmp_path / "example.xlsx"
    write_workbook(example, book)
    wb = openpyxl.load_workbook(book)
    formulas = {c.coordinate: c.value for row in wb["Scenarios"].iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=")}
    wb.close()
    edited = edit_named(book, tmp_path / "edited.xlsx", {"in_price_h100_sxm": 24_000.0})
    assert len(formulas) > 3000

    done = recalculate([book, edited], tmp_path / "out", timeout=300)
    cached = read_values(book)["Scenarios"]
    lo = read_values(done[book])["Scenarios"]
    bad = [k for k in formulas if not _same(cached.get(k), lo.get(k))]
    assert not bad, [(k, cached.get(k), lo.get(k), formulas[k][:120]) for k in bad[:10]]

    data = example_dict()
    data.setdefault("costs", {})["gpu_prices"] = {"h100-sxm": 24_000.0}
    fresh = size(load(write_yaml(data, tmp_path / "edited.yaml")))
    lo_edited = read_values(done[edited])["Scenarios"]
    heads = {v: k[:-1] for k, v in cached.items() if re.fullmatch(r"[A-Z]4", k)}
    first = 5  # the baseline is row 5; scenarios follow in order
    moved = 0
    # the sheet runs each scenario through the account plan, as the results' sensitivity[]
    for i, sc in enumerate(fresh.sensitivity, start=first + 1):
        for field, head in (("capex", "Capital cost"), ("gpus_purchased", "GPUs bought"),
                            ("annual_cost_onprem", "On-prem cost per year")):
            got = lo_edited[f"{heads[head]}{i}"]
            assert isinstance(got, int | float)
            assert math.isclose(got, float(getattr(sc, field)), rel_tol=1e-9), (sc.name, field)
        moved += lo_edited[f"{heads['Capital cost']}{i}"] != cached[f"{heads['Capital cost']}{i}"]
    assert moved >= len(fresh.sensitivity) - 1  # the price moves every scenario's capex


# the account's tier and catalog prices (inputs/example.yaml: the H100 SXM at the committed
# one-year USD 2.65 per GPU-hour, the other tiers at the catalog's) and an account that gives
# its own price (Northwind Research: GB300 USD 17.802 in every tier, its comment's AWS offer)
@pytest.mark.parametrize(("account", "gpu", "price"), [
    (EXAMPLE, "h100-sxm", 2.2), (ROOT / "inputs" / "frontier-moe-rack.yaml", "gb300", 15.0)],
    ids=["catalog-tiers", "own-price"])
def test_an_edited_cloud_price_moves_the_tier_rows_as_the_engine(
        tmp_path: Path, account: Path, gpu: str, price: float) -> None:
    """Finance types a GPU's cloud price on Inputs; after LibreOffice recalculates, every
    Scenarios row's cloud cost, the cloud-tier rows included, is the engine's on the
    requirements with that price (costs.cloud_gpu_hour: the account's own price, paid in
    every tier). The tier rows read typed catalog prices before: they kept the catalog's
    (example on-demand: 6.88 per GPU-hour) or the written price (Northwind: 17.802)."""
    from support.libreoffice import read_values, recalculate

    base = size(load(account))
    assert {g.gpu for g in base.plan.node_groups} == {gpu} and not base.plan.retrieval_groups
    book = tmp_path / "base.xlsx"
    write_workbook(base, book)
    edited = edit_named(book, tmp_path / "edited.xlsx", {cloud_price_name(gpu): price})

    data = yaml.safe_load(account.read_text("utf-8"))
    data.setdefault("costs", {}).setdefault("cloud_gpu_hour", {})[gpu] = price
    fresh = size(load(write_yaml(data, tmp_path / "edited.yaml")))
    assert fresh.totals.annual_cost_cloud is not None
    cached = read_values(book)["Scenarios"]
    lo = read_values(recalculate([edited], tmp_path / "out", timeout=300)[edited])["Scenarios"]
    heads = {v: k[:-1] for k, v in cached.items() if re.fullmatch(r"[A-Z]4", k)}
    cloud, gpus = heads["Cloud cost per year"], heads["GPUs bought"]
    again = {sc.name: sc for sc in fresh.sensitivity}
    # a re-run lists no tier rows: the typed price is paid in every tier (tier_moves_price)
    assert not [n for n in again if n.startswith("cloud_")]
    tiers = 0
    for i, sc in enumerate(base.sensitivity, start=6):  # the rows as written; 5: the proposal
        tier = sc.input == "cloud_tier_what_if"
        want = fresh.totals if tier else again[sc.name]
        assert lo[f"{gpus}{i}"] == want.gpus_purchased, sc.name  # the same plan
        got = lo[f"{cloud}{i}"]
        assert isinstance(got, int | float)
        assert got == pytest.approx(want.annual_cost_cloud or 0.0, rel=1e-9), sc.name
        if tier:  # each tier the workbook lists rents at the typed price
            tiers += got != cached[f"{cloud}{i}"]
    # the tiers whose price was not the typed one moved: all four of the example (its
    # one-year tier was 2.65, the price the proposal had); Northwind, priced by itself, has
    # no tier rows
    assert tiers == (len(CLOUD_TIERS) if account == EXAMPLE else 0)


def _same(a: object, b: object) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def test_scenario_plans_kept_for_the_workbook() -> None:
    """size() keeps the sensitivity's scenario plans for the workbook's Scenarios sheet (one
    evaluation an account); they are the plans evaluated afresh, and a copy of the Result
    with other workloads does not reuse them."""
    from llmsizer.sizing import sensitivity

    r = size(load(EXAMPLE))
    kept = sensitivity.result_scenario_plans(r)
    assert kept is r._scenario_plans.value[4]
    fresh = sensitivity.scenario_plans(r.workloads, r.account_inputs, r.tables,
                                       [p.workload_indices for p in r.plan.pools], r.retrieval)
    assert [(sc.name, envs, e.totals) for sc, envs, e in kept] == [
        (sc.name, envs, e.totals) for sc, envs, e in fresh]
    assert sensitivity.sensitivity(kept) == r.sensitivity
    other = r.model_copy(update={"workloads": list(r.workloads)})
    assert sensitivity.result_scenario_plans(other) is not kept
    # kept beside the Result, not part of it: equal to a Result without it, and not pickled
    again = pickle.loads(pickle.dumps(r))
    assert again == r and again._scenario_plans.value is None
    assert Result.model_validate_json(r.to_json()) == r


@pytest.mark.parametrize(("account", "names"), [
    # the rows where the account sized afresh keeps the proposal's GPUs and nodes (at +30 %
    # GPU price or 30 % load, Wide World Importers' fresh sizing picks other GPUs)
    # load 0.9: the fresh sizing embeds on 8 L4 again (power weighs more), not the same GPUs
    (ROOT / "inputs" / "rag-knowledge-base.yaml", ("gpu_price_-30%", "load_0.3")),
    (DATA / "rag-shared-busy.yaml", ("gpu_price_-30%", "gpu_price_+30%", "load_0.3",
                                     "load_0.9", "cloud_hyperscaler_on_demand",
                                     "cloud_committed_3yr", "cloud_gpu_cloud")),
], ids=["wide-world-importers", "shared-busy"])
def test_price_and_load_rows_price_the_retrieval_servers_as_the_language_models(
        tmp_path: Path, account: Path, names: tuple[str, ...]) -> None:
    """A GPU-price, average-load or cloud-tier row is the account sized afresh with that
    price, load or tier, when that sizing buys the same GPUs: the retrieval servers' money
    moves with the language models'. They kept the proposal's GPU price, load and cloud
    price: Wide World Importers' GPU price -30 % row was USD 336,592 capital (the fresh
    sizing: 310,408); rag-shared-busy's on-demand cloud row USD 676,262 a year (972,701)."""
    r = size(load(account))
    cat = load_catalog()
    gpus = sorted({g.gpu for g in (*r.plan.node_groups, *r.plan.retrieval_groups)})
    rows = {s.name: s for s in r.sensitivity}
    changes: dict[str, tuple[str, Any]] = {
        "gpu_price_-30%": ("gpu_prices", {g: _price(cat, g) * 0.7 for g in gpus}),
        "gpu_price_+30%": ("gpu_prices", {g: _price(cat, g) * 1.3 for g in gpus}),
        "load_0.3": ("average_load", 0.3), "load_0.9": ("average_load", 0.9),
        **{f"cloud_{tier}": ("cloud_tier", tier) for tier in CLOUD_TIERS}}
    for name in names:
        data = yaml.safe_load(account.read_text("utf-8"))
        key, value = changes[name]
        data.setdefault("costs", {})[key] = value
        fresh = size(load(write_yaml(data, tmp_path / "fresh.yaml")))
        assert [(g.gpu, g.replicas, g.nodes) for g in fresh.plan.retrieval_groups] == [
            (g.gpu, g.replicas, g.nodes) for g in r.plan.retrieval_groups], name
        s, t = rows[name], fresh.totals
        assert (s.gpus_purchased, s.nodes) == (t.gpus_purchased, t.nodes), name
        assert s.capex == pytest.approx(t.capex, rel=1e-12), name
        assert s.annual_cost_onprem == pytest.approx(t.annual_cost_onprem, rel=1e-12), name
        if t.annual_cost_cloud is None:  # a GPU without a cloud price (Wide World Importers)
            assert s.annual_cost_cloud is None, name
        else:
            assert s.annual_cost_cloud == pytest.approx(t.annual_cost_cloud, rel=1e-12), name
    assert rows["gpu_price_-30%"].capex != r.totals.capex


def _price(cat: Any, gpu: str) -> float:
    price = cat.gpus[gpu].price_usd
    assert price, gpu
    return float(price)
