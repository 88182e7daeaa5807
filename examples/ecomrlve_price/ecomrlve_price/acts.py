"""What the PRICE shopper says."""

from __future__ import annotations

from dataclasses import dataclass

from ecomrlve.user.acts import DialogueAct


@dataclass(frozen=True)
class AskQuote(DialogueAct):
    """The opening: the product (by name and id) and, unless withheld, how many units."""

    product: str
    product_id: str
    units: int | None


@dataclass(frozen=True)
class TellUnits(DialogueAct):
    units: int


PriceAct = AskQuote | TellUnits


def price_values(act: PriceAct) -> tuple[str, ...]:
    """Names, ids and numbers noise must leave intact."""
    if isinstance(act, AskQuote):
        return (act.product, act.product_id) + ((str(act.units),) if act.units else ())
    return (str(act.units),)
