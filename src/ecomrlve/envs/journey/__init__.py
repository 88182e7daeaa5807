"""JOURNEY, several requests in one conversation: its registry spec. ``family`` holds the environment,
``acts``/``phrasings`` the leads into each request, ``heuristic`` the baseline.
"""

from __future__ import annotations

from ecomrlve.registry import EnvSpec

SPEC = EnvSpec(
    id="JOURNEY", entry_point="ecomrlve.envs.journey.family:JourneyFamily",
    explainer="ecomrlve.envs.journey.explain:journey",
    reference="ecomrlve.envs.journey.reference:JourneyReference",
    heuristic="ecomrlve.envs.journey.heuristic:JourneyHeuristic", templates="ecomrlve.envs.journey.phrasings:JOURNEY_TEMPLATES",
    axes=("journey_intents", "p_switch"),
)
