"""``summary.xlsx`` of a batch: one row per account, totals as live formulas."""

from __future__ import annotations

import math
from pathlib import Path

import xlsxwriter

from ..base.textsafe import clean_text
from ..documents.workbook.formats import has_minor_unit
from .outcome import Outcome

COLUMNS = (  # header, Outcome attribute, format, width
    ("File", "file", "text", 28),
    ("Account", "account", "text", 28),
    ("Status", "status", "text", 14),
    ("Message", "message", "wrap", 50),
    ("Recommendation per workload", "recommendations", "wrap", 50),
    # as the proposal's cover counts them: the GPUs and servers bought (whole servers, idle
    # GPUs included: "133" beside a cover's "144 GPUs" read as two plans), and the GPUs the
    # recommendation rents (a dash where it buys)
    ("GPUs bought", "gpus", "int", 8),
    ("Nodes", "nodes", "int", 8),
    ("GPUs rented", "cloud_gpus_rented", "rented", 8),
    ("Currency", "currency", "text", 9),
    ("Capital cost", "capex", "money", 14),
    ("On-prem per year", "annual_cost_onprem", "money", 16),
    ("Cloud per year", "annual_cost_cloud", "money", 16),
    # per million output tokens, as the proposal's "Per million output tokens alone" row (its
    # "per million tokens" counts input + output: a header without "output" read as that)
    ("On-prem per M output tokens", "cost_per_million_tokens_onprem", "money2", 12),
    ("Cloud per M output tokens", "cost_per_million_tokens_cloud", "money2", 12),
    ("Workbook", "xlsx", "link", 22),
    ("Proposal", "pdf", "link", 22),
)
TOTALLED = {"gpus", "nodes", "cloud_gpus_rented", "capex", "annual_cost_onprem", "annual_cost_cloud"}
LINE_HEIGHT = 15.0  # points, Calibri 11


def _lines(text: str, width: int) -> int:
    """The lines a wrapped cell of ``width`` characters takes: LibreOffice and Gnumeric keep
    an .xlsx row at its default height unless the file states one, so a recommendation of
    several lines printed over the next account's row."""
    return sum(max(1, math.ceil(len(part) / max(1, width - 2))) for part in text.split("\n"))


def write_summary(outcomes: list[Outcome], path: Path) -> None:
    # in_memory: xlsxwriter otherwise writes each part to $TMPDIR first, and a full disk left
    # them there (issue 25, F11)
    wb = xlsxwriter.Workbook(str(path), {"in_memory": True})
    ws = wb.add_worksheet("Accounts")
    f = {
        "head": wb.add_format({"bold": True, "bg_color": "#1F3864", "font_color": "white",
                               "text_wrap": True, "valign": "top"}),
        "text": wb.add_format({"valign": "top"}),
        "wrap": wb.add_format({"text_wrap": True, "valign": "top"}),
        "int": wb.add_format({"num_format": "#,##0", "valign": "top"}),
        # GPUs rented where the recommendation rents them, else a dash (not "0 rented")
        "rented": wb.add_format({"num_format": '#,##0;-#,##0;"—"', "valign": "top"}),
        "money": wb.add_format({"num_format": "#,##0", "valign": "top"}),
        "money2": wb.add_format({"num_format": "#,##0.00", "valign": "top"}),
        "link": wb.add_format({"font_color": "blue", "underline": 1, "valign": "top"}),
        "total": wb.add_format({"bold": True, "num_format": "#,##0", "top": 1}),
        "bad": wb.add_format({"font_color": "#9C0006", "bg_color": "#FFC7CE"}),
    }
    for c, (head, attr, kind, width) in enumerate(COLUMNS):
        ws.write_string(0, c, head, f["head"])
        # file names and links whole (about 1.15 characters per unit of width): LibreOffice
        # cut "inputs/code-assistant-alternatives.yaml" at 28
        texts = ([f"{o.stem}.{attr}" for o in outcomes] if kind == "link" else
                 [str(getattr(o, attr)) for o in outcomes] if kind == "text" else [])
        longest = max(map(len, texts), default=0)
        ws.set_column(c, c, max(width, math.ceil(longest / 1.15) + 1))
    # the header wraps too ("On-prem per M output tokens" in 12): LibreOffice showed its first line
    ws.set_row(0, LINE_HEIGHT * max(_lines(head, width) for head, _, _, width in COLUMNS))
    for r, o in enumerate(outcomes, start=1):
        lines = 1
        for c, (_, attr, kind, width) in enumerate(COLUMNS):
            if kind == "link":
                name = f"{o.stem}.{attr}"
                if name in o.outputs:
                    ws.write_url(r, c, f"external:{name}", f["link"], string=name)
                continue
            value = getattr(o, attr)
            if isinstance(value, list):
                value = "\n".join(value)
            if isinstance(value, str):
                text = clean_text(value)
                ws.write_string(r, c, text, f[kind])
                if kind == "wrap":
                    lines = max(lines, _lines(text, width))
            elif value is None:  # a cloud figure without a cloud price for a GPU
                ws.write_string(r, c, "no price listed", f["text"])
            else:
                # a currency without cents (JPY) shows its costs per million tokens whole
                whole = kind == "money2" and not has_minor_unit(o.currency)
                ws.write_number(r, c, value, f["money" if whole else kind])
        if lines > 1:
            ws.set_row(r, LINE_HEIGHT * lines)
    last = len(outcomes)
    ws.write_string(last + 1, 0, "Total (ok and skipped accounts)", f["total"])
    currencies = {o.currency for o in outcomes if not o.failed}
    for c, (_, attr, _, _) in enumerate(COLUMNS):
        if attr in TOTALLED and (attr in ("gpus", "nodes", "cloud_gpus_rented") or len(currencies) <= 1):
            if any(getattr(o, attr) is None for o in outcomes):
                # a sum of the priced accounts alone would understate the cloud
                ws.write_string(last + 1, c, "no price listed", f["total"])
                continue
            col = xlsxwriter.utility.xl_col_to_name(c)
            value = sum(getattr(o, attr) for o in outcomes)
            ws.write_formula(last + 1, c, f"=SUM({col}2:{col}{last + 1})", f["total"], value)
    if len(currencies) > 1:
        ws.write_string(last + 2, 0, "Costs are not totalled: accounts use different currencies ("
                        + ", ".join(sorted(currencies)) + ").")
    status_col = xlsxwriter.utility.xl_col_to_name(2)
    ws.conditional_format(1, 2, last, 2, {"type": "formula",
                                          "criteria": f'=AND(${status_col}2<>"ok",'
                                                      f'${status_col}2<>"skipped")',
                                          "format": f["bad"]})
    ws.freeze_panes(1, 2)
    ws.autofilter(0, 0, last, len(COLUMNS) - 1)
    ws.set_landscape()
    ws.fit_to_pages(1, 0)
    wb.close()
