"""Session 23: the web app on a phone (390 × 844) and a presales engineer's look at every
page at 390 and 1,280 px, in Debian's Chromium (test_web_browser.py's fixtures; these tests
FAIL without it, as those do) and FastAPI's TestClient.

- the estimate page's roofline was drawn 576 px wide only: on a phone its box scrolled
  sideways (320 px of 576 shown, the legend cut at "Roof: banc"); it is drawn at a phone's
  width too (documents/charts.py PHONE_WIDTH_IN, as the results' charts), its legend above
  the plot (inside it, it lay over the ridge line at every width);
- the options tables listed 40 rows a workload (inputs/example.yaml: 80 cards, the phone's
  page 24,000 px long): they show the best 8 that meet the targets and the recommended one,
  the rule of `llmsizer size` (documents/textoptions.py TOP), on every width, and a button
  shows all of them;
- what the screenshots showed: the estimate page's GPU list cut ("NVIDIA H200 SXN"); the
  Notes box as tall as the three-line box beside it, its one line cut in its middle; the
  streams sentence's "Batch jobs: Its 256 streams"; on a phone the recommendation 4,000 to
  6,000 px down, under the whole form, with no way there but scrolling; the estimate page's
  roofline words (arithmetic intensity, ridge point) and TTFT, ITL, TP with no meaning on it.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from test_web_browser import SHOTS, browser, click_to_new_page, server  # noqa: F401  (fixtures)

from llmsizer.documents.textoptions import TOP
from llmsizer.documents.textretrieval import best_retrieval
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import slugify
from llmsizer.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]


def _page(browser: Any, width: int) -> Any:  # noqa: F811
    return browser.new_page(viewport={"width": width, "height": 844 if width < 500 else 900})


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as c:
        yield c


@pytest.mark.parametrize("width", [390, 1280])
def test_the_estimate_pages_roofline_fits_the_window(server: str, browser: Any,  # noqa: F811
                                                    width: int) -> None:
    """At 390 px the chart's box scrolled sideways (clientWidth 320, scrollWidth 576); the
    phone's drawing (3.3 inches, 317 px) is shown there, the page's (6 inches) elsewhere."""
    page = _page(browser, width)
    page.goto(server + "estimate")
    page.wait_for_selector("#estimate-figures .chart-box")
    boxes = page.evaluate("""() => [...document.querySelectorAll('.chart-box')]
        .map(b => [b.clientWidth, b.scrollWidth])""")
    assert boxes and all(scroll <= client for client, scroll in boxes), boxes
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shown = [b for b in (page.locator("#estimate-figures img.chart").nth(i).bounding_box()
                         for i in range(page.locator("#estimate-figures img.chart").count()))
             if b and b["width"] > 0]
    assert len(shown) == 1, shown  # one drawing shown: the one for this width
    img = shown[0]
    assert img["x"] >= 0 and img["x"] + img["width"] <= width, img
    # drawn for the width, not shrunk: 3.3 inches (317 px) on a phone, 6 inches (576) on a laptop
    assert round(img["width"]) == (317 if width == 390 else 576), img
    page.locator("#estimate-figures .chart-box").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"estimate-roofline-{width}px.png"))


def test_the_rooflines_legend_is_above_the_plot(client: TestClient) -> None:
    """The legend sat inside the plot, lower right, over the ridge line (1,280 px) and past
    the chart's edge (390 px): each drawing now sets it above the axes, every key inside the
    drawing's width."""
    import base64

    page = client.get("/estimate").text
    svgs = [base64.b64decode(d).decode() for d in re.findall(
        r'<img class="chart" alt="Roofline[^"]*" src="data:image/svg\+xml;base64,([^"]+)"', page)]
    assert len(svgs) == 2
    keys = ("Roof: bandwidth, then compute ceiling", "Ridge point 412 FLOP/B",
            "Operating point (batch 16): 30.8 FLOP/B, 72.0 TFLOP/s")
    for svg, width_pt in zip(svgs, (432.0, 237.6), strict=True):  # 6 and 3.3 inches
        assert f'width="{width_pt:g}pt"' in svg
        texts = {t: (float(x), float(y)) for x, y, t in re.findall(
            r'<text style="[^"]*" x="([0-9.]+)" y="([0-9.]+)"[^>]*>([^<]*)</text>', svg)}
        # the top of the axes: the value axis's highest label ("10,000") is centred on it
        top = min(y for t, (x, y) in texts.items() if t == "10,000" and x < 60)
        for words in keys:
            x, y = texts[words]
            assert 0 <= x < width_pt and y < top - 5, (words, x, y, top)


