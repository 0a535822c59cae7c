"""The FastAPI application: the static files (shipped inside this package), the security
middleware (:mod:`.security`), the worker processes (:mod:`.jobs`: the documents' pool and
the live charts' drawer) and the pages
(:mod:`.account`, :mod:`.reference`, rendered by :mod:`.render`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

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

    guarded = Guard(app, token, loopback_only)
    guarded.fastapi = app  # type: ignore[attr-defined]  # tests reach the pool through it
    return guarded
