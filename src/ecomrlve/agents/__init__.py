"""Agents every environment can be played by: a random agent and the OpenAI-compatible LLM agent.

Each environment family keeps its own oracle and heuristic baseline beside its dialogue
(``envs/<family>/``); :func:`heuristic_agent` and :func:`reference_agent` build the ones the
environment's registry spec names.
"""

from __future__ import annotations

from ecomrlve.agents.random_agent import RandomAgent
from ecomrlve.envs import heuristic_agent, reference_agent

BUILTIN_AGENTS = ("oracle", "reference", "heuristic", "random")

__all__ = ["BUILTIN_AGENTS", "RandomAgent", "heuristic_agent", "reference_agent"]
