"""The JOURNEY reference agent: the heuristic's request routing, each request played by its environment's
reference agent (``ecomrlve.envs.reference_agent``). It sees only observations: the router reads where
requests start and resume from the shopper's words, and each sub-agent sees only its request's part of the
conversation."""

from __future__ import annotations

from ecomrlve.envs import reference_agent
from ecomrlve.envs.journey.heuristic import RequestRouter


class JourneyReference(RequestRouter):
    """One reference agent per request, chosen by :func:`~ecomrlve.envs.journey.heuristic.classify_request`."""

    def __init__(self) -> None:
        super().__init__(reference_agent)
