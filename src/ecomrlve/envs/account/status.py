"""STATUS — order tracking.

Description
    The customer asks where an order is: by order id at low d, by product and order date in the
    middle, and at high d only by product type and a rough time or by the day it was supposed
    to arrive ("my headlamp order that's supposed to arrive on Tuesday"); look-alike orders may
    force a clarifying question, which at high d gets the product and a rough time, never an id
    or an exact date. The target order's status is drawn like every other order's and it is
    created at a random point of the history, so its position in ``order_list`` says nothing. The
    agent reports the order's status and, when asked, its ETA.
Hidden goal
    :class:`StatusGoal`: the target order (a :class:`~ecomrlve.envs.account.orders.LineRef` of its
    first-named line), its status and ETA, whether the ETA was asked, the orders placed.
Tools
    order_list, order_get_details, user_get_profile, ask_user, answer(order_id, status, eta?).
Scoring
    :func:`status_score`: fields are the order id, the status and (only when asked) the ETA;
    status and ETA count only for the right order. ``r_task = 2·(right fields / fields) − 1``;
    no answer −1. is_correct iff every field is right. Credit needs a verified status: an answer
    given before a tool result (order_list or order_get_details, in an earlier turn) showed the
    answered order scores as wrong in every field (echoing the quoted id with a guess pays nothing).
Difficulty axes used
    H_orders, p_noise, B_tool, T_max, order_reference (how the order is named, and the look-alike orders).
Episode end
    ``answer``, turn budget, or the customer giving up (patience).
Version history
    In CHANGELOG.md, section STATUS; the version is ``StatusFamily.version``.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.account import acts as A
from ecomrlve.envs.account.customer import AccountUser
from ecomrlve.envs.account.orders import (
    BY_ORDER_ID,
    BY_TITLE_AND_DATE,
    Distractors,
    LineRef,
    fillers,
    has_look_alike,
    line_question_reply,
    ordered_rows,
    orders_in_play,
    place,
    place_copy,
    random_status_order,
    reference,
    same_noun,
    sample_row,
    spoken_date,
)
from ecomrlve.envs.base import Problem, TaskFamily, TaskOutcome, TaskState
from ecomrlve.protocol import tool_results
from ecomrlve.user.acts import Acknowledge, DialogueAct
from ecomrlve.user.realiser import Realiser
from ecomrlve.user.understanding import understand
from ecomrlve.world.account import OrderStatus
from ecomrlve.world.state import World

if TYPE_CHECKING:
    from ecomrlve.protocol import Observation

ENV_ID = "STATUS"
UNDELIVERED = ("processing", "shipped", "in_transit")
ETA_QUESTION_PROBABILITY = 0.7  # customers with an undelivered order who also ask when it arrives
ARRIVAL_PHRASE_PROBABILITY = 0.5  # high d, undelivered: named by the day it should arrive
BACKGROUND_STATUSES: tuple[OrderStatus, ...] = ("delivered", "delivered", "in_transit", "processing", "cancelled",
                                                "returned", "shipped")
# The asked-about order's status is drawn like any other order's (returned orders are not asked about), so
# neither its status nor (through its dates) its place in the order list singles it out.
TARGET_STATUSES: tuple[OrderStatus, ...] = tuple(s for s in BACKGROUND_STATUSES if s != "returned")
BASE_PATIENCE = 3
ORDER_LOOKUPS = ("order_list", "order_get_details")  # the tools whose results show an order's status


class StatusGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    target: LineRef
    phrase: str  # how the customer names the order
    exact: tuple[str, ...]
    ambiguous: bool
    status: OrderStatus
    eta: dt.date | None
    want_eta: bool
    order_ids: list[str]
    patience: int


class StatusAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    order_id: str
    status: OrderStatus
    eta: str | None = None


# -- scoring (pure) -------------------------------------------------------------------------------

def status_score(*, answered: bool, order_ok: bool, status_ok: bool, eta_asked: bool, eta_ok: bool) -> tuple[float, bool]:
    """``(r_task, is_correct)``: every asked field scored; status and ETA only count for the right order."""
    if not answered:
        return -1.0, False
    fields = [order_ok, order_ok and status_ok] + ([order_ok and eta_ok] if eta_asked else [])
    credit = sum(fields) / len(fields)
    return 2 * credit - 1, all(fields)


def parse_eta(text: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text.strip()) if text else None
    except ValueError:
        return None


# -- the simulated customer -----------------------------------------------------------------------

@dataclass
class StatusState(TaskState):
    """What the STATUS dialogue established: whether the customer said which order they mean."""

    identified: bool = False
    handled_turns: list[int] = field(default_factory=list)  # turns that ended with the request open


def status_shown(world: World, order_id: str, turns: list[int]) -> bool:
    """Whether ``order_list`` or ``order_get_details`` showed ``order_id``'s status during ``turns``:
    credit needs a verified status, not the customer's own words echoed back."""
    shown = world.surfacing.account_ids_shown(ORDER_LOOKUPS, turns)
    order = world.account.order(order_id)
    return order_id in shown or (order is not None and any(line.line_id in shown for line in order.lines))


