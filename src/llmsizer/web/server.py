"""``llmsizer serve``: checks the bind (loopback by default; anything else needs a token)
and runs the app under uvicorn."""

from __future__ import annotations

import ipaddress
import re

from ..base.errors import InputError

TOKEN_FORM = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """A server reachable from other machines must require a token on every request."""
    if token is not None and not TOKEN_FORM.match(token):
        raise InputError("--token must be 16 to 128 letters, digits, '-' or '_' (for example "
                         "the output of `python -c 'import secrets; print(secrets.token_urlsafe())'`)")
    if not is_loopback(host) and token is None:
        raise InputError(f"--host {host} makes the app reachable from other machines: give "
                         "--token SECRET too (every request must then carry it)")


def serve(host: str, port: int, token: str | None) -> None:
    import uvicorn

    from .app import create_app

    check_bind(host, token)
    app = create_app(token=token, loopback_only=is_loopback(host))
    shown = ("127.0.0.1" if host in ("127.0.0.1", "localhost") else
             f"[{host}]" if ":" in host and not host.startswith("[") else host)  # IPv6
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    print(f"llmsizer serve: open {url}" + (
        "  (every request must carry the token)" if token else "  (this machine only)"),
        flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
