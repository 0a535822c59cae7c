"""The customer proposal: Result -> HTML (Jinja2 templates) -> PDF (WeasyPrint).

context.py assembles what the templates may use from one module per section of the
proposal (each names the partial of templates/partials/ it serves; format.py and views.py
hold what they share); render.py turns it into HTML and PDF, sandboxed, with nothing
fetched from outside the templates folder(s). See docs/proposal.md.
"""

from .context import build_context
from .format import Formatter
from .plan import plan_context
from .render import (
    MAIN_TEMPLATE,
    ClosedFetcher,
    RefusedURLError,
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
