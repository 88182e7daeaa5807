"""Tests for ecomrlve.actions: the three wire formats, <think> handling, and every error code."""

from __future__ import annotations

import json
import pickle
import types

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from ecomrlve.actions import (
    INVALID_JSON,
    INVALID_NOT_JSON,
    INVALID_STRUCTURE,
    INVALID_TOO_LONG,
    MAX_REASON_CHARS,
    AgentAction,
    InvalidActionError,
    ToolCall,
    parse_action,
    wire_form,
)


def openai_call(name: str, arguments: object, call_id: str | None = "c1") -> dict:
    call: dict = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return call


def hermes_block(name: str, arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def calls_of(action: AgentAction) -> list[tuple[str, str, dict]]:
    return [(c.id, c.name, c.arguments) for c in action.tool_calls]


def expect_error(raw: object, code: str, *fragments: str, **kwargs: object) -> InvalidActionError:
    """Parse ``raw``, assert it fails with ``code`` and that the detail names the problem."""
    with pytest.raises(InvalidActionError) as info:
        parse_action(raw, turn=kwargs.pop("turn", 3), **kwargs)  # type: ignore[arg-type]
    err = info.value
    assert err.code == code, err
    assert str(err) == f"{code}: {err.detail}"
    for fragment in fragments:
        assert fragment in err.detail, (fragment, err.detail)
    return err


# --- format 1: OpenAI chat message ------------------------------------------------------------


def test_openai_message_with_two_tool_calls_keeps_ids_and_decodes_arguments():
    raw = {
        "role": "assistant",
        "content": "  Let me look that up.\n",
        "tool_calls": [
            openai_call("search_products", '{"query": "red shoes", "limit": 5}', "call_abc"),
            openai_call("get_cart", {"cart_id": "k1"}, "call_def"),
        ],
    }
    action = parse_action(raw, turn=7)
    assert action.message == "Let me look that up."
    assert calls_of(action) == [
        ("call_abc", "search_products", {"query": "red shoes", "limit": 5}),
        ("call_def", "get_cart", {"cart_id": "k1"}),
    ]
    assert isinstance(action.tool_calls, tuple)


def test_openai_missing_ids_get_deterministic_turn_ids_and_role_is_optional():
    calls = [openai_call("a", "{}", None), openai_call("b", "{}", None)]
    raw = {"content": None, "tool_calls": calls}
    action = parse_action(raw, turn=4)
    assert [c.id for c in action.tool_calls] == ["call_4_0", "call_4_1"]
    assert action.message is None
    assert parse_action(raw, turn=4) == action  # deterministic
    # A null id (as some serialisers write a missing one) is treated as missing.
    raw["tool_calls"][0]["id"] = None
    assert parse_action(raw, turn=4).tool_calls[0].id == "call_4_0"


@pytest.mark.parametrize("arguments", [None, "", "  ", {}])
def test_openai_empty_arguments_mean_empty_object(arguments):
    action = parse_action({"role": "assistant", "tool_calls": [openai_call("get_cart", arguments)]},
                          turn=0)
    assert action.tool_calls[0].arguments == {}


def test_openai_arguments_key_may_be_absent():
    raw = {"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": "get_cart"}}]}
    assert calls_of(parse_action(raw, turn=0)) == [("x", "get_cart", {})]


def test_openai_plain_reply_and_server_extras_are_ignored():
    raw = {
        "role": "assistant",
        "content": "Your order shipped.",
        "tool_calls": None,
        "refusal": None,
        "function_call": None,
        "reasoning_content": "the user wants the status",
        "name": "agent",
    }
    assert parse_action(raw, turn=1) == AgentAction(message="Your order shipped.")


@pytest.mark.parametrize("content", ["", "   \n\t"])
def test_openai_blank_content_becomes_none(content):
    action = parse_action({"role": "assistant", "content": content}, turn=1)
    assert action.message is None and action.tool_calls == ()


def test_openai_accepts_any_mapping_not_only_dict():
    raw = types.MappingProxyType({"role": "assistant", "content": "hi"})
    assert parse_action(raw, turn=0).message == "hi"


# --- format 2: Hermes / Qwen text -------------------------------------------------------------


