"""A seeded generator of hostile agent turns and a driver that plays them through every environment.

Used by ``tests/test_fuzz.py`` (CI, about 10,000 turns) and ``benchmarks/bench_fuzz.py`` (100,000+).
Each turn is built from the tools the observation offers, with values drawn from pools of
hostile inputs (zero-width and control characters, lone surrogates, ids with junk inside, huge
and non-finite numbers, wrong types), then encoded in one of the input paths (OpenAI dict,
Hermes text, JSON-object text, JSON-object dict, Python ``AgentAction``) and, sometimes, broken
structurally (deep nesting, duplicate ids, unknown tools and keys, oversize, truncation). The
driver checks what the runtime promises: no exception escapes ``step``, an invalid turn ends the
episode with reward -1 and a short reason, turns that must be invalid are, and every record
serialises and replays identically.
"""

from __future__ import annotations

import json
import random
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ecomrlve.actions import MAX_REASON_CHARS, AgentAction, ToolCall
from ecomrlve.envs import env_collections
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Observation
from ecomrlve.runner import replay
from ecomrlve.session import EpisodeRecord

PATHS = ("openai", "hermes", "json_text", "json_dict", "agent_action")
JUNK = ("\u200b", "\u00e9", "\x00", "\ufeff", "\u2060", "\ud800", "\udfff", "\x1b[31m", "\n", "\t")
PLAIN = ("usb charger", "Chargers", "red", "USB-C", "2024-01-01", "yes", "headphones", "cotton", "return",
         "where is my order", "what is the return window")
STRINGS = ("", " ", "{", "}", "[[", "<tool_call>", "</tool_call>", "<think>", "</think>", "Infinity", "NaN", "null",
           "\\u0000", "😀" * 3, "ORD-0000000", "P00000000", "x" * 300)
NUMBERS = (0, 1, 2, 3, -1, 10, 2**31, 2**53 + 1, 2**63, 2**64, 10**30, 0.5, -0.0, 1e-320, 1e308, -1e308,
           float("nan"), float("inf"), float("-inf"), True, False)
_DEEP = "<deeply nested value>"
_MUTATION_PATHS = {  # the input paths in which a mutation can be expressed
    "unknown_top_key": ("openai", "json_dict"),  # (in JSON text a "</think>" inside may turn it into plain text)
    "role_user": ("openai", "json_dict", "hermes"),
    "duplicate_ids": ("openai", "agent_action"),
    "not_json": ("openai", "json_dict", "agent_action"),
    "unclosed_tag": ("hermes", "json_text"),
}
MUST_BE_INVALID = {"deep_nesting", "unknown_tool", "unknown_top_key", "duplicate_ids", "oversize", "not_json",
                   "wrong_top_type", "role_user", "unclosed_tag"}


@dataclass
class FuzzStats:
    """What a fuzz run saw; ``failures`` must stay empty."""

    turns: int = 0
    episodes: int = 0
    invalid_turns: int = 0
    by_path: Counter = field(default_factory=Counter)
    by_mutation: Counter = field(default_factory=Counter)
    terminations: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)  # invalid reasons by their code
    failures: list[str] = field(default_factory=list)  # the first 20, in full
    failure_kinds: Counter = field(default_factory=Counter)  # all of them, by kind

    def fail(self, kind: str, what: str) -> None:
        self.failure_kinds[kind] += 1
        if len(self.failures) < 20:
            self.failures.append(what)


