"""What passes between an agent and an episode: observations, the agent protocol, result helpers.

A leaf module (it imports only :mod:`ecomrlve.actions`), so environments, agents, the runtime and
integrations can all depend on it without depending on each other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ecomrlve.actions import AgentAction


class Observation(BaseModel):
    """What the agent sees after ``reset`` or ``step``.

    ``messages`` are the new chat messages since the last step in OpenAI format: on reset the
    system prompt and the user's opening; on step one ``tool`` message per call (JSON content,
    with ``tool_call_id``) and/or one ``user`` message. ``tools`` (reset only) are the OpenAI
    function schemas. ``reward`` is 0 until ``done``; the final ``info["reward"]`` holds the
    breakdown. The hidden goal is never here.
    """

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    done: bool = False
    reward: float = 0.0
    info: dict[str, Any] = Field(default_factory=dict)


class Agent(Protocol):
    """Receives every observation (the first from ``reset``) and returns one assistant turn."""

    def act(self, observation: Observation) -> AgentAction | str | dict[str, Any]: ...


def tool_results(observation: Observation) -> Iterator[tuple[str, dict[str, Any]]]:
    """(tool name, decoded result) for each tool message in an observation."""
    for message in observation.messages:
        if message["role"] == "tool":
            yield message["name"], json.loads(message["content"])


def user_text(observation: Observation) -> str:
    """The user's words in an observation: their message and replies to ``ask_user``."""
    parts = [m["content"] for m in observation.messages if m["role"] == "user"]
    parts += [r["user_reply"] for name, r in tool_results(observation) if name == "ask_user" and "user_reply" in r]
    return " ".join(parts)


def cards(observation: Observation) -> Iterator[dict[str, Any]]:
    """Every product card in an observation's tool results (search, history, lookups)."""
    for name, result in tool_results(observation):
        if name == "catalog_search":
            yield from result.get("results", [])
        elif name == "user_get_visit_history":
            yield from result.get("viewed", [])
        elif name == "catalog_get_product" and "product_id" in result:
            yield result
