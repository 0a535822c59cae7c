"""The workbook's live re-run check (issue 22, item 4): after a finance edit on Inputs, the
Summary and the Inputs sheet name the cheapest option at the current inputs and say "a re-run
may choose X, N % cheaper" when it is not the frozen choice.

inputs/example.yaml's "Internal assistant" is frozen on H100 SXM (TP2, Dell XE8640) at
USD 287,703 a year alone; the H200 SXM on a Dell XE9680 costs USD 368,904. The H100's price
is raised on Inputs with openpyxl from USD 30,000 to 60,000 (in_price_h100_sxm) and LibreOffice
recalculates; a fresh engine run with the same price in the YAML (costs.gpu_prices) is what a
re-run would choose. The check must name that choice's GPU and platform and its saving against
the frozen option, rounded down to a whole per cent, identically on both sheets.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from helpers import EXAMPLE, example_dict
from support.libreoffice import read_values, recalculate
from support.named_cells import edit_named, named_cell
from test_workbook import write_yaml

from llmsizer.documents.workbook import write_workbook
from llmsizer.documents.workbook.rerun_check import LABEL
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size

openpyxl: Any = importlib.import_module("openpyxl")

PRICE = 60_000.0  # USD per H100 SXM, from the catalog's 30,000


def _check_cells(values: dict[str, object], label_col: str = "A") -> dict[str, object]:
    """The re-run check's row: column letter -> text, for the workload columns."""
    row = next(re.sub(r"[A-Z]+", "", k) for k, v in values.items()
               if k.startswith(label_col) and re.fullmatch(r"[A-Z]+\d+", k) and v == LABEL)
    return {re.sub(r"\d+", "", k): v for k, v in values.items()
            if re.fullmatch(rf"[C-Z]{row}", k)}


def test_rerun_check_names_the_cheaper_option_after_a_price_edit(tmp_path: Path) -> None:
    result = size(load(EXAMPLE))
    frozen_id = result.workloads[0].dedicated
    assert frozen_id == "h100-sxm/fp8/kv-fp8/tp2/dell-xe8640"
    book = tmp_path / "example.xlsx"
    write_workbook(result, book)
    wb = openpyxl.load_workbook(book)
    assert named_cell(wb, "in_price_h100_sxm").value == 30_000
    wb.close()
    edited = edit_named(book, tmp_path / "edited.xlsx", {"in_price_h100_sxm": PRICE})
    done = recalculate([book, edited], tmp_path / "out", timeout=300)

    # as written (and recalculated): the frozen choices are still the cheapest
    for sheet_name in ("Summary", "Inputs"):
        texts = _check_cells(read_values(done[book])[sheet_name])
        assert len(texts) == 2
        assert all(str(t).startswith("Still the cheapest for this workload alone: ") for t in
                   texts.values()), texts
    assert _check_cells(read_values(book)["Summary"]) == _check_cells(
        read_values(done[book])["Summary"])  # the cached text is LibreOffice's

    # what a re-run chooses at the edited price
    data = example_dict()
    data.setdefault("costs", {})["gpu_prices"] = {"h100-sxm": PRICE}
    fresh = size(load(write_yaml(data, tmp_path / "edited.yaml")))
    w = fresh.workloads[0]
    chosen = next(o for o in w.options if o.id == w.dedicated)
    frozen = next(o for o in w.options if o.id == frozen_id)
    assert chosen.gpu == "h200-sxm" and chosen.platform == "dell-xe9680"
    saving = (1 - chosen.values["annual_cost_onprem"] / frozen.values["annual_cost_onprem"]) * 100
    assert 1 <= saving < 100
    cat = load_catalog()
    want = (f"A re-run may choose {chosen.tp} × {cat.gpus['h200-sxm'].name}, "
            f"{chosen.weight_precision.upper()} weights, {chosen.kv_precision.upper()} KV cache")
    where = f" on {cat.platforms['dell-xe9680'].name}, {int(saving)} % cheaper (this workload alone)"
    summary = _check_cells(read_values(done[edited])["Summary"])
    inputs = _check_cells(read_values(done[edited])["Inputs"])
    assert summary == inputs
    text = str(summary["C"])
    assert text.startswith(want) and text.endswith(where), (text, want, where)
    # the second workload's frozen choice is H100 too: it also moves (its own figures)
    assert re.match(r"A re-run may choose \d+ × NVIDIA H200", str(summary["D"])), summary["D"]
