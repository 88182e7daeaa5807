"""Verdicts that explain themselves from the transcript (issue 29 §4).

A pure function of an episode record (hidden goal, messages, reward): no catalog, no replay and no
secret, so old records and a server client's records (whose secret is withheld) are explained alike.

* Each environment family declares, in its own folder (``envs/<family>/explain.py``, named by its
  spec's ``explainer``), the **facts** its verdict rests on: each requirement with the value the
  verifier used, and for each answered item (product, order line, policy section) the value it was
  judged on, each with where it can be learned: :class:`Said` (the shopper's words),
  :class:`Shown` (a field of an object a tool result shows), :class:`ShownText` (words of a tool
  result, e.g. a policy section).
* This module finds where each fact was **first observable** in the transcript (the opening, a
  shopper reply or an ``ask_user`` result; a search card, a variant list, order details, a policy
  section) and builds the :class:`Explanation`.
* A failing verdict gets a **fault** (:func:`_fault`): ``agent`` when the agent never answered, or when a
  reason for the failure was observable before the answer (a shown value that misses a requirement the
  agent could learn, or a :class:`Failure` whose facts were all observable); ``environment`` when no
  reason was: the verdict then rests on something the agent could neither see nor ask. A fact counts as
  observable when it was seen before the answer, when it is a withheld requirement the shopper tells
  when asked, or when it is in a tool result the agent never asked for (an object never looked up);
  an object a tool showed *without* the deciding field is not.

Turns: the opening is turn 0; what an agent turn ``t`` called, and what the shopper said after it, is
observable from turn ``t + 1`` on. A fact is observable before an answer given at turn ``a`` when it was
first seen at a turn ``< a``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ecomrlve.protocol import expand_result
from ecomrlve.registry import env_spec, load
from ecomrlve.user.noise import _SLANG  # the slang the shopper's noise swaps in

Fault = Literal["agent", "environment"]
SHOPPER = "shopper"  # the source name of the shopper's words


@dataclass(frozen=True)
class Said:
    """The shopper says it: any of ``forms``, as whole words and numbers (case-insensitive, the noise's slang
    undone). A word marked ``~`` ("{v} ~stars") may carry one typo, as the words around a value do in noisy
    messages; the rest must match exactly (noise never changes a value, and "block" is not "black"). Parts
    joined by `` … `` must come in this order within one sentence ("Voltly Air 1 … ~sold out")."""

    forms: tuple[str, ...]


@dataclass(frozen=True)
class Shown:
    """A tool result shows it: field ``key`` of an object whose ``id_key`` is ``ident`` (also in its
    ``attributes``, or as the values of its ``variants``)."""

    ident: str
    key: str
    id_key: str = "product_id"
    tools: tuple[str, ...] = ()  # only these tools' results count (empty: any)
    equals: str | None = None  # only a shown value equal to this counts (e.g. "false" for a sell-out)


@dataclass(frozen=True)
class ShownText:
    """A tool result's text holds all of ``forms`` (case-insensitive), in one result of ``tools``."""

    forms: tuple[str, ...]
    tools: tuple[str, ...] = ()


Where = Said | Shown | ShownText


@dataclass(frozen=True)
class Fact:
    """One fact a verdict rests on: what it is, the value the verifier used, and where it can be learned.

    ``askable``: a requirement the shopper withholds from the opening and states when asked; it counts
    as observable (the agent could ask) even when the agent never asked. ``met``: for an answered item's
    value, whether it meets its requirement (None: not a judgement). ``due``: the turn of the answer the
    fact must be observable before (None: the episode's answer)."""

    name: str
    value: str
    where: Where | tuple[Where, ...]  # several: wherever it is first seen
    askable: bool = False
    met: bool | None = None
    due: int | None = None
    requires: str | None = None  # the name of the requirement fact an item's value is judged against
    decides: bool = True  # False: shown for context (e.g. a JOURNEY intent that was solved), not in the fault


