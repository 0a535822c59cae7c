"""The release string, written into every results JSON and workbook marker.

It lives in the lowest layer so that any module may stamp its output without importing
the package root."""

__version__ = "0.1.0"
