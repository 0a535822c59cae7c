"""Catalog sheet: the GPU, platform and precision rows the formulas look up, with sources.

Prices here are formulas over the Inputs sheet's named price cells (one place to edit).
"""

from __future__ import annotations

from functools import partial

from ...model.calculations import TABLE_COLUMNS
from ...model.catalog import CLOUD_TIERS, Catalog
from ...sizing.costs import TIER_FALLBACK, cloud_price, tier_cell_formula, tier_words
from ..proposal.format import catalog_note, precision_name
from .book import Book
from .formats import clean_text, fit_width, number_format, wrapped_height
from .layout import TABLE_COLUMN_INFO, TABLE_TITLES, Layout

__all__ = ["write"]


def write(book: Book) -> None:
    """Write the Catalog sheet (its rows are planned in Layout)."""
    ws = book.ws["Catalog"]
    f = book.f
    lay = book.lay
    book.title(ws, "Catalog rows this workbook uses",
               "The formulas look these cells up (INDEX/MATCH on the id in column A). Prices "
               "are formulas over the Inputs sheet: change them there.", span=(4, 20 + 34 + 14 * 3))
    ws.set_column(0, 0, 20)
    ws.set_column(1, 1, 34)
    width = max(len(c) for c in TABLE_COLUMNS.values())
    ws.set_column(2, 1 + width, 14)
    ws.set_column(2 + width, 4 + width, 40, book.f("wrap_note"))
    fit_width(ws, 54 + 14 * width + 120, 20)
    ws.repeat_columns(0, 0)
    cat = book.catalog
    asked = book.r.source.requirements if book.r.source is not None else {}
    own = frozenset((asked.get("costs") or {}).get("cloud_gpu_hour") or {})
    for table, hrow in book.lay.catalog_blocks:
        cols = TABLE_COLUMNS[table]
        # column A holds the catalog's codes because the formulas look them up by code
        heads = [f"{TABLE_TITLES.get(table, table)} code (the formulas' key)", "Name"]
        heads += [TABLE_COLUMN_INFO.get(c, (c, ""))[0] for c in cols]
        sources = {"gpus": ["Source", "Purchase price source", "Cloud price source"],
                   "platforms": ["Source", "Notes"],
                   "precisions": ["Source", "Computes on (tensor cores)"]}.get(table, [])
        # the cloud tiers' headers are long ("Cloud price per GPU-hour, committed three-year
        # contract"): the row grows to show them whole in a 14-character column (bold 11 pt,
        # a line more for words that do not break where the estimate does)
        ws.set_row(hrow, max(30.0, *(wrapped_height(h, 14, 11) + 14 for h in heads[2:])))
        for j, text in enumerate(heads):
            ws.write_string(hrow, j, text, f("header"))
        for j, text in enumerate(sources):
            ws.write_string(hrow, 2 + width + j, text, f("header"))
        for n, (tid, _) in enumerate(lay.catalog_ids[table]):
            row = hrow + 1 + n
            data = book.r.tables[table][tid]
            ws.write_string(row, 0, tid, f("label_bold"))
            texts = _catalog_texts(cat, table, tid, own)
            ws.write_string(row, 1, texts[0], f("wrap"))  # long names were cut
            for j, colname in enumerate(cols):
                value = float(data[colname])
                unit = TABLE_COLUMN_INFO.get(colname, (colname, ""))[1]
                fmt = f("calc", number_format(unit, [value], book.cur, dash_zero=True))
                price = lay.price_names.get((table, tid, colname))
                if price:
                    ws.write_formula(row, 2 + j, f"={price}", fmt, value)
                elif table == "gpus" and colname in TIER_FALLBACK:
                    # a tier's price follows the account's cloud price cell as the engine
                    # would, read back (an edited price is the account's own in every tier)
                    ws.write_formula(row, 2 + j, "=" + tier_cell_formula(
                        colname, {c: float(data[c]) for c in cols}, partial(_gpu_cell, lay, tid)),
                        fmt, value)
                else:
                    ws.write_number(row, 2 + j, value, fmt)
            for j, text in enumerate(texts[1:]):
                ws.write_string(row, 2 + width + j, clean_text(text), f("wrap_note"))
            ws.set_row(row, max(wrapped_height(texts[0], 34, 11),
                                *(wrapped_height(t, 40) for t in texts[1:])))
    ws.freeze_panes(3, 1)


def _gpu_cell(lay: Layout, tid: str, column: str) -> str:
    """Where GPU ``tid``'s ``column`` is: its Inputs price cell, else its Catalog cell."""
    return (lay.price_names.get(("gpus", tid, column))
            or lay.catalog_cells[("gpus", tid, column)].removeprefix("Catalog!"))


def _cloud_source(cat: Catalog, tid: str, own: frozenset[str]) -> str:
    """Where a GPU's cloud tier prices come from: the account's own price in every tier
    (costs.cloud_columns), else the dated offers, naming the tiers derived by the catalog's
    ratio between tiers (costs.cloud_price; the tier columns' figures say neither)."""
    if tid in own:
        return ("the account's own cloud price (requirements file, costs.cloud_gpu_hour), "
                "paid in every tier")
    derived = [tier_words(t) for t in CLOUD_TIERS
               if (p := cloud_price(cat, tid, t)) is not None and p.steps]
    # no longer than the purchase price's source: a taller row pushed the precisions onto
    # pages of their own (acme-corp printed 51 pages, not 49)
    return ("dated cloud offers by tier"
            + (f"; derived by the catalog's tier ratio (no dated offer): {', '.join(derived)}"
               if derived else " (the dated price list)") + "; see the note on Inputs")


def _catalog_texts(cat: Catalog, table: str, tid: str,
                   own: frozenset[str] = frozenset()) -> list[str]:
    names = {pid: p.name for pid, p in cat.platforms.items()}
    if table == "gpus" and tid in cat.gpus:
        g = cat.gpus[tid]
        return [g.name, catalog_note(g.source, names),
                f"{catalog_note(g.price_source, names)} ({g.price_date})" if g.price_source
                else "no price found", _cloud_source(cat, tid, own)]
    if table == "platforms" and tid in cat.platforms:
        p = cat.platforms[tid]
        return [p.name, catalog_note(p.source, names), catalog_note(p.notes, names)]
    if table == "precisions" and tid in cat.precisions:
        q = cat.precisions[tid]
        # the name the proposal uses (FP8); the Summary's precision rows look it up here
        return [precision_name(tid), q.source, precision_name(q.compute_path)]
    return ["", ""]
