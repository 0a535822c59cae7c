"""How cells look: number formats with units, the cell styles (roles), widths and heights.

Every number carries its unit in its format ("1 GPU", "12.5 GB", "$1,200/yr"), so a
printed sheet reads without the Unit column. Nothing here knows about sheets.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache
from typing import Any

__all__ = [
    "FLAG_UNITS",
    "PERCENT_UNITS",
    "Formats",
    "clean_text",
    "dv_title",
    "fit_width",
    "forget_number_formats",
    "formula_text",
    "label_width",
    "number_format",
    "shown_width",
    "unit_text",
    "unpriced_text",
    "wrapped_height",
    "wrapped_lines",
]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MAX_TEXT = 32_000


def clean_text(text: str) -> str:
    """Untrusted text as it is written: control characters removed, length bounded."""
    return _CONTROL.sub("", text)[:_MAX_TEXT]


def formula_text(text: str) -> str:
    """``text`` as a formula's text constant. Excel refuses a constant over 255 characters
    ("Text values in formulas are limited to 255 characters", Microsoft's CONCATENATE page;
    LibreOffice takes it): a longer one, such as a rack-scale option's words or a long
    catalog name, is joined from pieces in brackets, so it stays one operand anywhere."""
    pieces = ['"' + text[i:i + 255].replace('"', '""') + '"' for i in range(0, len(text), 255)]
    if len(pieces) <= 1:
        return pieces[0] if pieces else '""'
    return "(" + "&".join(pieces) + ")"


def dv_title(text: str) -> str:
    """A data validation's title within Excel's 32 characters (XlsxWriter refuses longer
    ones): a longer label ends at its last whole word with an ellipsis, not mid-word as a
    plain cut left "Concurrent users at peak (stated" in the Inputs sheet's prompts."""
    if len(text) <= 32:
        return text
    head = text[:31].rsplit(" ", 1)[0]
    if head.count("(") > head.count(")"):  # no bracket left open: "Tensor parallel…"
        head = head[:head.rfind("(")]
    return head.rstrip(" ,;:-") + "…"


# --- number formats ---------------------------------------------------------------------

_CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "¥", "INR": "₹"}
# Currencies without a minor unit (ISO 4217 exponent 0): "¥402/h", never "¥402.00/h"
_NO_MINOR_UNIT = frozenset({"BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF",
                            "UGX", "VND", "VUV", "XAF", "XOF", "XPF"})


def has_minor_unit(currency: str) -> bool:
    """Whether ``currency`` has cents (JPY, KRW, ... have none: "JPY 2,864.32" shows digits
    the currency does not have)."""
    return currency not in _NO_MINOR_UNIT


_PLURALS = {"GPUs": "GPU", "nodes": "node", "replicas": "replica", "sequences": "sequence",
            "users": "user", "tokens": "token", "layers": "layer", "heads": "head",
            "experts": "expert", "steps": "step", "years": "year", "months": "month",
            "workloads": "workload", "PDUs": "PDU", "ports": "port", "servers": "server",
            "versions": "version", "NICs": "NIC", "racks": "rack", "instances": "instance",
            "pools": "pool", "ranks": "rank", "stages": "stage", "columns": "column",
            "elements": "element", "layer-tokens": "layer-token", "tokens/step": "token/step",
            "switches": "switch", "streams": "stream"}  # the BOM's "1 switches" (round 14)
PERCENT_UNITS = frozenset({"fraction", "fraction of capex / year"})
FLAG_UNITS = frozenset({"flag", "1 = yes"})  # 1/0 (or TRUE/FALSE) shown as yes/no
# months whole, as the PDF prints them: the break-even read "95.8 months" here, "96" there
# (review round 18; its inputs are yearly figures)
_FIXED_DECIMALS = {"kW": 1, "months": 0, "years": 1, "h": 0, "M tokens": 0, "TFLOP/s": 1,
                   "TOPS": 1, "tok/s": 1, "GB/s": 0, "FLOP/B": 0}
_UNIT_SUFFIX = {"M tokens": "M tok", "x": "×", "ratio": "", "code": ""}


def unit_text(unit: str, currency: str) -> str:
    """The unit as the Unit column shows it (fractions are displayed as percentages)."""
    if unit in FLAG_UNITS:
        return "yes/no"
    if unit in PERCENT_UNITS:
        return unit.replace("fraction", "%")
    if unit == "us":
        return "µs"
    if unit == "id":  # a catalog code the formulas look up (Catalog sheet, column A)
        return "code"
    return unit.replace("currency", currency)


