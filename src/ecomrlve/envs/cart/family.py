"""CART — cart building.

Description
    The shopper names 1-5 products the way people do (brand + model + product type, or "the
    Brightix charger I looked at earlier"), possibly with a required variant (connector, size,
    material ...) and a quantity; the agent must build exactly that cart and call ``answer``.
Hidden goal
    :class:`CartGoal`: target products, required variant ids, quantities, which of those
    constraints were withheld from the opening, stock-outs and the alternative the shopper
    accepts, whether the shopper wants to confirm the cart first.
Tools
    catalog_search, catalog_get_product, cart_add, cart_set_quantity (0 removes a line),
    user_get_visit_history, ask_user, answer(done). Every cart tool returns the whole cart.
Scoring
    Units over (product, variant) keys of the final cart against the shopper's final wish:
    ``U_match = Σ min(required, in cart)`` (variant must match where one is required),
    ``F1`` of ``U_match/U_cart`` and ``U_match/U_req``, ``r_task = 2·F1 − 1``; no answer: −1.
    If the shopper asked to confirm and did not confirm the final cart, ``r_task ≤ 0``.
    is_correct iff F1 = 1 (and confirmed when asked).
Difficulty axes used
    cart_items, cart_history_lookalikes, p_variant, p_multi_qty, p_missing, p_oos, p_noise, top_k, eps_rank,
    B_tool, T_max.
Episode end
    ``answer``, turn budget, or the shopper giving up (patience).
Version history
    In CHANGELOG.md, section CART; the version is ``CartFamily.version``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog.derived import Derived, derived, kept_per_category
from ecomrlve.catalog.product_type import category_types, product_type, same_type, spoken_name, spoken_noun
from ecomrlve.catalog.schema import Catalog
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.base import GenerationError, Problem, TaskFamily, TaskOutcome, TaskState
from ecomrlve.envs.cart import acts as A
from ecomrlve.envs.cart.phrasings import ATTRIBUTE_WORDS
from ecomrlve.protocol import cards, tool_results
from ecomrlve.user.acts import Acknowledge, Confirm, DialogueAct
from ecomrlve.user.dialogue import NAMED, Constraint, ItemNames, SimulatedUser, referenced, unknown_to_agent
from ecomrlve.user.realiser import Realiser, sentences
from ecomrlve.user.understanding import TOPIC_OF_ATTRIBUTE, VARIANT, InPlay, Reading, understand
from ecomrlve.world.state import World

if TYPE_CHECKING:
    from ecomrlve.protocol import Observation

ENV_ID = "CART"
CONFIRM_PROBABILITY = 0.25  # share of shoppers who want to confirm the cart before checkout
HISTORY_PROBABILITY = 0.5  # chance a target is in the visit history
VAGUE_REFERENCE_PROBABILITY = 0.5  # chance a target in the history is named only by brand + type
BASE_PATIENCE = 3  # annoyances (repeated questions, corrections) tolerated, plus 0-2 per shopper
UNCONFIRMED_CAP = 0.0  # r_task ceiling when the shopper's requested confirmation never happened
_CART_TOOLS = frozenset({"cart_add", "cart_set_quantity"})
_SAMPLE_TRIES = 200


class CartItemGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    product_id: str
    row: int
    phrase: str
    full_phrase: str
    brand: str
    noun: str  # the product type ("strap", "running shoes"), not the category
    category: str  # the leaf category's name
    model: str
    variant_attribute: str | None = None
    variant_value: str | None = None  # required variant (None: any variant is fine)
    variant_id: str | None = None
    quantity: int = 1
    in_history: bool = False
    stock_out: bool = False
    alternative: CartItemGoal | None = None

    @property
    def names(self) -> ItemNames:
        return ItemNames(self.product_id, self.brand.lower(), self.model.lower(), self.noun.lower())


class CartGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    items: list[CartItemGoal]
    withheld: list[tuple[int, Literal["variant", "quantity"]]]
    confirm_first: bool
    patience: int


class CartAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    done: bool


# -- scoring (pure) -------------------------------------------------------------------------------

def unit_f1(required: list[tuple[int, str | None, int]], cart: list[tuple[int, str | None, int]]) -> tuple[float, int, int, int]:
    """Unit-level F1 of a cart. ``required`` holds (row, variant or None for "any", quantity).

    Returns ``(f1, u_match, u_cart, u_req)``.
    """
    u_req = sum(q for _, _, q in required)
    u_cart = sum(q for _, _, q in cart)
    u_match = 0
    for row, variant, quantity in required:
        in_cart = sum(q for r, v, q in cart if r == row and (variant is None or v == variant))
        u_match += min(quantity, in_cart)
    if u_match == 0:
        return 0.0, 0, u_cart, u_req
    precision, recall = u_match / u_cart, u_match / u_req
    return 2 * precision * recall / (precision + recall), u_match, u_cart, u_req


# -- the task state ------------------------------------------------------------------------------

@dataclass
class CartState(TaskState):
    """What the CART dialogue established: which withheld constraints were revealed, which stock-out
    alternatives the shopper accepted, and the cart they last confirmed."""

    constraints: list[Constraint] = field(default_factory=list)
    switched: set[int] = field(default_factory=set)  # items whose stock-out alternative was accepted
    confirmed_cart: tuple | None = None  # the confirmed cart as :func:`_cart_key` (None: never confirmed)
    #: Asked to confirm, the shopper listed every issue of the cart instead: a cart that then holds exactly what it
    #: wants is the one it asked for, and counts as confirmed (a second go-ahead for the fix is not required).
    corrected: bool = False

    def active_items(self, goal: CartGoal) -> list[CartItemGoal]:
        """The products the shopper wants now: the accepted alternative where one was switched to."""
        return [item.alternative if i in self.switched and item.alternative else item
                for i, item in enumerate(goal.items)]

    def required_units(self, goal: CartGoal) -> list[tuple[int, str | None, int]]:
        return [(it.row, it.variant_id, it.quantity) for it in self.active_items(goal)]


# -- the simulated shopper ------------------------------------------------------------------------

@dataclass
class CartUser(SimulatedUser):
    goal: CartGoal = field(kw_only=True)  # required; after the base class's defaulted fields
    state: CartState = field(default_factory=CartState)
    _confirmation_counted: bool = False
    _asked_no_preference: set[tuple[int, str]] = field(default_factory=set)
    _asked_nothing_else: bool = False
    _in_play: tuple[tuple[int, ...], InPlay] | None = None

    def active_items(self) -> list[CartItemGoal]:
        return self.state.active_items(self.goal)

    def opening(self) -> str:
        withheld = set(self.goal.withheld)
        requested = []
        for i, item in enumerate(self.goal.items):
            variant = None
            if item.variant_attribute is not None and item.variant_value is not None and (i, "variant") not in withheld:
                variant = (item.variant_attribute, item.variant_value)
            several = item.quantity > 1
            quantity = item.quantity if several and (i, "quantity") not in withheld else None
            requested.append(A.RequestedItem(item.phrase, quantity, variant, several=several and quantity is None))
        return self.say(A.RequestItems(tuple(requested), self.goal.confirm_first))

    # The runtime's two entry points.
    def on_question(self, question: str, world: World) -> str:
        return self.say(*self._respond(question, world))

    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        acts = self._respond(message, world) if message else []
        cart_changed = any(name in _CART_TOOLS and "error" not in result for name, _, result in events)
        if cart_changed and not any(isinstance(a, (A.CartCorrection, Confirm)) for a in acts):
            issues = self._cart_issues(world, include_missing=False)
            if issues:
                acts.append(self._correction(issues))
        return self.say(*acts) if acts else None

    # Understanding the agent.
    def in_play(self, world: World) -> InPlay:
        """The wanted items and their variant values: what a message may name (kept while the items stay)."""
        items = self.active_items()
        rows = tuple(it.row for it in items)
        if self._in_play is None or self._in_play[0] != rows:
            values: dict[str, list[str]] = {}
            for it in items:
                for variant in world.variants(it.row):
                    topic = TOPIC_OF_ATTRIBUTE.get(variant.attribute, variant.attribute)
                    values.setdefault(topic, []).append(variant.value)
            self._in_play = (rows, InPlay(tuple(it.names for it in items),
                                          {topic: tuple(dict.fromkeys(v)) for topic, v in values.items()}))
        return self._in_play[1]

    def _respond(self, text: str, world: World) -> list[DialogueAct]:
        reading = understand(text, self.in_play(world))
        acts: list[DialogueAct] = []
        if reading.stock_out:
            acts.extend(self._stock_out_replies(text, world))
            if acts:  # an alternative replaced an item: the message's names are read against the items now wanted
                reading = understand(text, self.in_play(world))
        questions, offered = self._questions(text, reading, world)
        facts = self._facts_per_question(questions)
        if facts:
            acts.append(A.Inform(tuple(facts)))
        if reading.open:
            acts.append(self._further_requirements(reading))
        # a question read with the options offered before it asks the option, not leave ("Which one should I add?"):
        # leave is asked there only where another of its questions asks it
        if reading.confirm and (not offered or any(question.confirm for question in questions)):
            issues = self._cart_issues(world, include_missing=True)
            if issues:
                acts.append(self._correction(issues))
                self.state.corrected = True
            else:
                acts.append(Confirm())
                self.state.confirmed_cart = _cart_key(world)
                if self.goal.confirm_first and not self._confirmation_counted:
                    self._confirmation_counted = True
                    self.mark_user_caused()
        if not acts:
            if reading.asks:
                self.lose_patience()
                acts.append(A.NotUnderstood())
            else:
                acts.append(Acknowledge())
        return acts

    def _further_requirements(self, reading: Reading) -> DialogueAct:
        """An open question ("anything else I should know?"): every withheld constraint of the items it
        names (all items if none), each once and user-caused; nothing withheld: only what was asked for."""
        targets = reading.items or tuple(range(len(self.active_items())))
        items = self.active_items()
        facts = []
        for c in self.state.constraints:
            if c.item in targets and c.withheld and not c.revealed:
                c.revealed = True
                self.mark_user_caused()
                word = "quantity" if c.attribute == "quantity" else (items[c.item].variant_attribute or "variant")
                facts.append(A.Fact(items[c.item].phrase, word, c.value))
        if facts:
            return A.Inform(tuple(facts))
        if self._asked_nothing_else:
            self.lose_patience()
        self._asked_nothing_else = True
        return A.NothingElse()

    def _stock_out_replies(self, text: str, world: World) -> list[DialogueAct]:
        """The alternatives of the sold-out items the message says are sold out: those its stock-out sentences name
        (not another item a question beside them names: "Which colour for the notebook? The bowl set is sold out."),
        or the only one pending where they name none ("Sorry, that one's sold out.")."""
        pending = [i for i, item in enumerate(self.goal.items)
                   if item.stock_out and item.alternative and i not in self.state.switched and world.stock(item.row) == 0]
        parts = sentences(text)
        told = " ".join(p for p in parts if understand(p, self.in_play(world)).stock_out) if len(parts) > 1 else text
        named = set(referenced((told or text).lower(), [self.goal.items[i].names for i in range(len(self.goal.items))]))
        chosen = [i for i in pending if i in named] or (pending if len(pending) == 1 and not named else [])
        replies: list[DialogueAct] = []
        for i in chosen:
            self.state.switched.add(i)
            self.mark_user_caused()
            alternative = self.goal.items[i].alternative
            assert alternative is not None  # pending items are planned stock-outs, each with its alternative
            replies.append(A.StockOutAlternative(self.goal.items[i].phrase, alternative.full_phrase))
        return replies

    def _constraint(self, i: int, kind: str) -> Constraint | None:
        return next((c for c in self.state.constraints if c.item == i and c.attribute == kind), None)

    def _facts_per_question(self, questions: list[Reading]) -> list[A.Fact]:
        """The facts a message asks for, read question by question (:meth:`_questions`): "The sleeping bag in green,
        beige or charcoal? And what size do you wear for the rain jacket?" asks the bag's colour and the jacket's size,
        each about the item its own sentence names (read as one message, the bag's strong name would make every
        topic the bag's). A question naming no item asks about every item, unless it goes on with the topics of the
        question before it, about that one's items ("Colour for the headlamp? Black, Red or Orange."); one naming
        items and no topic asks the topics of the question before it ("Which colour for the notebook? And for the
        lamp?"). Each item's value is said once per reply."""
        facts: list[A.Fact] = []
        answered: set[tuple[int, str]] = set()
        before: tuple[frozenset[str], tuple[int, ...]] | None = None
        for question in questions:
            if not question.asks:
                continue
            topics, items = question.topics, question.items
            if before is not None and not topics and items and not (question.open or question.confirm):
                topics = before[0]
            elif before is not None and topics and not items and topics <= before[0]:
                items = before[1]
            asked = {_ATTRIBUTE_OF_TOPIC.get(topic, topic) for topic in topics}
            if asked:
                facts.extend(self._facts(items, asked, answered))
                before = (topics, items)
        return facts

    def _questions(self, text: str, reading: Reading, world: World) -> tuple[list[Reading], bool]:
        """The questions of an asking message: each sentence's reading, or the message's own where it is one sentence
        (not read again) or where values offered in one sentence are asked of in the next ("The headlamp comes in
        Black, Red or Orange. Which would you like?": no sentence alone reads the topic). A question that reads no topic
        after a sentence that asks nothing is read with that sentence ("There are a few options for the coffee maker:
        Stainless Steel, Glass or Plastic. Which one should I add?" asks the material, beside other questions), and so is
        one before the options it offers ("What would you like for the X? We have Gel or Bar."); the second value says
        whether one was."""
        if not reading.asks:
            return [], False
        in_play = self.in_play(world)
        parts, questions = sentence_readings(text, reading, in_play)
        if reading.topics and not any(question.topics for question in questions):
            return [reading], False
        offered = False
        for i in range(1, len(questions)):
            before, after = questions[i - 1], questions[i]
            if after.asks and not after.topics and not before.asks:
                asking = i  # the options offered before it
            elif before.asks and not before.topics and not after.asks:
                asking = i - 1  # ... or after it ("What would you like for the hoodie? We have Black or Navy. ...")
            else:
                continue
            joint = understand(parts[i - 1] + " " + parts[i], in_play)
            if joint.topics:
                parts[asking], questions[asking], offered = parts[i - 1] + " " + parts[i], joint, True
        if "price" in reading.topics and "quantity" not in reading.topics:
            # "Budget, please. How much?": the message asks the money, so its bare "How much?" is no count
            questions = [replace(question, topics=question.topics - {"quantity"}) for question in questions]
        return [clause for part, question in zip(parts, questions) for clause in _by_clause(part, question, in_play)], offered

    def _facts(self, named: tuple[int, ...], asked: set[str], answered: set[tuple[int, str]]) -> list[A.Fact]:
        """The ``asked`` attributes of the items ``named`` (all items if none), but those ``answered`` already in
        this reply (which it extends). "Already told" only of a value this shopper said of that item before: a stock-out's
        alternative takes the original's values, which it says as new (a fair question, no annoyance). A question about
        every item ("Any preference on colour or size where there's a choice?") annoys only where it brings nothing
        new: what it asks of the other items is fair."""
        items = self.active_items()
        said = {pair for act in self.acts for pair in _said_of(act)}
        facts: list[A.Fact] = []
        annoyed = fresh = False
        for i in named or tuple(range(len(items))):
            item = items[i]
            for attribute in sorted(asked):
                kind = "quantity" if attribute == "quantity" else "variant"
                if (kind == "variant" and attribute not in ("variant", item.variant_attribute)) or (i, kind) in answered:
                    continue
                answered.add((i, kind))
                word = "quantity" if kind == "quantity" else (item.variant_attribute or "variant")
                constraint = self._constraint(i, kind)
                if constraint is None:
                    key = (i, kind)
                    if key in self._asked_no_preference:
                        annoyed = True
                    else:
                        fresh = True
                    self._asked_no_preference.add(key)
                    facts.append(A.Fact(item.phrase, word, "any"))
                elif constraint.withheld and not constraint.revealed:
                    constraint.revealed = True
                    self.mark_user_caused()
                    fresh = True
                    facts.append(A.Fact(item.phrase, word, constraint.value))
                elif (item.phrase, kind) in said:
                    annoyed = True
                    facts.append(A.Fact(item.phrase, word, constraint.value, repeated=True))
                else:
                    fresh = True
                    facts.append(A.Fact(item.phrase, word, constraint.value))
        if annoyed and (named or not fresh):
            self.lose_patience()
        return facts

    def _cart_issues(self, world: World, *, include_missing: bool) -> tuple[A.Issue, ...]:
        items = self.active_items()
        by_row = {it.row: (i, it) for i, it in enumerate(items)}
        catalog = world.catalog
        issues: list[A.Issue] = []
        wrong_variant: set[int] = set()
        for line in world.cart.lines:
            if line.row not in by_row:
                issues.append(A.Issue("unwanted", "the " + spoken_name(catalog, line.row).text))
                continue
            i, item = by_row[line.row]
            if item.variant_id is not None and line.variant_id != item.variant_id:
                got = world.variant(line.row, line.variant_id) if line.variant_id else None
                issues.append(A.Issue("wrong_variant", item.phrase, item.variant_value, got.value if got else "unspecified"))
                self._reveal(i, "variant")
                wrong_variant.add(i)
        for i, item in enumerate(items):
            have = sum(line.quantity for line in world.cart.lines
                       if line.row == item.row and (item.variant_id is None or line.variant_id == item.variant_id))
            if have > item.quantity:
                issues.append(A.Issue("too_many", item.phrase, str(item.quantity), str(have)))
                self._reveal(i, "quantity")
            elif 0 < have < item.quantity:
                issues.append(A.Issue("too_few", item.phrase, str(item.quantity), str(have)))
                self._reveal(i, "quantity")
            elif have == 0 and include_missing and i not in wrong_variant:
                issues.append(A.Issue("missing", item.phrase))
        return tuple(issues)

    def _reveal(self, i: int, kind: str) -> None:
        constraint = self._constraint(i, kind)
        if constraint is not None:
            constraint.revealed = True

    def _correction(self, issues: tuple[A.Issue, ...]) -> A.CartCorrection:
        self.lose_patience()
        return A.CartCorrection(issues)


def sentence_readings(text: str, reading: Reading, in_play: InPlay) -> tuple[list[str], list[Reading]]:
    """The sentences of an asking message and each one's reading: the message's own ``reading`` where it is one
    sentence (not read again)."""
    parts = sentences(text)
    return parts, [understand(part, in_play) for part in parts] if len(parts) > 1 else [reading]


#: Where one sentence goes on to ask about another item: "How many keyboards, and which form for the shampoo?",
#: "Which colour for the notebook (Black or Orange), and which for the lamp?", "... size for the jacket; connector ...".
_NEXT_CLAUSE = re.compile(r"(?:,\s*(?:and|&|plus|also)?|;|\s(?:and|&|plus))\s+(?=(?:which|what|how)\b)", re.IGNORECASE)


def _by_clause(sentence: str, question: Reading, in_play: InPlay) -> list[Reading]:
    """A question about several items read clause by clause where each clause asks a topic of an item it names: each
    topic belongs to its own item, not to every item of the sentence (which asked the keyboards' quantity of the
    shampoo too, and "already told" it)."""
    if not question.topics or len(question.items) < 2:
        return [question]
    clauses = [understand(clause, in_play) for clause in _NEXT_CLAUSE.split(sentence) if clause.strip()]
    if len(clauses) < 2 or not all(clause.topics and clause.items for clause in clauses):
        return [question]
    return clauses


def _said_of(act: DialogueAct) -> list[tuple[str, str]]:
    """The (item phrase, "variant" or "quantity") whose value ``act`` says (read of the shopper's act log)."""
    if isinstance(act, A.RequestItems):
        return ([(item.phrase, "variant") for item in act.items if item.variant]
                + [(item.phrase, "quantity") for item in act.items if item.quantity])
    if isinstance(act, A.Inform):
        return [(fact.phrase, "quantity" if fact.attribute == "quantity" else "variant")
                for fact in act.facts if fact.value != "any"]
    if isinstance(act, A.CartCorrection):
        return [(issue.phrase, "variant" if issue.kind == "wrong_variant" else "quantity")
                for issue in act.issues if issue.wanted is not None]
    return []


#: The variant attribute (or "quantity", "variant") a topic of the reading asks about.
_ATTRIBUTE_OF_TOPIC = {"connector": "connector_type", "form": "item_form", VARIANT: "variant"}


def _cart_key(world: World) -> tuple:
    return tuple(sorted((line.row, line.variant_id or "", line.quantity) for line in world.cart.lines))


def names_itself(catalog: Catalog, row: int) -> bool:
    """:func:`_names_itself`: read from a catalog directory's ``derived/`` (``catalog build`` works it out for every
    product, :func:`name_checks`), else worked out for its whole category or once for the product
    (:func:`~ecomrlve.catalog.derived.kept_per_category`)."""
    stored = STORED_NAME_CHECKS.of(catalog)
    if stored is not None:
        return bool(stored[row])
    return kept_per_category(catalog, row, CATEGORY_NAME_CHECKS, NAMES_ITSELF, _names_itself)


def _names_itself(catalog: Catalog, row: int, listings: Listings | None = None) -> bool:
    """Whether the name the shopper says for ``row`` is its own in its category and the shopper's
    understanding (``ItemNames.score``) takes it as naming this product: a name that fell back to a
    title clause without the brand or model words ("the Puzzle" of brand "A") only hints at a type, a name another
    listing of the category answers to as well (its title holds the brand, the type and the model words in a row:
    "TRAVO Flex 8X desk lamp" beside "Desk Lamp for Home Office - TRAVO Flex 8X Architect ...") fits both, and a
    brand and type without model words ("the TRAVO pan") name it only where no other product of the category has
    both.

    ``listings``: the category's word index (:func:`name_checks` builds each once); None: the one kept for the
    category, built on its first use (~0.1 s at 60,000 products)."""
    name = spoken_name(catalog, row)
    if not name.unique:
        return False
    brand, noun = catalog.brand_of(row), product_type(catalog, row)
    names = ItemNames(catalog.product_id(row), brand.lower(), name.model.lower(), noun.lower())
    if names.score(name.text.lower()) < NAMED:
        return False
    category = catalog.category.item(row)
    # brand and type alone ("the TRAVO pan") name it only if no other product of its category has both
    if not name.model:
        rows = catalog.category_rows[category]
        others = rows[(catalog.brand[rows] == catalog.brand[row]) & (rows != row)]  # its brand's other listings
        types = category_types(catalog, category)
        same = [code for code, type_name in enumerate(types.names) if type_name == noun]
        if np.isin(types.codes[np.searchsorted(types.rows, others)], same).any():
            return False
    # what an agent reads: every other listing of the category; one answers to the name when its brand and title
    # hold the brand's and the type's words and the model words in a row ("TRAVO Flex 8X desk lamp" beside "Desk
    # Lamp for Home Office - TRAVO Flex 8X Architect ...", or another brand's "[3 Pack] NEXUM Screen Protector
    # Compatible with Zentari Prime 2S" beside "Zentari screen protector"). The category's word index names the few
    # listings worth reading.
    model_words, needed = list(_name_words(name.model)), list(_name_words(f"{brand} {noun}"))
    if listings is None:
        listings = LISTINGS.of(catalog, category)
    return not any(other != row and _fits(needed, model_words, _listing_words(catalog, other))
                   for other in listings.holding(needed + model_words).tolist())


@dataclass(frozen=True)
class Listings:
    """One category's listings (each product's brand and title words) as a word index: per word, the ascending
    positions, among the category's ``rows``, of the listings holding it (``positions[starts[i]:starts[i + 1]]``
    for the word ``i``). Arrays, not a set per word: a 60,000-product category takes ~5 MB and ~0.1 s to index."""

    rows: np.ndarray
    word_ids: dict[str, int]
    starts: list[int]  # Python ints: a posting's length is read per word of every name checked
    positions: np.ndarray

    def holding(self, needed: list[str]) -> np.ndarray:
        """The rows of the listings whose words include every word of ``needed``, and perhaps one that does not
        (intersecting stops at one listing left: the caller reads the few left's words anyway, and most names leave
        only their own listing)."""
        ids = [self.word_ids.get(word, -1) for word in needed]
        if not ids:
            return self.rows
        if -1 in ids:  # a word no listing has: none holds them all
            return self.rows[:0]
        starts = self.starts
        ids.sort(key=lambda i: starts[i + 1] - starts[i])  # the rarest first
        held = self.positions[starts[ids[0]]:starts[ids[0] + 1]]
        for i in ids[1:]:
            if len(held) <= 1:
                break
            posting = self.positions[starts[i]:starts[i + 1]]
            found = posting.searchsorted(held)
            held = held[posting[found.clip(max=len(posting) - 1)] == held]
        return self.rows[held]


def _numpy(array: pa.Array | pa.ChunkedArray, dtype: type[np.generic]) -> np.ndarray:
    """A fixed-width Arrow array without nulls as numpy, read from its data buffer: pyarrow's own conversion asks
    whether pandas is installed, which imports it into a process serving a catalog directory (see
    ``ecomrlve.server.app.defer_pandas``)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * np.dtype(dtype).itemsize)


def _listings(catalog: Catalog, category: int) -> Listings:
    return _listings_of(catalog, catalog.category_rows[category])


def _listings_of(catalog: Catalog, rows: np.ndarray) -> Listings:
    """The word index of the listings ``rows`` (:func:`_listing_words` of each), tokenised in Arrow: the words of
    ASCII text are cut there, those of other text by :func:`_words`' own pattern first (its lower-casing may make
    ASCII letters of other ones)."""
    rows = np.asarray(rows, dtype=np.int64)
    brands = pa.array([catalog.brands[code] for code in np.asarray(catalog.brand)[rows].tolist()], pa.string())
    texts = pc.binary_join_element_wise(brands, catalog.titles.take(pa.array(rows)), pa.scalar(" ", pa.string()))
    ascii_text = _numpy(pc.cast(pc.string_is_ascii(texts).fill_null(True), pa.uint8()), np.uint8).astype(bool)
    if not ascii_text.all():
        texts = pa.array([text if plain else " ".join(_WORD.findall(text.lower()))
                          for text, plain in zip(texts.to_pylist(), ascii_text.tolist())], pa.string())
    split = pc.split_pattern_regex(pc.ascii_lower(texts), r"[^a-z0-9]+")
    words, owners = pc.list_flatten(split), _numpy(pc.cast(pc.list_parent_indices(split), pa.int64()), np.int64)
    kept = _numpy(pc.cast(pc.binary_length(words), pa.int64()), np.int64) > 0
    words, owners = words.filter(pa.array(kept)), owners[kept]
    plural = (_numpy(pc.cast(pc.binary_length(words), pa.int64()), np.int64) > 3) & _numpy(
        pc.cast(pc.ends_with(words, "s"), pa.uint8()), np.uint8).astype(bool)
    words = pc.if_else(pa.array(plural), pc.utf8_slice_codeunits(words, 0, -1), words)  # _words: a plural "s" dropped
    encoded = pc.dictionary_encode(words)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.unify_dictionaries().combine_chunks()
    vocabulary = encoded.dictionary.to_pylist()
    width = max(len(rows), 1)
    keys = np.sort(_numpy(pc.cast(encoded.indices, pa.int64()), np.int64) * width + owners)  # by word, then row
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]  # a word once per listing (np.unique hashes: slower)
    counts = np.bincount(keys // width, minlength=len(vocabulary))
    return Listings(rows, dict(zip(vocabulary, range(len(vocabulary)))), [0, *np.cumsum(counts).tolist()],
                    (keys % width).astype(np.int32))


LISTINGS = derived("cart_listings", _listings)


def _listing_words(catalog: Catalog, row: int) -> list[str]:
    """What a listing shows of a name, as words: its brand and title (what the word index holds of it)."""
    return _words(f"{catalog.brand_of(row)} {catalog.title(row)}")


def _words(text: str) -> list[str]:
    """Lower-case words of letters and digits, a plural "s" dropped ("Running Shoes": "running shoe")."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(text.lower())]


_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1 << 16)
def _name_words(text: str) -> tuple[str, ...]:
    """:func:`_words` of a name's part (model words; brand and type), kept by text: many products share them."""
    return tuple(_words(text))


