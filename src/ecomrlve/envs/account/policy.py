"""POLICY — store policy Q&A.

Description
    The customer asks one question about the store policy (return windows, final sale, restocking
    and return-shipping fees, refunds, shipping cost and times, free-shipping thresholds, price
    adjustment, warranty). The answer depends on B_branch(d) conditions of their situation; some
    are stated, others (membership tier, the item, its price and dates) are only in their profile
    or order history. The agent reads the policy with ``policy_search`` (rules, never answers),
    looks up what it needs, works the answer out and submits it.
Hidden goal
    :class:`PolicyGoal`: the question kind (:data:`KINDS`), the full situation, which conditions
    are hidden in the account, and the expected answer, computed by the rule engine
    (:mod:`ecomrlve.world.policy`) from the same situation the question is generated from.
Tools
    policy_search, user_get_profile, order_list, order_get_details, ask_user, answer(value?, yes_no?, basis?).
Scoring
    :func:`policy_score`. Numeric: exact (to the cent) 1, else ``2·(min/max)^4 − 1`` for positive
    values, −1 if one side is 0 or negative; yes/no: the answer gives ``basis``, the policy number it
    rests on (the department's base return window, the customer's return window in days, or their
    warranty in months), and scores 1 with the right yes/no and basis, 0 with the right basis only, −1
    without the right basis (a bare yes/no is a coin toss); no answer −1.
    is_correct iff r_task ≥ 0.95.
Difficulty axes used
    B_branch (conditions), p_missing (conditions hidden in the account), H_orders, p_noise, B_tool, T_max.
Episode end
    ``answer``, turn budget, or the customer giving up (patience).
Version history
    In CHANGELOG.md, section POLICY; the version is ``PolicyFamily.version``.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog.product_type import indefinite, product_type
from ecomrlve.catalog.schema import Catalog, Category
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.account import acts as A
from ecomrlve.envs.account.customer import AccountUser
from ecomrlve.envs.account.orders import (
    has_category,
    line_name,
    random_status_order,
    sample_row,
    spoken_date,
)
from ecomrlve.envs.base import Problem, TaskFamily, TaskOutcome, TaskState
from ecomrlve.protocol import tool_results
from ecomrlve.user.acts import Acknowledge, DialogueAct
from ecomrlve.user.realiser import Realiser
from ecomrlve.user.understanding import understand
from ecomrlve.world import policy as P
from ecomrlve.world.state import World

if TYPE_CHECKING:
    from ecomrlve.protocol import Observation

ENV_ID = "POLICY"
IS_CORRECT_AT = 0.95
RATIO_POWER = 4
BASE_PATIENCE = 3
# Draws are tilted so that numeric answers are rarely 0 (answering 0 must not pay) and yes/no
# answers are "yes" half the time (answering a constant must not pay): a yes/no question first draws
# its answer, then a situation that has it.
YES_SHARE = 0.5
NO_BY_ITEM_SHARE = 0.4  # a "no" that comes from the item (final sale, no warranty) rather than the date
FINAL_SALE_SHARE = 0.05  # numeric return questions: items drawn from final-sale categories
FEE_DEPARTMENT_SHARE = 0.95  # numeric restocking/warranty questions: items from departments where the rule bites
INSIDE_SHARE = 0.9  # numeric questions: day counts inside the window
OPENED_SHARE = 0.95
STORE_FAULT_SHARE = 0.3  # refund questions with a stated reason: reasons that waive every fee
EDGE_DAYS = 6  # day counts are drawn within this distance of the window or warranty edge
REASON_WORDS = {"defective": "it stopped working", "damaged": "it arrived damaged", "wrong_item": "you sent the wrong item",
                "not_as_described": "it isn't as described", "no_longer_needed": "I changed my mind"}


class Situation(BaseModel):
    """The customer's circumstances; a question kind reads some of these fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    category: str | None = None  # the item's leaf category name
    department: str | None = None  # its catalog department (category path[0]); comes with the category
    tier: P.Tier | None = None
    days_since_delivery: int | None = None
    days_since_order: int | None = None
    opened: bool | None = None
    price_cents: int | None = None
    new_price_cents: int | None = None
    reason: P.ReturnReason | None = None
    return_method: P.ReturnMethod | None = None
    shipping_method: P.ShippingMethod | None = None
    subtotal_cents: int | None = None


