"""Workbook = PDF (issue 22, item 4): after LibreOffice recalculates the workbook, its
Scenarios table and its Summary totals hold the figures the PDF prints.

Three shipped accounts, one of them the three-workload enterprise-multi.yaml (three pools on
one node group: the plan buys 28 GPUs where the workloads sized alone would need 44). Each
account's workbook, PDF and results JSON are written by the CLI's own writer; the workbooks
are recalculated in one soffice call (forced recalculation, tests/support/libreoffice.py).
Every Scenarios row must equal the results' ``sensitivity[]`` (the plan re-evaluated with
one input changed; exact for counts, 1e-9 for money) and, formatted by the proposal's own
Formatter, appear in the PDF's sensitivity table in the same order. Before this, the sheet
summed each workload sized alone (enterprise-multi, users x2: 72 GPUs in the workbook against
52 in the PDF).
"""

from __future__ import annotations

import math
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from support.libreoffice import read_values, recalculate

from llmsizer.documents.proposal import Formatter, build_context
from llmsizer.documents.workbook.summary import summary_label
from llmsizer.inputs.loader import load
from llmsizer.runs.report import write_outputs
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

ACCOUNTS = ("example.yaml", "enterprise-multi.yaml", "code-assistant.yaml")
# Scenarios sheet: the table's header row (1-based) and its columns
HEAD_ROW = 4
FIGURES = (("gpus_purchased", "GPUs bought"), ("nodes", "Nodes"), ("capex", "Capital cost"),
           ("annual_cost_onprem", "On-prem cost per year"),
           ("annual_cost_cloud", "Cloud cost per year"))


@dataclass
class Case:
    result: Result
    pdf_text: str  # pdftotext, whitespace runs as one space
    sheets: dict[str, dict[str, object]]  # after LibreOffice's recalculation


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    out = tmp_path_factory.mktemp("outputs")
    written: dict[str, tuple[Result, Path, Path]] = {}
    for name in ACCOUNTS:
        result = size(load(ROOT / "inputs" / name))
        # the what-if table is in the detailed PDF (report --appendix)
        paths = write_outputs(result, out, stem=Path(name).stem, formats=("xlsx", "pdf"),
                              appendix=True)
        book = next(p for p in paths if p.suffix == ".xlsx")
        pdf = next(p for p in paths if p.suffix == ".pdf")
        written[name] = (result, book, pdf)
    done = recalculate([b for _, b, _ in written.values()], tmp_path_factory.mktemp("lo"),
                       timeout=600)
    cases = {}
    for name, (result, book, pdf) in written.items():
        text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True,
                              text=True).stdout
        cases[name] = Case(result, re.sub(r"\s+", " ", text), read_values(done[book]))
    return cases


def _same(got: object, want: float, count: bool) -> bool:
    if not isinstance(got, int | float):
        return False
    return got == want if count else math.isclose(got, want, rel_tol=1e-9)


def _columns(sheet: dict[str, object], row: int) -> dict[str, str]:
    """Header text -> column letter of a header row."""
    return {str(v): re.sub(r"\d", "", k) for k, v in sheet.items()
            if re.fullmatch(rf"[A-Z]+{row}", k)}


def _line(fmt: Formatter, values: dict[str, float]) -> str:
    """One row of the PDF's sensitivity table, as pdftotext reads it."""
    return " ".join([fmt.count(values["gpus_purchased"]), fmt.count(values["nodes"]),
                     *(fmt.money(values[k]) for k in ("capex", "annual_cost_onprem",
                                                     "annual_cost_cloud"))]).replace("\u00a0", " ")


@pytest.mark.parametrize("name", ACCOUNTS)
def test_scenarios_sheet_equals_the_pdf_table(name: str, cases: dict[str, Case]) -> None:
    case = cases[name]
    r = case.result
    assert r.sensitivity, "every shipped account here has a recommendation"
    sheet = case.sheets["Scenarios"]
    cols = _columns(sheet, HEAD_ROW)
    fmt = Formatter(r.account.currency)
    text = re.sub(r"\s+", " ", case.pdf_text.replace("\u00a0", " "))
    at = text.index("What if: sensitivity")
    base = {k: float(getattr(r.totals, k)) for k, _ in FIGURES}
    rows = [("As proposed", base)] + [
        (f"{s.label} {s.change.replace('x', '×', 1) if s.change.startswith('x') else s.change}",
         {k: float(getattr(s, k)) for k, _ in FIGURES}) for s in r.sensitivity]
    for i, (label, want) in enumerate(rows):
        row = HEAD_ROW + 1 + i
        got = {k: sheet.get(f"{cols[head]}{row}") for k, head in FIGURES}
        bad = [(k, got[k], want[k]) for k, _ in FIGURES
               if not _same(got[k], want[k], k in ("gpus_purchased", "nodes"))]
        assert not bad, (name, label, bad)
        # the recalculated row, formatted as the PDF formats it, is the PDF's row
        line = _line(fmt, {k: float(v) for k, v in got.items()})  # type: ignore[arg-type]
        found = text.find(line, at)
        assert found >= 0, (name, label, line)
        at = found + len(line)


