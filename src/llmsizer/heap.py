"""Garbage collection for processes that write many proposals.

One account's outputs leave ~20 MB of cyclic garbage (WeasyPrint's layout boxes,
matplotlib's artists). Python's automatic collector then runs full passes over the whole
heap, imported libraries included: 0.1-0.25 s per proposal in a warm process (measured,
docs/benchmarks.md). Freezing the warm heap takes it out of every later pass, and one
explicit collection per account frees that account's garbage; memory stays flat.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Call once the heavy libraries are imported and warm: freeze what is live now and
    switch automatic collection off (call :func:`after_account` after each account)."""
    gc.collect()
    gc.freeze()
    gc.disable()


def after_account() -> None:
    """Free the garbage one account's outputs left behind."""
    gc.collect()
