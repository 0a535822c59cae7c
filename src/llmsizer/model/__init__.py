"""Layer 2 — the sizing model as data: the expression language (``expr``) and its
spreadsheet lookups (``sheetlookup``), the catalog and its YAML files (``catalog``, its
price models ``catalog_prices``, ``catalogs/``) with its names in words (``names``), and
``calculations``, the one home of every formula."""

# the layer's modules (tests/test_architecture.py keeps this list whole and sorted)
__all__ = [
    "calculations",
    "catalog",
    "catalog_prices",
    "expr",
    "names",
    "sheetlookup",
]
