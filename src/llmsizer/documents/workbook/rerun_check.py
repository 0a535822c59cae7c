"""The live re-run check (issue 22, item 4): after an edit on Inputs (a price, a target), is the
hardware frozen at generation still the cheapest? One formula per workload, on the Summary and
on the Inputs sheet, over the Options sheet's live cost column:

* the Options sheet's last column holds, for every feasible, priced option that has a column
  on the calculation sheets, its annual cost now in the way the account runs it (:func:`cost`:
  on-premises, or rented in the cloud, as the engine ranks the options) (``=IF(<meets
  targets>,<cost>,"—")``, both live); any other option holds "—" (its figures are values);
* the check names the cheapest of them (MIN, then INDEX/MATCH on the option labels) and
  compares it with the workload's frozen choice sized alone (the option the engine chose for
  the workload on its own: the plan's choice may be dearer alone because it shares nodes).

Only functions of the closed function table (:mod:`llmsizer.model.expr`: IF, OR, MIN, ROUNDDOWN,
and INDEX/MATCH of its lookups) and ``&``; the cached text is computed here by the same steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...model.calculations import CALCULATIONS
from ...model.expr import FUNCTIONS, OR, ne, ref, references, render
from ...sizing.evaluate import Choice
from ...sizing.results import Option, WorkloadResult
from ...sizing.xpyd import PREFILL_FIGURES
from ..proposal.format import option_label
from .book import Book
from .formats import clean_text, formula_text, wrapped_height
from .layout import Column, letter, option_statuses

__all__ = ["LABEL", "NOT_ELIGIBLE", "PREFILL_CHANGED", "RerunCheck", "check", "cost", "label",
           "live_cost", "write_checks"]

NOT_ELIGIBLE = "—"  # the live cost column of an option the check cannot compare
LABEL = "Re-run check (cheapest option alone at the current inputs)"
# The sentences name the choice "for this workload alone" (it said "the frozen choice", an
# engine word, beside a Recommendation that may differ because the plan shares nodes).
STILL = "Still the cheapest for this workload alone: "
NO_LONGER = ("The configuration chosen for this workload alone no longer meets the targets: "
             "re-run the sizing")

# A separate prefill pool's speed is an input the engine worked out at the inputs as sized
# (sizing/xpyd.py, PREFILL_FIGURES): no formula can follow an edit of what it reads, so the
# check says so instead of comparing stale costs (a doubled prompt left 936 GPUs live where a
# re-run needs 1,008 and picks another layout).
PREFILL_CHANGED = ("An input the separate prefill replicas' speed was worked out from has "
                   "changed (the prompt, its cached share or the model; for a short prompt "
                   "also the answer, the load or the targets): the workbook keeps that speed "
                   "as sized, so re-run the sizing")


# prefill_ms is MAX(prompt x time per token, one step's weight read) + fixed times, and that
# weight read's expert share grows with the batch an aggregated replica would run: through it
# the figures read the load, the targets, the answer length and the memory settings. The read
# is at most every weight once (the share is capped at 1), so where the prompt's time exceeds
# that bound as sized, no edit of what the share alone reads can reach the figures (the guard
# fired on 8 re-readable load, target, answer and memory edits of frontier-moe-rack that left
# the speed as it was).
BATCH_SHARE = "experts_read_busiest_fraction"


@cache
def prefill_reads(bounded: bool = False) -> tuple[str, ...]:
    """Every name the prefill figures of an xPyD option read, through the calculation list;
    ``bounded``: where the weight-read floor cannot win (what only its expert share reads is
    left out)."""
    by_name = {c.name: c for c in CALCULATIONS}
    seen: set[str] = set()
    todo = list(PREFILL_FIGURES.values())
    while todo:
        name = todo.pop()
        if name not in seen and not (bounded and name == BATCH_SHARE):
            seen.add(name)
            if name in by_name:
                todo.extend(references(by_name[name].expr))
    return tuple(sorted(seen))


def _prefill_layout(w: WorkloadResult, o: Option) -> Option | None:
    """The aggregated option of an xPyD option's prefill layout (its figures are the ones the
    xPyD option copied), from the id's '/prefill-tp8-ep8-adp8'; None if not among the
    options."""
    part = next((p for p in o.id.split("/") if p.startswith("prefill-")), None)
    if part is None:
        return None
    layout = {m[1]: int(m[2]) for m in re.finditer(r"([a-z]+)(\d+)", part.removeprefix("prefill-"))}
    choice = Choice(o.gpu, o.platform, o.weight_precision, o.kv_precision, layout["tp"],
                    ep=layout.get("ep", 1), adp=layout.get("adp", 1),
                    platform_in_id=o.id.endswith(f"/{o.platform}"))
    return w.option(choice.id)


def _floor_bounded(w: WorkloadResult, o: Option) -> bool:
    """Whether the prompt's prefill time on the prefill layout, as sized, is at least its
    largest weight read (every weight once): then the batch does not reach the figures."""
    p = _prefill_layout(w, o)
    if p is None:
        return False
    return float(p.values["prefill_compute_ms"]) >= float(p.values["all_weights_ms"])


@dataclass(frozen=True)
class RerunCheck:
    formula: str
    text: str  # its value at generation


def label(book: Book, o: Option) -> str:
    """An option in words, as the Options sheet's column B and the calculation sheets' option
    row show it (tables, chart axes, the check's text) and as the proposal names it: '4 ×
    NVIDIA H100 SXM 80GB, FP8 weights, FP8 KV cache' and what sets it apart beyond TP
    (proposal/format.py, option_label: one home for the words)."""
    return clean_text(option_label(book.display_name("gpus", o.gpu), o.tp, o.weight_precision,
                                   o.kv_precision, o.values))


def _words(book: Book, o: Option) -> str:
    """The option as the check names it: the Options sheet's label (column B) on its
    platform (column E)."""
    return f"{label(book, o)} on {clean_text(book.display_name('platforms', o.platform))}"


def cost(book: Book) -> str:
    """The cost the check compares: the cloud's per year where the account rents (the engine
    ranks a rented account's options by it, sizing/search.py ``_rank``), else the on-premises
    one. A rented insurer's check read "A re-run may choose 2 × H100 ..., 22 % cheaper" beside
    the 4 × H200 option chosen as the cheapest to rent."""
    return "annual_cost_cloud" if book.r.deployment.recommended == "cloud" else (
        "annual_cost_onprem")


def _priced(book: Book, o: Option) -> bool:
    """Priced in the way compared: a purchase price, or a cloud price where the account rents."""
    if cost(book) == "annual_cost_cloud":
        return float(o.values["cloud_gpu_hour"]) > 0
    return o.priced


def _eligible(book: Book, k: int, o: Option) -> Column | None:
    """The option's column when the check compares it: feasible, priced, with a column."""
    if not (o.feasible and _priced(book, o)):
        return None
    return next((c for c in book.lay.columns if c.k == k and c.option.id == o.id), None)


def live_cost(book: Book, k: int, o: Option) -> tuple[str, float] | None:
    """The Options sheet's live cost cell of option ``o`` of workload ``k``: (formula, value),
    or None (the cell holds NOT_ELIGIBLE)."""
    c = _eligible(book, k, o)
    if c is None:
        return None
    name = cost(book)
    met, cell = _met(book, c), book.lay.cell(name, c)
    if cell is None:
        return None
    if met is None:
        return (f"={cell}", float(o.values[name]))
    # IF(flag): a flag is TRUE/FALSE in a spreadsheet and TRUE=1 is FALSE in Excel and
    # Gnumeric (a boolean is not a number there)
    return (f'=IF({met},{cell},"{NOT_ELIGIBLE}")', float(o.values[name]))


def _met(book: Book, c: Column) -> str | None:
    """The option's live "meets latency targets" cell when it gates the check: only where the
    flag held at generation (an option feasible by another rule, e.g. a throughput-only
    target, keeps its cost live without the gate)."""
    if not float(c.option.values.get("slo_met", 0.0)):
        return None
    return book.lay.cell("slo_met", c)


def _text(a: object) -> str:
    return formula_text(str(a))


def _others(book: Book, k: int, w: WorkloadResult) -> str:
    """What "still the cheapest" leaves out: the options without a column (no formulas, so
    their costs stay as sized). An edit can make one of them the cheapest (helpdesk with
    node loss survived: a re-run picks the XE8640, which had no column), so the sentence
    says where it looked and what a re-run adds."""
    others = len(w.options) - sum(1 for c in book.lay.columns if c.k == k)
    if others <= 0:
        return ""
    return (f" (among the options on the calculation sheets; a re-run also compares the "
            f"{others:,} other{'s' if others > 1 else ''})")


def _plan_pick(book: Book, w: WorkloadResult) -> str:
    """Where the plan runs the workload on another option than its cheapest alone, that
    option, so the sentence does not read as a contradiction of the Recommendation beside it
    (review round 19: a rented insurer's chat read "Still the cheapest for this workload
    alone: 4 × NVIDIA H200 SXM ..." under a recommendation of H100s: the plan chooses for the
    account, its pools and node groups, not for each workload alone)."""
    if w.recommended is None or w.recommended == w.dedicated:
        return ""
    pick = next((o for o in w.options if o.id == w.recommended), None)
    if pick is None:
        return ""
    return (f". The plan runs it on {_words(book, pick)} instead: chosen for the account as a "
            "whole (its pools and node groups), not for this workload alone")


def _prefill_changed(book: Book, k: int, w: WorkloadResult) -> str | None:
    """``OR(in_w1_prompt_tokens<>8000,…)`` over the named inputs the prefill figures read
    (the batch's only where the weight-read floor can win: :func:`_floor_bounded`), against
    their values as sized, when an option of workload ``k`` on the calculation sheets has
    separate prefill replicas; else None."""
    xpyd = [c.option for c in book.lay.columns
            if c.k == k and float(c.option.values.get("disagg_prefill_gpus", 0.0)) > 0]
    if not xpyd:
        return None
    reads = {n for o in xpyd for n in prefill_reads(_floor_bounded(w, o))}
    named = [(f"in_w{k}_{i.name}", float(w.inputs[i.name])) for i in book.workload_inputs
             if i.name in reads]
    named += [(f"in_{i.name}", float(book.r.account_inputs[i.name]))
              for i in book.account_inputs if i.name in reads]
    tests = [ne(ref(name), value) for name, value in named]
    most = FUNCTIONS["OR"].max_args
    while len(tests) > most:  # OR takes at most 30 arguments: nest them
        tests = [OR(*tests[j:j + most]) for j in range(0, len(tests), most)]
    return render(OR(*tests), lambda n: n) if tests else None


def check(book: Book, k: int, w: WorkloadResult, live_col: int) -> RerunCheck | None:
    """The re-run check of workload ``k`` (1-based); None without a frozen choice alone that
    has a column (no recommendation, or the sheets could not show it)."""
    if w.dedicated is None:
        return None
    feasible, rejected = option_statuses(w)
    rows = [book.lay.options_rows[(k, o.id)] for o, _ in feasible + rejected]
    frozen = next((o for o in w.options if o.id == w.dedicated), None)
    if frozen is None or not rows:
        return None
    frozen_col = _eligible(book, k, frozen)
    if frozen_col is None:
        return None
    met = _met(book, frozen_col)
    x = letter(live_col)
    first, last = min(rows) + 1, max(rows) + 1
    rng = f"Options!${x}${first}:${x}${last}"
    at = f"MATCH(MIN({rng}),{rng},0)"
    cheapest = (f"INDEX(Options!$B${first}:$B${last},{at})&{_text(' on ')}&"
                f"INDEX(Options!$E${first}:$E${last},{at})")
    mine = f"Options!${x}${book.lay.options_rows[(k, frozen.id)] + 1}"
    saving = f"(1-MIN({rng})/{mine})*100"
    compare = (f"IF({mine}>MIN({rng}),{_text('A re-run may choose ')}&{cheapest}&"
               f"{_text(', ')}&IF({saving}>=1,ROUNDDOWN({saving},0)&{_text(' %')},"
               f"{_text('under 1 %')})&{_text(' cheaper (this workload alone)')},"
               f"{_text(STILL + _words(book, frozen) + _others(book, k, w) + _plan_pick(book, w))})")
    formula = ("=" + compare if met is None else
               f"=IF({met},{compare},"
               f"{_text(NO_LONGER)})")
    changed = _prefill_changed(book, k, w)
    if changed is not None:
        formula = f"=IF({changed},{_text(PREFILL_CHANGED)},{formula[1:]})"
    # the same steps on the values at generation (MATCH: the first row holding the minimum)
    name = cost(book)
    costs = [(float(o.values[name]), _words(book, o))
             for o, _ in feasible + rejected if live_cost(book, k, o) is not None]
    low = min(v for v, _ in costs)
    mine_v = float(frozen.values[name])
    if mine_v > low:
        pct = (1 - low / mine_v) * 100
        rounddown = FUNCTIONS["ROUNDDOWN"].python
        assert rounddown is not None
        amount = f"{int(rounddown(pct, 0))} %" if pct >= 1 else "under 1 %"
        name = next(n for v, n in costs if v == low)
        text = f"A re-run may choose {name}, {amount} cheaper (this workload alone)"
    else:
        text = f"{STILL}{_words(book, frozen)}{_others(book, k, w)}{_plan_pick(book, w)}"
    return RerunCheck(formula, text)


def write_checks(book: Book, ws: Any, row: int, head: str, live_col: int, width: int) -> int:
    """The check's row: one live sentence per workload in the workload columns (C on, each
    ``width`` characters wide), as on the Summary and the Inputs sheet. Returns the next
    row."""
    ws.write_string(row, 0, LABEL, book.f(head))
    height = 15.0
    for k, w in enumerate(book.r.workloads, start=1):
        got = check(book, k, w, live_col)
        if got is None:
            ws.write_string(row, 1 + k, NOT_ELIGIBLE, book.f("unit"))
            continue
        ws.write_formula(row, 1 + k, got.formula, book.f("wrap"), got.text)
        height = max(height, wrapped_height(got.text, width, 11))
    ws.set_row(row, min(height, 400))
    return row + 1
