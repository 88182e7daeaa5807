"""The recommendation shopper and its task state, shared by PD, SUB and BUNDLE.

* :class:`RecommendState` (written by the shopper, read by the verifiers): the current
  requirements, those still withheld, whether the planned switch happened, and the agent turns
  the request was handled in, which decide what the agent had seen when it answered (read from
  the world's surfacing ledger).
* :class:`RecommendUser`: answers questions about requirements (withheld ones are revealed once,
  as a user-caused turn) and about the soft preferences the ranking weighs (told when their topic
  or "anything else?" is asked, never denied), comments on recommended products, reacts to the stock-out that the
  world executes as planned, and makes the planned context switch (both user-caused, once).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.product_type import spoken_name
from ecomrlve.catalog.schema import NO_BRAND, NO_VALUE, Catalog
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.envs.base import TaskState
from ecomrlve.envs.recommend import acts as A
from ecomrlve.envs.recommend.requirements import (
    PREFERENCE_TOPICS,
    TOPIC_OF_FIELD,
    TOPICS,
    Requirement,
    first_failed,
)
from ecomrlve.user.acts import Acknowledge, DialogueAct
from ecomrlve.user.dialogue import SimulatedUser
from ecomrlve.user.understanding import TOPIC_OF_ATTRIBUTE, InPlay, Reading, understand
from ecomrlve.world.state import World
from ecomrlve.world.surfacing import DISCOVERY_SOURCES

SWITCH_AFTER_TURN = 1  # the context switch comes with the shopper's reply to the agent's first turn
FEEDBACK_PER_MESSAGE = 1  # in-stock products the shopper judges per message (the first one named)


@dataclass
class RecommendState(TaskState):
    """What a recommendation dialogue (PD, SUB, BUNDLE) established.

    ``requirements`` are the current ones (after a context switch); ``withheld`` holds the indices
    left out of the opening and not revealed since; ``handled_turns`` the agent turns whose tool
    results reached this request (every turn that ended with it open and unanswered; in JOURNEY
    only the turns spent on it), which decide what the agent had seen when it answered.
    """

    requirements: list[Requirement] = field(default_factory=list)
    withheld: set[int] = field(default_factory=set)
    switched: bool = False
    sold_out_announced: bool = False
    told_sold_out: list[int] = field(default_factory=list)  # products the shopper said were sold out
    handled_turns: list[int] = field(default_factory=list)

    def shown_rows(self, world: World) -> set[int]:
        """Products a discovery tool showed the agent while it handled this request, before its answer."""
        return world.surfacing.rows_shown(DISCOVERY_SOURCES, self.handled_turns)


@dataclass
class RecommendUser(SimulatedUser):
    """A shopper who wants product recommendations under some requirements (kept in ``state``)."""

    state: RecommendState = field(default_factory=RecommendState)
    noun: str = ""
    switch: tuple[int, Requirement] | None = None  # planned: (index, new requirement)
    stock_out: int | None = None  # planned: row the world sells out once the agent has seen it
    stock_out_name: str = ""
    catalog: Catalog | None = None  # the shared read-only catalog (for the oracle's searches)
    feedback_detail: bool = True  # says which requirement a named product misses (the feedback_detail axis)
    judged: int = 0  # products judged for the agent so far
    #: Every soft preference the ranking weighs, as said when asked (:func:`~ecomrlve.envs.recommend.requirements.spoken_preferences`).
    preferences: tuple[A.Preference, ...] = ()
    _no_preference_asked: set[str] = field(default_factory=set)
    _preferences_told: set[str] = field(default_factory=set)
    _in_play: InPlay | None = None
    _reading: Reading | None = None  # of the message being answered

    @property
    def requirements(self) -> list[Requirement]:
        return self.state.requirements

    @property
    def withheld(self) -> set[int]:
        return self.state.withheld

    # The runtime's entry points.
    def on_question(self, question: str, world: World) -> str:
        acts = self._respond(question, world)
        return self.say(*(acts or [self._not_understood()]))

    def note_turn(self, turn: int) -> None:
        self.state.handled_turns.append(turn)

    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        acts = self._respond(message, world) if message else []
        if message and not acts:
            acts = [self._not_understood()] if self._reading is not None and self._reading.asks else [Acknowledge()]
        acts.extend(self._sold_out_now(world))
        state = self.state
        if self.switch is not None and not state.switched and len(state.handled_turns) >= SWITCH_AFTER_TURN:
            index, new = self.switch
            state.requirements[index] = new
            state.withheld.discard(index)
            state.switched = True
            self.mark_user_caused()
            acts.append(A.ChangeRequirement(self.noun, (new.field, new.text())))
        return self.say(*acts) if acts else None

    def _sold_out_now(self, world: World) -> list[DialogueAct]:
        """The products of this request that sold out as planned (at the end of this turn: a search showed
        them) and that the shopper has not yet said are gone: the shopper says so before the agent can
        answer with them, so every stock-out a verdict counts was observable."""
        acts: list[DialogueAct] = []
        for event in world.planned_sell_outs:
            if event.task is self.state and event.done and event.row not in self.state.told_sold_out:
                acts.append(self._say_sold_out(event.row, world))
        return acts

    def _say_sold_out(self, row: int, world: World) -> DialogueAct:
        """The shopper says ``row`` is sold out; the first word of the planned stock-out is user-caused
        (the world, not the agent, set the search back)."""
        if row == self.stock_out and world.sold_out_as_planned(row) and not self.state.sold_out_announced:
            self.state.sold_out_announced = True
            self.mark_user_caused()
        if row not in self.state.told_sold_out:
            self.state.told_sold_out.append(row)
        return A.SoldOut(spoken_name(world.catalog, row).text)

    def _not_understood(self) -> DialogueAct:
        self.lose_patience()
        return A.UnclearQuestion()

    def in_play(self, world: World) -> InPlay:
        """The brands and attribute values of the categories asked for: what a message may name."""
        if self._in_play is None:
            self._in_play = category_values(world.catalog, self.categories_in_play(world.catalog))
        return self._in_play

    def categories_in_play(self, catalog: Catalog) -> list[int]:
        """The leaf categories the shopper asks for (PD, SUB: the one of its category requirement)."""
        names = {r.value for r in self.requirements if r.field == "category"}
        return [i for i, c in enumerate(catalog.categories) if c.name in names]

    def _respond(self, text: str, world: World) -> list[DialogueAct]:
        self._reading = reading = understand(text, self.in_play(world))
        acts: list[DialogueAct] = []
        acts.extend(self._feedback(text, world))
        if reading.asks:
            topics = {t for t in reading.topics if t in TOPICS}
            if reading.open:
                topics.add("any")
            acts.extend(self._clarify(topics))
        return acts

    def _answer_requirement(self, i: int, topics: set[str], stated: list[tuple[str, str]],
                            repeated: list[tuple[str, str]]) -> None:
        """Requirement ``i`` was asked about: reveal it if withheld (once, user-caused), else it is a repeat."""
        pair = (self.requirements[i].field, self.requirements[i].text())
        if i in self.withheld:
            self.withheld.discard(i)
            self.mark_user_caused()
            stated.append(pair)
        elif "any" not in topics:
            repeated.append(pair)

    def _clarify(self, topics: set[str]) -> list[DialogueAct]:
        """Answer a question about ``topics``: the requirements and the soft preferences on them ("any": all),
        never "no preference" on something the ranking weighs. A question that tells nothing new costs patience
        (a repeated requirement or preference, a repeated "anything else?" or question about a topic without one)."""
        stated: list[tuple[str, str]] = []
        repeated: list[tuple[str, str]] = []
        no_preference: list[str] = []
        indices = set(range(len(self.requirements))) if "any" in topics else {
            i for i, r in enumerate(self.requirements) if TOPIC_OF_FIELD.get(r.field) in topics}
        for i in sorted(indices):
            if self.requirements[i].field != "category":
                self._answer_requirement(i, topics, stated, repeated)
        preferences = [p for p in self.preferences if "any" in topics or topics & set(PREFERENCE_TOPICS[p[0]])]
        told = [p for p in preferences if p[0] in self._preferences_told]
        self._preferences_told.update(p[0] for p in preferences)
        news = bool(stated) or len(told) < len(preferences)
        annoyed = bool(repeated or told) and not news  # a question that reveals something is not a nuisance
        weighed = {topic for p in self.preferences for topic in PREFERENCE_TOPICS[p[0]]}
        for topic in sorted(topics - {"any"} - weighed):
            if TOPICS[topic] and not any(TOPIC_OF_FIELD.get(r.field) == topic for r in self.requirements):
                annoyed |= topic in self._no_preference_asked
                self._no_preference_asked.add(topic)
                no_preference.append(topic)
        if "any" in topics and not news:
            annoyed |= "any" in self._no_preference_asked
            self._no_preference_asked.add("any")
        if annoyed:
            self.lose_patience()
        acts: list[DialogueAct] = []
        if stated or repeated or no_preference or preferences or "any" in topics:
            acts.append(A.StateRequirements(self.noun, tuple(stated), tuple(repeated), tuple(no_preference),
                                            tuple(preferences)))
        return acts

    def _feedback(self, text: str, world: World) -> list[DialogueAct]:
        """Comments on the products the agent recommends (named by id, or the sold-out one by name)."""
        catalog = world.catalog
        mentioned = catalog.ids_in_text(text)
        if (self.stock_out is not None and self.stock_out not in mentioned and self.stock_out_name
                and self.stock_out_name.lower() in text.lower()):
            mentioned.append(self.stock_out)
        acts: list[DialogueAct] = []
        judged = 0
        for row in mentioned[:3]:
            name = spoken_name(catalog, row).text
            if world.stock(row) == 0:
                acts.append(self._say_sold_out(row, world))
                continue
            failed = first_failed(catalog, row, self.requirements)
            if failed is not None and failed.field == "category":  # another kind of product (an accessory)
                acts.append(A.NotNeeded(name))
                continue
            if judged >= FEEDBACK_PER_MESSAGE:
                continue
            judged += 1
            acts.append(self.judge(name, failed, self.requirements.index(failed) if failed is not None else None))
        return acts

    def judge(self, name: str, failed: Requirement | None, index: int | None) -> DialogueAct:
        """The shopper's verdict on one named product. A real shopper is not a free validity checker:
        with ``feedback_detail`` the first verdict is free and every later one costs patience; without
        it every verdict costs patience and a miss is not explained (the missed requirement stays withheld)."""
        self.judged += 1
        if self.judged > 1 or not self.feedback_detail:
            self.lose_patience()
        if failed is None:
            return A.LooksGood(name)
        if not self.feedback_detail:
            return A.MissesRequirement(name, None)
        if index is not None:
            self.withheld.discard(index)  # the shopper says what is wrong; the agent's mistake, not free
        return A.MissesRequirement(name, (failed.field, failed.text()))


def _category_topic_values(catalog: Catalog, category: int) -> dict[str, tuple[str, ...]]:
    """The brands (not ``NO_BRAND``) and, by topic, the categorical values ``category``'s products carry."""
    rows = catalog.category_rows[category]
    found = {"brand": tuple(catalog.brands[b] for b in np.unique(catalog.brand[rows]).tolist()
                            if catalog.brands[b] != NO_BRAND)}
    for attribute, codes in catalog.categorical.items():
        present = np.unique(codes[rows]).tolist()
        found[TOPIC_OF_ATTRIBUTE[attribute]] = tuple(CATEGORICAL_ATTRIBUTES[attribute][c] for c in present
                                                     if c != NO_VALUE)
    return found


CATEGORY_TOPIC_VALUES = derived("recommend_category_values", _category_topic_values)


def category_values(catalog: Catalog, categories: list[int]) -> InPlay:
    """The values a message about ``categories`` may name: their brands (not ``NO_BRAND``) and the values of
    each categorical attribute their products carry, by topic (each category's read once per catalog)."""
    values: dict[str, dict[str, None]] = {}
    for category in categories:
        for topic, names in CATEGORY_TOPIC_VALUES.of(catalog, category).items():
            values.setdefault(topic, {}).update(dict.fromkeys(names))
    return InPlay(values={topic: tuple(names) for topic, names in values.items() if names})
