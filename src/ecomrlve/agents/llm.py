"""An agent backed by any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, Ollama,
llama.cpp server, OpenAI, ...), playing every environment through the observation alone.

Two modes:

* ``native``: the tool schemas from the observation go in the request's ``tools`` field and the
  server returns ``tool_calls`` (vLLM needs ``--enable-auto-tool-choice --tool-call-parser ...``).
* ``text``: for servers without a tool-call parser. The tools are written into the system message
  (:func:`ecomrlve.prompts.tools_prompt`), tool results come back as ``<tool_response>`` blocks,
  and the model's raw text is the action: the environment parses its ``<tool_call>`` blocks with
  its own parser (:func:`ecomrlve.actions.parse_action`). A server whose chat template or parser
  still returns native ``tool_calls`` (vLLM and most others do) gets that turn played as native
  mode plays it: the calls are the action, and their results come back as ``tool`` messages.

Either way the action handed to the environment is exactly what the model produced (argument
strings untouched), so malformed output is judged by the environment (reward -1) and the
episode record's ``actions`` replay the episode without the model. The client retries
transient failures (connection errors, timeouts, 408/409/429/5xx) with exponential backoff;
what remains is raised as :class:`EndpointError` with a message that says what to fix.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from ecomrlve.errors import UserInputError
from ecomrlve.prompts import tool_responses_prompt, tools_prompt
from ecomrlve.protocol import Observation

if TYPE_CHECKING:
    import openai

Mode = Literal["native", "text"]
MODES: tuple[Mode, ...] = ("native", "text")


class EndpointError(RuntimeError):
    """The endpoint cannot serve the run (down, unknown model, refused key, bad request)."""


def import_openai() -> Any:
    """The ``openai`` module, or a clear error saying which extra installs it."""
    try:
        import openai
    except ImportError:
        raise EndpointError("the LLM agent needs the openai client: pip install 'ecomrlve[llm]'") from None
    return openai


def api_key_from_env(variable: str | None, option: str = "--api-key-env") -> str:
    """The API key in ``$variable`` (default ``$OPENAI_API_KEY``, else a placeholder local servers accept)."""
    if variable is None:
        return os.environ.get("OPENAI_API_KEY", "EMPTY")
    if variable not in os.environ:
        raise UserInputError(f"{option}: environment variable {variable} is not set")
    return os.environ[variable]


@dataclass(frozen=True)
class SamplingParams:
    """Sampling parameters sent with every request; ``None`` leaves the server's default."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def request_fields(self) -> dict[str, Any]:
        return {name: value for name, value in asdict(self).items() if value is not None}


@dataclass(frozen=True)
class LLMConfig:
    """Which endpoint and model to call, and how.

    Args:
        model: the served model name (``--served-model-name`` in vLLM).
        base_url: the OpenAI-compatible root, e.g. ``http://localhost:8000/v1``.
        api_key: sent as a bearer token (local servers accept anything).
        mode: ``native`` tool calling or ``text`` (tools in the prompt, ``<tool_call>`` blocks).
        sampling: temperature, top_p, max_tokens, seed.
        timeout: seconds per request before it is retried.
        max_retries: retries of a transient failure (with exponential backoff) before giving up.
        extra_body: extra request fields for the server, e.g.
            ``{"chat_template_kwargs": {"enable_thinking": False}}`` for Qwen3 on vLLM.
    """

    model: str
    base_url: str
    api_key: str = "EMPTY"
    mode: Mode = "native"
    sampling: SamplingParams = field(default_factory=SamplingParams)
    timeout: float = 120.0
    max_retries: int = 4
    extra_body: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")

    def describe(self) -> dict[str, Any]:
        """What a report shows about the model (never the API key)."""
        return {"model": self.model, "base_url": self.base_url, "mode": self.mode,
                "sampling": self.sampling.request_fields(), "extra_body": self.extra_body}


