"""Layer 3 — what comes in: the requirements schema (``schema``, its error lines in
``schema_messages`` (with ``schema_words`` and ``schema_numbers``), its cross-field rules
in ``rules`` and ``kinds``, the targets it sizes but doubts in ``doubts``) and ``loader``; the
command line's values checked in the same words (``options``); the
safe YAML reader (``yamlfile`` → ``yamlsafe``, with ``yamlpositions``); Hugging Face
config.json models (``modelconfig``); the customer's benchmark files (``benchfiles``,
``benchformats``, ``benchpoints``) and published result tables (``benchlabels``,
``benchdata``)."""

# the layer's modules (tests/test_architecture.py keeps this list whole and sorted)
__all__ = [
    "benchdata",
    "benchfiles",
    "benchformats",
    "benchlabels",
    "benchpoints",
    "doubts",
    "kinds",
    "loader",
    "modelconfig",
    "options",
    "rules",
    "schema",
    "schema_messages",
    "schema_numbers",
    "schema_words",
    "schema_workload",
    "yamlfile",
    "yamlpositions",
    "yamlsafe",
]
