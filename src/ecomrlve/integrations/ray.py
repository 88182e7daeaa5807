"""Ray scale-out: a pool of environment actors; the run's one curriculum stays in the driver.

Each :class:`EnvWorker` actor builds its own :class:`~ecomrlve.episode.EcomEnv` (its own catalog,
search engine and sessions) from an :class:`EnvRecipe` and plays jobs with the run path's
:class:`~ecomrlve.runner.RunLoop`. The driver holds the run's :class:`~ecomrlve.runner.Curriculum`
(and so its scheduler and its ``--scheduler-state`` checkpoint, written where the run was started): it
draws a job's difficulty when it hands the job to a worker and counts the outcome exactly once, when
the record is delivered. A worker that dies is replaced and its jobs are played again at the
difficulty drawn for them (same key, same record), so nothing is lost and nothing is counted twice.

:class:`RayPool` has the contract of :meth:`RunLoop.run <ecomrlve.runner.RunLoop.run>` (``run`` and
``eval`` pass it where they would pass a ``RunLoop``): finished episodes are handed to ``on_episode``
in the driver, in job order, so a run with fixed difficulties writes the same records in the same
order as a single process. With adaptive difficulty each episode is still fixed by its key and
replays exactly, and one worker reproduces the single-process run; with more, a task's difficulty
depends on which outcomes were delivered before it was handed out.

Connecting: :func:`connect` joins ``address`` (``ray://host:10001`` or ``host:6379``), else
``$RAY_ADDRESS``, else starts a local Ray. Every node needs ``ecomrlve`` installed (or a
``runtime_env``) and must be able to load the catalog spec (a directory on shared storage).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import ray
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("Ray rollouts need ray: pip install 'ecomrlve[ray]'") from exc

from ecomrlve.catalog import load_catalog
from ecomrlve.episode import EcomEnv
from ecomrlve.errors import UserInputError
from ecomrlve.evaluation.run import Evaluation
from ecomrlve.protocol import Observation
from ecomrlve.runner import AgentFactory, Curriculum, EpisodeCallback, RunLoop, Task, agent_factory
from ecomrlve.session import EpisodeRecord, resolve_secret
from ecomrlve.shopper.options import ShopperOptions

CONNECT_TIMEOUT_S = 5.0


def connect(address: str | None = None) -> None:
    """Join the Ray cluster at ``address`` or ``$RAY_ADDRESS``, else start a local Ray; no-op when connected."""
    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        _check_reachable(address)  # also when connected: a wrong address is the user's mistake either way
    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address:
        ray.init(address=address)
    else:
        ray.init(include_dashboard=False)


def _check_reachable(address: str) -> None:
    """Fail in one line on a ``host:port`` nothing listens on (``ray.init`` would retry for minutes)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "local" and other forms Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise UserInputError(f"no Ray cluster answers at {address}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class EnvRecipe:
    """How a worker builds its environment: a catalog spec (loaded on the worker), never a ``Catalog`` object.

    The secret is resolved here, in the driver (``$ECOMRLVE_SECRET``, else the installation's), so every
    worker plays with the same one and the records replay with it.
    """

    env_ids: tuple[str, ...]
    catalog: str = "default"
    overrides: dict[str, Any] = field(default_factory=dict)
    secret: str | None = None
    shopper: ShopperOptions = field(default_factory=ShopperOptions)

    def __post_init__(self) -> None:
        object.__setattr__(self, "secret", resolve_secret(self.secret))
        if Path(self.catalog).exists():  # a local path: workers may start in another directory
            object.__setattr__(self, "catalog", str(Path(self.catalog).resolve()))

    def make(self) -> EcomEnv:
        return EcomEnv(self.env_ids, catalog=load_catalog(self.catalog), overrides=self.overrides,
                       secret=self.secret, realiser=self.shopper.build())


class _DrawnByTheDriver(Curriculum):
    """A worker's curriculum: the difficulty the driver drew for the job; the driver counts the outcome on delivery."""

    def __init__(self) -> None:
        super().__init__()
        self.level = 0

    def difficulty(self, task: Task) -> int:
        return self.level

    def observe(self, task: Task, record: EpisodeRecord) -> None:
        return None  # counted once, by the driver, when the record is delivered


class EnvWorker:
    """One environment actor: its own ``EcomEnv``, episodes played with the run path's ``RunLoop``."""

    def __init__(self, recipe: EnvRecipe, make_agent: AgentFactory) -> None:
        self._env = recipe.make()
        self._curriculum = _DrawnByTheDriver()
        self._loop = RunLoop(recipe.make, self._curriculum, make_agent)

    def play(self, task: Task, trial: int, difficulty: int) -> tuple[EpisodeRecord, Any]:
        """One episode of ``task`` at ``difficulty``; returns its record and the agent's token usage (None for
        built-in agents)."""
        self._curriculum.level = difficulty
        record, agent = asyncio.run(self._loop.play(self._env, task, trial))
        return record, getattr(agent, "usage", None)


@dataclass(frozen=True)
class PlayedRemotely:
    """The agent of an episode played on a worker, as the driver sees it: only its token usage came back."""

    usage: Any = None

    def act(self, observation: Observation) -> Any:
        raise RuntimeError("this agent played in a Ray worker; only its usage is here")


@dataclass
class _Job:
    number: int
    task: Task
    trial: int
    difficulty: int
    attempts: int = 1


class RayPool:
    """Plays ``(task, trial)`` jobs on ``workers`` environment actors; the run's one curriculum stays in the driver.

    Call :func:`connect` (or ``ray.init``) first. The driver draws each job's difficulty from
    ``curriculum`` when it hands the job to a worker, and counts each outcome in it exactly once, when
    the record is delivered to ``on_episode`` (in job order). A worker that dies (``ray.kill``, a
    crashed node) is replaced and its jobs are played again, at the difficulty drawn for them: every
    episode is fixed by its key, so the retried record is the one the lost worker would have returned;
    a job whose worker died ``max_attempts`` times stops the run. Each worker reserves
    ``cpus_per_worker`` CPUs (fractions allowed); keep some free on a small machine, or Ray tasks
    started by anything else wait forever.
    """

    def __init__(self, recipe: EnvRecipe, curriculum: Curriculum, make_agent: AgentFactory, *, workers: int = 2,
                 cpus_per_worker: float = 1.0, max_attempts: int = 3) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.recipe, self.curriculum, self.make_agent = recipe, curriculum, make_agent
        self.workers, self.cpus_per_worker, self.max_attempts = workers, cpus_per_worker, max_attempts
        #: the worker actors of the run in progress (a replaced one is swapped in at its index)
        self.actors: list[Any] = []
        #: workers replaced after dying, in the last run
        self.restarts = 0

    def _cpus_per_worker(self) -> float:
        """At most the cluster's CPUs shared out: a worker Ray cannot place would hold up every job queued
        on it, and records are handed over in job order (seen on a one-CPU Ray: ``--workers 2`` waited forever)."""
        cluster_cpus = float(ray.cluster_resources().get("CPU", 0.0))
        if cluster_cpus <= 0:
            return self.cpus_per_worker
        return min(self.cpus_per_worker, cluster_cpus / self.workers)

    async def run(self, jobs: Iterable[tuple[Task, int]], on_episode: EpisodeCallback, *,
                  concurrency: int = 1) -> None:
        """Play every job, handing each finished one to ``on_episode`` in job order.

        With fixed difficulties ``max(concurrency, 2 * workers)`` episodes are in flight (a worker always
        has the next one queued). An adaptive curriculum keeps ``max(concurrency, workers)``: a job's
        difficulty is drawn when it is handed out, after the outcomes delivered so far, so one worker
        draws exactly as the single-process loop does. An error other than a dead worker stops the run:
        the actors are killed, episodes handed over are kept and are the only ones the curriculum counted.
        """
        worker_class: Any = ray.remote(EnvWorker).options(num_cpus=self._cpus_per_worker())
        self.actors = [worker_class.remote(self.recipe, self.make_agent) for _ in range(self.workers)]
        self.restarts = 0
        queue = enumerate(jobs)
        in_flight: dict[Any, tuple[_Job, int, Any]] = {}  # object ref -> (job, worker index, the actor it went to)
        finished: dict[int, tuple[_Job, EpisodeRecord, Any]] = {}  # by job number, until its turn comes

        def send(job: _Job, index: int) -> None:
            actor = self.actors[index]
            in_flight[actor.play.remote(job.task, job.trial, job.difficulty)] = (job, index, actor)

        def submit(index: int) -> None:
            item = next(queue, None)
            if item is not None:
                number, (task, trial) = item
                send(_Job(number, task, trial, self.curriculum.difficulty(task)), index)

        def replace(index: int, dead: Any) -> None:
            if self.actors[index] is dead:  # its other jobs fail too: one replacement per death
                self.actors[index] = worker_class.remote(self.recipe, self.make_agent)
                self.restarts += 1

        depth = max(concurrency, (1 if self.curriculum.scheduler is not None else 2) * self.workers)
        try:
            for n in range(depth):
                submit(n % self.workers)
            delivered = 0
            while in_flight:
                [ref], _ = ray.wait(list(in_flight), num_returns=1)
                job, index, actor = in_flight.pop(ref)
                try:
                    record, usage = ray.get(ref)
                except ray.exceptions.RayActorError:
                    if job.attempts >= self.max_attempts:
                        raise
                    replace(index, actor)
                    job.attempts += 1
                    send(job, index)
                    continue
                finished[job.number] = (job, record, usage)
                while delivered in finished:
                    done, record, usage = finished.pop(delivered)
                    self.curriculum.observe(done.task, record)
                    on_episode(done.task, done.trial, record, PlayedRemotely(usage))
                    delivered += 1
                submit(index)  # after the deliveries: the next draw sees every outcome delivered so far
        finally:
            for actor in self.actors:
                ray.kill(actor)


def run_pool(recipe: EnvRecipe, curriculum: Curriculum, agent: str, *, workers: int,
             address: str | None) -> RayPool:
    """``ecomrlve run --ray``: connect, then a pool of built-in agents (``agent`` by name)."""
    connect(address)
    return RayPool(recipe, curriculum, agent_factory(agent), workers=workers)


def evaluation_pool(evaluation: Evaluation, *, workers: int, address: str | None,
                    shopper: ShopperOptions | None = None) -> RayPool:
    """``ecomrlve eval --ray``: connect, then a pool over the evaluation's plan, curriculum, secret and shopper."""
    spec = evaluation.spec
    connect(address)
    recipe = EnvRecipe(spec.env_ids, spec.catalog, spec.overrides, evaluation.secret, shopper or ShopperOptions())
    return RayPool(recipe, evaluation.curriculum,
                   agent_factory(spec.agent), workers=workers)