def _visible_rows(page: Any, table: str) -> int:
    return int(page.evaluate(f"""() => [...document.querySelectorAll('#{table} tr')]
        .filter(r => !r.classList.contains('head') && getComputedStyle(r).display !== 'none'
                     && r.getBoundingClientRect().height > 0).length"""))


@pytest.mark.parametrize("width", [390, 1280])
def test_the_options_show_the_best_eight_until_all_are_asked_for(
        server: str, browser: Any, width: int) -> None:  # noqa: F811
    """inputs/example.yaml: 40 option rows a workload (58 options each), on a phone 80 cards,
    the page 24,349 px long. Now each table shows the best 8 that meet the targets and the
    recommended one (documents/textoptions.py TOP, as `llmsizer size`), and "Show all" its
    40 rows; the choice holds while the form is changed. The same rule at 1,280 px."""
    result = size(load(ROOT / "inputs" / "example.yaml"))
    want = []
    for w in result.workloads:
        feasible = [o.id for o in w.options if o.feasible]
        want.append(len(set(feasible[:TOP]) | {w.recommended}))
    assert want == [8, 8] and [len(w.options) for w in result.workloads] == [58, 58]
    page = _page(browser, width)
    page.goto(server)
    page.set_input_files("#yaml-file", str(ROOT / "inputs" / "example.yaml"))
    click_to_new_page(page, "#upload-yaml button")
    page.wait_for_selector("#options-contract-rag")
    ids = ["options-internal-assistant", "options-contract-rag"]  # by name (render.table_ids)
    assert [_visible_rows(page, t) for t in ids] == want
    assert page.locator("#options-internal-assistant tr.rec").is_visible()
    button = page.locator('button.show-all[aria-controls="options-internal-assistant"]')
    assert button.inner_text() == "Show the first 40 of 58 options"
    button.click()
    assert _visible_rows(page, ids[0]) == 40 and _visible_rows(page, ids[1]) == 8
    assert button.get_attribute("aria-expanded") == "true"
    assert button.inner_text() == "Show the best 8 only"
    # a change of the form swaps the results in anew: the table asked for stays whole
    headline = page.locator("#headline").inner_text()
    page.fill('[name="workloads[0].concurrent_users"]', "300")
    page.wait_for_function("h => document.querySelector('#headline') && "
                           "document.querySelector('#headline').innerText !== h",
                           arg=headline, timeout=20000)
    page.wait_for_timeout(300)  # app.js re-applies the choice after htmx settles
    # the other table its best ones: 8, or 9 where the plan's choice is not among them (it
    # is not, at 300 users of the first workload, for the second one: pooled anew)
    best = page.evaluate("() => document.querySelectorAll("
                         "'#options-contract-rag tr:not(.head):not(.more)').length")
    assert _visible_rows(page, ids[0]) == 40 and _visible_rows(page, ids[1]) == best
    assert best in (TOP, TOP + 1)
    page.locator('button.show-all[aria-controls="options-internal-assistant"]').click()
    assert _visible_rows(page, ids[0]) in (TOP, TOP + 1)
    page.screenshot(path=str(SHOTS / f"options-best-{width}px.png"), full_page=True)


def test_a_retrieval_workloads_gpus_follow_the_same_rule(client: TestClient) -> None:
    """inputs/rag-knowledge-base.yaml: each retrieval workload listed its 24 candidate GPUs;
    the rows shown first are `llmsizer size`'s (textretrieval.best_retrieval: the 8 cheapest
    that meet the targets and the recommended one), every other row marked to show on request,
    the language model's table too (its recommended row never hidden)."""
    account = ROOT / "inputs" / "rag-knowledge-base.yaml"
    up = client.post("/upload/yaml", files={"file": (account.name, account.read_bytes())})
    assert up.status_code == 200
    result = size(load(account))
    rented = result.deployment.recommended == "cloud"
    section = re.search(r'<section id="options">(.*?)</section>', up.text, re.S)
    assert section
    for rw in result.retrieval:
        tid = "retrieval-options-" + slugify(rw.name)  # by name (render.table_ids)
        table = re.search(rf'<table id="{tid}" class="([^"]*)">(.*?)</table>',
                          section.group(1), re.S)
        assert table and "best-only" in table.group(1).split()
        rows = re.findall(r"<tr\b([^>]*)>", table.group(2))[1:]  # less the heading
        assert len(rows) == len(rw.options) == 24
        shown = [r for r in rows if 'class="more"' not in r]
        assert len(shown) == len(best_retrieval(rw, rented, TOP)) <= TOP + 1
        assert f'aria-controls="{tid}"' in section.group(1)
    lm = re.search(r'<table id="options-knowledge-assistant" class="options best-only">(.*?)</table>',
                   section.group(1), re.S)
    assert lm and lm.group(1).count('class="more"') == 40 - 8
    assert '<tr class="rec">' in lm.group(1)