class ChatEndpoint:
    """One OpenAI-compatible endpoint: the sync and async clients, shared by all episodes."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._openai = import_openai()
        self._sync: openai.OpenAI | None = None
        self._async: openai.AsyncOpenAI | None = None

    def _client_options(self) -> dict[str, Any]:
        c = self.config
        return {"base_url": c.base_url, "api_key": c.api_key, "timeout": c.timeout, "max_retries": c.max_retries}

    @property
    def sync_client(self) -> openai.OpenAI:
        if self._sync is None:
            self._sync = self._openai.OpenAI(**self._client_options())
        return self._sync

    @property
    def async_client(self) -> openai.AsyncOpenAI:
        if self._async is None:
            self._async = self._openai.AsyncOpenAI(**self._client_options())
        return self._async

    async def aclose(self) -> None:
        """Close the async client's connections (before its event loop ends)."""
        if self._async is not None:
            await self._async.close()
            self._async = None

    def request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                sampling: SamplingParams) -> dict[str, Any]:
        """Keyword arguments of one ``chat.completions.create`` call."""
        kwargs: dict[str, Any] = {"model": self.config.model, "messages": messages, **sampling.request_fields()}
        if tools:
            kwargs["tools"] = tools
        if self.config.extra_body:
            kwargs["extra_body"] = self.config.extra_body
        return kwargs

    def complete(self, kwargs: dict[str, Any]) -> Any:
        try:
            return self.sync_client.chat.completions.create(**kwargs)
        except self._openai.APIError as exc:
            raise self.explain(exc) from exc
        except ValueError as exc:  # the client could not decode the body it got with HTTP 200
            raise self.unreadable(exc) from exc

    async def complete_async(self, kwargs: dict[str, Any]) -> Any:
        try:
            return await self.async_client.chat.completions.create(**kwargs)
        except self._openai.APIError as exc:
            raise self.explain(exc) from exc
        except ValueError as exc:  # the client could not decode the body it got with HTTP 200
            raise self.unreadable(exc) from exc

    async def check(self) -> None:
        """Fail before the first episode if the endpoint is down or does not serve the model."""
        try:
            served = [m.id async for m in self.async_client.models.list()]
        except self._openai.NotFoundError:
            return  # no /models route on this server: the first request will tell
        except self._openai.APIError as exc:
            raise self.explain(exc) from exc
        self._require_served(served)

    def check_sync(self) -> None:
        """:meth:`check` with the sync client (for code outside an event loop)."""
        try:
            served = [m.id for m in self.sync_client.models.list()]
        except self._openai.NotFoundError:
            return
        except self._openai.APIError as exc:
            raise self.explain(exc) from exc
        self._require_served(served)

    def _require_served(self, served: list[str]) -> None:
        if served and self.config.model not in served:
            raise EndpointError(f"model {self.config.model!r} is not served at {self.config.base_url}; "
                                f"it serves: {', '.join(served)}")

    def unreadable(self, exc: ValueError) -> EndpointError:
        detail = " ".join(str(exc).split())[:120]
        return EndpointError(f"{self.config.base_url} (model {self.config.model!r}) answered with a body that is "
                             f"not a chat completion ({type(exc).__name__}: {detail})")

    def explain(self, exc: Exception) -> EndpointError:
        """Turn a client exception (after the client's own retries) into a message that says what to fix."""
        o, c = self._openai, self.config
        where = f"{c.base_url} (model {c.model!r})"
        if isinstance(exc, o.APITimeoutError):
            return EndpointError(f"{where} did not answer within {c.timeout:g} s, {c.max_retries} retries; "
                                 "raise --timeout or check the server")
        if isinstance(exc, o.APIConnectionError):
            return EndpointError(f"cannot reach {c.base_url} after {c.max_retries} retries ({exc}); is the server up?")
        if isinstance(exc, o.NotFoundError):
            return EndpointError(f"{where}: not found (wrong model name or base URL?): {_server_message(exc)}")
        if isinstance(exc, (o.AuthenticationError, o.PermissionDeniedError)):
            return EndpointError(f"{where} refused the API key (--api-key-env): {_server_message(exc)}")
        if isinstance(exc, o.RateLimitError):
            return EndpointError(f"{where} still rate-limited after {c.max_retries} retries; lower --concurrency")
        if isinstance(exc, o.APIStatusError):
            message = _server_message(exc)
            hint = ""
            if exc.status_code == 400 and "context" in message.lower():
                hint = ("; the conversation outgrew the model's context window: serve it with a longer one "
                        "(vLLM --max-model-len) or lower --max-tokens")
            return EndpointError(f"{where} answered HTTP {exc.status_code}: {message}{hint}")
        return EndpointError(f"{where}: {exc}")


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return str(getattr(exc, "message", exc))


@dataclass
class TokenUsage:
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, usage: Any) -> None:
        self.requests += 1
        prompt, completion = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
        self.prompt_tokens += prompt if isinstance(prompt, int) else 0  # servers may omit or garble usage
        self.completion_tokens += completion if isinstance(completion, int) else 0


