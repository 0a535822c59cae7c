"""Terminal tables for ``llmsizer size`` and ``llmsizer catalog`` (rich): the report in the
order a reader meets it. Its parts live beside it: the option tables (:mod:`.textoptions`,
:mod:`.textretrieval`), the ruled-out list (:mod:`.textruledout`), the models compared
(:mod:`.textmodels`), the plan and total (:mod:`.textplan`), their words (:mod:`.textwords`)
and the catalog's tables (:mod:`.textcatalog`)."""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

from ..model.catalog import load_catalog
from ..sizing.results import Result
from .fasttable import print_table
from .proposal.format import Formatter
from .proposal.models import QUALITY
from .proposal.views import streams_sentence
from .textcatalog import catalog_table, params_text
from .textmodels import models_table
from .textoptions import (
    RENTED_NOTE,
    TOP,
    WIDE,
    OptionNames,
    dropped_note,
    workload_table,
    workload_title,
)
from .textplan import print_plan, print_total
from .textretrieval import best_retrieval, retrieval_table, retrieval_title
from .textruledout import condensed, ruled_out
from .textwords import headroom_places, say

# params_text: the catalog's words for a parameter count, read here by the web page's tests
__all__ = ["params_text", "print_catalog", "print_result"]


def _console() -> Console:
    # A terminal, or a COLUMNS the user set, decides the width; other pipes and files get a
    # wide table so ids stay greppable on one line.
    columns = os.environ.get("COLUMNS", "")
    if sys.stdout.isatty() or columns.isdigit():
        return Console()
    return Console(width=180)


def print_result(result: Result, console: Console | None = None, every: bool = False) -> None:
    """The report of ``llmsizer size``: per workload the best options that meet its targets
    (:data:`.textoptions.TOP` rows and the recommended one) and those ruled out, one line per
    reason; ``every`` (``--all``): every option, each ruled-out one with its own reason."""
    con = console or _console()
    cur = result.account.currency
    wide = con.width >= WIDE and every
    cat = load_catalog()
    places = headroom_places(result)  # the PDF's one precision for every headroom
    con.print(Text.assemble((result.account.name, "bold"),
                            f"  (llmsizer {result.llmsizer_version})"), highlight=False)
    told = told_rented = False
    for w in result.workloads:
        # a server's detail is kept where two of this table's options would read the same
        names = OptionNames(cat, list(w.options))
        if wide or any(o.feasible for o in w.options):
            table, dropped, more = workload_table(w, cur, con.width, names,
                                                  result.deployment.recommended,
                                                  limit=None if every else TOP,
                                                  places=places)
            print_table(table, con)
            if more:
                say(con, f"  and {more} more options that meet the targets; --all lists "
                         "every one")
            if result.deployment.recommended == "cloud" and not told_rented:
                say(con, RENTED_NOTE, rest="")  # once: the tables' figures as rented
                told_rented = True
            # where the stated streams bind, under the table: the PDF callout's sentence
            hint = streams_sentence(w.best.values, Formatter(cur).count) if w.best else ""
            if hint:
                say(con, hint, rest="")
            if dropped and not told:
                # say once what a narrow table leaves out, or a reader takes it for not computed
                con.print(Text(dropped_note(dropped, con.width)), highlight=False)
                told = True
        else:  # nothing meets the targets: a narrow table would be its header alone, and a
            # note of the columns it dropped from no rows (review round 21)
            con.print(Text(workload_title(w)), highlight=False)
        out = [o for o in w.options if not o.feasible]
        if out and every and not wide:
            ruled_out(out, names, con)
        elif not every:
            condensed(w.options, names, con)
        if w.measured_note:
            con.print(Text(w.measured_note), highlight=False)
        for warning in w.measured_warnings:
            con.print(Text(warning, style="yellow"), highlight=False)
        if w.advice:  # folded as the plan's sentences are: "8 ×" never apart from its GPU
            say(con, w.advice, rest="", style="red")
    for rw in result.retrieval:
        names = OptionNames(cat, list(rw.options))
        rented = result.deployment.recommended == "cloud"
        if wide or any(o.feasible for o in rw.options):
            print_table(retrieval_table(rw, cur, con.width, names, rented, every,
                                        None if every else TOP), con)
            more = (0 if every else sum(o.feasible for o in rw.options)
                    - len(best_retrieval(rw, rented, TOP)))
            if more:
                say(con, f"  and {more} more options that meet the targets; --all lists "
                         "every one")
        else:  # none meets the targets: a table would be its header alone
            con.print(Text(retrieval_title(rw)), highlight=False)
        r_out = [o for o in rw.options if not o.feasible]
        if r_out and every and not wide:
            ruled_out(r_out, names, con)
        elif not every:
            condensed(rw.options, names, con)
        if rw.advice:
            say(con, rw.advice, rest="", style="red")
    for t in result.model_alternatives:
        con.print(models_table(t, cur, con.width))
        con.print(Text(QUALITY), highlight=False)
    print_plan(result, con, places)
    print_total(result, con)


def print_catalog(kind: str, table: dict[str, Any], console: Console | None = None) -> None:
    """The catalog command's table (:func:`.textcatalog.catalog_table`)."""
    catalog_table(kind, table, console or _console())
