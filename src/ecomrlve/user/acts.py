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


@dataclass(frozen=True)
class RequestReturn:
    """RETURN opening: the item (as the customer names it), why, and what they want instead."""

    item: str
    reason: str | None  # the reason in the customer's words (None: not said)
    confirm_first: bool
    replacement: tuple[str, tuple[tuple[str, str], ...]] | None  # (noun, requirements); None: not wanted
    exact: tuple[str, ...] = ()  # ids, dates and values that must reach the agent verbatim


@dataclass(frozen=True)
class AskOrderStatus:
    """STATUS opening: which order, and whether the customer wants to know when it arrives."""

    order: str
    want_eta: bool
    exact: tuple[str, ...] = ()


@dataclass(frozen=True)
class AskPolicy:
    """POLICY opening: the facts of the customer's situation and the question."""

    facts: tuple[str, ...]
    question: str
    exact: tuple[str, ...] = ()


@dataclass(frozen=True)
class IdentifyItem:
    """Answer to "which one do you mean?": the exact item and order date."""

    item: str
    exact: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExplainReason:
    reason: str


@dataclass(frozen=True)
class WrongItem:
    """Correction: the agent acted on (or named) another item than the one the customer means."""

    wanted: str
    exact: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckMyAccount:
    """Reply to a question the customer cannot or need not answer: it is in their account or was said."""


AccountAct = RequestReturn | AskOrderStatus | AskPolicy | IdentifyItem | ExplainReason | WrongItem | CheckMyAccount


# -- recommendations (PD, SUB, BUNDLE) -------------------------------------------------------------
# A requirement travels as (ProductFilter field, value as said), e.g. ("price_max", "45").

@dataclass(frozen=True)
class RequestProducts:
    """PD: the opening request for a kind of product with the requirements the shopper states."""

    noun: str
    requirements: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RequestSubstitute:
    """SUB: the wanted product (named by its title) is sold out; find something similar."""

    original: str
    noun: str
    requirements: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RequestBundle:
    """BUNDLE: everything needed for a project, within an overall budget (None: no budget)."""

    project: str
    nouns: tuple[str, ...]
    budget: str | None
    item_requirements: tuple[tuple[str, str, str], ...]  # (noun, field, value)


@dataclass(frozen=True)
class StateRequirements:
    """Reply to a clarifying question: newly stated, repeated, and topics without a preference."""

    noun: str
    stated: tuple[tuple[str, str], ...]
    repeated: tuple[tuple[str, str], ...] = ()
    no_preference: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangeRequirement:
    """Context switch: the shopper changes one requirement mid-conversation."""

    noun: str
    requirement: tuple[str, str]


@dataclass(frozen=True)
class SoldOut:
    phrase: str


@dataclass(frozen=True)
class LooksGood:
    phrase: str


@dataclass(frozen=True)
class MissesRequirement:
    phrase: str
    requirement: tuple[str, str] | None  # None: the shopper says it does not fit, not why (high d)


@dataclass(frozen=True)
class NotNeeded:
    """BUNDLE: the recommended product is not one of the things the project needs."""

    phrase: str


@dataclass(frozen=True)
class UnclearQuestion:
    """The shopper cannot make sense of a question (it costs patience)."""


RecommendAct = (RequestProducts | RequestSubstitute | RequestBundle | StateRequirements | ChangeRequirement
                | SoldOut | LooksGood | MissesRequirement | NotNeeded | UnclearQuestion)

CartAct = RequestItems | Inform | StockOutAlternative | CartCorrection | Confirm | NotUnderstood

DialogueAct = CartAct | Acknowledge | GiveUp | JourneyAct | AccountAct | RecommendAct


def cart_values(act: CartAct) -> tuple[str, ...]:
    """The values of a CART act that must survive realisation verbatim (noise never touches them)."""
    if isinstance(act, RequestItems):
        out: list[str] = []
        for item in act.items:
            out.append(item.phrase)
            if item.variant:
                out.append(item.variant[1])
            if item.quantity:
                out.append(str(item.quantity))
        return tuple(out)
    if isinstance(act, Inform):
        return tuple(v for f in act.facts for v in (f.value, f.phrase))
    if isinstance(act, CartCorrection):
        return tuple(v for i in act.issues for v in (i.wanted, i.got, i.phrase) if v)
    if isinstance(act, StockOutAlternative):
        return (act.alternative, act.original)
    return ()


def journey_values(act: JourneyAct) -> tuple[str, ...]:
    """A JOURNEY act's request, already realised (and noised) by its own environment's user."""
    return (act.request,)


def account_values(act: AccountAct) -> tuple[str, ...]:
    """The ids, dates, values and item names of an account act (RETURN, STATUS, POLICY): a typo
    must not make the item another item."""
    if isinstance(act, RequestReturn):
        return act.exact + (act.item,) + tuple(value for _, value in (act.replacement[1] if act.replacement else ()))
    if isinstance(act, AskOrderStatus):
        return act.exact + (act.order,)
    if isinstance(act, (IdentifyItem, WrongItem)):
        return act.exact + ((act.item,) if isinstance(act, IdentifyItem) else (act.wanted,))
    if isinstance(act, AskPolicy):
        return act.exact
    return ()


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
    elif isinstance(act, (ChangeRequirement, MissesRequirement)):
        pairs = [act.requirement] if act.requirement is not None else []
    if isinstance(act, (SoldOut, LooksGood, MissesRequirement, NotNeeded)):
        names = [act.phrase]
    return tuple(names) + tuple(v for _, v in pairs)
