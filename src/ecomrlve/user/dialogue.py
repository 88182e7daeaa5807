"""The dialogue manager: *what* the simulated user says next, deterministic and seeded.

Each shopper reads the agent's text with :mod:`ecomrlve.user.understanding` (what a message asks,
from its words and the values in play), keeps exact track of which constraints were stated,
withheld and revealed, and decides dialogue acts. A realiser turns the acts into text. Environments subclass
:class:`SimulatedUser` for their own reactions (cart corrections, recommendation feedback...).

It also reports, per agent turn, whether the *user* caused it (not counted against ``r_eff``): revealing a constraint
that was really withheld (each one once), reacting to a user-side event, or a confirmation the
user asked for. Nothing else makes a turn free, so free turns cannot be farmed.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ecomrlve.user import acts as A
from ecomrlve.user.realiser import Realiser
from ecomrlve.user.text import contains_words

if TYPE_CHECKING:
    from ecomrlve.world.state import World


@dataclass(frozen=True)
class ItemNames:
    """The words by which the agent can refer to a product in conversation."""

    product_id: str
    brand: str  # empty: the product has none (``NO_BRAND``)
    model: str  # distinctive title words, e.g. "nova 21"
    noun: str

    def score(self, text: str) -> int:
        """How strongly lower-cased ``text`` refers to this product (0: not at all)."""
        return self._score(contains_words(text, self._phrases()))

    def _phrases(self) -> tuple[str, ...]:
        """What :meth:`_score` looks for as whole words: the id, model words, brand, and the type (also plural,
        and singular when it ends in "s")."""
        noun = self.noun
        return self.product_id.lower(), self.model, self.brand, noun, noun + "s", noun[:-1]

    def _score(self, found: Sequence[bool]) -> int:
        """:meth:`score` from whether the text holds each of :meth:`_phrases`."""
        by_id, by_model, by_brand, as_noun, as_plural, as_singular = found
        if self.product_id and by_id:  # a whole word: a short numeric id is not inside "$129"
            return 8
        score = 0
        if self.model and by_model:
            score += 4
        if self.brand and by_brand:
            score += 2
        if as_noun or as_plural or (self.noun.endswith("s") and as_singular):
            score += 1
        if not self.model and score == 3:  # no model words: brand and type are its whole name (a type alone is not)
            return NAMED
        return score


#: An id or model words name one product; brand and noun alone may fit several.
NAMED = 4


def referenced(text: str, names: Sequence[ItemNames]) -> list[int]:
    """Indices of the items the text names: every item it names by id or model words, otherwise
    those it refers to most strongly by brand and type (empty: none named)."""
    phrases = [n._phrases() for n in names]
    found = iter(contains_words(text, [phrase for each in phrases for phrase in each]))  # all names in one call
    scores = [n._score([next(found) for _ in each]) for n, each in zip(names, phrases)]
    named = [i for i, s in enumerate(scores) if s >= NAMED]
    if named:
        return named
    best = max(scores, default=0)
    return [i for i, s in enumerate(scores) if s == best] if best > 0 else []


@dataclass
class Constraint:
    """One non-essential requirement of one item, and what the agent has been told about it."""

    item: int
    attribute: str
    value: str
    withheld: bool  # left out of the opening message
    revealed: bool = False  # told to the agent since (answer, correction)

    @property
    def known_to_agent(self) -> bool:
        return not self.withheld or self.revealed


def unknown_to_agent(constraints: Iterable[Constraint]) -> list[Constraint]:
    """The constraints the agent has not been told (withheld and not revealed since), in order."""
    return [c for c in constraints if not c.known_to_agent]


@dataclass
class SimulatedUser(ABC):
    """Base class: realisation, patience, per-turn "user caused" accounting and the act log.

    Subclasses answer the runtime's two entry points and write their environment's task state.
    """

    realiser: Realiser
    rng: random.Random
    patience: int
    acts: list[A.DialogueAct] = field(default_factory=list)
    gave_up: bool = False
    _caused_this_turn: bool = False

    def begin_turn(self) -> None:
        self._caused_this_turn = False

    def end_turn(self) -> bool:
        """Whether the turn that just ended was caused by the user (counted once per turn)."""
        return self._caused_this_turn

    @abstractmethod
    def on_question(self, question: str, world: World) -> str:
        """The reply to an ``ask_user`` question."""

    @abstractmethod
    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        """The reply (None: silence) to the agent's message and the turn's executed tool calls
        ``(name, arguments, result)``."""

    def note_turn(self, turn: int) -> None:  # noqa: B027 (an optional hook; most users record nothing)
        """Agent turn ``turn`` ended with this shopper's request open and unanswered; the runtime calls
        this before planned world events and :meth:`on_turn_end`. Users whose task state tracks the
        turns a request was handled in record it here; by default there is nothing to record."""

    def mark_user_caused(self) -> None:
        self._caused_this_turn = True

    def lose_patience(self) -> None:
        self.patience -= 1

    def say(self, *acts: A.DialogueAct) -> str:
        """Realise acts into one message; if patience ran out, the user gives up instead."""
        if self.patience < 0 and not self.gave_up:
            self.gave_up = True
            acts = (A.GiveUp(),)
        self.acts.extend(acts)
        return self.realiser.realise(tuple(acts), self.rng)
