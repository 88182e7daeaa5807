"""``ecomrlve serve`` and ``ecomrlve status``, what ``run|eval --server`` play through, and the options
``run``, ``eval`` and ``serve`` share (server, curriculum, overrides, ``--env``/``--collection``).

Registered on the main CLI app in :mod:`ecomrlve.cli`. openenv, FastAPI and httpx (the ``serve``
extra) are imported only when a command runs, so the core install runs every other command.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ecomrlve.difficulty import parse_overrides
from ecomrlve.difficulty.scheduler import SchedulerConfig
from ecomrlve.envs import resolve_env_ids
from ecomrlve.errors import UserInputError, require_output_directory, require_writable_file
from ecomrlve.playground.command import AllowHosts, AllowOrigins
from ecomrlve.session import resolve_secret, secret_fingerprint
from ecomrlve.shopper.options import (
    DEFAULT_BASE_URL,
    PhrasingOption,
    ShopperOptions,
    UserApiKeyEnv,
    UserBaseUrl,
    UserCache,
    UserConcurrency,
    UserModel,
)

if TYPE_CHECKING:
    from ecomrlve.server.app import ServerConfig
    from ecomrlve.server.client import RemoteEnv

console = Console()


#: ``run`` and ``eval`` on a running server instead of in process: its URL and bearer token.
ServerUrl = Annotated[str | None, typer.Option(
    "--server", help="Play on a running `ecomrlve serve` (URL), with its catalog, secret and curriculum, "
                     "instead of in-process.")]
ServerToken = Annotated[str | None, typer.Option(
    "--token", envvar="ECOMRLVE_TOKEN", show_envvar=True, help="--server: its bearer token.")]


#: The adaptive curriculum's thresholds and difficulty overrides, as ``run``, ``eval`` and ``serve`` take them;
#: the thresholds default to :class:`SchedulerConfig`'s.
TauAcc = Annotated[float, typer.Option(help="Adaptive: accuracy needed to promote.")]
TauNum = Annotated[int, typer.Option(help="Adaptive: episodes at the upper edge per decision.")]
DDelta = Annotated[int, typer.Option(help="Adaptive: maximum window width.")]
Overrides = Annotated[list[str], typer.Option(help="Override a difficulty axis: AXIS=VALUE (repeatable).")]


def env_option(env: str | None, collection: str | None, default: str) -> str:
    """What ``--env`` or ``--collection`` names (they mean the same: ids, collections or both), or ``default``;
    both at once is a mistake, refused rather than one silently ignored."""
    if env and collection:
        raise UserInputError(f"--env {env} and --collection {collection}: give one (either takes ids and "
                             "collections, comma separated)")
    return env or collection or default


def require_server_options(ctx: typer.Context, *names: str) -> None:
    """``run|eval --server``: refuse the options among ``names`` (parameter names) typed on the command line,
    which the server sets for its episodes. A default or an environment variable (``$ECOMRLVE_SECRET``) does
    not count: only what the user typed can be refused as not applying."""
    typed = [f"--{name.replace('_', '-')}" for name in names
             if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"]
    if typed:
        raise UserInputError(f"{', '.join(typed)}: with --server the server's catalog, secret, overrides, shopper "
                             "and curriculum apply (set them on `ecomrlve serve`)")


#: ``serve --replicas N`` (N > 1): (config, replicas, Ray address) -> serves until interrupted. The Ray integration is
#: a layer above this one, so :mod:`ecomrlve.cli` installs it (``ecomrlve.integrations.ray_server.serve_replicas``).
serve_replicas: Callable[[ServerConfig, int, str | None], None] | None = None


def serve_command(
    env: Annotated[str | None, typer.Option(help="Environment id(s), comma separated, e.g. CART.")] = None,
    collection: Annotated[str | None, typer.Option(help="A collection instead: C1, ... (default C8: all).")] = None,
    catalog: Annotated[str, typer.Option(help="Catalog spec (as for `ecomrlve run`).")] = "default",
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback needs --token or --insecure.")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to bind.")] = 8000,
    max_sessions: Annotated[int, typer.Option(min=1, help="Concurrent WebSocket sessions; one more gets a "
                                              "CAPACITY_REACHED error frame.")] = 1024,
    idle_timeout: Annotated[float, typer.Option(help="Seconds a session may stay silent before it is closed "
                                                "(IDLE_TIMEOUT); 0: never.")] = 300.0,
    max_message_bytes: Annotated[int, typer.Option(help="Largest client message (MESSAGE_TOO_LARGE beyond).")]
    = 1 << 20,
    max_connections: Annotated[int | None, typer.Option(min=1, help="Open connections, WebSockets included; one "
                                                        "more is refused with 503 (default: --max-sessions + 128).")]
    = None,
    header_timeout: Annotated[float, typer.Option(help="Seconds a connection may take to send a request head "
                                                  "(408 after).")] = 10.0,
    body_timeout: Annotated[float, typer.Option(help="Seconds a request body may stall (408 after).")] = 30.0,
    token: Annotated[str | None, typer.Option(envvar="ECOMRLVE_TOKEN", show_envvar=True,
                                              help="Bearer token every client must send.")] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help="Allow a non-loopback --host without --token.")] = False,
    secret: Annotated[str | None, typer.Option(envvar="ECOMRLVE_SECRET", show_envvar=True,
                                               help="Deployment secret mixed into every episode; default: "
                                               "this installation's secret.")] = None,
    scheduler_state: Annotated[Path | None, typer.Option(help="The curriculum's checkpoint: loaded at start, "
                                                         "rewritten atomically after every finished episode.")] = None,
    tau_acc: TauAcc = SchedulerConfig.tau_acc,
    tau_num: TauNum = SchedulerConfig.tau_num,
    d_delta: DDelta = SchedulerConfig.d_delta,
    override: Overrides = [],  # noqa: B006
    allow_oracle: Annotated[bool, typer.Option("--allow-oracle", help="Accept oracle turns (evaluating the oracle through the "
                                               "server); never on a server a policy trains on.")] = False,
    no_playground: Annotated[bool, typer.Option("--no-playground", help="Leave out the browser playground "
                                                "(mounted at /playground otherwise).")] = False,
    records: Annotated[Path | None, typer.Option(help="Append every finished session's full record (with the "
                                                 "deployment secret, replayable) to DIR/episodes.jsonl; clients "
                                                 "get records without the secret.")] = None,
    allow_host: AllowHosts = [],  # noqa: B006
    allow_origin: AllowOrigins = [],  # noqa: B006
    user_model: UserModel = None,
    user_base_url: UserBaseUrl = DEFAULT_BASE_URL,
    user_api_key_env: UserApiKeyEnv = None,
    user_cache: UserCache = None,
    user_concurrency: UserConcurrency = 8,
    phrasing: PhrasingOption = "train",
    replicas: Annotated[int, typer.Option(min=1, help="Server processes on Ray sharing the port and one curriculum "
                                          "(each its own --max-sessions).")] = 1,
    ray_address: Annotated[str | None, typer.Option(help="--replicas: an existing cluster (default $RAY_ADDRESS, "
                                                    "else a local Ray); the replicas run on this node.")] = None,
) -> None:
    """Serve the environments (openenv protocol: WebSocket sessions at /ws) with one shared curriculum."""
    require_serve_extra()
    if scheduler_state is not None:
        require_writable_file(scheduler_state, "--scheduler-state")
    if records is not None:
        require_output_directory(records, "--records")
    from ecomrlve.playground.access import is_loopback
    from ecomrlve.playground.command import bind
    from ecomrlve.server.app import ServerConfig, serve

    secret = resolve_secret(secret)  # here, to name it below; the server uses this one
    config = ServerConfig(env=env_option(env, collection, "C8"), catalog=catalog, host=host, port=port,
                          max_sessions=max_sessions, idle_timeout=idle_timeout or None,
                          max_message_bytes=max_message_bytes, max_connections=max_connections,
                          header_timeout=header_timeout, body_timeout=body_timeout, token=token, insecure=insecure, secret=secret,
                          scheduler_state=scheduler_state, scheduler=SchedulerConfig(tau_acc, tau_num, d_delta),
                          overrides=parse_overrides(override), allow_oracle=allow_oracle, playground=not no_playground,
                          records=records, allow_hosts=tuple(allow_host), allow_origins=tuple(allow_origin),
                          shopper=ShopperOptions(user_model, user_base_url, user_api_key_env, user_cache,
                                                 user_concurrency, phrasing=phrasing))
    resolve_env_ids(config.env)  # an unknown id is the user's first mistake to hear of, whatever the port
    if replicas > 1:
        if serve_replicas is None:
            raise UserInputError("--replicas: the Ray integration is not installed in this command")
        serve_replicas(config, replicas, ray_address)
        return
    listener = bind(host, port)  # a taken port or a bad address: one line, before the catalog loads
    address = f"{host}:{listener.getsockname()[1]}"
    console.print(f"serving {config.env} on http://{address} (WebSocket sessions at ws://{address}/ws"
                  + (f", playground at http://{address}/playground)" if not no_playground else ")")
                  + ("" if token or is_loopback(host) else " [bold red]without a token[/]")
                  + f"; secret {secret_fingerprint(secret)}")
    serve(config, listener)


def status_command(
    url: Annotated[str, typer.Argument(help="The server, e.g. http://127.0.0.1:8000.")],
    token: Annotated[str | None, typer.Option(envvar="ECOMRLVE_TOKEN", show_envvar=True,
                                              help="Bearer token of the server.")] = None,
) -> None:
    """Print a server's curriculum: every environment's difficulty window and upper-edge counts."""
    require_serve_extra()
    from ecomrlve.server.client import server_windows

    payload = server_windows(url, token)
    table = Table(title=f"Curriculum of {url} ({payload['sessions']}/{payload['max_sessions']} sessions open)")
    for column in ("env", "low", "high", "correct", "attempts"):
        table.add_column(column, justify="left" if column == "env" else "right", overflow="fold")
    for env_id, window in payload["windows"].items():
        table.add_row(env_id, *(str(window[k]) for k in ("low", "high", "correct", "attempts")))
    console.print(table)
    config = payload["config"]
    console.print(f"tau_acc {config['tau_acc']}, tau_num {config['tau_num']}, d_delta {config['d_delta']}")


def require_serve_extra() -> None:
    """One line instead of an ImportError when the ``serve`` extra is missing."""
    try:
        import httpx  # noqa: F401
        import openenv.core.env_server  # noqa: F401
    except ImportError as exc:
        raise UserInputError(f"this command needs the serve extra ({exc.name} is missing): "
                             "pip install 'ecomrlve[serve]'") from None


class ServerSessions:
    """The remote environments of one ``run|eval --server``: one session per worker, all closed at the end."""

    def __init__(self, url: str, token: str | None, env_ids: tuple[str, ...], *, agent: str | None = None) -> None:
        require_serve_extra()
        from ecomrlve.server.client import ServerScheduler, server_windows

        self.url, self.token = url, token
        payload = server_windows(url, token)  # reachable, and the token works: fail before episode 1
        served = payload["windows"]
        missing = [e for e in env_ids if e not in served]
        if missing:
            raise UserInputError(f"the server at {url} does not serve {', '.join(missing)} (it serves "
                                 f"{', '.join(served)})")
        if agent == "oracle" and payload.get("oracle") is False:
            raise UserInputError(f"--agent oracle: the server at {url} plays no oracle turns (start it with "
                                 "`ecomrlve serve --allow-oracle`)")
        self.scheduler = ServerScheduler(url, token)
        self._open: list[RemoteEnv] = []

    def make_env(self) -> RemoteEnv:
        from ecomrlve.server.client import RemoteEnv

        env = RemoteEnv(self.url, self.token)
        self._open.append(env)
        return env

    def close(self) -> None:
        for env in self._open:
            env.close()
        self._open.clear()

    def __enter__(self) -> ServerSessions:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
