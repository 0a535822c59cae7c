"""Bad input as a presales engineer writes it, round 14: each mistake below was typed into an
account file or onto the command line and read as the user reads it (one clear message:
file, line, field, what is allowed, a fix; every problem at once; exit 2; no traceback).
Each test fails on the code before it: the message it asserts was missing or unclear."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from llmsizer.base.errors import InputError
from llmsizer.inputs.loader import load, load_from_text
from llmsizer.model.catalog import load_catalog

CAT = load_catalog()
HEAD = "schema_version: 1\naccount:\n  name: Test Co\n"
LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]


def workload(name: str = "chat", model: str = "llama-3.1-70b",
             targets: str = "{tokens_per_s_per_user: 30}") -> str:
    return (f"  - name: {name}\n    model: {model}\n    concurrent_users: 20\n"
            f"    prompt_tokens: 500\n    output_tokens: 300\n    targets: {targets}\n")


def problems(text: str) -> list[str]:
    """The loader's lines for ``text`` (without the head line of a several-problem file)."""
    with pytest.raises(InputError) as caught:
        load_from_text(text, "acme.yaml", CAT)
    lines = str(caught.value).split("\n")
    return lines if len(lines) == 1 else [line.removeprefix("  ") for line in lines[1:]]


def test_every_repeated_workload_name_is_told_with_each_line() -> None:
    """Three workloads named chat/Chat/chat and a pair named rag: the old check stopped at
    the first pair (lines 5 and 11), so the file took three runs to fix. Each name is told
    once with all its lines, and no two suggested names are the same ("Chat (2)" and
    "chat (2)" would clash, names being compared whatever their case)."""
    text = HEAD + "workloads:\n" + "".join(workload(n) for n in ("chat", "Chat", "chat", "rag",
                                                                  "rag"))
    assert problems(text) == [
        "acme.yaml:11:5: workloads[1].name: three workloads are named 'chat' and 'Chat' "
        "(lines 5, 11 and 17): names must be unique, whatever their case; rename all but the "
        "first, e.g. name: Chat (2) and name: chat (3)",
        "acme.yaml:29:5: workloads[4].name: two workloads are named 'rag' (lines 23 and 29): "
        "names must be unique; rename the second, e.g. name: rag (2)"]


def test_a_pair_of_names_reads_as_before() -> None:
    text = HEAD + "workloads:\n" + workload("chat") + workload("Chat")
    assert problems(text) == [
        "acme.yaml:11:5: workloads[1].name: two workloads are named 'chat' and 'Chat' (lines 5 "
        "and 11): names must be unique, whatever their case; rename the second, e.g. "
        "name: Chat (2)"]


def test_every_repeat_in_a_hardware_list_is_told() -> None:
    """`gpus: [h100-sxm, l40s, h100-sxm, l40s, l40s]` said only "lists h100-sxm twice"."""
    text = (HEAD + "workloads:\n" + workload() + "hardware:\n"
            "  gpus: [h100-sxm, l40s, h100-sxm, l40s, l40s]\n  tensor_parallel: [2, 4, 2]\n")
    assert problems(text) == [
        "acme.yaml:12:3: hardware.gpus: lists h100-sxm twice and l40s three times; list each "
        "once",
        "acme.yaml:13:3: hardware.tensor_parallel: lists 2 twice; list each once"]


