"""The Summary's charts: per workload, the annual cost of each option with a column, as a
horizontal bar chart over a small table on the Summary itself (the option in words and
server, then its on-premises and cloud cost as references to the TCO sheet).

The bars' labels are the table's cells beside the figures: the Options sheet names the GPU and
precisions in column B but the server in column E, so a chart over it showed three "1 × NVIDIA
H100 SXM 80GB, FP8 weights, FP8 KV cache" bars that differed only by server under one label.

Printing: LibreOffice cut the first chart across a page break. The charts start on a new page;
a manual row break goes before a chart (with its title) that would not fit what is left of a
page, and before a table row (the head with its first row) that would not. A chart is drawn
shorter (never under about 30 pixels an option) when that keeps its table on its page. Planned
at the Summary's print scale (summary_scale: the table on one page, the columns across) with
Calibri: a wider fallback font prints smaller, so more fits than planned, never less.
"""

from __future__ import annotations

import math
from typing import Any

from ...model.names import platform_words
from .book import Book
from .formats import _PAGE_CHARS, clean_text, number_format, unit_text, wrapped_height
from .rerun_check import label

__all__ = ["MAX_CHARTS", "chart_sections", "charts", "print_scale", "summary_scale"]

MAX_CHARTS = 12
# A4 landscape less the 0.4" side margins (book.finish), in pixels at 96 dpi.
_PAGE_WIDTH_PX = (11.69 - 0.8) * 96
# A4 landscape less the 0.6" top and bottom margins (the header and footer print inside
# them), less a little (points, at 100 %): kept short so a chart planned to fit never meets
# an automatic break.
_PAGE_HEIGHT_PT = 8.27 * 72 - 2 * 0.6 * 72 - 16
_ROW_PT = 15.0  # the default row height (XlsxWriter)
_LABEL_WIDTH = 44 + 12  # columns A and B's width in characters (summary.py): the words
# Chart height: title and legend, the value axis and its title, and per option two bars
# beside a two- or three-line label (pixels).
_CHART_FRAME_PX = 110
_PER_OPTION_PX = 40
_LEAST_PER_OPTION_PX = 30  # two bars beside a label of two or three 8-point lines
# The Summary never prints smaller than this (%): below it a long table runs on to a page
# more instead (11-point text prints at about 6 points).
_LEAST_SCALE = 55.0
Sections = list[tuple[Any, list[str]]]  # per charted workload: it and its options' words


def _px(width: float) -> int:
    """A column ``width`` (characters) in pixels, as XlsxWriter converts it (Calibri 11)."""
    return int(width * 7 + 0.5) + 5 if width >= 1 else int(width * 12 + 0.5)


def print_scale(widths: list[float], repeated: float) -> float:
    """The print scale (%) at which formats.fit_width fits columns of ``widths`` characters
    (``repeated`` printed again on each page across) to the page width, with Calibri's 7-pixel
    characters: a wider fallback font prints smaller, so more rows fit than planned."""
    total = sum(widths)
    pages = max(1, math.ceil((total - repeated) / (_PAGE_CHARS - repeated)))
    per_page = sum(_px(w) for w in widths) / pages + (_px(repeated) if pages > 1 else 0)
    return min(100.0, 100 * _PAGE_WIDTH_PX / per_page)


def summary_scale(sections: Sections, ws: Any, rows: int, widths: list[float],
                  repeated: float) -> int:
    """The Summary's print scale (%): its columns across the page (as fit-to-width would), its
    first ``rows`` rows (the table, up to the re-run check) down one page and each chart, at
    its least height, with its table on a page of its own; never under _LEAST_SCALE.
    Fit-to-width alone printed a one-workload table at 100 % over two pages and a chart's
    table over two more, and LibreOffice ignores the charts' manual breaks under
    fit-to-height (measured: one page, the chart cut off). Row heights are the ones set on the
    sheet (15 points otherwise), plus a tenth for rows LibreOffice grows on opening."""
    height = sum(ws.row_sizes.get(i, [_ROW_PT])[0] or _ROW_PT for i in range(rows)) * 1.1
    for _, words in sections:
        least = _CHART_FRAME_PX + _LEAST_PER_OPTION_PX * len(words)
        height = max(height, (math.ceil(least / (_ROW_PT * 4 / 3)) + 4) * _ROW_PT
                     + _table_height(words))
    down = 100 * _PAGE_HEIGHT_PT / height
    return int(max(_LEAST_SCALE, min(print_scale(widths, repeated), down)))


def _table_height(words: list[str]) -> float:
    """Points of a chart's table: its two-line head and a row per option."""
    return 2 * _ROW_PT + sum(wrapped_height(t, _LABEL_WIDTH, 11) for t in words)


def chart_sections(book: Book) -> Sections:
    """Per charted workload (at most MAX_CHARTS): the workload and its feasible options'
    words, in the option columns' order (none without the cost rows)."""
    lay = book.lay
    if "annual_cost_onprem" not in lay.calc_rows or "annual_cost_cloud" not in lay.calc_rows:
        return []
    out: Sections = []
    for k, w in enumerate(book.r.workloads, start=1):
        cols = [c for c in lay.columns if c.k == k and c.option.feasible]
        if cols and len(out) < MAX_CHARTS:
            out.append((w, [_words(book, c.option) for c in cols]))
    return out


