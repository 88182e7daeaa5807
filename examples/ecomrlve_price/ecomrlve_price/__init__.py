"""PRICE — a price quote for some units of one product: an environment added from outside the package.

The shopper names a product and how many units it wants (at higher d it leaves the number out and
says it when asked); the agent asks the store for a quote with the ``price_quote`` tool this
environment brings (a bulk discount applies from 3 units) and answers the total. Everything is in
this folder; its one registration is the entry point in ``pyproject.toml``, which names :data:`SPEC`.
"""

from __future__ import annotations

from ecomrlve.difficulty import Axis
from ecomrlve.registry import EnvSpec, JourneyRole

SPEC = EnvSpec(
    id="PRICE", entry_point="ecomrlve_price.family:PriceFamily",
    heuristic="ecomrlve_price.heuristic:PriceHeuristic", templates="ecomrlve_price.phrasings:PRICE_TEMPLATES",
    tools=("ecomrlve_price.tool:price_quote",),
    new_axes=(Axis("quote_units", "1 + ⌊d/4⌋", "PRICE units the shopper wants a quote for", lambda d: 1 + d // 4,
                   bounds=(1, 20)),),
    axes=("quote_units", "p_missing"),
    journey=JourneyRole(draw_order=7, tie_rank=8, keywords={"quote": 3, "total": 2, "units": 1},
                        patterns=((r"\bquote\b", 4),)),
)
