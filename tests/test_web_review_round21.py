"""Review round 21: the web app as a presales engineer uses it on a phone (390 px), a tablet
(768 px) and a laptop (1,440 px), in Debian's Chromium (test_web_browser.py's fixtures; these
tests FAIL without it, as those do).

- a label that wraps to two lines pushed its box 17 px below the box beside it
  ("Response time (s): sets tokens/s per user" beside "Tokens/s per user" at 390 px,
  "Inter-token latency, 90th percentile (ms)" at 1,440 px, a node's price at 768 px);
- the charts (drawn for the PDF's 6.85-inch column, 658 px) were shrunk to 320 px on a phone:
  their labels 4.4 px high (round 22 draws them at the phone's width);
- "sizing…" sat at the top of the results column: 3,800 px down a phone's page, below the
  whole form, while the field being typed in was on screen.

The web items noticed then (FastAPI's TestClient, one test in the browser):
- the form took the headroom as a fraction ("0.25") while the results say "28 %": every
  fraction of the schema is now shown and typed in percent, the YAML keeping the fraction;
- the recommended option's "Why not" cell read "recommended" ("Why not: recommended" on a
  phone's card);
- an unknown GPU with no id close was told with all 24 GPU names, and "choose another from
  the list" of GPUs that are tick-boxes.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_web_browser import SHOTS, browser, click_to_new_page, server  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[1]

# each grid's rows: the cells that start at the same height, and the top of each one's box
ROWS_JS = """() => {
  const rows = [];
  document.querySelectorAll('.grid').forEach(g => {
    const byTop = {};
    [...g.children].forEach(c => {
      if (c.offsetParent === null) return;
      const box = c.querySelector(
        'input:not([type=hidden]):not([type=checkbox]), select, textarea:not([hidden])');
      if (!box) return;
      const label = c.querySelector('label, span.label');
      const key = Math.round(c.getBoundingClientRect().top);
      (byTop[key] = byTop[key] || []).push({
        field: (c.dataset.field || c.querySelector('[data-field]').dataset.field),
        box: Math.round(box.getBoundingClientRect().top),
        lines: label ? Math.round(label.getBoundingClientRect().height / 17) : 0});
    });
    Object.values(byTop).forEach(r => { if (r.length > 1) rows.push(r); });
  });
  return rows;
}"""


def _page(browser: Any, width: int) -> Any:  # noqa: F811
    return browser.new_page(viewport={"width": width, "height": 844 if width < 500 else 900})


@pytest.mark.parametrize("width", [390, 768, 1440])
def test_the_boxes_of_a_row_line_up_when_a_label_wraps(server: str, browser: Any,  # noqa: F811
                                                       width: int) -> None:
    """The dense chat quick start: in every row of two fields, both boxes start at the same
    height, also where one label takes two lines and the other one."""
    page = _page(browser, width)
    page.goto(server)
    click_to_new_page(page, "#start-chat")
    page.locator("details").evaluate_all("ds => ds.forEach(d => d.open = true)")
    rows = page.evaluate(ROWS_JS)
    uneven = [r for r in rows if len({c["lines"] for c in r}) > 1]
    assert uneven, "no row with a wrapped label beside an unwrapped one: nothing was checked"
    apart = [r for r in rows if max(c["box"] for c in r) - min(c["box"] for c in r) > 1]
    page.screenshot(path=str(SHOTS / f"round21-form-{width}px.png"), full_page=True)
    assert apart == [], apart


def test_a_field_with_a_message_keeps_its_neighbour_in_line(server: str, browser: Any,  # noqa: F811
                                                            ) -> None:
    """A message under one box (0 users) does not move the box beside it, and every row of
    the form still lines up: the field's third row holds the message, shared with its
    neighbour."""
    page = _page(browser, 390)
    page.goto(server)
    click_to_new_page(page, "#start-chat")
    page.fill('[name="workloads[0].concurrent_users"]', "0")
    page.wait_for_selector('[data-field="workloads[0].concurrent_users"] .field-error',
                           timeout=15000)
    users = page.locator('[name="workloads[0].concurrent_users"]').bounding_box()
    way = page.locator('[name="workloads[0].load_as"]').bounding_box()
    assert users and way and abs(users["y"] - way["y"]) <= 1, (users, way)
    apart = [r for r in page.evaluate(ROWS_JS)
             if max(c["box"] for c in r) - min(c["box"] for c in r) > 1]
    assert apart == [], apart


# test_a_phones_charts_keep_their_drawn_size (the PDF's 658 px charts shown at their size in a
# box sliding sideways) is superseded: a phone's charts are drawn at its width since round 22
# (test_review_round22_web.py, test_a_phone_shows_whole_charts_a_laptop_the_pdfs).


@pytest.mark.parametrize("width", [390, 1440])
def test_sizing_shows_where_the_user_is_looking(server: str, browser: Any,  # noqa: F811
                                                width: int) -> None:
    """A change of the users (the field on screen): while the new figures are worked out,
    "sizing…" is shown inside the window, not 3,800 px below it (390 px) or above it (a
    laptop scrolled down to the field)."""
    page = _page(browser, width)
    page.goto(server)
    click_to_new_page(page, "#start-chat")
    held: list[Any] = []
    page.route("**/size", lambda route: held.append(route))
    users = page.locator('[name="workloads[0].concurrent_users"]')
    users.scroll_into_view_if_needed()
    users.fill("400")
    page.wait_for_function("() => document.getElementById('sizing').matches('.htmx-request')",
                           timeout=15000)
    busy = page.locator("#sizing").bounding_box()
    visible = page.evaluate("getComputedStyle(document.getElementById('sizing')).visibility")
    page.screenshot(path=str(SHOTS / f"round21-busy-{width}px.png"))
    for route in held:
        route.continue_()
    assert visible == "visible"
    assert busy and busy["y"] >= 0 and busy["y"] + busy["height"] <= page.viewport_size["height"], busy
    assert busy["x"] >= 0 and busy["x"] + busy["width"] <= width, busy


def test_enter_in_a_field_sizes_and_stays_on_the_page(server: str, browser: Any) -> None:  # noqa: F811
    """Keyboard only: the users typed and Enter pressed. Enter pressed the form's first
    button, the workload's "Use it" (a config.json upload): the page went to /upload/config,
    back at its top, with "choose a config.json file, then press Use it". Now the account
    is sized at once and the page stays where it is."""
    page = _page(browser, 1440)
    page.goto(server)
    click_to_new_page(page, "#start-chat")
    before = page.locator("#headline").inner_text()
    users = page.locator('[name="workloads[0].concurrent_users"]')
    users.focus()
    page.keyboard.press("Control+A")
    page.keyboard.type("2000")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "b => document.querySelector('#headline') && document.querySelector('#headline').innerText !== b",
        arg=before, timeout=15000)
    page.wait_for_timeout(500)  # a navigation, had one started, would have left by now
    assert page.url == server + "?start=chat", page.url
    assert page.locator("#upload-error").count() == 0
    assert int(page.locator("#headline").inner_text().split()[0]) > int(before.split()[0])
    assert page.evaluate("document.activeElement.name") == "workloads[0].concurrent_users"


def test_asking_for_the_pdf_does_not_say_sizing(server: str, browser: Any) -> None:  # noqa: F811
    """The PDF button is in the account form and took its indicator: "sizing…" showed while
    the PDF was asked for, though nothing was being sized; the PDF's own progress follows."""
    page = _page(browser, 390)
    page.goto(server)
    click_to_new_page(page, "#start-chat")
    page.wait_for_selector("#headline")
    held: list[Any] = []
    page.route("**/download/pdf", lambda route: held.append(route))
    page.click("#dl-pdf")
    for _ in range(300):  # until the request is on its way (held here)
        if held:
            break
        page.wait_for_timeout(50)
    assert held
    said = page.evaluate("getComputedStyle(document.getElementById('sizing')).visibility")
    pressed_again = page.locator("#dl-pdf").is_disabled()
    for route in held:
        route.continue_()
    assert said == "hidden"
    assert pressed_again  # one PDF per press: the button rests until the server answers
    page.wait_for_selector("#job", timeout=30000)


