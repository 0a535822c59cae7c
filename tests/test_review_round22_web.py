"""Review round 22, the web app.

- web/forms.py was 597 lines (the limit is 600): the form's fields (labels, kinds, help, the
  load's and the kind's groups) are web/fields.py now, forms.py the form ⇄ requirements ⇄
  YAML; the pages are unchanged (the same HTML for every archetype and uploaded file).
- a phone's charts were drawn for the PDF's column (658 px) and shown at that size in a box
  that scrolled sideways: half of each chart off a 390 px screen. Each chart is drawn at a
  phone's width too (documents/charts.py ``width_in``, 3.3 inches: 317 px), its texts the
  printed size, and shown below 640 px; the PDF's charts are byte-identical.
- a rule across sections (a price above its bound, the currency without its exchange rate)
  was told with the file's paths and marked no field: "error: costs.gpu_prices.h100-pcie:
  too high (found 1e+12)", "account.currency is EUR, but ...: add costs.usd_exchange_rate".

Browser tests use Debian's Chromium (test_web_browser.py's fixtures; they FAIL without it).
"""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from matplotlib.font_manager import FontProperties
from test_web_browser import SHOTS, browser, click_to_new_page, server  # noqa: F401  (fixtures)

from llmsizer.documents import charts
from llmsizer.documents.chartcanvas import text_size
from llmsizer.documents.proposal.format import Formatter
from llmsizer.web import archetypes, fields, forms
from llmsizer.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "src" / "llmsizer" / "web"


def test_forms_split_leaves_room_for_the_next_field() -> None:
    """Each half is well under the 600-line limit (forms.py was 597 lines), and every field
    the form names by its path is defined once, in fields.py."""
    for name in ("forms.py", "fields.py"):
        lines = (WEB / name).read_text(encoding="utf-8").count("\n")
        assert lines < 450, (name, lines)
    assert forms.FIELDS_BY_PATH["policy.headroom"] is fields.POLICY_FIELDS[1]
    assert forms.FIELDS_BY_PATH["workloads[].targets.ttft_s"].label == "First token within (s)"
    assert all(isinstance(f, fields.Field) for f in forms.FIELDS_BY_PATH.values())
    # the conversion still reads the fields it names: a headroom of 25 % is the fraction 0.25
    data = forms.form_to_data([("policy.headroom", "25"), ("workloads[0].name", "Chat"),
                               ("workloads[0].load_as", "users"),
                               ("workloads[0].concurrent_users", "40")])
    assert data["policy"] == {"headroom": 0.25}
    assert data["workloads"] == [{"name": "Chat", "concurrent_users": 40}]


# ---- the phone's charts ------------------------------------------------------------------

_TEXT = re.compile(r"<text ([^>]*)>([^<]*)</text>")


def _texts(svg: str) -> list[tuple[float, str, float, float]]:
    """Each text of an SVG chart: (font size, text, left, right) in points; the axes' titles
    turned upright (their length runs down the chart) are left out."""
    out = []
    for attrs, body in _TEXT.findall(svg):
        if re.search(r"rotate\(-?90", attrs):
            continue
        size = float(re.search(r"font-size: ([\d.]+)px", attrs)[1])  # type: ignore[index]
        bold = "font-weight: 700" in attrs
        width = text_size(html_lib.unescape(body), FontProperties(
            size=size, weight="bold" if bold else "normal"))[0]
        anchor = re.search(r"text-anchor: (\w+)", attrs)
        x = re.search(r' x="([\d.-]+)"', attrs) or re.search(r"translate\(([\d.-]+) ", attrs)
        assert x, attrs
        left = float(x[1]) - {"start": 0, "middle": width / 2, "end": width}[
            anchor[1] if anchor else "start"]
        out.append((size, html_lib.unescape(body), left, left + width))
    return out


USD = Formatter("USD")


def _width_pt(svg: str) -> float:
    return float(re.search(r'width="([\d.]+)pt"', svg)[1])  # type: ignore[index]


