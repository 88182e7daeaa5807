"""The one run path: which episodes to play (:class:`Plan`), at which difficulty (:class:`Curriculum`,
the only place the adaptive scheduler is sampled and updated), playing them (:class:`RunLoop`),
and the per environment × difficulty summary.

``ecomrlve run`` and ``ecomrlve eval`` both go through it; a server or trainer can too::

    curriculum = Curriculum.per_task(AdaptiveScheduler(env_ids), seed=0)
    d = curriculum.difficulty(task)              # drawn from the env's window, fixed per task
    ...play (task.env_id, d, task.seed)...
    curriculum.observe(task, record)             # once per finished episode
"""

from __future__ import annotations

import asyncio
import random
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ecomrlve.actions import AgentAction
from ecomrlve.agents import RandomAgent, heuristic_agent, reference_agent
from ecomrlve.agents.llm import ChatEndpoint, LLMAgent, SamplingParams
from ecomrlve.difficulty import MAX_DIFFICULTY
from ecomrlve.difficulty.scheduler import DifficultyWindow
from ecomrlve.envs import TaskFamily
from ecomrlve.episode import EcomEnv
from ecomrlve.errors import UnknownNameError, UserInputError
from ecomrlve.protocol import DEFAULT_VERBOSITY, Agent, Observation
from ecomrlve.rewards import RewardBreakdown
from ecomrlve.rng import derive_rng, derive_seed
from ecomrlve.session import RUNTIME_TERMINATIONS, EpisodeRecord
from ecomrlve.shopper import ReplayShopper

# -- what the run path plays on ---------------------------------------------------------------------


class PlayableEnv(Protocol):
    """An :class:`EcomEnv`, or a client of a remote server (:class:`ecomrlve.server.RemoteEnv`)."""

    def reset(self, *, env_id: str | None = None, difficulty: int = 0, seed: int | None = None) -> Observation: ...

    def step(self, action: AgentAction | str | dict[str, Any]) -> Observation: ...

    @property
    def record(self) -> EpisodeRecord: ...

    @property
    def environment(self) -> TaskFamily: ...

    def oracle(self) -> Agent: ...


class Scheduler(Protocol):
    """An :class:`AdaptiveScheduler`, or a server's seen from a client (:class:`ecomrlve.server.ServerScheduler`)."""

    def sample(self, env_id: str, rng: random.Random) -> int: ...

    def update(self, env_id: str, difficulty: int, is_correct: bool) -> bool: ...

    def window(self, env_id: str) -> DifficultyWindow: ...

    def state_dict(self) -> dict[str, Any]: ...


# -- agents ------------------------------------------------------------------------------------


def make_agent(name: str, env: PlayableEnv, seed: int, *, endpoint: ChatEndpoint | None = None,
               sampling: SamplingParams | None = None) -> Agent:
    """A fresh agent for the episode that ``env`` has just reset (``openai`` needs an ``endpoint``)."""
    if name == "oracle":
        return env.oracle()
    if name == "heuristic":
        return heuristic_agent(env.environment.env_id)
    if name == "reference":
        return reference_agent(env.environment.env_id)
    if name == "random":
        return RandomAgent(seed)
    if name == "openai":
        if endpoint is None:
            raise ValueError("the openai agent needs an endpoint: use `ecomrlve eval --agent openai --model NAME --base-url URL`")
        return LLMAgent(endpoint, sampling)
    raise UnknownNameError(f"unknown agent {name!r}; choose oracle, reference, heuristic, random or openai")


# -- the plan ----------------------------------------------------------------------------------


def episode_seed(base_seed: int, env_id: str, difficulty: int | str, index: int) -> int:
    """Independent seed of the ``index``-th task of a run (named derivation, no arithmetic)."""
    return derive_seed("run", base_seed, env_id, difficulty, index) & 0x7FFFFFFF


@dataclass(frozen=True)
class Task:
    """One ``(env, difficulty, seed)`` slot of a plan; ``difficulty=None`` until the curriculum picks it."""

    env_id: str
    difficulty: int | None
    index: int
    seed: int

    @property
    def slot(self) -> str:
        return f"{self.env_id}/{'adaptive' if self.difficulty is None else self.difficulty}/{self.index}"