@pytest.mark.parametrize(("path", "width"), [("catalog/gpus", 768), ("catalog/gpus", 1024),
                                             ("catalog/models", 768)])
def test_a_catalog_source_is_never_one_word_a_line(server: str, browser: Any,  # noqa: F811
                                                   path: str, width: int) -> None:
    """A source folds anywhere, so the table squeezed its column to 57 px at 768 px: a GPU's
    row was 477 px tall (the median; 310 px at 1,024; a model's 358 px at 768) and the GPU
    sheet 11,900 px long. Its column keeps a few words' width; the page never scrolls
    sideways (a table wider than its panel scrolls inside it)."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(server + path)
    heights = sorted(page.evaluate(
        "() => [...document.querySelectorAll('tr')].slice(1).map(r => r.getBoundingClientRect().height)"))
    median = heights[len(heights) // 2]
    narrowest = page.evaluate("""() => Math.min(...[...document.querySelectorAll('td.source')]
        .map(td => td.getBoundingClientRect().width))""")
    assert narrowest >= 130 and median <= 200, (narrowest, median)
    assert page.evaluate("document.documentElement.scrollWidth") <= width


# ---- the web items noticed in round 21: percent, the recommended option, an unknown GPU ----

EXAMPLE = ROOT / "inputs" / "example.yaml"
# inputs/example.yaml's fractions, as the file writes them and as the form shows them
EXAMPLE_FRACTIONS = {"policy.headroom": (0.25, "25"), "policy.gpu_memory_utilization": (0.9, "90"),
                     "costs.support_rate": (0.1, "10"), "costs.average_load": (0.6, "60"),
                     "workloads[1].prefix_cache_hit": (0.3, "30")}


@pytest.fixture(scope="module")
def client() -> Any:
    from fastapi.testclient import TestClient

    from llmsizer.web.app import create_app

    with TestClient(create_app()) as c:
        yield c


def _at(data: dict[str, Any], path: str) -> Any:
    for part in path.replace("[1]", ".1").split("."):
        data = data[int(part)] if part.isdigit() else data[part]  # type: ignore[assignment]
    return data


def test_every_fraction_of_the_form_is_shown_and_typed_in_percent() -> None:
    """The results say "headroom 28 %"; the form asked "Headroom" and showed 0.25. Every field
    the schema states as a fraction (its unit) now says % in its label, shows its default in
    percent, and its help no longer gives the fraction's example."""
    from llmsizer.web import forms, percent

    fractions = set(percent.FRACTIONS)
    assert fractions == {
        "policy.headroom", "policy.gpu_memory_utilization", "policy.mbu", "policy.mfu",
        "costs.support_rate", "costs.average_load", "workloads[].prefix_cache_hit"}
    for path in percent.FRACTIONS:
        assert "%" in forms.FIELDS_BY_PATH[path].label, path
    defaults = {p: forms.FIELDS_BY_PATH[p].default for p in sorted(percent.FRACTIONS)}
    # the schema's defaults: 0.6, 0.1, 0.9, 0.25, (none), (none), 0.0
    assert defaults == {"costs.average_load": "60", "costs.support_rate": "10",
                        "policy.gpu_memory_utilization": "90", "policy.headroom": "25",
                        "policy.mbu": "", "policy.mfu": "", "workloads[].prefix_cache_hit": "0"}
    assert "0.25" not in forms.FIELDS_BY_PATH["policy.headroom"].help
    # typed: '25' -> 0.25, '12.5 %' -> 0.125, 0.1 shown as 10 (no binary tail)
    assert forms.form_to_data([("policy.headroom", "12.5 %"), ("costs.support_rate", "10")])[
        "policy"] == {"headroom": 0.125}
    assert forms.form_values({"costs": {"support_rate": 0.1, "average_load": 0.07}}) == {
        "costs.support_rate": "10", "costs.average_load": "7"}


