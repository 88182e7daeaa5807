"""One server session: an openenv ``Environment`` over :class:`ecomrlve.episode.EcomEnv`.

Every session owns its own ``EcomEnv`` (its own episode, world and shopper: no mutable episode
state is shared) and borrows what one server shares: the catalog and its search engine, the
deployment secret and the one adaptive scheduler. Episodes are CPU-bound Python, so worker threads
would add no throughput, only GIL hand-offs and contention on the shared search engine: ``reset``
and ``step`` run on the server's event loop (``reset_async``/``step_async``), creating and closing
a session on one shared worker thread (``REQUIRES_SINGLE_THREAD_EXECUTOR``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from ecomrlve.actions import short_text
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.difficulty import MAX_DIFFICULTY
from ecomrlve.difficulty.scheduler import AdaptiveScheduler
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Agent, Observation
from ecomrlve.rng import derive_rng
from ecomrlve.server.models import EcomAction, EcomObservation, EcomState

#: ``reset(difficulty=ADAPTIVE)`` (the default) draws from the server's scheduler window
ADAPTIVE = "adaptive"


class EpisodeStateError(RuntimeError):
    """A request that does not fit the session's episode (step before reset, step after done)."""


@dataclass
class Deployment:
    """What every session of one server shares (read-only but for the thread-safe scheduler)."""

    env_ids: tuple[str, ...]
    catalog: Catalog
    search: SearchEngine
    secret: str
    scheduler: AdaptiveScheduler
    overrides: dict[str, Any] = field(default_factory=dict)
    allow_oracle: bool = False

    def observe(self, env: EcomEnv) -> None:
        """The one scheduler update of a finished episode (the curriculum every session feeds)."""
        record = env.record
        if record.reward is not None:
            self.scheduler.update(record.env_id, record.difficulty, record.reward.is_correct)


class EcomServerEnvironment(Environment[EcomAction, EcomObservation, EcomState]):
    """reset(env_id, difficulty, seed) starts an episode; step(one agent turn) plays it."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    REQUIRES_SINGLE_THREAD_EXECUTOR = True

    def __init__(self, deployment: Deployment) -> None:
        super().__init__()
        self._deployment = deployment
        self._env = EcomEnv(deployment.env_ids, catalog=deployment.catalog, search=deployment.search,
                            overrides=deployment.overrides, secret=deployment.secret)
        self._draw = random.SystemRandom()  # unspecified env or seed: the server picks, unpredictably
        self._started = False
        self._steps = 0
        self._last: Observation | None = None  # what the oracle acts on next
        self._oracle: Agent | None = None

    def reset(self, seed: int | None = None, episode_id: str | None = None, env_id: str | None = None,
              difficulty: int | str | None = ADAPTIVE, **unknown: Any) -> EcomObservation:
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
        observation = self._env.reset(env_id=env_id, difficulty=self._difficulty(env_id, seed, difficulty),
                                      seed=seed)
        self._started, self._steps, self._oracle = True, 0, None
        return self._reply(observation)

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **kwargs: Any) -> EcomObservation:
        """On the event loop, without a thread hand-off (see the module docstring)."""
        return self.reset(seed, episode_id, **kwargs)

    async def step_async(self, action: EcomAction, timeout_s: float | None = None, **kwargs: Any) -> EcomObservation:
        return self.step(action, timeout_s, **kwargs)

    def _difficulty(self, env_id: str, seed: int, difficulty: object) -> int:
        if difficulty is None or difficulty == ADAPTIVE:
            return self._deployment.scheduler.sample(env_id, derive_rng("serve-difficulty", env_id, seed))
        if isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 0 <= difficulty <= MAX_DIFFICULTY:
            raise ValueError(f"difficulty must be an integer in 0..{MAX_DIFFICULTY} or 'adaptive', "
                             f"got {short_text(repr(difficulty), 60)}")
        return difficulty

    def step(self, action: EcomAction, timeout_s: float | None = None, **kwargs: Any) -> EcomObservation:
        """Play one agent turn through the episode's parser (malformed output: reward -1, episode over)."""
        if not self._started:
            raise EpisodeStateError("no episode: send reset first")
        if self._env.done:
            raise EpisodeStateError("the episode is over: send reset to start another")
        turn = self._oracle_turn() if action.oracle else action.turn
        observation = self._env.step(turn)  # type: ignore[arg-type]  # any JSON value: the parser judges it
        self._steps += 1
        if observation.done:
            self._deployment.observe(self._env)
        return self._reply(observation)

    def _oracle_turn(self) -> Any:
        if not self._deployment.allow_oracle:
            raise PermissionError("oracle turns are disabled on this server (start it with --allow-oracle)")
        if self._oracle is None:
            self._oracle = self._env.oracle()
        assert self._last is not None
        return self._oracle.act(self._last)

    def _reply(self, observation: Observation) -> EcomObservation:
        self._last = observation
        return EcomObservation(messages=observation.messages, tools=observation.tools, info=observation.info,
                               done=observation.done, reward=observation.reward)

    @property
    def state(self) -> EcomState:
        if not self._started:
            return EcomState()
        public = self._env.session.public_state()
        return EcomState(episode_id=public.episode_id, step_count=self._steps, env_id=public.env_id,
                         turn=public.turn, turns_left=public.turns_left, done=public.done,
                         termination=public.termination, total_reward=public.reward, cart=public.cart,
                         record=self._env.record.to_json() if public.done else None)

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="ecomrlve", version="1.0.0",
            description=f"EcomRLVE-Gym: adaptive, verifiable e-commerce agent environments "
                        f"({', '.join(self._deployment.env_ids)}).")
