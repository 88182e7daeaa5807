"""The facts a JOURNEY verdict rests on: each intent's, by its own environment's explainer, each due before
the answer that closed that intent."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ecomrlve.envs.explain import Fact, Failure, Transcript, Verdict, explainer_of


def handling_order(interrupted: list[bool]) -> list[int]:
    """The order the intents are answered in: a request is interrupted by the next one after the agent's
    first turn on it, and the interrupting one is handled (and answered) first (``JourneyUser``)."""
    order: list[int] = []
    stack: list[int] = []
    raised = 0
    while len(order) < len(interrupted):
        if not stack:
            stack.append(raised)
            raised += 1
        top = stack[-1]
        if interrupted[top] and top == raised - 1 and raised < len(interrupted):
            stack.append(raised)
            raised += 1
            continue
        order.append(stack.pop())
    return order


def journey(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
            transcript: Transcript) -> Verdict:
    intents = goal.get("intents", [])
    outcomes = task.get("intents", [])
    answers = transcript.answers()
    by_intent: dict[int, tuple[int, dict[str, Any]]] = dict(zip(handling_order([bool(i.get("interrupted")) for i in intents]),
                                                                answers))
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
