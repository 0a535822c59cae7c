"""The workbook speaks to customers (developers' guide: names instead of ids, no input paths):
what the printed sheets show, and how they print. Each test reads a real workbook of a shipped
example account (inputs/) with openpyxl.
"""

from __future__ import annotations

import importlib
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

openpyxl: Any = importlib.import_module("openpyxl")
get_column_letter: Any = importlib.import_module("openpyxl.utils").get_column_letter

CODE_HEAD = "Configuration code in the results file"


@cache
def _result(account: str) -> Result:
    return size(load(ROOT / "inputs" / f"{account}.yaml"))


@cache
def _path(account: str, tmp: Path) -> Path:
    path = tmp / f"{account}.xlsx"
    write_workbook(_result(account), path)
    return path


@cache
def _book(account: str, tmp: Path, data_only: bool = False) -> Any:
    return openpyxl.load_workbook(_path(account, tmp), data_only=data_only)


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``books(account)``: the workbook's formulas; ``books(account, True)``: the cached
    values a reader that does not recalculate sees."""
    tmp = tmp_path_factory.mktemp("words")
    return lambda account, data_only=False: _book(account, tmp, data_only)


def _options_rows(ws: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
    heads = [c.value for c in ws[4]]
    return heads, [r for r in ws.iter_rows(min_row=5, values_only=True) if r[0]]


@pytest.mark.parametrize("account", ["example", "frontier-moe-rack"])
def test_options_sheet_names_each_option_as_the_proposal_does(books: Any, account: str) -> None:
    """Column B names the option as the PDF's alternatives table does ('4 × NVIDIA H100 SXM
    80GB, FP8 weights, FP8 KV cache'), not by its id ('h100-sxm/fp8/kv-fp8/tp4') nor in lower
    case ('fp8 weights'); the id stays only in a hidden column, for matching the results
    file, whose header says so."""
    ws = books(account)["Options"]
    heads, rows = _options_rows(ws)
    code = heads.index(CODE_HEAD)
    assert ws.column_dimensions[get_column_letter(code + 1)].hidden
    gpus = load_catalog().gpus
    options = {(w.name, o.id): o for w in _result(account).workloads for o in w.options}
    assert len(rows) == len(options)
    for row in rows:
        o = options[(row[0], row[code])]
        words = str(row[1])
        assert words.startswith(f"{o.tp} × {gpus[o.gpu].name}, "
                                f"{o.weight_precision.upper()} weights, "
                                f"{o.kv_precision.upper()} KV cache"), words
        shown = [str(v) for j, v in enumerate(row) if j != code and v is not None]
        assert not any(o.id in v or "/kv-" in v or f"{o.weight_precision} weights" in v
                       for v in shown), row


def test_options_sheet_tells_apart_options_that_differ_beyond_tp(books: Any) -> None:
    """inputs/frontier-moe-rack.yaml: GB300 at TP16 both with and without separate prefill
    replicas (ids gb300/fp4/kv-fp8/tp16/ep16/adp16[/prefill-tp8-ep8-adp8]); the words say
    what differs, as the PDF's option label does, so no two rows of a workload read alike."""
    heads, rows = _options_rows(books("frontier-moe-rack")["Options"])
    platform = heads.index("Platform")
    seen = [(r[0], r[1], r[platform]) for r in rows]
    assert len(set(seen)) == len(seen)
    words = {r[heads.index(CODE_HEAD)]: r[1] for r in rows}
    assert words["gb300/fp4/kv-fp8/tp16/ep16/adp16/prefill-tp8-ep8-adp8"].endswith(
        "FP8 KV cache · experts spread over 16 GPUs · attention data-parallel over 16 ranks · "
        "decode only, prompts read by prefill replicas of 8 GPUs")


def _printed(ws: Any) -> tuple[int, int, int, int]:
    """(first column, first row, last column, last row) of the sheet's print area, 1-based."""
    from openpyxl.utils.cell import range_boundaries

    area = str(ws.print_area).split("!")[-1].replace("$", "")
    c1, r1, c2, r2 = range_boundaries(area)
    return c1, r1, c2, r2


