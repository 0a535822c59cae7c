"""The Scenarios sheet's cloud-tier rows: what each tier's price is, live.

A tier whose price for a GPU of the plan is derived (the GPU has no dated offer in it: the
catalog's ratio between tiers, costs.cloud_price) says so. A cloud price finance types on
Inputs is the account's own and is paid in every tier (costs.TIER_CELL on the Catalog
sheet), so once every GPU of the plan has one, the four rows repeat the proposal: the rows
then say so, and so does the note under the table (the re-run, sizing an account that states
its own prices, leaves the rows out: sensitivity.cloud_tiers_fixed, the proposal's TIERS_FIXED).
The test is sensitivity.tier_moves_price over the Catalog cells: each tier column against the
column it falls back to (costs.TIER_FALLBACK).
"""

from __future__ import annotations

from ...model.calculations import CLOUD_TIER_CODES, Scenario
from ...model.catalog import CLOUD_TIERS
from ...model.expr import evaluate
from ...sizing.costs import TIER_FALLBACK, cloud_price
from .book import Book
from .formats import formula_text

__all__ = ["TIERS_REPEAT", "change_cell", "repeat_test"]

TIER_INPUT = "cloud_tier_what_if"
TIERS_REPEAT = ("The cloud price rows repeat the proposal: every GPU of the plan has a cloud "
                "price typed on Inputs, the account's own, paid in every tier (a re-run from "
                "this workbook leaves the rows out). ")
_TIER_BY_CODE = {CLOUD_TIER_CODES[tier]: tier for tier in CLOUD_TIERS}


def _plan_gpus(book: Book) -> list[str]:
    r = book.r
    return sorted({w.best.gpu for w in r.workloads if w.best is not None}
                  | {w.best.gpu for w in r.retrieval if w.best is not None})


def repeat_test(book: Book) -> str | None:
    """A formula (no ``=``) that is TRUE while no cloud tier moves a price or instance size of
    a GPU of the plan; None when the plan has no GPU."""
    cells = book.lay.catalog_cells
    pairs = [f"{cells[('gpus', g, col)]}={cells[('gpus', g, own)]}"
             for g in _plan_gpus(book) for col, own in TIER_FALLBACK.items()]
    return f"AND({','.join(pairs)})" if pairs else None


def _derived(book: Book, sc: Scenario) -> bool:
    """Whether the tier's price of a GPU of the plan that the account does not price itself
    is derived, not a dated offer."""
    tier = _TIER_BY_CODE.get(int(float(evaluate(sc.value, {}))))
    asked = book.r.source.requirements if book.r.source is not None else {}
    own = (asked.get("costs") or {}).get("cloud_gpu_hour") or {}
    found = [cloud_price(book.catalog, g, tier) for g in _plan_gpus(book)
             if tier is not None and g not in own]
    return any(p is not None and p.steps for p in found)


def change_cell(book: Book, sc: Scenario, test: str | None) -> tuple[str, str]:
    """The Change column of a cloud-tier row: (formula, the text it shows as written)."""
    text = f"{sc.change}, derived" if _derived(book, sc) else sc.change
    if test is None:
        return "=" + formula_text(text), text
    return f"=IF({test},{formula_text(f'{sc.change}, own price')},{formula_text(text)})", text
