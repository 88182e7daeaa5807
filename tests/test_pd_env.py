"""PD end to end: exact valid sets, the ranking reward, the shopper, the oracle, exploits, the specified PD targets."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from recommend_support import (
    COMMON_EXPLOITS,
    assert_exploit_low,
    assert_no_unfilled_slots,
    exploit_runs,
)

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog.filters import ProductFilter, filter_mask
from ecomrlve.catalog.schema import NO_VALUE
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.catalog.views import category_view
from ecomrlve.envs import get_environment
from ecomrlve.envs.recommend.requirements import (
    CATEGORICAL_FIELDS,
    ListedItem,
    Requirement,
    derive_requirement,
    ranking_reward,
    sorted_prices,
    stated_budget,
    valid_local,
    valid_rows,
)
from ecomrlve.envs.recommend.task import (
    _BOUND_FIELDS,
    RankedRecommendation,
    RecommendAnswer,
    RequirementSwitch,
    plan_switch,
    switched,
)
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import expand_result

ENV = "PD"


@pytest.fixture(scope="module")
def pd_env(catalog, search) -> EcomEnv:
    return EcomEnv(ENV, catalog=catalog, search=search)


@pytest.fixture(scope="module")
def quiet_pd(catalog, search) -> EcomEnv:
    return EcomEnv(ENV, catalog=catalog, search=search, overrides={"p_noise": 0.0})


def say(text: str) -> AgentAction:
    return AgentAction(message=text)


def call(name: str, **arguments) -> AgentAction:
    return AgentAction(tool_calls=(ToolCall(id="t0", name=name, arguments=arguments),))


def answer(ids: list[str]) -> AgentAction:
    return call("answer", product_ids=ids)


def find(env: EcomEnv, d: int, predicate, limit: int = 400):
    for seed in range(limit):
        env.reset(env_id=ENV, difficulty=d, seed=seed)
        if predicate(env.audit().problem.goal):
            return env.audit().problem.goal
    raise AssertionError(f"no seed < {limit} at d={d} has the wanted goal")


# -- the ranking reward (pure) -----------------------------------------------------------------------

_REL = st.integers(1, 20).map(lambda i: round(0.05 * i, 6))


@st.composite
def ranking_cases(draw):
    valid = draw(st.lists(_REL, min_size=1, max_size=14))
    k = draw(st.integers(3, 10))
    kinds = draw(st.lists(st.sampled_from(["valid", "valid", "valid", "repeat", "unknown", "miss", "sold_out"]),
                          max_size=12))
    order = draw(st.permutations(range(len(valid))))
    listed, used = [], []
    for position, kind in enumerate(kinds):
        fresh = [i for i in order if i not in used]
        if kind == "valid" and fresh:
            i = fresh[0]
            used.append(i)
            within = position < k
            listed.append(ListedItem(valid[i] if within else 0.0, 1.0 if within else 0.0, False))
        elif kind == "repeat" and used:
            listed.append(ListedItem(0.0, 0.0, False))
        elif kind == "miss":
            listed.append(ListedItem(0.0, draw(st.floats(0.0, 0.9)), draw(st.booleans())))
        elif kind == "sold_out":
            listed.append(ListedItem(0.0, 1.0, True))
        else:
            listed.append(ListedItem(0.0, 0.0, False))
    return valid, k, listed


@settings(max_examples=400, deadline=None)
@given(ranking_cases())
def test_ranking_reward_is_one_exactly_for_an_ideal_ranking(case) -> None:
    """r_task ∈ [−1, 1]; it is 1 iff every item is a valid first mention within k, the list has
    min(|V|, k) items, and their relevances are the ideal (descending) ones."""
    valid, k, listed = case
    ideal = sorted(valid, reverse=True)
    r_task, details = ranking_reward(listed, ideal, k)
    assert -1.0 <= r_task <= 1.0
    n = min(len(valid), k)
    is_ideal = (len(listed) == n and all(item.satisfaction == 1.0 and not item.out_of_stock and item.relevance > 0
                                         for item in listed)
                and [item.relevance for item in listed] == ideal[:n])
    assert (r_task == 1.0) == is_ideal, (listed, ideal, k, r_task, details)


@settings(max_examples=200, deadline=None)
@given(st.lists(_REL, min_size=1, max_size=14), st.integers(3, 10), st.integers(0, 12))
def test_unknown_ids_score_minus_one(valid, k, count) -> None:
    """Lists of unknown ids (or nothing) get r_task = −1."""
    r_task, _ = ranking_reward([ListedItem(0.0, 0.0, False)] * count, sorted(valid, reverse=True), k)
    assert r_task == -1.0


# -- exact valid set -------------------------------------------------------------------------------

@pytest.mark.parametrize("d", [0, 5, 10, 15])
def test_valid_set_is_exact_over_the_whole_catalog(pd_env, catalog, d) -> None:
    """The per-category vectorised valid set equals the whole-catalog filter, and holds the target."""
    for seed in range(15):
        pd_env.reset(env_id=ENV, difficulty=d, seed=seed)
        goal = pd_env.audit().problem.goal
        requirements = goal.requirements
        world = pd_env.audit().world
        fast = valid_rows(catalog, goal.category, requirements, world.stock_overrides)
        flt = ProductFilter(**{r.field: r.value for r in requirements}, in_stock=True)
        whole = np.flatnonzero(filter_mask(catalog, flt, world.stock_overrides) & (catalog.category == goal.category))
        assert np.array_equal(fast, whole)
        assert goal.target_row in set(fast.tolist())
        assert len(requirements) == 2 + d // 2


@pytest.mark.parametrize("env_id", ["PD", "SUB"])
def test_scored_valid_reuses_only_what_the_inputs_determine(catalog, search, env_id) -> None:
    """The scored valid set remembered from the plan is what a fresh scoring gives for the same
    inputs, and another stock, requirement list or shopper is scored anew."""
    env = EcomEnv(env_id, catalog=catalog, search=search)
    family = get_environment(env_id)
    assert isinstance(family, RankedRecommendation)

    def fresh(goal, requirements, overrides):
        view = category_view(catalog, goal.category, main_type_only=True)
        local = valid_local(view, requirements, overrides, family.excluded(goal))
        return view.rows[local], family.relevance(view, goal, local)

    def same(got, expected) -> bool:
        return all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got, expected, strict=True))

    for seed in range(40):
        env.reset(env_id=env_id, difficulty=seed % 16, seed=seed)
        goal, world = env.audit().problem.goal, env.audit().world
        final = switched(goal.requirements, goal.switch)
        planned = family.scored_valid(world, goal, final, world.planning_overrides())
        assert same(planned, fresh(goal, final, world.planning_overrides()))
        valid = planned[0]
        if len(valid):  # the best valid product sells out: it leaves the valid set
            sold = world.planning_overrides() | {int(valid[0]): 0}
            assert same(family.scored_valid(world, goal, final, sold), fresh(goal, final, sold))
        if len(final) > 1:
            assert same(family.scored_valid(world, goal, final[:-1], world.planning_overrides()),
                        fresh(goal, final[:-1], world.planning_overrides()))
        other = goal.model_copy(update={"preferences": goal.preferences.model_copy(update={"price": 7.0})})
        assert same(family.scored_valid(world, other, final, world.planning_overrides()),
                    fresh(other, final, world.planning_overrides()))
        if env_id == "SUB":  # another original, all else the same: other similarities, another row excluded
            family.scored_valid(world, goal, final, world.planning_overrides())
            view = category_view(catalog, goal.category, main_type_only=True)
            moved = goal.model_copy(update={"original_row": int(next(r for r in view.rows if r != goal.original_row))})
            assert same(family.scored_valid(world, moved, final, world.planning_overrides()),
                        fresh(moved, final, world.planning_overrides()))


def test_switches_to_a_new_value_are_those_of_the_rows_valid_without_it(pd_env, catalog) -> None:
    """``plan_switch`` offers the same switches (and so draws the same one) as computing, for each
    equality, the valid set of the other requirements anew (a tightened price bound stated as a budget)."""

    def expected(world, category, anchors, requirements, rng):
        options = []
        prices = sorted_prices(category_view(catalog, category, main_type_only=True))
        for i, requirement in enumerate(requirements):
            if requirement.field in _BOUND_FIELDS:
                tight = stated_budget(derive_requirement(catalog, anchors, requirement.field, 0.0), prices, rng,
                                      limit=requirement)
                if tight.value != requirement.value:
                    options.append(RequirementSwitch(index=i, requirement=tight))
            elif requirement.field in CATEGORICAL_FIELDS:
                rows = valid_rows(catalog, category, requirements[:i] + requirements[i + 1:], world.planning_overrides())
                column = catalog.brand if requirement.field == "brand" else catalog.categorical[requirement.field]
                codes = np.unique(column[rows])
                codes = codes[(codes != NO_VALUE) & (codes != column[anchors[0]])].tolist()
                if codes:
                    code = codes[rng.randrange(len(codes))]
                    value = catalog.brands[code] if requirement.field == "brand" else CATEGORICAL_ATTRIBUTES[requirement.field][code]
                    options.append(RequirementSwitch(index=i, requirement=Requirement(field=requirement.field, value=value)))
        return rng.choice(options) if options else None

    categorical_switches = 0
    for seed in range(60):
        pd_env.reset(env_id=ENV, difficulty=seed % 16, seed=seed)
        goal, world = pd_env.audit().problem.goal, pd_env.audit().world
        got = plan_switch(world, goal.category, [goal.target_row], goal.requirements, random.Random(seed), True)
        assert got == expected(world, goal.category, [goal.target_row], goal.requirements, random.Random(seed))
        categorical_switches += got is not None and got.requirement.field in CATEGORICAL_FIELDS
    assert categorical_switches


@pytest.mark.parametrize("flt", [
    ProductFilter(category="Chargers", price_max=40.0, in_stock=True),
    ProductFilter(brand="Brightix", rating_min=4.0, ship_days_max=3),
    ProductFilter(color="Black", in_stock=False),
    ProductFilter(wattage_min=30.0, weight_max=1.0, in_stock=True),
])
def test_filter_mask_on_rows_matches_the_whole_mask(catalog, flt) -> None:
    """``filter_mask(rows=...)`` is the whole-catalog mask restricted to those rows (with stock changes)."""
    rng = np.random.default_rng(0)
    rows = rng.choice(len(catalog), size=500, replace=False)
    overrides = {int(rows[0]): 0, int(rows[1]): 5, int(rows[2]): 0}
    assert np.array_equal(filter_mask(catalog, flt, overrides, rows=rows), filter_mask(catalog, flt, overrides)[rows])


def test_answer_description_states_k_rec(pd_env) -> None:
    for d in (0, 9, 15):
        observation = pd_env.reset(env_id=ENV, difficulty=d, seed=0)
        answer_tool = next(t for t in observation.tools if t["function"]["name"] == "answer")
        k = min(10, 3 + d // 3)
        assert f"k_rec = {k}" in answer_tool["function"]["description"]


# -- oracle and exploits ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(COMMON_EXPLOITS))
def test_exploits_score_low(pd_env, name) -> None:
    runs = exploit_runs(pd_env, ENV, name, COMMON_EXPLOITS[name])
    assert_exploit_low(runs, f"{ENV} {name}")


def test_non_ideal_answers_score_below_one(quiet_pd) -> None:
    """The ideal ranking scores exactly 1; reordering it, dropping its last item, padding it with a repeat or
    an unknown id all score strictly less (and stay in [-1, 1]), on every one of five episodes."""
    checked = 0
    for seed in range(40):
        quiet_pd.reset(env_id=ENV, difficulty=9, seed=seed)
        problem, world = quiet_pd.audit().problem, quiet_pd.audit().world

        def score(ids: list[str], problem=problem, world=world) -> float:
            return quiet_pd.environment.verify(problem.goal, problem.state, world, _answer_model(ids)).r_task

        # the ideal ranking on this world (the goal's ideal_ids assume the planned switch and stock-out happened)
        ideal = list(quiet_pd.environment.verify(problem.goal, problem.state, world, None).details["ideal_ids"])
        if len(ideal) < 2:
            continue

        assert score(ideal) == 1.0, seed
        for variant in (ideal[::-1], ideal[:-1], ideal + [ideal[0]], ideal + ["PZZZZZZZZ"]):
            assert -1.0 <= score(variant) < 1.0, (seed, variant)
        checked += 1
        if checked == 5:
            return
    pytest.fail(f"only {checked} episodes with two or more ideal items")


def _answer_model(ids: list[str]) -> RecommendAnswer:
    return RecommendAnswer(product_ids=ids)


# -- the shopper ------------------------------------------------------------------------------------

def test_withheld_requirement_revealed_once_as_user_caused(quiet_pd) -> None:
    goal = find(quiet_pd, 8, lambda g: any(g.requirements[i].field == "price_max" for i in g.withheld) and g.switch is None)
    price = next(r for r in goal.requirements if r.field == "price_max")
    observation = quiet_pd.step(say("What is your budget?"))
    assert f"${price.text()}" in observation.messages[-1]["content"]
    assert observation.info["user_caused_turns"] == 1
    observation = quiet_pd.step(say("What is your budget?"))
    assert observation.info["user_caused_turns"] == 1, "asking twice must not be free"
    assert f"${price.text()}" in observation.messages[-1]["content"]


def test_stated_requirement_question_is_not_free(quiet_pd) -> None:
    goal = find(quiet_pd, 4, lambda g: g.switch is None and not any(  # the price requirements all stated
        g.requirements[i].field in ("price_max", "price_min") for i in g.withheld))
    assert goal.requirements[1].field == "price_max"
    observation = quiet_pd.step(call("ask_user", question="What's your budget?"))
    assert observation.info["user_caused_turns"] == 0


def test_stock_out_announced_once_and_penalised(catalog, search) -> None:
    """The planned product sells out once surfaced; naming it gets "sold out" (user-caused once);
    recommending it costs reward."""
    quiet_pd = EcomEnv(ENV, catalog=catalog, search=search, overrides={"p_noise": 0.0, "p_missing": 0.0, "p_switch": 0.0})
    goal = find(quiet_pd, 10, lambda g: g.stock_out_row is not None)
    title = catalog.title(goal.stock_out_row).split(",")[0]
    observation = quiet_pd.step(call("catalog_search", query=title,
                                     filters={"category": catalog.categories[goal.category].name,
                                              "brand": catalog.brand_of(goal.stock_out_row)}))
    assert goal.stock_out_id in observation.messages[0]["content"]
    observation = quiet_pd.step(say(f"I recommend {goal.stock_out_id}."))
    assert "sold out" in observation.messages[-1]["content"] or "out of stock" in observation.messages[-1]["content"]
    assert observation.info["user_caused_turns"] == 1
    observation = quiet_pd.step(say(f"I recommend {goal.stock_out_id}."))
    assert observation.info["user_caused_turns"] == 1
    outcome = quiet_pd.environment.verify(quiet_pd.audit().problem.goal, quiet_pd.audit().problem.state, quiet_pd.audit().world,
                                          _answer_model([goal.stock_out_id] + goal.ideal_ids[:-1]))
    assert outcome.r_task < 1.0 and not outcome.is_correct


def test_context_switch_is_user_caused_and_scored_against_final(quiet_pd) -> None:
    goal = find(quiet_pd, 10, lambda g: g.switch is not None)
    observation = quiet_pd.step(say("Let me look."))
    assert observation.info["user_caused_turns"] == 1
    state = quiet_pd.audit().problem.state
    assert state.switched and state.requirements[goal.switch.index] == goal.switch.requirement
    assert goal.switch.requirement.text() in observation.messages[-1]["content"]


def test_pointless_questions_exhaust_patience(quiet_pd) -> None:
    quiet_pd.reset(env_id=ENV, difficulty=12, seed=3)
    observation = None
    for _ in range(20):
        observation = quiet_pd.step(say("Do you like jazz?"))
        if observation.done:
            break
    assert observation.info["termination"] == "user_gave_up"
    assert observation.info["reward"]["r_task"] == -1.0


def test_no_unfilled_slots(pd_env) -> None:
    assert assert_no_unfilled_slots(pd_env, ENV, openings=1500) >= 1500


# -- the specified PD targets per difficulty (smaller sample; benchmarks/pd_table.py runs 1,000 per cell) ------------------

PD_TABLE = {0: (2, 0.075, 0.0, 0.0), 6: (5, 0.70, 0.12, 0.30), 12: (8, 0.80, 0.24, 0.50)}


@pytest.mark.parametrize("d", list(PD_TABLE), ids=lambda d: f"d{d}")
def test_pd_table(pd_env, d) -> None:
    constraints, withheld, distractors, stock_outs = PD_TABLE[d]
    episodes = 400
    total = eligible = hidden = sold = 0
    for seed in range(episodes):
        pd_env.reset(env_id=ENV, difficulty=d, seed=seed)
        goal = pd_env.audit().problem.goal
        total += len(goal.requirements)
        eligible += len(goal.requirements) - 1
        hidden += len(goal.withheld)
        sold += goal.stock_out_row is not None
    assert total / episodes == constraints
    assert abs(hidden / eligible - 0.8 / (1 + math.exp(-(d - 3) / 1.5))) <= 0.06
    assert abs(hidden / eligible - withheld) <= 0.1
    assert abs(sold / episodes - stock_outs) <= 0.07
    shown = injected = 0
    for seed in range(60):
        pd_env.reset(env_id=ENV, difficulty=d, seed=seed)
        goal = pd_env.audit().problem.goal
        query = goal.noun
        observation = pd_env.step(call("catalog_search", query=query, top_k=20))
        results = [c["product_id"] for c in expand_result(json.loads(observation.messages[0]["content"]))["results"]]
        genuine = {pd_env.catalog.product_id(r) for r in pd_env.search.search(query, None, "relevance", 20).tolist()}
        shown += len(results)
        injected += sum(r not in genuine for r in results)
    assert abs(injected / shown - distractors) <= 0.05


@pytest.mark.parametrize("env_id", ["PD", "SUB", "BUNDLE"])
def test_denied_categories_never_asked_for_and_unsafe_to_recommend(catalog, search, env_id) -> None:
    """Goals never use a denied category; recommending a denied product gives r_total −1."""
    env = EcomEnv(env_id, catalog=catalog, search=search, denied_categories=("Kitchen",))
    kitchen = {i for i, c in enumerate(catalog.categories) if c.path[0] == "Kitchen"}
    for seed in range(60):
        env.reset(env_id=env_id, difficulty=seed % 16, seed=seed)
        goal = env.audit().problem.goal
        assert not (set(getattr(goal, "categories", [getattr(goal, "category", None)])) & kitchen), seed
    env.reset(env_id=env_id, difficulty=3, seed=1)
    observation = env.step(call("catalog_search", query="pan", filters={"category": "Frying Pans", "in_stock": True}))
    product_id = expand_result(json.loads(observation.messages[0]["content"]))["results"][0]["product_id"]
    observation = env.step(answer([product_id]))
    assert observation.done and observation.reward == -1.0
    assert observation.info["reward"]["safety_violation"]