def test_retrieval_sheet_prints_legibly(books: Any) -> None:
    """inputs/rag-knowledge-base.yaml: the Retrieval sheet used to print at a tiny scale in
    LibreOffice (one page wide, set by an 80-character notes column and a 438-character line
    beside the serving engines). Now: landscape, one page wide and as many pages down as the
    rows need, the label, unit, workload and wrapped note columns printed (under about 200
    characters across, the width a landscape A4 page prints legibly, formats._PAGE_CHARS);
    the calculation names (column A) and the formula by name stay on screen, as on the
    calculation sheets."""
    ws = books("rag-knowledge-base")["Retrieval"]
    setup = ws.page_setup
    assert setup.orientation == "landscape"
    assert (setup.fitToWidth in (None, 1), setup.fitToHeight) == (True, 0)
    assert ws.sheet_properties.pageSetUpPr.fitToPage
    c1, r1, c2, r2 = _printed(ws)
    assert (c1, r1) == (2, 1)
    heads = {ws.cell(row=5, column=c).value: c for c in range(1, ws.max_column + 1)}
    assert c2 == heads["Passage reranking"] + 1  # the workloads, then their notes
    assert r2 == max(r for r in range(1, ws.max_row + 1)
                     if ws.cell(row=r, column=2).value == "RAG time to first token")
    widths = [ws.column_dimensions[get_column_letter(c)].width for c in range(c1, c2 + 1)]
    assert sum(widths) < 200, widths
    notes = [ws.cell(row=r, column=c2) for r in range(1, ws.max_row + 1)
             if ws.cell(row=r, column=c2).value]
    assert len(notes) > 40
    assert all(n.alignment.wrap_text for n in notes)
    # a note over two lines (9-point text: about 1.4 characters per unit of column width)
    # has its row grown (spreadsheets do not grow rows for wrapped text when opening a file);
    # the longest, the engines' sources beside the workload headers, takes over four lines
    per_line = ws.column_dimensions[get_column_letter(c2)].width * 1.4
    long = [n for n in notes if len(str(n.value)) > 2 * per_line]
    assert long and all((ws.row_dimensions[n.row].height or 15) > 30 for n in long), [
        (n.coordinate, ws.row_dimensions[n.row].height) for n in long]
    longest = max(notes, key=lambda n: len(str(n.value)))
    assert ws.row_dimensions[longest.row].height >= 4 * 9 * 1.25
    # the formula by name: beside the notes, outside the print area
    formula = [ws.cell(row=r, column=c2 + 1).value for r in range(1, ws.max_row + 1)]
    assert any(str(v).startswith("= ") for v in formula if v)


def _row(ws: Any, label: str, col: int = 2) -> list[Any]:
    """The values right of the first cell in column ``col`` that reads ``label``."""
    for r in ws.iter_rows(values_only=True):
        if r[col - 1] == label:
            return [v for v in r[col:] if v not in (None, "")]
    raise AssertionError(f"no row {label!r}")


def test_plan_and_bom_name_pools_node_groups_gpus_and_options(books: Any) -> None:
    """inputs/rag-knowledge-base.yaml: the Plan sheet's heads said pool-1, group-1, h100-sxm
    and the option id, the BOM's lines group-1, retrieval-1, retrieval-2. Now the words the
    proposal uses: 'Pool 1' (its plan table), 'Node group 1', the GPU's catalog name, the
    option as its alternatives table names it, and a retrieval line by its workload."""
    r = _result("rag-knowledge-base")
    plan, bom = books("rag-knowledge-base")["Plan"], books("rag-knowledge-base")["BOM"]
    assert _row(plan, "Pool")[:1] == ["Pool 1"]
    assert _row(plan, "Node group")[:1] == ["Node group 1"]
    assert _row(plan, "Pools") == ["Pool 1"]
    assert _row(plan, "GPU") == ["NVIDIA H100 SXM 80GB"]
    assert _row(plan, "Option (the ★ column of each member)") == [
        "2 × NVIDIA H100 SXM 80GB, FP8 weights, FP8 KV cache"]
    assert _row(bom, "Line") == ["Node group 1", "Query and corpus embedding",
                                 "Passage reranking"]
    ids = {r.plan.pools[0].id, r.plan.node_groups[0].id, r.plan.pools[0].option,
           *(g.id for g in r.plan.retrieval_groups), "h100-sxm"}
    for ws in (plan, bom):
        c1, r1, c2, r2 = _printed(ws)
        shown = {str(ws.cell(row=y, column=x).value) for y in range(r1, r2 + 1)
                 for x in range(c1, c2 + 1)}
        assert not ids & shown, (ws.title, ids & shown)


