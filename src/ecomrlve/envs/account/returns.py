"""RETURN — return + exchange.

Description
    The customer wants to return one item from their order history, named by order id (low d),
    by product and order date (middle) or only by product type and a rough time (high d, where
    look-alike lines may force a clarifying question). The agent finds the line, checks it
    against the store policy, starts the return with the customer's reason, or, when the item
    cannot be returned (past the window, final sale), starts nothing and says why. Half of the
    customers also want a replacement product with m(d)−1 constraints. Delivered background orders
    get the target's age distribution and the target order is created at a random point of the
    history, so its position in ``order_list`` says nothing about it.
Hidden goal
    :class:`ReturnGoal`: the target line and how it was described, its eligibility (from the
    policy rule engine), the reason (maybe withheld), whether to confirm first, the replacement
    requirements (:class:`~ecomrlve.envs.recommend.requirements.Requirement`, as in SUB), the orders this generator placed.
Tools
    user_get_profile, order_list, order_get_details, return_check_eligibility, return_initiate,
    policy_search, catalog_search, catalog_get_product, ask_user,
    answer(order_id, line_id, eligible, replacement_product_id?).
Scoring
    :func:`return_score`. Eligible target: returned (0.4), with the customer's reason (0.2), answer
    names the line and says eligible (0.2), valid replacement when asked (0.2); without a
    replacement request the first three are 0.5/0.25/0.25. Ineligible target: answer names the
    line (0.4) and says ineligible after the store told the agent so (0.6: ``return_check_eligibility``
    on that line, or a ``return_initiate`` refused), 0.8 of that plus 0.2 for the replacement when asked.
    Each other line the agent returned costs 0.5; ``r_task = 2·s − 1``; no answer −1; a return
    started before a requested confirmation caps r_task at 0. is_correct iff s = 1 (and no return
    was started before a requested confirmation).
Difficulty axes used
    H_orders, m, slack, p_missing (reason withheld), order_reference (how the line is named, and the
    distractor orders), return_window_edge, p_ineligible, p_noise, top_k, eps_rank (its
    ``catalog_search``), B_tool, T_max.
Episode end
    ``answer``, turn budget, or the customer giving up (patience).
Version history
    In CHANGELOG.md, section RETURN; the version is ``ReturnFamily.version``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog.product_type import is_main_type, is_powered, main_type, product_type, spoken_name
from ecomrlve.catalog.rowindex import contains_sorted
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.account import acts as A
from ecomrlve.envs.account.customer import AccountUser
from ecomrlve.envs.account.orders import (
    BY_ORDER_ID,
    Distractors,
    LineRef,
    fillers,
    has_category,
    has_look_alike,
    line_names,
    line_question_reply,
    ordered_rows,
    orders_in_play,
    place,
    place_copy,
    random_status_order,
    reference,
    sample_row,
)
from ecomrlve.envs.base import Problem, TaskFamily, TaskOutcome, TaskState
from ecomrlve.envs.recommend.requirements import (
    Requirement,
    category_requirement,
    closest_partner,
    derive_requirements,
    requirement_filter,
    valid_rows,
)
from ecomrlve.protocol import tool_results
from ecomrlve.user.acts import Acknowledge, Confirm, DialogueAct
from ecomrlve.user.realiser import Realiser
from ecomrlve.user.understanding import understand
from ecomrlve.world.account import OrderStatus
from ecomrlve.world.policy import RETURN_REASONS, ReturnReason, is_final_sale, return_window_days
from ecomrlve.world.state import World

if TYPE_CHECKING:
    from ecomrlve.protocol import Observation

ENV_ID = "RETURN"
CONFIRM_PROBABILITY = 0.25  # customers who want to confirm before a return is started
REPLACEMENT_PROBABILITY = 0.5  # half the customers also want a replacement
FINAL_SALE_SHARE = 0.3  # of the ineligible targets, the share that are final sale (the rest: window expired)
EDGE_DAYS = 3  # with return_window_edge, targets often sit within this many days of the window's last day
BASE_PATIENCE = 3
WRONG_RETURN_PENALTY = 0.5  # per other line returned
UNCONFIRMED_CAP = 0.0
BACKGROUND_STATUSES: tuple[OrderStatus, ...] = ("delivered", "delivered", "delivered", "in_transit", "processing", "cancelled", "returned")
REASON_PHRASES: dict[str, tuple[str, ...]] = {
    "defective": ("it stopped working after a few days", "it's faulty, it won't turn on properly"),
    "defective_unpowered": ("it broke after a few days", "it's faulty, it came apart the first time I used it"),
    "damaged": ("it arrived damaged", "it came broken, the box was crushed"),
    "wrong_item": ("you sent me the wrong item", "what arrived is not what I ordered"),
    "not_as_described": ("it doesn't match the description on the site", "it's not as described"),
    "no_longer_needed": ("I don't need it anymore", "I changed my mind about it"),
}


def reason_phrases(reason: ReturnReason, noun: str) -> tuple[str, ...]:
    """How a customer says ``reason`` about a product of type ``noun`` (a case does not "turn on")."""
    if reason == "defective" and not is_powered(noun):
        return REASON_PHRASES["defective_unpowered"]
    return REASON_PHRASES[reason]



class ReplacementGoal(BaseModel):
    """m(d)−1 requirements (the leaf category first), validated like SUB (:mod:`ecomrlve.envs.recommend.requirements`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    category: int
    requirements: list[Requirement]
    reference_id: str  # the in-stock product the requirements were taken from (so a valid answer exists)
    reference_title: str
    noun: str


class ReturnGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    target: LineRef
    eligible: bool
    verdict_code: str
    reason: ReturnReason
    reason_phrase: str
    reason_withheld: bool
    confirm_first: bool
    replacement: ReplacementGoal | None
    order_ids: list[str]  # the orders this generator placed (the lines whose returns are scored)
    prior_returns: list[str]  # return ids in the ledger before the conversation
    patience: int


class ReturnAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    order_id: str
    line_id: str
    eligible: bool
    replacement_product_id: str | None = None


# -- scoring (pure) -------------------------------------------------------------------------------

def return_score(*, eligible: bool, answered: bool, line_ok: bool, answer_eligible: bool | None,
                 verdict_shown: bool, returned: bool, reason_ok: bool, wrong_returns: int,
                 replacement_asked: bool, replacement_ok: bool, confirmed: bool) -> tuple[float, bool, float]:
    """``(r_task, is_correct, s)`` for one RETURN episode (rule in the module docstring)."""
    if not answered:
        return -1.0, False, 0.0
    replacement_weight = 0.2 if replacement_asked else 0.0
    if eligible:
        w_return, w_reason, w_answer = (0.4, 0.2, 0.2) if replacement_asked else (0.5, 0.25, 0.25)
        s = (w_return * returned + w_reason * (returned and reason_ok)
             + w_answer * (line_ok and answer_eligible is True))
    else:
        scale = 1.0 - replacement_weight
        s = scale * (0.4 * line_ok + 0.6 * (line_ok and answer_eligible is False and verdict_shown))
    s += replacement_weight * replacement_ok
    s = max(0.0, s - WRONG_RETURN_PENALTY * wrong_returns)
    r_task = 2 * s - 1
    if not confirmed:
        r_task = min(r_task, UNCONFIRMED_CAP)
    return r_task, confirmed and math.isclose(s, 1.0), s


# -- the simulated customer -----------------------------------------------------------------------

@dataclass
class ReturnState(TaskState):
    """What the RETURN dialogue established: the item identified, the reason told, the confirmation."""

    identified: bool = False  # the exact item was told (answer to "which one?")
    reason_told: bool = False
    confirmed: bool = False
    returned_unconfirmed: bool = False  # the target's return was started before the customer confirmed


@dataclass
class ReturnUser(AccountUser):
    goal: ReturnGoal = field(kw_only=True)  # required; after the base class's defaulted fields
    state: ReturnState = field(default_factory=ReturnState)
    _confirmation_counted: bool = False

    def opening(self) -> str:
        goal = self.goal
        return self.say(A.RequestReturn(goal.target.phrase, None if goal.reason_withheld else goal.reason_phrase,
                                        goal.confirm_first, self._replacement_said(), goal.target.exact))

    def _replacement_said(self) -> tuple[str, tuple[tuple[str, str], ...]] | None:
        """The replacement as the customer says it: its noun and every requirement but the category."""
        replacement = self.goal.replacement
        if replacement is None:
            return None
        return replacement.noun, tuple((r.field, r.text()) for r in replacement.requirements if r.field != "category")

    def on_question(self, question: str, world: World) -> str:
        return self.say(*self._respond(question, world))

    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        acts = self._respond(message, world) if message else []
        target = self.goal.target
        for name, arguments, result in events:
            if name != "return_initiate" or result.get("status") != "return_started":
                continue
            if arguments.line_id == target.line_id:
                self.state.returned_unconfirmed = self.goal.confirm_first and not self.state.confirmed
            elif arguments.order_id in self.goal.order_ids:
                self.lose_patience()
                acts.append(A.WrongItem(target.identification, (target.title,)))
        return self.say(*acts) if acts else None

    def _respond(self, text: str, world: World) -> list[DialogueAct]:
        reading = understand(text, orders_in_play(world))
        if not reading.asks:
            return [Acknowledge()]
        acts: list[DialogueAct] = []
        if reading.reason:
            if self.goal.reason_withheld and not self.state.reason_told:
                self.mark_user_caused()
            else:
                self.lose_patience()
            self.state.reason_told = True
            acts.append(A.ExplainReason(self.goal.reason_phrase))
        t = text.lower()
        if reading.confirm:
            acts.append(self._confirmation(t, world))
        elif reading.which:  # a fair question about the line (which, when, how much, which of these)
            if self.goal.target.ambiguous and not self.state.identified:
                self.mark_user_caused()
            else:
                self.lose_patience()
            self.state.identified = True
            acts.append(line_question_reply(t, self.goal.target))
        if reading.open or (reading.topics and self.goal.replacement is not None and not acts):
            acts.append(self.nothing_more(self._replacement_said()))  # a topic of the replacement: all it needs
        if not acts:
            self.lose_patience()
            acts.append(A.CheckMyAccount())
        return acts

    def _confirmation(self, t: str, world: World) -> DialogueAct:
        target = self.goal.target
        if refers_to(t, target, world):
            self.state.confirmed = True
            if self.goal.confirm_first and not self._confirmation_counted:
                self._confirmation_counted = True
                self.mark_user_caused()
            return Confirm()
        self.lose_patience()
        return A.WrongItem(target.identification, (target.title,))


def refers_to(text: str, target: LineRef, world: World) -> bool:
    """Whether lower-cased ``text`` names the target line at least as clearly as any other line, or names no
    line at all ("Want me to go ahead with the return?" is about the item the customer asked to return). The
    line's id or its listing name as order details show it ("Wireless Mouse by KORRIX - Edge 6S") name it
    outright: on a real file the spoken model words of another line may otherwise outweigh the agent's words."""
    if target.line_id.lower() in text or world.catalog.short_title(target.row).lower() in text:
        return True
    best_other = 0
    for order in world.account.orders:
        for line in order.lines:
            if line.line_id == target.line_id:
                continue
            if line.line_id.lower() in text:
                return False
            if line.row != target.row:
                best_other = max(best_other, line_names(world, line.row).score(text))
    own = target.names.score(text)
    return (own > 0 and own >= best_other) or (own == 0 and best_other == 0)


# -- the environment ------------------------------------------------------------------------------

class ReturnFamily(TaskFamily):
    env_id = ENV_ID
    version = 14
    tool_names = ("user_get_profile", "order_list", "order_get_details", "return_check_eligibility",
                  "return_initiate", "policy_search", "catalog_search", "catalog_get_product", "ask_user")
    answer_arguments = ReturnAnswer
    answer_id_arguments = ("order_id", "line_id", "replacement_product_id")
    instructions = ("help the customer return an item from one of their orders. Find the exact order line, check "
                    "it with return_check_eligibility and start the return with the customer's reason; if the "
                    "store says the item cannot be returned, start nothing and explain why. If they ask for a replacement, "
                    "recommend one product that meets their requirements. Then call answer.")

    def answer_description(self, difficulty: Difficulty) -> str:
        return ("Submit the order line the customer means (order_id, line_id), whether it is eligible for return, "
                "and replacement_product_id if they asked for a replacement.")

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        level = difficulty.order_reference
        account = world.account
        catalog = world.catalog
        ineligible = rng.random() < difficulty.p_ineligible
        final_sale = ineligible and rng.random() < FINAL_SALE_SHARE
        adapted: dict[str, str] = {}
        if final_sale and not has_category(world, lambda c: is_final_sale(c.name)):
            final_sale = False
            adapted["final_sale"] = "the catalog has no final-sale category; the target is ineligible by its return window"
        target_row = sample_row(world, rng, exclude=ordered_rows(world), returnable=not final_sale)
        own: list = []

        def background() -> None:
            # Delivered lines get the target's age distribution, so "the newest delivered order" says nothing.
            rows = [sample_row(world, rng, exclude={target_row})]
            rows += fillers(world, rng, {target_row, rows[0]})
            status = rng.choice(BACKGROUND_STATUSES)
            if status == "delivered":
                late = rng.random() < difficulty.p_ineligible
                own.append(place(world, rng, rows, status, self._age(world, rng, difficulty, rows[0], late, False)))
            else:
                own.append(random_status_order(world, rng, rows, status))

        for _ in range(rng.randint(0, difficulty.H_orders - 1)):  # the target is created at a random point
            background()
        age = self._age(world, rng, difficulty, target_row, ineligible, final_sale)
        rows = [target_row] + fillers(world, rng, {target_row})
        rng.shuffle(rows)
        order = place(world, rng, rows, "delivered", age)
        line = next(li for li in order.lines if li.row == target_row)
        own.append(order)
        distractors = Distractors.at(level, rng)
        if distractors.same_product and len(own) < difficulty.H_orders:
            own.append(place_copy(world, rng, [target_row] + fillers(world, rng, {target_row}), order, (30, 60), level))
        if distractors.same_category_close and len(own) < difficulty.H_orders and has_look_alike(world, target_row):
            other = sample_row(world, rng, exclude={target_row}, category=int(catalog.category[target_row]))
            own.append(place(world, rng, [other], "delivered", max(1, age + rng.randint(-5, 5))))
        while len(own) < difficulty.H_orders:
            background()
        verdict = account.verdict(world.catalog, order, line)
        if verdict.eligible == ineligible:
            raise RuntimeError(f"RETURN generator and rule engine disagree: wanted eligible={not ineligible}, "
                               f"engine says {verdict.code}")
        target = reference(world, order, line, level, rng, vague_phrases=("the {noun} I ordered {when}",
                                                                      "the {noun} I bought {when}"))
        reason: ReturnReason = rng.choice(RETURN_REASONS)
        replacement = (self._replacement(world, rng, target_row, difficulty)
                       if rng.random() < REPLACEMENT_PROBABILITY else None)
        goal = ReturnGoal(target=target, eligible=verdict.eligible, verdict_code=verdict.code, reason=reason,
                          reason_phrase=rng.choice(reason_phrases(reason, product_type(catalog, target_row))),
                          reason_withheld=rng.random() < difficulty.p_missing,
                          confirm_first=rng.random() < CONFIRM_PROBABILITY, replacement=replacement,
                          order_ids=sorted(o.order_id for o in own),
                          prior_returns=[r.return_id for r in account.returns],
                          patience=BASE_PATIENCE + rng.randint(0, 2))
        world.name_ordered([target_row])  # a later request of a journey orders it no more
        user = ReturnUser(realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=goal.patience, goal=goal)
        return Problem(goal=goal, state=user.state, user=user, opening=user.opening(), difficulty=difficulty,
                       adapted=adapted)

    @staticmethod
    def _age(world: World, rng: random.Random, difficulty: Difficulty, row: int, ineligible: bool,
             final_sale: bool) -> int:
        """Days since delivery of a delivered line: recent, near the return-window edge (the
        ``return_window_edge`` curve) or past it."""
        window = return_window_days(world.catalog.category_of(row).path[0], world.account.profile.tier, world.policy)
        if final_sale:
            return rng.randint(1, 10)
        if ineligible:
            return window + rng.randint(1, EDGE_DAYS if difficulty.return_window_edge else 30)
        if difficulty.return_window_edge and rng.random() < 0.5:
            return window - rng.randint(0, EDGE_DAYS)
        return rng.randint(1, max(1, window // 2))

    @staticmethod
    def _replacement(world: World, rng: random.Random, original: int, difficulty: Difficulty) -> ReplacementGoal | None:
        """m(d)−1 requirements (category first) that the in-stock product closest to the original meets."""
        catalog = world.catalog
        if not is_main_type(catalog, original):  # an accessory: its category's requests name another product
            return None
        reference_row = closest_partner(world, original, rng)
        if reference_row is None:
            return None
        category = int(catalog.category[original])
        world.reserve([reference_row])
        world.protect(category)
        requirements = [category_requirement(catalog, category)] + derive_requirements(
            catalog, [reference_row], difficulty.m - 2, difficulty.slack, rng)
        return ReplacementGoal(category=category, requirements=requirements,
                               reference_id=catalog.product_id(reference_row),
                               reference_title=spoken_name(world.catalog, reference_row).text,
                               noun=main_type(catalog, category))

    def verify(self, goal: ReturnGoal, state: ReturnState, world: World, answer: ReturnAnswer | None) -> TaskOutcome:
        target = goal.target
        prior, own = set(goal.prior_returns), set(goal.order_ids)
        new = [r for r in world.account.returns if r.return_id not in prior and r.order_id in own]
        target_returns = [r for r in new if r.line_id == target.line_id]
        wrong = len({r.line_id for r in new if r.line_id != target.line_id})
        returned = bool(target_returns)
        reason_ok = returned and target_returns[0].reason == goal.reason
        line_ok = answer is not None and answer.order_id == target.order_id and answer.line_id == target.line_id
        verdict_shown = target.line_id in world.account.verdicts_shown
        replacement_ok = False
        if goal.replacement is not None and answer is not None and answer.replacement_product_id:
            row = world.catalog.index_of(answer.replacement_product_id)
            valid = valid_rows(world.catalog, goal.replacement.category, goal.replacement.requirements,
                               world.stock_overrides, exclude=(target.row,))
            replacement_ok = row is not None and contains_sorted(valid, row)
        r_task, is_correct, s = return_score(
            eligible=goal.eligible, answered=answer is not None, line_ok=line_ok,
            answer_eligible=answer.eligible if answer is not None else None, verdict_shown=verdict_shown,
            returned=returned, reason_ok=reason_ok, wrong_returns=wrong, replacement_asked=goal.replacement is not None,
            replacement_ok=replacement_ok, confirmed=not state.returned_unconfirmed)
        return TaskOutcome(r_task=r_task, is_correct=is_correct, details={
            "score": s, "eligible": goal.eligible, "returned": returned, "reason_ok": reason_ok,
            "wrong_returns": wrong, "line_ok": line_ok, "verdict_shown": verdict_shown,
            "replacement_ok": replacement_ok, "confirmed": not state.returned_unconfirmed, "answered": answer is not None})

    def oracle(self, problem: Problem[ReturnGoal, ReturnState]) -> ReturnOracle:
        return ReturnOracle(problem)


# -- the oracle -----------------------------------------------------------------------------------

class ReturnOracle:
    """Finds the line through order_list/order_get_details, asks only what was withheld, checks the line's
    eligibility (as the instructions say), confirms when asked to, returns (or explains why not), finds a
    replacement by filtered search, answers.

    It reads the hidden goal to decide what to do; every id it submits comes from a tool result
    or the customer's words.
    """

    def __init__(self, problem: Problem[ReturnGoal, ReturnState]) -> None:
        self.goal = problem.goal
        self.b_tool = problem.difficulty.B_tool
        self.order_seen = problem.difficulty.order_reference == BY_ORDER_ID  # the customer quoted the order id
        self.line_seen = False
        self.asked = False
        self.confirm_asked = False
        self.initiated = False
        self.checked: dict[str, Any] | None = None
        self.replacement_id: str | None = None
        self.searches = 0

    def act(self, observation: Observation) -> AgentAction:
        goal, target = self.goal, self.goal.target
        for name, result in tool_results(observation):
            if name == "order_list":
                self.order_seen = any(o["order_id"] == target.order_id for o in result.get("orders", []))
            elif name == "order_get_details":
                self.line_seen = self.line_seen or any(li["line_id"] == target.line_id for li in result.get("lines", []))
            elif name == "return_initiate" and result.get("status") == "return_started":
                self.initiated = True
            elif name == "return_check_eligibility" and "eligible" in result:
                self.checked = result
            elif name == "catalog_search" and goal.replacement is not None and any(
                    card["product_id"] == goal.replacement.reference_id for card in result.get("results", [])):
                self.replacement_id = goal.replacement.reference_id
        calls: list[ToolCall] = []
        messages: list[str] = []

        def call(name: str, **arguments: Any) -> None:
            if len(calls) < self.b_tool:
                calls.append(ToolCall(id=f"oracle_{len(calls)}", name=name, arguments=arguments))

        if not self.asked:
            questions = []
            if target.ambiguous:
                questions.append("which one exactly do you mean?")
            if goal.reason_withheld and goal.eligible:
                questions.append("why are you returning it?")
            if questions:
                messages.append("Could you tell me " + " And ".join(questions))
            self.asked = True
        if not self.line_seen:
            if self.order_seen:
                call("order_get_details", order_id=target.order_id)
            else:
                call("order_list")
        elif self.checked is None:  # the instructions' check, eligible or not, before anything is started
            call("return_check_eligibility", order_id=target.order_id, line_id=target.line_id)
        elif goal.eligible and not self.initiated:
            if goal.confirm_first and not self.confirm_asked:
                messages.append(f"Shall I start the return of the {target.title} (line {target.line_id}) now? "
                                "Please confirm.")
                self.confirm_asked = True
            elif not messages:
                call("return_initiate", order_id=target.order_id, line_id=target.line_id, reason=goal.reason)
        if goal.replacement is not None and self.replacement_id is None and len(calls) < self.b_tool:
            flt = requirement_filter(goal.replacement.requirements).model_dump(exclude_none=True)
            call("catalog_search", query=goal.replacement.reference_title, filters=flt, top_k=10 * (1 + self.searches))
            self.searches += 1
        done = self.checked is not None and (self.initiated or not goal.eligible) and (
            goal.replacement is None or self.replacement_id is not None)
        if done and not calls and not messages:
            if not goal.eligible and self.checked is not None:  # done: an ineligible line was checked
                messages.append(f"I'm sorry, this item can't be returned. {self.checked['explanation']}")
            call("answer", order_id=target.order_id, line_id=target.line_id, eligible=goal.eligible,
                 **({"replacement_product_id": self.replacement_id} if goal.replacement is not None else {}))
        return AgentAction(message=" ".join(messages) or None, tool_calls=tuple(calls))