def test_hermes_plain_text_is_a_message():
    assert parse_action("  Hello! How can I help?\n", turn=0) == AgentAction(
        message="Hello! How can I help?"
    )


def test_hermes_multiple_tool_calls_with_text_around_and_between():
    raw = (
        "Checking both.\n"
        + hermes_block("search_products", {"query": "mug"})
        + "\nand\n"
        + hermes_block("get_order", {"order_id": "o1", "items": [1, 2]})
        + "\n"
    )
    action = parse_action(raw, turn=5)
    assert action.message == "Checking both.\n\nand"
    assert calls_of(action) == [
        ("call_5_0", "search_products", {"query": "mug"}),
        ("call_5_1", "get_order", {"order_id": "o1", "items": [1, 2]}),
    ]


def test_hermes_whitespace_and_newlines_inside_tags_are_allowed():
    raw = '<tool_call>\n\n   {"name": "get_cart",\n "arguments": {}}  \n\t</tool_call>'
    action = parse_action(raw, turn=2)
    assert action.message is None
    assert calls_of(action) == [("call_2_0", "get_cart", {})]


def test_hermes_tool_call_only_text_has_no_message():
    action = parse_action(hermes_block("a", {"x": 1}) + hermes_block("b", {}), turn=0)
    assert action.message is None and [c.name for c in action.tool_calls] == ["a", "b"]


def test_hermes_string_encoded_arguments_are_decoded():
    raw = '<tool_call>{"name": "f", "arguments": "{\\"k\\": 2}"}</tool_call>'
    assert parse_action(raw, turn=0).tool_calls[0].arguments == {"k": 2}


def test_think_block_is_stripped():
    raw = "<think>\nThe user wants shoes. {not json}\n</think>\n\nSure."
    raw += hermes_block("s", {"q": 1})
    action = parse_action(raw, turn=1)
    assert action.message == "Sure."
    assert calls_of(action) == [("call_1_0", "s", {"q": 1})]


def test_think_without_opening_tag_drops_everything_before_close():
    # Qwen3's template puts "<think>" in the prompt, so the completion starts mid-thought.
    raw = "reasoning that mentions <tool_call> in passing\n</think>\n\nHere you go."
    assert parse_action(raw, turn=1) == AgentAction(message="Here you go.")


def test_several_think_blocks_are_all_stripped():
    raw = "<think>a</think>Hi<think>b</think> there"
    assert parse_action(raw, turn=1).message == "Hi there"


def test_thinking_only_turn_is_empty_action():
    assert parse_action("<think>hmm</think>\n", turn=1) == AgentAction()


def test_unclosed_think_is_structure_error():
    expect_error("<think>never finished " + hermes_block("a", {}), INVALID_STRUCTURE, "<think>")


def test_stray_close_think_after_a_block_is_structure_error():
    expect_error("<think>a</think> b </think> c", INVALID_STRUCTURE, "</think>")


# --- format 3: JSON object --------------------------------------------------------------------


def test_json_object_as_dict_and_as_string_parse_alike():
    obj = {"message": "Done.", "tool_calls": [{"name": "checkout", "arguments": {"cart": "c"}}]}
    expected = AgentAction(
        message="Done.",
        tool_calls=[ToolCall(id="call_9_0", name="checkout", arguments={"cart": "c"})],
    )
    assert parse_action(obj, turn=9) == expected
    assert parse_action("\n  " + json.dumps(obj) + "  \n", turn=9) == expected


def test_json_object_keys_are_optional():
    assert parse_action({"message": "only text"}, turn=0) == AgentAction(message="only text")
    only_calls = parse_action('{"tool_calls": [{"name": "f", "arguments": {}}]}', turn=0)
    assert only_calls.message is None and calls_of(only_calls) == [("call_0_0", "f", {})]
    assert parse_action("{}", turn=0) == AgentAction()
    assert parse_action({"message": None, "tool_calls": None}, turn=0) == AgentAction()


def test_json_object_after_think_is_still_json():
    raw = '<think>plan</think>{"message": "ok", "tool_calls": []}'
    assert parse_action(raw, turn=0) == AgentAction(message="ok")


# --- general behaviour ------------------------------------------------------------------------


