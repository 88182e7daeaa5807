"""The episode runtime: wire formats, invalid outputs, budgets, tool schemas and records."""

from __future__ import annotations

import json
from typing import Any

import pytest
from exploits import LookForeverPolicy, play, play_oracle

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.difficulty import Difficulty
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import cards
from ecomrlve.session import MAX_ACTION_CHARS, EpisodeRecord

# -- the three wire formats ------------------------------------------------------------------------

def as_openai(action: AgentAction, turn: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": action.message}
    if action.tool_calls:
        message["tool_calls"] = [
            {"id": f"oa_{turn}_{i}", "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for i, c in enumerate(action.tool_calls)
        ]
    return message


def as_hermes(action: AgentAction, turn: int) -> str:
    blocks = "".join(f"\n<tool_call>\n{json.dumps({'name': c.name, 'arguments': c.arguments})}\n</tool_call>"
                     for c in action.tool_calls)
    return f"<think>turn {turn}: planning what to do</think>{action.message or ''}{blocks}"


def as_json_object(action: AgentAction, turn: int) -> str:
    return json.dumps({"message": action.message,
                       "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in action.tool_calls]})


def normalised(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with tool-call ids replaced by their position (ids legitimately differ by format)."""
    out = []
    for message in json.loads(json.dumps(messages)):
        if "tool_call_id" in message:
            message["tool_call_id"] = "<id>"
        for call in message.get("tool_calls") or ():
            call["id"] = "<id>"
        out.append(message)
    return out


def _oracle_actions(env: EcomEnv, d: int, seed: int) -> list[AgentAction]:
    obs = env.reset(env_id="CART", difficulty=d, seed=seed)
    oracle = env.audit().oracle()
    actions = []
    while not obs.done:
        actions.append(oracle.act(obs))
        obs = env.step(actions[-1])
    return actions


@pytest.mark.parametrize("d,seed", [(0, 1), (4, 2), (7, 3), (12, 4)], ids=lambda v: str(v))
def test_wire_formats_give_identical_episodes(env, d: int, seed: int) -> None:
    """OpenAI dicts, Hermes text and JSON-object strings replay the oracle's episode identically."""
    actions = _oracle_actions(env, d, seed)
    baseline = env.record
    assert baseline.reward is not None and baseline.reward.is_correct
    assert any(a.tool_calls for a in actions)
    for convert in (as_openai, as_hermes, as_json_object):
        env.reset(env_id="CART", difficulty=d, seed=seed)
        obs = None
        for turn, action in enumerate(actions):
            obs = env.step(convert(action, turn))
        assert obs is not None and obs.done
        record = env.record
        assert normalised(record.messages) == normalised(baseline.messages), convert.__name__
        assert record.reward == baseline.reward, convert.__name__
        assert record.goal == baseline.goal


# -- invalid outputs -----------------------------------------------------------------------------------

def _calls(*calls: tuple[str, dict]) -> dict[str, Any]:
    return {"message": None, "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


INVALID = {
    "bad_json_in_tool_call": ("<tool_call>{\"name\": \"user_get_visit_history\", \"arguments\": {</tool_call>", "JSON"),
    "bad_json_openai_arguments": ({"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "user_get_visit_history", "arguments": "{oops"}}]}, "JSON"),
    "bad_json_object": ('{"message": "hi", "tool_calls": [}', "JSON"),
    "unknown_tool": (_calls(("delete_everything", {})), "delete_everything"),
    "unknown_tool_hermes": ('<tool_call>{"name": "checkout", "arguments": {}}</tool_call>', "checkout"),
    "unknown_argument": (_calls(("cart_add", {"product_id": "P00000000", "quantity": 1, "colour": "red"})), "colour"),
    "quantity_as_string": (_calls(("cart_add", {"product_id": "P00000000", "quantity": "2"})), "quantity"),
    "missing_required_argument": (_calls(("cart_add", {"quantity": 1})), "product_id"),
    "unknown_filter_key": (_calls(("catalog_search", {"query": "charger", "filters": {"colour": "Black"}})), "colour"),
    "filter_wrong_type": (_calls(("catalog_search", {"query": "charger", "filters": {"price_max": "20"}})), "price_max"),
    "bad_sort_by": (_calls(("catalog_search", {"query": "charger", "sort_by": "cheapest"})), "sort_by"),
    "top_k_as_string": (_calls(("catalog_search", {"query": "charger", "top_k": "10"})), "top_k"),
    "answer_wrong_type": (_calls(("answer", {"done": "yes"})), "done"),
    "oversized_text": ("x" * (MAX_ACTION_CHARS + 1), "too_long"),
    "oversized_dict": ({"role": "assistant", "content": "y" * (MAX_ACTION_CHARS + 10)}, "too_long"),
    "tool_calls_not_a_list": ({"message": "hi", "tool_calls": {"name": "user_get_visit_history", "arguments": {}}}, "list"),
    "message_wrong_type": ({"message": 5, "tool_calls": []}, "message"),
    "arguments_not_object": (_calls(("user_get_visit_history", [])), "arguments"),
    "wrong_role": ({"role": "user", "content": "hi"}, "role"),
    "action_wrong_type": (42, "int"),
}


@pytest.mark.parametrize("raw,fragment", list(INVALID.values()), ids=list(INVALID))
def test_invalid_output_ends_episode(env, raw: Any, fragment: str) -> None:
    """A malformed turn ends the episode at once: done, reward -1, readable invalid_reason."""
    env.reset(env_id="CART", difficulty=6, seed=11)
    env.step(AgentAction(message="Let me have a look."))  # a valid turn first: invalid mid-episode too
    obs = env.step(raw)
    assert obs.done
    assert obs.reward == -1.0
    reward = obs.info["reward"]
    assert reward["r_total"] == -1.0 and reward["r_task"] == -1.0 and not reward["is_correct"]
    assert obs.info["termination"] == reward["termination"] == "invalid_output"
    reason = obs.info["invalid_reason"]
    assert isinstance(reason, str) and 10 <= len(reason) <= 2000
    assert fragment.lower() in reason.lower(), reason
    assert env.record.reward.invalid_reason == reason
    with pytest.raises(RuntimeError):
        env.step(AgentAction(message="hello?"))


@pytest.mark.parametrize("tool,arguments", [
    ("cart_add", {"quantity": 0}),
    ("cart_add", {"quantity": -2}),
    ("cart_add", {"quantity": 100}),
    ("cart_set_quantity", {"line_id": "L000000", "quantity": 100}),
    ("cart_set_quantity", {"line_id": "L000000", "quantity": -1}),
    ("ask_user", {"question": ""}),
    ("ask_user", {"question": "?" * 2001}),
], ids=["add_qty0", "add_qty_negative", "add_qty100", "set_qty100", "set_qty_negative", "ask_empty", "ask_too_long"])
def test_declared_argument_bounds_are_schema_violations(env, tool: str, arguments: dict) -> None:
    """Arguments outside the declared bounds (quantity 1-99 to add, 0-99 to set, question 1-2000 chars) are invalid
    output."""
    env.reset(env_id="CART", difficulty=6, seed=12)
    item = env.audit().problem.goal.items[0]
    if tool == "cart_add":
        arguments = {"product_id": item.product_id, **arguments}
        if item.variant_id:
            arguments["variant_id"] = item.variant_id
    obs = env.step(_calls((tool, arguments)))
    assert obs.done and obs.info.get("termination") == "invalid_output", (
        f"{tool} with {str(arguments)[:80]} was accepted: {str(obs.messages)[:300]}")
    assert obs.reward == -1.0


def test_declared_argument_bounds_in_schema(env) -> None:
    """The OpenAI schemas tell the agent the bounds: quantity in [1, 99] to add and [0, 99] to set (0 removes the
    line), question length 1-2000."""
    obs = env.reset(env_id="CART", difficulty=0, seed=0)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in obs.tools}
    for tool, low in (("cart_add", 1), ("cart_set_quantity", 0)):
        quantity = schemas[tool]["properties"]["quantity"]
        assert quantity.get("minimum") == low and quantity.get("maximum") == 99, (tool, quantity)
    question = schemas["ask_user"]["properties"]["question"]
    assert question.get("minLength") == 1 and question.get("maxLength") == 2000, question


# -- budgets -------------------------------------------------------------------------------------------

def test_tool_budget_extra_calls_not_executed(env) -> None:
    """At d=0 (B_tool=1) a second call in one turn returns tool_budget_exceeded and does not run."""
    assert Difficulty.at(0).B_tool == 1
    obs = env.reset(env_id="CART", difficulty=0, seed=2)
    assert "at most 1 tool per turn" in obs.messages[0]["content"]
    item = env.audit().problem.goal.items[0]
    obs = env.step(_calls(("catalog_search", {"query": item.full_phrase})))
    card = next(cards(obs))
    add = {"product_id": card["product_id"], "quantity": 1}
    if card.get("variants"):
        add["variant_id"] = card["variants"][0]["variant_id"]
    obs = env.step({"role": "assistant", "content": None, "tool_calls": [
        {"id": "first", "type": "function", "function": {"name": "user_get_visit_history", "arguments": "{}"}},
        {"id": "second", "type": "function", "function": {"name": "cart_add", "arguments": json.dumps(add)}}]})
    assert not obs.done
    tools = [m for m in obs.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["first", "second"]
    assert "viewed" in json.loads(tools[0]["content"])
    assert json.loads(tools[1]["content"])["error"] == "tool_budget_exceeded"
    assert env.session.public_state().cart["lines"] == [], "the over-budget cart_add was executed"


@pytest.mark.parametrize("d", [0, 5, 11], ids=lambda d: f"d{d}")
def test_turn_budget(env, d: int) -> None:
    """An agent that only calls user_get_visit_history ends by turn_budget after exactly T_max turns with r_task -1."""
    transcript = play(env, lambda e: LookForeverPolicy(), difficulty=d, seed=d)
    reward = transcript.reward
    assert reward["termination"] == "turn_budget"
    assert reward["turns"] == Difficulty.at(d).T_max == reward["t_max"]
    assert reward["user_caused_turns"] == 0
    assert reward["r_task"] == -1.0 and not reward["is_correct"]
    assert all(not o.done for o in transcript.observations[:-1])


def test_turn_budget_override(make_env) -> None:
    """A T_max override shortens the episode accordingly."""
    env = make_env(overrides={"T_max": 2})
    transcript = play(env, lambda e: LookForeverPolicy(), difficulty=9, seed=0)
    assert transcript.reward["turns"] == 2 and transcript.reward["termination"] == "turn_budget"


# -- tool schemas ----------------------------------------------------------------------------------------

def _walk(node: Any):
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_tool_schemas_are_lean_openai_functions(env) -> None:
    """Every tool in the first observation is an OpenAI function schema, no $ref, without the
    ``"additionalProperties": false`` each object would repeat: the system prompt says it once."""
    obs = env.reset(env_id="CART", difficulty=4, seed=0)
    assert obs.tools
    names = [t["function"]["name"] for t in obs.tools]
    assert len(set(names)) == len(names)
    assert {"catalog_search", "cart_add", "user_get_visit_history", "ask_user", "answer"} <= set(names)
    assert names == env.session.public_state().tools
    for schema in obs.tools:
        assert schema["type"] == "function"
        function = schema["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert function["name"].islower() and function["description"].strip()
        parameters = function["parameters"]
        assert parameters["type"] == "object"
        text = json.dumps(schema)
        assert "$ref" not in text and "$defs" not in text, function["name"]
        assert "additionalProperties" not in text, function["name"]
        required = set(parameters.get("required", []))
        assert required <= set(parameters["properties"])


@pytest.mark.parametrize("arguments", [{"query": "x", "colour": "red"}, {"query": "x", "filters": {"colour": "red"}},
                                       {"query": "x", "filters": {"rating_min": 6}}])
def test_arguments_outside_a_lean_schema_still_end_the_episode(env, arguments: dict[str, Any]) -> None:
    """The advertised schemas no longer say ``additionalProperties: false``; the system prompt says it once, and an
    unknown argument (at the top or inside ``filters``) or an out-of-range one ends the episode at -1 as before."""
    obs = env.reset(env_id="CART", difficulty=0, seed=0)
    assert "Arguments outside a tool's schema end the task." in obs.messages[0]["content"]
    obs = env.step(AgentAction(tool_calls=(ToolCall(id="a", name="catalog_search", arguments=arguments),)))
    assert obs.done and obs.reward == -1
    assert "violate its schema" in obs.info["invalid_reason"]


# -- the episode record ----------------------------------------------------------------------------------

def test_record_round_trips_through_json(env) -> None:
    """EpisodeRecord survives JSON: oracle episode, mixed wire formats, an invalid ending."""
    play_oracle(env, difficulty=9, seed=4)
    record = env.record
    assert EpisodeRecord.model_validate_json(record.to_json()) == record
    assert record.goal == env.audit().problem.goal.model_dump(mode="json")
    assert record.messages[0]["role"] == "system" and record.messages[1]["role"] == "user"

    env.reset(env_id="CART", difficulty=3, seed=5)
    env.step(as_openai(AgentAction(message="Which size?"), 0))
    env.step(as_hermes(AgentAction(tool_calls=(ToolCall(id="h", name="user_get_visit_history", arguments={}),)), 1))
    obs = env.step('<tool_call>{"name": "user_get_visit_history"</tool_call>')
    assert obs.done
    record = env.record
    assert len(record.actions) == 3 and record.actions[2] == '<tool_call>{"name": "user_get_visit_history"</tool_call>'
    again = EpisodeRecord.model_validate_json(record.to_json())
    assert again == record and again.reward.termination == "invalid_output"
