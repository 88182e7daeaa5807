"""One server session: an openenv ``Environment`` over :class:`ecomrlve.episode.EcomEnv`.

Every session owns its own ``EcomEnv`` (its own episode, world and shopper: no mutable episode
state is shared) and borrows what one server shares: the catalog and its search engine, the
deployment secret and the one adaptive scheduler. Episodes are CPU-bound Python, so worker threads
would add no throughput, only GIL hand-offs and contention on the shared search engine: ``reset``
and ``step`` run on the server's event loop (``reset_async``/``step_async``), creating and closing
a session on one shared worker thread (``REQUIRES_SINGLE_THREAD_EXECUTOR``).

The deployment secret never leaves the server: the record a client reads from ``state`` once its
episode is over has no ``secret`` (:meth:`EpisodeRecord.for_client`), so its key cannot rebuild the
episode (or its oracle) elsewhere; the full, replayable records go to the operator's ``--records``
file (:class:`RecordsFile`).
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from ecomrlve import __version__
from ecomrlve.actions import short_text
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.difficulty import MAX_DIFFICULTY
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Agent, Observation
from ecomrlve.rng import derive_rng
from ecomrlve.runner import Scheduler
from ecomrlve.server.mcp import EpisodeTools
from ecomrlve.server.models import EcomAction, EcomObservation, EcomState
from ecomrlve.session import EpisodeRecord
from ecomrlve.user.realiser import Realiser, RealiserFactory

#: ``reset(difficulty=ADAPTIVE)`` (the default) draws from the server's scheduler window
ADAPTIVE = "adaptive"


#: the file of full records in ``serve --records DIR``
RECORDS_FILE = "episodes.jsonl"


class EpisodeStateError(RuntimeError):
    """A request that does not fit the session's episode (step before reset, step after done)."""


