"""SUB end to end: the opening names the original by title, valid substitutes, oracle, exploits."""

from __future__ import annotations

import numpy as np
import pytest
from recommend_support import (
    COMMON_EXPLOITS,
    OriginalPolicy,
    assert_exploit_low,
    assert_no_unfilled_slots,
    exploit_runs,
)

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog.product_type import spoken_name
from ecomrlve.catalog.views import category_view
from ecomrlve.envs.recommend.requirements import attribute_overlap, relevance, title_overlap, valid_rows
from ecomrlve.envs.recommend.sub import SubstitutionFamily
from ecomrlve.envs.recommend.task import RecommendAnswer, switched
from ecomrlve.episode import EcomEnv

ENV = "SUB"
EXPLOITS = {**COMMON_EXPLOITS, "original_product": lambda env, seed: OriginalPolicy(env, seed)}


@pytest.fixture(scope="module")
def sub_env(catalog, search) -> EcomEnv:
    return EcomEnv(ENV, catalog=catalog, search=search)


@pytest.fixture(scope="module")
def quiet_sub(catalog, search) -> EcomEnv:
    return EcomEnv(ENV, catalog=catalog, search=search, overrides={"p_noise": 0.0})


@pytest.mark.parametrize("name", list(EXPLOITS))
def test_exploits_score_low(sub_env, name) -> None:
    runs = exploit_runs(sub_env, ENV, name, EXPLOITS[name])
    assert_exploit_low(runs, f"{ENV} {name}")


def test_original_product_scores_minus_one(sub_env) -> None:
    """Recommending the sold-out original is never valid: r_task = −1."""
    for _, seed, transcript in exploit_runs(sub_env, ENV, "original_product", EXPLOITS["original_product"]):
        assert transcript.reward["r_task"] == -1.0, seed


def test_opening_names_the_original_by_its_spoken_name(quiet_sub, catalog) -> None:
    """The opening names the original as a shopper would (brand, model words, type; never a template
    slot) and the original is sold out."""
    for d in (0, 4, 8, 12, 15):
        for seed in range(20):
            observation = quiet_sub.reset(env_id=ENV, difficulty=d, seed=seed)
            goal = quiet_sub.audit().problem.goal
            opening = observation.messages[-1]["content"]
            assert goal.original_title in opening
            assert goal.original_title == spoken_name(catalog, goal.original_row).text
            assert goal.original_title.startswith(catalog.brand_of(goal.original_row))
            assert "{" not in opening and "original" not in opening.lower()
            assert quiet_sub.audit().world.stock(goal.original_row) == 0


@pytest.mark.parametrize("d", [0, 7, 15])
def test_valid_substitutes(sub_env, catalog, d) -> None:
    """Valid substitutes are in the original's leaf category, in stock, never the original, and exist."""
    for seed in range(20):
        sub_env.reset(env_id=ENV, difficulty=d, seed=seed)
        goal = sub_env.audit().problem.goal
        world = sub_env.audit().world
        valid = valid_rows(catalog, goal.category, switched(goal.requirements, goal.switch), world.stock_overrides, (goal.original_row,))
        assert len(valid) >= 1 and goal.original_row not in set(valid.tolist())
        assert np.all(catalog.category[valid] == catalog.category[goal.original_row])
        assert all(world.stock(int(r)) > 0 for r in valid)
        price_cap = next(r.value for r in goal.requirements if r.field == "price_max")
        assert price_cap >= catalog.price(goal.original_row)


def test_similar_products_rank_first(quiet_sub, catalog) -> None:
    """Relevance rewards similarity: the ideal first pick shares at least as much with the original as
    the average valid substitute."""
    from ecomrlve.envs.recommend.requirements import attribute_overlap
    better = 0
    for seed in range(30):
        quiet_sub.reset(env_id=ENV, difficulty=2, seed=seed)
        goal = quiet_sub.audit().problem.goal
        world = quiet_sub.audit().world
        valid = valid_rows(catalog, goal.category, switched(goal.requirements, goal.switch), world.stock_overrides, (goal.original_row,))
        overlap = attribute_overlap(catalog, goal.original_row, valid)
        first = catalog.index_of(goal.ideal_ids[0])
        better += overlap[list(valid).index(first)] >= overlap.mean()
    assert better >= 20