def _decimals(values: Iterable[float]) -> int:
    """Decimals that show about three significant digits of the row's largest value."""
    big = max((abs(v) for v in values), default=0.0)
    if big == 0 or not math.isfinite(big):
        return 2
    return max(0, min(4, 2 - math.floor(math.log10(big))))


def _body(decimals: int) -> str:
    return "#,##0" if decimals == 0 else "#,##0." + "0" * decimals


def _money(currency: str, decimals: int, per: str = "") -> str:
    symbol = _CURRENCY_SYMBOLS.get(currency)
    body = _body(decimals)
    if symbol:
        return f'"{symbol}"{body}' + (f'"{per}"' if per else "")
    return f'{body}" {currency}{per}"'


def number_format(unit: str, values: Sequence[float], currency: str, *, dash_zero: bool = False,
                  zero_text: str = "", name: str = "") -> str:
    """The display format of a row of ``values`` in ``unit`` (units on every number).
    ``dash_zero`` shows 0 as a dash, ``zero_text`` as that word ("none" for targets where
    0 means no target). ``name``: the calculation the row shows; a headroom with a node or
    instance down reads "stops" at -100 % (:func:`stops_at_minus_one`)."""
    if unit in PERCENT_UNITS and stops_at_minus_one(name):
        return ONE_DOWN_FORMAT
    return _number_format(unit, tuple(values), currency, dash_zero, zero_text)


# A headroom with one node (or rented instance) down is -100 % exactly when no whole replica
# of the pool runs: the PDF says the pool "stops" (risks, plan table, headroom table), and the
# workbook printed "-100.0 %" beside it (review round 22). The format says it in the PDF's word
# at -1 and keeps the sign of any other shortfall ("-11.6 %"; LibreOffice and Excel drop the
# minus of a section with its own condition unless the section writes it).
ONE_DOWN_FORMAT = '[=-1]"stops";[<0]-0.0%;0.0%'
_ONE_DOWN = re.compile(r"headroom_(?:after_(?:node|instance)_loss|one_down)")


def stops_at_minus_one(name: str) -> bool:
    """Whether calculation ``name`` is a headroom with one node or instance down (the plan's
    pool, group and share rows, an option's, and their "packed" and "as run" variants)."""
    return bool(name) and _ONE_DOWN.search(name) is not None


# Cloud figures whose formulas give exactly 0 when a GPU's cloud price is missing
# (IF(cloud_gpu_hour>0, ..., 0); a total IF(every part priced, ..., 0)): their 0 prints the
# proposal's words, never "$0/yr" (read as a free cloud). A priced one is 0 only with no GPU
# rented and no storage paid (none in the shipped accounts).
# A GPU without a purchase price looks its price up as 0 too: "no price listed", not "$0"
# (x-docs review: the TCO sheet's A10 columns read "GPU price $0"). A model without a hosted
# API price costs 0 there as well (fresh-eyes review: "Hosted API cost per year ¥0/yr").
_UNPRICED_AT_ZERO = frozenset({"cloud_gpu_hour", "annual_cost_cloud", "retrieval_cloud_cost",
                               "cost_per_million_tokens_cloud",
                               "cost_per_million_total_tokens_cloud", "gpu_price",
                               "annual_cost_api", "cost_per_million_total_tokens_api"})


def unpriced_text(name: str, *, total: bool = False) -> str:
    """The words a cloud figure ``name`` (``plan_`` shares too) shows at 0, as the PDF's
    costs table: "no price listed", or "not comparable" for an account ``total`` that
    mixes priced and unpriced parts; "" for any other figure."""
    if name.removeprefix("plan_") == "breakeven_months":  # 0: never, or no cloud price
        return "—"  # (the row above says which); never "0.0 months", read as at once
    if name.removeprefix("plan_") not in _UNPRICED_AT_ZERO:
        return ""
    return "not comparable" if total else "no price listed"


def forget_number_formats() -> None:
    """Start a workbook with an empty :func:`number_format` cache."""
    _number_format.cache_clear()


