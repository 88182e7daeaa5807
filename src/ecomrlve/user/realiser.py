"""Surface realisers: *how* the simulated user says a dialogue act.

:class:`TemplateRealiser` (the default) picks among many phrasings and adds noise at
``p_noise(d)``. Any other realiser (e.g. an LLM over an OpenAI-compatible endpoint) implements
the same :class:`Realiser` protocol and plugs in without touching the dialogue manager. A
:class:`RealiserFactory` builds one realiser per episode from an :class:`EpisodeContext` (the
episode key, its noise level and the dialogue so far), which is what a realiser needs that
phrases a message in context.

Every list of phrasings is split in two disjoint halves (:data:`PHRASINGS`): ``train`` takes
the even positions, ``eval`` the odd ones, so an agent evaluated on the ``eval`` set meets
wording it was not trained on.
"""

from __future__ import annotations

import contextvars
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from ecomrlve.catalog.schema import Catalog

from ecomrlve.registry import env_specs, load
from ecomrlve.user import acts as A
from ecomrlve.user.noise import add_noise


class Realiser(Protocol):
    def realise(self, acts: tuple[A.DialogueAct, ...], rng: random.Random) -> str:
        """One message saying every act, in order."""
        ...


Phrasing = Literal["train", "eval"]
PHRASINGS: tuple[Phrasing, ...] = ("train", "eval")
_T = TypeVar("_T")
_phrasing: contextvars.ContextVar[Phrasing] = contextvars.ContextVar("phrasing", default="train")


def phrasing_options(options: Sequence[_T], phrasing: Phrasing) -> Sequence[_T]:
    """The half of ``options`` that belongs to ``phrasing`` (train: even positions, eval: odd)."""
    return options[PHRASINGS.index(phrasing)::2]


def pick(rng: random.Random, options: Sequence[_T]) -> _T:
    """One of ``options`` from the phrasing set of the realiser now running (train by default)."""
    return rng.choice(phrasing_options(options, _phrasing.get()))


@dataclass(frozen=True)
class EpisodeContext:
    """What a per-episode realiser is given.

    ``history()`` is the conversation the shopper has seen so far (the agent's messages and its
    own, as ``{"role", "content"}``), including a question being asked through ``ask_user``.
    ``hidden_goal()`` is the episode's hidden goal as JSON data, for checks in code only (what
    a message must not say): it must never reach a model's prompt or the agent.
    """

    key: tuple[Any, ...]  # (env_id, d, seed, secret): seeds the realiser's own random streams
    env_id: str
    difficulty: int
    p_noise: float
    catalog: Catalog
    history: Callable[[], list[dict[str, str]]]
    hidden_goal: Callable[[], Any]


class RealiserFactory(Protocol):
    def for_episode(self, context: EpisodeContext) -> Realiser:
        """The realiser of one episode."""
        ...