ITEM_FIELDS = ("category", "price_cents", "days_since_delivery", "days_since_order")  # looked up in an order when hidden


@dataclass(frozen=True)
class Kind:
    """One kind of question: the conditions it depends on, how it is asked, and the rule that answers it."""

    name: str
    conditions: tuple[str, ...]  # Situation fields the answer depends on (B_branch counts these)
    answer: Literal["number", "yes_no"]
    question: str
    sections: tuple[str, ...]  # policy sections that hold the rules it needs
    rule: Callable[[Situation, P.StorePolicy], float | bool]  # the answer under the episode's store policy
    fixed: dict[str, Any] | None = None  # situation values stated but not varied (not counted as conditions)
    #: yes/no kinds: the policy number the answer rests on (a window in days, a warranty in months), which the
    #: answer must give with it; a bare yes/no is a coin toss
    basis: Callable[[Situation, P.StorePolicy], float] | None = None


_V = TypeVar("_V")


def _stated(value: _V | None) -> _V:
    """A condition's value in a situation: a kind's rule and facts read only the conditions its situation states."""
    if value is None:
        raise ValueError("the situation does not state a condition its kind reads")
    return value


def _refund(s: Situation, p: P.StorePolicy) -> float:
    return P.refund_cents(category=_stated(s.category), department=_stated(s.department), tier=_stated(s.tier),
                          days_since_delivery=_stated(s.days_since_delivery), opened=_stated(s.opened), reason=_stated(s.reason),
                          method=_stated(s.return_method), price_cents=_stated(s.price_cents), policy=p) / 100


def _base_window(s: Situation, p: P.StorePolicy) -> float:
    """The item's department's return window before any membership bonus, in days (final sale or not)."""
    return float(p.return_window_days[P.rule_department(_stated(s.department), p)])


def _customer_window(s: Situation, p: P.StorePolicy) -> float:
    """The customer's return window for the item: its department's plus their tier's bonus, in days."""
    return float(P.return_window_days(_stated(s.department), _stated(s.tier), p))


def _customer_warranty(s: Situation, p: P.StorePolicy) -> float:
    """The customer's warranty on the item in months (0: its department has none)."""
    return float(P.warranty_months(_stated(s.department), _stated(s.tier), p))


