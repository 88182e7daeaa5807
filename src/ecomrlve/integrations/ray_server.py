"""``ecomrlve serve --replicas N``: N server processes on Ray behind one address, one curriculum shared by all.

Each :class:`ServerReplica` actor is a whole ``ecomrlve serve`` app (the same ``ServerConfig``: protocol,
token, limits, secret, catalog) run by uvicorn on a listening socket of its own bound to the same
``host:port`` with ``SO_REUSEPORT``: the kernel hands each new connection to one replica, and a
WebSocket session stays on the replica that accepted it (sticky by construction), with no proxy hop per
message. Every replica's scheduler is a :class:`RemoteScheduler` over the one :class:`SchedulerActor`
(an ``AdaptiveScheduler`` on the driver's node, which writes ``--scheduler-state`` there): a reset
draws its adaptive difficulty from it and each finished episode updates it once.

One address works for the replicas of one node (``SO_REUSEPORT`` shares a port between the processes of
one user on one machine); across nodes, start replicas on each and put a TCP load balancer in front:
they all share the one curriculum actor. A replica that dies takes its sessions with it; the others
keep serving.
"""

from __future__ import annotations

import dataclasses
import random
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

try:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("serving on Ray needs ray: pip install 'ecomrlve[ray,serve]'") from exc

from ecomrlve.difficulty.scheduler import AdaptiveScheduler, DifficultyWindow
from ecomrlve.envs import resolve_env_ids
from ecomrlve.errors import UserInputError
from ecomrlve.integrations.ray import connect
from ecomrlve.playground.command import bind
from ecomrlve.server.app import ServerConfig, build_app, defer_pandas, uvicorn_settings

START_TIMEOUT_S = 300.0


class SchedulerActor:
    """The replicated server's one curriculum: an ``AdaptiveScheduler`` that every replica draws from and feeds."""

    def __init__(self, config: ServerConfig) -> None:
        self._scheduler = AdaptiveScheduler(resolve_env_ids(config.env), config.scheduler,
                                            checkpoint_path=config.scheduler_state)

    def sample(self, env_id: str, rng: random.Random) -> int:
        return self._scheduler.sample(env_id, rng)

    def update(self, env_id: str, difficulty: int, is_correct: bool) -> bool:
        return self._scheduler.update(env_id, difficulty, is_correct)

    def window(self, env_id: str) -> DifficultyWindow:
        return self._scheduler.window(env_id)

    def state_dict(self) -> dict[str, Any]:
        return self._scheduler.state_dict()


class RemoteScheduler:
    """A replica's scheduler: the :class:`SchedulerActor`'s, one round trip per draw; updates are sent without
    waiting (Ray keeps one caller's calls in order), so a finished episode holds up no session."""

    def __init__(self, actor: Any) -> None:
        self._actor = actor

    def sample(self, env_id: str, rng: random.Random) -> int:
        return int(ray.get(self._actor.sample.remote(env_id, rng)))

    def update(self, env_id: str, difficulty: int, is_correct: bool) -> bool:
        self._actor.update.remote(env_id, difficulty, is_correct)
        return False  # whether it moved a window is the actor's to know

    def window(self, env_id: str) -> DifficultyWindow:
        window: DifficultyWindow = ray.get(self._actor.window.remote(env_id))
        return window

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = ray.get(self._actor.state_dict.remote())
        return state


class ServerReplica:
    """One server process: the app of ``config`` on a ``SO_REUSEPORT`` listener at ``port``, its scheduler the
    shared :class:`SchedulerActor`, served by uvicorn on a thread of the actor until :meth:`stop`."""

    def __init__(self, config: ServerConfig, port: int, curriculum: Any) -> None:
        import gc

        import uvicorn

        self._listener = bind(config.host, port, reuse_port=True)
        defer_pandas()  # as `serve`
        self._app = build_app(dataclasses.replace(config, scheduler_state=None))  # the actor keeps the checkpoint
        self._app.state.deployment.scheduler = RemoteScheduler(curriculum)
        gc.freeze()  # as `serve`: the catalog and the app live as long as the replica
        self._server = uvicorn.Server(uvicorn.Config(self._app, **uvicorn_settings(config)))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._listener]}, daemon=True)
        self._thread.start()

    def ready(self) -> bool:
        """Wait until uvicorn accepts connections; False if it stopped instead."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def sessions(self) -> int:
        """The WebSocket sessions open on this replica."""
        return int(self._app.state.sessions.active_sessions)

    def scheduler_state(self) -> dict[str, Any]:
        """The curriculum as this replica's ``/scheduler`` reads it (the shared actor's)."""
        state: dict[str, Any] = self._app.state.deployment.scheduler.state_dict()
        return state

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._listener.close()


def free_port(host: str) -> int:
    """A port nothing listens on now (the replicas bind it; the driver keeps no socket there, or the kernel would
    hand it connections nobody accepts)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@contextmanager
def replicated_server(config: ServerConfig, replicas: int, *, address: str | None = None,
                      cpus_per_replica: float = 1.0) -> Iterator[tuple[str, list[Any]]]:
    """Start ``replicas`` :class:`ServerReplica` actors on one port and their :class:`SchedulerActor`; yields the
    base URL and the replica handles, and stops them all when the block ends."""
    if replicas < 1:
        raise UserInputError(f"--replicas must be >= 1, got {replicas}")
    connect(address)
    port = config.port or free_port(config.host)
    bind(config.host, port).close()  # a taken port or a bad address: one line, before any replica starts
    here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
    curriculum = ray.remote(SchedulerActor).options(num_cpus=0, scheduling_strategy=here).remote(config)
    replica_class: Any = ray.remote(ServerReplica).options(num_cpus=cpus_per_replica, scheduling_strategy=here)
    handles = [replica_class.remote(config, port, curriculum) for _ in range(replicas)]
    try:
        if not all(ray.get([handle.ready.remote() for handle in handles])):
            raise UserInputError(f"a replica did not start serving within {START_TIMEOUT_S:g} s")
        shown = f"[{config.host}]" if ":" in config.host else config.host
        yield f"http://{shown}:{port}", handles
    finally:
        try:
            ray.get([handle.stop.remote() for handle in handles], timeout=30)
        except ray.exceptions.RayError:
            pass  # a replica that died or hangs is killed below all the same
        for actor in [*handles, curriculum]:
            ray.kill(actor)


def serve_replicas(config: ServerConfig, replicas: int, address: str | None) -> None:
    """``ecomrlve serve --replicas N``: serve until interrupted."""
    with replicated_server(config, replicas, address=address) as (url, _):
        print(f"serving {config.env} on {url} with {replicas} replicas (WebSocket sessions at "
              f"{url.replace('http', 'ws', 1)}/ws)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
