"""The GPUs bought, split the same way on every surface (brief words16): the PDF said
"Buy 3 × Dell PowerEdge XE9685L (24 GPUs, 23 in use)" for inputs/enterprise-multi.yaml where
the CLI said "23 used; 8 on standby" -- 15 GPUs run replicas, 8 wait on standby to take over a
failed node's replicas, 1 is idle (the servers come with 8 GPUs each). A reader took "23 in
use" as 23 serving. Now the PDF's plan line and summary, the CLI and the web page say
"15 serving, 8 on standby, 1 idle", from the JSON's figures (Totals.gpus_serving/standby/idle,
the plan's group_pool_gpus/group_standby_gpus/group_idle_gpus), which add up to the GPUs
bought; the glossary says what each word means."""

from __future__ import annotations

import html as html_lib
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest
from rich.console import Console

from llmsizer.documents.proposal.glossary import GLOSSARY
from llmsizer.documents.proposal.render import render_html, render_pdf
from llmsizer.documents.textreport import print_result
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result
from llmsizer.web.account import update_html

ROOT = Path(__file__).resolve().parents[1]
# + an account whose retrieval servers run on a rack's idle GPUs (review round 20), and one
# whose reranker runs on its embedder's idle GPUs (review round 21)
ACCOUNTS = [*sorted((ROOT / "inputs").glob("*.yaml")),
            ROOT / "tests" / "data" / "gbp-retailer-rack.yaml",
            ROOT / "tests" / "data" / "cad-l40s-rag-r21.yaml"]


@cache
def _sized(path: Path) -> Result:
    return size(load(path))


def _words(serving: float, standby: float, idle: float, retrieval: float = 0) -> str:
    """The split as the customer reads it; every part named when any GPU does not serve."""
    parts = [(serving, "serving"), (retrieval, "running retrieval"), (standby, "on standby"),
             (idle, "idle")]
    return ", ".join(f"{int(n):,} {w}" for n, w in parts if n)


def cli_text(r: Result) -> str:
    con = Console(record=True, width=400, color_system=None)
    print_result(r, con)
    return con.export_text()


def _flat(text: str) -> str:
    """The page's words: tags as spaces, no space before a comma (the PDF's KPI keeps each
    part of the split in a span of its own, so a part never breaks over two lines)."""
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", text))).replace(" ,", ",")


@pytest.mark.parametrize("account", ACCOUNTS, ids=lambda p: p.stem)
def test_the_split_adds_up_and_every_surface_says_the_jsons_figures(account: Path) -> None:
    r = _sized(account)
    j = r.model_dump(mode="json")
    t = j["totals"]
    assert t["gpus_serving"] + t["gpus_standby"] + t["gpus_idle"] == t["gpus_purchased"]
    assert t["gpus_serving"] + t["gpus_standby"] == t["gpus_used"]
    groups = [(g["gpus_purchased"], g["values"]) for g in j["plan"]["node_groups"]]
    for bought, v in groups:
        assert v["group_pool_gpus"] + v["group_standby_gpus"] + v["group_idle_gpus"] == bought
    for g in j["plan"]["retrieval_groups"]:
        if g["shares_with"] is None:
            assert g["replicas"] + g["standby_gpus"] + g["idle_gpus"] == g["gpus_purchased"]
    total = _words(t["gpus_serving"], t["gpus_standby"], t["gpus_idle"])
    # a group's idle GPUs that run retrieval servers are told apart, so the groups add up to
    # the total (page 2 said "128 serving, 16 idle" under the cover's "133 serving, 11 idle")
    lent = [sum(g["replicas"] for g in j["plan"]["retrieval_groups"]
                if g["shares_with"] == group["id"]) for group in j["plan"]["node_groups"]]
    per_group = [_words(v["group_pool_gpus"], v["group_standby_gpus"],
                        v["group_idle_gpus"] - n, n) for (_, v), n in zip(groups, lent, strict=True)]
    # every retrieval replica serves: on its own nodes, a language-model group's (lent) or
    # an earlier retrieval group's idle GPUs (review round 21)
    assert sum(v["group_pool_gpus"] for _, v in groups) + sum(lent) + sum(
        g["replicas"] for g in j["plan"]["retrieval_groups"]
        if g["shares_with"] is None or g["shares_with"].startswith("retrieval-")
    ) == t["gpus_serving"]
    hosts = {g["id"]: g for g in j["plan"]["retrieval_groups"]}
    for g in j["plan"]["retrieval_groups"]:  # a retrieval group's own nodes, as it is lent
        n = sum(x["replicas"] for x in j["plan"]["retrieval_groups"] if x["shares_with"] == g["id"])
        if n:
            words = _words(g["replicas"], g["standby_gpus"], g["idle_gpus"] - n, n)
            assert f"({hosts[g['id']]['gpus_purchased']:,} GPUs bought: {words})" in cli_text(r)
    proposal = _flat(render_html(r))
    con = Console(record=True, width=400, color_system=None)
    print_result(r, con)
    cli = con.export_text()
    web = _flat(update_html(account.read_text(encoding="utf-8")))
    for text in (proposal, cli, web):
        assert " in use" not in text
    if t["gpus_standby"] == t["gpus_idle"] == 0:
        for text in (proposal, cli, web):  # every GPU serves: no split is said
            assert not re.search(r"\d serving|\d on standby|\d idle\b", text)
        return
    assert f"GPUs bought: {total}" in proposal  # the summary's figure
    assert f"GPUs bought ({total})" in cli  # the CLI's total
    assert f"Of the {t['gpus_purchased']:,} GPUs: {total}." in web
    for (bought, v), words in zip(groups, per_group, strict=True):
        # a group whose GPUs all serve says no split (review round 21: the account's one idle
        # GPU is on its embedding server, not on the chat server)
        if v["group_standby_gpus"] or v["group_idle_gpus"]:
            assert f"({bought:,} GPUs: {words})" in proposal  # the plan's lead line
            assert f"({bought:,} GPUs bought: {words}" in cli
            assert f"{bought} {words}" in web  # the node groups' table


def test_enterprise_multi_reads_15_serving_8_on_standby_1_idle_in_the_pdf(tmp_path: Path
                                                                          ) -> None:
    """The case of the brief, read back from the PDF itself."""
    r = _sized(ROOT / "inputs" / "enterprise-multi.yaml")
    assert (r.totals.gpus_purchased, r.totals.gpus_serving, r.totals.gpus_standby,
            r.totals.gpus_idle) == (24, 15, 8, 1)
    pdf = tmp_path / "p.pdf"
    render_pdf(r, pdf)
    text = re.sub(r"\s+", " ", subprocess.run(["pdftotext", str(pdf), "-"], check=True,
                                              capture_output=True, text=True).stdout)
    assert "Buy 3 × Dell PowerEdge XE9685L (24 GPUs: 15 serving, 8 on standby, 1 idle)" in text
    assert re.search(r"GPUs bought: 15 serving, 8 on standby, 1 idle", text, re.I)
    assert "in use" not in text
    # the glossary says what the words mean, once each
    assert "Serving, on standby, idle" in text


def test_the_glossary_defines_standby_and_idle_once() -> None:
    """'standby' and 'idle' mean one thing each: the N+1 term and the split's own term."""
    with_standby = [t.term for t in GLOSSARY if "standby" in t.meaning]
    assert with_standby == ["N+1", "Serving, on standby, idle"]
    assert [t.term for t in GLOSSARY if " idle " in t.meaning] == ["Serving, on standby, idle"]
