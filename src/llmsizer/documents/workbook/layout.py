"""Where everything is: option columns, calculation rows, catalog cells, input names.

The whole layout is decided (:meth:`Layout.plan`) before any cell is written, so a sheet
can reference a cell of a sheet written later. This is also the cell map: ask it where a
calculation, an option input or an account/workload input lives (:meth:`Layout.cell`,
:func:`input_name`), and print a calculation as a formula (:meth:`Layout.template`).

Names of input cells (defined names, never cell-like: DESIGN §2): ``in_<name>`` for account
inputs, ``in_w<k>_<name>`` for workload ``k`` (1-based), ``in_price_<gpu>``,
``in_cloud_<gpu>``, ``in_node_price_<platform>`` for prices.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from ...model.calculations import (
    CALCULATIONS,
    INPUTS,
    PLAN_STAGES,
    TABLE_COLUMNS,
    Aggregate,
    Calculation,
)
from ...model.expr import Bin, Call, Expr, Lookup, references, render
from ...model.sheetlookup import lookup_formula
from ...sizing.costs import _TIER_COLUMN, tier_words  # the tier's catalog column, its words
from ...sizing.results import Option, Result, WorkloadResult
from .formats import clean_text

__all__ = [
    "CALC_SHEETS",
    "COL_LABEL",
    "COL_NAME",
    "COL_UNIT",
    "FIRST_OPTION_COL",
    "MAX_COLUMNS_PER_WORKLOAD",
    "OPTIONS_HEADER_ROW",
    "OPTIONS_LABEL_COL",
    "PRICE_COLUMNS",
    "ROW_OPTION",
    "ROW_SECTION",
    "ROW_STATUS",
    "ROW_WORKLOAD",
    "SCOPE",
    "TABLE_COLUMN_INFO",
    "TABLE_TITLES",
    "Column",
    "Layout",
    "cached",
    "flag_expr",
    "input_name",
    "letter",
    "lookup_keys",
    "option_statuses",
    "used_names",
]

CALC_SHEETS = ("KV", "Throughput", "Nodes", "TCO")
MAX_COLUMNS_PER_WORKLOAD = 12
MAX_REJECTED_SHOWN = 3  # rejected options shown when there are many feasible ones

# Layout of the four calculation sheets (0-based; the tests read cells through these).
ROW_WORKLOAD, ROW_OPTION, ROW_STATUS = 3, 4, 5
ROW_SECTION = 6  # first section header; body rows follow
COL_NAME, COL_LABEL, COL_UNIT, FIRST_OPTION_COL = 0, 1, 2, 3

# The Options sheet: header row, then one row per option; column B is the option's label.
OPTIONS_HEADER_ROW, OPTIONS_LABEL_COL = 3, 1

SCOPE = {i.name: i.scope for i in INPUTS}  # input name -> "account" | "workload" | "option"

TABLE_COLUMN_INFO: dict[str, tuple[str, str]] = {
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
    "sold_full": ("Sold only with all GPUs", "1 = yes"),
    "scaleout_gb_s": ("Network link between nodes, one way", "GB/s"),
    "gpu_fabric": ("Built for a GPU fabric between servers", "1 = yes"),
    "fabric_ports": ("GPU-fabric ports per server", "ports"),
    "frontend_ports": ("Front-end ports per server", "ports"),
    "frontend_gbps": ("Front-end port speed", "Gb/s"),
    "bytes_per_param": ("Bytes per value", "B"),
    "scale_overhead": ("Scale overhead", "fraction"),
    "compute_code": ("Compute path code", "code"),
    "cloud_gpus_per_instance": ("GPUs per cloud instance", "GPUs"),
    # each cloud tier's dated price and how its offer is sold (the what-if tier reads them),
    # the tier in the words the proposal uses
    **{f"cloud_{column}": (f"Cloud price per GPU-hour, {tier_words(tier)}", "currency/h")
       for tier, column in _TIER_COLUMN.items()},
    **{f"cloud_gpus_{column}": (f"GPUs per cloud instance, {tier_words(tier)}", "GPUs")
       for tier, column in _TIER_COLUMN.items()},
    # whether the offer is sold in its listed sizes only, in the account's tier and each tier
    "cloud_fixed_sizes": ("Cloud offer sold in its listed sizes only", "1 = yes"),
    **{f"cloud_fixed_{column}": (
        f"Cloud offer sold in its listed sizes only, {tier_words(tier)}", "1 = yes")
       for tier, column in _TIER_COLUMN.items()},
    # the offers' other instance sizes (0 = none), in the account's tier and in each tier
    **{f"cloud_size{k}_gpus": (f"GPUs per cloud instance, other size {k}", "GPUs")
       for k in (1, 2)},
    **{f"cloud_size{k}_gpu_hour": (f"Cloud price per GPU-hour, other size {k}", "currency/h")
       for k in (1, 2)},
    **{f"cloud_size{k}_gpus_{column}": (
        f"GPUs per cloud instance, other size {k}, {tier_words(tier)}", "GPUs")
       for k in (1, 2) for tier, column in _TIER_COLUMN.items()},
    **{f"cloud_size{k}_{column}": (
        f"Cloud price per GPU-hour, other size {k}, {tier_words(tier)}", "currency/h")
       for k in (1, 2) for tier, column in _TIER_COLUMN.items()},
}


def price_label(tables: Mapping[str, Mapping[str, Mapping[str, float]]], table: str, tid: str,
                colname: str) -> str:
    """An Inputs (and Assumptions) price row's label: the cloud price named for what it is,
    the offer's listed price for its own instance size (review round 24: Fabrikam Legal's
    Inputs read "Cloud price per GPU-hour" 4.44, the 8-GPU size's, while the plan pays 4.58
    for the 2-GPU instances it rents: the TCO sheet's "Cloud price per GPU-hour paid")."""
    label = TABLE_COLUMN_INFO.get(colname, (colname, "currency"))[0]
    if (table, colname) != ("gpus", "cloud_gpu_hour"):
        return label
    gpus = float(tables.get(table, {}).get(tid, {}).get("cloud_gpus_per_instance", 0) or 0)
    return f"{label} as listed, {gpus:,.0f}-GPU instance" if gpus > 0 else f"{label} as listed"


