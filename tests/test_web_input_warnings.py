"""The web app shows the input warnings the command line prints (inputs/doubts.py: a target
that looks typed in the other unit; a name's typographic quotes): a loaded file's with its
line, where the page already shows an edited workbook's warnings, and the form's own sizing's
in the results panel, in the form's words. Before, the web showed none of them."""

from __future__ import annotations

import html
import re
from urllib.parse import urlencode

import pytest
import yaml
from fastapi.testclient import TestClient
from helpers import example_dict

from llmsizer.web import forms
from llmsizer.web.app import create_app

# 45 s before the first token for a 500-token prompt: beyond the doubt limit of 20 s plus
# 500 / 2,000 s (inputs/doubts.py), inside the schema's 120 s
DOUBT = ("45 s before the first token is far beyond the usual 0.2–10 s for a 500-token "
         "prompt: check it was not meant in milliseconds (0.045 s)")


@pytest.fixture(scope="module")
def client() -> TestClient:
    with TestClient(create_app()) as c:
        yield c


def account(name: str, ttft_s: float) -> dict:
    doc = example_dict()
    doc["account"]["name"] = name
    doc["workloads"] = doc["workloads"][:1]  # Internal assistant: 500-token prompts
    doc["workloads"][0]["targets"] = {"tokens_per_s_per_user": 30, "ttft_s": ttft_s}
    doc["hardware"]["gpus"] = ["h100-sxm"]
    doc["hardware"]["weight_precisions"] = ["fp8"]
    return doc


def text_of(page: str, element_id: str) -> list[str]:
    """The text of each list item (or the element itself) under the element with this id."""
    m = re.search(rf'<(\w+)[^>]* id="{element_id}"[^>]*>(.*?)</\1>', page, re.S)
    if m is None:
        return []
    items = re.findall(r"<li>(.*?)</li>", m.group(2), re.S) or [m.group(2)]
    return [html.unescape(re.sub(r"<[^>]+>", "", x)).strip() for x in items]


def test_a_loaded_file_shows_its_warnings_with_their_lines(client: TestClient) -> None:
    text = yaml.safe_dump(account("“Acme Corp”", 45), sort_keys=False, allow_unicode=True)
    r = client.post("/upload/yaml", files={"file": ("acme.yaml", text.encode())})
    assert r.status_code == 200
    told = [html.unescape(w) for w in re.findall(r'<div class="muted">warning: (.*?)</div>', r.text)]
    assert told == [
        "acme.yaml:3:3: account.name: the typographic quotes around “Acme Corp” are left out: "
        "the proposal names it Acme Corp",
        f"acme.yaml:15:5: workloads[0].targets.ttft_s: {DOUBT}; if so, write `ttft_s: 0.045`"]
    # the form's own sizing of the same file: in the results panel, by the workload's name
    assert text_of(r.text, "input-warnings") == [f"Internal assistant: {DOUBT}"]


def test_the_forms_sizing_shows_a_doubtful_target_in_the_results(client: TestClient) -> None:
    items: list[tuple[str, str]] = []
    for k, v in forms.form_values(account("Acme Corp", 45)).items():
        items += [(k, x) for x in v] if isinstance(v, list) else [(k, v)]
    r = client.post("/size", content=urlencode(items),
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200 and 'id="headline"' in r.text
    assert text_of(r.text, "input-warnings") == [f"Internal assistant: {DOUBT}"]
    # 2 s is a usual target: nothing is told
    items = [(k, "2" if k == "workloads[0].targets.ttft_s" else v) for k, v in items]
    r = client.post("/size", content=urlencode(items),
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert 'id="headline"' in r.text and 'id="input-warnings"' not in r.text
