"""Heuristic baselines for PD, SUB and BUNDLE: they see only what an agent sees.

* :class:`RecommendHeuristic` (PD, SUB): one search with the shopper's own words, in-stock only,
  with a price cap when the opening states one; answers the first ``k_rec`` results but those the
  shopper then says sold out.
* :class:`BundleHeuristic` (BUNDLE): reads the list of things the project needs, searches each
  within its category sorted by price, and answers the cheapest in-stock product of each.
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


def _setup(observation: Observation) -> tuple[int, int, str]:
    """(tool budget, k_rec, opening) from the first observation."""
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
            _, self.k, opening = _setup(observation)
            filters: dict[str, Any] = {"in_stock": True}
            cap = _PRICE_CAP.search(opening)
            if cap:
                filters["price_max"] = float(cap.group(1) or cap.group(2))
            self.searched = True
            return AgentAction(tool_calls=(_call("catalog_search", 0, query=opening, filters=filters, top_k=20),))
        sold_out = [s for s in _SENTENCE.split(user_text(observation).lower()) if "sold out" in s or "out of stock" in s]
        for name, result in tool_results(observation):
            if name == "catalog_search":
                self.results += [c["product_id"] for c in result.get("results", [])
                                 if c["in_stock"] and not any(_named(c, s) for s in sold_out)]
        return AgentAction(tool_calls=(_call("answer", 0, product_ids=self.results[: self.k]),))


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _named(card: dict[str, Any], sentence: str) -> bool:
    """Whether a (lower-cased) sentence names the product of ``card`` by its title's first words (brand and
    model, as the shopper names a product that sold out)."""
    words = card["title"].split(",")[0].lower().split()[:3]
    return bool(words) and " ".join(words) in sentence


class BundleHeuristic:
    """BUNDLE baseline: the cheapest in-stock product of each thing named in the opening."""

    def __init__(self) -> None:
        self.b_tool = 1
        self.pending: list[str] = []
        self.picks: dict[str, str] = {}
        self.last: list[str] = []

    def act(self, observation: Observation) -> AgentAction:
        if observation.tools is not None:
            self.b_tool, _, opening = _setup(observation)
            need_clause = opening.split(".")[0].split("need", 1)[-1] if "need" in opening else opening
            self.pending = list(dict.fromkeys(m.strip() for m in _NEEDS.findall(need_clause.lower())))
        results = [r for name, r in tool_results(observation) if name == "catalog_search"]
        for noun, result in zip(self.last, results):
            cards = [c for c in result.get("results", []) if c["in_stock"]]
            if cards:
                self.picks[noun] = min(cards, key=lambda c: c["price"])["product_id"]
        self.last = self.pending[: self.b_tool]
        self.pending = self.pending[self.b_tool:]
        if self.last:
            return AgentAction(tool_calls=tuple(
                _call("catalog_search", i, query=noun, filters={"category": noun, "in_stock": True},
                      sort_by="price_asc", top_k=5) for i, noun in enumerate(self.last)))
        return AgentAction(tool_calls=(_call("answer", 0, product_ids=list(self.picks.values())),))