REDRAWS = 6  # phrasings tried per act to avoid a sentence the message already has
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    """The sentences of a message (split after . ! ? followed by a space)."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def join_words(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass(frozen=True)
class ActTemplates:
    """How one family of dialogue acts is phrased: which acts, their text, and the values noise spares.

    An environment's registry spec names the ``ActTemplates`` of its simulated user's acts
    (``templates="module:NAME"``); :class:`TemplateRealiser` dispatches on them.
    """

    acts: type | UnionType
    text: Callable[[Any, random.Random], str]
    protected: Callable[[Any], tuple[str, ...]] = lambda act: ()


class TemplateRealiser:
    """Templates with several phrasings per act (from one phrasing set), plus typo/abbreviation/slang noise."""

    def __init__(self, p_noise: float = 0.0, phrasing: Phrasing = "train") -> None:
        if phrasing not in PHRASINGS:
            raise ValueError(f"phrasing must be one of {PHRASINGS}, got {phrasing!r}")
        self.p_noise = p_noise
        self.phrasing = phrasing

    def realise(self, acts: tuple[A.DialogueAct, ...], rng: random.Random) -> str:
        """Phrase each act, never repeating a sentence within the message (another phrasing is
        drawn, and a filler sentence that still repeats is left out), then add the message's noise."""
        token = _phrasing.set(self.phrasing)
        try:
            return self._realise(acts, rng)
        finally:
            _phrasing.reset(token)

    def record(self) -> dict[str, Any] | None:
        """What an episode record notes about this shopper, for replay (None: the default train set)."""
        return None if self.phrasing == "train" else {"realiser": "template", "phrasing": self.phrasing}

    def _realise(self, acts: tuple[A.DialogueAct, ...], rng: random.Random) -> str:
        said: set[str] = set()
        parts: list[str] = []
        templates = templates_each(acts)
        for act, phrasings in zip(acts, templates):
            phrase = phrasings.text
            for _ in range(REDRAWS):
                split = sentences(phrase(act, rng))
                if not said or not any(s.lower() in said for s in split):
                    break
            fresh = [s for s in split if s.lower() not in said] if said else split
            said.update(s.lower() for s in fresh)
            parts.append(" ".join(fresh))
        protected = tuple(v for act, phrasings in zip(acts, templates) for v in phrasings.protected(act))
        return add_noise(" ".join(p for p in parts if p), self.p_noise, rng, protected)


@dataclass(frozen=True)
class TemplateShopper:
    """The template realiser per episode: noise at the episode's ``p_noise``, phrasings from ``phrasing``."""

    phrasing: Phrasing = "train"

    def for_episode(self, context: EpisodeContext) -> TemplateRealiser:
        return TemplateRealiser(context.p_noise, self.phrasing)


def protected_values(acts: Iterable[A.DialogueAct]) -> tuple[str, ...]:
    """The values the acts must convey verbatim (noise spares them; an LLM message must keep them)."""
    acts = tuple(acts)
    return tuple(v for act, templates in zip(acts, templates_each(acts)) for v in templates.protected(act))


def templates_for(act: Any) -> ActTemplates:
    """The templates that phrase ``act``: the shared ones, or those of a registered environment."""
    return templates_each((act,))[0]


def templates_each(acts: Iterable[Any]) -> list[ActTemplates]:
    """:func:`templates_for` of each of ``acts`` (the registry read once for a message's acts)."""
    global _dispatch_specs
    specs = env_specs()
    if specs is not _dispatch_specs:  # the registry changed: rebuild the dispatch
        _dispatch.clear()
        _dispatch_specs = specs
    found: list[ActTemplates] = []
    for act in acts:
        templates = _dispatch.get(type(act))
        if templates is None:
            names = dict.fromkeys(spec.templates for spec in specs if spec.templates)
            templates = next((t for t in (COMMON_TEMPLATES, *map(load, names)) if isinstance(act, t.acts)), None)
            if templates is None:
                raise TypeError(f"no template for dialogue act {type(act).__name__}")
            _dispatch[type(act)] = templates
        found.append(templates)
    return found


_dispatch: dict[type, ActTemplates] = {}  # act type -> its templates, for the registry as of _dispatch_specs
_dispatch_specs: tuple[Any, ...] = ()


def _common_text(act: A.Acknowledge | A.GiveUp | A.Confirm, rng: random.Random) -> str:
    """Acts every environment's user may say."""
    if isinstance(act, A.Acknowledge):
        return pick(rng, ["Ok.", "Sounds good.", "Alright, thanks."])
    if isinstance(act, A.Confirm):
        return pick(rng, ["Yes, that's everything. Thanks!", "Looks right to me, go ahead.",
                           "Perfect, that's exactly what I wanted."])
    return pick(rng, ["This is taking too long. Never mind, I'll do it myself.",
                       "Forget it, I'll shop somewhere else.", "I give up, bye."])


COMMON_TEMPLATES = ActTemplates(acts=A.Acknowledge | A.GiveUp | A.Confirm, text=_common_text)