@dataclass
class StatusUser(AccountUser):
    goal: StatusGoal = field(kw_only=True)  # required; after the base class's defaulted fields
    state: StatusState = field(default_factory=StatusState)

    def opening(self) -> str:
        return self.say(A.AskOrderStatus(self.goal.phrase, self.goal.want_eta, self.goal.exact))

    def on_question(self, question: str, world: World) -> str:
        return self.say(*self._respond(question, world))

    def note_turn(self, turn: int) -> None:
        self.state.handled_turns.append(turn)

    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        return self.say(*self._respond(message, world)) if message else None

    def _respond(self, text: str, world: World) -> list[DialogueAct]:
        reading = understand(text, orders_in_play(world))
        if not reading.asks:
            return [Acknowledge()]
        t = text.lower()
        if reading.which:  # a fair question about the line (which, when, how much, which of these)
            if self.goal.ambiguous and not self.state.identified:
                self.mark_user_caused()
            else:
                self.lose_patience()
            self.state.identified = True
            reply = line_question_reply(t, self.goal.target)
            if isinstance(reply, A.IdentifyItem):
                return [A.IdentifyItem(f"the order with {reply.item}", reply.exact)]
            return [reply]
        if reading.open:
            return [self.nothing_more()]
        self.lose_patience()
        return [A.CheckMyAccount()]


# -- the environment ------------------------------------------------------------------------------