def _fits(name_words: list[str], model_words: list[str], title: list[str]) -> bool:
    """Whether a listing whose words are ``title`` answers to a name: its brand and type words, and its model words
    in a row ("Nova 2" is not in "Nova 21 ..., 2-Pack")."""
    n = len(model_words)
    return all(w in title for w in name_words) and (not n or any(title[i:i + n] == model_words
                                                                 for i in range(len(title) - n + 1)))


NAMES_ITSELF: Derived[dict[int, bool]] = derived("cart_names_itself", lambda catalog: {})


def _checks_against(catalog: Catalog, rows: np.ndarray, listings: Listings) -> dict[int, bool]:
    """:func:`_names_itself` of each of ``rows``, in order, read against their category's word index: what a
    category's first use and ``catalog build`` work out."""
    return {row: _names_itself(catalog, row, listings) for row in rows.tolist()}


def _category_name_checks(catalog: Catalog, category: int) -> dict[int, bool]:
    """:func:`_names_itself` of every product of a category worked out at once (its word index built once): a
    CART reset then looks its targets up, where one product at a time cost 13-15 µs per product not yet seen
    (~5 per reset). First use of a category: ~35 µs per product, ~15 ms for the default catalog's ~450."""
    return _checks_against(catalog, catalog.category_rows[category], LISTINGS.of(catalog, category))


