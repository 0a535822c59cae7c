"""Untrusted text (account, workload, model names, notes) made safe to show."""

from __future__ import annotations

import re

# C0/C1 controls except tab and newline, and the bidirectional overrides/isolates that
# can make text display in a different order than it is stored.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f]")


def clean_text(text: str, limit: int = 32_000) -> str:
    """Drop control and bidi-override characters; bound the length (Excel cell limit)."""
    return _UNSAFE.sub("", text)[:limit]