def test_the_estimate_pages_gpu_is_never_cut_on_a_phone(
        server: str, browser: Any) -> None:  # noqa: F811
    """At 390 px the GPU list had half of the form's row: "NVIDIA H200 SXM" read "NVIDIA H200
    SXN". The model and the GPU take a row each, as in the account form."""
    page = _page(browser, 390)
    page.goto(server + "estimate")
    for select in ("#model", "#gpu"):
        room, text = page.locator(select).evaluate("""s => {
            const c = document.createElement('canvas').getContext('2d');
            const st = getComputedStyle(s); c.font = st.fontSize + ' ' + st.fontFamily;
            return [s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - 20,
                    c.measureText(s.selectedOptions[0].text).width]; }""")
        # the room less both paddings and the list's arrow: 120 px for 125 of "NVIDIA H200 SXM"
        assert text <= room, (select, text, room)


def test_a_one_line_box_keeps_its_height_beside_a_taller_one(
        server: str, browser: Any) -> None:  # noqa: F811
    """The Notes box sat beside the reasons' three-line box and took its height (62 px, the
    customer's name 30): inputs/enterprise-multi.yaml's note showed one line cut in the middle
    of a tall box, as if the box held nothing more."""
    page = _page(browser, 1280)
    page.goto(server)
    name = page.locator('[name="account.name"]').bounding_box()
    notes = page.locator('[name="account.notes"]').bounding_box()
    reasons = page.locator('[name="account.reasons"]').bounding_box()
    assert name and notes and reasons
    assert reasons["height"] > name["height"] + 20  # the three-line box beside it
    assert abs(notes["height"] - name["height"]) <= 1, (notes, name)
    assert abs(notes["y"] - reasons["y"]) <= 1  # still on the same row, at its top


def test_the_streams_sentence_follows_the_workloads_name(client: TestClient) -> None:
    """The batch quick start: "Batch jobs: Its 256 streams are spread over ..." (the PDF's
    callout sentence, which opens a paragraph there, after the name and a colon). The name is
    now a run-in heading and the sentence reads as the CLI and the PDF write it
    (tests/test_streams_hint_r22.py)."""
    page = client.get("/?start=batch").text
    hint = re.search(r'<p class="load streams-hint">(.*?)</p>', page)
    assert hint and hint.group(1).startswith(
        "<strong>Batch jobs.</strong> Its 256 streams are spread over "), hint


@pytest.mark.parametrize("width", [390, 1280])
def test_a_phone_has_a_way_to_the_recommendation(server: str, browser: Any,  # noqa: F811
                                                 width: int) -> None:
    """On a phone the results follow the whole form: the recommendation was 4,700 px down the
    quick start's page. A link under the quick start leads there (not shown beside the form)."""
    page = _page(browser, width)
    page.goto(server)
    link = page.locator("#to-results")
    if width > 640:
        assert not link.is_visible()
        return
    top = page.locator("#recommendation").bounding_box()
    assert top and top["y"] > 3000  # under the whole form
    assert link.is_visible() and link.get_attribute("href") == "#results"
    link.click()
    page.wait_for_function("() => document.querySelector('#results').getBoundingClientRect().top < 100")
    box = page.locator("#recommendation").bounding_box()
    # a page scrolls by whole pixels and its boxes' heights are fractional: the quick start's
    # wording of session 25 left the top at -0.5 px, in view
    assert box and -1 < box["y"] < 844


def test_the_estimate_page_says_what_its_terms_mean(client: TestClient) -> None:
    """The estimate page spoke of a roofline, arithmetic intensity, ridge point, TTFT, ITL
    and tensor parallel with no meaning anywhere on it (the account page has its glossary).
    Now it has one: the roofline's words, and the proposal's glossary entries it uses."""
    from llmsizer.documents.proposal.glossary import GLOSSARY

    page = client.get("/estimate").text
    box = re.search(r'<section id="glossary">(.*?)</section>', page, re.S)
    assert box
    terms = [re.sub(r"\s+", " ", t) for t in re.findall(r"<dt>(.*?)</dt>", box.group(1), re.S)]
    assert terms[:4] == ["Roofline", "Arithmetic intensity (FLOP per byte)", "Ridge point",
                         "Operating point"]
    meaning = {t.term: t.meaning for t in GLOSSARY}
    for term in ("TTFT", "Inter-token latency", "Tensor parallelism (TP)", "KV cache", "Batch"):
        assert term in terms
        assert html_lib.unescape(box.group(1)).count(meaning[term]) == 1, term
    # the ridge point as the chart's legend gives it: the GPU's peak over its bandwidth
    assert "peak TFLOP/s divided by its memory bandwidth" in box.group(1)
