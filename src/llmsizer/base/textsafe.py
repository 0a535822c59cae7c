"""Untrusted text (account, workload, model names, notes, file names) made safe to show."""

from __future__ import annotations

import re

# C0/C1 controls except tab and newline, and the bidirectional overrides/isolates that
# can make text display in a different order than it is stored.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f]")


def clean_text(text: str, limit: int = 32_000) -> str:
    """Drop control and bidi-override characters; bound the length (Excel cell limit)."""
    return _UNSAFE.sub("", text)[:limit]


def printable(text: str) -> str:
    """``text`` with every non-printable character written as an escape (``\\x1b``,
    ``\\u202e``), for one-line messages that echo a file name: a name holding a terminal
    escape sequence or a line break must not recolour the terminal or forge a second line.
    Printable text, non-ASCII letters included, is returned unchanged."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def terminal_text(text: str) -> str:
    """``text`` for a terminal or a log: each line through :func:`printable`, the line
    breaks kept. Every line the command line prints goes through this, so text read from a
    file (a workbook's embedded names, a CSV label) can neither clear the screen, ring the
    bell nor forge a line (issue 25, F2): an ESC or BEL is written as ``\\x1b``/``\\x07``."""
    if text.isprintable():
        return text
    return "\n".join(printable(line) for line in text.split("\n"))
