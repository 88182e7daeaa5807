"""Heuristic baselines for RETURN and STATUS: they see only what an agent sees.

They read the customer's words with keyword rules, pick the order line whose title shares the
most words with the request, and never ask questions. They are floors to beat, not oracles.
"""

from __future__ import annotations

import re
from typing import Any

from ecomrlve.actions import AgentAction, numbered_call
from ecomrlve.protocol import Observation, tool_results, user_text
from ecomrlve.world.account import ORDER_ID

_WORD = re.compile(r"[a-z0-9]+")
_REASON_KEYWORDS = (("defective", ("stopped working", "faulty", "won't turn on", "broke")),
                    ("damaged", ("damaged", "broken", "crushed")),
                    ("wrong_item", ("wrong item", "not what i ordered")),
                    ("not_as_described", ("description", "described")))
_ETA_WORDS = ("when will", "expect", "delivery date", "arrive?")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def stated_reason(text: str) -> str:
    """The return reason ``text`` states by its keywords ("stopped working" -> defective), else a change of mind."""
    lowered = text.lower()
    return next((reason for reason, keys in _REASON_KEYWORDS if any(k in lowered for k in keys)), "no_longer_needed")


def best_item(request: str, items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The item whose title shares the most words with the request (first on ties)."""
    words = _words(request)
    scored = [(len(words & _words(item["title"] + " " + item["category"])), -i, item) for i, item in enumerate(items)]
    return max(scored, key=lambda s: s[:2])[2] if scored else None


class ReturnHeuristic:
    """Finds the line by word overlap, checks eligibility, returns it with a keyword-guessed reason."""

    def __init__(self) -> None:
        self.request = ""
        self.order_id: str | None = None
        self.line: dict[str, Any] | None = None
        self.eligible: bool | None = None
        self.returned = False
        self.replacement: str | None = None
        self.searched = False

    def act(self, observation: Observation) -> AgentAction:
        self.request += " " + user_text(observation)
        for name, result in tool_results(observation):
            if name == "order_list":
                items = [dict(item, order_id=o["order_id"]) for o in result["orders"] for item in o["items"]]
                best = best_item(self.request, items)
                self.order_id = best["order_id"] if best else None
            elif name == "order_get_details" and "lines" in result:
                self.line = best_item(self.request, result["lines"])
            elif name == "return_check_eligibility" and "eligible" in result:
                self.eligible = result["eligible"]
            elif name == "return_initiate":
                self.returned = True
            elif name == "catalog_search":
                self.replacement = next((c["product_id"] for c in result.get("results", []) if c["in_stock"]), None)
        wants_replacement = "replacement" in self.request.lower()
        if self.order_id is None:
            quoted = ORDER_ID.search(self.request)
            if quoted:
                self.order_id = quoted.group(0)
            else:
                return AgentAction(tool_calls=(numbered_call("order_list", 0),))
        if self.line is None:
            return AgentAction(tool_calls=(numbered_call("order_get_details", 0, order_id=self.order_id),))
        ids = {"order_id": self.order_id, "line_id": self.line["line_id"]}
        if self.eligible is None:
            return AgentAction(tool_calls=(numbered_call("return_check_eligibility", 0, **ids),))
        if self.eligible and not self.returned:
            return AgentAction(tool_calls=(numbered_call("return_initiate", 0, reason=stated_reason(self.request), **ids),))
        if wants_replacement and not self.searched:
            self.searched = True
            return AgentAction(tool_calls=(numbered_call("catalog_search", 0, query=self.line["category"]),))
        extra = {"replacement_product_id": self.replacement} if wants_replacement and self.replacement else {}
        return AgentAction(tool_calls=(numbered_call("answer", 0, eligible=bool(self.eligible), **ids, **extra),))


class StatusHeuristic:
    """Lists the orders, picks the quoted id or the best word overlap, reports status (and ETA if asked)."""

    def __init__(self) -> None:
        self.request = ""

    def act(self, observation: Observation) -> AgentAction:
        self.request += " " + user_text(observation)
        for name, result in tool_results(observation):
            if name == "order_list":
                orders = result["orders"]
                quoted = ORDER_ID.search(self.request)
                order = next((o for o in orders if quoted and o["order_id"] == quoted.group(0)), None)
                if order is None:
                    items = [dict(item, order=o) for o in orders for item in o["items"]]
                    best = best_item(self.request, items)
                    order = best["order"] if best else None
                if order is not None:
                    arguments = {"order_id": order["order_id"], "status": order["status"]}
                    if any(w in self.request.lower() for w in _ETA_WORDS) and "eta" in order:
                        arguments["eta"] = order["eta"]
                    return AgentAction(tool_calls=(numbered_call("answer", 0, **arguments),))
        return AgentAction(tool_calls=(numbered_call("order_list", 0),))
