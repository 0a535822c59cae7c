"""Retrieval sheet (issue 24): the embed and rerank workloads, one column per workload on its
recommended GPU. The Retrieval calculations (model/calculations/retrieval.py) and the TCO
lines that cost the workload's own node group are live formulas over the inputs listed above
them; the account's policy and cost inputs are the Inputs sheet's named cells. Written only
when the account has such a workload (the tab is absent otherwise). The Plan sheet's account
totals add this sheet's node counts and costs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ...model.calculations import GROUP_COST_CALCULATIONS, GROUP_COUNTS, INPUTS
from ...model.calculations.retrieval import (
    RAG_INPUTS,
    RAG_TTFT,
    RETRIEVAL_CALCULATIONS,
    RETRIEVAL_COST_CALCULATIONS,
    RETRIEVAL_COST_INPUTS,
    RETRIEVAL_INPUTS,
)
from ...model.expr import Lookup, Value, lookup, render, to_text
from ...model.sheetlookup import lookup_formula
from ...sizing.results import Result, RetrievalOption, RetrievalWorkloadResult
from ...sizing.retrieval import CATALOG_ROWS
from .book import Book
from .formats import (
    clean_text,
    fit_width,
    number_format,
    unit_text,
    unpriced_text,
    wrapped_height,
)
from .inputs import api_name
from .layout import _column as catalog_column
from .layout import input_name, letter

__all__ = ["COUNT_ROWS", "TOTAL_ROWS", "catalog_lookup", "retrieval_alone_refs", "retrieval_cell",
           "retrieval_total_refs", "write", "zero_text"]

FIRST_COL = 3
HEAD_ROW = 4  # workload, model, GPU, platform, serving engine
# Column widths (characters): label, unit, one per workload, the note (printed, wrapped so
# the page is not shrunk to fit one long line) and the formula by name (on screen only, as
# on the calculation sheets: it speaks in the names of column A). The label column holds
# "Idle rented cloud GPUs of the nodes it may share" (LibreOffice cut it at 40).
_LABEL_W, _UNIT_W, _WORKLOAD_W, _NOTE_W, _FORMULA_W = 45, 11, 22, 60, 50
_ACCOUNT = {i.name for i in INPUTS if i.scope == "account"}
# the catalog values the TCO lines read, as the engine looked them up for the option
_CATALOG = (("gpu_price", "GPU price", "currency"), ("node_base_price", "Node price without GPUs",
            "currency"), ("node_power_kw", "Node power", "kW"),
            ("cloud_gpu_hour", "Cloud price per GPU-hour", "currency/h"),
            ("cloud_gpus_per_instance", "GPUs per cloud instance", "GPUs"),
            *((f"cloud_size{k}_{c}", f"{label}, other size {k}", unit) for k in (1, 2)
              for c, label, unit in (("gpus", "GPUs per cloud instance", "GPUs"),
                                     ("gpu_hour", "Cloud price per GPU-hour", "currency/h"))),
            ("cloud_sold_by_gpu", "Cloud offer sold by the GPU", "1 = yes"),
            ("cloud_fixed_sizes", "Cloud offer sold in its listed sizes only", "1 = yes"),
            ("cloud_sizes_listed", "Cloud offer sold in listed sizes only", "1 = yes"),
            ("network_per_node_used", "Network per node", "currency"))
# the option's GPU and platform figures that the Catalog sheet lists (the engine reads the
# same catalog rows: sizing/retrieval.py): lookups, so an edited Catalog cell moves them
_LOOKED_UP = (("gpu_tflops", lookup("gpus", "gpu", "bf16_tflops")),
              ("gpu_memory_gb", lookup("gpus", "gpu", "memory_gb")),
              ("gpus_per_node", lookup("platforms", "platform", "gpus_per_node")),
              ("platform_sold_full", lookup("platforms", "platform", "sold_full")))
_INPUTS = [(i.name, i.label, i.unit) for i in (*RETRIEVAL_INPUTS, *RETRIEVAL_COST_INPUTS)
           if i.name not in _ACCOUNT]
_CALCS = (*RETRIEVAL_CALCULATIONS, *GROUP_COST_CALCULATIONS, *RETRIEVAL_COST_CALCULATIONS)
_ROWS: dict[str, int] = {}
_row = HEAD_ROW + 6
for _name, *_ in (*_INPUTS, *_CATALOG):
    _ROWS[_name] = _row
    _row += 1
_row += 1
for _c in _CALCS:
    _ROWS[_c.name] = _row
    _row += 1
# A RAG request end to end (when the account has all three kinds): its inputs and sum
_row += 1
RAG_HEAD_ROW = _row
for _rag_name in (*(i.name for i in RAG_INPUTS), RAG_TTFT.name):
    _row += 1
    _ROWS[_rag_name] = _row
# Plan totals (PLAN_TOTALS keys) and the row of this sheet each adds; "cloud_gpus": the GPUs
# each server rents itself, which the cloud total's "every part priced" test reads
TOTAL_ROWS = {"gpus_used": "retrieval_gpus_used", "gpus_purchased": "retrieval_gpus",
              "nodes": "retrieval_nodes", "capex": "capex",
              "annual_cost_onprem": "annual_cost_onprem",
              # as rented: a guest whose host's instances lack room, its cheapest option rented
              # alone where that costs less (session 25)
              "annual_cost_cloud": "retrieval_cloud_cost",
              "cloud_gpus": "retrieval_cloud_gpus_rented"}
# the TCO lines' counts (GROUP_COUNTS) as this sheet's rows: the cloud rents its own GPUs
# (load_gpus: its replicas before the N+1 node, 0 on shared nodes; read by the cloud lines
# only with N+1 asked)
COUNT_ROWS = {"nodes": "retrieval_nodes", "gpus": "retrieval_cloud_gpus",
              "gpus_purchased": "retrieval_gpus", "cloud_replica_gpus": "retrieval_replica_gpus",
              "load_gpus": "retrieval_load_gpus",
              # an offer sold by the GPU: an instance per one-GPU replica and one spare of it
              "cloud_load_instances": "retrieval_load_gpus",
              "cloud_spare_gpus": "retrieval_replica_gpus",
              "cloud_spare_instances": "retrieval_replica_gpus"}


def zero_text(name: str, values: Mapping[str, Value]) -> str:
    """The words a retrieval column's figure ``name`` shows at 0 (``values``: the column's):
    a server on a language-model group's idle GPUs, with a cloud price, adds no rent when
    that group's instances carry it: its cloud figures' 0 is money, not "no price listed"
    (a server on nodes of its own keeps the words, for a what-if tier without a price).
    Its on-premises price per million tokens there is 0 too: it rides on GPUs already bought,
    said so in words as the PDF does (a "$0.00/M tok" read as a free service)."""
    shared = float(values.get("shares_llm_nodes", 0.0)) > 0
    if shared and name == "retrieval_cost_per_million_tokens_onprem":
        return "no extra cost: on GPUs already bought"
    if name != "gpu_price" and shared and float(values.get("cloud_gpu_hour", 0.0)) > 0:
        return ""
    return unpriced_text(name)


def _chosen(r: Result) -> list[tuple[RetrievalWorkloadResult, RetrievalOption]]:
    return [(w, w.best) for w in r.retrieval if w.best is not None]


def retrieval_total_refs(r: Result, key: str) -> list[str]:
    """The Retrieval sheet's cells the account total ``key`` adds (none without the sheet)."""
    row = _ROWS[TOTAL_ROWS[key]] + 1
    return [f"Retrieval!{letter(FIRST_COL + j)}{row}" for j in range(len(_chosen(r)))]


