"""The web app's routes (FastAPI's TestClient): the account page sizes as the CLI does,
errors land on their field with the CLI's words, every shipped account survives upload and
download with a JSON identical to the CLI's, and hostile input gets a clear refusal while
the server keeps serving (docs/security.md)."""

from __future__ import annotations

import html as html_lib
import io
import json
import re
import subprocess
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import openpyxl
import pytest
import yaml
from fastapi.testclient import TestClient

from llmsizer.base.errors import InputError
from llmsizer.documents.proposal.format import Formatter
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.web import forms
from llmsizer.web.app import create_app
from llmsizer.web.render import charts_html
from llmsizer.web.server import check_bind
from llmsizer.web.service import size_text

ROOT = Path(__file__).resolve().parents[1]
ACCOUNTS = sorted((ROOT / "inputs").glob("*.yaml"))


@pytest.fixture(scope="module")
def client() -> TestClient:
    with TestClient(create_app()) as c:
        yield c


class FormFields(HTMLParser):
    """The fields a browser would submit for the form with id ``account``."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[tuple[str, str]] = []
        self.inside = False
        self.select: str | None = None
        self.textarea: tuple[str, list[str]] | None = None
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == "account"
        if not self.inside:
            return
        if tag == "input" and a.get("name") and a.get("type") != "file":
            if a.get("type") == "checkbox" and "checked" not in a:
                return
            self.items.append((a["name"] or "", a.get("value") or ""))
        elif tag == "select":
            self.select = a.get("name")
        elif tag == "textarea" and a.get("name"):
            self.textarea = (a["name"] or "", [])
        elif tag == "option" and self.select and "selected" in a:
            self.items.append((self.select, a.get("value") or ""))

    def handle_data(self, data: str) -> None:
        if self.textarea is not None:
            self.textarea[1].append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea" and self.textarea is not None:
            name, text = self.textarea
            self.items.append((name, "".join(text).removeprefix("\n")))
            self.textarea = None
        if tag == "select":
            self.select = None
        if tag == "form":
            self.inside = False


def fields(html: str) -> list[tuple[str, str]]:
    p = FormFields()
    p.feed(html)
    return p.items


def post(client: TestClient, url: str, items: list[tuple[str, str]]) -> Any:
    """Submit form fields as a browser does (repeated names kept)."""
    return client.post(url, content=urlencode(items),
                       headers={"content-type": "application/x-www-form-urlencoded"})


def cli_json(path: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "llmsizer.cli", "size", str(path), "--json"],
                         capture_output=True, text=True, check=False)
    assert out.returncode in (0, 3), out.stderr
    return json.loads(out.stdout)


def test_home_sizes_the_chat_archetype_as_the_engine_does(client: TestClient, tmp_path: Path) -> None:
    r = client.get("/")
    assert r.status_code == 200
    # the page's headline is the engine's plan for the same requirements
    items = fields(r.text)
    y = post(client, "/download/yaml", items)
    assert y.status_code == 200 and "attachment" in y.headers["content-disposition"]
    (tmp_path / "chat.yaml").write_text(y.text, encoding="utf-8")
    result = size(load(tmp_path / "chat.yaml"))
    head = re.search(r'id="headline">([^<]*)<', r.text)
    assert head is not None
    assert head.group(1).startswith(f"{result.totals.gpus_purchased} GPUs in {result.totals.nodes} node")
    # the golden defaults of the source article: chat batch 8-16 (cap 16), 4K context, FP8 KV
    assert ("policy.max_batch_per_replica", "16") in items
    assert ("workloads[0].max_context_tokens", "4096") in items
    assert ("hardware.kv_precisions", "fp8") in items
    assert "seed" not in r.text.lower()


def test_changing_the_users_changes_the_recommendation(client: TestClient) -> None:
    items = fields(client.get("/").text)
    def headline(users: str) -> str:
        changed = [(k, users if k == "workloads[0].concurrent_users" else v) for k, v in items]
        r = post(client, "/size", changed)
        m = re.search(r'id="headline">([^<]*)<', r.text)
        assert m, r.text[:500]
        return m.group(1)
    assert headline("200") != headline("2000")


def test_error_is_beside_its_field_with_the_cli_words(client: TestClient, tmp_path: Path) -> None:
    items = [(k, "0" if k == "workloads[0].concurrent_users" else v)
             for k, v in fields(client.get("/").text)]
    r = post(client, "/size", items)
    slot = re.search(r'id="error-slot" data-field="([^"]*)" data-message="([^"]*)"', r.text)
    assert slot and slot.group(1) == "workloads[0].concurrent_users"
    # the same message the CLI prints for the same value in a file
    y = post(client, "/download/yaml", items).text
    path = tmp_path / "zero-users.yaml"
    path.write_text(y, encoding="utf-8")
    cli = subprocess.run([sys.executable, "-m", "llmsizer.cli", "validate", str(path)],
                         capture_output=True, text=True, check=False)
    assert cli.returncode == 2
    assert slot.group(2).replace("&#39;", "'") in cli.stderr
    # the banner says the field as the form labels it, under the workload's name
    shown = re.search(r'id="sizing-error">One problem to fix in the form: ([^<]*)<', r.text)
    assert shown and html_lib.unescape(shown.group(1)) == (
        f"Chat API — Concurrent users at peak: {html_lib.unescape(slot.group(2))}")


@pytest.mark.parametrize(("field", "value", "words"), [
    ("workloads[0].targets.ttft_s", "-1", "Acme <help> desk — First token within (s): "),
    ("workloads[0].prompt_tokens", "lots", "Acme <help> desk — Prompt tokens: "),
    ("policy.headroom", "lots", "Policy — Headroom (%): "),
    ("costs.gpu_prices.h100-sxm", "-5", "Costs — Purchase per GPU, NVIDIA H100 SXM 80GB: "),
])
def test_the_error_banner_names_the_workload_and_the_field_in_words(
        client: TestClient, field: str, value: str, words: str) -> None:
    """The banner showed the loader's location ('workloads[0].targets.ttft_s: ...'); a
    customer reads the workload's name and the field's label as the form shows them (the
    field path stays only in the slot that marks the field). The name is the user's own text:
    escaped, never markup."""
    items = [(k, v) for k, v in fields(client.get("/").text) if k != field]
    items = [(k, "Acme <help> desk" if k == "workloads[0].name" else v) for k, v in items]
    r = post(client, "/size", [*items, (field, value)])
    slot = re.search(r'id="error-slot" data-field="([^"]*)" data-message="([^"]*)"', r.text)
    assert slot and slot.group(1) == field
    shown = re.search(r'id="sizing-error">One problem to fix in the form: ([^<]*)<', r.text)
    assert shown, r.text[:500]
    assert "&lt;help&gt;" in shown.group(1) or not words.startswith("Acme")
    banner = html_lib.unescape(shown.group(1))
    assert banner == words + html_lib.unescape(slot.group(2)), banner
    assert "workloads[" not in banner and field not in banner
    # the debugger page says it the same way
    assert words in html_lib.unescape(post(client, "/debugger", [*items, (field, value)]).text)


@pytest.mark.parametrize("account", ACCOUNTS, ids=lambda p: p.stem)
def test_every_shipped_account_round_trips_to_the_cli_json(client: TestClient, account: Path,
                                                           tmp_path: Path) -> None:
    """Upload the YAML, take the form as the browser submits it, download the YAML: the CLI
    on the downloaded file prints the same JSON as on the shipped one."""
    up = client.post("/upload/yaml", files={"file": (account.name, account.read_bytes())})
    assert up.status_code == 200, re.findall(r'id="upload-error">([^<]*)', up.text)
    down = post(client, "/download/yaml", fields(up.text))
    again = tmp_path / account.name
    again.write_text(down.text, encoding="utf-8")
    want, got = cli_json(account), cli_json(again)
    for doc in (want, got):
        doc.pop("llmsizer_version", None)
    assert got == want
    # and the JSON download is that JSON too
    j = post(client, "/download/json", fields(up.text))
    web = json.loads(j.text)
    web.pop("llmsizer_version", None)
    assert web == want


def visible(html: str) -> str:
    """The text a reader sees: no tags, attributes or script."""
    import html as h

    text = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", h.unescape(re.sub(r"<[^>]+>", " ", text)))


def test_pages_name_options_in_words_never_by_id(client: TestClient) -> None:
    """No option, pool or node-group id of the results JSON on the account page, its charts
    or the debugger page: the configurations in the PDF's words instead."""
    page = client.get("/").text
    items = fields(page)
    result = json.loads(post(client, "/download/json", items).text)
    ids = {o["id"] for w in result["workloads"] for o in w["options"]}
    assert len(ids) > 50  # the Chat API quick start tries every GPU, TP and its precisions
    ids |= {p["id"] for p in result["plan"]["pools"]}
    ids |= {g["id"] for g in result["plan"]["node_groups"]}
    debug = post(client, "/debugger", items).text
    for html in (page, post(client, "/charts", items).text, debug):
        text = visible(html)
        assert sorted(i for i in ids if i in text) == []
    # the recommendation as the PDF words it: GPUs of one copy × the catalog's GPU name,
    # then the precisions
    w = result["workloads"][0]
    rec = next(o for o in w["options"] if o["id"] == w["recommended"])
    words = (f"{rec['tp']} × {load_catalog().gpus[rec['gpu']].name}, "
             f"{rec['weight_precision'].upper()} weights, {rec['kv_precision'].upper()} KV cache")
    assert f"Chat API: {words}" in visible(page)  # the recommendation table's row
    pool = result["plan"]["pools"][0]
    assert f"Pool 1: Chat API runs on {pool['replicas']} replicas of {words}; " in visible(page)
    assert f"Chat API {words}" in visible(debug)  # the debugger's heading