def test_agent_action_goes_through_the_same_checks_as_wire_formats():
    action = AgentAction(message=" x ", tool_calls=[ToolCall(id="i", name="n", arguments={"a": [1]})])
    assert parse_action(action, turn=0) == AgentAction(message="x", tool_calls=action.tool_calls)
    expect_error(action, INVALID_TOO_LONG, max_chars=10)
    twice = AgentAction(tool_calls=[ToolCall(id="i", name="n", arguments={})] * 2)
    expect_error(twice, INVALID_STRUCTURE, "duplicate id")
    assert parse_action(AgentAction(message=" \n\t"), turn=0).message is None


def test_empty_string_is_an_empty_action():
    assert parse_action("", turn=0) == AgentAction()
    assert parse_action(" \n ", turn=0) == AgentAction()


def test_parsed_action_equals_validated_model_and_is_frozen():
    action = parse_action({"role": "assistant", "content": "a",
                           "tool_calls": [openai_call("f", '{"x": 1}', "id1")]}, turn=0)
    assert action == AgentAction.model_validate(
        {"message": "a", "tool_calls": [{"id": "id1", "name": "f", "arguments": {"x": 1}}]}
    )
    with pytest.raises(ValidationError):
        action.message = "b"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ToolCall(id="a", name="b", arguments={}, extra=1)  # type: ignore[call-arg]


def test_invalid_action_error_shape_and_pickling():
    err = InvalidActionError(INVALID_JSON, "tool_calls[0]: bad")
    assert isinstance(err, ValueError)
    assert (err.code, err.detail, str(err)) == (INVALID_JSON, "tool_calls[0]: bad",
                                                 "invalid_json: tool_calls[0]: bad")
    copy = pickle.loads(pickle.dumps(err))
    assert (type(copy), copy.code, copy.detail) == (InvalidActionError, err.code, err.detail)


# --- errors -----------------------------------------------------------------------------------


def test_bad_json_inside_tool_call_names_the_block_index():
    raw = hermes_block("ok", {}) + '<tool_call>{"name": "f", "arguments": {"a": 1,}}</tool_call>'
    expect_error(raw, INVALID_JSON, "tool_calls[1]", "<tool_call>")


def test_unclosed_tool_call_names_the_index():
    raw = "text " + hermes_block("ok", {}) + '<tool_call>{"name": "f", "arguments": {}}'
    expect_error(raw, INVALID_STRUCTURE, "tool_calls[1]", "unclosed <tool_call>")


def test_close_tool_call_without_open_is_structure_error():
    expect_error('{"name": "f"}</tool_call> hi', INVALID_STRUCTURE, "</tool_call>")


@pytest.mark.parametrize(
    "raw",
    [
        {"role": "assistant", "tool_calls": [openai_call("ok", "{}", "a"),
                                             openai_call("f", "[1, 2]", "b")]},
        {"role": "assistant", "tool_calls": [openai_call("ok", "{}", "a"),
                                             openai_call("f", [1, 2], "b")]},
        hermes_block("ok", {}) + hermes_block("f", [1, 2]),
        {"tool_calls": [{"name": "ok", "arguments": {}}, {"name": "f", "arguments": [1, 2]}]},
    ],
)
def test_arguments_that_are_a_list_are_structure_errors(raw):
    expect_error(raw, INVALID_STRUCTURE, "tool_calls[1]", "(f)", "JSON object", "list")


@pytest.mark.parametrize("arguments", ["42", "\"text\"", "null_", 3.5])
def test_arguments_that_are_not_objects(arguments):
    raw = {"role": "assistant", "tool_calls": [openai_call("f", arguments)]}
    code = INVALID_JSON if arguments == "null_" else INVALID_STRUCTURE
    expect_error(raw, code, "tool_calls[0]", "arguments")


def test_bad_json_arguments_in_openai_format():
    raw = {"role": "assistant", "tool_calls": [openai_call("get_cart", '{"cart_id": ')]}
    expect_error(raw, INVALID_JSON, "tool_calls[0]", "get_cart", "arguments")


def test_non_string_argument_names_are_rejected():
    raw = {"role": "assistant", "tool_calls": [openai_call("f", {1: "x"})]}
    expect_error(raw, INVALID_NOT_JSON, "tool_calls[0]", "key 1 is not a string")


