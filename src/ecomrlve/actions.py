"""Parse one agent turn into a typed :class:`AgentAction`, whichever of the three equivalent
wire formats it came in (OpenAI message dict, Hermes/Qwen ``<tool_call>`` text, JSON object).
Malformed turns raise :class:`InvalidActionError`; the runtime ends the episode with reward -1.
Whether a tool *exists* is the tools layer's check, not this module's.

Every input path, a Python :class:`AgentAction` included, first goes through :func:`wire_form`:
the one normalisation that turns a turn into the JSON value that is both parsed and recorded,
so a live episode and its replay see exactly the same input.
"""

from __future__ import annotations

import json
import json.encoder
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from pydantic import BaseModel, ConfigDict

INVALID_JSON = "invalid_json"  # unparseable tool-call / action JSON
INVALID_STRUCTURE = "invalid_structure"  # wrong shape, keys, types, unclosed tags, role
INVALID_TOO_LONG = "too_long"  # the raw output exceeds max_chars
INVALID_NOT_JSON = "not_json"  # a Python action holding values JSON cannot carry (sets, bytes, NaN, ...)

MAX_DEPTH = 32  # deepest JSON nesting an action may have; real actions need about 8 levels
MAX_INTEGER = 2**63  # larger integers are not portable JSON numbers
MAX_REASON_CHARS = 240  # invalid reasons are for people and logs: never an echo of the input
_UNREPRESENTABLE = "unrepresentable_action"  # recorded stand-in for a turn that is not JSON

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL)
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_FLAT_KEYS = frozenset({"name", "arguments"})
_JSON_KEYS = frozenset({"message", "tool_calls"})
_OPENAI_CALL_KEYS = frozenset({"id", "type", "function"})
_OPENAI_KEYS = frozenset(  # name/refusal/reasoning_content: server extras, nothing to act on
    {"role", "content", "tool_calls", "name", "refusal", "reasoning_content", "function_call"})


def json_text_encoder(separators: tuple[str, str] = (", ", ": ")) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, separators=separators)`` for acyclic values (what
    :func:`wire_form` and the tools build), made once: :meth:`json.JSONEncoder.encode` sets up a
    C encoder on every call, most of the cost of encoding a small object. Circular values are not
    detected (the recursion limit stops them)."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=separators, check_circular=False)
    make = getattr(json.encoder, "c_make_encoder", None)  # None where the C accelerator is missing
    if make is None:
        return encoder.encode
    # the arguments encode() passes for a one-shot encoding without circular checks: the same text
    chunks = make(None, encoder.default, json.encoder.encode_basestring, None, encoder.key_separator,
                  encoder.item_separator, False, False, True)
    return lambda value: "".join(chunks(value, 0))


#: ``json.dumps(value, ensure_ascii=False)`` of a JSON value
_json_text = json_text_encoder()


class ToolCall(BaseModel):
    """One requested tool invocation; ``id`` pairs it with its result message."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    name: str
    arguments: dict[str, Any]


def numbered_call(name: str, index: int, **arguments: Any) -> ToolCall:
    """The ``index``-th tool call of a turn, with id ``call_<index>`` (how the scripted baselines number theirs)."""
    return ToolCall(id=f"call_{index}", name=name, arguments=arguments)


class AgentAction(BaseModel):
    """What the agent did this turn: talk to the user, call tools, both, or neither."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    message: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class InvalidActionError(ValueError):
    """A malformed turn: ``code`` is one of the ``INVALID_*`` constants, ``detail`` says where."""
    def __init__(self, code: str, detail: str) -> None:
        detail = short_text(detail, MAX_REASON_CHARS - len(code) - 2)
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across rollout worker processes
        return (type(self), (self.code, self.detail))


