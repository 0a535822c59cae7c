"""Layer 6 — running it: one account's report, a batch of accounts, the portfolio summary."""