def test_no_two_option_rows_read_alike(client: TestClient) -> None:
    """The quick start's options table: options that differ only in their platform (an H200
    on two servers) are told apart by the platform's name under the option, as in the PDF's
    alternatives table, so no two rows read the same."""
    page = client.get("/").text
    # the table carries its id and class since session 23 (its best rows shown first)
    table = re.search(r'<section id="options">.*?<table[^>]*>(.*?)</table>', page,
                      re.S).group(1)
    rows = [visible(r).split(" USD")[0].strip()
            for r in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]]
    assert len(rows) == 40  # the first 40 of the quick start's options ("Show all" shows them)
    assert len(set(rows)) == len(rows), [r for r in rows if rows.count(r) > 1]
    assert "Dell PowerEdge XE9680" in table  # the recommended Gaudi 3's server


def test_an_update_returns_the_numbers_and_the_charts_follow(client: TestClient) -> None:
    """The live update carries no chart (they take longer to draw than the sizing); the page
    then asks for them, and a sizing's charts are drawn once and kept with it."""
    items = [(k, "321" if k == "workloads[0].concurrent_users" else v)
             for k, v in fields(client.get("/").text)]
    r = post(client, "/size", items)
    assert 'id="headline"' in r.text and 'class="chart"' not in r.text
    assert 'hx-post="/charts" hx-trigger="load"' in r.text
    first = post(client, "/charts", items)
    # the memory budget of the options, and the one workload's throughput against batch, each
    # drawn at the PDF's width and at a phone's (review round 22)
    assert first.status_code == 200 and first.text.count('<img class="chart"') == 4
    assert first.text.count('class="chart-phone"') == 2
    assert post(client, "/charts", items).text == first.text
    # what the charts worker does (jobs.Drawer), here: the same charts, kept with the
    # cached sizing and not drawn again
    text = forms.to_yaml(forms.form_to_data(items))
    assert charts_html(text) == first.text
    drawn = size_text(text).charts
    assert drawn is not None
    assert charts_html(text) == first.text and size_text(text).charts is drawn


