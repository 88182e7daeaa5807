"""Shared by the PD, SUB and BUNDLE tests: exploit policies, cached sweeps and common checks.

The policies reuse the driver and :class:`exploits.ScriptedPolicy` of ``tests/exploits.py``;
they may read the hidden goal (an exploit that knows more is a stronger test) and try to earn
reward without solving the task: invented ids, products that miss a requirement, the sold-out
original (SUB), every id seen, one product per category ignoring the budget (BUNDLE), and
never answering.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from exploits import UNFILLED, AskForeverPolicy, ScriptedPolicy, Transcript, play, random_product_id

from ecomrlve.catalog.filters import filter_mask
from ecomrlve.envs.recommend.requirements import requirement_filter
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Observation, cards, expand_result


class RecommendPolicy(ScriptedPolicy):
    """Base of the recommendation exploits: collects every card it sees, answers ``chosen()``."""

    def __init__(self, env: EcomEnv, seed: int = 0) -> None:
        super().__init__(seed)
        self.env = env
        self.goal = env.audit().problem.goal
        self.seen: dict[str, dict[str, Any]] = {}

    def observe(self, observation: Observation) -> None:
        for card in cards(observation):
            self.seen.setdefault(card["product_id"], card)

    def answer_arguments(self) -> dict[str, Any]:
        return {"product_ids": self.chosen()}

    def chosen(self) -> list[str]:
        return list(self.seen)


class RandomIdsPolicy(RecommendPolicy):
    """Answers ids of the right shape that were never shown (almost surely not products at all)."""

    def chosen(self) -> list[str]:
        return [random_product_id(self.rng) for _ in range(5)]


class EverySeenPolicy(RecommendPolicy):
    """Searches the opening (and the first noun's category) and answers every id it saw."""

    def __init__(self, env: EcomEnv, seed: int = 0) -> None:
        super().__init__(env, seed)
        nouns = getattr(self.goal, "nouns", None) or [self.goal.noun]
        self.queue = [("catalog_search", {"query": nouns[0], "top_k": 50})]

    def observe(self, observation: Observation) -> None:
        if observation.tools is not None:
            self.queue.insert(0, ("catalog_search", {"query": self.opening, "top_k": 50}))
        super().observe(observation)


class ViolatorsPolicy(RecommendPolicy):
    """Searches the category and answers only products that miss a requirement (or are sold out)."""

    def __init__(self, env: EcomEnv, seed: int = 0) -> None:
        super().__init__(env, seed)
        nouns = getattr(self.goal, "nouns", None) or [self.goal.noun]
        self.queue = [("catalog_search", {"query": noun, "top_k": 50}) for noun in nouns[:3]]

    def chosen(self) -> list[str]:
        catalog = self.env.catalog
        rows = np.asarray([catalog.index_of(i) for i in self.seen], dtype=np.int64)
        if len(rows) == 0:
            return []
        problem = self.env.audit().problem
        stock = self.env.audit().world.stock_overrides
        if hasattr(problem.goal, "categories"):  # BUNDLE: products that cover no needed category
            goal = problem.goal
            keep = np.ones(len(rows), dtype=bool)
            for slot, category in enumerate(goal.categories):
                ok = filter_mask(catalog, requirement_filter(goal.requirements_of(slot)), stock, rows=rows)
                keep &= ~(ok & (catalog.category[rows] == category))
        else:
            requirements = [r for r in problem.state.requirements if r.field != "category"]
            keep = ~filter_mask(catalog, requirement_filter(requirements), stock, rows=rows)
        return [catalog.product_id(r) for r in rows[keep][:5]]


class OriginalPolicy(RecommendPolicy):
    """SUB: finds the sold-out original by its title and recommends it anyway."""

    def __init__(self, env: EcomEnv, seed: int = 0) -> None:
        super().__init__(env, seed)
        self.queue = [("catalog_search", {"query": self.goal.original_title})]

    def chosen(self) -> list[str]:
        return [self.goal.original_id]


class IgnoreBudgetPolicy(RecommendPolicy):
    """BUNDLE: the top search result of every needed category, whatever it costs."""

    def __init__(self, env: EcomEnv, seed: int = 0) -> None:
        super().__init__(env, seed)
        catalog = env.catalog
        self.picks: list[str] = []
        self.queue = [("catalog_search", {"query": noun, "filters": {"category": catalog.categories[c].name,
                                                                     "in_stock": True}})
                      for noun, c in zip(self.goal.nouns, self.goal.categories)]

    def observe(self, observation: Observation) -> None:
        super().observe(observation)
        for message in observation.messages:
            if message["role"] == "tool" and message.get("name") == "catalog_search":
                results = expand_result(json.loads(message["content"])).get("results", [])
                if results:
                    self.picks.append(results[0]["product_id"])

    def chosen(self) -> list[str]:
        return self.picks


class SearchForeverPolicy(ScriptedPolicy):
    """Never answers: searches the opening every turn."""

    answers = False

    def observe(self, observation: Observation) -> None:
        self.queue = [("catalog_search", {"query": self.opening or "gift"})]


COMMON_EXPLOITS = {
    "random_ids": lambda env, seed: RandomIdsPolicy(env, seed),
    "every_seen_id": lambda env, seed: EverySeenPolicy(env, seed),
    "violators": lambda env, seed: ViolatorsPolicy(env, seed),
    "search_forever": lambda env, seed: SearchForeverPolicy(seed),
    "ask_forever": lambda env, seed: AskForeverPolicy(seed),
}


# -- cached sweeps ------------------------------------------------------------------------------------

EXPLOIT_D = [0, 3, 6, 9, 12, 15]  # the sweep every recommendation exploit plays, with EXPLOIT_SEEDS
EXPLOIT_SEEDS = range(15)
_RUNS: dict[tuple, list[tuple[int, int, Transcript]]] = {}


def exploit_runs(env: EcomEnv, env_id: str, name: str, factory, ds: list[int] = EXPLOIT_D,
                 seeds: range = EXPLOIT_SEEDS) -> list[tuple[int, int, Transcript]]:
    """``factory(env, seed)`` played at every d in ``ds`` and seed in ``seeds``, once per process (cached)."""
    key = (name, env_id, tuple(ds), seeds)
    if key not in _RUNS:
        _RUNS[key] = [(d, s, play(env, lambda e, s=s: factory(e, s), difficulty=d, seed=s, env_id=env_id))
                      for d in ds for s in seeds]
    return _RUNS[key]


def all_transcripts() -> list[Transcript]:
    return [t for runs in _RUNS.values() for _, _, t in runs]


# -- common checks ------------------------------------------------------------------------------------

def assert_exploit_low(runs: list[tuple[int, int, Transcript]], label: str) -> None:
    """Mean r_total <= 0.1; never is_correct, except that listing every seen id may put a valid
    product first by luck (is_correct asks only for a valid first item)."""
    totals = [t.reward["r_total"] for _, _, t in runs]
    mean = sum(totals) / len(totals)
    assert mean <= 0.1, f"{label}: mean r_total {mean:.3f}"
    lucky = [(d, s) for d, s, t in runs if t.reward["is_correct"]]
    assert "every_seen_id" in label or not lucky, f"{label}: judged correct on {lucky[:5]}"


def assert_no_unfilled_slots(env: EcomEnv, env_id: str, openings: int) -> int:
    """Scan ``openings`` fresh openings (d cycling 0..15) and every cached transcript's user messages."""
    texts = []
    for seed in range(openings):
        texts.append(env.reset(env_id=env_id, difficulty=seed % 16, seed=10_000 + seed).messages[-1]["content"])
    for transcript in all_transcripts():
        texts.extend(transcript.user_messages())
    for text in texts:
        assert text.strip(), "empty user message"
        assert not UNFILLED.search(text), f"unfilled slot in user message {text!r}"
    return len(texts)
