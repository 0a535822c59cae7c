"""How a catalog lookup (:class:`llmsizer.model.expr.Lookup`) is spelt in a spreadsheet."""

from __future__ import annotations

import re

__all__ = ["LOOKUP_FUNCTIONS", "lookup_formula"]

# The spreadsheet spelling of a Lookup: VLOOKUP, exact match (0: first match, case-insensitive
# like the Python side). INDEX(values,MATCH(key,ids,0)) gave the same value but, as INDEX may
# return a range, Excel 365 shows it @INDEX(...) in these legacy formulas; VLOOKUP returns a
# value (Microsoft, "Implicit intersection operator: @"). In every Excel, LibreOffice, Gnumeric.
LOOKUP_FUNCTIONS = ("VLOOKUP",)
_RANGE = re.compile(r"^((?:[^!]+!)?)\$?([A-Z]+)\$?(\d+)(?::\$?([A-Z]+)\$?(\d+))?$")


def _column_number(letters: str) -> int:
    return sum((ord(ch) - 64) * 26 ** i for i, ch in enumerate(reversed(letters)))


def lookup_formula(key: str, ids: str, values: str) -> str:
    """``VLOOKUP(key,table,n,0)`` of same-rowed column ranges, ids left of values
    (``Catalog!$A$5:$A$9``, ``Catalog!$C$5:$C$9`` -> ``VLOOKUP(key,Catalog!$A$5:$C$9,3,0)``)."""
    a, b = _RANGE.match(ids), _RANGE.match(values)
    if a is None or b is None:
        raise ValueError(f"not a column range: {ids!r}, {values!r}")
    sheet, first, top, _, bottom = a.groups()
    v_sheet, column, v_top, _, v_bottom = b.groups()
    n = _column_number(column) - _column_number(first) + 1
    if v_sheet != sheet or (v_top, v_bottom) != (top, bottom) or n < 1:
        raise ValueError(f"ids {ids!r} and values {values!r} are not one table's columns")
    end = f":${column}${bottom or top}"
    return f"VLOOKUP({key},{sheet}${first}${top}{end},{n},0)"
