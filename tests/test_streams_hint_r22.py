"""Session 22 (streams hint): where a workload's stated streams bind, the proposal, the
command line and the web page say what more streams would save.

University of Northfield's transcript job (tests/data/gbp-university-r22.yaml) keeps 64
streams open and asks 1,500 tok/s of Llama 3.3 70B: on 2 x H100 PCIe the streams need 16
replicas with 25 % headroom (tests/test_stated_streams_r22.py), each running about 9.7 of
the 65 sequences it can hold (67 before session 25). The streams are a client setting the
customer controls: with replicas running full, ROUNDUP(1,500 / 510 tok/s x 1.25) = 4
replicas carry the load, and
4 x 65 = 260 streams fill them (replicas.py full_replicas_for_load, streams_to_fill).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from llmsizer.documents.proposal.render import render_html
from llmsizer.documents.textreport import print_result
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result
from llmsizer.web.app import create_app

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parent.parent
UNIVERSITY = DATA / "gbp-university-r22.yaml"
# 65 and 260 since session 25 (the FP8 checkpoint's 16-bit embeddings and lm_head take 2.1 GB
# of the KV budget; 67 and 268 before)
SENTENCE = ("Its 64 streams are spread over 16 replicas that could each run 65 sequences; the "
            "pipeline running 260 streams at once would need 4 replicas instead of 16.")


@pytest.fixture(scope="module")
def university() -> Result:
    return size(load(UNIVERSITY))


def _flat(text: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", text).replace("\u00a0", " ").split())


def test_the_full_replicas_and_the_streams_that_fill_them(university: Result) -> None:
    w = university.workloads[0]
    assert w.recommended == "h100-pcie/fp8/kv-fp8/tp2"
    v = w.best.values if w.best else {}
    # a full replica: batch 65 (KV memory; 67 before session 25) making 510 tok/s; the
    # target 1,500 x 1.25
    assert v["batch_per_replica"] == 65
    assert v["replica_output_tokens_per_s"] == pytest.approx(510, abs=1)
    full = math.ceil(1500 / v["replica_output_tokens_per_s"] * 1.25)      # 3.68 -> 4
    assert full == 4 and v["full_replicas_for_load"] == full
    assert v["streams_to_fill"] == 4 * 65 == 260
    assert v["replicas_for_load"] == 16                  # what the 64 streams need
    assert 64 / v["stream_replicas"] == pytest.approx(v["batch_served"])   # 9.71 a replica
    # no streams stated (a chat workload): both rows 0
    chat = university.workloads[1].best
    assert chat is not None
    assert chat.values["full_replicas_for_load"] == 0 == chat.values["streams_to_fill"]


def test_the_sentence_reads_alike_in_the_cli_the_pdf_and_the_web(university: Result) -> None:
    con = Console(record=True, width=200)
    print_result(university, con)
    cli = " ".join(con.export_text().split())
    assert cli.count(SENTENCE) == 1
    # under the transcript job's table, before the chat assistant's
    assert cli.index(SENTENCE) < cli.index("Student chat assistant")
    pdf = _flat(render_html(university))
    assert pdf.count(SENTENCE) == 1
    assert pdf.index("Modelled alone at peak") < pdf.index(SENTENCE)
    with TestClient(create_app()) as client:
        page = client.post("/upload/yaml", files={"file": (
            UNIVERSITY.name, UNIVERSITY.read_bytes())}).text
    assert _flat(page).count(SENTENCE) == 1
    assert 'class="load streams-hint"' in page


def test_no_sentence_where_the_streams_do_not_bind() -> None:
    """inputs/offline-summarisation.yaml: 1,024 streams fill its L40S replicas (6 replicas
    either way), and a chat workload states no streams."""
    r = size(load(ROOT / "inputs" / "offline-summarisation.yaml"))
    v = r.workloads[0].best.values if r.workloads[0].best else {}
    assert v["concurrent_users"] == 1024
    assert v["replicas_for_load"] == v["full_replicas_for_load"] == 6
    con = Console(record=True, width=200)
    print_result(r, con)
    assert "streams are spread over" not in con.export_text()
    assert "streams are spread over" not in render_html(r)
    chat = size(load(ROOT / "inputs" / "example.yaml"))
    con = Console(record=True, width=200)
    print_result(chat, con)
    assert "streams are spread over" not in con.export_text()
    assert "streams are spread over" not in render_html(chat)
