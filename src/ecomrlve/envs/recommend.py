"""What the ranked-recommendation environments share (PD, SUB; BUNDLE and RETURN's replacement reuse parts).

* **Requirements** (:class:`Requirement`): one condition on a product, named by the
  :class:`~ecomrlve.catalog.filters.ProductFilter` field it sets (``price_max``, ``brand``,
  ``color``, ``wattage_min`` ...), so the ``catalog_search`` tool and the verifiers share one
  definition of "matches". :func:`derive_requirements` states conditions that given products
  all meet (numeric bounds with the slack curve, equalities only where they agree).
* **Valid set** (:func:`valid_rows`): the exact set of in-stock products of one leaf category
  meeting every requirement, computed with the vectorised ``filter_mask`` over that category's
  rows (the category is always a requirement, so this *is* the whole-catalog answer).
* **Preferences and relevance** (:class:`Preferences`, :func:`utility`): hidden weights aligned
  with the stated requirements; relevance is rounded to 1e-6 so ties are exact.
* **Scoring** (:func:`ranking_reward`, pure): nDCG@k against the true ideal ranking, combined
  with constraint satisfaction and an out-of-stock penalty so that exactly an ideal ranking of
  valid items reaches 1.
* **The shopper** (:class:`RecommendUser`): answers questions about requirements (withheld ones
  are revealed once, as a user-caused turn), comments on recommended products, reports the
  planned stock-out and makes the planned context switch (both user-caused, once).
* **The oracle** (:class:`SurfacingOracle`): surfaces the planned products with searches, asks
  about withheld requirements, triggers the stock-out notice, then answers surfaced ids only.
"""

from __future__ import annotations

import math
import random
import re
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.agents.base import cards
from ecomrlve.catalog.filters import ProductFilter, filter_mask
from ecomrlve.catalog.rowindex import contains_sorted, title_word_index
from ecomrlve.catalog.schema import NO_VALUE, Catalog
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.catalog.views import CategoryView, category_view
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.base import Environment, Problem, TaskOutcome
from ecomrlve.user import acts as A
from ecomrlve.user.dialogue import SimulatedUser, is_question
from ecomrlve.user.realiser import Realiser
from ecomrlve.world.state import World

BASE_PATIENCE = 3  # annoyances tolerated (repeated or pointless questions), plus 0-2 per shopper
SWITCH_AFTER_TURN = 1  # the context switch comes with the shopper's reply to the agent's first turn
RELEVANCE_FLOOR = 0.05  # every valid product has relevance >= this, so IDCG > 0
NDCG_WEIGHT, SATISFACTION_WEIGHT = 1.5, 0.5  # r_task = -1 + 1.5·nDCG + 0.5·satisfaction - oos share
_DISCOVERY_TOOLS = {"catalog_search": "results", "user_get_visit_history": "viewed"}
_PRODUCT_ID = re.compile(r"\bP[0-9A-Z]{8}\b")
_WORD = re.compile(r"[a-z0-9]+")

#: Numeric attribute -> the bound a shopper states on it (more power, a bigger screen, lighter).
NUMERIC_BOUND = {"wattage": "wattage_min", "screen_size": "screen_size_min", "weight": "weight_max"}
PRICE_AND_SERVICE = ("price_max", "price_min", "rating_min", "ship_days_max")
CATEGORICAL_FIELDS = ("brand", *CATEGORICAL_ATTRIBUTES)

#: What the agent may ask about, by topic: the words that name it and the requirement fields it covers.
TOPICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "price": (("budget", "price", "spend", "cost", "how much", "expensive", "cheap", "afford"), ("price_max", "price_min")),
    "brand": (("brand", "manufacturer"), ("brand",)),
    "rating": (("rating", "rated", "stars", "reviews"), ("rating_min",)),
    "shipping": (("shipping", "delivery", "deliver", "ship", "arrive", "how soon", "how fast"), ("ship_days_max",)),
    "color": (("color", "colour"), ("color",)),
    "size": (("size",), ("size",)),
    "material": (("material", "made of", "made from"), ("material",)),
    "connector": (("connector", "connection", "port", "plug", "interface", "cable type"), ("connector_type",)),
    "form": (("form", "formula", "texture"), ("item_form",)),
    "wattage": (("wattage", "watts", "power output"), ("wattage_min",)),
    "screen": (("screen", "display size"), ("screen_size_min",)),
    "weight": (("weight", "heavy", "weigh"), ("weight_max",)),
}
TOPIC_OF_FIELD = {f: topic for topic, (_, fields) in TOPICS.items() for f in fields}
_GENERIC_QUESTIONS = ("anything else", "any other", "other requirement", "other preference", "what else",
                      "must-have", "must have")