LOAD = {"concurrent_users": "200", "requests_per_s": "9", "burstiness": "1.5",
        "named_users": "500", "requests_per_user_per_hour": "4", "peak_to_average": "2"}


@pytest.mark.parametrize("way, given, rate", [
    ("users", {"concurrent_users": "350"}, None),
    ("rate", {"requests_per_s": "12.5", "burstiness": "2"}, 12.5),
    # inputs/helpdesk-population.yaml: 2,000 users × 6 an hour × 3 at peak = 10 requests/s
    ("population", {"named_users": "2000", "requests_per_user_per_hour": "6",
                    "peak_to_average": "3", "burstiness": "1"}, 10.0)])
def test_each_load_way_round_trips_with_only_its_fields(client: TestClient, tmp_path: Path,
                                                        way: str, given: dict[str, str],
                                                        rate: float | None) -> None:
    """Every load field holds a value (a user tried each way): only the chosen way's reach
    the YAML; the CLI on it gives the web's JSON; uploaded again, the form shows that way."""
    keep = [(k, v) for k, v in fields(client.get("/").text)
            if not (k.startswith("workloads[0].") and k.split(".", 1)[1] in {*LOAD, "load_as"})]
    items = keep + [(f"workloads[0].{k}", given.get(k, v)) for k, v in LOAD.items()]
    items.append(("workloads[0].load_as", way))
    down = post(client, "/download/yaml", items).text
    stated = {k: v for k, v in yaml.safe_load(down)["workloads"][0].items() if k in LOAD}
    assert stated == {k: yaml.safe_load(v) for k, v in given.items()}
    path = tmp_path / "load.yaml"
    path.write_text(down, encoding="utf-8")
    web = json.loads(post(client, "/download/json", items).text)
    want = cli_json(path)
    for doc in (web, want):
        doc.pop("llmsizer_version", None)
    assert web == want
    demand = web["workloads"][0]["options"][0]["values"]
    if rate is not None:
        assert demand["peak_request_rate_per_s"] == pytest.approx(rate)
    up = client.post("/upload/yaml", files={"file": ("load.yaml", down.encode())})
    back = dict(fields(up.text))
    assert back["workloads[0].load_as"] == way
    assert {k: back[f"workloads[0].{k}"] for k in given} == given


# every kind's fields hold a value (a user tried each kind); the values of
# inputs/rag-knowledge-base.yaml
KINDS = {"prompt_tokens": "2000", "output_tokens": "300", "targets.ttft_s": "2",
         "targets.tokens_per_s_per_user": "20", "tokens_per_request": "64",
         "corpus_tokens": "2e10", "reindex_within_hours": "24", "candidates_per_request": "50",
         "tokens_per_pair": "320", "targets.latency_p95_s": "0.3", "engine": "fused-tensorrt"}


