"""A local OpenAI-compatible chat-completions server for tests of the LLM agent.

It speaks the real wire protocol (``GET /v1/models``, ``POST /v1/chat/completions`` with
``tools`` and ``tool_calls``) on a background thread, so the real ``openai`` client is exercised
end to end. What it answers comes from a *policy*: a function of the request body that returns
an assistant message, or a :class:`Status` (an HTTP error) or :class:`Delay` (answer late).

:class:`HeuristicPolicy` plays the CART heuristic baseline through the protocol, rebuilding the
observations the baseline would have seen from the request, in native or text (Hermes) mode.
:class:`ShopperPolicy` stands in for the model behind the LLM shopper (faithful, leaking, omitting,
garbage, failing), answering over HTTP or, for speed, as an in-process transport of the same requests.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ecomrlve.actions import AgentAction, parse_action
from ecomrlve.agents import heuristic_agent
from ecomrlve.protocol import Observation

MODEL = "test-model"


@dataclass(frozen=True)
class Status:
    """Answer with an HTTP error."""

    code: int
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Delay:
    """Answer ``reply`` after ``seconds`` (longer than the client's timeout: it times out)."""

    seconds: float
    reply: dict[str, Any]


@dataclass(frozen=True)
class Raw:
    """Answer HTTP 200 with exactly this body (a broken or impostor server)."""

    body: bytes
    content_type: str = "application/json"


Policy = Callable[[dict[str, Any]], "dict[str, Any] | Status | Delay | Raw"]


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """The usage the server reports: one 'token' per message in the request, plus 3 per completion."""
    return len(messages)


COMPLETION_TOKENS = 3


def history_errors(messages: list[dict[str, Any]]) -> list[str]:
    """What a strict OpenAI-compatible server refuses in a request's messages (empty: a valid history).

    System first; an assistant message holds text or ``tool_calls`` and is never followed by another
    one; ``tool`` messages answer, one each, the calls of the assistant message just before them; the
    model is asked to speak after a user or tool message.
    """
    errors: list[str] = []
    if not messages or messages[0]["role"] != "system":
        errors.append("the first message must be the system message")
    pending: list[str] = []  # call ids of the last assistant message still waiting for their results
    previous = None
    for i, message in enumerate(messages):
        role = message["role"]
        if pending and role != "tool":
            errors.append(f"messages[{i}]: tool_calls {pending} of the assistant message before are not answered")
            pending = []
        if role == "assistant":
            if previous == "assistant":
                errors.append(f"messages[{i}]: two assistant messages in a row")
            calls = message.get("tool_calls") or []
            if not calls and not (isinstance(message.get("content"), str) and message["content"]):
                errors.append(f"messages[{i}]: an assistant message without tool_calls must have content")
            pending = [call["id"] for call in calls]
        elif role == "tool":
            if message.get("tool_call_id") not in pending:
                errors.append(f"messages[{i}]: a tool message must answer a tool call of the assistant message before")
            else:
                pending.remove(message["tool_call_id"])
        previous = role
    if pending:
        errors.append(f"tool_calls {pending} of the last assistant message are not answered")
    if messages and messages[-1]["role"] not in ("user", "tool"):
        errors.append("the last message must be a user or tool message")
    return errors


class ChatServer:
    """Serve ``policy`` on 127.0.0.1 until :meth:`close`; every request body is kept in ``requests``.

    ``strict`` refuses (HTTP 400) a request whose history :func:`history_errors` finds invalid.
    """

    def __init__(self, policy: Policy, models: tuple[str, ...] = (MODEL,), *, strict: bool = False) -> None:
        self.policy = policy
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def _send(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout) before we answered

            def _send_raw(self, reply: Raw) -> None:
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "tests"} for m in server.models]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if body.get("model") not in server.models:
                    self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist.",
                                               "type": "NotFoundError", "code": 404}})
                    return
                errors = history_errors(body["messages"]) if strict else []
                if errors:
                    self._send(400, {"error": {"message": "; ".join(errors), "type": "BadRequestError", "code": 400}})
                    return
                reply = server.policy(body)
                if isinstance(reply, Status):
                    self._send(reply.code, {"error": {"message": reply.message, "code": reply.code}}, reply.headers)
                    return
                if isinstance(reply, Raw):
                    self._send_raw(reply)
                    return
                if isinstance(reply, Delay):
                    time.sleep(reply.seconds)
                    reply = reply.reply
                self._send(200, {
                    "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "message": reply,
                                 "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}],
                    "usage": {"prompt_tokens": prompt_tokens(body["messages"]), "completion_tokens": COMPLETION_TOKENS,
                              "total_tokens": prompt_tokens(body["messages"]) + COMPLETION_TOKENS},
                })

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _openai_message(action: AgentAction) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": action.message}
    if action.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                                 for c in action.tool_calls]
    return message


def _hermes_text(action: AgentAction) -> str:
    blocks = [f'<tool_call>\n{json.dumps({"name": c.name, "arguments": c.arguments})}\n</tool_call>'
              for c in action.tool_calls]
    return "\n".join(([action.message] if action.message else []) + blocks)