@pytest.mark.parametrize(("account", "weights"), [("example", "FP8"),
                                                  ("frontier-moe-rack", "FP4")])
def test_summary_names_the_precisions(books: Any, account: str, weights: str) -> None:
    """The Summary's precision rows showed the KV sheet's input keys (fp8, fp4); they look up
    the Catalog sheet's name of the precision now (live: change the precision on KV and the
    name follows), as the proposal writes it."""
    summary, values = books(account)["Summary"], books(account, True)["Summary"]
    rows = {r[0].value: r[0].row for r in summary.iter_rows() if r[0].value}
    n = len(_result(account).workloads)
    for head, want in (("Weight precision", weights), ("KV-cache precision", "FP8")):
        row = rows[head]
        assert [values.cell(row=row, column=3 + k).value for k in range(n)] == [want] * n
        formula = str(summary.cell(row=row, column=3).value)
        assert re.match(r"=VLOOKUP\(KV!\$?D\$?\d+,Catalog!\$A\$\d+:\$B\$\d+,2,0\)$", formula), formula


def test_inputs_prices_and_catalog_name_gpus_platforms_and_precisions(books: Any) -> None:
    """The Inputs sheet's price rows read 'Purchase price: h100-sxm', 'Node price without
    GPUs: dell-xe8640'; now the catalog's names (the id stays in the cell's name, last
    column). The Catalog sheet keeps the codes in column A, which the formulas look up,
    under a header that says so, and names each precision as the proposal does (FP8)."""
    cat = load_catalog()
    inputs, catalog = books("example")["Inputs"], books("example")["Catalog"]
    labels = [str(r[0]) for r in inputs.iter_rows(values_only=True) if r[0]]
    prices = [t for t in labels if t.startswith(("Purchase price: ", "Cloud price per GPU-hour",
                                                 "Node price without GPUs: "))]
    assert "Purchase price: NVIDIA H100 SXM 80GB" in prices
    assert (f"Node price without GPUs: {cat.platforms['dell-xe8640'].name}") in prices
    ids = {*cat.gpus, *cat.platforms}
    assert not [t for t in prices if t.split(": ", 1)[1] in ids]
    heads = [str(r[0]) for r in catalog.iter_rows(values_only=True)
             if r[0] and str(r[0]).endswith("code (the formulas' key)")]
    assert heads == ["GPU code (the formulas' key)", "Platform code (the formulas' key)",
                     "Precision code (the formulas' key)"]
    names = {r[0]: r[1] for r in catalog.iter_rows(values_only=True) if r[0] in cat.precisions}
    assert names == {"fp8": "FP8", "bf16": "BF16"}


def test_kv_choice_cells_are_called_catalog_codes(books: Any) -> None:
    """The KV sheet's choice cells (GPU, platform, precisions) hold the catalog codes the
    formulas look up; their unit column said 'id', now 'code' (the Catalog sheet's column A
    heading names them so)."""
    ws = books("example")["KV"]
    units = {r[1]: r[2] for r in ws.iter_rows(values_only=True)
             if r[1] in ("GPU", "Platform", "Weight precision", "KV-cache precision")}
    assert units == dict.fromkeys(("GPU", "Platform", "Weight precision", "KV-cache precision"),
                                  "code")


