"""Built-in agents: the per-environment oracle, a random agent and heuristic baselines.

The heuristic baseline is one scripted strategy per environment (it sees only what an agent
sees); :func:`heuristic_agent` builds the strategy named by the environment's registry spec.
"""

from __future__ import annotations

from ecomrlve.agents.simple import CartHeuristic, RandomAgent
from ecomrlve.errors import UnknownNameError
from ecomrlve.protocol import Agent
from ecomrlve.registry import env_spec, env_specs, load

BUILTIN_AGENTS = ("oracle", "heuristic", "random")


def heuristic_agent(env_id: str) -> Agent:
    """A fresh heuristic baseline for one episode of ``env_id``."""
    spec = env_spec(env_id)
    if spec.heuristic is None:
        have = ", ".join(s.id for s in env_specs() if s.heuristic is not None)
        raise UnknownNameError(f"--agent heuristic: {env_id} has no heuristic baseline (its EnvSpec names none); "
                               f"the environments with one: {have}")
    return load(spec.heuristic)()


__all__ = ["BUILTIN_AGENTS", "CartHeuristic", "RandomAgent", "heuristic_agent"]
