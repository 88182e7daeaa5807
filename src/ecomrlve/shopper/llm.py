"""The LLM shopper: a model behind any OpenAI-compatible endpoint phrases the simulated shopper's turns.

The dialogue manager still decides every act (what to state, withhold, correct, confirm); the
model only rewrites the act's template *draft* in the episode's persona. The prompt holds the
draft (made from the act, which carries only what the shopper may say now), the values to keep
verbatim, the persona, the noise level and the conversation the agent has already seen: never
the hidden goal (only the grounding check, in code, reads it). Each reply passes
:mod:`~ecomrlve.shopper.grounding` or is retried once, then
the turn falls back to the templates; fallbacks are counted in ``info["shopper"]``, in the
episode record and in the run summary. Typing noise at ``p_noise(d)`` is added to accepted
replies by the same code as for templates, so the difficulty's noise level holds for any model.

Determinism and replay: the realiser never draws from the dialogue manager's random stream
(drafts, noise and fallbacks use streams derived from the episode key), so a model's answers
cannot change what the shopper decides. Every realised text goes into the episode record
(``record.shopper["texts"]``) and :class:`ReplayShopper` plays them back without a model. A
content-addressed cache (hash of model, full request, sampling parameters and per-call seed →
raw reply) makes a re-run with the same keys reproduce the same texts without calls.

Concurrency: endpoint calls are synchronous (inside ``env.step``), so a run loop hands episode
steps to :meth:`LLMShopper.offload`: each runs in a worker thread holding the shopper's lock,
which is released only while waiting on the endpoint (at most ``concurrency`` requests at
once); environment code never runs in two threads at a time.

A stalled endpoint holds no episode for long: one reply (retries included) gets ``call_timeout``
seconds, waiting for a free request slot included, after which the message falls back to the
templates (counted as an ``endpoint_error``, as a failed call is). After such a timeout the endpoint
is not asked again for ``call_timeout`` seconds (those messages fall back at once), so episodes
waiting on it, and the server's other sessions queued behind them, lose one timeout, not one per
message.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import random
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from ecomrlve.agents.llm import ChatEndpoint, EndpointError, LLMConfig, completion_message
from ecomrlve.envs.journey import acts as A
from ecomrlve.rng import derive_rng, derive_seed
from ecomrlve.shopper.grounding import grounding_for, hidden_strings, value_present
from ecomrlve.shopper.persona import Persona, draw_persona
from ecomrlve.user.acts import DialogueAct
from ecomrlve.user.noise import add_noise
from ecomrlve.user.realiser import (
    EpisodeContext,
    Phrasing,
    Realiser,
    TemplateRealiser,
    TemplateShopper,
    protected_values,
)

PROMPT_VERSION = 1  # part of every cache key: a new prompt never reuses old replies
ATTEMPTS = 2  # one retry, then the template
HISTORY_MESSAGES = 6  # the last messages of the conversation shown to the model
HISTORY_CHARS = 400  # per message
ENDPOINT_ERROR = "endpoint_error"  # the reason recorded for an attempt the endpoint failed
_JOURNEY_ACTS = (A.OpenJourney, A.NextIntent, A.InterruptIntent, A.ResumeIntent)
_T = TypeVar("_T")

#: one chat request (``chat.completions.create`` keyword arguments) -> the reply's text; raises EndpointError
Transport = Callable[[dict[str, Any]], str]


class TextCache:
    """Content-addressed replies on disk: ``DIR/ab/abcdef….txt`` (written atomically)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    @staticmethod
    def key(payload: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.txt"

    def get(self, key: str) -> str | None:
        try:
            return self._path(key).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def put(self, key: str, text: str) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False) as tmp:
            tmp.write(text)
        os.replace(tmp.name, path)