def test_long_subtitles_and_header_names_wrap_instead_of_running_off(books: Any) -> None:
    """inputs/rag-knowledge-base.yaml printed through LibreOffice: the Plan and Scenarios
    subtitles ran off the page, the BOM's line names and the Scenarios' input words were cut
    at the next column. Subtitles are merged over the printed columns and wrapped; the BOM's
    header rows are tall enough for their wrapped names; the Scenarios' input column holds
    its longest words."""
    book = books("rag-knowledge-base")
    for sheet in ("Plan", "Scenarios"):
        ws = book[sheet]
        c1, _, c2, _ = _printed(ws)
        sub = next(m for m in ws.merged_cells.ranges if m.min_row == m.max_row == 2)
        assert (sub.min_col, sub.max_col) == (c1, c2), (sheet, sub)
        assert ws.cell(row=2, column=c1).alignment.wrap_text
    bom = book["BOM"]
    rows = {r[1].value: r[1].row for r in bom.iter_rows() if r[1].value}
    for head in ("Line", "Server (vendor model)", "GPU"):  # each holds a name over one line
        assert bom.row_dimensions[rows[head]].height > 15, head
    scen = book["Scenarios"]
    words = [str(r[2]) for r in scen.iter_rows(min_row=5, max_row=30, values_only=True) if r[2]]
    assert "Concurrent users at peak (stated)" in words
    assert scen.column_dimensions["C"].width >= max(len(w) for w in words)


def _width(ws: Any, col: int) -> float:
    """A column's width (openpyxl keys a run of equal columns by its first letter only)."""
    return next((float(d.width) for d in ws.column_dimensions.values()
                 if d.min is not None and d.min <= col <= (d.max or d.min)), 8.43)


@pytest.mark.parametrize("account", ["example", "frontier-moe-rack"])
def test_calculation_sheets_head_each_option_with_its_words(books: Any, account: str) -> None:
    """Row 5 of KV, Throughput, Nodes and TCO showed the option's code
    ('h100-sxm/fp8/kv-fp8/tp2/dell-xe8640'); now the Options sheet's words for the option in
    that column (its Column column) and its server's short name, so that two H100 TP2 columns
    on different servers read apart (example: Dell PowerEdge XE8640 and XE9680)."""
    book = books(account)
    heads, rows = _options_rows(book["Options"])
    code, column = heads.index(CODE_HEAD), heads.index("Column")
    cat = load_catalog()
    options = {(w.name, o.id): o for w in _result(account).workloads for o in w.options}
    in_columns = [r for r in rows if r[column] != "—"]
    assert len(in_columns) >= 3
    for sheet in ("KV", "Throughput", "Nodes", "TCO"):
        ws = book[sheet]
        assert ws.cell(row=5, column=2).value == "Option"
        for r in in_columns:
            o = options[(r[0], r[code])]
            server = cat.platforms[o.platform].name.split(" (", 1)[0]
            head = ws[f"{r[column]}5"]
            assert head.value == f"{r[1]} on {server}", (sheet, r[column], head.value)
            assert head.alignment.wrap_text
            # tall enough for the words wrapped in the column (11-point bold wrapped at word
            # ends: LibreOffice prints about 0.85 characters per unit of column width; a line
            # about 1.2 times the font size)
            lines = math.ceil(len(head.value) / (0.85 * _width(ws, head.column)))
            assert (ws.row_dimensions[5].height or 15) >= lines * 11 * 1.2, (sheet, lines)
        shown = [str(c.value) for c in ws[5] if c.value]
        assert not [s for s in shown if "/" in s or any(o.id in s for _, o in options.items())]
    if account == "example":
        kv = book["KV"]
        first = kv.cell(row=4, column=4).value  # the first workload's columns
        heads = [str(kv.cell(row=5, column=c).value) for c in range(4, kv.max_column + 1)
                 if kv.cell(row=4, column=c).value == first]
        alike = [h for h in heads if h.startswith("2 × NVIDIA H100 SXM 80GB, FP8 weights")]
        assert len(alike) >= 2 and len(set(alike)) == len(alike), alike


