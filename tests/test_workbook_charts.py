"""The Summary's cost charts as finance prints them (LibreOffice, default profile): each chart
whole on one page, bars labelled in the proposal's words with their server, axes titled with
units, every chart range a reference to cells on the sheet (what Excel reads).

Seen before: the first chart of Adventure Works (enterprise-multi) split over pages 1 and 2,
and its category labels came from the Options sheet's column B, which names GPU and precisions
but not the server, so three "1 × NVIDIA H100 SXM 80GB, FP8 weights, FP8 KV cache" bars
(Dell XE8640, Dell XE9680, DGX H100) read alike.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from support.libreoffice import to_pdf

from llmsizer.documents.proposal.format import option_label
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.model.names import platform_words
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Option, Result, WorkloadResult

openpyxl: Any = importlib.import_module("openpyxl")

ACCOUNTS = ("example", "rag-knowledge-base", "enterprise-multi")


@cache
def _result(account: str) -> Result:
    return size(load(ROOT / "inputs" / f"{account}.yaml"))


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("charts")
    out = {}
    for account in ACCOUNTS:
        out[account] = tmp / f"{account}.xlsx"
        write_workbook(_result(account), out[account])
    return out


def _labelled(w: WorkloadResult) -> dict[str, Option]:
    """A workload's feasible options by the words the proposal uses: option_label, then the
    server on the next line as the proposal's options table has it."""
    cat = load_catalog()
    return {option_label(cat.gpus[o.gpu].name, o.tp, o.weight_precision, o.kv_precision,
                         o.values) + "\n" + platform_words(cat.platforms, o.platform): o
            for o in w.options if o.feasible}


