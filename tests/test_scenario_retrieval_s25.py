"""Session 25: a scenario that cannot move an embed or rerank node group keeps it as proposed,
in the engine's sensitivity as on the workbook's Scenarios sheet (one figure, one home).

tests/data/rag-kb-cloud-n1-r22.yaml (rented, N+1): the chat on 3 GPUs, the embedder and the
reranker each on nodes of their own (16 MI325X GPUs each: 35 bought). The Scenarios sheet adds
the Retrieval sheet's proposed cells to the chat's scenario plan for the users rows
(``sizing.retrieval.scenario_changes_retrieval``: no retrieval input changes), but the engine
re-placed the groups for every row and moved the reranker onto the embedder's idle GPUs: at
half the users the results said 18 GPUs bought while LibreOffice recalculated 2 + 16 + 16 = 34
(and 35 of the sheet's cells disagreed, found by review round 25b)."""

from __future__ import annotations

from pathlib import Path

from helpers import ROOT
from test_workbook import libreoffice_check

from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

ACCOUNT = ROOT / "tests" / "data" / "rag-kb-cloud-n1-r22.yaml"


def test_users_rows_keep_the_retrieval_groups_as_proposed() -> None:
    r = size(load(ACCOUNT))
    groups = r.plan.retrieval_groups
    assert [g.gpus_purchased for g in groups] == [16, 16]
    assert all(g.shares_with is None for g in groups)
    assert r.totals.gpus_purchased == 35
    half = next(s for s in r.sensitivity if s.name == "users_x0.5")
    # the chat's plan at half the users (2 GPUs) + the two groups as proposed
    assert half.gpus_purchased == 2 + 16 + 16


def test_libreoffice_recalculates_the_scenarios_like_the_engine(tmp_path: Path) -> None:
    r = size(load(ACCOUNT))
    book = tmp_path / "book.xlsx"
    write_workbook(r, book)
    problems, _, _ = libreoffice_check(r, book, tmp_path / "out")
    assert problems == []
