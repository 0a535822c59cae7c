"""Edit a workbook's named input cells (`in_<name>`, the Inputs sheet's defined names) as
finance would, and save the edited copy: the tests that recalculate an edited workbook share
this one way of finding a named cell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openpyxl


def named_cell(wb: Any, name: str) -> Any:
    """The cell a defined name points at (``Inputs!$C$12`` -> that cell)."""
    sheet, ref = wb.defined_names[name].attr_text.split("!")
    return wb[sheet][ref.replace("$", "")]


def cloud_price_name(gpu: str) -> str:
    """The defined name of a GPU's cloud price per GPU-hour."""
    return f"in_cloud_{gpu.replace('-', '_')}"


def edit_named(book: Path, out: Path, edits: dict[str, Any]) -> Path:
    """Save ``book`` as ``out`` with each named cell (or ``Sheet!A1`` cell: a Catalog figure
    has no name) set to its value."""
    wb = openpyxl.load_workbook(book)
    for name, value in edits.items():
        if "!" in name:
            sheet, ref = name.split("!")
            wb[sheet][ref.replace("$", "")].value = value
        else:
            named_cell(wb, name).value = value
    wb.save(out)
    wb.close()
    return out