def retrieval_cell(j: int, name: str) -> str:
    """The Retrieval sheet's cell of row ``name`` for its ``j``-th workload column (the
    workloads with a recommendation, in order: the plan's retrieval groups)."""
    return f"Retrieval!{letter(FIRST_COL + j)}{_ROWS[name] + 1}"


def retrieval_alone_refs(r: Result, key: str) -> list[str]:
    """The same for the "each workload alone" total: a group that shares a language-model
    node group's idle GPUs would, alone, have nodes of its own; those figures (the engine's,
    from the same calculations) stand in for its cells."""
    alone = {g.workload: g for g in r.plan.retrieval_groups_alone}
    refs = retrieval_total_refs(r, key)
    # a guest with no recommendation alone (an embedder beside a GB200 rack, where a rack of
    # its own has no option: session 25) counts 0 there, as the engine's alone totals do
    return [(repr(float(getattr(alone[g.workload], key))) if g.workload in alone else "0")
            if g.shares_with else ref
            for g, ref in zip(r.plan.retrieval_groups, refs, strict=True)]


def _engine(book: Book, w: RetrievalWorkloadResult) -> tuple[str, str]:
    """The workload's encoder engine in words, as the PDF names it, and the catalog's source
    for its fitted figures."""
    engine = book.catalog.encoder_engines.get(w.engine)
    return (engine.name, engine.source) if engine else (w.engine, "")