def test_an_uploaded_file_shows_percent_and_downloads_the_same_sizing(client: Any) -> None:
    """inputs/example.yaml uploaded: its fractions are shown in percent (0.25 as 25), the YAML
    the form downloads holds the file's fractions again, and the results JSON is the file's."""
    from test_web_routes import fields, post

    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    up = client.post("/upload/yaml", files={"file": (EXAMPLE.name, EXAMPLE.read_bytes())})
    assert up.status_code == 200
    items = fields(up.text)
    shown = dict(items)
    assert {p: shown[p] for p in EXAMPLE_FRACTIONS} == {p: s for p, (_, s) in EXAMPLE_FRACTIONS.items()}
    assert '<label for="policy.headroom"' in up.text and ">Headroom (%)</label>" in up.text
    down = yaml.safe_load(post(client, "/download/yaml", items).text)
    assert {p: _at(down, p) for p in EXAMPLE_FRACTIONS} == {
        p: f for p, (f, _) in EXAMPLE_FRACTIONS.items()}
    web = json.loads(post(client, "/download/json", items).text)
    want = json.loads(size(load(EXAMPLE)).to_json())
    for doc in (web, want):
        doc.pop("llmsizer_version", None)
    assert web == want
    # a percent typed: 50 is a headroom of 0.5 in the file
    typed = [(k, "50" if k == "policy.headroom" else v) for k, v in items]
    assert yaml.safe_load(post(client, "/download/yaml", typed).text)["policy"]["headroom"] == 0.5


