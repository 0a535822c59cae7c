"""The catalog command's tables (``llmsizer catalog``): GPUs, models and platforms with their
figures, the name under its id where a narrow terminal leaves it too little room. Moved out
of :mod:`.textreport` (which keeps ``print_catalog``) to keep that module under 600 lines."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .textwords import folded

__all__ = ["catalog_table", "params_text"]


def params_text(x: float) -> str:
    """A parameter count as people say it: 6.74 B, 70.6 B, 671 B (3 significant figures)."""
    return f"{x / 1e9:.3g} B" if x >= 1e9 else f"{x / 1e6:.3g} M"


def _cell(x: Any) -> str:
    if x is None:
        return "—"
    # 131,072 tokens as the web page and the PDF write it, not 131072
    return f"{x:,.6g}" if isinstance(x, float) else f"{x:,}" if isinstance(x, int) else str(x)


def _whole(x: float) -> str:
    """A figure to the unit, grouped: one precision down a column (the GPU table mixed
    "0.6", "0.864" and "3.35" TB/s, "362.05" and "733" TFLOPS, review round 22)."""
    return f"{x:,.0f}"


def _gb_s(tb_s: float) -> str:
    """A memory bandwidth in GB/s, whole: 864, 3,350 (the catalog's 0.864 and 3.35 TB/s)."""
    return _whole(tb_s * 1000)


_TITLES = {"gpus": "GPUs", "models": "Models", "platforms": "Servers (platforms)"}
_NOTES = {"gpus": "Compute per GPU, dense (without sparsity); — : not native on the GPU (INT8: "
                  "or not published). Price: one GPU, USD, where the catalog has one."}


# (attribute, header, formatter) per catalog; headers wrap onto two lines so narrow
# terminals keep every column readable. Each GPU column is one unit and one precision: the
# compute rates are the dense ones (the catalog halves the datasheets' sparse figures).
_CATALOG_COLUMNS: dict[str, list[tuple[str, str, Callable[[Any], str]]]] = {
    "gpus": [("memory_gb", "memory\nGB", _whole), ("bandwidth_tb_s", "bandwidth\nGB/s", _gb_s),
             ("bf16_tflops", "BF16\nTFLOPS", _whole), ("fp8_tflops", "FP8\nTFLOPS", _whole),
             ("fp4_tflops", "FP4\nTFLOPS", _whole), ("int8_tops", "INT8\nTOPS", _whole),
             ("price_usd", "price\nUSD", _whole)],
    "models": [("params_total", "params\ntotal", params_text),
               ("params_active", "params\nactive", params_text), ("layers", "layers", _cell),
               ("kv_heads", "KV\nheads", _cell), ("head_dim", "head\ndim", _cell),
               ("max_context", "max context\ntokens", _cell)],
    "platforms": [("gpus_per_node", "GPUs per\nnode", _cell),
                  ("nvlink_domain", "NVLink\ndomain", _cell),
                  ("node_power_kw", "node power\nkW", lambda x: f"{x:,.1f}"),
                  ("base_price_usd", "base price\nUSD", _cell)],
}


def catalog_table(kind: str, table: dict[str, Any], con: Console) -> None:
    """One catalog (GPUs, models, platforms) as a table: id, name and its figures."""
    t = Table(title=_TITLES[kind], box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True)
    cols = _CATALOG_COLUMNS[kind]
    rows = [[fmt(getattr(e, attr)) if getattr(e, attr) is not None else "—"
             for attr, _, fmt in cols] for e in table.values()]
    figures = sum(max([len(r[i]) for r in rows] + [len(p) for p in head.split("\n")]) + 2
                  for i, (_, head, _) in enumerate(cols))
    ids = max(map(len, table), default=2)
    # a name squeezed beside the id and the figures was cut to "NVID…": where fewer than 24
    # columns are left for it, it goes under its id instead (one column, no cut)
    stacked = con.width - figures - ids - 6 < 24
    if stacked:
        room = max(con.width - figures - 4, ids)
        t.add_column("id\n  name", no_wrap=True, min_width=min(room, 30))
        firsts = ["\n".join([key, *textwrap.wrap(e.name, room, initial_indent="  ",
                                                 subsequent_indent="  ",
                                                 break_on_hyphens=False)])
                  for key, e in table.items()]
    else:
        t.add_column("id", no_wrap=True, min_width=ids)
        t.add_column("name", ratio=1)
        firsts = list(table)
    for _, head, _ in cols:
        t.add_column(head, justify="right", no_wrap=True)
    for first, e, row in zip(firsts, table.values(), rows, strict=True):
        t.add_row(first, *([] if stacked else [e.name]), *row)
    con.print(t)
    if kind in _NOTES:
        con.print(Text(folded(_NOTES[kind], con.width, "  ", "  ")), highlight=False,
                  no_wrap=True, crop=False)
