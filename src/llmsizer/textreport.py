"""Terminal tables for ``llmsizer size`` and ``llmsizer catalog`` (rich)."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .results import Result


def _console() -> Console:
    # Pipes and files get a wide, unwrapped table so ids stay greppable.
    return Console() if sys.stdout.isatty() else Console(width=180)


def _money(x: float, cur: str) -> str:
    return f"{cur} {x:,.0f}"


def print_result(result: Result, console: Console | None = None) -> None:
    con = console or _console()
    cur = result.account.currency
    con.print(Text.assemble((result.account.name, "bold"),
                            f"  (llmsizer {result.llmsizer_version})"), highlight=False)
    for w in result.workloads:
        t = Table(title=Text(f"{w.name} — {w.model_name} ({w.mode})"), title_justify="left")
        t.add_column("")
        t.add_column("option", no_wrap=True)
        for col in ("batch", "tok/s/user", "TTFT ms", "replicas", "GPUs", "nodes", "headroom",
                    "on-prem/yr"):
            t.add_column(col, justify="right", no_wrap=True)
        t.add_column("why not", overflow="fold")
        for o in w.options:
            v = o.values
            mark = "★" if o.id == w.recommended else ""
            if o.feasible:
                t.add_row(mark, o.id, f"{float(v['batch_per_replica']):.0f}",
                          f"{float(v['tokens_per_s_per_user']):.1f}",
                          f"{float(v['ttft_ms']):,.0f}", f"{float(v['replicas']):.0f}",
                          f"{float(v['gpus']):.0f}", f"{float(v['nodes']):.0f}",
                          f"{float(v['headroom_achieved']):.0%}",
                          _money(float(v["annual_cost_onprem"]), cur) if o.priced else "no price",
                          "")
            else:
                t.add_row("", o.id, "", "", "", "", "", "", "", "", escape(o.reason))
        con.print(t)
        if w.measured_note:
            con.print(Text(w.measured_note), highlight=False)
        for warning in w.measured_warnings:
            con.print(Text(warning, style="yellow"), highlight=False)
        if w.advice:
            con.print(Text(w.advice, style="red"), highlight=False)
    tot = result.totals
    con.print(f"Total: {tot.gpus} GPUs in {tot.nodes} nodes; capex {_money(tot.capex, cur)}; "
              f"on-prem {_money(tot.annual_cost_onprem, cur)}/yr; cloud "
              f"{_money(tot.annual_cost_cloud, cur)}/yr", highlight=False)


def print_catalog(kind: str, table: dict[str, Any], console: Console | None = None) -> None:
    con = console or _console()
    t = Table(title=kind)
    if kind == "gpus":
        cols = ["memory_gb", "bandwidth_tb_s", "bf16_tflops", "fp8_tflops", "fp4_tflops",
                "price_usd"]
    elif kind == "models":
        cols = ["params_total", "params_active", "layers", "kv_heads", "head_dim", "max_context"]
    else:
        cols = ["gpus_per_node", "node_power_kw", "base_price_usd"]
    t.add_column("id", no_wrap=True)
    t.add_column("name")
    for c in cols:
        t.add_column(c, justify="right")
    for key, e in table.items():
        row = [key, e.name]
        for c in cols:
            x = getattr(e, c)
            row.append("—" if x is None else (f"{x:,.6g}" if isinstance(x, float) else str(x)))
        t.add_row(*row)
    con.print(t)