@dataclass(frozen=True)
class Failure:
    """A reason the verdict failed that no single fact's ``met`` states (no answer, an extra item, a unit
    missing from the cart), with the names of the facts it rests on (none: visible by construction)."""

    text: str
    rests_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class Seen:
    """Where a fact was first observable: the turn, the source (``shopper`` or a tool name) and what it showed."""

    turn: int
    source: str
    shown: str

    def text(self) -> str:
        if self.source == SHOPPER:
            return "opening" if self.turn == 0 else f"shopper, after turn {self.turn}"
        return f"{self.source}, turn {self.turn}"


@dataclass(frozen=True)
class Evidence:
    fact: Fact
    seen: Seen | None
    observable: bool  # seen before the answer, askable, or a tool shows it when called
    lookup: bool = False  # observable only as a tool's result the agent never got (never looked it up)

    def to_json(self) -> dict[str, Any]:
        return {"fact": self.fact.name, "value": self.fact.value, "met": self.fact.met, "askable": self.fact.askable,
                "decides": self.fact.decides,
                "seen": None if self.seen is None else {"turn": self.seen.turn, "source": self.seen.source,
                                                        "shown": self.seen.shown},
                "observable": self.observable, "lookup": self.lookup}


@dataclass(frozen=True)
class Explanation:
    """An episode's verdict with the facts it rests on and where each was observable."""

    env_id: str
    difficulty: int
    seed: int
    is_correct: bool
    r_task: float
    answer_turn: int | None
    evidence: tuple[Evidence, ...]
    fault: Fault | None  # None for a correct verdict
    notes: tuple[str, ...] = ()
    failures: tuple[Failure, ...] = ()  # what failed besides a shown value that misses its requirement

    @property
    def hidden(self) -> tuple[Evidence, ...]:
        """The facts that were not observable before the answer."""
        return tuple(e for e in self.evidence if not e.observable and e.fact.decides)

    def to_json(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "difficulty": self.difficulty, "seed": self.seed, "is_correct": self.is_correct,
                "r_task": self.r_task, "answer_turn": self.answer_turn, "fault": self.fault, "notes": list(self.notes),
                "failures": [f.text for f in self.failures],
                "evidence": [e.to_json() for e in self.evidence]}

    def lines(self) -> list[str]:
        """The explanation as short text lines (replay, ``ecomrlve explain``)."""
        verdict = "correct" if self.is_correct else f"failed (fault: {self.fault})"
        answered = "no answer" if self.answer_turn is None else f"answer at turn {self.answer_turn}"
        out = [f"verdict: {verdict}, r_task {self.r_task:+.2f}, {answered}"]
        out += [f"  failed: {f.text}" for f in (() if self.is_correct else self.failures)]
        out += [f"  note: {n}" for n in self.notes]
        for e in self.evidence:
            mark = "" if e.fact.met is None else (" [met]" if e.fact.met else " [NOT met]")
            if e.seen is not None and (e.observable or not e.lookup):
                where = f"{e.seen.text()}" + ("" if e.observable else " (after the answer)")
            elif e.lookup:
                where = "a tool shows it, never looked up"
            else:
                where = "askable, never asked" if e.fact.askable else "NOT SHOWN"
            out.append(f"  {e.fact.name} = {e.fact.value}{mark}: {where}")
        return out


# -- the transcript ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One observable piece: shopper words or a tool result, with the agent turn it followed."""

    turn: int
    source: str  # SHOPPER or the tool's name
    text: str
    data: Any = None  # a tool result's parsed JSON
    words: tuple[str, ...] = ()  # the shopper's words as :func:`tokens`
    index: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # (id key, id) -> objects

    @classmethod
    def shopper(cls, turn: int, text: str) -> Entry:
        return cls(turn, SHOPPER, text, words=tuple(tokens(text)))

    @classmethod
    def result(cls, turn: int, source: str, text: str, data: Any) -> Entry:
        index: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for obj in _objects(data):
            for key, value in obj.items():
                if key.endswith("_id") and isinstance(value, str):
                    index.setdefault((key, value), []).append(obj)
        return cls(turn, source, text, data, index=index)


