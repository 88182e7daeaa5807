"""The JOURNEY reference agent: the heuristic's request routing, each request played by its environment's
reference agent (``ecomrlve.envs.reference_agent``). It sees only observations: the router reads where
requests start and resume from the shopper's words, and each sub-agent sees only its request's part of the
conversation, opened as an episode of its own kind would open: the journey's system prompt with that kind's
task line (read from the prompt's list of request kinds) as the task, and the ``answer`` tool described by
that kind's part of its description."""

from __future__ import annotations

import re
from typing import Any

from ecomrlve.actions import AgentAction
from ecomrlve.envs import reference_agent
from ecomrlve.envs.journey.heuristic import RequestRouter, classify_request, request_text
from ecomrlve.envs.recommend.reference import is_word
from ecomrlve.protocol import Agent, Observation, tool_results

_INTERRUPTION_WORDS = ("wait", "before", "urgent", "interruption", "hold", "first")
_LEAD_END = re.compile(r": ")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
_TOKEN = re.compile(r"[A-Za-z]+")
_TAKES = re.compile(r"takes answer\(([^)]*)\)")
_TASK = re.compile(r"(Your task: )(.*?)(\n\nRules:)", re.DOTALL)
_KIND_LINE = re.compile(r"^- ([A-Z_]+): (.+)$", re.MULTILINE)
#: A label of the journey's answer description: the kinds that answer alike ("PD and SUB: ").
_KIND_LABEL = re.compile(r"(?:^|; |\. )([A-Z_]+(?: and [A-Z_]+)*): ")


def kind_tasks(system: str) -> dict[str, str]:
    """The task line of each kind of request a journey's system prompt lists ("- PD: recommend ...")."""
    found = _TASK.search(system)
    return dict(_KIND_LINE.findall(found.group(2))) if found else {}


def kind_system(system: str, env_id: str) -> str:
    """The journey's system prompt with the task of ``env_id`` as its task (unchanged if it lists no such kind)."""
    task = kind_tasks(system).get(env_id)
    if task is None:
        return system
    return _TASK.sub(lambda m: f"{m.group(1)}{task}{m.group(3)}", system, count=1)


def kind_answer_description(description: str, env_id: str, kinds: list[str]) -> str:
    """``env_id``'s part of the journey's ``answer`` description ("... PD and SUB: product_ids (Submit ...); CART:
    ..."): from the label that names it to the next label of ``kinds`` (the whole description if none names it)."""
    labels = [found for found in _KIND_LABEL.finditer(description) if set(found.group(1).split(" and ")) <= set(kinds)]
    for label, after in zip(labels, [*labels[1:], None]):
        if env_id in label.group(1).split(" and "):
            return description[label.end():after.start() if after else len(description)]
    return description


def kind_tools(tools: list[dict[str, Any]], env_id: str, kinds: list[str]) -> list[dict[str, Any]]:
    """The journey's tools with ``answer`` described as for ``env_id``."""
    out = []
    for tool in tools:
        function = tool.get("function", {})
        if function.get("name") == "answer" and isinstance(function.get("description"), str):
            description = kind_answer_description(function["description"], env_id, kinds)
            tool = tool | {"function": function | {"description": description}}
        out.append(tool)
    return out


def split_interruption(message: str) -> tuple[str, str | None]:
    """(reply, new request) of a shopper's message that may break into the request being handled with another
    ("Just one. Hold on, let's do this first: Hi, I'd like to return ..."): the lead is the short sentence
    before the first ": " that says so (two of wait, before, urgent, interruption, hold, first; one typo
    each); (message, None) if there is none."""
    for colon in _LEAD_END.finditer(message):
        head = message[:colon.start()]
        ends = list(_SENTENCE_END.finditer(head))
        start = ends[-1].end() if ends else 0
        words = _TOKEN.findall(head[start:])
        said = {word for token in words for word in _INTERRUPTION_WORDS if is_word(token, word)}
        if len(words) <= 8 and len(said) >= 2:
            return message[:start].strip(), message[colon.end():]
    return message, None


def _says(words: list[str], phrase: str) -> bool:
    """Whether ``words`` hold ``phrase``'s words in a row (one typo each, as :func:`is_word` reads them)."""
    parts = phrase.split()
    return any(all(is_word(words[i + j], part) for j, part in enumerate(parts))
               for i in range(len(words) - len(parts) + 1))


def _says_any(words: list[str], phrases: tuple[str, ...]) -> bool:
    return any(_says(words, phrase) for phrase in phrases)


#: What each kind of request says, tried in this order (a policy question may mention a return, a return
#: may ask for a replacement, a stock-out request may want to buy something).
_ASKS_A_NUMBER = ("in dollars", "in days", "yes or no", "how many", "how much", "how long")
_WANTS_A_RETURN = ("like to return", "want to return", "wanna return", "help me return", "need to return",
                   "send it back", "send back")
_NAMES_THE_CART = ("in my cart", "to my cart", "up my cart", "in the cart", "to the cart")
#: More than one of a named product, the count not said ("a few units of the X"): a cart, not a list to bundle.
_SEVERAL_OF_NAMED = ("several units of the", "a few units of the")
_SOLD_OUT = ("out of stock", "sold out", "unavailable", "not available")
_WANTS_ANOTHER = ("similar", "alternative", "substitute", "instead", "something like")
_ASKS_ABOUT_AN_ORDER = ("where is", "status of", "check on", "news on", "when will", "arrive")
_WANTS_A_PRODUCT = ("looking for", "shopping for", "recommend", "suggest", "find me")
_LISTED = re.compile(r"(?:,|\band?\b)\s+(?:an?|some)\s+\w", re.IGNORECASE)
#: "I'd like to buy a ..." asks for a product to be found; "I'd like to buy the X" names it (a cart).
_BUYS_UNNAMED = ("buy a", "buy an", "buy some", "buy something")


