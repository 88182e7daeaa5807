"""How the PRICE shopper says its acts (``pick`` keeps the train and eval halves of each list apart)."""

from __future__ import annotations

import random

from ecomrlve.user.realiser import ActTemplates, pick
from ecomrlve_price import acts as A


def _price_text(act: A.PriceAct, rng: random.Random) -> str:
    if isinstance(act, A.AskQuote):
        product = f"the {act.product} ({act.product_id})"
        if act.units is None:
            return pick(rng, ["Hi, could I get a quote for {p}?", "Hello! What would {p} cost me?",
                              "Can you give me a price quote for {p}?", "Hey, I'd like a quote on {p}."]).format(p=product)
        return pick(rng, ["Hi, could I get a quote for {n} of {p}?", "Hello! What would {n} units of {p} cost in total?",
                          "Can you quote me {n} x {p}?", "Hey, I need a total price for {n} of {p}."]).format(
            n=act.units, p=product)
    return pick(rng, ["{n} units, please.", "I need {n}.", "Make it {n}.", "{n} of them."]).format(n=act.units)


PRICE_TEMPLATES = ActTemplates(acts=A.PriceAct, text=_price_text, protected=A.price_values)
