"""Layer 2 — the sizing model as data: the expression language (``expr``), the catalog and
its YAML files (``catalog``, ``catalogs/``), and ``calculations``, the one home of every
formula."""
