"""Playground episodes: one per "Reset", owned by the page that made it, dropped when idle.

Each episode lives behind an opaque random handle that only the page which reset it knows, so
two tabs (or two visitors) never share one. The store is bounded: episodes idle for longer than
``idle_seconds`` expire; a visitor (client address) holds at most ``max_episodes // 4``, beyond which
its own least recently used one is dropped, and beyond ``max_episodes`` in all the drop comes from
the visitor holding the most, so one visitor cannot evict everyone else's episodes.

What a view holds is :meth:`EpisodeSession.public_state` plus the episode's settings; the
hidden goal, the verifier's details and the reward breakdown join it only once the episode is
over (from :meth:`EpisodeSession.record`).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ecomrlve.actions import AgentAction, InvalidActionError, parse_action, wire_form
from ecomrlve.catalog.schema import Catalog
from ecomrlve.envs import environment_axes
from ecomrlve.envs.explain import explain_lines
from ecomrlve.episode import EcomEnv, shared_search_engine
from ecomrlve.playground.store import IdleStore
from ecomrlve.protocol import Agent, Observation
from ecomrlve.registry import env_spec, env_specs
from ecomrlve.session import resolve_secret, secret_fingerprint

MAX_DIFFICULTY = 15
MAX_SEED = 2**31 - 1


class EpisodeNotFound(KeyError):
    """No live episode has this handle (never made, expired, or evicted)."""


class EmptyTurn(ValueError):
    """A turn with no message and no tool call: the session would spend a turn on it (see :func:`is_empty_turn`)."""


def is_empty_turn(raw: AgentAction | str | dict[str, Any]) -> bool:
    """Whether ``raw`` parses to a turn that says nothing and calls nothing. The session plays such a turn (an
    agent that outputs nothing loses the turn); a person pressing "Send" on an empty form means no turn at
    all. A malformed turn is not empty: the session ends it at -1, as for any agent."""
    try:
        action = parse_action(raw, turn=0)
    except InvalidActionError:
        return False
    return not action.message and not action.tool_calls


class HintUnavailable(RuntimeError):
    """The oracle cannot follow this episode any more (it failed on a turn it did not plan)."""


@dataclass
class PlayEpisode:
    """One visitor's episode: the environment running it and the oracle that gives hints."""

    env: EcomEnv
    difficulty: int
    seed: int
    catalog: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    _unseen: list[Observation] = field(default_factory=list)  # observations the oracle has not read yet
    _oracle: Agent | None = None
    _hint: tuple[int, Any] | None = None  # (turn, action): one hint per turn, however often it is asked for
    _oracle_lost: str | None = None  # why the oracle stopped following the episode

    @property
    def handle(self) -> str:
        return self.env.session.episode_id

    def step(self, raw: AgentAction | str | dict[str, Any]) -> Observation:
        """One agent turn (any wire format) through the session's parser: malformed input ends it at -1.

        Text is Hermes ``<tool_call>`` text or a JSON action, except an OpenAI assistant message
        pasted as text (a JSON object with a ``role``), which is that message.
        """
        action = openai_message(raw) if isinstance(raw, str) else raw
        if is_empty_turn(action):
            raise EmptyTurn("an empty turn (no message, no tool call) is not sent: write a message to the shopper "
                            "or add a tool call")
        observation = self.env.step(action)
        self._unseen.append(observation)
        return observation

    def hint(self) -> Any:
        """The oracle's next action in wire form (an OpenAI assistant message).

        The oracle reads every observation the visitor got, in order, and follows its own plan
        from what the tools showed; after a detour it carries on from there. Oracles are written
        for their own episodes: one that fails on a turn it did not plan (JOURNEY's routes tool
        results by the call ids it chose) raises :class:`HintUnavailable` from then on.
        """
        session = self.env.session
        if session.done:
            raise RuntimeError("the episode is over")
        if self._oracle_lost is not None:
            raise HintUnavailable(self._oracle_lost)
        if self._hint is None or self._hint[0] != session.turns:
            if self._oracle is None:
                self._oracle = session.audit().oracle()
                self._unseen.insert(0, session.first_observation)
            action: Any = None
            try:
                for observation in self._unseen:  # it answers each; only the answer to the latest is the hint
                    action = self._oracle.act(observation)
            except Exception as exc:  # any failure of a scripted solver off its own path
                self._oracle_lost = (f"the {session.env_id} oracle cannot follow this episode from here "
                                     f"({type(exc).__name__}); its hints work when played as given, e.g. "
                                     "through the raw box")
                raise HintUnavailable(self._oracle_lost) from None
            self._unseen.clear()
            self._hint = (session.turns, wire_form(action))
        return self._hint[1]

    def view(self) -> dict[str, Any]:
        """What the page shows: the public state, the axes in force, and, once over, the outcome, the goal and
        why the verdict (:func:`~ecomrlve.envs.explain.explain_lines`)."""
        session = self.env.session
        state = session.public_state()
        axes = session.audit().difficulty.as_dict()  # the settings of the episode, not its goal
        view: dict[str, Any] = {
            "episode": state.episode_id, "env_id": state.env_id, "difficulty": self.difficulty, "seed": self.seed,
            "catalog": self.catalog,
            "axes": {name: axes[name] for name in environment_axes(session.env_id) if name in axes},
            "tools": self.env.session.first_observation.tools, "messages": state.messages, "cart": state.cart,
            "turn": state.turn, "user_caused_turns": state.user_caused_turns, "turns_left": state.turns_left,
            "done": state.done, "termination": state.termination, "reward": state.reward,
        }
        if state.done:
            record = session.record()
            view["outcome"] = {"reward": record.reward.model_dump(mode="json") if record.reward else None,
                               "goal": record.goal, "explanation": explain_lines(record)}
        return view