class RecordsFile:
    """``serve --records DIR``: every finished session episode's full record (secret included), one JSON line
    each in ``DIR/episodes.jsonl``, appended and flushed as it ends: what ``ecomrlve replay`` and audits read."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / RECORDS_FILE
        self._sink = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()  # an LLM shopper plays episodes on its worker threads

    def write(self, record: EpisodeRecord) -> None:
        line = record.to_json() + "\n"
        with self._lock:
            self._sink.write(line)
            self._sink.flush()

    def close(self) -> None:
        with self._lock:
            self._sink.close()


@dataclass
class Deployment:
    """What every session of one server shares (read-only but for the thread-safe scheduler)."""

    env_ids: tuple[str, ...]
    catalog: Catalog
    search: SearchEngine
    secret: str
    scheduler: Scheduler  # an AdaptiveScheduler; with --replicas, the one all replicas share
    overrides: dict[str, Any] = field(default_factory=dict)
    allow_oracle: bool = False
    realiser: Realiser | RealiserFactory | None = None  # the shopper (None: the default train-half templates)
    records: RecordsFile | None = None  # where the full records go (None: nowhere)
    #: episode keys (env, d, seed) whose record, hidden goal included, a client was given
    disclosed: set[tuple[str, int, int]] = field(default_factory=set)
    _disclosed_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def disclose(self, key: tuple[str, int, int]) -> None:
        """A client was given the record of ``key``: from now on an episode of that key (which the client can
        solve from the goal it read) no longer feeds the curriculum."""
        with self._disclosed_lock:
            self.disclosed.add(key)

    def feeds_curriculum(self, key: tuple[str, int, int]) -> bool:
        """Whether an episode of ``key`` started now counts in the curriculum: not once its record was disclosed
        (the G concurrent rollouts of a GRPO group all start before any record exists, so all count)."""
        with self._disclosed_lock:
            return key not in self.disclosed

    def observe(self, env: EcomEnv, difficulty: int, *, counts: bool = True) -> None:
        """The one scheduler update of a finished episode (the curriculum every session feeds; none when it does
        not ``count``), and its full record to the operator's file. Without a file it reads the session's reward,
        not ``env.record``: building the record copies the transcript and dumps the goal."""
        reward = env.session.reward
        if reward is not None and counts:
            self.scheduler.update(env.session.env_id, difficulty, reward.is_correct)
        if self.records is not None:
            self.records.write(env.record)


class EcomServerEnvironment(Environment[EcomAction, EcomObservation, EcomState]):
    """reset(env_id, difficulty, seed) starts an episode; step(one agent turn) plays it."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    REQUIRES_SINGLE_THREAD_EXECUTOR = True

    def __init__(self, deployment: Deployment) -> None:
        super().__init__()
        self._deployment = deployment
        self._env = EcomEnv(deployment.env_ids, catalog=deployment.catalog, search=deployment.search,
                            overrides=deployment.overrides, secret=deployment.secret, realiser=deployment.realiser)
        self._draw = random.SystemRandom()  # unspecified env or seed: the server picks, unpredictably
        self._started = False
        self._steps = 0
        self._difficulty = 0  # the current episode's, for the scheduler update once it is done
        self._key: tuple[str, int, int] = ("", 0, 0)  # the current episode's (env, d, seed)
        self._counts = True  # whether it feeds the curriculum (Deployment.feeds_curriculum at reset)
        self._last: Observation | None = None  # what the oracle acts on next
        self._oracle: Agent | None = None

    def reset(self, seed: int | None = None, episode_id: str | None = None, env_id: str | None = None,
              difficulty: int | str | None = ADAPTIVE, **unknown: Any) -> EcomObservation:
        """Start an episode (see :meth:`begin`)."""
        return _wire(self.begin(seed, episode_id, env_id, difficulty, **unknown))

    def begin(self, seed: int | None = None, episode_id: str | None = None, env_id: str | None = None,
              difficulty: int | str | None = ADAPTIVE, **unknown: Any) -> Observation:
        """Start an episode: ``env_id`` (default: drawn), ``difficulty`` (an int, or ``"adaptive"``: drawn
        from the server's window for that env), ``seed`` (default: drawn). ``(env_id, difficulty, seed)`` and
        the server's secret reproduce the episode byte for byte."""
        if unknown:
            raise ValueError(f"unknown reset arguments: {', '.join(sorted(unknown))}; "
                             "accepted: env_id, difficulty, seed")
        if episode_id is not None:
            raise ValueError("episode ids are chosen by the server (see the state's episode_id)")
        if env_id is None:
            env_id = self._draw.choice(self._deployment.env_ids)
        elif env_id not in self._deployment.env_ids:
            raise ValueError(f"env_id must be one of {', '.join(self._deployment.env_ids)}, "
                             f"got {short_text(repr(env_id), 60)}")
        if seed is None:
            seed = self._draw.getrandbits(31)
        level = self._resolve_difficulty(env_id, seed, difficulty)
        self._last = self._env.reset(env_id=env_id, difficulty=level, seed=seed)
        self._started, self._steps, self._oracle, self._difficulty = True, 0, None, level
        self._key = (env_id, level, seed)
        self._counts = self._deployment.feeds_curriculum(self._key)
        return self._last

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **kwargs: Any) -> EcomObservation:
        return _wire(await self.begin_async(seed, episode_id, **kwargs))

    async def step_async(self, action: EcomAction, timeout_s: float | None = None, **kwargs: Any) -> EcomObservation:
        return _wire(await self.play_async(action.turn, oracle=action.oracle))

    async def begin_async(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Observation:
        """:meth:`begin` from the event loop (see :meth:`_on_loop`)."""
        return await self._on_loop(self.begin, seed, episode_id, **kwargs)

    async def play_async(self, turn: Any, *, oracle: bool = False) -> Observation:
        """:meth:`play` from the event loop (see :meth:`_on_loop`)."""
        return await self._on_loop(self.play, turn, oracle=oracle)

    async def _on_loop(self, method: Callable[..., Observation], *args: Any, **kwargs: Any) -> Observation:
        """On the event loop, without a thread hand-off (see the module docstring), unless the shopper calls a
        model: then through its worker threads, so one session waiting on the model holds up no other."""
        offload = getattr(self._deployment.realiser, "offload", None)
        if offload is not None:
            observation: Observation = await offload(method, *args, **kwargs)
            return observation
        return method(*args, **kwargs)

    def _resolve_difficulty(self, env_id: str, seed: int, difficulty: object) -> int:
        if difficulty is None or difficulty == ADAPTIVE:
            return self._deployment.scheduler.sample(env_id, derive_rng("serve-difficulty", env_id, seed))
        if isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 0 <= difficulty <= MAX_DIFFICULTY:
            raise ValueError(f"difficulty must be an integer in 0..{MAX_DIFFICULTY} or 'adaptive', "
                             f"got {short_text(repr(difficulty), 60)}")
        return difficulty

    def step(self, action: EcomAction, timeout_s: float | None = None, **kwargs: Any) -> EcomObservation:
        """Play one agent turn (see :meth:`play`)."""
        return _wire(self.play(action.turn, oracle=action.oracle))

    def play(self, turn: Any, *, oracle: bool = False) -> Observation:
        """Play one agent turn (any JSON value) through the episode's parser (malformed output: reward -1,
        episode over); ``oracle``: the episode's oracle plays this turn instead."""
        if not self._started:
            raise EpisodeStateError("no episode: send reset first")
        if self._env.done:
            raise EpisodeStateError("the episode is over: send reset to start another")
        if oracle:
            turn = self._oracle_turn()
        self._last = self._env.step(turn)
        self._steps += 1
        if self._last.done:
            self._deployment.observe(self._env, self._difficulty, counts=self._counts)
        return self._last

    def _oracle_turn(self) -> Any:
        if not self._deployment.allow_oracle:
            raise PermissionError("oracle turns are disabled on this server (start it with --allow-oracle)")
        if self._oracle is None:
            self._oracle = self._env.oracle()
        assert self._last is not None
        return self._oracle.act(self._last)

    @property
    def state(self) -> EcomState:
        if not self._started:
            return EcomState()
        public = self._env.session.public_state()
        if public.done:
            self._deployment.disclose(self._key)
        return EcomState(episode_id=public.episode_id, step_count=self._steps, env_id=public.env_id,
                         turn=public.turn, turns_left=public.turns_left, done=public.done,
                         termination=public.termination, total_reward=public.reward, cart=public.cart,
                         record=json.loads(self._env.record.for_client().to_json()) if public.done else None)

    @property
    def mcp_client(self) -> EpisodeTools:
        """What openenv's MCP routes list this session's tools through (:mod:`ecomrlve.server.mcp`)."""
        return EpisodeTools(self.episode_tools)

    def episode_tools(self) -> list[dict[str, Any]] | None:
        """The current episode's tools (the OpenAI function schemas its reset observation carried); None before."""
        return self._env.session.first_observation.tools if self._started else None

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="ecomrlve", version=__version__,
            description=f"EcomRLVE-Gym: adaptive, verifiable e-commerce agent environments "
                        f"({', '.join(self._deployment.env_ids)}).")


def _wire(observation: Observation) -> EcomObservation:
    """The observation as openenv's generic routes send it."""
    return EcomObservation(messages=observation.messages, tools=observation.tools, info=observation.info,
                           done=observation.done, reward=observation.reward)
