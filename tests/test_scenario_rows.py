"""Which what-if rows an account lists: a load row varies one form of load (concurrent users,
or a peak rate stated as a rate or a population), so it is listed only when a workload of the
account states that form (or, for the rate rows, an embed or rerank workload has a query
rate, which they resize). Before, every account listed every row: Acme's "Requests/s at peak
-50 %" printed the proposal's own figures, read as "half the load needs the same GPUs".
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE, ROOT

from llmsizer.documents.proposal import render_pdf
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.calculations import SCENARIOS, applies
from llmsizer.sizing.engine import size

openpyxl: Any = importlib.import_module("openpyxl")

HELPDESK = ROOT / "inputs" / "helpdesk-population.yaml"
RAG = ROOT / "inputs" / "rag-knowledge-base.yaml"
_USERS = {"users_x0.5", "users_x1.5", "users_x2"}
_RATE = {"rate_-50%", "rate_+50%"}


def _listed(path: Path, tmp_path: Path) -> tuple[set[str], str, list[str]]:
    """The rows' ids in the results JSON, the PDF's text and the Scenarios sheet's labels."""
    r = size(load(path))
    names = {s["name"] for s in json.loads(r.to_json())["sensitivity"]}
    pdf = tmp_path / "p.pdf"
    render_pdf(r, pdf)
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    book = tmp_path / "b.xlsx"
    write_workbook(r, book)
    ws = openpyxl.load_workbook(book, read_only=True)["Scenarios"]
    labels = [str(row[0]) for row in ws.iter_rows(min_row=5, max_col=1, values_only=True)
              if row[0] is not None]
    return names, re.sub(r"\s+", " ", text.replace("\u00a0", " ")), labels


def test_acme_states_concurrent_users_so_no_rate_row(tmp_path: Path) -> None:
    """inputs/example.yaml: both workloads state concurrent users (200 and 100); no rate row
    anywhere. Its PDF printed "Requests/s at peak -50 %" with the proposal's 20 GPUs."""
    names, text, labels = _listed(EXAMPLE, tmp_path)
    assert names & _RATE == set() and names >= _USERS
    assert len(names) == len(SCENARIOS) - 2  # 17 of the 19
    assert "Requests/s at peak" not in text and re.search(r"Concurrent users:? ?[x×]2", text)
    assert "Requests/s at peak" not in labels and labels.count("Concurrent users") == 3


def test_a_population_load_lists_no_concurrent_users_row(tmp_path: Path) -> None:
    """inputs/helpdesk-population.yaml: 2,000 named users, 6 requests an hour each, peak 3x
    (10 requests/s); no concurrent-users row, both rate rows."""
    names, text, labels = _listed(HELPDESK, tmp_path)
    assert names & _USERS == set() and names >= _RATE
    assert len(names) == len(SCENARIOS) - 3
    assert "Concurrent users" not in labels and labels.count("Requests/s at peak") == 2
    assert "Requests/s at peak" in text
    # "Concurrent users at peak" (147, by Little's law) is a figure, not a what-if row
    assert re.search(r"Requests/s at peak:? [-+]50 %", text)
    assert not re.search(r"Concurrent users:? ?[x×]\d", text)


def test_a_rag_account_keeps_both_kinds(tmp_path: Path) -> None:
    """inputs/rag-knowledge-base.yaml: the language model states 50 concurrent users, the
    embedder and the reranker 50 requests/s each, which the rate rows resize: every row."""
    names, text, labels = _listed(RAG, tmp_path)
    assert names == {s.name for s in SCENARIOS}
    assert labels.count("Concurrent users") == 3 and labels.count("Requests/s at peak") == 2
    assert "Requests/s at peak" in text and "Concurrent users" in text


def test_applies_reads_the_stated_form_never_the_figures() -> None:
    """calculations.applies over the inputs alone: a users load, a stated rate, a population;
    a corpus re-index alone (no query rate) does not bring the rate rows; the other rows apply
    to every account."""
    rows = {s.name: s for s in SCENARIOS}
    users = {"users": 200.0, "requests_per_s": 0.0, "named_users": 0.0,
             "requests_per_user_per_hour": 0.0, "peak_to_average": 1.0}
    rate = users | {"users": 0.0, "requests_per_s": 10.0}
    population = users | {"users": 0.0, "named_users": 2000.0,
                          "requests_per_user_per_hour": 6.0, "peak_to_average": 3.0}
    for name in _RATE:
        assert not applies(rows[name], [users], [])
        assert applies(rows[name], [rate], []) and applies(rows[name], [population], [])
        assert applies(rows[name], [users], [{"request_rate_per_s": 50.0}])
        assert not applies(rows[name], [users], [{"request_rate_per_s": 0.0}])
    for name in _USERS:
        assert applies(rows[name], [users], [])
        assert not applies(rows[name], [rate, population], [{"request_rate_per_s": 50.0}])
    for sc in SCENARIOS:
        if sc.name not in _USERS | _RATE:
            assert applies(sc, [], []), sc.name


@pytest.mark.parametrize("path", [EXAMPLE, HELPDESK], ids=["users", "population"])
def test_the_kept_plans_are_the_listed_rows(path: Path) -> None:
    """The workbook's Scenarios sheet zips the kept plans with the results' rows: the same
    list, evaluated afresh or kept."""
    from llmsizer.sizing import sensitivity

    r = size(load(path))
    fresh = sensitivity.scenario_plans(r.workloads, r.account_inputs, r.tables,
                                       [p.workload_indices for p in r.plan.pools], r.retrieval)
    assert [sc.name for sc, _e, _p in fresh] == [s.name for s in r.sensitivity] == [
        sc.name for sc, _e, _p in sensitivity.result_scenario_plans(r)]