MEMORY_BARS = [charts.MemoryBar(label="Claims document classification", segments={},
                                chosen=False)] + [
    charts.MemoryBar(label=f"{name}\nFP8/FP8 · TP{tp}", chosen=i == 0, segments={
        "weights_gb": w, "kv_in_use_gb": k, "kv_spare_gb": s, "memory_reserved_gb": 5.0,
        "replica_memory_gb": w + k + s + 5.0})
    for i, (name, tp, w, k, s) in enumerate([("H200 SXM 141GB", 4, 70.0, 40.0, 449.0),
                                             ("H100 SXM 80GB", 2, 70.0, 30.0, 55.0)])]


def test_a_phones_memory_chart_is_drawn_at_its_width_with_printed_texts() -> None:
    """At 3.3 inches (317 px), every text of the memory chart is the printed size (6.5 points
    or more: 8.7 px and more on the screen) and lies inside the chart: the legend's last key
    ("Reserve") ran off its right edge, the longest bar's "564.0 GB" too."""
    svg = charts.memory_chart(MEMORY_BARS, lambda x: f"{x:,.1f} GB", width_in=charts.PHONE_WIDTH_IN)
    width = _width_pt(svg)
    assert width == pytest.approx(3.3 * 72)  # 237.6 pt
    texts = _texts(svg)
    assert {"Weights", "KV in use", "KV spare", "Reserve", "564.0 GB"} <= {t[1] for t in texts}
    for size, body, left, right in texts:
        assert size >= 6.5, (body, size)
        assert left >= -0.5 and right <= width + 0.5, (body, left, right, width)
    # the PDF's chart is the one it always was: 6.85 inches, the default
    assert _width_pt(charts.memory_chart(MEMORY_BARS, lambda x: f"{x:,.1f} GB")) == \
        pytest.approx(6.85 * 72)


def test_a_phones_throughput_chart_sets_its_legend_in_rows() -> None:
    """The throughput chart's legends at a phone's width: in rows of printed-size text (one
    row each was set in 4-point text to fit 3.3 inches), every text inside the chart."""
    points = [{"batch_per_replica": b, "tokens_per_s_per_user": 80 / (1 + b / 40),
               "replica_output_tokens_per_s": 80 * b / (1 + b / 40)} for b in range(1, 257, 8)]
    chosen = {"batch_per_replica": 108.0, "tokens_per_s_per_user": 30.7,
              "replica_output_tokens_per_s": 2716.0}
    args = (points, chosen, 25.0, [(256.0, "engine batch cap")],
            USD.tok_s, USD.count)
    with charts.drawn_width(charts.PHONE_WIDTH_IN):  # as the web app asks for it
        svg = charts.throughput_chart(*args)
    width, texts = _width_pt(svg), _texts(svg)
    assert width == pytest.approx(237.6)
    legend = [t for t in texts if t[1].startswith(("Tokens/s per", "Target", "Batch limit",
                                                   "Engine batch cap"))]
    assert len(legend) == 5
    for _size, body, left, right in texts:
        assert left >= -0.5 and right <= width + 0.5, (body, left, right, width)
    # the chosen batch's key, 3.1 inches long, is a row of its own at the printed size
    assert min(size for size, *_ in legend) >= 6.8, legend
    # the block's width ends with it: the PDF's chart after it
    assert _width_pt(charts.throughput_chart(*args)) == pytest.approx(6.85 * 72)


def _page(browser: Any, width: int) -> Any:  # noqa: F811
    return browser.new_page(viewport={"width": width, "height": 844 if width < 500 else 900})


@pytest.mark.parametrize(("width", "drawn"), [(390, 317), (1280, 658)])
def test_a_phone_shows_whole_charts_a_laptop_the_pdfs(server: str, browser: Any,  # noqa: F811
                                                      width: int, drawn: int) -> None:
    """The chat quick start: at 390 px the two charts shown are drawn 317 px wide and shown
    at that size, nothing sliding sideways (each was 658 px in a 320 px box); at 1,280 px the
    PDF's 658 px charts, as before."""
    page = _page(browser, width)
    page.goto(server)
    click_to_new_page(page, "#start-chat")
    page.wait_for_selector("#charts .chart-box", timeout=60000)
    page.wait_for_function("() => [...document.querySelectorAll('img.chart')].every(i => i.complete)")
    shown = page.evaluate("""() => [...document.querySelectorAll('#charts img.chart')]
        .filter(i => i.offsetParent !== null).map(i => [i.naturalWidth,
        i.getBoundingClientRect().width, i.closest('.chart-box').scrollWidth
        - i.closest('.chart-box').clientWidth])""")
    assert len(shown) == 2, shown  # the memory chart and the workload's throughput chart
    for natural, on_screen, overflow in shown:
        assert natural == drawn and on_screen >= natural - 1 and overflow == 0, shown
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.locator("#charts").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"round22-charts-{width}px.png"))