def _words(book: Book, o: Any) -> str:
    """The option as the proposal's options table names it: its words (GPUs of one replica ×
    GPU, precisions, layout) and, on the next line, its server."""
    return f"{label(book, o)}\n{clean_text(platform_words(book.catalog.platforms, o.platform))}"


def charts(book: Book, ws: Any, row: int, sections: Sections, widths: list[float],
           scale: float) -> None:
    """From ``row`` on: per workload a title, its chart and the table the chart reads. Columns
    A (words), C and D (costs) exist on every Summary (C: the first workload, D: at least the
    total column). ``sections``: chart_sections; ``widths``: the printed columns' widths (the
    chart spans them); ``scale``: the sheet's print scale (%)."""
    lay = book.lay
    f = book.f
    cur = book.cur
    money = number_format("currency", [], cur)
    page = _PAGE_HEIGHT_PT * 100 / scale  # points of the sheet on one printed page
    # within the printed columns (it is inserted 2 pixels in): a chart a few pixels past the
    # last column printed a page more across, the repeated columns beside a sliver of chart
    width_px = min(sum(_px(w) for w in widths) - 8, int(0.97 * _PAGE_WIDTH_PX * 100 / scale))
    breaks: list[int] = []
    used = page  # the charts start on a new page
    for w, words in sections:
        k = book.r.workloads.index(w) + 1
        cols = [c for c in lay.columns if c.k == k and c.option.feasible]
        # the chart and its title within one page (a spare row below the chart), shorter
        # when that keeps its table on the page too
        table = _table_height(words)
        chart_px = min(_CHART_FRAME_PX + _PER_OPTION_PX * len(cols),
                       int((page - 3 * _ROW_PT) * 4 / 3))
        chart_px = min(chart_px, max(_CHART_FRAME_PX + _LEAST_PER_OPTION_PX * len(cols),
                                     int((page - 4 * _ROW_PT - table) * 4 / 3)))
        chart_rows = math.ceil(chart_px / (_ROW_PT * 4 / 3)) + 1
        heights = ([_ROW_PT] * (1 + chart_rows) + [2 * _ROW_PT]
                   + [wrapped_height(t, _LABEL_WIDTH, 11) for t in words])
        at = 1 + chart_rows  # the table's head: kept with its first row
        for i, h in enumerate(heights):
            need = h + heights[at + 1] if i == at else h
            if used + (sum(heights[:at]) if i == 0 else need) > page and (i == 0 or i >= at):
                breaks.append(row + i)
                used = 0.0
            used += h
        title, head = row, row + 1 + chart_rows
        # The title is a reference to a text cell: XlsxWriter reads a title string that
        # contains "<x>!A1" as a cell reference, so untrusted text never goes in directly.
        ws.write_string(title, 0, f"Annual cost by option: {clean_text(w.name)}"[:250],
                        f("label_bold"))
        # the option's words over columns A and B (the unit in the heads): fewer lines each,
        # so the table more often prints on its chart's page
        ws.merge_range(head, 0, head, 1, "", f("header"))
        ws.write_string(head, 0, "Option (GPUs of one replica × GPU, precisions) and server",
                        f("header"))
        per_year = unit_text("currency/yr", cur)
        ws.write_string(head, 2, f"On-prem cost per year ({per_year})", f("header"))
        ws.write_string(head, 3, f"Cloud cost per year ({per_year})", f("header"))
        ws.set_row(head, 2 * _ROW_PT)
        for i, (c, text) in enumerate(zip(cols, words, strict=True), start=head + 1):
            ws.merge_range(i, 0, i, 1, "", f("wrap"))
            ws.write_string(i, 0, text, f("wrap"))
            for j, name in ((2, "annual_cost_onprem"), (3, "annual_cost_cloud")):
                ws.write_formula(i, j, f"={lay.cell(name, c)}", f("calc", money),
                                 float(c.option.values.get(name) or 0.0))
            ws.set_row(i, heights[i - row])
        first, last = head + 1, head + len(cols)
        chart = book.wb.add_chart({"type": "bar"})
        for j, color in ((2, "#1F3864"), (3, "#C55A11")):
            chart.add_series({
                "name": ["Summary", head, j],
                "categories": ["Summary", first, 0, last, 0],
                "values": ["Summary", first, j, last, j],
                "fill": {"color": color},
            })
        chart.set_title({"name": ["Summary", title, 0], "name_font": {"size": 11}})
        # bars from 0 (LibreOffice started the axis at $196,000: a 1 % gap read as 3x); the
        # options top to bottom in the table's order, the cost axis below them
        chart.set_x_axis({"num_format": money, "major_gridlines": {"visible": True}, "min": 0,
                          "name": f"Cost per year ({cur})", "name_font": {"size": 9}})
        chart.set_y_axis({"reverse": True, "crossing": "max",
                          "num_font": {"size": 8, "rotation": 0},
                          "name": "Option and server", "name_font": {"size": 9}})
        chart.set_legend({"position": "bottom"})
        chart.set_size({"width": width_px, "height": chart_px})
        ws.insert_chart(title + 1, 0, chart, {"x_offset": 2, "y_offset": 4})
        row = last + 2
        used += _ROW_PT
    if breaks:
        ws.set_h_pagebreaks(breaks)