@pytest.mark.parametrize(
    "raw",
    [
        hermes_block("ok", {}) + '<tool_call>{"arguments": {}}</tool_call>',
        {"tool_calls": [{"name": "ok"}, {"arguments": {}}]},
        {"role": "assistant", "tool_calls": [openai_call("ok", "{}", "a"),
                                             {"id": "b", "function": {"arguments": "{}"}}]},
    ],
)
def test_missing_name_names_the_index(raw):
    expect_error(raw, INVALID_STRUCTURE, "tool_calls[1]", "missing tool name")


@pytest.mark.parametrize("name", ["get-cart", "1abc", "a b", "get_cart\n", "", "ünï", 7])
def test_bad_tool_names(name):
    raw = {"role": "assistant", "tool_calls": [openai_call(name, "{}")]}
    expect_error(raw, INVALID_STRUCTURE, "tool_calls[0]", "tool name")
    expect_error({"tool_calls": [{"name": name, "arguments": {}}]}, INVALID_STRUCTURE, "tool name")


def test_unknown_key_in_json_object_format():
    expect_error({"message": "hi", "thoughts": "x"}, INVALID_STRUCTURE, "unknown keys", "thoughts")
    expect_error('{"message": "hi", "tool_call": []}', INVALID_STRUCTURE, "tool_call")


def test_unknown_key_in_tool_call_entry():
    raw = {"tool_calls": [{"name": "f", "parameters": {}}]}
    expect_error(raw, INVALID_STRUCTURE, "tool_calls[0]", "parameters")
    hermes = '<tool_call>{"name": "f", "arguments": {}, "id": "x"}</tool_call>'
    expect_error(hermes, INVALID_STRUCTURE, "tool_calls[0]", "'id'")
    openai = {"role": "assistant", "tool_calls": [dict(openai_call("f", "{}"), index=0)]}
    expect_error(openai, INVALID_STRUCTURE, "tool_calls[0]", "index")
    expect_error({"role": "assistant", "audio": None}, INVALID_STRUCTURE, "audio")


def test_bad_json_object_string():
    expect_error('{"message": "hi",}', INVALID_JSON, "action JSON object")


@pytest.mark.parametrize("role", ["user", "tool", "system", None])
def test_role_must_be_assistant(role):
    expect_error({"role": role, "content": "hi"}, INVALID_STRUCTURE, "role", repr(role))


@pytest.mark.parametrize("content", [5, ["a"], [{"type": "text", "text": "hi"}], {"t": 1}])
def test_non_string_content(content):
    expect_error({"role": "assistant", "content": content}, INVALID_STRUCTURE, "'content'")
    expect_error({"message": content}, INVALID_STRUCTURE, "'message'")


def test_oversized_input():
    text = "x" * 101
    err = expect_error(text, INVALID_TOO_LONG, "101", "100", max_chars=100)
    assert "max" in err.detail
    assert parse_action("x" * 100, turn=0, max_chars=100).message == "x" * 100
    big = {"role": "assistant", "content": "y" * 32_000}
    expect_error(big, INVALID_TOO_LONG, "32000")
    expect_error({"message": "y" * 90}, INVALID_TOO_LONG, max_chars=90)


def test_duplicate_ids_name_both_indices():
    raw = {"role": "assistant", "tool_calls": [openai_call("a", "{}", "same"),
                                               openai_call("b", "{}", "other"),
                                               openai_call("c", "{}", "same")]}
    expect_error(raw, INVALID_STRUCTURE, "tool_calls[2]", "tool_calls[0]", "'same'")
    # A given id may also collide with a generated one.
    clash = {"role": "assistant", "tool_calls": [openai_call("a", "{}", "call_3_1"),
                                                 openai_call("b", "{}", None)]}
    expect_error(clash, INVALID_STRUCTURE, "duplicate id", "call_3_1")


