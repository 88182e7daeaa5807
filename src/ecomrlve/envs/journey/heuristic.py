"""The JOURNEY heuristic baseline: tell the shopper's requests apart and hand each to its heuristic.

It sees only what an agent sees. Every request the shopper raises follows a short lead ending
in a colon ("Thanks! Also: ...", "Sorry, quick interruption first: ..."), and a request that
comes back after an interruption is restated word for word, so the baseline can find where
requests start, guess their kind from keywords (typos tolerated), and resume an earlier one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from ecomrlve.actions import AgentAction
from ecomrlve.envs import heuristic_agent
from ecomrlve.envs.journey.family import IntentRouter
from ecomrlve.protocol import Agent, Observation
from ecomrlve.registry import env_specs

_INTERRUPTION_WORDS = ("wait", "before", "urgent", "interruption", "hold", "first")
_WORD = re.compile(r"[a-z]+")


def _fuzzy_words(text: str, vocabulary: list[str]) -> list[str]:
    """Vocabulary words present in ``text``, tolerating one typo in words of 4+ letters."""
    found = []
    for word in _WORD.findall(text.lower()):
        if word in vocabulary:
            found.append(word)
        elif len(word) >= 4:
            found.extend(difflib.get_close_matches(word, vocabulary, n=1, cutoff=0.8))
    return found


def classify_request(text: str) -> str:
    """The most likely kind of request (an environment id) for a shopper's message.

    Each environment with a JOURNEY role scores its keywords (one typo tolerated) and its
    phrasings (registry :class:`~ecomrlve.registry.JourneyRole`); ties go to the higher tie rank.
    """
    lowered = text.lower()
    best: tuple[float, int, str] | None = None
    for spec in env_specs():
        role = spec.journey
        if role is None:
            continue
        score = sum(role.keywords[w] for w in set(_fuzzy_words(lowered, list(role.keywords))))
        score += sum(weight * len(re.findall(pattern, lowered)) for pattern, weight in role.patterns)
        if best is None or (score, role.tie_rank) > best[:2]:
            best = (score, role.tie_rank, spec.id)
    if best is None:
        raise RuntimeError("no registered environment has a JOURNEY role")
    return best[2]


def request_text(message: str) -> str:
    """The request after a lead such as "Thanks! Also:" (the whole message when there is none)."""
    head, sep, rest = message.partition(": ")
    return rest if sep and len(head) <= 80 else message


def is_interruption(message: str) -> bool:
    head = message.rpartition(": ")[0][-80:]
    return len(set(_fuzzy_words(head, list(_INTERRUPTION_WORDS)))) >= 2


class RequestRouter(IntentRouter):
    """Tells the shopper's requests apart from the conversation and plays one sub-agent per request, made by
    ``agent_for(env_id)`` for the kind :func:`classify_request` reads (the heuristic baselines, the reference
    agents ...)."""

    def __init__(self, agent_for: Callable[[str], Agent]) -> None:
        super().__init__()
        self.agent_for = agent_for
        self.open: list[int] = []  # requests raised and not yet answered; last = being handled
        self.requests: dict[int, str] = {}
        self.answered = False

    def _start(self, message: str) -> None:
        request = request_text(message)
        index = self.add(self.agent_for(classify_request(request)))
        self.requests[index] = request
        self.open.append(index)
        self.inbox[index].append({"role": "user", "content": request})

    def act(self, observation: Observation) -> AgentAction:
        self.deliver(observation, 0, user_messages=False)
        for message in (m["content"] for m in observation.messages if m["role"] == "user"):
            resumed = next((i for i in self.open if self.requests[i] in message), None) if self.answered else None
            if resumed is not None:
                self.open.remove(resumed)
                self.open.append(resumed)
                self.inbox[resumed].append({"role": "user", "content": message})
            elif observation.tools is not None or self.answered or not self.open or is_interruption(message):
                self._start(message)
            else:
                self.inbox[self.open[-1]].append({"role": "user", "content": message})
        if not self.open:
            return AgentAction(message="Is there anything else I can help you with?")
        current = self.open[-1]
        action = self.play(current, observation.info)
        self.answered = any(call.name == "answer" for call in action.tool_calls)
        if self.answered:
            self.open.remove(current)
        return action


class JourneyHeuristic(RequestRouter):
    """One heuristic baseline per request, chosen by :func:`classify_request`."""

    def __init__(self) -> None:
        super().__init__(heuristic_agent)
