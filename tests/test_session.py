"""The session API: turn primitives equal ``step``, ending from outside, what is public and what is not."""

from __future__ import annotations

import gc
import json
import random
import weakref
from typing import Any

import pytest

from ecomrlve.actions import AgentAction, ToolCall, parse_action
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs import get_environment
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import tool_results
from ecomrlve.runner import make_agent, replay
from ecomrlve.session import RUNTIME_TERMINATIONS, _schemas_copy, toolset

EPISODES = [("CART", 0, 3), ("CART", 9, 4), ("PD", 6, 1), ("SUB", 4, 2), ("BUNDLE", 5, 3), ("RETURN", 7, 5),
            ("STATUS", 3, 6), ("POLICY", 8, 7), ("JOURNEY", 6, 8)]


@pytest.fixture(scope="module")
def c8(catalog, search) -> EcomEnv:
    return EcomEnv("C8", catalog=catalog, search=search)


def _played_actions(env: EcomEnv, agent_name: str, env_id: str, d: int, seed: int) -> list[Any]:
    observation = env.reset(env_id=env_id, difficulty=d, seed=seed)
    agent = make_agent(agent_name, env, seed)
    actions = []
    while not observation.done:
        actions.append(agent.act(observation))
        observation = env.step(actions[-1])
    return actions


def _as_action(raw: Any, turn: int) -> AgentAction:
    return raw if isinstance(raw, AgentAction) else parse_action(raw, turn=turn)


@pytest.mark.parametrize("agent_name", ["oracle", "heuristic"])
@pytest.mark.parametrize("env_id,d,seed", EPISODES, ids=lambda v: str(v))
def test_primitives_give_the_observations_and_record_of_step(c8, agent_name, env_id, d, seed) -> None:
    """begin_turn / call_tool / end_turn, turn by turn, reproduce step()'s observations and record exactly."""
    actions = [_as_action(a, t) for t, a in enumerate(_played_actions(c8, agent_name, env_id, d, seed))]
    c8.reset(env_id=env_id, difficulty=d, seed=seed)
    by_step = [c8.step(action) for action in actions]
    expected = c8.record

    c8.reset(env_id=env_id, difficulty=d, seed=seed)
    session = c8.session
    by_primitives = []
    for action in actions:
        session.begin_turn(action.message)
        results = [session.call_tool(call) for call in action.tool_calls]
        observation = session.end_turn()
        by_primitives.append(observation)
        assert [r.message for r in results] == [m for m in observation.messages if m["role"] == "tool"]
    assert by_primitives == by_step
    assert session.record().to_json() == expected.to_json()
    assert replay(c8, session.record()).to_json() == expected.to_json()  # the recorded actions replay


