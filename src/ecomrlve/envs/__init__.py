"""The built-in environments (one :class:`~ecomrlve.registry.EnvSpec` each) and their collections.

Registration order is the order of collection C8. A new environment is one more ``register``
call, here or in any module imported before it is used (see ARCHITECTURE.md).
"""

from __future__ import annotations

from ecomrlve.envs.base import Problem, TaskFamily, TaskOutcome
from ecomrlve.registry import (
    CORE_COLLECTIONS,
    RUNTIME_AXES,
    EnvSpec,
    JourneyRole,
    env_spec,
    env_specs,
    load,
    register,
    unknown,
)
from ecomrlve.tools import TOOLS

_RECOMMEND_AXES = ("m", "k_rec", "slack", "p_missing", "p_switch", "p_oos", "feedback_detail")

BUILTIN_SPECS: tuple[EnvSpec, ...] = (
    EnvSpec(
        id="CART", entry_point="ecomrlve.envs.cart:CartFamily", collection="C1",
        heuristic="ecomrlve.agents.simple:CartHeuristic", templates="ecomrlve.user.realiser:CART_TEMPLATES",
        axes=("cart_items", "cart_history_lookalikes", "p_variant", "p_multi_qty", "p_missing", "p_oos"),
        journey=JourneyRole(draw_order=2, tie_rank=1, keywords={"cart": 3, "buy": 1, "add": 2, "earlier": 2},
                            patterns=((r"\b(?:buy|for|add|get)(?: \d+x| \d+ (?:units )?of)? the\b", 3),)),
        catalog_needs=('in_stock', 'nameable'),
        catalog_uses=('variants', 'stock_outs', 'multi_item_carts', 'distractors'),
    ),
    EnvSpec(
        id="SUB", entry_point="ecomrlve.envs.sub:SubstitutionFamily", collection="C2",
        heuristic="ecomrlve.agents.discovery:RecommendHeuristic", templates="ecomrlve.user.realiser:RECOMMEND_TEMPLATES",
        axes=_RECOMMEND_AXES,
        journey=JourneyRole(draw_order=1, tie_rank=3, keywords={
            "sold": 2, "unavailable": 2, "alternative": 3, "similar": 2, "instead": 2, "substitute": 3, "stock": 3}),
        catalog_needs=('stock_outs',),
        catalog_uses=('distractors', 'ratings'),
    ),
    EnvSpec(
        id="PD", entry_point="ecomrlve.envs.pd:ProductDiscoveryFamily", collection="C4",
        heuristic="ecomrlve.agents.discovery:RecommendHeuristic", templates="ecomrlve.user.realiser:RECOMMEND_TEMPLATES",
        axes=_RECOMMEND_AXES,
        # The highest tie rank: a request that matches nothing is taken for product discovery.
        journey=JourneyRole(draw_order=0, tie_rank=7, keywords={
            "looking": 1, "shopping": 1, "suggest": 2, "recommendations": 3, "recommend": 2, "find": 1},
            patterns=((r"\b(?:buy|for|need|find) an? \w+", 2),)),
        catalog_needs=('requestable',),
        catalog_uses=('stock_outs', 'distractors', 'ratings'),
    ),
    EnvSpec(
        id="RETURN", entry_point="ecomrlve.envs.returns:ReturnFamily", collection="C4",
        heuristic="ecomrlve.agents.account:ReturnHeuristic", templates="ecomrlve.user.realiser:ACCOUNT_TEMPLATES",
        axes=("H_orders", "m", "slack", "p_missing", "order_reference", "p_ineligible", "return_window_edge"),
        journey=JourneyRole(draw_order=3, tie_rank=6, keywords={
            "return": 2, "send": 2, "back": 1, "replacement": 1, "help": 1},
            patterns=((r"send (?:\w+ )?back|(?:help me|like to|want to|wanna|need to) return", 4),)),
        catalog_needs=('returnable', 'in_stock', 'order_histories'),
        catalog_uses=('final_sale', 'look_alike_orders', 'variants'),
    ),
    EnvSpec(
        id="STATUS", entry_point="ecomrlve.envs.status:StatusFamily",
        heuristic="ecomrlve.agents.account:StatusHeuristic", templates="ecomrlve.user.realiser:ACCOUNT_TEMPLATES",
        axes=("H_orders", "order_reference"),
        journey=JourneyRole(draw_order=4, tie_rank=5, keywords={
            "order": 1, "news": 2, "arrive": 2, "status": 2, "track": 2, "check": 1, "where": 1, "shipped": 1,
            "update": 1}),
        catalog_needs=('order_histories',),
        catalog_uses=('look_alike_orders',),
    ),
    EnvSpec(
        id="POLICY", entry_point="ecomrlve.envs.policy:PolicyFamily",
        heuristic="ecomrlve.agents.policy:PolicyHeuristic", templates="ecomrlve.user.realiser:ACCOUNT_TEMPLATES",
        axes=("B_branch", "p_missing", "H_orders"),
        journey=JourneyRole(draw_order=5, tie_rank=4, keywords={
            "policy": 3, "warranty": 3, "covered": 2, "fee": 2, "days": 2, "yes": 2, "cost": 1, "restocking": 3,
            "dollars": 2, "member": 2, "window": 2, "free": 1, "question": 2, "refund": 1, "today": 1},
            patterns=((r"yes or no|in dollars|in days|it's about|it is about", 4),
                      (r"how (?:much|many)|what is|can i still|is it still", 3))),
        catalog_uses=('final_sale',),
    ),
    EnvSpec(
        id="BUNDLE", entry_point="ecomrlve.envs.bundle:BundleFamily",
        heuristic="ecomrlve.agents.discovery:BundleHeuristic", templates="ecomrlve.user.realiser:RECOMMEND_TEMPLATES",
        axes=("bundle_categories", "bundle_budget", "m", "slack", "p_missing", "feedback_detail"),
        journey=JourneyRole(draw_order=6, tie_rank=2, keywords={
            "together": 2, "budget": 2, "spend": 2, "everything": 2, "setting": 2, "training": 2, "building": 2,
            "moving": 2, "commute": 2, "project": 2, "getting": 1, "ready": 1, "trip": 1},
            patterns=((r"(?:,|\band) (?:an?|some) \w", 2),)),
        catalog_needs=('bundles',),
        catalog_uses=('full_bundles', 'stock_outs', 'distractors'),
    ),
    EnvSpec(
        id="JOURNEY", entry_point="ecomrlve.envs.journey:JourneyFamily",
        heuristic="ecomrlve.agents.journey:JourneyHeuristic", templates="ecomrlve.user.realiser:JOURNEY_TEMPLATES",
        axes=("journey_intents", "p_switch"),
    ),
)
for _spec in BUILTIN_SPECS:
    register(_spec)

