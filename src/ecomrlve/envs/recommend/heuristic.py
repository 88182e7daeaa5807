"""Heuristic baselines for PD, SUB and BUNDLE: they see only what an agent sees.

* :class:`RecommendHeuristic` (PD, SUB): one search with the shopper's own words, in-stock only,
  with a price cap when the opening states one; answers the first ``k_rec`` results but those the
  shopper then says sold out.
* :class:`BundleHeuristic` (BUNDLE): reads the list of things the project needs and what the opening
  states for each, searches each within its category sorted by price, and answers the cheapest in-stock
  product of each that shows what was stated for it (it never asks about withheld requirements).
"""

from __future__ import annotations

import re
from typing import Any

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.prompts import stated_tool_budget
from ecomrlve.protocol import Observation, tool_results, user_text

_PRICE_CAP = re.compile(r"(?:for|at most|no more than|budget of)\s+\$(\d+(?:\.\d+)?)|\$(\d+(?:\.\d+)?) or less")
_K_REC = re.compile(r"k_rec = (\d+)")
_NEEDS = re.compile(r"\b(?:a|an|some)\s+([a-z][a-z' -]*?)(?=,| and |\.|\?| for me| -|$)")


def episode_setup(observation: Observation) -> tuple[int, int, str]:
    """(tool budget, k_rec, opening) from the first observation (the heuristics and the reference agents read it alike)."""
    b_tool = stated_tool_budget(observation.messages[0]["content"])
    if b_tool is None:
        raise ValueError("the system prompt states no tool budget")
    answer = next(t for t in observation.tools or [] if t["function"]["name"] == "answer")
    k = _K_REC.search(answer["function"]["description"])
    return b_tool, int(k.group(1)) if k else 10, observation.messages[-1]["content"]


def _call(name: str, index: int, **arguments: Any) -> ToolCall:
    return ToolCall(id=f"h{index}", name=name, arguments=arguments)


class RecommendHeuristic:
    """PD/SUB baseline: search the opening (in stock, price-capped if stated), answer the top k."""

    def __init__(self) -> None:
        self.k = 10
        self.results: list[str] = []
        self.searched = False

    def act(self, observation: Observation) -> AgentAction:
        if observation.tools is not None:
            _, self.k, opening = episode_setup(observation)
            filters: dict[str, Any] = {"in_stock": True}
            cap = _PRICE_CAP.search(opening)
            if cap:
                filters["price_max"] = float(cap.group(1) or cap.group(2))
            self.searched = True
            return AgentAction(tool_calls=(_call("catalog_search", 0, query=opening, filters=filters, top_k=20),))
        sold_out = [s for s in _SENTENCES.split(user_text(observation).lower()) if "sold out" in s or "out of stock" in s]
        for name, result in tool_results(observation):
            if name == "catalog_search":
                self.results += [c["product_id"] for c in result.get("results", [])
                                 if c["in_stock"] and not any(_named(c, s) for s in sold_out)]
        return AgentAction(tool_calls=(_call("answer", 0, product_ids=self.results[: self.k]),))


#: A stated minimum or maximum: the pattern of its number in the shopper's words, the card field, the direction.
_BOUNDS = (
    (re.compile(r"(?:rated|rating of at least|with) (\d+(?:\.\d+)?)\+? stars?|rating of at least (\d+(?:\.\d+)?)"),
     "rating", 1),
    (re.compile(r"(?:shipping in|arriving within|delivered within) (\d+) days?"), "ship_days", -1),
    (re.compile(r"at least (\d+(?:\.\d+)?)W|(\d+(?:\.\d+)?) watts or more"), "wattage", 1),
    (re.compile(r"at least (\d+(?:\.\d+)?) inches|(\d+(?:\.\d+)?)-inch screen"), "screen_size", 1),
    (re.compile(r"(?:weighing|no heavier than) (\d+(?:\.\d+)?) lb"), "weight", -1),
)
_VALUE = re.compile(r"\b[A-Z0-9][\w.+-]*(?: [A-Z][\w-]*)*")  # a brand or attribute value: capitalised words
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def meets_stated(card: dict[str, Any], text: str) -> bool:
    """Whether a product card shows what a stated requirement ``text`` asks ("in Red color", "by Zenware",
    "with 4+ stars", "delivered within 3 days", "weighing 2.5 lb or less"): every bound holds and every
    capitalised value is the brand or one of its attribute or variant values."""
    numbers = {"rating": card.get("rating"), "ship_days": card.get("ship_days"), **card.get("attributes", {})}
    for pattern, name, direction in _BOUNDS:
        for match in pattern.finditer(text):
            bound, value = float(next(g for g in match.groups() if g)), numbers.get(name)
            if not isinstance(value, (int, float)) or (value - bound) * direction < 0:
                return False
    values = {str(v).lower() for v in card.get("attributes", {}).values()} | {str(card.get("brand", "")).lower()}
    values |= {str(v).lower() for variant in card.get("variants", []) for k, v in variant.items() if k != "variant_id"}
    unbounded = text
    for pattern, _, _ in _BOUNDS:
        unbounded = pattern.sub("", unbounded)
    return all(value.lower() in values for value in _VALUE.findall(unbounded) if not value[0].isdigit())


def _named(card: dict[str, Any], sentence: str) -> bool:
    """Whether a (lower-cased) sentence names the product of ``card`` by its title's first words (brand and
    model, as the shopper names a product that sold out)."""
    words = card["title"].split(",")[0].lower().split()[:3]
    return bool(words) and " ".join(words) in sentence


class BundleHeuristic:
    """BUNDLE baseline: for each thing named in the opening, the cheapest in-stock product of its category that
    meets what the opening states for it (when none of the results does, the cheapest)."""

    def __init__(self) -> None:
        self.b_tool = 1
        self.pending: list[str] = []
        self.stated: dict[str, str] = {}  # noun -> the opening's words about it ("in Red color, with 4+ stars")
        self.picks: dict[str, str] = {}
        self.last: list[str] = []

    def act(self, observation: Observation) -> AgentAction:
        if observation.tools is not None:
            self.b_tool, _, opening = episode_setup(observation)
            need_clause = opening.split(".")[0].split("need", 1)[-1] if "need" in opening else opening
            self.pending = list(dict.fromkeys(m.strip() for m in _NEEDS.findall(need_clause.lower())))
            for sentence in _SENTENCES.split(opening)[1:]:
                noun = next((n for n in sorted(self.pending, key=len, reverse=True) if n in sentence.lower()), None)
                if noun is not None:
                    said = sentence.lower().index(noun) + len(noun)
                    self.stated[noun] = (self.stated.get(noun, "") + " " + sentence[said:]).strip()
        results = [r for name, r in tool_results(observation) if name == "catalog_search"]
        for noun, result in zip(self.last, results):
            cards = sorted((c for c in result.get("results", []) if c["in_stock"]), key=lambda c: c["price"])
            fitting = [c for c in cards if meets_stated(c, self.stated.get(noun, ""))]
            if cards:
                self.picks[noun] = (fitting or cards)[0]["product_id"]
        self.last = self.pending[: self.b_tool]
        self.pending = self.pending[self.b_tool:]
        if self.last:
            return AgentAction(tool_calls=tuple(
                _call("catalog_search", i, query=noun, filters={"category": noun, "in_stock": True},
                      sort_by="price_asc", top_k=5 if noun not in self.stated else 40) for i, noun in enumerate(self.last)))
        return AgentAction(tool_calls=(_call("answer", 0, product_ids=list(self.picks.values())),))
