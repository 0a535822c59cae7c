"""The editable workbook (``<slug>.xlsx``): the engine's calculation list printed as formulas.

This package computes nothing. It lays out cells and prints every calculation of
:data:`llmsizer.model.calculations.CALCULATIONS` with :func:`llmsizer.model.expr.render`, once per
option column; each formula carries the engine's value (from the :class:`Result`) as
its cached result, so previews and ``openpyxl data_only=True`` see numbers, and a
spreadsheet that recalculates reproduces them (tests/test_workbook_recalc.py checks
that with LibreOffice).

One module per sheet, as the user sees the workbook (docs/workbook.md):

* :mod:`.summary` **Summary** - per workload the recommendation in words and numbers,
  totals, headroom, cost per million tokens, and a native chart per workload.
* :mod:`.inputs` **Inputs** - account inputs ``in_<name>``, workload inputs one column per
  workload ``in_w<k>_<name>``, prices ``in_price_<gpu>``, ``in_cloud_<gpu>``,
  ``in_node_price_<platform>``. Unlocked, validated, with messages.
* :mod:`.calc_sheets` **KV, Throughput, Nodes, TCO** - one row per calculation, one column
  per option (the same column on all four); the engine's choices for each option are input
  cells at the top of KV.
* :mod:`.models_sheet` **Models** - a workload's alternative models side by side (cached
  engine figures), only when a workload lists alternatives.
* :mod:`.catalog_sheet` **Catalog** - the GPU, platform and precision rows the formulas
  look up, with their sources.
* :mod:`.assumptions` **Assumptions** - every default and assumption with its source.

Around them: :mod:`.registry` (the sheets in order, :func:`write_workbook`), :mod:`.book`
(the state a sheet writer gets), :mod:`.layout` (where every cell is, formula rendering),
:mod:`.formats` (number formats, styles, widths).

Traps handled here: untrusted text (account, workload, model names) is always written
with ``write_string`` after stripping control characters, so ``=1+1`` stays text;
chart titles never start with ``=``; page headers carry no user text (``&`` codes).
"""

from __future__ import annotations

from .calc_sheets import SHEET_TITLES
from .formats import clean_text
from .layout import (
    CALC_SHEETS,
    COL_LABEL,
    COL_NAME,
    COL_UNIT,
    FIRST_OPTION_COL,
    MAX_COLUMNS_PER_WORKLOAD,
    ROW_OPTION,
    ROW_STATUS,
    ROW_WORKLOAD,
)
from .registry import ALL_SHEETS, SHEETS, write_workbook

__all__ = [
    "ALL_SHEETS",
    "CALC_SHEETS",
    "COL_LABEL",
    "COL_NAME",
    "COL_UNIT",
    "FIRST_OPTION_COL",
    "MAX_COLUMNS_PER_WORKLOAD",
    "ROW_OPTION",
    "ROW_STATUS",
    "ROW_WORKLOAD",
    "SHEETS",
    "SHEET_TITLES",
    "clean_text",
    "write_workbook",
]