def test_the_proposal_and_the_workbook_word_options_from_one_home(books: Any) -> None:
    """inputs/frontier-moe-rack.yaml: the proposal's option_label macro (partials/macros.html.j2)
    and the workbook's option words (Options column B) were written twice, once in Jinja and
    once in Python (rerun_check.label). Both now call proposal/format.py's option_label (a
    filter in the proposal's environment): the same words for every option, and the words of
    an option's layout beyond TP live in that one file of src/ and templates/."""
    import html

    from llmsizer.documents.proposal.format import Formatter
    from llmsizer.documents.proposal.render import _environment, shipped_templates
    from llmsizer.documents.proposal.views import option_view

    env = _environment((shipped_templates().resolve(),))
    macro = env.from_string('{% from "partials/macros.html.j2" import option_label with context %}'
                            "{{ option_label(o) }}")
    heads, rows = _options_rows(books("frontier-moe-rack")["Options"])
    words = {r[heads.index(CODE_HEAD)]: r[1] for r in rows}
    result, cat = _result("frontier-moe-rack"), load_catalog()
    for w in result.workloads:
        for o in w.options:
            shown = html.unescape(macro.render(o=option_view(o, w, cat), fmt=Formatter("USD")))
            assert shown == words[o.id], (o.id, shown)
    assert any(" · experts spread over " in v for v in words.values())
    files = {p.resolve() for p in (*(ROOT / "src").rglob("*.py"), *(ROOT / "templates").rglob("*.j2"))
             if "prompts read by prefill replicas" in p.read_text(encoding="utf-8")}
    assert files == {ROOT / "src" / "llmsizer" / "documents" / "proposal" / "format.py"}, files


def test_assumptions_and_catalog_sheets_use_words_not_keys(books: Any) -> None:
    """inputs/frontier-moe-rack.yaml printed through LibreOffice: the Assumptions sheet read
    'Calibration itl median error', 'Confidence moe p10', 'Purchase price: gb300' and cut
    'hyperscaler on-dema'; the Catalog sheet's cloud-tier headers were the table's keys
    ('cloud_gpus_per_instance', cut to 'cloud_on_dema'); the re-run check spoke of 'the
    frozen choice'. Now the proposal's words (one home: proposal.assumptions), the catalog's
    names, and headers tall enough for them."""
    from llmsizer.documents.proposal.assumptions import assumption_label

    cat = load_catalog()
    book = books("frontier-moe-rack")
    labels = [str(r[0]) for r in book["Assumptions"].iter_rows(values_only=True) if r[0]]
    assert assumption_label("calibration_itl_median_error") in labels
    assert "Model error, mixture-of-experts models: 10th percentile" in labels
    assert not [t for t in labels if t.split(": ", 1)[-1] in {*cat.gpus, *cat.platforms}]
    assert not [t for t in labels if {"itl", "moe", "mtp", "p10", "p90"} & set(t.split())]
    tier = next(r for r in book["Assumptions"].iter_rows() if r[0].value == "Cloud price tier")
    assert tier[1].alignment.wrap_text  # "hyperscaler on-demand" shown whole
    catalog = book["Catalog"]
    heads = [str(c.value) for row in catalog.iter_rows(min_row=4)
             if str(row[0].value).endswith("(the formulas' key)") for c in row if c.value]
    assert "Cloud price per GPU-hour, committed one-year contract" in heads
    assert not [h for h in heads if "_" in h], heads
    texts = [str(c.value) for ws in (book["Summary"], book["Inputs"]) for row in ws.iter_rows()
             for c in row if isinstance(c.value, str)]
    assert not [t for t in texts if "frozen" in t.lower() or "docs/" in t]


def test_the_summary_counts_retrieval_servers_in_the_right_number(books: Any) -> None:
    """inputs/rag-knowledge-base.yaml: the Summary sheet's line for each embedding or
    reranking node group is a formula over the Retrieval sheet's counts; its unit follows
    the live count ("1 × … GPU", "8 × … GPUs"), where it used to read "1 GPUs"."""
    from llmsizer.documents.workbook import summary

    r = _result("rag-knowledge-base")
    group = next(g for g in r.plan.retrieval_groups if not g.shares_with)
    cached = [c.value for row in books("rag-knowledge-base", True)["Summary"].iter_rows()
              for c in row if isinstance(c.value, str) and "replicas for" in c.value]
    assert any(f"{group.gpus_purchased} × " in v and " GPUs): " in v for v in cached)

    from types import SimpleNamespace

    class _Book:  # the attributes _retrieval_words reads: a bought plan (round 19: rented words)
        catalog = load_catalog()
        r = SimpleNamespace(deployment=SimpleNamespace(recommended="on_prem"))

    one = group.model_copy(update={"nodes": 1, "gpus_purchased": 1, "replicas": 1})
    formula, text = summary._retrieval_words(_Book(), 1, one)  # type: ignore[arg-type]
    assert " node (1 × " in text and " GPU): 1 replica for " in text
    assert 'IF(' in formula and '"GPU"' in formula and '"GPUs"' in formula


