"""The pages' Jinja2 environment: the templates ship in this package (templates/), every
value is autoescaped (account names and notes never become HTML), an undefined name is an
error, not an empty string."""

from __future__ import annotations

from importlib import resources
from typing import Any

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse

from ..base.version import __version__

_HERE = resources.files("llmsizer.web")
ARTICLE = "GenAI Physics, Capacity Planning, and Throughput Estimation"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_HERE / "templates")),
        autoescape=True,  # account names and notes never become HTML
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(version=__version__, article=ARTICLE)
    return env


ENV = _environment()


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A template rendered for this request (``request.state`` holds nothing of other users)."""
    html = ENV.get_template(template).render(request=request, **context)
    return HTMLResponse(html, status_code=status)
