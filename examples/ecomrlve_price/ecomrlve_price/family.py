"""PRICE: goal, task state, shopper, generator, verifier and oracle, side by side.

Description
    The shopper wants a price quote for some units of one product, which it names by name and id.
Hidden goal
    The product, the units, and the quoted total; whether the units were left out of the opening.
Tools
    ``price_quote`` (this environment's own); answer(total).
Scoring
    r_task 1 when the answered total is the store's quote for the wanted units, else −1.
Difficulty axes used
    quote_units (its own), p_missing, p_noise, B_tool, T_max.
Episode end
    ``answer``, turn budget, or the shopper giving up (patience).
Version history
    1: first release.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ecomrlve.actions import AgentAction, numbered_call
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.base import Problem, TaskFamily, TaskOutcome, TaskState
from ecomrlve.protocol import Observation, tool_results
from ecomrlve.user.acts import Acknowledge
from ecomrlve.user.dialogue import SimulatedUser
from ecomrlve.user.realiser import Realiser
from ecomrlve.world.state import World
from ecomrlve_price import acts as A
from ecomrlve_price.tool import quote_total

ENV_ID = "PRICE"
#: how a message asks for the number of units: "how many", "quantity", "number of units"...
ASKS_UNITS = re.compile(r"\bhow many\b|\bquantit|\bnumber of (?:units|items|pieces)\b|\bunits?\?", re.IGNORECASE)


class PriceGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    product_id: str
    units: int
    total: float
    units_withheld: bool


class PriceAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    total: float = Field(description="The quoted total in dollars for the units the shopper wants.")


@dataclass
class PriceState(TaskState):
    """What the dialogue established: whether the shopper has said how many units it wants."""

    units_told: bool = False


@dataclass
class PriceShopper(SimulatedUser):
    """Says the units when asked (once caused by the withholding; asked again, it repeats and loses patience)."""

    product: str = ""
    product_id: str = ""
    units: int = 1
    state: PriceState | None = None

    def opening(self, withheld: bool) -> str:
        assert self.state is not None
        self.state.units_told = not withheld
        return self.say(A.AskQuote(self.product, self.product_id, None if withheld else self.units))

    def on_question(self, question: str, world: World) -> str:
        return self._reply(question)

    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        return self._reply(message) if message else None

    def _reply(self, text: str) -> str:
        assert self.state is not None
        if not ASKS_UNITS.search(text):
            return self.say(Acknowledge())
        if self.state.units_told:
            self.lose_patience()
        else:
            self.state.units_told = True
            self.mark_user_caused()
        return self.say(A.TellUnits(self.units))


class PriceFamily(TaskFamily):
    env_id = ENV_ID
    version = 1
    tool_names = ("price_quote",)
    answer_arguments = PriceAnswer
    instructions = ("give the shopper a price quote: find out how many units they want, ask the store for the quote "
                    "with price_quote, then call answer with the quoted total.")

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        catalog = world.catalog
        row = rng.randrange(len(catalog))
        units: int = difficulty.quote_units
        withheld = rng.random() < difficulty.p_missing
        goal = PriceGoal(product_id=catalog.product_id(row), units=units,
                         total=quote_total(catalog.price(row), units), units_withheld=withheld)
        state = PriceState()
        user = PriceShopper(realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=2,
                            product=catalog.short_title(row), product_id=goal.product_id, units=units, state=state)
        return Problem(goal=goal, state=state, user=user, opening=user.opening(withheld), difficulty=difficulty)

    def verify(self, goal: PriceGoal, state: PriceState, world: World, answer: BaseModel | None) -> TaskOutcome:
        correct = isinstance(answer, PriceAnswer) and abs(answer.total - goal.total) < 0.005
        return TaskOutcome(r_task=1.0 if correct else -1.0, is_correct=correct,
                           details={"answered": answer is not None, "units_told": state.units_told})

    def oracle(self, problem: Problem[PriceGoal, PriceState]) -> PriceOracle:
        return PriceOracle(problem.goal)


class PriceOracle:
    """Asks how many units when the shopper left them out, asks for the quote, answers its total."""

    def __init__(self, goal: PriceGoal) -> None:
        self.goal = goal
        self.asked = False

    def act(self, observation: Observation) -> AgentAction:
        for name, result in tool_results(observation):
            if name == "price_quote" and "total" in result:
                return AgentAction(tool_calls=(numbered_call("answer", 1, total=result["total"]),))
        if self.goal.units_withheld and not self.asked:
            self.asked = True
            return AgentAction(message="How many units would you like a quote for?")
        return AgentAction(tool_calls=(
            numbered_call("price_quote", 0, product_id=self.goal.product_id, units=self.goal.units),))
