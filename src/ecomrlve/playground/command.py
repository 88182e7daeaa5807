"""``ecomrlve playground``: load the catalog and runs files, check the token rule, serve with uvicorn.

Registered on the main CLI in :mod:`ecomrlve.cli`; FastAPI and uvicorn (the ``playground``
extra) are imported only when the command runs. :func:`serve_in_thread` is the same server in a
background thread, for tests and scripts.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from ecomrlve.catalog import load_catalog
from ecomrlve.errors import UserInputError
from ecomrlve.playground.access import TOKEN_ENV_VAR, OriginGuard, allowed_hosts, check_binding
from ecomrlve.playground.runs import RunsFileError, parse_runs
from ecomrlve.session import SECRET_ENV_VAR

#: Who may reach a server or playground from a browser: Host names and page origins besides the defaults.
AllowHosts = Annotated[list[str], typer.Option(
    "--allow-host", help="A Host name to answer besides the loopback names (repeatable; '*': any). Requests "
                         "naming another host are refused (403), against DNS rebinding.")]
AllowOrigins = Annotated[list[str], typer.Option(
    "--allow-origin", help="A web page origin (https://host:port) that may use the server besides its own "
                           "pages (repeatable); other pages' requests and WebSockets are refused.")]


def playground_command(
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback needs --token or --insecure.")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8765,
    catalog: Annotated[list[str], typer.Option(help="'default', synthetic:N[:SEED], a catalog directory or a "
                                                    "product file (repeatable: the page offers each).")] = ["default"],  # noqa: B006
    runs: Annotated[list[Path], typer.Option(help="A runs file (JSONL of episode records) to open in the run "
                                                  "viewer (repeatable); more can be opened from the page.")] = [],  # noqa: B006
    token: Annotated[str | None, typer.Option(envvar=TOKEN_ENV_VAR, show_envvar=True,
                                                 help="Every request must carry it (Authorization: Bearer, or open "
                                                 "a page once with ?token=...).")] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help="Serve a non-loopback address without a token.")] = False,
    secret: Annotated[str | None, typer.Option(envvar=SECRET_ENV_VAR, show_envvar=True,
                                                  help="Deployment secret of the episodes (default: this "
                                                  "installation's secret).")] = None,
    idle_minutes: Annotated[float, typer.Option(min=1, help="Episodes and uploaded runs expire after this long "
                                                             "unused.")] = 30.0,
    allow_host: AllowHosts = [],  # noqa: B006
    allow_origin: AllowOrigins = [],  # noqa: B006
) -> None:
    """Play episodes in the browser as the agent, and browse recorded runs."""
    check_binding(host, token, insecure)
    try:
        import uvicorn

        from ecomrlve.playground.app import create_playground_app
    except ImportError as exc:
        raise UserInputError(f"the playground needs the playground extra ({exc.name} is missing): "
                             "pip install 'ecomrlve[playground]'") from None
    runs_files = []
    for path in runs:
        try:
            runs_files.append(parse_runs(path.read_bytes(), path.name))
        except OSError as exc:
            raise UserInputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
        except RunsFileError as exc:
            raise UserInputError(str(exc)) from None
    catalogs = {}
    for spec in catalog:
        loaded = load_catalog(spec)
        if loaded.name in catalogs:
            raise UserInputError(f"--catalog {spec}: a catalog named {loaded.name!r} is already loaded")
        catalogs[loaded.name] = loaded
    app = OriginGuard(create_playground_app(catalogs, token=token, secret=secret, runs=runs_files,
                                            idle_seconds=idle_minutes * 60),
                      hosts=allowed_hosts(host, allow_host), origins=allow_origin)
    listener = bind(host, port)
    bound = listener.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"playground on http://{shown}:{bound}/" + ("?token=…" if token else "") + "  (Ctrl-C stops it)")
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])


def bind(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A listening socket on ``host:port``; a taken port or a bad address is one line, not a traceback.
    ``reuse_port``: share the port with other processes that set it too (``SO_REUSEPORT``: the kernel spreads
    new connections over them; ``serve --replicas``)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        listener = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise UserInputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        # Accepted connections inherit it. uvicorn serving a socket it did not make leaves Nagle on, and
        # every keep-alive request then waits ~40 ms for a delayed ACK (measured: 48 ms -> 3 ms per request).
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        listener.bind((host, port))
        listener.listen(128)
    except OSError as exc:
        listener.close()
        raise UserInputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return listener


@contextlib.contextmanager
def serve_in_thread(app: Any, host: str = "127.0.0.1", port: int = 0, *, start_timeout: float = 30.0,
                    **settings: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a background thread; yields its base URL and stops it on exit.

    For tests and scripts (a real server on a free loopback port, in-process so they can audit the
    episodes the browser plays); ``settings`` go to ``uvicorn.Config`` (e.g. the server's frame limit).
    """
    import uvicorn

    listener = bind(host, port)
    server = uvicorn.Server(uvicorn.Config(app, **({"log_level": "warning"} | settings)))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + start_timeout
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"the server did not start within {start_timeout:g} s")
            time.sleep(0.05)
        yield f"http://{host}:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=start_timeout)
        listener.close()
