"""Layer 4 — sizing: ``engine`` (size, estimate, curve) over the option search per workload
(``search``, with what to change when no option meets the targets in ``advice``, evaluating
each option with ``evaluate``, or a customer benchmark point with ``measured``), the account
plan (``plan``, searched by ``plan_search``), buy, rent or hosted API compared
(``deployment``), prices (``costs``), sensitivity and confidence (``sensitivity``), the plan's
bill of materials (``bom``), model-vs-measured checks (``fidelity``; rows a run contradicts:
``fidelity_checks``; disaggregated rows: ``fidelity_disagg``; embedding rows:
``fidelity_embed``; the round-share fit: ``fidelity_fit``; MLPerf rows: ``fidelity_mlperf``; a
disaggregated run's decode recipe: ``fidelity_recipes``; the printed report:
``fidelity_report``), disaggregated prefill/decode options sized to a load (``xpyd``), the
production debugger's edges and the roofline (``debugger``), and the results document they
produce (``results``)."""

# the layer's modules (tests/test_architecture.py keeps this list whole and sorted)
__all__ = [
    "advice",
    "alternatives",
    "bom",
    "costs",
    "debugger",
    "deployment",
    "engine",
    "evaluate",
    "fidelity",
    "fidelity_checks",
    "fidelity_disagg",
    "fidelity_embed",
    "fidelity_fit",
    "fidelity_inferencex",
    "fidelity_mlperf",
    "fidelity_recipes",
    "fidelity_report",
    "fidelity_stats",
    "measured",
    "plan",
    "plan_search",
    "results",
    "retrieval",
    "search",
    "sensitivity",
    "xpyd",
]
