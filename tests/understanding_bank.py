"""The natural-message bank (``tests/data/understanding``) as readings to check: each message with the
values in play its context names, what it should be understood to ask, and whether it was."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ecomrlve.user.dialogue import ItemNames
from ecomrlve.user.understanding import InPlay, Reading, understand

BANK_DIR = Path(__file__).parent / "data" / "understanding"
GROUPS = ("attribute", "open", "confirm", "which", "reason", "none")


@dataclass(frozen=True)
class BankMessage:
    id: str
    group: str
    half: str
    context: str
    text: str
    expect: dict[str, Any]
    in_play: InPlay

    def understood(self, reading: Reading) -> bool:
        """Whether ``reading`` is exactly what the message asks (topics, every flag, the items it names)."""
        e = self.expect
        if sorted(reading.topics) != e["topics"]:
            return False
        if (reading.open, reading.confirm, reading.which, reading.reason) != (e["open"], e["confirm"], e["which"], e["reason"]):
            return False
        return "items" not in e or sorted(reading.items) == sorted(e["items"])


def in_play(context: dict[str, Any]) -> InPlay:
    items = tuple(ItemNames(i["product_id"], i["brand"].lower(), i["model"].lower(), i["noun"].lower())
                  for i in context["items"])
    values = MappingProxyType({topic: tuple(v) for topic, v in context["values"].items()})
    return InPlay(items, values, tuple(context.get("dates", ())))


def load_bank() -> list[BankMessage]:
    contexts = json.loads((BANK_DIR / "contexts.json").read_text())
    plays = {name: in_play(c) for name, c in contexts.items()}
    out = []
    for line in (BANK_DIR / "bank.jsonl").read_text().splitlines():
        row = json.loads(line)
        out.append(BankMessage(row["id"], row["group"], row["half"], row["context"], row["text"], row["expect"],
                               plays[row["context"]]))
    return out


def understanding_rates(messages: list[BankMessage]) -> dict[str, tuple[int, int]]:
    """Per group: (understood, total)."""
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for m in messages:
        totals[m.group] += 1
        hits[m.group] += m.understood(understand(m.text, m.in_play))
    return {g: (hits[g], totals[g]) for g in GROUPS if totals[g]}
