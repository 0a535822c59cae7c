"""Layer 3 — what comes in: the requirements schema and its loader, the safe YAML reader,
Hugging Face config.json models, and benchmark result files."""