def test_a_higher_percentile_target_below_a_lower_one_is_refused() -> None:
    """ttft_p95_s: 1 with ttft_p50_s: 2 was sized without a word (the p50 target never binds:
    the two were swapped); the same for the gaps between tokens. Told beside a field error."""
    text = HEAD + "workloads:\n" + workload(targets=(
        "{tokens_per_s_per_user: 30, ttft_p50_s: 2, ttft_p95_s: 1, itl_p50_ms: 50, "
        "itl_p99_ms: 20}")).replace("prompt_tokens: 500", "prompt_tokens: -5")
    found = problems(text)
    assert found[0].startswith("acme.yaml:8:5: workloads[0].prompt_tokens: must be at least 1 ")
    assert found[1:] == [
        "acme.yaml:10:57: workloads[0]: targets.ttft_p95_s (1 s) is below targets.ttft_p50_s "
        "(2 s): the p95 target bounds 95 % of the first tokens, so it cannot be below the p50 "
        "one, which bounds 50 %; swap the two values, or raise ttft_p95_s to at least 2",
        "acme.yaml:10:88: workloads[0]: targets.itl_p99_ms (20 ms) is below "
        "targets.itl_p50_ms (50 ms): the p99 target bounds 99 % of the gaps between tokens, "
        "so it cannot be below the p50 one, which bounds 50 %; swap the two values, or raise "
        "itl_p99_ms to at least 50"]


def test_percentile_targets_in_order_are_accepted() -> None:
    text = HEAD + "workloads:\n" + workload(targets=(
        "{tokens_per_s_per_user: 30, ttft_p50_s: 1, ttft_p95_s: 1, ttft_p99_s: 3}"))
    assert load_from_text(text, "acme.yaml", CAT).req.workloads[0].targets.ttft_p99_s == 3


@pytest.mark.parametrize(("where", "written", "told"), [
    # a GPU id in capitals: three guesses and the catalog's 24 ids, for a certain fix
    ("hardware:\n  gpus: [H100-SXM]\n", "GPU 'H100-SXM'", "h100-sxm"),
    ("hardware:\n  gpus: [h100 sxm]\n", "GPU 'h100 sxm'", "h100-sxm"),
    ("costs:\n  gpu_prices: {rtx4090: 2000}\n", "GPU 'rtx4090'", "rtx-4090"),
    # a model written as its Hugging Face name (the catalog's label index knows it)
    ("", "model 'Llama-3.1-70B-Instruct'", "llama-3.1-70b"),
])
def test_a_catalog_id_spelt_otherwise_is_given_its_one_fix(where: str, written: str,
                                                         told: str) -> None:
    model = "Llama-3.1-70B-Instruct" if written.startswith("model") else "llama-3.1-70b"
    (line,) = problems(HEAD + "workloads:\n" + workload(model=model) + where)
    # the spelling rule where only the spelling differs; a label is a name, not a misspelling
    rule = "" if written.startswith("model") else " (ids are lower case, with the catalog's " \
        "hyphens and dots)"
    assert f"unknown {written}: the catalog names it {told}{rule}; write {told}" in line
    assert f"; write {told}" in line and "valid:" not in line, line


def test_an_ambiguous_short_id_still_lists_the_candidates() -> None:
    """`h200` begins h200-sxm and h200-nvl: no certain fix, the guesses and where the list is
    (review round 25: the command that lists them, not all of them after the guesses)."""
    (line,) = problems(HEAD + "workloads:\n" + workload() + "hardware:\n  gpus: [h200]\n")
    # each guess with its name (tests/test_web_words_round20.py)
    assert ": did you mean h200-sxm (NVIDIA H200 SXM) or h200-nvl (NVIDIA H200 NVL)? " in line \
        and "`llmsizer catalog gpus` lists them all" in line, line


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LLMSIZER, *args], capture_output=True, text=True, timeout=120)


