"""The FastAPI app of ``ecomrlve serve``: openenv's routes over our sessions, plus what a shared server needs.

:func:`build_app` turns a :class:`ServerConfig` into the app (other front ends mount onto it);
:func:`serve` runs it with uvicorn. openenv provides ``/ws`` (one stateful session per WebSocket),
the stateless ``POST /reset`` and ``POST /step`` (a fresh environment per request, so no
multi-step episode over HTTP), ``/health``, ``/schema``, ``/metadata``, ``/state``. This module
adds ``GET /scheduler`` (the one curriculum's windows) and :class:`SessionGuard`: bearer token,
message size and idle timeout, each answered with a clear error instead of a hang or a 5xx.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import hmac
import json
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from openenv.core.env_server.types import ServerMode

from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.schema import Catalog
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig
from ecomrlve.envs import resolve_env_ids
from ecomrlve.envs.capabilities import CatalogUnsupportedError, require_support
from ecomrlve.episode import shared_search_engine
from ecomrlve.errors import UserInputError
from ecomrlve.playground.access import check_binding
from ecomrlve.server.environment import Deployment, EcomServerEnvironment, EpisodeStateError
from ecomrlve.server.fastpath import SESSION_PATH, Connection, EcomSessions
from ecomrlve.server.models import EcomAction, EcomObservation, EcomState
from ecomrlve.session import resolve_secret
from ecomrlve.shopper.options import ShopperOptions

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: error codes of the frames :class:`SessionGuard` sends (openenv's own: CAPACITY_REACHED, INVALID_JSON, ...)
UNAUTHORIZED, MESSAGE_TOO_LARGE, IDLE_TIMEOUT = "UNAUTHORIZED", "MESSAGE_TOO_LARGE", "IDLE_TIMEOUT"
#: WebSocket close codes that go with them
CLOSE_UNAUTHORIZED, CLOSE_TOO_LARGE, CLOSE_IDLE = 4401, 1009, 4408
#: paths answered without a token (liveness probes)
OPEN_PATHS = frozenset({"/health"})
#: where ``ecomrlve serve`` mounts the playground, which checks the token itself (browsers send cookies, not headers)
PLAYGROUND_PREFIX = "/playground"


@dataclass(frozen=True)
class ServerConfig:
    """Everything ``ecomrlve serve`` takes; :func:`build_app` builds the app from it.

    ``token``: every request (but ``/health``) must carry ``Authorization: Bearer TOKEN``; required to
    bind a non-loopback ``host`` unless ``insecure``. ``idle_timeout``: seconds a WebSocket may stay
    silent before its session is closed (None: never). ``max_message_bytes``: largest client message.
    ``allow_oracle``: accept oracle turns (evaluation only; they play the hidden goal's solver).
    ``shopper``: how the shopper phrases its messages (templates of a phrasing half, or an LLM endpoint).
    ``playground``: mount the browser playground at ``/playground`` (it takes the same token as a
    bearer header, its cookie or ``?token=``, so a browser can open it).
    """

    env: str = "C1"
    catalog: str = "default"
    host: str = "127.0.0.1"
    port: int = 8000
    max_sessions: int = 1024
    idle_timeout: float | None = 300.0
    max_message_bytes: int = 1 << 20
    token: str | None = None
    insecure: bool = False
    secret: str | None = None
    scheduler_state: Path | None = None
    scheduler: SchedulerConfig = SchedulerConfig()
    overrides: dict[str, Any] = field(default_factory=dict)
    allow_oracle: bool = False
    playground: bool = True
    shopper: ShopperOptions = field(default_factory=ShopperOptions)

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise UserInputError(f"--max-sessions must be >= 1, got {self.max_sessions}")
        if self.idle_timeout is not None and self.idle_timeout <= 0:
            raise UserInputError(f"--idle-timeout must be > 0 seconds, got {self.idle_timeout}")
        if self.max_message_bytes < 1024:
            raise UserInputError(f"--max-message-bytes must be >= 1024, got {self.max_message_bytes}")
        check_binding(self.host, self.token, self.insecure)


def build_deployment(config: ServerConfig, catalog: Catalog | None = None) -> Deployment:
    """The catalog, search engine, secret and scheduler every session of the server shares."""
    env_ids = resolve_env_ids(config.env)
    catalog = catalog if catalog is not None else load_catalog(config.catalog)
    try:
        require_support(catalog, env_ids)
    except CatalogUnsupportedError as exc:
        raise UserInputError(str(exc)) from None
    search = shared_search_engine(catalog)
    search.retriever  # noqa: B018 - open the indexes now: a broken catalog fails at start, not in a session
    scheduler = AdaptiveScheduler(env_ids, config.scheduler, checkpoint_path=config.scheduler_state)
    return Deployment(env_ids, catalog, search, resolve_secret(config.secret), scheduler, dict(config.overrides),
                      config.allow_oracle, config.shopper.build())


def build_app(config: ServerConfig, *, catalog: Catalog | None = None) -> FastAPI:
    """The server's FastAPI app (``app.state.deployment``, ``app.state.sessions``); mount more onto it."""
    deployment = build_deployment(config, catalog)
    app = FastAPI(title="EcomRLVE-Gym", description="Adaptive, verifiable e-commerce agent environments "
                  "(openenv protocol: WebSocket sessions at /ws).")
    sessions = EcomSessions(functools.partial(EcomServerEnvironment, deployment), EcomAction, EcomObservation,
                            max_concurrent_envs=config.max_sessions, env_name="ecomrlve", state_cls=EcomState)
    sessions.register_routes(app, mode=ServerMode.SIMULATION)
    app.state.deployment, app.state.sessions = deployment, sessions

    @app.get("/scheduler")
    def scheduler_windows() -> dict[str, Any]:
        """The one curriculum of this server: every env's window and upper-edge counts, the open sessions, and
        whether it plays oracle turns (so a client asking for them fails before its first episode)."""
        state = deployment.scheduler.state_dict()
        return {"config": state["config"], "windows": state["windows"], "sessions": sessions.active_sessions,
                "max_sessions": sessions.max_concurrent_envs, "oracle": deployment.allow_oracle}

    def client_error(status: int) -> Callable[[Request, Exception], Awaitable[JSONResponse]]:
        async def handler(request: Request, exc: Exception) -> JSONResponse:
            return JSONResponse({"detail": str(exc), "error": type(exc).__name__}, status_code=status)
        return handler

    # the stateless HTTP /step has no episode; bad reset arguments are the caller's
    if config.playground:
        from ecomrlve.playground.app import mount_playground  # FastAPI and Jinja2: the serve extra has both

        mount_playground(app, {deployment.catalog.name: deployment.catalog}, prefix=PLAYGROUND_PREFIX,
                         token=config.token, secret=deployment.secret, hints=config.allow_oracle)

    app.add_exception_handler(EpisodeStateError, client_error(409))
    app.add_exception_handler(PermissionError, client_error(403))
    app.add_exception_handler(ValueError, client_error(400))
    app.add_middleware(SessionGuard, token=config.token, max_message_bytes=config.max_message_bytes,
                       idle_timeout=config.idle_timeout, sessions=sessions)
    return app


class SessionGuard:
    """ASGI middleware: bearer token, message size, WebSocket idle timeout, and the sessions' fast path.

    A refused WebSocket is accepted, sent one openenv error frame (``{"type": "error", "data":
    {"code", "message"}}``) and closed, so every client sees why; the app underneath sees a
    disconnect and frees the session. A refused HTTP request gets 401 or 413. A message that passed
    the checks goes to the ``/ws`` session's fast path (:mod:`ecomrlve.server.fastpath`) first.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, max_message_bytes: int,
                 idle_timeout: float | None, sessions: EcomSessions) -> None:
        self.app, self.token, self.sessions = app, token, sessions
        self.max_bytes, self.idle_timeout = max_message_bytes, idle_timeout

    def authorized(self, scope: Scope) -> bool:
        path = scope.get("path", "")
        if self.token is None or path in OPEN_PATHS or path == PLAYGROUND_PREFIX or path.startswith(PLAYGROUND_PREFIX + "/"):
            return True
        headers = dict(scope.get("headers") or [])
        given = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, credential = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(credential.strip().encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.authorized(scope):
            await _json_response(send, 401, {"detail": "missing or wrong bearer token", "error": UNAUTHORIZED})
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await _json_response(send, 413, {"detail": f"request body over {self.max_bytes} bytes",
                                             "error": MESSAGE_TOO_LARGE})
            return
        received = 0

        async def bounded_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_bytes:  # a chunked body without a length
                raise _BodyTooLarge()
            return message

        try:
            await self.app(scope, bounded_receive, send)
        except _BodyTooLarge:
            await _json_response(send, 413, {"detail": f"request body over {self.max_bytes} bytes",
                                             "error": MESSAGE_TOO_LARGE})

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        closed = False
        connection: Connection | None = None  # the fast path of a /ws session

        async def refuse(code: str, text: str, close_code: int) -> Message:
            nonlocal closed
            if not closed:
                closed = True
                frame = json.dumps({"type": "error", "data": {"code": code, "message": text}})
                await send({"type": "websocket.send", "text": frame})
                await send({"type": "websocket.close", "code": close_code, "reason": code})
            return {"type": "websocket.disconnect", "code": close_code}

        if not self.authorized(scope):
            if (await receive())["type"] == "websocket.connect":
                await send({"type": "websocket.accept"})
                await refuse(UNAUTHORIZED, "missing or wrong bearer token (Authorization: Bearer TOKEN)",
                             CLOSE_UNAUTHORIZED)
            return

        async def guarded_receive() -> Message:
            while not closed:
                try:
                    message = await asyncio.wait_for(receive(), self.idle_timeout)
                except asyncio.TimeoutError:
                    return await refuse(IDLE_TIMEOUT, f"no message for {self.idle_timeout:g} s: session closed",
                                        CLOSE_IDLE)
                if message["type"] != "websocket.receive":
                    return message
                text = message.get("text")
                size = len(message.get("bytes") or b"") + len((text or "").encode())
                if size > self.max_bytes:
                    return await refuse(MESSAGE_TOO_LARGE, f"message of {size} bytes is over the limit of "
                                        f"{self.max_bytes} bytes: session closed", CLOSE_TOO_LARGE)
                reply = None if text is None or connection is None else await connection.answer(text)
                if reply is None:
                    return message  # openenv's loop answers it
                await send({"type": "websocket.send", "text": reply})
            return {"type": "websocket.disconnect", "code": 1000}

        async def guarded_send(message: Message) -> None:
            if not closed:  # after a refusal the app may still try to close: the socket is gone
                await send(message)

        if scope.get("path") == SESSION_PATH:
            with self.sessions.connection() as connection:
                await self.app(scope, guarded_receive, guarded_send)
        else:
            await self.app(scope, guarded_receive, guarded_send)


class _BodyTooLarge(Exception):
    pass


async def _json_response(send: Send, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


def uvicorn_settings(config: ServerConfig) -> dict[str, Any]:
    """uvicorn settings for the server: its protocol-level frame limit sits well above ours, so our error frame
    wins; no per-message deflate: on the loopback or a LAN, compressing every frame costs more CPU than it saves."""
    return {"log_level": "warning", "ws_max_size": 4 * config.max_message_bytes + (1 << 20),
            "ws_per_message_deflate": False, "timeout_graceful_shutdown": 5}


def serve(config: ServerConfig, listener: socket.socket, *, catalog: Catalog | None = None) -> None:
    """Build the app and serve it on ``listener`` (from :func:`ecomrlve.playground.command.bind`) until interrupted."""
    import uvicorn

    app = build_app(config, catalog=catalog)
    gc.freeze()  # the catalog, its indexes and the app live as long as the server: no collection need walk them
    uvicorn.Server(uvicorn.Config(app, **uvicorn_settings(config))).run(sockets=[listener])
