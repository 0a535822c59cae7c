"""Review round 20 (the web app's words for a file's shape and its catalog ids).

1. An unknown model, GPU or platform was told on the web by the catalog's ids ("did you mean
   llama-3.1-70b or llama-3.3-70b ...; valid: deepseek-r1, ..."), which the form never shows:
   its lists show names ("Llama 3.1 70B"). The web now guesses and lists by those names; the
   CLI keeps the ids the file takes, each guess with its name where the name says more.
2. A file of the wrong shape (a word where a list belongs, `yes` for true, a list where a group
   of keys belongs, a number where text belongs, a misspelt key) was told on the web as the
   YAML to write ("write a list, e.g. `gpus: [h100-sxm]`"). Each now says what to tick,
   choose, type or fill in on the form, keeping the file's line, as round 19 did for numbers.

The files are inputs/example.yaml with one line changed; every sentence is the one a user
reads in the upload box (or the results panel) of POST /upload/yaml."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from llmsizer.base.errors import InputError
from llmsizer.inputs.loader import load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = (ROOT / "inputs" / "example.yaml").read_text(encoding="utf-8")
UPLOAD_HINT = (" (or choose your model's Hugging Face config.json under the workload's Model "
               "field and press Use it)")


def _file(old: str, new: str) -> str:
    assert EXAMPLE.count(old) >= 1, old
    return EXAMPLE.replace(old, new, 1)


@pytest.fixture(scope="module")
def client() -> TestClient:
    with TestClient(create_app()) as c:
        yield c


def _upload(client: TestClient, text: str) -> tuple[list[str], list[str]]:
    """(the upload box's lines, the results panel's lines) as a user reads them."""
    r = client.post("/upload/yaml", files={"file": ("acme.yaml", text.encode())})
    assert r.status_code == 400
    page = r.text
    box = page[page.index('id="upload-error">') + len('id="upload-error">'):]
    box = box[:box.index("</div>")]
    items = re.findall(r"<li>(.*?)</li>", box, re.S)
    told = items or [box]
    panel: list[str] = []
    if 'id="sizing-error"' in page:
        part = page[page.index('id="sizing-error"'):]
        part = part[:part.index("</section>")]
        panel = re.findall(r"<li>(.*?)</li>", part, re.S) or [
            re.sub(r"^One problem to fix in [^:]*: ", "", part.split(">", 1)[1].split("<", 1)[0])]
    clean = [html_lib.unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in told]
    return clean, [html_lib.unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in panel]


def _names(table: dict[str, Any]) -> str:
    """The catalog's names as the web lists them: the form's list of choices, A to Z."""
    return ", ".join(sorted({str(e.name) for e in table.values()}, key=str.casefold))


# ---- 1. catalog ids by the names the form shows ------------------------------------------

def test_a_misspelt_model_is_guessed_and_listed_by_the_names_of_the_model_list(
        client: TestClient) -> None:
    box, panel = _upload(client, _file("    model: llama-3.1-70b\n",
                                       "    model: llama-3.1-70b-instruc\n"))
    names = _names(load_catalog().models)
    # the form's Model list shows "Llama 3.1 70B", never llama-3.1-70b (it said
    # "(did you mean llama-3.1-70b or llama-3.3-70b or llama-3-70b?); valid: deepseek-r1, ...")
    # round 24: the CLI's one guess in the CLI's words (it guessed three, the CLI one)
    said = ("Internal assistant — Model: unknown model 'llama-3.1-70b-instruc': did you mean "
            f"Llama 3.1 70B? Or choose another from the list{UPLOAD_HINT}")
    assert box == [f"One problem to fix in acme.yaml: {said} (line 11)"]
    assert panel == [said]
    assert "llama-3.3-70b" not in said and "deepseek-r1" not in said
    # with guesses, the form's list beside the box is not written out again (the 40 names
    # were noise); without one, neither (the '8' GPU below, review round 21)
    assert names.split(", ")[0] not in said


def test_a_model_by_its_hugging_face_name_is_told_by_the_name_the_list_shows(
        client: TestClient) -> None:
    box, _ = _upload(client, _file("    model: llama-3.1-70b\n",
                                   "    model: Llama-3.1-70B-Instruct\n"))
    # it said "the catalog names it llama-3.1-70b; write llama-3.1-70b": an id the form hides
    assert box == ["One problem to fix in acme.yaml: Internal assistant — Model: unknown model "
                   "'Llama-3.1-70B-Instruct': the list names it Llama 3.1 70B; choose that"
                   f"{UPLOAD_HINT} (line 11)"]


def test_an_unknown_gpu_and_platform_are_told_by_the_names_the_form_shows(
        client: TestClient) -> None:
    text = _file("  gpus: [h100-sxm, h200-sxm, l40s]", "  gpus: [h100-sxn, h200-sxm, l40s]")
    text = text.replace("  kv_precisions: [fp8]\n", "  kv_precisions: [fp8]\n  platform: dgx-h10\n")
    box, _ = _upload(client, text)
    assert box == [
        "Hardware — GPUs to consider: unknown GPU 'h100-sxn': did you mean NVIDIA H100 SXM "
        # the GPUs are boxes, not a list (review round 21)
        "80GB? Untick it and tick the one you meant in the boxes (line 29)",
        # round 24: the CLI's guess, as the CLI words it (it listed three, the CLI one)
        "Hardware — Platform (server or node): unknown platform 'dgx-h10': did you mean NVIDIA "
        "DGX H100 (8x H100 SXM5 80GB)? Or choose another from the list (line 32)"]


def test_the_cli_keeps_the_ids_the_file_takes_each_guess_with_its_name() -> None:
    text = _file("    model: llama-3.1-70b\n", "    model: llama-3.1-70b-instruc\n").replace(
        "  gpus: [h100-sxm, h200-sxm, l40s]", "  gpus: [h100-sxn, h200-sxm, l40s]")
    with pytest.raises(InputError) as caught:
        load_from_text(text, "acme.yaml", load_catalog())
    said = str(caught.value).split("\n")
    # a name that only spells the id otherwise ("Llama 3.1 70B") is not repeated; with a guess
    # the command that lists them, not the whole list (review round 25)
    assert said[1].startswith(
        "  acme.yaml:11:5: workloads[0].model: unknown model 'llama-3.1-70b-instruc': did you "
        "mean llama-3.1-70b? `llmsizer catalog models` lists them all")
    # the GPU's name says more than its id: it said "(did you mean h100-sxm or h200-sxm ...)";
    # session 23: the closest alone, no brackets around it (it said "(did you mean h100-sxm
    # (NVIDIA H100 SXM 80GB) or h200-sxm (NVIDIA H200 SXM) or h100-nvl (NVIDIA H100 NVL)?)")
    assert said[2] == (
        "  acme.yaml:29:10: hardware.gpus[0]: unknown GPU 'h100-sxn': did you mean h100-sxm "
        "(NVIDIA H100 SXM 80GB)? `llmsizer catalog gpus` lists them all")


# ---- 2. a file's shape in the form's words -----------------------------------------------

SHAPES = {
    # a word where the list of GPUs belongs: it said "write a list, e.g. `gpus: [h100-sxm]`"
    "gpus-word": (("  gpus: [h100-sxm, h200-sxm, l40s]", "  gpus: h100-sxm"),
                  "Hardware — GPUs to consider: must be a list (found 'h100-sxm'); tick each one "
                  "to consider in the boxes, e.g. NVIDIA H100 SXM 80GB (line 29)"),
    # ... and with a comma and a misspelt id: it said "'h100' is not a catalog GPU id (did you
    # mean h100-sxm or h100-nvl or h100-pcie?)"
    "gpus-words": (("  gpus: [h100-sxm, h200-sxm, l40s]", "  gpus: h100, l40s"),
                   "Hardware — GPUs to consider: must be a list (found 'h100, l40s'); tick each "
                   "one to consider in the boxes, e.g. NVIDIA H100 SXM 80GB and NVIDIA L40S; "
                   "'h100' is not in the list (did you mean NVIDIA H100 SXM 80GB, NVIDIA H100 "
                   "NVL or NVIDIA H100 PCIe?) (line 29)"),
    # a number where the list of degrees belongs: "write a list of the degrees to try, e.g.
    # `tensor_parallel: [2, 4]`"
    "tp-number": (("  kv_precisions: [fp8]\n", "  kv_precisions: [fp8]\n  tensor_parallel: 3\n"),
                  "Hardware — Tensor-parallel degrees: must be a list (found 3); tick the "
                  "degrees to try, e.g. 2 and 4 (3 is not a degree: allowed are 1, 2, 4, 8, 16, "
                  "32, 64, 72) (line 32)"),
    # a mapping where a list belongs: "start each item with `- ` (e.g. `- name: ...`)"
    "gpus-mapping": (("  gpus: [h100-sxm, h200-sxm, l40s]", "  gpus: {h100-sxm: 8}"),
                     "Hardware — GPUs to consider: must be a list (found a mapping of 1 key); "
                     "tick each one to consider in the boxes (line 29)"),
    # YAML 1.1's yes: "write `survive_node_loss: true` or `survive_node_loss: false`"; the
    # form's list offers yes and no
    "yes": (("  survive_node_loss: true", "  survive_node_loss: yes"),
            "Policy — Survive a node loss (N+1): must be true or false (found 'yes'); choose yes "
            "or no in the list (in a file, write true or false: yes, no, on and off are read as "
            "text) (line 34)"),
    # true in quotes: "write it without quotes: `survive_node_loss: true`"
    "quoted-true": (("  survive_node_loss: true", '  survive_node_loss: "true"'),
                    "Policy — Survive a node loss (N+1): must be true or false (found 'true'); "
                    "choose yes or no in the list (in a file, write true without quotes) "
                    "(line 34)"),
    # `- ` lines where a group of keys belongs: "must be a mapping of `key: value` lines ...
    # the lines under `targets:` start with `- ` (a list): delete the dashes"
    "targets-list": (("      response_time_s: 10        # 300 tokens in 10 s -> 30 tokens/s per "
                      "user\n      ttft_s: 2\n", "      - response_time_s: 10\n      - ttft_s: 2\n"),
                     "Internal assistant — Targets: must be a group of fields (found a list of 2 "
                     "entries); fill in its fields in the form (in the file, the lines under "
                     "targets start with a dash: delete the dashes) (line 15)"),
    # a word where a section belongs: "write `policy:` followed by `key: value` lines"
    "policy-word": (("policy:\n  headroom: 0.25\n  survive_node_loss: true\n"
                     "  gpu_memory_utilization: 0.90\n", "policy: strict\n"),
                    "Policy: must be a group of fields (found 'strict'); fill in its fields in the "
                    "form (line 32)"),
    # a number where text belongs: "put it in quotes so it is read as text: `id: \"1.10\"`"
    "id-number": (("  id: ACME-0042", "  id: 1.10"),
                  "Account — Your reference: must be text (found 1.1); type 1.10 in the field "
                  "(in a file, in quotes) (line 6)"),
    # a word where the reasons' lines belong: "write a list, e.g. [h100-sxm] or one '- item'
    # per line" (a GPU id as the example of a reason)
    "reasons-word": (("  currency: USD\n", "  currency: USD\n  reasons: cheaper\n"),
                     "Account — Why this way of running it (one reason a line): must be a list "
                     "(found 'cheaper'); type one a line (line 9)"),
    # a misspelt key: "write it as `headroom: 0.25`; allowed here: deployment, disaggregated,
    # gpu_memory_utilization, ..." (the form shows labels, and no key)
    "misspelt-key": (("  headroom: 0.25", "  headrom: 0.25"),
                     # the form takes the fraction in percent (review round 21)
                     "Policy: the file's key 'headrom' is no field here; the nearest is Headroom "
                     "(%); type 25 in Headroom (%); allowed here: Bandwidth efficiency override "
                     "(%), Compute efficiency override (%), Disaggregated, Engine batch cap, GPU "
                     "memory utilisation (%), Headroom (%), Recommend, Runtime reserve per GPU "
                     "(GB), Survive a node loss (N+1), Weight storage read bandwidth (GB/s) (line "
                     "33)"),
    # a key left without a value: "write a number from 0 to 3, or delete the line"
    "no-value": (("  headroom: 0.25", "  headroom:"),
                 "Policy — Headroom (%): has no value (nothing after the colon in the file); "
                 "type a number from 0 % to 300 %, or leave the field empty if it is optional "
                 "(line 33)"),
    # a currency in small letters: "write `currency: USD`"
    "currency": (("  currency: USD", "  currency: usd"),
                 "Account — Currency: must be a three-letter currency code in capitals, such as "
                 "USD, EUR or GBP (found 'usd'); type USD (line 8)"),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_a_files_shape_is_told_in_the_forms_words_with_its_line(client: TestClient,
                                                                 case: str) -> None:
    (old, new), said = SHAPES[case]
    box, _ = _upload(client, _file(old, new))
    assert box == [f"One problem to fix in acme.yaml: {said}"]
    assert "`" not in said  # no YAML to write: the form has none


def test_a_workload_written_as_a_word_is_told_as_the_forms_fields(client: TestClient) -> None:
    box, _ = _upload(client, _file("  - name: Contract RAG\n",
                                   "  - Contract RAG\n  - name: Contract RAG\n"))
    # it said "each item is a workload: write `- name: Contract RAG` and its other keys
    # (model:, targets:, ...) on the lines below, lined up under name:"
    assert box == ["One problem to fix in acme.yaml: "
                   "Workload 2: must be a group of fields (found 'Contract RAG'); "
                   "each workload is a group of fields: fill in this one's in the form, starting "
                   "with its name, Contract RAG (line 18)"]


def test_a_number_among_the_gpus_is_an_unknown_gpu_on_the_form(client: TestClient) -> None:
    """`gpus: 8` shows a box '8' on the form; sized, it was the number 8 ("must be text (found
    8); put it in quotes so it is read as text: \"8\"", which a box cannot do): a GPU box holds
    an id, and 8 is no GPU of the catalog."""
    _, panel = _upload(client, _file("  gpus: [h100-sxm, h200-sxm, l40s]", "  gpus: 8"))
    # no GPU is close to '8': the boxes are pointed at, not their 24 names written out
    # (review round 21, tests/test_web_review_round21.py)
    assert panel == ["Hardware — GPUs to consider: unknown GPU '8'. Untick it and tick the "
                     "ones to consider in the boxes"]


def test_the_cli_keeps_the_files_words_for_the_shape() -> None:
    with pytest.raises(InputError) as caught:
        load_from_text(_file("  survive_node_loss: true", "  survive_node_loss: yes"),
                       "acme.yaml", load_catalog())
    assert str(caught.value) == (
        "acme.yaml:34:3: policy.survive_node_loss: must be true or false (found 'yes'); write "
        "`survive_node_loss: true` or `survive_node_loss: false` (yes/no/on/off are read as text, "
        "not as a boolean)")


def test_estimates_unknown_gpu_names_each_guess_as_the_file_does() -> None:
    """`estimate --gpu h100-sxn` said "(did you mean h100-sxm or h200-sxm or h100-nvl?)": ids
    alone, where the file's message now names them (a model's name adds nothing to its id)."""
    from llmsizer.inputs.options import estimate_problems

    assert estimate_problems("llama-3.1-70bb", "h100-sxn", "fp8", "fp8", 1, False) == (
        "2 problems:\n"
        "  --model: unknown model 'llama-3.1-70bb': did you mean llama-3.1-70b? `llmsizer "
        "catalog models` lists them all\n"
        "  --gpu: unknown GPU 'h100-sxn': did you mean h100-sxm (NVIDIA H100 SXM 80GB)? "
        "`llmsizer catalog gpus` lists them all")


# ---- 3. the load stated more than one way, or not at all (session 20) ---------------------

def test_a_load_stated_two_ways_is_told_by_the_form_s_load_chooser(client: TestClient) -> None:
    """inputs/rules.py's "state the load exactly one way: concurrent_users (users at the same
    time), requests_per_s ... ; found concurrent_users and requests_per_s" named the file's
    keys; the form has one chooser, Load stated as, with the three ways by name."""
    box, _ = _upload(client, _file("    concurrent_users: 200\n",
                                   "    concurrent_users: 200\n    requests_per_s: 5\n"))
    assert box == ["One problem to fix in acme.yaml: "
                   "Internal assistant — Load stated as: the file states the load two "
                   "ways (Concurrent users and Request rate); choose one of Concurrent users, "
                   "Request rate or User population (line 10)"]


def test_no_load_is_told_by_the_chooser_too(client: TestClient) -> None:
    box, panel = _upload(client, _file("    concurrent_users: 200\n", ""))
    said = ("Internal assistant — Load stated as: no load is stated; choose Concurrent users, "
            "Request rate or User population and fill in its fields")
    assert box == [f"One problem to fix in acme.yaml: {said} (line 10)"]
    assert panel == [said]
    assert "concurrent_users" not in said and "named_users" not in said


def test_a_file_that_is_not_yaml_says_where_in_words(client: TestClient) -> None:
    """The upload box said "acme.yaml:5:13: not valid YAML: …", a compiler's way to point; the
    place is said in words (the CLI keeps file:line:column, which editors jump to)."""
    text = _file("  name: Acme Corp\n", "  name: Acme: Corp\n")
    r = client.post("/upload/yaml", files={"file": ("acme.yaml", text.encode())})
    told = html_lib.unescape(re.sub(r"<[^>]+>", "", r.text))
    assert ("acme.yaml is not valid YAML at line 5, column 13: a value contains `: `") in told
    assert "acme.yaml:5:13" not in told


# ---- 4. the fields' help in the form's words (session 20) --------------------------------

def _help_of(page: str, label: str) -> str:
    m = re.search(r'<label for="[^"]*" title="([^"]*)">' + re.escape(label) + "<", page)
    assert m, label
    return html_lib.unescape(m[1])


def test_the_fields_help_names_choices_and_fields_as_the_form_shows_them(
        client: TestClient) -> None:
    """The tooltips were the schema's help for the YAML: "cloud (rent …) or cheapest",
    "one of the encoder engine classes (catalogs/embedders.yaml encoder_engines):
    serving-stack …", "required when account.currency is not USD"; the form's reader sees
    the list's words and the fields' labels, and has no catalog file or docs folder."""
    page = client.get("/").text
    recommend = _help_of(page, "Recommend")
    assert recommend.startswith(
        "How the proposal recommends running the service: “Buying the servers” (buy the "
        "servers, the default), “Renting the GPUs in a cloud” (rent the same GPUs at the cloud "
        "price tier in the requirements) or “Whichever costs least (buy, rent or hosted API)”.")
    assert "account.reasons" not in recommend
    assert recommend.endswith("the customer's “Why this way of running it (one reason a line)”.")
    assert _help_of(page, "Units per US dollar") == (
        "Units of the account's currency per US dollar; required when “Currency” is not USD.")
    helps = " ".join(html_lib.unescape(t) for t in re.findall(r'title="([^"]*)"', page))
    assert "catalogs/" not in helps and "docs/" not in helps
    assert "serving-stack" not in helps and "on_prem" not in helps


def test_the_cli_s_guesses_never_nest_brackets(tmp_path: Path) -> None:
    """A platform's name has brackets of its own: the CLI said "dgx-h100 (NVIDIA DGX H100 (8x
    H100 SXM5 80GB))"; the name's brackets are flattened to a comma (catalogs: "NVIDIA DGX
    H100 (8x H100 SXM5 80GB)")."""
    text = _file("  gpus: [h100-sxm, h200-sxm, l40s]", "  gpus: [h100-sxm]\n  platform: dgx-h10")
    with pytest.raises(InputError) as got:
        load_from_text(text, "acme.yaml", load_catalog())
    said = str(got.value)
    assert ("unknown platform 'dgx-h10': did you mean dgx-h100 (NVIDIA DGX H100, 8x H100 SXM5 "
            "80GB)? `llmsizer catalog platforms` lists them all") in said
    assert "80GB))" not in said
