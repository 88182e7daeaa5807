"""Connection-level limits of ``ecomrlve serve``, below the ASGI app: what no middleware can see.

A client that opens a connection and sends half a request (or nothing) holds a socket and a file
descriptor before any token check; enough of them exhaust the process's open-file limit and the
server stops answering anyone. :func:`guarded_http_protocol` makes uvicorn's HTTP/1.1 protocol
(h11) close a connection that has not sent a complete request head within ``header_timeout``
seconds (408), and refuse a connection beyond ``max_connections`` open ones (HTTP and WebSocket
together) at once with a 503 that says why. A body that stalls after its head is
:class:`~ecomrlve.server.app.SessionGuard`'s to time out (408), and an idle WebSocket its idle timeout.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

#: the error codes of the refusals below
CONNECTION_LIMIT, REQUEST_TIMEOUT = "CONNECTION_LIMIT", "REQUEST_TIMEOUT"


def refusal(status: int, reason: str, code: str, text: str) -> bytes:
    """A complete HTTP/1.1 response that closes the connection: a JSON body ``{"detail", "error"}``."""
    body = json.dumps({"detail": text, "error": code}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\nconnection: close\r\n"
            f"content-length: {len(body)}\r\n\r\n")
    return head.encode() + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-head deadline and a cap on open connections (class attributes
    set by :func:`guarded_http_protocol`)."""

    header_timeout: float = 10.0
    max_connections: int = 1024
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        over = len(self.connections) >= self.max_connections
        super().connection_made(transport)
        if over:
            transport.write(refusal(503, "Service Unavailable", CONNECTION_LIMIT,
                                    f"the server holds {self.max_connections} connections, its limit "
                                    "(--max-connections): try again later"))
            transport.close()
            return
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete:
            self._cancel_head_timer()  # a request is in flight: its body and response are the app's

    def handle_websocket_upgrade(self, event: Any) -> None:
        self._cancel_head_timer()
        super().handle_websocket_upgrade(event)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()  # the next request's head has the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return
        if self.cycle is not None and not self.cycle.response_complete:
            return
        self.transport.write(refusal(408, "Request Timeout", REQUEST_TIMEOUT,
                                     f"no complete request within {self.header_timeout:g} s"))
        self.transport.close()


def guarded_http_protocol(header_timeout: float, max_connections: int) -> type[GuardedH11Protocol]:
    """The protocol class uvicorn's ``http=`` takes, with these limits."""
    return type("ServeHTTPProtocol", (GuardedH11Protocol,),
                {"header_timeout": header_timeout, "max_connections": max_connections})


def raise_open_file_limit(wanted: int) -> int:
    """Raise this process's soft open-file limit towards ``wanted`` (within the hard limit); returns the limit."""
    try:
        import resource
    except ImportError:  # not a POSIX system: nothing to raise
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft
