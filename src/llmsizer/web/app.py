"""The FastAPI application: the Jinja2 environment (autoescaped; the templates and static
files ship inside this package), the security middleware (:mod:`.security`), the worker
pool (:mod:`.jobs`) and the pages (:mod:`.account`, :mod:`.reference`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from ..base.version import __version__
from .jobs import Pool
from .security import Guard

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


def create_app(*, token: str | None = None, loopback_only: bool = True,
               workers: int | None = None) -> Any:
    """The app, wrapped in the request guard. ``token``: required on every request (a
    server bound beyond loopback must have one: :func:`.server.check_bind`)."""
    from . import account, reference

    pool = Pool(workers) if workers else Pool()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        pool.shutdown()

    app = FastAPI(title="llmsizer", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)
    app.state.pool = pool
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    app.include_router(account.router)
    app.include_router(reference.router)

    guarded = Guard(app, token, loopback_only)
    guarded.fastapi = app  # type: ignore[attr-defined]  # tests reach the pool through it
    return guarded