@dataclass
class Transcript:
    """A record's messages as what the agent could observe, turn by turn, and what it called."""

    entries: list[Entry] = field(default_factory=list)
    calls: list[tuple[int, str, dict[str, Any], Any]] = field(default_factory=list)  # (turn, tool, arguments, result)
    turns: int = 0

    @classmethod
    def of(cls, messages: Sequence[dict[str, Any]]) -> Transcript:
        out = cls()
        turn = 0
        pending: dict[str, tuple[str, dict[str, Any]]] = {}
        for message in messages:
            role = message.get("role")
            if role == "assistant":
                turn += 1
                pending = {}
                for call in message.get("tool_calls") or []:
                    fn = call.get("function", {})
                    try:
                        arguments = json.loads(fn.get("arguments") or "{}")
                    except ValueError:
                        arguments = {}
                    pending[call.get("id", "")] = (fn.get("name", ""), arguments if isinstance(arguments, dict) else {})
            elif role == "user":
                out.entries.append(Entry.shopper(turn, str(message.get("content") or "")))
            elif role == "tool":
                name = message.get("name") or pending.get(message.get("tool_call_id", ""), ("", {}))[0]
                text = str(message.get("content") or "")
                try:
                    data = expand_result(json.loads(text))  # compact tables back to today's cards
                except ValueError:
                    data = None
                arguments = pending.get(message.get("tool_call_id", ""), (name, {}))[1]
                out.calls.append((turn, name, arguments, data))
                if name == "ask_user" and isinstance(data, dict) and "user_reply" in data:
                    out.entries.append(Entry.shopper(turn, str(data["user_reply"])))
                elif name != "answer":
                    out.entries.append(Entry.result(turn, name, text, data))
        out.turns = turn
        return out

    def answers(self) -> list[tuple[int, dict[str, Any]]]:
        """The accepted answers (turn, arguments), in order."""
        return [(turn, args) for turn, name, args, result in self.calls
                if name == "answer" and isinstance(result, dict) and result.get("status") == "submitted"]

    def results(self, *tools: str) -> Iterable[tuple[int, Any]]:
        """(turn, parsed result) of every call of ``tools``, in order."""
        return ((t, r) for t, name, _, r in self.calls if name in tools)

    def shopper_text(self, before: int | None = None) -> str:
        return "\n".join(e.text for e in self.entries if e.source == SHOPPER and (before is None or e.turn < before))

    def locate(self, where: Where | tuple[Where, ...]) -> Seen | None:
        """The first entry that shows ``where`` (any of several)."""
        options = where if isinstance(where, tuple) else (where,)
        for entry in self.entries:
            for option in options:
                shown = _shows(entry, option)
                if shown is not None:
                    return Seen(entry.turn, entry.source, shown)
        return None

    def last(self, where: Shown, before: int | None) -> Seen | None:
        """The last entry before turn ``before`` that shows ``where`` (what the agent saw most recently)."""
        found = None
        for entry in self.entries:
            if before is not None and entry.turn >= before:
                break
            shown = _shows(entry, where)
            if shown is not None:
                found = Seen(entry.turn, entry.source, shown)
        return found

    def shows_object(self, id_key: str, ident: str, before: int | None, tools: tuple[str, ...] = ()) -> bool:
        """Whether a tool result (of ``tools``; empty: any) before turn ``before`` shows an object whose
        ``id_key`` is ``ident``."""
        return any(e.source != SHOPPER and (before is None or e.turn < before) and (not tools or e.source in tools)
                   and (id_key, ident) in e.index for e in self.entries)


_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+|[^\w\s]")


_SLANG_WORDS = {slang: words for words, slang in _SLANG.items()}  # "u" -> "you": the noise's slang, undone


def tokens(text: str) -> list[str]:
    """Numbers, words and signs, lower-cased ("$4.5+ stars" -> $, 4.5, +, stars), the noise's slang undone."""
    low = text.lower().replace("w/", "with")
    return [w for t in _TOKEN.findall(low) for w in (_SLANG_WORDS[t].split() if t in _SLANG_WORDS else (t,))]