@pytest.mark.parametrize("kind, model, sent", [
    ("embed", "bge-m3", ("tokens_per_request", "corpus_tokens", "reindex_within_hours",
                         "targets.latency_p95_s", "engine")),
    ("rerank", "bge-reranker-v2-m3", ("candidates_per_request", "tokens_per_pair",
                                      "targets.latency_p95_s", "engine")),
    ("generate", "llama-3.1-70b", ("prompt_tokens", "output_tokens", "targets.ttft_s",
                                   "targets.tokens_per_s_per_user")),
])
def test_each_kind_round_trips_with_only_its_fields(client: TestClient, tmp_path: Path,
                                                    kind: str, model: str,
                                                    sent: tuple[str, ...]) -> None:
    """The kind chosen sends only its own fields (a key of another kind is refused by the
    schema); the CLI on the YAML gives the web's JSON; uploaded again, the form shows the kind,
    and its model list is the catalog's models of that kind."""
    drop = {*KINDS, "kind", "model", "load_as", "requests_per_s", "concurrent_users",
            "targets.response_time_s", "max_context_tokens"}
    items = [(k, v) for k, v in fields(client.get("/").text)
             if not (k.startswith("workloads[0].") and k.split(".", 1)[1] in drop)]
    items += [(f"workloads[0].{k}", v) for k, v in KINDS.items()]
    items += [("workloads[0].kind", kind), ("workloads[0].model", model),
              ("workloads[0].load_as", "rate"), ("workloads[0].requests_per_s", "50")]
    down = post(client, "/download/yaml", items).text
    w = yaml.safe_load(down)["workloads"][0]
    flat = {f"targets.{k}": v for k, v in w.pop("targets", {}).items()} | w
    assert set(flat) == {*sent, "name", "model", "requests_per_s"} | (
        {"kind"} if kind != "generate" else set())
    path = tmp_path / "kind.yaml"
    path.write_text(down, encoding="utf-8")
    web = json.loads(post(client, "/download/json", items).text)
    want = cli_json(path)
    for doc in (web, want):
        doc.pop("llmsizer_version", None)
    assert web == want
    up = client.post("/upload/yaml", files={"file": ("kind.yaml", down.encode())})
    assert dict(fields(up.text))["workloads[0].kind"] == kind
    group = re.search(rf'<optgroup[^>]*data-kind="{kind}"\s*>(.*?)</optgroup>', up.text, re.S)
    cat = load_catalog()
    ids = (set(cat.models) if kind == "generate" else
           {k for k, e in cat.embedders.items() if e.task == kind})
    assert group and set(re.findall(r'value="([^"]*)"', group.group(1))) == ids


def test_reasons_one_a_line_and_the_deployment_round_trip(client: TestClient) -> None:
    """inputs/ref-a-7b-assistant.yaml: two reasons, deployment cheapest; a blank line in the
    textarea is no reason; the select shows customer words, never the id."""
    text = (ROOT / "inputs" / "ref-a-7b-assistant.yaml").read_bytes()
    up = client.post("/upload/yaml", files={"file": ("ref-a.yaml", text)})
    items = fields(up.text)
    assert ("policy.deployment", "cheapest") in items
    assert "Whichever costs least (buy, rent or hosted API)</option>" in up.text
    assert "(default: Buying the servers)" in up.text and "on_prem" not in visible(up.text)
    items = [(k, v + "\n\n" if k == "account.reasons" else v) for k, v in items]
    data = yaml.safe_load(post(client, "/download/yaml", items).text)
    assert data["account"]["reasons"] == yaml.safe_load(text)["account"]["reasons"]
    assert len(data["account"]["reasons"]) == 2


def test_a_load_error_is_beside_its_field(client: TestClient) -> None:
    items = [(k, v) for k, v in fields(client.get("/").text) if "load_as" not in k]
    items += [("workloads[0].load_as", "population"), ("workloads[0].named_users", "2000"),
              ("workloads[0].requests_per_user_per_hour", "6")]
    r = post(client, "/size", items)
    slot = re.search(r'id="error-slot" data-field="([^"]*)" data-message="([^"]*)"', r.text)
    assert slot and slot.group(1) == "workloads[0].named_users"
    assert slot.group(2).startswith("named_users needs peak_to_average too")


def test_workbook_download_and_edited_upload_shows_the_diff(client: TestClient, tmp_path: Path) -> None:
    items = fields(client.get("/").text)
    r = post(client, "/download/xlsx", items)
    assert r.status_code == 200 and r.content[:2] == b"PK"
    book = openpyxl.load_workbook(io.BytesIO(r.content))
    assert "Inputs" in book.sheetnames
    # finance doubles the users of the first workload on the Inputs sheet
    edited = _edit_users(r.content, tmp_path)
    up = client.post("/upload/workbook", files={"file": ("edited.xlsx", edited)})
    assert up.status_code == 200, re.findall(r'id="upload-error">([^<]*)', up.text)
    diff = re.search(r'id="diff">(.*?)</div>', up.text, re.S)
    assert diff and "concurrent" in diff.group(1).lower() and "400" in diff.group(1)
    assert ("workloads[0].concurrent_users", "400") in fields(up.text)


def _edit_users(data: bytes, tmp_path: Path) -> bytes:
    """Change the first workload's users the way a spreadsheet would (openpyxl keeps the
    custom properties llmsizer writes)."""
    path = tmp_path / "book.xlsx"
    path.write_bytes(data)
    wb = openpyxl.load_workbook(path)
    ws = wb["Inputs"]
    for row in ws.iter_rows():
        for cell in row:
            if cell.value == 200 and "concurrent" in str(ws.cell(cell.row, 1).value).lower():
                cell.value = 400
                wb.save(path)
                return path.read_bytes()
    raise AssertionError("no users cell found on the Inputs sheet")


