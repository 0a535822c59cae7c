"""Long terminal tables, drawn as rich draws them but in a fraction of the time (issue 25).

`llmsizer size` on 50 workloads with the hardware left out lists ~16,500 options; rich lays
out every cell through its generic machinery (~0.7 ms a row, 11 s of the 17 s run). Here rich
lays out a *proxy* table: the header and, per column, the row with the widest cell and the
row with the longest word. A column's width depends only on those two (its measurement is
the maximum over its cells), so the proxy's widths are the table's. The body rows are then
joined as plain text: each one-line cell padded and justified to its width, and each cell of
a wrapping column ("why not") rendered by rich itself (once per distinct text).

Exactness is checked every time: the proxy's own body rows, drawn this way, must equal what
rich drew for them, or the whole table falls back to rich. Only a console without colour
(a pipe or a file: no styles to reproduce) takes this path; tests compare both outputs.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

# Below this many rows rich's own drawing is fast enough (and the proxy would be most of it).
MIN_ROWS = 40


def print_table(table: Table, con: Console) -> None:
    """``con.print(table)``, the same characters, faster for long tables."""
    lines = fast_lines(table, con) if len(table.rows) >= MIN_ROWS else None
    if lines is None:
        con.print(table)
    else:
        con.out("\n".join(lines), highlight=False)


def _plain(cell: Any, breaks: bool = False) -> str | None:
    """The text of a cell that renders as itself (no markup, emoji codes, styles, or line
    breaks unless ``breaks``: a wrapping column's cells are drawn by rich, line by line)."""
    if isinstance(cell, str):
        text = cell
        if "[" in text or ":" in text:  # markup or an emoji code: rich would change it
            return None
    elif isinstance(cell, Text) and not cell.spans and not cell.style:
        text = cell.plain
    else:
        return None
    return text if (text.replace("\n", "") if breaks else text).isprintable() else None


def _eligible(table: Table, con: Console) -> bool:
    top, _right, bottom, _left = table.padding
    return (con.color_system is None and table.box is not None and table.show_header
            and not table.show_footer and not table.show_lines and not table.row_styles
            and not table.leading and not table.expand and table.width is None
            and table.min_width is None and not table.caption and top == 0 and bottom == 0
            and not table.collapse_padding and all(
                c.justify in ("left", "right") and not c.style and c.vertical == "top"
                for c in table.columns))


def fast_lines(table: Table, con: Console) -> list[str] | None:
    """The table's lines as ``con.print`` draws them, or None when this path cannot promise
    the same characters (the caller then lets rich draw it)."""
    if not _eligible(table, con):
        return None
    texts: list[list[str]] = []
    for column in table.columns:
        found = [_plain(c, breaks=not column.no_wrap) for c in column._cells]
        if any(t is None for t in found):
            return None
        texts.append([t or "" for t in found])
    rows = len(table.rows)
    if rows == 0:
        return None
    pick: set[int] = set()
    for col in texts:
        pick.add(max(range(rows), key=lambda i: max(map(cell_len, col[i].split("\n")))))
        pick.add(max(range(rows), key=lambda i: max((cell_len(w) for w in col[i].split()),
                                                     default=0)))
    sample = sorted(pick)
    proxy = copy.copy(table)
    proxy.columns = [dataclasses.replace(c, _cells=[c._cells[i] for i in sample])
                     for c in table.columns]
    proxy.rows = [table.rows[i] for i in sample]
    options = con.options
    drawn = "".join(s.text for s in con.render(proxy, options)).split("\n")
    if drawn[-1] != "":
        return None
    drawn.pop()
    widths = proxy._calculate_column_widths(
        con, options.update_width(options.max_width - proxy._extra_width))
    table_width = sum(widths) + proxy._extra_width
    body_options = options.update(width=table_width, highlight=table.highlight, height=None)
    draw = _RowDrawer(table, con, body_options, widths)
    mine = draw.rows([[col[i] for col in texts] for i in sample])
    if mine is None:
        return None
    bottom = 1 if table.show_edge else 0
    head = len(drawn) - len(mine) - bottom
    if head < 0 or drawn[head:len(drawn) - bottom] != mine:
        return None  # not what rich drew: let rich draw the table
    body = draw.rows([[col[i] for col in texts] for i in range(rows)])
    if body is None:
        return None
    lines = [*drawn[:head], *body, *drawn[len(drawn) - bottom:]]
    if table_width > con.width:  # print crops every line to the console's width
        lines = [line if cell_len(line) <= con.width else set_cell_size(line, con.width)
                 for line in lines]
    return lines


class _RowDrawer:
    """Body rows of one table at fixed column widths, as :meth:`Table._render` draws them."""

    def __init__(self, table: Table, con: Console, options: ConsoleOptions,
                 widths: list[int]) -> None:
        self.table, self.con, self.options, self.widths = table, con, options, widths
        assert table.box is not None  # _eligible
        self.box = table.box.substitute(options, safe=table.safe_box if table.safe_box
                                        is not None else con.safe_box)
        self.pads = [self._pad(i) for i in range(len(table.columns))]
        self.wrapped: dict[tuple[int, str], list[str]] = {}

    def _pad(self, index: int) -> tuple[int, int]:
        """Left and right padding of a body cell in column ``index`` (Table._get_cells)."""
        _top, right, _bottom, left = self.table.padding
        if not self.table.pad_edge:
            if index == 0:
                left = 0
            if index == len(self.table.columns) - 1:
                right = 0
        return left, right

    def _cell(self, index: int, text: str) -> list[str] | None:
        column, width = self.table.columns[index], self.widths[index]
        left, right = self.pads[index]
        if column.no_wrap:
            inner = width - left - right
            size = cell_len(text)
            if size > inner:
                return None  # rich would crop it with an ellipsis
            gap = " " * (inner - size)
            body = text + gap if column.justify == "left" else gap + text
            return [" " * left + body + " " * right]
        key = (index, text)
        inner = width - left - right
        parts = text.split("\n")
        if key not in self.wrapped and column.justify in ("left", "right") and all(
                cell_len(line) <= inner and line == line.rstrip() for line in parts):
            # every line fits: rich draws each as it is, padded (no wrapping to compute)
            self.wrapped[key] = [
                " " * left + (line + " " * (inner - cell_len(line)) if column.justify == "left"
                              else " " * (inner - cell_len(line)) + line) + " " * right
                for line in parts]
        if key not in self.wrapped:
            cell_options = self.options.update(
                width=width, justify=column.justify, no_wrap=column.no_wrap,
                overflow=column.overflow, height=None, highlight=column.highlight)
            lines = self.con.render_lines(Padding(Text(text), (0, right, 0, left)),
                                          cell_options)
            self.wrapped[key] = ["".join(s.text for s in line) for line in lines]
        return self.wrapped[key]

    def rows(self, rows: list[list[str]]) -> list[str] | None:
        box, edge = self.box, self.table.show_edge
        out: list[str] = []
        for n, row in enumerate(rows):
            cells: list[list[str]] = []
            for i, text in enumerate(row):
                cell = self._cell(i, text)
                if cell is None:
                    return None
                cells.append(cell)
            height = max(len(c) for c in cells)
            last = n == len(rows) - 1
            left, right, divider = ((box.foot_left, box.foot_right, box.foot_vertical) if last
                                    else (box.mid_left, box.mid_right, box.mid_vertical))
            for line in range(height):
                parts = [c[line] if line < len(c) else " " * w
                         for c, w in zip(cells, self.widths, strict=True)]
                text = divider.join(parts)
                out.append(f"{left}{text}{right}" if edge else text)
        return out

