"""SUB — substitution.

Description
    The shopper names a product they wanted, by its title the way people do ("the Brightix Nova
    21 65W Charger"); it is out of stock. They want a similar, compatible substitute under m(d)
    requirements, and the agent answers a ranked list of up to k_rec(d) product ids.
Hidden goal
    :class:`SUBGoal`: the original product (out of stock from the start), its leaf category and
    m(d) requirements true of the original and of at least one in-stock substitute (a price cap of
    the original's price plus slack first, then compatibility attributes such as connector, size,
    material and form, then the rest), hidden preferences, withheld requirements, a planned context switch and
    stock-out (with its decoys), and an ideal answer.
Tools
    catalog_search, catalog_get_product, user_get_visit_history, ask_user,
    answer(product_ids).
Scoring
    Valid substitutes: same leaf category and its main product type, in stock, not the original,
    every (final) requirement met — exact over the whole catalog. Relevance mixes similarity to the original (0.6 attribute
    overlap + 0.4 title-word overlap) and the shopper's utility, half and half; ``r_task`` as in
    PD (:func:`~ecomrlve.envs.recommend.ranking_reward`), 1 exactly for an ideal ranking.
    Recommending the original scores −1 (it is out of stock and never valid).
    is_correct iff the first id is valid and every id was surfaced to the agent.
Difficulty axes used
    m, k_rec, slack, p_missing, p_switch, p_oos, feedback_detail (how much a verdict on a named
    product says), p_noise, top_k, eps_rank, B_tool, T_max.
Episode end
    ``answer``, turn budget, or the shopper giving up (patience).
Version history
    In CHANGELOG.md, section SUB; the version is ``SubstitutionFamily.version``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ecomrlve.catalog.filters import ProductFilter
from ecomrlve.catalog.product_type import is_main_type, spoken_name
from ecomrlve.catalog.rowindex import title_word_index
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.views import CategoryView, category_view
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.base import GenerationError, Problem
from ecomrlve.envs.recommend import acts as A
from ecomrlve.envs.recommend.requirements import (
    attribute_overlap,
    category_requirement,
    closest_partner,
    derive_requirement,
    derive_requirements,
    relevance,
    spoken_preferences,
    title_overlap,
)
from ecomrlve.envs.recommend.task import RankedRecommendation, RecommendGoal
from ecomrlve.user.realiser import Realiser
from ecomrlve.world.state import World

ENV_ID = "SUB"
COMPATIBILITY = ("connector_type", "size", "material", "item_form")  # must match the original first
SIMILARITY_WEIGHT = 0.5  # relevance = 0.5·similarity + 0.5·utility
_ORIGINAL_TRIES = 300


class SUBGoal(RecommendGoal):
    original_id: str
    original_row: int
    original_title: str  # how the shopper names it


class SubstitutionFamily(RankedRecommendation):
    env_id = ENV_ID
    version = 13
    instructions = ("the product the customer wanted is out of stock: find similar, compatible substitutes that meet "
                    "their requirements, then call answer(product_ids=[...]) with your ranked recommendations, best first.")

    def relevance(self, view: CategoryView, goal: RecommendGoal, local: np.ndarray) -> np.ndarray:
        assert isinstance(goal, SUBGoal)  # SUB's goals are SUBGoals (new_goal)
        assert view.contains(goal.original_row)  # the original is of the category's main type
        # by row, not by id: an id lookup in the view would sort the view's ids once per category
        catalog, original = view.catalog, view.local(goal.original_row)
        similarity = 0.6 * attribute_overlap(catalog, original, local) + 0.4 * title_overlap(catalog, original, local)
        return relevance(catalog, local, goal.preferences, similarity, SIMILARITY_WEIGHT)

    def relevance_inputs(self, goal: RecommendGoal) -> tuple[Any, ...]:
        assert isinstance(goal, SUBGoal)
        return (goal.preferences, goal.original_row)

    def said_preferences(self, goal: RecommendGoal) -> tuple[tuple[str, str, str], ...]:
        """The utility's preferences and likeness to the original (half of the relevance)."""
        assert isinstance(goal, SUBGoal)
        return spoken_preferences(goal.preferences, goal.original_title, SIMILARITY_WEIGHT)

    def prepare(self, catalog: Catalog) -> None:
        """The main-type views and their title word indexes (:func:`title_overlap` reads them)."""
        super().prepare(catalog)
        for category, rows in enumerate(catalog.category_rows):
            if len(rows):
                title_word_index(category_view(catalog, category, main_type_only=True).catalog)

    def excluded(self, goal: RecommendGoal) -> tuple[int, ...]:
        assert isinstance(goal, SUBGoal)
        return (goal.original_row,)

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        catalog = world.catalog
        want_stock_out = rng.random() < difficulty.p_oos
        original, substitute = self._sample_original(world, rng, difficulty.slack)
        world.sell_out(original)  # the reason for the visit
        category = int(catalog.category[original])
        anchors = [original, substitute]
        requirements = [category_requirement(catalog, category)]
        requirements += derive_requirements(catalog, anchors, difficulty.m, difficulty.slack, rng, preferred=COMPATIBILITY)
        requirements[1] = derive_requirement(catalog, [original], "price_max", difficulty.slack)  # the original's price + slack
        goal = self.new_goal(SUBGoal, catalog, category, requirements, catalog.price(original), difficulty, rng,
                             original_id=catalog.product_id(original), original_row=original,
                             original_title=spoken_name(catalog, original).text)
        goal = self.plan(world, difficulty, rng, goal, [substitute], want_stock_out)
        user = self.user_for(world, goal, rng, realiser)
        user.feedback_detail = bool(difficulty.feedback_detail)
        opening = user.say(A.RequestSubstitute(goal.original_title, goal.noun, self.stated(goal)))
        return Problem(goal=goal, state=user.state, user=user, opening=opening, difficulty=difficulty)

    @staticmethod
    def _sample_original(world: World, rng: random.Random, slack: float) -> tuple[int, int]:
        """A random allowed product with an in-stock substitute priced within its price plus slack."""
        catalog = world.catalog
        for _ in range(_ORIGINAL_TRIES):
            row = rng.randrange(len(catalog))
            if (world.is_denied(row) or row in world.stock_overrides or row in world.doomed
                    or not world.can_sell_out(row) or not is_main_type(catalog, row)):
                continue
            cap = derive_requirement(catalog, [row], "price_max", slack).value
            assert not isinstance(cap, str)  # a price bound is a number
            substitute = closest_partner(world, row, rng, ProductFilter(price_max=cap, in_stock=True))
            if substitute is not None:
                return row, substitute
        raise GenerationError(f"no product with an in-stock substitute found in catalog {catalog.name}")
