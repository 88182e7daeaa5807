"""Gymnasium API: ``gymnasium.make("ecomrlve/CART-v0", difficulty=3)``, one id per environment and collection.

Importing this module registers ``ecomrlve/<ID>-v0`` for every registered environment and every
collection (``ecomrlve/C8-v0`` draws its environment per episode). Gymnasium 1.x has no plugin
discovery, so import it first, or name it in the id: ``gymnasium.make("ecomrlve.integrations.gymnasium:ecomrlve/CART-v0")``.
Environments registered later are added by :func:`register_gym_envs`.

The spaces are text (:class:`gymnasium.spaces.Text` over every Basic Multilingual Plane character):

* **observation**: the JSON object ``{"messages": [...]}`` of the chat messages that are new since the
  last step, in OpenAI format (system prompt and the shopper's opening on reset, then tool results and
  the shopper's reply); on reset it also holds ``"tools"``, the OpenAI function schemas. Characters
  outside the BMP (emoji) are written as JSON ``\\uXXXX`` surrogate escapes, so ``json.loads`` gives
  the original text back. The space is :class:`ObservationText`, a ``Text`` that ``AsyncVectorEnv``
  (``make_vec(..., vectorization_mode="async")``) passes through shared memory correctly.
* **action**: one agent turn as text: plain words to the shopper, text with ``<tool_call>`` blocks, or
  a JSON action object ``{"message": ..., "tool_calls": [{"name": ..., "arguments": {...}}]}``.
  ``step`` also takes the structured wire formats (an OpenAI assistant message ``dict``, an
  ``AgentAction``), which keep the agent's own tool-call ids. The session parses every turn; a
  malformed one ends the episode with reward -1 (``info["invalid_reason"]`` says why).

``reward`` is 0 until the episode ends, then ``r_total``. ``terminated`` is True when the episode
reached an end of its own (``answered``, ``user_gave_up``, ``invalid_output``); ``truncated`` when
it ran out of turns (``turn_budget``). ``info`` holds turn counters, and at the end the reward
breakdown; never the hidden goal. The finished episode's record (goal included, for the trainer)
is ``env.unwrapped.record``.

A truncation from outside ends the episode the way ``session.finish`` does: scored as it stands
(an unanswered task gets ``r_task`` -1), termination ``"truncated"``, record written, curriculum fed.
Each registered id declares ``max_episode_steps`` (:func:`step_limit`: four times the largest turn
budget its environments have with the default axes, since the shopper's own turns do not count
against the budget), so the ``TimeLimit`` that ``gymnasium.make`` adds leaves the env's own budget to
end episodes; ``make(id, max_episode_steps=n)`` sets another (do, with a larger ``T_max`` override). Every made env is wrapped, outside that ``TimeLimit``, in
:class:`ScoreTruncation`, so the step a limit cuts returns ``r_total`` and the final ``info``. A
wrapper applied by hand outside it (``TimeLimit(env, 2)``) is one the env cannot see: that step's
reward stays 0, and reading ``env.unwrapped.record`` ends the episode there, scored as it stands
(or wrap once more: ``ScoreTruncation(TimeLimit(env, 2))``).

Seeding follows Gymnasium: ``reset(seed=s)`` reseeds the env's generator, ``reset()`` continues it
(from OS entropy if never seeded); each episode's environment, seed and (adaptive) difficulty are
drawn from it, so the same seeds and secret give the same episodes in any process.
"""

from __future__ import annotations

import copy
import functools
import json
import multiprocessing
import random
import re
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
    from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the Gymnasium API needs gymnasium: pip install 'ecomrlve[gym]'") from exc

from ecomrlve.actions import AgentAction
from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.schema import Catalog
from ecomrlve.difficulty import MAX_DIFFICULTY, Difficulty
from ecomrlve.difficulty.scheduler import AdaptiveScheduler
from ecomrlve.envs import env_collections, resolve_env_ids
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Observation
from ecomrlve.registry import env_spec, env_specs
from ecomrlve.runner import Curriculum, Task
from ecomrlve.session import MAX_ACTION_CHARS, EpisodeRecord