def _close(word: str, form: str) -> bool:
    """Equal, or for words of 3+ letters one typo apart (insert, delete, change, swap): the shopper's noise
    changes letters of the words around a value, never the value itself."""
    if word == form:
        return True
    if len(form) < 3 or not form.isalpha() or not word.isalpha() or abs(len(word) - len(form)) > 1:
        return False
    i = 0
    while i < min(len(word), len(form)) and word[i] == form[i]:
        i += 1
    return (word[i + 1:] == form[i:] or word[i:] == form[i + 1:] or word[i + 1:] == form[i + 1:]
            or (word[i:i + 2] == form[i:i + 2][::-1] and word[i + 2:] == form[i + 2:]))


def said(text: str, form: str) -> bool:
    """``form`` occurs in ``text`` as whole tokens (case-insensitive; a word may carry one typo)."""
    return _said(tuple(tokens(text)), form)


def _said(have: tuple[str, ...], form: str) -> bool:
    parts = [_pattern(part) for part in form.split(" … ")]
    if not all(parts):
        return False
    if len(parts) == 1:
        return _find(have, parts[0], 0) is not None
    start = 0
    for end in [i for i, t in enumerate(have) if t in _SENTENCE_ENDS] + [len(have)]:
        sentence, at = have[start:end], 0
        for part in parts:
            found = _find(sentence, part, at)
            if found is None:
                break
            at = found
        else:
            return True
        start = end + 1
    return False


_SENTENCE_ENDS = {".", "!", "?"}


def _pattern(form: str) -> list[tuple[str, bool]]:
    """A form's tokens, each with whether it may carry a typo (marked ``~``)."""
    want: list[tuple[str, bool]] = []
    fuzzy = False
    for token in tokens(form):
        if token == "~":
            fuzzy = True
            continue
        want.append((token, fuzzy))
        fuzzy = False
    return want


def _find(have: tuple[str, ...], want: list[tuple[str, bool]], start: int) -> int | None:
    """The position just after the first match of ``want`` in ``have`` from ``start`` (None: no match)."""
    n = len(want)
    for i in range(start, len(have) - n + 1):
        if all(have[i + j] == w or (f and _close(have[i + j], w)) for j, (w, f) in enumerate(want)):
            return i + n
    return None


def _shows(entry: Entry, where: Where) -> str | None:
    if isinstance(where, Said):
        if entry.source != SHOPPER:
            return None
        return next((f for f in where.forms if _said(entry.words, f)), None)
    if entry.source == SHOPPER or (where.tools and entry.source not in where.tools):
        return None
    if isinstance(where, ShownText):
        low = entry.text.lower()
        return ", ".join(where.forms) if all(f.lower() in low for f in where.forms) else None
    shown = field_shown(entry.index.get((where.id_key, where.ident), ()), where.key)
    return shown if where.equals is None or shown == where.equals else None


def field_shown(objects: Iterable[dict[str, Any]], key: str) -> str | None:
    """The value of ``key`` on the first of ``objects`` (those a result shows with one id) that shows it:
    its own field, its ``attributes``' field, or the values its ``variants`` offer (joined by " / ")."""
    for obj in objects:
        if key in obj:
            return _text(obj[key])
        attributes = obj.get("attributes")
        if isinstance(attributes, dict) and key in attributes:
            return _text(attributes[key])
        variants = obj.get("variants")
        if isinstance(variants, list):
            values = [str(v[key]) for v in variants if isinstance(v, dict) and key in v]
            if values:
                return " / ".join(values)
        variant = obj.get("variant")
        if isinstance(variant, dict) and key in variant:
            return _text(variant[key])
    return None


def _objects(data: Any) -> Iterable[dict[str, Any]]:
    stack = [data]
    while stack:
        item = stack.pop(0)
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _never_looked_up(fact: Fact, transcript: Transcript, due: int | None) -> bool:
    """A fact a tool shows when called that the agent never looked up: an object no tool result showed
    before the answer, or words of tools it never called. A tool would have shown it, so it counts as
    observable; an object shown without the fact is not."""
    options = fact.where if isinstance(fact.where, tuple) else (fact.where,)
    for w in options:
        if isinstance(w, Shown) and not transcript.shows_object(w.id_key, w.ident, due, w.tools):
            return True
        if isinstance(w, ShownText) and not any(e.source in w.tools and (due is None or e.turn < due)
                                                for e in transcript.entries):
            return True
    return False


