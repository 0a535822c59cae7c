"""A workload's alternative models side by side in the terminal (``llmsizer size``): the
PDF's summary table, same figures."""

from __future__ import annotations

import textwrap

from rich import box
from rich.table import Table
from rich.text import Text

from ..sizing.results import ModelAlternatives
from .proposal.format import option_words
from .textcatalog import params_text
from .textwords import amount, cell_width, latency


def models_table(t: ModelAlternatives, cur: str, width: int) -> Table:
    """A workload's alternative models side by side (the PDF's summary table, same figures):
    each model's name over its configuration in the first column, folded to what the figures
    leave (at 80 columns a column per phrase was cut to "confi…" and "Qwen2.…")."""
    tab = Table(title=Text(f"{t.workload} — models compared; recommended: {t.rule}"),
                title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                padding=(0, 0, 0, 1) if width >= 90 else 0)
    heads = ["params", "weights\nGB", "tok/s\n/user", "TTFT\nms", "GPUs\nbought",
             f"capex\n{cur}", f"per year\n{cur}"]
    rows: list[tuple[str, str, list[str]]] = []
    for r in t.alternatives:
        if r.meets_targets and r.gpu_name and r.tp and r.weight_precision and r.kv_precision:
            config = option_words(r.gpu_name, r.tp, r.weight_precision, r.kv_precision)
            figures = [f"{r.weights_gb or 0:,.1f}", f"{r.tokens_per_s_per_user or 0:.1f}",
                       latency(r.ttft_ms or 0), f"{r.gpus_purchased}", amount(r.capex),
                       amount(r.annual_cost)]
        else:
            config, figures = "none meets the targets", ["—"] * 6
        rows.append((("★ " if r.chosen and r.meets_targets else "  ") + r.model_name, config,
                     [params_text(r.params_total), *figures]))
    widths = [max([len(row[2][i]) for row in rows] + [len(p) for p in h.split("\n")])
              for i, h in enumerate(heads)]
    per_column = 2 if width >= 90 else 1
    room = max(width - sum(w + per_column for w in widths) - per_column - 2, 24)
    cells = ["\n".join(textwrap.wrap(name, room, subsequent_indent="  ")
                       + textwrap.wrap(config, room, initial_indent="    ",
                                       subsequent_indent="    "))
             for name, config, _ in rows]
    first = max([len("model and configuration")] + [cell_width(c) for c in cells])
    tab.add_column("model and\nconfiguration" if first < 23 else "model and configuration",
                   min_width=min(first, room), max_width=room)
    for head in heads:
        tab.add_column(head, justify="right", no_wrap=True)
    for cell, (_, _, figures) in zip(cells, rows, strict=True):
        tab.add_row(cell, *figures)
    return tab
