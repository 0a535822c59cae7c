"""Bad input as a presales engineer writes it, round 16: a latency target in the other unit
(`ttft_s: 500` for 500 ms; `itl_p95_ms: 0.05` for 50 ms). Beyond the hard range it is an
error with the number converted; inside it but far from the usual targets (inputs/doubts.py)
it is sized as written and told: on stderr with its line and fix, and in the PDF's risks.
Each test fails on the code before it: 500 s, 8,000 ms and 100 s were accepted silently."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT
from test_bad_inputs_round14 import problems  # the loader's lines for a text

from llmsizer.base.errors import InputError
from llmsizer.documents.proposal.render import render_html
from llmsizer.inputs.doubts import target_doubts
from llmsizer.inputs.loader import load, load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size

CAT = load_catalog()
HEAD = "schema_version: 1\naccount:\n  name: Test Co\nworkloads:\n"
LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]


def chat(targets: str, prompt: int = 500) -> str:
    """One chat workload with 30 tokens/s per user and ``targets`` (the mapping's further keys)
    on line 10, from column 42."""
    return (HEAD + "  - name: chat\n    model: llama-3.1-8b\n    concurrent_users: 20\n"
            f"    prompt_tokens: {prompt}\n    output_tokens: 300\n"
            f"    targets: {{tokens_per_s_per_user: 30, {targets}}}\n")


@pytest.mark.parametrize(("targets", "told"), [
    # 500 ms typed into seconds: the old limit (600 s) let it through
    ("ttft_s: 500", "workloads[0].targets.ttft_s: must be at most 120 "
     "(found 500); allowed: a number of seconds from 0.01 to 120; the unit is in the key name: "
     "for 500 "
     "milliseconds write `ttft_s: 0.5`"),
    ("ttft_p99_s: 200", "for 200 milliseconds write `ttft_p99_s: 0.2`"),
    # 8 s between tokens (0.125 tokens/s): the old limit was 60,000 ms
    ("itl_p95_ms: 8000", "workloads[0].targets.itl_p95_ms: must be at most 5,000 "
     "(found 8000); allowed: a number of milliseconds from 1 to 5,000"),
    ("itl_p99_ms: 0.5", "for 0.5 seconds write `itl_p99_ms: 500`"),
])
def test_a_latency_beyond_its_range_is_refused_with_the_number_converted(
        targets: str, told: str) -> None:
    found = problems(chat(targets))
    assert len(found) == 1 and found[0].startswith("acme.yaml:10:42: "), found
    assert told in found[0]


def test_an_embedding_latency_in_milliseconds_is_refused() -> None:
    """latency_p95_s: 100 (100 ms) was read as 100 s, sized as a batch job (old limit 600 s)."""
    text = (HEAD + "  - name: vectors\n    kind: embed\n    model: qwen3-embedding-4b\n"
            "    requests_per_s: 20\n    tokens_per_request: 500\n"
            "    targets: {latency_p95_s: 100}\n")
    assert problems(text) == [
        "acme.yaml:10:15: workloads[0].targets.latency_p95_s: must be at most 60 "
        "(found 100); allowed: a number of seconds from 0.001 to 60; the unit is in the key "
        "name: for 100 milliseconds write `latency_p95_s: 0.1`"]


def test_every_unit_slip_of_a_file_is_told_at_once() -> None:
    path = ROOT / "tests" / "bad_inputs" / "target-units-swapped.yaml"
    with pytest.raises(InputError) as caught:
        load(path)
    lines = str(caught.value).split("\n")
    assert lines[0] == f"{path}: 4 problems:"
    assert [line.split(": ")[1] for line in lines[1:]] == [
        "workloads[0].targets.ttft_p95_s", "workloads[0].targets.itl_p95_ms",
        "workloads[0].targets.response_time_s", "workloads[1].targets.latency_p95_s"]


@pytest.mark.parametrize(("targets", "key", "text"), [
    # 45 s for a 500-token prompt: the doubt starts at 20 s + 500 / 2,000 = 20.25 s
    ("ttft_s: 45", "ttft_s",
     "45 s before the first token is far beyond the usual 0.2–10 s for a 500-token prompt: "
     "check it was not meant in milliseconds (0.045 s)"),
    # 800 ms between tokens: 1000 / 800 = 1.25 tokens/s
    ("itl_p95_ms: 800", "itl_p95_ms",
     "800 ms between tokens streams 1.25 tokens/s, slower than anyone reads (usual targets: "
     "10–200 ms); check the unit (milliseconds)"),
    # 300 tokens in 400 s: 0.75 tokens/s
    ("response_time_s: 400", "response_time_s",
     "400 s for a 300-token answer is 0.75 tokens/s, slower than anyone reads: check it was "
     "not meant in milliseconds (0.4 s)"),
])
def test_a_doubtful_target_is_sized_and_told_with_its_line(targets: str, key: str,
                                                           text: str) -> None:
    loaded = load_from_text(chat(targets), "acme.yaml", CAT)
    (warning,) = loaded.warnings
    assert warning.startswith("acme.yaml:10:42: ") and f"workloads[0].targets.{key}: {text}" in warning
    assert [(d.key, d.text) for d in target_doubts(loaded.req)] == [(key, text)]


def test_the_fix_is_printed_when_the_other_unit_fits() -> None:
    (warning,) = load_from_text(chat("ttft_s: 45"), "acme.yaml", CAT).warnings
    assert warning.endswith("; if so, write `ttft_s: 0.045`")


def test_a_usual_target_or_a_long_prompt_raises_no_doubt() -> None:
    """MLPerf's limits (2 s, 6 s; 200 ms) are usual; a 128k-token prompt may ask for 60 s
    (inputs/legal-128k.yaml: 20 + 128,000 / 2,000 = 84 s before a doubt)."""
    usual = "ttft_s: 2, ttft_p99_s: 6, itl_p99_ms: 200, response_time_s: 10, e2e_p95_s: 20"
    assert load_from_text(chat(usual), "acme.yaml", CAT).warnings == ()
    assert load(ROOT / "inputs" / "legal-128k.yaml").warnings == ()
    assert len(load_from_text(chat("ttft_s: 60", prompt=8000), "a.yaml", CAT).warnings) == 1


def test_the_pdf_shows_each_doubt_under_its_workload() -> None:
    result = size(load_from_text(chat("ttft_s: 45"), "a.yaml", CAT))
    assert [(w.workload, w.key) for w in result.input_warnings] == [("chat", "ttft_s")]
    html = render_html(result)
    assert "Targets to confirm" in html
    assert ('<span class="name">chat</span>: 45 s before the first token is far beyond the usual '
            "0.2–10 s for a 500-token prompt") in html
    # a usual target: no such section
    calm = size(load_from_text(chat("ttft_s: 2"), "a.yaml", CAT))
    assert calm.input_warnings == [] and "Targets to confirm" not in render_html(calm)


def test_validate_and_size_print_the_warning_and_still_succeed(tmp_path: Path) -> None:
    path = tmp_path / "acme.yaml"
    path.write_text(chat("ttft_s: 45"), encoding="utf-8")
    for command in ("validate", "size"):
        proc = subprocess.run([*LLMSIZER, command, str(path)], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.startswith(f"warning: {path}:10:42: workloads[0].targets.ttft_s: 45 s "
                                      "before the first token"), proc.stderr
        assert "Traceback" not in proc.stderr


# --- round 16's malformed files, read as a presales engineer reads them -------------------


def test_an_id_in_a_word_processors_quotes_says_why_it_is_unknown() -> None:
    """`model: “llama-3.1-8b”` (pasted from a document) said only 'the catalog names it
    llama-3.1-8b', which reads the same as what was typed: the quotes are the difference."""
    text = chat("ttft_s: 2").replace("model: llama-3.1-8b", "model: \u201cllama-3.1-8b\u201d")
    (found,) = problems(text)
    assert found.startswith("acme.yaml:6:5: workloads[0].model: unknown model "
                            "'\u201cllama-3.1-8b\u201d': the catalog names it llama-3.1-8b "
                            "(\u201c \u201d and \u2018 \u2019 are a word processor's quotes: "
                            "YAML keeps them as part of the id; type plain quotes \" or none); "
                            "write llama-3.1-8b"), found


def test_a_mapping_written_as_a_list_says_to_delete_the_dashes() -> None:
    """`targets:` with `- tokens_per_s_per_user: 30` lines got the generic 'write targets:
    followed by key: value lines', which those lines already look like."""
    text = (HEAD + "  - name: chat\n    model: llama-3.1-8b\n    concurrent_users: 20\n"
            "    prompt_tokens: 500\n    output_tokens: 300\n    targets:\n"
            "      - tokens_per_s_per_user: 30\n      - ttft_s: 2\n")
    (found,) = problems(text)
    assert found.startswith("acme.yaml:10:5: workloads[0].targets: must be a mapping")
    assert found.endswith("; the lines under `targets:` start with `- ` (a list): delete the "
                          "dashes"), found


def test_a_line_indented_too_far_is_pointed_at_its_first_character() -> None:
    """PyYAML marks the `:` (column 22 of `     concurrent_users: 200`): an editor jumped
    to the end of the key, not to the indentation the message is about."""
    text = chat("ttft_s: 2").replace("    concurrent_users", "     concurrent_users")
    (found,) = problems(text)
    assert found.startswith("acme.yaml:7:6: not valid YAML: inconsistent indentation: line 7 "
                            "is indented 5 spaces, line 6 above it 4 spaces"), found


def test_a_one_model_list_is_shown_its_own_model_without_brackets() -> None:
    """`model: [llama-3.1-8b]` was told to write `model: llama-3.3-70b`, another model."""
    text = chat("ttft_s: 2").replace("model: llama-3.1-8b", "model: [llama-3.1-8b]")
    (found,) = problems(text)
    assert "(write one model without brackets, e.g. `model: llama-3.1-8b`)" in found, found


def test_targets_without_a_speed_say_what_to_add() -> None:
    """`targets: {ttft_s: 2}` was told only the three keys' names, none with a value."""
    text = chat("ttft_s: 2").replace("{tokens_per_s_per_user: 30, ", "{")
    (found,) = problems(text)
    assert found == ("acme.yaml:10:5: workloads[0]: targets needs tokens_per_s_per_user, "
                     "response_time_s or system_tokens_per_s; add e.g. `tokens_per_s_per_user: "
                     "30` (the speed each user sees), `response_time_s: 10` (a whole answer) or "
                     "`system_tokens_per_s: 5000` (batch work)")
