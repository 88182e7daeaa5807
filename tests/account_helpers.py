"""Helpers shared by the RETURN, STATUS and POLICY tests (the episode driver itself is ``exploits.play``)."""

from __future__ import annotations

from typing import Any

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