# -- building explanations --------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """What a family's explainer returns: the facts, and the turn of the answer they must precede."""

    facts: tuple[Fact, ...]
    answer_turn: int | None
    notes: tuple[str, ...] = ()
    failures: tuple[Failure, ...] = ()  # what failed that no single fact's ``met`` says (no answer, an extra item...)


#: A family's explainer: (the goal, the reward's task details, the answer's arguments or None, its turn or
#: None, the transcript) -> the verdict's facts.
Explainer = Callable[[dict[str, Any], dict[str, Any], "dict[str, Any] | None", "int | None", Transcript], Verdict]


def explainer_of(env_id: str) -> Explainer:
    """The explainer an environment's spec names (``UserInputError`` when it names none)."""
    from ecomrlve.errors import UserInputError

    spec = env_spec(env_id)
    if spec.explainer is None:
        raise UserInputError(f"environment {env_id} declares no verdict explainer (EnvSpec.explainer)")
    fn: Explainer = load(spec.explainer)
    return fn


def final_answer(transcript: Transcript) -> tuple[dict[str, Any] | None, int | None]:
    answers = transcript.answers()
    return (answers[-1][1], answers[-1][0]) if answers else (None, None)


def explain(record: Any) -> Explanation:
    """The explanation of an episode record (an :class:`~ecomrlve.session.EpisodeRecord` or its JSON dict)."""
    data: dict[str, Any] = record if isinstance(record, dict) else record.model_dump(mode="json")
    reward = data.get("reward") or {}
    transcript = Transcript.of(data.get("messages") or [])
    answer, turn = final_answer(transcript)
    verdict = explainer_of(data["env_id"])(data.get("goal") or {}, reward.get("task") or {}, answer, turn, transcript)
    return assemble(data["env_id"], int(data.get("difficulty", 0)), int(data.get("seed", 0)),
                    bool(reward.get("is_correct")), float(reward.get("r_task", -1.0)), verdict, transcript)


def explain_lines(record: Any) -> list[str]:
    """The explanation's text lines, or one line saying the environment declares no explainer (a plugin's)."""
    from ecomrlve.errors import UserInputError

    try:
        return explain(record).lines()
    except UserInputError as exc:
        return [str(exc)]


def assemble(env_id: str, difficulty: int, seed: int, is_correct: bool, r_task: float, verdict: Verdict,
             transcript: Transcript) -> Explanation:
    evidence = []
    for fact in verdict.facts:
        seen = transcript.locate(fact.where)
        due = fact.due if fact.due is not None else verdict.answer_turn
        in_time = seen is not None and (due is None or seen.turn < due)
        lookup = not in_time and not fact.askable and _never_looked_up(fact, transcript, due)
        evidence.append(Evidence(fact, seen, in_time or fact.askable or lookup, lookup))
    fault: Fault | None = None
    notes = verdict.notes
    if not is_correct:
        fault = _fault(verdict, evidence)
        if fault == "environment" and not verdict.failures and not any(e.fact.met is False for e in evidence):
            notes += ("nothing the agent was shown explains the failure: every shown value meets its requirement",)
    return Explanation(env_id, difficulty, seed, is_correct, r_task, verdict.answer_turn, tuple(evidence), fault,
                       notes, verdict.failures)


def _fault(verdict: Verdict, evidence: list[Evidence]) -> Fault:
    """``agent`` when the agent never answered, or some reason for the failure is explained by what it could
    observe: a shown value that misses a requirement it could learn, or a :class:`Failure` whose facts were
    all observable. ``environment`` when no reason is (including a failure that no shown fact explains)."""
    if verdict.answer_turn is None:
        return "agent"
    by_name: dict[str, list[Evidence]] = {}
    for e in evidence:
        by_name.setdefault(e.fact.name, []).append(e)

    def observable(name: str) -> bool:
        return all(e.observable for e in by_name.get(name, []))

    misses = [e for e in evidence if e.fact.decides and e.fact.met is False]
    explained = any(e.observable and e.seen is not None and (e.fact.requires is None or observable(e.fact.requires))
                    for e in misses)
    explained = explained or any(all(observable(n) for n in f.rests_on) for f in verdict.failures)
    return "agent" if explained else "environment"