class LLMShopper:
    """A factory of per-episode LLM realisers sharing one endpoint, cache and concurrency bound.

    Args:
        config: the endpoint, model and sampling (``sampling.seed`` is the base of every call's seed).
        phrasing: the half of templates (drafts and fallbacks) and personas to use.
        concurrency: endpoint requests in flight at once.
        cache_dir: where replies are cached (None: no cache).
        transport: how a request is sent (default: the OpenAI client on ``config``); tests pass an
            in-process stand-in of the same protocol.
        call_timeout: seconds one reply may take, retries and the wait for a slot included, before the
            message falls back to the templates (default: ``config.timeout``).
    """

    def __init__(self, config: LLMConfig, *, phrasing: Phrasing = "train", concurrency: int = 8,
                 cache_dir: Path | None = None, transport: Transport | None = None,
                 call_timeout: float | None = None) -> None:
        self.config = config
        self.phrasing = phrasing
        self.concurrency = concurrency
        self.call_timeout = call_timeout if call_timeout is not None else config.timeout
        self.cache = TextCache(cache_dir) if cache_dir is not None else None
        self._endpoint = ChatEndpoint(config) if transport is None else None
        self._transport = transport or self._send
        self._slots = threading.BoundedSemaphore(concurrency)
        self._lock = threading.RLock()  # held while environment code runs in a worker thread
        self._executor: ThreadPoolExecutor | None = None
        self._quiet_until = 0.0  # after a timed-out reply: no call before this (time.monotonic)

    def check(self) -> None:
        """Raise :class:`EndpointError` now if the endpoint is down or does not serve the model."""
        if self._endpoint is not None:
            self._endpoint.check_sync()

    def for_episode(self, context: EpisodeContext) -> LLMRealiser:
        return LLMRealiser(self, context)

    async def offload(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """Run ``fn`` (an env's reset or step) in a worker thread under the shopper's lock."""
        if self._executor is None:  # more threads than request slots: steps that call no model find one free
            self._executor = ThreadPoolExecutor(2 * self.concurrency + 2, thread_name_prefix="shopper")

        def locked() -> _T:
            with self._lock:
                return fn(*args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._executor, locked)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None

    def describe(self) -> dict[str, Any]:
        return {"model": self.config.model, "phrasing": self.phrasing, "prompt_version": PROMPT_VERSION,
                "sampling": self.config.sampling.request_fields()}

    def reply(self, request: dict[str, Any]) -> tuple[str | None, str]:
        """(raw reply, "cache" | "llm"), or (None, reason) when the endpoint failed or gave no reply in time."""
        key = self.cache.key({"v": PROMPT_VERSION, **request}) if self.cache else ""
        if self.cache is not None and (cached := self.cache.get(key)) is not None:
            return cached, "cache"
        if time.monotonic() < self._quiet_until:
            return None, f"{ENDPOINT_ERROR}: not asked: a reply timed out (over {self.call_timeout:g} s) just before"
        try:
            with self._released():
                text = self._call(request, time.monotonic() + self.call_timeout)
        except EndpointError as exc:
            return None, f"{ENDPOINT_ERROR}: {' '.join(str(exc).split())[:160]}"
        except TimeoutError as exc:
            self._quiet_until = time.monotonic() + self.call_timeout
            return None, f"{ENDPOINT_ERROR}: {exc}"
        if self.cache is not None:
            self.cache.put(key, text)
        return text, "llm"

    def _call(self, request: dict[str, Any], deadline: float) -> str:
        """The transport's reply by ``deadline`` (TimeoutError otherwise). The call runs on a daemon thread of
        its own that holds a request slot until it ends; a stalled one is left to its transport's timeout."""
        if not self._slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"no free request slot within {self.call_timeout:g} s "
                               f"({self.concurrency} requests in flight)")
        outcome: list[Any] = []
        done = threading.Event()

        def call() -> None:
            try:
                outcome.append(self._transport(request))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                outcome.append(exc)
            finally:
                self._slots.release()
                done.set()

        threading.Thread(target=call, name="shopper-call", daemon=True).start()
        if not done.wait(max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"no reply within {self.call_timeout:g} s")
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return str(outcome[0])

    @contextlib.contextmanager
    def _released(self) -> Iterator[None]:
        """Let other episodes' environment code run while this thread waits on the endpoint."""
        held = 0
        with contextlib.suppress(RuntimeError):  # not held by this thread (a plain, unthreaded caller)
            while True:
                self._lock.release()
                held += 1
        try:
            yield
        finally:
            for _ in range(held):
                self._lock.acquire()

    def _send(self, request: dict[str, Any]) -> str:
        assert self._endpoint is not None
        completion = self._endpoint.complete(request)
        return completion_message(completion, self.config.base_url).content or ""