_REFUND_SECTIONS = ("departments", "return-window", "final-sale", "restocking-fee", "return-shipping", "refunds")
KINDS: tuple[Kind, ...] = (
    Kind("base_window", ("category",), "number",
         "What is the base return window for that kind of item, before any membership bonus, in days?",
         ("departments", "return-window"), _base_window),
    Kind("final_sale", ("category",), "yes_no", "Can that kind of item be returned at all (yes or no)?",
         ("departments", "return-window", "final-sale"), lambda s, p: not P.is_final_sale(_stated(s.category), p),
         basis=_base_window),
    Kind("delivery_days", ("shipping_method",), "number",
         "If I order today with that shipping method, in how many days would it arrive?",
         ("shipping-methods",), lambda s, p: float(p.handling_days + p.shipping_days[_stated(s.shipping_method)])),
    Kind("free_shipping_threshold", ("tier",), "number",
         "What order subtotal do I need for free standard shipping, in dollars?",
         ("free-shipping",), lambda s, p: p.free_shipping_threshold_cents[_stated(s.tier)] / 100),
    Kind("price_match_window", ("tier",), "number",
         "For how many days after ordering can I get a price adjustment?",
         ("price-adjustment",), lambda s, p: float(p.price_match_days[_stated(s.tier)])),
    Kind("return_window", ("category", "tier"), "number",
         "How many days do I have to return it, counted from delivery?",
         ("departments", "return-window"), lambda s, p: float(P.return_window_days(_stated(s.department), _stated(s.tier), p))),
    Kind("warranty_months", ("category", "tier"), "number", "How many months of warranty does it have for me?",
         ("departments", "warranty"), lambda s, p: float(P.warranty_months(_stated(s.department), _stated(s.tier), p))),
    Kind("shipping_cost", ("shipping_method", "tier", "subtotal_cents"), "number",
         "How much will shipping cost for that order, in dollars?",
         ("shipping-methods", "free-shipping", "expedited-shipping"),
         lambda s, p: P.shipping_cost_cents(_stated(s.shipping_method), _stated(s.tier), _stated(s.subtotal_cents), p) / 100),
    Kind("can_return", ("category", "tier", "days_since_delivery"), "yes_no",
         "Can I still return it today (yes or no)?", ("departments", "return-window", "final-sale"),
         lambda s, p: not P.is_final_sale(_stated(s.category), p)
         and _stated(s.days_since_delivery) <= P.return_window_days(_stated(s.department), _stated(s.tier), p),
         basis=_customer_window),
    Kind("under_warranty", ("category", "tier", "days_since_delivery"), "yes_no",
         "Is it still covered by the store warranty today (yes or no)?", ("departments", "warranty"),
         lambda s, p: P.under_warranty(_stated(s.department), _stated(s.tier), _stated(s.days_since_delivery), p),
         basis=_customer_warranty),
    Kind("restocking_fee", ("category", "tier", "opened", "price_cents"), "number",
         "What restocking fee would I pay to return it because I changed my mind, in dollars?",
         ("departments", "restocking-fee"),
         lambda s, p: P.restocking_fee_cents(_stated(s.department), _stated(s.tier), _stated(s.opened), "no_longer_needed", _stated(s.price_cents), p) / 100),
    Kind("price_adjustment", ("tier", "days_since_order", "price_cents", "new_price_cents"), "number",
         "How much would you refund me for the price drop, in dollars?", ("price-adjustment",),
         lambda s, p: P.price_match_refund_cents(_stated(s.tier), _stated(s.days_since_order), _stated(s.price_cents), _stated(s.new_price_cents), p) / 100),
    Kind("refund", ("category", "tier", "days_since_delivery", "opened", "price_cents"), "number",
         "If I return it, how much money would I get back, in dollars?", _REFUND_SECTIONS, _refund,
         fixed={"reason": "no_longer_needed", "return_method": "drop_off"}),
    Kind("refund_reason", ("category", "tier", "days_since_delivery", "opened", "price_cents", "reason"), "number",
         "If I return it, how much money would I get back, in dollars?", _REFUND_SECTIONS, _refund,
         fixed={"return_method": "drop_off"}),
    Kind("refund_full", ("category", "tier", "days_since_delivery", "opened", "price_cents", "reason", "return_method"),
         "number", "If I return it, how much money would I get back, in dollars?", _REFUND_SECTIONS, _refund),
)
KIND_BY_NAME = {k.name: k for k in KINDS}
MAX_CONDITIONS = max(len(k.conditions) for k in KINDS)


def kinds_for(b_branch: int) -> list[Kind]:
    """The kinds whose answer depends on exactly min(B_branch, the most any kind has) conditions."""
    n = min(b_branch, MAX_CONDITIONS)
    return [k for k in KINDS if len(k.conditions) == n]


def _near(edge: int, inside: bool, rng: random.Random) -> int:
    """A day count at most EDGE_DAYS inside (``edge`` itself included) or outside a limit of ``edge`` days."""
    return max(1, edge - rng.randint(0, EDGE_DAYS)) if inside and edge >= 1 else edge + rng.randint(1, EDGE_DAYS)