def openai_message(text: str) -> str | dict[str, Any]:
    """``text`` as the OpenAI message it spells, if it is one (a JSON object with ``role``); else ``text``."""
    if not text.lstrip().startswith("{"):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text  # not JSON after all: the session's parser names what is wrong
    return value if isinstance(value, dict) and "role" in value else text


class EpisodeStore:
    """The live playground episodes, by handle: bounded, expiring when idle (see :class:`IdleStore`)."""

    def __init__(self, catalogs: Mapping[str, Catalog], *, secret: str | None = None, idle_seconds: float = 1800.0,
                 max_episodes: int = 256, clock: Callable[[], float] = time.monotonic) -> None:
        if not catalogs:
            raise ValueError("the playground needs at least one catalog")
        self.catalogs = dict(catalogs)
        for catalog in self.catalogs.values():
            shared_search_engine(catalog)  # index built before the first visitor, never by two threads at once
        self.secret = resolve_secret(secret)  # one for every episode: a seed brings its episode back
        self.secret_fingerprint = secret_fingerprint(self.secret)
        self._episodes: IdleStore[PlayEpisode] = IdleStore(idle_seconds=idle_seconds, max_entries=max_episodes,
                                                           owner_entries=max(1, max_episodes // 4), clock=clock)
        self._seeds = random.SystemRandom()  # "random seed": a visitor's choice, not part of any episode key

    @staticmethod
    def env_ids() -> list[str]:
        return [spec.id for spec in env_specs()]

    def create(self, env_id: str, difficulty: int, seed: int | None = None, catalog: str | None = None, *,
               visitor: str = "") -> PlayEpisode:
        """Reset a new episode for ``visitor``; raises ``ValueError`` (unknown env or catalog, bad range,
        unsupported catalog)."""
        catalog = catalog or next(iter(self.catalogs))
        if catalog not in self.catalogs:
            raise ValueError(f"unknown catalog {catalog!r}; loaded: {', '.join(self.catalogs)}")
        if not 0 <= difficulty <= MAX_DIFFICULTY:
            raise ValueError(f"difficulty must be 0-{MAX_DIFFICULTY}, got {difficulty}")
        if seed is None:
            seed = self._seeds.randint(0, MAX_SEED)
        env_spec(env_id)  # "unknown environment ... Did you mean"
        env = EcomEnv(env_id, catalog=self.catalogs[catalog], secret=self.secret)
        env.reset(env_id=env_id, difficulty=difficulty, seed=seed)
        episode = PlayEpisode(env, difficulty, seed, catalog)
        self._episodes.add(episode, episode.handle, owner=visitor)
        return episode

    def get(self, handle: str) -> PlayEpisode:
        """The live episode ``handle`` names (and mark it used); :class:`EpisodeNotFound` otherwise."""
        episode = self._episodes.get(handle)
        if episode is None:
            raise EpisodeNotFound(handle)
        return episode

    def __len__(self) -> int:
        return len(self._episodes)