@dataclass(frozen=True)
class Plan:
    """The tasks of a run, in order.

    Fixed difficulties: every env × difficulty × ``tasks``. Adaptive (``difficulties=None``): with
    ``draw_envs`` (``ecomrlve run``), ``tasks`` in all, each one's environment drawn uniformly
    (seeded by ``seed``); without (``ecomrlve eval``), ``tasks`` per environment, index-major.
    """

    env_ids: tuple[str, ...]
    difficulties: tuple[int, ...] | None
    tasks: int
    seed: int = 0
    draw_envs: bool = False

    def __iter__(self) -> Iterator[Task]:
        if self.difficulties is not None:
            for env_id in self.env_ids:
                for d in self.difficulties:
                    for index in range(self.tasks):
                        yield Task(env_id, d, index, episode_seed(self.seed, env_id, d, index))
            return
        for index in range(self.tasks):
            if self.draw_envs:
                env_ids: tuple[str, ...] = (derive_rng("plan", self.seed, index).choice(self.env_ids),)
            else:
                env_ids = self.env_ids
            for env_id in env_ids:
                yield Task(env_id, None, index, episode_seed(self.seed, env_id, "adaptive", index))

    def __len__(self) -> int:
        if self.difficulties is not None:
            return self.tasks * len(self.env_ids) * len(self.difficulties)
        return self.tasks * (1 if self.draw_envs else len(self.env_ids))


def parse_difficulty(text: str) -> tuple[int, ...] | None:
    """``"3"`` -> (3,), ``"0-15"`` -> (0, ..., 15), ``"adaptive"`` -> None."""
    if text == "adaptive":
        return None
    low, sep, high = text.partition("-")
    try:
        lo, hi = int(low), int(high) if sep else int(low)
    except ValueError:
        raise UserInputError(f"difficulty must be N, LOW-HIGH or 'adaptive', got {text!r}") from None
    if not 0 <= lo <= hi <= MAX_DIFFICULTY:
        raise UserInputError(f"difficulty {text!r} is outside the supported range 0..{MAX_DIFFICULTY} (or LOW > HIGH)")
    return tuple(range(lo, hi + 1))


# -- the curriculum: the one scheduler path -------------------------------------------------------


class Curriculum:
    """Each task's difficulty, and the scheduler updates from finished episodes.

    A fixed task keeps its difficulty. An adaptive task's difficulty is drawn from its
    environment's scheduler window the first time it is asked for, then kept for the task (so
    every trial of a task plays the same episode). ``observe`` is called once per finished
    episode, in the order episodes finish; replaying those calls rebuilds the scheduler.

    Args:
        scheduler: the RLVE scheduler; None when every task has a fixed difficulty.
        rng_for: the random stream a task's draw comes from.
    """

    def __init__(self, scheduler: Scheduler | None = None,
                 rng_for: Callable[[Task], random.Random] | None = None) -> None:
        if scheduler is not None and rng_for is None:
            raise ValueError("an adaptive curriculum needs rng_for: use Curriculum.sequential or per_task")
        self.scheduler = scheduler
        self._rng_for = rng_for
        self._difficulty: dict[str, int] = {}

    @classmethod
    def sequential(cls, scheduler: Scheduler, seed: int) -> Curriculum:
        """Draws from one stream in plan order (``ecomrlve run``: episodes play one after another)."""
        stream = derive_rng("ecomenv", seed)  # the stream EcomEnv sampled from before: adaptive runs reproduce
        return cls(scheduler, lambda task: stream)

    @classmethod
    def per_task(cls, scheduler: Scheduler, seed: int) -> Curriculum:
        """Draws from a stream of the task's own (``ecomrlve eval``: concurrent, resumable)."""
        return cls(scheduler, lambda task: derive_rng("eval-difficulty", seed, task.slot))

    def difficulty(self, task: Task) -> int:
        if task.difficulty is not None:
            return task.difficulty
        d = self._difficulty.get(task.slot)
        if d is None:
            if self.scheduler is None or self._rng_for is None:
                raise ValueError(f"task {task.slot} has no difficulty and the curriculum has no scheduler")
            d = self._difficulty[task.slot] = self.scheduler.sample(task.env_id, self._rng_for(task))
        return d

    def observe(self, task: Task, record: EpisodeRecord) -> None:
        """Take one finished episode of ``task`` into account (once per episode)."""
        if record.reward is None:
            raise ValueError(f"episode {task.slot} is not finished")
        self._difficulty[task.slot] = record.difficulty
        if self.scheduler is not None:
            self.scheduler.update(record.env_id, record.difficulty, record.reward.is_correct)


