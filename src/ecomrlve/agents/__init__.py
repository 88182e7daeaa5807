"""Built-in agents: the per-environment oracle, a random agent and a heuristic baseline."""

from __future__ import annotations

from ecomrlve.agents.base import Agent
from ecomrlve.agents.simple import HeuristicAgent, RandomAgent

BUILTIN_AGENTS = ("oracle", "heuristic", "random")

__all__ = ["BUILTIN_AGENTS", "Agent", "HeuristicAgent", "RandomAgent"]
