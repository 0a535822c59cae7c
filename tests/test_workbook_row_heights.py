"""Every wrapped text cell of every shipped workbook shows whole: its row is at least as tall
as the lines the text takes in the font LibreOffice prints it with on a machine without
Calibri or Carlito (DejaVu Sans, the widest of the three; matplotlib ships it).

Measured in a LibreOffice 7.4 PDF export of the Wide World Importers workbook
(inputs/rag-knowledge-base.yaml): a column ``w`` characters wide printed ``w`` x the advance
of DejaVu Sans' "0" at 11 pt (30.71 -> 215 pt), a wrapped line of 11 pt text took the font's
ascent + descent (12.77 pt), and the Summary's re-run check, 8 lines in a 99 pt row, lost the
bottom of its last line. The lines here are counted by wrapping the words at their measured
widths, apart from the workbook's own estimate (``wrapped_height``), which counts characters.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

openpyxl: Any = importlib.import_module("openpyxl")
matplotlib: Any = importlib.import_module("matplotlib")
ImageFont: Any = importlib.import_module("PIL.ImageFont")

# the shipped accounts, and one with an 80-character workload name (tests/data)
SHIPPED = [*sorted((ROOT / "inputs").glob("*.yaml")),
           ROOT / "tests" / "data" / "one-gpu-long-name.yaml"]
_SCALE = 100  # fonts loaded at 100 x the point size: widths to 1/100 pt
_PADDING_PT = 3.0  # the cell's inner margins, left and right together
_FACES = {(False, False): "DejaVuSans", (True, False): "DejaVuSans-Bold",
          (False, True): "DejaVuSans-Oblique", (True, True): "DejaVuSans-BoldOblique"}


@cache
def _font(pt: float, bold: bool, italic: bool) -> Any:
    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / f"{_FACES[bold, italic]}.ttf"
    return ImageFont.truetype(str(ttf), size=round(pt * _SCALE))


def _width(text: str, pt: float, bold: bool = False, italic: bool = False) -> float:
    return float(_font(pt, bold, italic).getlength(text)) / _SCALE


def _line_pt(pt: float) -> float:
    ascent, descent = _font(pt, False, False).getmetrics()
    return float(ascent + descent) / _SCALE


def _lines(text: str, room: float, pt: float, bold: bool, italic: bool) -> int:
    """Lines of ``text`` wrapped at spaces in ``room`` points, as the spreadsheet wraps."""
    lines = 0
    for part in text.split("\n"):
        lines += 1
        line = ""
        for word in part.split(" "):
            trial = f"{line} {word}" if line else word
            if line and _width(trial, pt, bold, italic) > room:
                lines += 1
                line = word
            else:
                line = trial
    return lines


def _column_widths(ws: Any) -> tuple[dict[int, float], set[int]]:
    """Width (characters) and hidden state of each column, ranges of columns spread out."""
    widths: dict[int, float] = {}
    hidden: set[int] = set()
    for dim in ws.column_dimensions.values():
        if not dim.min:
            continue
        for col in range(dim.min, dim.max + 1):
            if dim.width:
                widths[col] = dim.width
            if dim.hidden:
                hidden.add(col)
    return widths, hidden


def short_rows(book: Path) -> list[str]:
    """Each visible wrapped text cell whose row is shorter than its measured lines."""
    wb = openpyxl.load_workbook(book, data_only=True)  # data_only: formulas' cached text
    digit = _width("0", 11)  # LibreOffice's width unit: the default font's digit
    short = []
    for ws in wb.worksheets:
        widths, hidden = _column_widths(ws)
        merged = {(m.min_row, m.min_col): m for m in ws.merged_cells.ranges}
        for row in ws.iter_rows():
            for cell in row:
                if (not isinstance(cell.value, str) or not cell.alignment.wrap_text
                        or cell.column in hidden or ws.row_dimensions[cell.row].hidden):
                    continue
                m = merged.get((cell.row, cell.column))
                cols = range(m.min_col, m.max_col + 1) if m else [cell.column]
                room = sum(widths.get(c, 8.43) * digit for c in cols) - _PADDING_PT
                pt = float(cell.font.sz or 11)
                lines = _lines(cell.value, room, pt, bool(cell.font.b), bool(cell.font.i))
                need = lines * _line_pt(pt)
                height = ws.row_dimensions[cell.row].height or 15.0
                if height < need:
                    short.append(f"{ws.title}!{cell.coordinate}: {lines} lines need "
                                 f"{need:.1f} pt, row {height} pt: {cell.value[:50]!r}")
    return short


def test_the_measure_reproduces_the_clipped_rerun_check() -> None:
    """The finding itself, as printed: 8 lines of the re-run check need 102 pt (99 cut it)."""
    text = ("Still the cheapest for this workload alone: 2 × NVIDIA H100 SXM 80GB, FP8 "
            "weights, FP8 KV cache on Dell PowerEdge XE8640 (HGX H100 4-GPU, 4x H100 SXM5 "
            "80GB) (among the options on the calculation sheets; a re-run also compares "
            "the 206 others)")
    room = 30.7109375 * _width("0", 11) - _PADDING_PT
    assert _lines(text, room, 11, False, False) == 8  # as the PDF export printed it
    assert 8 * _line_pt(11) > 99 and abs(_line_pt(11) - 12.77) < 0.1


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_wrapped_cell_shows_whole(path: Path, tmp_path: Path) -> None:
    book = tmp_path / f"{path.stem}.xlsx"
    write_workbook(size(load(path)), book)
    assert short_rows(book) == []
