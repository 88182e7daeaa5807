"""The account family, RETURN, STATUS and POLICY: their registry specs.

Shared code: ``orders`` (order histories and how customers name a line), ``acts``, ``phrasings``, ``heuristic``
(RETURN and STATUS baselines), ``policy_heuristic``; one module per environment: ``returns``, ``status``, ``policy``.
"""

from __future__ import annotations

from ecomrlve.registry import EnvSpec, JourneyRole

RETURN_SPEC = EnvSpec(
    id="RETURN", entry_point="ecomrlve.envs.account.returns:ReturnFamily", collection="C4",
    reference="ecomrlve.envs.account.reference:ReturnReference", explainer="ecomrlve.envs.account.explain:returns",
    heuristic="ecomrlve.envs.account.heuristic:ReturnHeuristic", templates="ecomrlve.envs.account.phrasings:ACCOUNT_TEMPLATES",
    axes=("H_orders", "m", "slack", "p_missing", "order_reference", "p_ineligible", "return_window_edge"),
    journey=JourneyRole(draw_order=3, tie_rank=6, keywords={
        "return": 2, "send": 2, "back": 1, "replacement": 1, "help": 1},
        patterns=((r"send (?:\w+ )?back|(?:help me|like to|want to|wanna|need to) return", 4),)),
    catalog_needs=('returnable', 'in_stock', 'order_histories'),
    catalog_uses=('final_sale', 'look_alike_orders', 'variants'),
)

STATUS_SPEC = EnvSpec(
    id="STATUS", entry_point="ecomrlve.envs.account.status:StatusFamily",
    reference="ecomrlve.envs.account.reference:StatusReference", explainer="ecomrlve.envs.account.explain:status",
    heuristic="ecomrlve.envs.account.heuristic:StatusHeuristic", templates="ecomrlve.envs.account.phrasings:ACCOUNT_TEMPLATES",
    axes=("H_orders", "order_reference"),
    journey=JourneyRole(draw_order=4, tie_rank=5, keywords={
        "order": 1, "news": 2, "arrive": 2, "status": 2, "track": 2, "check": 1, "where": 1, "shipped": 1,
        "update": 1}),
    catalog_needs=('order_histories',),
    catalog_uses=('look_alike_orders',),
)

POLICY_SPEC = EnvSpec(
    id="POLICY", entry_point="ecomrlve.envs.account.policy:PolicyFamily",
    reference="ecomrlve.envs.account.reference:PolicyReference", explainer="ecomrlve.envs.account.explain:policy",
    heuristic="ecomrlve.envs.account.policy_heuristic:PolicyHeuristic", templates="ecomrlve.envs.account.phrasings:ACCOUNT_TEMPLATES",
    axes=("B_branch", "p_missing", "H_orders"),
    journey=JourneyRole(draw_order=5, tie_rank=4, keywords={
        "policy": 3, "warranty": 3, "covered": 2, "fee": 2, "days": 2, "yes": 2, "cost": 1, "restocking": 3,
        "dollars": 2, "member": 2, "window": 2, "free": 1, "question": 2, "refund": 1, "today": 1},
        patterns=((r"yes or no|in dollars|in days|it's about|it is about", 4),
                  (r"how (?:much|many)|what is|can i still|is it still", 3))),
    catalog_uses=('final_sale',),
)
