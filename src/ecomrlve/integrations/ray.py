"""Ray scale-out: a pool of environment actors, and one curriculum actor that every worker feeds.

Each :class:`EnvWorker` actor builds its own :class:`~ecomrlve.episode.EcomEnv` (its own catalog,
search engine and sessions) from an :class:`EnvRecipe` and plays jobs with the run path's
:class:`~ecomrlve.runner.RunLoop`. An adaptive run's :class:`~ecomrlve.runner.Curriculum` (and so
its scheduler) lives in one :class:`CurriculumActor`: every worker asks it for a task's difficulty
when the episode starts and reports the outcome when it ends. The actor is placed on the driver's
node, so a ``--scheduler-state`` checkpoint is written where the run was started. With fixed
difficulties there is nothing to share: the driver's curriculum observes each episode as it arrives.

:class:`RayPool` has the contract of :meth:`RunLoop.run <ecomrlve.runner.RunLoop.run>` (``run`` and
``eval`` pass it where they would pass a ``RunLoop``): finished episodes are handed to ``on_episode``
in the driver, in job order, so a run with fixed difficulties writes the same records in the same
order as a single process. With adaptive difficulty each episode is still fixed by its key and
replays exactly, and one worker reproduces the single-process run; with more, a task's difficulty
depends on which outcomes reached the scheduler before the task started.

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
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("Ray rollouts need ray: pip install 'ecomrlve[ray]'") from exc

from ecomrlve.catalog import load_catalog
from ecomrlve.difficulty.scheduler import AdaptiveScheduler
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


class CurriculumActor:
    """The run's one curriculum: difficulties drawn and outcomes observed for every worker, in arrival order."""

    def __init__(self, curriculum: Curriculum) -> None:
        self._curriculum = curriculum

    def difficulty(self, task: Task) -> int:
        return self._curriculum.difficulty(task)

    def observe(self, task: Task, record: EpisodeRecord) -> None:
        self._curriculum.observe(task, record)

    def scheduler_state(self) -> dict[str, Any]:
        if self._curriculum.scheduler is None:
            raise ValueError("this curriculum has no adaptive scheduler")
        return self._curriculum.scheduler.state_dict()

    def curriculum(self) -> Curriculum:
        return self._curriculum


class _SharedCurriculum(Curriculum):
    """A worker's view of the :class:`CurriculumActor`: the RunLoop's curriculum calls, forwarded."""

    def __init__(self, actor: Any) -> None:
        super().__init__()
        self._actor = actor

    def difficulty(self, task: Task) -> int:
        return int(ray.get(self._actor.difficulty.remote(task)))

    def observe(self, task: Task, record: EpisodeRecord) -> None:
        ray.get(self._actor.observe.remote(task, record))  # reported before the record goes back to the driver


class EnvWorker:
    """One environment actor: its own ``EcomEnv``, episodes played with the run path's ``RunLoop``.

    ``curriculum`` is the :class:`CurriculumActor` handle of an adaptive run, or None (fixed difficulties).
    """

    def __init__(self, recipe: EnvRecipe, curriculum: Any, make_agent: AgentFactory) -> None:
        self._env = recipe.make()
        shared = Curriculum() if curriculum is None else _SharedCurriculum(curriculum)
        self._loop = RunLoop(recipe.make, shared, make_agent)

    def play(self, task: Task, trial: int) -> tuple[EpisodeRecord, Any]:
        """One episode; returns its record and the agent's token usage (None for built-in agents)."""
        record, agent = asyncio.run(self._loop.play(self._env, task, trial))
        return record, getattr(agent, "usage", None)


@dataclass(frozen=True)
class PlayedRemotely:
    """The agent of an episode played on a worker, as the driver sees it: only its token usage came back."""

    usage: Any = None

    def act(self, observation: Observation) -> Any:
        raise RuntimeError("this agent played in a Ray worker; only its usage is here")


class RayPool:
    """Plays ``(task, trial)`` jobs on ``workers`` environment actors sharing one curriculum actor.

    Call :func:`connect` (or ``ray.init``) first. ``curriculum`` is copied into the curriculum actor
    when a run starts and its state is copied back as episodes finish, so the caller reads the
    scheduler's windows as usual. Each worker reserves ``cpus_per_worker`` CPUs (fractions allowed);
    keep some free on a small machine, or Ray tasks started by anything else wait forever.
    """

    def __init__(self, recipe: EnvRecipe, curriculum: Curriculum, make_agent: AgentFactory, *, workers: int = 2,
                 cpus_per_worker: float = 1.0) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.recipe, self.curriculum, self.make_agent = recipe, curriculum, make_agent
        self.workers, self.cpus_per_worker = workers, cpus_per_worker

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

        At most ``max(concurrency, 2 * workers)`` episodes are in flight (a worker always has the
        next one queued). The first error stops the run: the actors are killed, episodes handed over
        are kept, the curriculum holds every outcome observed so far.
        """
        scheduler = self.curriculum.scheduler
        if scheduler is not None and not isinstance(scheduler, AdaptiveScheduler):
            raise TypeError("a Ray pool runs its own curriculum: give it an AdaptiveScheduler, not a server's")
        shared: Any = None  # fixed difficulties share nothing: the driver observes each episode itself
        if scheduler is not None:
            here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
            shared = ray.remote(CurriculumActor).options(num_cpus=0, scheduling_strategy=here).remote(self.curriculum)
        worker_class: Any = ray.remote(EnvWorker).options(num_cpus=self._cpus_per_worker())
        workers: list[Any] = [worker_class.remote(self.recipe, shared, self.make_agent) for _ in range(self.workers)]
        queue = enumerate(jobs)
        in_flight: dict[Any, tuple[int, Task, int, Any]] = {}  # object ref -> (job number, task, trial, worker)
        finished: dict[int, tuple[Task, int, EpisodeRecord, Any]] = {}  # by job number, until its turn comes

        def submit(worker: Any) -> None:
            job = next(queue, None)
            if job is not None:
                number, (task, trial) = job
                in_flight[worker.play.remote(task, trial)] = (number, task, trial, worker)

        try:
            for n in range(max(concurrency, 2 * self.workers)):
                submit(workers[n % self.workers])
            delivered = 0
            while in_flight:
                [ref], _ = ray.wait(list(in_flight), num_returns=1)
                number, task, trial, worker = in_flight.pop(ref)
                record, usage = ray.get(ref)
                finished[number] = (task, trial, record, usage)
                submit(worker)
                while delivered in finished:
                    task, trial, record, usage = finished.pop(delivered)
                    if scheduler is None:
                        self.curriculum.observe(task, record)
                    else:  # the windows as they are now, for a caller that annotates records with them
                        scheduler.load_state_dict(ray.get(shared.scheduler_state.remote()))
                    on_episode(task, trial, record, PlayedRemotely(usage))
                    delivered += 1
        finally:
            try:
                if shared is not None:
                    self.curriculum.adopt(ray.get(shared.curriculum.remote()))
            finally:
                for actor in [*workers, *([shared] if shared is not None else [])]:
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
