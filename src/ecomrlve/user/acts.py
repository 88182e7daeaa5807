"""Dialogue acts: *what* the simulated user says, decided by the dialogue manager.

A realiser turns acts into text. Acts carry only the values the user is allowed to say at that
moment, so a realiser (template or LLM) can never leak the rest of the hidden goal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class RequestedItem:
    phrase: str  # how the user names the product, e.g. "the Brightix Nova 21 Charger"
    quantity: int | None = None  # stated quantity (None: not mentioned)
    variant: tuple[str, str] | None = None  # stated (attribute, value)


@dataclass(frozen=True)
class RequestItems:
    items: tuple[RequestedItem, ...]
    confirm_first: bool = False


@dataclass(frozen=True)
class Fact:
    phrase: str
    attribute: str  # a variant attribute or "quantity"
    value: str  # the value, or "any" for no preference
    repeated: bool = False  # the user had already said it


@dataclass(frozen=True)
class Inform:
    facts: tuple[Fact, ...]


@dataclass(frozen=True)
class StockOutAlternative:
    original: str
    alternative: str


@dataclass(frozen=True)
class Issue:
    kind: Literal["wrong_variant", "too_many", "too_few", "unwanted", "missing"]
    phrase: str
    wanted: str | None = None
    got: str | None = None


@dataclass(frozen=True)
class CartCorrection:
    issues: tuple[Issue, ...]


@dataclass(frozen=True)
class Confirm:
    pass


@dataclass(frozen=True)
class NotUnderstood:
    pass


@dataclass(frozen=True)
class Acknowledge:
    pass


@dataclass(frozen=True)
class GiveUp:
    pass


@dataclass(frozen=True)
class OpenJourney:
    """JOURNEY: the first of ``count`` requests (``request`` is that intent's own opening)."""

    request: str
    count: int


@dataclass(frozen=True)
class NextIntent:
    """JOURNEY: the previous request was answered; here is the next one."""

    request: str


@dataclass(frozen=True)
class InterruptIntent:
    """JOURNEY: the shopper breaks into the current request with the next one."""

    request: str


@dataclass(frozen=True)
class ResumeIntent:
    """JOURNEY: back to the request that was interrupted."""

    request: str


JourneyAct = OpenJourney | NextIntent | InterruptIntent | ResumeIntent

DialogueAct = (RequestItems | Inform | StockOutAlternative | CartCorrection | Confirm | NotUnderstood
               | Acknowledge | GiveUp | JourneyAct)


def protected_values(act: DialogueAct) -> tuple[str, ...]:
    """Values that must survive realisation verbatim (noise never touches them)."""
    if isinstance(act, RequestItems):
        out: list[str] = []
        for item in act.items:
            if item.variant:
                out.append(item.variant[1])
            if item.quantity:
                out.append(str(item.quantity))
        return tuple(out)
    if isinstance(act, Inform):
        return tuple(f.value for f in act.facts)
    if isinstance(act, CartCorrection):
        return tuple(v for i in act.issues for v in (i.wanted, i.got) if v)
    if isinstance(act, StockOutAlternative):
        return (act.alternative,)
    if isinstance(act, JourneyAct):
        return (act.request,)  # already realised (and noised) by its own environment's user
    return ()