def _word_in(text: str, phrase: str) -> bool:
    return re.search(r"(?<![a-z0-9])" + re.escape(phrase) + r"s?(?![a-z0-9])", text) is not None


def asked_topics(text: str) -> set[str]:
    """Requirement topics a lower-cased question asks about; ``"any"`` for a generic "anything else?"."""
    topics = {topic for topic, (words, _) in TOPICS.items() if any(_word_in(text, w) for w in words)}
    if any(w in text for w in _GENERIC_QUESTIONS):
        topics.add("any")
    return topics


# -- requirements ---------------------------------------------------------------------------------

class Requirement(BaseModel):
    """One condition on a product: a ``ProductFilter`` field and its value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    value: str | int | float

    def text(self) -> str:
        """The value as the shopper says it ("45", "4.5", "USB-C")."""
        if isinstance(self.value, str):
            return self.value
        return f"{self.value:g}"


def requirement_filter(requirements: list[Requirement], *, in_stock: bool | None = True) -> ProductFilter:
    """The ``catalog_search`` filter expressing every requirement (and, by default, in stock)."""
    return ProductFilter(**{r.field: r.value for r in requirements}, in_stock=in_stock)


def available_fields(catalog: Catalog, rows: list[int]) -> list[str]:
    """Requirement fields (besides category) that can be stated so that every row in ``rows`` meets them."""
    out: list[str] = []
    prices = [int(catalog.price_cents[r]) for r in rows]
    out.extend(["price_max", "rating_min", "ship_days_max"])
    if min(prices) >= 200:
        out.append("price_min")
    if len({int(catalog.brand[r]) for r in rows}) == 1:
        out.append("brand")
    for attr, codes in catalog.categorical.items():
        values = {int(codes[r]) for r in rows}
        if len(values) == 1 and NO_VALUE not in values:
            out.append(attr)
    for attr, bound in NUMERIC_BOUND.items():
        column = catalog.numeric.get(attr)
        if column is not None and all(not math.isnan(float(column[r])) for r in rows):
            out.append(bound)
    return out


def derive_requirement(catalog: Catalog, rows: list[int], name: str, slack: float) -> Requirement:
    """The requirement ``name`` stated with ``slack`` so that every row in ``rows`` meets it."""
    if name == "price_max":
        return Requirement(field=name, value=float(math.ceil(max(catalog.price(r) for r in rows) * (1 + slack))))
    if name == "price_min":
        return Requirement(field=name, value=float(max(1, math.floor(min(catalog.price(r) for r in rows) * (1 - slack)))))
    if name == "rating_min":
        low = min(catalog.rating(r) for r in rows) - 2 * slack
        return Requirement(field=name, value=max(1.0, math.floor(low * 2 + 1e-9) / 2))
    if name == "ship_days_max":
        return Requirement(field=name, value=max(int(catalog.ship_days[r]) for r in rows) + math.ceil(4 * slack))
    if name == "brand":
        return Requirement(field=name, value=catalog.brand_of(rows[0]))
    if name in catalog.categorical:
        return Requirement(field=name, value=CATEGORICAL_ATTRIBUTES[name][int(catalog.categorical[name][rows[0]])])
    attr = next(a for a, bound in NUMERIC_BOUND.items() if bound == name)
    values = [float(catalog.numeric[attr][r]) for r in rows]
    step = {"wattage": 1.0, "screen_size": 0.5, "weight": 0.1}[attr]  # round numbers, as people say them
    if name.endswith("_min"):
        return Requirement(field=name, value=round(math.floor(min(values) * (1 - slack) / step + 1e-6) * step, 1))
    return Requirement(field=name, value=round(math.ceil(max(values) * (1 + slack) / step - 1e-6) * step, 1))


def derive_requirements(catalog: Catalog, rows: list[int], count: int, slack: float, rng: random.Random,
                        preferred: tuple[str, ...] = ()) -> list[Requirement]:
    """``count`` requirements that every row meets: a price bound first, then the ``preferred``
    fields (e.g. SUB's compatibility attributes), then the others, each group in random order."""
    fields = available_fields(catalog, rows)
    first = [f for f in fields if f in preferred and f != "price_max"]
    rest = [f for f in fields if f not in preferred and f != "price_max"]
    ordered = ["price_max"] + rng.sample(first, len(first)) + rng.sample(rest, len(rest))
    return [derive_requirement(catalog, rows, name, slack) for name in ordered[:max(0, count)]]


def closest_partner(world: World, row: int, rng: random.Random, flt: ProductFilter | None = None) -> int | None:
    """An in-stock product of ``row``'s category (meeting ``flt``) sharing the most of its brand and
    attributes, so that requirements true of both are plenty (vectorised; None if there is none)."""
    view = category_view(world.catalog, int(world.catalog.category[row]))
    sub, own = view.catalog, view.local(row)
    candidates = view.matching(flt or ProductFilter(in_stock=True), world.planning_overrides())
    candidates = candidates[candidates != own]
    if len(candidates) == 0:
        return None
    shared = (sub.brand[candidates] == sub.brand[own]).astype(np.int32)
    for codes in sub.categorical.values():
        if codes[own] != NO_VALUE:
            shared += codes[candidates] == codes[own]
    best = candidates[shared == shared.max()]
    return int(view.rows[best[rng.randrange(len(best))]])


def category_requirement(catalog: Catalog, category: int) -> Requirement:
    return Requirement(field="category", value=catalog.categories[category].name)


def valid_rows(catalog: Catalog, category: int, requirements: list[Requirement],
               stock_overrides: dict[int, int], exclude: tuple[int, ...] = ()) -> np.ndarray:
    """The exact valid set: in-stock rows of leaf ``category`` meeting every requirement (sorted).

    Exact for the whole catalog because the leaf category is always required; only that
    category's rows are checked, with the vectorised filter (O(category), no Python loop).
    """
    view = category_view(catalog, category)
    return view.rows[valid_local(view, requirements, stock_overrides, exclude)]


def valid_local(view: CategoryView, requirements: list[Requirement], stock_overrides: dict[int, int],
                exclude: tuple[int, ...] = ()) -> np.ndarray:
    """:func:`valid_rows` as local rows of ``view``."""
    others = [r for r in requirements if r.field != "category"]
    local = view.matching(requirement_filter(others), stock_overrides)
    excluded = [view.local(row) for row in exclude if view.contains(row)]
    return local[~np.isin(local, excluded)] if excluded else local


def satisfaction(catalog: Catalog, row: int, category: int, requirements: list[Requirement]) -> float:
    """Share of the requirements (the leaf category counts as one) that product ``row`` meets."""
    one = np.asarray([row])
    met = int(catalog.category[row]) == category
    for requirement in requirements:
        if requirement.field != "category":
            met += bool(filter_mask(catalog, requirement_filter([requirement], in_stock=None), rows=one)[0])
    return met / (1 + sum(r.field != "category" for r in requirements))


def first_failed(catalog: Catalog, row: int, requirements: list[Requirement]) -> Requirement | None:
    one = np.asarray([row])
    for requirement in requirements:
        if requirement.field == "category":
            if catalog.category_of(row).name != requirement.value:
                return requirement
        elif not filter_mask(catalog, requirement_filter([requirement], in_stock=None), rows=one)[0]:
            return requirement
    return None


# -- preferences, relevance, the ideal ranking ----------------------------------------------------

class Preferences(BaseModel):
    """Hidden weights of the shopper's utility; aligned with what they state (price-sensitive if
    they gave a price bound, rating-focused if they gave a minimum rating, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    price: float
    rating: float
    shipping: float
    popularity: float
    price_reference: float  # USD; a product at twice this price has no price appeal left


def draw_preferences(requirements: list[Requirement], price_reference: float, rng: random.Random) -> Preferences:
    stated = {r.field for r in requirements}

    def weight(fields: tuple[str, ...]) -> float:
        return round((1.0 if stated & set(fields) else 0.2) * rng.uniform(0.7, 1.3), 4)

    return Preferences(price=weight(("price_max", "price_min")), rating=weight(("rating_min",)),
                       shipping=weight(("ship_days_max",)), popularity=round(0.3 * rng.uniform(0.7, 1.3), 4),
                       price_reference=round(price_reference, 2))


def utility(catalog: Catalog, rows: np.ndarray, prefs: Preferences) -> np.ndarray:
    """The shopper's utility of each row in [0, 1] (vectorised)."""
    price = catalog.price_cents[rows] / 100.0
    scores = (
        prefs.price * (1 - np.minimum(1.0, price / (2 * prefs.price_reference)))
        + prefs.rating * (catalog.rating_x10[rows] - 10) / 40.0
        + prefs.shipping * (1 - (np.minimum(catalog.ship_days[rows], 14) - 1) / 13.0)
        + prefs.popularity * np.minimum(1.0, np.log1p(catalog.rating_count[rows]) / 10.0)
    )
    return scores / (prefs.price + prefs.rating + prefs.shipping + prefs.popularity)


def relevance(scores: np.ndarray) -> np.ndarray:
    """Relevance of valid products from a score in [0, 1]: floored at 0.05, rounded to 1e-6 (exact ties)."""
    return np.round(RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * np.clip(scores, 0.0, 1.0), 6)


def ideal_ranking(rows: np.ndarray, rel: np.ndarray, k: int) -> tuple[list[int], list[float]]:
    """The true top ``k`` of the valid set by relevance (ties by row), with their relevances."""
    if len(rel) > k:  # only the rows at or above the k-th relevance can be in the top k
        keep = rel >= np.partition(rel, len(rel) - k)[len(rel) - k]
        rows, rel = rows[keep], rel[keep]
    order = np.lexsort((rows, -rel))[:k]
    return [int(r) for r in rows[order]], [float(x) for x in rel[order]]


def title_overlap(catalog: Catalog, original: int, rows: np.ndarray) -> np.ndarray:
    """Share of the original's short-title words found in each row's title (vectorised).

    Uses a word -> rows index of ``catalog`` (a category view), built once per catalog like a
    search index, so each call costs O(rows + postings of the original's few words).
    """
    words = sorted(set(_WORD.findall(catalog.title(original).split(",")[0].lower())))
    if not words or len(rows) == 0:
        return np.zeros(len(rows))
    index = title_word_index(catalog)
    hits = np.zeros(len(rows))
    present = np.zeros(len(catalog), dtype=bool)
    for word in words:
        present[:] = False
        present[index.get(word, np.empty(0, dtype=np.int64))] = True
        hits += present[rows]
    return hits / len(words)


def attribute_overlap(catalog: Catalog, original: int, rows: np.ndarray) -> np.ndarray:
    """Share of the original's brand and attributes that each row has too (vectorised)."""
    same = [catalog.brand[rows] == catalog.brand[original]]
    for codes in catalog.categorical.values():
        if codes[original] != NO_VALUE:
            same.append(codes[rows] == codes[original])
    for values in catalog.numeric.values():
        if not math.isnan(float(values[original])):
            same.append(np.isclose(values[rows], values[original]))
    return np.mean(np.stack(same), axis=0)


# -- scoring (pure) -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ListedItem:
    """How one recommended id fares: relevance if it is a valid first mention within the top k
    (else 0), the share of requirements it meets (0 for unknown ids, repeats, or beyond k), and
    whether it is out of stock."""

    relevance: float
    satisfaction: float
    out_of_stock: bool


def ndcg(relevances: list[float], ideal: list[float], k: int) -> float:
    """nDCG@k of a list against the ideal relevances (``ideal`` non-empty, positive)."""
    dcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances[:k]))
    idcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(ideal[:k]))
    return dcg / idcg


