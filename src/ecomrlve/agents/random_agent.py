"""The floor baseline: a valid but aimless agent that works in every environment."""

from __future__ import annotations

import random
import re
from typing import Any

from ecomrlve.actions import AgentAction, numbered_call
from ecomrlve.protocol import Observation, tool_results, user_text


class RandomAgent:
    """Valid but aimless: a random tool each turn, its arguments drawn from the tool's own schema.

    Values come from what it has seen: an argument named like a key in earlier tool results
    (``product_id``, ``order_id``, ``line_id`` ...) takes one of the values seen under that key,
    other strings are words from the shopper's messages. It works in every environment,
    answers with probability 0.2 per turn, and its arguments always satisfy the schema.
    """

    ANSWER_PROBABILITY = 0.2

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.schemas: dict[str, dict[str, Any]] = {}
        self.seen: dict[str, list[Any]] = {}
        self.words: list[str] = []

    def act(self, observation: Observation) -> AgentAction:
        if observation.tools is not None:
            self.schemas = {t["function"]["name"]: t["function"]["parameters"] for t in observation.tools}
        for _, result in tool_results(observation):
            self._collect(result, None)
        self.words.extend(re.findall(r"[A-Za-z]{3,}", user_text(observation)))
        others = [name for name in self.schemas if name != "answer"]
        name = "answer" if not others or self.rng.random() < self.ANSWER_PROBABILITY else self.rng.choice(others)
        return AgentAction(tool_calls=(numbered_call(name, 0, **self._object(self.schemas[name])),))

    def _collect(self, node: Any, key: str | None) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                self._collect(v, k)
        elif isinstance(node, list):
            for v in node:
                self._collect(v, key)
        elif key is not None and node is not None:
            self.seen.setdefault(key, []).append(node)

    def _object(self, schema: dict[str, Any]) -> dict[str, Any]:
        required = set(schema.get("required", ()))
        return {name: self._value(name, prop) for name, prop in schema.get("properties", {}).items()
                if name in required or self.rng.random() < 0.3}

    def _value(self, name: str, prop: dict[str, Any]) -> Any:
        rng = self.rng
        if "anyOf" in prop:
            prop = rng.choice([p for p in prop["anyOf"] if p.get("type") != "null"] or prop["anyOf"])
        if "enum" in prop:
            return rng.choice(prop["enum"])
        kind = prop.get("type")
        seen = self.seen.get(name) or self.seen.get(name.removesuffix("s"), [])
        if kind == "object":
            return self._object(prop)
        if kind == "array":
            count = rng.randint(prop.get("minItems", 1), max(prop.get("minItems", 1), min(prop.get("maxItems", 5), 5)))
            return [self._value(name.removesuffix("s"), prop.get("items", {})) for _ in range(count)]
        if kind == "boolean":
            return rng.random() < 0.5
        if kind in ("integer", "number"):
            low, high = prop.get("minimum", 0), prop.get("maximum", 100)
            return rng.randint(int(low), int(high)) if kind == "integer" else round(rng.uniform(low, high), 2)
        candidates = [v for v in seen if isinstance(v, str)] or self.words or ["gift"]
        text = rng.choice(candidates) if seen or name.endswith("_id") else " ".join(rng.sample(candidates, min(3, len(candidates))))
        return text[: prop.get("maxLength", len(text))] or "x"