# ~6,000 calls per workbook, three in four for a unit and values seen before in it. Emptied
# for each workbook (forget_number_formats): an account's values are its own, and the
# benchmarks time one workbook as a batch writes it, not the same one again.
@lru_cache(maxsize=4096)
def _number_format(unit: str, values: tuple[float, ...], currency: str, dash_zero: bool,
                   zero_text: str) -> str:
    if unit in FLAG_UNITS:
        return '"yes";"yes";"no"'
    if unit == "id":
        return "@"
    if unit.startswith("currency"):
        per = unit.removeprefix("currency")
        per = {"/yr": "/yr", "/h": "/h", "/kWh": "/kWh", "/M tok": "/M tok"}.get(per, per)
        decimals = {"/h": 2, "/kWh": 3, "/M tok": 2}.get(per, 0)
        if currency in _NO_MINOR_UNIT:  # the cents' two digits do not exist
            decimals = max(0, decimals - 2)
        fmt = _money(currency, decimals, per)
    elif unit in PERCENT_UNITS:
        fmt = "0.0%"
    elif unit == "params":
        fmt = '#,##0.0,,," bn"'
    elif unit == "FLOP":
        fmt = '0.00E+00" FLOP"'
        if not (dash_zero or zero_text):  # nothing reads "0 FLOP", never "0.00E+00 FLOP"
            return f'{fmt};-{fmt};0" FLOP"'  # (review 25: a dense model's expert overhead)
    else:
        integral = all(float(v).is_integer() for v in values)
        if unit in _FIXED_DECIMALS:
            decimals = _FIXED_DECIMALS[unit]
        elif integral and values:
            decimals = 0
        else:
            decimals = _decimals(values)
        suffix = _UNIT_SUFFIX.get(unit, unit)
        fmt = _body(decimals) + (f'" {suffix}"' if suffix else "")
        if decimals == 0 and unit in _PLURALS:
            one = f'[=1]0" {_PLURALS[unit]}"'  # "1 GPU", "2 GPUs"
            if dash_zero or zero_text:  # the second condition: 0 as its word (the Catalog
                # sheet's "1 GPUs" per instance: the plural was dropped for the dash)
                shown = zero_text.replace('"', "") or "—"
                return f'{one};[=0]"{shown}";{fmt}'
            return f"{one};{fmt}"
    if dash_zero or zero_text:
        shown = zero_text.replace('"', "") or "—"
        fmt = f'{fmt};-{fmt};"{shown}"'
    return fmt


# --- widths and heights -----------------------------------------------------------------

_PAGE_CHARS = 200  # column-width characters that print legibly across a landscape A4 page


def fit_width(ws: Any, width: float, repeated: float = 0.0) -> int:
    """Fit to the page width: one page when it stays legible, else as many pages wide as
    needed, the ``repeated`` (label) columns printed again on each. Returns the pages."""
    pages = max(1, math.ceil((width - repeated) / (_PAGE_CHARS - repeated)))
    ws.fit_to_pages(pages, 0)
    return pages


def label_width(labels: Iterable[str], least: float) -> int:
    """A label column wide enough for its longest label, never narrower than ``least``:
    LibreOffice printed about 1.15 characters of plain text per unit of width, and cut a
    longer label at the unit column ("Headroom with one node down, before a spare nod")."""
    longest = max((len(t) for t in labels), default=0)
    return max(math.ceil(least), math.ceil(longest / 1.15) + 1)


# Points per line of wrapped text per point of font: Excel and LibreOffice give a line of
# 11 pt Calibri (Carlito) 15 pt; 1.25 cut the last line of a Summary cell in LibreOffice.
_LINE_PT, _PER_FONT_PT = 15, 11


def wrapped_lines(text: str, width: float, font_pt: float = 9) -> int:
    """Lines ``text`` takes wrapped at word boundaries in a column ``width`` characters
    wide, as a spreadsheet wraps it: a word that does not fit starts the next line (counting
    characters alone missed that line), a word longer than a line takes several."""
    per_line = max(1.0, width * 11 / font_pt * 1.15)
    lines = 0
    for part in text.split("\n"):
        lines += 1
        used = 0.0
        for word in part.split():
            if used and used + 1 + len(word) > per_line:
                lines += 1
                used = 0.0
            if len(word) > per_line:
                lines += math.ceil(len(word) / per_line) - 1
                used = len(word) % per_line or per_line
            else:
                used += (1 if used else 0) + len(word)
    return lines


def wrapped_height(text: str, width: float, font_pt: float = 9) -> float:
    """Row height (points) that shows ``text`` wrapped in a column ``width`` characters wide.
    Spreadsheets do not grow rows for wrapped text on their own when opening a file."""
    line = font_pt * _LINE_PT / _PER_FONT_PT
    return max(15.0, round(wrapped_lines(text, width, font_pt) * line + 3, 2))


_QUOTED = re.compile(r'"([^"]*)"')