def test_pdf_is_written_in_the_pool_with_progress(client: TestClient) -> None:
    import time

    items = fields(client.get("/").text)
    r = post(client, "/download/pdf", items)
    job = re.search(r'/jobs/([A-Za-z0-9_-]+)', r.text)
    assert job, r.text
    for _ in range(240):
        s = client.get(f"/jobs/{job.group(1)}")
        if "pdf-ready" in s.text:
            break
        assert "Writing the PDF" in s.text, s.text
        time.sleep(0.5)
    f = client.get(f"/jobs/{job.group(1)}/file")
    assert f.status_code == 200 and f.content[:5] == b"%PDF-"


# ---- hostile input ------------------------------------------------------------------------

def test_html_in_names_is_text_never_markup(client: TestClient) -> None:
    items = [(k, "<script>alert(1)</script><img src=x onerror=alert(2)>" if k in (
        "account.name", "workloads[0].name") else v) for k, v in fields(client.get("/").text)]
    r = post(client, "/size", items)
    assert r.status_code == 200
    assert "<script>alert" not in r.text and "<img src=x" not in r.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    page = client.get("/").text
    assert re.search(r"<script(?![^>]*\bsrc=)", page) is None  # no inline script


def test_oversize_bodies_are_refused_and_the_server_serves_on(client: TestClient) -> None:
    big = b"a: " + b"x" * 1_200_000
    r = client.post("/upload/yaml", files={"file": ("big.yaml", big)})
    assert r.status_code == 413 and r.text.startswith(
        "the requirements YAML is larger than the 1,000,000 bytes allowed")
    # an ordinary form post has the YAML's limit too (the form becomes the YAML): it says so
    r = client.post("/size", content=b"x" * 1_100_000,
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 413 and r.text == (
        "the account form (all its fields together) is larger than the 1,000,000 bytes "
        "allowed (1,100,000 bytes sent): shorten the notes or the names")
    r = client.post("/upload/workbook", files={"file": ("big.xlsx", b"PK" + b"\0" * 20_100_000)})
    assert r.status_code == 413 and r.text.startswith(
        "the workbook is larger than the 20,000,000 bytes allowed")
    assert client.get("/").status_code == 200


def test_hostile_workbook_gets_one_clear_line(client: TestClient) -> None:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # a zip bomb's first step: a huge, compressible part
        z.writestr("xl/workbook.xml", b"<" + b"A" * 5_000_000)
    r = client.post("/upload/workbook", files={"file": ("bomb.xlsx", buf.getvalue())})
    assert r.status_code == 400
    err = re.search(r'id="upload-error">([^<]*)<', r.text)
    assert err and err.group(1).startswith("bomb.xlsx: ")
    r = client.post("/upload/workbook", files={"file": ("not.xlsx", b"hello")})
    assert r.status_code == 400 and "not.xlsx: " in r.text
    assert client.get("/").status_code == 200


def test_yaml_upload_errors_name_the_file_and_the_forms_field(client: TestClient) -> None:
    """The file, then the field as the form labels it (review round 19: the file's line and
    the loader's path, acme.yaml:21:5: workloads[0].concurrent_users, are the CLI's words)."""
    text = (ROOT / "inputs" / "example.yaml").read_text().replace("concurrent_users: 200",
                                                                   "concurrent_users: lots")
    r = client.post("/upload/yaml", files={"file": ("acme.yaml", text.encode())})
    assert r.status_code == 400
    err = re.search(r'id="upload-error">([^<]*)<', r.text)
    assert err and err.group(1).startswith(
        "One problem to fix in acme.yaml: "
        "Internal assistant — Concurrent users at peak: must be a whole number")
    assert re.search(r"\(line \d+\)$", err.group(1).strip())  # the file's line, for an editor
    # an alias bomb is refused by the same loader as the CLI's
    bomb = b"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"
    r = client.post("/upload/yaml", files={"file": ("bomb.yaml", bomb)})
    assert r.status_code == 400 and "alias" in r.text.lower()


def test_a_path_in_the_form_is_never_read(client: TestClient) -> None:
    items = [(k, "../../etc/passwd.json" if k == "workloads[0].model" else v)
             for k, v in fields(client.get("/").text)]
    r = post(client, "/size", items)
    assert 'data-field="workloads[0].model"' in r.text
    assert "is not read here" in r.text and "root:" not in r.text


def test_token_is_required_on_every_request_off_loopback() -> None:
    with pytest.raises(InputError, match="--token"):
        check_bind("0.0.0.0", None)
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", "a" * 24)
    with TestClient(create_app(token="t0ken-t0ken-t0ken-1", loopback_only=False)) as c:
        assert c.get("/").status_code == 401
        assert c.get("/static/app.css").status_code == 401
        assert c.post("/size", data={}).status_code == 401
        assert c.get("/", headers={"x-llmsizer-token": "wrong-wrong-wrong-1"}).status_code == 401
        ok = c.get("/?token=t0ken-t0ken-t0ken-1")
        assert ok.status_code == 200 and "llmsizer_token=" in ok.headers["set-cookie"]
        assert c.get("/catalog/gpus").status_code == 200  # the cookie carries it
        assert c.get("/", headers={"x-llmsizer-token": "t0ken-t0ken-t0ken-1"}).status_code == 200


def test_loopback_server_refuses_other_host_names() -> None:
    with TestClient(create_app(), base_url="http://evil.example") as c:
        assert c.get("/").status_code == 421


def test_reference_pages_show_catalog_data_with_sources(client: TestClient) -> None:
    r = client.get("/catalog/gpus")
    # NVIDIA's H100 SXM datasheet: 80 GB, 3.35 TB/s, 989.5 dense BF16 TFLOP/s (catalog)
    row = re.search(r'<td class="key">h100-sxm</td>(.*?)</tr>', r.text, re.S)
    assert row and "80 GB" in row.group(1) and "3.35 TB/s" in row.group(1) and "989.5" in row.group(1)
    assert "datasheet" in row.group(1)
    prices = visible(client.get("/catalog/prices").text)
    assert "2026-" in prices  # dated prices
    # GPUs by name and offers in words, as the PDF's cost section says them; the key a
    # requirements file uses beside the name
    cat = load_catalog()
    g = cat.gpus["h100-sxm"]
    assert f"{g.name} h100-sxm {g.price_usd:,.0f} {g.price_date}" in prices
    offer = cat.prices.cloud["h100-sxm"]["committed_1yr"]
    price = " ".join(Formatter("USD").money(offer.usd_per_gpu_hour).split())  # as the PDF
    assert f"{g.name} h100-sxm committed one-year contract {price}" in prices
    assert " committed_1yr " not in prices and " gpu_cloud " not in prices
    assert client.get("/catalog/nothing").status_code == 404


def test_estimate_page_is_the_cli_estimate_with_a_roofline(client: TestClient) -> None:
    r = client.get("/estimate?model=llama-3.1-70b&gpu=h200-sxm&tp=1&weights=fp8&kv=fp8"
                   "&prompt=1024&output=128&batch=16")
    cli = subprocess.run([sys.executable, "-m", "llmsizer.cli", "estimate", "--model",
                          "llama-3.1-70b", "--gpu", "h200-sxm", "--tp", "1", "--weights", "fp8",
                          "--kv", "fp8", "--prompt-tokens", "1024", "--output-tokens", "128",
                          "--concurrency", "16", "--json"], capture_output=True, text=True,
                         check=True)
    want = json.loads(cli.stdout)
    # to three figures, as the results page and the PDF give a latency (Formatter.ms; review
    # round 20: the page gave "549.3 ms" of the CLI's 549.28)
    ms = Formatter("USD").ms
    assert f'id="ttft">{ms(want["ttft_ms"])}<' in r.text
    assert f'id="itl">{ms(want["tpot_ms"])}<' in r.text
    assert 'alt="Roofline' in r.text


CONFIG = ROOT / "tests" / "data" / "llama-70b-class" / "config.json"


def _with_config(client: TestClient, body: bytes, name: str = "config.json") -> Any:
    """Upload a config.json for the first workload, with the whole form, as the page's
    "Use it" button does (multipart: the form's fields and the file)."""
    items = [*fields(client.get("/").text), ("config_for", "0")]
    return client.post("/upload/config", files=[
        ("workloads[0].config_file", (name, body, "application/json")),
        *[(k, (None, v)) for k, v in items]])


def test_an_uploaded_config_json_sizes_as_the_cli_does(client: TestClient, tmp_path: Path) -> None:
    """A config.json comes in as content, is named by its model name (never a path or
    "config.json"), and the download is a zip whose YAML the CLI sizes to the same JSON."""
    r = _with_config(client, CONFIG.read_bytes())
    assert r.status_code == 200, re.findall(r'id="upload-error">([^<]*)', r.text)
    items = fields(r.text)
    model = dict(items)["workloads[0].model"]
    assert model == "models/llama-3-70b-class-seed-001-002-003-round-figures/config.json"
    # the select shows the config's _name_or_path, the CLI's name for it
    assert "Llama-3-70B-class (seed 001/002/003 round figures) (your config.json)" in visible(r.text)
    assert "config.json" not in re.sub(r"\(your config\.json\)|your model's config\.json", "",
                                       visible(r.text))
    down = post(client, "/download/yaml", items)
    assert down.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(down.content)) as z:
        names = z.namelist()
        z.extractall(tmp_path)
    assert names == ["new-account.yaml", model]
    assert (tmp_path / model).read_bytes() == CONFIG.read_bytes()
    want = cli_json(tmp_path / "new-account.yaml")
    web = json.loads(post(client, "/download/json", items).text)
    for doc in (want, web):
        doc.pop("llmsizer_version", None)
    assert web == want
    assert web["workloads"][0]["model_name"] == "Llama-3-70B-class (seed 001/002/003 round figures)"
    # the live update carries the config too: the same headline as the page
    headline = re.search(r'id="headline">([^<]*)<', r.text)
    assert headline and headline.group(1) in post(client, "/size", items).text


