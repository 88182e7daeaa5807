"""JOURNEY: several intents on one world, interruptions, per-intent scoring, and its oracle."""

from __future__ import annotations

import datetime as dt
import json
import re

import exploits
import pytest
from pydantic import ValidationError

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.envs import get_environment
from ecomrlve.envs.journey.family import JourneyOracle, intent_families, merged_answer_model
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import tool_results
from ecomrlve.world.state import World

SLOT = re.compile(r"\{|\}|\bNone\b|\bnan\b")


@pytest.fixture(scope="module")
def journey(catalog, search) -> EcomEnv:
    return EcomEnv("JOURNEY", catalog=catalog, search=search)


def play_oracle(env: EcomEnv, d: int, seed: int, overrides: dict | None = None):
    """The oracle's episode with ``overrides``: (final observation, record)."""
    env.overrides = dict(overrides or {})
    observation = exploits.play_oracle(env, difficulty=d, seed=seed, env_id="JOURNEY").final
    return observation, env.record


@pytest.mark.parametrize("d", [0, 4, 8, 12, 15])
def test_oracle_answers_every_intent_in_full(journey, d):
    """Each of the journey_intents(d) intents is answered and scores 1 on its own verifier."""
    for seed in range(2):
        observation, _ = play_oracle(journey, d, seed)
        intents = observation.info["reward"]["task"]["intents"]
        assert len(intents) == min(5, 2 + d // 4, len(intent_families()))
        assert all(i["answered"] and i["r_task"] == 1.0 for i in intents), (d, seed, intents)


def test_intents_come_from_distinct_environments_and_share_one_world(journey):
    for seed in range(20):
        journey.overrides = {}
        journey.reset(env_id="JOURNEY", difficulty=12, seed=seed)
        env_ids = journey.audit().problem.user.env_ids
        assert len(env_ids) == len(set(env_ids)) == 5
        assert set(env_ids) <= {family.env_id for family in intent_families()}
        assert all(p.user is not None for p in journey.audit().problem.user.problems)


def test_turn_budget_is_the_sum_of_the_intents_budgets(journey):
    observation = journey.reset(env_id="JOURNEY", difficulty=8, seed=3)
    problems = journey.audit().problem.user.problems
    assert observation.info["turns_left"] == sum(get_environment(e).turn_budget(p)
                                                 for e, p in zip(journey.audit().problem.user.env_ids, problems))


class FirstIntentOnly(JourneyOracle):
    """Solves the first intent with its oracle, then only chats until the budget runs out."""

    def act(self, observation):
        if 0 in self.state.answers:
            return AgentAction(message="Let me look into that.")
        return super().act(observation)


@pytest.mark.parametrize("d", [0, 4, 8, 12, 15])
def test_solving_only_the_first_intent_earns_at_most_its_share(journey, d):
    for seed in range(3):
        journey.overrides = {"p_switch": 0.0}
        observation = journey.reset(env_id="JOURNEY", difficulty=d, seed=seed)
        agent = FirstIntentOnly(journey.audit().problem)
        while not observation.done:
            observation = journey.step(agent.act(observation))
        n = len(journey.audit().problem.user.problems)
        assert not observation.info["is_correct"]
        assert journey.record.reward.r_task <= 1 / n


def user_messages(record) -> list[str]:
    return [m["content"] for m in record.messages if m["role"] == "user"]


def test_without_switches_intents_follow_in_order(journey):
    _, record = play_oracle(journey, 12, 5, {"p_switch": 0.0})
    openings = [p.opening for p in journey.audit().problem.user.problems]
    said = " ".join(user_messages(record))
    positions = [said.find(o) for o in openings]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
    assert not any(i.interrupted for i in journey.audit().problem.goal.intents)


def test_interruptions_raise_the_next_intent_and_come_back(journey):
    """With p_switch = 1 each intent but the last is interrupted after the agent's first turn on it."""
    observation, record = play_oracle(journey, 8, 2, {"p_switch": 1.0})
    user = journey.audit().problem.user
    assert [i.interrupted for i in journey.audit().problem.goal.intents] == [True] * (len(user.problems) - 1) + [False]
    assert observation.info["is_correct"]
    said = user_messages(record)
    openings = [p.opening for p in user.problems]
    # Every intent is raised once; every interrupted intent is then restated when it resumes.
    for index, opening in enumerate(openings):
        mentions = sum(opening in message for message in said)
        assert mentions == (2 if index < len(openings) - 1 else 1), (index, said)
    # Interruptions come one agent turn after the previous request was raised.
    first_turn_reply = said[1]
    assert openings[1] in first_turn_reply
    assert record.reward.user_caused_turns >= len(openings) - 1


def test_an_answer_that_does_not_fit_the_current_request_is_a_tool_error(journey):
    journey.overrides = {"p_switch": 0.0}
    observation = journey.reset(env_id="JOURNEY", difficulty=4, seed=11)
    current = journey.audit().problem.user.env_ids[0]
    fields = set(get_environment(current).answer_arguments.model_fields)
    foreign = next(name for name in journey.environment.answer_arguments.model_fields if name not in fields)
    value = journey.environment.answer_arguments.model_fields[foreign]
    arguments = {foreign: True if value.annotation == bool | None else "x"}
    try:
        journey.environment.answer_arguments.model_validate(arguments)
    except ValidationError:
        arguments = {foreign: ["x"]}
    observation = journey.step(AgentAction(tool_calls=(ToolCall(id="a", name="answer", arguments=arguments),)))
    assert not observation.done
    [(_, result)] = list(tool_results(observation))
    assert result["error"] == "answer_does_not_fit"
    assert journey.audit().problem.state.answers == {}


def test_merged_answer_model_rejects_clashing_field_types():
    class Fake:
        env_id = "FAKE"
        answer_arguments = get_environment("CART").answer_arguments

    cart = get_environment("CART")
    assert set(merged_answer_model((cart,)).model_fields) == set(cart.answer_arguments.model_fields)

    from pydantic import BaseModel

    class Clash(BaseModel):
        done: str

    Fake.answer_arguments = Clash
    with pytest.raises(TypeError, match="done"):
        merged_answer_model((cart, Fake))


def test_no_unfilled_slots_in_any_user_message(journey):
    for seed in range(40):
        d = seed % 16
        _, record = play_oracle(journey, d, 1000 + seed, {"p_switch": 0.6})
        for message in user_messages(record):
            assert not SLOT.search(message), message


@pytest.mark.parametrize("d,seed", [(4, 775718685), (7, 1781725573), (11, 224333880), (14, 1283982593),
                                    (15, 1579273441)])
def test_one_intent_never_sells_out_what_another_intent_needs(journey, d, seed):
    """Regression: a SUB intent used to pick a BUNDLE intent's planned product as its sold-out original."""
    observation, _ = play_oracle(journey, d, seed, {"p_switch": 0.6})
    assert observation.info["is_correct"], observation.info["reward"]["task"]


def test_world_reservations_guard_stock_changes(catalog):
    world = World(catalog, ("TEST", 0, 0), dt.date(2025, 1, 1))
    row, other = 0, int(next(r for r in range(1, len(catalog)) if catalog.category[r] != catalog.category[0]))
    assert world.can_sell_out(row) and world.available(row) == (catalog.stock[row] > 0)
    world.reserve([row])
    assert not world.can_sell_out(row) and world.can_sell_out(other)
    world.protect(int(catalog.category[other]))
    assert not world.can_sell_out(other)
    world.doom(other)
    assert not world.available(other) and world.planning_overrides()[other] == 0
    assert other not in world.stock_overrides  # doomed is a plan, not yet a stock change


@pytest.mark.parametrize("d", [0, 2])
def test_the_oracle_follows_turns_whose_call_ids_it_did_not_choose(journey, d):
    """A person in the playground (or a text wire format) retypes the oracle's hint: the call ids are new ones,
    and the results still reach the sub-agent of the request being handled."""
    for seed in range(4):
        observation = journey.reset(env_id="JOURNEY", difficulty=d, seed=seed)
        oracle = journey.audit().oracle()
        while not journey.done:
            action = oracle.act(observation)
            retyped = {"message": action.message,
                       "tool_calls": [{"name": call.name, "arguments": call.arguments} for call in action.tool_calls]}
            observation = journey.step(json.dumps(retyped))
        assert journey.record.reward.r_task == 1.0