@pytest.mark.parametrize("call_id", ["", 12])
def test_openai_id_must_be_non_empty_string(call_id):
    raw = {"role": "assistant", "tool_calls": [openai_call("f", "{}", call_id)]}
    expect_error(raw, INVALID_STRUCTURE, "tool_calls[0]", "id")


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"role": "assistant", "tool_calls": {"name": "f"}}, "'tool_calls' must be a list"),
        ({"tool_calls": "f()"}, "'tool_calls' must be a list"),
        ({"role": "assistant", "tool_calls": ["f"]}, "tool_calls[0]: expected an object"),
        ({"tool_calls": [["f", {}]]}, "tool_calls[0]: expected an object"),
        ("<tool_call>[1]</tool_call>", "tool_calls[0] (<tool_call> block): expected an object"),
        ({"role": "assistant", "tool_calls": [{"type": "function"}]}, "tool_calls[0].function"),
        ({"role": "assistant", "tool_calls": [dict(openai_call("f", "{}"), type="code")]}, "type"),
        ({"role": "assistant", "function_call": {"name": "f"}}, "function_call"),
    ],
)
def test_other_structure_errors(raw, fragment):
    expect_error(raw, INVALID_STRUCTURE, fragment)


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"role": "assistant", "content": {1, 2}}, "action.content: a set is not a JSON value"),
        ({"message": float("nan")}, "nan is not a JSON number"),
        ({"message": b"x"}, "a bytes is not a JSON value"),
        ({"tool_calls": [{"name": "f", "arguments": {"x": json.loads("[" * 40 + "]" * 40)}}]},
         "nested deeper than 32"),
        ({"message": 10**30}, "integer out of range"),
        (["not", "a", "message"], "got list"),
        (None, "got NoneType"),
        (b"bytes", "got bytes"),
    ],
)
def test_values_json_cannot_carry_are_rejected_with_a_short_reason(raw, fragment):
    expect_error(raw, INVALID_NOT_JSON, fragment)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"tool_calls": [{"name": "f", "arguments": {"k" * 50: [1, float("inf")]}}]},
         f"action.tool_calls[0].arguments.{'k' * 39}…[1]: inf is not a JSON number"),
        ({"tool_calls": [{"name": "f", "arguments": {"a": {2: 1}}}]},
         "action.tool_calls[0].arguments.a: key 2 is not a string"),
        ({"message": "x", "tool_calls": ({"name": "f", "arguments": {"b": [[object()]]}},)},
         "action.tool_calls[0].arguments.b[0][0]: a object is not a JSON value"),
    ],
)
def test_a_rejected_value_is_located_by_its_full_path(raw, reason):
    assert wire_form(raw) == {"unrepresentable_action": reason}


@pytest.mark.parametrize("nesting", [40, 1_000, 100_000])
@pytest.mark.parametrize("wrap", [
    lambda deep: "<tool_call>" + json.dumps({"name": "f"})[:-1] + ', "arguments": {"x": ' + deep + "}}</tool_call>",
    lambda deep: '{"message": ' + deep + "}",
    lambda deep: {"role": "assistant", "tool_calls": [openai_call("f", '{"x": ' + deep + "}")]},
])
def test_deep_nesting_in_any_format_is_invalid_json_not_a_crash(nesting, wrap):
    deep = "[" * nesting + "]" * nesting
    err = expect_error(wrap(deep), INVALID_JSON, "nested deeper", max_chars=10**6)
    assert len(str(err)) <= MAX_REASON_CHARS


def test_wire_form_is_json_and_never_raises():
    assert wire_form("a\ud800b") == "a\ufffdb"
    assert wire_form({"message": ("a", "\udfff")}) == {"message": ["a", "\ufffd"]}
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    stand_in = wire_form({"message": nested})
    assert list(stand_in) == ["unrepresentable_action"]
    assert stand_in["unrepresentable_action"].endswith("nested deeper than 32 levels")
    action = AgentAction(tool_calls=[ToolCall(id="c", name="f", arguments={"q": "\ud800"})])
    assert wire_form(action) == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"q": "\ufffd"}'}}]}


def test_reasons_never_echo_huge_input():
    name = "a" * 31_301
    for raw in ({"tool_calls": [{"name": name + "-"}]}, {"role": name}, {name: 1},
                {"role": "assistant", "tool_calls": [openai_call("f", "{}", name)] * 2}):
        err = expect_error(raw, INVALID_STRUCTURE, max_chars=10**6)
        assert len(str(err)) <= MAX_REASON_CHARS


# --- properties -------------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
_calls = st.lists(st.tuples(_names, st.dictionaries(st.text(max_size=6), _json_values, max_size=4)),
                  max_size=4)