def test_a_bad_config_json_gets_the_cli_words_and_the_server_serves_on(client: TestClient) -> None:
    r = _with_config(client, b'{"hidden_size": 8192, "hidden_size": 4096}')
    err = re.search(r'id="upload-error">([^<]*)<', r.text)
    assert r.status_code == 400 and err and "states each setting once" in err.group(1)
    r = _with_config(client, b'{"num_hidden_layers": 80}', name="x.json")
    err = re.search(r'id="upload-error">([^<]*)<', r.text)
    assert r.status_code == 400 and err
    assert "config file 'x.json' lacks a positive integer 'hidden_size'" in html_lib.unescape(
        err.group(1))
    r = _with_config(client, b"x" * 1_200_000)  # over the form's limit: refused before reading
    assert r.status_code == 413
    # a forged hidden field is read by the same reader before any sizing: an error, no sizing
    items = [(k, v) for k, v in fields(client.get("/").text) if k != "workloads[0].model"]
    items += [("workloads[0].model", "models/x/config.json"),
              ("workloads[0].model_config", '{"hidden_size": 1e999}')]
    out = post(client, "/size", items)
    shown = re.search(r'id="sizing-error">One problem to fix in the form: ([^<]*)<', out.text)
    assert shown and html_lib.unescape(shown.group(1)).startswith(
        "config file 'models/x/config.json': 'hidden_size' must be a whole number")
    assert client.get("/").status_code == 200