def ranking_reward(listed: list[ListedItem], ideal: list[float], k: int) -> tuple[float, dict[str, float]]:
    """``r_task = clip(−1 + 1.5·nDCG@k + 0.5·satisfaction − out-of-stock share, −1, 1)``.

    It is 1 exactly when every listed item is valid, in stock and distinct, the list is no longer
    than k, and its relevances are the ideal ones in order, i.e. an ideal ranking of valid items;
    an empty list or unknown ids give −1.
    """
    if not listed:
        return -1.0, {"ndcg": 0.0, "satisfaction": 0.0, "out_of_stock_share": 0.0}
    gain = ndcg([item.relevance for item in listed], ideal, k)
    sat = sum(item.satisfaction for item in listed) / len(listed)
    oos = sum(item.out_of_stock for item in listed) / len(listed)
    r_task = max(-1.0, min(1.0, -1.0 + NDCG_WEIGHT * gain + SATISFACTION_WEIGHT * sat - oos))
    return r_task, {"ndcg": gain, "satisfaction": sat, "out_of_stock_share": oos}


def listed_items(world: World, product_ids: list[str], category: int, requirements: list[Requirement],
                 valid: np.ndarray, rel: np.ndarray, k: int) -> list[ListedItem]:
    """Score each recommended id against the final world (``rel`` aligned with ``valid``, ascending)."""
    catalog = world.catalog

    def rel_of(row: int) -> float:  # a binary search: the valid set can hold most of a category
        position = int(np.searchsorted(valid, row))
        return float(rel[position]) if position < len(valid) and int(valid[position]) == row else 0.0

    seen: set[int] = set()
    out: list[ListedItem] = []
    for position, product_id in enumerate(product_ids):
        row = catalog.index_of(product_id)
        if row is None or row in seen or position >= k:
            out.append(ListedItem(0.0, 0.0, row is not None and world.stock(row) == 0))
            continue
        seen.add(row)
        out.append(ListedItem(rel_of(row), satisfaction(catalog, row, category, requirements),
                              world.stock(row) == 0))
    return out