def _charts(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as z:
        names = sorted((n for n in z.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", n)),
                       key=lambda n: int(re.sub(r"\D", "", n)))
        return [z.read(n).decode() for n in names]


def _range(ref: str) -> tuple[str, int, int]:
    """'Summary!$A$67:$A$78' -> ('A', 67, 78)."""
    m = re.fullmatch(r"Summary!\$([A-Z]+)\$(\d+)(?::\$\1\$(\d+))?", ref)
    assert m, ref
    return m.group(1), int(m.group(2)), int(m.group(3) or m.group(2))


@pytest.mark.parametrize("account", ACCOUNTS)
def test_chart_bars_are_named_with_gpu_precisions_and_server(books: dict[str, Path],
                                                             account: str) -> None:
    """Each bar's label is a Summary cell: the option as the proposal names it (option_label)
    and, on the next line, its server as the proposal's options table does (platform_words);
    no two bars of one chart read alike, and no option id shows."""
    r = _result(account)
    ws = openpyxl.load_workbook(books[account])["Summary"]
    charts = _charts(books[account])
    feasible = [w for w in r.workloads if any(o.feasible for o in w.options)]
    assert len(charts) == len(feasible)
    for xml, w in zip(charts, feasible, strict=True):
        cats = set(re.findall(r"<c:cat><c:strRef><c:f>([^<]+)</c:f>", xml))
        assert len(cats) == 1, cats
        col, first, last = _range(cats.pop())
        assert col == "A"
        labels = [str(ws.cell(row, 1).value) for row in range(first, last + 1)]
        assert len(set(labels)) == len(labels), labels
        ids = {o.id for o in w.options}
        by_label = _labelled(w)
        for text in labels:
            assert text in by_label, text  # the proposal's words, with the server
            assert not any(i in text for i in ids)


def test_the_three_h100_bars_of_company_wide_chat_name_their_servers(
        books: dict[str, Path]) -> None:
    """The case seen: three 1 × H100 SXM FP8 options on three servers, one label before."""
    ws = openpyxl.load_workbook(books["enterprise-multi"])["Summary"]
    _, first, last = _range(re.findall(r"<c:cat><c:strRef><c:f>([^<]+)</c:f>",
                                       _charts(books["enterprise-multi"])[0])[0])
    h100 = [str(ws.cell(row, 1).value).split("\n")[1] for row in range(first, last + 1)
            if str(ws.cell(row, 1).value).startswith(
                "1 × NVIDIA H100 SXM 80GB, FP8 weights, FP8 KV cache\n")]
    assert sorted(h100) == ["Dell PowerEdge XE8640",
                            "Dell PowerEdge XE9680 (8x H100 / H200 SXM5, 6U air-cooled)",
                            "NVIDIA DGX H100"], h100


@pytest.mark.parametrize("account", ACCOUNTS)
def test_chart_ranges_are_cells_and_the_values_follow_the_tco_sheet(books: dict[str, Path],
                                                                    account: str) -> None:
    """Excel reads a chart's data from cell references (no literal arrays); the values are
    the Summary's cells, which are references to the TCO sheet's cost rows, cached with the
    engine's figures; the cost axis is titled with its currency and starts at 0, the
    category axis is titled."""
    r = _result(account)
    wb = openpyxl.load_workbook(books[account])
    values = openpyxl.load_workbook(books[account], data_only=True)["Summary"]
    ws = wb["Summary"]
    for xml, w in zip(_charts(books[account]),
                      [w for w in r.workloads if any(o.feasible for o in w.options)],
                      strict=True):
        assert "<c:strLit>" not in xml and "<c:numLit>" not in xml
        refs = re.findall(r"<c:f>([^<]+)</c:f>", xml)
        assert refs and all(ref.startswith("Summary!$") for ref in refs), refs
        series = re.findall(r"<c:val><c:numRef><c:f>([^<]+)</c:f>", xml)
        assert [_range(s)[0] for s in series] == ["C", "D"]
        for s, name in zip(series, ("annual_cost_onprem", "annual_cost_cloud"), strict=True):
            col, first, last = _range(s)
            for row in range(first, last + 1):
                assert re.fullmatch(r"=TCO![A-Z]+\d+", str(ws[f"{col}{row}"].value))
                o = _labelled(w)[str(ws[f"A{row}"].value)]  # the bar's own option
                assert values[f"{col}{row}"].value == float(o.values.get(name) or 0.0)
        val = xml.split("<c:valAx>")[1].split("</c:valAx>")[0]
        assert '<c:min val="0"/>' in val
        assert f"<a:t>Cost per year ({r.account.currency})</a:t>" in val
        assert "<a:t>Option and server</a:t>" in xml.split("<c:catAx>")[1].split("</c:catAx>")[0]


def test_libreoffice_prints_each_chart_whole_on_one_page(books: dict[str, Path],
                                                          tmp_path: Path) -> None:
    """LibreOffice, default profile, -> PDF: each chart's title (the cell above it and the
    chart's own) lands on one page, and on that page its cost axis ("$0" at the origin, then
    the axis title) lies inside the printed body, above the 0.6" bottom margin. The old first
    chart ran on past the body: its "$0" sat in the margin (y 552-561 of 595 pt, clipped)
    and the rest of the chart printed on page 2."""
    pdf = to_pdf(books["enterprise-multi"], tmp_path, force_recalc=False)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout
    boxes = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True,
                           capture_output=True, text=True).stdout
    pages = text.split("\f")
    words = [re.findall(r'yMax="([\d.]+)">([^<]*)</word>', p) for p in boxes.split("<page ")[1:]]
    height = float(re.findall(r'<page width="[\d.]+" height="([\d.]+)"', boxes)[0])
    body = height - 0.6 * 72  # book.finish: 0.6" bottom margin
    for w in _result("enterprise-multi").workloads:
        title = f"Annual cost by option: {w.name}"
        on = [i for i, p in enumerate(pages) if title in p]
        assert len(on) == 1, (title, on)
        assert pages[on[0]].count(title) == 2, pages[on[0]][:2000]  # cell above, chart's own
        origin = [float(y) for y, t in words[on[0]] if t == "$0"]
        axis = [float(y) for y, t in words[on[0]] if t == "(USD)"]
        assert origin and max(origin) <= body, (title, origin, body)
        assert axis and max(axis) <= body, (title, axis, body)
        assert "Option and server" in pages[on[0]]


def _summary_pages(path: Path, tmp: Path) -> list[str]:
    """The text of each printed Summary page (LibreOffice, default profile, -> PDF; the
    page header names the sheet)."""
    pdf = to_pdf(path, tmp, force_recalc=False)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout
    return [p for p in text.split("\f") if p.strip().startswith("Summary")]


@pytest.mark.parametrize(("account", "pages"), [("helpdesk-population", 2),
                                                 ("rag-knowledge-base", 2),
                                                 ("enterprise-multi", 4)])
def test_the_summary_prints_its_table_on_one_page_and_each_chart_with_its_table(
        tmp_path: Path, account: str, pages: int) -> None:
    """The Summary as finance prints it (LibreOffice, default profile): the table, to its
    re-run check, on page 1, then per workload its chart with the whole table the chart
    reads on one page, no page more across. Fabrikam Services (helpdesk-population, one
    workload, 14 options) printed on 5 pages (fit to width at 100 %: the table ran onto page
    2, the chart's table onto pages 4 and 5), Wide World Importers (rag-knowledge-base) on
    3 and Adventure Works (enterprise-multi) on 6."""
    book = tmp_path / f"{account}.xlsx"
    write_workbook(_result(account), book)
    printed = _summary_pages(book, tmp_path)
    assert len(printed) == pages, [p[:300] for p in printed]
    assert "Re-run check" in printed[0] and "Annual cost by option" not in printed[0]
    ws = openpyxl.load_workbook(book)["Summary"]
    feasible = [w for w in _result(account).workloads if any(o.feasible for o in w.options)]
    assert len(feasible) == pages - 1
    for page, w in zip(printed[1:], feasible, strict=True):
        assert f"Annual cost by option: {w.name}" in page
        # the table's last row: the last option's words (their first line) on this page
        (title,) = [r for r in ws.iter_rows() if r[0].value == f"Annual cost by option: {w.name}"]
        head = next(r[0].row for r in ws.iter_rows(min_row=title[0].row)
                    if str(r[0].value).startswith("Option (GPUs"))
        last = head
        while ws.cell(last + 1, 1).value:
            last += 1
        assert last > head
        words = str(ws.cell(last, 1).value).split("\n")[0]
        assert " ".join(words.split()[:6]) in " ".join(page.split()), (w.name, words)


def test_the_summary_totals_print_whole_counts_without_decimals(tmp_path: Path) -> None:
    """Adventure Works (enterprise-multi): the workloads' shares of the plan are fractions
    (1.75 nodes), the account's totals whole (7 nodes, 28 GPUs). LibreOffice printed the
    totals in the shares' format: "7.00 nodes", "28.0 GPUs"."""
    r = _result("enterprise-multi")
    book = tmp_path / "enterprise-multi.xlsx"
    write_workbook(r, book)
    page = " ".join(_summary_pages(book, tmp_path)[0].split())
    nodes, gpus = int(r.totals.nodes), int(r.totals.gpus_purchased)
    assert (nodes, gpus) == (r.totals.nodes, r.totals.gpus_purchased) and nodes > 1
    assert f"{nodes} nodes" in page and f"{gpus} GPUs" in page
    assert f"{nodes}.00 nodes" not in page and f"{gpus}.0 GPUs" not in page