class LLMAgent:
    """One episode's conversation with the model: the full history goes with every request.

    Use :meth:`act` (sync client) or :meth:`act_async` (shared async client, for many
    episodes in flight); both return the model's turn in a wire format the environment accepts.
    """

    def __init__(self, endpoint: ChatEndpoint, sampling: SamplingParams | None = None) -> None:
        self.endpoint = endpoint
        self.mode = endpoint.config.mode
        self.sampling = sampling or endpoint.config.sampling
        self.history: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] | None = None
        self.turn = 0
        self.usage = TokenUsage()
        self._native_turn = False  # the last turn was native tool calls: their results come back as tool messages

    def act(self, observation: Observation) -> dict[str, Any] | str:
        return self._accept(self.endpoint.complete(self._request(observation)))

    async def act_async(self, observation: Observation) -> dict[str, Any] | str:
        return self._accept(await self.endpoint.complete_async(self._request(observation)))

    def _request(self, observation: Observation) -> dict[str, Any]:
        if observation.tools is not None:
            self.tools = observation.tools
        self.history.extend(self._incoming(observation.messages))
        return self.endpoint.request(list(self.history), self.tools if self.mode == "native" else None, self.sampling)

    def _incoming(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Environment messages as the model should see them in this mode.

        Results of native tool calls stay ``tool`` messages in either mode: a strict server wants
        the assistant message that holds ``tool_calls`` answered by one ``tool`` message per call.
        """
        out: list[dict[str, Any]] = []
        results: list[str] = []
        for message in messages:
            role = message["role"]
            if role == "tool" and self.mode == "text" and not self._native_turn:
                results.append(message["content"])
            elif role == "tool":
                out.append({"role": "tool", "tool_call_id": message["tool_call_id"], "content": message["content"]})
            elif role == "system" and self.mode == "text":
                out.append({"role": "system", "content": f"{message['content']}\n\n{tools_prompt(self.tools or [])}"})
            else:
                out.append({"role": role, "content": message["content"]})
        if results:  # tool results precede the customer's reply in the observation
            out.insert(0, {"role": "user", "content": tool_responses_prompt(results)})
        return out

    def _accept(self, completion: Any) -> dict[str, Any] | str:
        """The action for the model's turn, kept in the history as the model should see it next time.

        Native ``tool_calls`` are the action in either mode (a text-mode request whose answer came
        back as native calls with ``content: null`` must not become an empty turn).
        """
        message = completion_message(completion, self.endpoint.config.base_url)
        self.usage.add(getattr(completion, "usage", None))
        calls = [_call_dict(call, f"call_{self.turn}_{i}") for i, call in enumerate(message.tool_calls or ())]
        self.turn += 1
        self._native_turn = bool(calls)
        if self.mode == "text" and not calls:
            text = message.content or ""
            self.history.append({"role": "assistant", "content": text})
            return text
        action: dict[str, Any] = {"role": "assistant", "content": message.content}
        if calls:
            action["tool_calls"] = calls
        self.history.append(action)
        return action


def completion_message(completion: Any, base_url: str) -> Any:
    """The first choice's message, after checking the shape the rest of the agent relies on.

    The client hands back whatever a server sent with HTTP 200 (a plain string for a non-JSON
    body, objects with missing or mistyped fields): anything else is an :class:`EndpointError`.
    """
    choices = getattr(completion, "choices", None)
    if not isinstance(completion, BaseModel) or not isinstance(choices, list):
        body = " ".join(str(completion).split())[:80]
        raise EndpointError(f"{base_url} did not answer with a chat completion (body starts {body!r})")
    if not choices:
        raise EndpointError(f"{base_url} returned a completion without choices")
    message = getattr(choices[0], "message", None)
    content, calls = getattr(message, "content", None), getattr(message, "tool_calls", None)
    if message is None or not isinstance(content, (str, type(None))) or not isinstance(calls, (list, type(None))):
        raise EndpointError(f"{base_url} returned a malformed completion message (content must be text or null, "
                            "tool_calls a list)")
    return message


def _call_dict(call: Any, default_id: str) -> dict[str, Any]:
    """A tool call exactly as the server sent it, with an id the tool result can refer to."""
    function = getattr(call, "function", None)
    name = getattr(function, "name", None)
    arguments = getattr(function, "arguments", None)
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {"id": getattr(call, "id", None) or default_id, "type": getattr(call, "type", None) or "function",
            "function": {"name": name, "arguments": arguments}}