def test_retrieval_workloads_are_on_the_results_panel(client: TestClient) -> None:
    """The RAG account's embedding and reranking servers, with the JSON's figures; the
    reranker here runs on hand-fused kernels, the embedder on the default serving stack."""
    account = ROOT / "inputs" / "rag-knowledge-base.yaml"
    text = account.read_text().replace("    tokens_per_pair: 320",
                                       "    engine: fused-tensorrt\n    tokens_per_pair: 320")
    up = client.post("/upload/yaml", files={"file": (account.name, text.encode())})
    assert up.status_code == 200
    result = json.loads(post(client, "/download/json", fields(up.text)).text)
    assert result["plan"]["retrieval_groups"]
    assert sorted(w["engine"] for w in result["retrieval"]) == ["fused-tensorrt", "serving-stack"]
    panel = re.search(r'<section id="retrieval">(.*?)</section>', up.text, re.S)
    assert panel
    text = visible(panel.group(1))
    # the serving stack has too few published rows of its own (embedders.yaml)
    assert "fitted on published benchmarks of that engine, or of every engine where" in text
    cat = load_catalog()
    for g in result["plan"]["retrieval_groups"]:
        rw = next(w for w in result["retrieval"] if w["name"] == g["workload"])
        best = next(o for o in rw["options"] if o["id"] == rw["recommended"])
        row = (f"{g['workload']}: {rw['model_name']} "
               f"({'embedding' if g['kind'] == 'embed' else 'reranking'}) on "
               f"{cat.gpus[g['gpu']].name}")
        assert row in text
        # the encoder engine it is sized for, in the PDF's words (never the engine's id)
        engine = cat.encoder_engines[rw["engine"]]
        assert f"{row} Serving engine: {engine.name} " in text
        assert rw["engine"] not in text
        tail = text.split(row, 1)[1]
        # platform, then nodes, replicas and GPUs bought
        assert f"{g['nodes']} {g['replicas']} {g['gpus_purchased']}" in tail.split("(p95)")[0] or \
            f" {g['nodes']} {g['replicas']} {g['gpus_purchased']} " in tail
        assert f"{float(best['values']['replica_tokens_per_s']):,.0f}" in tail
    # each retrieval workload's candidate GPUs, by name, with why each is not chosen
    options = visible(re.search(r'<section id="options">(.*?)</section>', up.text, re.S).group(1))
    for rw in result["retrieval"]:
        part = options.split(rw["name"], 1)[1]
        for o in rw["options"]:
            assert cat.gpus[o["gpu"]].name in part
        ruled_out = [o for o in rw["options"] if not o["feasible"]]
        assert all(o["reason"].split(";")[0][:30] in part for o in ruled_out[:3])
    # a GPU without a catalog price is never called dearer (the A10 has none)
    unpriced = [o for rw in result["retrieval"] for o in rw["options"]
                if o["feasible"] and not o["priced"]]
    dearer = [o for rw in result["retrieval"] for o in rw["options"]
              if o["feasible"] and o["priced"] and o["id"] != rw["recommended"]]
    assert unpriced and options.count("no price to compare") == len(unpriced)
    assert options.count("meets the targets; dearer") == len(dearer)


