"""A rented plan's range in GPUs rented (session 21). Before, the calculation list had no range
of GPUs rented: plan.confidence_range gave the GPUs bought only, so a rented plan's summary said
"Range: 8 GPUs if bought; 8–16 GPUs ... This range is the buying alternative's, in whole
servers; the proposal computes none for the 8 GPUs rented." The same evaluation now also gives
the GPUs rented at both ends (its node groups' whole cloud instances, plus what the retrieval
groups rent themselves as sized), carried on the plan
(``cloud_gpus_rented_if_throughput_low``/``_high``) and in the results JSON, and the PDF summary
and the web results page say it, the bought range kept as the buying alternative's.

The figures below are worked by hand from the instance sizes (the catalog's cloud sizes: an
H200 rents as a one-GPU instance, an H100 TP4 replica in an 8-GPU instance, two replicas to
one) and the model's error group (p90 +16.5 %, p10 −23.6 %: demand × 1.165 at the low end of
throughput, × 0.764 at the high end, calculations/confidence.py CONFIDENCE_DEMAND_REPLICAS).
"""

from __future__ import annotations

import json
import re
from functools import cache
from html import unescape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from llmsizer.documents.proposal.format import NBSP
from llmsizer.documents.proposal.render import render_html
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result
from llmsizer.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


@cache
def _sized(path: Path) -> Result:
    return size(load(path))


def _words(html: str) -> str:
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace(NBSP, " ").split())
    return re.sub(r" ([,.;])", r"\1", text)


@cache
def _web(path: Path) -> str:
    """The web app's results page after the file is opened, as words."""
    with TestClient(create_app()) as c:
        r = c.post("/upload/yaml", files={"file": (path.name, path.read_bytes())})
    assert r.status_code == 200
    return _words(r.text)


def _ends(r: Result) -> tuple[int, int, int, int]:
    p = r.plan
    assert p.cloud_gpus_rented_if_throughput_high is not None
    assert p.cloud_gpus_rented_if_throughput_low is not None
    assert p.gpus_purchased_if_throughput_high is not None
    assert p.gpus_purchased_if_throughput_low is not None
    return (p.cloud_gpus_rented_if_throughput_high, p.cloud_gpus_rented_if_throughput_low,
            p.gpus_purchased_if_throughput_high, p.gpus_purchased_if_throughput_low)


EU_BANK_SENTENCE = (
    "Range: 8 GPUs rented; 6–10 GPUs rented if throughput is off by the model's p90 error. "
    "The buying alternative, in whole servers: 8 GPUs; 8–16 GPUs if throughput is off.")
JPY_BANK_SENTENCE = (
    "Range: 40 GPUs rented; 32–48 GPUs rented if throughput is off by the model's p90 error. "
    "The buying alternative, in whole servers: 40 GPUs; 32–48 GPUs if throughput is off.")


def test_banque_lumiere_rents_6_to_10_gpus_at_the_models_error() -> None:
    """eu-bank-cloud.yaml: Llama 3.3 70B on H200 TP1, 6.52 replicas of demand, headroom 20 %,
    no N+1. As sized: ROUNDUP(6.52 × 1.2) = 8 replicas, 8 one-GPU instances rented. Low end:
    6.52 × 1.165 = 7.60, × 1.2 = 9.12 → 10 instances (bought: 10 GPUs → two 8-GPU XE9680, 16).
    High end: 6.52 × 0.764 = 4.98, × 1.2 = 5.98 → 6 instances (bought: one server, 8)."""
    r = _sized(DATA / "eu-bank-cloud.yaml")
    assert r.deployment is not None and r.deployment.recommended == "cloud"
    assert r.plan.pools[0].values["pool_demand_replicas"] == pytest.approx(6.5217, abs=1e-4)
    assert r.totals.cloud_gpus_rented == 8
    assert _ends(r) == (6, 10, 8, 16)


