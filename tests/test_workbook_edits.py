"""Finance edits the workbook: the recalculated figures equal a fresh sizing of the equally
edited YAML, or the re-run check says plainly that the edit needs a re-run.

inputs/frontier-moe-rack.yaml (DeepSeek-R1 on GB300 NVL72) is sized with separate prefill
replicas (xPyD: decode TP16/EP16, prefill TP8/EP8). Their speed per prompt token is an option
input the engine worked out at the prompt length as sized (sizing/xpyd.py, PREFILL_FIGURES),
so no formula follows a prompt edit: with the prompt doubled on Inputs (8,000 -> 16,000
tokens) LibreOffice's xPyD column still buys 936 GPUs where the engine, re-run on the edited
YAML, needs 1,008 for that option and picks an aggregated TP32 layout. The re-run check must
say so on the Summary and the Inputs sheet (it said "Still the cheapest" before). A price
edit reads nothing the prefill speed reads: the check keeps comparing costs, and the ★
column's cost equals the engine's. A user-population account's edits (named users, a p95
target) keep the plan, and every Plan, Scenarios and BOM formula equals a fresh workbook's.
LibreOffice: three edited workbooks in two soffice calls (~7 s each here).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import openpyxl
import yaml
from helpers import ROOT
from support.libreoffice import read_values, recalculate
from support.named_cells import edit_named
from test_rerun_check import _check_cells
from test_workbook import column_options, formula_cells, lint, same, write_yaml

from llmsizer.documents.workbook import write_workbook
from llmsizer.documents.workbook.rerun_check import PREFILL_CHANGED, STILL, prefill_reads
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

FRONTIER = ROOT / "inputs" / "frontier-moe-rack.yaml"


def _row(values: dict[str, object], name: str) -> int:
    """The 1-based row of calculation ``name`` on a calculation sheet (column A)."""
    return next(int(ref[1:]) for ref, v in values.items() if ref.startswith("A") and v == name
                and re.fullmatch(r"A\d+", ref))


def test_prefill_figures_read_the_prompt_not_the_prices() -> None:
    reads = set(prefill_reads())
    assert {"prompt_tokens", "prefix_cache_hit", "layers"} <= reads
    assert not reads & {"electricity_per_kwh", "amortization_years"}
    # The headroom reaches them only through the experts' share (the MoE first solve's batch
    # reads the disaggregated whole-answer limit, 1 / (1 + headroom)): where the prompt's time
    # wins over one weight read, as sized, not at all.
    assert "headroom" in reads and "headroom" not in prefill_reads(bounded=True)


def test_prompt_edit_on_an_xpyd_account_asks_for_a_re_run(tmp_path: Path) -> None:
    base = size(load(FRONTIER))
    (pool,) = base.plan.pools
    assert "/prefill-" in pool.option  # the account is sized with separate prefill replicas
    book = tmp_path / "frontier.xlsx"
    write_workbook(base, book)
    wb = openpyxl.load_workbook(book)
    names = set(wb.defined_names.keys())
    wb.close()
    guarded = [(s, f) for s, _, f in formula_cells(book) if "prefill replicas' speed" in f]
    assert [s for s, _ in guarded] == ["Summary", "Inputs"]
    for _, formula in guarded:  # the closed function table, under 8,000 characters
        assert lint(formula, names) == [], formula
    data = yaml.safe_load(FRONTIER.read_text(encoding="utf-8"))
    prompt = int(data["workloads"][0]["prompt_tokens"]) * 2
    electricity = 0.24  # USD/kWh, from the account's 0.12 default
    edited = edit_named(book, tmp_path / "prompt.xlsx", {"in_w1_prompt_tokens": prompt})
    control = edit_named(book, tmp_path / "power.xlsx", {"in_electricity_per_kwh": electricity})
    done = recalculate([edited, control], tmp_path / "out", timeout=300)

    # the engine on the equally edited YAML: the xPyD option needs more GPUs, and another wins
    d = copy.deepcopy(data)
    d["workloads"][0]["prompt_tokens"] = prompt
    fresh = size(load(write_yaml(d, tmp_path / "prompt.yaml")))
    assert fresh.plan.pools[0].option != pool.option
    want = fresh.workloads[0].option(pool.option)
    assert want is not None
    lo = read_values(done[edited])
    star = next(c for c, (k, o) in column_options(base, read_values(book)).items()
                if k == 0 and o == pool.option)
    got = lo["Nodes"][f"{star}{_row(lo['Nodes'], 'gpus_purchased')}"]
    assert (got, want.values["gpus_purchased"]) == (936, 1008)  # the stale speed, shown live
    for sheet in ("Summary", "Inputs"):
        assert _check_cells(lo[sheet]) == {"C": PREFILL_CHANGED}, sheet

    # a price edit: the check still compares costs and the figures are the engine's
    d = copy.deepcopy(data)
    d.setdefault("costs", {})["electricity_per_kwh"] = electricity
    fresh = size(load(write_yaml(d, tmp_path / "power.yaml")))
    assert fresh.plan.pools[0].option == pool.option
    want = fresh.workloads[0].option(pool.option)
    assert want is not None
    lo = read_values(done[control])
    for sheet in ("Summary", "Inputs"):
        (text,) = _check_cells(lo[sheet]).values()
        assert str(text).startswith(STILL), (sheet, text)
    row = _row(lo["TCO"], "annual_cost_onprem")
    assert same(want.values["annual_cost_onprem"], lo["TCO"][f"{star}{row}"],
                "annual_cost_onprem", rel=1e-9)


HELPDESK = ROOT / "inputs" / "helpdesk-population.yaml"
SAME_LAYOUT_SHEETS = ("Plan", "Scenarios", "BOM")


def test_population_edits_recalculate_like_a_fresh_sizing(tmp_path: Path) -> None:
    """inputs/helpdesk-population.yaml (2,000 named users at 6 requests an hour, first token
    within 1.5 s at the 95th percentile): named users +30 % and the p95 target tightened to
    1 s, each on Inputs. The engine on the equally edited YAML keeps the plan, so every
    formula of the Plan, Scenarios and BOM sheets after LibreOffice equals the cached value
    of a workbook written from that fresh run, cell for cell, and the users edit moves them."""
    base = size(load(HELPDESK))
    book = tmp_path / "helpdesk.xlsx"
    write_workbook(base, book)
    data = yaml.safe_load(HELPDESK.read_text(encoding="utf-8"))
    users = round(int(data["workloads"][0]["named_users"]) * 1.3)
    edits = {"users": ({"in_w1_named_users": users}, ("named_users", users)),
             "p95": ({"in_w1_target_ttft_p95_s": 1.0}, ("targets", {"tokens_per_s_per_user": 25,
                                                                     "ttft_p95_s": 1.0}))}
    books = {k: edit_named(book, tmp_path / f"{k}.xlsx", cells) for k, (cells, _) in edits.items()}
    done = recalculate(list(books.values()), tmp_path / "out", timeout=300)
    formulas = [(s, ref) for s, ref, _ in formula_cells(book) if s in SAME_LAYOUT_SHEETS]
    assert len(formulas) > 200
    cached = read_values(book)
    moved = 0
    for k, (_, (field, value)) in edits.items():
        d = copy.deepcopy(data)
        d["workloads"][0][field] = value
        fresh = size(load(write_yaml(d, tmp_path / f"{k}.yaml")))
        assert [(p.workload_indices, p.option) for p in fresh.plan.pools] == [
            (p.workload_indices, p.option) for p in base.plan.pools]
        write_workbook(fresh, tmp_path / f"{k}-fresh.xlsx")
        want, got = read_values(tmp_path / f"{k}-fresh.xlsx"), read_values(done[books[k]])
        for sheet, ref in formulas:
            w, g = want[sheet].get(ref), got[sheet].get(ref)
            assert same(w, g, "", rel=1e-9), (k, sheet, ref, g, w)
            moved += k == "users" and w != cached[sheet].get(ref)
    assert moved > 20, "the users edit should move the plan"


def test_still_the_cheapest_says_where_it_looked(tmp_path: Path) -> None:
    """helpdesk-population as sized: its frozen XE9680 option is the cheapest of those on the
    calculation sheets, and other options have no column (no formulas, so their cost stays as
    sized): the check may not say "still the cheapest" bare: it names where it looked and that
    a re-run compares the others. With "survive the loss of a node" switched on
    (in_survive_node_loss 1, from 0), a re-run of the equally edited YAML picks 2 × H100 on the
    4-GPU XE8640; since session 23 priced a server's network by its ports (4 fabric ports on
    the XE8640, not an 8-GPU node's share) that option has a column, so the check names the
    re-run's own choice (before, it had none and the check said "still the cheapest")."""
    base = size(load(HELPDESK))
    book = tmp_path / "helpdesk.xlsx"
    write_workbook(base, book)
    edited = edit_named(book, tmp_path / "node-loss.xlsx", {"in_survive_node_loss": 1})
    done = recalculate([book, edited], tmp_path / "out", timeout=300)
    lo_base, lo = read_values(done[book]), read_values(done[edited])
    columns = {o for _, o in column_options(base, read_values(book)).values()}
    others = len(base.workloads[0].options) - len(columns)
    assert others > 0
    for sheet in ("Summary", "Inputs"):
        (text,) = _check_cells(lo_base[sheet]).values()
        assert str(text).startswith(STILL) and str(text).endswith(
            f"(among the options on the calculation sheets; a re-run also compares the "
            f"{others} others)"), (sheet, text)
    data = yaml.safe_load(HELPDESK.read_text(encoding="utf-8"))
    data["policy"]["survive_node_loss"] = True
    fresh = size(load(write_yaml(data, tmp_path / "node-loss.yaml")))
    w = fresh.workloads[0]
    # session 25's weights audit (Llama 3.1 70B FP8 keeps 2.1 GB at 16 bits) reorders the
    # options the sheets carry: the re-run's choice has no column again, so the check says
    # where it looked and that a re-run compares the others (its own choice it cannot price)
    assert w.dedicated == "h100-sxm/fp8/kv-fp8/tp2/dell-xe8640"
    assert w.dedicated not in columns
    for sheet in ("Summary", "Inputs"):
        (text,) = _check_cells(lo[sheet]).values()
        assert str(text).endswith(
            f"(among the options on the calculation sheets; a re-run also compares the "
            f"{others} others)"), (sheet, text)
