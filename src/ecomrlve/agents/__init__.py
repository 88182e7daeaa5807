"""Built-in agents: the per-environment oracle, a random agent and heuristic baselines.

The heuristic baseline is one scripted strategy per environment (it sees only what an agent
sees); :func:`heuristic_agent` picks the strategy registered for the episode's environment.
"""

from __future__ import annotations

import importlib

from ecomrlve.agents.simple import CartHeuristic, RandomAgent
from ecomrlve.protocol import Agent

BUILTIN_AGENTS = ("oracle", "heuristic", "random")

#: env id -> "module:Class" of its heuristic baseline, imported on first use.
HEURISTICS: dict[str, str] = {
    "CART": "ecomrlve.agents.simple:CartHeuristic",
    "RETURN": "ecomrlve.agents.account:ReturnHeuristic",
    "STATUS": "ecomrlve.agents.account:StatusHeuristic",
    "POLICY": "ecomrlve.agents.account:PolicyHeuristic",
    "PD": "ecomrlve.agents.discovery:RecommendHeuristic",
    "SUB": "ecomrlve.agents.discovery:RecommendHeuristic",
    "BUNDLE": "ecomrlve.agents.discovery:BundleHeuristic",
    "JOURNEY": "ecomrlve.agents.journey:JourneyHeuristic",
}


def heuristic_agent(env_id: str) -> Agent:
    """A fresh heuristic baseline for one episode of ``env_id``."""
    if env_id not in HEURISTICS:
        raise KeyError(f"no heuristic baseline for {env_id!r}; have {', '.join(sorted(HEURISTICS))}")
    module, _, cls = HEURISTICS[env_id].partition(":")
    return getattr(importlib.import_module(module), cls)()


__all__ = ["BUILTIN_AGENTS", "HEURISTICS", "CartHeuristic", "RandomAgent", "heuristic_agent"]
