"""A number the requirements file wrote wrongly, and the line to write instead: `ttft_s: 2` for
``'2s'`` or ``'2000 ms'``, `ttft_s: 0.5` for a misspelt `ttft_ms: 500`, the same time in the
key's unit when only that fits the range, `prompt_tokens: 500` for ``0500``. Used by
:mod:`.schema_messages`."""

from __future__ import annotations

import math
import re
from typing import Any

from .schema_words import _plain

# A number written with its unit: '2s', '500 ms', '10%', '$0.12', '10k', '1,000 tok/s'.
_NUMBER_WITH_UNIT = re.compile(
    r"^\s*(?P<cur>[$€£¥])?\s*(?P<num>[-+]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*"
    r"(?P<unit>[A-Za-z%µ]+(?:\s*/\s*[A-Za-z]+)?)?\s*$"
)
_TIME_UNITS = {"ms": 0.001, "msec": 0.001, "millisecond": 0.001, "milliseconds": 0.001, "s": 1.0,
               "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0, "mins": 60.0,
               "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0, "hour": 3600.0,
               "hours": 3600.0}
_MULTIPLIERS = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9, "bn": 1e9}
_NOISE_UNITS = {"tok/s", "tokens/s", "t/s", "tps", "tok", "tokens", "token", "users", "user",
                "gb", "kwh", "usd", "eur", "gbp", "years", "year", "yrs", "y", "x", "gpus", "gpu"}


def _number_fix(key: str, text: str) -> str | None:
    """``'ttft_s: 2'`` for ``ttft_s`` written as ``'2s'`` (or ``'2000 ms'``); None if ``text``
    is not a number with a unit this can read."""
    m = _NUMBER_WITH_UNIT.match(text)
    if m is None:
        return None
    num_text = m["num"].replace("_", "")
    if re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d*)?", num_text):
        num_text = num_text.replace(",", "")  # 10,000 -> 10000
    elif "," in num_text:
        num_text = num_text.replace(",", ".", 1) if num_text.count(",") == 1 else ""
    try:
        value = float(num_text)
    except ValueError:
        return None
    unit = re.sub(r"\s+", "", m["unit"] or "")
    if unit == "" and not m["cur"] and num_text == m["num"]:
        return None  # nothing to strip: not this helper's case
    if unit == "%":
        value /= 100
    elif unit in _TIME_UNITS and key.endswith("_s"):
        value *= _TIME_UNITS[unit]
    elif unit in _MULTIPLIERS:
        value *= _MULTIPLIERS[unit]
    elif unit and unit.lower() not in _NOISE_UNITS:
        return None
    if not math.isfinite(value):
        return None
    return f"{key}: {_plain(value)}"


# Time units a misspelt key may end in, in seconds: `ttft_ms: 500` is `ttft_s: 0.5`, not 500.
_KEY_TIME_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0,
                   "min": 60.0, "mins": 60.0, "minutes": 60.0, "h": 3600.0, "hours": 3600.0}


def _unit_key_fix(key: str, best: str, value: Any) -> str | None:
    """``'ttft_s: 0.5'`` for ``ttft_ms: 500``: the number converted when the key written and
    the key meant end in different time units; None when they do not."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    said, meant = key.lower().rsplit("_", 1)[-1], best.rsplit("_", 1)[-1]
    if "_" not in key or said == meant or said not in _KEY_TIME_UNITS \
            or meant not in _KEY_TIME_UNITS:
        return None
    converted = value * _KEY_TIME_UNITS[said] / _KEY_TIME_UNITS[meant]
    return f"{best}: {_plain(round(converted, 9))}"


def _time_unit_hint(key: str, found: float, schema: dict[str, Any]) -> str:
    """`ttft_s: 2000` is 2,000 ms written into seconds (and `itl_p99_ms: 0.05` the reverse):
    the same time in the key's unit, when only that fits the range; else ''."""
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if lo is None or hi is None:
        return ""
    for unit, other, factor in (("_s", "milliseconds", 0.001), ("_ms", "seconds", 1000.0)):
        meant = found * factor
        if key.endswith(unit) and not lo <= found <= hi and lo <= meant <= hi:
            return (f"; the unit is in the key name: for {_plain(found)} {other} write "
                    f"`{key}: {_plain(round(meant, 9))}`")
    return ""


def _leading_zero_fix(key: str, text: str) -> str | None:
    if re.fullmatch(r"[-+]?0\d+(?:\.\d*)?", text):
        return f"{key}: {_plain(float(text))}"
    return None
