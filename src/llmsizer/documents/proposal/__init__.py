"""The customer proposal: Result -> HTML (Jinja2 templates) -> PDF (WeasyPrint).

context.py assembles what the templates may use from one module per section of the
proposal (each names the partial of templates/partials/ it serves; format.py and views.py
hold what they share); render.py turns it into HTML and PDF, sandboxed, with nothing
fetched from outside the templates folder(s). See docs/proposal.md.

The names below are imported when first used: `llmsizer size` and the web app's text use
format.py and a few section modules, and importing WeasyPrint with them (through render.py)
cost `size` about a second of CPU at start-up (issue #25, docs/benchmarks.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {"build_context": "context", "Formatter": "format", "plan_context": "plan"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME.get(name, 'render')}", __name__), name)
    globals()[name] = value  # looked up once
    return value
