"""Layer 4 — sizing: the option search per workload (``engine``), the account plan
(``plan``), prices, sensitivity and confidence (``costs``), model-vs-measured checks
(``fidelity``), and the results document they produce (``results``)."""