_messages = st.none() | st.text(max_size=40).filter(
    lambda s: "think>" not in s and "tool_call>" not in s
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(message=_messages, calls=_calls, turn=st.integers(0, 50))
def test_three_formats_round_trip_to_the_same_action(message, calls, turn):
    stripped = message.strip() if message else ""
    # Bare text that looks like a JSON object is read as format 3, by design.
    assume(calls or not (stripped.startswith("{") and stripped.endswith("}")))
    expected = (stripped or None, [(name, args) for name, args in calls])

    openai = {
        "role": "assistant",
        "content": message,
        "tool_calls": [openai_call(n, json.dumps(a), f"id_{i}") for i, (n, a) in enumerate(calls)],
    }
    hermes = (message or "") + "".join("\n" + hermes_block(n, a) for n, a in calls)
    json_obj = {"message": message, "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}

    parsed = {
        "openai": parse_action(openai, turn=turn, max_chars=10**6),
        "hermes": parse_action(hermes, turn=turn, max_chars=10**6),
        "json_dict": parse_action(json_obj, turn=turn, max_chars=10**6),
        "json_str": parse_action(json.dumps(json_obj), turn=turn, max_chars=10**6),
    }
    for fmt, action in parsed.items():
        got = (action.message, [(c.name, c.arguments) for c in action.tool_calls])
        assert got == expected, fmt
    assert [c.id for c in parsed["openai"].tool_calls] == [f"id_{i}" for i in range(len(calls))]
    generated = [f"call_{turn}_{i}" for i in range(len(calls))]
    for fmt in ("hermes", "json_dict", "json_str"):
        assert [c.id for c in parsed[fmt].tool_calls] == generated, fmt


@settings(max_examples=300, deadline=None)
@given(raw=st.text(max_size=200) | st.from_regex(r"\s*(<think>|</think>|<tool_call>|</tool_call>"
                                                 r"|\{|\}|\"name\"|:|,|\[|\]|\s|[a-z])*",
                                                 fullmatch=True))
def test_arbitrary_text_parses_or_raises_invalid_action(raw):
    try:
        action = parse_action(raw, turn=0)
    except InvalidActionError as err:
        assert err.code in {INVALID_JSON, INVALID_STRUCTURE} and err.detail
    else:
        assert isinstance(action, AgentAction)
        assert action.message is None or action.message == action.message.strip() != ""


class _Text(str):
    """A str subclass: kept as it is by the checked copy, so the plain copy must hand it over."""


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


_any_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats() | st.text(max_size=4)
    | st.sampled_from(["a\ud800", _Text("k"), True, b"x", {1, 2}, 2**63, -(2**63) - 1, float("-inf"), _nested(31),
                       _nested(33)]),
    lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(st.text(max_size=3) | st.sampled_from(["\udfff", _Text("s")]), inner, max_size=3)
    | st.dictionaries(st.integers(0, 2), inner, min_size=1, max_size=2),
    max_leaves=10,
)


def _typed(value):
    """``value`` with the exact type of every part, keys included."""
    if isinstance(value, dict):
        return dict, [(_typed(k), _typed(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return type(value), [_typed(v) for v in value]
    return type(value), repr(value)


def _outcome(copy, value):
    try:
        return _typed(copy(value))
    except Exception as exc:  # noqa: BLE001 (the exception itself is compared)
        return type(exc), str(exc)


@settings(max_examples=500, deadline=None)
@given(value=_any_values)
def test_plain_copy_is_the_checked_copy(value):
    """The fast copy of plain JSON gives what the checked walk gives, and anything else gets the walk's answer."""
    from ecomrlve.actions import _checked_copy, _json_value

    assert _outcome(_json_value, value) == _outcome(_checked_copy, value)


_any_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=8) | st.text(max_size=8)
_encodable = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | _any_text,
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(_any_text, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=500, deadline=None)
@given(value=_encodable, separators=st.sampled_from([(", ", ": "), (",", ":")]))
def test_json_text_encoder_writes_what_json_dumps_writes(value, separators):
    """The encoder made once writes json.dumps's text, NaN and infinities included."""
    from ecomrlve.actions import json_text_encoder

    assert json_text_encoder(separators)(value) == json.dumps(value, ensure_ascii=False, separators=separators)
