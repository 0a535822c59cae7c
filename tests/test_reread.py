"""`llmsizer report edited.xlsx`: a workbook llmsizer wrote, edited on its Inputs sheet, is
read back into requirements (src/llmsizer/documents/reread.py, xlsxsafe.py, inputcells.py),
and anything else refused clearly.

The acceptance round trip: report -> edit users, a GPU price and the headroom with openpyxl
-> report edited.xlsx -> the results equal a run on the equally edited YAML.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import DATA, EXAMPLE, example_dict
from support.named_cells import named_cell
from test_workbook import write_yaml

from llmsizer.base.errors import InputError
from llmsizer.documents.proposal.format import Formatter
from llmsizer.documents.reread import diff_lines, normalize_formula, read_workbook
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

openpyxl: Any = importlib.import_module("openpyxl")
LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]
BENCH = DATA / "bench"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LLMSIZER, *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def _book(tmp: Path, source: Path = EXAMPLE) -> Path:
    book = tmp / "book.xlsx"
    write_workbook(size(load(source)), book)
    return book


def _edit(book: Path, out: Path, edits: dict[str, Any]) -> Path:
    wb = openpyxl.load_workbook(book)
    for where, value in edits.items():
        if where.startswith("in_"):
            named_cell(wb, where).value = value
        else:
            sheet, ref = where.split("!")
            wb[sheet][ref].value = value
    wb.save(out)
    wb.close()
    return out


def _refused(book: Path) -> str:
    with pytest.raises(InputError) as exc:
        read_workbook(book)
    return str(exc.value)


# --- the round trip ----------------------------------------------------------------------------


def test_unedited_workbook_reads_back_to_the_same_results(tmp_path: Path) -> None:
    base = size(load(EXAMPLE))
    book = tmp_path / "book.xlsx"
    write_workbook(base, book)
    back = read_workbook(book)
    assert back.changes == [] and back.ignored == [] and back.warnings == []
    assert size(back.loaded).to_json() == base.to_json()


def test_edited_users_price_and_headroom_equal_the_equally_edited_yaml(tmp_path: Path) -> None:
    """Acceptance: report -> edit three inputs with openpyxl -> `report edited.xlsx` ->
    the JSON equals a run on the YAML with the same three edits; --diff lists them."""
    out = tmp_path / "out"
    done = run("report", EXAMPLE, "--out", out)
    assert done.returncode == 0, done.stderr
    base = json.loads((out / "acme-corp.json").read_text())
    gpu = next(o for o in base["workloads"][0]["options"]
               if o["id"] == base["workloads"][0]["recommended"])["gpu"]
    users = int(base["workloads"][0]["inputs"]["users"]) * 2
    edited = _edit(out / "acme-corp.xlsx", tmp_path / "edited.xlsx", {
        "in_w1_users": users, f"in_price_{re.sub('[^a-z0-9]+', '_', gpu)}": 31_234.0,
        "in_headroom": 0.4})

    data = example_dict()
    data["workloads"][0]["concurrent_users"] = users
    data.setdefault("costs", {}).setdefault("gpu_prices", {})[gpu] = 31_234.0
    data["policy"]["headroom"] = 0.4
    fresh = size(load(write_yaml(data, tmp_path / "edited.yaml")))

    again = tmp_path / "again"
    done = run("report", edited, "--out", again, "--diff")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in again.iterdir() if not p.name.startswith(".")) == [
        "acme-corp.json", "acme-corp.pdf", "acme-corp.xlsx"]  # (hidden: lock and manifest)
    assert (again / "acme-corp.json").read_text() == fresh.to_json()
    assert json.loads(fresh.to_json()) != base  # the edits did change the sizing
    out_lines = done.stdout
    assert "Inputs changed:" in out_lines
    assert f"Concurrent users at peak (stated), workload 'Internal assistant': 200 -> {users}" in out_lines
    assert "Headroom policy: 0.25 -> 0.4  [policy.headroom]" in out_lines
    assert f"[costs.gpu_prices.{gpu}]" in out_lines
    assert "Key outputs (as written -> now):" in out_lines and "  Total: GPUs " in out_lines
    # money as the PDF shows it (Formatter.money), never the exact dollars
    total = next(ln for ln in out_lines.splitlines() if ln.startswith("  Total: "))
    money = Formatter(fresh.account.currency).money(fresh.totals.capex).replace("\u00a0", " ")
    assert f"-> {money} *" in total and f"{fresh.totals.capex:,.0f}" not in out_lines
    # the fresh workbook reads back too, and carries the edits
    again_back = read_workbook(again / "acme-corp.xlsx")
    assert size(again_back.loaded).to_json() == fresh.to_json()


def test_every_account_input_and_price_maps_back(tmp_path: Path) -> None:
    book = _book(tmp_path)
    edits = {"in_survive_node_loss": 0, "in_gpu_memory_utilization": 0.85,
             "in_runtime_reserve_gb": 3.5, "in_electricity_per_kwh": 0.2, "in_pue": 1.4,
             "in_amortization_years": 4, "in_support_rate": 0.12, "in_average_load": 0.5,
             "in_network_per_node": 9000, "in_network_per_node_stated": 1,
             "in_hours_per_year": 6000, "in_cloud_h200_sxm": 9.5, "in_node_price_dgx_h100": 250_000,
             "in_w2_prompt_tokens": 3000, "in_w2_output_tokens": 400,
             "in_w2_max_context_tokens": 0, "in_w2_prefix_cache_hit": 0.1,
             "in_w2_target_tokens_per_s_per_user": 25, "in_w2_target_ttft_s": 4,
             "in_w1_target_response_time_s": 12, "in_w1_target_system_tokens_per_s": 5000}
    wb = openpyxl.load_workbook(book)
    assert set(edits) <= set(wb.defined_names.keys())
    wb.close()
    back = read_workbook(_edit(book, tmp_path / "e.xlsx", edits))
    data = example_dict()
    data["policy"].update(survive_node_loss=False, gpu_memory_utilization=0.85,
                          runtime_reserve_gb=3.5)
    data["costs"].update(electricity_per_kwh=0.2, pue=1.4, amortization_years=4,
                         support_rate=0.12, average_load=0.5, network_per_node=9000,
                         hours_per_year=6000)
    data["costs"]["cloud_gpu_hour"] = {"h200-sxm": 9.5}
    data["costs"]["node_prices"] = {"dgx-h100": 250_000}
    w1, w2 = data["workloads"]
    w2.update(prompt_tokens=3000, output_tokens=400, prefix_cache_hit=0.1)
    w2.pop("max_context_tokens")
    w2["targets"].update(tokens_per_s_per_user=25, ttft_s=4)
    w1["targets"].update(response_time_s=12, system_tokens_per_s=5000)
    fresh = size(load(write_yaml(data, tmp_path / "e.yaml")))
    assert size(back.loaded).to_json() == fresh.to_json()
    assert len(back.changes) == len(edits)
    assert {c.field for c in back.changes} >= {"policy.survive_node_loss", "costs.hours_per_year",
                                               "costs.node_prices.dgx-h100",
                                               "workloads[1].max_context_tokens"}


def test_a_benchmark_sized_workbook_reads_back_without_its_files(tmp_path: Path) -> None:
    """The benchmark points travel inside the workbook: a new target re-picks the point
    even where the result files are not at hand."""
    src = tmp_path / "acct"
    src.mkdir()
    for name in ("vllm-llama70b-4xh100-c16.json", "vllm-llama70b-4xh100-c32.json",
                 "vllm-llama70b-4xh100-c64.json"):
        shutil.copy(BENCH / name, src / name)
    data = yaml.safe_load((BENCH / "seed000.yaml").read_text())
    data["workloads"][0]["measured"]["file"] = sorted(p.name for p in src.glob("*.json"))
    yaml_path = src / "seed.yaml"
    yaml_path.write_text(yaml.safe_dump(data))
    book = tmp_path / "book.xlsx"
    write_workbook(size(load(yaml_path)), book)
    edited = _edit(book, tmp_path / "e.xlsx", {"in_w1_target_response_time_s": 15,
                                                "in_w1_target_ttft_s": 3.5})
    hidden = tmp_path / "hidden"
    shutil.move(src, hidden)  # the result files are gone
    back = read_workbook(edited)
    w = size(back.loaded).workloads[0]
    shutil.move(hidden, src)
    assert [p.concurrency for p in w.measured_points if p.chosen] == [64]  # 20 tok/s, 3.5 s
    data["workloads"][0]["targets"] = {"response_time_s": 15, "ttft_s": 3.5}
    yaml_path.write_text(yaml.safe_dump(data))
    assert size(back.loaded).to_json() == size(load(yaml_path)).to_json()


def test_numbers_form_measured_figure_is_an_input(tmp_path: Path) -> None:
    src = tmp_path / "m.yaml"
    data = yaml.safe_load((BENCH / "seed000.yaml").read_text())
    data["workloads"][0]["measured"] = {"gpu": "h100-sxm", "gpus_per_replica": 4,
                                        "tokens_per_s_per_replica": 1000}
    src.write_text(yaml.safe_dump(data))
    book = _book(tmp_path, src)
    back = read_workbook(_edit(book, tmp_path / "e.xlsx",
                               {"in_w1_measured_tokens_per_s_per_replica": 1500}))
    w = size(back.loaded).workloads[0]
    assert w.inputs["measured_tokens_per_s_per_replica"] == 1500
    back = read_workbook(_edit(book, tmp_path / "z.xlsx",
                               {"in_w1_measured_tokens_per_s_per_replica": 0}))
    assert size(back.loaded).workloads[0].mode == "modelled"


def test_workbook_saved_by_libreoffice_reads_back(tmp_path: Path) -> None:
    """LibreOffice re-writes formulas (1E-9 -> 0.000000001) and values when it saves; the
    workbook still reads back, edits included."""
    from support.libreoffice import recalculate

    book = _book(tmp_path)
    edited = _edit(book, tmp_path / "edited.xlsx", {"in_w2_users": 150, "in_pue": 1.5})
    saved = recalculate([edited], tmp_path / "lo")[edited]
    back = read_workbook(saved)
    assert {c.field: c.new for c in back.changes} == {"workloads[1].concurrent_users": 150.0,
                                                     "costs.pue": 1.5}


# --- refusals ---------------------------------------------------------------------------------


def test_a_changed_formula_is_refused_with_the_cell(tmp_path: Path) -> None:
    book = _book(tmp_path)
    wb = openpyxl.load_workbook(book)
    ws = wb["KV"]
    target = next(c for row in ws.iter_rows(min_row=12) for c in row if c.data_type == "f")
    ref, formula = target.coordinate, str(target.value)
    wb.close()
    msg = _refused(_edit(book, tmp_path / "v.xlsx", {f"KV!{ref}": 42}))
    assert f"cell KV!{ref} was changed from a formula to a value (42)" in msg
    assert "llmsizer re-reads only the yellow input cells" in msg
    msg = _refused(_edit(book, tmp_path / "f.xlsx", {f"KV!{ref}": formula + "*2"}))
    assert f"cell KV!{ref}'s formula was changed" in msg


def test_a_deleted_sheet_is_refused(tmp_path: Path) -> None:
    book = _book(tmp_path)
    wb = openpyxl.load_workbook(book)
    del wb["TCO"]
    wb.save(tmp_path / "d.xlsx")
    wb.close()
    msg = _refused(tmp_path / "d.xlsx")
    assert "sheet 'TCO' is missing (deleted or renamed)" in msg


@pytest.mark.parametrize("account", ["rag-knowledge-base.yaml",
                                     "code-assistant-alternatives.yaml"])
def test_sheets_some_accounts_add_read_back_as_llmsizer_s_own(tmp_path: Path,
                                                             account: str) -> None:
    """The Retrieval and Models sheets (written only for retrieval workloads and for model
    alternatives) are llmsizer's: an unedited workbook reads back with no foreign content,
    and the embedded requirements of embed/rerank workloads (every field, defaults included:
    prefix_cache_hit 0) validate again. Before, the RAG workbook was refused ("no longer
    validate") and the alternatives one called its own Models sheet foreign."""
    source = EXAMPLE.parent / account
    book = _book(tmp_path, source)
    back = read_workbook(book)
    assert back.foreign == [] and back.changes == [] and back.warnings == []
    assert size(back.loaded).to_json() == size(load(source)).to_json()
    sheet = "Retrieval" if account.startswith("rag") else "Models"
    wb = openpyxl.load_workbook(book)
    assert sheet in wb.sheetnames
    del wb[sheet]
    wb.save(tmp_path / "d.xlsx")
    wb.close()
    assert f"sheet '{sheet}' is missing (deleted or renamed)" in _refused(tmp_path / "d.xlsx")


def test_a_changed_constant_or_name_is_refused(tmp_path: Path) -> None:
    book = _book(tmp_path)
    wb = openpyxl.load_workbook(book)
    ws = wb["Catalog"]
    cell = next(c for row in ws.iter_rows() for c in row
                if isinstance(c.value, float) and c.data_type == "n")
    ref = cell.coordinate
    wb.close()
    msg = _refused(_edit(book, tmp_path / "c.xlsx", {f"Catalog!{ref}": 1234.5}))
    assert f"cell Catalog!{ref} was changed" in msg and "1234.5" in msg
    wb = openpyxl.load_workbook(book)
    wb.defined_names["in_pue"].attr_text = "Inputs!$C$99"
    wb.save(tmp_path / "n.xlsx")
    wb.close()
    msg = _refused(tmp_path / "n.xlsx")
    assert "the cell name in_pue now points at INPUTS!C99" in msg


def test_a_workbook_llmsizer_did_not_write_is_refused(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.active["A1"] = 1
    wb.save(tmp_path / "other.xlsx")
    msg = _refused(tmp_path / "other.xlsx")
    assert "not a workbook llmsizer wrote" in msg
    (tmp_path / "text.xlsx").write_text("hello")
    assert "cannot be opened as an .xlsx workbook" in _refused(tmp_path / "text.xlsx")


def test_another_version_or_damaged_marker_is_refused(tmp_path: Path) -> None:
    book = _book(tmp_path)
    wb = openpyxl.load_workbook(book)
    for prop in wb.custom_doc_props.props:
        if prop.name == "llmsizer_version":
            prop.value = "0.0.9"
    wb.save(tmp_path / "old.xlsx")
    wb.close()
    assert "written by llmsizer 0.0.9" in _refused(tmp_path / "old.xlsx")
    wb = openpyxl.load_workbook(book)
    for prop in wb.custom_doc_props.props:
        if prop.name == "llmsizer_data_000":
            prop.value = "A" * len(prop.value)
    wb.save(tmp_path / "bad.xlsx")
    wb.close()
    assert "damaged or incomplete" in _refused(tmp_path / "bad.xlsx")


def test_invalid_input_values_name_the_cell(tmp_path: Path) -> None:
    book = _book(tmp_path)
    msg = _refused(_edit(book, tmp_path / "h.xlsx", {"in_headroom": 5}))
    assert re.search(r"Inputs!C\d+ \(Headroom policy\): must be at most 3 \(found 5\.0\)", msg), msg
    msg = _refused(_edit(book, tmp_path / "u.xlsx", {"in_w1_users": 200.5}))
    assert "(Concurrent users at peak (stated), workload 'Internal assistant')" in msg
    assert "whole number" in msg
    msg = _refused(_edit(book, tmp_path / "t.xlsx", {"in_w1_users": "lots"}))
    assert "must be a number, found 'lots'" in msg
    msg = _refused(_edit(book, tmp_path / "e.xlsx", {"in_w1_users": None}))
    assert "found nothing (the cell is empty)" in msg
    msg = _refused(_edit(book, tmp_path / "x.xlsx", {"in_w1_target_ttft_s": 12}))
    assert "Target time to first token" in msg and "must be shorter than" in msg


def test_cells_that_are_not_requirement_fields_are_refused(tmp_path: Path) -> None:
    book = _book(tmp_path)
    msg = _refused(_edit(book, tmp_path / "m.xlsx", {"in_w1_layers": 40}))
    assert "(Layers, workload 'Internal assistant') was changed from 80 to 40" in msg
    assert "it describes the model (llama-3.1-70b)" in msg
    msg = _refused(_edit(book, tmp_path / "s.xlsx",
                         {"in_w1_measured_tokens_per_s_per_replica": 900}))
    assert "the workload is modelled" in msg
    (tmp_path / "seed").mkdir()
    seed = _book(tmp_path / "seed", BENCH / "seed000.yaml")
    msg = _refused(_edit(seed, tmp_path / "f.xlsx",
                         {"in_w1_measured_tokens_per_s_per_replica": 900}))
    assert "it comes from the benchmark file(s) 'vllm-llama70b-4xh100-c32.json'" in msg
    # session 23: the catalog's network prices per port are no requirement field; the
    # account's own network per node is
    msg = _refused(_edit(book, tmp_path / "n.xlsx", {"in_network_per_fabric_port": 1000}))
    assert "(GPU-fabric network per port) was changed" in msg
    assert 'set "Network per node stated" to 1' in msg


def test_the_network_per_node_stated_flag_reads_back(tmp_path: Path) -> None:
    """Session 23: "Network per node stated" set to 1 with a figure typed beside it is
    costs.network_per_node (that figure on every node); the figure alone is too."""
    book = _book(tmp_path)
    back = read_workbook(_edit(book, tmp_path / "e.xlsx", {"in_network_per_node_stated": 1,
                                                             "in_network_per_node": 4000}))
    r = size(back.loaded)
    assert r.account_inputs["network_per_node_stated"] == 1
    assert r.account_inputs["network_per_node"] == 4000
    assert all(g.values["capex_network"] == 4000 * g.nodes for g in r.plan.node_groups)


def test_option_cell_edits_are_reported_and_ignored(tmp_path: Path) -> None:
    book = _book(tmp_path)
    wb = openpyxl.load_workbook(book)
    ws = wb["KV"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    ref = f"D{rows['gpu']}"
    old = ws[ref].value
    wb.close()
    back = read_workbook(_edit(book, tmp_path / "o.xlsx", {f"KV!{ref}": "l40s"}))
    assert [(c.cell, c.old, c.new) for c in back.ignored] == [(f"KV!{ref}", old, "l40s")]
    assert "re-reads only the Inputs sheet" in back.warnings[0]
    assert size(back.loaded).to_json() == size(load(EXAMPLE)).to_json()
    assert any("Not re-read" in line for line in diff_lines(back, size(back.loaded)))


def test_cli_refusals_are_one_line(tmp_path: Path) -> None:
    book = _book(tmp_path)
    wb = openpyxl.load_workbook(book)
    del wb["Catalog"]
    wb.save(tmp_path / "broken.xlsx")
    wb.close()
    done = run("report", tmp_path / "broken.xlsx", "--out", tmp_path / "o")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "sheet 'Catalog' is missing" in done.stderr
    done = run("report", EXAMPLE, "--out", tmp_path / "o", "--diff")
    assert done.returncode == 2 and "--diff compares an edited workbook" in done.stderr
    done = run("report", EXAMPLE, book, "--out", tmp_path / "o")
    assert done.returncode == 2 and "one edited .xlsx workbook at a time" in done.stderr


def test_a_workbook_re_read_in_place_is_replaced_by_the_new_one(tmp_path: Path) -> None:
    """``report out/x.xlsx --out out/ --diff``: the outputs replace the very workbook read."""
    out = tmp_path / "same"
    out.mkdir()
    book = _edit(_book(tmp_path), out / "acme-corp.xlsx", {"in_w1_users": 400})
    done = run("report", book, "--out", out, "--diff")
    assert done.returncode == 0, done.stderr
    assert "200 -> 400" in done.stdout, done.stdout
    shown = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))  # lock, manifest
    assert shown == ["acme-corp.json", "acme-corp.pdf", "acme-corp.xlsx"]
    again = read_workbook(book)  # the new workbook: edited value, nothing changed since
    assert again.loaded.req.workloads[0].concurrent_users == 400
    assert again.changes == []


def test_formula_normalisation_matches_what_spreadsheets_rewrite() -> None:
    assert normalize_formula("=A1*1E-9") == normalize_formula("=a1 * 0.000000001")
    assert normalize_formula("=IF($B$2>0,'KV'!D5,0)") == normalize_formula("=IF(B2>0,KV!D5,0)")
    assert normalize_formula('="a b"&x') != normalize_formula('="A B"&x')
    assert normalize_formula("=in_w1_users*2") != normalize_formula("=in_w1_users*3")
    assert normalize_formula("=D12") != normalize_formula("=D13")
