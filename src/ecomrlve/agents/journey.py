"""The JOURNEY heuristic baseline: tell the shopper's requests apart and hand each to its heuristic.

It sees only what an agent sees. Every request the shopper raises follows a short lead ending
in a colon ("Thanks! Also: ...", "Sorry, quick interruption first: ..."), and a request that
comes back after an interruption is restated word for word, so the baseline can find where
requests start, guess their kind from keywords (typos tolerated), and resume an earlier one.
"""

from __future__ import annotations

import difflib
import re

from ecomrlve.actions import AgentAction
from ecomrlve.agents import heuristic_agent
from ecomrlve.envs.journey import IntentRouter
from ecomrlve.protocol import Observation

#: Words that signal each kind of request, with their weight (matched with one typo tolerated).
REQUEST_KEYWORDS: dict[str, dict[str, float]] = {
    "RETURN": {"return": 2, "send": 2, "back": 1, "replacement": 1, "help": 1},
    "STATUS": {"order": 1, "news": 2, "arrive": 2, "status": 2, "track": 2, "check": 1, "where": 1, "shipped": 1,
               "update": 1},
    "POLICY": {"policy": 3, "warranty": 3, "covered": 2, "fee": 2, "days": 2, "yes": 2, "cost": 1, "restocking": 3,
               "dollars": 2, "member": 2, "window": 2, "free": 1, "question": 2, "refund": 1, "today": 1},
    "SUB": {"sold": 2, "unavailable": 2, "alternative": 3, "similar": 2, "instead": 2, "substitute": 3, "stock": 3},
    "BUNDLE": {"together": 2, "budget": 2, "spend": 2, "everything": 2, "setting": 2, "training": 2,
               "building": 2, "moving": 2, "commute": 2, "project": 2, "getting": 1, "ready": 1, "trip": 1},
    "CART": {"cart": 3, "buy": 1, "add": 2, "earlier": 2},
    "PD": {"looking": 1, "shopping": 1, "suggest": 2, "recommendations": 3, "recommend": 2, "find": 1},
}
#: Phrasings that give a kind away when the words around them are not garbled.
REQUEST_PATTERNS: dict[str, tuple[tuple[re.Pattern[str], float], ...]] = {
    "RETURN": ((re.compile(r"send (?:\w+ )?back|(?:help me|like to|want to|wanna|need to) return"), 4),),
    "CART": ((re.compile(r"\b(?:buy|for|add|get)(?: \d+x| \d+ (?:units )?of)? the\b"), 3),),
    "PD": ((re.compile(r"\b(?:buy|for|need|find) an? \w+"), 2),),
    "BUNDLE": ((re.compile(r"(?:,|\band) (?:an?|some) \w"), 2),),
    "POLICY": ((re.compile(r"yes or no|in dollars|in days|it's about|it is about"), 4),
               (re.compile(r"how (?:much|many)|what is|can i still|is it still"), 3)),
}
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
    """The most likely kind of request (an environment id) for a shopper's message."""
    lowered = text.lower()
    scores: dict[str, float] = {}
    for env_id, keywords in REQUEST_KEYWORDS.items():
        scores[env_id] = sum(keywords[w] for w in set(_fuzzy_words(lowered, list(keywords))))
        scores[env_id] += sum(weight * len(pattern.findall(lowered)) for pattern, weight in REQUEST_PATTERNS.get(env_id, ()))
    return max(scores, key=lambda e: (scores[e], e == "PD"))


def request_text(message: str) -> str:
    """The request after a lead such as "Thanks! Also:" (the whole message when there is none)."""
    head, sep, rest = message.partition(": ")
    return rest if sep and len(head) <= 80 else message


def is_interruption(message: str) -> bool:
    head = message.rpartition(": ")[0][-80:]
    return len(set(_fuzzy_words(head, list(_INTERRUPTION_WORDS)))) >= 2


class JourneyHeuristic(IntentRouter):
    """One heuristic baseline per request, chosen by :func:`classify_request`."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[int] = []  # requests raised and not yet answered; last = being handled
        self.requests: dict[int, str] = {}
        self.answered = False

    def _start(self, message: str) -> None:
        request = request_text(message)
        index = self.add(heuristic_agent(classify_request(request)))
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