def shown_width(value: float, fmt: str) -> int:
    """About how many characters ``value`` takes when shown with ``fmt`` (column widths)."""
    literal, scientific, scale, decimals, percents, zero = _format_shape(fmt)
    if value == 0 and zero >= 0:  # shown as its zero section's words ("no price listed")
        return zero
    if scientific:
        return 9 + literal
    return len(f"{value * scale:,.{decimals}f}") + literal + percents


@cache
def _format_shape(fmt: str) -> tuple[int, bool, float, int, int, int]:
    """What :func:`shown_width` needs of a number format (parsed once per format: the
    workbook measures every cell): literal text length, scientific, value scale, decimals,
    percent signs, the zero section's length (-1: none)."""
    sections = fmt.split(";")
    words = _QUOTED.fullmatch(sections[2]) if len(sections) == 3 else None
    zero = len(words.group(1)) if words else -1
    section = sections[0]
    literal = len("".join(_QUOTED.findall(section)))
    body = _QUOTED.sub("", section)
    scale = (100.0 if "%" in body else 1.0) / (1e9 if body.endswith(",,,") else 1.0)
    decimals = len(body.split(".")[1].rstrip(",%")) if "." in body else 0
    return literal, "E+" in body, scale, decimals, body.count("%"), zero


# --- cell styles --------------------------------------------------------------------------

_ROLES: dict[str, dict[str, Any]] = {
    "title": {"bold": True, "font_size": 14, "font_color": "#1F3864"},
    "subtitle": {"italic": True, "font_color": "#595959"},
    "subtitle_wrap": {"italic": True, "font_color": "#595959", "text_wrap": True,
                      "valign": "top"},
    "header": {"bold": True, "font_color": "#FFFFFF", "bg_color": "#1F3864", "text_wrap": True,
               "valign": "top", "border": 1, "border_color": "#BFBFBF"},
    "header_rec": {"bold": True, "font_color": "#000000", "bg_color": "#FFD966",
                   "text_wrap": True, "valign": "top", "border": 1, "border_color": "#BFBFBF"},
    "status": {"font_size": 8, "text_wrap": True, "valign": "top", "bg_color": "#F2F2F2",
               "border": 1, "border_color": "#BFBFBF"},
    "status_rec": {"font_size": 8, "bold": True, "text_wrap": True, "valign": "top",
                   "bg_color": "#FFF2CC", "border": 1, "border_color": "#BFBFBF"},
    "status_bad": {"font_size": 8, "text_wrap": True, "valign": "top", "bg_color": "#F2F2F2",
                   "font_color": "#9C0006", "border": 1, "border_color": "#BFBFBF"},
    "section": {"bold": True, "bg_color": "#D9E1F2", "bottom": 1},
    "name": {"font_size": 9, "font_color": "#7F7F7F", "valign": "top"},
    "label": {"valign": "top"},
    "label_bold": {"bold": True, "valign": "top"},
    "header_top": {"bold": True, "valign": "top"},
    "unit": {"font_color": "#595959", "valign": "top"},
    "unit_apart": {"font_color": "#595959", "valign": "top", "align": "left", "indent": 1},
    "note": {"font_color": "#595959", "font_size": 9, "valign": "top"},
    "text": {"valign": "top"},
    "wrap": {"text_wrap": True, "valign": "top"},
    "wrap_bold": {"text_wrap": True, "valign": "top", "bold": True},
    "wrap_note": {"text_wrap": True, "valign": "top", "font_color": "#595959", "font_size": 9},
    "input": {"locked": False, "valign": "top", "bg_color": "#FFF2CC", "font_color": "#0033CC",
              "border": 1, "border_color": "#BFBFBF"},
    "calc": {"valign": "top"},
    "calc_rec": {"bg_color": "#EEF5E6", "valign": "top"},
    "total": {"bold": True, "top": 1, "valign": "top"},
    "good": {"bg_color": "#C6EFCE", "font_color": "#006100"},
    "bad": {"bg_color": "#FFC7CE", "font_color": "#9C0006"},
    "bad_wrap": {"bg_color": "#FFC7CE", "font_color": "#9C0006", "text_wrap": True,
                 "valign": "top"},
}


class Formats:
    """XlsxWriter formats, created once per (role, number format): ``f("calc", fmt)``."""

    def __init__(self, wb: Any) -> None:
        self._wb = wb
        self._cache: dict[tuple[str, str], Any] = {}

    def __call__(self, role: str, num_format: str = "") -> Any:
        key = (role, num_format)
        fmt = self._cache.get(key)
        if fmt is None:
            props = dict(_ROLES[role])
            if num_format:
                props["num_format"] = num_format
            fmt = self._cache[key] = self._wb.add_format(props)
        return fmt