def _item_filter(world: World, kind: Kind, yes: bool | None, rng: random.Random) -> Callable[[Category], bool] | None:
    """Which categories the question's item may come from: for a yes/no question one that can give the
    drawn answer ``yes``, for a numeric one mostly where the rule bites (see the shares above); no filter
    when the catalog has no category that passes it."""
    policy = world.policy
    accept = None
    if kind.name in ("final_sale", "can_return") or kind.name.startswith("refund"):
        if yes is None:
            final_sale = rng.random() < FINAL_SALE_SHARE
        else:
            final_sale = not yes and (kind.name == "final_sale" or rng.random() < NO_BY_ITEM_SHARE)
        accept = lambda c: P.is_final_sale(c.name, policy) == final_sale
    elif kind.name in ("restocking_fee", "warranty_months", "under_warranty"):
        table = policy.restocking_fee_percent if kind.name == "restocking_fee" else policy.warranty_months
        bites = rng.random() < FEE_DEPARTMENT_SHARE if yes is None else yes or rng.random() >= NO_BY_ITEM_SHARE
        accept = lambda c: (table[P.rule_department(c.path[0], policy)] > 0) == bites
    return accept if accept is not None and has_category(world, accept) else None


class PolicyGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    situation: Situation
    hidden: list[str]  # conditions only in the profile ("tier") or an order (item fields)
    order_id: str | None  # the order holding the item, when item facts are hidden
    expected_number: float | None
    expected_yes_no: Literal["yes", "no"] | None
    expected_basis: float | None = None  # yes/no questions: the policy number the answer rests on
    facts: list[str]  # what the customer states
    exact: list[str]
    patience: int


BASIS_DESCRIPTION = (
    "Required with yes_no: the number from the store policy that the yes/no rests on, as the policy states it for "
    "this item and customer. 'Can that kind of item be returned at all': the base return window of the item's "
    "department in days (also for a final-sale item). 'Can I still return it today': the customer's return window "
    "in days (the department's window plus their membership bonus; also for a final-sale item). 'Is it still "
    "covered by the store warranty': the customer's warranty in months (the department's months plus their "
    "membership bonus; 0 when the department has no warranty). A yes/no without the right basis scores as wrong; "
    "the right basis with the wrong yes/no scores 0.")


class PolicyAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    value: float | None = Field(None, description="The answer to a question asking for a number (days, months or "
                                                  "dollars, e.g. 12.5).")
    yes_no: Literal["yes", "no"] | None = Field(None, description="The answer to a yes/no question; give basis with it.")
    basis: float | None = Field(None, description=BASIS_DESCRIPTION)


# -- scoring (pure) -------------------------------------------------------------------------------

def same_amount(a: float | None, b: float | None) -> bool:
    """Equal to the cent (``None`` equals nothing)."""
    return a is not None and b is not None and abs(a - b) < 0.005


def ratio_score(answer: float, expected: float) -> float:
    """``2·(min/max)^4 − 1`` for positive values; exact (to the cent) is 1; a sign or zero mismatch −1."""
    if same_amount(answer, expected):
        return 1.0
    if answer <= 0 or expected <= 0:
        return -1.0
    return 2 * (min(answer, expected) / max(answer, expected)) ** RATIO_POWER - 1


def yes_no_score(yes_no: str | None, basis: float | None, expected_yes_no: str, expected_basis: float | None) -> float:
    """1 for the right yes/no with the right basis, 0 for the right basis with the wrong (or no) yes/no, −1
    without the right basis: a bare yes/no is a coin toss and earns nothing. Kinds without a basis (none
    today) score the yes/no alone (±1)."""
    if expected_basis is not None and not same_amount(basis, expected_basis):
        return -1.0
    if yes_no == expected_yes_no:
        return 1.0
    return 0.0 if expected_basis is not None else -1.0


def policy_score(goal: PolicyGoal, answer: PolicyAnswer | None) -> float:
    if answer is None:
        return -1.0
    if goal.expected_yes_no is not None:
        return yes_no_score(answer.yes_no, answer.basis, goal.expected_yes_no, goal.expected_basis)
    if answer.value is None or goal.expected_number is None:
        return -1.0
    return ratio_score(answer.value, goal.expected_number)


