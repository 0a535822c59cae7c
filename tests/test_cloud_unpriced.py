"""A GPU without a cloud price must not make the cloud look cheap: its part's cloud cost is
"no price listed" (annual_cost_cloud 0, like annual_cost_api), the account's cloud total is
not a number (None in the results, 0 in the workbook), and every surface says which GPU has
no price and how to give one (costs.cloud_gpu_hour.<gpu>).

The accounts are the shipped ones: Wide World Importers (inputs/rag-knowledge-base.yaml),
whose reranker runs on a GPU the price list has no cloud offer for, and the web app's Chat
API quick start, whose recommended accelerator has none either."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ShippedOutputs
from fastapi.testclient import TestClient
from helpers import EXAMPLE, ROOT
from rich.console import Console

from llmsizer.documents.textreport import print_result
from llmsizer.inputs.loader import load
from llmsizer.model.calculations import cloud_priced
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result
from llmsizer.web import archetypes
from llmsizer.web.app import create_app
from llmsizer.web.service import size_text

openpyxl: Any = importlib.import_module("openpyxl")

WIDE_WORLD = ROOT / "inputs" / "rag-knowledge-base.yaml"


@pytest.fixture(scope="module")
def wide_world() -> Result:
    return size(load(WIDE_WORLD))


def _price(r: Result, pool_id: str) -> float:
    """The cloud price per GPU-hour of a pool's option (its node group's GPU)."""
    pool = next(p for p in r.plan.pools if p.id == pool_id)
    w = r.workloads[pool.workload_indices[0]]
    return float(next(o for o in w.options if o.id == pool.option).values["cloud_gpu_hour"])


def _parts(r: Result) -> list[tuple[str, float, float, float]]:
    """(GPU, cloud price per GPU-hour, cloud cost per year, GPUs in use) of every part of
    the account plan: its node groups and its embed and rerank groups."""
    rows = [(g.gpu, _price(r, g.pools[0]), g.annual_cost_cloud, float(g.gpus_used))
            for g in r.plan.node_groups]
    best = {w.name: w.best for w in r.retrieval}
    for g in r.plan.retrieval_groups:
        o = best[g.workload]
        assert o is not None
        rows.append((g.gpu, float(o.values["cloud_gpu_hour"]), g.annual_cost_cloud,
                     float(g.gpus_used)))
    return rows


def test_the_reranker_without_a_cloud_price_leaves_the_cloud_total_unknown(
        wide_world: Result) -> None:
    parts = _parts(wide_world)
    unpriced = sorted({gpu for gpu, price, _c, gpus in parts if price == 0 and gpus > 0})
    assert unpriced == ["rtx-pro-6000"]  # the price list has no cloud offer for it (prices.yaml)
    rerank = next(w for w in wide_world.retrieval if w.kind == "rerank")
    assert rerank.best is not None and rerank.best.gpu == "rtx-pro-6000"
    v = rerank.best.values
    # storage alone was once its "cloud cost": now no price listed, as the hosted API's is
    assert float(v["annual_cloud_rent"]) == 0 and float(v["annual_cloud_extras"]) > 0
    assert float(v["annual_cost_cloud"]) == 0
    t = wide_world.totals
    assert t.cloud_unpriced == unpriced
    assert t.annual_cost_cloud is None
    assert t.cost_per_million_tokens_cloud is None and t.cost_per_million_total_tokens_cloud is None
    # the deployment choice never compares against an unpriced cloud
    assert "cloud" not in wide_world.deployment.annual_cost
    assert wide_world.deployment.recommended != "cloud"
    doc = json.loads(wide_world.to_json())
    assert doc["totals"]["annual_cost_cloud"] is None
    assert doc["totals"]["cloud_unpriced"] == unpriced
    # each scenario is the whole account, the reranker included: no cloud figure either (it
    # once left the retrieval groups out and priced every scenario but not the proposal)
    assert wide_world.sensitivity
    assert all(s.annual_cost_cloud is None for s in wide_world.sensitivity)


def test_an_account_priced_in_the_cloud_keeps_its_sum() -> None:
    r = size(load(EXAMPLE))
    parts = _parts(r)
    assert parts and all(price > 0 for _g, price, _c, _n in parts)
    assert r.totals.cloud_unpriced == []
    assert r.totals.annual_cost_cloud == pytest.approx(sum(c for _g, _p, c, _n in parts))
    assert cloud_priced((c, n) for _g, _p, c, n in parts)


def test_the_cli_names_the_gpu_and_the_requirement_to_give(wide_world: Result) -> None:
    con = Console(record=True, width=200)
    print_result(wide_world, con)
    text = " ".join(con.export_text().split())
    name = load_catalog().gpus["rtx-pro-6000"].name
    assert f"no cloud price is listed for {name}" in text
    assert "costs.cloud_gpu_hour.rtx-pro-6000" in text
    assert not re.search(r"cloud USD [\d,]+/yr", text)


def test_the_pdf_and_workbook_say_no_price(
        shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    import subprocess

    out = shipped_outputs(WIDE_WORLD)
    text = " ".join(subprocess.run(["pdftotext", str(out.pdf), "-"], check=True,
                                   capture_output=True, text=True).stdout.split())
    name = load_catalog().gpus["rtx-pro-6000"].name
    assert f"no cloud price is listed for {name} to compare the cloud with" in text  # cover
    assert "cloud per year: no price listed for a gpu" in text.lower()  # the summary (capitals)
    # the costs table: the reranker's column and the account's
    layout = subprocess.run(["pdftotext", "-layout", str(out.pdf), "-"], check=True,
                            capture_output=True, text=True).stdout
    row = re.search(r"Cloud per year +USD \S+ k +USD \S+ k +no price listed +not comparable",
                    layout)
    assert row is not None, "the costs table's cloud row"
    assert f"No cloud price is listed for {name}" in text
    # the workbook's account total (the Plan sheet's last annual_cost_cloud row, after the
    # node groups'): live, 0 while a part has no price, as annual_cost_api's convention
    rows = [row[0].row for row in openpyxl.load_workbook(out.xlsx)["Plan"].iter_rows()
            if row[0].value == "annual_cost_cloud"]
    formula = openpyxl.load_workbook(out.xlsx)["Plan"].cell(rows[-1], 4).value
    cached = openpyxl.load_workbook(out.xlsx, data_only=True)["Plan"].cell(rows[-1], 4).value
    assert isinstance(formula, str) and formula.startswith("=IF(AND(OR(")
    assert cached == 0


def test_the_web_quick_start_says_the_cloud_has_no_price() -> None:
    sized = size_text(yaml.safe_dump(archetypes.requirements("chat"), sort_keys=False))
    r = sized.result
    assert r is not None
    unpriced = sorted(g.gpu for g in r.plan.node_groups if _price(r, g.pools[0]) == 0)
    assert unpriced and r.totals.cloud_unpriced == unpriced and r.totals.annual_cost_cloud is None
    names = [load_catalog().gpus[g].name for g in unpriced]
    with TestClient(create_app()) as client:
        page = client.get("/").text
    line = re.search(r'<span id="cloud-unpriced">([^<]*)<', page)
    assert line is not None
    assert all(n in line.group(1) for n in names)
    assert "a year in the cloud" not in page


@pytest.mark.parametrize("asked", ["cheapest", "cloud"])
def test_the_deployment_advice_never_weighs_an_unpriced_cloud(tmp_path: Path, asked: str) -> None:
    from test_workbook import write_yaml

    from llmsizer.documents.proposal.context import build_context

    data = yaml.safe_load(WIDE_WORLD.read_text(encoding="utf-8"))
    data["policy"] = {**data.get("policy", {}), "deployment": asked}
    # Renting, the search prefers what the cloud prices (session 18: the reranker moves to a
    # priced GPU); on the RTX PRO 6000 alone, which no cloud offer prices, it cannot.
    data["hardware"] = {"gpus": ["rtx-pro-6000"]}
    r = size(load(write_yaml(data, tmp_path / "wide-world.yaml")))
    d = r.deployment
    assert "cloud" not in d.annual_cost and "cloud" not in d.cheaper
    assert d.cheapest != "cloud"
    lead = build_context(r)["deployment"]["lead"]
    if asked == "cloud":  # the customer's choice is kept, its cost said to be unknown
        assert d.recommended == "cloud" and d.cheaper == []
        assert "its cost is not known" in lead
    else:
        assert d.recommended == d.cheapest and "the cloud: no price listed" in lead


def test_the_batch_summary_never_totals_an_unpriced_cloud(wide_world: Result,
                                                          tmp_path: Path) -> None:
    from llmsizer.runs.outcome import Outcome
    from llmsizer.runs.summary import COLUMNS, write_summary

    outcomes = []
    for stem, r in (("example", size(load(EXAMPLE))), ("wide-world", wide_world)):
        o = Outcome(file=f"{stem}.yaml", stem=stem, status="ok", account=r.account.name,
                    currency=r.account.currency)
        o.annual_cost_onprem, o.annual_cost_cloud = (r.totals.annual_cost_onprem,
                                                     r.totals.annual_cost_cloud)
        outcomes.append(o)
    write_summary(outcomes, tmp_path / "summary.xlsx")
    ws = openpyxl.load_workbook(tmp_path / "summary.xlsx")["Accounts"]
    col = 1 + [c[1] for c in COLUMNS].index("annual_cost_cloud")
    assert ws.cell(2, col).value == outcomes[0].annual_cost_cloud
    assert ws.cell(3, col).value == "no price listed"
    assert ws.cell(4, col).value == "no price listed"  # the total: not the priced one alone
    onprem = 1 + [c[1] for c in COLUMNS].index("annual_cost_onprem")
    assert str(ws.cell(4, onprem).value).startswith("=SUM(")
