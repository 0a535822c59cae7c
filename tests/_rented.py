"""What the rented-account tests share (session 24, brief C: tests/test_rented_views_s23.py,
tests/test_rented_terms.py and tests/test_cloud_money_s24.py each carried their own copy):
the insurer that rents (tests/data/eur-insurer.yaml: 10 H200 in 7 cloud instances), the
terminal's text of a result and an HTML page's words. The sized insurer is the ``insurer``
fixture of tests/conftest.py, sized once per run."""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console

from llmsizer.documents.proposal.format import NBSP
from llmsizer.documents.textreport import print_result
from llmsizer.sizing.results import Result

ROOT = Path(__file__).resolve().parents[1]
INSURER = ROOT / "tests" / "data" / "eur-insurer.yaml"


def terminal(result: Result, width: int = 200) -> str:
    """``llmsizer size``'s output for ``result``, as plain text ``width`` columns wide."""
    con = Console(record=True, width=width, color_system=None)
    print_result(result, con)
    return con.export_text()


def words(html: str) -> str:
    """An HTML page's text, tags and runs of spaces reduced to one space."""
    text = re.sub(r"<[^>]+>", " ", html.replace(NBSP, " ")).replace("&#39;", "'")
    return " ".join(text.split())