def test_a_count_of_one_reads_singular_in_every_unit_the_formulas_use() -> None:
    """The Plan sheet printed "1 pools" (a node group with one pool): every plural noun a
    calculation's unit names ("pools", "ranks", "GPUs") shows 1 in the singular. Not nouns:
    ms and params; months and years show a decimal ("1.0 years")."""
    import re

    from llmsizer.documents.workbook.formats import number_format
    from llmsizer.model.calculations import CALCULATIONS, INPUTS
    from llmsizer.model.calculations.plan import PLAN_STAGES

    units = ({c.unit for c in CALCULATIONS} | {i.unit for i in INPUTS}
             | {c.unit for _stage, calcs in PLAN_STAGES for c in calcs})
    plural = sorted(u for u in units if re.fullmatch(r"[A-Za-z-]+s", u)
                    and u not in ("ms", "params", "months", "years"))
    assert {"pools", "GPUs", "nodes", "replicas"} <= set(plural)
    for unit in plural:
        fmt = number_format(unit, (1.0, 2.0), "USD")
        assert fmt.startswith('[=1]0" ') and f'" {unit}"' in fmt, (unit, fmt)


@pytest.mark.parametrize("account", ["enterprise-multi", "helpdesk-population"])
def test_every_printed_label_fits_its_column(books: Any, account: str) -> None:
    """LibreOffice's print cut a label longer than column B at the unit column ("Headroom
    with one node down, before a spare nod" on Plan, "Cached tokens attended per sequence
    per ste" on Throughput): B holds its longest label at the ~1.15 characters of plain text
    a unit of width printed."""
    wb = books(account)
    for name in ("Plan", "KV", "Throughput", "Nodes", "TCO"):
        ws = wb[name]
        width = ws.column_dimensions["B"].width
        # a label with its unit beside it (a title or section heading runs on over empty cells)
        labels = [str(c.value) for c in ws["B"] if isinstance(c.value, str)
                  and ws.cell(c.row, 3).value]
        assert len(labels) > 10, name
        long = [t for t in labels if len(t) / 1.15 > width]
        assert long == [], (name, width, long[:3])


def test_the_scenarios_note_wraps_over_the_printed_table(books: Any) -> None:
    """The note under the Scenarios table was one line in column A and ran off the printed
    page ("... It keeps the propo"): it is merged over the table's printed columns, wrapped,
    its row tall enough for its lines."""
    ws = books("helpdesk-population")["Scenarios"]
    # a formula where the cloud-tier rows are shown (it says when they repeat the proposal)
    cell = next(c for c in ws["A"] if "The grouped columns" in str(c.value or ""))
    merged = next(m for m in ws.merged_cells.ranges if cell.coordinate in m)
    last = str(ws.print_area).split(":")[-1].split("$")[1]  # 'Scenarios'!$A$1:$H$26
    assert get_column_letter(merged.max_col) == last and merged.min_row == merged.max_row
    assert cell.alignment.wrap_text
    assert ws.row_dimensions[cell.row].height >= 2 * 12


def test_plan_header_rows_are_tall_enough_for_their_names(books: Any) -> None:
    """The Plan sheet's platform row was 30 pt, two lines: LibreOffice's print cut "Dell
    PowerEdge XE9680 (8x H100 / H200 SXM5, 6U air-cooled)" (57 characters in a 24-wide
    bold column, three lines) after "6U"."""
    ws = books("helpdesk-population")["Plan"]
    row = next(c.row for c in ws["B"] if c.value == "Platform")
    name = str(ws.cell(row, 4).value)
    assert name.startswith("Dell PowerEdge XE9680") and len(name) > 50
    assert ws.row_dimensions[row].height >= 3 * 11 * 1.25