# -- the simulated customer -----------------------------------------------------------------------

@dataclass
class PolicyState(TaskState):
    """POLICY's dialogue establishes nothing the verifier needs: the customer states every fact up
    front or leaves it in the account, so questions cost patience (all but one "anything else?")."""


@dataclass
class PolicyUser(AccountUser):
    """States the question; everything else it knows is in the account, so questions cost patience (all but one
    "anything else?", answered "that's all")."""

    goal: PolicyGoal = field(kw_only=True)  # required; after the base class's defaulted fields
    state: PolicyState = field(default_factory=PolicyState)

    def opening(self) -> str:
        question = KIND_BY_NAME[self.goal.kind].question
        return self.say(A.AskPolicy(tuple(self.goal.facts), question, tuple(self.goal.exact)))

    def on_question(self, question: str, world: World) -> str:
        return self.say(*self._respond(question))

    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        return self.say(*self._respond(message)) if message else None

    def _respond(self, text: str) -> list[DialogueAct]:
        reading = understand(text)
        if not reading.asks:
            return [Acknowledge()]
        if reading.open:
            return [self.nothing_more()]
        self.lose_patience()
        return [A.CheckMyAccount()]


# -- the environment ------------------------------------------------------------------------------

def _money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


class PolicyFamily(TaskFamily):
    env_id = ENV_ID
    version = 12
    draws_store_policy = True
    tool_names = ("policy_search", "user_get_profile", "order_list", "order_get_details", "ask_user")
    answer_arguments = PolicyAnswer
    instructions = ("answer the customer's question about the store policy. Read the policy with policy_search, "
                    "look up their membership (user_get_profile) and orders when the answer depends on them, work "
                    "out the exact answer, then call answer with value (a number), or with yes_no and basis (the "
                    "policy's window or warranty length the yes/no rests on).")

    def answer_description(self, difficulty: Difficulty) -> str:
        return ("Submit the answer: value for a number (days, months or dollars, e.g. 12.5), or for a yes/no question "
                "yes_no together with basis, the number from the policy it rests on (a bare yes/no scores as wrong).")

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        kind = rng.choice(kinds_for(difficulty.B_branch))
        world.install_episode_policy(random.Random(rng.getrandbits(64)))
        account = world.account
        for _ in range(max(0, difficulty.H_orders - 1)):  # orders that have nothing to do with the question
            unrelated = sample_row(world, rng, exclude=set())
            random_status_order(world, rng, [unrelated], rng.choice(("delivered", "in_transit", "processing", "cancelled")))
        situation, row = self._situation(world, kind, rng)
        hidden = [c for c in kind.conditions if c == "tier" and rng.random() < difficulty.p_missing]
        item_conditions = [c for c in kind.conditions if c in ITEM_FIELDS]
        order_id = None
        if item_conditions and row is not None and rng.random() < difficulty.p_missing:
            order_id = self._order_for(world, situation, row, rng)
            if order_id is not None:
                hidden.extend(item_conditions)
        if "tier" in kind.conditions and situation.tier != account.profile.tier:
            raise RuntimeError("POLICY situation tier must be the profile's tier")
        facts, exact = self._facts(world, kind, situation, hidden, order_id, row)
        value = kind.rule(situation, world.policy)
        goal = PolicyGoal(kind=kind.name, situation=situation, hidden=hidden, order_id=order_id,
                          expected_number=None if kind.answer == "yes_no" else round(float(value), 2),
                          expected_yes_no=("yes" if value else "no") if kind.answer == "yes_no" else None,
                          expected_basis=None if kind.basis is None else round(kind.basis(situation, world.policy), 2),
                          facts=facts, exact=exact, patience=BASE_PATIENCE + rng.randint(0, 2))
        world.name_ordered([row] if row is not None else [])  # a later request of a journey orders it no more
        user = PolicyUser(realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=goal.patience, goal=goal)
        return Problem(goal=goal, state=user.state, user=user, opening=user.opening(), difficulty=difficulty)

    @staticmethod
    def _situation(world: World, kind: Kind, rng: random.Random) -> tuple[Situation, int | None]:
        """Values for the kind's conditions (and the product they are about), drawn near the rule's edges so
        every branch is exercised."""
        values: dict[str, Any] = dict(kind.fixed or {})
        conditions = set(kind.conditions)
        tier, policy = world.account.profile.tier, world.policy
        yes = rng.random() < YES_SHARE if kind.answer == "yes_no" else None
        row = None
        if conditions & {"category", "price_cents"}:
            row = sample_row(world, rng, exclude=set(), accept=_item_filter(world, kind, yes, rng))
            category = world.catalog.category_of(row)
            values["category"], values["department"] = category.name, category.path[0]
            values["price_cents"] = int(world.catalog.price_cents[row])
        if "tier" in conditions:
            values["tier"] = tier
        inside = yes if yes is not None else rng.random() < INSIDE_SHARE
        if "days_since_delivery" in conditions:
            department = values["department"]
            edge = (P.warranty_months(department, tier, policy) * P.DAYS_PER_WARRANTY_MONTH
                    if kind.name == "under_warranty" else P.return_window_days(department, tier, policy))
            values["days_since_delivery"] = _near(edge, inside, rng)
        if "days_since_order" in conditions:
            values["days_since_order"] = _near(policy.price_match_days[tier], inside, rng)
        if "new_price_cents" in conditions:
            values["new_price_cents"] = values["price_cents"] - rng.randint(1, max(1, values["price_cents"] // 3))
        if "opened" in conditions:
            values["opened"] = rng.random() < OPENED_SHARE
        if "reason" in conditions:
            fault = rng.random() < STORE_FAULT_SHARE  # a store-fault return pays no fee: refunded in full
            values["reason"] = rng.choice([r for r in P.RETURN_REASONS if (r in policy.store_fault_reasons) == fault])
        if "return_method" in conditions:
            values["return_method"] = rng.choice(P.RETURN_METHODS)
        if "shipping_method" in conditions:
            values["shipping_method"] = rng.choice(P.SHIPPING_METHODS)
        if "subtotal_cents" in conditions:
            threshold = policy.free_shipping_threshold_cents[tier]
            values["subtotal_cents"] = (max(500, threshold + rng.choice((-1, 1)) * rng.randint(1, 2000)) if threshold
                                        else rng.randint(1000, 12000))
        return Situation(**values), row

    @staticmethod
    def _order_for(world: World, situation: Situation, row: int, rng: random.Random) -> str | None:
        """Place the order the question's item came from (so its facts can be looked up); None if impossible."""
        method = rng.choice(P.SHIPPING_METHODS)
        transit = world.policy.handling_days + world.policy.shipping_days[method]
        if situation.days_since_order is not None:
            age = situation.days_since_order - transit
            if age < 0:
                return None
        else:
            age = situation.days_since_delivery if situation.days_since_delivery is not None else rng.randint(1, 60)
        variants = world.variants(row)
        order = world.account.place_order([(row, variants[0].variant_id if variants else None, 1,
                                           situation.price_cents or int(world.catalog.price_cents[row]))],
                                          "delivered", method, age, rng)
        return order.order_id

    @staticmethod
    def _facts(world: World, kind: Kind, s: Situation, hidden: list[str], order_id: str | None,
               row: int | None) -> tuple[list[str], list[str]]:
        """The customer's sentences stating the non-hidden conditions (and the kind's fixed circumstances)."""
        facts: list[str] = []
        exact: list[str] = []
        stated = [c for c in kind.conditions if c not in hidden] + list(kind.fixed or {})
        if order_id is not None:
            order = world.account.order(order_id)
            if order is None:
                raise RuntimeError(f"POLICY's order {order_id} is not in the account it was placed in")
            title, when = line_name(world, order.lines[0].row), spoken_date(order.placed)
            facts.append(f"It's about the {title} I ordered on {when}.")
            exact.extend((title, when))  # noise never alters a name: a typo would make it another item
        elif "category" in stated:
            if row is None:
                raise RuntimeError(f"POLICY kind {kind.name} states a category but its situation drew no item")
            fact, names = category_fact(world.catalog, row)
            facts.append(fact)
            exact.extend(names)
        for condition in stated:
            if condition in _FACTS:
                template, spoken = _FACTS[condition]
                value = spoken(s)
                facts.append(template.format(v=value))
                exact.append(value)
            elif condition == "opened":
                facts.append("I've opened it." if s.opened else "It's still sealed, I never opened it.")
            elif condition == "reason":
                facts.append(f"I want to return it because {REASON_WORDS[_stated(s.reason)]}.")
        return facts, exact

    def verify(self, goal: PolicyGoal, state: PolicyState, world: World, answer: PolicyAnswer | None) -> TaskOutcome:
        r_task = policy_score(goal, answer)
        return TaskOutcome(r_task=r_task, is_correct=answer is not None and r_task >= IS_CORRECT_AT, details={
            "kind": goal.kind, "expected": goal.expected_number if goal.expected_yes_no is None else goal.expected_yes_no,
            "given": None if answer is None else (answer.value if goal.expected_yes_no is None else answer.yes_no),
            "expected_basis": goal.expected_basis, "given_basis": None if answer is None else answer.basis,
            "answered": answer is not None})

    def oracle(self, problem: Problem[PolicyGoal, PolicyState]) -> PolicyOracle:
        return PolicyOracle(problem)


#: condition -> (the customer's sentence, how its value is said); the value must reach the agent verbatim.
_FACTS: dict[str, tuple[str, Callable[[Situation], str]]] = {
    "tier": ("I'm a {v} member.", lambda s: P.TIER_NAMES[_stated(s.tier)]),
    "days_since_delivery": ("It was delivered {v} days ago.", lambda s: str(_stated(s.days_since_delivery))),
    "days_since_order": ("I ordered it {v} days ago.", lambda s: str(_stated(s.days_since_order))),
    "price_cents": ("I paid {v} for it.", lambda s: _money(_stated(s.price_cents))),
    "new_price_cents": ("Now it's listed at {v}.", lambda s: _money(_stated(s.new_price_cents))),
    "return_method": ("I'd send it back by {v}.", lambda s: P.RETURN_METHOD_NAMES[_stated(s.return_method)]),
    "shipping_method": ("I'm thinking of {v} shipping.", lambda s: _stated(s.shipping_method)),
    "subtotal_cents": ("My order subtotal is {v}.", lambda s: _money(_stated(s.subtotal_cents))),
}


_IRREGULAR_PLURALS = {"mice": "mouse", "knives": "knife", "shelves": "shelf", "feet": "foot", "teeth": "tooth"}


def _same_word(a: str, b: str) -> bool:
    """One word in two numbers ("hoodie"/"hoodies", "mouse"/"mice", "brush"/"brushes")."""
    a, b = _IRREGULAR_PLURALS.get(a, a), _IRREGULAR_PLURALS.get(b, b)
    short, long_ = sorted((a, b), key=len)
    return long_.startswith(short) and len(long_) - len(short) <= 2 and len(short) >= 3 or a == b


def names_category(noun: str, category: str) -> bool:
    """Whether a spoken noun names its category as the policy lists it: every word of one is a word of the other
    ("mouse" of Mice, "dumbbell set" of Dumbbells; not "lotion" of Moisturizers)."""
    said, listed = noun.lower().replace("-", " ").split(), category.lower().replace("-", " ").split()
    return (all(any(_same_word(w, v) for v in said) for w in listed)
            or all(any(_same_word(w, v) for v in listed) for w in said))


def category_fact(catalog: Catalog, row: int) -> tuple[str, list[str]]:
    """How the customer names the item's kind, and the words that must reach the agent verbatim.

    The noun alone when it is the category's own name ("a charger" of Chargers, whose words the policy's
    department list holds) and every category the word can mean (``Catalog.category_index``) follows the same
    policy rules (department row, final sale); otherwise the category and department are named too, so
    the documents decide the answer on any catalog ("a lotion" alone left the agent to guess that lotions are
    Moisturizers, which only the catalog's index knows).
    """
    category = catalog.category_of(row)
    noun = product_type(catalog, row)

    def rules(c: Category) -> tuple[str, bool]:  # what decides an answer; never varies between episodes
        return P.rule_department(c.path[0]), P.is_final_sale(c.name)

    meanings = {rules(catalog.categories[i]) for i in catalog.category_index.get(noun, ())}
    if names_category(noun, category.name) and meanings and meanings <= {rules(category)}:
        return f"It's about {indefinite(noun)}.", [indefinite(noun)]  # kept from typos: the noun decides the rules
    return (f"It's about {indefinite(noun)} from the {category.name} category of the {category.path[0]} department.",
            [category.name, category.path[0]])


# -- the oracle -----------------------------------------------------------------------------------

def section_searches(needed: Sequence[str], seen: Container[str], searched: Container[str], budget: int) -> list[str]:
    """The policy_search queries for the sections ``needed`` not yet ``seen``, at most ``budget`` of them: one per
    section title, and when they do not all fit, the last query asks for the remaining titles together (a search
    returns up to three sections, so it often brings them all). A query already in ``searched`` is not repeated."""
    titles = _section_titles()
    missing = [s for s in needed if s not in seen and titles[s] not in searched]
    if len(missing) <= budget:
        return [titles[s] for s in missing]
    head, tail = missing[:max(0, budget - 1)], missing[max(0, budget - 1):]
    together = " ".join(titles[s] for s in tail)
    return [titles[s] for s in head] + [together if together not in searched else titles[tail[0]]]


@functools.cache
def _section_titles() -> dict[str, str]:
    return {s.section_id: s.title for s in P.policy_documents()}


class PolicyOracle:
    """Reads every policy section the rule needs (by section title, the titles together when they do not fit in a
    turn), looks up hidden facts, answers."""

    def __init__(self, problem: Problem[PolicyGoal, PolicyState]) -> None:
        self.goal = problem.goal
        self.b_tool = problem.difficulty.B_tool
        self.sections = KIND_BY_NAME[self.goal.kind].sections
        self.seen: set[str] = set()
        self.searched: set[str] = set()
        self.lookups: list[str] = []
        if "tier" in self.goal.hidden:
            self.lookups.append("user_get_profile")
        if self.goal.order_id is not None:
            self.lookups.append("order_list")

    def act(self, observation: Observation) -> AgentAction:
        for name, result in tool_results(observation):
            if name == "policy_search":
                self.seen.update(s["section_id"] for s in result.get("sections", []))
        queries = section_searches(self.sections, self.seen, self.searched, max(1, self.b_tool - len(self.lookups)))
        batch = ([("policy_search", {"query": q}) for q in queries] + [(name, {}) for name in self.lookups])[: self.b_tool]
        self.searched.update(a["query"] for n, a in batch if n == "policy_search")
        self.lookups = [name for name in self.lookups if (name, {}) not in batch]
        if batch:
            return AgentAction(tool_calls=tuple(ToolCall(id=f"oracle_{i}", name=n, arguments=a)
                                                for i, (n, a) in enumerate(batch)))
        goal = self.goal
        arguments: dict[str, Any] = {"value": goal.expected_number}
        if goal.expected_yes_no is not None:
            arguments = {"yes_no": goal.expected_yes_no}
            if goal.expected_basis is not None:
                arguments["basis"] = goal.expected_basis
        return AgentAction(tool_calls=(ToolCall(id="oracle_0", name="answer", arguments=arguments),))