NAMESPACE = "ecomrlve"
VERSION = 0
ENTRY_POINT = "ecomrlve.integrations.gymnasium:EcomGymEnv"
#: the longest observation the space admits; a reset (prompt + tool schemas) is ~10k characters
MAX_OBSERVATION_CHARS = 1 << 20
#: the endings that mean "out of time" (Gymnasium's ``truncated``); every other ending terminates the episode
TRUNCATED = frozenset({"turn_budget"})
#: the termination of an episode a wrapper truncated (e.g. ``TimeLimit``): given to ``session.finish``
TRUNCATED_OUTSIDE = "truncated"
#: registered ``max_episode_steps`` per turn of the largest budget: room for the shopper's own turns on top
STEPS_PER_BUDGET_TURN = 4
#: what ``reset(options=...)`` may fix for one episode
RESET_OPTIONS = frozenset({"env_id", "difficulty"})
#: every Basic Multilingual Plane character except the surrogate halves: any text, any language, JSON
CHARSET = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class ObservationText(spaces.Text):
    """The observation space: a ``Text`` space that ``AsyncVectorEnv``'s shared memory carries correctly.

    Gymnasium reads a ``Text`` space's shared memory once, when the vector env starts, so with its
    default ``shared_memory=True`` every later observation came back as that first read: a million NUL
    characters. For this space the shared memory holds each sub-env's latest text as its length and
    UTF-32 code points, and is read when the vector env hands observations out (its ``copy=True``
    default: a tuple of strings, as ``SyncVectorEnv`` gives; with ``copy=False`` a :class:`SharedTexts`
    view that the next step overwrites, as shared-memory arrays are).
    """


class SharedTexts(Sequence[str]):
    """The sub-envs' latest observation texts in an ``AsyncVectorEnv``'s shared memory, read on access."""

    def __init__(self, buffer: Any, n: int, max_length: int) -> None:
        self._slots = np.frombuffer(buffer.get_obj(), dtype=np.uint32).reshape(n, 1 + max_length)

    def __len__(self) -> int:
        return len(self._slots)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        slot = self._slots[index]
        return slot[1:1 + int(slot[0])].tobytes().decode("utf-32-le", "surrogatepass")

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)  # what AsyncVectorEnv(copy=True) hands out: the texts as they are now

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"


@create_shared_memory.register(ObservationText)
def _create_observation_memory(space: ObservationText, n: int = 1, ctx: Any = multiprocessing) -> Any:
    return ctx.Array("I", n * (1 + space.max_length), lock=True)