def test_estimate_tells_every_bad_option_at_once() -> None:
    """Four bad options and no load: the old command told only the missing load, then (one
    run each) the GPU, the model, the precisions."""
    out = run("estimate", "--model", "llama-3.1-70bb", "--gpu", "H100-SXM", "--weights", "FP8",
              "--kv", "int3", "--prompt-tokens", "500", "--output-tokens", "300")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.splitlines() == [
        "error: 5 problems:",
        "  give exactly one of --concurrency C or --offline (C users per replica, or a batch "
        "as large as memory holds)",
        "  --model: unknown model 'llama-3.1-70bb': did you mean llama-3.1-70b? `llmsizer "
        "catalog models` lists them all",
        "  --gpu: unknown GPU 'H100-SXM': the catalog names it h100-sxm (ids are lower case, "
        "with the catalog's hyphens and dots); write --gpu h100-sxm",
        "  --weights: unknown precision 'FP8': the catalog names it fp8 (ids are lower case, "
        "with the catalog's hyphens and dots); write --weights fp8",
        "  --kv: unknown precision 'int3': did you mean int8? The catalog's precisions: bf16, fp16, "
        "fp4, fp8, int4, int8, mxfp4",
        # review round 25: on a line of its own, not run on after the last problem's list
        "(see 'python -m llmsizer.cli estimate --help')"]


@pytest.mark.parametrize(("option", "value", "told"), [
    # click's own words were "'500tok' is not a valid integer range."
    ("--prompt-tokens", "500tok", "'500tok' is not a whole number; write the number alone, "
                                  "without units or separators: 500"),
    ("--prompt-tokens", "1,000", "'1,000' is not a whole number; write the number alone, "
                                 "without units or separators: 1000"),
    ("--output-tokens", "2.5", "'2.5' is not a whole number; write one without a fraction, "
                               "such as 2"),
    # "'80%' is not a valid float range."
    ("--mbu", "80%", "'80%' is not a number; a share, not a percentage: write 0.8 for 80%"),
])
def test_a_number_with_a_unit_says_what_to_type(option: str, value: str, told: str) -> None:
    args = {"--prompt-tokens": "500", "--output-tokens": "300", option: value}
    out = run("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--concurrency", "4",
              *(x for pair in args.items() for x in pair))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip() == (f"error: Invalid value for '{option}': {told} (see "
                                  "'python -m llmsizer.cli estimate --help')")



def test_a_file_not_found_names_the_file_meant(tmp_path: Path) -> None:
    """`acme.yml` for acme.yaml: the message said only "check the path and the file name"."""
    (tmp_path / "acme.yaml").write_text("schema_version: 1\n", encoding="utf-8")
    (tmp_path / "other.yaml").write_text("schema_version: 1\n", encoding="utf-8")
    for typed in ("acme.yml", "Acme.YAML", "acmee.yaml"):
        with pytest.raises(InputError) as caught:
            load(tmp_path / typed)
        assert str(caught.value).endswith(
            ": file not found: check the path and the file name (did you mean acme.yaml?)")
    with pytest.raises(InputError) as caught:  # nothing close: no guess
        load(tmp_path / "zebra.yaml")
    assert str(caught.value).endswith("file not found: check the path and the file name")
    with pytest.raises(InputError) as caught:
        load(tmp_path / "accounts" / "acme.yaml")
    assert str(caught.value).endswith(f"; the folder {tmp_path / 'accounts'} does not exist")


def test_a_key_in_the_wrong_block_is_told_where_it_belongs() -> None:
    """`headroom:` under hardware, `ttft_s:` beside targets instead of in it: no spelling is
    close, so the message listed the block's keys and stopped; the key's home is the fix."""
    text = (HEAD + "workloads:\n" + workload() + "    ttft_s: 2\nhardware:\n"
            "  gpus: [h100-sxm]\n  headroom: 0.3\n")
    found = problems(text)
    assert found[0].startswith(
        "acme.yaml:11:5: workloads[0]: unknown key 'ttft_s'; `ttft_s:` belongs under "
        "`targets:` in a workload: move it there, lined up with that block's keys; allowed "
        "here: burstiness, "), found[0]
    assert found[1] == (
        "acme.yaml:14:3: hardware: unknown key 'headroom'; `headroom:` belongs under "
        "`policy:`: move it there, lined up with that block's keys; allowed here: gpus, "
        "kv_precisions, platform, tensor_parallel, weight_precisions")
