"""BUNDLE end to end: projects resolved against the catalog's taxonomy, budgets, scoring, oracle, exploits."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from exploits import oracle_failure, play_oracle
from hypothesis import given, settings
from hypothesis import strategies as st
from recommend_support import (
    COMMON_EXPLOITS,
    IgnoreBudgetPolicy,
    assert_exploit_low,
    assert_no_unfilled_slots,
    exploit_runs,
)

from ecomrlve.catalog.loaders import load_products
from ecomrlve.catalog.schema import Category
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.envs.recommend.bundle import PROJECTS, bundle_reward, resolve_projects, slot_weights
from ecomrlve.envs.recommend.heuristic import meets_stated
from ecomrlve.episode import EcomEnv

ENV = "BUNDLE"
BUDGET_D = [2, 5, 8, 11, 15]  # the budget exploit only means something once there is a budget


@pytest.fixture(scope="module")
def bundle_env(catalog, search) -> EcomEnv:
    return EcomEnv(ENV, catalog=catalog, search=search)


@pytest.mark.parametrize("name", list(COMMON_EXPLOITS))
def test_exploits_score_low(bundle_env, name) -> None:
    runs = exploit_runs(bundle_env, ENV, name, COMMON_EXPLOITS[name])
    assert_exploit_low(runs, f"{ENV} {name}")


def test_ignoring_the_budget_scores_low(bundle_env) -> None:
    """One top search result per category, whatever the price, averages r_total <= 0.1 where a budget exists."""
    runs = exploit_runs(bundle_env, ENV, "ignore_budget", lambda e, s: IgnoreBudgetPolicy(e, s), BUDGET_D,
                        range(25))
    totals = [t.reward["r_total"] for _, _, t in runs]
    assert sum(totals) / len(totals) <= 0.1, sum(totals) / len(totals)


@st.composite
def bundles(draw) -> tuple[list[int], list[bool], int, float, float | None]:
    """Slot weights (from per-item requirement counts), which slots are covered, extra ids, total, budget."""
    weights = slot_weights(draw(st.lists(st.integers(0, 3), min_size=1, max_size=12)))
    covered = draw(st.lists(st.booleans(), min_size=len(weights), max_size=len(weights)))
    budget = draw(st.one_of(st.none(), st.floats(1, 2000)))
    return weights, covered, draw(st.integers(0, 5)), draw(st.floats(0, 2000)), budget


@settings(max_examples=300, deadline=None)
@given(bundles())
def test_bundle_reward_is_one_exactly_when_complete_and_within_budget(bundle) -> None:
    weights, covered, extra, total, budget = bundle
    r_task, details = bundle_reward(weights, covered, extra, total, budget)
    assert -1.0 <= r_task <= 1.0
    within = budget is None or total <= budget
    assert (r_task == 1.0) == (all(covered) and extra == 0 and within), (bundle, details)
    if not any(c and w for c, w in zip(covered, weights)):
        assert r_task == -1.0


@settings(max_examples=300, deadline=None)
@given(bundles(), st.data())
def test_bundle_reward_grows_only_with_real_progress(bundle, data) -> None:
    """Covering one more slot never lowers the score and raises it when the slot carries a requirement (and
    the overrun leaves room); listing one more id that covers nothing never raises it."""
    weights, covered, extra, total, budget = bundle
    r_task, _ = bundle_reward(weights, covered, extra, total, budget)
    assert bundle_reward(weights, covered, extra + 1, total, budget)[0] <= r_task
    open_slots = [i for i, c in enumerate(covered) if not c]
    if open_slots:
        slot = data.draw(st.sampled_from(open_slots))
        more = [c or i == slot for i, c in enumerate(covered)]
        r_more, _ = bundle_reward(weights, more, extra, total, budget)
        assert r_more >= r_task
        if weights[slot] and -1.0 < r_task < 1.0 and r_more < 1.0:
            assert r_more > r_task


@given(st.lists(st.integers(0, 3), min_size=2, max_size=12).filter(any), st.integers(0, 3))
def test_the_category_alone_earns_nothing(counts, extra) -> None:
    """Covering every slot that has no per-item requirement, and none that has, scores -1 (was 2·F1 - 1
    over categories: +0.42 with 5 of 7 slots free)."""
    weights = slot_weights(counts)
    r_task, _ = bundle_reward(weights, [c == 0 for c in counts], extra, 10.0, 100.0)
    assert r_task == -1.0


def test_projects_resolve_against_the_catalog_taxonomy(catalog) -> None:
    """At least 8 projects; every resolved category is a real category of the catalog; enough of them
    offer up to 12 categories; projects with no matching categories (painting) are never offered here."""
    assert len(PROJECTS) >= 8
    resolved = resolve_projects(catalog)
    for project, categories in zip(PROJECTS, resolved):
        wanted = {name.lower() for names in project.needs for name in names}
        assert all(catalog.categories[c].name.lower() in wanted or catalog.categories[c].noun.lower() in wanted
                   for c in categories), project.phrase
        assert len(set(categories)) == len(categories)
    assert max(len(c) for c in resolved) >= 12
    assert sum(len(c) >= 8 for c in resolved) >= 4


def test_generated_bundles_are_satisfiable(bundle_env, catalog) -> None:
    """Categories exist with in-stock products; references meet their requirements and the budget."""
    for d in (0, 2, 7, 12, 15):
        for seed in range(25):
            bundle_env.reset(env_id=ENV, difficulty=d, seed=seed)
            goal = bundle_env.audit().problem.goal
            assert len(goal.categories) == min(12, 3 + d // 2)
            assert len(set(goal.categories)) == len(goal.categories)
            references = [catalog.index_of(i) for i in goal.reference_ids]
            assert [int(catalog.category[r]) for r in references] == goal.categories
            assert all(bundle_env.audit().world.stock(r) > 0 for r in references)
            total = sum(catalog.price(r) for r in references)
            assert (goal.budget is None) == (d < 2)
            assert goal.budget is None or total <= goal.budget
            assert len(goal.item_requirements) == max(0, 2 + d // 2 - 3)


def test_other_taxonomy_offers_only_projects_it_can_serve(catalog) -> None:
    """A catalog whose categories are named differently (e.g. a real one) gets only projects it can serve."""
    renamed = tuple(
        Category(path=("Gear", f"Thing {i}"), noun=f"Thing {i}", variant_attribute=c.variant_attribute)
        if c.name not in ("Tents", "Sleeping Bags", "Headlamps", "Backpacks", "Water Bottles", "Rain Jackets")
        else c for i, c in enumerate(catalog.categories))
    other = dataclasses.replace(catalog, categories=renamed, name="renamed")
    env = EcomEnv(ENV, catalog=other, search=SearchEngine(other))
    for d in (0, 3, 6):
        for seed in range(10):
            env.reset(env_id=ENV, difficulty=d, seed=seed)
            goal = env.audit().problem.goal
            assert {other.categories[c].name for c in goal.categories} <= {
                "Tents", "Sleeping Bags", "Headlamps", "Backpacks", "Water Bottles", "Rain Jackets"}
            assert len(goal.categories) == min(3 + d // 2, 6)


def test_no_unfilled_slots(bundle_env) -> None:
    assert assert_no_unfilled_slots(bundle_env, ENV, openings=1500) >= 1500


def test_real_catalog_sample() -> None:
    """On a small Amazon-style real catalog (its own categories) every env generates and the oracle
    gets full marks; BUNDLE offers only projects built from that catalog's categories."""
    catalog, _ = load_products(Path(__file__).parent / "data" / "amazon_meta_sample.jsonl")
    env = EcomEnv(["PD", "SUB", "BUNDLE"], catalog=catalog, search=SearchEngine(catalog))
    for env_id in ("PD", "SUB", "BUNDLE"):
        for d in (0, 5, 10, 15):
            for seed in range(4):
                failure = oracle_failure(play_oracle(env, difficulty=d, seed=seed, env_id=env_id))
                assert failure is None, (env_id, d, seed, failure)


CARD = {"brand": "Zenware", "rating": 4.4, "ship_days": 3, "attributes": {"color": "White", "weight": 2.0},
        "variants": [{"variant_id": "V1", "connector_type": "USB-C"}, {"variant_id": "V2", "connector_type": "HDMI"}]}


@pytest.mark.parametrize("text,meets", [
    ("", True), ("by Zenware", True), ("from Brightfield", False), ("in White color", True), ("in Red", False),
    ("with 4+ stars", True), ("rated 4.5 stars or higher", False), ("delivered within 3 days", True),
    ("shipping in 2 days or less", False), ("weighing 2.5 lb or less", True), ("no heavier than 1.5 lb", False),
    ("with a USB-C connector", True), ("with a Lightning connector", False),
    ("by Zenware, in White and with a rating of at least 4.5", False),
])
def test_the_heuristic_reads_what_the_opening_states_for_an_item(text: str, meets: bool) -> None:
    """The BUNDLE baseline keeps, per item, the cheapest product whose card shows what was stated for it (the
    category alone no longer earns anything, so the baseline that answered the cheapest of each category went
    from +0.43 to -0.05 mean r_total at d 4-7)."""
    assert meets_stated(CARD, text) is meets