def _printed_width(n: int) -> int:
    """Characters across the printed columns (label to note) with ``n`` workload columns."""
    return _LABEL_W + _UNIT_W + _WORKLOAD_W * n + _NOTE_W


def _note(book: Book, row: int, col: int, text: str) -> None:
    """A note wrapped in its column, the row made tall enough (never shorter than it is)."""
    ws = book.ws["Retrieval"]
    ws.write_string(row, col, clean_text(text), book.f("wrap_note"))
    height = wrapped_height(text, _NOTE_W, 9)
    if height > 15:
        ws.set_row(row, height)


def _namer(col: int) -> Callable[[str], str]:
    def name(n: str) -> str:
        n = COUNT_ROWS.get(n, n) if n in GROUP_COUNTS else n
        if n in _ROWS:
            return f"{letter(col)}{_ROWS[n] + 1}"
        found = input_name(n)
        if found is None:
            raise KeyError(f"the Retrieval sheet cannot place {n!r}")
        return found
    return name


def catalog_lookup(book: Book, lk: Lookup, key: str) -> str:
    """A lookup of the Catalog sheet's ``lk`` column (``key``: the id cell to match)."""
    ids = book.lay.catalog_ids[lk.table]
    first = book.lay.catalog_cells[(lk.table, ids[0][0], lk.column)]
    last = book.lay.catalog_cells[(lk.table, ids[-1][0], lk.column)]
    return lookup_formula(key, catalog_column(ids[0][1], ids[-1][1]),
                          catalog_column(first, last))


def _catalog_formulas(book: Book, o: RetrievalOption, col: int) -> dict[str, str]:
    """The catalog values of option ``o`` (column ``col``) as lookups into the Catalog sheet
    on its GPU and platform, with the Inputs sheet's prices, GPU price multiplier and
    what-if cloud tier (typed numbers did not follow an edited price). Empty when the
    Catalog sheet lacks its GPU or platform (the engine's values are written then)."""
    keys = {"gpu": dict(book.lay.catalog_ids.get("gpus", [])).get(o.gpu),
            "platform": dict(book.lay.catalog_ids.get("platforms", [])).get(o.platform)}
    if None in keys.values():
        return {}
    name = _namer(col)

    def ref(n: str) -> str:
        return keys.get(n) or name(n)

    return {n: "=" + render(expr, ref, lambda lk, key: catalog_lookup(book, lk, key))
            for n, expr in (*CATALOG_ROWS, *_LOOKED_UP)}


