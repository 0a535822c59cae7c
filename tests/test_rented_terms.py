"""A rented account's comparisons in the cost of renting (review round 18, helper G).

Helper F gave a rented account (policy.deployment: cloud, or cheapest resolving to cloud)
the plan and options cheapest to rent; three comparisons still spoke of buying:

1. the terminal's "Sized alone ..." line and the PDF's plan saving quoted the on-premises
   cost (the insurer, tests/data/eur-insurer.yaml: "Sized alone the workloads would need 24
   GPUs in 4 nodes, on-prem EUR 516 k/yr"; the PDF's saving "EUR 163 k (31.6 %)" against
   EUR 353 k a year of buying, for an account that rents the plan at EUR 221 k);
2. the embedding and reranking servers were chosen by their buying cost (retrieval.py
   ``_rank``), a rented knowledge base's reranker on an RTX PRO 6000 that has no cloud price;
3. under "cheapest", the disaggregated prefill/decode pair kept per GPU and platform was the
   one cheapest to buy, also for the plan searched for renting.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from _rented import INSURER, terminal

from llmsizer.documents.proposal.format import NBSP
from llmsizer.documents.proposal.render import render_html
from llmsizer.inputs.loader import load
from llmsizer.model.calculations import PLAN_SAVING_CLOUD, PLAN_SAVING_SHARE_CLOUD
from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import evaluate
from llmsizer.sizing.engine import size
from llmsizer.sizing.evaluate import account_inputs, build_tables
from llmsizer.sizing.results import Result
from llmsizer.sizing.search import SearchMemo, size_workload, size_workload_ways

ROOT = Path(__file__).resolve().parents[1]
RAG = ROOT / "inputs" / "rag-knowledge-base.yaml"


def test_the_terminal_says_what_sizing_alone_would_rent(insurer: Result) -> None:
    """Each workload alone on its option cheapest to rent (totals_dedicated): 11 GPUs for
    EUR 181,073 a year, against the plan's 10 at EUR 151,966 (both with a spare instance for
    N+1, review round 21; review round 22: the H200 sold by the GPU rents one spare
    replica-instance per workload alone: Claims 4 + 1, the chat 2 x TP2 + 2; 11 x
    1.558337857056 x 8,760 = 150,161.44, + storage 15,456 per node group: twice alone, once
    in the plan; session 23: the plan's one node group rents one spare instance of 2 GPUs for
    both pools, 10 GPUs; before 16 GPUs, 249,329 and 233,873). The old line quoted the buying
    figure, 24 GPUs in 4 nodes at EUR 516 k. Session 24: the cloud's storage is per GPU
    rented (costs.py annual_cloud_storage: GPUs rented / 8 x 10 TB x EUR 64.40 x 12), not per
    server bought: alone 11 / 8 x 7,728 = 10,626 (15,456 before), so 150,161.44 + 10,626 =
    EUR 160,787 (181,073 before)."""
    ded = insurer.totals_dedicated
    assert ded.annual_cost_cloud is not None
    assert (ded.cloud_gpus_rented, round(ded.annual_cost_cloud)) == (11, 160_787)
    text = terminal(insurer)
    # session 24: the difference is the GPU more rented alone and its storage (session 23:
    # "part of the difference is storage ... priced per server a purchase would need")
    assert ("Sized alone the workloads would rent 11 GPUs, cloud EUR 161 k/yr: 1 GPU more "
            "than the plan, with its share of the storage for the model weights and logs (the "
            "cloud prices storage per GPU rented).") in " ".join(text.split())
    assert "on-prem EUR 516 k" not in text


def test_the_pdf_saving_is_the_rent_saved(insurer: Result) -> None:
    """Session 24, storage per GPU rented: 160,787.44 - 146,170.40 = EUR 14,617 a year, one
    H200's rent (1.558337857056 x 8,760 = 13,651.04) and its storage (1 / 8 x 10 TB x EUR
    64.40 x 12 = 966), 9.09 % of renting each workload alone. Session 23: 181,073 - 151,966 =
    EUR 29,107 a year (one node group's storage, 15,456, + one GPU's rent, 1.558337857056 x
    8,760 = 13,651: the plan's one spare instance of 2 GPUs against the workloads' spares of
    1 and 2 alone), 16.1 % of renting each workload alone (session 23; review round 22
    165,617: 15,456, 8.5 %; before 249,329 - 233,873, 6.2 %)."""
    ded, tot = insurer.totals_dedicated, insurer.totals
    env = {"annual_cost_cloud": tot.annual_cost_cloud,
           "annual_cost_cloud_dedicated": ded.annual_cost_cloud}
    assert round(float(evaluate(PLAN_SAVING_CLOUD, env))) == 14_617 == round(13_651.04 + 966)
    assert float(evaluate(PLAN_SAVING_SHARE_CLOUD, env)) == pytest.approx(0.0909, abs=1e-4)
    pdf = " ".join(render_html(insurer).replace(NBSP, " ").split())
    assert ("sized one workload at a time, the same service would rent 11 GPUs at EUR 161 k "
            "per year in the cloud; this plan rents for EUR 146 k, EUR 14.6 k (9.1 %) less "
            "each year: 1 GPU more than the plan, with its share of the storage for the model "
            "weights and logs (the cloud prices storage per GPU rented).") in pdf
    assert "per year on-premises; this plan costs" not in pdf


def test_a_bought_account_keeps_its_buying_terms() -> None:
    """inputs/example.yaml (bought): the line as before."""
    text = terminal(size(load(ROOT / "inputs" / "example.yaml")))
    # USD 558 k: session 23 prices a 4-GPU XE8640's network at its 4 fabric ports (and every
    # server's front end), not a whole 8-GPU node's fabric share (575 k before)
    assert "Sized alone the workloads would need 24 GPUs in 6 nodes, on-prem USD 558 k/yr." in text


def _rented(tmp_path: Path, src: Path, deployment: str) -> Path:
    doc = yaml.safe_load(src.read_text(encoding="utf-8"))
    doc.setdefault("policy", {})["deployment"] = deployment
    path = tmp_path / f"{src.stem}-{deployment}.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return path


def test_a_rented_knowledge_base_rents_its_cheapest_retrieval_servers(tmp_path: Path) -> None:
    """inputs/rag-knowledge-base.yaml rented: bought, its embedder runs on L4 (USD
    59,825 a year to buy, 42,445 to rent) and its reranker on an RTX PRO 6000 (no cloud
    price: the rent figure would leave it out). Rented, each takes the option cheapest to
    rent among those meeting the target, as the language-model options do (search.py
    ``by_way``): the MI325X for both, USD 24,792 and 37,188 a year (2 and 3 GPUs; session
    24: storage for the GPUs rented, 2 / 8 and 3 / 8 of a server's 10 TB x 70 x 12 = 2,100 and
    3,150, where a whole server's 8,400 made them 31,092 and 42,438)."""
    bought = size(load(RAG))
    # session 23: a PCIe server pays its front-end network only, so the embedder bought moves
    # from 8 x L4 on an XE7745 to 4 x L40S on a generic 4-GPU server (l4 before)
    assert [w.recommended for w in bought.retrieval] == ["l40s", "rtx-pro-6000"]
    rented = size(load(_rented(tmp_path, RAG, "cloud")))
    assert rented.deployment.recommended == "cloud"
    for w in rented.retrieval:
        best = w.best
        assert best is not None and best.gpu == "mi325x"
        rents = [float(o.values["annual_cost_cloud"]) for o in w.options
                 if o.feasible and float(o.values["cloud_gpu_hour"]) > 0]
        assert float(best.values["annual_cost_cloud"]) == min(rents)
    assert [(g.gpu, round(g.annual_cost_cloud), g.cloud_gpus)
            for g in rented.plan.retrieval_groups] == [("mi325x", 24_792, 2),
                                                       ("mi325x", 37_188, 3)]
    assert rented.totals.cloud_unpriced == []


def test_under_cheapest_each_way_keeps_its_own_disaggregated_pairs() -> None:
    """inputs/frontier-moe-rack.yaml (DeepSeek-R1 on GB300 racks, disaggregated): the one
    search for both ways (engine, deployment: cheapest) gives each way the option list that
    way's own search gives: its pairs kept by its own ranking, not by the buying one."""
    loaded = load(ROOT / "inputs" / "frontier-moe-rack.yaml")
    cat, req = load_catalog(), loaded.req
    (w,) = req.workloads
    tables, acct = build_tables(req, cat), account_inputs(req, cat)
    both = size_workload_ways(req, w, loaded.models[w.model_id], cat, tables, acct,
                              (), SearchMemo(req, cat), ("on_prem", "cloud"))
    for way, got in zip(("on_prem", "cloud"), both, strict=True):
        alone = size_workload(req, w, loaded.models[w.model_id], cat, tables, acct, (),
                              SearchMemo(req, cat), way)
        assert [o.id for o in got.options] == [o.id for o in alone.options]
        assert got.recommended == alone.recommended
    assert any(o.feasible and "prefill" in o.id for o in both[1].options)


def test_the_walkthrough_gives_each_workloads_part_in_rent() -> None:
    """Step 8 of the walk-through read "3 replicas, 2.40 nodes, 9.6 GPUs bought and EUR 212 k
    a year on-premises" for the insurer's chat, whose plan is rented: it now gives the part's
    rent (its share of the node group's cloud cost, plan_annual_cost_cloud), and the parts
    add up to the plan's rent; a bought account reads as before (enterprise-multi)."""
    import re
    from html import unescape

    r = size(load(INSURER))
    assert r.deployment.recommended == "cloud"
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", render_html(r))))
    text = text.replace(NBSP, " ")
    parts = [p for pool in r.plan.pools for p in pool.shares]
    fmt = r.account.currency
    for p in parts:
        # three figures, trailing zeros kept, as the proposal's money: "EUR 76.0 k"
        money = f"{fmt} {float(p['plan_annual_cost_cloud']) / 1000:#.3g} k"
        assert f"and {money} a year rented in the cloud (section 6)" in text, money
    assert sum(float(p["plan_annual_cost_cloud"]) for p in parts) == pytest.approx(
        r.totals.annual_cost_cloud, rel=1e-9)
    assert "a year on-premises (section 6)" not in text
    bought = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", render_html(
        size(load(ROOT / "inputs" / "enterprise-multi.yaml"))))))
    assert "GPUs bought and USD 257 k a year on-premises (section 6)" in bought.replace(NBSP, " ")


