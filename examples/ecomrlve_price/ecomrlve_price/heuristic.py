"""The PRICE baseline: it reads the product id and the units from the shopper's words, asks when they are missing."""

from __future__ import annotations

import re

from ecomrlve.actions import AgentAction, numbered_call
from ecomrlve.protocol import Observation, tool_results, user_text

_ID = re.compile(r"\(([^()\s]+)\)")  # "the Voltly Air 1 dog bed (PAF4Y4K59)"
_NUMBER = re.compile(r"\b(\d{1,2})\b")
_UNITS = re.compile(r"\b(\d{1,2})(?= units?\b| of\b| x\b)|\b(?:need|make it) (\d{1,2})\b", re.IGNORECASE)


class PriceHeuristic:
    def __init__(self) -> None:
        self.product_id: str | None = None
        self.units: int | None = None
        self.asked = False

    def act(self, observation: Observation) -> AgentAction:
        for name, result in tool_results(observation):
            if name == "price_quote" and "total" in result:
                return AgentAction(tool_calls=(numbered_call("answer", 1, total=result["total"]),))
        text = user_text(observation)
        if self.product_id is None and (ids := _ID.findall(text)):
            self.product_id = ids[-1]
        if self.units is None and (count := _UNITS.search(text)):
            self.units = int(count.group(1) or count.group(2))
        elif self.units is None and self.asked and (number := _NUMBER.search(text)):  # the reply to "how many?"
            self.units = int(number.group(1))
        if self.units is None and not self.asked:
            self.asked = True
            return AgentAction(message="How many units would you like?")
        return AgentAction(tool_calls=(
            numbered_call("price_quote", 0, product_id=self.product_id or "", units=self.units or 1),))
