"""``llmsizer serve``: checks the bind (loopback by default; anything else needs a token)
and runs the app under uvicorn."""

from __future__ import annotations

import re

from ..base.errors import InputError
from .security import is_loopback

TOKEN_FORM = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


def check_bind(host: str, token: str | None) -> None:
    """A server reachable from other machines must require a token on every request."""
    if token is not None and not TOKEN_FORM.match(token):
        raise InputError("--token must be 16 to 128 letters, digits, '-' or '_' (for example "
                         "the output of `python -c 'import secrets; print(secrets.token_urlsafe())'`)")
    if not is_loopback(host) and token is None:
        raise InputError(f"--host {host} makes the app reachable from other machines: give "
                         "--token SECRET too (every request must then carry it)")


def check_listen(host: str, port: int) -> None:
    """Bind once before saying "open …": a port in use or an address not of this machine
    was uvicorn's "ERROR: [Errno 98] …" after that line, and exit code 3 (which means
    "no option meets the targets" here)."""
    import errno
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise InputError(f"--host {host}: not an address of this machine ({exc}); give one, "
                         "e.g. 127.0.0.1 (this machine only) or 0.0.0.0 (every network)") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            fix = ("another program (or another llmsizer serve) uses it: choose another with "
                   "--port" if exc.errno == errno.EADDRINUSE else
                   "give an address of this machine with --host, e.g. 127.0.0.1 or 0.0.0.0")
            raise InputError(f"cannot listen on {host} port {port} ({exc.strerror}): "
                             f"{fix}") from None


WILDCARDS = frozenset({"0.0.0.0", "::", "[::]", ""})


def open_lines(host: str, port: int, token: str | None) -> list[str]:
    """What ``serve`` prints: the address(es) to open. A wildcard bind (0.0.0.0, ::) is no
    address a browser can open: give this machine's name for colleagues and the loopback
    address for this machine."""
    import socket

    query = f"?token={token}" if token else ""
    note = "  (every request must carry the token)" if token else "  (this machine only)"
    if host in WILDCARDS:
        loop = "[::1]" if ":" in host else "127.0.0.1"
        return [f"llmsizer serve: open http://{socket.gethostname()}:{port}/{query}"
                f" from other machines{note}",
                f"llmsizer serve: open http://{loop}:{port}/{query} on this machine"]
    shown = ("127.0.0.1" if host in ("127.0.0.1", "localhost") else
             f"[{host}]" if ":" in host and not host.startswith("[") else host)  # IPv6
    return [f"llmsizer serve: open http://{shown}:{port}/{query}{note}"]


def serve(host: str, port: int, token: str | None) -> None:
    import uvicorn

    from .app import create_app

    check_bind(host, token)
    check_listen(host, port)
    app = create_app(token=token, loopback_only=is_loopback(host))
    for line in open_lines(host, port, token):
        print(line, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
