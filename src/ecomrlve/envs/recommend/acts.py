"""The recommendation shopper's dialogue acts (PD, SUB, BUNDLE).

A requirement travels as (ProductFilter field, value as said), e.g. ("price_max", "45")."""

from __future__ import annotations

from dataclasses import dataclass

from ecomrlve.user.acts import DialogueAct


@dataclass(frozen=True)
class RequestProducts(DialogueAct):
    """PD: the opening request for a kind of product with the requirements the shopper states."""

    noun: str
    requirements: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RequestSubstitute(DialogueAct):
    """SUB: the wanted product (named by its title) is sold out; find something similar."""

    original: str
    noun: str
    requirements: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RequestBundle(DialogueAct):
    """BUNDLE: everything needed for a project, within an overall budget (None: no budget)."""

    project: str
    nouns: tuple[str, ...]
    budget: str | None
    item_requirements: tuple[tuple[str, str, str], ...]  # (noun, field, value)


#: One soft preference the ranking weighs, as said: (kind, strength, value). Kinds: "price" (value: the
#: price from which the price has no appeal left; the lower, the better), "rating", "shipping", "popularity",
#: "similar" (value: the original's name); strength "strong" or "mild".
Preference = tuple[str, str, str]


@dataclass(frozen=True)
class StateRequirements(DialogueAct):
    """Reply to a clarifying question: newly stated, repeated, the hidden preferences asked about (each a
    :data:`Preference`), and topics without a preference. ``noun`` names the item the requirements are of."""

    noun: str
    stated: tuple[tuple[str, str], ...]
    repeated: tuple[tuple[str, str], ...] = ()
    no_preference: tuple[str, ...] = ()
    preferences: tuple[Preference, ...] = ()


@dataclass(frozen=True)
class ChangeRequirement(DialogueAct):
    """Context switch: the shopper changes one requirement mid-conversation."""

    noun: str
    requirement: tuple[str, str]


@dataclass(frozen=True)
class SoldOut(DialogueAct):
    phrase: str


@dataclass(frozen=True)
class LooksGood(DialogueAct):
    phrase: str


@dataclass(frozen=True)
class MissesRequirement(DialogueAct):
    phrase: str
    requirement: tuple[str, str] | None  # None: the shopper says it does not fit, not why (high d)


@dataclass(frozen=True)
class NotNeeded(DialogueAct):
    """BUNDLE: the recommended product is not one of the things the project needs."""

    phrase: str


@dataclass(frozen=True)
class UnclearQuestion(DialogueAct):
    """The shopper cannot make sense of a question (it costs patience)."""


RecommendAct = (RequestProducts | RequestSubstitute | RequestBundle | StateRequirements | ChangeRequirement
                | SoldOut | LooksGood | MissesRequirement | NotNeeded | UnclearQuestion)


def recommend_values(act: RecommendAct) -> tuple[str, ...]:
    """The exact values of a recommendation act: titles, requirement values, the budget."""
    pairs: list[tuple[str, str]] = []
    names: list[str] = []
    if isinstance(act, (RequestProducts, RequestSubstitute)):
        pairs = list(act.requirements)
        names = [act.original, act.noun] if isinstance(act, RequestSubstitute) else [act.noun]
    elif isinstance(act, RequestBundle):
        pairs = [(f, v) for _, f, v in act.item_requirements]
        names = [*act.nouns, *([act.budget] if act.budget else [])]
    elif isinstance(act, StateRequirements):
        pairs = list(act.stated + act.repeated)
        names = [value for _, _, value in act.preferences if value]
    elif isinstance(act, (ChangeRequirement, MissesRequirement)):
        pairs = [act.requirement] if act.requirement is not None else []
    if isinstance(act, (SoldOut, LooksGood, MissesRequirement, NotNeeded)):
        names = [act.phrase]
    return tuple(names) + tuple(v for _, v in pairs)
