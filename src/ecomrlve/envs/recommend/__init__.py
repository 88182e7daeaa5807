"""The recommendation family, PD, SUB and BUNDLE: their registry specs.

Shared code: ``requirements`` (requirements as filter fields, valid sets, preferences, ranking reward),
``task`` (what PD and SUB share as a task), ``user`` (the recommending shopper), ``acts``, ``phrasings``,
``heuristic``; one module per environment: ``pd``, ``sub``, ``bundle``.
"""

from __future__ import annotations

from ecomrlve.registry import EnvSpec, JourneyRole

_AXES = ("m", "k_rec", "slack", "p_missing", "p_switch", "p_oos", "feedback_detail")

SUB_SPEC = EnvSpec(
    id="SUB", entry_point="ecomrlve.envs.recommend.sub:SubstitutionFamily", collection="C2",
    explainer="ecomrlve.envs.recommend.explain:ranked",
    heuristic="ecomrlve.envs.recommend.heuristic:RecommendHeuristic",
    reference="ecomrlve.envs.recommend.reference:RecommendReference", templates="ecomrlve.envs.recommend.phrasings:RECOMMEND_TEMPLATES",
    axes=_AXES,
    journey=JourneyRole(draw_order=1, tie_rank=3, keywords={
        "sold": 2, "unavailable": 2, "alternative": 3, "similar": 2, "instead": 2, "substitute": 3, "stock": 3}),
    catalog_needs=('stock_outs',),
    catalog_uses=('distractors', 'ratings'),
)

PD_SPEC = EnvSpec(
    id="PD", entry_point="ecomrlve.envs.recommend.pd:ProductDiscoveryFamily", collection="C4",
    explainer="ecomrlve.envs.recommend.explain:ranked",
    heuristic="ecomrlve.envs.recommend.heuristic:RecommendHeuristic",
    reference="ecomrlve.envs.recommend.reference:RecommendReference", templates="ecomrlve.envs.recommend.phrasings:RECOMMEND_TEMPLATES",
    axes=_AXES,
    # The highest tie rank: a request that matches nothing is taken for product discovery.
    journey=JourneyRole(draw_order=0, tie_rank=7, keywords={
        "looking": 1, "shopping": 1, "suggest": 2, "recommendations": 3, "recommend": 2, "find": 1},
        patterns=((r"\b(?:buy|for|need|find) an? \w+", 2),)),
    catalog_needs=('requestable',),
    catalog_uses=('stock_outs', 'distractors', 'ratings'),
)

BUNDLE_SPEC = EnvSpec(
    id="BUNDLE", entry_point="ecomrlve.envs.recommend.bundle:BundleFamily",
    explainer="ecomrlve.envs.recommend.explain:bundle",
    heuristic="ecomrlve.envs.recommend.heuristic:BundleHeuristic",
    reference="ecomrlve.envs.recommend.reference:BundleReference", templates="ecomrlve.envs.recommend.phrasings:RECOMMEND_TEMPLATES",
    axes=("bundle_categories", "bundle_budget", "m", "slack", "p_missing", "feedback_detail"),
    journey=JourneyRole(draw_order=6, tie_rank=2, keywords={
        "together": 2, "budget": 2, "spend": 2, "everything": 2, "setting": 2, "training": 2, "building": 2,
        "moving": 2, "commute": 2, "project": 2, "getting": 1, "ready": 1, "trip": 1},
        patterns=((r"(?:,|\band) (?:an?|some) \w", 2),)),
    catalog_needs=('bundles',),
    catalog_uses=('full_bundles', 'stock_outs', 'distractors'),
)
