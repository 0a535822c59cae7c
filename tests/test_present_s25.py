"""Session 25, presentation follow-ups of session 24.

1. docs/results.md wrote "replicas + standby + idle = GPUs bought" for every retrieval group.
   A guest on a host's idle GPUs breaks it: tests/data/rag-shared.yaml's embedder runs 1
   replica on 1 idle GPU of the chat server and buys none (1 + 0 + 0 != 0). The identity now
   written adds the host's idle GPUs it runs on (its option's retrieval_gpus_on_llm_nodes), and
   the host's idle count holds them; checked on every shipped account's results JSON and on the
   guest accounts of tests/data.
5. tests/data/reference/prices.csv, the project's copy of the shared reference prices, has a
   row the shared copy lacks (Lambda A100 40GB 1.99, session 24). The project's copy is a
   superset: removing its marked rows gives the shared copy (its SHA-256 recorded), and each
   added row carries a pinned source and a date.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ShippedOutputs

from llmsizer.inputs.loader import load
from llmsizer.runs.report import write_outputs
from llmsizer.sizing.engine import size

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "inputs").glob("*.yaml"))
# the accounts whose embed or rerank workload is a guest on a host's idle GPUs (none shipped is)
GUESTS = [ROOT / "tests" / "data" / f"{n}.yaml" for n in (
    "rag-shared", "rag-shared-busy", "rag-shared-cloud", "rag-shared-single-gpu-cloud",
    "rag-reranker-unmet", "cad-l40s-rag-r21")]
RESULTS_DOC = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
REFERENCE = ROOT / "tests" / "data" / "reference"
ADDED = "(not in the shared reference copy)"


def _identity_broken(doc: dict[str, Any]) -> list[str]:
    """Every node group and retrieval group of one results JSON against the identities
    docs/results.md writes; the lines that do not hold."""
    plan, out = doc["plan"], []
    taken: dict[str, int] = {}  # host id -> its idle GPUs its guests run
    for group, workload in zip(plan["retrieval_groups"], doc["retrieval"], strict=False):
        best = next(o for o in workload["options"] if o["id"] == workload["recommended"])
        on_host = int(best["values"]["retrieval_gpus_on_llm_nodes"])
        if group["shares_with"]:
            assert group["idle_gpus"] == 0 and group["nodes"] == 0, group
            assert on_host == group["gpus_used"] - group["gpus_purchased"], group
            taken[group["shares_with"]] = taken.get(group["shares_with"], 0) + on_host
        else:
            assert on_host == 0, group
        if (group["replicas"] + group["standby_gpus"] + group["idle_gpus"]
                != group["gpus_purchased"] + on_host):
            out.append(f"{group['id']}: {group}")
    for group in plan["node_groups"]:
        v = group["values"]
        if (v["group_pool_gpus"] + v["group_standby_gpus"] + v["group_idle_gpus"]
                != group["gpus_purchased"]) or v["group_idle_gpus"] < taken.get(group["id"], 0):
            out.append(f"{group['id']}: {v}")
    t = doc["totals"]
    bought = (sum(g["gpus_purchased"] for g in plan["node_groups"])
              + sum(g["gpus_purchased"] for g in plan["retrieval_groups"]))
    if t["gpus_serving"] + t["gpus_standby"] + t["gpus_idle"] != t["gpus_purchased"] or (
            bought != t["gpus_purchased"]):
        out.append(f"totals: {t}")
    return out


def test_results_doc_writes_the_identity_for_hosts_and_guests() -> None:
    assert "`replicas` + `standby_gpus` + `idle_gpus` = `gpus_purchased`;" not in RESULTS_DOC
    assert ("`replicas` + `standby_gpus` + `idle_gpus` = `gpus_purchased` + the host's idle "
            "GPUs it runs on, its recommended option's `retrieval_gpus_on_llm_nodes`"
            ) in RESULTS_DOC
    assert "on a host, `group_idle_gpus` includes the idle GPUs its guests run" in RESULTS_DOC


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_the_identity_holds_on_every_shipped_account(
        path: Path, shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    doc = json.loads(shipped_outputs(path).json.read_text(encoding="utf-8"))
    assert _identity_broken(doc) == []


@pytest.mark.parametrize("path", GUESTS, ids=lambda p: p.stem)
def test_the_identity_holds_for_a_guest(path: Path, tmp_path: Path) -> None:
    [written] = write_outputs(size(load(path)), tmp_path, stem=path.stem, formats=("json",))
    doc = json.loads(written.read_text(encoding="utf-8"))
    assert _identity_broken(doc) == []


def test_the_old_identity_failed_on_a_guest(tmp_path: Path) -> None:
    # tests/data/rag-shared.yaml: 1 H100 replica of the embedder on the chat server's idle
    # GPU, nothing bought; the chat server's 4 GPUs split 2 serving, 1 running it, 1 idle
    result = size(load(GUESTS[0]))
    [embed] = result.plan.retrieval_groups if result.plan else []
    assert (embed.shares_with, embed.replicas, embed.standby_gpus, embed.idle_gpus,
            embed.gpus_purchased) == ("group-1", 1, 0, 0, 0)
    assert embed.replicas + embed.standby_gpus + embed.idle_gpus != embed.gpus_purchased
    [chat] = result.plan.node_groups if result.plan else []
    assert (chat.values["group_pool_gpus"], chat.values["group_idle_gpus"],
            chat.gpus_purchased) == (2, 2, 4)


# -- 5: the project's reference prices, a sourced superset of the shared copy --

def test_the_project_prices_are_the_shared_copy_plus_marked_rows() -> None:
    lines = (REFERENCE / "prices.csv").read_bytes().splitlines(keepends=True)
    shared = b"".join(line for line in lines if ADDED.encode() not in line)
    digest = (REFERENCE / "shared-prices.sha256").read_text(encoding="utf-8").split()[0]
    assert hashlib.sha256(shared).hexdigest() == digest
    assert len(lines) - shared.count(b"\n") == 1  # session 24's Lambda A100 40GB row


def test_each_added_price_row_has_a_pinned_source_and_a_date() -> None:
    with (REFERENCE / "prices.csv").open(encoding="utf-8") as f:
        added = [r for r in csv.DictReader(f) if ADDED in r["notes"]]
    assert [(r["item"], r["provider"], r["price_per_gpu_hour"]) for r in added] == [
        ("A100 40GB", "Lambda", "1.99")]
    readme = (REFERENCE / "README.md").read_text(encoding="utf-8")
    for row in added:
        assert re.search(r"@[0-9a-f]{40}|https://", row["source"]), row
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", row["date"]), row
        assert f"`{row['category']},{row['item']},{row['tier']},{row['provider']}," in readme


# -- 2: what the plan charges an embedder on another group's GPUs, the same on every surface --

def _cli(path: Path) -> str:
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "llmsizer.cli", "size", str(path)],
                          capture_output=True, text=True, env={"COLUMNS": "200", "PATH": "",
                                                               "PYTHONPATH": str(ROOT / "src")},
                          check=True)
    return done.stdout


def _row(text: str, workload: str) -> str:
    """The recommended row (its star) of ``workload``'s options table in the CLI's text."""
    after = text.split(f"{workload} — ", 1)[1]
    return next(line for line in after.splitlines() if line.startswith("│ ★"))


@pytest.mark.parametrize(("account", "workload", "words", "figure"), [
    # rag-shared: 1 replica on the chat server's idle H100, nothing bought: no extra cost
    ("rag-shared", "Query embedding", "no extra cost", 0.0),
    # Maple Ridge: 1 L40S bought for the chat server's empty slot: its own CAD 4,784 a year
    # (the GPU's CAD 11,040 written off, power and support; the plan's retrieval group)
    ("cad-l40s-rag-r21", "Question embedding", "", 4784.0),
])
def test_a_guests_cost_is_what_the_plan_charges_it_everywhere(
        account: str, workload: str, words: str, figure: float, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from llmsizer.documents.proposal.render import render_html
    from llmsizer.web.app import create_app

    path = ROOT / "tests" / "data" / f"{account}.yaml"
    result = size(load(path))
    [group] = [g for g in result.plan.retrieval_groups if g.workload == workload] if (
        result.plan) else []
    assert group.shares_with == "group-1" and group.annual_cost_onprem == pytest.approx(figure)
    # JSON: the flag row beside the figure, on the recommended option
    [written] = write_outputs(result, tmp_path, stem=account, formats=("json",))
    doc = json.loads(written.read_text(encoding="utf-8"))
    [best] = [o for rw in doc["retrieval"] if rw["name"] == workload for o in rw["options"]
              if o["id"] == rw["recommended"]]
    assert best["values"]["retrieval_no_extra_cost_onprem"] == (1 if words else 0)
    assert best["values"]["annual_cost_onprem"] == pytest.approx(figure)
    shown = words or ("CAD 4.78 k" if figure else "")
    # CLI: the options table's cost column (was 0 for rag-shared)
    assert f" {words or '4.78 k'} │" in _row(_cli(path), workload)
    # PDF: the plan's retrieval table, its per-year cell
    html = render_html(result).replace("\xa0", " ")  # money's no-break spaces
    plan = re.search(r"Retrieval serving:.*?</table>", html, re.S)
    assert plan and f'<td class="n">{shown}</td></tr>' in plan.group(0)
    # web: the per-workload share row, the retrieval servers' row and the options' row
    with TestClient(create_app()) as client:
        up = client.post("/upload/yaml", files={"file": (path.name, path.read_bytes())})
    assert up.status_code == 200
    page = up.text.replace("\xa0", " ").replace("&nbsp;", " ")
    share = re.search(rf"{workload}: <span class=\"config\">.*?</tbody>", page, re.S)
    servers = re.search(r'<table id="retrieval-groups">.*?</table>', page, re.S)
    options = re.search(r'<tr class="rec">(?:(?!</tr>).)*recommended(?:(?!</tr>).)*</tr>',
                        page.split(f"<h3>{workload} ")[1], re.S)
    for part in (share, servers, options):
        assert part and f'<td class="n">{shown}</td>' in part.group(0), part