def test_summary_charts_start_at_zero_with_level_labels(tmp_path: Path) -> None:
    """LibreOffice drew Adventure Works' agent-platform chart with its option names turned
    45° (the plot squeezed to a strip) and its cost axis from $196,000 (a 1 % gap read as
    3×): every Summary chart's cost axis starts at 0 and its category labels stay level."""
    import re
    import zipfile

    path = tmp_path / "aw.xlsx"
    write_workbook(_result("enterprise-multi"), path)
    with zipfile.ZipFile(path) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    assert len(charts) == 3  # one per workload
    for xml in charts:
        cat, val = xml.split("<c:catAx>")[1], xml.split("<c:valAx>")[1]
        assert re.search(r'<a:bodyPr rot="0"', cat.split("</c:catAx>")[0]), "labels turned"
        assert '<c:min val="0"/>' in val.split("</c:valAx>")[0], "axis not from 0"


def test_no_printed_count_of_one_reads_in_the_plural(tmp_path: Path) -> None:
    """Wide World Importers (rag-knowledge-base) as LibreOffice prints every sheet: a count
    of one reads "1 GPU", "1 token/step", never "1 GPUs". The Catalog sheet printed "1 GPUs"
    per cloud instance and per MGX node (its formats show 0 as a dash and dropped the
    singular), the Inputs sheet "1 tokens/step" (an acceptance length of 1: off)."""
    import re
    import subprocess

    from support.libreoffice import to_pdf

    from llmsizer.documents.workbook.formats import _PLURALS

    pdf = to_pdf(_path("rag-knowledge-base", tmp_path), tmp_path / "pdf", force_recalc=False)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout
    plural = "|".join(re.escape(p) for p in _PLURALS)
    found = re.findall(rf"(?<![\d.,])1 (?:{plural})(?![\w/-])", text)
    assert not found, found
    assert re.search(r"(?<![\d.,])1 GPU(?![\w/-])", text)  # the singular is printed
    assert "1 token/step" in text


def test_one_gpu_summary_reads_in_the_singular_and_a_long_name_fits_its_header(
        tmp_path: Path) -> None:
    """x-docs review, an unshipped account (tests/data/one-gpu-long-name.yaml): the Summary's
    recommendation said "server nodes (1 × NVIDIA L4 GPUs)", and the 80-character workload
    name's further lines printed white over the Model row (the header row kept 15 pt)."""
    from support.libreoffice import recalculated_values

    from llmsizer.documents.workbook.formats import wrapped_height

    result = size(load(ROOT / "tests" / "data" / "one-gpu-long-name.yaml"))
    (group,) = result.plan.node_groups
    assert (group.nodes, group.gpus_purchased) == (1, 1)
    path = tmp_path / "one.xlsx"
    write_workbook(result, path)
    ws = openpyxl.load_workbook(path)["Summary"]
    name = result.workloads[0].name
    (head,) = [c for row in ws.iter_rows() for c in row if c.value == name]
    # three lines of bold 11 pt in the 30-character column, as the rows below are sized
    assert ws.row_dimensions[head.row].height == wrapped_height(name, 30 * 0.85, 11) >= 40
    cat = load_catalog()
    want = (f"1 × {cat.platforms[group.platform].name} node (1 × {cat.gpus[group.gpu].name} "
            "GPU): 1 replica of TP1 (BF16 weights, BF16 KV cache).")
    cached = openpyxl.load_workbook(path, data_only=True)["Summary"]
    (cell,) = [c for row in cached.iter_rows() for c in row
               if isinstance(c.value, str) and " GPU): " in c.value]
    assert cell.value == want
    assert ws[cell.coordinate].data_type == "f"  # the words follow the Plan sheet's counts
    assert recalculated_values(path, tmp_path / "lo")["Summary"][cell.coordinate] == want


