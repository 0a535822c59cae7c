"""The numbers the workbook writes as constants read as the inputs state them (session 19).

A price in the account's currency is a catalog USD price x the exchange rate, and a cloud tier
without a dated offer is another tier's offer x the catalog's tier ratio (prices.yaml,
tier_ratios): products of stated decimals. Computed in binary floats they missed the decimal
in the last bit, and the workbook wrote that float whole: the Catalog sheet's tier cells read
``=IF(in_cloud_h200_sxm=3.048678,1.6938454967999999,in_cloud_h200_sxm)`` (acme-corp) and
wide-world-importers' Inputs sheet priced an A10 at 0.8568180000000001 per GPU-hour (the
GPU-cloud offer USD 1.29 x the one-year ratio 0.6642 = 0.856818).

``calculations.stated_product`` rounds such a product to the digits its factors state when that
moves it by float noise alone. The scan: no numeric constant inside any formula, and no number
typed in the Inputs or Catalog sheets, of any shipped account's workbook is a binary float
artefact (15 or more significant digits within 4 units in the last place of a decimal of 12 or
fewer). The Options sheet and the portfolio summary list the engine's results as numbers (a
capital cost of 559328.3855999999 is nodes x prices summed, not a constant finance types) and
are not scanned; a long constant that is no artefact (e, 2.718281828459045, in the percentile
formulas: the function table has no EXP) passes.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ShippedOutputs
from helpers import ROOT

from llmsizer.model.calculations import DERIVED_TIER_PRICE, PRICE_IN_ACCOUNT_CURRENCY, stated_product
from llmsizer.model.expr import evaluate

openpyxl: Any = importlib.import_module("openpyxl")

ACCOUNTS = sorted((ROOT / "inputs").glob("*.yaml"))
# a number in a formula (outside quotes, not part of a name or a cell reference)
_TOKEN = re.compile(r'"[^"]*"|\'[^\']*\'|[A-Za-z_$][A-Za-z0-9_.$]*!?'
                    r"|(\d+\.\d*(?:[Ee][+-]?\d+)?|\.\d+(?:[Ee][+-]?\d+)?|\d+[Ee][+-]?\d+)")
TYPED_SHEETS = ("Inputs", "Catalog")


def artefact(x: float) -> str | None:
    """The decimal ``x`` misses by float noise (``None`` when it is no such artefact): 15 or
    more significant digits, within 4 units in the last place of a decimal of 12 or fewer."""
    digits = repr(abs(x)).lower().split("e")[0].replace(".", "").strip("0")
    if len(digits) < 15:
        return None
    for k in range(1, 13):
        short = float(f"{x:.{k}g}")
        if short != x and abs(short - x) <= 4 * math.ulp(x):
            return f"{x:.{k}g}"
    return None


def test_the_artefact_check_can_fail() -> None:
    """Negative fixtures: the float products the workbook wrote are artefacts; stated numbers,
    a product already exact and e are not."""
    assert artefact(1.29 * 0.6642) == "0.856818"
    assert artefact(0.1 + 0.2) == "0.3"
    assert artefact(642538.0800000001) == "642538.08"
    for fine in (0.856818, 3.048678, 0.6642, 1.6938454968, math.e, 1 / 3, 0.0):
        assert artefact(fine) is None, fine


def test_a_stated_product_is_the_decimal_its_factors_state() -> None:
    """Catalog: the A10's GPU-cloud offer USD 1.29 x the one-year tier ratio 0.6642 (H100 SXM
    2.65 / 3.99) = 0.856818 exactly; the float product is 0.8568180000000001. A ratio applied
    to a derived price (3-year from a derived 1-year) starts from the decimal again. A product
    whose decimal has more digits than a float holds is the float product."""
    assert float(evaluate(DERIVED_TIER_PRICE, {"other_tier_price": 1.29, "tier_ratio": 0.6642})
                 ) == 0.8568180000000001
    assert repr(stated_product(DERIVED_TIER_PRICE, {"other_tier_price": 1.29,
                                                    "tier_ratio": 0.6642})) == "0.856818"
    one_year = stated_product(DERIVED_TIER_PRICE, {"other_tier_price": 1.29, "tier_ratio": 0.6642})
    assert repr(stated_product(DERIVED_TIER_PRICE, {"other_tier_price": one_year,
                                                    "tier_ratio": 0.5556})) == "0.4760480808"
    # EUR 0.92 a dollar: USD 2.99 -> EUR 2.7508 (float: 2.7508000000000004)
    assert repr(stated_product(PRICE_IN_ACCOUNT_CURRENCY, {"usd_price": 2.99,
                                                          "usd_exchange_rate": 0.92})) == "2.7508"
    long = {"usd_price": 1 / 3, "usd_exchange_rate": 0.92}
    assert stated_product(PRICE_IN_ACCOUNT_CURRENCY, long) == 1 / 3 * 0.92


def _artefacts(xlsx: Path) -> list[str]:
    book = openpyxl.load_workbook(xlsx, data_only=False)
    found = []
    for ws in book.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                v = cell.value
                if isinstance(v, str) and v.startswith("="):
                    found += [f"{ws.title}!{cell.coordinate} {v[:120]}"
                              for m in _TOKEN.finditer(v) if m.group(1) and artefact(float(m.group(1)))]
                elif (ws.title in TYPED_SHEETS and isinstance(v, float)
                      and artefact(v)):
                    found.append(f"{ws.title}!{cell.coordinate} {v!r}")
    return found


@pytest.mark.parametrize("account", ACCOUNTS, ids=lambda p: p.stem)
def test_no_workbook_constant_carries_a_float_artefact(
        account: Path, shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    assert _artefacts(shipped_outputs(account).xlsx) == []
