"""Who may reach the playground: loopback by default, a token for anything else (no FastAPI here:
the CLI checks the rule before the ``playground`` extra is imported), and which pages may drive it.

Binding to an address other than loopback exposes episodes (and, in the run viewer, recorded
goals) to the network, so it needs a token unless the operator says ``--insecure``. With a
token set, every request must carry it: ``Authorization: Bearer TOKEN``, the ``ecomrlve_token``
cookie, or ``?token=TOKEN`` on a page (which sets the cookie so the browser's later requests
carry it).

A browser lets any web page send requests to a loopback server (and open WebSockets to it), and a
DNS name the attacker controls can be pointed at 127.0.0.1. :class:`OriginGuard` therefore refuses
a request whose ``Host`` is not a name this server answers to (loopback names on a loopback
address) and one sent by a page of another origin (``Origin`` other than the server's own, unless
allow-listed). Clients that are not browsers send no ``Origin`` and are not affected.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from ecomrlve.errors import UserInputError

TOKEN_COOKIE = "ecomrlve_token"
TOKEN_ENV_VAR = "ECOMRLVE_TOKEN"
#: the names a loopback server answers to
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
#: error code and WebSocket close code of a refused host or origin
FORBIDDEN_ORIGIN, CLOSE_FORBIDDEN = "FORBIDDEN_ORIGIN", 4403

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None, insecure: bool) -> None:
    """The token rule: a non-loopback address needs a token unless ``insecure``."""
    if token is not None and not token:
        raise UserInputError("--token must not be empty")
    if not is_loopback(host) and token is None and not insecure:
        raise UserInputError(f"--host {host} is reachable from other machines: set --token (or ${TOKEN_ENV_VAR}) "
                             "so requests must carry it, or pass --insecure to serve without one")


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time comparison, so response times do not reveal how much of a guess was right."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The ``Host`` names a server bound to ``host`` answers to (lower case, no port); None: any.

    Loopback: the loopback names. A wildcard address (``0.0.0.0``, ``::``): any name (it is reached under
    names it cannot know; it needs ``--token`` or ``--insecure``), unless ``extra`` names some. Another
    address: that address and the loopback names. ``extra`` (``--allow-host``) adds names; ``*`` allows any.
    """
    extra = {name.strip().lower().strip("[]") for name in extra if name.strip()}
    if "*" in extra:
        return None
    bound = host.strip("[]").lower()
    if bound in ("0.0.0.0", "::", "") and not extra:
        return None
    return frozenset(LOOPBACK_NAMES | extra | ({bound} if bound not in ("0.0.0.0", "::", "") else set()))


def host_name(value: str) -> str:
    """The name of a ``Host`` header or an origin's netloc, without the port: ``[::1]:80`` -> ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class OriginGuard:
    """ASGI middleware: refuse a request whose ``Host`` this server does not answer to, or whose page is of
    another origin (``Origin`` not the server's own and not in ``origins``). HTTP gets 403; a WebSocket gets
    one error frame (``FORBIDDEN_ORIGIN``) and close code 4403. ``open_paths`` (liveness probes) are exempt.
    """

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str] | None, origins: Iterable[str] = (),
                 open_paths: frozenset[str] = frozenset()) -> None:
        self.app, self.hosts, self.open_paths = app, hosts, open_paths
        self.origins = frozenset(origin.rstrip("/").lower() for origin in origins)

    def refusal(self, scope: Scope) -> str | None:
        """Why this request is refused, or None."""
        headers = {key: value.decode("latin-1") for key, value in scope.get("headers") or []}
        host = headers.get(b"host", "")
        if self.hosts is not None and host_name(host) not in self.hosts:
            return (f"this server does not answer to Host {host[:100]!r} (a DNS name pointed at it?); "
                    "allow it with --allow-host")
        origin = headers.get(b"origin")
        if origin is None:
            return None  # not a browser page: a client program, or a same-origin GET
        origin = origin.strip().lower()
        if origin in self.origins or urlsplit(origin).netloc == host.strip().lower() != "":
            return None
        return (f"pages from {origin[:100]!r} may not use this server (same-origin pages only); "
                "allow it with --allow-origin")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("path") in self.open_paths:
            await self.app(scope, receive, send)
            return
        reason = self.refusal(scope)
        if reason is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            body = json.dumps({"detail": reason, "error": FORBIDDEN_ORIGIN}).encode()
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
        elif (await receive())["type"] == "websocket.connect":
            await send({"type": "websocket.accept"})
            frame = json.dumps({"type": "error", "data": {"code": FORBIDDEN_ORIGIN, "message": reason}})
            await send({"type": "websocket.send", "text": frame})
            await send({"type": "websocket.close", "code": CLOSE_FORBIDDEN, "reason": FORBIDDEN_ORIGIN})
