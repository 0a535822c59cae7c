"""Garbage collection in batch workers.

One account's outputs leave ~20 MB of cyclic garbage (WeasyPrint's layout boxes,
matplotlib's artists). Python's automatic collector then runs full passes over the whole
heap, imported libraries included: 0.1-0.25 s per proposal. A worker instead freezes its
warm heap, switches automatic collection off and never collects; the parent replaces it
with a fresh fork once its memory has grown by ``batch.RETIRE_GROWTH_MB``: exiting frees
the garbage without the collector visiting ~90,000 objects (measured: docs/benchmarks.md).
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Call once the heavy libraries are imported and warm: freeze what is live now (no
    later collection scans it) and switch automatic collection off."""
    gc.collect()
    gc.freeze()
    gc.disable()
