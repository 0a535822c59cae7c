"""The web app in a real browser (Playwright driving Debian's Chromium): start the server on
a free loopback port, size from the quick start, change the users and see the
recommendation change, download the PDF and the workbook and check them with pdftotext and
openpyxl, upload an edited workbook and see the diff. A screenshot of each page goes to
out/test_web_browser/ (look at them after a change of the pages).

Chromium comes from the distribution (scripts/setup.sh installs ``chromium``); `playwright
install` cannot download here. Without it this test FAILS: CI must run it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import openpyxl
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "out" / "test_web_browser"
CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                             shutil.which("chromium") or "") if p and Path(p).exists()), None)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    # its output to a file: a pipe nobody reads would stall the server once 64 KB of warnings
    # filled it
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "llmsizer.cli", "serve", "--port",
                                 str(port)], stdout=log, stderr=subprocess.STDOUT,
                                env=os.environ.copy())
        try:
            for _ in range(200):
                try:
                    urllib.request.urlopen(url + "static/app.css", timeout=1).read()
                    break
                except OSError:
                    if proc.poll() is not None:
                        log.seek(0)
                        raise AssertionError(log.read().decode()) from None
                    time.sleep(0.1)
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    assert CHROMIUM is not None, ("Chromium is missing: `apt-get install chromium` "
                                  "(scripts/setup.sh does it); this test must run, not skip")
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def click_to_new_page(page: object, button: str) -> None:
    """Click what loads a new page (a quick start, open a YAML, re-read a workbook, use a
    config.json), wait for its load event and check its stylesheet applied. A loaded CI
    machine once measured a page with no style at all (the form 1,264 px wide at x = 8, the
    browser's own body margin): the app's page failed there, not the layout under test, so
    the check says which of the page's requests failed or were refused."""
    trouble: list[str] = []
    failed = lambda r: trouble.append(f"{r.url}: {r.failure}")  # noqa: E731
    refused = lambda r: trouble.append(f"{r.url}: {r.status}") if r.status >= 400 else None  # noqa: E731
    page.on("requestfailed", failed)  # type: ignore[attr-defined]
    page.on("response", refused)  # type: ignore[attr-defined]
    try:
        with page.expect_navigation(wait_until="load", timeout=120000):  # type: ignore[attr-defined]
            page.click(button)  # type: ignore[attr-defined]
        styled = page.evaluate("getComputedStyle(document.body).marginTop")  # type: ignore[attr-defined]
        assert styled == "0px", f"app.css did not apply (body margin {styled}): {trouble}"
    finally:
        page.remove_listener("requestfailed", failed)  # type: ignore[attr-defined]
        page.remove_listener("response", refused)  # type: ignore[attr-defined]

def _shot(page: object, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


def test_quick_start_users_pdf_workbook_and_diff(server: str, browser: object,
                                                  tmp_path: Path) -> None:
    page = browser.new_page(accept_downloads=True, viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server)
    click_to_new_page(page, "#start-rag")
    click_to_new_page(page, "#start-chat")
    headline = page.locator("#headline")
    before = headline.inner_text()
    _shot(page, "account")
    # the users go from 200 to 2,000: more GPUs (typed as a user types, debounced)
    users = page.locator('[name="workloads[0].concurrent_users"]')
    users.fill("2000")
    page.wait_for_function(
        "b => document.querySelector('#headline') && document.querySelector('#headline').innerText !== b",
        arg=before, timeout=15000)
    after = headline.inner_text()
    assert int(after.split()[0]) > int(before.split()[0]), (before, after)
    page.fill('[name="account.name"]', "Acme Corp")
    page.wait_for_timeout(1200)
    _shot(page, "account-2000-users")

    # an error lands beside its field, in the CLI's words; the banner names the workload and
    # the field as the form does, not the loader's path
    users.fill("0")
    page.wait_for_selector('[data-field="workloads[0].concurrent_users"] .field-error', timeout=15000)
    banner = page.locator("#sizing-error").inner_text()
    assert banner.startswith("One problem to fix in the form: Chat API — Concurrent users at peak: "), banner
    _shot(page, "account-error")
    users.fill("2000")
    page.wait_for_selector("#headline", timeout=15000)

    # the load as a population instead (inputs/helpdesk-population.yaml's 2,000 users × 6
    # requests an hour × 3 at peak): its fields show, the users field hides, the plan follows
    page.wait_for_function("a => document.querySelector('#headline').innerText === a", arg=after,
                           timeout=15000)
    page.select_option('[name="workloads[0].load_as"]', "population")
    assert not users.is_visible()
    for name, value in (("named_users", "2000"), ("requests_per_user_per_hour", "6"),
                        ("peak_to_average", "3")):
        page.fill(f'[name="workloads[0].{name}"]', value)
    page.wait_for_function(
        "a => document.querySelector('#headline') && document.querySelector('#headline').innerText !== a",
        arg=after, timeout=15000)
    _shot(page, "account-population")
    page.select_option('[name="workloads[0].load_as"]', "users")  # back: 2,000 at the same time
    assert users.is_visible() and not page.locator('[name="workloads[0].named_users"]').is_visible()
    page.wait_for_function("a => document.querySelector('#headline').innerText === a", arg=after,
                           timeout=15000)

    # the PDF: progress, then the file
    page.click("#dl-pdf")
    page.wait_for_selector("#pdf-ready", timeout=180000)
    with page.expect_download() as dl:
        page.click("#pdf-ready")
    pdf = tmp_path / "acme.pdf"
    dl.value.save_as(pdf)
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    # the lean proposal (the production debugger is in the web app's own page below and in
    # `report --appendix` PDFs)
    assert "Acme Corp" in text and "Sizing walk-through" in text and "Risks" in text

    # the workbook: 2,000 users on its Inputs sheet
    with page.expect_download() as dl:
        page.click("#dl-xlsx")
    book_path = tmp_path / "acme.xlsx"
    dl.value.save_as(book_path)
    wb = openpyxl.load_workbook(book_path)
    cells = [c for row in wb["Inputs"].iter_rows() for c in row if c.value == 2000]
    assert cells, "the users are not on the Inputs sheet"
    # finance halves the users; the app re-reads it and shows the --diff lines
    cells[0].value = 1000
    wb.save(book_path)
    page.set_input_files("#workbook-file", str(book_path))
    click_to_new_page(page, "#upload-workbook button")
    page.wait_for_selector("#diff", timeout=120000)
    diff = page.locator("#diff").inner_text()
    assert "2,000" in diff and "1,000" in diff, diff
    assert page.locator('[name="workloads[0].concurrent_users"]').input_value() == "1000"
    _shot(page, "account-after-workbook")

    # the debugger page for this account, in a tab of its own: the form stays as it is
    # (the browser's Back opened a fresh form: no page is cached)
    with page.context.expect_page() as opened:
        page.click("#open-debugger")
    debugger = opened.value
    debugger.wait_for_selector("#debugger")
    _shot(debugger, "debugger")
    assert page.locator('[name="account.name"]').input_value() == "Acme Corp"
    assert errors == [], errors  # no CSP violation or script error


def test_a_rag_account_shows_each_kind_with_its_fields(server: str, browser: object) -> None:
    """inputs/rag-knowledge-base.yaml opened: the embed workload shows its corpus, not the
    prompt tokens; switched to answers, the prompt tokens show and the embedder is unchosen."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server)
    page.set_input_files("#yaml-file", str(ROOT / "inputs" / "rag-knowledge-base.yaml"))
    click_to_new_page(page, "#upload-yaml button")
    page.wait_for_selector('[name="workloads[2].candidates_per_request"]')
    page.wait_for_load_state()  # the kind switch below is app.js's (a deferred script)
    _shot(page, "account-rag")
    corpus = page.locator('[name="workloads[1].corpus_tokens"]')
    prompt = page.locator('[name="workloads[1].prompt_tokens"]')
    assert corpus.is_visible() and corpus.input_value() == "20000000000"
    assert not prompt.is_visible()
    page.select_option('[name="workloads[1].kind"]', "generate")
    assert prompt.is_visible() and not corpus.is_visible()
    assert page.locator('[name="workloads[1].model"]').input_value() == ""
    assert errors == [], errors


def test_retrieval_panel_and_a_config_json_model(server: str, browser: object) -> None:
    """The RAG account's results show its embedding and reranking servers; a config.json
    chosen for the first workload becomes its model, named by the model's name."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server)
    page.set_input_files("#yaml-file", str(ROOT / "inputs" / "rag-knowledge-base.yaml"))
    click_to_new_page(page, "#upload-yaml button")
    page.wait_for_selector("#retrieval")
    panel = page.locator("#retrieval").inner_text()
    assert "embedding" in panel and "reranking" in panel, panel
    page.locator("#retrieval").scroll_into_view_if_needed()
    _shot(page, "account-rag-retrieval")
    # the per-workload rows as the browser shows them: each workload's share of the plan,
    # the retrieval workloads' own servers, the account's totals (the engine's figures)
    from llmsizer.documents.proposal.format import Formatter
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    result = size(load(ROOT / "inputs" / "rag-knowledge-base.yaml"))
    fmt = Formatter(result.account.currency)
    rows = [" ".join(t.replace("\xa0", " ").split()) for t in
            page.locator("#per-workload tbody").all_inner_texts()]
    want = [(w.name, p.shares[p.workload_indices.index(i)]["plan_capex"],
             p.shares[p.workload_indices.index(i)]["plan_annual_cost_onprem"])
            for p in result.plan.pools for i in p.workload_indices
            for w in [result.workloads[i]]]
    want += [(g.workload, g.capex, g.annual_cost_onprem) for g in result.plan.retrieval_groups]
    want += [("Account (plan)", result.totals.capex, result.totals.annual_cost_onprem)]
    for name, capex, onprem in want:
        row = next(r for r in rows if r.startswith(name))
        money = " ".join(fmt.money(capex).replace("\xa0", " ").split())
        assert row.endswith(f"{money} {' '.join(fmt.money(onprem).replace(chr(160), ' ').split())}"), row
    page.locator("#per-workload").scroll_into_view_if_needed()
    _shot(page, "account-rag-per-workload")
    page.set_input_files('[name="workloads[0].config_file"]',
                         str(ROOT / "tests" / "data" / "llama-70b-class" / "config.json"))
    click_to_new_page(page, 'button[name="config_for"][value="0"]')
    page.wait_for_selector("#headline")
    chosen = page.locator('[name="workloads[0].model"] option:checked').inner_text()
    assert chosen == "Llama-3-70B-class (seed 001/002/003 round figures) (your config.json)"
    _shot(page, "account-config-json")
    assert errors == [], errors


@pytest.mark.parametrize("path", ["catalog/gpus", "catalog/models", "catalog/platforms",
                                  "catalog/prices", "estimate"])
def test_reference_pages(server: str, browser: object, path: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server + path)
    if path == "estimate":
        ttft = page.locator("#ttft").inner_text()
        page.fill("#batch", "128")
        page.dispatch_event("#batch", "input")
        page.wait_for_function("t => document.querySelector('#ttft').innerText !== t", arg=ttft,
                               timeout=15000)
        # drawn at the page's width and at a phone's (session 23); the page's one shown here
        assert page.locator("img.chart").count() == 2
        assert page.locator(".chart-wide img.chart").is_visible()
        assert not page.locator(".chart-phone img.chart").is_visible()
    _shot(page, path.replace("/", "-"))
    assert errors == [], errors


def test_an_item_error_is_marked_beside_its_field(server: str, browser: object,
                                                  tmp_path: Path) -> None:
    """The loader names an item of a list (hardware.gpus[0]); the form's box is the list's
    (hardware.gpus). The message went to the results panel's hidden slot, which carries
    the same data-field, instead of beside the GPU boxes."""
    text = (ROOT / "inputs" / "example.yaml").read_text()
    assert "gpus: [h100-sxm," in text
    bad = tmp_path / "unknown-gpu.yaml"
    bad.write_text(text.replace("gpus: [h100-sxm,", "gpus: [h999-nope,"))
    page = browser.new_page(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    page.goto(server)
    page.set_input_files("#yaml-file", str(bad))
    click_to_new_page(page, "#upload-yaml button")
    # the message is placed beside its box after htmx settles, a moment after the results
    # panel (with #sizing-error) is swapped in: wait for the message itself
    page.wait_for_selector('#account [data-field="hardware.gpus"] .field-error', timeout=15000)
    beside = page.locator('#account [data-field="hardware.gpus"] .field-error')
    assert beside.count() == 1 and "unknown GPU 'h999-nope'" in beside.inner_text()
    assert page.locator("#error-slot .field-error").count() == 0
    beside.scroll_into_view_if_needed()
    _shot(page, "account-unknown-gpu")


def test_every_problem_of_an_uploaded_file_is_marked_beside_its_field(
        server: str, browser: object, tmp_path: Path) -> None:
    """Review round 19: a file with three problems (a model misspelt, a negative request
    rate, a word for the prompt's tokens) marked only the model field, and the results panel
    told only that one; each field now has its message (app.js, one slot per problem)."""
    text = (ROOT / "inputs" / "example.yaml").read_text()
    bad = tmp_path / "three-problems.yaml"
    bad.write_text(text.replace("model: llama-3.1-70b", "model: llama-3.1-70c", 1)
                   .replace("    concurrent_users: 100\n", "    requests_per_s: -2\n", 1)
                   .replace("    prompt_tokens: 2000\n", "    prompt_tokens: lots\n", 1))
    page = browser.new_page(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    page.goto(server)
    page.set_input_files("#yaml-file", str(bad))
    click_to_new_page(page, "#upload-yaml button")
    marked = {"workloads[0].model": "unknown model 'llama-3.1-70c'",
              "workloads[1].requests_per_s": "must be more than 0 (found -2)",
              "workloads[1].prompt_tokens": "must be a whole number (found 'lots')"}
    for field, words in marked.items():
        box = f'#account [data-field="{field}"]'
        page.wait_for_selector(f"{box} .field-error", timeout=15000)
        assert words in page.locator(f"{box} .field-error").inner_text(), field
        assert page.locator(f"{box} [aria-invalid=true]").count() >= 1, field
    assert page.locator("#account .field-error").count() == 3
    assert page.locator("#sizing-error li").count() == 3
    _shot(page, "account-three-problems")


def test_a_workloads_fields_share_the_width_evenly(server: str, browser: object) -> None:
    """The two columns of a workload are equal, so 'Answers (a language model)' is not cut:
    the Remove button floated beside the grid and a file input widened the first column."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    page.goto(server)
    name = page.locator('[id="workloads[0].name"]').bounding_box()
    kind = page.locator('[id="workloads[0].kind"]').bounding_box()
    remove = page.locator(".remove-workload").first.bounding_box()
    assert name and kind and remove
    assert abs(name["width"] - kind["width"]) <= 2, (name, kind)
    assert remove["y"] + remove["height"] <= kind["y"]  # above the fields, never over them


@pytest.mark.parametrize("path", ["catalog/gpus", "catalog/prices"])
def test_figures_and_dates_never_break_over_lines(server: str, browser: object,
                                                  path: str) -> None:
    """'1,100 W' and '2026-09-20' on one line each (they broke as '1100 / W', '2026- / 09-20')."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    page.goto(server + path)
    broken = page.evaluate("""() => [...document.querySelectorAll('td')]
        .filter(td => td.classList.contains('n') || /^\\d{4}-\\d\\d/.test(td.innerText))
        .filter(td => { const r = document.createRange(); r.selectNodeContents(td);
                        return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1; })
        .map(td => td.innerText)""")
    assert broken == []


@pytest.mark.parametrize("width", [1024, 1280])
def test_the_page_never_scrolls_sideways_on_a_laptop(server: str, browser: object,
                                                     width: int) -> None:
    """inputs/rag-knowledge-base.yaml at laptop widths: the page was 1,246 px wide in a
    1,024 px window (the results' tables pushed their column); now a table wider than its
    panel scrolls inside it, and the results stay beside the form."""
    page = browser.new_page(viewport={"width": width, "height": 800})  # type: ignore[attr-defined]
    page.goto(server)
    page.set_input_files("#yaml-file", str(ROOT / "inputs" / "rag-knowledge-base.yaml"))
    click_to_new_page(page, "#upload-yaml button")
    page.wait_for_selector("#retrieval")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    form = page.locator("#account").bounding_box()
    results = page.locator("#results").bounding_box()
    assert form and results and results["x"] > form["x"] + form["width"]  # side by side
    _shot(page, f"account-rag-{width}px")


@pytest.mark.parametrize("path", ["catalog/gpus", "catalog/models", "catalog/platforms"])
def test_catalog_keys_stay_whole_and_sources_fold_at_1024(server: str, browser: object,
                                                          path: str) -> None:
    """A key is what a requirements file writes: at 1,024 px 'llama-2-7b' broke as
    'llama-2-' over '7b', and a source's long address pushed the models table 300 px past
    its panel. Each key is now on one line, and every table fits its panel."""
    page = browser.new_page(viewport={"width": 1024, "height": 900})  # type: ignore[attr-defined]
    page.goto(server + path)
    broken = page.evaluate("""() => [...document.querySelectorAll('tr > td:first-child')]
        .filter(td => { const r = document.createRange(); r.selectNodeContents(td);
                        return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1; })
        .map(td => td.innerText)""")
    assert broken == []
    wider = page.evaluate("""() => [...document.querySelectorAll('section')]
        .filter(s => s.scrollWidth > s.clientWidth + 1).map(s => [s.clientWidth, s.scrollWidth])""")
    assert wider == []
    _shot(page, path.replace("/", "-") + "-1024px")


@pytest.mark.parametrize("path", ["", "catalog/gpus", "estimate"])
def test_a_phone_sees_every_link_of_the_header(server: str, browser: object, path: str) -> None:
    """At 390 px the header's links ran 210 px past the window (the page scrolled sideways
    and 'Prices', 'Estimate' sat white on the page's white): they wrap onto a second line."""
    page = browser.new_page(viewport={"width": 390, "height": 800})  # type: ignore[attr-defined]
    page.goto(server + path)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    header = page.locator("header").bounding_box()
    links = [page.locator("header a").nth(i).bounding_box()
             for i in range(page.locator("header a").count())]
    assert header and len(links) == 7
    assert all(b and b["x"] + b["width"] <= 390 and b["y"] + b["height"] <= header["y"] + header["height"]
               for b in links), links
    _shot(page, (path.replace("/", "-") or "account") + "-390px")


@pytest.mark.parametrize("account", ["example", "helpdesk-population", "frontier-moe-rack",
                                     "rag-knowledge-base"])
def test_the_recommendation_shows_its_costs_at_1024(server: str, browser: object,
                                                    account: str) -> None:
    """At 1,024 px the per-workload table was 717 to 735 px wide in a 562 px panel: the
    capex and yearly cost, the figures a customer asks for first, were scrolled out of
    sight. A workload's name and configuration now head its figures, and the table fits."""
    page = browser.new_page(viewport={"width": 1024, "height": 900})  # type: ignore[attr-defined]
    page.goto(server)
    page.set_input_files("#yaml-file", str(ROOT / "inputs" / f"{account}.yaml"))
    click_to_new_page(page, "#upload-yaml button")
    page.wait_for_selector("#per-workload")
    panel = page.locator("#recommendation")
    assert panel.evaluate("s => s.scrollWidth - s.clientWidth") <= 1
    # the plan (a rack's row was 13 px too wide) and the retrieval servers (784 px) fit too
    wider = page.evaluate("""() => [...document.querySelectorAll('#results section')]
        .filter(s => s.scrollWidth > s.clientWidth + 1)
        .map(s => [s.id, s.clientWidth, s.scrollWidth])""")
    assert wider == []
    box, last = panel.bounding_box(), page.locator("#per-workload th").nth(6).bounding_box()
    assert box and last and last["x"] + last["width"] <= box["x"] + box["width"]
    assert page.locator("#per-workload th").nth(6).inner_text().startswith("On-premises per year")
    panel.scroll_into_view_if_needed()
    _shot(page, f"account-{account}-1024px")


def test_a_wrong_file_gives_the_form_back_as_it_was(server: str, browser: object) -> None:
    """Open with a file that is not YAML, or Re-read with no file chosen: the page came back
    with the Chat API starting point, the customer's name and loads gone. app.js now sends
    the form's fields with the file, and the server gives them back."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server)  # waits for the load event: app.js (deferred) has run
    page.fill('[name="account.name"]', "Fabrikam Legal")
    page.fill('[name="workloads[0].concurrent_users"]', "1234")
    page.set_input_files("#yaml-file", str(ROOT / "tests" / "bad_inputs" / "not-yaml.yaml"))
    click_to_new_page(page, "#upload-yaml button")
    page.wait_for_selector("#upload-error")
    assert "yours as it was" in page.locator("#upload-note").inner_text()
    assert page.locator('[name="account.name"]').input_value() == "Fabrikam Legal"
    assert page.locator('[name="workloads[0].concurrent_users"]').input_value() == "1234"
    _shot(page, "account-unreadable-file-kept")
    click_to_new_page(page, "#upload-workbook button")  # no workbook chosen
    page.wait_for_selector("#upload-error")
    assert page.locator("#upload-error").inner_text().startswith("choose a workbook")
    assert page.locator('[name="account.name"]').input_value() == "Fabrikam Legal"
    assert page.locator('[name="workloads[0].concurrent_users"]').input_value() == "1234"
    assert errors == [e for e in errors if "400 (Bad Request)" in e], errors


def test_the_last_workload_cannot_be_removed_and_says_so(server: str, browser: object) -> None:
    """Remove on the only workload was pressable and did nothing. app.js now disables it,
    with why in its title, and enables it again once there are two."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page.goto(server)
    page.wait_for_selector(".remove-workload[disabled]")  # placed by app.js (deferred)
    assert page.locator(".remove-workload").get_attribute("title") == (
        "An account needs one workload at least")
    page.click("#add-workload")
    page.wait_for_selector(".workload >> nth=1")
    page.wait_for_function("() => [...document.querySelectorAll('.remove-workload')]"
                           ".every(b => !b.disabled)")
    page.locator(".remove-workload").nth(1).click()
    page.wait_for_selector(".remove-workload[disabled]")
    assert page.locator(".workload").count() == 1


@pytest.mark.parametrize("width", [1024, 1280, 1440])
def test_what_a_workload_serves_is_never_cut(server: str, browser: object, width: int) -> None:
    """A workload's Serves box was half of the form (400 px below 1,340 px, 520 px above):
    "Answers (a language model)" showed as "Answers (a language", "Reranking (query-passage
    scores)" as "Reranking (query-p". The name and the kind now take a row each."""
    page = browser.new_page(viewport={"width": width, "height": 900})  # type: ignore[attr-defined]
    page.goto(server)
    kind = page.locator('[name="workloads[0].kind"]')
    for value in ("generate", "embed", "rerank"):
        kind.select_option(value)
        room, text = kind.evaluate("""s => { const c = document.createElement('canvas').getContext('2d');
            const st = getComputedStyle(s); c.font = st.fontSize + ' ' + st.fontFamily;
            return [s.clientWidth - parseFloat(st.paddingLeft) - 20,
                    c.measureText(s.selectedOptions[0].text).width]; }""")
        assert text <= room, (value, text, room)


def test_a_japanese_account_downloads_its_pdf_under_its_own_name(server: str, browser: object,
                                                                  tmp_path: Path) -> None:
    """The file names carry the account's name in its own script (was: `account.pdf` for
    every name outside ASCII): the server sends it as filename*=UTF-8'' (RFC 5987)."""
    page = browser.new_page(accept_downloads=True, viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    page.goto(server)
    headline = page.locator("#headline").inner_text()
    page.fill('[name="account.name"]', "日本電気株式会社")
    page.wait_for_timeout(1200)  # the live update of the typed name
    page.wait_for_function("a => document.querySelector('#headline').innerText === a",
                           arg=headline, timeout=15000)
    page.click("#dl-pdf")
    page.wait_for_selector("#pdf-ready", timeout=180000)
    _shot(page, "account-japanese-pdf-ready")
    with page.expect_download() as dl:
        page.click("#pdf-ready")
    assert dl.value.suggested_filename == "日本電気株式会社.pdf"
    pdf = tmp_path / dl.value.suggested_filename
    dl.value.save_as(pdf)
    assert pdf.read_bytes()[:5] == b"%PDF-"
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "日本電気株式会社" in text
