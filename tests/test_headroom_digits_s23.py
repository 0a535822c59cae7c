"""One headroom, one look in the PDF, the terminal and the web page (session 23): the PDF
shows every headroom of a proposal to one precision (Formatter.headroom_digits over the
headrooms it shows, alternatives.shown_headrooms); the terminal and the web page printed
each figure to its own, so the university's transcript pool read "26 %" in the PDF and
"25.9%" in `llmsizer size`. The figures come from the sizing of the shipped test account."""

from __future__ import annotations

import html as html_lib
import re
from functools import cache
from pathlib import Path

from fastapi.testclient import TestClient
from rich.console import Console

from llmsizer.documents.proposal import render_html
from llmsizer.documents.proposal.alternatives import shown_headrooms
from llmsizer.documents.proposal.format import Formatter
from llmsizer.documents.textreport import print_result
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result
from llmsizer.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
UNIVERSITY = ROOT / "tests/data/gbp-university-r22.yaml"


@cache
def _sized() -> Result:
    return size(load(UNIVERSITY))


def _words(html: str) -> str:
    """A page's words: tags removed, white space folded, no-break spaces as spaces."""
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", html)).replace("\xa0", " ").split())


def test_the_university_pool_headroom_reads_the_same_in_pdf_cli_and_web() -> None:
    result = _sized()
    pool = result.plan.pools[0]
    assert pool.workloads == ["Transcript summarisation (overnight batch)"]
    h = pool.headroom_achieved
    # 16 replicas where 12.7 carry the peak; the same with a node down (the spare restarts it)
    assert round(h, 4) == round(pool.headroom_after_node_loss, 4) == 0.2586
    fine, coarse = f"{h:.1%}", f"{h:.0%}"
    assert (fine, coarse) == ("25.9%", "26%")
    # the chat pool (256 %) and alternatives up to 611 % reach 100 %: whole percents throughout
    shown = shown_headrooms(result, load_catalog())
    assert max(shown) > 1 and Formatter.headroom_digits(shown) == 0
    # the PDF (the rule's home): the plan table's row and the headroom section's sentence
    pdf = _words(render_html(result))
    assert "25.9 %" not in pdf
    assert "achieved 26 % at peak" in pdf
    # the terminal: the options table and the plan line
    con = Console(width=400, record=True, color_system=None)
    print_result(result, con)
    cli = " ".join(con.export_text().split())
    assert fine not in cli
    assert "headroom 26%, 26% with a node down" in cli
    # the web page: the plan section's sentence (the PDF's words) and the node groups' table
    with TestClient(create_app()) as client:
        page = client.post("/upload/yaml", files={"file": (UNIVERSITY.name,
                                                           UNIVERSITY.read_bytes())})
    assert page.status_code == 200
    plan = page.text[page.text.index('<section id="plan">'):]
    web = _words(plan[:plan.index("</section>")])
    assert "25.9 %" not in web
    assert re.search(r"headroom 26 % at peak with .*: headroom 26 %, and peak demand", web), web


def test_the_terminal_heads_the_batch_column_as_the_web_page_does() -> None:
    """The options table's "batch" is the batch at peak (decode.py batch_served: 9.71 for the
    university's transcript job, against a batch limit of 65, 67 before session 25);
    the web page heads it "Batch at
    peak". The terminal stacks the words, so the column stays five characters wide."""
    result = _sized()
    best = result.workloads[0].best
    assert best is not None
    assert (best.values["batch_per_replica"], round(best.values["batch_served"], 2)) == (65, 9.71)
    con = Console(width=100, record=True, color_system=None)
    print_result(result, con)
    lines = con.export_text().splitlines()
    head = lines[2:5]  # under the title, the header's three lines
    ends = [ln.index(word) + len(word) for ln, word in zip(head, ("batch", "at", "peak"),
                                                            strict=True)]
    assert len(set(ends)) == 1, head  # one right-aligned column
    star = next(ln for ln in lines if ln.lstrip().startswith("★"))
    assert star[ends[0] - 4:ends[0]] == "9.71"  # the batch at peak under it
