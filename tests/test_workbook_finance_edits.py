"""Finance edits the Inputs sheet; the re-run check asks for a re-run exactly when a re-run
would work out another speed for the separate prefill replicas (xPyD).

inputs/frontier-moe-rack.yaml is sized with separate prefill replicas (DeepSeek-R1 on GB300:
decode TP16/EP16, prefill TP8/EP8). Their speed (sizing/xpyd.py, PREFILL_FIGURES) is
prefill_ms = MAX(prompt x time per token, one step's weight read) + fixed times, and the weight
read's expert share grows with the batch: through it the guard used to read the load, the
targets, the answer and the memory settings: of 36 re-readable one-cell edits it fired on
10, 8 of them needlessly (users, tokens/s per user, response time, system tokens/s, answer
length, context, memory utilisation, runtime reserve); it fires on the 2 that move the
speed. As sized the prompt's time (8,000 x 0.0082 ms = 66 ms) is over eight times the whole
weight read (7.7 ms), so those inputs cannot reach it.

Each edit is recalculated in LibreOffice and re-read by the engine
(``llmsizer report EDITED.xlsx``: documents.reread then a fresh sizing): the prefill layout's
figures at the edited inputs are what a re-run would copy into any xPyD option.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from helpers import ROOT
from support import gnumeric
from support.libreoffice import read_values, recalculate
from support.named_cells import edit_named
from test_rerun_check import _check_cells
from test_workbook import same

from llmsizer.documents.reread import read_workbook
from llmsizer.documents.workbook import write_workbook
from llmsizer.documents.workbook.rerun_check import (
    BATCH_SHARE,
    PREFILL_CHANGED,
    STILL,
    _prefill_layout,
    prefill_reads,
)
from llmsizer.inputs.loader import load
from llmsizer.model.calculations import CALCULATIONS
from llmsizer.model.expr import references, render
from llmsizer.sizing.engine import size
from llmsizer.sizing.xpyd import PREFILL_FIGURES

FRONTIER = ROOT / "inputs" / "frontier-moe-rack.yaml"


def test_the_batch_reaches_the_prefill_figures_only_through_the_weight_read_floor() -> None:
    """What leaving the expert share out rests on: inside the prefill figures' closure only
    the weight read reads it, and only prefill_ms's MAX reads the weight read."""
    by_name = {c.name: c for c in CALCULATIONS}
    closure = set(prefill_reads())
    readers = {n: {m for m in closure if m in by_name and n in references(by_name[m].expr)}
               for n in (BATCH_SHARE, "decode_weights_ms")}
    assert readers == {BATCH_SHARE: {"decode_weights_ms"}, "decode_weights_ms": {"prefill_ms"}}
    assert references(by_name["decode_weights_ms"].expr) == {
        "shared_weights_ms", "all_experts_ms", BATCH_SHARE}
    assert render(by_name["prefill_ms"].expr, lambda n: n).startswith(
        "MAX(prefill_compute_ms,decode_weights_ms)")
    # the check's bound is the weight read at its largest, every expert read
    assert render(by_name["all_weights_ms"].expr, lambda n: n) == (
        "shared_weights_ms+all_experts_ms")
    bounded = set(prefill_reads(True))
    assert {"prompt_tokens", "prefix_cache_hit", "layers"} <= bounded
    assert not bounded & {"users", "output_tokens", "target_tokens_per_s_per_user",
                          "gpu_memory_utilization", "runtime_reserve_gb",
                          "target_system_tokens_per_s", "requests_per_s"}
    assert {"users", "output_tokens", "gpu_memory_utilization"} <= closure


# (named cell, edited value, whether a re-run works out another prefill speed)
EDITS = {"users": ("in_w1_users", 6000, False),  # from 4,000
         "tpot": ("in_w1_target_tokens_per_s_per_user", 90, False),  # from 60
         "answer": ("in_w1_output_tokens", 3000, False),  # from 2,000
         "memory": ("in_gpu_memory_utilization", 0.95, False),  # from 0.9
         "cached": ("in_w1_prefix_cache_hit", 0.1, True)}  # from 0