class HostileTurns:
    """Turns for one episode, built from its observations; remembers ids the episode showed."""

    def __init__(self, rng: random.Random, catalog_ids: list[str]) -> None:
        self.rng = rng
        self.catalog_ids = catalog_ids
        self.seen_ids: list[str] = []
        self.tools: list[dict[str, Any]] = []

    def observe(self, observation: Observation) -> None:
        if observation.tools is not None:
            self.tools = [t["function"] for t in observation.tools]
        for message in observation.messages:
            for token in str(message.get("content") or "").replace('"', " ").split():
                if token[:1] in "PO" and any(c.isdigit() for c in token) and len(token) < 40:
                    self.seen_ids.append(token.strip(".,;:!?()[]{}'"))
        del self.seen_ids[:-50]

    # -- values -----------------------------------------------------------------------------------

    def _an_id(self) -> str:
        pool = self.seen_ids if self.seen_ids and self.rng.random() < 0.7 else self.catalog_ids
        value = self.rng.choice(pool)
        if self.rng.random() < 0.3:
            at = self.rng.randrange(len(value) + 1)
            value = value[:at] + self.rng.choice(JUNK) + value[at:]
        return value

    def _string(self) -> str:
        roll = self.rng.random()
        if roll < 0.35:
            return self._an_id()
        if roll < 0.75:
            return self.rng.choice(PLAIN)
        return self.rng.choice(STRINGS) + (self.rng.choice(JUNK) if roll < 0.9 else "")

    def _value(self, schema: dict[str, Any], depth: int = 0) -> Any:
        roll = self.rng.random()
        if roll < 0.03:  # the wrong type on purpose
            return self.rng.choice([None, [], {}, "7", 7, 7.5, [self._string()], {"k": 1}])
        kinds = schema.get("type") or [s.get("type") for s in schema.get("anyOf", []) if s.get("type") != "null"]
        kind = kinds if isinstance(kinds, str) else (self.rng.choice(kinds) if kinds else "string")
        if "enum" in schema and roll < 0.8:
            return self.rng.choice(schema["enum"])
        if kind == "integer":
            return self.rng.choice(NUMBERS[:5]) if roll < 0.8 else self.rng.choice(NUMBERS)
        if kind == "number":
            return self.rng.choice((0.5, 1, 10.0, 50, 99.99)) if roll < 0.7 else self.rng.choice(NUMBERS)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "array" and depth < 3:
            return [self._value(schema.get("items", {}), depth + 1) for _ in range(self.rng.randrange(4))]
        if kind == "object" and depth < 3:
            properties = schema.get("properties", {})
            names = self.rng.sample(sorted(properties), k=min(len(properties), self.rng.randrange(4)))
            return {name: self._value(properties[name], depth + 1) for name in names}
        return self._string()

    def _arguments(self, tool: dict[str, Any]) -> dict[str, Any]:
        properties = tool.get("parameters", {}).get("properties", {})
        required = tool.get("parameters", {}).get("required", [])
        names = set(required) | {n for n in properties if self.rng.random() < 0.4}
        return {name: self._value(properties[name]) for name in sorted(names)}

    def _message(self) -> str | None:
        roll = self.rng.random()
        if roll < 0.3:
            return None
        if roll < 0.6:
            return f"How about {self._an_id()}{self.rng.choice(['.', '?', ' and ' + self._an_id()])}"
        return " ".join(self._string() for _ in range(self.rng.randrange(1, 5)))

    # -- one turn ---------------------------------------------------------------------------------

    def turn(self) -> tuple[Any, str, str]:
        """``(raw action, input path, mutation)``; after a mutation in ``MUST_BE_INVALID`` the turn must
        be invalid unless ``self.certain`` is False (JSON text holding "</think>" may read as plain text)."""
        self.certain = True
        # Most turns are well formed with hostile values, so that episodes run long enough to reach
        # deep states; answering (which ends the episode) is rare for the same reason.
        tools = [t for t in self.tools if t["name"] != "answer" or self.rng.random() < 0.1]
        calls = [(tool["name"], self._arguments(tool))
                 for tool in self.rng.sample(tools, k=min(len(tools), self.rng.choice([0, 1, 1, 1, 2, 3])))]
        message = self._message()
        mutation = "none" if self.rng.random() < 0.85 else self.rng.choice(sorted(MUST_BE_INVALID) + ["junk_key", "truncate"])
        self.depth = 0
        if mutation == "deep_nesting" and calls:
            self.depth = self.rng.choice([40, 1_000, 20_000])
            calls[0] = (calls[0][0], {**calls[0][1], "deep": _DEEP})
        elif mutation == "deep_nesting":
            mutation = "none"
        if mutation == "unknown_tool":
            calls.append((self.rng.choice(["hack", "a" * self.rng.choice([5, 31_000]), "answer_", "exec"]), {}))
        path = self.rng.choice(_MUTATION_PATHS.get(mutation, PATHS))
        raw = self._encode(path, message, calls, mutation)
        return raw, path, mutation

    def _dumps(self, value: Any) -> str:
        """JSON text as a sloppy model writes it: NaN/Infinity allowed, non-ASCII escaped or not; a
        value JSON cannot encode becomes its repr (invalid JSON); the deep-nesting marker is expanded."""
        try:
            text = json.dumps(value, ensure_ascii=self.rng.random() < 0.5, default=repr)
        except (ValueError, RecursionError):
            text = "{" + repr(type(value)) + "}"
        return text.replace(json.dumps(_DEEP), "[" * self.depth + '"x"' + "]" * self.depth)

    def _encode(self, path: str, message: str | None, calls: list[tuple[str, dict]], mutation: str) -> Any:
        rng = self.rng
        if mutation == "wrong_top_type":
            return rng.choice([None, 7, 7.5, ["message"], b"bytes", {"message"}])
        if mutation == "not_json":  # only a Python caller can send these
            calls = calls or [("cart_view", {})]
            calls[0] = (calls[0][0], {**calls[0][1], "bad": rng.choice([{1, 2}, b"x", float("nan"), object()])})
        if self.depth and path in ("json_dict", "agent_action", "openai"):
            nested: Any = "x"
            for _ in range(self.depth):
                nested = [nested]
            calls[0] = (calls[0][0], {**calls[0][1], "deep": nested})
        ids = [f"c{i}" for i in range(len(calls))]
        if mutation == "duplicate_ids":
            calls = calls * 2 if calls else [("cart_view", {})] * 2
            ids = ["same"] * len(calls)
        if mutation == "oversize":
            message = "x" * rng.choice([32_001, 40_000, 100_000])
        if path == "agent_action":
            return AgentAction.model_construct(message=message, tool_calls=tuple(
                ToolCall.model_construct(id=i, name=n, arguments=a) for i, (n, a) in zip(ids, calls)))
        if path == "openai":
            raw: Any = {"role": "user" if mutation == "role_user" else "assistant", "content": message}
            if calls:
                raw["tool_calls"] = [{"id": i, "type": "function", "function": {
                    "name": n, "arguments": self._dumps(a) if mutation != "not_json" and rng.random() < 0.7 else a}} for i, (n, a) in zip(ids, calls)]
        else:
            raw = {"message": message, "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}
            if mutation == "role_user":
                raw["role"] = "user"
        if mutation == "unknown_top_key":
            raw["temperature"] = 0.7
        if mutation == "junk_key" and calls:
            raw.setdefault("tool_calls", [{}])[0][rng.choice(JUNK) + "x"] = 1
        if path in ("openai", "json_dict"):
            return raw
        if path == "json_text":
            text = self._dumps(raw)
            self.certain = "think>" not in text
        else:
            text = (message or "") + "".join(f"\n<tool_call>\n{self._dumps({'name': n, 'arguments': a})}\n</tool_call>"
                                             for n, a in calls)
        if mutation in ("unclosed_tag", "role_user"):  # no role in Hermes text: leave a block open instead
            text += rng.choice(["<tool_call>", "<tool_call>{", "<think>"])
        if mutation == "truncate" and len(text) > 2:
            text = text[: rng.randrange(1, len(text))]
        return text


def fuzz(turns: int, seed: int, catalog, search, *, env_ids: tuple[str, ...] | None = None,
         max_difficulty: int = 12) -> FuzzStats:
    """Play hostile episodes until ``turns`` turns were stepped; check every promise; return stats."""
    env_ids = env_ids or env_collections()["C8"]
    rng = random.Random(f"fuzz:{seed}")
    env = EcomEnv(list(env_ids), catalog=catalog, search=search)
    again = EcomEnv(list(env_ids), catalog=catalog, search=search)
    catalog_ids = [catalog.product_id(row) for row in range(0, len(catalog), max(1, len(catalog) // 500))]
    stats = FuzzStats()
    while stats.turns < turns:
        env_id, d, ep_seed = rng.choice(env_ids), rng.randint(0, max_difficulty), rng.getrandbits(31)
        observation = env.reset(env_id=env_id, difficulty=d, seed=ep_seed)
        generator = HostileTurns(random.Random(f"fuzz:{seed}:{stats.episodes}"), catalog_ids)
        stats.episodes += 1
        where = f"{env_id} d={d} seed={ep_seed}"
        while not observation.done and stats.turns < turns:
            generator.observe(observation)
            raw, path, mutation = generator.turn()
            stats.turns += 1
            stats.by_path[path] += 1
            stats.by_mutation[mutation] += 1
            try:
                observation = env.step(raw)
            except Exception:  # noqa: BLE001 - the property under test: nothing escapes step
                stats.fail("uncaught exception", f"{where} turn {stats.turns} ({path}, {mutation}): {traceback.format_exc(limit=-3)}")
                break
            termination = observation.info.get("termination")
            if termination == "invalid_output":
                stats.invalid_turns += 1
                reason = observation.info.get("invalid_reason") or ""
                stats.reasons[reason.split(":", 1)[0]] += 1
                if observation.reward != -1.0 or not reason or len(reason) > MAX_REASON_CHARS:
                    stats.fail("bad invalid-turn reward/reason", f"{where}: invalid turn with reward {observation.reward} and reason {reason[:80]!r}")
            elif mutation in MUST_BE_INVALID and generator.certain:
                stats.fail("must-be-invalid turn accepted", f"{where}: a {mutation} turn ({path}) was accepted")
        if not env.done:
            continue
        stats.terminations[env.record.reward.termination if env.record.reward else "none"] += 1
        _check_record(env, again, where, stats)
    return stats


def _check_record(env: EcomEnv, again: EcomEnv, where: str, stats: FuzzStats) -> None:
    try:
        line = env.record.to_json()
        replayed = replay(again, EpisodeRecord.model_validate_json(line)).to_json()
    except Exception:  # noqa: BLE001 - an unwritable or unreplayable record is the failure reported
        stats.fail("record not writable or replayable", f"{where}: record not writable/replayable: {traceback.format_exc(limit=-3)}")
        return
    if replayed != line:
        stats.fail("replay differs", f"{where}: replay differs from the live episode")
