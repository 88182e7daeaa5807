"""Helpers shared by the RETURN, STATUS and POLICY tests (the episode driver itself is ``exploits.play``)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from typing import Any

from exploits import play

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.episode import EcomEnv


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


class NeverAnswer:
    """Calls one tool every turn and never answers: the turn budget ends the episode."""

    def __init__(self, tool: str, **arguments: Any) -> None:
        self.tool, self.arguments = tool, arguments

    def act(self, observation) -> AgentAction:
        return call(self.tool, **self.arguments)


def mean_total(env: EcomEnv, env_id: str, make_policy: Callable[[int], Any], ds: Iterable[int],
               seeds: Iterable[int]) -> float:
    """Mean r_total of ``make_policy(seed)`` playing every d in ``ds`` at every seed in ``seeds``."""
    return statistics.fmean(play(env, lambda e, seed=seed: make_policy(seed), difficulty=d, seed=seed,
                                 env_id=env_id).reward["r_total"]
                            for d in ds for seed in seeds)
