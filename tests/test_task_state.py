"""Task state out of the simulated user: verifiers read ``(goal, state, world, answer)`` only, the
world executes planned sell-outs, and one surfacing ledger serves ``r_hall`` and ``is_correct``."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt

import pytest

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.envs.account.policy import PolicyState
from ecomrlve.envs.account.returns import ReturnState
from ecomrlve.envs.account.status import StatusState
from ecomrlve.envs.base import TaskState
from ecomrlve.envs.cart.family import CartState
from ecomrlve.envs.journey.family import JourneyState
from ecomrlve.envs.recommend.user import RecommendState
from ecomrlve.episode import EcomEnv
from ecomrlve.world.state import World
from ecomrlve.world.surfacing import SurfacingLedger

STATES = {"CART": CartState, "PD": RecommendState, "SUB": RecommendState, "BUNDLE": RecommendState,
          "RETURN": ReturnState, "STATUS": StatusState, "POLICY": PolicyState, "JOURNEY": JourneyState}


@pytest.fixture(scope="module")
def c8(catalog, search) -> EcomEnv:
    return EcomEnv("C8", catalog=catalog, search=search)


def play_oracle(env: EcomEnv, env_id: str, d: int, seed: int) -> None:
    observation = env.reset(env_id=env_id, difficulty=d, seed=seed)
    agent = env.audit().oracle()
    while not observation.done:
        observation = env.step(agent.act(observation))


def scramble(user: object) -> None:
    """Empty every container and flip every flag the shopper (and its task state) holds; the shared
    catalog and other objects are left alone."""
    for f in dataclasses.fields(user):  # type: ignore[arg-type]
        value = getattr(user, f.name)
        if isinstance(value, (list, set, dict)):
            value.clear()
        elif isinstance(value, bool):
            setattr(user, f.name, not value)
        elif isinstance(value, TaskState):
            scramble(value)


@pytest.mark.parametrize("env_id", list(STATES))
def test_outcome_depends_only_on_goal_state_world_and_answer(c8, env_id) -> None:
    for seed in range(3):
        play_oracle(c8, env_id, 10, seed)
        audit = c8.audit()
        problem = audit.problem
        assert isinstance(problem.state, STATES[env_id])
        assert problem.user.state is problem.state  # the shopper writes the very object verifiers read
        expected = c8.session.reward
        state = copy.deepcopy(problem.state)
        outcome = c8.environment.verify(problem.goal, state, audit.world, audit.answer)
        assert (outcome.r_task, outcome.is_correct) == (expected.r_task, expected.is_correct)
        scramble(problem.user)  # the user (and the state it holds) changes after the fact ...
        again = c8.environment.verify(problem.goal, state, audit.world, audit.answer)
        assert again == outcome  # ... the copy of the state still decides the outcome alone


def test_state_decides_the_outcome(c8) -> None:
    """Changing only the state changes the outcome: the verifier really reads it."""
    checked = set()
    for env_id, d in (("CART", 12), ("PD", 10), ("BUNDLE", 10), ("RETURN", 12), ("JOURNEY", 8)):
        for seed in range(30):
            play_oracle(c8, env_id, d, seed)
            audit = c8.audit()
            problem = audit.problem
            goal, state = problem.goal, copy.deepcopy(problem.state)
            if not c8.session.reward.is_correct:
                continue
            if env_id == "CART" and goal.confirm_first:
                state.confirmed_cart = None
            elif env_id in ("PD", "BUNDLE"):
                state.handled_turns.clear()  # the agent "saw" nothing before answering
            elif env_id == "RETURN" and goal.confirm_first and goal.eligible:
                state.returned_unconfirmed = True
            elif env_id == "JOURNEY":
                state.answers.pop(0)
            else:
                continue
            outcome = c8.environment.verify(goal, state, audit.world, audit.answer)
            assert not outcome.is_correct, (env_id, seed)
            checked.add(env_id)
            break
    assert checked == {"CART", "PD", "BUNDLE", "RETURN", "JOURNEY"}


def find_stock_out(env: EcomEnv, d: int = 10):
    for seed in range(200):
        env.reset(env_id="PD", difficulty=d, seed=seed)
        if env.audit().problem.goal.stock_out_row is not None:
            return env.audit().problem.goal
    pytest.fail("no PD episode with a planned stock-out")


def search_for(catalog, row: int) -> AgentAction:
    return AgentAction(tool_calls=(ToolCall(id="s", name="catalog_search", arguments={
        "query": catalog.title(row).split(",")[0],
        "filters": {"category": catalog.category_of(row).name, "brand": catalog.brand_of(row)}}),))


def test_world_not_user_sells_out_the_planned_product(catalog, search) -> None:
    env = EcomEnv("PD", catalog=catalog, search=search, overrides={"p_noise": 0.0, "p_switch": 0.0})
    goal = find_stock_out(env)
    world = env.audit().world
    row = goal.stock_out_row
    assert world.stock(row) > 0 and row in world.doomed
    env.audit().problem.user.on_turn_end = lambda *args: None  # a shopper that does nothing at turn end
    observation = env.step(search_for(catalog, row))
    assert goal.stock_out_id in observation.messages[0]["content"]
    assert world.stock(row) == 0 and world.sold_out_as_planned(row)


def test_planned_sell_out_waits_for_a_discovery_tool_in_a_handled_turn(catalog) -> None:
    world = World(catalog, ("PD", 0, 0), today=dt.date(2025, 1, 1))
    task = RecommendState()
    world.plan_sell_out(7, task)
    world.surfacing.turn = 1
    world.surfacing.record("order_list", rows=[7])  # not a discovery tool
    task.handled_turns.append(1)
    world.run_planned_events()
    assert world.stock(7) == int(catalog.stock[7]) and not world.sold_out_as_planned(7)
    world.surfacing.turn = 2
    world.surfacing.record("catalog_search", rows=[7])  # shown, but the request was not being handled
    world.run_planned_events()
    assert not world.sold_out_as_planned(7)
    task.handled_turns.append(2)
    world.run_planned_events()
    assert world.stock(7) == 0 and world.sold_out_as_planned(7)


def test_one_ledger_serves_r_hall_and_is_correct(c8) -> None:
    play_oracle(c8, "PD", 8, 4)
    episode = c8.audit()
    state = episode.problem.state
    ledger = episode.world.surfacing
    assert isinstance(ledger, SurfacingLedger) and ledger.entries
    shown = {c8.catalog.product_id(r) for r in state.shown_rows(episode.world)}
    assert shown and shown <= episode.surfaced_ids()
    assert {c8.catalog.product_id(r) for r in ledger.rows()} <= episode.surfaced_ids()


def test_ids_shown_in_the_answering_turn_were_not_seen(catalog, search) -> None:
    """A search and an answer in one action: r_hall accepts the ids, is_correct does not (the agent
    could not have read the results before answering)."""
    env = EcomEnv("PD", catalog=catalog, search=search, overrides={"p_noise": 0.0, "p_switch": 0.0, "p_oos": 0.0})
    env.reset(env_id="PD", difficulty=2, seed=0)
    goal = env.audit().problem.goal
    row = catalog.index_of(goal.ideal_ids[0])
    search_call = search_for(catalog, row).tool_calls[0]
    answer = ToolCall(id="a", name="answer", arguments={"product_ids": [goal.ideal_ids[0]]})
    observation = env.step(AgentAction(tool_calls=(search_call, answer)))
    assert goal.ideal_ids[0] in observation.messages[0]["content"]
    reward = observation.info["reward"]
    assert reward["r_hall"] == 0.0 and not reward["is_correct"]
    assert reward["task"]["unseen_ids"] == [goal.ideal_ids[0]]