# Calculation rows the workbook's sheets label more closely than the calculation list: the two
# cloud prices per GPU-hour side by side on the TCO and Plan sheets (review round 24:
# Fabrikam Legal's "Cloud price per GPU-hour" 4.44 beside "... paid" 4.58, its size unsaid)
SHEET_LABELS = {
    "cloud_gpu_hour": "Cloud price per GPU-hour as listed, the offer's own size",
    "cloud_instance_gpu_hour": "Cloud price per GPU-hour paid, for the instance size rented"}


def sheet_label(name: str, label: str) -> str:
    """A calculation row's label on the workbook's sheets (:data:`SHEET_LABELS`)."""
    return SHEET_LABELS.get(name, label)


# Catalog cells the account may change (costs): they live on Inputs as named cells.
PRICE_COLUMNS = {("gpus", "price"): "in_price_", ("gpus", "cloud_gpu_hour"): "in_cloud_",
                 ("platforms", "base_price"): "in_node_price_"}
TABLE_TITLES = {"gpus": "GPU", "platforms": "Platform", "precisions": "Precision"}


@cache  # ~40,000 calls per workbook, a few dozen columns
def letter(col: int) -> str:
    """Column letters of 0-based column ``col`` (0 -> A, 26 -> AA)."""
    name = ""
    col += 1
    while col:
        col, rem = divmod(col - 1, 26)
        name = chr(65 + rem) + name
    return name


def input_name(name: str, k: int = 1) -> str | None:
    """The defined name of account or workload input ``name`` (workload ``k``); None for
    option inputs and calculations (those are per column: :meth:`Layout.cell`)."""
    scope = SCOPE.get(name)
    if scope == "account":
        return f"in_{name}"
    if scope == "workload":
        return f"in_w{k}_{name}"
    return None


def _column(first: str, last: str) -> str:
    """``Catalog!$C$5:$C$9``. A one-row table's range takes the blank row below it as well:
    Gnumeric 1.12 answers #REF! for INDEX over a single cell (``INDEX(Catalog!$C$15,1)``,
    measured: docs/libreoffice-findings.md section 7); the blank row never matches a key."""
    if first == last:
        m = re.fullmatch(r"(.*\$)(\d+)", last)
        if m is None:
            raise ValueError(f"not a cell: {last}")
        last = f"{m.group(1)}{int(m.group(2)) + 1}"
    return f"{first}:{last.split('!')[-1]}"


def flag_expr(e: Expr) -> bool:
    """True when the spreadsheet value is a logical (comparison, AND, OR)."""
    if isinstance(e, Bin):
        return e.op in ("=", "<>", "<", "<=", ">", ">=")
    return isinstance(e, Call) and e.fn in ("AND", "OR")