def test_the_guard_fires_exactly_when_a_re_run_changes_the_prefill_speed(
        tmp_path: Path) -> None:
    base = size(load(FRONTIER))
    w = base.workloads[0]
    xpyd = w.option(base.plan.pools[0].option)
    assert xpyd is not None and "/prefill-tp8-ep8-adp8" in xpyd.id
    layout = _prefill_layout(w, xpyd)
    assert layout is not None and layout.id == "gb300/fp4/kv-fp8/tp8/ep8/adp8"
    sized = {f: float(xpyd.values[f]) for f in PREFILL_FIGURES}
    assert sized == {f: float(layout.values[c]) for f, c in PREFILL_FIGURES.items()}
    v = layout.values
    assert float(v["prefill_tokens"]) * float(v["prefill_ms_per_token"]) > 8 * (
        float(v["shared_weights_ms"]) + float(v["all_experts_ms"]))
    book = tmp_path / "frontier.xlsx"
    write_workbook(base, book)
    books = {k: edit_named(book, tmp_path / f"{k}.xlsx", {name: value})
             for k, (name, value, _) in EDITS.items()}
    done = recalculate(list(books.values()), tmp_path / "out", timeout=600)
    for k, (_, _, moves) in EDITS.items():
        fresh = size(read_workbook(books[k]).loaded)  # what `llmsizer report` sizes
        again = fresh.workloads[0].option(layout.id)
        assert again is not None, k
        now = {f: float(again.values[c]) for f, c in PREFILL_FIGURES.items()}
        assert moves == any(not math.isclose(now[f], sized[f], rel_tol=1e-9) for f in sized), (
            k, now, sized)
        lo = read_values(done[books[k]])
        for sheet in ("Summary", "Inputs"):
            (text,) = _check_cells(lo[sheet]).values()
            assert (text == PREFILL_CHANGED) == moves, (k, sheet, text)


# A finance round (three shipped accounts): each edit recalculated in LibreOffice and in
# Gnumeric against `llmsizer report EDITED.xlsx`. Where the re-run keeps the plan, every key
# figure of the Summary (nodes, GPUs, replicas, capex, annual costs, cost per million output
# tokens, break-even; per workload and in total) equals a workbook written from the re-run,
# cell for cell; where it changes the plan, the re-run check says so. 15 such edits passed
# when this was written (a price, electricity, amortisation, headroom, users on example;
# GPU and node prices, PUE, load, a tokens/s target on frontier-moe-rack; a price, support,
# colocation, software, named users on helpdesk-population); these three keep it checked.
ROUND = {"example": ("in_price_h100_sxm", 36_000),  # USD 30,000 in the catalog
         "frontier-moe-rack": ("in_w1_target_tokens_per_s_per_user", 50),  # from 60
         "helpdesk-population": ("in_w1_named_users", 2_600)}  # from 2,000
KEY_ROWS = ("Nodes", "GPUs bought", "GPUs serving or on standby", "Replicas", "Capital cost",
            "On-prem cost per year", "Cloud cost per year", "On-prem cost per million",
            "Cloud cost per million", "Buy-vs-rent")


def test_a_finance_round_recalculates_like_a_re_run_or_says_re_run(tmp_path: Path) -> None:
    edited, bases = {}, {}
    for account, (name, value) in ROUND.items():
        bases[account] = size(load(ROOT / "inputs" / f"{account}.yaml"))
        book = tmp_path / f"{account}.xlsx"
        write_workbook(bases[account], book)
        edited[account] = edit_named(book, tmp_path / f"{account}-edited.xlsx", {name: value})
    lo = recalculate(list(edited.values()), tmp_path / "lo", timeout=600)
    (tmp_path / "gn").mkdir()
    changed = 0
    for account, path in edited.items():
        fresh = size(read_workbook(path).loaded)
        plan = [(p.workload_indices, p.option) for p in fresh.plan.pools]
        same_plan = plan == [(p.workload_indices, p.option) for p in bases[account].plan.pools]
        changed += not same_plan
        write_workbook(fresh, tmp_path / f"{account}-fresh.xlsx")
        want = read_values(tmp_path / f"{account}-fresh.xlsx")["Summary"]
        engines = {"LibreOffice": lo[path],
                   "Gnumeric": gnumeric.recalculate(path, tmp_path / "gn" / path.name)}
        for engine, out in engines.items():
            got = read_values(out)["Summary"]
            texts = _check_cells(got)
            if not same_plan:
                assert any(not str(t).startswith(STILL) for t in texts.values()), (
                    account, engine, texts)
                continue
            rows = [int(ref[1:]) for ref, v in got.items()
                    if re.fullmatch(r"A\d+", ref) and str(v).startswith(KEY_ROWS)]
            assert len(rows) == len(KEY_ROWS), rows
            cells = [ref for ref in want if re.fullmatch(r"[C-Z]\d+", ref)
                     and int(ref[1:]) in rows]
            assert cells
            for ref in cells:
                assert same(want[ref], got.get(ref), "", rel=1e-9), (
                    account, engine, ref, got.get(ref), want[ref])
    assert changed == 1  # frontier at 50 tok/s: the re-run takes fewer GPUs on another layout
