"""Bad input as a presales engineer writes it, round 17: what the schema refuses is said in
the house words ('must be at most 120'), never the validation library's ('Input should be
less than or equal to 120'); a value is shown as the file writes it (true, not True; 'a list
of 2 entries', not [{'name': ...}]); a tensor-parallel degree that is not one names the
nearest; a name pasted in typographic quotes (“Acme Corp”) is printed without them, with a
warning. Each test fails on the code before it."""

from __future__ import annotations

import pytest
from test_bad_inputs_round14 import problems  # the loader's lines for a text

from llmsizer.documents.proposal.render import render_html
from llmsizer.inputs.loader import load_from_text
from llmsizer.inputs.schema_workload import without_quotes
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size

CAT = load_catalog()
HEAD = "schema_version: 1\naccount:\n  name: Test Co\n"
CHAT = ("workloads:\n  - name: chat\n    model: llama-3.1-8b\n    concurrent_users: 20\n"
        "    prompt_tokens: 500\n    output_tokens: 300\n"
        "    targets: {tokens_per_s_per_user: 30}\n")


@pytest.mark.parametrize(("tail", "told"), [
    # each bound of pydantic's, in words, with the number as a person writes it
    ("policy:\n  headroom: 25\n", "policy.headroom: must be at most 3 (found 25)"),
    ("policy:\n  headroom: -1\n", "policy.headroom: must be at least 0 (found -1)"),
    ("costs:\n  usd_exchange_rate: 0\n",
     "costs.usd_exchange_rate: must be more than 0 (found 0)"),
    ("hardware:\n  gpus: []\n", "hardware.gpus: holds no items; allowed: a list of 1 to 50 items"),
    # types: a whole number, a number, true or false, a list, text
    ("costs:\n  amortization_years: 3 years\n",
     "costs.amortization_years: must be a number (found '3 years')"),
    ("policy:\n  survive_node_loss: 'yes'\n", "policy.survive_node_loss: must be true or false "
     "(found 'yes')"),
    ("hardware:\n  tensor_parallel: [6]\n",
     "hardware.tensor_parallel[0]: must be 1, 2, 4, 8, 16, 32, 64 or 72 (found 6); "
     "did you mean 4 or 8?"),
])
def test_the_schemas_refusals_are_said_in_the_house_words(tail: str, told: str) -> None:
    [line] = problems(HEAD + CHAT + tail)
    assert told in line, line
    assert "Input should" not in line and "should be" not in line, line


@pytest.mark.parametrize(("tail", "told"), [
    # a yes/no value as YAML writes it, not Python's True
    ("costs:\n  pue: true\n", "costs.pue: must be a number (found true); write a number, "
     "e.g. `pue: 2`, not true/false"),
    # a list and a mapping by their size, not their Python form ([{'name': ...}])
    ("policy:\n  survive_node_loss: [{name: a}, {name: b}]\n",
     "policy.survive_node_loss: must be true or false (found a list of 2 entries)"),
    ("policy:\n  headroom: {a: 1}\n", "policy.headroom: must be a number (found a mapping of "
     "1 key)"),
    ("costs:\n  pue: null\n", "costs.pue: has no value (nothing after the colon)"),
])
def test_a_value_is_shown_as_the_file_writes_it(tail: str, told: str) -> None:
    [line] = problems(HEAD + CHAT + tail)
    assert told in line, line
    assert "True" not in line and "{'" not in line, line


@pytest.mark.parametrize(("value", "told"), [
    # within the degrees: the two either side (1, 2, 4, 8, 16, 32, 64, 72)
    ("[3]", "hardware.tensor_parallel[0]: must be 1, 2, 4, 8, 16, 32, 64 or 72 (found 3); "
            "did you mean 2 or 4?"),
    ("[12]", "(found 12); did you mean 8 or 16?"),
    ("[100]", "(found 100); did you mean 72?"),
    # written without brackets: a list to write, of the nearest degrees or of the degree itself
    ("3", "hardware.tensor_parallel: must be a list (found 3); write a list of the degrees to "
          "try, e.g. `tensor_parallel: [2, 4]` (3 is not a degree: allowed are 1, 2, 4, 8, 16, "
          "32, 64, 72)"),
    ("4", "hardware.tensor_parallel: must be a list (found 4); write a list, e.g. "
          "`tensor_parallel: [4]`"),
])
def test_a_tensor_parallel_degree_that_is_none_names_the_nearest(value: str, told: str) -> None:
    [line] = problems(HEAD + CHAT + f"hardware:\n  tensor_parallel: {value}\n")
    assert line.endswith(told), line


def test_a_name_in_typographic_quotes_is_printed_without_them_and_told() -> None:
    text = ("schema_version: 1\naccount:\n  name: “Acme Corp”\n"
            + CHAT.replace("name: chat", "name: „Chat“"))
    loaded = load_from_text(text, "acme.yaml", CAT)
    assert (loaded.req.account.name, loaded.req.workloads[0].name) == ("Acme Corp", "Chat")
    assert loaded.warnings == (
        "acme.yaml:3:3: account.name: the typographic quotes around “Acme Corp” are left out: "
        "the proposal names it Acme Corp",
        "acme.yaml:5:5: workloads[0].name: the typographic quotes around „Chat“ are left out: "
        "the proposal names it Chat")
    # the proposal (its cover and headings) prints the names without the quotes
    html = render_html(size(loaded))
    assert "Acme Corp" in html and "“Acme Corp”" not in html and "„Chat“" not in html
    # the same name twice, once in quotes, is the same workload name twice
    twice = text + CHAT.replace("workloads:\n", "").replace("name: chat", "name: Chat")
    assert "two workloads are named 'Chat' (lines 5 and 11)" in problems(twice)[0]


@pytest.mark.parametrize(("written", "kept"), [
    ("“Acme Corp”", "Acme Corp"), ("‘Acme’", "Acme"), ("«Acme»", "Acme"),
    ("“ Acme ”", "Acme"),
    # quotes inside a name, or only on one side, or two quoted parts: the name as written
    ("The “Acme” Group", "The “Acme” Group"), ("“Acme", "“Acme"),
    ("“A” and “B”", "“A” and “B”"), ("“”", "“”"), ('"Acme"', '"Acme"'),
])
def test_only_quotes_around_the_whole_name_are_dropped(written: str, kept: str) -> None:
    assert without_quotes(written) == kept
