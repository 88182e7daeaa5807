"""STATUS end to end: oracle, every answer field scored, exploits, clarification."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from account_helpers import NeverAnswer, call, find_episode, mean_total, reply

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.envs.account.status import TARGET_STATUSES, status_score
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import tool_results
from ecomrlve.tools import TOOLS
from ecomrlve.world.account import ORDER_ID

ENV = "STATUS"
ALL_D = list(range(16))
EXPLOIT_D = [0, 2, 4, 6, 8, 10, 12, 14]
EXPLOIT_SEEDS = range(15)


@pytest.fixture(scope="module")
def env(catalog, search) -> EcomEnv:
    return EcomEnv(ENV, catalog=catalog, search=search)


def test_mentioned_orders_are_listed_with_the_goals_status_and_eta(env) -> None:
    statuses = Counter()
    for d in ALL_D:
        for seed in range(20):
            observation = env.reset(env_id=ENV, difficulty=d, seed=seed)
            goal = env.audit().problem.goal
            tool = TOOLS["order_list"]
            orders = {o["order_id"]: o for o in tool.run(env.audit().context, tool.validate({}))["orders"]}
            assert set(re.findall(ORDER_ID, observation.messages[-1]["content"])) <= set(orders)
            row = orders[goal.target.order_id]
            assert row["status"] == goal.status
            assert row.get("eta") == (goal.eta.isoformat() if goal.eta else None)
            if goal.want_eta:
                assert goal.eta is not None and goal.eta >= env.audit().world.today
            statuses[goal.status] += 1
    assert set(statuses) == set(TARGET_STATUSES)


def test_every_asked_field_is_scored() -> None:
    assert status_score(answered=True, order_ok=True, status_ok=True, eta_asked=True, eta_ok=True) == (1.0, True)
    for field in ("order_ok", "status_ok", "eta_ok"):
        values = {"order_ok": True, "status_ok": True, "eta_ok": True, field: False}
        r, correct = status_score(answered=True, eta_asked=True, **values)
        assert r < 1.0 and not correct, field
    assert status_score(answered=True, order_ok=True, status_ok=True, eta_asked=False, eta_ok=False) == (1.0, True)
    assert status_score(answered=True, order_ok=False, status_ok=True, eta_asked=True, eta_ok=True)[0] == -1.0
    assert status_score(answered=False, order_ok=True, status_ok=True, eta_asked=False, eta_ok=True)[0] == -1.0


def test_a_missing_or_wrong_eta_is_not_correct(env) -> None:
    find_episode(env, ENV, 0, lambda g: g.want_eta)
    goal = env.audit().problem.goal
    env.step(call("order_list"))
    observation = env.step(call("answer", order_id=goal.target.order_id, status=goal.status))
    assert not observation.info["is_correct"] and observation.info["reward"]["r_task"] < 1.0
    env.reset(env_id=ENV, difficulty=0, seed=env.audit().seed)
    env.step(call("order_get_details", order_id=goal.target.order_id))
    observation = env.step(call("answer", order_id=goal.target.order_id, status=goal.status, eta=goal.eta.isoformat()))
    assert observation.info["is_correct"]


@pytest.mark.parametrize("d", [2, 3])  # B_tool 2: a lookup and the answer fit in one turn
def test_an_unverified_answer_earns_nothing(env, d: int) -> None:
    """Echoing the quoted order id with the right status, but before any tool showed that order (or in the
    same turn as the lookup), scores -1: credit comes from a verified status, not the shopper's words."""
    find_episode(env, ENV, d, lambda g: True)
    goal = env.audit().problem.goal
    right = {"order_id": goal.target.order_id, "status": goal.status} | (
        {"eta": goal.eta.isoformat()} if goal.want_eta else {})
    observation = env.step(call("answer", **right))
    assert observation.info["reward"]["r_task"] == -1.0 and not observation.info["reward"]["task"]["verified"]
    env.reset(env_id=ENV, difficulty=d, seed=env.audit().seed)
    observation = env.step(AgentAction(tool_calls=(ToolCall(id="a", name="order_list", arguments={}),
                                                   ToolCall(id="b", name="answer", arguments=right))))
    assert observation.done and observation.info["reward"]["r_task"] == -1.0


def test_clarification_names_the_exact_order_once_for_free(env) -> None:
    find_episode(env, ENV, 12, lambda g: g.ambiguous)
    goal = env.audit().problem.goal
    observation = env.step(AgentAction(message="Which order do you mean exactly?"))
    assert goal.target.title in reply(observation) and observation.info["user_caused_turns"] == 1


class MostCommonStatus:
    """Answers the newest listed order with the most common status, without reading it."""

    def __init__(self, status: str) -> None:
        self.status = status

    def act(self, observation) -> AgentAction:
        for name, result in tool_results(observation):
            if name == "order_list":
                return call("answer", order_id=result["orders"][0]["order_id"], status=self.status)
        return call("order_list")


def test_exploits_earn_nothing(env) -> None:
    goals = []
    for seed in range(100):
        env.reset(env_id=ENV, difficulty=8, seed=seed)
        goals.append(env.audit().problem.goal.status)
    common = Counter(goals).most_common(1)[0][0]
    for policy in (lambda seed: MostCommonStatus(common), lambda seed: NeverAnswer("order_list")):
        mean = mean_total(env, ENV, policy, EXPLOIT_D, EXPLOIT_SEEDS)
        assert mean <= 0.1, mean