def classify(request: str) -> str:
    """The kind of request (an environment id) a shopper's request is, read from what it asks: a question
    for a number or a yes/no is a policy question, then a return, a cart, a substitute for a sold-out
    product, an order's status, a list of three or more things for a bundle, a product to find, products named to buy;
    anything else is scored by
    :func:`~ecomrlve.envs.journey.heuristic.classify_request` (each request kind's keywords)."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", request.strip()) if s]
    question = [w.lower() for w in _TOKEN.findall(sentences[-1])] if sentences and sentences[-1].endswith("?") else []
    words = [w.lower() for w in _TOKEN.findall(request)]
    if _says_any(question, _ASKS_A_NUMBER):
        return "POLICY"
    if _says_any(words, _WANTS_A_RETURN):
        return "RETURN"
    if _says_any(words, _NAMES_THE_CART) or _says_any(words, _SEVERAL_OF_NAMED):
        return "CART"
    if _says_any(words, _SOLD_OUT) and _says_any(words, _WANTS_ANOTHER):
        return "SUB"
    if _says(words, "order") and _says_any(words, _ASKS_ABOUT_AN_ORDER):
        return "STATUS"
    if len(_LISTED.findall(request)) >= 2:
        return "BUNDLE"
    if _says_any(words, _WANTS_A_PRODUCT):
        return "PD"
    if _says(words, "like to buy") and not _says_any(words, _BUYS_UNNAMED):
        return "CART"  # the keywords miss a slipped "buy" ("I'd like to byu the ...", "... to by the ...")
    return classify_request(request)


class JourneyReference(RequestRouter):
    """One reference agent per request, chosen by :func:`~ecomrlve.envs.journey.heuristic.classify_request`, each
    started on its own kind's task and ``answer`` description."""

    def __init__(self) -> None:
        super().__init__(self._reference_for)
        self.kinds: list[str] = []  # the kind of each request, by sub-agent index
        self.replies: dict[int, list[str]] = {}  # the shopper's words to each request after its opening
        self.held: dict[int, list[str]] = {}  # replies a restarted sub-agent gets after its first turn

    def _reference_for(self, env_id: str) -> Agent:
        self.kinds.append(env_id)
        return reference_agent(env_id)

    def _begin(self, request: str, kind: str | None = None) -> None:
        """Open a request (its own words, without a lead) with a sub-agent of its kind."""
        index = self.add(self.agent_for(kind or classify(request)))
        self.requests[index] = request
        self.open.append(index)
        self.inbox[index].append({"role": "user", "content": request})

    def _restart(self, index: int, kind: str) -> None:
        """Play request ``index`` afresh with a sub-agent of ``kind`` (the answer it was given did not fit)."""
        self.agents[index] = reference_agent(kind)
        self.kinds[index] = kind
        self.started[index] = False
        self.inbox[index] = [{"role": "user", "content": self.requests[index]}]
        self.held[index] = self.replies.get(index, [])

    def _kind_taking(self, error: str) -> str | None:
        """The kind of request whose answer fields an ``answer_does_not_fit`` error names."""
        found = _TAKES.search(error)
        answer = next((t for t in self.tools or [] if t["function"]["name"] == "answer"), None)
        if found is None or answer is None or self.system is None:
            return None
        wanted = [f.strip() for f in found.group(1).split(",")]
        description = str(answer["function"].get("description", ""))
        listed = list(kind_tasks(str(self.system.get("content", ""))))
        return next((kind for kind in listed
                     if kind_answer_description(description, kind, listed).split(" (")[0].split(", ") == wanted), None)

    def act(self, observation: Observation) -> AgentAction:
        first = observation.tools is not None
        self.deliver(observation, self.open[-1] if self.open else 0, user_messages=False)
        playing = self.open[-1] if self.open else None
        for name, result in tool_results(observation):
            if name != "answer" or playing is None or not isinstance(result, dict):
                continue
            if "error" not in result:  # the request was answered: the shopper's next words bring another one
                self.open.remove(playing)
                self.answered = True
            elif result.get("error") == "answer_does_not_fit":
                kind = self._kind_taking(str(result.get("message", "")))
                if kind is not None and kind != self.kinds[playing]:
                    self._restart(playing, kind)
        for message in (m["content"] for m in observation.messages if m["role"] == "user"):
            if first or self.answered or not self.open:
                self.answered = first = False
                resumed = next((i for i in self.open if self.requests[i] in message), None)
                if resumed is not None:  # restated word for word: its sub-agent goes on where it was
                    self.open.remove(resumed)
                    self.open.append(resumed)
                else:
                    self._begin(request_text(message))
                continue
            reply, request = split_interruption(message)
            if reply:
                self.inbox[self.open[-1]].append({"role": "user", "content": reply})
                self.replies.setdefault(self.open[-1], []).append(reply)
            if request is not None:
                self._begin(request)
        if not self.open:
            return AgentAction(message="Is there anything else I can help you with?")
        current = self.open[-1]
        action = self.play(current, observation.info)
        held = self.held.pop(current, [])
        self.inbox[current][:0] = [{"role": "user", "content": reply} for reply in held]
        return action

    def setup_for(self, current: int) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
        system, tools = self.system, self.tools
        env_id = self.kinds[current]
        if system is not None:
            listed = list(kind_tasks(str(system.get("content", ""))))
            system = system | {"content": kind_system(str(system.get("content", "")), env_id)}
            if tools is not None:
                tools = kind_tools(tools, env_id, listed)
        return system, tools
