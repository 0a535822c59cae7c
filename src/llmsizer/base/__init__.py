"""Layer 1 — what every other layer uses: errors, atomic writes, text safety, the heap cap.

Nothing here knows about GPUs, models or documents."""
