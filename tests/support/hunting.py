"""Property-test settings with one knob for a longer hunt.

CI runs every property file with a few derandomized examples (the same draws every run, so a
verdict does not depend on luck). To hunt for new counterexamples, set
LLMSIZER_HYPOTHESIS_EXAMPLES (e.g. 500) and pass a seed (``--hypothesis-seed=N``): each
property then draws that many random examples. A failure it finds becomes a fix and a named
test with the shrunk example (docs/queueing.md and README.md say how).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import settings

HUNT_ENV = "LLMSIZER_HYPOTHESIS_EXAMPLES"


def hunt_examples() -> int | None:
    """The examples a hunt asked for, or None when none is running (CI)."""
    raw = os.environ.get(HUNT_ENV, "").strip()
    return int(raw) if raw else None


def property_settings(max_examples: int, parent: settings | None = None,
                      **kwargs: Any) -> settings:
    """``settings(max_examples=..., **kwargs)`` unless a hunt runs: then its count, drawn at
    random (derandomize off, so ``--hypothesis-seed`` picks the draws)."""
    hunt = hunt_examples()
    if hunt is not None:
        max_examples = hunt
        kwargs["derandomize"] = False
    return settings(parent, max_examples=max_examples, **kwargs)
