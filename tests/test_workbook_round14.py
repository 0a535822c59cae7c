"""The workbook in finance's hands (round 14): what-if cells that look editable are read back,
and the cloud-tier what-if rows say when a price typed on Inputs makes them repeat.

1. ``in_gpu_price_factor`` and ``in_cloud_tier_what_if`` are yellow input cells on the
   Inputs sheet and every cost formula reads them, so an edit recalculates the whole
   workbook; the old read-back refused them ("it is not a requirements field"), so the
   figures finance saw could not be re-run. They now read back as the fields they stand
   for: the multiplier as ``costs.gpu_prices`` (every GPU price of the workbook times it),
   the tier code as ``costs.cloud_tier``. Each edit is recalculated in LibreOffice and in
   Gnumeric and compared with a workbook written from the re-run.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import ROOT
from support import gnumeric
from support.libreoffice import read_values, recalculate
from support.named_cells import edit_named
from test_workbook import same, write_yaml
from test_workbook_finance_edits import KEY_ROWS

from llmsizer.base.errors import InputError
from llmsizer.documents.reread import read_workbook
from llmsizer.documents.workbook import write_workbook
from llmsizer.documents.workbook.formats import number_format
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

openpyxl: Any = importlib.import_module("openpyxl")
EXAMPLE = ROOT / "inputs" / "example.yaml"  # catalog-priced: H100 SXM USD 30,000


def _key_cells(values: dict[str, object]) -> dict[str, object]:
    """The Summary's key figures (nodes, GPUs, capex, annual costs, cost per million,
    break-even): cell -> value, for the workload and total columns."""
    rows = {int(ref[1:]) for ref, v in values.items()
            if re.fullmatch(r"A\d+", ref) and str(v).startswith(KEY_ROWS)}
    assert len(rows) == len(KEY_ROWS), rows
    return {ref: v for ref, v in values.items()
            if re.fullmatch(r"[C-Z]\d+", ref) and int(ref[1:]) in rows}


# (named cell, edited value, what the requirements file would say instead)
WHAT_IFS = {"factor": ("in_gpu_price_factor", 0.8,
                       {"gpu_prices": {"h100-sxm": 24_000.0, "h200-sxm": 28_000.0,
                                       "l40s": 6_400.0}}),
            "tier": ("in_cloud_tier_what_if", 3, {"cloud_tier": "committed_3yr"})}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    tmp = tmp_path_factory.mktemp("example")
    base = size(load(EXAMPLE))
    write_workbook(base, tmp / "example.xlsx")
    return tmp / "example.xlsx", base


def test_what_if_cells_read_back_as_the_requirements_they_stand_for(
        example: tuple[Path, object], tmp_path: Path) -> None:
    """The re-run of an edited multiplier or tier code is the run of a requirements file
    that states the prices or tier (catalog prices USD 30,000 / 35,000 / 8,000 x 0.8)."""
    book, _ = example
    shipped = yaml.safe_load(EXAMPLE.read_text())
    for key, (name, value, costs) in WHAT_IFS.items():
        back = read_workbook(edit_named(book, tmp_path / f"{key}.xlsx", {name: value}))
        assert [c.field for c in back.changes] == [
            "costs.gpu_prices" if key == "factor" else "costs.cloud_tier"]
        data = {**shipped, "costs": {**shipped["costs"], **costs}}
        fresh = size(load(write_yaml(data, tmp_path / f"{key}.yaml")))
        assert size(back.loaded).to_json() == fresh.to_json(), key


def test_what_if_cells_out_of_range_are_refused_at_the_cell(
        example: tuple[Path, object], tmp_path: Path) -> None:
    book, _ = example
    for name, value, words in (("in_cloud_tier_what_if", 2.5, "a whole number from 0 to 4"),
                               ("in_gpu_price_factor", 0, "from 0.01 to 10")):
        with pytest.raises(InputError) as exc:
            read_workbook(edit_named(book, tmp_path / "bad.xlsx", {name: value}))
        assert words in str(exc.value) and "Inputs!C" in str(exc.value)


def test_edited_what_ifs_recalculate_like_the_re_run(example: tuple[Path, object],
                                                      tmp_path: Path) -> None:
    """LibreOffice and Gnumeric recalculate each edit to the Summary's key figures of a
    workbook written from ``llmsizer report EDITED.xlsx`` (the plan stays: every GPU price
    scales alike; the on-prem plan does not rent)."""
    book, base = example
    edited = {k: edit_named(book, tmp_path / f"{k}.xlsx", {name: value})
              for k, (name, value, _) in WHAT_IFS.items()}
    lo = recalculate(list(edited.values()), tmp_path / "lo", timeout=600)
    (tmp_path / "gn").mkdir()
    before = _key_cells(read_values(book)["Summary"])
    for key, path in edited.items():
        fresh = size(read_workbook(path).loaded)
        assert [(p.workload_indices, p.option) for p in fresh.plan.pools] == [
            (p.workload_indices, p.option) for p in base.plan.pools], key  # type: ignore[attr-defined]
        write_workbook(fresh, tmp_path / f"{key}-fresh.xlsx")
        want = _key_cells(read_values(tmp_path / f"{key}-fresh.xlsx")["Summary"])
        assert want != before, key  # the edit moves the figures
        for engine, out in (("LibreOffice", lo[path]),
                            ("Gnumeric", gnumeric.recalculate(path, tmp_path / "gn" / path.name))):
            got = read_values(out)["Summary"]
            for ref, v in want.items():
                assert same(v, got.get(ref), "", rel=1e-9), (key, engine, ref, got.get(ref), v)


# --- 2. the cloud-tier rows after a cloud price is typed on Inputs ----------------------------


def _tier_rows(values: dict[str, object]) -> dict[int, list[object]]:
    """The Scenarios sheet's cloud-tier rows: row -> [change, GPUs, nodes, capex, on-prem,
    cloud]."""
    return {int(ref[1:]): [values.get(f"{c}{ref[1:]}") for c in "BDEFGH"]
            for ref, v in values.items() if re.fullmatch(r"A\d+", ref) and v == "Cloud price"}


def _note(values: dict[str, object]) -> str:
    return next(str(v) for ref, v in values.items()
                if re.fullmatch(r"A\d+", ref) and str(v).startswith(("The cloud price rows",
                                                                     "The grouped columns")))


def test_a_typed_cloud_price_makes_the_tier_rows_say_they_repeat(
        example: tuple[Path, object], tmp_path: Path) -> None:
    """inputs/example.yaml rents the plan's NVIDIA H100 SXM at the catalog's tier prices
    (Catalog sheet: USD 6.88 hyperscaler on-demand, 2.65 one-year, 1.47 three-year, derived
    from the one-year price by the catalog's ratio, no dated offer, 3.99 GPU cloud). Typed
    on Inputs, USD 2.00 is the account's own price in every tier: the four rows then show
    one cloud cost (the old sheet showed them under the tier names alone), and the re-run
    that states the price leaves them out (TIERS_FIXED)."""
    book, base = example
    written = read_values(book)["Scenarios"]
    rows = _tier_rows(written)
    assert [v[0] for v in rows.values()] == [
        "hyperscaler on-demand", "committed 1 year", "committed 3 years, derived",
        "GPU cloud on-demand"]
    assert len({v[5] for v in rows.values()}) == 4
    assert _note(written).startswith("The grouped columns")
    edited = edit_named(book, tmp_path / "cloud.xlsx", {"in_cloud_h100_sxm": 2.0})
    lo = recalculate([edited], tmp_path / "lo", timeout=600)[edited]
    fresh = size(read_workbook(edited).loaded)
    # USD 599,136 a year at 2.65 per GPU-hour as written, 462,480 at the typed 2.00
    assert fresh.totals.annual_cost_cloud is not None
    assert fresh.totals.annual_cost_cloud < base.totals.annual_cost_cloud  # type: ignore[attr-defined]
    assert not [s for s in fresh.sensitivity if s.input == "cloud_tier_what_if"]
    for engine, out in (("LibreOffice", lo),
                        ("Gnumeric", gnumeric.recalculate(edited, tmp_path / "gn.xlsx"))):
        got = read_values(out)["Scenarios"]
        tiers = _tier_rows(got)
        assert [v[0] for v in tiers.values()] == [
            "hyperscaler on-demand, own price", "committed 1 year, own price",
            "committed 3 years, own price", "GPU cloud on-demand, own price"], engine
        assert {v[5] for v in tiers.values()} == {fresh.totals.annual_cost_cloud}, engine
        assert _note(got).startswith("The cloud price rows repeat the proposal"), engine


# --- 3. what the printed sheets cut ----------------------------------------------------------


def test_printed_columns_hold_their_words(tmp_path: Path) -> None:
    """Seen in LibreOffice's PDF of tests/data/jpy-manufacturer.yaml: the Options sheet's
    workload column (20 wide) printed "Maintenance manual Q&A" against the option's words
    with no gap ("Q&A1 × NVIDIA"; it now gets one unit more than the measure below, up to
    36: 22 here, still two pages wide), and the Inputs
    sheet's unit column (13 wide) cut "% of capex / year" to "% of capex / yea". Each column
    holds its longest text at the ~1.15 characters of plain text a unit of width prints
    (tests/test_workbook_words.py's measure)."""
    book = tmp_path / "jpy.xlsx"
    write_workbook(size(load(ROOT / "tests" / "data" / "jpy-manufacturer.yaml")), book)
    wb = openpyxl.load_workbook(book)
    try:
        for sheet, col, first in (("Options", "A", 5), ("Inputs", "B", 5)):
            ws = wb[sheet]
            texts = [str(c.value) for c in ws[col][first - 1:] if isinstance(c.value, str)]
            assert texts, sheet
            longest = max(texts, key=len)
            assert len(longest) / 1.15 <= ws.column_dimensions[col].width, (sheet, longest)
        assert "Maintenance manual Q&A" in {c.value for c in wb["Options"]["A"]}
        assert wb["Options"].column_dimensions["A"].width >= 22
        assert "% of capex / year" in {c.value for c in wb["Inputs"]["B"]}
    finally:
        wb.close()


def test_one_switch_is_singular() -> None:
    """The BOM's account totals printed "1 switches" (front-end leaf switches of
    inputs/example.yaml: 10 front-end ports, one leaf)."""
    fmt = number_format("switches", (1.0, 2.0), "USD")
    assert fmt.startswith('[=1]0" switch";') and '" switches"' in fmt


def test_the_catalogs_cloud_source_says_own_or_derived(example: tuple[Path, object],
                                                       tmp_path: Path) -> None:
    """The Catalog sheet's cloud price source said "dated cloud offers by tier" for every
    GPU: also for tests/data/eu-bank-cloud.yaml's, whose tier columns all hold the account's
    own price (EUR 2.35 and 3.10), and without naming example's derived tiers (H100 SXM:
    no dated three-year offer, Catalog 1.47 = 2.65 x the catalog's ratio)."""
    book, _ = example
    bank = tmp_path / "bank.xlsx"
    write_workbook(size(load(ROOT / "tests" / "data" / "eu-bank-cloud.yaml")), bank)
    for path, gpu, words in (
            (bank, "h100-sxm", "the account's own cloud price (requirements file, "
                               "costs.cloud_gpu_hour), paid in every tier"),
            (book, "h100-sxm", "derived by the catalog's tier ratio (no dated offer): "
                               "committed three-year contract; see the note on Inputs")):
        wb = openpyxl.load_workbook(path)
        try:
            ws = wb["Catalog"]
            row = next(r for r in ws.iter_rows() if r[0].value == gpu)
            assert any(words in str(c.value) for c in row), (path.name, [c.value for c in row])
        finally:
            wb.close()