def _call(name: str, call_id: str = "c", **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def test_call_tool_enforces_the_tool_budget_and_closes_after_the_answer(env) -> None:
    """At d=0 (B_tool 1) a second call in a turn is refused unrun; after the answer every call is refused."""
    env.reset(env_id="CART", difficulty=0, seed=2)
    session = env.session
    session.begin_turn(None)
    first = session.call_tool(_call("user_get_visit_history", "a"))
    second = session.call_tool(_call("user_get_visit_history", "b"))
    assert first.executed and "viewed" in first.content
    assert not second.executed and second.content["error"] == "tool_budget_exceeded"
    assert not session.end_turn().done

    env.reset(env_id="CART", difficulty=9, seed=2)  # B_tool > 1
    session = env.session
    session.begin_turn(None)
    assert session.call_tool(_call("answer", "a", done=True)).executed
    closed = session.call_tool(_call("user_get_visit_history", "b"))
    assert not closed.executed and closed.content["error"] == "task_closed"
    final = session.end_turn()
    assert final.done and final.info["termination"] == "answered"


def test_a_malformed_tool_call_ends_the_episode_with_minus_one(env) -> None:
    env.reset(env_id="CART", difficulty=4, seed=3)
    session = env.session
    session.begin_turn("Let me look.")
    result = session.call_tool(_call("cart_add", quantity="two"))
    assert not result.executed and result.content["error"] == "invalid_output" and session.done
    with pytest.raises(RuntimeError):
        session.call_tool(_call("user_get_visit_history"))
    final = session.end_turn()
    assert final.done and final.reward == -1.0 and final.info["termination"] == "invalid_output"
    assert "quantity" in final.info["invalid_reason"]
    assert session.record().reward.invalid_reason == final.info["invalid_reason"]


def test_primitives_refuse_calls_out_of_order(env) -> None:
    env.reset(env_id="CART", difficulty=4, seed=3)
    session = env.session
    with pytest.raises(RuntimeError):
        session.call_tool(_call("user_get_visit_history"))
    with pytest.raises(RuntimeError):
        session.end_turn()
    with pytest.raises(TypeError):
        session.begin_turn({"content": "hi"})
    session.begin_turn(None)
    with pytest.raises(TypeError):
        session.call_tool({"name": "user_get_visit_history", "arguments": {}})
    with pytest.raises(RuntimeError):
        session.begin_turn(None)
    with pytest.raises(RuntimeError):
        session.step(AgentAction(message="hi"))
    session.end_turn()


@pytest.mark.parametrize("mid_turn", [False, True], ids=["between_turns", "mid_turn"])
def test_finish_from_outside(env, mid_turn: bool) -> None:
    """A trainer ends an unanswered episode: done, its own termination, r_task -1, the record complete."""
    env.reset(env_id="CART", difficulty=6, seed=11)
    env.step(AgentAction(message="Which one would you like?"))
    session = env.session
    if mid_turn:
        session.begin_turn(None)
        session.call_tool(_call("user_get_visit_history"))
    final = session.finish("trainer_limit")
    assert final.done and final.info["termination"] == "trainer_limit"
    reward = final.info["reward"]
    assert reward["r_task"] == -1.0 and not reward["is_correct"] and reward["termination"] == "trainer_limit"
    record = env.record
    assert record.reward.termination == "trainer_limit" and record.reward.turns == 1 + mid_turn
    assert [m["role"] for m in record.messages][-2:] == (["assistant", "tool"] if mid_turn else ["assistant", "user"])
    with pytest.raises(RuntimeError):
        env.step(AgentAction(message="hello?"))
    with pytest.raises(RuntimeError):
        session.finish("again")


@pytest.mark.parametrize("reason", sorted(RUNTIME_TERMINATIONS) + [""])
def test_finish_refuses_the_runtimes_own_terminations(env, reason: str) -> None:
    env.reset(env_id="CART", difficulty=0, seed=0)
    with pytest.raises(ValueError):
        env.session.finish(reason)
    assert not env.done


def test_record_only_after_the_episode(env) -> None:
    """The record holds the hidden goal, so neither the session nor EcomEnv gives it out mid-episode."""
    env.reset(env_id="CART", difficulty=3, seed=5)
    with pytest.raises(RuntimeError):
        env.session.record()
    with pytest.raises(RuntimeError):
        _ = env.record
    env.step(AgentAction(message="Hello"))
    with pytest.raises(RuntimeError):
        _ = env.record
    goal = env.audit().problem.goal  # the explicit auditor accessor
    env.session.finish("stopped")
    assert env.record.goal == goal.model_dump(mode="json")


def _strings(node: Any):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


@pytest.mark.parametrize("env_id,d,seed", EPISODES, ids=lambda v: str(v))
def test_public_state_is_what_the_agent_saw(c8, env_id, d, seed) -> None:
    """public_state's transcript is exactly the exchanged messages, and no goal value the agent was not shown is in it."""
    observation = c8.reset(env_id=env_id, difficulty=d, seed=seed)
    goal_strings = {s for s in _strings(c8.audit().problem.goal.model_dump(mode="json")) if len(s) >= 4}
    assert goal_strings, "the goal has ids or values to look for"
    agent = make_agent("heuristic", c8, seed)
    schemas = json.dumps(observation.tools)
    seen = list(observation.messages)
    for _ in range(3):
        state = c8.session.public_state()
        assert state.messages == seen
        assert "goal" not in state.model_dump() and not state.done and state.termination is None
        text, shown = state.model_dump_json(), json.dumps([seen, state.cart], ensure_ascii=False) + schemas
        leaked = sorted(s for s in goal_strings if s in text and s not in shown)
        assert not leaked, leaked
        action = _as_action(agent.act(observation), state.turn)
        observation = c8.step(action)
        seen += [c8.session.public_state().messages[len(seen)], *observation.messages]  # our turn, then theirs
        assert seen[-1 - len(observation.messages)]["role"] == "assistant"
        if observation.done:
            break
    state = c8.session.public_state()
    assert state.done == c8.done and state.turn == observation.info["turn"]
    assert state.turns_left == observation.info["turns_left"]


def test_public_state_counts_turns_and_shows_the_cart(env) -> None:
    obs = env.reset(env_id="CART", difficulty=0, seed=2)
    state = env.session.public_state()
    assert (state.turn, state.user_caused_turns, state.in_turn, state.done) == (0, 0, False, False)
    assert state.tools == [t["function"]["name"] for t in obs.tools] and state.cart == {"lines": [], "total": 0.0}
    card = env.step(AgentAction(tool_calls=(_call("catalog_search", query="charger"),)))
    [(_, result)] = tool_results(card)
    product = result["results"][0]
    add = {"product_id": product["product_id"], "quantity": 2}
    if product.get("variants"):
        add["variant_id"] = product["variants"][0]["variant_id"]
    env.session.begin_turn(None)
    env.session.call_tool(_call("cart_add", **add))
    state = env.session.public_state()
    assert state.in_turn and state.turn == 2
    assert [(line["product_id"], line["quantity"]) for line in state.cart["lines"]] == [(product["product_id"], 2)]
    env.session.end_turn()
    final = env.session.finish("stopped")
    state = env.session.public_state()
    assert state.done and state.termination == "stopped" and state.reward == final.reward


def test_episode_id_is_opaque_and_unique(env) -> None:
    """The id reveals neither seed nor difficulty, and two plays of the same key get different ids."""
    seed = 987654321
    env.reset(env_id="CART", difficulty=13, seed=seed)
    first = env.session.episode_id
    env.reset(env_id="CART", difficulty=13, seed=seed)
    second = env.session.episode_id
    assert first != second
    assert env.session.public_state().episode_id == second
    for episode_id in (first, second):
        assert len(episode_id) >= 16
        assert str(seed) not in episode_id and format(seed, "x") not in episode_id


@pytest.mark.parametrize("env_id,d,seed", EPISODES, ids=lambda v: str(v))
def test_a_played_session_is_freed_without_the_cycle_collector(c8, env_id, d, seed) -> None:
    """No reference cycle through the session: the tool and shopper contexts hold it weakly."""
    _played_actions(c8, "oracle", env_id, d, seed)
    gone = weakref.ref(c8.session)
    gc.disable()
    try:
        c8.reset(env_id="CART", difficulty=0, seed=0)
        assert gone() is None
    finally:
        gc.enable()


def test_each_reset_gets_its_own_copy_of_the_tool_schemas(c8) -> None:
    first = c8.reset(env_id="PD", difficulty=3, seed=1).tools
    first[0]["function"]["name"] = "changed by the caller"
    second = c8.reset(env_id="PD", difficulty=3, seed=2).tools
    assert second == json.loads(toolset(c8.session.family, Difficulty.at(3))[1])


@pytest.mark.parametrize("env_id", ["CART", "PD", "JOURNEY"])
def test_schema_copies_share_no_dict_or_list(env_id) -> None:
    """Each copy is the schemas' JSON exactly, and only its strings and numbers (immutable) are shared."""
    schemas = toolset(get_environment(env_id), Difficulty.at(9))[1]
    one, two = _schemas_copy(schemas), _schemas_copy(schemas)
    assert json.dumps(one) == json.dumps(two) == schemas

    def walk(a, b) -> None:
        assert type(a) is type(b)
        if isinstance(a, (dict, list)):
            assert a is not b
            for x, y in zip(a.values(), b.values()) if isinstance(a, dict) else zip(a, b):
                walk(x, y)

    walk(one, two)


@pytest.mark.parametrize("value", [
    [{"a": [1, -2.5, 1e300, -0.0, True, False, None, "é\\\"'\u2028\ud800", {}, []]}],
    [{"bound": float("inf"), "low": float("-inf")}],  # json.dumps writes these (allow_nan); json.loads reads them
    [{"deep": json.loads("[" * 150 + "]" * 150)}],  # deep, but within the parser's limit
])
def test_schema_copy_of_any_json_text(value) -> None:
    """Whatever JSON text a toolset's schemas are, a copy reads back as that text."""
    schemas = json.dumps(value)
    assert json.dumps(_schemas_copy(schemas)) == json.dumps(_schemas_copy(schemas)) == schemas


def test_schema_copy_nested_past_the_parser_limit() -> None:
    """Nesting a Python display cannot spell (the parser stops at 200 levels) is copied by parsing."""
    schemas = "[" * 300 + "]" * 300
    one, two = _schemas_copy(schemas), _schemas_copy(schemas)
    assert json.dumps(one, separators=(",", ":")) == schemas and one is not two


def test_each_record_has_its_own_axes(c8) -> None:
    """The record's axes are the difficulty's, and changing one record's changes no other."""
    records = []
    for seed in (1, 2):
        _played_actions(c8, "oracle", "PD", 6, seed)
        records.append(c8.record)
    assert records[0].axes == records[1].axes == Difficulty.at(6).as_dict()
    records[0].axes["T_max"] = -1
    _played_actions(c8, "oracle", "PD", 6, 3)
    assert c8.record.axes == Difficulty.at(6).as_dict()


def test_answer_tool_hands_over_what_its_handler_builds() -> None:
    """The answer tool's run gives the session an answer equal to its validated arguments, of
    their model, as calling its handler with their fields does."""
    from ecomrlve.tools.base import ToolContext

    family = get_environment("PD")
    tools, _ = toolset(family, Difficulty.at(3))
    answer = tools["answer"]
    arguments = answer.validate({"product_ids": ["P1", "P2"]})
    submitted: list[Any] = []
    ctx = ToolContext(world=None, search=None, difficulty=None, search_stream=None,  # type: ignore[arg-type]
                      ask_user=lambda question: "", submit_answer=submitted.append)
    assert answer.run(ctx, arguments) == {"status": "submitted"}
    assert type(submitted[0]) is type(arguments) and submitted[0] == arguments
    assert answer.handler(ctx, **dict(arguments)) == {"status": "submitted"}
    assert type(submitted[1]) is type(arguments) and submitted[1] == arguments


def test_first_observation_is_a_copy_of_the_transcript(c8) -> None:
    """What reset returns is the session's opening, copied: a caller that edits it changes no transcript."""
    observation = c8.reset(env_id="PD", difficulty=3, seed=1)
    opening = json.loads(json.dumps(observation.messages))
    observation.messages[0]["content"] = "changed by the caller"
    observation.messages.append({"role": "user", "content": "added by the caller"})
    assert c8.session.public_state().messages == opening


def test_the_search_stream_is_made_on_first_use_only(monkeypatch) -> None:
    """A reset does not seed the search tools' random stream (STATUS never searches); the first search makes it
    once, and it is the episode's named "search" stream."""
    import ecomrlve.session as session_module
    from ecomrlve.rng import derive_rng

    made: list[tuple[object, ...]] = []

    def counting(*parts: object) -> random.Random:
        made.append(parts)
        return derive_rng(*parts)

    monkeypatch.setattr(session_module, "derive_rng", counting)
    env = EcomEnv(["STATUS", "PD"], secret="lazy-search")
    env.reset(env_id="STATUS", difficulty=3, seed=1)
    assert not any(parts[-1] == "search" for parts in made)
    env.reset(env_id="PD", difficulty=3, seed=1)
    ctx = env.session._ctx
    assert not any(parts[-1] == "search" for parts in made)
    first = ctx.search_rng
    assert ctx.search_rng is first and [parts for parts in made if parts[-1] == "search"] == [
        ("PD", 3, 1, "lazy-search", "search")]
    assert first.getstate() == derive_rng("PD", 3, 1, "lazy-search", "search").getstate()
