"""What every request passes before a page sees it (pure ASGI, so it also guards uploads
while they stream in):

* the token, when the server listens beyond this machine (``--token``): a header
  ``X-Llmsizer-Token``, or a cookie set by opening ``/?token=…`` once; compared in
  constant time, on every request;
* the Host header, when it listens on loopback only: a page on another site cannot reach the
  app by pointing its own name at 127.0.0.1 (DNS rebinding);
* the request size: 1 MB (the YAML limit) for everything but a workbook upload, which may be
  20 MB, counted as the body streams in whatever Content-Length says;
* the response headers: a Content-Security-Policy with no inline script or style, no
  framing, no referrer, nothing cached.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from ..documents.xlsxsafe import MAX_WORKBOOK_BYTES
from ..inputs.yamlfile import MAX_BYTES as MAX_YAML_BYTES

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_HEADER = b"x-llmsizer-token"
TOKEN_COOKIE = "llmsizer_token"
MULTIPART_SLACK = 64_000  # the form fields and boundaries around an uploaded file
WORKBOOK_PATH = "/upload/workbook"
YAML_PATH = "/upload/yaml"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "testserver"})
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
           (b"cache-control", b"no-store")]


def body_limit(path: str) -> int:
    return (MAX_WORKBOOK_BYTES if path == WORKBOOK_PATH else MAX_YAML_BYTES) + MULTIPART_SLACK


def too_large(path: str, sent: int | None) -> str:
    """What was too large, its limit and what to do: the one line a refused body gets."""
    if path == WORKBOOK_PATH:
        what, limit, advice = "the workbook", MAX_WORKBOOK_BYTES, "save it without images"
    elif path == YAML_PATH:
        what, limit, advice = "the requirements YAML", MAX_YAML_BYTES, "shorten its notes"
    else:  # the account form, posted whole by every update and download
        what, limit, advice = ("the account form (all its fields together)", MAX_YAML_BYTES,
                               "shorten the notes or the names")
    size = f" ({sent:,} bytes sent)" if sent is not None else ""
    return f"{what} is larger than the {limit:,} bytes allowed{size}: {advice}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[^:\[\]]+)(?::[0-9]{1,5})?")


def loopback_host(header: str) -> bool:
    """A Host header naming this machine: the names above, or any loopback address (a server
    bound to 127.0.0.2 is opened as that; ``[::1]`` comes without a port on port 80). A name
    an attacker's DNS points at 127.0.0.1 is neither."""
    m = _HOST.fullmatch(header.strip().lower())
    if m is None:
        return False
    host = m.group(1)
    literal = host[0].isdigit() or host[0] == "["
    return host in LOOPBACK_HOSTS or (literal and is_loopback(host))


class TooLarge(Exception):
    pass


def _plain(status: int, text: str) -> list[Message]:
    body = text.encode()
    return [{"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                         (b"content-length", str(len(body)).encode()), *HEADERS]},
            {"type": "http.response.body", "body": body}]


class Guard:
    """The ASGI middleware (module docstring)."""

    def __init__(self, app: ASGIApp, token: str | None, loopback_only: bool) -> None:
        self.app, self.token, self.loopback_only = app, token, loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        refusal = self._refuse(scope, headers)
        if refusal is not None:
            for m in _plain(*refusal):
                await send(m)
            return
        limit = body_limit(scope["path"])
        declared = headers.get(b"content-length", b"0")
        if declared.isdigit() and int(declared) > limit:
            for m in _plain(413, too_large(scope["path"], int(declared))):
                await send(m)
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise TooLarge
            return message

        async def with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    h for h in HEADERS if h[0] not in names] + self._cookie(scope)
            await send(message)

        try:
            await self.app(scope, counted, with_headers)
        except TooLarge:
            if not started:
                for m in _plain(413, too_large(scope["path"], None)):
                    await send(m)

    def _refuse(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        host = headers.get(b"host", b"").decode("latin-1")
        if self.loopback_only and not loopback_host(host):
            return 421, "this llmsizer listens on this machine only: open it as 127.0.0.1"
        if self.token is None:
            return None
        offered = [headers.get(TOKEN_HEADER, b"").decode("latin-1")]
        cookie = SimpleCookie(headers.get(b"cookie", b"").decode("latin-1"))
        if TOKEN_COOKIE in cookie:
            offered.append(cookie[TOKEN_COOKIE].value)
        offered += parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [])
        if any(o and hmac.compare_digest(o.encode(), self.token.encode()) for o in offered):
            return None
        return 401, ("this llmsizer server needs its token: open the address it printed "
                     "(…/?token=…) or send the X-Llmsizer-Token header")

    def _cookie(self, scope: Scope) -> list[tuple[bytes, bytes]]:
        """After a valid ``?token=``, keep it in a cookie so links and htmx requests carry it."""
        if self.token is None or b"token=" not in scope.get("query_string", b""):
            return []
        return [(b"set-cookie", f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; "
                                f"Path=/".encode())]
