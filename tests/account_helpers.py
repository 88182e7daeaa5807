"""Helpers shared by the RETURN, STATUS and POLICY tests (the episode driver itself is ``exploits.play``)."""

from __future__ import annotations

import re
from typing import Any

from exploits import Transcript, play_oracle

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.episode import EcomEnv

UNFILLED = re.compile(r"[{}]|\bNone\b|\bnan\b")  # template slots that were never filled


def call(name: str, **arguments: Any) -> AgentAction:
    """An agent turn with one tool call."""
    return AgentAction(tool_calls=(ToolCall(id="t0", name=name, arguments=arguments),))


def reply(observation) -> str:
    """The customer's message in an observation."""
    return " ".join(m["content"] for m in observation.messages if m["role"] == "user")


def find_episode(env: EcomEnv, env_id: str, d: int, predicate, limit: int = 400) -> None:
    """Reset ``env`` at the first seed whose hidden goal satisfies ``predicate``."""
    for seed in range(limit):
        env.reset(env_id=env_id, difficulty=d, seed=seed)
        if predicate(env.audit().problem.goal):
            return
    raise AssertionError(f"no {env_id} episode at d={d} with seed < {limit} has the wanted goal")


class OracleRuns:
    """Oracle transcripts per difficulty, played once per test module and shared by its tests."""

    def __init__(self, env_id: str, seeds: range) -> None:
        self.env_id, self.seeds = env_id, seeds
        self._runs: dict[int, list[Transcript]] = {}

    def __call__(self, env: EcomEnv, d: int) -> list[Transcript]:
        if d not in self._runs:
            self._runs[d] = [play_oracle(env, difficulty=d, seed=seed, env_id=self.env_id) for seed in self.seeds]
        return self._runs[d]

    def check(self, env: EcomEnv, d: int) -> None:
        """Every episode at ``d``: full task marks, correct, nothing hallucinated, no unfilled slot."""
        for seed, transcript in zip(self.seeds, self(env, d)):
            reward = transcript.reward
            assert reward["r_task"] == 1.0 and reward["is_correct"], (self.env_id, d, seed, reward)
            assert reward["r_hall"] == 0.0, (self.env_id, d, seed, reward["hallucinated_ids"])
            for text in transcript.user_messages():
                assert not UNFILLED.search(text), text
