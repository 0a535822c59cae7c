"""The form's fractions in percent (review round 21): a presales engineer types "25" for a
25 % headroom, as the results say "28 %", not the file's 0.25. Which fields are fractions is
the schema's word (its unit "fraction", "fraction of capex per year"); the YAML the form
builds, the file it downloads and the one it reads keep the fraction, so a file round-trips
to the same sizing. The conversion is decimal (0.1 shows as 10, not 10.000000000000002).
No figure of the sizing is computed here."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from ..inputs.schema import Costs, Policy
from ..inputs.schema_workload import Workload


def is_fraction(model: Any, name: str) -> bool:
    """The schema states this field as a fraction of one (``unit: fraction ...``)."""
    extra = model.model_fields[name].json_schema_extra
    return isinstance(extra, dict) and str(extra.get("unit", "")).startswith("fraction")


# every fraction of the schema by the form's generic path ('policy.headroom')
FRACTIONS = frozenset(
    f"{prefix}.{name}"
    for prefix, model in (("policy", Policy), ("costs", Costs), ("workloads[]", Workload))
    for name in model.model_fields if is_fraction(model, name))


def at(path: str | None) -> bool:
    """The field at this loader path ('workloads[1].prefix_cache_hit') is a fraction."""
    return bool(path) and re.sub(r"\[\d+\]", "[]", str(path)) in FRACTIONS


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        d = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return d if d.is_finite() else None


def _text(d: Decimal) -> str:
    return format(d.normalize(), "f") if d else "0"


def shown(value: Any) -> str:
    """A fraction as the form shows it, in percent: 0.25 -> '25', 0.1 -> '10'; a value that is
    no number (an uploaded file's `headroom: abc`) as written, for the schema to tell."""
    d = _decimal(value)
    if d is None:
        return "" if value is None else str(value)
    return _text(d * 100)


def typed(value: str) -> float | str:
    """A percent typed in the form as the fraction the YAML holds: '25' -> 0.25, '12.5 %' ->
    0.125; text that is no number stays text (the schema says what is wrong, beside it)."""
    d = _decimal(value.strip().removesuffix("%"))
    if d is None:
        return value
    x = float(d / 100)
    return x if math.isfinite(x) else value


# the schema's help gives the fraction's example in percent ("(0.25 = 25 %)"): the form is in
# percent already
_EXAMPLE = re.compile(r"\s*\(\d*\.?\d+ = \d+(?:\.\d+)? ?%\)")


def help_words(text: str) -> str:
    return _EXAMPLE.sub("", text)


# a number the loader's message states (a bound, the value found, an example to type), never
# one in quotes (the text typed, 'abc') or in a word
_NUMBER = re.compile(r"(?<![\w.'\"])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.'\"%])")


def words(message: str) -> str:
    """The loader's message on a fraction in the form's percent: "must be at most 3 (found 4);
    allowed: a number from 0 to 3" -> "must be at most 300 % (found 400 %); allowed: a number
    from 0 % to 300 %". Its hint for a percent typed into a file's fraction ("this is a
    fraction: write 0.04 for 4 %") is the file's: the form takes the percent."""
    message = re.sub(r"; this is a fraction: write [^;]*", "", message)
    return _NUMBER.sub(lambda m: f"{shown(m[0])} %", message)