def test_the_sheet_follows_the_plan_not_each_workload_alone(cases: dict[str, Case]) -> None:
    """enterprise-multi: three workloads on shared XE9685L nodes. Doubling users needs 40 GPUs
    in 5 nodes in the plan (the PDF's row; 52 in 13 XE8640 nodes before the plan search's
    per-platform seeds), and the Scenarios sheet's row is the plan's."""
    case = cases["enterprise-multi.yaml"]
    users_x2 = next(s for s in case.result.sensitivity if s.name == "users_x2")
    assert (users_x2.gpus_purchased, users_x2.nodes) == (40, 5)
    sheet = case.sheets["Scenarios"]
    cols = _columns(sheet, HEAD_ROW)
    row = HEAD_ROW + 1 + 1 + [s.name for s in case.result.sensitivity].index("users_x2")
    assert sheet[f"{cols['GPUs bought']}{row}"] == 40
    assert sheet[f"{cols['Nodes']}{row}"] == 5


# The Plan sheet's node-loss rows (issue 22, item 3): whole free slots, the spare nodes N+1
# adds, the replicas and headroom with the node that hurts a pool most down.
NODE_LOSS_POOL_ROWS = ("pool_replicas_lost_with_a_node", "pool_replicas_on_partial_node",
                       "pool_restart_slots_partial", "pool_replicas_after_node_loss_packed",
                       "pool_replicas_after_node_loss", "pool_headroom_after_node_loss")
NODE_LOSS_GROUP_ROWS = ("group_free_gpus", "group_free_nodes", "group_free_gpus_partial",
                        "group_spare_nodes_added", "group_nodes", "group_gpus_purchased",
                        "group_headroom_after_node_loss")


@pytest.mark.parametrize("name", ACCOUNTS)
def test_plan_sheet_node_loss_equals_the_engine_and_the_pdf(name: str,
                                                            cases: dict[str, Case]) -> None:
    """After LibreOffice recalculates the Plan sheet, every node-loss row of every pool and
    node group equals the engine's figure, and each pool's headroom with a node down is the
    one the PDF's headroom table prints."""
    from openpyxl.utils import get_column_letter

    from llmsizer.documents.workbook.plan_sheet import FIRST_COL, PlanLayout

    case = cases[name]
    r = case.result
    sheet = case.sheets["Plan"]
    lay = PlanLayout.of(r)
    doc_fmt = build_context(r)["fmt"]  # the PDF's: one precision for all its headrooms
    def same(col: str, rows: dict[str, int], names: tuple[str, ...], item: Any) -> None:
        for row_name in names:
            got = sheet.get(f"{col}{rows[row_name] + 1}")
            assert isinstance(got, int | float), (name, item.id, row_name, got)
            assert math.isclose(got, item.values[row_name], rel_tol=1e-9, abs_tol=1e-12), (
                name, item.id, row_name, got, item.values[row_name])

    for j, p in enumerate(r.plan.pools):
        col = get_column_letter(FIRST_COL + j + 1)
        same(col, lay.pool_rows, NODE_LOSS_POOL_ROWS, p)
        # the sheet's value equals the engine's (above); the PDF prints the engine's, rounded
        # (Agent platform sits at 28.75 %: LibreOffice's last bit may round it the other way)
        shown = doc_fmt.headroom(float(p.values["pool_headroom_after_node_loss"]))
        assert shown.replace("\u00a0", " ") in case.pdf_text, (name, p.id, shown)
    for j, g in enumerate(r.plan.node_groups):
        same(get_column_letter(FIRST_COL + j + 1), lay.group_rows, NODE_LOSS_GROUP_ROWS, g)


@pytest.mark.parametrize("name", ACCOUNTS)
def test_summary_totals_equal_the_pdf(name: str, cases: dict[str, Case]) -> None:
    """The Summary's total column after recalculation: GPUs bought and GPUs used, labelled,
    nodes and costs; each as the PDF's summary prints it."""
    case = cases[name]
    t = case.result.totals
    sheet = case.sheets["Summary"]
    labels = {str(v): int(re.sub(r"[A-Z]+", "", k)) for k, v in sheet.items()
              if re.fullmatch(r"A\d+", k)}
    total_col = _columns(sheet, 5)["Total (account plan)"]
    fmt = Formatter(case.result.account.currency)
    text = case.pdf_text.replace("\u00a0", " ")
    for label, want, count in (
            ("GPUs bought (its share)", t.gpus_purchased, True),
            ("GPUs serving or on standby (its share)", t.gpus_used, True),
            ("Nodes (its share of the plan)", t.nodes, True),
            ("Capital cost (its share)", t.capex, False),
            ("On-prem cost per year (its share)", t.annual_cost_onprem, False),
            ("Cloud cost per year (its share, rented at the cloud tier)",
             t.annual_cost_cloud, False)):
        got = sheet.get(f"{total_col}{labels[label]}")
        assert _same(got, float(want), count), (name, label, got, want)
    # the PDF's key figures (values, then their labels, upper-cased by the style sheet)
    kpis = _line(fmt, {"gpus_purchased": t.gpus_purchased, "nodes": t.nodes, "capex": t.capex,
                       "annual_cost_onprem": t.annual_cost_onprem,
                       "annual_cost_cloud": t.annual_cost_cloud}) + " GPUS BOUGHT"
    # the GPUs bought split where some do not serve (a baseboard comes full, N+1 standby):
    # serving + on standby is the Summary sheet's "serving or on standby" checked above
    assert t.gpus_serving + t.gpus_standby == t.gpus_used
    parts = [(t.gpus_serving, "SERVING"), (t.gpus_standby, "ON STANDBY"), (t.gpus_idle, "IDLE")]
    if t.gpus_standby or t.gpus_idle:
        kpis += ": " + ", ".join(f"{fmt.count(n)} {w}" for n, w in parts if n)
    assert kpis + " NODES" in text, (name, kpis)


