"""Models sheet (issue 22, item 8): a workload's alternative models side by side, one row each,
as the engine sized them. Each row sizes the whole account with that model, so its figures are
cached numbers from the engine (labelled so), not formulas: the rest of the workbook computes
the recommended model only. Written only when a workload lists alternatives (the tab is absent
otherwise); the PDF's summary table and `llmsizer size` show the same figures.
"""

from __future__ import annotations

from ...sizing.results import ModelAlternative
from ..proposal.format import option_words
from ..proposal.models import QUALITY, WAY
from .book import Book
from .formats import clean_text, fit_width, label_width, wrapped_height

__all__ = ["write"]

# (header, width, number format or "" for text, the row's value)
_COLUMNS: tuple[tuple[str, float, str], ...] = (
    ("Model", 30, ""), ("Parameters (billion)", 12, "0.0"), ("Active parameters (billion)", 12,
                                                            "0.0"),
    ("Configuration that meets the targets", 44, ""), ("Weights in memory (GB)", 12, "0.0"),
    ("Tokens/s per user", 11, "0.0"), ("First token (ms)", 11, "#,##0"),
    ("GPUs bought", 10, "#,##0"), ("GPUs serving or on standby", 10, "#,##0"), ("Capital cost ({cur})", 14,
                                                                 "#,##0"),
    ("Cost per year {way} ({cur})", 16, "#,##0"), ("Recommended", 14, ""),  # bold: 12 broke it
)


def _values(r: ModelAlternative) -> list[str | float | None]:
    meets = r.meets_targets and r.gpu_name and r.tp and r.weight_precision and r.kv_precision
    config = (option_words(r.gpu_name or "", r.tp or 0, r.weight_precision or "",
                           r.kv_precision or "") if meets else "none meets the targets")
    return [r.model_name, r.params_total / 1e9, r.params_active / 1e9, config, r.weights_gb,
            r.tokens_per_s_per_user, r.ttft_ms,
            *((r.gpus_purchased, r.gpus_used, r.capex, r.annual_cost) if meets
              else (None,) * 4),
            "yes" if r.chosen else "no"]


def write(book: Book) -> None:
    if "Models" not in book.ws:
        return
    ws = book.ws["Models"]
    f = book.f
    # the model and configuration columns as wide as their longest words: a configuration
    # was cut at its 44-character column in LibreOffice ("... FP8 KV cache" of "... on Dell
    # PowerEdge XE8640 ...")
    rows = [_values(a) for t in book.r.model_alternatives for a in t.alternatives]
    widths = [label_width([str(v[col]) for v in rows if isinstance(v[col], str)], width)
              if col in (0, 3) else width for col, (_, width, _) in enumerate(_COLUMNS)]
    book.title(ws, "Models compared",
               "Cached figures from the engine, not formulas: each row sizes the whole account "
               "with that model under the same load, targets, hardware and policy. The other "
               "sheets compute the recommended model. " + QUALITY,
               span=(len(_COLUMNS) - 1, sum(widths)))
    # printed on one page wide when legible: the subtitle, merged over all the columns, was
    # cut at the first page's edge
    fit_width(ws, sum(widths))
    row = 3
    for t in book.r.model_alternatives:
        ws.write_string(row, 0, clean_text(t.workload), f("section"))
        row += 1
        ws.write_string(row, 0, clean_text(f"Recommended: {t.rule}."), f("note"))
        row += 1
        heads = [head.format(cur=book.cur, way=WAY.get(t.alternatives[0].way, ""))
                 for head, _, _ in _COLUMNS]
        for col, (width, head) in enumerate(zip(widths, heads, strict=True)):
            ws.write_string(row, col, head, f("header"))
            ws.set_column(col, col, width)
        # the header row made tall enough for its wrapped (bold) words: at the default
        # height LibreOffice showed one line of "Parameters (billion)"
        ws.set_row(row, max(wrapped_height(head, width * 0.9, 11)
                            for width, head in zip(widths, heads, strict=True)))
        row += 1
        for alt in t.alternatives:
            role = "calc_rec" if alt.chosen else "calc"
            for col, value in enumerate(_values(alt)):
                fmt = _COLUMNS[col][2]
                if value is None:
                    ws.write_string(row, col, "—", f(role))
                elif isinstance(value, str):
                    ws.write_string(row, col, clean_text(value), f(role))
                else:
                    ws.write_number(row, col, float(value), f(role, fmt))
            row += 1
        row += 1