class HeuristicPolicy:
    """The CART heuristic baseline behind the chat protocol.

    Stateless, so concurrent and repeated conversations cannot interfere: each request replays
    the whole conversation into a fresh baseline, rebuilding the observations it would have got
    from the environment: after a turn of native ``tool_calls`` from ``tool`` messages (tool names
    looked up by ``tool_call_id``), after a text turn from ``<tool_response>`` blocks (names from
    its ``<tool_call>`` blocks, parsed by the environment's own parser).

    It answers with native ``tool_calls`` when the request has ``tools``, else with ``<tool_call>``
    text; ``always_native`` answers natively even without ``tools`` (a server whose chat template
    or tool parser turns the model's calls into ``tool_calls`` whatever the request says).
    """

    def __init__(self, *, always_native: bool = False) -> None:
        self.always_native = always_native

    def answers_natively(self, body: dict[str, Any]) -> bool:
        return "tools" in body or self.always_native

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        text_mode = not self.answers_natively(body)
        agent = heuristic_agent("CART")
        system = messages[0]["content"].split("\n\n# Tools")[0]
        observation = Observation(messages=[{"role": "system", "content": system}, messages[1]],
                                  tools=body.get("tools") or [])
        turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"] + [len(messages)]
        for turn, following in itertools.pairwise(turns):
            agent.act(observation)  # the reply it gave then is messages[turn]
            observation = Observation(messages=self._results(messages[turn], messages[turn + 1:following]))
        action = agent.act(observation)
        if text_mode:
            return {"role": "assistant", "content": _hermes_text(action)}
        return _openai_message(action)

    @staticmethod
    def _results(reply: dict[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        native = bool(reply.get("tool_calls"))
        names_by_id = {c["id"]: c["function"]["name"] for c in reply.get("tool_calls") or ()}
        names = [] if native else [c.name for c in parse_action(reply["content"] or "", turn=0).tool_calls]
        out: list[dict[str, Any]] = []
        for message in messages:
            if message["role"] == "tool":
                out.append({**message, "name": names_by_id[message["tool_call_id"]]})
            elif not native and message["content"].startswith("<tool_response>"):
                contents = [block.split("\n</tool_response>")[0]
                            for block in message["content"].split("<tool_response>\n")[1:]]
                out += [{"role": "tool", "tool_call_id": f"call_{i}", "name": name, "content": content}
                        for i, (name, content) in enumerate(zip(names, contents))]
            else:
                out.append(message)
        return out


# -- the shopper side: a stand-in for the model that phrases the simulated shopper's messages ---------

SHOPPER_MODES = ("faithful", "leak", "omit", "garbage", "empty", "error", "timeout")
_DRAFT = re.compile(r"DRAFT: (.*)\Z", re.DOTALL)
_VALUES = re.compile(r'Copy these values exactly as written: (.*)\.$', re.MULTILINE)
_SWAPS = (("Hi, ", "hey - "), ("Hello, ", "hi, "), ("I'd like", "i want"), ("Could you", "can you"),
          ("please", "pls"), ("I need", "i really need"), ("Thanks", "thank you"))


def shopper_draft(body: dict[str, Any]) -> str:
    """The template draft in an LLM-shopper request."""
    match = _DRAFT.search(body["messages"][-1]["content"])
    assert match, "not an LLM-shopper request"
    return match.group(1)


def shopper_values(body: dict[str, Any]) -> list[str]:
    """The values the request says to copy verbatim."""
    match = _VALUES.search(body["messages"][0]["content"])
    return re.findall(r'"([^"]*)"', match.group(1)) if match else []


def paraphrase(draft: str) -> str:
    """A faithful rewording: greetings and stock phrases swapped, every value kept."""
    for old, new in _SWAPS:
        draft = draft.replace(old, new)
    return draft


@dataclass
class ShopperPolicy:
    """Answers LLM-shopper requests in one of :data:`SHOPPER_MODES`.

    ``faithful`` paraphrases the draft; ``leak`` adds one of ``leaks`` the request does not hold
    (a withheld value, an unseen id); ``omit`` drops the first value to copy; ``garbage`` and
    ``empty`` are unusable text; ``error`` is HTTP 500; ``timeout`` answers after ``delay`` s.
    """

    mode: str
    leaks: list[str] = field(default_factory=list)
    delay: float = 1.0
    calls: int = 0

    def text(self, body: dict[str, Any]) -> str:
        self.calls += 1
        draft = shopper_draft(body)
        if self.mode == "leak":
            prompt = (body["messages"][0]["content"] + body["messages"][-1]["content"]).lower()
            fresh = [v for v in self.leaks if v.lower() not in prompt]
            leak = fresh[self.calls % len(fresh)] if fresh else "P00000000"
            return f"{paraphrase(draft)} Also, it has to be {leak}."
        if self.mode == "omit":
            values = sorted(shopper_values(body), key=len, reverse=True)
            return re.sub(re.escape(values[0]), "that", draft, flags=re.IGNORECASE) if values else paraphrase(draft)
        if self.mode == "garbage":
            return "zxq vbn qwrt plk mnb vcx lkj hgf dsa poi"
        if self.mode == "empty":
            return ""
        return paraphrase(draft)

    def __call__(self, body: dict[str, Any]) -> dict[str, Any] | Status | Delay | Raw:
        if self.mode == "error":
            self.calls += 1
            return Status(500, "the shopper model crashed")
        if self.mode == "timeout":
            return Delay(self.delay, {"role": "assistant", "content": self.text(body)})
        return {"role": "assistant", "content": self.text(body)}
