"""The JOURNEY shopper's dialogue acts: leads into each of its requests."""

from __future__ import annotations

from dataclasses import dataclass

from ecomrlve.user.acts import DialogueAct


@dataclass(frozen=True)
class OpenJourney(DialogueAct):
    """JOURNEY: the first of ``count`` requests (``request`` is that intent's own opening)."""

    request: str
    count: int


@dataclass(frozen=True)
class NextIntent(DialogueAct):
    """JOURNEY: the previous request was answered; here is the next one."""

    request: str


@dataclass(frozen=True)
class InterruptIntent(DialogueAct):
    """JOURNEY: the shopper breaks into the current request with the next one."""

    request: str


@dataclass(frozen=True)
class ResumeIntent(DialogueAct):
    """JOURNEY: back to the request that was interrupted."""

    request: str


JourneyAct = OpenJourney | NextIntent | InterruptIntent | ResumeIntent


def journey_values(act: JourneyAct) -> tuple[str, ...]:
    """A JOURNEY act's request, already realised (and noised) by its own environment's user."""
    return (act.request,)