class StatusFamily(TaskFamily):
    env_id = ENV_ID
    version = 12
    tool_names = ("order_list", "order_get_details", "user_get_profile", "ask_user")
    answer_arguments = StatusAnswer
    answer_id_arguments = ("order_id",)
    instructions = ("tell the customer where their order is. Find the order they mean, then call answer with its "
                    "order_id, its status and, if they asked when it arrives, its eta (YYYY-MM-DD).")

    def answer_description(self, difficulty: Difficulty) -> str:
        return ("Submit the order the customer means, its current status, and eta (the expected delivery date, "
                "YYYY-MM-DD) when the customer asked when it arrives.")

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        level = difficulty.order_reference
        catalog = world.catalog
        status: OrderStatus = rng.choice(TARGET_STATUSES)
        target_row = sample_row(world, rng, exclude=ordered_rows(world))  # a journey's earlier requests may have ordered some
        own: list = []

        def background() -> None:
            row = sample_row(world, rng, exclude={target_row})
            own.append(random_status_order(world, rng, [row] + fillers(world, rng, {target_row, row}),
                                           rng.choice(BACKGROUND_STATUSES)))

        for _ in range(rng.randint(0, difficulty.H_orders - 1)):  # the target is created at a random point
            background()
        order = random_status_order(world, rng, [target_row] + fillers(world, rng, {target_row}), status)
        own.append(order)
        placed_days = (world.today - order.placed).days
        distractors = Distractors.at(level, rng)
        if distractors.same_product and len(own) < difficulty.H_orders:
            own.append(place_copy(world, rng, [target_row], order, (25, 60), level))
        if distractors.same_category_close and len(own) < difficulty.H_orders and has_look_alike(world, target_row):
            other = sample_row(world, rng, exclude={target_row}, category=int(catalog.category[target_row]))
            own.append(place(world, rng, [other], "delivered", max(1, placed_days - 3)))  # placed within days
        while len(own) < difficulty.H_orders:
            background()
        target = reference(world, order, order.lines[0], level, rng)
        phrase, exact, ambiguous = self._phrase(world, order.status, order.eta, target, level, rng)
        goal = StatusGoal(target=target, phrase=phrase, exact=exact, ambiguous=ambiguous, status=order.status,
                          eta=order.eta if order.status in UNDELIVERED else None,
                          want_eta=order.status in UNDELIVERED and rng.random() < ETA_QUESTION_PROBABILITY,
                          order_ids=sorted(o.order_id for o in own), patience=BASE_PATIENCE + rng.randint(0, 2))
        world.name_ordered([target_row])  # a later request of a journey orders it no more
        user = StatusUser(realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=goal.patience, goal=goal)
        return Problem(goal=goal, state=user.state, user=user, opening=user.opening(), difficulty=difficulty)

    @staticmethod
    def _phrase(world: World, status: str, eta: dt.date | None, target: LineRef, level: int,
                rng: random.Random) -> tuple[str, tuple[str, ...], bool]:
        """How the customer names the order: (phrase, exact parts, ambiguous)."""
        if level == BY_ORDER_ID:
            return f"my order {target.order_id}", (target.order_id,), False
        if level == BY_TITLE_AND_DATE:
            when = spoken_date(target.placed)
            return f"my order with the {target.title} from {when}", (when,), False
        if status in UNDELIVERED and eta is not None and rng.random() < ARRIVAL_PHRASE_PROBABILITY:
            day = f"{eta:%A}"
            ambiguous = any(
                o.order_id != target.order_id and o.status in UNDELIVERED and o.eta is not None
                and f"{o.eta:%A}" == day  # what is said: any order due on a Tuesday fits "on Tuesday"
                and any(same_noun(world, li.row, target.row) for li in o.lines)
                for o in world.account.orders)
            return f"my {target.noun.lower()} order that's supposed to arrive on {day}", (day,), ambiguous
        return f"my order with the {target.phrase[4:]}", target.exact, target.ambiguous

    def verify(self, goal: StatusGoal, state: StatusState, world: World, answer: StatusAnswer | None) -> TaskOutcome:
        verified = answer is not None and status_shown(world, answer.order_id, state.handled_turns)
        order_ok = verified and answer is not None and answer.order_id == goal.target.order_id
        status_ok = answer is not None and answer.status == goal.status
        eta_ok = answer is not None and goal.eta is not None and parse_eta(answer.eta) == goal.eta
        r_task, is_correct = status_score(answered=answer is not None, order_ok=order_ok, status_ok=status_ok,
                                          eta_asked=goal.want_eta, eta_ok=eta_ok)
        return TaskOutcome(r_task=r_task, is_correct=is_correct, details={
            "order_ok": order_ok, "status_ok": status_ok, "eta_asked": goal.want_eta, "eta_ok": eta_ok,
            "answered": answer is not None, "verified": verified})

    def oracle(self, problem: Problem[StatusGoal, StatusState]) -> StatusOracle:
        return StatusOracle(problem)


# -- the oracle -----------------------------------------------------------------------------------

class StatusOracle:
    """Lists the orders (asking which one only when the reference is ambiguous) and answers from the list."""

    def __init__(self, problem: Problem[StatusGoal, StatusState]) -> None:
        self.goal = problem.goal
        self.row: dict[str, Any] | None = None
        self.asked = False

    def act(self, observation: Observation) -> AgentAction:
        goal = self.goal
        for name, result in tool_results(observation):
            if name == "order_list":
                self.row = next((o for o in result["orders"] if o["order_id"] == goal.target.order_id), None)
        if self.row is None:
            message = None
            if goal.ambiguous and not self.asked:
                message = "Which one exactly do you mean?"
                self.asked = True
            return AgentAction(message=message, tool_calls=(ToolCall(id="oracle_0", name="order_list", arguments={}),))
        arguments: dict[str, Any] = {"order_id": self.row["order_id"], "status": self.row["status"]}
        if goal.want_eta:
            arguments["eta"] = self.row["eta"]
        return AgentAction(tool_calls=(ToolCall(id="oracle_0", name="answer", arguments=arguments),))
