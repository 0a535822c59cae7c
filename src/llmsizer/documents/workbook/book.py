"""The state every sheet writer shares (:class:`Book`) and the helpers more than one uses.

A sheet writer is ``write(book)``: it reads ``book.r`` (the engine's Result), ``book.lay``
(where every cell is), writes into ``book.ws[<sheet>]`` with formats ``book.f(role, fmt)``
and records what re-reading needs (``book.named_values``; formulas and defined names are
recorded by the hooks installed in :meth:`Book.open`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...model.calculations import INPUTS, PRICE_IN_ACCOUNT_CURRENCY, Input, stated_product
from ...model.catalog import Catalog, load_catalog
from ...sizing.costs import listed_source
from ...sizing.results import Result
from ..marker import FORMAT, key_outputs, metadata_properties, structure_digest
from ..proposal.format import catalog_note, precision_name
from .formats import PERCENT_UNITS, Formats, clean_text, dv_title, unit_text, wrapped_height
from .layout import Column, Layout, letter, used_names
from .xlsxcells import FORMULA_CELL, direct, fast_formulas, fast_rows, fast_strings, strip_equals

__all__ = ["Book"]


@dataclass
class Book:
    """One workbook being written."""

    r: Result
    catalog: Catalog = field(default_factory=load_catalog)

    def __post_init__(self) -> None:
        self.cur = self.r.account.currency
        self.inputs = {i.name: i for i in INPUTS}
        used = used_names()
        self.account_inputs = [i for i in INPUTS if i.scope == "account" and i.name in used]
        self.workload_inputs = [i for i in INPUTS if i.scope == "workload" and i.name in used]
        self.option_inputs = [i for i in INPUTS if i.scope == "option" and i.name in used]
        self.lay = Layout.plan(self.r, [i.name for i in self.option_inputs])
        self.n_wl = max(1, len(self.r.workloads))
        self.tail = self.lay.tail
        self.ws: dict[str, Any] = {}
        self.wb: Any = None
        self.f: Formats
        # What llmsizer.documents.reread needs to check and re-read the workbook (the marker).
        self.formulas: list[tuple[str, str, str]] = []  # (sheet, cell, formula)
        self.names: list[tuple[str, str]] = []  # (defined name, target)
        self.normal: dict[tuple[str, str], str] = {}  # (sheet, cell) -> formula normalised
        self.named_values: dict[str, float] = {}  # defined name -> the value written there

    # -- opening and closing --------------------------------------------------------------

    def open(self, wb: Any, sheets: tuple[str, ...]) -> None:
        """Add the sheets (in tab order) to XlsxWriter workbook ``wb``, with recording hooks."""
        self.wb = wb
        self.f = Formats(wb)
        fast_strings(wb)
        wb.set_properties({"title": f"LLM serving sizing: {clean_text(self.r.account.name)}",
                           "subject": "GPU sizing workbook",
                           "comments": f"llmsizer {self.r.llmsizer_version}, catalog "
                                       f"{self.r.catalog_digest}"})
        self.ws = {name: wb.add_worksheet(name) for name in sheets}
        for name, ws in self.ws.items():
            fast_formulas(ws)
            fast_rows(ws)
            self._record_formulas(name, ws)
        self._record_names(wb)

    def _record_formulas(self, sheet: str, ws: Any) -> None:
        """Note every formula as it is written (for the marker's structure digest)."""
        write = ws.write_formula
        formulas = self.formulas
        if direct(ws):
            check, table = ws._check_dimensions, ws.table

            def write_formula(row: int, col: int, formula: str, cell_format: Any = None,
                              value: Any = 0) -> Any:
                formulas.append((sheet, f"{letter(col)}{row + 1}", formula))
                if check(row, col):
                    return -1
                table[row][col] = FORMULA_CELL(strip_equals(formula), cell_format, value)
                return 0
        else:
            def write_formula(row: int, col: int, formula: str, cell_format: Any = None,
                              value: Any = 0) -> Any:
                formulas.append((sheet, f"{letter(col)}{row + 1}", formula))
                return write(row, col, formula, cell_format, value)

        ws.write_formula = write_formula

    def _record_names(self, wb: Any) -> None:
        define = wb.define_name

        def define_name(name: str, formula: str) -> Any:
            self.names.append((name, formula))
            return define(name, formula)

        wb.define_name = define_name

    def finish(self) -> None:
        """Print setup and protection of every sheet, then the marker."""
        for ws in self.ws.values():
            ws.protect("", {"format_columns": True, "format_rows": True})
            ws.set_landscape()
            ws.set_paper(9)  # A4
            ws.set_margins(left=0.4, right=0.4, top=0.6, bottom=0.6)
            ws.set_header("&L&A&R&D")  # sheet name and date: no user text in & codes
            ws.set_footer("&CPage &P of &N")
        self.ws["Summary"].activate()
        self._write_marker()

    def _write_marker(self) -> None:
        """Custom document properties that let ``llmsizer report edited.xlsx`` check and
        re-read this workbook (llmsizer.documents.reread)."""
        r = self.r
        meta = {
            "format": FORMAT,
            "llmsizer_version": r.llmsizer_version,
            "catalog_digest": r.catalog_digest,
            "structure": structure_digest(self.formulas, self.names, self.normal),
            "source": r.source.model_dump(mode="json") if r.source is not None else None,
            "inputs": self.named_values,
            "prices": {**{name: [table, tid, col]
                          for (table, tid, col), name in self.lay.price_names.items()},
                       # a workload's hosted-API prices: read back as the account's, by model
                       **{f"in_w{k}_{col}": ["models", w.model, col]
                          for k, w in enumerate(r.workloads, start=1)
                          for col in ("api_input_per_million", "api_output_per_million")
                          if f"in_w{k}_{col}" in self.named_values},
                       # the compared hosted embedding / reranking API's (Inputs: in_api_<kind>)
                       **{f"in_api_{kind}": ["retrieval", kind, "api_per_million_tokens"]
                          for kind in ("embed", "rerank")
                          if f"in_api_{kind}" in self.named_values}},
            "outputs": key_outputs(r),
        }
        for name, value in metadata_properties(meta):
            self.wb.set_custom_property(name, value, "text")

    # -- helpers shared by sheet writers ----------------------------------------------------

    def display_name(self, table: str, tid: str) -> str:
        """The catalog's name of GPU or platform ``tid`` (the id when it has none)."""
        entry = (self.catalog.gpus if table == "gpus" else self.catalog.platforms).get(tid)
        return entry.name if entry is not None and entry.name else tid

    def named_cell(self, name: str, c: Column) -> tuple[str, str] | None:
        """``(formula operand, cached text)`` showing the catalog name of the GPU, platform or
        precision in option column ``c`` (``name`` is ``gpu``, ``platform``,
        ``weight_precision`` or ``kv_precision``); None otherwise."""
        operand = self.lay.catalog_name(name, c)
        if operand is None:
            return None
        value = str(c.option.values[name])
        if name in ("weight_precision", "kv_precision"):
            return operand, precision_name(value)  # the Catalog sheet's name of it
        table = "gpus" if name == "gpu" else "platforms"
        return operand, self.display_name(table, value)

    def title(self, ws: Any, title: str, subtitle: str, col: int = 0, *,
              span: tuple[int, float] | None = None) -> None:
        """Title and subtitle at the top left. ``span`` = (last column, width in characters of
        ``col``..last column): the subtitle is merged over those columns and wrapped, its
        row made tall enough, so a long one is not cut off at the page edge."""
        ws.write_string(0, col, clean_text(title), self.f("title"))
        if span is None:
            ws.write_string(1, col, clean_text(subtitle), self.f("subtitle"))
            return
        last, width = span
        fmt = self.f("subtitle_wrap")
        if last > col:
            ws.merge_range(1, col, 1, last, "", fmt)
        ws.write_string(1, col, clean_text(subtitle), fmt)  # write_string: never a formula
        ws.set_row(1, wrapped_height(subtitle, width, 11))  # the subtitle style is 11 pt

    def note(self, ws: Any, row: int, col: int, text: str) -> None:
        """A wrapped note in a 70-character column, its row made tall enough."""
        ws.write_string(row, col, clean_text(text), self.f("wrap_note"))
        height = wrapped_height(text, 70)
        if height > 15:
            ws.set_row(row, height)

    def risk(self, ws: Any, r1: int, c1: int, r2: int, c2: int) -> None:
        """Red when TRUE (a risk flag)."""
        ws.conditional_format(r1, c1, r2, c2, {"type": "cell", "criteria": "==", "value": "TRUE",
                                               "format": self.f("bad")})

    def pass_fail(self, ws: Any, r1: int, c1: int, r2: int, c2: int) -> None:
        """Green when TRUE, red when FALSE (a target met or not)."""
        ws.conditional_format(r1, c1, r2, c2, {"type": "cell", "criteria": "==", "value": "TRUE",
                                               "format": self.f("good")})
        ws.conditional_format(r1, c1, r2, c2, {"type": "cell", "criteria": "==",
                                               "value": "FALSE", "format": self.f("bad")})

    def validation(self, i: Input) -> dict[str, Any]:
        """The data validation (bounds, input message) of input ``i``."""
        shown = {"fraction": "% (type 25% or 0.25)", "flag": "1 = yes, 0 = no"}.get(
            i.unit, unit_text(i.unit, self.cur))
        message = f"{i.note} Unit: {shown}."
        v: dict[str, Any] = {"input_title": dv_title(i.label), "input_message": message[:255],
                             "error_title": "Value out of range"[:32]}
        kind = "integer" if i.integer else "decimal"

        def shown_bound(x: float) -> str:
            return f"{x:.0%}" if i.unit in PERCENT_UNITS else f"{x:g}"

        if i.low is not None and i.high is not None:
            v |= {"validate": kind, "criteria": "between", "minimum": i.low, "maximum": i.high}
            bounds = f"between {shown_bound(i.low)} and {shown_bound(i.high)}"
        elif i.low is not None:
            v |= {"validate": kind, "criteria": ">=", "value": i.low}
            bounds = f"at least {shown_bound(i.low)}"
        elif i.high is not None:
            v |= {"validate": kind, "criteria": "<=", "value": i.high}
            bounds = f"at most {shown_bound(i.high)}"
        else:
            return v | {"validate": "any"}
        whole = "a whole number " if i.integer else ""
        v["error_message"] = f"{i.label}: {whole}{bounds}."[:255]
        return v

    @property
    def platform_names(self) -> dict[str, str]:
        """Platform id -> name, for catalog notes that name another platform by its id."""
        return {pid: p.name for pid, p in self.catalog.platforms.items()}

    def price_source(self, table: str, tid: str, colname: str) -> str:
        """Where a price cell's value comes from, with its date."""
        value = float(self.r.tables[table][tid][colname])
        if table == "platforms":
            p = self.catalog.platforms.get(tid)
            asked = self.r.source.requirements if self.r.source is not None else {}
            if tid in ((asked.get("costs") or {}).get("node_prices") or {}):
                return "Account override (requirements file, costs.node_prices)."
            return (f"Estimate, not a quote. {catalog_note(p.notes, self.platform_names)}"
                    if p else "account data")
        g = self.catalog.gpus.get(tid)
        if g is None:
            return "account data"
        # review 23: a catalog price converted to the account's currency (Nordvik's SEK 420 k
        # B200) and a cloud price paid in another instance size than the offer's (Fabrikam
        # Legal's 2-GPU B200 instances) both read "Account override" though the file set none
        usd = self.r.account.currency == "USD"
        if colname == "price":
            date, src = g.price_date, g.price_source
            base = None if not g.price_usd else g.price_usd if usd else stated_product(
                PRICE_IN_ACCOUNT_CURRENCY,
                {"usd_price": g.price_usd, "usd_exchange_rate": self.r.usd_exchange_rate})
        else:
            row = next((p for p in self.r.prices if p.item == f"cloud:{tid}"), None)
            base, date, src = ((value, row.date or "undated",
                                f"{row.source.rstrip('. ')}. {row.note}" if row.note else row.source)
                               if row and not row.source.startswith("account")
                               else (None, None, None))
        if value == 0:
            return "No price found in the catalog: enter one to cost this GPU."
        if base is None or value != base:
            return "Account override (requirements file, costs section)."
        paid = next((p.value for p in self.r.prices if p.item == f"cloud:{tid}"), value)
        # session 23: Fabrikam Legal's B200 cell holds the 8-GPU offer's 4.44 while the plan
        # rents 2-GPU instances at 4.58: the note says which price the plan pays
        rents = ("" if colname == "price" or abs(paid - value) < 1e-9 else
                 f"This cell is the offer's own instance size; the plan rents another size at "
                 f"{self.cur} {paid:,.2f} per GPU-hour, the price used (Catalog sheet, its "
                 "other sizes; rented: " + str(src).split("; sold as")[0] + "). This cell's offer: ")
        if rents:  # the cell's own price, its listed offer's source (session 24)
            listed = listed_source(self.catalog, tid, self.r.cloud_tier,  # type: ignore[arg-type]
                                   self.cur, self.r.usd_exchange_rate)
            if listed is not None:
                src, date = listed[0], listed[1] or "undated"
        return (rents + f"{catalog_note(str(src), self.platform_names)} ({date}); "
                + ("catalog prices are USD." if usd else "converted from USD at the account's rate."))