def _request(config: LLMConfig, persona: Persona, p_noise: float, draft: str, values: tuple[str, ...],
             history: list[dict[str, str]], seed: int) -> dict[str, Any]:
    """The chat request for one shopper message: nothing in it comes from the hidden goal."""
    rules = [
        "You are role-playing a customer who is chatting with an online shop's assistant.",
        f"Your persona: {persona.describe()}.",
        f"Typing noise for this conversation: {p_noise:.2f} on a 0-0.125 scale "
        f"({'clean text' if p_noise == 0 else 'an occasional typo is fine'}).",
        "Rewrite the DRAFT below as the customer's next chat message, in your persona's voice. Say exactly "
        "what the draft says: do not leave anything out, and do not add any product, brand, colour, size, "
        "number, price, date or id that is not in the draft.",
    ]
    if values:
        rules.append("Copy these values exactly as written: " + "; ".join(f'"{v}"' for v in values) + ".")
    rules.append("Answer with the message only: no quotes, no labels, no explanations.")
    shown = [f"{'Customer' if m['role'] == 'user' else 'Assistant'}: {m['content'][:HISTORY_CHARS]}"
             for m in history[-HISTORY_MESSAGES:]]
    user = (("Conversation so far:\n" + "\n".join(shown) + "\n\n") if shown else "") + f"DRAFT: {draft}"
    sampling = replace(config.sampling, seed=seed)
    request: dict[str, Any] = {"model": config.model, "messages": [{"role": "system", "content": "\n".join(rules)},
                                                                   {"role": "user", "content": user}],
                               **sampling.request_fields()}
    if config.extra_body:
        request["extra_body"] = config.extra_body
    return request


class LLMRealiser:
    """One episode's LLM shopper: drafts, model replies, grounding, fallbacks and the record of texts."""

    def __init__(self, shopper: LLMShopper, context: EpisodeContext) -> None:
        self.shopper = shopper
        self.context = context
        self.persona = draw_persona(context.key, shopper.phrasing)
        self.texts: list[str] = []
        self.sources: list[str] = []  # per message: llm | cache | retry | fallback | template
        self.failures: list[list[str]] = []  # per message: why each rejected attempt was rejected
        self._hidden: set[str] | None = None  # the goal's text values: checked against, never shown to the model

    def realise(self, acts: tuple[DialogueAct, ...], rng: random.Random) -> str:
        """One message for ``acts``; ``rng`` (the dialogue manager's) is never drawn from."""
        index = len(self.texts)
        key = self.context.key
        phrasing = self.shopper.phrasing
        fallback_rng = derive_rng(*key, "shopper-fallback", index)
        failures: list[str] = []
        text: str | None = None
        source = "template"  # a journey's lead wraps a request its intent's shopper already phrased: no model
        if not any(isinstance(act, _JOURNEY_ACTS) for act in acts):
            text, source = self._from_model(acts, index, failures)
        if text is None:
            text = TemplateRealiser(self.context.p_noise, phrasing).realise(acts, fallback_rng)
        self.texts.append(text)
        self.sources.append(source)
        self.failures.append(failures)
        return text

    def _from_model(self, acts: tuple[DialogueAct, ...], index: int, failures: list[str]) -> tuple[str | None, str]:
        key, config = self.context.key, self.shopper.config
        draft = TemplateRealiser(0.0, self.shopper.phrasing).realise(acts, derive_rng(*key, "shopper-draft", index))
        # the act's exact values that its draft states (some protect context from noise and are not said)
        values = tuple(dict.fromkeys(v for v in protected_values(acts) if v.lower() != "any" and value_present(v, draft)))
        history = self.context.history()
        if self._hidden is None:
            self._hidden = hidden_strings(self.context.hidden_goal())
        grounding = grounding_for(draft, values, history, hidden=self._hidden)
        for attempt in range(ATTEMPTS):
            seed = derive_seed(config.sampling.seed or 0, *key, "shopper-sample", index, attempt) & 0x7FFFFFFF
            reply, how = self.shopper.reply(_request(config, self.persona, self.context.p_noise, draft, values,
                                                     history, seed))
            if reply is None:
                failures.append(how)
                continue
            reasons = grounding.failures(reply, self.context.catalog)
            if not reasons:
                noisy = add_noise(" ".join(reply.split()), self.context.p_noise,
                                  derive_rng(*key, "shopper-noise", index), values)
                return noisy, how if attempt == 0 else "retry"
            failures.append(",".join(reasons))
        return None, "fallback"

    def stats(self) -> dict[str, int]:
        """Counts for ``info``: messages so far, how many came from the model, fallbacks, rejected attempts."""
        return shopper_counts(self.sources, self.failures)

    def record(self) -> dict[str, Any]:
        return {"realiser": "llm", **self.shopper.describe(), "persona": self.persona.name, "texts": self.texts,
                "sources": self.sources, "failures": self.failures}