# -- the loop ------------------------------------------------------------------------------------

#: builds the agent for one episode: (environment just reset, task, trial) -> agent
AgentFactory = Callable[[PlayableEnv, Task, int], Agent]
#: called once per finished episode, after the curriculum has seen it
EpisodeCallback = Callable[[Task, int, EpisodeRecord, Agent], None]


class EpisodeLoop(Protocol):
    """What plays a run's ``(task, trial)`` jobs: :class:`RunLoop` in this process, or a pool elsewhere
    (``ecomrlve.integrations.ray.RayPool``); ``on_episode`` runs here, once per finished episode."""

    async def run(self, jobs: Iterable[tuple[Task, int]], on_episode: EpisodeCallback, *,
                  concurrency: int = 1) -> None: ...


def trial_sampling_seed(base: int, task: Task, trial: int) -> int:
    """A distinct, reproducible sampling seed for each trial of a task."""
    return derive_seed("eval-sampling", base, task.slot, trial) & 0x7FFFFFFF


def agent_factory(name: str, endpoint: ChatEndpoint | None = None) -> AgentFactory:
    """Agents by name (:func:`make_agent`); with a sampling seed, each trial of an LLM gets its own."""
    def make(env: PlayableEnv, task: Task, trial: int) -> Agent:
        sampling = None
        if endpoint is not None and endpoint.config.sampling.seed is not None:
            sampling = replace(endpoint.config.sampling,
                               seed=trial_sampling_seed(endpoint.config.sampling.seed, task, trial))
        return make_agent(name, env, task.seed, endpoint=endpoint, sampling=sampling)
    return make


@dataclass
class RunLoop:
    """Plays ``(task, trial)`` jobs: difficulty from the curriculum, one episode each, outcome observed once.

    Each worker owns one environment (``make_env``); agents with ``act_async`` (LLM agents) are
    awaited, so ``concurrency`` episodes can wait on an endpoint at once. An environment whose
    shopper calls a model (its realiser has ``offload``, e.g. :class:`~ecomrlve.shopper.LLMShopper`)
    resets and steps through it, so shopper requests of concurrent episodes overlap too.
    """

    make_env: Callable[[], PlayableEnv]
    curriculum: Curriculum
    make_agent: AgentFactory

    async def play(self, env: PlayableEnv, task: Task, trial: int) -> tuple[EpisodeRecord, Agent]:
        """One episode of ``task``; the curriculum observes it before this returns."""
        offload = getattr(getattr(env, "realiser", None), "offload", None)  # a server's env shops remotely

        async def run(fn: Callable[..., Observation], *args: Any, **kwargs: Any) -> Observation:
            return await offload(fn, *args, **kwargs) if offload else fn(*args, **kwargs)

        observation = await run(env.reset, env_id=task.env_id, difficulty=self.curriculum.difficulty(task),
                                seed=task.seed)
        agent = self.make_agent(env, task, trial)
        act_async = getattr(agent, "act_async", None)
        while not observation.done:
            action = await act_async(observation) if act_async else agent.act(observation)
            observation = await run(env.step, action)
        record = env.record
        self.curriculum.observe(task, record)
        return record, agent

    async def run(self, jobs: Iterable[tuple[Task, int]], on_episode: EpisodeCallback, *,
                  concurrency: int = 1) -> None:
        """Play every job, ``concurrency`` at a time; ``on_episode`` sees each as it finishes.

        The first error stops the run: episodes in flight are abandoned, finished ones were
        already handed to ``on_episode``.
        """
        queue = iter(jobs)

        async def worker() -> None:
            env = self.make_env()
            for task, trial in queue:  # one shared iterator: each job goes to one worker
                record, agent = await self.play(env, task, trial)
                on_episode(task, trial, record, agent)

        workers = [asyncio.ensure_future(worker()) for _ in range(max(1, concurrency))]
        try:
            done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for job in workers:
                job.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        for job in done:
            job.result()