def test_a_fraction_out_of_range_is_told_in_percent(client: Any) -> None:
    """400 typed for the headroom (at most 300 %): the message said "must be at most 3 (found
    4); ...; this is a fraction: write 0.04 for 4 %", the file's words for a fraction."""
    from test_web_routes import fields, post

    items = [(k, v) for k, v in fields(client.get("/").text) if k != "policy.headroom"]
    items.append(("policy.headroom", "400"))
    r = post(client, "/size", items)
    shown = re.search(r'id="sizing-error">One problem to fix in the form: ([^<]*)<', r.text)
    assert shown, r.text[:500]
    assert html_lib.unescape(shown.group(1)) == (
        "Policy — Headroom (%): must be at most 300 % (found 400 %); allowed: a number from "
        "0 % to 300 %")


def _options(html: str) -> list[list[str]]:
    """The option tables' recommended rows, each cell's text."""
    section = re.search(r'<section id="options">(.*?)</section>', html, re.S)
    assert section
    rows = re.findall(r'<tr class="rec">(.*?)</tr>', section.group(1), re.S)
    return [[html_lib.unescape(re.sub(r"<[^>]+>|\s+", " ", c)).strip()
             for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)] for row in rows]


def test_the_recommended_option_is_marked_without_a_why_not(client: Any) -> None:
    """The options' last column is "Why not"; the plan's choice read "recommended" there (a
    phone's card: "Why not: recommended"). It is marked beside its name, its "Why not" empty:
    a language model's options and a retrieval workload's GPUs (inputs/rag-knowledge-base)."""
    account = ROOT / "inputs" / "rag-knowledge-base.yaml"
    up = client.post("/upload/yaml", files={"file": (account.name, account.read_bytes())})
    assert up.status_code == 200
    rows = _options(up.text)
    assert len(rows) >= 2  # its language model's and its embedder's
    for cells in rows:
        assert "recommended" in cells[0], cells
        assert cells[-1] == "", cells


def test_a_phones_card_of_the_recommended_option_says_no_why_not(
        server: str, browser: Any) -> None:  # noqa: F811
    """A phone's card shows each cell under its column's heading (the label drawn before
    it): the recommended option's card read "Why not: recommended"."""
    page = _page(browser, 390)
    page.goto(server)
    page.wait_for_selector("#options table.stacks tr.rec")
    card = page.evaluate("""() => [...document.querySelector('#options tr.rec').cells]
        .filter(c => getComputedStyle(c).display !== 'none')
        .map(c => [getComputedStyle(c, '::before').content, c.innerText])""")
    page.locator("#options tr.rec").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "round21-recommended-390px.png"))
    assert '"Why not"' not in [label for label, _ in card], card
    assert "recommended" in card[0][1], card


def test_an_unknown_gpu_is_told_by_the_closest_names_and_the_boxes(client: Any) -> None:
    """A GPU the catalog lacks, in an uploaded file: it listed all 24 GPU names ("choose from
    the list: AMD Instinct MI300X, ...") where no id was close, and said "choose another from
    the list" of GPUs that are tick-boxes. Now: the closest names by the CLI's guesser (on the
    names where no id is close) and the boxes to tick."""
    text = EXAMPLE.read_text(encoding="utf-8")
    said = {}
    for typed in ("nvidia t4", "tpu-v5", "h100"):
        bad = text.replace("gpus: [h100-sxm, h200-sxm, l40s]", f"gpus: ['{typed}', l40s]")
        r = client.post("/upload/yaml", files={"file": ("acme.yaml", bad.encode())})
        assert r.status_code == 400
        box = re.search(r'id="upload-error">(.*?)</div>', r.text, re.S)
        assert box
        said[typed] = html_lib.unescape(re.sub(r"<[^>]+>", "", box.group(1))).strip()
    # round 24: the CLI's guesses in the CLI's words (schema_words.guesses): the closest name
    # alone ('nvidia t4' guessed L4, L40S and A10 here, the CLI none), the three 'h100' begins
    assert said == {
        "nvidia t4": "One problem to fix in acme.yaml: "
                     "Hardware — GPUs to consider: unknown GPU 'nvidia t4': did you "
                     "mean NVIDIA L4? Untick it and tick the one you meant in the boxes (line 29)",
        "tpu-v5": "One problem to fix in acme.yaml: "
                  "Hardware — GPUs to consider: unknown GPU 'tpu-v5'. Untick it and "
                  "tick the ones to consider in the boxes (line 29)",
        "h100": "One problem to fix in acme.yaml: "
                "Hardware — GPUs to consider: unknown GPU 'h100': did you mean NVIDIA "
                "H100 SXM 80GB, NVIDIA H100 NVL or NVIDIA H100 PCIe? Untick it and tick the one "
                "you meant in the boxes (line 29)"}
