"""A file's every problem in one run: the cross-field rules (inputs/rules.py) are told with
the field errors, each at its line, each once; and the messages a presales engineer read as
unclear, reworded. The expected lines are the messages as the loader writes them (each rule's
wording has one home: inputs/rules.py and inputs/kinds.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from llmsizer.base.errors import InputError
from llmsizer.inputs.loader import load_from_text
from llmsizer.model.catalog import load_catalog

CAT = load_catalog()
HEAD = "schema_version: 1\naccount:\n  name: Test Co\n"
CHAT = ("  - name: chat\n    model: llama-3.1-70b\n    concurrent_users: 20\n"
        "    prompt_tokens: 500\n    output_tokens: 300\n"
        "    targets: {tokens_per_s_per_user: 30}\n")
GENERATING = "a generating workload (kind: generate, the default) needs it"
ONE_WAY = ("state the load exactly one way: concurrent_users (users at the same time), "
           "requests_per_s (peak arrivals per second) or named_users with "
           "requests_per_user_per_hour and peak_to_average; found ")


def problems(text: str) -> list[str]:
    """The problems the loader tells for ``text``, one per line, without the head line."""
    with pytest.raises(InputError) as caught:
        load_from_text(text, "acme.yaml", CAT)
    lines = str(caught.value).split("\n")
    if len(lines) == 1:
        return lines
    assert lines[0] == f"acme.yaml: {len(lines) - 1} problems:", lines[0]
    return [line.removeprefix("  ") for line in lines[1:]]


def test_the_reported_file_tells_its_six_problems_in_one_run() -> None:
    """The file of the report: three problems, then output_tokens, then the two load forms,
    one run each; and the missing speed target (ttft_p97_s is none) a fourth run later."""
    found = problems(HEAD + "workloads:\n  - name: chat\n    model: llama-3.1-70b\n"
                     "    requests_per_s: 40\n    concurrent_users: 20\n    prompt_tokens: -5\n"
                     "    targets:\n      ttft_p97_s: 1.5\nhardware:\n  gpus: [h100-sxmm]\n")
    assert found[:5] == [
        f"acme.yaml:5:5: workloads[0]: required key 'output_tokens' is missing: {GENERATING}, "
        "e.g. `output_tokens: 300`",
        f"acme.yaml:5:5: workloads[0]: {ONE_WAY}concurrent_users and requests_per_s",
        "acme.yaml:9:5: workloads[0].prompt_tokens: must be at least 1 "
        "(found -5); allowed: a whole number from 1 to 2,000,000",
        "acme.yaml:10:5: workloads[0]: targets needs tokens_per_s_per_user, response_time_s or "
        "system_tokens_per_s; add e.g. `tokens_per_s_per_user: 30` (the speed each user sees), "
        "`response_time_s: 10` (a whole answer) or `system_tokens_per_s: 5000` (batch work)",
        # session 23: one guess, the key the fix writes (it listed ttft_p95_s and ttft_p90_s)
        "acme.yaml:11:7: workloads[0].targets: unknown key 'ttft_p97_s' (did you mean "
        "ttft_p99_s?); write it as `ttft_p99_s: 1.5`; allowed here: e2e_p95_s, "
        "itl_p50_ms, itl_p90_ms, itl_p95_ms, itl_p99_ms, latency_p95_s, response_time_s, "
        "system_tokens_per_s, tokens_per_s_per_user, ttft_p50_s, ttft_p90_s, ttft_p95_s, "
        "ttft_p99_s, ttft_s"]
    assert len(found) == 6 and found[5].startswith(
        "acme.yaml:13:10: hardware.gpus[0]: unknown GPU 'h100-sxmm': did you mean h100-sxm")


def test_every_rule_of_a_generating_workload_is_told_beside_a_field_error() -> None:
    found = problems(
        HEAD + "  currency: EUR\nworkloads:\n  - name: chat\n    model: llama-3.1-70b\n"
        "    requests_per_s: 5\n    burstiness: 2\n    concurrent_users: 20\n"
        "    prompt_tokens: 5000\n    output_tokens: 300\n    max_context_tokens: 4096\n"
        "    prefix_cache_hit: 2\n"
        "    targets: {ttft_s: 20, response_time_s: 10, latency_p95_s: 1}\n")
    assert found == [
        "acme.yaml:4:3: account.currency is EUR, but catalog prices are in USD: add "
        "costs.usd_exchange_rate (EUR per US dollar, e.g. 0.92)",
        f"acme.yaml:6:5: workloads[0]: {ONE_WAY}concurrent_users and requests_per_s",
        "acme.yaml:9:5: workloads[0]: burstiness describes arrivals: use it with requests_per_s "
        "or named_users (or delete it)",
        "acme.yaml:13:5: workloads[0]: max_context_tokens (4096) is smaller than prompt_tokens + "
        "output_tokens (5300)",
        "acme.yaml:14:5: workloads[0].prefix_cache_hit: must be at most "
        "0.99 (found 2); allowed: a number from 0 to 0.99; this is a fraction: write 0.02 for "
        "2 %",
        "acme.yaml:15:15: workloads[0]: targets.ttft_s (20 s) must be shorter than "
        "targets.response_time_s (10 s): the first token comes before the whole answer",
        # the message names targets.latency_p95_s: its own column, not the workload's line
        "acme.yaml:15:48: workloads[0]: targets.latency_p95_s is for kind: embed or rerank "
        "workloads; a generating workload states ttft_s and tokens_per_s_per_user (or "
        "response_time_s)"]


def test_every_rule_of_an_embed_workload_and_duplicate_names_are_told_at_once() -> None:
    found = problems(HEAD + "workloads:\n" + CHAT + "  - name: Chat\n    kind: embed\n"
                     "    model: bge-m3\n    prompt_tokens: 500\n    requests_per_s: 0\n"
                     "    named_users: 100\n")
    assert found == [
        "acme.yaml:11:5: workloads[1]: state the load exactly one way: requests_per_s (peak "
        "arrivals per second) or named_users with requests_per_user_per_hour and peak_to_average; found both",
        "acme.yaml:11:5: workloads[1]: an online embed load needs tokens_per_request and "
        "targets.latency_p95_s too (e.g. tokens_per_request: 64, targets: {latency_p95_s: 0.1})",
        # both lines, and a free name for the second (the fresh-eyes review: it named neither)
        "acme.yaml:11:5: workloads[1].name: two workloads are named 'chat' and 'Chat' (lines 5 "
        "and 11): names must be unique, whatever their case; rename the second, e.g. name: Chat (2)",
        "acme.yaml:14:5: workloads[1]: prompt_tokens is for kind: generate workloads; this "
        "workload is kind: embed, which takes requests_per_s or named_users, tokens_per_request "
        "and targets.latency_p95_s (online), and/or corpus_tokens and reindex_within_hours "
        "(offline) (delete prompt_tokens, or set kind: generate)",
        "acme.yaml:15:5: workloads[1].requests_per_s: must be more than 0 (found 0); "
        "allowed: a number more than 0 and at most 1,000,000",
        "acme.yaml:16:5: workloads[1]: named_users needs requests_per_user_per_hour and "
        "peak_to_average too (e.g. requests_per_user_per_hour: 6, peak_to_average: 3)"]


def test_a_load_key_without_a_value_is_told_with_the_rest() -> None:
    found = problems(HEAD + "workloads:\n  - name: chat\n    model: llama-3.1-70b\n"
                     "    concurrent_users:\n    named_users: 100\n    prompt_tokens: 500\n"
                     "    targets: {tokens_per_s_per_user: 30}\n")
    assert found == [
        f"acme.yaml:5:5: workloads[0]: required key 'output_tokens' is missing: {GENERATING}, "
        "e.g. `output_tokens: 300`",
        f"acme.yaml:5:5: workloads[0]: {ONE_WAY}concurrent_users and named_users",
        "acme.yaml:7:5: workloads[0]: concurrent_users: has no value (nothing after the colon); "
        "write a whole number from 1 to 10,000,000, or delete the line",
        "acme.yaml:8:5: workloads[0]: named_users needs requests_per_user_per_hour and "
        "peak_to_average too (e.g. requests_per_user_per_hour: 6, peak_to_average: 3)"]


def test_a_rule_pydantic_reached_is_told_once() -> None:
    """Only rules fail: pydantic's first finding and the loader's are the same message."""
    found = problems(HEAD + "workloads:\n  - name: chat\n    model: llama-3.1-70b\n"
                     "    concurrent_users: 20\n    requests_per_s: 4\n    prompt_tokens: 500\n"
                     "    targets: {tokens_per_s_per_user: 30}\n")
    assert found == [
        f"acme.yaml:5:5: workloads[0]: required key 'output_tokens' is missing: {GENERATING}, "
        "e.g. `output_tokens: 300`",
        f"acme.yaml:5:5: workloads[0]: {ONE_WAY}concurrent_users and requests_per_s"]


def test_a_value_that_failed_is_not_compared_and_a_misspelt_key_is_not_missing() -> None:
    """prompt_tokens -5 enters no sum (max_context_tokens 100 < -5 + 300 is no finding);
    `concurrent_user` and `target`, told with their right spelling, are neither a missing
    load nor a missing key. The three findings a rule would add read the file wrongly."""
    found = problems(HEAD + "workloads:\n  - name: chat\n    model: llama-3.1-70b\n"
                     "    concurrent_user: 20\n    prompt_tokens: -5\n    output_tokens: 300\n"
                     "    max_context_tokens: 100\n    target: {tokens_per_s_per_user: 30}\n")
    # session 23: a generating workload's keys (it listed the embed and rerank ones too)
    allowed = ("allowed here: burstiness, concurrent_users, kind, max_context_tokens, measured, "
               "model, name, named_users, output_tokens, peak_to_average, prefix_cache_hit, "
               "prompt_tokens, requests_per_s, requests_per_user_per_hour, speculative, targets")
    assert found == [
        "acme.yaml:7:5: workloads[0]: unknown key 'concurrent_user' (did you mean "
        f"concurrent_users?); write it as `concurrent_users: 20`; {allowed}",
        "acme.yaml:8:5: workloads[0].prompt_tokens: must be at least 1 "
        "(found -5); allowed: a whole number from 1 to 2,000,000",
        "acme.yaml:11:5: workloads[0]: unknown key 'target' (did you mean targets?); rename it "
        f"to `targets:`; {allowed}"]


# --- messages reworded after reading them as a presales engineer ----------------------------


@pytest.mark.parametrize("body, expected", [
    ("workloads: []\n",
     "acme.yaml:4:1: workloads: holds no items; allowed: a list of 1 to 50 items; write "
     "`workloads:` followed by one `- name: ...` item per workload (see inputs/example.yaml)"),
    ("workloads:\n  - chat\n",
     "acme.yaml:5:5: workloads[0]: must be a mapping of `key: value` lines (found 'chat'); each "
     "item is a workload: write `- name: chat` and its other keys (model:, targets:, ...) on the "
     "lines below, lined up under name:"),
    ("workloads:\n" + CHAT + "policy:\n  headroom: 25\n",
     "acme.yaml:12:3: policy.headroom: must be at most 3 (found 25); "
     "allowed: a number from 0 to 3; this is a fraction: write 0.25 for 25 %"),
    ("workloads:\n" + CHAT + "policy:\n  survive_node_loss: \"true\"\n",
     "acme.yaml:12:3: policy.survive_node_loss: must be true or false (found 'true'); "
     "write it without quotes: `survive_node_loss: true`"),
    ("workloads:\n" + CHAT.replace("prompt_tokens: 500", "prompt_tokens: 500.5"),
     "acme.yaml:8:5: workloads[0].prompt_tokens: must be a whole number (found 500.5); "
     "write a whole number, e.g. `prompt_tokens: 500` (allowed: a whole number from 1 to "
     "2,000,000)"),
    ("workloads: 3\n",
     "acme.yaml:4:1: workloads: must be a list (found 3); write `workloads:` "
     "followed by one `- name: ...` item per workload, as in inputs/example.yaml"),
    ("workloads:\n" + CHAT + "hardware:\n  gpus: [h100-sxm, l40s, h100-sxm]\n",
     "acme.yaml:12:3: hardware.gpus: lists h100-sxm twice; list each once"),
    ("workloads:\n" + CHAT + "hardware:\n  tensor_parallel: [1, 2, 2]\n",
     "acme.yaml:12:3: hardware.tensor_parallel: lists 2 twice; list each once"),
])
def test_unclear_messages_say_what_to_write(body: str, expected: str) -> None:
    assert problems(HEAD + body) == [expected]


def test_a_batch_tells_a_bad_files_problems_one_per_line_and_writes_the_good_one(
        tmp_path: Path) -> None:
    """`llmsizer report DIR --out OUT`: the good account is written, the bad one's problems
    are told one per line (they were one line holding literal \\n), exit 1, and nothing of the
    bad account is written."""
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "bad.yaml").write_text(HEAD.replace("Test Co", "Bad Co") + "workloads:\n"
                                  + CHAT.replace("20", "-1").replace("    output_tokens: 300\n", ""))
    (src / "good.yaml").write_text(HEAD + "workloads:\n" + CHAT + "hardware:\n  gpus: [h100-sxm]\n")
    proc = subprocess.run([sys.executable, "-m", "llmsizer.cli", "report", str(src), "--out",
                           str(out), "--jobs", "1"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    bad = f"{src / 'bad.yaml'}"
    # the file named once (it was "invalid input F: F: 2 problems")
    assert (f"invalid input {bad}: 2 problems:\n"
            f"      {bad}:5:5: workloads[0]: required key 'output_tokens' is missing: "
            f"{GENERATING}, e.g. `output_tokens: 300`\n"
            f"      {bad}:7:5: workloads[0].concurrent_users: must be at least "
            "1 (found -1); allowed: a whole number from 1 to 10,000,000\n") in proc.stderr
    doc = json.loads((out / "batch.json").read_text("utf-8"))
    assert {Path(a["file"]).name: a["status"] for a in doc["accounts"]} == {
        "bad.yaml": "invalid input", "good.yaml": "ok"}
    written = {p.name for p in out.iterdir() if not p.name.startswith(".")}
    assert written == {"batch.json", "summary.xlsx", "test-co.json", "test-co.xlsx", "test-co.pdf"}


def test_every_rule_of_a_benchmark_and_a_speculative_block_is_told_at_once() -> None:
    found = problems(HEAD + "workloads:\n" + CHAT.replace("llama-3.1-70b", "deepseek-v3")
                     + "    measured:\n      gpu: h100-sxm\n      gpus_per_replica: 8\n"
                     "      gpu_count: 12\n    speculative:\n      method: draft_model\n"
                     "      draft_tokens: 2\n      acceptance_length: 4\n")
    assert found == [
        "acme.yaml:11:5: workloads[0].measured: measured needs tokens_per_s_per_replica (the "
        "measured figure) or file (a benchmark result file, or a list of them for a curve)",
        "acme.yaml:11:5: workloads[0].measured: format and gpu_count describe benchmark files: "
        "use them with `file:` (or delete them)",
        "acme.yaml:14:7: workloads[0].measured: gpu_count (12) must be a whole number of "
        "replicas of gpus_per_replica (8) GPUs",
        "acme.yaml:15:5: workloads[0].speculative: a draft_model needs draft_cost: its forward "
        "as a share of the model's step (about its active parameters / the model's)",
        "acme.yaml:18:7: workloads[0].speculative: acceptance_length (4) cannot exceed "
        "draft_tokens + 1 (3): a step yields at most the drafted tokens and the model's own"]


def test_a_request_beyond_the_context_window_is_told_beside_a_field_error() -> None:
    """Llama 3.1 70B serves 131,072 tokens (models.yaml max_context): the window check runs
    on the raw data too, so a file with a field error and an over-long request is fixed in
    one run, not two."""
    found = problems(
        HEAD + "workloads:\n  - name: chat\n    model: llama-3.1-70b\n"
        "    concurrent_users: -1\n    prompt_tokens: 200000\n    output_tokens: 300\n"
        "    targets: {tokens_per_s_per_user: 30}\n")
    assert found == [
        "acme.yaml:7:5: workloads[0].concurrent_users: must be at least "
        "1 (found -1); allowed: a whole number from 1 to 10,000,000",
        "acme.yaml:8:5: workloads[0].prompt_tokens: llama-3.1-70b serves at most 131,072 "
        "tokens of context, but one request here needs 200,300 (prompt_tokens + output_tokens "
        "= 200,000 + 300); shorten the prompt or the answer to fit, or choose a model with a "
        "longer context (`llmsizer catalog models` lists each model's max context tokens)"]
