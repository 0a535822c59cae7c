"""Review round 21: the web app as a presales engineer uses it on a phone (390 px), a tablet
(768 px) and a laptop (1,440 px), in Debian's Chromium (test_web_browser.py's fixtures; these
tests FAIL without it, as those do).

- a label that wraps to two lines pushed its box 17 px below the box beside it
  ("Response time (s): sets tokens/s per user" beside "Tokens/s per user" at 390 px,
  "Inter-token latency, 90th percentile (ms)" at 1,440 px, a node's price at 768 px);
- the charts (drawn for the PDF's 6.85-inch column, 658 px) were shrunk to 320 px on a phone:
  their labels 4.4 px high;
- "sizing…" sat at the top of the results column: 3,800 px down a phone's page, below the
  whole form, while the field being typed in was on screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
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


def test_a_phones_charts_keep_their_drawn_size(server: str, browser: Any) -> None:  # noqa: F811
    """At 390 px each chart is shown at no less than the size it is drawn at (its labels
    6.8 pt, 9 px: as on the PDF's page), its own box scrolling sideways, never the page."""
    page = _page(browser, 390)
    page.goto(server)
    click_to_new_page(page, "#start-chat")
    page.wait_for_selector("img.chart", timeout=60000)
    page.wait_for_function("() => [...document.querySelectorAll('img.chart')].every(i => i.complete)")
    sizes = page.evaluate("""() => [...document.querySelectorAll('img.chart')].map(i =>
        [i.naturalWidth, i.getBoundingClientRect().width])""")
    assert len(sizes) == 2  # the memory chart and the workload's throughput chart
    for natural, shown in sizes:
        assert natural > 600 and shown >= natural - 1, sizes
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # the box slides, and the page says so (a phone shows no scroll bar until touched)
    assert page.evaluate("""() => [...document.querySelectorAll('.chart-box')]
        .every(b => b.scrollWidth > b.clientWidth)""")
    assert page.locator("#charts .phone-only").is_visible()
    page.locator("#charts").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "round21-charts-390px.png"))


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
