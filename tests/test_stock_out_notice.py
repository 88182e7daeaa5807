"""A planned stock-out is observable before the agent's answer is judged against it: at the end of the turn in
which a product sells out as planned (the planned stock-out and its decoys, once a search showed them), the
shopper says it is sold out. An agent that searches once and answers at once was, before, penalised for a
product it had been shown in stock with nothing said."""

from __future__ import annotations

from typing import Any

import pytest

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog.product_type import spoken_name
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Observation, cards
from ecomrlve.runner import play


class SearchThenAnswer:
    """Searches the opening's category wide (so the planned stock-out and decoys show), then answers at once."""

    def __init__(self) -> None:
        self.turn = 0
        self.category = ""
        self.seen: list[dict[str, Any]] = []

    def act(self, observation: Observation) -> AgentAction:
        self.turn += 1
        self.seen += cards(observation)
        if self.turn == 1:
            return AgentAction(tool_calls=(ToolCall(id="s0", name="catalog_search", arguments={
                "query": observation.messages[-1]["content"], "filters": {"in_stock": True}, "top_k": 20}),))
        if self.turn == 2:
            self.category = max({c["category"] for c in self.seen}, key=[c["category"] for c in self.seen].count)
            return AgentAction(tool_calls=(ToolCall(id="s1", name="catalog_search", arguments={
                "query": "", "filters": {"category": self.category, "in_stock": True}, "sort_by": "rating",
                "top_k": 200}),))
        ids = [c["product_id"] for c in self.seen if c["in_stock"]][:3]
        return AgentAction(tool_calls=(ToolCall(id="a", name="answer", arguments={"product_ids": ids}),))


def _said_sold_out_before_answer(record, name: str) -> bool:
    """Whether a shopper message before the agent's answer names ``name`` as sold out / out of stock."""
    for message in record.messages:
        if message["role"] == "assistant" and any(c["function"]["name"] == "answer"
                                                  for c in message.get("tool_calls") or []):
            return False
        text = message.get("content") or ""
        if message["role"] == "user" and name in text and ("sold out" in text or "out of stock" in text):
            return True
    return False


@pytest.mark.parametrize("env_id", ["PD", "SUB"])
def test_every_planned_sell_out_is_said_before_the_answer(catalog, search, env_id: str) -> None:
    env = EcomEnv(env_id, catalog=catalog, search=search, overrides={"p_oos": 1.0, "p_noise": 0.0})
    executed = 0
    for d in (4, 8, 12, 15):
        for seed in range(6):
            agent = SearchThenAnswer()
            observation = env.reset(env_id=env_id, difficulty=d, seed=seed)
            while not observation.done:
                observation = env.step(agent.act(observation))
            world = env.audit().world
            for event in world.planned_sell_outs:
                if event.done:
                    executed += 1
                    name = spoken_name(catalog, event.row).text
                    assert _said_sold_out_before_answer(env.record, name), (env_id, d, seed, name)
    assert executed >= 10  # the agent's wide searches did trigger planned sell-outs


@pytest.mark.parametrize("env_id", ["PD", "SUB"])
def test_the_oracle_still_answers_ideally_with_sell_outs(catalog, search, env_id: str) -> None:
    env = EcomEnv(env_id, catalog=catalog, search=search, overrides={"p_oos": 1.0})
    for d in range(16):
        record = play(env, "oracle", env_id=env_id, difficulty=d, seed=d)
        assert record.reward.r_task == 1.0, (env_id, d)