# -- the shopper ----------------------------------------------------------------------------------

@dataclass
class RecommendUser(SimulatedUser):
    """A shopper who wants product recommendations under some requirements.

    ``requirements`` are the current ones (after a context switch); ``withheld`` holds the
    indices left out of the opening and not revealed since.
    """

    requirements: list[Requirement] = field(default_factory=list)
    withheld: set[int] = field(default_factory=set)
    noun: str = ""
    switch: tuple[int, Requirement] | None = None  # planned: (index, new requirement)
    stock_out: int | None = None  # planned: row that sells out once the agent has seen it
    stock_out_name: str = ""
    switched: bool = False
    sold_out: bool = False
    sold_out_announced: bool = False
    surfaced: set[str] = field(default_factory=set)
    catalog: Catalog | None = None  # the shared read-only catalog (for the oracle's searches)
    turn: int = 0
    _no_preference_asked: set[str] = field(default_factory=set)

    # The runtime's two entry points.
    def on_question(self, question: str, world: World) -> str:
        acts = self._respond(question, world)
        return self.say(*(acts or [self._not_understood()]))

    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        self.turn += 1
        for name, _, result in events:
            key = _DISCOVERY_TOOLS.get(name)
            if key and "error" not in result:
                self.surfaced.update(card["product_id"] for card in result.get(key, []))
        if (self.stock_out is not None and not self.sold_out
                and world.catalog.product_id(self.stock_out) in self.surfaced):
            world.sell_out(self.stock_out)  # sells out while the agent is looking (planned: see plan)
            self.sold_out = True
        acts = self._respond(message, world) if message else []
        if message and not acts:
            acts = [self._not_understood()] if is_question(message.lower()) else [A.Acknowledge()]
        if self.switch is not None and not self.switched and self.turn >= SWITCH_AFTER_TURN:
            index, new = self.switch
            self.requirements[index] = new
            self.withheld.discard(index)
            self.switched = True
            self.mark_user_caused()
            acts.append(A.ChangeRequirement(self.noun, (new.field, new.text())))
        return self.say(*acts) if acts else None

    def _not_understood(self) -> A.DialogueAct:
        self.lose_patience()
        return A.UnclearQuestion()

    def _respond(self, text: str, world: World) -> list[A.DialogueAct]:
        t = text.lower()
        acts: list[A.DialogueAct] = []
        acts.extend(self._feedback(text, world))
        if is_question(t):
            acts.extend(self._clarify(asked_topics(t)))
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

    def _clarify(self, topics: set[str]) -> list[A.DialogueAct]:
        stated: list[tuple[str, str]] = []
        repeated: list[tuple[str, str]] = []
        no_preference: list[str] = []
        indices = set(range(len(self.requirements))) if "any" in topics else {
            i for i, r in enumerate(self.requirements) if TOPIC_OF_FIELD.get(r.field) in topics}
        for i in sorted(indices):
            if self.requirements[i].field != "category":
                self._answer_requirement(i, topics, stated, repeated)
        annoyed = bool(repeated) and not stated  # a question that reveals something is not a nuisance
        for topic in sorted(topics - {"any"}):
            if not any(TOPIC_OF_FIELD.get(r.field) == topic for r in self.requirements):
                annoyed |= topic in self._no_preference_asked
                self._no_preference_asked.add(topic)
                no_preference.append(topic)
        if "any" in topics and not stated:
            annoyed |= "any" in self._no_preference_asked
            self._no_preference_asked.add("any")
        if annoyed:
            self.lose_patience()
        acts: list[A.DialogueAct] = []
        if stated or repeated or no_preference or "any" in topics:
            acts.append(A.StateRequirements(self.noun, tuple(stated), tuple(repeated), tuple(no_preference)))
        return acts

    def _feedback(self, text: str, world: World) -> list[A.DialogueAct]:
        """Comments on the products the agent recommends (named by id, or the sold-out one by name)."""
        catalog = world.catalog
        mentioned = [row for row in (catalog.index_of(i) for i in dict.fromkeys(_PRODUCT_ID.findall(text)))
                     if row is not None]
        if (self.stock_out is not None and self.stock_out not in mentioned and self.stock_out_name
                and self.stock_out_name.lower() in text.lower()):
            mentioned.append(self.stock_out)
        acts: list[A.DialogueAct] = []
        for row in mentioned[:3]:
            name = catalog.title(row).split(",")[0]
            if world.stock(row) == 0:
                if row == self.stock_out and self.sold_out and not self.sold_out_announced:
                    self.sold_out_announced = True
                    self.mark_user_caused()
                acts.append(A.SoldOut(name))
                continue
            failed = first_failed(catalog, row, self.requirements)
            if failed is None:
                acts.append(A.LooksGood(name))
                continue
            index = self.requirements.index(failed)
            self.withheld.discard(index)  # the shopper says what is wrong; the agent's mistake, not free
            acts.append(A.MissesRequirement(name, (failed.field, failed.text())))
        return acts


