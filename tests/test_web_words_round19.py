"""Review round 19 (the web upload panel): an uploaded requirements file's problems were told
on the web in the file's words: the upload box listed the loader's paths
("acme.yaml:21:5: workloads[1].prompt_tokens: ...") and both the box and the results panel
advised YAML ("write a plain number without units or quotes, e.g. `prompt_tokens: 300`").
The web user sees a form: each problem now names the workload by its name and the field by
the form's label, and says what to type in that field. The CLI keeps the file's words."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from test_review_round19b import _three_problems

from llmsizer.base.errors import InputError
from llmsizer.inputs.loader import load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.web.app import create_app
from llmsizer.web.service import size_text

ROOT = Path(__file__).resolve().parents[1]
# _three_problems: the reviewer's file (inputs/example.yaml with a misspelt model, a negative
# request rate and a word for the prompt's tokens), shared with test_review_round19b
LABELS = ["Internal assistant — Model", "Contract RAG — Requests per second at peak",
          "Contract RAG — Prompt tokens"]


@pytest.fixture(scope="module")
def page() -> str:
    with TestClient(create_app()) as c:
        r = c.post("/upload/yaml", files={"file": ("acme.yaml", _three_problems().encode())})
    assert r.status_code == 400
    return r.text


def _box(text: str, start: str, end: str) -> list[str]:
    part = text[text.index(start):]
    part = part[:part.index(end)]
    return [html_lib.unescape(re.sub(r"<[^>]+>", "", li))
            for li in re.findall(r"<li>(.*?)</li>", part, re.S)]


def test_the_upload_box_names_the_form_fields_not_the_files_paths(page: str) -> None:
    told = _box(page, 'id="upload-error"', "</div>")
    assert [t.split(":")[0] for t in told] == LABELS
    assert "must be more than 0 (found -2)" in told[1]
    assert told[2].startswith("Contract RAG — Prompt tokens: must be a whole number (found "
                              "'lots'); type a whole number such as 300")
    for t in told:
        assert "workloads[" not in t and "prompt_tokens:" not in t and "`" not in t
        assert not re.match(r"acme\.yaml:\d+", t)  # not the CLI's "file:line:col: path"
        # but the file's line stays, for whoever fixes the file in an editor
        assert re.search(r"\(line \d+\)$", t)


def test_the_results_panel_and_the_fields_say_what_to_type(page: str) -> None:
    told = _box(page, 'id="sizing-error"', "</section>")
    assert [t.split(":")[0] for t in told] == LABELS
    beside = [html_lib.unescape(m) for m in re.findall(r'data-message="([^"]*)"', page)]
    assert len(beside) == 3
    for t in told + beside:
        assert "workloads[" not in t and "prompt_tokens:" not in t and "`" not in t
    assert beside[2] == ("must be a whole number (found 'lots'); type a whole number such as "
                         "300 (allowed: a whole number from 1 to 2,000,000)")
    assert told[2] == f"Contract RAG — Prompt tokens: {beside[2]}"


def test_the_cli_keeps_the_files_words() -> None:
    with pytest.raises(InputError) as caught:
        load_from_text(_three_problems(), "acme.yaml", load_catalog())
    said = str(caught.value)
    assert ("acme.yaml:21:5: workloads[1].prompt_tokens: must be a whole number (found 'lots'); "
            "write a plain number without units or quotes, e.g. `prompt_tokens: 300`") in said
    assert "acme.yaml:20:5: workloads[1].requests_per_s: must be more than 0" in said


@pytest.mark.parametrize(("field", "cli", "web"), [
    ("workloads[0].output_tokens",
     "write a plain number without units: `output_tokens: 300`", "type the number alone: 300"),
    ("workloads[0].targets.ttft_s", "write a plain number without units: `ttft_s: 2` (seconds: the "
     "unit is in the key name)", "type the number alone: 2"),
    ("workloads[0].prompt_tokens", "write the number without quotes: `prompt_tokens: 500`",
     "type the number alone: 500"),
    ("workloads[0].prompt_tokens", "write a whole number, e.g. `prompt_tokens: 3`",
     "type a whole number such as 3"),
    ("workloads[0].prompt_tokens", "write a number, e.g. `prompt_tokens: 2`, not true/false",
     "type a number such as 2, not true/false"),
    ("policy.headroom", "write a plain number without units or quotes, e.g. `headroom: 2`",
     "type a number such as 2"),
])
def test_each_number_hint_reads_as_what_to_type(field: str, cli: str, web: str) -> None:
    """The loader's number hints (inputs/schema_messages.py _type_hint) in the form's words."""
    from llmsizer.web.service import form_words  # new in round 19: the other tests run before

    assert form_words(f"must be a number (found 'x'); {cli}", field) == \
        f"must be a number (found 'x'); {web}"


def test_a_form_value_that_is_a_word_is_told_in_the_forms_words() -> None:
    """The live form (POST /size) goes through the same words: a word typed for the prompt's
    tokens of inputs/example.yaml's second workload."""
    text = (ROOT / "inputs" / "example.yaml").read_text(encoding="utf-8").replace(
        "    prompt_tokens: 2000\n", "    prompt_tokens: lots\n", 1)
    sized = size_text(text)
    assert sized.error == ("Contract RAG — Prompt tokens: must be a whole number (found 'lots'); "
                           "type a whole number such as 300 (allowed: a whole number from 1 to "
                           "2,000,000)")
