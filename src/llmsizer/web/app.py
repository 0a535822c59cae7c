"""The FastAPI application: the static files (shipped inside this package), the security
middleware (:mod:`.security`), the worker processes (:mod:`.jobs`: the documents' pool and
the live charts' drawer) and the pages
(:mod:`.account`, :mod:`.reference`, rendered by :mod:`.render`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from .jobs import Drawer, Pool
from .security import Guard

_HERE = resources.files("llmsizer.web")


def create_app(*, token: str | None = None, loopback_only: bool = True,
               workers: int | None = None) -> Any:
    """The app, wrapped in the request guard. ``token``: required on every request (a
    server bound beyond loopback must have one: :func:`.server.check_bind`)."""
    from . import account, reference

    pool = Pool(workers) if workers else Pool()
    drawer = Drawer()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        drawer.start()  # without a lifespan (a bare test client) the server draws
        yield
        drawer.shutdown()
        pool.shutdown()

    app = FastAPI(title="llmsizer", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)
    app.state.pool = pool
    app.state.drawer = drawer
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    app.include_router(account.router)
    app.include_router(reference.router)

    @app.exception_handler(HTTPException)
    async def _not_here(request: Request, exc: HTTPException) -> HTMLResponse:
        """A mistyped address or a page fetched the wrong way: the app's own error page with
        the way back, not the framework's JSON ({"detail": "Not Found"}) as the whole page."""
        from ..base.textsafe import printable
        from .render import page

        path = printable(request.url.path)[:200]
        message = (f"no page at {path}" if exc.status_code == 404 else
                   f"{path} is not a page to open: it answers the account form"
                   if exc.status_code == 405 else str(exc.detail))
        return page(request, "problem.html.j2", exc.status_code, message=message)

    @app.exception_handler(RequestValidationError)
    async def _not_as_sent(request: Request, exc: RequestValidationError) -> HTMLResponse:
        """A hand-made address or form (``/workload?index=abc``, an upload's file sent as
        text): the app's error page naming the field, not FastAPI's JSON list of errors."""
        from ..base.textsafe import printable
        from .render import page

        first = exc.errors()[0] if exc.errors() else {}
        name = printable(str((first.get("loc") or ("", "?"))[-1]))[:60]
        what = ("a whole number" if str(first.get("type", "")).startswith("int") else
                "a file chosen with the page's button" if name == "file" else
                "a value the app's own pages send")
        path = printable(request.url.path)[:200]
        return page(request, "problem.html.j2", 400,
                    message=f"{path}: '{name}' must be {what}; open the page from the app's "
                            "links and buttons")

    guarded = Guard(app, token, loopback_only)
    guarded.fastapi = app  # type: ignore[attr-defined]  # tests reach the pool through it
    return guarded