def write(book: Book) -> None:
    if "Retrieval" not in book.ws:
        return
    ws = book.ws["Retrieval"]
    f = book.f
    chosen = _chosen(book.r)
    n = max(1, len(chosen))
    book.title(ws, "Retrieval serving: embedding and reranking",
               "One column per embed or rerank workload on its recommended GPU: its own nodes "
               "or a language-model node group's idle GPUs. GPU and server figures follow the "
               "Catalog sheet, prices the Inputs sheet (edit them there); the workload's own "
               "inputs are as sized. The rows below them are formulas.", 1,
               span=(FIRST_COL + n, _printed_width(n)))
    ws.set_column(0, 0, 28)
    ws.set_column(1, 1, _LABEL_W)
    ws.set_column(2, 2, _UNIT_W)
    ws.set_column(FIRST_COL, FIRST_COL + n - 1, _WORKLOAD_W)
    ws.set_column(FIRST_COL + n, FIRST_COL + n, _NOTE_W)
    ws.set_column(FIRST_COL + n + 1, FIRST_COL + n + 1, _FORMULA_W)
    # landscape (every sheet), as many pages down as the rows need, the label and unit
    # columns and the workload and model rows repeated on each page; the names (column A) and
    # the formula by name stay on screen
    fit_width(ws, _printed_width(n), _LABEL_W + _UNIT_W)
    ws.repeat_columns(1, 2)
    ws.repeat_rows(HEAD_ROW, HEAD_ROW + 1)  # workload and model: the engine row is tall
    ws.print_area(0, 1, (_ROWS[RAG_TTFT.name] if book.r.plan.rag_first_token is not None
                         else max(_ROWS[c.name] for c in _CALCS)), FIRST_COL + n)
    plat, gpus = book.catalog.platforms, book.catalog.gpus
    engines = [_engine(book, w) for w, _ in chosen]
    heads = (("Workload", [w.name for w, _ in chosen]),
             ("Model", [w.model_name for w, _ in chosen]),
             ("GPU (one replica each)", [gpus[o.gpu].name if o.gpu in gpus else o.gpu
                                         for _, o in chosen]),
             ("Platform", [plat[o.platform].name if o.platform in plat else o.platform
                           for _, o in chosen]),
             ("Serving engine", [name for name, _ in engines]))
    # where each engine's compute efficiency and fixed time per batch come from (one line
    # per engine named, as the catalog states it), beside the engines' row
    sources = dict(engines)
    _note(book, HEAD_ROW + len(heads) - 1, FIRST_COL + n,
          " ".join(f"{name}: {src}" for name, src in sources.items()))
    for k, (label, texts) in enumerate(heads):
        ws.write_string(HEAD_ROW + k, 1, label, f("header"))
        ws.write_blank(HEAD_ROW + k, 0, None, f("header"))
        ws.write_blank(HEAD_ROW + k, 2, None, f("header"))
        for j, text in enumerate(texts):
            ws.write_string(HEAD_ROW + k, FIRST_COL + j, clean_text(text), f("header"))
        # the names wrap in their 22-character columns (bold: about a tenth wider)
        if k < len(heads) - 1:
            ws.set_row(HEAD_ROW + k, max([wrapped_height(t, _WORKLOAD_W * 0.9, 11)
                                          for t in texts], default=15.0))
    looked_up = [_catalog_formulas(book, o, FIRST_COL + j) for j, (_, o) in enumerate(chosen)]
    for j, (w, _) in enumerate(chosen):  # the hosted API's price: its Inputs cell
        if api_name(w.kind) in book.named_values:
            looked_up[j]["api_per_million_tokens"] = "=" + api_name(w.kind)
    # a guest's idle rented GPUs on offer: those the previous guest of the same host left
    # (its retrieval_idle_cloud_left cell: the instances it added there carry this one's
    # replicas, session 25); the first guest's are the host's, as sized
    groups = book.r.plan.retrieval_groups
    for j, g in enumerate(groups):
        before = [k for k in range(j) if g.shares_with and groups[k].shares_with == g.shares_with]
        if before:
            looked_up[j]["llm_idle_cloud_gpus"] = (
                f"={letter(FIRST_COL + before[-1])}{_ROWS['retrieval_idle_cloud_left'] + 1}")
    for name, label, unit in (*_INPUTS, *_CATALOG):
        values = [float(o.values[name]) for _, o in chosen]
        fmt = number_format(unit, values or [0.0], book.cur, zero_text=unpriced_text(name))
        row = _ROWS[name]
        ws.write_string(row, 0, name, f("name"))
        ws.write_string(row, 1, label, f("label"))
        ws.write_string(row, 2, unit_text(unit, book.cur), f("unit"))
        for j, v in enumerate(values):
            formula = looked_up[j].get(name)
            if formula:
                ws.write_formula(row, FIRST_COL + j, formula, f("calc", fmt), v)
            else:
                ws.write_number(row, FIRST_COL + j, v, f("calc", fmt))
    for c in _CALCS:
        row = _ROWS[c.name]
        cached = [o.values[c.name] for _, o in chosen]
        numbers = [float(v) for v in cached if not isinstance(v, str)]
        ws.write_string(row, 0, c.name, f("name"))
        ws.write_string(row, 1, c.label, f("label"))
        ws.write_string(row, 2, unit_text(c.unit, book.cur), f("unit"))
        for j, cv in enumerate(cached):
            fmt = number_format(c.unit, numbers or [0.0], book.cur,
                                zero_text=zero_text(c.name, chosen[j][1].values))
            ws.write_formula(row, FIRST_COL + j, "=" + render(c.expr, _namer(FIRST_COL + j)),
                             f("calc", fmt), cv)
        ws.write_string(row, FIRST_COL + n + 1, f"= {to_text(c.expr)}", f("note"))
        _note(book, row, FIRST_COL + n, c.note)
    ws.freeze_panes(0, FIRST_COL)
    _write_rag(book, [w.name for w, _ in chosen], n)