def test_the_web_pages_per_workload_parts_are_in_rent() -> None:
    """The web page's "each workload's share of the plan" table priced a rented plan's parts
    on-premises ("On-premises per year (its share)": EUR 141 k and 212 k, 353 k in all) under
    the headline "16 GPUs rented in the cloud: EUR 221 k per year": each part now in rent
    (EUR 88.3 k + 132 k = the 221 k), buying's figures labelled as such."""
    import re

    from fastapi.testclient import TestClient

    from llmsizer.web.app import create_app

    r = size(load(INSURER))
    with TestClient(create_app()) as client:
        page = client.post("/upload/yaml", files={"file": (
            "insurer.yaml", INSURER.read_bytes())}).text
    page = page.replace("&nbsp;", " ").replace(NBSP, " ")
    table = page[page.index('<table id="per-workload">'):]
    table = table[:table.index("</table>")]
    assert "Cloud per year (its share)" in table and "GPUs if bought (its share)" in table
    assert "On-premises per year" not in table
    cells = re.findall(r'<td class="n"[^>]*>(EUR [^<]+)</td>', table)
    for p in (s for pool in r.plan.pools for s in pool.shares):
        assert f"EUR {float(p['plan_annual_cost_cloud']) / 1000:#.3g} k" in cells
    # the account's row: the plan's rent (session 24, storage per GPU rented: 146 k; session
    # 23: 152 k; round 22: 166 k; before: 234 k)
    assert "EUR 146 k" in cells
