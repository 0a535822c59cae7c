"""Session 23 (helper D): the command line's figures and words, read as a presales engineer
reads them. Each test fails on c5fbadb:

1. ``llmsizer size tests/data/gbp-university-r22.yaml``'s batch column showed the 67
   sequences one H100 PCIe TP2 replica holds for a job of 64 streams that keep 9.71 a replica
   at peak (decode.py ``batch_served``, the batch the tok/s per user column is read at);
2. a ruled-out reason said "125.9 GB usable on TP1": the GPUs a replica has, in words;
3. ``llmsizer fidelity tests/data/mlperf_inference.csv --summary`` began with a 134-column
   line;
4. an unknown GPU id got "(did you mean h100-sxm (NVIDIA H100 SXM 80GB) or h200-sxm (NVIDIA
   H200 SXM) or a100-sxm (NVIDIA A100 80GB SXM)?)": brackets in brackets, three guesses;
5. Fabrikam's walk-through said "25.04 tok/s" where every other surface says 25.0;
6. three bad files read as a presales engineer: parser terms ("flow sequence", "cannot start
   any token"), three guesses beside the one fix, a time range without its unit, a chat
   workload's "allowed here" naming the embed and rerank keys.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from llmsizer.base.errors import InputError
from llmsizer.documents.proposal.format import Formatter
from llmsizer.documents.textreport import print_result
from llmsizer.inputs.loader import load, load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
EXAMPLE = (ROOT / "inputs" / "example.yaml").read_text(encoding="utf-8")


def _text(path: Path, width: int = 160) -> str:
    con = Console(width=width, record=True, color_system=None, file=io.StringIO())
    print_result(size(load(path)), con)
    return con.export_text()


def _problem(text: str) -> str:
    with pytest.raises(InputError) as caught:
        load_from_text(text, "acme.yaml", load_catalog())
    return str(caught.value)


# ---- 1. the batch the load runs at ---------------------------------------------------------

def test_the_batch_column_shows_what_the_stated_streams_keep_a_replica() -> None:
    """64 streams over the 6.59 replicas they need: 9.71 sequences a replica (the tok/s per
    user, 23.4 = 1,500 / 64, is read at that batch), not the 65 the KV memory allows (67
    before session 25's 16-bit embeddings of the FP8 checkpoint)."""
    result = size(load(DATA / "gbp-university-r22.yaml"))
    w = result.workloads[0]
    v = next(o for o in w.options if o.id == w.recommended).values
    assert v["batch_per_replica"] == 65
    assert float(v["batch_served"]) == pytest.approx(64 / float(v["stream_replicas"]))
    star = next(line for line in _text(DATA / "gbp-university-r22.yaml").splitlines()
                if "★ 2 × H100 PCIe" in line)
    cells = [c.strip() for c in star.strip("│ ").split("│")]
    assert cells[1] == Formatter.batch(float(v["batch_served"])) == "9.71", cells
    assert cells[2] == "23.4"


def test_a_whole_batch_is_a_count_and_a_mean_three_figures() -> None:
    assert Formatter.batch(67.0) == "67" and Formatter.batch(1024.0) == "1,024"
    assert Formatter.batch(64 / 6.59) == "9.71" and Formatter.batch(143.4) == "143"


# ---- 2. the replica's GPUs in words --------------------------------------------------------

def test_a_weights_reason_names_the_gpus_per_replica_not_tp() -> None:
    result = size(load(DATA / "gbp-university-r22.yaml"))
    reasons = [o.reason for w in result.workloads for o in w.options if o.reason_code == "weights"]
    assert reasons and not any(re.search(r"\bTP\d", r) for r in reasons), reasons
    assert any(r.endswith("GB usable on 1 GPU per replica") for r in reasons), reasons
    two = size(load(ROOT / "inputs" / "code-assistant.yaml"))
    said = [o.reason for w in two.workloads for o in w.options
            if o.reason_code == "weights" and o.tp == 2]
    assert said and all(r.endswith("usable on 2 GPUs per replica (tensor parallel)")
                        for r in said), said


# ---- 3. the fidelity summary within 80 columns ---------------------------------------------

def test_the_fidelity_summary_s_sentences_fit_80_columns() -> None:
    out = subprocess.run([sys.executable, "-m", "llmsizer.cli", "fidelity",
                          str(DATA / "mlperf_inference.csv"), "--summary"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    lines = out.splitlines()
    assert lines[0].startswith("error = predicted / measured - 1")
    assert max(len(line) for line in lines) <= 80, [ln for ln in lines if len(ln) > 80]


# ---- 4. an unknown id: one guess, no brackets in brackets ----------------------------------

def test_an_unknown_gpu_gets_one_guess_without_nested_brackets() -> None:
    said = _problem(EXAMPLE.replace("gpus: [h100-sxm, h200-sxm, l40s]", "gpus: [h100-sxm5]"))
    assert ("hardware.gpus[0]: unknown GPU 'h100-sxm5': did you mean h100-sxm (NVIDIA H100 "
            "SXM 80GB)? `llmsizer catalog gpus` lists them all") in said
    assert "h200-sxm (" not in said and "))" not in said


def test_a_misspelt_model_gets_one_guess() -> None:
    said = _problem(EXAMPLE.replace("model: llama-3.1-70b", "model: llama-3.1-8bb", 1))
    assert ("workloads[0].model: unknown model 'llama-3.1-8bb': did you mean llama-3.1-8b? "
            "`llmsizer catalog models` lists them all") in said
    assert " or " not in said.split("?")[0]


# ---- 5. a per-user speed beside its target: one decimal ------------------------------------

def test_fabrikam_s_speed_keeps_one_decimal_beside_its_target() -> None:
    result = size(load(ROOT / "inputs" / "helpdesk-population.yaml"))
    assert result.account.name.startswith("Fabrikam")
    w = result.workloads[0]
    v = next(o for o in w.options if o.id == w.recommended).values
    speed, target = float(v["tokens_per_s_per_user"]), float(v["required_tokens_per_s_per_user"])
    assert round(speed, 2) == 25.04 and target == 25
    said = Formatter("USD").tok_s_vs(speed, target).replace("\xa0", " ")
    assert said == "25.0 tok/s (target 25.0 tok/s, met)"


# ---- 6. bad files read as a presales engineer ----------------------------------------------

def test_yaml_errors_are_said_without_the_parser_s_terms() -> None:
    unclosed = _problem(EXAMPLE.replace("gpus: [h100-sxm, h200-sxm, l40s]",
                                        "gpus: [h100-sxm, h200-sxm, l40s"))
    assert unclosed.endswith("not valid YAML: a `[` list is not closed with `]`, or its items "
                             "are not separated by commas (the `[` list starts on line 29)")
    tab = _problem(EXAMPLE.replace("    prompt_tokens: 500", "\tprompt_tokens: 500"))
    assert "not valid YAML: a tab indents this line" in tab and "token" not in tab


def test_a_misspelt_key_gets_one_guess_and_the_keys_of_its_kind() -> None:
    said = _problem(EXAMPLE.replace("    prompt_tokens: 500", "    prompt_token: 500"))
    assert ("workloads[0]: unknown key 'prompt_token' (did you mean prompt_tokens?); write it "
            "as `prompt_tokens: 500`; allowed here: burstiness, concurrent_users, ") in said
    assert "corpus_tokens" not in said and "candidates_per_request" not in said


def test_two_range_errors_say_a_time_s_unit() -> None:
    said = _problem(EXAMPLE.replace("      ttft_s: 2\n", "      ttft_s: 0\n")
                    .replace("  pue: 1.3", "  pue: 0.5"))
    lines = said.split("\n")
    assert lines[0] == "acme.yaml: 2 problems:"
    assert lines[1].endswith("workloads[0].targets.ttft_s: must be at least 0.01 (found 0); "
                             "allowed: a number of seconds from 0.01 to 120")
    assert lines[2].endswith("costs.pue: must be at least 1 (found 0.5); allowed: a number "
                             "from 1 to 3")
