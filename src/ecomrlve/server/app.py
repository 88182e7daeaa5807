"""The FastAPI app of ``ecomrlve serve``: openenv's routes over our sessions, plus what a shared server needs.

:func:`build_app` turns a :class:`ServerConfig` into the app (other front ends mount onto it);
:func:`serve` runs it with uvicorn. openenv provides ``/ws`` (one stateful session per WebSocket),
the stateless ``POST /reset`` and ``POST /step`` (a fresh environment per request, so no
multi-step episode over HTTP), ``/health``, ``/schema``, ``/metadata``, ``/state``. This module
adds ``GET /scheduler`` (the one curriculum's windows), :class:`SessionGuard`: bearer token,
message size and idle timeout, each answered with a clear error instead of a hang or a 5xx, and
in front of it :class:`~ecomrlve.playground.access.OriginGuard`: only the server's own ``Host``
names and same-origin (or allow-listed) web pages.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import hashlib
import hmac
import importlib.abc
import importlib.machinery
import json
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
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
from ecomrlve.playground.access import OriginGuard, allowed_hosts, check_binding
from ecomrlve.server.environment import Deployment, EcomServerEnvironment, EpisodeStateError, RecordsFile
from ecomrlve.server.fastpath import SESSION_PATH, Connection, EcomSessions
from ecomrlve.server.limits import REQUEST_TIMEOUT, guarded_http_protocol, raise_open_file_limit
from ecomrlve.server.models import EcomAction, EcomObservation, EcomState
from ecomrlve.session import resolve_secret
from ecomrlve.shopper.options import ShopperOptions

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: error codes of the frames :class:`SessionGuard` sends (openenv's own: CAPACITY_REACHED, INVALID_JSON, ...);
#: an INVALID_MESSAGE frame (binary, not a JSON object, nested too deeply) leaves the session open
UNAUTHORIZED, MESSAGE_TOO_LARGE, IDLE_TIMEOUT = "UNAUTHORIZED", "MESSAGE_TOO_LARGE", "IDLE_TIMEOUT"
INVALID_MESSAGE = "INVALID_MESSAGE"
#: the deepest nesting of arrays and objects a /ws message may have (turns nest a few levels; pydantic, which
#: openenv's loop answers with, gives up at a few hundred and the session with it)
MAX_JSON_DEPTH = 64
#: WebSocket close codes that go with them
CLOSE_UNAUTHORIZED, CLOSE_TOO_LARGE, CLOSE_IDLE = 4401, 1009, 4408
#: paths answered without a token (liveness probes)
OPEN_PATHS = frozenset({"/health"})
#: where ``ecomrlve serve`` mounts the playground, which checks the token itself (browsers send cookies, not headers)
PLAYGROUND_PREFIX = "/playground"
#: the run viewer's upload, which bounds its own bodies (runs files are larger than any session message)
RUNS_UPLOAD_PATH = PLAYGROUND_PREFIX + "/api/runs"


@dataclass(frozen=True)
class ServerConfig:
    """Everything ``ecomrlve serve`` takes; :func:`build_app` builds the app from it.

    ``token``: every request (but ``/health``) must carry ``Authorization: Bearer TOKEN``; required to
    bind a non-loopback ``host`` unless ``insecure``. ``idle_timeout``: seconds a WebSocket may stay
    silent before its session is closed (None: never). ``max_message_bytes``: largest client message.
    ``allow_oracle``: accept oracle turns (evaluation only; they play the hidden goal's solver).
    ``shopper``: how the shopper phrases its messages (templates of a phrasing half, or an LLM endpoint).
    ``playground``: mount the browser playground at ``/playground`` (it takes the same token as a
    bearer header, its cookie or ``?token=``, so a browser can open it). ``records``: a directory where
    every finished session's full record (deployment secret included) is appended to ``episodes.jsonl``;
    clients only ever get records without the secret. ``allow_hosts``: ``Host`` names answered besides the
    defaults (loopback names; any name on a wildcard address), ``*`` for any; ``allow_origins``: web page
    origins (``https://host:port``) allowed to use the server besides its own (:class:`OriginGuard`).
    ``header_timeout``: seconds a connection may take to send a request head (408 after); ``body_timeout``:
    seconds a request body may stall (408); ``max_connections``: open connections, WebSockets included (503
    beyond; default ``max_sessions`` + 128).
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
    records: Path | None = None
    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_connections: int | None = None

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise UserInputError(f"--max-sessions must be >= 1, got {self.max_sessions}")
        if self.idle_timeout is not None and self.idle_timeout <= 0:
            raise UserInputError(f"--idle-timeout must be > 0 seconds, got {self.idle_timeout}")
        if self.max_message_bytes < 1024:
            raise UserInputError(f"--max-message-bytes must be >= 1024, got {self.max_message_bytes}")
        for name in ("header_timeout", "body_timeout"):
            if not getattr(self, name) > 0:
                raise UserInputError(f"--{name.replace('_', '-')} must be > 0 seconds, got {getattr(self, name)}")
        if self.max_connections is not None and self.max_connections < self.max_sessions:
            raise UserInputError(f"--max-connections ({self.max_connections}) must be at least --max-sessions "
                                 f"({self.max_sessions}): every session holds a connection")
        check_binding(self.host, self.token, self.insecure)

    @property
    def connection_limit(self) -> int:
        """Open connections the server accepts: ``max_connections``, or the sessions and 128 more."""
        return self.max_connections if self.max_connections is not None else self.max_sessions + 128


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
    records = RecordsFile(config.records) if config.records is not None else None
    return Deployment(env_ids, catalog, search, resolve_secret(config.secret), scheduler, dict(config.overrides),
                      config.allow_oracle, config.shopper.build(), records)


def build_app(config: ServerConfig, *, catalog: Catalog | None = None) -> FastAPI:
    """The server's FastAPI app (``app.state.deployment``, ``app.state.sessions``, ``app.state.playground``);
    mount more onto it."""
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

        app.state.playground = mount_playground(
            app, {deployment.catalog.name: deployment.catalog}, prefix=PLAYGROUND_PREFIX, token=config.token,
            secret=playground_secret(deployment.secret), hints=config.allow_oracle)

    app.add_exception_handler(EpisodeStateError, client_error(409))
    app.add_exception_handler(PermissionError, client_error(403))
    app.add_exception_handler(ValueError, client_error(400))
    app.add_middleware(SessionGuard, token=config.token, max_message_bytes=config.max_message_bytes,
                       idle_timeout=config.idle_timeout, body_timeout=config.body_timeout, sessions=sessions)
    app.add_middleware(OriginGuard, hosts=allowed_hosts(config.host, config.allow_hosts),  # outermost: first
                       origins=config.allow_origins, open_paths=OPEN_PATHS)
    return app


def playground_secret(secret: str) -> str:
    """The mounted playground's own secret, derived from the deployment's: a visitor sees every finished
    episode's goal, so its episodes must never share a key with the sessions' (whose clients pick the seed)."""
    return hashlib.sha256(f"ecomrlve-playground\0{secret}".encode()).hexdigest()


class SessionGuard:
    """ASGI middleware: bearer token, message size, WebSocket idle timeout, and the sessions' fast path.

    A refused WebSocket is accepted, sent one openenv error frame (``{"type": "error", "data":
    {"code", "message"}}``) and closed, so every client sees why; the app underneath sees a
    disconnect and frees the session. A refused HTTP request gets 401 or 413. A message that passed
    the checks goes to the ``/ws`` session's fast path (:mod:`ecomrlve.server.fastpath`) first.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, max_message_bytes: int,
                 idle_timeout: float | None, sessions: EcomSessions, body_timeout: float = 30.0) -> None:
        self.app, self.token, self.sessions = app, token, sessions
        self.max_bytes, self.idle_timeout, self.body_timeout = max_message_bytes, idle_timeout, body_timeout

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
        limit = None if scope.get("path") == RUNS_UPLOAD_PATH else self.max_bytes
        length = dict(scope.get("headers") or []).get(b"content-length")
        if limit is not None and length is not None and length.isdigit() and int(length) > limit:
            await _json_response(send, 413, {"detail": f"request body over {limit} bytes",
                                             "error": MESSAGE_TOO_LARGE})
            return
        received, body_done, started, answered = 0, False, False, False

        async def bounded_receive() -> Message:
            nonlocal received, body_done, answered
            if body_done:  # the app waits for the disconnect: no deadline
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.body_timeout)
            except asyncio.TimeoutError:
                if not started:  # answered here: the app may turn any receive error into its own 400
                    answered = True
                    await _json_response(send, 408, {"detail": f"the request body stalled for "
                                                     f"{self.body_timeout:g} s", "error": REQUEST_TIMEOUT})
                raise _BodyStalled() from None
            body_done = message["type"] != "http.request" or not message.get("more_body", False)
            received += len(message.get("body", b""))
            if limit is not None and received > limit:  # a chunked body without a length
                raise _BodyTooLarge()
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if not answered:
                started = started or message["type"] == "http.response.start"
                await send(message)

        try:
            await self.app(scope, bounded_receive, watched_send)
        except _BodyTooLarge:
            if not started:
                await _json_response(send, 413, {"detail": f"request body over {limit} bytes",
                                                 "error": MESSAGE_TOO_LARGE})
        except _BodyStalled:
            pass  # answered 408 above, or the response had begun

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        closed = False  # refused, or the client is gone: nothing more is sent
        connection: Connection | None = None  # the fast path of a /ws session
        session = scope.get("path") == SESSION_PATH

        async def deliver(message: Message) -> None:
            """Send to the client, unless it is gone (then the app's next receive is a disconnect, not an error)."""
            nonlocal closed
            if closed:
                return
            try:
                await send(message)
            except OSError:  # uvicorn's ClientDisconnected: the client went away while we answered
                closed = True

        async def refuse(code: str, text: str, close_code: int) -> Message:
            nonlocal closed
            await deliver({"type": "websocket.send", "text": error_frame(code, text)})
            await deliver({"type": "websocket.close", "code": close_code, "reason": code})
            closed = True
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
                if not session:
                    return message
                parsed, problem = screen_frame(text)
                if problem is not None:  # openenv's loop would end the session over it: answered here
                    await deliver({"type": "websocket.send", "text": error_frame(INVALID_MESSAGE, problem)})
                    continue
                reply = None if parsed is None or connection is None else await connection.answer(parsed)
                if reply is None:
                    return message  # openenv's loop answers it
                await deliver({"type": "websocket.send", "text": reply})
            return {"type": "websocket.disconnect", "code": 1000}

        async def guarded_send(message: Message) -> None:
            await deliver(message)  # after a refusal or a disconnect the app may still try: the socket is gone

        if session:
            with self.sessions.connection() as connection:
                await self.app(scope, guarded_receive, guarded_send)
        else:
            await self.app(scope, guarded_receive, guarded_send)


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether parsed JSON nests arrays and objects more than ``limit`` levels deep (without recursion)."""
    stack = [(value, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))
    return False


def error_frame(code: str, text: str) -> str:
    """An openenv error frame: ``{"type": "error", "data": {"code", "message"}}``."""
    return json.dumps({"type": "error", "data": {"code": code, "message": text}})


def screen_frame(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """(the message, None) for a JSON object; (None, why) for a frame openenv's loop would end the session
    over (binary, not an object, nested too deeply to parse); (None, None) for text that is not JSON at all
    (openenv's loop answers INVALID_JSON and carries on)."""
    if text is None:
        return None, "binary frames are not read: send each message as JSON text"
    try:
        message = json.loads(text)
    except RecursionError:
        return None, f"the message is nested more than {MAX_JSON_DEPTH} levels deep"
    except ValueError:
        return None, None
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and nested_deeper(message, MAX_JSON_DEPTH):
        return None, f"the message is nested more than {MAX_JSON_DEPTH} levels deep"
    if not isinstance(message, dict):
        return None, (f"a message is a JSON object such as {{\"type\": \"reset\", \"data\": {{}}}}, "
                      f"got {type(message).__name__ if message is not None else 'null'}")
    return message, None


class _BodyTooLarge(Exception):
    pass


class _BodyStalled(Exception):
    pass


async def _json_response(send: Send, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


def uvicorn_settings(config: ServerConfig) -> dict[str, Any]:
    """uvicorn settings for the server: its protocol-level frame limit sits well above ours, so our error frame
    wins; no per-message deflate: on the loopback or a LAN, compressing every frame costs more CPU than it saves;
    HTTP/1.1 by h11 with a request-head deadline and a connection cap (:mod:`ecomrlve.server.limits`)."""
    return {"log_level": "warning", "ws_max_size": 4 * config.max_message_bytes + (1 << 20),
            "ws_per_message_deflate": False, "timeout_graceful_shutdown": 5,
            "http": guarded_http_protocol(config.header_timeout, config.connection_limit)}


def defer_pandas() -> None:
    """Keep pandas out of a process serving a catalog directory (about 50 MiB per replica): pyarrow's first
    conversion of a numpy array (a ``take`` of rows) asks whether pandas is installed, importing it to find out;
    answered "no" here, and asked again where pandas is really needed (``to_pandas``, ``from_pandas``, and
    pyarrow's ``to_numpy``, which an in-memory catalog's first-use builds call: a directory stores their results)."""
    import pyarrow as pa

    shim = getattr(pa.lib, "_pandas_api", None)
    if "pandas" in sys.modules or shim is None:
        return
    finder = _Refuse("pandas")
    sys.meta_path.insert(0, finder)
    try:
        shim.have_pandas  # noqa: B018 - the one probe, answered False
    finally:
        sys.meta_path.remove(finder)


class _Refuse(importlib.abc.MetaPathFinder):
    """Answers an import of one module (not its submodules) as "not installed"."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == self.name:
            raise ModuleNotFoundError(f"{fullname} deferred by ecomrlve.server", name=fullname)
        return None


def serve(config: ServerConfig, listener: socket.socket, *, catalog: Catalog | None = None) -> None:
    """Build the app and serve it on ``listener`` (from :func:`ecomrlve.playground.command.bind`) until interrupted."""
    import uvicorn

    defer_pandas()
    app = build_app(config, catalog=catalog)
    raise_open_file_limit(config.connection_limit + 256)  # the cap, not the open-file limit, refuses first
    gc.freeze()  # the catalog, its indexes and the app live as long as the server: no collection need walk them
    uvicorn.Server(uvicorn.Config(app, **uvicorn_settings(config))).run(sockets=[listener])
