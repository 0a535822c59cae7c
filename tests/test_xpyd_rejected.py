"""Why no disaggregated (xPyD) option was offered: where every prefill/decode pair tried on a
platform misses the targets, the nearest one is kept as a rejected option (reason code
``xpyd``) whose reason names the serving mode and the platform, in the same words in the
JSON, `llmsizer size` and the PDF. The search used to drop every rejected pair, so a
presales engineer saw aggregated reasons only. At most one such line per platform, none
where an xPyD option is feasible (inputs/frontier-moe-rack.yaml unchanged)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmsizer.inputs.loader import load
from llmsizer.runs.report import write_outputs
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Option, WorkloadResult
from llmsizer.sizing.search import reason_for

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
TIGHT = DATA / "xpyd-tight-p95.yaml"  # GB300 NVL72 only, 8 s p95: nothing meets it
H200 = DATA / "xpyd-rejected-h200.yaml"  # 20 s p95: xPyD on the rack, none on DGX H200
LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]


def _xpyd(w: WorkloadResult) -> list[Option]:
    return [o for o in w.options if o.reason_code == "xpyd"]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_pair_missing_an_8_s_target_leaves_the_nearest_ones_reason() -> None:
    loaded = load(TIGHT)
    [w] = size(loaded).workloads
    assert w.recommended is None
    [o] = _xpyd(w)  # one line for the one platform, not one per pair tried
    assert "/prefill-" in o.id and not o.feasible and o.platform == "gb300-nvl72"
    target = loaded.req.workloads[0].targets.e2e_p95_s  # 8 s, the fixture's
    assert o.reason.startswith(
        f"disaggregated prefill/decode on NVIDIA GB300 NVL72 rack: the whole answer misses "
        f"the {target:g} s p95 target even with one sequence per decode replica")
    # the words are the search's own for this option's figures, after the platform
    assert o.reason.endswith(reason_for({**w.inputs, **o.values})[1])
    assert float(o.values["disagg_prefill_gpus"]) > 0 and float(o.values["batch_by_ttft"]) < 1
    # the advice still names an aggregated replica ("72 × GPU" reads as one kind of replica)
    assert w.advice is not None and "decode" not in w.advice


def test_the_json_and_the_terminal_say_it_in_the_same_words() -> None:
    env = {**os.environ, "COLUMNS": "80"}
    js = subprocess.run([*LLMSIZER, "size", "--json", str(TIGHT)], capture_output=True,
                        text=True, timeout=300, env=env)
    [reason] = [o["reason"] for w in json.loads(js.stdout)["workloads"]
                for o in w["options"] if o["reason_code"] == "xpyd"]
    assert reason.startswith("disaggregated prefill/decode on NVIDIA GB300 NVL72 rack: ")
    text = subprocess.run([*LLMSIZER, "size", str(TIGHT)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert text.returncode == 3  # nothing meets the targets, as before
    assert _flat(reason) in _flat(text.stdout)


def test_the_proposal_lists_it_where_another_platform_is_recommended(tmp_path: Path) -> None:
    result = size(load(H200))
    [w] = result.workloads
    assert w.best is not None and w.best.platform == "gb300-nvl72" and "/prefill-" in w.best.id
    [o] = _xpyd(w)  # DGX H200; none for the rack or DGX B200, where a pair is feasible
    feasible_on = {x.platform for x in w.options if x.feasible and "/prefill-" in x.id}
    assert o.platform == "dgx-h200" and o.platform not in feasible_on
    assert o.reason.startswith("disaggregated prefill/decode on NVIDIA DGX H200: the whole "
                               "answer misses the 20 s p95 target")
    [pdf] = write_outputs(result, tmp_path, stem="account", formats=("pdf",))
    text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True,
                          text=True).stdout
    assert _flat("D" + o.reason[1:]) in _flat(text)  # a list item: its first letter capital


@pytest.mark.parametrize("path", [ROOT / "inputs" / "frontier-moe-rack.yaml",
                                  DATA / "frontier-kimi-p95.yaml"])
def test_no_line_where_a_disaggregated_option_is_feasible(path: Path) -> None:
    [w] = size(load(path)).workloads
    assert any(o.feasible and "/prefill-" in o.id for o in w.options)
    assert _xpyd(w) == []


def test_an_aggregated_option_missing_a_whole_answer_target_says_so() -> None:
    """With only a whole-answer target stated, an aggregated option no batch could serve read
    "TTFT 264 ms even for one request; target 0 ms" (the mean first-token target, unset).
    It now names the target it misses; a first-token percentile target likewise."""
    w = size(load(TIGHT)).workloads[0]
    reasons = {o.reason for o in w.options if o.reason_code == "ttft"}
    assert reasons and all(r.startswith("the whole answer misses the 8 s p95 target even for "
                                        "one request (one request alone waits ") for r in reasons)
    assert not any("target 0 ms" in o.reason for o in w.options)
    text = (ROOT / "inputs" / "example.yaml").read_text("utf-8")
    assert "      ttft_s: " in text
    tight = text.replace("      ttft_s: ", "      ttft_p99_s: 0.01\n      ttft_was: ", 1)
    tight = "\n".join(line for line in tight.splitlines() if "ttft_was" not in line) + "\n"
    from llmsizer.inputs.loader import load_from_text
    r = size(load_from_text(tight, "p99.yaml"))
    missed = {o.reason for wl in r.workloads for o in wl.options if o.reason_code == "ttft"}
    assert missed and all(m.startswith("the first-token p99 target of 0.01 s is missed even for "
                                       "one request (one request alone waits ") for m in missed)
