"""Layer 5 — what a person reads: the workbook (one module per sheet), the PDF proposal,
charts, terminal tables, the workbook marker and re-read, and the generated docs."""