# ---- a rule across sections, in the form's words -----------------------------------------

def _sized(over: dict[str, str]) -> str:
    values = forms.form_values(archetypes.requirements("chat")) | over
    items = [(k, s) for k, v in values.items() for s in (v if isinstance(v, list) else [v])]
    with TestClient(create_app()) as c:
        r = c.post("/size", content=urlencode(items),
                   headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200
    return r.text


def _error(text: str) -> tuple[str, str]:
    """The results panel's error line and the field it marks."""
    line = re.search(r'id="sizing-error">(.*?)</div>', text, re.S)
    field = re.search(r'id="error-slot" data-field="([^"]*)"', text)
    assert line and field, text[:500]
    return html_lib.unescape(line[1]), field[1]


@pytest.mark.parametrize(("over", "field", "words"), [
    ({"costs.gpu_prices.h100-pcie": "1e12"}, "costs.gpu_prices.h100-pcie",
     "One problem to fix in the form: "
     "Costs — Purchase per GPU, NVIDIA H100 PCIe: too high (found 1e+12); allowed: "
     "at most 10,000,000 USD per GPU"),
    ({"account.currency": "EUR"}, "costs.usd_exchange_rate",
     "One problem to fix in the form: "
     "Costs — Units per US dollar: “Currency” is EUR, but catalog prices are in USD: "
     "fill in “Units per US dollar” (EUR per US dollar, e.g. 0.92)"),
    ({"costs.usd_exchange_rate": "2"}, "costs.usd_exchange_rate",
     "One problem to fix in the form: "
     "Costs — Units per US dollar: must be 1 (or left out) when “Currency” is USD"),
])
def test_a_rule_across_sections_marks_its_field_in_the_forms_words(
        over: dict[str, str], field: str, words: str) -> None:
    """The loader's message names fields by their paths in the file (the CLI's reader has
    the file); the form marks the field and says each by its label."""
    line, marked = _error(_sized(over))
    assert (line, marked) == (words, field)


def test_a_whole_number_typed_with_an_exponent_is_told_its_bound() -> None:
    """"1e12" prompt tokens was told "must be a whole number (found 1000000000000.0)": it is
    one, and too many; "1e3" users is 1,000 users."""
    line, marked = _error(_sized({"workloads[0].prompt_tokens": "1e12"}))
    assert (line, marked) == ("One problem to fix in the form: "
                              "Chat API — Prompt tokens: must be at most 2,000,000 (found "
                              "1000000000000); allowed: a whole number from 1 to 2,000,000",
                              "workloads[0].prompt_tokens")
    data = forms.form_to_data([("workloads[0].concurrent_users", "1e3"),
                               ("workloads[0].targets.ttft_s", "1.5e0")])
    assert data["workloads"] == [{"concurrent_users": 1000, "targets": {"ttft_s": 1.5}}]


def test_the_estimate_pages_figures_leave_their_labels_room_on_a_phone(
        server: str, browser: Any) -> None:  # noqa: F811
    """At 390 px the estimate's weights and KV line ("70.6 GB · 0.19 GB of 125.9 GB usable")
    was kept on one line and squeezed the labels' column to 74 px: "Time to first token
    (TTFT)" took four lines. It wraps now; every label is two lines at most."""
    page = _page(browser, 390)
    page.goto(server + "estimate")
    page.wait_for_selector("#ttft")
    heights = page.evaluate("""() => [...document.querySelectorAll('#estimate-figures th')].map(
        th => [th.innerText, th.getBoundingClientRect().width,
               th.getBoundingClientRect().height / parseFloat(getComputedStyle(th).lineHeight)])""")
    assert len(heights) == 7
    for label, width, lines in heights:
        assert width > 110 and lines < 2.9, (label, width, lines)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
