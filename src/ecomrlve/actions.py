"""Parse one agent turn into a typed :class:`AgentAction`, whichever of the three equivalent
wire formats it came in (OpenAI message dict, Hermes/Qwen ``<tool_call>`` text, JSON object).
Malformed turns raise :class:`InvalidActionError`; the runtime ends the episode with reward -1.
Whether a tool *exists* is the tools layer's check, not this module's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

INVALID_JSON = "invalid_json"  # unparseable tool-call / action JSON
INVALID_STRUCTURE = "invalid_structure"  # wrong shape, keys, types, unclosed tags, role
INVALID_TOO_LONG = "too_long"  # the raw output exceeds max_chars

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL)
_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_FLAT_KEYS = frozenset({"name", "arguments"})
_JSON_KEYS = frozenset({"message", "tool_calls"})
_OPENAI_CALL_KEYS = frozenset({"id", "type", "function"})
_OPENAI_KEYS = frozenset(  # name/refusal/reasoning_content: server extras, nothing to act on
    {"role", "content", "tool_calls", "name", "refusal", "reasoning_content", "function_call"})


class ToolCall(BaseModel):
    """One requested tool invocation; ``id`` pairs it with its result message."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    name: str
    arguments: dict[str, Any]


class AgentAction(BaseModel):
    """What the agent did this turn: talk to the user, call tools, both, or neither."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    message: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class InvalidActionError(ValueError):
    """A malformed turn: ``code`` is one of the ``INVALID_*`` constants, ``detail`` says where."""
    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across rollout worker processes
        return (type(self), (self.code, self.detail))


def _structure(detail: str) -> InvalidActionError:
    return InvalidActionError(INVALID_STRUCTURE, detail)


def _loads(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidActionError(INVALID_JSON, f"{where}: invalid JSON: {exc}") from None


def _object(obj: Any, allowed: frozenset[str], where: str) -> dict[str, Any]:
    """Unknown keys usually mean another schema was emitted; name them rather than guess."""
    if not isinstance(obj, dict):
        raise _structure(f"{where}: expected an object, got {type(obj).__name__}")
    if extra := obj.keys() - allowed:
        raise _structure(f"{where}: unknown keys {sorted(extra)}; allowed: {sorted(allowed)}")
    return obj


def _entries(value: Any) -> list[Any] | tuple[Any, ...]:
    if value is None or isinstance(value, (list, tuple)):
        return value or ()
    raise _structure(f"'tool_calls' must be a list, got {type(value).__name__}")


def _make_call(call_id: str, name: Any, arguments: Any, where: str) -> ToolCall:
    """Validate name and arguments once, by hand, then build without re-validating."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        why = "missing tool name" if name is None else f"invalid tool name {name!r}"
        raise _structure(f"{where}: {why} (need a string matching [A-Za-z_][A-Za-z0-9_]*)")
    if isinstance(arguments, str):  # OpenAI style; other formats may double-encode too
        arguments = _loads(arguments, f"{where} ({name}) arguments") if arguments.strip() else None
    if arguments is None or isinstance(arguments, Mapping):
        arguments = dict(arguments or ())
        if not all(isinstance(key, str) for key in arguments):
            raise _structure(f"{where} ({name}): argument names must be strings")
    else:
        kind = type(arguments).__name__
        raise _structure(f"{where} ({name}): arguments must be a JSON object, got {kind}")
    return ToolCall.model_construct(id=call_id, name=name, arguments=arguments)


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
            raise _structure(f"tool_calls[{i}]: duplicate id {call.id!r} (as tool_calls[{j}])")
    message = (message.strip() or None) if message else None
    return AgentAction.model_construct(message=message, tool_calls=tuple(calls))


def _from_openai(raw: dict[str, Any], turn: int) -> AgentAction:
    _object(raw, _OPENAI_KEYS, "OpenAI message")
    if (role := raw.get("role", "assistant")) != "assistant":
        raise _structure(f"role must be 'assistant', got {role!r}")
    if raw.get("function_call") is not None:
        raise _structure("legacy 'function_call' is not supported; use 'tool_calls'")
    calls = []
    for i, entry in enumerate(_entries(raw.get("tool_calls"))):
        where = f"tool_calls[{i}]"
        entry = _object(entry, _OPENAI_CALL_KEYS, where)
        if entry.get("type", "function") != "function":
            raise _structure(f"{where}: type must be 'function', got {entry['type']!r}")
        fn = _object(entry.get("function"), _FLAT_KEYS, f"{where}.function")
        call_id = entry.get("id")
        if call_id is None:
            call_id = f"call_{turn}_{i}"
        elif not isinstance(call_id, str) or not call_id:
            raise _structure(f"{where}: id must be a non-empty string, got {call_id!r}")
        calls.append(_make_call(call_id, fn.get("name"), fn.get("arguments"), where))
    return _action(raw.get("content"), "content", calls)


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


def parse_action(
    raw: str | Mapping[str, Any] | AgentAction, *, turn: int, max_chars: int = 32_000
) -> AgentAction:
    """Parse one turn in any of the three formats; ``turn`` keeps generated ids unique."""
    if isinstance(raw, AgentAction):
        return raw
    if isinstance(raw, str):
        if len(raw) > max_chars:
            raise InvalidActionError(INVALID_TOO_LONG, f"{len(raw)} chars > max {max_chars}")
        text = _strip_think(raw).strip()
        if text.startswith("{") and text.endswith("}"):
            return _from_json_object(_loads(text, "action JSON object"), turn)
        return _from_hermes(text, turn)
    if isinstance(raw, Mapping):
        raw = raw if isinstance(raw, dict) else dict(raw)
        try:
            size = len(json.dumps(raw, ensure_ascii=False))
        except (TypeError, ValueError) as exc:
            raise _structure(f"action is not JSON-serialisable: {exc}") from None
        if size > max_chars:
            raise InvalidActionError(INVALID_TOO_LONG, f"{size} chars as JSON > max {max_chars}")
        if "role" in raw or "content" in raw:
            return _from_openai(raw, turn)
        return _from_json_object(raw, turn)
    raise _structure(f"expected a str, a mapping or an AgentAction, got {type(raw).__name__}")