# Summary row label -> (share calculation, the plan total it sums to)
SHARE_ROWS = (("Nodes (its share of the plan)", "plan_nodes", "nodes"),
              ("GPUs bought (its share)", "plan_gpus_purchased", "gpus_purchased"),
              ("GPUs serving or on standby (its share)", "plan_gpus_used", "gpus_used"),
              ("Capital cost (its share)", "plan_capex", "capex"),
              ("On-prem cost per year (its share)", "plan_annual_cost_onprem",
               "annual_cost_onprem"),
              ("Cloud cost per year (its share, rented at the cloud tier)",
               "plan_annual_cost_cloud", "annual_cost_cloud"))


@pytest.mark.parametrize("name", ACCOUNTS)
def test_summary_workload_rows_are_the_plan_shares(name: str, cases: dict[str, Case]) -> None:
    """Issue 22 item 3: each workload's Summary column shows its share of the plan (Plan
    sheet), equal after LibreOffice's recalculation to the engine's shares in the results,
    and the workloads' shares sum to the account totals (no retrieval workloads here)."""
    case = cases[name]
    r = case.result
    sheet = case.sheets["Summary"]
    labels = {str(v): int(re.sub(r"[A-Z]+", "", k)) for k, v in sheet.items()
              if re.fullmatch(r"A\d+", k)}
    share_of = {i: p.shares[j] for p in r.plan.pools for j, i in enumerate(p.workload_indices)}
    assert sorted(share_of) == list(range(len(r.workloads)))
    for label, share, key in SHARE_ROWS:
        got = [sheet.get(f"{chr(ord('C') + i)}{labels[label]}") for i in range(len(r.workloads))]
        want = [share_of[i][share] for i in range(len(r.workloads))]
        assert all(isinstance(g, int | float) and math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-9)
                   for g, w in zip(got, want, strict=True)), (name, label, got, want)
        total = float(getattr(r.totals, key))
        assert math.isclose(sum(want), total, rel_tol=1e-9), (name, label, sum(want), total)
        assert math.isclose(sum(float(g) for g in got), total, rel_tol=1e-9)  # type: ignore[arg-type]
    # headroom belongs to the pool: every member's column shows its pool's
    pool_of = {i: p for p in r.plan.pools for i in p.workload_indices}
    # the Summary's words per account: a rented plan's node down reads "instance down"
    rented = r.deployment.recommended == "cloud"
    for label, field in ((summary_label("headroom_achieved", rented), "headroom_achieved"),
                         (summary_label("headroom_after_node_loss", rented),
                          "headroom_after_node_loss")):
        for i in range(len(r.workloads)):
            got = sheet.get(f"{chr(ord('C') + i)}{labels[label]}")
            want = getattr(pool_of[i], field)
            assert isinstance(got, int | float) and math.isclose(got, want, abs_tol=1e-9), (
                name, label, i, got, want)


def test_enterprise_multi_shares_by_the_plan() -> None:
    """enterprise-multi: three pools of one workload each on 3 XE9685L nodes (24 B200s, one
    node's worth a standby: issue 22 item 3; 7 XE8640 nodes before the plan search's
    per-platform seeds). Each workload's share is its pool's GPUs running replicas over the
    group's 15 (6 + 8 + 1, Plan sheet): 6/15, 8/15 and 1/15 of the 3 nodes and 24 GPUs."""
    r = size(load(ROOT / "inputs" / "enterprise-multi.yaml"))
    (group,) = r.plan.node_groups
    assert (group.nodes, group.gpus_purchased) == (3, 24)
    shares = [p.shares[0] for p in r.plan.pools]
    assert [p.gpus for p in r.plan.pools] == [6, 8, 1]
    assert [s["plan_group_share"] for s in shares] == pytest.approx([6 / 15, 8 / 15, 1 / 15])
    assert [s["plan_nodes"] for s in shares] == pytest.approx([3 * 6 / 15, 3 * 8 / 15, 3 / 15])
    assert sum(s["plan_capex"] for s in shares) == pytest.approx(group.capex, rel=1e-12)
