"""The reference agents' questions in words nobody tuned the shopper on: the blind paraphrases of
``data/understanding/reference_paraphrases.json`` and a way to have the agents ask with them."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PARAPHRASES = Path(__file__).parent / "data" / "understanding" / "reference_paraphrases.json"
#: Every set of blind paraphrases, each by another writer: the first, and those written beside blind batches 20 to 29
#: (each committed before it was first measured).
PARAPHRASE_SETS = (PARAPHRASES, PARAPHRASES.with_name("reference_paraphrases_blind20.json"),
                   PARAPHRASES.with_name("reference_paraphrases_blind21.json"),
                   PARAPHRASES.with_name("reference_paraphrases_blind22.json"),
                   PARAPHRASES.with_name("reference_paraphrases_blind23.json"),
                   PARAPHRASES.with_name("reference_paraphrases_blind24.json"),
                   PARAPHRASES.with_name("reference_paraphrases_blind25.json"),
                   PARAPHRASES.with_name("reference_paraphrases_blind26.json"),
                   PARAPHRASES.with_name("reference_paraphrases_blind27.json"))


def paraphrases(path: Path = PARAPHRASES) -> dict[str, list[str]]:
    """Question name -> its blind paraphrases (templates with the original's slots) in the set at ``path``."""
    return json.loads(path.read_text(encoding="utf-8"))


def question_slots() -> dict[str, tuple[dict[str, Any], str]]:
    """Each paraphrased question: the reference agents' ``QUESTIONS`` table that holds it and its key there."""
    from ecomrlve.envs.account import reference as account
    from ecomrlve.envs.cart import reference as cart
    from ecomrlve.envs.recommend import reference as recommend

    return {"account.which_items": (account.QUESTIONS, "which_items"),
            "account.which_order": (account.QUESTIONS, "which_order"),
            "account.reason": (account.QUESTIONS, "reason"),
            "account.confirm_return": (account.QUESTIONS, "confirm_return"),
            "cart.variant": (cart.QUESTIONS, "attribute-000"), "cart.quantity_all": (cart.QUESTIONS, "attribute-018"),
            "cart.quantity_one": (cart.QUESTIONS, "attribute-020"), "cart.confirm": (cart.QUESTIONS, "confirm-004"),
            "recommend.open": (recommend.QUESTIONS, "open"),
            "recommend.bundle_open": (recommend.QUESTIONS, "bundle_open")}


def shipped_wording() -> dict[str, str]:
    """Each question as the agents ask it by default (the bank's training-half wording)."""
    return {name: table[key][1] if isinstance(table[key], tuple) else table[key]
            for name, (table, key) in question_slots().items()}


def draw(options: dict[str, list[str]], env_id: str, difficulty: int, seed: int) -> dict[str, str]:
    """One paraphrase per question for the episode ``(env_id, difficulty, seed)``, the same in every process."""
    rng = random.Random(f"{env_id}/{difficulty}/{seed}")
    return {name: rng.choice(texts) for name, texts in sorted(options.items())}


@contextmanager
def asking_with(wording: dict[str, str]) -> Iterator[None]:
    """The reference agents ask with ``wording`` (question name -> template) inside the block."""
    held = []
    slots = question_slots()
    for name, text in wording.items():
        table, key = slots[name]
        held.append((table, key, table[key]))
        table[key] = (table[key][0], text) if isinstance(table[key], tuple) else text
    try:
        yield
    finally:
        for table, key, original in held:
            table[key] = original
