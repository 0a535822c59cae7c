"""The editable workbook (``<slug>.xlsx``): the engine's calculation list printed as formulas.

This module computes nothing. It lays out cells and prints every calculation of
:data:`llmsizer.calculations.CALCULATIONS` with :func:`llmsizer.expr.render`, once per
option column; each formula carries the engine's value (from the :class:`Result`) as
its cached result, so previews and ``openpyxl data_only=True`` see numbers, and a
spreadsheet that recalculates reproduces them (tests/test_workbook_recalc.py checks
that with LibreOffice).

Sheets (docs/workbook.md):

* **Summary** - per workload the recommendation in words and numbers, totals, headroom,
  cost per million tokens, and a native chart per workload, all formulas.
* **Inputs** - account inputs as named cells ``in_<name>``, workload inputs as one
  column per workload named ``in_w<k>_<name>``, GPU and node prices ``in_price_<gpu>``,
  ``in_cloud_<gpu>``, ``in_node_price_<platform>``. Unlocked, validated, with messages.
* **KV, Throughput, Nodes, TCO** - one row per calculation, one column per option
  (the same column on all four sheets); the engine's choices for each option (GPU,
  platform, precisions, TP, efficiencies) are input cells at the top of KV.
* **Catalog** - the GPU, platform and precision rows the formulas look up (nested
  ``IF`` over these rows: no lookup functions), with their sources.
* **Assumptions** - every default and assumption with its source.

Traps handled here: untrusted text (account, workload, model names) is always written
with ``write_string`` after stripping control characters, so ``=1+1`` stays text;
chart titles never start with ``=``; page headers carry no user text (``&`` codes).
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .calculations import CALCULATIONS, INPUTS, TABLE_COLUMNS, Calculation, Input
from .catalog import Catalog, load_catalog
from .expr import Bin, Call, Expr, Lookup, references, render, to_text
from .results import Option, Result, WorkloadResult

# XlsxWriter ships no type information: imported untyped so mypy --strict passes.
_xlsxwriter: Any = importlib.import_module("xlsxwriter")

__all__ = [
    "CALC_SHEETS",
    "COL_LABEL",
    "COL_NAME",
    "COL_UNIT",
    "FIRST_OPTION_COL",
    "MAX_COLUMNS_PER_WORKLOAD",
    "ROW_OPTION",
    "ROW_STATUS",
    "ROW_WORKLOAD",
    "SHEETS",
    "clean_text",
    "write_workbook",
]

SHEETS = ("Summary", "Inputs", "KV", "Throughput", "Nodes", "TCO", "Catalog", "Assumptions")
CALC_SHEETS = ("KV", "Throughput", "Nodes", "TCO")
MAX_COLUMNS_PER_WORKLOAD = 12
MAX_REJECTED_SHOWN = 3  # rejected options shown when there are many feasible ones
MAX_CHARTS = 12
_RISK_FLAGS = frozenset({"measured_gap_risk"})  # flags shown red when TRUE

# Layout of the four calculation sheets (0-based; the tests read cells through these).
ROW_WORKLOAD, ROW_OPTION, ROW_STATUS = 3, 4, 5
ROW_SECTION = 6  # first section header; body rows follow
COL_NAME, COL_LABEL, COL_UNIT, FIRST_OPTION_COL = 0, 1, 2, 3

_SHEET_TITLES = {
    "KV": "KV cache and memory per replica",
    "Throughput": "Throughput and latency: decode step time, prefill, batch, SLOs",
    "Nodes": "Replicas, GPUs, nodes and headroom",
    "TCO": "Cost of ownership: on-prem vs cloud",
}

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MAX_TEXT = 32_000


def clean_text(text: str) -> str:
    """Untrusted text as it is written: control characters removed, length bounded."""
    return _CONTROL.sub("", text)[:_MAX_TEXT]


# --- number formats ---------------------------------------------------------------------

_CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "¥", "INR": "₹"}
_PLURALS = {"GPUs": "GPU", "nodes": "node", "replicas": "replica", "sequences": "sequence",
            "users": "user", "tokens": "token", "layers": "layer", "heads": "head",
            "experts": "expert", "steps": "step", "years": "year", "months": "month"}
_PERCENT_UNITS = frozenset({"fraction", "fraction of capex / year"})
_FIXED_DECIMALS = {"kW": 1, "months": 1, "years": 1, "h": 0, "M tokens": 0, "TFLOP/s": 1,
                   "TOPS": 1, "tok/s": 1, "GB/s": 0, "FLOP/B": 0}
_UNIT_SUFFIX = {"M tokens": "M tok", "x": "×", "ratio": "", "code": ""}


def unit_text(unit: str, currency: str) -> str:
    """The unit as the Unit column shows it (fractions are displayed as percentages)."""
    if unit in _PERCENT_UNITS:
        return unit.replace("fraction", "%")
    if unit == "us":
        return "µs"
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


def number_format(unit: str, values: Sequence[float], currency: str, *, dash_zero: bool = False
                  ) -> str:
    """The display format of a row of ``values`` in ``unit`` (units on every number)."""
    if unit == "flag":
        return '"yes";"yes";"no"'
    if unit == "id":
        return "@"
    if unit.startswith("currency"):
        per = unit.removeprefix("currency")
        per = {"/yr": "/yr", "/h": "/h", "/kWh": "/kWh", "/M tok": "/M tok"}.get(per, per)
        decimals = {"/h": 2, "/kWh": 3, "/M tok": 2}.get(per, 0)
        fmt = _money(currency, decimals, per)
    elif unit in _PERCENT_UNITS:
        fmt = "0.0%"
    elif unit == "params":
        fmt = '#,##0.0,,," bn"'
    elif unit == "FLOP":
        fmt = '0.00E+00" FLOP"'
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
        if decimals == 0 and unit in _PLURALS and not dash_zero:
            return f'[=1]0" {_PLURALS[unit]}";{fmt}'  # "1 GPU", "2 GPUs"
    if dash_zero:
        fmt = f'{fmt};-{fmt};"—"'
    return fmt


_PAGE_CHARS = 200  # column-width characters that print legibly across a landscape A4 page


def _fit_width(ws: Any, width: float, repeated: float = 0.0) -> None:
    """Fit to the page width: one page when it stays legible, else as many pages wide as
    needed, the ``repeated`` (label) columns printed again on each."""
    pages = max(1, math.ceil((width - repeated) / (_PAGE_CHARS - repeated)))
    ws.fit_to_pages(pages, 0)


def _wrapped_height(text: str, width: float, font_pt: float = 9) -> float:
    """Row height (points) that shows ``text`` wrapped in a column ``width`` characters wide.
    Spreadsheets do not grow rows for wrapped text on their own when opening a file."""
    per_line = max(1.0, width * 11 / font_pt * 1.15)
    lines = sum(max(1, math.ceil(len(part) / per_line)) for part in text.split("\n"))
    return max(15.0, lines * font_pt * 1.25 + 3)


_QUOTED = re.compile(r'"([^"]*)"')


def _shown_width(value: float, fmt: str) -> int:
    """About how many characters ``value`` takes when shown with ``fmt`` (column widths)."""
    literal, scientific, scale, decimals, percents = _format_shape(fmt)
    if scientific:
        return 9 + literal
    return len(f"{value * scale:,.{decimals}f}") + literal + percents


@cache
def _format_shape(fmt: str) -> tuple[int, bool, float, int, int]:
    """What :func:`_shown_width` needs of a number format (parsed once per format: the
    workbook measures every cell): literal text length, scientific, value scale, decimals,
    percent signs."""
    section = fmt.split(";")[0]
    literal = len("".join(_QUOTED.findall(section)))
    body = _QUOTED.sub("", section)
    scale = (100.0 if "%" in body else 1.0) / (1e9 if body.endswith(",,,") else 1.0)
    decimals = len(body.split(".")[1].rstrip(",%")) if "." in body else 0
    return literal, "E+" in body, scale, decimals, body.count("%")


# --- columns: one per option shown --------------------------------------------------------


@dataclass(frozen=True)
class _Column:
    col: int
    letter: str
    k: int  # 1-based workload index
    workload: WorkloadResult
    option: Option
    status: str
    recommended: bool


def _letter(col: int) -> str:
    name = ""
    col += 1
    while col:
        col, rem = divmod(col - 1, 26)
        name = chr(65 + rem) + name
    return name


def _shown_options(w: WorkloadResult) -> list[tuple[Option, str]]:
    """Recommended first, then the best-ranked alternatives, then rejected ones (capped)."""
    feasible = [o for o in w.options if o.feasible]
    feasible.sort(key=lambda o: o.id != w.recommended)  # stable: engine ranking kept
    rejected = [o for o in w.options if not o.feasible]
    n_rej = min(len(rejected), max(MAX_REJECTED_SHOWN, MAX_COLUMNS_PER_WORKLOAD - len(feasible)))
    n_feas = min(len(feasible), MAX_COLUMNS_PER_WORKLOAD - n_rej)
    out: list[tuple[Option, str]] = []
    for rank, o in enumerate(feasible[:n_feas], start=1):
        if w.mode == "measured":
            status = "★ recommended (measured: customer benchmark)" if o.id == w.recommended else (
                f"alternative #{rank}")
        else:
            status = "★ recommended" if o.id == w.recommended else f"alternative #{rank}"
        if not o.priced:
            status = f"{status}; no GPU price in catalog"
        out.append((o, status))
    out += [(o, f"✗ rejected: {clean_text(o.reason)}") for o in rejected[:n_rej]]
    return out


def _plan_columns(result: Result) -> tuple[list[_Column], list[str]]:
    cols: list[_Column] = []
    hidden: list[str] = []
    col = FIRST_OPTION_COL
    for k, w in enumerate(result.workloads, start=1):
        shown = _shown_options(w)
        for o, status in shown:
            cols.append(_Column(col, _letter(col), k, w, o, status, o.id == w.recommended))
            col += 1
        if len(shown) < len(w.options):
            hidden.append(f"{clean_text(w.name)}: {len(shown)} of {len(w.options)} options shown, "
                          f"the other {len(w.options) - len(shown)} are in {result.account.slug}.json")
    return cols, hidden


# --- small helpers ----------------------------------------------------------------------


def _flag_expr(e: Expr) -> bool:
    """True when the spreadsheet value is a logical (comparison, AND, OR)."""
    if isinstance(e, Bin):
        return e.op in ("=", "<>", "<", "<=", ">", ">=")
    return isinstance(e, Call) and e.fn in ("AND", "OR")


def _cached(value: float | str, flag: bool) -> float | str | bool:
    if flag and not isinstance(value, str):
        return bool(value)
    return value


def _name_id(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x"


@cache
def _lookup_keys() -> dict[str, str]:
    """Option input -> the catalog table it selects a row of (from the Lookup nodes)."""
    out: dict[str, str] = {}
    stack: list[Expr] = [c.expr for c in CALCULATIONS]
    while stack:
        e = stack.pop()
        if isinstance(e, Lookup):
            out[e.key.name] = e.table
        elif isinstance(e, Bin):
            stack += [e.left, e.right]
        elif isinstance(e, Call):
            stack += list(e.args)
    return out


@cache
def _used_names() -> frozenset[str]:
    used: set[str] = set()
    for c in CALCULATIONS:
        used |= references(c.expr)
    return frozenset(used)


_TABLE_COLUMN_INFO: dict[str, tuple[str, str]] = {
    "memory_gb": ("Memory", "GB"),
    "bandwidth_tb_s": ("Memory bandwidth", "TB/s"),
    "bf16_tflops": ("BF16 dense", "TFLOP/s"),
    "fp8_tflops": ("FP8 dense", "TFLOP/s"),
    "int8_tops": ("INT8 dense", "TOPS"),
    "fp4_tflops": ("FP4 dense", "TFLOP/s"),
    "link_gb_s": ("Scale-up link, one way", "GB/s"),
    "price": ("Purchase price", "currency"),
    "cloud_gpu_hour": ("Cloud price per GPU-hour", "currency/h"),
    "gpus_per_node": ("GPUs per node", "GPUs"),
    "node_power_kw": ("Node power", "kW"),
    "base_price": ("Node price without GPUs", "currency"),
    "bytes_per_param": ("Bytes per value", "B"),
    "scale_overhead": ("Scale overhead", "fraction"),
    "compute_code": ("Compute path code", "code"),
}
# Catalog cells the account may change (costs): they live on Inputs as named cells.
_PRICE_COLUMNS = {("gpus", "price"): "in_price_", ("gpus", "cloud_gpu_hour"): "in_cloud_",
                  ("platforms", "base_price"): "in_node_price_"}
_TABLE_TITLES = {"gpus": "GPU", "platforms": "Platform", "precisions": "Precision"}


# --- the writer ---------------------------------------------------------------------------


@dataclass
class _Layout:
    """Where everything is, decided before any formula is printed."""

    columns: list[_Column]
    hidden: list[str]
    option_rows: dict[str, int] = field(default_factory=dict)  # option input -> KV row
    calc_rows: dict[str, tuple[str, int]] = field(default_factory=dict)  # calc -> (sheet, row)
    catalog_cells: dict[tuple[str, str, str], str] = field(default_factory=dict)
    catalog_ids: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # id, $A$r
    catalog_id_ranges: dict[str, str] = field(default_factory=dict)
    price_names: dict[tuple[str, str, str], str] = field(default_factory=dict)


_ROLES: dict[str, dict[str, Any]] = {
    "title": {"bold": True, "font_size": 14, "font_color": "#1F3864"},
    "subtitle": {"italic": True, "font_color": "#595959"},
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
    "note": {"font_color": "#595959", "font_size": 9, "valign": "top"},
    "text": {"valign": "top"},
    "wrap": {"text_wrap": True, "valign": "top"},
    "wrap_note": {"text_wrap": True, "valign": "top", "font_color": "#595959", "font_size": 9},
    "input": {"locked": False, "valign": "top", "bg_color": "#FFF2CC", "font_color": "#0033CC",
              "border": 1, "border_color": "#BFBFBF"},
    "calc": {"valign": "top"},
    "calc_rec": {"bg_color": "#EEF5E6", "valign": "top"},
    "total": {"bold": True, "top": 1, "valign": "top"},
    "good": {"bg_color": "#C6EFCE", "font_color": "#006100"},
    "bad": {"bg_color": "#FFC7CE", "font_color": "#9C0006"},
}


class _Formats:
    """XlsxWriter formats, created once per (role, number format)."""


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


def _strip_equals(formula: str, expand_future_functions: bool = False) -> str:
    return formula[1:] if formula.startswith("=") else formula


def _fast_formulas(ws: Any) -> None:
    """Skip XlsxWriter's ~30 regex substitutions per formula (they add ``_xlfn.`` prefixes
    to functions this workbook never uses: the lint test keeps it that way). Two thirds of
    the write time otherwise. If XlsxWriter renames the hook, this does nothing."""
    if hasattr(ws, "_prepare_formula"):
        ws._prepare_formula = _strip_equals


def write_workbook(result: Result, path: Path | str) -> None:
    """Write the workbook for ``result`` to ``path`` (the caller makes it atomic)."""
    _Book(result, Path(path)).write()


class _Book:
    def __init__(self, result: Result, path: Path) -> None:
        self.r = result
        self.path = path
        self.cur = result.account.currency
        self.catalog: Catalog = load_catalog()
        cols, hidden = _plan_columns(result)
        self.lay = _Layout(cols, hidden)
        self.inputs = {i.name: i for i in INPUTS}
        used = _used_names()
        self.account_inputs = [i for i in INPUTS if i.scope == "account" and i.name in used]
        self.workload_inputs = [i for i in INPUTS if i.scope == "workload" and i.name in used]
        self.option_inputs = [i for i in INPUTS if i.scope == "option" and i.name in used]
        self.scope = {i.name: i.scope for i in INPUTS}
        self.n_wl = max(1, len(result.workloads))
        self.tail = FIRST_OPTION_COL + max(1, len(cols))  # first column after the options
        # What llmsizer.reread needs to check and re-read the workbook (the marker).
        self.formulas: list[tuple[str, str, str]] = []  # (sheet, cell, formula)
        self.names: list[tuple[str, str]] = []  # (defined name, target)
        self.named_values: dict[str, float] = {}  # defined name -> the value written there

    # -- planning ----------------------------------------------------------------------

    def _plan(self) -> None:
        lay = self.lay
        row = ROW_SECTION + 1
        for i in self.option_inputs:
            lay.option_rows[i.name] = row
            row += 1
        first_calc_row = {"KV": row + 1}  # a blank-free section header row before the calcs
        for sheet in CALC_SHEETS:
            nxt = first_calc_row.get(sheet, ROW_SECTION + 1)
            for c in CALCULATIONS:
                if c.sheet == sheet:
                    lay.calc_rows[c.name] = (sheet, nxt)
                    nxt += 1
        self.calc_section_row = {s: (row if s == "KV" else ROW_SECTION) for s in CALC_SHEETS}
        self._plan_catalog()

    def _plan_catalog(self) -> None:
        lay = self.lay
        row = 3
        self.catalog_blocks: list[tuple[str, int]] = []
        for table, cols in TABLE_COLUMNS.items():
            ids = sorted(self.r.tables.get(table, {}))
            self.catalog_blocks.append((table, row))
            row += 1
            first = row
            lay.catalog_ids[table] = []
            for tid in ids:
                lay.catalog_ids[table].append((tid, f"Catalog!$A${row + 1}"))
                for j, colname in enumerate(cols):
                    lay.catalog_cells[(table, tid, colname)] = f"Catalog!${_letter(2 + j)}${row + 1}"
                row += 1
            if ids:
                lay.catalog_id_ranges[table] = f"=Catalog!$A${first + 1}:$A${row}"
            row += 1
        seen: set[str] = set()
        for (table, colname), prefix in _PRICE_COLUMNS.items():
            for tid in sorted(self.r.tables.get(table, {})):
                name = f"{prefix}{_name_id(tid)}"
                while name in seen:
                    name += "_"
                seen.add(name)
                lay.price_names[(table, tid, colname)] = name

    # -- formula rendering -----------------------------------------------------------------

    def _template(self, calc: Calculation) -> str:
        """The calculation's formula with ``\\x00`` for its column and ``\\x01`` for k."""
        sheet = calc.sheet
        lay = self.lay

        def where(target: str) -> str:
            return "" if target == sheet else f"{target}!"

        def name(n: str) -> str:
            scope = self.scope.get(n)
            if scope == "account":
                return f"in_{n}"
            if scope == "workload":
                return f"in_w\x01_{n}"
            if scope == "option":
                return f"{where('KV')}\x00{lay.option_rows[n] + 1}"
            target, row = lay.calc_rows[n]
            return f"{where(target)}\x00{row + 1}"

        def table(lk: Lookup, key: str) -> str:
            rows = lay.catalog_ids.get(lk.table, [])
            if not rows:
                raise ValueError(f"no {lk.table} rows for {calc.name}")
            cells = [lay.catalog_cells[(lk.table, tid, lk.column)] for tid, _ in rows]
            out = cells[-1]
            for (_, id_cell), value_cell in zip(reversed(rows[:-1]), reversed(cells[:-1]),
                                                strict=True):
                out = f"IF({key}={id_cell},{value_cell},{out})"
            return out

        return render(calc.expr, name, table)

    # -- writing -----------------------------------------------------------------------------

    def write(self) -> None:
        self._plan()
        wb = _xlsxwriter.Workbook(str(self.path), {"constant_memory": False, "in_memory": True,
                                                   "strings_to_formulas": False,
                                                   "strings_to_numbers": False,
                                                   "strings_to_urls": False})
        try:
            self.f = _Formats(wb)
            wb.set_properties({"title": f"LLM serving sizing: {clean_text(self.r.account.name)}",
                               "subject": "GPU sizing workbook",
                               "comments": f"llmsizer {self.r.llmsizer_version}, catalog "
                                           f"{self.r.catalog_digest}"})
            self.ws = {name: wb.add_worksheet(name) for name in SHEETS}
            for name, ws in self.ws.items():
                _fast_formulas(ws)
                self._record_formulas(name, ws)
            self._record_names(wb)
            self._write_inputs(wb)
            self._write_catalog()
            for sheet in CALC_SHEETS:
                self._write_calc_sheet(sheet)
            self._write_summary(wb)
            self._write_assumptions()
            for ws in self.ws.values():
                self._finish(ws)
            self.ws["Summary"].activate()
            self._write_marker(wb)
        finally:
            wb.close()

    def _record_formulas(self, sheet: str, ws: Any) -> None:
        """Note every formula as it is written (for the marker's structure digest)."""
        write = ws.write_formula

        def write_formula(row: int, col: int, formula: str, cell_format: Any = None,
                          value: Any = 0) -> Any:
            self.formulas.append((sheet, f"{_letter(col)}{row + 1}", formula))
            return write(row, col, formula, cell_format, value)

        ws.write_formula = write_formula

    def _record_names(self, wb: Any) -> None:
        define = wb.define_name

        def define_name(name: str, formula: str) -> Any:
            self.names.append((name, formula))
            return define(name, formula)

        wb.define_name = define_name

    def _write_marker(self, wb: Any) -> None:
        """Custom document properties that let ``llmsizer report edited.xlsx`` check and
        re-read this workbook (llmsizer.reread)."""
        from .reread import FORMAT, key_outputs, metadata_properties, structure_digest

        r = self.r
        meta = {
            "format": FORMAT,
            "llmsizer_version": r.llmsizer_version,
            "catalog_digest": r.catalog_digest,
            "structure": structure_digest(self.formulas, self.names),
            "source": r.source.model_dump(mode="json") if r.source is not None else None,
            "inputs": self.named_values,
            "prices": {name: [table, tid, col]
                       for (table, tid, col), name in self.lay.price_names.items()},
            "outputs": key_outputs(r),
        }
        for name, value in metadata_properties(meta):
            wb.set_custom_property(name, value, "text")

    def _finish(self, ws: Any) -> None:
        ws.protect("", {"format_columns": True, "format_rows": True})
        ws.set_landscape()
        ws.set_paper(9)  # A4
        ws.set_margins(left=0.4, right=0.4, top=0.6, bottom=0.6)
        ws.set_header("&L&A&R&D")  # sheet name and date: no user text in & codes
        ws.set_footer("&CPage &P of &N")

    def _title(self, ws: Any, title: str, subtitle: str, col: int = 0) -> None:
        ws.write_string(0, col, clean_text(title), self.f("title"))
        ws.write_string(1, col, clean_text(subtitle), self.f("subtitle"))

    # Inputs ---------------------------------------------------------------------------------

    def _validation(self, i: Input) -> dict[str, Any]:
        shown = {"fraction": "% (type 25% or 0.25)", "flag": "1 = yes, 0 = no"}.get(
            i.unit, unit_text(i.unit, self.cur))
        message = f"{i.note} Unit: {shown}."
        v: dict[str, Any] = {"input_title": i.label[:32], "input_message": message[:255],
                             "error_title": "Value out of range"[:32]}
        kind = "integer" if i.integer else "decimal"

        def shown_bound(x: float) -> str:
            return f"{x:.0%}" if i.unit in _PERCENT_UNITS else f"{x:g}"

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

    def _write_inputs(self, wb: Any) -> None:
        ws = self.ws["Inputs"]
        f = self.f
        r = self.r
        note_col = 2 + self.n_wl
        name_col = note_col + 1
        self._title(ws, f"Inputs: {r.account.name}",
                    "Yellow cells with blue numbers are inputs: change them and every other sheet "
                    "recalculates. Each has a name (last column) that the formulas use.")
        ws.set_column(0, 0, 38)
        ws.set_column(1, 1, 13)
        ws.set_column(2, 1 + self.n_wl, 24)
        ws.set_column(note_col, note_col, 70)
        ws.set_column(name_col, name_col, 34)
        _fit_width(ws, 51 + 24 * self.n_wl + 70, 51)
        ws.repeat_columns(0, 1)
        row = 3
        header = ("Input", "Unit", "Value")
        for j, text in enumerate(header):
            ws.write_string(row, j, text, f("header"))
        for j in range(3, note_col):
            ws.write_blank(row, j, None, f("header"))
        ws.write_string(row, note_col, "What it means", f("header"))
        ws.write_string(row, name_col, "Cell name", f("header"))
        ws.freeze_panes(row + 1, 2)
        row += 1
        ws.write_string(row, 0, "Account-wide policy and costs", f("section"))
        row += 1
        for i in self.account_inputs:
            value = float(r.account_inputs[i.name])
            fmt = number_format(i.unit, [value], self.cur)
            ws.write_string(row, 0, i.label, f("label"))
            ws.write_string(row, 1, unit_text(i.unit, self.cur), f("unit"))
            ws.write_number(row, 2, value, f("input", fmt))
            ws.data_validation(row, 2, row, 2, self._validation(i))
            self._note(ws, row, note_col, i.note)
            ws.write_string(row, name_col, f"in_{i.name}", f("name"))
            wb.define_name(f"in_{i.name}", f"=Inputs!$C${row + 1}")
            self.named_values[f"in_{i.name}"] = value
            row += 1
        row += 1
        ws.write_string(row, 0, "Prices (catalog estimates or the account's overrides)", f("section"))
        row += 1
        for (table, tid, colname), name in self.lay.price_names.items():
            value = float(r.tables[table][tid][colname])
            label, unit = _TABLE_COLUMN_INFO.get(colname, (colname, "currency"))
            ws.write_string(row, 0, f"{label}: {tid}", f("label"))
            ws.write_string(row, 1, unit_text(unit, self.cur), f("unit"))
            ws.write_number(row, 2, value, f("input", number_format(unit, [value], self.cur,
                                                                     dash_zero=True)))
            ws.data_validation(row, 2, row, 2, {
                "validate": "decimal", "criteria": ">=", "value": 0,
                "input_title": label[:32],
                "input_message": f"{label} of {tid} in {self.cur}; 0 = no price known "
                                 "(the option is then ranked after priced ones).",
                "error_message": f"{label}: a number of at least 0."})
            self._note(ws, row, note_col, self._price_source(table, tid, colname))
            ws.write_string(row, name_col, name, f("name"))
            wb.define_name(name, f"=Inputs!$C${row + 1}")
            self.named_values[name] = value
            row += 1
        row += 1
        ws.write_string(row, 0, "Workloads (one column each)", f("section"))
        row += 1
        ws.write_string(row, 0, "Workload", f("label_bold"))
        ws.write_string(row + 1, 0, "Model", f("label"))
        ws.write_string(row + 2, 0, "Sizing mode", f("label"))
        for k, w in enumerate(r.workloads, start=1):
            ws.write_string(row, 1 + k, clean_text(w.name), f("header"))
            ws.write_string(row + 1, 1 + k, clean_text(w.model_name), f("text"))
            ws.write_string(row + 2, 1 + k, w.mode, f("text"))
        ws.write_string(row + 2, note_col, "modelled = roofline model with calibrated "
                        "efficiencies; measured = the customer's benchmark replaces it (seed 000).",
                        f("note"))
        row += 3
        for i in self.workload_inputs:
            vals = [float(w.inputs[i.name]) for w in r.workloads]
            fmt = number_format(i.unit, vals, self.cur)
            ws.write_string(row, 0, i.label, f("label"))
            ws.write_string(row, 1, unit_text(i.unit, self.cur), f("unit"))
            for k, value in enumerate(vals, start=1):
                ws.write_number(row, 1 + k, value, f("input", fmt))
                wb.define_name(f"in_w{k}_{i.name}", f"=Inputs!${_letter(1 + k)}${row + 1}")
                self.named_values[f"in_w{k}_{i.name}"] = value
            if vals:
                ws.data_validation(row, 2, row, 1 + len(vals), self._validation(i))
            self._note(ws, row, note_col, i.note)
            ws.write_string(row, name_col, f"in_w1_{i.name} … in_w{len(vals)}_{i.name}"
                            if len(vals) > 1 else f"in_w1_{i.name}", f("name"))
            row += 1
        ws.print_area(0, 0, row, note_col)

    def _note(self, ws: Any, row: int, col: int, text: str) -> None:
        ws.write_string(row, col, clean_text(text), self.f("wrap_note"))
        height = _wrapped_height(text, 70)
        if height > 15:
            ws.set_row(row, height)

    def _price_source(self, table: str, tid: str, colname: str) -> str:
        value = float(self.r.tables[table][tid][colname])
        if table == "platforms":
            p = self.catalog.platforms.get(tid)
            asked = self.r.source.requirements if self.r.source is not None else {}
            if tid in ((asked.get("costs") or {}).get("node_prices") or {}):
                return "Account override (requirements file, costs.node_prices)."
            return f"Estimate, not a quote. {p.notes}" if p else "account data"
        g = self.catalog.gpus.get(tid)
        if g is None:
            return "account data"
        if colname == "price":
            base, date, src = g.price_usd, g.price_date, g.price_source
        else:
            row = next((p for p in self.r.prices if p.item == f"cloud:{tid}"), None)
            base, date, src = ((row.value, row.date or "undated", row.source) if row
                               else (None, None, None))
        if value == 0:
            return "No price found in the catalog: enter one to cost this GPU."
        if base is None or value != base:
            return "Account override (requirements file, costs section)."
        return f"{src} ({date}); catalog prices are USD."

    # Catalog ----------------------------------------------------------------------------------

    def _write_catalog(self) -> None:
        ws = self.ws["Catalog"]
        f = self.f
        lay = self.lay
        self._title(ws, "Catalog rows this workbook uses",
                    "The formulas look these cells up (nested IF on the id in column A). Prices "
                    "are formulas over the Inputs sheet: change them there.")
        ws.set_column(0, 0, 20)
        ws.set_column(1, 1, 34)
        width = max(len(c) for c in TABLE_COLUMNS.values())
        ws.set_column(2, 1 + width, 14)
        ws.set_column(2 + width, 4 + width, 40, self.f("wrap_note"))
        _fit_width(ws, 54 + 14 * width + 120, 20)
        ws.repeat_columns(0, 0)
        cat = self.catalog
        for table, hrow in self.catalog_blocks:
            cols = TABLE_COLUMNS[table]
            heads = [_TABLE_TITLES.get(table, table), "Name" if table != "precisions" else
                     "Compute path"]
            heads += [_TABLE_COLUMN_INFO.get(c, (c, ""))[0] for c in cols]
            sources = {"gpus": ["Source", "Purchase price source", "Cloud price source"],
                       "platforms": ["Source", "Notes"], "precisions": ["Source"]}.get(table, [])
            ws.set_row(hrow, 30)
            for j, text in enumerate(heads):
                ws.write_string(hrow, j, text, f("header"))
            for j, text in enumerate(sources):
                ws.write_string(hrow, 2 + width + j, text, f("header"))
            for n, (tid, _) in enumerate(lay.catalog_ids[table]):
                row = hrow + 1 + n
                data = self.r.tables[table][tid]
                ws.write_string(row, 0, tid, f("label_bold"))
                texts = self._catalog_texts(cat, table, tid)
                ws.write_string(row, 1, texts[0], f("text"))
                for j, colname in enumerate(cols):
                    value = float(data[colname])
                    unit = _TABLE_COLUMN_INFO.get(colname, (colname, ""))[1]
                    fmt = f("calc", number_format(unit, [value], self.cur, dash_zero=True))
                    price = lay.price_names.get((table, tid, colname))
                    if price:
                        ws.write_formula(row, 2 + j, f"={price}", fmt, value)
                    else:
                        ws.write_number(row, 2 + j, value, fmt)
                for j, text in enumerate(texts[1:]):
                    ws.write_string(row, 2 + width + j, clean_text(text), f("wrap_note"))
                ws.set_row(row, max(_wrapped_height(t, 40) for t in texts[1:]))
        ws.freeze_panes(3, 1)

    @staticmethod
    def _catalog_texts(cat: Catalog, table: str, tid: str) -> list[str]:
        if table == "gpus" and tid in cat.gpus:
            g = cat.gpus[tid]
            return [g.name, g.source,
                    f"{g.price_source} ({g.price_date})" if g.price_source else "no price found",
                    "dated cloud offers by tier: catalogs/prices.yaml (see the cloud price's "
                    "note on Inputs)"]
        if table == "platforms" and tid in cat.platforms:
            p = cat.platforms[tid]
            return [p.name, p.source, p.notes]
        if table == "precisions" and tid in cat.precisions:
            q = cat.precisions[tid]
            return [q.compute_path, q.source]
        return ["", ""]

    # Calculation sheets ---------------------------------------------------------------------

    def _headers(self, ws: Any, sheet: str) -> None:
        f = self.f
        lay = self.lay
        sub = ("Each column is one option the engine evaluated (the same column on KV, "
               "Throughput, Nodes and TCO); the recommended option of each workload comes "
               "first. Yellow cells on KV are the engine's choices: change them and all four "
               "sheets follow.")
        if lay.hidden:
            sub += "  " + "; ".join(lay.hidden) + "."
        self._title(ws, _SHEET_TITLES[sheet], sub, COL_LABEL)
        for row, text in ((ROW_WORKLOAD, "Workload"), (ROW_OPTION, "Option"),
                          (ROW_STATUS, "Status (engine)")):
            ws.write_string(row, COL_NAME, "Name" if row == ROW_WORKLOAD else "", f("header"))
            ws.write_string(row, COL_LABEL, text, f("header"))
            ws.write_string(row, COL_UNIT, "Unit" if row == ROW_WORKLOAD else "", f("header"))
        for c in lay.columns:
            head = f("header_rec") if c.recommended else f("header")
            ws.write_string(ROW_WORKLOAD, c.col, clean_text(c.workload.name), head)
            ws.write_string(ROW_OPTION, c.col, c.option.id, head)
            status = ("status_rec" if c.recommended else
                      "status_bad" if not c.option.feasible else "status")
            ws.write_string(ROW_STATUS, c.col, c.status, f(status))
        ws.write_string(ROW_WORKLOAD, self.tail, "Formula (by name)", f("header"))
        ws.write_string(ROW_WORKLOAD, self.tail + 1, "Note", f("header"))
        for row in (ROW_OPTION, ROW_STATUS):
            ws.write_blank(row, self.tail, None, f("header"))
            ws.write_blank(row, self.tail + 1, None, f("header"))
        ws.set_row(ROW_WORKLOAD, 30)
        ws.set_row(ROW_OPTION, 30)
        ws.set_row(ROW_STATUS, 66)
        ws.set_column(COL_NAME, COL_NAME, 24)
        ws.set_column(COL_LABEL, COL_LABEL, 36)
        ws.set_column(COL_UNIT, COL_UNIT, 11)
        ws.set_column(self.tail, self.tail, 60)
        ws.set_column(self.tail + 1, self.tail + 1, 100)
        ws.freeze_panes(ROW_STATUS + 1, FIRST_OPTION_COL)
        ws.repeat_rows(ROW_WORKLOAD, ROW_STATUS)
        ws.repeat_columns(COL_LABEL, COL_UNIT)

    def _section(self, ws: Any, row: int, text: str) -> None:
        ws.write_string(row, COL_LABEL, text, self.f("section"))
        for j in range(self.tail + 2):
            if j != COL_LABEL:
                ws.write_blank(row, j, None, self.f("section"))

    def _write_calc_sheet(self, sheet: str) -> None:
        ws = self.ws[sheet]
        f = self.f
        lay = self.lay
        self._headers(ws, sheet)
        widths = dict.fromkeys((c.col for c in lay.columns), 12)
        if sheet == "KV":
            self._section(ws, ROW_SECTION, "The engine's choices and calibrated efficiencies "
                          "for each option (inputs)")
            for i in self.option_inputs:
                self._write_option_inputs(ws, i, lay.option_rows[i.name], widths)
        self._section(ws, self.calc_section_row[sheet], "Calculations (formulas)")
        last_row = ROW_STATUS
        for calc in CALCULATIONS:
            if calc.sheet != sheet:
                continue
            row = lay.calc_rows[calc.name][1]
            last_row = row
            flag = _flag_expr(calc.expr)
            values = [c.option.values[calc.name] for c in lay.columns]
            nums = [float(v) for v in values if not isinstance(v, str)]
            fmt = "" if flag else number_format(calc.unit, nums, self.cur)
            plain, rec = f("calc", fmt), f("calc_rec", fmt)
            ws.write_string(row, COL_NAME, calc.name, f("name"))
            ws.write_string(row, COL_LABEL, calc.label, f("label"))
            ws.write_string(row, COL_UNIT, unit_text(calc.unit, self.cur), f("unit"))
            template = self._template(calc) if lay.columns else ""  # no option at all: no rows
            for c, value in zip(lay.columns, values, strict=True):
                formula = "=" + template.replace("\x00", c.letter).replace("\x01", str(c.k))
                ws.write_formula(row, c.col, formula, rec if c.recommended else plain,
                                 _cached(value, flag))
                if fmt and not isinstance(value, str):
                    widths[c.col] = max(widths[c.col], _shown_width(float(value), fmt))
            ws.write_string(row, self.tail, f"= {to_text(calc.expr)}", f("note"))
            ws.write_string(row, self.tail + 1, calc.note, f("note"))
            if flag and calc.name.endswith("_met") and lay.columns:
                self._pass_fail(ws, row, FIRST_OPTION_COL, row, self.tail - 1)
            if calc.name.startswith("headroom") and lay.columns:
                ws.conditional_format(row, FIRST_OPTION_COL, row, self.tail - 1, {
                    "type": "cell", "criteria": "<", "value": 0, "format": f("bad")})
            if calc.name in _RISK_FLAGS and lay.columns:
                self._risk(ws, row, FIRST_OPTION_COL, row, self.tail - 1)
        for col, chars in widths.items():
            ws.set_column(col, col, min(chars + 2, 28))
        # Print the labels and the option columns (names, formulas and notes stay on screen).
        ws.print_area(0, COL_LABEL, last_row, max(COL_UNIT, self.tail - 1))
        _fit_width(ws, 47 + sum(min(w + 2, 28) for w in widths.values()), 47)

    def _risk(self, ws: Any, r1: int, c1: int, r2: int, c2: int) -> None:
        ws.conditional_format(r1, c1, r2, c2, {"type": "cell", "criteria": "==", "value": "TRUE",
                                               "format": self.f("bad")})

    def _pass_fail(self, ws: Any, r1: int, c1: int, r2: int, c2: int) -> None:
        ws.conditional_format(r1, c1, r2, c2, {"type": "cell", "criteria": "==", "value": "TRUE",
                                               "format": self.f("good")})
        ws.conditional_format(r1, c1, r2, c2, {"type": "cell", "criteria": "==",
                                               "value": "FALSE", "format": self.f("bad")})

    def _write_option_inputs(self, ws: Any, i: Input, row: int, widths: dict[int, int]) -> None:
        f = self.f
        lay = self.lay
        ws.write_string(row, COL_NAME, i.name, f("name"))
        ws.write_string(row, COL_LABEL, i.label, f("label"))
        ws.write_string(row, COL_UNIT, unit_text(i.unit, self.cur), f("unit"))
        values = [c.option.values.get(i.name, getattr(c.option, i.name, "")) for c in lay.columns]
        if i.kind == "text":
            fmt = f("input", "@")
            for c, value in zip(lay.columns, values, strict=True):
                ws.write_string(row, c.col, str(value), fmt)
                widths[c.col] = max(widths[c.col], len(str(value)))
            table = _lookup_keys().get(i.name)
            source = lay.catalog_id_ranges.get(table or "")
            if source and lay.columns:
                ws.data_validation(row, FIRST_OPTION_COL, row, self.tail - 1, {
                    "validate": "list", "source": source, "input_title": i.label[:32],
                    "input_message": f"{i.note} Choose a {_TABLE_TITLES.get(table or '', '')} "
                                     "id from the Catalog sheet."[:255],
                    "error_message": "Pick an id from the list (rows of the Catalog sheet)."})
        else:
            nums = [float(v) for v in values]
            num_format = number_format(i.unit, nums, self.cur)
            fmt = f("input", num_format)
            for c, value in zip(lay.columns, nums, strict=True):
                ws.write_number(row, c.col, value, fmt)
                widths[c.col] = max(widths[c.col], _shown_width(value, num_format))
            if lay.columns:
                ws.data_validation(row, FIRST_OPTION_COL, row, self.tail - 1,
                                   self._validation(i))
        ws.write_string(row, self.tail, "input: the engine's choice or calibrated default",
                        f("note"))
        ws.write_string(row, self.tail + 1, i.note, f("note"))

    # Summary ------------------------------------------------------------------------------

    def _cell(self, name: str, c: _Column) -> str | None:
        """A reference to option input or calculation ``name`` in column ``c``."""
        if name in self.lay.option_rows:
            return f"KV!{c.letter}{self.lay.option_rows[name] + 1}"
        if name in self.lay.calc_rows:
            sheet, row = self.lay.calc_rows[name]
            return f"{sheet}!{c.letter}{row + 1}"
        return None

    def _words(self, c: _Column) -> tuple[str, str] | None:
        """The recommendation in one sentence: a formula joining cells with ``&``."""
        parts: list[tuple[str, str | None]] = [
            ("", "nodes"), (" × ", "platform"), (" nodes: ", "gpus"), (" × ", "gpu"),
            (" GPUs as ", "replicas"), (" replicas of TP", "tp"), (" (", "weight_precision"),
            (" weights, ", "kv_precision"), (" KV cache)", None)]
        formula: list[str] = []
        text: list[str] = []
        for lead, name in parts:
            if lead:
                formula.append('"' + lead.replace('"', '""') + '"')
                text.append(lead)
            if name is None:
                continue
            ref = self._cell(name, c)
            if ref is None:
                return None
            value = c.option.values[name]
            if isinstance(value, float):
                if not value.is_integer():
                    return None
                value = str(int(value))
            formula.append(ref)
            text.append(str(value))
        return "=" + "&".join(formula), "".join(text)

    _SUMMARY_ROWS: tuple[tuple[str, str], ...] = (
        ("gpu", "GPU"), ("platform", "Platform"), ("weight_precision", "Weight precision"),
        ("kv_precision", "KV-cache precision"), ("tp", "Tensor parallel (GPUs per replica)"),
        ("nodes", "Nodes"), ("gpus", "GPUs"), ("replicas", "Replicas"),
        ("users", "Concurrent users at peak"), ("users_per_replica", "Users per replica"),
        ("required_tokens_per_s_per_user", "Required tokens/s per user"),
        ("tokens_per_s_per_user", "Tokens/s per user at peak"),
        ("ttft_ms", "Time to first token at peak"), ("slo_met", "Meets latency targets"),
        ("headroom", "Headroom policy"),
        ("headroom_achieved", "Headroom achieved at peak"),
        ("headroom_after_node_loss", "Headroom with one node down"),
        ("capex", "Capital cost"), ("annual_cost_onprem", "On-prem cost per year"),
        ("annual_cost_cloud", "Cloud cost per year (same GPUs, on demand)"),
        ("cost_per_million_tokens_onprem", "On-prem cost per million output tokens"),
        ("cost_per_million_tokens_cloud", "Cloud cost per million output tokens"),
        ("breakeven_months", "Buy-vs-rent break-even"),
    )
    _TOTALS = ("gpus", "nodes", "capex", "annual_cost_onprem", "annual_cost_cloud")

    def _write_summary(self, wb: Any) -> None:
        ws = self.ws["Summary"]
        f = self.f
        r = self.r
        acct = r.account
        who = ", ".join(x for x in (
            f"account id {acct.id}" if acct.id else "",
            f"prepared by {acct.prepared_by}" if acct.prepared_by else "",
            f"currency {acct.currency}") if x)
        self._title(ws, f"LLM serving sizing: {acct.name}",
                    f"{who}. Every number below is a formula over the other sheets: change the "
                    "yellow cells on Inputs (or the engine's choices on KV) and it follows.")
        ws.write_string(2, 0, clean_text(f"llmsizer {r.llmsizer_version}, catalog {r.catalog_digest}. "
                                         "Units: GB = 1e9 bytes; money in the account currency."),
                        f("note"))
        rec: dict[int, _Column] = {c.k: c for c in self.lay.columns if c.recommended}
        total_col = 2 + self.n_wl
        ws.set_column(0, 0, 44)
        ws.set_column(1, 1, 12)
        ws.set_column(2, 1 + self.n_wl, 30)
        ws.set_column(total_col, total_col, 22)
        _fit_width(ws, 74 + 30 * self.n_wl, 56)
        ws.repeat_columns(0, 1)
        row = 4
        ws.write_string(row, 0, "Per workload", f("header"))
        ws.write_string(row, 1, "Unit", f("header"))
        for k, w in enumerate(r.workloads, start=1):
            ws.write_string(row, 1 + k, clean_text(w.name), f("header"))
        ws.write_string(row, total_col, "Total (recommended)", f("header"))
        ws.freeze_panes(row + 1, 2)
        row += 1
        ws.write_string(row, 0, "Model", f("label"))
        for k, w in enumerate(r.workloads, start=1):
            ws.write_string(row, 1 + k, clean_text(w.model_name), f("wrap"))
        row += 1
        ws.write_string(row, 0, "Recommendation", f("header_top"))
        height = 15.0
        for k, w in enumerate(r.workloads, start=1):
            c = rec.get(k)
            words = self._words(c) if c else None
            if c is None:
                text = clean_text(f"No feasible option. {w.advice or ''}")
                ws.write_string(row, 1 + k, text, f("wrap"))
            elif words is None:
                text = c.option.id
                ws.write_string(row, 1 + k, text, f("wrap"))
            else:
                text = words[1]
                ws.write_formula(row, 1 + k, words[0], f("wrap"), text)
            height = max(height, _wrapped_height(text, 30, 11))
        ws.set_row(row, min(height, 400))
        row += 1
        measured = any(w.mode == "measured" for w in r.workloads)
        if measured:
            row = self._basis_row(ws, row)
        units = {i.name: i.unit for i in INPUTS} | {c.name: c.unit for c in CALCULATIONS}
        flags = {c.name for c in CALCULATIONS if _flag_expr(c.expr)}
        for name, label in self._summary_rows(measured):
            unit = units.get(name)
            if unit is None:
                continue
            cells: list[tuple[int, str, float | str | bool]] = []
            value: float | str
            for k, w in enumerate(r.workloads, start=1):
                c = rec.get(k)
                if c is None:
                    continue
                scope = self.scope.get(name)
                if scope == "account":
                    ref, value = f"in_{name}", r.account_inputs[name]
                elif scope == "workload":
                    ref, value = f"in_w{k}_{name}", w.inputs[name]
                else:
                    maybe = self._cell(name, c)
                    if maybe is None:
                        continue
                    ref, value = maybe, c.option.values[name]
                cells.append((k, ref, _cached(value, name in flags)))
            nums = [float(v) for _, _, v in cells if not isinstance(v, str | bool)]
            fmt = "" if name in flags else number_format(unit, nums, self.cur)
            ws.write_string(row, 0, label, f("label"))
            ws.write_string(row, 1, unit_text(unit, self.cur), f("unit"))
            for k, ref, value in cells:
                ws.write_formula(row, 1 + k, f"={ref}", f("calc", fmt), value)
            for k in range(1, len(r.workloads) + 1):
                if k not in rec:
                    ws.write_string(row, 1 + k, "—", f("unit"))
            if name in self._TOTALS and cells:
                refs = [ref for _, ref, _ in cells]
                chunks = [f"SUM({','.join(refs[i:i + 30])})" for i in range(0, len(refs), 30)]
                ws.write_formula(row, total_col, "=" + "+".join(chunks), f("total", fmt),
                                 float(getattr(r.totals, name)))
            if name in flags:
                self._pass_fail(ws, row, 2, row, 1 + self.n_wl)
            if name.startswith("headroom_"):
                ws.conditional_format(row, 2, row, 1 + self.n_wl, {
                    "type": "cell", "criteria": "<", "value": 0, "format": f("bad")})
            if name in _RISK_FLAGS:
                self._risk(ws, row, 2, row, 1 + self.n_wl)
            row += 1
        self._charts(wb, ws, row + 1)

    _MEASURED_ROWS: tuple[tuple[str, str], ...] = (
        ("measured_tokens_per_s_per_replica", "Measured output tokens/s per replica"),
        ("modelled_replica_output_tokens_per_s", "Modelled output tokens/s per replica"),
        ("measured_vs_modelled", "Measured vs modelled"),
        ("measured_gap_risk", "Measured and modelled differ by over 25 % (risk)"),
    )

    def _summary_rows(self, measured: bool) -> list[tuple[str, str]]:
        """The Summary's rows; measured vs modelled throughput side by side when any
        workload is sized from a benchmark."""
        rows = list(self._SUMMARY_ROWS)
        if measured:
            at = next(i for i, (n, _) in enumerate(rows) if n == "slo_met") + 1
            rows[at:at] = self._MEASURED_ROWS
        return rows

    def _basis_row(self, ws: Any, row: int) -> int:
        """'Sizing basis': modelled, or which benchmark figure was used and why."""
        ws.write_string(row, 0, "Sizing basis", self.f("header_top"))
        height = 15.0
        for k, w in enumerate(self.r.workloads, start=1):
            if w.mode == "measured":
                text = clean_text(w.measured_note or "measured (the customer's benchmark)")
            else:
                text = "modelled: roofline model with calibrated efficiencies"
            ws.write_string(row, 1 + k, text, self.f("wrap"))
            height = max(height, _wrapped_height(text, 30, 11))
        ws.set_row(row, min(height, 400))
        return row + 1

    def _charts(self, wb: Any, ws: Any, row: int) -> None:
        lay = self.lay
        if "annual_cost_onprem" not in lay.calc_rows or "annual_cost_cloud" not in lay.calc_rows:
            return
        onprem = lay.calc_rows["annual_cost_onprem"]
        cloud = lay.calc_rows["annual_cost_cloud"]
        money = number_format("currency", [], self.cur)
        n = 0
        for k, w in enumerate(self.r.workloads, start=1):
            cols = [c for c in lay.columns if c.k == k and c.option.feasible]
            if not cols or n >= MAX_CHARTS:
                continue
            first, last = cols[0].col, cols[-1].col
            chart = wb.add_chart({"type": "column"})
            for (sheet, crow), name, color in ((onprem, "On-prem cost per year", "#1F3864"),
                                              (cloud, "Cloud cost per year", "#C55A11")):
                chart.add_series({
                    "name": name,
                    "categories": ["KV", ROW_OPTION, first, ROW_OPTION, last],
                    "values": [sheet, crow, first, crow, last],
                    "fill": {"color": color},
                })
            # The title is a reference to a text cell: XlsxWriter reads a title string that
            # contains "<x>!A1" as a cell reference, so untrusted text never goes in directly.
            title_row = row + 18 * n
            ws.write_string(title_row, 0, f"Annual cost by option: {clean_text(w.name)}"[:250],
                            self.f("label_bold"))
            chart.set_title({"name": ["Summary", title_row, 0], "name_font": {"size": 11}})
            chart.set_y_axis({"num_format": money, "major_gridlines": {"visible": True}})
            chart.set_x_axis({"num_font": {"size": 8}})
            chart.set_legend({"position": "bottom"})
            chart.set_size({"width": 760, "height": 320})
            ws.insert_chart(title_row + 1, 0, chart, {"x_offset": 2, "y_offset": 4})
            n += 1

    # Assumptions -------------------------------------------------------------------------

    def _assumption_label(self, name: str) -> str:
        """``mfu_decode_8bit`` -> 'Compute efficiency, decode (8bit)'."""
        if name in self.inputs:
            return self.inputs[name].label
        for i in INPUTS:
            if name.startswith(f"{i.name}_"):
                return f"{i.label} ({name.removeprefix(i.name + '_').replace('_', ' ')})"
        return name.replace("_", " ").capitalize()

    def _write_assumptions(self) -> None:
        ws = self.ws["Assumptions"]
        f = self.f
        r = self.r
        self._title(ws, "Assumptions, defaults and their sources",
                    "Values in formulas follow the Inputs sheet; efficiencies are per option "
                    "(KV sheet, top block).")
        ws.set_column(0, 0, 44)
        ws.set_column(1, 1, 16)
        ws.set_column(2, 2, 14)
        ws.set_column(3, 3, 95)
        _fit_width(ws, 44 + 16 + 14 + 95)
        row = 3
        for j, text in enumerate(("Assumption", "Value", "Unit", "Source")):
            ws.write_string(row, j, text, f("header"))
        ws.freeze_panes(row + 1, 1)
        row += 1

        def line(label: str, value: float | str | None, unit: str, source: str,
                 formula: str | None = None) -> None:
            nonlocal row
            ws.write_string(row, 0, clean_text(label), f("label"))
            if isinstance(value, str):
                ws.write_string(row, 1, clean_text(value), f("text"))
            elif value is not None:
                fmt = f("calc", number_format(unit, [value], self.cur))
                if formula:
                    ws.write_formula(row, 1, formula, fmt, value)
                else:
                    ws.write_number(row, 1, value, fmt)
            ws.write_string(row, 2, unit_text(unit, self.cur), f("unit"))
            ws.write_string(row, 3, clean_text(source), f("wrap_note"))
            ws.set_row(row, _wrapped_height(source, 95))
            row += 1

        def section(text: str) -> None:
            nonlocal row
            row += 1
            ws.write_string(row, 0, text, f("section"))
            for j in range(1, 4):
                ws.write_blank(row, j, None, f("section"))
            row += 1

        section("Policy and costs (account inputs; edit them on the Inputs sheet)")
        for i in self.account_inputs:
            line(i.label, float(r.account_inputs[i.name]), i.unit,
                 f"{i.note} Value from the account's requirements file or llmsizer's default.",
                 f"=in_{i.name}")
        section("Efficiencies and engine defaults (per option on the KV sheet)")
        for a in r.assumptions:
            if self.scope.get(a.name) != "account":  # those are listed above
                line(self._assumption_label(a.name), a.value, a.unit, a.source)
        section("Prices and their dates (edit them on the Inputs sheet)")
        for (table, tid, colname), name in self.lay.price_names.items():
            label, unit = _TABLE_COLUMN_INFO.get(colname, (colname, "currency"))
            line(f"{label}: {tid}", float(r.tables[table][tid][colname]), unit,
                 self._price_source(table, tid, colname), f"={name}")
        section("Modelling conventions")
        for label, text in (
            ("Units", "GB = 1e9 bytes (as GPU memory is marketed); TB/s = 1e12 B/s; tokens/s."),
            ("Currency", f"Money is in {r.account.currency}; catalog prices are USD estimates "
                         "(not quotes) unless the account overrides them."),
            ("One definition, two renderings", "Every derived number here is printed from "
             "llmsizer's calculation list (docs/calculations.md); the engine evaluates the same "
             "list in Python."),
            ("Option columns", "Each workload shows at most "
             f"{MAX_COLUMNS_PER_WORKLOAD} options; all of them are in the results JSON."),
            ("Engine status", "The Status row (feasible / rejected and why) is the engine's at "
             "generation time; the formulas recompute, the status text does not."),
            ("Version", f"llmsizer {r.llmsizer_version}, catalog digest {r.catalog_digest}."),
        ):
            line(label, None, "", text)
