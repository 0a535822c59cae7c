"""The sheets of the workbook, in tab order, and the one function that writes them all.

Adding a sheet: a module with ``write(book)`` and one line in :data:`REGISTRY`
(/work/wt/WORKBOOK-API.md, docs/workbook.md). ``phase`` orders the writing, not the tabs:
sheets that define input names and catalog cells first (0), then the calculation sheets (1),
then sheets that only point at those (2). The layout is planned before any sheet is written,
so the phase does not change any reference; it keeps the file's string and style tables in
a stable order (the snapshot and the re-read digest compare files).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ...sizing.results import Result
from . import (
    assumptions,
    bom_sheet,
    calc_sheets,
    catalog_sheet,
    inputs,
    models_sheet,
    options_sheet,
    plan_sheet,
    retrieval_sheet,
    scenarios,
    summary,
)
from .book import Book
from .formats import forget_number_formats
from .xlsxcells import deflate_parts

__all__ = ["REGISTRY", "SHEETS", "Sheet", "write_workbook"]

# XlsxWriter ships no type information: imported untyped so mypy --strict passes.
_xlsxwriter: Any = importlib.import_module("xlsxwriter")


@dataclass(frozen=True)
class Sheet:
    name: str  # the tab's name (no user text: names are part of formulas)
    write: Callable[[Book], None]
    phase: int  # 0 inputs and catalog, 1 calculations, 2 sheets over them
    # written only for the results it holds (None = always): the tab is absent otherwise
    when: Callable[[Result], bool] | None = None


REGISTRY: tuple[Sheet, ...] = (
    Sheet("Summary", summary.write, 2),
    Sheet("Models", models_sheet.write, 2, lambda r: bool(r.model_alternatives)),
    Sheet("Plan", plan_sheet.write, 2),
    Sheet("BOM", bom_sheet.write, 2),
    Sheet("Inputs", inputs.write, 0),
    Sheet("KV", partial(calc_sheets.write, sheet="KV"), 1),
    Sheet("Throughput", partial(calc_sheets.write, sheet="Throughput"), 1),
    Sheet("Nodes", partial(calc_sheets.write, sheet="Nodes"), 1),
    Sheet("TCO", partial(calc_sheets.write, sheet="TCO"), 1),
    Sheet("Retrieval", retrieval_sheet.write, 1, lambda r: bool(r.retrieval)),
    Sheet("Options", options_sheet.write, 2),
    Sheet("Scenarios", scenarios.write, 2),
    Sheet("Catalog", catalog_sheet.write, 0),
    Sheet("Assumptions", assumptions.write, 2),
)
SHEETS = tuple(s.name for s in REGISTRY if s.when is None)  # the sheets of every workbook
ALL_SHEETS = tuple(s.name for s in REGISTRY)  # with those some results add (Models...)


def sheets_for(result: Result) -> tuple[Sheet, ...]:
    """The sheets of ``result``'s workbook, in tab order."""
    return tuple(s for s in REGISTRY if s.when is None or s.when(result))


def write_workbook(result: Result, path: Path | str) -> None:
    """Write the workbook for ``result`` to ``path`` (the caller makes it atomic)."""
    book = Book(result)
    deflate_parts()
    forget_number_formats()
    wb = _xlsxwriter.Workbook(str(path), {"constant_memory": False, "in_memory": True,
                                          "strings_to_formulas": False,
                                          "strings_to_numbers": False,
                                          "strings_to_urls": False})
    try:
        sheets = sheets_for(result)
        book.open(wb, tuple(s.name for s in sheets))
        for sheet in sorted(sheets, key=lambda s: s.phase):  # stable: tab order within
            sheet.write(book)
        book.finish()
    finally:
        wb.close()