def test_ideal_answer_scores_one_and_answer_tool_states_k(quiet_sub) -> None:
    for seed in range(50):  # an episode without a planned switch: the ideal list is for the final requirements
        observation = quiet_sub.reset(env_id=ENV, difficulty=6, seed=seed)
        goal = quiet_sub.audit().problem.goal
        if goal.switch is None:
            break
    description = next(t for t in observation.tools if t["function"]["name"] == "answer")["function"]["description"]
    assert "k_rec = 5" in description
    outcome = quiet_sub.environment.verify(quiet_sub.audit().problem.goal, quiet_sub.audit().problem.state, quiet_sub.audit().world,
                                           RecommendAnswer(product_ids=list(goal.ideal_ids)))
    assert outcome.r_task == 1.0
    observation = quiet_sub.step(AgentAction(tool_calls=(ToolCall(id="a", name="answer", arguments={"product_ids": []}),)))
    assert observation.done and observation.info["reward"]["r_task"] == -1.0


def test_no_unfilled_slots(sub_env) -> None:
    assert assert_no_unfilled_slots(sub_env, ENV, openings=1500) >= 1500


def test_relevance_finds_the_original_by_row_as_by_id(quiet_sub, catalog) -> None:
    """SUB's relevance locates the original in the category view by its row; looking it up by id
    in the view (the former way) gives the same local row and so the same relevances."""
    for seed in range(12):
        quiet_sub.reset(env_id=ENV, difficulty=seed, seed=seed)
        goal = quiet_sub.audit().problem.goal
        view = category_view(catalog, goal.category, main_type_only=True)
        local = np.arange(len(view.rows))
        original = view.catalog.index_of(goal.original_id)
        assert original == view.local(goal.original_row)
        sub = view.catalog
        similarity = 0.6 * attribute_overlap(sub, original, local) + 0.4 * title_overlap(sub, original, local)
        expected = relevance(sub, local, goal.preferences, similarity, 0.5)
        family = quiet_sub.environment
        assert isinstance(family, SubstitutionFamily)
        assert np.array_equal(family.relevance(view, goal, local), expected)


def test_ecomenv_prepares_views_and_title_indexes(catalog, search) -> None:
    """Making a SUB environment builds every category's main-type view and its title word index,
    so that no episode pays for a category's first use; episodes then read the same objects."""
    EcomEnv(ENV, catalog=catalog, search=search)
    for category, rows in enumerate(catalog.category_rows):
        if len(rows):
            assert ("category_views", (category, True)) in catalog.derived  # built by EcomEnv, not by an episode
            view = category_view(catalog, category, main_type_only=True)
            assert ("title_words", None) in view.catalog.derived


def test_a_family_prepares_a_catalog_once(monkeypatch) -> None:
    """Servers and trainers make an ``EcomEnv`` per session or rollout: only the first one of a
    catalog prepares it (JOURNEY, which plays SUB, does not prepare it again either)."""
    from ecomrlve.catalog.synthetic import generate_synthetic_catalog

    calls: list[int] = []
    original = SubstitutionFamily.prepare
    monkeypatch.setattr(SubstitutionFamily, "prepare", lambda self, c: (calls.append(id(c)), original(self, c))[1])
    fresh = generate_synthetic_catalog(600, 5)
    first = EcomEnv(ENV, catalog=fresh)
    EcomEnv(ENV, catalog=fresh, search=first.search)
    EcomEnv("JOURNEY", catalog=fresh, search=first.search)
    assert calls == [id(fresh)]
    other = generate_synthetic_catalog(600, 6)
    EcomEnv(ENV, catalog=other)
    assert calls == [id(fresh), id(other)]
