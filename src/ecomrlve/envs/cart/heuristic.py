"""The CART heuristic baseline: it sees only what an agent sees."""

from __future__ import annotations

import re
from typing import Any

from ecomrlve.actions import AgentAction, ToolCall, numbered_call
from ecomrlve.catalog.schema import short_title
from ecomrlve.prompts import stated_tool_budget
from ecomrlve.protocol import Observation, tool_results, user_text

_QUANTITY = re.compile(r"(\d+)\s*(?:x\s|of\s|units of\s)|\(x(\d+)\)")
_SPLIT = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
_EARLIER = re.compile(r"\s*\b(?:that\s+)?I (?:was looking at|looked at|viewed|saw) (?:earlier|before)\b", re.IGNORECASE)
_CONFIRM_WISH = re.compile(r"check with me|confirm|show me the cart", re.IGNORECASE)
_LEAD = re.compile(r"^.*?\b(?:add|buy|put|need|for)\b\s*", re.IGNORECASE)
#: the lead when noise misspelt its verb ("Could you ad the ...", "I'm shoppinng fpr the ..."): up to the word
#: after a polite or shopping word that comes before the first item's article or count ("several units of the ...")
_MISSPELT_LEAD = re.compile(r"^.*?\b(?:shop\w*|please|pls|plz|you|u)\s+\S+\s+(?=(?:the|an?|some|several|\d+)\b)",
                            re.IGNORECASE)
#: the lead when noise misspelt the polite word too ("Could yoi ade the ..."): up to the first item's article or count
_ANY_LEAD = re.compile(r"^.*?(?=\b(?:the|several|\d+)\b)", re.IGNORECASE)


class CartHeuristic:
    """A fair scripted baseline for CART: search the shopper's words, ask about missing variants, add.

    It splits the opening request into item phrases, searches each, takes the best card whose
    brand the shopper named, reads variant values and quantities from the shopper's words, asks
    when a variant is needed but unknown, tells the shopper about stock-outs, then answers.
    """

    def __init__(self) -> None:
        self.b_tool = 1
        self.pending: list[str] = []  # phrases still to search
        self.found: dict[str, dict[str, Any]] = {}  # phrase -> card
        self.quantity: dict[str, int] = {}
        self.added: set[str] = set()
        self.asked: set[str] = set()
        self.conversation = ""
        self.out_of_stock: set[str] = set()
        self.announced: set[str] = set()
        self.turns = 0
        self.confirm_wanted = False
        self.confirm_asked = False
        self.history_checked = False
        self._last_searched: list[str] = []

    def act(self, observation: Observation) -> AgentAction:
        self.turns += 1
        if observation.tools is not None:
            budget = stated_tool_budget(observation.messages[0]["content"])
            if budget is None:
                raise ValueError("the system prompt states no tool budget")
            self.b_tool = budget
            opening = observation.messages[1]["content"]
            self.pending = self._phrases(opening)
            self.confirm_wanted = _CONFIRM_WISH.search(opening) is not None
        said = user_text(observation)
        self.conversation += " " + said
        for phrase in re.findall(r"(?:then|take|get)\s+(the [^.]+?)\s+(?:would work )?instead", said, re.IGNORECASE):
            self.pending.append(phrase)
        results = [r for name, r in tool_results(observation) if name == "catalog_search"]
        for phrase, result in zip(self._last_searched, results):
            best = self._best(phrase, result.get("results", []))
            if best is not None:
                self.found[phrase] = best
        for name, result in tool_results(observation):
            if name == "user_get_visit_history":
                for phrase in self.pending:
                    if _EARLIER.search(phrase) and phrase not in self.found:
                        best = self._best(phrase, result.get("viewed", []))
                        if best is not None:
                            self.found[phrase] = best
        search_phrases = [p for p in self.pending if p not in self.found]
        for name, result in tool_results(observation):
            if name == "cart_add" and "lines" in result:
                self.added.update(line["product_id"] for line in result["lines"])
            if result.get("error") == "out_of_stock":
                self.out_of_stock.add(result["message"].split()[1])
        calls: list[ToolCall] = []
        messages: list[str] = []
        self._last_searched = []
        for phrase in search_phrases:
            if len(calls) >= self.b_tool:
                break
            if _EARLIER.search(phrase):
                if not self.history_checked:
                    calls.append(numbered_call("user_get_visit_history", len(calls)))
                    self.history_checked = True
                    continue
                phrase_query = _EARLIER.sub("", phrase)
            else:
                phrase_query = phrase
            calls.append(numbered_call("catalog_search", len(calls), query=phrase_query))
            self._last_searched.append(phrase)
        for phrase, card in self.found.items():
            pid = card["product_id"]
            if pid in self.added or len(calls) >= self.b_tool:
                continue
            if pid in self.out_of_stock or not card["in_stock"]:
                if pid not in self.announced:
                    messages.append(f"Sorry, {short_title(card['title'])} is out of stock. What would you like instead?")
                    self.announced.add(pid)
                continue
            arguments: dict[str, Any] = {"product_id": pid, "quantity": self._quantity(phrase)}
            variants = card.get("variants") or []
            if variants:
                variant = self._variant(variants)
                if variant is None:
                    if pid not in self.asked:
                        attribute = next(k for k in variants[0] if k != "variant_id").replace("_", " ")
                        messages.append(f"Which {attribute} do you need for {short_title(card['title'])}?")
                        self.asked.add(pid)
                        continue
                    variant = variants[0]
                arguments["variant_id"] = variant["variant_id"]
            calls.append(numbered_call("cart_add", len(calls), **arguments))
        if not calls and not messages and self.confirm_wanted and not self.confirm_asked:
            messages.append("That's everything in your cart - can you confirm it looks right?")
            self.confirm_asked = True
        elif not calls and not messages:
            calls.append(numbered_call("answer", 0, done=True))
        return AgentAction(message=" ".join(messages) or None, tool_calls=tuple(calls))

    @staticmethod
    def _phrases(opening: str) -> list[str]:
        first = opening.split("?")[0].split(".")[0]
        lead = next((lead for lead in (_LEAD, _MISSPELT_LEAD) if lead.search(first)), _ANY_LEAD)
        request = lead.sub("", first, count=1)
        request = re.sub(r"\s+(?:to|in) my (?:cart|c\w+)\b.*$", "", request)
        return [p.strip() for p in _SPLIT.split(request) if len(p.strip()) > 3]

    def _best(self, phrase: str, results: list[dict[str, Any]]) -> dict[str, Any] | None:
        words = set(re.findall(r"[a-z0-9]+", phrase.lower()))
        scored = [(len(words & set(re.findall(r"[a-z0-9]+", c["title"].lower()))), -i, c) for i, c in enumerate(results)]
        return max(scored, key=lambda s: s[:2])[2] if scored else None

    def _quantity(self, phrase: str) -> int:
        match = _QUANTITY.search(phrase)
        if match:
            return int(match.group(1) or match.group(2))
        return 1

    def _variant(self, variants: list[dict[str, Any]]) -> dict[str, Any] | None:
        text = self.conversation.lower()
        for variant in variants:
            value = next(v for k, v in variant.items() if k != "variant_id")
            if re.search(r"(?<![a-z0-9])" + re.escape(str(value).lower()) + r"(?![a-z0-9])", text):
                return variant
        return None
