"""The words and figures of the terminal report (``llmsizer size``): money, headroom and
first-token times as the PDF writes them, counts in words, and sentences folded under
themselves with a figure kept beside its unit."""

from __future__ import annotations

import re
import textwrap

from rich.console import Console
from rich.text import Text

from ..model.catalog import load_catalog
from ..sizing.results import Result
from .proposal.alternatives import shown_headrooms
from .proposal.format import NBSP, Formatter


def money(x: float, cur: str) -> str:
    """Money as the PDF and the web page show it (Formatter.money: rounded to what the
    inputs support, "USD 288 k"), with plain spaces; the sentences that carry it fold
    around it (``folded``)."""
    return Formatter(cur).money(x).replace(NBSP, " ")


def headroom_text(x: float, places: int | None = None) -> str:
    """A headroom to the PDF's and the web page's precision (Formatter.headroom: "38.8%",
    whole percents from 100 %, ">1,000%" above it), without the PDF's thin spaces: the
    terminal printed "39%" where the proposal says "38.8 %" (review round 20). ``places``:
    the result's one precision for every headroom (:func:`headroom_places`)."""
    return Formatter("").headroom(x, places).replace(NBSP, "")


def headroom_places(result: Result) -> int:
    """The decimals of every headroom of ``result``, the PDF's (Formatter.headroom_digits over
    the headrooms the proposal shows): the university's pool read "25.9%" in the terminal
    beside "26 %" in the PDF, whose alternatives reach 100 % (session 23)."""
    return Formatter.headroom_digits(shown_headrooms(result, load_catalog()))


def amount(x: float) -> str:
    """A money cell under a header that names the currency once: "288 k", "1.19 M"."""
    return money(x, "").strip()


def cell_width(cell: str) -> int:
    """The columns a table cell takes: its longest line."""
    return max(len(line) for line in cell.split("\n"))


def latency(ms: float) -> str:
    """A first-token time in the "TTFT ms" column to three figures, as the PDF rounds it
    (the model's first-token error is about +/-25 %): "16,100", never "16,131"."""
    return Formatter.figures(ms)


# a figure and the unit after it, and "4 × " before a GPU name; NBSP is not a space to
# textwrap, so these never fold apart
GLUE = re.compile(r"\d[\d,.]* (?:GB|tok/s|ms|s|k|M|bn|GPUs?|nodes?|replicas?|×)(?![\w])"
                  r"|\b[A-Z]{3} \d")


def folded(text: str, width: int, first: str, rest: str) -> str:
    """``text`` folded at spaces to ``width`` columns, later lines indented by ``rest``; a
    figure stays beside its unit and money stays whole ("USD 599 k/yr", "125.9 GB"), which
    rich's own folding would split."""
    glued = GLUE.sub(lambda m: m.group(0).replace(" ", NBSP), text)
    lines = textwrap.wrap(glued, max(width - 1, 20), initial_indent=first,
                          subsequent_indent=rest, break_on_hyphens=False)
    return "\n".join(lines).replace(NBSP, " ")


def say(con: Console, text: str, first: str = "", rest: str = "  ", style: str = "") -> None:
    """A sentence of the plan or the totals, folded under itself (``folded``)."""
    con.print(Text(folded(text, con.width, first, rest), style=style), highlight=False,
              no_wrap=True, crop=False)


def counted(count: int, noun: str) -> str:
    """'1 GPU', '3 GPUs': the CLI's counts in words (no '1 GPUs')."""
    return f"{count:,} {noun if count == 1 else noun + 's'}"