def cached(value: float | str, flag: bool) -> float | str:
    """The engine's value as a formula's cached result. Logicals are cached as 1 or 0, not
    as booleans: LibreOffice 7.4 discards a cached boolean and recalculates the cell when it
    is first needed; in a General-formatted cell asked for by a conditional format during PDF
    export's fit-to-page layout, that aborted the export (docs/libreoffice-findings.md
    section 6). Shown as yes/no by ``number_format("flag")`` (the other half of the fix);
    a recalculating spreadsheet stores TRUE/FALSE again."""
    if flag and not isinstance(value, str):
        return 1 if value else 0
    return value


def _name_id(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x"


@cache
def lookup_keys() -> dict[str, str]:
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
def used_names() -> frozenset[str]:
    """Every input name some calculation reads (the plan's stages included: plan_rented is
    read by the Plan sheet alone)."""
    used: set[str] = set()
    for c in CALCULATIONS:
        used |= references(c.expr)
    for _stage, items in PLAN_STAGES:
        for i in items:
            used |= references(i.member if isinstance(i, Aggregate) else i.expr)
    return frozenset(used)


# --- columns: one per option shown --------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One option's column, the same on KV, Throughput, Nodes and TCO."""

    col: int
    letter: str
    k: int  # 1-based workload index
    workload: WorkloadResult
    option: Option
    status: str
    recommended: bool


def option_statuses(w: WorkloadResult) -> tuple[list[tuple[Option, str]], list[tuple[Option, str]]]:
    """Every option of ``w`` with its status text: the feasible ones (recommended first, then
    the engine's ranking) and the rejected ones (with the reason)."""
    feasible = [o for o in w.options if o.feasible]
    feasible.sort(key=lambda o: o.id != w.recommended)  # stable: engine ranking kept
    ranked: list[tuple[Option, str]] = []
    for rank, o in enumerate(feasible, start=1):
        if w.mode == "measured":
            status = "★ recommended (measured: customer benchmark)" if o.id == w.recommended else (
                f"alternative #{rank}")
        else:
            status = "★ recommended" if o.id == w.recommended else f"alternative #{rank}"
        if not o.priced:
            status = f"{status}; no GPU price in catalog"
        ranked.append((o, status))
    rejected = [(o, f"✗ rejected: {clean_text(o.reason)}") for o in w.options if not o.feasible]
    return ranked, rejected


def _shown_options(w: WorkloadResult) -> list[tuple[Option, str]]:
    """Recommended first, then the best-ranked alternatives, then rejected ones (capped)."""
    feasible, rejected = option_statuses(w)
    n_rej = min(len(rejected), max(MAX_REJECTED_SHOWN, MAX_COLUMNS_PER_WORKLOAD - len(feasible)))
    n_feas = min(len(feasible), MAX_COLUMNS_PER_WORKLOAD - n_rej)
    return feasible[:n_feas] + rejected[:n_rej]


def _plan_columns(result: Result) -> tuple[list[Column], list[str]]:
    cols: list[Column] = []
    hidden: list[str] = []
    col = FIRST_OPTION_COL
    for k, w in enumerate(result.workloads, start=1):
        shown = _shown_options(w)
        for o, status in shown:
            cols.append(Column(col, letter(col), k, w, o, status, o.id == w.recommended))
            col += 1
        if len(shown) < len(w.options):
            hidden.append(f"{clean_text(w.name)}: {len(shown)} of {len(w.options)} options shown "
                          "here, all of them on the Options sheet")
    return cols, hidden


# --- the layout ---------------------------------------------------------------------------


@dataclass
class Layout:
    """Where everything is, decided before any formula is printed."""

    columns: list[Column]
    hidden: list[str]
    option_rows: dict[str, int] = field(default_factory=dict)  # option input -> KV row
    calc_rows: dict[str, tuple[str, int]] = field(default_factory=dict)  # calc -> (sheet, row)
    calc_section_row: dict[str, int] = field(default_factory=dict)  # calc sheet -> header row
    catalog_blocks: list[tuple[str, int]] = field(default_factory=list)  # table, header row
    catalog_cells: dict[tuple[str, str, str], str] = field(default_factory=dict)
    catalog_ids: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # id, $A$r
    catalog_id_ranges: dict[str, str] = field(default_factory=dict)
    price_names: dict[tuple[str, str, str], str] = field(default_factory=dict)
    options_rows: dict[tuple[int, str], int] = field(default_factory=dict)  # (k, id) -> row

    @classmethod
    def plan(cls, result: Result, option_inputs: list[str]) -> Layout:
        cols, hidden = _plan_columns(result)
        lay = cls(cols, hidden)
        row = ROW_SECTION + 1
        for name in option_inputs:
            lay.option_rows[name] = row
            row += 1
        first_calc_row = {"KV": row + 1}  # a blank-free section header row before the calcs
        for sheet in CALC_SHEETS:
            nxt = first_calc_row.get(sheet, ROW_SECTION + 1)
            for c in CALCULATIONS:
                if c.sheet == sheet:
                    lay.calc_rows[c.name] = (sheet, nxt)
                    nxt += 1
        lay.calc_section_row = {s: (row if s == "KV" else ROW_SECTION) for s in CALC_SHEETS}
        lay._plan_catalog(result)
        row = OPTIONS_HEADER_ROW
        for k, w in enumerate(result.workloads, start=1):
            feasible, rejected = option_statuses(w)
            for o, _ in feasible + rejected:
                row += 1
                lay.options_rows[(k, o.id)] = row
        return lay

    def _plan_catalog(self, result: Result) -> None:
        row = 3
        for table, cols in TABLE_COLUMNS.items():
            ids = sorted(result.tables.get(table, {}))
            self.catalog_blocks.append((table, row))
            row += 1
            first = row
            self.catalog_ids[table] = []
            for tid in ids:
                self.catalog_ids[table].append((tid, f"Catalog!$A${row + 1}"))
                for j, colname in enumerate(cols):
                    self.catalog_cells[(table, tid, colname)] = (
                        f"Catalog!${letter(2 + j)}${row + 1}")
                row += 1
            if ids:
                self.catalog_id_ranges[table] = f"=Catalog!$A${first + 1}:$A${row}"
            row += 1
        seen: set[str] = set()
        for (table, colname), prefix in PRICE_COLUMNS.items():
            for tid in sorted(result.tables.get(table, {})):
                name = f"{prefix}{_name_id(tid)}"
                while name in seen:
                    name += "_"
                seen.add(name)
                self.price_names[(table, tid, colname)] = name

    @property
    def tail(self) -> int:
        """The first column after the option columns (formula text, then the note)."""
        return FIRST_OPTION_COL + max(1, len(self.columns))

    def cell(self, name: str, c: Column) -> str | None:
        """A reference to option input or calculation ``name`` in column ``c``
        (``KV!D8``); None when ``name`` is neither."""
        if name in self.option_rows:
            return f"KV!{c.letter}{self.option_rows[name] + 1}"
        if name in self.calc_rows:
            sheet, row = self.calc_rows[name]
            return f"{sheet}!{c.letter}{row + 1}"
        return None

    def catalog_name(self, name: str, c: Column) -> str | None:
        """The display name (Catalog column B) of the GPU, platform or precision that option
        input ``name`` holds in column ``c``, as a formula operand (exact match: an id typed
        in that is not in the catalog shows #N/A); None for other inputs."""
        table = lookup_keys().get(name)
        rows = self.catalog_ids.get(table or "")
        cell = self.cell(name, c)
        if table not in ("gpus", "platforms", "precisions") or not rows or cell is None:
            return None
        first, last = rows[0][1], rows[-1][1]
        return lookup_formula(cell, _column(first, last),
                              _column(first.replace("$A$", "$B$"), last.replace("$A$", "$B$")))

    def ref_template(self, n: str, sheet: str) -> str:
        """Input or calculation ``n`` as a formula on ``sheet`` refers to it, with ``\\x00``
        for the option's column and ``\\x01`` for its workload's k."""
        scope = SCOPE.get(n)
        if scope == "account":
            return f"in_{n}"
        if scope == "workload":
            return f"in_w\x01_{n}"
        target, row = ("KV", self.option_rows[n]) if scope == "option" else self.calc_rows[n]
        return f"{'' if target == sheet else target + '!'}\x00{row + 1}"

    def template(self, calc: Calculation) -> str:
        """The calculation's formula with ``\\x00`` for its column and ``\\x01`` for k."""
        sheet = calc.sheet

        def name(n: str) -> str:
            return self.ref_template(n, sheet)

        def table(lk: Lookup, key: str) -> str:
            rows = self.catalog_ids.get(lk.table, [])
            if not rows:
                raise ValueError(f"no {lk.table} rows for {calc.name}")
            first = self.catalog_cells[(lk.table, rows[0][0], lk.column)]
            last = self.catalog_cells[(lk.table, rows[-1][0], lk.column)]
            return lookup_formula(key, _column(rows[0][1], rows[-1][1]), _column(first, last))

        return render(calc.expr, name, table)

    @staticmethod
    def fill(template: str, c: Column) -> str:
        """A :meth:`template` printed for column ``c``."""
        return "=" + template.replace("\x00", c.letter).replace("\x01", str(c.k))