@read_from_shared_memory.register(ObservationText)
def _read_observation_memory(space: ObservationText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(shared_memory, n, space.max_length)


@write_to_shared_memory.register(ObservationText)
def _write_observation_memory(space: ObservationText, index: int, value: str, shared_memory: Any) -> None:
    codes = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if len(codes) > space.max_length:
        raise ValueError(f"observation of {len(codes)} characters is over the space's {space.max_length}")
    slot = np.frombuffer(shared_memory.get_obj(), dtype=np.uint32)[index * (1 + space.max_length):]
    slot[1:1 + len(codes)] = codes
    slot[0] = len(codes)


_TEXT_SPACES: dict[tuple[int, type[spaces.Text]], spaces.Text] = {}  # one set of character tables per kind and length


def text_space(max_length: int, kind: type[spaces.Text] = spaces.Text) -> spaces.Text:
    """A ``Text`` space (or ``kind``) over :data:`CHARSET`; instances share the (11 MB) character tables, not the
    sampler."""
    shared = _TEXT_SPACES.get((max_length, kind))
    if shared is None:
        shared = _TEXT_SPACES[max_length, kind] = kind(max_length, min_length=0, charset=CHARSET)
    space = copy.copy(shared)
    space.seed()  # its own sampling stream (from OS entropy until the caller seeds it)
    return space


@functools.cache
def shared_catalog(spec: str) -> Catalog:
    """One catalog (and so one search engine) per catalog spec in this process."""
    return load_catalog(spec)


def gym_id(name: str) -> str:
    """``"CART"`` -> ``"ecomrlve/CART-v0"``."""
    return f"{NAMESPACE}/{name}-v{VERSION}"


def render_observation(observation: Observation, *, with_tools: bool) -> str:
    """The observation text: ``{"messages": [...]}`` (+ ``"tools"`` on reset), astral characters escaped."""
    payload: dict[str, Any] = {"messages": observation.messages}
    if with_tools:
        payload["tools"] = observation.tools or []
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return _ASTRAL.sub(lambda m: json.dumps(m.group())[1:-1], text)


def observation_from_text(text: str, info: dict[str, Any], *, reward: float = 0.0,
                          done: bool = False) -> Observation:
    """An observation text back as the :class:`~ecomrlve.protocol.Observation` the built-in agents read."""
    payload = json.loads(text)
    return Observation(messages=payload["messages"], tools=payload.get("tools"), done=done, reward=reward, info=info)


class EcomGymEnv(gymnasium.Env[str, str]):
    """One or more environments behind the Gymnasium API (see the module docstring for the spaces).

    Args:
        env_ids: an environment id, a collection or a list (each episode draws one uniformly).
        difficulty: 0..15, or ``"adaptive"``: each episode's difficulty is drawn from ``scheduler``'s
            window for its environment, and the outcome updates it when the episode ends.
        scheduler: the adaptive scheduler to draw from and feed (default: a fresh one over ``env_ids``);
            pass one object to several envs to share one curriculum.
        catalog: a catalog spec as the CLI takes it (loaded once per process and shared by every env
            made with it, so vector envs and ``env.spec.make()`` cost no second load), or a ``Catalog``.
        overrides, secret: as for :class:`~ecomrlve.episode.EcomEnv`. Unset, the
            installation's secret: episodes reproduce on this machine.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, env_ids: str | list[str] | tuple[str, ...] = "CART", *, difficulty: int | str = 0,
                 scheduler: AdaptiveScheduler | None = None, catalog: Catalog | str = "default",
                 overrides: dict[str, Any] | None = None, secret: str | None = None) -> None:
        catalog = shared_catalog(catalog) if isinstance(catalog, str) else catalog
        self._env = EcomEnv(env_ids, catalog=catalog, overrides=overrides, secret=secret)
        self._difficulty = None if difficulty == "adaptive" else _checked_difficulty(difficulty)
        self.scheduler: AdaptiveScheduler | None = None
        if self._difficulty is None:
            self.scheduler = scheduler or AdaptiveScheduler(self._env.env_ids)
        self.observation_space = text_space(MAX_OBSERVATION_CHARS, ObservationText)
        self.action_space = text_space(MAX_ACTION_CHARS)
        self._episodes = 0
        self._task: Task | None = None
        self._curriculum: Curriculum | None = None

    @property
    def env_ids(self) -> tuple[str, ...]:
        return self._env.env_ids

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """A new episode; ``options`` may fix ``env_id`` (one of this env's) and ``difficulty`` (0..15) for it."""
        super().reset(seed=seed)
        options = options or {}
        unknown = sorted(set(options) - RESET_OPTIONS)
        if unknown:
            raise ValueError(f"unknown reset options {unknown}; accepted: {sorted(RESET_OPTIONS)}")
        env_id = options.get("env_id") or self.env_ids[int(self.np_random.integers(len(self.env_ids)))]
        difficulty = (_checked_difficulty(options["difficulty"], "options['difficulty']", adaptive=False)
                      if "difficulty" in options else self._difficulty)
        self._task = Task(env_id, difficulty, self._episodes,
                          int(self.np_random.integers(2**31)))
        stream = random.Random(int(self.np_random.integers(2**63)))
        self._curriculum = Curriculum(self.scheduler, lambda task: stream) if self.scheduler else Curriculum()
        self._episodes += 1
        observation = self._env.reset(env_id=self._task.env_id, difficulty=self._curriculum.difficulty(self._task),
                                      seed=self._task.seed)
        return render_observation(observation, with_tools=True), dict(observation.info)

    def step(self, action: str | AgentAction | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """One agent turn; see the module docstring for how ``terminated`` and ``truncated`` are set."""
        if self._task is None or self._curriculum is None:
            raise RuntimeError("call reset() first")
        observation = self._env.step(action)
        terminated = truncated = False
        if observation.done:
            record = self._env.record
            truncated = record.reward is not None and record.reward.termination in TRUNCATED
            terminated = not truncated
            self._curriculum.observe(self._task, record)
        return (render_observation(observation, with_tools=False), observation.reward, terminated, truncated,
                dict(observation.info))

    def finish(self, reason: str = TRUNCATED_OUTSIDE) -> tuple[float, dict[str, Any]] | None:
        """End the running episode from outside (a wrapper truncated it), as ``session.finish(reason)`` does:
        scored as it stands, record written, curriculum fed. Returns the final ``(reward, info)``, or None
        when no episode is running (none begun, or it already ended on its own)."""
        if self._task is None or self._curriculum is None or self._env.done:
            return None
        observation = self._env.session.finish(reason)
        self._curriculum.observe(self._task, self._env.record)
        return observation.reward, dict(observation.info)

    @property
    def record(self) -> EpisodeRecord:
        """The finished episode's record, hidden goal included: for the trainer, never for the policy.

        An episode still running was cut short by a wrapper this env cannot see (a ``TimeLimit``
        applied by hand): reading its record ends it first, scored as it stands (see :meth:`finish`).
        """
        self.finish()
        return self._env.record

    @property
    def ecom_env(self) -> EcomEnv:
        """The underlying :class:`~ecomrlve.episode.EcomEnv` (its ``audit()`` is for oracles and tests)."""
        return self._env


def _checked_difficulty(difficulty: object, what: str = "difficulty", *, adaptive: bool = True) -> int:
    """``difficulty`` as a level; ``adaptive`` says whether the message offers ``'adaptive'`` (the env's own
    setting) or not (one episode's ``options``, which fix a level)."""
    if isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 0 <= difficulty <= MAX_DIFFICULTY:
        alternative = " or 'adaptive'" if adaptive else " (adaptive difficulty is set when the env is made)"
        raise ValueError(f"{what} must be an integer in 0..{MAX_DIFFICULTY}{alternative}, got {difficulty!r}")
    return difficulty


class ScoreTruncation(gymnasium.Wrapper[str, str, str, str], gymnasium.utils.RecordConstructorArgs):
    """Score an episode that a wrapper inside this one truncated: the step returns ``r_total`` and the
    final ``info`` (termination ``"truncated"``) instead of 0. Every registered id applies it outside
    the ``TimeLimit`` of ``gymnasium.make``; wrap a hand-applied limit in it the same way."""

    def __init__(self, env: gymnasium.Env[str, str]) -> None:
        gymnasium.utils.RecordConstructorArgs.__init__(self)
        gymnasium.Wrapper.__init__(self, env)

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """The step below; a truncation of a running episode ends it, scored (:meth:`EcomGymEnv.finish`)."""
        observation, reward, terminated, truncated, info = self.env.step(action)  # any wire format, as the env's
        base = self.env.unwrapped
        if truncated and not terminated and isinstance(base, EcomGymEnv):
            ending = base.finish()
            if ending is not None:
                reward, info = ending
        return observation, float(reward), terminated, truncated, info


def step_limit(name: str) -> int:
    """The ``max_episode_steps`` of an id: :data:`STEPS_PER_BUDGET_TURN` times the largest turn budget any of
    its environments has at any difficulty with the default axes (JOURNEY's is the sum over its intents)."""
    hardest = Difficulty.at(MAX_DIFFICULTY)

    def budget(env_id: str) -> int:
        intents = hardest.journey_intents if "journey_intents" in env_spec(env_id).axes else 1
        return hardest.T_max * intents

    return STEPS_PER_BUDGET_TURN * max(budget(env_id) for env_id in resolve_env_ids(name))


def register_gym_envs() -> list[str]:
    """Register an id for every registered environment and collection not registered yet; returns all the ids."""
    names = list(dict.fromkeys([*(spec.id for spec in env_specs()), *env_collections()]))
    for name in names:
        if gym_id(name) not in gymnasium.registry:
            gymnasium.register(id=gym_id(name), entry_point=ENTRY_POINT, kwargs={"env_ids": name},
                               max_episode_steps=step_limit(name),
                               additional_wrappers=(ScoreTruncation.wrapper_spec(),))
    return [gym_id(name) for name in names]


GYM_IDS = register_gym_envs()
