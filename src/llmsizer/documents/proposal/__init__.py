"""The customer proposal: Result -> HTML (Jinja2 templates) -> PDF (WeasyPrint).

format.py holds the Formatter and the text helpers, views.py the per-workload view;
render.py the rest (split further in the following commits). See docs/proposal.md.
"""

from .format import Formatter
from .render import (
    MAIN_TEMPLATE,
    ClosedFetcher,
    RefusedURLError,
    build_context,
    plan_context,
    render_document,
    render_html,
    render_pdf,
    shipped_templates,
    with_appendix,
)

__all__ = [
    "MAIN_TEMPLATE",
    "ClosedFetcher",
    "Formatter",
    "RefusedURLError",
    "build_context",
    "plan_context",
    "render_document",
    "render_html",
    "render_pdf",
    "shipped_templates",
    "with_appendix",
]