def _write_rag(book: Book, names: list[str], n: int) -> None:
    """The end-to-end RAG time to first token (RAG_TTFT): the embed and rerank latencies
    from this sheet's columns, the stated search time, the generating workload's TTFT p95
    from its recommended column; the sum is a formula over those cells."""
    rag = book.r.plan.rag_first_token
    if rag is None:
        return
    ws, f = book.ws["Retrieval"], book.f
    col = letter(FIRST_COL)
    ws.write_string(RAG_HEAD_ROW, 1, "A RAG request, end to end", f("header"))
    ws.write_blank(RAG_HEAD_ROW, 0, None, f("header"))
    ws.write_blank(RAG_HEAD_ROW, 2, None, f("header"))
    steps = f"{rag.embed_workload} + search + {rag.rerank_workload} + {rag.llm_workload}"
    ws.write_string(RAG_HEAD_ROW, FIRST_COL, clean_text(steps), f("header"))
    ws.set_row(RAG_HEAD_ROW, wrapped_height(steps, _WORKLOAD_W * 0.9, 11))
    latency = _ROWS["latency_p95_s"] + 1
    llm = next((c for c in book.lay.columns
                if c.workload.name == rag.llm_workload and c.recommended), None)
    ttft = book.lay.cell("ttft_p95_ms", llm) if llm is not None else None
    refs = {"rag_embed_latency_s": f"={letter(FIRST_COL + names.index(rag.embed_workload))}"
                                   f"{latency}",
            "rag_rerank_latency_s": f"={letter(FIRST_COL + names.index(rag.rerank_workload))}"
                                    f"{latency}",
            "rag_llm_ttft_s": f"={ttft}/1000" if ttft else None}
    fmt = number_format("s", list(rag.values.values()), book.cur)
    rows: list[tuple[str, str, str, str]] = [(i.name, i.label, i.unit, i.note) for i in RAG_INPUTS]
    rows.append((RAG_TTFT.name, RAG_TTFT.label, RAG_TTFT.unit, RAG_TTFT.note))
    for name, label, unit, note in rows:
        row = _ROWS[name]
        ws.write_string(row, 0, name, f("name"))
        ws.write_string(row, 1, label, f("label"))
        ws.write_string(row, 2, unit_text(unit, book.cur), f("unit"))
        value = rag.values[name]
        formula = (("=" + render(RAG_TTFT.expr, lambda x: f"{col}{_ROWS[x] + 1}"))
                   if name == RAG_TTFT.name else refs.get(name))
        if formula:
            ws.write_formula(row, FIRST_COL, formula, f("calc", fmt), value)
        else:
            ws.write_number(row, FIRST_COL, value, f("calc", fmt))
        if name == RAG_TTFT.name:
            ws.write_string(row, FIRST_COL + n + 1, f"= {to_text(RAG_TTFT.expr)}", f("note"))
        _note(book, row, FIRST_COL + n, note)