_instances: dict[tuple[str, str], TaskFamily] = {}  # (env id, entry point) -> the shared instance


def get_environment(env_id: str) -> TaskFamily:
    """The (stateless, shared) task family of ``env_id``, created from its spec on first use."""
    key = (env_id, env_spec(env_id).entry_point)
    family = _instances.get(key)
    if family is None:
        family_cls = load(key[1])
        if not (isinstance(family_cls, type) and issubclass(family_cls, TaskFamily)) or family_cls.env_id != env_id:
            raise TypeError(f"{key[1]} is not a TaskFamily subclass with env_id = {env_id!r}")
        family = _instances[key] = family_cls()
    return family


def environment_axes(env_id: str) -> tuple[str, ...]:
    """The difficulty axes ``env_id`` is subject to: the runtime's, those of the tools it offers
    (``catalog_search``'s ``top_k`` and ``eps_rank``), those its spec lists, then those of the
    environments it plays (a JOURNEY's request kinds), in that order."""
    family = get_environment(env_id)
    tool_axes = [axis for name in family.tool_names for axis in TOOLS[name].axes]
    played = [axis for part in family.played_envs() for axis in environment_axes(part.env_id)]
    return tuple(dict.fromkeys([*RUNTIME_AXES, *tool_axes, *env_spec(env_id).axes, *played]))


def env_collections() -> dict[str, tuple[str, ...]]:
    """The nested collections C1 ⊂ C2 ⊂ C4 ⊂ C8 (C8: every registered environment), in registration order."""
    specs = env_specs()
    return {name: tuple(s.id for s in specs if CORE_COLLECTIONS.index(s.collection) <= rank)
            for rank, name in enumerate(CORE_COLLECTIONS)}


def resolve_env_ids(names: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Expand a collection name or a list of env ids/collections into env ids (validated)."""
    collections = env_collections()
    registered = collections["C8"]
    items = [names] if isinstance(names, str) else list(names)
    out: list[str] = []
    for item in items:
        for name in (p.strip() for p in item.split(",")):
            if name in collections:
                out.extend(collections[name])
            elif name in registered:
                out.append(name)
            else:
                raise unknown("environment or collection", name, sorted(registered) + sorted(collections))
    return tuple(dict.fromkeys(out))


__all__ = ["BUILTIN_SPECS", "Problem", "TaskFamily", "TaskOutcome", "env_collections", "environment_axes",
           "get_environment", "resolve_env_ids"]