def short_text(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` cut to ``limit`` characters (marked with an ellipsis), for reasons and messages."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _structure(detail: str) -> InvalidActionError:
    return InvalidActionError(INVALID_STRUCTURE, detail)


def _clean_text(text: str) -> str:
    """Lone surrogates cannot be written as UTF-8: they become U+FFFD, as any UTF-8 transport would."""
    return text if text.isascii() else _SURROGATE_RE.sub("\ufffd", text)


class _NotJson(Exception):
    """Raised inside :func:`_json_value`; becomes an ``INVALID_NOT_JSON`` or ``INVALID_JSON`` error."""


_Path: TypeAlias = "str | tuple[_Path, str | int]"  # "action", or (parent, key or index); see _where


def _where(path: _Path) -> str:
    """Where ``path`` points, e.g. ``action.tool_calls[0].function``."""
    parts: list[str] = []
    while isinstance(path, tuple):
        path, slot = path
        parts.append(f".{short_text(slot, 40)}" if isinstance(slot, str) else f"[{slot}]")
    return path + "".join(reversed(parts))


class _NotPlain(Exception):
    """Raised inside :func:`_plain_copy`: the value needs :func:`_checked_copy`'s care."""


def _json_value(value: Any) -> Any:
    """A copy of ``value`` made only of JSON types (tuples become lists, text is valid UTF-8).

    Raises :class:`_NotJson` for nesting deeper than ``MAX_DEPTH``, non-finite or huge numbers,
    non-string keys and non-JSON objects. Nearly every turn is plain JSON already (what
    ``json.loads`` returns, what an agent builds): :func:`_plain_copy` copies those; anything
    else goes to :func:`_checked_copy`, which cleans it or names the first problem.
    """
    try:
        return _plain_copy(value, 1)
    except _NotPlain:
        return _checked_copy(value)


def _plain_copy(value: Any, depth: int) -> Any:
    """:func:`_checked_copy` of a value made only of the exact JSON types (no subclasses), with
    clean text, in-range numbers and at most ``MAX_DEPTH`` levels; raises :class:`_NotPlain` on
    anything else. Recursive: the depth limit bounds the stack."""
    kind = type(value)
    if kind is str:
        if value.isascii() or not _SURROGATE_RE.search(value):
            return value
    elif kind is dict:
        if depth <= MAX_DEPTH:
            copy = {}
            for key, child in value.items():
                if type(key) is not str or not (key.isascii() or not _SURROGATE_RE.search(key)):
                    raise _NotPlain
                # ASCII text and null, the commonest leaves, without a call
                copy[key] = child if child is None or (type(child) is str and child.isascii()) else \
                    _plain_copy(child, depth + 1)
            return copy
    elif kind is list or kind is tuple:
        if depth <= MAX_DEPTH:
            return [child if child is None or (type(child) is str and child.isascii()) else _plain_copy(child, depth + 1)
                    for child in value]
    elif value is None or kind is bool:
        return value
    elif kind is int:
        if -MAX_INTEGER <= value <= MAX_INTEGER:
            return value
    elif kind is float:
        if math.isfinite(value):
            return value
    raise _NotPlain


def _checked_copy(value: Any) -> Any:
    """:func:`_json_value` of any value: iterative, so hostile nesting cannot exhaust the stack.
    Each value's location is kept as a path of tuples and spelled out only in an error message."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int, _Path]] = [(value, root, 0, 1, "action")]
    while stack:
        item, parent, slot, depth, path = stack.pop()
        if isinstance(item, str):
            parent[slot] = _clean_text(item)
        elif item is None or isinstance(item, bool):
            parent[slot] = item
        elif isinstance(item, int):
            if abs(item) > MAX_INTEGER:
                raise _NotJson(f"{_where(path)}: integer out of range (|n| > 2**63)")
            parent[slot] = int(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise _NotJson(f"{_where(path)}: {item!r} is not a JSON number")
            parent[slot] = float(item)
        elif isinstance(item, (Mapping, list, tuple)):
            if depth > MAX_DEPTH:
                raise _NotJson(f"{_where(path)}: nested deeper than {MAX_DEPTH} levels")
            if isinstance(item, Mapping):
                copy: Any = {}
                for key, child in item.items():
                    if not isinstance(key, str):
                        raise _NotJson(f"{_where(path)}: key {short_text(repr(key), 40)} is not a string")
                    key = _clean_text(key)
                    copy[key] = None
                    stack.append((child, copy, key, depth + 1, (path, key)))
            else:
                copy = [None] * len(item)
                stack.extend((child, copy, i, depth + 1, (path, i)) for i, child in enumerate(item))
            parent[slot] = copy
        else:
            raise _NotJson(f"{_where(path)}: a {type(item).__name__} is not a JSON value")
    return root[0]


def _agent_action_wire(action: AgentAction) -> dict[str, Any]:
    """An :class:`AgentAction` as the OpenAI assistant message it stands for."""
    message: dict[str, Any] = {"role": "assistant", "content": action.message}
    calls = []
    for i, call in enumerate(action.tool_calls):
        if not isinstance(call, ToolCall):
            raise _NotJson(f"tool_calls[{i}]: a {type(call).__name__} is not a ToolCall")
        calls.append({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}})
    if calls:
        message["tool_calls"] = calls
    message = _json_value(message)
    for call in message.get("tool_calls", ()):  # recorded as an OpenAI server sends them: JSON text
        function = call["function"]
        if isinstance(function["arguments"], dict):
            function["arguments"] = arguments_text(function["arguments"])
    return message


def arguments_text(arguments: dict[str, Any]) -> str:
    """A call's JSON arguments as text, as an OpenAI server sends them and a transcript records them."""
    return _json_text(arguments)


def wire_form(raw: Any) -> Any:
    """The JSON value of one turn, whatever its input path; what the runtime parses and records.

    Text stays text (lone surrogates replaced); mappings are copied to plain JSON; an
    :class:`AgentAction` becomes its OpenAI assistant message. A turn that is not JSON (a set,
    bytes, NaN, a non-string key, nesting deeper than ``MAX_DEPTH``) becomes a small stand-in
    that :func:`parse_action` rejects with the same reason, live and on replay. Never raises.
    """
    try:
        if isinstance(raw, str):
            return _clean_text(raw)
        if isinstance(raw, AgentAction):
            return _agent_action_wire(raw)
        if isinstance(raw, Mapping):
            return _json_value(raw)
        raise _NotJson(f"expected a str, a mapping or an AgentAction, got {type(raw).__name__}")
    except _NotJson as exc:
        return {_UNREPRESENTABLE: short_text(str(exc))}


def _loads(text: str, where: str) -> Any:
    try:
        return _json_value(json.loads(text))
    except json.JSONDecodeError as exc:
        raise InvalidActionError(INVALID_JSON, f"{where}: invalid JSON: {exc}") from None
    except RecursionError:
        raise InvalidActionError(INVALID_JSON, f"{where}: nested deeper than {MAX_DEPTH} levels") from None
    except (_NotJson, ValueError) as exc:  # ValueError: integers too long to convert
        raise InvalidActionError(INVALID_JSON, f"{where}: {exc}") from None


def _object(obj: Any, allowed: frozenset[str], where: str) -> dict[str, Any]:
    """Unknown keys usually mean another schema was emitted; name them rather than guess."""
    if not isinstance(obj, dict):
        raise _structure(f"{where}: expected an object, got {type(obj).__name__}")
    if not obj.keys() <= allowed:  # a subset test builds no set
        unknown = sorted(short_text(repr(key), 40) for key in obj.keys() - allowed)
        raise _structure(f"{where}: unknown keys [{', '.join(unknown)}]; allowed: {sorted(allowed)}")
    return obj


def _entries(value: Any) -> list[Any] | tuple[Any, ...]:
    if value is None or isinstance(value, (list, tuple)):
        return value or ()
    raise _structure(f"'tool_calls' must be a list, got {type(value).__name__}")


def _make_call(call_id: str, name: Any, arguments: Any, where: str) -> ToolCall:
    """Check name and arguments by hand (for the errors' wording), then build the call."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        why = "missing tool name" if name is None else f"invalid tool name {short_text(repr(name), 60)}"
        raise _structure(f"{where}: {why} (need a string matching [A-Za-z_][A-Za-z0-9_]*)")
    if isinstance(arguments, str):  # OpenAI style; other formats may double-encode too
        arguments = _loads(arguments, f"{where} ({name}) arguments") if arguments.strip() else None
    if arguments is not None and not isinstance(arguments, dict):  # keys are strings: see wire_form
        kind = type(arguments).__name__
        raise _structure(f"{where} ({name}): arguments must be a JSON object, got {kind}")
    # validating (which copies the arguments dict) is quicker than model_construct
    return ToolCall(id=call_id, name=name, arguments=arguments or {})


def _flat_call(obj: Any, where: str, call_id: str) -> ToolCall:
    """A ``{"name": ..., "arguments": ...}`` call, as in Hermes blocks and the JSON format."""
    obj = _object(obj, _FLAT_KEYS, where)
    return _make_call(call_id, obj.get("name"), obj.get("arguments"), where)


def _action(message: Any, field: str, calls: list[ToolCall]) -> AgentAction:
    """Blank text says nothing (-> None); tool results are matched by id, so ids are unique."""
    if message is not None and not isinstance(message, str):
        raise _structure(f"'{field}' must be a string or null, got {type(message).__name__}")
    seen: dict[str, int] = {}
    for i, call in enumerate(calls):
        j = seen.setdefault(call.id, i)
        if j != i:
            raise _structure(f"tool_calls[{i}]: duplicate id {short_text(repr(call.id), 60)} (as tool_calls[{j}])")
    message = (message.strip() or None) if message else None
    return AgentAction(message=message, tool_calls=tuple(calls))  # validating these is quicker than model_construct


def _from_openai(raw: dict[str, Any], turn: int) -> AgentAction:
    _object(raw, _OPENAI_KEYS, "OpenAI message")
    if (role := raw.get("role", "assistant")) != "assistant":
        raise _structure(f"role must be 'assistant', got {short_text(repr(role), 60)}")
    if raw.get("function_call") is not None:
        raise _structure("legacy 'function_call' is not supported; use 'tool_calls'")
    calls = []
    for i, entry in enumerate(_entries(raw.get("tool_calls"))):
        where = f"tool_calls[{i}]"
        entry = _object(entry, _OPENAI_CALL_KEYS, where)
        if entry.get("type", "function") != "function":
            raise _structure(f"{where}: type must be 'function', got {short_text(repr(entry['type']), 60)}")
        fn = _object(entry.get("function"), _FLAT_KEYS, f"{where}.function")
        calls.append(_make_call(_call_id(entry.get("id"), where, turn, i), fn.get("name"), fn.get("arguments"), where))
    return _action(raw.get("content"), "content", calls)


def _call_id(call_id: Any, where: str, turn: int, i: int) -> str:
    if call_id is None:
        return f"call_{turn}_{i}"
    if not isinstance(call_id, str) or not call_id:
        raise _structure(f"{where}: id must be a non-empty string, got {short_text(repr(call_id), 60)}")
    return call_id


def _from_own_wire(raw: dict[str, Any], source: AgentAction, turn: int) -> AgentAction:
    """:func:`_from_openai` of ``raw = wire_form(source)``: its shape is right by construction, and each call's
    arguments are the plain copy of ``source``'s (the values its JSON text was written from, which ``json.loads``
    would give back, types included). Raises :class:`_NotPlain` where a copy is not plain (then parse the text)."""
    calls = []
    for i, (call, entry) in enumerate(zip(source.tool_calls, raw.get("tool_calls", ()))):
        where = f"tool_calls[{i}]"
        arguments = _plain_copy(call.arguments, 1)
        calls.append(_make_call(_call_id(entry["id"], where, turn, i), entry["function"]["name"], arguments, where))
    return _action(raw["content"], "content", calls)


def _from_json_object(obj: dict[str, Any], turn: int) -> AgentAction:
    _object(obj, _JSON_KEYS, "action JSON object")
    entries = _entries(obj.get("tool_calls"))
    calls = [_flat_call(e, f"tool_calls[{i}]", f"call_{turn}_{i}") for i, e in enumerate(entries)]
    return _action(obj.get("message"), "message", calls)


def _strip_think(text: str) -> str:
    """Reasoning is not addressed to the user; drop it (Qwen3 may omit the opening tag)."""
    close = text.find("</think>")
    if close != -1 and "<think>" not in text[:close]:
        text = text[close + len("</think>"):]
    text = _THINK_RE.sub("", text)
    if "<think>" in text:
        raise _structure("unclosed <think> block")
    if "</think>" in text:
        raise _structure("</think> without a matching <think>")
    return text


def _from_hermes(text: str, turn: int) -> AgentAction:
    pieces = _TOOL_CALL_RE.split(text)  # [outside, body, outside, body, ..., outside]
    if "<tool_call>" in pieces[-1]:
        raise _structure(f"tool_calls[{len(pieces) // 2}]: unclosed <tool_call> block")
    outside = "".join(pieces[::2])  # the message to the user
    if "</tool_call>" in outside:
        raise _structure("</tool_call> without a matching <tool_call>")
    calls = []
    for i, body in enumerate(pieces[1::2]):
        where = f"tool_calls[{i}] (<tool_call> block)"
        calls.append(_flat_call(_loads(body, where), where, f"call_{turn}_{i}"))
    return _action(outside, "message", calls)


def parse_action(raw: Any, *, turn: int, max_chars: int = 32_000) -> AgentAction:
    """Parse one turn in any of the three formats or as an :class:`AgentAction`.

    Every path goes through :func:`wire_form` first, so the same checks (size, duplicate ids,
    blank messages, JSON-only values) apply to all; ``turn`` keeps generated ids unique.
    """
    return parse_wire_form(wire_form(raw), turn=turn, max_chars=max_chars)


def parse_wire_form(raw: Any, *, turn: int, max_chars: int = 32_000, source: AgentAction | None = None) -> AgentAction:
    """:func:`parse_action` of a turn already in :func:`wire_form` (which the runtime records
    anyway), without copying it to JSON values a second time. ``source``: the :class:`AgentAction` that
    ``raw`` is the wire form of, if any; its calls' arguments are then copied from it rather than parsed back
    from their JSON text (the same action)."""
    if isinstance(raw, str):
        if len(raw) > max_chars:
            raise InvalidActionError(INVALID_TOO_LONG, f"{len(raw)} chars > max {max_chars}")
        text = _strip_think(raw).strip()
        if text.startswith("{") and text.endswith("}"):
            return _from_json_object(_loads(text, "action JSON object"), turn)
        return _from_hermes(text, turn)
    if raw.keys() == {_UNREPRESENTABLE}:
        raise InvalidActionError(INVALID_NOT_JSON, str(raw[_UNREPRESENTABLE]))
    size = len(_json_text(raw))
    if size > max_chars:
        raise InvalidActionError(INVALID_TOO_LONG, f"{size} chars as JSON > max {max_chars}")
    if source is not None and len(source.tool_calls) == len(raw.get("tool_calls", ())):
        try:
            return _from_own_wire(raw, source, turn)
        except _NotPlain:
            pass
    if "role" in raw or "content" in raw:
        return _from_openai(raw, turn)
    return _from_json_object(raw, turn)
