"""Node loss in the plan's words (issue 22, item 3): the risks state each pool's headroom with
a node down on its group's nodes and the least time a replica takes to reload its weights
(weights / storage read bandwidth, a sourced catalog default); a plan on one node says the
service stops while that node is down instead of printing "-100 %".
"""

from __future__ import annotations

import math
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers import ROOT

from llmsizer.documents.proposal import Formatter, build_context
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.runs.report import write_outputs
from llmsizer.sizing.engine import size


def _pdf_text(result: object, out: Path, stem: str) -> str:
    pdf = write_outputs(result, out, stem=stem, formats=("pdf",))[0]  # type: ignore[arg-type]
    text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True,
                          text=True).stdout
    return re.sub(r"\s+", " ", text.replace("\u00a0", " "))


def test_storage_read_bandwidth_is_a_sourced_default() -> None:
    const = load_catalog().constants["storage_read_gb_per_s"]
    # reference set, infrastructure.md "Model weight load time": local NVMe 5-7 GB/s
    assert const.value == 5.0
    assert "NVMe" in const.source and "5-7 GB/s" in const.source


def test_restart_time_is_weights_over_storage_bandwidth(tmp_path: Path) -> None:
    """enterprise-multi's agent platform on H100s only: gpt-oss-120b (the catalog's 116.8e9
    parameters) on 4 H100s at FP8. Session 25 (weights audit): an FP8 checkpoint keeps the
    embeddings, lm_head, norms and routers at 16 bits, so the knowledge-base workload's
    Llama 3.3 70B grew 70.6 -> 72.7 GB a replica and needs 5 replicas (20 GPUs), and the plan
    now packs the agent's 4 GPUs beside them on the 8-GPU nodes (before: MXFP4 on 2 H100s with
    attention data-parallel, 68.2 GB, on a 4-GPU node). gpt-oss has no FP8 checkpoint, so
    its 16-bit part is the MXFP4 checkpoint's (attention, router, embeddings: the catalog's
    2.1674e9, config.json's modules_to_not_convert): (116.8e9 - 2.1674e9) x 1 byte +
    2.1674e9 x 2 = 119.0 GB a replica reloads, read at 5 GB/s: 23.8 s; at a stated 1 GB/s,
    119.0 s. With B200 allowed the plan puts it on one B200, so this pins the H100s it is
    about."""
    data = yaml.safe_load((ROOT / "inputs" / "enterprise-multi.yaml").read_text())
    data["hardware"]["gpus"] = ["h100-sxm"]
    path = tmp_path / "em-h100.yaml"
    path.write_text(yaml.safe_dump(data))
    result = size(load(path))
    agent = next(w for w in result.workloads if w.name == "Agent platform")
    assert agent.best is not None
    v = agent.best.values
    assert (agent.best.weight_precision, agent.best.tp, v["adp"]) == ("fp8", 4, 1)
    model = load_catalog().models["gpt-oss-120b"]
    kept = model.quantised_16bit_count
    replica_weights = ((model.params_total - kept) * 1 + kept * 2) / 1e9
    assert math.isclose(float(v["weights_gb"]), replica_weights, rel_tol=1e-9)
    assert round(replica_weights, 1) == 119.0
    assert math.isclose(float(v["restart_s"]), replica_weights / 5.0, rel_tol=1e-12)
    fmt = Formatter(result.account.currency)
    doc = build_context(result)["fmt"]  # the PDF's: one precision for all its headrooms
    text = _pdf_text(result, tmp_path, "em")
    node_loss = text[text.index("Node loss"):text.index("Burst above peak")]
    for pool in result.plan.pools:
        w = result.workloads[pool.workload_indices[0]]
        assert w.best is not None
        wv = w.best.values
        said = (f"reloads {fmt.gb(float(wv['weights_gb']))} of weights in at least "
                f"{fmt.seconds(float(wv['restart_s']))}").replace("\u00a0", " ")
        assert said in node_loss, said
        assert doc.headroom(pool.headroom_after_node_loss).replace("\u00a0", " ") in node_loss
    assert "5.0 GB/s assumed" in node_loss

    data.setdefault("policy", {})["storage_read_gb_per_s"] = 1.0
    slow = tmp_path / "slow.yaml"
    slow.write_text(yaml.safe_dump(data))
    again = size(load(slow))
    agent = next(w for w in again.workloads if w.name == "Agent platform")
    assert agent.best is not None
    assert math.isclose(float(agent.best.values["restart_s"]),
                        float(agent.best.values["weights_gb"]) / 1.0, rel_tol=1e-12)


# review round 21: ref-a-7b-assistant.yaml is rented (3 one-GPU instances, not the one node it
# would buy): one instance down leaves 2 of its 3 replicas (tests/test_rented_node_loss_r21.py)
@pytest.mark.parametrize("name", ["small-l4-l40s.yaml"])
def test_a_one_node_plan_says_the_service_stops(name: str, tmp_path: Path) -> None:
    result = size(load(ROOT / "inputs" / name))
    assert [g.nodes for g in result.plan.node_groups] == [1]
    assert not result.account_inputs["survive_node_loss"]
    text = _pdf_text(result, tmp_path, Path(name).stem)
    assert "-100 %" not in text and "−100 %" not in text
    assert "on the only node of its group, so a node failure stops it" in text
    assert "stops (one node)" in text  # the headroom table (the plan table: "stops")
