"""Layer 6 — running it: one account's report, a batch of accounts, the portfolio summary."""

# the layer's modules (tests/test_architecture.py keeps this list whole and sorted)
__all__ = [
    "account",
    "batch",
    "cluster",
    "outcome",
    "report",
    "stamps",
    "summary",
]
