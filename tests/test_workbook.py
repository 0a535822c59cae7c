"""The workbook (src/llmsizer/documents/workbook/): structure, cached values, formula lint,
untrusted text, input cells, and a text snapshot of every formula of the example.

No LibreOffice here; tests/test_workbook_recalc.py recalculates with it. The helpers
at the top (``expected_values``, ``formula_cells``) are shared with that file.

Update the snapshot after an intended formula change with
``LLMSIZER_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_workbook.py``.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import EXAMPLE, ROOT, example_dict

from llmsizer.documents.inputcells import speculative_lock
from llmsizer.documents.workbook import (
    CALC_SHEETS,
    COL_NAME,
    FIRST_OPTION_COL,
    MAX_COLUMNS_PER_WORKLOAD,
    ROW_OPTION,
    ROW_STATUS,
    ROW_WORKLOAD,
    SHEETS,
    clean_text,
    write_workbook,
)
from llmsizer.inputs.loader import load
from llmsizer.model.calculations import CALCULATIONS, INPUTS
from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import FUNCTIONS
from llmsizer.model.sheetlookup import LOOKUP_FUNCTIONS
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

# openpyxl ships no type information: imported untyped so mypy --strict passes either way.
openpyxl: Any = importlib.import_module("openpyxl")
Tokenizer: Any = importlib.import_module("openpyxl.formula.tokenizer").Tokenizer

SNAPSHOT = ROOT / "tests" / "snapshots" / "example_formulas.txt"
# DESIGN §2: the only functions an emitted formula may call.
ALLOWED_FUNCTIONS = frozenset(
    {"ROUNDUP", "ROUNDDOWN", "MAX", "MIN", "IF", "AND", "OR", "LOG", "POWER", "SUM",
     "INDEX", "MATCH",  # the re-run check's cheapest option's name (Options columns only)
     *LOOKUP_FUNCTIONS})  # VLOOKUP: catalog lookups only (sheetlookup.lookup_formula)
# The only ranges a formula may use: a Catalog table from its ids' column A (a lookup's
# VLOOKUP), or one Options column (the re-run check's MIN and INDEX/MATCH over one
# workload's options).
_CATALOG_COLUMN = re.compile(r"^(?:Catalog!\$A\$[0-9]+:\$[A-Z]+\$[0-9]+"
                             r"|Options!\$([A-Z]+)\$[0-9]+:\$\1\$[0-9]+)$")
# Operators: arithmetic, comparisons and "&" (text join, used only for the Summary's sentence).
ALLOWED_OPERATORS = frozenset({"+", "-", "*", "/", "^", "=", "<>", "<", "<=", ">", ">=", "&"})
_CELL = re.compile(r"^(?:(?:Summary|Plan|Inputs|KV|Throughput|Nodes|TCO|Catalog|Assumptions|"
                   r"Options)!)?"
                   r"\$?[A-Z]{1,3}\$?[0-9]+$")
_LOOKS_LIKE_CELL = re.compile(r"^[A-Za-z]{1,3}[0-9]+$|^[Rr][0-9]*[Cc][0-9]*$")
CALC_BY_NAME = {c.name: c for c in CALCULATIONS}
COUNT_UNITS = frozenset({"GPUs", "nodes", "replicas", "sequences"})


# --- shared helpers -------------------------------------------------------------------------


@cache
def example_result() -> Result:
    return size(load(EXAMPLE))


def formula_cells(path: Path) -> Iterator[tuple[str, str, str]]:
    """(sheet, cell, formula) of every formula cell, sheet by sheet, row by row."""
    wb = openpyxl.load_workbook(path)
    try:
        for ws in wb.worksheets:
            for row in ws.iter_rows():
                for cell in row:
                    if cell.data_type == "f":
                        yield ws.title, cell.coordinate, str(cell.value)
    finally:
        wb.close()


def column_options(result: Result, cached: dict[str, dict[str, object]]
                   ) -> dict[str, tuple[int, str]]:
    """Column letter of the calculation sheets -> (workload index, option id), read from the
    Options sheet: each option's workload, its code (the hidden column matching the results
    file) and the column it has on KV, Throughput, Nodes and TCO (the calculation sheets
    name an option in words only)."""
    options = cached["Options"]
    cells = {ref: re.fullmatch(r"([A-Z]+)(\d+)", ref) for ref in options}
    at = {ref: (m.group(1), int(m.group(2))) for ref, m in cells.items() if m}
    code, row = at[next(ref for ref, v in options.items()
                        if v == "Configuration code in the results file")]
    column = next(at[ref][0] for ref, v in options.items() if v == "Column" and at[ref][1] == row)
    out: dict[str, tuple[int, str]] = {}
    k = 0
    for r in sorted(y for x, y in at.values() if x == "A" and y > row):
        name, option, letter = (options.get(f"{c}{r}") for c in ("A", code, column))
        if not isinstance(letter, str) or not letter.isalpha():
            continue  # no column on the calculation sheets ("—")
        assert isinstance(name, str) and isinstance(option, str), r
        while k < len(result.workloads) and (
                clean_text(result.workloads[k].name) != name
                or result.workloads[k].option(option) is None):
            k += 1
        assert k < len(result.workloads), f"Options row {r}: {name!r} {option!r} not in result"
        out[letter] = (k, option)
    return dict(sorted(out.items(), key=lambda item: (len(item[0]), item[0])))


def expected_values(result: Result, cached: dict[str, dict[str, object]]
                    ) -> dict[tuple[str, str], tuple[object, str]]:
    """(sheet, cell) -> (engine value, calculation name) for every calculation cell of the
    four calculation sheets, found through the name column and the Options sheet's column
    letters (each column's workload row checked) only."""
    out: dict[tuple[str, str], tuple[object, str]] = {}
    cols = column_options(result, cached)
    for sheet in CALC_SHEETS:
        values = cached[sheet]
        for letter, (k, _) in cols.items():
            assert values[f"{letter}{ROW_WORKLOAD + 1}"] == clean_text(result.workloads[k].name)
        for ref, name in values.items():
            if not ref.startswith("A") or name not in CALC_BY_NAME:
                continue
            row = ref[1:]
            for letter, (k, option_id) in cols.items():
                option = result.workloads[k].option(option_id)
                assert option is not None
                out[(sheet, f"{letter}{row}")] = (option.values[str(name)], str(name))
    return out


def same(expected: object, got: object, name: str, *, rel: float) -> bool:
    """Engine value vs a spreadsheet value: text and flags exact, counts exact, else rel."""
    if isinstance(expected, str) or isinstance(got, str):
        return expected == got
    if got is None or not isinstance(got, int | float):
        return False
    if isinstance(expected, bool) or isinstance(got, bool):
        return bool(expected) == bool(got)
    assert isinstance(expected, int | float)
    calc = CALC_BY_NAME.get(name)
    if calc is not None and calc.unit in COUNT_UNITS and float(expected).is_integer():
        return float(got) == float(expected)
    if expected == 0:
        return got == 0
    return abs(float(got) - float(expected)) <= rel * abs(float(expected))


def libreoffice_check(result: Result, book: Path, out: Path
                      ) -> tuple[list[str], set[str], dict[str, dict[str, object]]]:
    """LibreOffice recalculates ``book`` (the workbook written for ``result``) into ``out``:
    (every formula cell that differs from the engine, or from the cached value where the
    engine has none, as 'sheet!ref (name): got vs expected: formula'; the calculation names
    seen; the recalculated values). One home for the check the rows' own tests repeat."""
    from support.libreoffice import read_values, recalculate

    out.mkdir(exist_ok=True)
    cached = read_values(book)
    got = read_values(recalculate([book], out, timeout=300)[book])
    engine = expected_values(result, cached)
    problems: list[str] = []
    seen: set[str] = set()
    for sheet, ref, formula in formula_cells(book):
        expected, name = engine.get((sheet, ref), (cached[sheet].get(ref), ""))
        seen.add(name)
        if not same(expected, got.get(sheet, {}).get(ref), name, rel=1e-9):
            problems.append(f"{sheet}!{ref} ({name}): {got.get(sheet, {}).get(ref)!r} vs "
                            f"{expected!r}: {formula[:200]}")
    return problems, seen, got


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def write_yaml(data: dict[str, Any], path: Path) -> Path:
    """Requirements as YAML (no anchors: the loader refuses them)."""
    path.write_text(yaml.dump(data, Dumper=_NoAliases, sort_keys=False, allow_unicode=True),
                    encoding="utf-8")
    return path


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("wb") / "example.xlsx"
    write_workbook(example_result(), path)
    return path


@pytest.fixture(scope="module")
def book(example_book: Path) -> Iterator[Any]:
    wb = openpyxl.load_workbook(example_book)
    yield wb
    wb.close()


@pytest.fixture(scope="module")
def cached(example_book: Path) -> dict[str, dict[str, object]]:
    """Cached values as a reader that does not recalculate sees them."""
    wb = openpyxl.load_workbook(example_book, data_only=True)
    try:
        return {ws.title: {c.coordinate: c.value for row in ws.iter_rows() for c in row
                           if c.value is not None} for ws in wb.worksheets}
    finally:
        wb.close()


# --- structure ----------------------------------------------------------------------------------


def test_sheets_in_order(book: Any) -> None:
    assert book.sheetnames == list(SHEETS)


def test_every_calculation_is_a_row_with_one_formula_per_option(book: Any) -> None:
    result = example_result()
    for sheet in CALC_SHEETS:
        ws = book[sheet]
        names = {ws.cell(row=r, column=COL_NAME + 1).value: r for r in range(1, ws.max_row + 1)}
        for calc in CALCULATIONS:
            if calc.sheet != sheet:
                continue
            assert calc.name in names, f"{calc.name} missing on {sheet}"
            row = names[calc.name]
            n_cols = sum(min(len(w.options), MAX_COLUMNS_PER_WORKLOAD) for w in result.workloads)
            cells = [ws.cell(row=row, column=FIRST_OPTION_COL + 1 + j) for j in range(n_cols)]
            assert all(c.data_type == "f" for c in cells), calc.name
            assert ws.cell(row=row, column=FIRST_OPTION_COL + 1 + n_cols).data_type != "f"


def test_recommended_option_first_and_marked(book: Any, cached: dict[str, dict[str, object]]
                                             ) -> None:
    result = example_result()
    for sheet in CALC_SHEETS:
        cols = column_options(result, cached)
        firsts: dict[int, str] = {}
        for letter, (k, _) in cols.items():
            firsts.setdefault(k, letter)
        for k, letter in firsts.items():
            w = result.workloads[k]
            assert cols[letter][1] == w.recommended
            assert str(cached[sheet][f"{letter}{ROW_STATUS + 1}"]).startswith("★ recommended")


def test_columns_capped_and_the_rest_announced(book: Any) -> None:
    result = example_result()
    assert any(len(w.options) > MAX_COLUMNS_PER_WORKLOAD for w in result.workloads)
    ws = book["KV"]
    headers = [ws.cell(row=ROW_OPTION + 1, column=c).value
               for c in range(FIRST_OPTION_COL + 1, ws.max_column + 1)]
    # each option's column is headed by its words ('4 × NVIDIA H100 SXM 80GB, ...'), not its code
    n_options = sum(1 for h in headers if isinstance(h, str) and " × " in h)
    assert not [h for h in headers if isinstance(h, str) and "/" in h]
    assert n_options == sum(min(len(w.options), MAX_COLUMNS_PER_WORKLOAD)
                            for w in result.workloads)
    subtitle = str(ws.cell(row=2, column=2).value)
    for w in result.workloads:
        if len(w.options) > MAX_COLUMNS_PER_WORKLOAD:
            assert f"{MAX_COLUMNS_PER_WORKLOAD} of {len(w.options)} options shown" in subtitle
    statuses = [ws.cell(row=ROW_STATUS + 1, column=c).value
                for c in range(FIRST_OPTION_COL + 1, FIRST_OPTION_COL + 1 + n_options)]
    assert any(str(s).startswith("✗ rejected: ") for s in statuses), "rejected options shown"


def test_options_sheet_lists_every_option_of_the_results_json(book: Any) -> None:
    """The proposal says the other configurations are listed in the workbook: every option
    of the results JSON (feasible and rejected, with the reason) is a row of Options."""
    result = example_result()
    doc = json.loads(result.to_json())
    in_json = [(w["name"], o["id"], o["feasible"], o["reason"])
               for w in doc["workloads"] for o in w["options"]]
    # inputs/example.yaml: 2 workloads x 58 options: every platform carrying each GPU (issue 22)
    # by TP degrees it allows: H100 on DGX H100, XE9680 (TP1-8) and XE8640 (TP1-4) = 11, H200
    # on DGX H200 and XE9680 = 8, L40S on XE7745 at its 350 W card power (TP1-8) and R760xa,
    # 4-GPU PCIe 350 W (TP1-4) = 10 (one platform entry per card power:
    # tests/test_catalog_reference.py); x 2 weight precisions
    assert len(in_json) == 2 * (11 + 8 + 10) * 2 == 116
    ws = book["Options"]
    heads = [c.value for c in ws[4]]
    ids, st = heads.index("Configuration code in the results file"), heads.index("Status")
    listed = [(r[0], r[ids], r[st]) for r in ws.iter_rows(min_row=5, values_only=True) if r[ids]]
    assert len(listed) == len(in_json)
    assert {(w, i) for w, i, _, _ in in_json} == {(w, i) for w, i, _ in listed}
    status = {(w, i): s for w, i, s in listed}
    for w, i, feasible, reason in in_json:
        if feasible:
            assert str(status[(w, i)]).startswith(("★ recommended", "alternative #")), (w, i)
        else:
            assert status[(w, i)] == f"✗ rejected: {reason}", (w, i)
    assert any(not f for *_, f, _ in in_json) and any(f for *_, f, _ in in_json)


# --- cached values ---------------------------------------------------------------------------


def test_cached_values_are_the_engines(cached: dict[str, dict[str, object]]) -> None:
    """Previews and openpyxl data_only=True see the engine's numbers, exactly."""
    result = example_result()
    expected = expected_values(result, cached)
    assert len(expected) > 1000
    for (sheet, ref), (value, name) in expected.items():
        got = cached[sheet].get(ref)
        if CALC_BY_NAME[name].unit == "flag":
            # 1 / 0, not booleans: LibreOffice 7.4 discards cached booleans (its PDF export
            # then aborted; docs/libreoffice-findings.md section 6)
            assert type(got) is int and got == int(bool(value)), (sheet, ref, name, got)
        else:
            assert got == value, (sheet, ref, name, got, value)


def test_every_formula_has_a_cached_value(example_book: Path,
                                          cached: dict[str, dict[str, object]]) -> None:
    for sheet, ref, formula in formula_cells(example_book):
        assert cached[sheet].get(ref) not in (None, ""), (sheet, ref, formula)


def test_summary_totals_are_the_engines(book: Any, cached: dict[str, dict[str, object]]) -> None:
    totals = example_result().totals
    ws = book["Summary"]
    labels = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    total_col = None
    for c in range(1, ws.max_column + 1):
        if str(ws.cell(row=5, column=c).value).startswith("Total"):
            total_col = c
    assert total_col is not None
    from openpyxl.utils import get_column_letter

    letter = get_column_letter(total_col)
    # GPUs bought and GPUs in use, labelled (issue 22: "GPUs" was the count in use beside
    # the capital cost of the GPUs bought)
    # (the rows' per-workload cells are each workload's share of the plan, issue 22)
    for label, value in (("Nodes (its share of the plan)", totals.nodes),
                         ("GPUs serving or on standby (its share)", totals.gpus_used),
                         ("GPUs bought (its share)", totals.gpus_purchased),
                         ("Capital cost (its share)", totals.capex),
                         ("On-prem cost per year (its share)", totals.annual_cost_onprem)):
        ref = f"{letter}{labels[label]}"
        # totals are the account plan's (issue 15): a reference to the Plan sheet's total
        assert ws[ref].data_type == "f" and ws[ref].value.startswith("=Plan!")
        assert cached["Summary"][ref] == value


def test_summary_states_the_recommendation_in_words(cached: dict[str, dict[str, object]]) -> None:
    """The plan's words (issue 22): the shared node group and the pool, not the workload
    sized alone."""
    result = example_result()
    words = [v for v in cached["Summary"].values() if isinstance(v, str) and " nodes (" in v]
    assert len(words) == len(result.workloads)
    best = result.workloads[0].best
    assert best is not None
    (pool,) = result.plan.pools
    (group,) = result.plan.node_groups
    cat = load_catalog()  # names, not ids (issue 14): catalogs/gpus.yaml, platforms.yaml
    assert words[0].startswith(
        f"Shares {group.nodes} × {cat.platforms[best.platform].name} nodes "
        f"({group.gpus_purchased} × {cat.gpus[best.gpu].name} GPUs) with 1 other workload: "
        f"{pool.replicas} replicas of TP{pool.tp}")
    assert best.gpu not in words[0] and best.platform not in words[0]


# --- formula lint -------------------------------------------------------------------------------


def lint(formula: str, names: set[str]) -> list[str]:
    """Problems with one formula: functions off the list, unknown names, odd tokens."""
    problems = []
    depth = max_depth = 0
    for tok in Tokenizer(formula).items:
        if tok.type == "FUNC" and tok.subtype == "OPEN":
            fn = tok.value[:-1].upper()
            depth += 1
            max_depth = max(max_depth, depth)
            if fn not in ALLOWED_FUNCTIONS:
                problems.append(f"function {fn}")
        elif tok.type == "FUNC":
            depth -= 1
        elif tok.type == "OPERAND" and tok.subtype == "RANGE":
            if not (_CELL.match(tok.value) or tok.value in names
                    or _CATALOG_COLUMN.match(tok.value)):
                problems.append(f"reference {tok.value}")
        elif tok.type == "OPERAND":
            if tok.subtype not in ("NUMBER", "TEXT", "LOGICAL"):
                problems.append(f"operand {tok.value} ({tok.subtype})")
        elif tok.type in ("OPERATOR-INFIX", "OPERATOR-PREFIX", "OPERATOR-POSTFIX"):
            if tok.value not in ALLOWED_OPERATORS or tok.type != "OPERATOR-INFIX":
                problems.append(f"operator {tok.type} {tok.value}")
        elif tok.type not in ("SEP", "PAREN", "WHITE-SPACE"):
            problems.append(f"token {tok.type} {tok.value}")
    if "_xlfn." in formula:
        problems.append("_xlfn.")
    if len(formula) > 8000:
        problems.append(f"{len(formula)} characters (Excel's limit is 8,192)")
    if max_depth > 60:
        problems.append(f"nesting {max_depth} (Excel's limit is 64)")
    return problems


def test_lint_catches_what_it_must() -> None:
    names = {"in_users"}
    assert lint("=ROUNDUP(in_users/7,0)+KV!D8*Catalog!$A$5", names) == []
    assert lint('=IF(KV!D8="fp8",1,0)&"x"', names) == []
    assert lint("=XLOOKUP(1,A1:A2,B1:B2)", names) != []
    assert lint("=VLOOKUP(1,A1:B2,2,0)", names) != []  # a range off the Catalog
    assert lint("=VLOOKUP(KV!D8,Catalog!$A$5:$C$7,3,0)", names) == []
    assert lint("=VLOOKUP(KV!D8,Catalog!$B$5:$C$7,2,0)", names) != []  # not from the ids
    assert lint("=_xlfn.IFS(1,2)", names) != []
    assert lint("=in_unknown*2", names) == ["reference in_unknown"]
    assert lint("=-in_users", names) != []  # unary minus: -2^2 = 4 in Excel
    assert lint("=A1:B2", names) != []  # ranges never appear in computed cells
    assert lint("=INDEX(Options!$B$5:$B$7,MATCH(MIN(Options!$X$5:$X$7),Options!$X$5:$X$7,0))",
                names) == []
    assert lint("=INDEX(Options!$B$5:$C$7,MATCH(D8,Options!$X$5:$X$7,0))", names) != []
    assert lint("=SUM(KV!$C$5:$C$7)", names) != []
    assert lint("=INDIRECT(\"A1\")", names) != []


def test_defined_names_are_prefixed_and_point_at_inputs(book: Any) -> None:
    names = dict(book.defined_names.items())
    assert names
    for name, defn in names.items():
        assert name.startswith("in_"), name
        assert not _LOOKS_LIKE_CELL.match(name), name
        assert re.fullmatch(r"Inputs!\$[A-Z]+\$[0-9]+", defn.attr_text), (name, defn.attr_text)


def test_every_formula_passes_the_lint(example_book: Path, book: Any) -> None:
    names = set(book.defined_names.keys())
    checked = 0
    for sheet, ref, formula in formula_cells(example_book):
        assert lint(formula, names) == [], (sheet, ref, formula)
        checked += 1
    assert checked > 1000


def test_functions_table_agrees_with_the_allowed_list() -> None:
    assert {f.excel for f in FUNCTIONS.values()} <= ALLOWED_FUNCTIONS


# --- inputs ------------------------------------------------------------------------------------


def _cell_of(book: Any, name: str) -> Any:
    target = book.defined_names[name].attr_text
    sheet, ref = target.split("!")
    return book[sheet][ref.replace("$", "")]


def test_every_input_the_calculations_use_is_a_named_unlocked_validated_cell(book: Any) -> None:
    from llmsizer.model.expr import references

    used: set[str] = set()
    for c in CALCULATIONS:
        used |= references(c.expr)
    result = example_result()
    ws = book["Inputs"]
    validated = {str(cell) for dv in ws.data_validations.dataValidation
                 for rng in dv.sqref.ranges for cell in _cells(rng)}
    prompts = {str(cell): dv.prompt for dv in ws.data_validations.dataValidation
               for rng in dv.sqref.ranges for cell in _cells(rng)}
    for i in INPUTS:
        if i.name not in used or i.scope == "option":
            continue
        names = [f"in_{i.name}"] if i.scope == "account" else [
            f"in_w{k}_{i.name}" for k in range(1, len(result.workloads) + 1)]
        for k, name in enumerate(names):
            cell = _cell_of(book, name)
            # a speculative-decoding figure a re-read cannot take back (no draft method in the
            # workbook, or the draft layer's) is shown locked, not as an input (inputcells)
            w = result.workloads[k].inputs if i.scope != "account" else {}
            locked = speculative_lock(i.name, float(w.get("spec_draft_tokens", 0)),
                                      float(w.get("spec_draft_layers", 0))) is not None
            assert (cell.protection.locked is not False) == locked, name
            assert cell.data_type == "n", name
            assert cell.coordinate in validated, name
            assert i.note[:40] in (prompts[cell.coordinate] or ""), name
    assert _cell_of(book, "in_headroom").value == result.account_inputs["headroom"]
    assert _cell_of(book, "in_w2_users").value == result.workloads[1].inputs["users"]


def _cells(rng: Any) -> Iterator[str]:
    from openpyxl.utils import get_column_letter

    for row in range(rng.min_row, rng.max_row + 1):
        for col in range(rng.min_col, rng.max_col + 1):
            yield f"{get_column_letter(col)}{row}"


def test_option_choices_are_input_cells_with_catalog_dropdowns(book: Any,
                                                               cached: dict[str, dict[str, object]]
                                                               ) -> None:
    ws = book["KV"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    lists = {}
    for dv in ws.data_validations.dataValidation:
        for rng in dv.sqref.ranges:
            lists[rng.min_row] = (dv.type, dv.formula1)
    for name in ("gpu", "platform", "weight_precision", "kv_precision"):
        kind, source = lists[rows[name]]
        assert kind == "list" and source.startswith("Catalog!$A$"), (name, source)
        cell = ws.cell(row=rows[name], column=FIRST_OPTION_COL + 1)
        assert cell.protection.locked is False and cell.data_type == "s"
    for name in ("tp", "mbu_weights", "mfu_decode", "step_overhead_ms"):
        cell = ws.cell(row=rows[name], column=FIRST_OPTION_COL + 1)
        assert cell.protection.locked is False and cell.data_type == "n", name
        assert lists[rows[name]][0] in ("whole", "decimal"), name
    gpu_ids = cached["Catalog"]
    first = example_result().workloads[0].best
    assert first is not None
    assert first.gpu in gpu_ids.values()


def test_derived_cells_are_locked_and_sheets_protected_without_password(book: Any) -> None:
    for ws in book.worksheets:
        assert ws.protection.sheet is True, ws.title
        assert not ws.protection.password, ws.title
    ws = book["Nodes"]
    for row in ws.iter_rows():
        for cell in row:
            if cell.data_type == "f":
                assert cell.protection.locked is not False, cell.coordinate


def test_layout_print_setup_and_formats(book: Any) -> None:
    for ws in book.worksheets:
        assert ws.page_setup.orientation == "landscape", ws.title
        if ws.title == "Summary":  # a print scale: the table on a page, each chart on one
            assert not ws.sheet_properties.pageSetUpPr.fitToPage
            assert 55 <= int(ws.page_setup.scale) <= 100
            continue
        assert ws.sheet_properties.pageSetUpPr.fitToPage, ws.title
        assert ws.page_setup.fitToHeight == 0, ws.title
    for sheet in CALC_SHEETS:
        assert book[sheet].freeze_panes == f"D{ROW_STATUS + 2}"
    assert book["Summary"].freeze_panes and book["Inputs"].freeze_panes
    cur = example_result().account.currency
    assert cur == "USD"
    ws = book["TCO"]
    for row in ws.iter_rows(min_row=ROW_STATUS + 2):
        name = row[0].value
        if name in CALC_BY_NAME:
            fmt = row[FIRST_OPTION_COL].number_format
            unit = CALC_BY_NAME[name].unit
            if unit.startswith("currency"):
                assert '"$"' in fmt, (name, fmt)
            elif unit == "code":  # session 24: cloud_size_picked, 0/1/2 named in its label
                assert fmt == "#,##0", (name, fmt)  # (it printed "2 size no.")
            else:
                assert '"' in fmt or "%" in fmt, (name, fmt)  # a unit on every number
    ws = book["KV"]
    assert ws.column_dimensions["B"].width >= 30


def test_slo_flags_have_pass_fail_formatting(book: Any) -> None:
    ws = book["Throughput"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(1, ws.max_row + 1)}
    slo_row = rows["slo_met"]
    rules = [(str(rng), r) for rng in ws.conditional_formatting for r in rng.rules]
    hits = [r for rng, r in rules if re.search(rf"[A-Z]+{slo_row}:[A-Z]+{slo_row}", rng)]
    assert {tuple(r.formula) for r in hits} == {("TRUE",), ("FALSE",)}


def test_summary_chart_follows_the_tco_cells(example_book: Path) -> None:
    import zipfile

    with zipfile.ZipFile(example_book) as z:
        charts = [n for n in z.namelist() if n.startswith("xl/charts/chart")]
        assert charts
        xml = z.read(charts[0]).decode()
    # the bars read the Summary's table under the chart, whose cost cells are =TCO!… and
    # whose labels name the option and its server (tests/test_workbook_charts.py)
    assert "<c:f>Summary!$C$" in xml and "<c:f>Summary!$A$" in xml
    assert "<c:numCache>" in xml  # previews show the bars without recalculating
    # axis labels are names, not option ids
    assert "<c:v>2 × NVIDIA H100 SXM 80GB, FP8 weights, FP8 KV cache\n" in xml, xml[:3000]


# --- untrusted text ---------------------------------------------------------------------------

NASTY = ['=HYPERLINK("http://x","y")', "=1+1", "+1+1", "-1+1", "@SUM(1,1)", "=cmd|'/c calc'!A0",
         "_x0041_ and bell"]


def test_untrusted_text_is_written_as_text(tmp_path: Path) -> None:
    data = example_dict()
    data["account"]["name"] = NASTY[0]
    data["account"]["prepared_by"] = NASTY[1]
    data["workloads"][0]["name"] = NASTY[2]
    data["workloads"][1]["name"] = NASTY[3]
    data["workloads"].append(dict(data["workloads"][1], name=NASTY[4]))
    data["workloads"].append(dict(data["workloads"][1], name=NASTY[5]))
    data["workloads"].append(dict(data["workloads"][1], name=NASTY[6]))
    result = size(load(write_yaml(data, tmp_path / "nasty.yaml")))
    # The loader refuses control characters; the writer strips them anyway (a Result can
    # come from elsewhere, e.g. a results JSON).
    last = result.workloads[-1]
    result = result.model_copy(update={"workloads": [
        *result.workloads[:-1], last.model_copy(update={"name": "_x0041_ and \x07bell"})]})
    path = tmp_path / "nasty.xlsx"
    write_workbook(result, path)
    wb = openpyxl.load_workbook(path)
    texts = {clean_text(n) for n in NASTY}
    assert clean_text(NASTY[6]) == "_x0041_ and bell"
    found: set[str] = set()
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                for text in texts:
                    if isinstance(cell.value, str) and text in cell.value:
                        assert cell.data_type == "s", (ws.title, cell.coordinate, cell.value)
                        found.add(text)
                if cell.data_type == "f":
                    assert "HYPERLINK" not in cell.value and "cmd" not in cell.value
                if isinstance(cell.value, str):
                    assert not re.search(r"[\x00-\x08\x0b-\x1f]", cell.value)
    assert found == texts
    import zipfile

    with zipfile.ZipFile(path) as z:  # chart titles are references to those text cells
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    assert len(charts) == len(result.workloads)
    assert all("<c:title><c:tx><c:strRef><c:f>Summary!$A$" in c for c in charts)


# --- snapshot ------------------------------------------------------------------------------------


def formulas_text(path: Path) -> str:
    return "".join(f"{sheet}!{ref}: {formula}\n" for sheet, ref, formula in formula_cells(path))


def test_formula_snapshot(example_book: Path) -> None:
    """Every formula of the example workbook, so a formula change shows in review diffs."""
    text = formulas_text(example_book)
    if os.environ.get("LLMSIZER_UPDATE_SNAPSHOTS") == "1" or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(text, encoding="utf-8")
    old = SNAPSHOT.read_text(encoding="utf-8")
    if text != old:
        import difflib

        diff = "".join(list(difflib.unified_diff(
            old.splitlines(True), text.splitlines(True), "snapshot", "now", n=0))[:40])
        pytest.fail("formulas changed; if intended, rerun with LLMSIZER_UPDATE_SNAPSHOTS=1:\n"
                    + diff)


# --- through the report ---------------------------------------------------------------------


def test_report_writes_the_workbook_atomically(tmp_path: Path) -> None:
    from llmsizer.runs.report import write_outputs

    written = write_outputs(example_result(), tmp_path, formats=("xlsx",))
    assert [p.name for p in written] == ["acme-corp.xlsx"]
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")] == [
        "acme-corp.xlsx"]  # (hidden: the account's lock and manifest)
    assert not list(tmp_path.glob(".llmsizer-tmp-*"))
    assert openpyxl.load_workbook(written[0]).sheetnames == list(SHEETS)