CATEGORY_NAME_CHECKS: Derived[dict[int, bool]] = derived("cart_category_name_checks", _category_name_checks)
#: :func:`name_checks` as a catalog directory stores it (None: not stored, worked out on first use)
STORED_NAME_CHECKS: Derived[np.ndarray | None] = derived("cart_whole_category_name_checks", lambda catalog: None)


def name_checks(catalog: Catalog, progress: Callable[[int], None] = lambda n: None) -> np.ndarray:
    """:func:`names_itself` of every product, for ``catalog build`` to store (``derived/``), each category's word
    index built once and dropped after it (a 2M catalog's indexes together take hundreds of MB), so that no first
    use of a large category costs an episode its index. ``progress``: products done."""
    checks = np.zeros(len(catalog), dtype=bool)
    for rows in catalog.category_rows:
        rows = np.asarray(rows)
        checks[rows] = list(_checks_against(catalog, rows, _listings_of(catalog, rows)).values())
        progress(len(rows))
    return checks


# -- the environment ------------------------------------------------------------------------------

class CartFamily(TaskFamily):
    env_id = ENV_ID
    version = 17
    tool_names = ("catalog_search", "catalog_get_product", "cart_add", "cart_set_quantity", "user_get_visit_history",
                  "ask_user")
    answer_arguments = CartAnswer
    # the shopper names each product (brand, model, type) and its variant: no verdict here reads the rest
    unused_card_fields = frozenset({"price", "rating", "rating_count", "ship_days", "attributes"})
    dated = False  # no item, stock or reply depends on the date
    instructions = ("put exactly the products, variants and quantities the customer asks for in their cart, "
                    "then call answer(done=true).")

    def answer_description(self, difficulty: Difficulty) -> str:
        return "done=true."

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        catalog = world.catalog
        items: list[CartItemGoal] = []
        used_categories: set[int] = set()
        used_rows: set[int] = set()
        adapted: dict[str, str] = {}
        for _ in range(difficulty.cart_items):
            needs_variant = rng.random() < difficulty.p_variant
            quantity = rng.randint(2, 4) if rng.random() < difficulty.p_multi_qty else 1
            if len(used_categories) == len(catalog.categories):  # a small catalog: items share categories
                adapted["cart_items"] = (f"the catalog has {len(catalog.categories)} categories for "
                                         f"{difficulty.cart_items} items; items share categories")
                used_categories = set()
            row = self._sample_row(world, rng, quantity, needs_variant, exclude_categories=used_categories,
                                   exclude_rows=used_rows)
            if row is None and quantity > 1:  # a real catalog's stock may be a unit or two
                quantity = 1
                row = self._sample_row(world, rng, quantity, needs_variant, exclude_categories=used_categories,
                                       exclude_rows=used_rows)
            if row is None:
                if not items:
                    raise GenerationError(f"could not sample a CART target from catalog {catalog.name} "
                                          f"after {_SAMPLE_TRIES} tries")
                adapted["cart_items"] = (f"the catalog has too few distinct products to ask for for "
                                         f"{difficulty.cart_items} items; the cart has {len(items)}")
                break
            used_categories.add(int(catalog.category[row]))
            used_rows.add(row)
            item = self._item(world, row, rng, needs_variant, quantity)
            if rng.random() < difficulty.p_oos and world.can_sell_out(row):
                alternative = self._alternative(world, rng, item, used_rows)
                if alternative is not None:
                    used_rows.add(alternative.row)
                    world.sell_out(row)
                    item = item.model_copy(update={"stock_out": True, "alternative": alternative})
            items.append(item)
        world.reserve(it.alternative.row if it.stock_out and it.alternative is not None else it.row for it in items)
        items = self._with_history(world, rng, items, difficulty)
        withheld: list[tuple[int, Literal["variant", "quantity"]]] = []
        for i, item in enumerate(items):
            if item.variant_value is not None and rng.random() < difficulty.p_missing:
                withheld.append((i, "variant"))
            if item.quantity > 1 and rng.random() < difficulty.p_missing:
                withheld.append((i, "quantity"))
        goal = CartGoal(items=items, withheld=withheld, confirm_first=rng.random() < CONFIRM_PROBABILITY,
                        patience=BASE_PATIENCE + rng.randint(0, 2))
        state = CartState()
        withheld_set = set(withheld)
        for i, item in enumerate(items):
            if item.variant_value is not None:
                state.constraints.append(Constraint(i, "variant", item.variant_value, (i, "variant") in withheld_set))
            if item.quantity > 1:
                state.constraints.append(Constraint(i, "quantity", str(item.quantity), (i, "quantity") in withheld_set))
        user = CartUser(realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=goal.patience, goal=goal,
                        state=state)
        return Problem(goal=goal, state=state, user=user, opening=user.opening(), difficulty=difficulty,
                       adapted=adapted)

    @staticmethod
    def _sample_row(world: World, rng: random.Random, quantity: int, needs_variant: bool,
                    exclude_categories: set[int], exclude_rows: set[int], category: int | None = None) -> int | None:
        """A target the shopper can name unambiguously, in stock, allowed, with variants if needed
        (None if ``_SAMPLE_TRIES`` draws find none)."""
        catalog = world.catalog
        pool = catalog.category_rows[category] if category is not None else None
        for _ in range(_SAMPLE_TRIES):
            row = int(pool[rng.randrange(len(pool))]) if pool is not None else rng.randrange(len(catalog))
            if (world.available(row, quantity) and catalog.category.item(row) not in exclude_categories
                    and row not in exclude_rows and not world.is_denied(row)
                    and (not needs_variant or bool(world.variants(row))) and names_itself(catalog, row)):
                return row
        return None

    @staticmethod
    def _item(world: World, row: int, rng: random.Random, needs_variant: bool, quantity: int,
              variant_value: str | None = None) -> CartItemGoal:
        catalog = world.catalog
        name = spoken_name(catalog, row)
        brand, noun, model = catalog.brand_of(row), product_type(catalog, row), name.model
        variants = world.variants(row)
        variant = None
        if needs_variant:
            variant = (next(v for v in variants if v.value == variant_value) if variant_value
                       else rng.choice(variants))
        return CartItemGoal(
            product_id=catalog.product_id(row), row=row, phrase="the " + name.text, full_phrase="the " + name.text,
            brand=brand, noun=noun, category=catalog.category_of(row).name, model=model,
            variant_attribute=variants[0].attribute if variants else None,
            variant_value=variant.value if variant else None, variant_id=variant.variant_id if variant else None,
            quantity=quantity,
        )

    def _alternative(self, world: World, rng: random.Random, item: CartItemGoal, used_rows: set[int]) -> CartItemGoal | None:
        category = int(world.catalog.category[item.row])
        pool = world.catalog.category_rows[category]
        for _ in range(_SAMPLE_TRIES // 4):
            row = int(pool[rng.randrange(len(pool))])
            if (row in used_rows or not world.available(row, item.quantity) or world.is_denied(row)
                    or not same_type(product_type(world.catalog, row), item.noun) or not names_itself(world.catalog, row)):
                continue
            if item.variant_value is not None and item.variant_value not in {v.value for v in world.variants(row)}:
                continue
            return self._item(world, row, rng, item.variant_value is not None, item.quantity, item.variant_value)
        return None

    @staticmethod
    def _with_history(world: World, rng: random.Random, items: list[CartItemGoal], difficulty: Difficulty) -> list[CartItemGoal]:
        """Put some targets (and plausible distractors) in the visit history; name some vaguely."""
        catalog = world.catalog
        history = [it.row for it in items if rng.random() < HISTORY_PROBABILITY]
        wanted = {it.row for it in items} | {it.alternative.row for it in items if it.alternative is not None}
        for it in items:  # same-category distractors make the history worth reading carefully
            pool = catalog.category_rows[int(catalog.category[it.row])]
            for _ in range(difficulty.cart_history_lookalikes):
                row = int(pool[rng.randrange(len(pool))])
                if row not in history and row not in wanted:
                    history.append(row)
        rng.shuffle(history)
        world.visit_history.extend(history)

        def fits(r: int, row: int, head: list[str]) -> bool:
            """Whether viewed product ``r`` answers to "the <brand> <type> I looked at" said of ``row`` (whose type's
            head word is ``head``): the brand, and the category, the type's head word or that word in its title
            ("Running Insoles ... Shoe Inserts")."""
            if catalog.brand.item(r) != catalog.brand.item(row):
                return False
            return (catalog.category.item(r) == catalog.category.item(row) or _words(product_type(catalog, r))[-1:] == head
                    or bool(head) and head[0] in _words(catalog.title(r)))

        out = []
        for it in items:
            if it.row in history:  # one copy with what changes (items are made with in_history False)
                update: dict[str, Any] = {"in_history": True}
                head = _words(product_type(catalog, it.row))[-1:] if it.brand else []
                if (it.brand and sum(fits(r, it.row, head) for r in world.visit_history) == 1
                        and rng.random() < VAGUE_REFERENCE_PROBABILITY):  # without a brand, the type alone is vague
                    update["phrase"] = f"the {it.brand} {spoken_noun(it.noun)} I was looking at earlier"
                it = it.model_copy(update=update)
            out.append(it)
        return out

    def verify(self, goal: CartGoal, state: CartState, world: World, answer: CartAnswer | None) -> TaskOutcome:
        cart = [(line.row, line.variant_id, line.quantity) for line in world.cart.lines]
        f1, u_match, u_cart, u_req = unit_f1(state.required_units(goal), cart)
        confirmed = not goal.confirm_first or state.confirmed_cart == _cart_key(world) or (state.corrected and f1 == 1.0)
        r_task = 2 * f1 - 1 if answer is not None else -1.0
        if not confirmed:
            r_task = min(r_task, UNCONFIRMED_CAP)
        denied = [world.catalog.product_id(r) for r, _, _ in cart if world.is_denied(r)]
        return TaskOutcome(
            r_task=r_task, is_correct=answer is not None and f1 == 1.0 and confirmed,
            details={"f1": f1, "u_match": u_match, "u_cart": u_cart, "u_req": u_req, "confirmed": confirmed,
                     "answered": answer is not None},
            safety_violation=f"cart holds products of a denied category: {denied}" if denied else None,
        )

    def oracle(self, problem: Problem[CartGoal, CartState]) -> CartOracle:
        return CartOracle(problem)


# -- the oracle -----------------------------------------------------------------------------------

class CartOracle:
    """Solves CART through the tools: find each item, ask only for withheld values, add, confirm, answer.

    It reads the hidden goal to decide what to do, but every id it submits comes from a tool
    result and every variant/quantity from the shopper's words.
    """

    def __init__(self, problem: Problem[CartGoal, CartState]) -> None:
        self.goal = problem.goal
        self.state = problem.state
        self.b_tool = problem.difficulty.B_tool
        self.cards: dict[str, dict[str, Any]] = {}
        self.added: set[str] = set()
        self.searched: dict[str, int] = {}
        self.asked_withheld = False
        self.announced: set[int] = set()
        self.history_checked = False
        self.confirm_requested = False

    def act(self, observation: Observation) -> AgentAction:
        for card in cards(observation):
            self.cards[card["product_id"]] = card
        for name, result in tool_results(observation):
            if name == "cart_add" and "lines" in result:
                self.added.update(line["product_id"] for line in result["lines"])
        calls: list[ToolCall] = []
        messages: list[str] = []
        items = self.state.active_items(self.goal)
        constraints = self.state.constraints

        def call(name: str, **arguments: Any) -> None:
            if len(calls) < self.b_tool:
                calls.append(ToolCall(id=f"oracle_{len(calls)}", name=name, arguments=arguments))

        unknown = unknown_to_agent(constraints)  # the oracle asks for these, and adds once there are none
        if not self.asked_withheld and unknown:
            questions = []
            for c in unknown:
                item = items[c.item]
                word = "how many" if c.attribute == "quantity" else f"which {_word(item.variant_attribute)}"
                questions.append(f"for {item.full_phrase}, {word}?")
            asked = " Also, ".join(questions)
            messages.append(asked[0].upper() + asked[1:])
            self.asked_withheld = True
        for i, item in enumerate(items):
            shown = self.cards.get(item.product_id)
            if shown is not None and not shown["in_stock"] and i not in self.announced and item.stock_out and i not in self.state.switched:
                messages.append(f"Sorry, {item.full_phrase} is out of stock.")
                self.announced.add(i)
        for item in items:
            if item.product_id in self.cards or self.searched.get(item.product_id, 0) >= 3:
                continue
            if item.in_history and not self.history_checked and item.phrase != item.full_phrase:
                call("user_get_visit_history")
                self.history_checked = True
                continue
            attempt = self.searched.get(item.product_id, 0)
            filters = {"brand": item.brand, "category": item.category}
            call("catalog_search", query=item.full_phrase[4:], filters=filters,
                 **({"top_k": 50} if attempt else {}))
            self.searched[item.product_id] = attempt + 1
        knowledge_complete = not unknown
        pending_adds = [it for it in items if it.product_id in self.cards and it.product_id not in self.added
                        and self.cards[it.product_id]["in_stock"]]
        if knowledge_complete and not messages:
            for item in pending_adds:
                arguments: dict[str, Any] = {"product_id": item.product_id, "quantity": item.quantity}
                variants = self.cards[item.product_id].get("variants", [])
                if variants:
                    wanted = item.variant_value or variants[0][item.variant_attribute]
                    arguments["variant_id"] = next(v["variant_id"] for v in variants if v[item.variant_attribute] == wanted)
                call("cart_add", **arguments)
            all_added = all(it.product_id in self.added for it in items)
            will_be_complete = len(pending_adds) <= len(calls) and all(
                it.product_id in self.added or it in pending_adds for it in items)
            if self.goal.confirm_first and not self.confirm_requested and (all_added or will_be_complete):
                messages.append("Does the cart look right?")
                self.confirm_requested = True
            elif all_added and not calls and (not self.goal.confirm_first or self.confirm_requested):
                call("answer", done=True)
        return AgentAction(message=" ".join(messages) or None, tool_calls=tuple(calls))


def _word(attribute: str | None) -> str:
    return ATTRIBUTE_WORDS.get(attribute or "", "variant")
