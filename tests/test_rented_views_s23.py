"""A rented plan shown as rented (session 23, brief A).

The insurer (tests/data/eur-insurer.yaml) is recommended as rented: 11 x H200 in 8 cloud
instances, EUR 165,617 a year (the H200 offer is sold by the GPU: one instance per replica,
one spare instance per pool). On c5fbadb:

1. every options table showed each option bought: the recommended Claims row read "8
   replicas, 8 GPUs, 2 nodes, 200 %" while the plan rents its 4 replicas and a spare instance
   (5 GPUs) at 50 %;
2. the pool lines read "4 replicas (0 spare) ... 50% with a node down" beside the spare
   instance the plan rents for it, and the university's (tests/data/gbp-university-r22.yaml,
   bought) "16 replicas (0 spare)" beside its node group's 4 GPUs on standby;
3. "renting the same GPUs in the cloud" where renting takes 11 GPUs and buying 16;
4. "Sized alone the workloads would rent 11 GPUs, cloud EUR 181 k/yr" against the plan's 11
   GPUs at EUR 166 k, unexplained: the rent is the same (11 x EUR 1.558337857056 an hour x
   8,760 h = EUR 150,161.44 both ways); the EUR 15,456 is the storage line (costs.py
   annual_storage: nodes x TB per node x price), priced per server a purchase would need, 4
   for the workloads alone and 2 for the plan (EUR 7,728 each).

Merged with session 23's group spare (tests/test_rented_spares_s23.py): the plan rents one
spare instance for its node group, of its widest replica's 2 GPUs, shared by both pools: 10
H200 in 7 instances, EUR 151,966; sized alone each workload keeps its own (11 GPUs), so
storage is only a part of the difference. Session 24: the cloud's storage is per GPU rented
(costs.py annual_cloud_storage), EUR 9,660 for the plan's 10 GPUs: EUR 146,170 a year.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from _rented import INSURER, terminal, words

from llmsizer.documents.proposal.deployment import deployment_context
from llmsizer.documents.proposal.format import NBSP, Formatter
from llmsizer.documents.proposal.render import render_html
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

ROOT = Path(__file__).resolve().parents[1]
UNIVERSITY = ROOT / "tests" / "data" / "gbp-university-r22.yaml"


def test_the_rented_figures_of_an_option_are_its_pools_as_run(insurer: Result) -> None:
    """calculations/rented.py: the recommended option as rented equals its single-workload
    pool as run (plan_node_loss.py pool_replicas_as_run, pool_headroom_as_run): Claims 4
    replicas (demand 8 sequences / batch 3 = 2.67, x 1.2 headroom = 3.2 -> 4), 4 / 2.67 - 1
    = 50 %, 4 + 1 spare instance of 1 GPU = 5 GPUs in 5 instances; the chat 2 replicas of TP2
    at 28.6 %, 2 x 2 + 2 = 6 GPUs in 3 instances. Bought, the same options read 8 replicas
    at 200 % and 4 replicas at 157 % (a node's worth of spares)."""
    assert insurer.deployment.recommended == "cloud"
    pools = {p.workload_indices[0]: p for p in insurer.plan.pools}
    expected = {0: (4, 0.5, 5, 5, 8, 2.0), 1: (2, 2 / 1.5555555555555556 - 1, 6, 3, 4, None)}
    for i, w in enumerate(insurer.workloads):
        best = w.best
        assert best is not None
        v, p = best.values, pools[i]
        replicas, headroom, gpus, instances, bought, bought_headroom = expected[i]
        assert v["rented_replicas"] == replicas == p.replicas == p.values["pool_replicas_as_run"]
        assert v["rented_headroom"] == pytest.approx(headroom, abs=1e-12)
        assert v["rented_headroom"] == pytest.approx(p.headroom_achieved, abs=1e-12)
        assert v["rented_spare_replicas"] == 0 and v["rented_spare_instances"] == 1
        assert (v["cloud_gpus_rented"], v["cloud_instances"]) == (gpus, instances)
        assert v["replicas"] == bought  # the bought figure is still there, labelled
        if bought_headroom is not None:
            assert v["headroom_achieved"] == pytest.approx(bought_headroom)


def test_the_terminal_table_shows_the_options_as_rented(insurer: Result) -> None:
    text = terminal(insurer)
    claims = text[:text.index("Agent-assist chat")]
    assert "GPUs" in claims and "rented" in claims and "instances" in claims
    star = next(line for line in claims.splitlines() if "★" in line)
    cells = [c.strip() for c in star.split("│")[2:-1]]
    # batch, tok/s, TTFT, replicas running, GPUs rented, cloud instances, headroom, cloud/yr
    # (session 24: 5 x 1.558337857056 x 8,760 = 68,255.20 + its 5 GPUs' storage, 5 / 8 x 10 TB
    # x EUR 64.40 x 12 = 4,830, where 2 servers' 15,456 made it 83.7 k)
    assert cells == ["3", "20.8", "913", "4", "5", "5", "50%", "73.1 k"]
    assert "Figures as rented in the cloud" in text


def test_the_pool_lines_say_where_the_spare_is(insurer: Result) -> None:
    text = " ".join(terminal(insurer).split())
    assert ("Plan, rented in the cloud: 10 × NVIDIA H200 SXM in 7 cloud instances (6 serving, "
            "1 spare on standby)") in text
    # each pool's batch named: its limit and the batch at peak (session 23); the chat pool's
    # 28.57 % headroom in whole percents as the PDF gives it (an alternative holds 200 %)
    assert ("4 replicas, batch limit 3, 3 at peak; spare: the group's instance on standby "
            "(2 GPUs), shared by its pools; headroom 50%, 50% with an instance down") in text
    assert ("2 replicas, batch limit 63, 63 at peak; spare: the group's instance on standby "
            "(2 GPUs), shared by its pools; headroom 29%, 29% with an instance down") in text
    assert "(0 spare)" not in text and "with a node down" not in text


def test_a_bought_pool_line_names_the_node_groups_standby_gpus() -> None:
    """The university buys 37 GPUs in 10 R760xa: 33 serving, 4 on standby for the node group
    (group_standby_gpus), no spare replica of a pool's own."""
    r = size(load(UNIVERSITY))
    assert r.deployment.recommended == "on_prem"
    assert r.plan.node_groups[0].values["group_standby_gpus"] == 4
    text = " ".join(terminal(r).split())
    # its 25.86 % headroom in whole percents, as the PDF (the chat pool holds 256 %)
    # batch limit 65 since the weights audit (Llama 3.3 70B FP8: 72.7 GB; was 67)
    assert ("16 replicas, batch limit 65, 9.71 at peak; spare: the node group's 4 GPUs on "
            "standby; headroom 26%, 26% with a node down") in text
    assert "(0 spare)" not in text
    html = words(render_html(r))
    # the PDF plan table's replicas cell, two lines at most (review round 24)
    assert "16 standby: 4 GPUs" in html


def test_renting_says_what_it_rents(insurer: Result) -> None:
    """10 GPUs rented, 16 bought: never "the same GPUs"."""
    t = insurer.totals
    assert (t.cloud_gpus_rented, t.gpus_purchased) == (10, 16)
    lead = deployment_context(insurer, Formatter("EUR"))["deployment"]["lead"].replace(NBSP, " ")
    assert lead.startswith("Recommended way to run it: renting 10 GPUs in the cloud "
                           "(committed three-year contract), at EUR 146 k a year.")
    text = " ".join(terminal(insurer).split())
    assert "same GPUs in the cloud" not in text and "renting 10 GPUs in the cloud" in text
    assert "renting the same GPUs" not in words(render_html(insurer))


def test_the_pdf_shows_the_options_and_pools_as_rented(insurer: Result) -> None:
    html = words(render_html(insurer))
    alts = html[html.index("4 Alternatives compared"):html.index("5 Headroom and resilience")]
    assert "GPUs rented Instances Headroom rented On-prem per year, if bought" in alts
    # the recommended Claims row: 3 users a replica, 20.8 tok/s, 913 ms, 5 GPUs, 5 instances, 50 %
    # EUR 341 k if bought: session 23 prices the XE9680's 2 x 200 GbE front end (339 k before)
    assert "3 20.8 tok/s 913 ms 5 5 50 % EUR 341 k EUR 73.1 k" in alts  # 83.7 k before s24
    plan = html[html.index("Rent in the cloud"):html.index("Saving:")]
    assert "(6 serving, 1 spare on standby)" in plan
    assert "Replicas (spare) GPUs serving" in plan
    # "shared standby": two lines in the column, the table's note says what it is (round 24)
    assert "4 shared standby 4" in plan and "2 shared standby 4" in plan
    summary = html[:html.index("4 Alternatives compared")]
    assert "4 replicas of 1 × NVIDIA H200 SXM" in summary
    assert "8 replicas of 1 × NVIDIA H200 SXM" not in summary


def test_the_workbook_options_sheet_gives_both(insurer: Result, tmp_path: Path) -> None:
    """Values (the sheet's figures are the engine's at generation): the bought ones and, beside
    the cloud's cost, the rented ones, each under its own heading."""
    path = tmp_path / "insurer.xlsx"
    write_workbook(insurer, path)
    ws = openpyxl.load_workbook(path)["Options"]
    heads = [c.value for c in ws[4]]
    # an option's code is the same for both workloads (GPU, precisions, TP, platform)
    rows = {(r[0], r[2]): dict(zip(heads, r, strict=True))
            for r in ws.iter_rows(min_row=5, values_only=True) if r[2]}
    for w in insurer.workloads:
        assert w.best is not None
        row = rows[(w.name, w.best.id)]
        v = w.best.values
        assert row["Replicas"] == v["replicas"] and row["GPUs"] == v["gpus"]
        assert row["Headroom at peak"] == pytest.approx(v["headroom_achieved"])
        assert row["Replicas running, rented"] == v["rented_replicas"]
        assert row["GPUs rented"] == v["cloud_gpus_rented"]
        assert row["Cloud instances rented"] == v["cloud_instances"]
        assert row["Headroom at peak, rented"] == pytest.approx(v["rented_headroom"])
    first = insurer.workloads[0]
    assert first.best is not None
    claims = rows[(first.name, first.best.id)]
    assert (claims["Replicas"], claims["Replicas running, rented"], claims["GPUs rented"],
            claims["Cloud instances rented"]) == (8, 4, 5, 5)


def test_the_web_page_rents_the_options_and_names_the_spare() -> None:
    from fastapi.testclient import TestClient

    from llmsizer.web.app import create_app

    with TestClient(create_app()) as client:
        page = client.post("/upload/yaml", files={"file": (
            "insurer.yaml", INSURER.read_bytes())}).text
    page = page.replace("&nbsp;", " ").replace(NBSP, " ")
    options = page[page.index('<section id="options">'):]
    claims = options[:options.index("</table>")]
    assert "GPUs rented" in claims
    star = claims[claims.index('class="rec"'):]
    star = star[:star.index("</tr>")]
    assert '<td class="n">5</td>' in star  # 5 GPUs rented, not the 8 bought
    plan = words(page[page.index('<section id="plan">'):page.index('<section id="options">')])
    assert "With one instance down" in plan
    assert ("4 replicas of 1 × NVIDIA H200 SXM, FP8 weights, FP8 KV cache; spare: the group's "
            "instance on standby (2 GPUs), shared by its pools; headroom 50") in plan
    # the pool's one-down sentence (the web's words since session 23's RAG fix) says instance
    assert "With the instance that hurts it most down" in plan
    assert "node down" not in plan and "nodes up" not in plan


def test_libreoffice_recalculates_the_rented_rows_like_the_engine(insurer: Result,
                                                                   tmp_path: Path) -> None:
    """The rented rows are formulas on the TCO sheet (one column per option shown): LibreOffice
    recalculates every formula cell of the insurer's workbook to the engine's value."""
    from test_workbook import libreoffice_check

    book = tmp_path / "insurer.xlsx"
    write_workbook(insurer, book)
    problems, seen, _got = libreoffice_check(insurer, book, tmp_path / "out")
    assert not problems, "\n".join(problems[:20])
    assert {"rented_replicas", "rented_spare_replicas", "rented_spare_instances",
            "rented_headroom"} <= seen
