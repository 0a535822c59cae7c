"""Money in a currency other than the dollar (fresh-eyes review, 2026-11): the bounds on
money amounts are in US dollars, checked at the account's exchange rate, and the default
electricity tariff (0.12 USD per kWh, schema.Costs) is converted the same way, so a yen
account neither refuses a usual 31 JPY per kWh nor runs on a free 0.12 JPY."""

from __future__ import annotations

from pathlib import Path

import openpyxl
from helpers import ROOT

from llmsizer.base.errors import InputError
from llmsizer.documents.workbook.registry import write_workbook
from llmsizer.inputs.loader import load, load_from_text
from llmsizer.inputs.schema import Costs
from llmsizer.sizing.engine import size

JPY = ROOT / "tests" / "data" / "jpy-manufacturer.yaml"


def _with_tariff(tariff: float | None) -> str:
    text = JPY.read_text("utf-8")
    return text.replace("  electricity_per_kwh: 31\n",
                        "" if tariff is None else f"  electricity_per_kwh: {tariff}\n")


def test_a_yen_tariff_and_cloud_price_above_the_dollar_figures_are_accepted() -> None:
    costs = load(JPY).req.costs
    # 31 > 10 and 1,600 > 1,000: both were refused while the bounds read as yen
    assert costs.electricity_per_kwh == 31
    assert costs.cloud_gpu_hour == {"h100-sxm": 1600}


def test_the_yen_tariff_reaches_the_cost_of_power() -> None:
    onprem = {t: size(load_from_text(_with_tariff(t), "kobe.yaml")).totals.annual_cost_onprem
              for t in (0, 15.5, 31)}
    power_at_half = onprem[15.5] - onprem[0]
    assert power_at_half > 0
    # power is the only term the tariff moves, and it moves it in proportion
    assert abs((onprem[31] - onprem[0]) - 2 * power_at_half) < 1e-6 * onprem[31]


def test_the_default_tariff_is_the_dollar_default_at_the_exchange_rate() -> None:
    usd = Costs.model_fields["electricity_per_kwh"].default
    text = _with_tariff(None).replace("  cloud_gpu_hour: {h100-sxm: 1600}\n", "")
    left_out = load_from_text(text, "kobe.yaml").req.costs
    assert left_out.usd_exchange_rate == 151.7
    assert left_out.electricity_per_kwh == round(usd * 151.7, 6)  # 18.2 JPY, not 0.12 JPY
    dollars = load_from_text(text.replace("currency: JPY", "currency: USD").replace(
        "  usd_exchange_rate: 151.7\n", ""), "acme.yaml").req.costs
    assert dollars.electricity_per_kwh == usd


def test_the_workbook_lets_finance_type_a_yen_tariff(tmp_path: Path) -> None:
    book = tmp_path / "kobe.xlsx"
    write_workbook(size(load(JPY)), book)
    ws = openpyxl.load_workbook(book)["Inputs"]
    cell = next(c for row in ws.iter_rows() for c in row if c.value == "Electricity price")
    target = ws.cell(row=cell.row, column=3)
    assert target.value == 31
    rules = [dv for dv in ws.data_validations.dataValidation if target.coordinate in dv.sqref]
    assert len(rules) == 1
    # "between 0 and 10" refused the tariff the cell holds; the bound left is 0 and up
    assert (rules[0].operator, rules[0].formula1) == ("greaterThanOrEqual", "0")


def _money_formats(book: Path, symbol: str) -> set[str]:
    wb = openpyxl.load_workbook(book)
    return {c.number_format for ws in wb for row in ws.iter_rows() for c in row
            if f'"{symbol}"' in c.number_format}


def test_the_workbook_shows_yen_without_cents(tmp_path: Path) -> None:
    yen, dollars = tmp_path / "kobe.xlsx", tmp_path / "acme.xlsx"
    write_workbook(size(load(JPY)), yen)
    write_workbook(size(load(ROOT / "inputs" / "example.yaml")), dollars)
    # the dollar workbook prints cents where a price is small ("$2.35/h")
    assert any('.00"/h"' in f for f in _money_formats(dollars, "$"))
    shown = _money_formats(yen, "¥")
    assert any('"/h"' in f for f in shown) and any('"/M tok"' in f for f in shown)
    # the yen has no minor unit: "¥402/h", not "¥402.00/h"; the tariff keeps one decimal
    assert not any(".00" in f for f in shown), shown


def test_a_model_without_a_hosted_api_price_reads_no_price_listed(tmp_path: Path) -> None:
    """Qwen2.5 72B has no hosted API price in the catalog: the TCO sheet printed its API
    cost as ¥0/yr, a free API, where the PDF says "no price listed"."""
    text = JPY.read_text("utf-8").replace("model: llama-3.1-8b", "model: qwen2.5-72b")
    result = size(load_from_text(text, "kobe.yaml"))
    assert result.workloads[0].options[0].values["annual_cost_api"] == 0  # none listed
    book = tmp_path / "kobe.xlsx"
    write_workbook(result, book)
    ws = openpyxl.load_workbook(book)["TCO"]
    rows = [row for row in ws.iter_rows() if row[1].value in (
        "Hosted API cost per year", "Hosted API cost per million tokens (in + out)")]
    assert len(rows) == 2
    for row in rows:  # each option's column: a formula that gives 0 without an API price
        cells = [c for c in row[3:] if '"¥"' in c.number_format]
        assert cells and all('"no price listed"' in c.number_format for c in cells)


def test_api_prices_are_bounded_in_dollars_and_located_despite_dots_in_the_model_id() -> None:
    # A won account: 1 USD = 1,400 KRW (a usual rate), so a hosted API's 60 USD per million
    # output tokens is 84,000 KRW; the bound read as 10,000 in the account's own currency had
    # refused it. A typo (200 million) is still refused, told at its line although the model
    # id llama-3.1-8b holds dots (the message's path was split at every dot: line 1).
    text = """schema_version: 1
account: {name: Seoul Test, currency: KRW}
workloads:
  - name: Chat
    model: llama-3.1-8b
    concurrent_users: 20
    prompt_tokens: 1000
    output_tokens: 200
    targets: {tokens_per_s_per_user: 20}
hardware: {gpus: [h100-sxm]}
costs:
  usd_exchange_rate: 1400
  api_output_per_million: {llama-3.1-8b: 84000}
"""
    assert load_from_text(text, "seoul.yaml").req.costs.api_output_per_million == {
        "llama-3.1-8b": 84000}
    typo = text + "  api_input_per_million: {llama-3.1-8b: 200000000}\n"
    try:
        load_from_text(typo, "seoul.yaml")
    except InputError as exc:
        told = str(exc)
    else:
        raise AssertionError("a 200-million-won price per million tokens was accepted")
    assert "seoul.yaml:14:" in told
    assert "at most 14,000,000 KRW per million tokens" in told