def test_form_choices_are_words_never_ids(client: TestClient) -> None:
    """The form and the estimate page show precisions and cloud offers as the PDF words
    them (FP8, committed one-year contract), never the ids the YAML holds; the values sent
    stay the ids, so the YAML round-trips."""
    cat = load_catalog()
    for url in ("/", "/?start=rag", "/?start=batch", "/estimate"):
        page = client.get(url).text
        text = visible(page)
        for p in cat.precisions:
            assert not re.search(rf"(?<![\w-]){re.escape(p)}(?![\w])", text), (url, p)
        for tier in ("hyperscaler_on_demand", "committed_1yr", "committed_3yr", "gpu_cloud"):
            assert tier not in text, (url, tier)
    page = client.get("/").text
    assert 'value="fp8"' in page and "> FP8</label>" in page
    assert '<option value="committed_3yr" >committed three-year contract</option>' in page


@pytest.mark.parametrize("name", ["example.yaml", "enterprise-multi.yaml",
                                  "rag-knowledge-base.yaml", "../tests/data/rag-shared.yaml"])
def test_per_workload_figures_are_the_plans_shares(client: TestClient, name: str) -> None:
    """The results panel's per-workload rows are each workload's share of the plan, the
    JSON's plan.pools[].shares (the PDF's cost columns and the Summary sheet read the same),
    never the workload sized alone; an embed or rerank workload's row is its retrieval group
    (on a language-model node group's idle GPUs: nothing bought); the rows add up to the
    account's totals."""
    from llmsizer.documents.proposal.format import Formatter

    account = (ROOT / "inputs" / name).resolve()
    up = client.post("/upload/yaml", files={"file": (account.name, account.read_bytes())})
    assert up.status_code == 200
    doc = json.loads(post(client, "/download/json", fields(up.text)).text)
    table = re.search(r'<table id="per-workload">(.*?)</table>', up.text, re.S)
    assert table
    rows = [visible(r) for r in re.findall(r"<tbody\b.*?</tbody>", table.group(1), re.S)]
    form = Formatter(doc["account"]["currency"])

    class fmt:  # the page's figures as a reader sees them (visible(): no-break spaces too)
        @staticmethod
        def money(x: float) -> str:
            return form.money(x).replace("\xa0", " ")

        count, decimal = staticmethod(form.count), staticmethod(form.decimal)

    shares = {doc["workloads"][i]["name"]: (p, s) for p in doc["plan"]["pools"]
              for i, s in zip(p["workload_indices"], p["shares"], strict=True)}
    capex = onprem = 0.0
    for w in doc["workloads"]:
        pool, s = shares[w["name"]]
        row = next(r for r in rows if r.strip().startswith(w["name"]))
        capex, onprem = capex + s["plan_capex"], onprem + s["plan_annual_cost_onprem"]
        assert f" {fmt.money(s['plan_capex'])} {fmt.money(s['plan_annual_cost_onprem'])}" in row
        replicas = (fmt.decimal(s["plan_replicas"], 2) if len(pool["workloads"]) > 1
                    else fmt.count(s["plan_replicas"]))
        gpus = (fmt.count(s["plan_gpus_purchased"]) if s["plan_group_share"] == 1
                else fmt.decimal(s["plan_gpus_purchased"], 1))
        # session 23: a workload alone in its pool shows its batch limit and the batch its load
        # keeps (batch_served); one sharing a pool its limit and the pool's mixed batch at peak
        alone_v = next(o for o in w["options"] if o["id"] == w["recommended"])["values"]
        batch = (f"{fmt.count(alone_v['batch_per_replica'])} / "  # " / ": round 25
                 + (fmt.count(pool["batch_per_replica"]) if len(pool["workloads"]) > 1
                    else form.batch(alone_v["batch_served"])))
        assert f" {batch} {replicas} {gpus} " in row, row
        alone = next(o for o in w["options"] if o["id"] == w["dedicated"])["values"]
        if s["plan_capex"] != alone["capex"]:  # the stand-alone figure is not shown
            assert fmt.money(alone["capex"]) not in row
    for g in doc["plan"]["retrieval_groups"]:
        row = next(r for r in rows if r.strip().startswith(g["workload"]))
        capex, onprem = capex + g["capex"], onprem + g["annual_cost_onprem"]
        # session 25: on idle GPUs another group bought, nothing bought, its per-year cell says
        # "no extra cost" as the PDF's and the CLI's do (retrieval_no_extra_cost_onprem; was USD 0)
        rw = next(x for x in doc["retrieval"] if x["name"] == g["workload"])
        free = next(o for o in rw["options"] if o["id"] == rw["recommended"])["values"][
            "retrieval_no_extra_cost_onprem"]
        year = "no extra cost" if free else fmt.money(g["annual_cost_onprem"])
        assert f" {fmt.money(g['capex'])} {year}" in row
        assert ("idle GPUs already bought" in row) == (g["shares_with"] is not None)
    t = doc["totals"]
    assert abs(capex - t["capex"]) < 0.5 and abs(onprem - t["annual_cost_onprem"]) < 0.5
    assert rows[-1].split()[:2] == ["Account", "(plan)"]
    assert f"{fmt.money(t['capex'])} {fmt.money(t['annual_cost_onprem'])}" in rows[-1]
