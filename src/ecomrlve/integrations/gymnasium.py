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
  the original text back.
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

Seeding follows Gymnasium: ``reset(seed=s)`` reseeds the env's generator, ``reset()`` continues it
(from OS entropy if never seeded); each episode's environment, seed and (adaptive) difficulty are
drawn from it, so the same seeds and secret give the same episodes in any process.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import re
from typing import Any

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the Gymnasium API needs gymnasium: pip install 'ecomrlve[gym]'") from exc

from ecomrlve.actions import AgentAction
from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.schema import Catalog
from ecomrlve.difficulty import MAX_DIFFICULTY
from ecomrlve.difficulty.scheduler import AdaptiveScheduler
from ecomrlve.envs import env_collections
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Observation
from ecomrlve.registry import env_specs
from ecomrlve.runner import Curriculum, Task
from ecomrlve.session import MAX_ACTION_CHARS, EpisodeRecord

NAMESPACE = "ecomrlve"
VERSION = 0
ENTRY_POINT = "ecomrlve.integrations.gymnasium:EcomGymEnv"
#: the longest observation the space admits; a reset (prompt + tool schemas) is ~10k characters
MAX_OBSERVATION_CHARS = 1 << 20
#: the endings that mean "out of time" (Gymnasium's ``truncated``); every other ending terminates the episode
TRUNCATED = frozenset({"turn_budget"})
#: what ``reset(options=...)`` may fix for one episode
RESET_OPTIONS = frozenset({"env_id", "difficulty"})
#: every Basic Multilingual Plane character except the surrogate halves: any text, any language, JSON
CHARSET = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@functools.cache
def _shared_text_space(max_length: int) -> spaces.Text:
    return spaces.Text(max_length, min_length=0, charset=CHARSET)


def text_space(max_length: int) -> spaces.Text:
    """A ``Text`` space over :data:`CHARSET`; instances share the (11 MB) character tables, not the sampler."""
    space = copy.copy(_shared_text_space(max_length))
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
        self.observation_space = text_space(MAX_OBSERVATION_CHARS)
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

    @property
    def record(self) -> EpisodeRecord:
        """The finished episode's record, hidden goal included: for the trainer, never for the policy."""
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


def register_gym_envs() -> list[str]:
    """Register an id for every registered environment and collection not registered yet; returns all the ids."""
    names = list(dict.fromkeys([*(spec.id for spec in env_specs()), *env_collections()]))
    for name in names:
        if gym_id(name) not in gymnasium.registry:
            gymnasium.register(id=gym_id(name), entry_point=ENTRY_POINT, kwargs={"env_ids": name})
    return [gym_id(name) for name in names]


GYM_IDS = register_gym_envs()
