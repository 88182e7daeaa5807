"""The facts a JOURNEY verdict rests on: each intent's, by its own environment's explainer, each due before
the answer that closed that intent."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ecomrlve.envs.explain import Fact, Failure, Transcript, Verdict, explainer_of


def answered_intents(interrupted: list[bool], answer_turns: list[int]) -> list[int]:
    """Which intent each accepted answer (at ``answer_turns``) closed, replaying how ``JourneyUser`` raises
    requests: the first in the opening; an interrupted request is interrupted by the next one after the
    agent's first turn on it, unless that turn answered it; the interrupting one is handled first; once
    no request is open, the next is raised after the answering turn."""
    n = len(interrupted)
    stack: list[tuple[int, int]] = [(0, 0)] if n else []  # (intent, the turn after which it was raised)
    raised, interrupting_done, order = 1, set(), []
    for turn in answer_turns:
        while stack:
            top, at = stack[-1]
            if not (interrupted[top] and top not in interrupting_done and turn > at + 1 and raised < n):
                break
            interrupting_done.add(top)
            stack.append((raised, at + 1))
            raised += 1
        if not stack:
            break
        order.append(stack.pop()[0])
        if not stack and raised < n:
            stack.append((raised, turn))
            raised += 1
    return order


def journey(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
            transcript: Transcript) -> Verdict:
    intents = goal.get("intents", [])
    outcomes = task.get("intents", [])
    answers = transcript.answers()
    order = answered_intents([bool(i.get("interrupted")) for i in intents], [t for t, _ in answers])
    by_intent: dict[int, tuple[int, dict[str, Any]]] = dict(zip(order, answers))
    facts: list[Fact] = []
    notes: list[str] = []
    failures: list[Failure] = []
    for i, intent in enumerate(intents):
        outcome = outcomes[i] if i < len(outcomes) else {}
        sub_turn, sub_answer = by_intent.get(i, (None, None))
        sub = explainer_of(intent["env_id"])(intent["goal"], outcome.get("details") or {}, sub_answer, sub_turn, transcript)
        label = f"{i + 1}.{intent['env_id']} "
        mark = "correct" if outcome.get("is_correct") else "failed"
        notes.append(f"{label}{mark}" + (f" (answer at turn {sub_turn})" if sub_turn is not None else " (no answer)"))
        notes += [f"{label}{n}" for n in sub.notes]
        if not outcome.get("is_correct"):
            failures += [Failure(label + f.text, tuple(label + n for n in f.rests_on)) for f in sub.failures]
        facts += [replace(f, name=label + f.name, due=sub_turn if sub_turn is not None else turn,
                          decides=sub_turn is not None and not outcome.get("is_correct"),
                          requires=None if f.requires is None else label + f.requires) for f in sub.facts]
    return Verdict(tuple(facts), turn, tuple(notes), tuple(failures))