def test_a_retrieval_workload_no_gpu_serves_is_named_on_the_summary(tmp_path: Path) -> None:
    """x-docs review: a reranker no GPU meets has no node group, so no Summary or Retrieval
    column, and the workbook never named it; the Summary now says so above its table, in the
    proposal's words (tests/data/rag-reranker-unmet.yaml)."""
    result = size(load(ROOT / "tests" / "data" / "rag-reranker-unmet.yaml"))
    (rerank,) = [w for w in result.retrieval if w.kind == "rerank"]
    assert rerank.best is None
    path = tmp_path / "rag.xlsx"
    write_workbook(result, path)
    wb = openpyxl.load_workbook(path)
    texts = [c.value for ws in wb.worksheets for row in ws.iter_rows() for c in row
             if isinstance(c.value, str) and "Passage scoring" in c.value]
    assert len(texts) == 1, texts
    ws = wb["Summary"]
    (cell,) = [c for row in ws.iter_rows(max_row=5) for c in row if c.value == texts[0]]
    assert cell.row == 4 and any(str(m).startswith("A4:") for m in ws.merged_cells.ranges)
    h100 = next(o for o in rerank.options if o.gpu == "h100-sxm")
    ms = f"{float(h100.values['latency_p95_s']) * 1000:,.0f} ms"
    assert texts[0].startswith("Not in the plan or the totals: Passage scoring "
                               "(Qwen3-Reranker 4B, reranking). No candidate GPU")
    assert f"NVIDIA H100 SXM 80GB, answers in {ms}" in texts[0]


def test_the_summary_names_the_nearest_miss_in_words(tmp_path: Path) -> None:
    """x-docs review: an unmet workload's Summary cell carried the sizing's advice with the
    option id in it ("Best achievable: h100-sxm/fp8/kv-fp8/tp8")."""
    result = size(load(ROOT / "tests" / "data" / "unmeetable-targets.yaml"))
    (w,) = result.workloads
    path = tmp_path / "none.xlsx"
    write_workbook(result, path)
    ws = openpyxl.load_workbook(path)["Summary"]
    (cell,) = [c for row in ws.iter_rows() for c in row
               if isinstance(c.value, str) and c.value.startswith("No feasible option.")]
    assert not any(o.id in cell.value for o in w.options)
    assert "(8 × NVIDIA H100 SXM 80GB, FP8 weights, FP8 KV cache, one request at a time)" in cell.value


def test_calculation_sheets_show_a_long_workload_name_whole(tmp_path: Path) -> None:
    """x-docs review: on KV, Throughput, Nodes and TCO the workload row kept 30 pt, so an
    80-character name printed its first two lines ("Assistant de commande") in its column;
    the row now grows to the name wrapped, as the option row below it does."""
    from llmsizer.documents.workbook.formats import wrapped_height

    result = size(load(ROOT / "tests" / "data" / "one-gpu-long-name.yaml"))
    name = result.workloads[0].name
    path = tmp_path / "long.xlsx"
    write_workbook(result, path)
    wb = openpyxl.load_workbook(path)
    for sheet in ("KV", "Throughput", "Nodes", "TCO"):
        ws = wb[sheet]
        (head,) = {c.row for row in ws.iter_rows(max_row=8) for c in row if c.value == name}
        width = ws.column_dimensions[get_column_letter(
            next(c.column for c in ws[head] if c.value == name))].width
        need = wrapped_height(name, width * 0.75, 11)
        # (the width read back is the written one plus the pixel padding: a point of slack)
        assert need > 60 and ws.row_dimensions[head].height >= need - 1, sheet


def test_the_summary_says_when_the_costs_leave_unpriced_gpus_out(tmp_path: Path) -> None:
    """x-docs review: rented A10s (no purchase price) gave the Summary a capital cost of the
    servers and network alone, unremarked, where the proposal's cover now says so
    (tests/data/rent-unpriced-a10.yaml; since the plan is the cheapest to rent, one A100 80GB
    PCIe at USD 20,037 a year rather than two A10 at 23,411: tests/test_cloud_plan.py)."""
    result = size(load(ROOT / "tests" / "data" / "rent-unpriced-a10.yaml"))
    best = result.workloads[0].best
    assert best is not None and best.gpu == "a100-80gb-pcie" and not best.priced
    path = tmp_path / "rent.xlsx"
    write_workbook(result, path)
    ws = openpyxl.load_workbook(path)["Summary"]
    assert ws["A4"].value == ("The capital and on-premises figures leave out the GPUs: "
                              "NVIDIA A100 80GB PCIe has no purchase price.")
    shipped = tmp_path / "example.xlsx"  # a priced plan: no such line
    write_workbook(size(load(ROOT / "inputs" / "example.yaml")), shipped)
    assert openpyxl.load_workbook(shipped)["Summary"]["A4"].value is None
