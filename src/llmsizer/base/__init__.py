"""Layer 1 — what every other layer uses: errors, atomic writes, text safety, JSON without
duplicate keys, the heap cap.

Nothing here knows about GPUs, models or documents."""

# the layer's modules (tests/test_architecture.py keeps this list whole and sorted)
__all__ = [
    "atomic",
    "errors",
    "heap",
    "jsonsafe",
    "textsafe",
    "version",
]