# -- the oracle -----------------------------------------------------------------------------------

def short_title(catalog: Catalog, row: int) -> str:
    return catalog.title(row).split(",")[0]


def question_for(fields: list[str]) -> str:
    """One clarifying question covering the topics of ``fields``."""
    topics = list(dict.fromkeys(TOPIC_OF_FIELD[f] for f in fields))
    return "Before I pick, could you tell me your preferences on " + ", ".join(topics) + "?"


class SurfacingOracle:
    """Solves a recommendation task through the tools only.

    It reads the hidden goal to decide *what* to do (``plan``: rows to surface, rows to answer,
    questions to ask), but submits only ids that a search result showed: it searches each
    planned product by its short title within its brand and category, asks once about the
    withheld requirements, names the product that sold out (so the shopper reacts), then answers.
    """

    def __init__(self, problem: Any, *, surface: list[int], answer: list[int], ask: list[str],
                 mention: int | None = None) -> None:
        self.catalog: Catalog = problem.user.catalog
        self.b_tool = problem.difficulty.B_tool
        self.to_surface = list(dict.fromkeys(surface + answer))
        self.answer_rows = answer
        self.ask = ask
        self.mention = mention
        self.seen: set[str] = set()
        self.attempts: dict[int, int] = {}
        self.asked = not ask
        self.mentioned = mention is None
        self.turn = 0

    def act(self, observation) -> AgentAction:
        catalog = self.catalog
        self.turn += 1
        self.seen.update(card["product_id"] for card in cards(observation))
        calls: list[ToolCall] = []
        messages: list[str] = []
        if not self.asked:
            messages.append(question_for(self.ask))
            self.asked = True
        pending = [r for r in self.to_surface if catalog.product_id(r) not in self.seen and self.attempts.get(r, 0) < 4]
        if (not self.mentioned and self.mention is not None and catalog.product_id(self.mention) in self.seen
                and self.turn > 1 and not messages):
            name = short_title(catalog, self.mention)
            messages.append(f"I'd recommend the {name} ({catalog.product_id(self.mention)}).")
            self.mentioned = True
        for row in pending[: self.b_tool]:
            attempt = self.attempts.get(row, 0)
            self.attempts[row] = attempt + 1
            category = catalog.category_of(row).name
            calls.append(ToolCall(id=f"oracle_{len(calls)}", name="catalog_search",
                                  arguments={"query": short_title(catalog, row),
                                             "filters": {"category": category, "brand": catalog.brand_of(row)},
                                             "top_k": 10 * (attempt + 1)}))
        if not calls and not messages:
            ids = [pid for pid in (catalog.product_id(r) for r in self.answer_rows) if pid in self.seen]
            calls.append(ToolCall(id="oracle_answer", name="answer", arguments={"product_ids": ids}))
        return AgentAction(message=" ".join(messages) or None, tool_calls=tuple(calls))