def test_sakura_rents_32_to_48_gpus_at_the_models_error() -> None:
    """jpy-bank-cloud.yaml, headroom 25 %, N+1: one H100 group on 8-GPU XE9680s, rented as
    8-GPU instances (an instance holds 2 TP4 replicas; review round 21: with N+1 at least
    ROUNDUP(GPUs for the load / 8) + 1 instances, one spare). The TP1 chat (0.614 replicas of
    demand) takes 1 replica at both ends (0.716 x 1.25 and 0.469 x 1.25 round up to 1); the
    TP4 Regulation RAG (5.18): as sized ROUNDUP(5.18 x 1.25) = 7 replicas, 28 GPUs: load 29,
    + one node's 8 spare = 37 in use: MAX(ROUNDUP(37 / 8), ROUNDUP(29 / 8) + 1) = 5 instances,
    40 GPUs. Low end: 5.18 x 1.165 = 6.04, x 1.25 = 7.55 -> 8 replicas, load 33, 41 in use:
    6 instances, 48. High end: 5.18 x 0.764 = 3.96, x 1.25 = 4.95 -> 5 replicas, load 21, 29
    in use: 4 instances, 32. Bought: 5, 6 and 4 XE9680s: 40, 48 and 32 GPUs."""
    r = _sized(DATA / "jpy-bank-cloud.yaml")
    assert r.deployment is not None and r.deployment.recommended == "cloud"
    demand = sorted(round(p.values["pool_demand_replicas"], 3) for p in r.plan.pools)
    assert demand == [0.614, 5.182]
    assert r.totals.cloud_gpus_rented == 40
    assert _ends(r) == (32, 48, 32, 48)


def test_the_rented_range_counts_what_the_retrieval_servers_rent() -> None:
    """rag-shared-cloud.yaml: its reranking servers' 4 GPUs rent one whole 8-GPU instance of
    their own (the H100's one-year offer: 8-GPU contracts), the total's 16 rented = 8 in one
    instance for the chat + 8; both ends count them, as the bought range counts the GPUs they
    buy. Review round 22: a retrieval group's GPUs rented are its TCO lines' whole instances
    (cloud_gpus_rented), which its cloud cost pays for (before: its 4 GPUs in use, total 12,
    while the rent counted 16)."""
    r = _sized(DATA / "rag-shared-cloud.yaml")
    own = sum(g.cloud_gpus for g in r.plan.retrieval_groups)
    assert (own, r.totals.cloud_gpus_rented) == (8, 16)
    assert _ends(r)[:2] == (16, 16)


@pytest.mark.parametrize(("name", "sentence"), [
    ("eu-bank-cloud.yaml", EU_BANK_SENTENCE), ("jpy-bank-cloud.yaml", JPY_BANK_SENTENCE)])
def test_the_pdf_and_the_web_page_give_the_rented_range(name: str, sentence: str) -> None:
    """One figure, one home: the PDF summary and the web results page say the same range, from
    the plan's figures, which the results JSON carries."""
    r = _sized(DATA / name)
    assert sentence in _words(render_html(r))
    assert sentence in _web(DATA / name)
    plan = json.loads(r.to_json())["plan"]
    low, high, bought_low, bought_high = _ends(r)
    assert (plan["cloud_gpus_rented_if_throughput_high"],
            plan["cloud_gpus_rented_if_throughput_low"]) == (low, high)
    assert (plan["gpus_purchased_if_throughput_high"],
            plan["gpus_purchased_if_throughput_low"]) == (bought_low, bought_high)
    assert f"{low}–{high} GPUs rented" in sentence


def test_a_bought_plans_range_is_unchanged() -> None:
    """inputs/frontier-moe-rack.yaml (bought): the line reads as before, on both outputs."""
    path = ROOT / "inputs" / "frontier-moe-rack.yaml"
    sentence = "Range: 576 GPUs bought; 432–720 GPUs if throughput is off by the model's p90 error."
    assert sentence in _words(render_html(_sized(path)))
    assert sentence in _web(path)
    assert "buying alternative" not in _web(path)
