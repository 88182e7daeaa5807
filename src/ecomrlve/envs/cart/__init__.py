"""CART, cart building: its registry spec. The family's code: ``family`` (goal, task state, shopper, generator,
verifier, oracle), ``acts`` and ``phrasings`` (what the shopper says and how), ``heuristic`` (the baseline).
"""

from __future__ import annotations

from ecomrlve.registry import EnvSpec, JourneyRole

SPEC = EnvSpec(
    id="CART", entry_point="ecomrlve.envs.cart.family:CartFamily", collection="C1",
    explainer="ecomrlve.envs.cart.explain:cart",
    reference="ecomrlve.envs.cart.reference:CartReference",
    heuristic="ecomrlve.envs.cart.heuristic:CartHeuristic", templates="ecomrlve.envs.cart.phrasings:CART_TEMPLATES",
    axes=("cart_items", "cart_history_lookalikes", "p_variant", "p_multi_qty", "p_missing", "p_oos"),
    journey=JourneyRole(draw_order=2, tie_rank=1, keywords={"cart": 3, "buy": 1, "add": 2, "earlier": 2},
                        patterns=((r"\b(?:buy|for|add|get)(?: \d+x| \d+ (?:units )?of| (?:several|a few) units of)? the\b", 3),
                                  (r"\b(?:several|a few) units of the\b", 2))),
    catalog_needs=('in_stock', 'nameable'),
    catalog_uses=('variants', 'stock_outs', 'multi_item_carts', 'distractors'),
)
