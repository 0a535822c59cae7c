"""Session 25, item 3: the electricity field's placeholder on a phone (390 px).

Without an exchange rate the field's hint is "0.12 USD converted" (web/static/app.js, and
web/fields.tariff_placeholder when the page is drawn). At 390 px its box has 140 px inside its
paddings and the text took 140.8 at 14 px: the "d" touched the border. Chromium does not count a
placeholder in an input's scrollWidth (152 = clientWidth before and after), so the test measures
the text as drawn, in the field's own placeholder font, and checks scrollWidth as well."""

from __future__ import annotations

from typing import Any

from test_web_browser import SHOTS, browser, server  # noqa: F401  (fixtures)

MEASURE = """e => {
    const st = getComputedStyle(e), ph = getComputedStyle(e, '::placeholder');
    const c = document.createElement('canvas').getContext('2d');
    c.font = ph.fontSize + ' ' + ph.fontFamily;
    return {scroll: e.scrollWidth, client: e.clientWidth,
            room: e.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight),
            text: c.measureText(e.placeholder).width}; }"""


def test_the_converted_tariff_placeholder_fits_its_box_on_a_phone(
        server: str, browser: Any) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(server)
    page.fill("#costs\\.usd_exchange_rate", "")
    page.fill("#account\\.currency", "CAD")  # no rate: app.js says "0.12 USD converted"
    tariff = page.locator("#costs\\.electricity_per_kwh")
    assert tariff.get_attribute("placeholder") == "0.12 USD converted"
    tariff.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "tariff-placeholder-390px.png"))
    box = tariff.evaluate(MEASURE)
    assert box["scroll"] <= box["client"], box
    assert box["text"] <= box["room"], box  # 140.8 > 140 before
