"""Layer 5 — what a person reads: the workbook (``workbook``, one module per sheet), the PDF
proposal (``proposal``, one module per section), ``charts`` and ``roofline`` (on the SVG canvas
of ``chartcanvas``), terminal tables (``textreport``, its parts ``textoptions``,
``textretrieval``, ``textruledout``, ``textmodels``, ``textplan`` and their words ``textwords``;
long ones drawn fast by ``fasttable``; the catalog's: ``textcatalog``), an edited workbook
read back (``marker``, ``xlsxsafe``, ``inputcells``, ``reread``), and the generated docs
(``docgen``)."""

# the layer's modules (tests/test_architecture.py keeps this list whole and sorted)
__all__ = [
    "chartcanvas",
    "charts",
    "docgen",
    "fasttable",
    "inputcells",
    "marker",
    "proposal",
    "reread",
    "roofline",
    "textcatalog",
    "textmodels",
    "textoptions",
    "textplan",
    "textreport",
    "textretrieval",
    "textruledout",
    "textwords",
    "workbook",
    "xlsxsafe",
]
