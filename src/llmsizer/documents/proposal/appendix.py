"""The formula appendix (templates/partials/appendix.html.j2, in appendix.html.j2): every
calculation and input. It is the same for every account, so its context is built once per
process and the renderer lays its pages out once (render.with_appendix)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ...model.calculations import CALCULATIONS, INPUTS
from ...model.expr import to_text

_ZWSP = "\u200b"
_BREAK_AFTER = re.compile(r"([,+*/=<>-])")


def _breakable(formula: str) -> str:
    """A formula with invisible break opportunities after commas and operators, so a long
    one wraps at a sensible place rather than mid-name."""
    return _BREAK_AFTER.sub(lambda m: m.group(1) + _ZWSP, formula)


@lru_cache(maxsize=1)
def formula_context() -> dict[str, Any]:
    """The formula list: the same for every account (the appendix's whole context)."""
    formulas = [{"name": c.name, "label": c.label, "unit": c.unit, "sheet": c.sheet,
                 "formula": to_text(c.expr), "wrapped": _breakable(to_text(c.expr)),
                 "note": c.note} for c in CALCULATIONS]
    inputs = [{"name": i.name, "label": i.label, "unit": i.unit, "scope": i.scope,
               "note": i.note} for i in INPUTS]
    return {"formulas": formulas, "inputs": inputs}
