"""The CART shopper's dialogue acts: what it says, with only the values it may say now."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ecomrlve.user.acts import DialogueAct

#: How a request says that more than one of an item is wanted without saying how many, before its name ("several
#: units of the X") or after it ("the X (more than one)"): a withheld quantity above 1 (noise spares these words)
SEVERAL_BEFORE = ("several units of", "a few units of")
SEVERAL_AFTER = ("(more than one)", "(several of them)")


@dataclass(frozen=True)
class RequestedItem:
    phrase: str  # how the user names the product, e.g. "the Brightix Nova 21 Charger"
    quantity: int | None = None  # stated quantity (None: not mentioned)
    variant: tuple[str, str] | None = None  # stated (attribute, value)
    several: bool = False  # more than one wanted, the count not said


@dataclass(frozen=True)
class RequestItems(DialogueAct):
    items: tuple[RequestedItem, ...]
    confirm_first: bool = False


@dataclass(frozen=True)
class Fact:
    phrase: str
    attribute: str  # a variant attribute or "quantity"
    value: str  # the value, or "any" for no preference
    repeated: bool = False  # the user had already said it


@dataclass(frozen=True)
class Inform(DialogueAct):
    facts: tuple[Fact, ...]


@dataclass(frozen=True)
class StockOutAlternative(DialogueAct):
    original: str
    alternative: str


@dataclass(frozen=True)
class Issue:
    kind: Literal["wrong_variant", "too_many", "too_few", "unwanted", "missing"]
    phrase: str
    wanted: str | None = None
    got: str | None = None


@dataclass(frozen=True)
class CartCorrection(DialogueAct):
    issues: tuple[Issue, ...]


@dataclass(frozen=True)
class NotUnderstood(DialogueAct):
    pass


@dataclass(frozen=True)
class NothingElse(DialogueAct):
    """Asked for any further requirement when every one is known: only what was asked for."""


CartAct = RequestItems | Inform | StockOutAlternative | CartCorrection | NotUnderstood | NothingElse


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
            if item.several:
                out.extend(SEVERAL_BEFORE + SEVERAL_AFTER)
        return tuple(out)
    if isinstance(act, Inform):
        return tuple(v for f in act.facts for v in (f.value, f.phrase))
    if isinstance(act, CartCorrection):
        return tuple(v for i in act.issues for v in (i.wanted, i.got, i.phrase) if v)
    if isinstance(act, StockOutAlternative):
        return (act.alternative, act.original)
    return ()