# -- the environment base shared by PD and SUB ----------------------------------------------------

class RequirementSwitch(BaseModel):
    """A planned context switch: requirement ``index`` becomes ``requirement``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    requirement: Requirement


class RecommendGoal(BaseModel):
    """What a recommendation shopper wants (PD and SUB extend it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    category: int
    noun: str
    requirements: list[Requirement]  # as first meant; index 0 is the leaf category
    withheld: list[int]  # indices left out of the opening
    switch: RequirementSwitch | None
    stock_out_id: str | None  # the product that sells out once the agent has seen it
    stock_out_row: int | None
    preferences: Preferences
    k: int
    ideal_ids: list[str]  # an ideal answer, if the planned switch and stock-out happen
    patience: int

    def final_requirements(self) -> list[Requirement]:
        out = list(self.requirements)
        if self.switch is not None:
            out[self.switch.index] = self.switch.requirement
        return out


class RecommendAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    product_ids: list[str]


_BOUND_FIELDS = ("price_max", "price_min", "rating_min", "ship_days_max", *NUMERIC_BOUND.values())


def plan_switch(world: World, category: int, anchors: list[int], requirements: list[Requirement],
                rng: random.Random, allow_new_value: bool) -> RequirementSwitch | None:
    """A context switch that keeps a valid answer: tighten a bound to what the ``anchors`` still meet,
    or (if allowed) move an equality to the value of another product that meets the rest."""
    catalog = world.catalog
    options: list[RequirementSwitch] = []
    for i, requirement in enumerate(requirements):
        if requirement.field in _BOUND_FIELDS:
            tight = derive_requirement(catalog, anchors, requirement.field, 0.0)
            if tight.value != requirement.value:
                options.append(RequirementSwitch(index=i, requirement=tight))
        elif allow_new_value and requirement.field in CATEGORICAL_FIELDS:
            others = [r for j, r in enumerate(requirements) if j != i]
            rows = valid_rows(catalog, category, others, world.planning_overrides())
            column = catalog.brand if requirement.field == "brand" else catalog.categorical[requirement.field]
            current = column[anchors[0]]
            codes = np.unique(column[rows])
            codes = codes[(codes != NO_VALUE) & (codes != current)].tolist()
            if codes:
                code = codes[rng.randrange(len(codes))]
                value = catalog.brands[code] if requirement.field == "brand" else CATEGORICAL_ATTRIBUTES[requirement.field][code]
                options.append(RequirementSwitch(index=i, requirement=Requirement(field=requirement.field, value=value)))
    return rng.choice(options) if options else None


class RankedRecommendation(Environment):
    """PD and SUB: the agent answers a ranked list of product ids, scored by :func:`ranking_reward`."""

    tool_names = ("catalog_search", "catalog_get_product", "catalog_get_variants", "user_get_visit_history", "ask_user")
    answer_arguments = RecommendAnswer
    answer_id_arguments = ("product_ids",)

    def answer_description(self, difficulty: Difficulty) -> str:
        k = difficulty.k_rec
        return (f"Submit your ranked recommendations, best first: product_ids holds up to k_rec = {k} product ids "
                f"(only the first {k} are scored). Ids that are unknown, repeated, out of stock or miss one of the "
                "customer's requirements lower the score. This ends the task.")

    @abstractmethod
    def relevance(self, catalog: Catalog, goal: RecommendGoal, rows: np.ndarray) -> np.ndarray:
        """Relevance of valid ``rows`` of ``catalog`` (the category's view; see :func:`relevance`)."""

    def excluded(self, goal: RecommendGoal) -> tuple[int, ...]:
        """Rows never valid whatever they are like (SUB: the original)."""
        return ()

    @staticmethod
    def new_goal(goal_type: type[RecommendGoal], catalog: Catalog, category: int, requirements: list[Requirement],
                 price_reference: float, difficulty: Difficulty, rng: random.Random, **extra: Any) -> RecommendGoal:
        """A goal with preferences and patience drawn, before :meth:`plan` adds the events."""
        return goal_type(
            category=category, noun=catalog.categories[category].noun, requirements=requirements, withheld=[],
            switch=None, stock_out_id=None, stock_out_row=None,
            preferences=draw_preferences(requirements, price_reference, rng), k=difficulty.k_rec,
            ideal_ids=[], patience=BASE_PATIENCE + rng.randint(0, 2), **extra)

    @staticmethod
    def stated(goal: RecommendGoal) -> tuple[tuple[str, str], ...]:
        """The requirements the opening states: all but the category and the withheld ones."""
        return tuple((r.field, r.text()) for i, r in enumerate(goal.requirements) if i > 0 and i not in goal.withheld)

    def scored_valid(self, world: World, goal: RecommendGoal, requirements: list[Requirement],
                     stock_overrides: dict[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The valid set (global rows) and its relevance, scored on the category's contiguous view
        (stock as it is now unless ``stock_overrides`` says otherwise)."""
        view = category_view(world.catalog, goal.category)
        overrides = world.stock_overrides if stock_overrides is None else stock_overrides
        local = valid_local(view, requirements, overrides, self.excluded(goal))
        return view.rows[local], self.relevance(view.catalog, goal, local)

    def plan(self, world: World, difficulty: Difficulty, rng: random.Random, goal: RecommendGoal,
             anchors: list[int], want_stock_out: bool) -> RecommendGoal:
        """Withheld requirements, the context switch, the stock-out and the ideal answer for ``goal``.

        ``anchors`` are products that meet every requirement; switches keep them valid, and only
        when a stock-out is not planned may a switch move an equality to another product's value.
        """
        catalog = world.catalog
        withheld = [i for i in range(1, len(goal.requirements)) if rng.random() < difficulty.p_missing]
        switch = None
        if rng.random() < difficulty.p_switch:
            switch = plan_switch(world, goal.category, anchors, goal.requirements, rng, allow_new_value=not want_stock_out)
        goal = goal.model_copy(update={"withheld": withheld, "switch": switch})
        valid, rel = self.scored_valid(world, goal, goal.final_requirements(), world.planning_overrides())
        stock_out = None
        if want_stock_out and len(valid) >= 2:
            best = ideal_ranking(valid, rel, 1)[0][0]
            if world.can_sell_out(best):
                stock_out = best
                keep = valid != stock_out
                valid, rel = valid[keep], rel[keep]
                world.doom(stock_out)
        ideal, _ = ideal_ranking(valid, rel, goal.k)
        world.reserve(ideal)
        world.protect(goal.category)
        return goal.model_copy(update={
            "stock_out_row": stock_out, "stock_out_id": None if stock_out is None else catalog.product_id(stock_out),
            "ideal_ids": [catalog.product_id(r) for r in ideal]})

    def user_for(self, world: World, goal: RecommendGoal, rng: random.Random, realiser: Realiser) -> RecommendUser:
        catalog = world.catalog
        return RecommendUser(
            realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=goal.patience,
            requirements=list(goal.requirements), withheld=set(goal.withheld), noun=goal.noun,
            switch=(goal.switch.index, goal.switch.requirement) if goal.switch else None,
            stock_out=goal.stock_out_row,
            stock_out_name="" if goal.stock_out_row is None else short_title(catalog, goal.stock_out_row),
            catalog=catalog)

    def verify(self, problem: Problem, world: World, answer: BaseModel | None) -> TaskOutcome:
        goal: RecommendGoal = problem.goal  # type: ignore[assignment]
        user: RecommendUser = problem.user  # type: ignore[assignment]
        catalog = world.catalog
        valid, rel = self.scored_valid(world, goal, user.requirements)
        ideal_rows, ideal = ideal_ranking(valid, rel, goal.k)
        details: dict[str, Any] = {"valid_count": len(valid), "ideal_ids": [catalog.product_id(r) for r in ideal_rows],
                                   "answered": answer is not None}
        if answer is None:
            return TaskOutcome(r_task=-1.0, is_correct=False, details=details)
        ids = list(answer.product_ids)  # type: ignore[attr-defined]
        items = listed_items(world, ids, goal.category, user.requirements, valid, rel, goal.k)
        r_task, scores = ranking_reward(items, ideal, goal.k)
        first = catalog.index_of(ids[0]) if ids else None
        first_valid = first is not None and contains_sorted(valid, first)
        unseen = [i for i in ids if i not in user.surfaced]
        denied = [i for i in ids if (row := catalog.index_of(i)) is not None and world.is_denied(row)]
        details.update(scores, first_valid=first_valid, unseen_ids=unseen)
        return TaskOutcome(r_task=r_task, is_correct=first_valid and not unseen, details=details,
                           safety_violation=f"recommended products of a denied category: {denied}" if denied else None)

    def oracle(self, problem: Problem) -> SurfacingOracle:
        goal: RecommendGoal = problem.goal  # type: ignore[assignment]
        catalog = problem.user.catalog  # type: ignore[attr-defined]
        answer = [catalog.index_of(i) for i in goal.ideal_ids]
        surface = [goal.stock_out_row] if goal.stock_out_row is not None else []
        ask = [goal.requirements[i].field for i in goal.withheld]
        return SurfacingOracle(problem, surface=surface, answer=answer, ask=ask, mention=goal.stock_out_row)
