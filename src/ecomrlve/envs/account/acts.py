"""The account shopper's dialogue acts (RETURN, STATUS, POLICY)."""

from __future__ import annotations

from dataclasses import dataclass

from ecomrlve.user.acts import DialogueAct


@dataclass(frozen=True)
class RequestReturn(DialogueAct):
    """RETURN opening: the item (as the customer names it), why, and what they want instead."""

    item: str
    reason: str | None  # the reason in the customer's words (None: not said)
    confirm_first: bool
    replacement: tuple[str, tuple[tuple[str, str], ...]] | None  # (noun, requirements); None: not wanted
    exact: tuple[str, ...] = ()  # ids, dates and values that must reach the agent verbatim


@dataclass(frozen=True)
class AskOrderStatus(DialogueAct):
    """STATUS opening: which order, and whether the customer wants to know when it arrives."""

    order: str
    want_eta: bool
    exact: tuple[str, ...] = ()


@dataclass(frozen=True)
class AskPolicy(DialogueAct):
    """POLICY opening: the facts of the customer's situation and the question."""

    facts: tuple[str, ...]
    question: str
    exact: tuple[str, ...] = ()


@dataclass(frozen=True)
class IdentifyItem(DialogueAct):
    """Answer to "which one do you mean?": the exact item and order date."""

    item: str
    exact: tuple[str, ...] = ()


@dataclass(frozen=True)
class TellWhen(DialogueAct):
    """Answer to "when did you order it?": the exact date ("on March 3") or, when that is all the customer
    remembers, a rough time ("about 3 weeks ago")."""

    item: str
    when: str
    exact_date: bool


@dataclass(frozen=True)
class TellPrice(DialogueAct):
    """Answer to "how much was it?": the unit price the customer paid ("24.99")."""

    item: str
    price: str


@dataclass(frozen=True)
class PickLine(DialogueAct):
    """Answer to "the one from March 3 or the one from March 9?": the named date or price that is theirs."""

    choice: str
    item: str


@dataclass(frozen=True)
class NotThese(DialogueAct):
    """None of the named dates or prices is the customer's: the item as they remember it."""

    item: str
    exact: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExplainReason(DialogueAct):
    reason: str


@dataclass(frozen=True)
class WrongItem(DialogueAct):
    """Correction: the agent acted on (or named) another item than the one the customer means."""

    wanted: str
    exact: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckMyAccount(DialogueAct):
    """Reply to a question the customer cannot or need not answer: it is in their account or was said."""


@dataclass(frozen=True)
class NothingMore(DialogueAct):
    """Reply to "anything else?" (or, about the replacement, to a question on one of its topics): nothing beyond the
    opening, which stated every requirement of the replacement (noun, requirements), repeated here when one is wanted."""

    replacement: tuple[str, tuple[tuple[str, str], ...]] | None


AccountAct = (RequestReturn | AskOrderStatus | AskPolicy | IdentifyItem | TellWhen | TellPrice | PickLine | NotThese
              | ExplainReason | WrongItem | CheckMyAccount | NothingMore)


def account_values(act: AccountAct) -> tuple[str, ...]:
    """The ids, dates, values and item names of an account act (RETURN, STATUS, POLICY): a typo
    must not make the item another item."""
    if isinstance(act, RequestReturn):
        return act.exact + (act.item,) + _replacement_values(act.replacement)
    if isinstance(act, NothingMore):
        return _replacement_values(act.replacement)
    if isinstance(act, AskOrderStatus):
        return act.exact + (act.order,)
    if isinstance(act, (IdentifyItem, NotThese, WrongItem)):
        return act.exact + ((act.wanted,) if isinstance(act, WrongItem) else (act.item,))
    if isinstance(act, TellWhen):
        return (act.item, act.when)
    if isinstance(act, TellPrice):
        return (act.item, act.price)
    if isinstance(act, PickLine):
        return (act.choice, act.item)
    if isinstance(act, AskPolicy):
        return act.exact
    return ()


def _replacement_values(replacement: tuple[str, tuple[tuple[str, str], ...]] | None) -> tuple[str, ...]:
    """The requirement values a replacement is said with (none without one)."""
    return tuple(value for _, value in replacement[1]) if replacement else ()
