"""PD — product discovery.

Description
    The shopper wants a kind of product ("a charger for $45 or less, from Brightix, with a USB-C
    connector") and asks for recommendations; the agent searches the catalog and answers a
    ranked list of up to k_rec(d) product ids.
Hidden goal
    :class:`PDGoal`: a target product and m(d) requirements derived from it (the leaf category
    always; then a price bound with the slack curve, stated as a budget, and, drawn at random, a
    price floor, brand, minimum rating, shipping days, attribute equalities and numeric bounds the
    target really has), hidden preference weights aligned with them, which requirements are
    withheld from the opening, a planned context switch and a planned stock-out (with its decoys),
    and an ideal answer.
Tools
    catalog_search, catalog_get_product, user_get_visit_history, ask_user,
    answer(product_ids).
Scoring
    The valid set V = in-stock products of the category's main product type meeting every (final)
    requirement, exact over the whole catalog (an accessory of the category is never valid). ``r_task = clip(−1 + 1.5·nDCG@k + 0.5·satisfaction − oos
    share, −1, 1)`` with rel = utility·1[valid] against the true ideal ranking of V
    (:func:`~ecomrlve.envs.recommend.ranking_reward`): exactly 1 for an ideal ranking of valid
    items. is_correct iff the first id is in V and every id was surfaced to the agent.
Difficulty axes used
    m, k_rec, slack, p_missing, p_switch, p_oos, feedback_detail (how much a verdict on a named
    product says), p_noise, top_k, eps_rank, B_tool, T_max.
Episode end
    ``answer``, turn budget, or the shopper giving up (patience).
Version history
    In CHANGELOG.md, section PD; the version is ``ProductDiscoveryFamily.version``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.product_type import is_main_type, main_type
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.views import CategoryView, category_view
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.base import GenerationError, Problem
from ecomrlve.envs.recommend import acts as A
from ecomrlve.envs.recommend.requirements import (
    available_fields,
    category_requirement,
    closest_partner,
    derive_requirements,
    relevance,
    sorted_prices,
    stated_budget,
)
from ecomrlve.envs.recommend.task import RankedRecommendation, RecommendGoal
from ecomrlve.user.realiser import Realiser
from ecomrlve.world.state import World

ENV_ID = "PD"
_TARGET_TRIES = 300  # random draws for an in-stock target whose category supports m(d) requirements
_PARTNER_TRIES = 20  # targets tried for one with a partner product sharing m(d) requirements


def ambiguous_categories(catalog: Catalog) -> frozenset[int]:
    """Categories whose main product type is also another category's main type (a real taxonomy files
    keyboards under "Keyboards" and under a catch-all "Computers" leaf), built once per catalog. A shopper asks
    for the product type ("a keyboard"), while the valid set is one leaf's, so a request in one of them would
    be judged on a leaf the agent cannot tell from the other: PD draws no target there while it has others."""
    return AMBIGUOUS_CATEGORIES.of(catalog)


def _ambiguous_categories(catalog: Catalog) -> frozenset[int]:
    by_type: dict[str, list[int]] = {}
    for category, rows in enumerate(catalog.category_rows):
        if len(rows):
            by_type.setdefault(main_type(catalog, category), []).append(category)
    shared = frozenset(c for categories in by_type.values() if len(categories) > 1 for c in categories)
    return shared if len(shared) < sum(map(len, by_type.values())) else frozenset()


AMBIGUOUS_CATEGORIES = derived("pd_ambiguous_categories", _ambiguous_categories)


class PDGoal(RecommendGoal):
    target_id: str
    target_row: int


class ProductDiscoveryFamily(RankedRecommendation):
    env_id = ENV_ID
    version = 14
    instructions = ("recommend products that meet all of the customer's requirements: search the catalog, ask about "
                    "anything unclear, then call answer(product_ids=[...]) with your ranked recommendations, best first.")

    def relevance(self, view: CategoryView, goal: RecommendGoal, local: np.ndarray) -> np.ndarray:
        return relevance(view.catalog, local, goal.preferences)

    def relevance_inputs(self, goal: RecommendGoal) -> tuple[Any, ...]:
        return (goal.preferences,)

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        catalog = world.catalog
        wanted = difficulty.m - 1  # requirements besides the category
        want_stock_out = rng.random() < difficulty.p_oos
        target, anchors = self._sample_target(world, rng, wanted), []
        if want_stock_out:
            for _ in range(_PARTNER_TRIES):
                partner = closest_partner(world, target, rng)
                if partner is not None and len(available_fields(catalog, [target, partner])) >= wanted:
                    anchors = [target, partner]
                    break
                target = self._sample_target(world, rng, wanted)
        want_stock_out = bool(anchors)
        anchors = anchors or [target]
        category = int(catalog.category[target])
        requirements = [category_requirement(catalog, category)]
        requirements += derive_requirements(catalog, anchors, wanted, difficulty.slack, rng)
        prices = sorted_prices(category_view(catalog, category, main_type_only=True))
        requirements = [stated_budget(r, prices, rng) for r in requirements]  # no cap pointing at an anchor's price
        goal = self.new_goal(PDGoal, catalog, category, requirements, catalog.price(target), difficulty, rng,
                             target_id=catalog.product_id(target), target_row=target)
        goal = self.plan(world, difficulty, rng, goal, anchors, want_stock_out)
        user = self.user_for(world, goal, rng, realiser)
        user.feedback_detail = bool(difficulty.feedback_detail)
        opening = user.say(A.RequestProducts(goal.noun, self.stated(goal)))
        return Problem(goal=goal, state=user.state, user=user, opening=opening, difficulty=difficulty)

    @staticmethod
    def _sample_target(world: World, rng: random.Random, wanted: int) -> int:
        """A random in-stock, allowed product whose own facts support ``wanted`` requirements
        (the best seen if none does, e.g. on a real catalog with few attributes), outside the
        :func:`ambiguous_categories` unless no draw finds one elsewhere."""
        catalog = world.catalog
        for avoid in (ambiguous_categories(catalog), frozenset()):
            best, best_count = None, -1
            for _ in range(_TARGET_TRIES):
                row = rng.randrange(len(catalog))
                if (not world.available(row) or world.is_denied(row) or not is_main_type(catalog, row)
                        or int(catalog.category[row]) in avoid):
                    continue
                count = len(available_fields(catalog, [row]))
                if count >= wanted:
                    return row
                if count > best_count:
                    best, best_count = row, count
            if best is not None:
                return best
        raise GenerationError(f"no in-stock, allowed product found in catalog {catalog.name}")