def shopper_counts(sources: Iterable[str], failures: Iterable[list[str]]) -> dict[str, int]:
    counts = Counter(sources)
    return {"messages": sum(counts.values()), "llm": counts["llm"] + counts["cache"] + counts["retry"],
            "fallbacks": counts["fallback"], "rejected": sum(len(f) for f in failures)}


class RecordedRealiser:
    """Plays back an LLM episode's recorded texts, in order, with no model."""

    def __init__(self, note: dict[str, Any]) -> None:
        self.note = note
        self.position = 0

    def realise(self, acts: tuple[DialogueAct, ...], rng: random.Random) -> str:
        texts = self.note["texts"]
        if self.position >= len(texts):
            raise ValueError("the record holds fewer shopper texts than the episode asks for; it was not "
                             "written by this version")
        self.position += 1
        return str(texts[self.position - 1])

    def stats(self) -> dict[str, int]:
        return shopper_counts(self.note["sources"][:self.position], self.note["failures"][:self.position])

    def record(self) -> dict[str, Any]:
        return self.note


@dataclass(frozen=True)
class ReplayShopper:
    """The shopper of a recorded episode (``record.shopper``): its phrasing set, or its LLM texts."""

    note: dict[str, Any]

    def for_episode(self, context: EpisodeContext) -> Realiser:
        if self.note.get("realiser") == "llm":
            return RecordedRealiser(self.note)
        return TemplateShopper(self.note.get("phrasing", "train")).for_episode(context)


def shopper_summary(records: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Per environment: shopper messages, model-written ones, fallbacks, fallback rate and why attempts failed.

    Only episodes whose record has LLM shopper texts count; empty when there are none.
    """
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        note = record.shopper
        if not note or note.get("realiser") != "llm":
            continue
        row = out.setdefault(record.env_id, {"episodes": 0, "messages": 0, "llm": 0, "fallbacks": 0,
                                             "rejected": 0, "reasons": Counter()})
        row["episodes"] += 1
        for name, value in shopper_counts(note["sources"], note["failures"]).items():
            row[name] += value
        for attempt in (reason for message in note["failures"] for reason in message):
            if attempt.startswith(ENDPOINT_ERROR):  # its message may hold commas
                row["reasons"][ENDPOINT_ERROR] += 1
            else:
                row["reasons"].update(attempt.split(","))
    for row in out.values():
        asked = row["llm"] + row["fallbacks"]  # messages the model was asked for (journey leads are not)
        row["fallback_rate"] = round(row["fallbacks"] / asked, 4) if asked else 0.0
        row["reasons"] = dict(sorted(row["reasons"].items()))
    return dict(sorted(out.items()))