def play(env: EcomEnv, agent_name: str, *, env_id: str, difficulty: int, seed: int) -> EpisodeRecord:
    """Play one episode to the end with a built-in agent and return its record."""
    observation = env.reset(env_id=env_id, difficulty=difficulty, seed=seed)
    agent = make_agent(agent_name, env, seed)
    while not observation.done:
        observation = env.step(agent.act(observation))
    return env.record


def replay(env: EcomEnv, record: EpisodeRecord) -> EpisodeRecord:
    """Re-run a recorded episode from its key (secret included) and actions; returns the new record (same
    ``run`` metadata). ``env`` adopts the record's secret; a recorded shopper (phrasing set, or an LLM's
    texts) is played back for this episode, with no model call. A record without its secret (as a server gives
    its clients) cannot be replayed: :class:`~ecomrlve.errors.UserInputError`."""
    if record.secret is None:
        raise UserInputError(f"{record.env_id} d={record.difficulty} seed={record.seed}: the record holds no secret "
                             "(a server keeps it from its clients); replay the server's own records "
                             "(`ecomrlve serve --records DIR`)")
    env.secret = record.secret
    realiser, verbosity = env.realiser, env.verbosity
    if record.shopper:
        env.realiser = ReplayShopper(record.shopper)
    env.verbosity = record.verbosity or DEFAULT_VERBOSITY  # tool results written as the record wrote them
    try:
        observation = env.reset(env_id=record.env_id, difficulty=record.difficulty, seed=record.seed)
    finally:
        env.realiser, env.verbosity = realiser, verbosity
    for action in record.actions:
        if observation.done:
            break
        observation = env.step(action)
    if not observation.done:  # it was ended from outside (a trainer's limit, a closed connection), or it differs
        recorded = record.reward.termination if record.reward is not None else ""
        env.session.finish(recorded if recorded not in RUNTIME_TERMINATIONS else "replay_unfinished")
    return env.record.model_copy(update={"run": record.run})


# -- the summary ----------------------------------------------------------------------------------

_MEANS: dict[str, Callable[[RewardBreakdown], float]] = {
    "r_total": lambda r: r.r_total, "r_task": lambda r: r.r_task, "r_eff": lambda r: r.r_eff,
    "r_hall": lambda r: r.r_hall, "success_rate": lambda r: float(r.is_correct), "turns": lambda r: float(r.turns),
}


def by_env_and_difficulty(records: Iterable[EpisodeRecord]) -> dict[str, dict[int, list[EpisodeRecord]]]:
    """Finished episodes grouped by environment, then difficulty (both sorted)."""
    groups: dict[str, dict[int, list[EpisodeRecord]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        if record.reward is not None:
            groups[record.env_id][record.difficulty].append(record)
    return {env_id: {d: groups[env_id][d] for d in sorted(groups[env_id])} for env_id in sorted(groups)}


def reward_means(records: list[EpisodeRecord]) -> dict[str, float]:
    """``episodes`` and the mean r_total, r_task, r_eff, r_hall, success_rate, turns of finished episodes."""
    rewards = [r.reward for r in records if r.reward is not None]
    return {"episodes": len(rewards), **{name: statistics.fmean(f(r) for r in rewards) for name, f in _MEANS.items()}}


def summarise(records: list[EpisodeRecord]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{env_id: {difficulty: {episodes, r_total, r_task, r_eff, r_hall, success_rate, turns}}}`` (means, 4 places)."""
    return {env_id: {str(d): {k: v if k == "episodes" else round(v, 4) for k, v in reward_means(group).items()}
                     for d, group in groups.items()}
            for env_id, groups in by_env_and_difficulty(records).items()}
