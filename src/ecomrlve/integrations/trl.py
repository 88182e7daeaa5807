"""Our environments inside TRL's ``GRPOTrainer`` (``environment_factory``), with the curriculum in the loop.

TRL creates one environment object per rollout, calls ``reset(**row)`` with the dataset row,
offers the object's public methods to the model as tools and scores the rollout with
``get_reward()``. :class:`TRLEnvironments` builds those classes from the tool registry: one class
per distinct toolset (an environment's tools at a difficulty; PD's ``answer`` states k_rec, so PD
gets one class per k_rec), each method generated from the tool's argument model, so names,
argument types and descriptions are those of the OpenAI schemas the session emits.

How an episode maps onto TRL's rollout loop:

- The row's prompt holds the episode's system prompt; ``reset`` starts the episode and returns the
  shopper's opening, which TRL appends to the (empty) user message.
- One assistant message is one turn. The tool methods are coroutines, and TRL runs the async calls
  of one message together (``asyncio.gather``): the calls of a message are collected and played as
  one turn (``begin_turn``, ``call_tool`` each, ``end_turn``), so ``B_tool`` and ``T_max`` mean what
  they mean everywhere else. The shopper's reply at the end of the turn comes back inside the
  turn's last tool result, under ``customer_says``. (Were the calls run one at a time, each would
  be a turn of its own: coarser accounting, never a wrong episode.)
- A message without tool calls ends TRL's rollout (free text never reaches the shopper), hence the
  prompt's note that only tool calls reach the customer (``ask_user`` asks them). ``get_reward`` ends
  an episode still running (termination ``rollout_ended``), reports it once to the curriculum and returns r_total.
- A tool call with arguments that break the schema ends the episode with reward -1, as anywhere
  else; a call to a tool the environment does not have is answered by TRL itself ("not found") and
  shows in TRL's ``tools/failure_frequency``.
- Lengths: TRL drops a tool result that would push the completion past ``max_completion_length``
  and ends the rollout without a word. ``EcomGRPOTrainer`` therefore measures oracle episodes with the
  trainer's tokenizer and chat template at start-up (:func:`check_lengths`) and refuses a
  ``max_completion_length`` (or a model context) that cannot hold one tool round trip, naming the
  smallest value that works; and after every generation it counts the rollouts TRL cut short (a
  dropped tool result, the completion length, ``max_tool_calling_iterations``): they are scored as
  they stand (termination ``cut_short``) and logged as ``ecom/cut_short*`` with a warning.

The G rollouts of a prompt replay the same ``(env, d, seed)``. With adaptive difficulty the
dataset is a stream whose rows draw ``d`` from the shared scheduler as training consumes them;
every finished rollout updates it once. Each training process holds a copy of the scheduler;
``EcomGRPOTrainer`` gathers every process's finished episodes after each optimizer step and applies
them in the same order everywhere, so the copies agree and so do the rows every process draws.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import inspect
import itertools
import json
import logging
import operator
import statistics
import threading
import time
import types
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union, get_args, get_origin

from pydantic import BaseModel

from ecomrlve.actions import ToolCall
from ecomrlve.catalog import Catalog, load_catalog
from ecomrlve.catalog.synthetic import default_catalog
from ecomrlve.difficulty import MAX_DIFFICULTY, Difficulty
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, DifficultyWindow
from ecomrlve.envs import get_environment, resolve_env_ids
from ecomrlve.episode import EcomEnv, shared_search_engine
from ecomrlve.errors import UserInputError
from ecomrlve.prompts import TALK_RULE
from ecomrlve.protocol import DEFAULT_VERBOSITY, Verbosity, result_text
from ecomrlve.rng import derive_seed
from ecomrlve.runner import Curriculum, Plan, Task, parse_difficulty, play
from ecomrlve.session import EpisodeRecord, EpisodeSession, resolve_secret, toolset
from ecomrlve.tools import Tool
from ecomrlve.user.realiser import Realiser, RealiserFactory

if TYPE_CHECKING:
    from datasets import Dataset, IterableDataset

#: appended to the system prompt: under TRL only tool calls reach the shopper
TRL_NOTE = ("Only tool calls reach the customer, who replies in tool results; a message without a tool call ends "
            "the conversation.")
ROLLOUT_ENDED = "rollout_ended"
#: the termination of an episode still running when TRL cut its rollout short (see :data:`CUT_REASONS`)
CUT_SHORT = "cut_short"
#: why TRL ended a rollout that had not ended itself
CUT_REASONS = {
    "tool_result_dropped": "a tool result would have pushed the completion past max_completion_length",
    "completion_length": "the completion reached max_completion_length",
    "tool_iterations": "the model called tools after max_tool_calling_iterations rounds",
}
logger = logging.getLogger(__name__)
_EPISODE_OVER = {"error": "episode_over", "message": "The conversation has ended; do not call more tools."}


# -- tool methods generated from the registry ----------------------------------------------------------


def _hint(annotation: Any) -> Any:
    """The argument's type as ``transformers.get_json_schema`` reads hints: a nested model becomes ``dict``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return dict
    if origin is Union or origin is types.UnionType:  # an optional argument is said once, as its type
        return functools.reduce(operator.or_, (_hint(a) for a in args if a is not type(None)))
    if origin is list:
        return types.GenericAlias(list, (_hint(args[0]),)) if args else list
    if origin is Literal or origin is None:
        return annotation
    if len(args) >= 1 and getattr(annotation, "__metadata__", None) is not None:  # Annotated[T, ...]
        return _hint(args[0])
    return annotation


def _json_type(schema: dict[str, Any]) -> str:
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    return " or ".join(str(s.get("type", "any")) for s in options) or "any"


def _note(schema: dict[str, Any]) -> str:
    """What the schema says of a value in words: its description, else its range ("1-99") when it has both
    bounds (a schema says a range once, in ``minimum``/``maximum``; a hint cannot carry it)."""
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    text = schema.get("description") or next((s["description"] for s in options if s.get("description")), "")
    if not text and "minimum" in schema and "maximum" in schema:
        text = f"{schema['minimum']}-{schema['maximum']}"
    return str(text)


def _argument_description(schema: dict[str, Any]) -> str:
    """The schema's description of one argument (:func:`_note`); an object argument also lists its fields
    (a hint can't), grouped by type: "Optional fields: a (note), b (strings); c (numbers)"."""
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    text = _note(schema)
    for option in options:
        if option.get("type") == "object" and option.get("properties"):
            by_type: dict[str, list[str]] = defaultdict(list)
            for name, prop in option["properties"].items():
                note = _note(prop).rstrip(".")
                by_type[_json_type(prop)].append(f"{name} ({note})" if note else name)
            fields = "; ".join(f"{', '.join(names)} ({kind}{'s' if len(names) > 1 else ''})"
                               for kind, names in by_type.items())
            text = f"{text} Optional fields: {fields}."
    return " ".join(text.split())


def tool_docstring(tool: Tool) -> str:
    """The tool's Google docstring: its description, then one ``Args:`` line per argument."""
    properties = tool.schema()["function"]["parameters"].get("properties", {})
    lines = [tool.description]
    if properties:
        lines += ["", "Args:"] + [f"    {name}: {_argument_description(prop) or name.replace('_', ' ')}"
                                  for name, prop in properties.items()]
    return "\n".join(lines)


def tool_method(tool: Tool) -> Callable[..., Any]:
    """An async method named, typed and documented as ``tool``; every call goes to the episode's session.

    It accepts any keywords (the signature TRL and transformers read is ``__signature__``), so
    arguments that break the schema reach the session, which ends the episode as invalid output.
    """
    async def method(self: EcomToolEnv, **arguments: Any) -> str:
        return await self._call(tool.name, arguments)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name, info in tool.arguments.model_fields.items():
        default = inspect.Parameter.empty if info.is_required() else info.get_default(call_default_factory=True)
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=_hint(info.annotation)))
    method.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    method.__annotations__ = {p.name: p.annotation for p in parameters[1:]}
    method.__name__ = method.__qualname__ = tool.name
    method.__doc__ = tool_docstring(tool)
    return method


# -- metrics ----------------------------------------------------------------------------------------------


@dataclass
class _Rollout:
    record: EpisodeRecord
    calls: int
    invalid_calls: int
    env_seconds: float
    cut: str | None = None  # a key of CUT_REASONS when TRL cut the rollout short


class CurriculumWindows(Protocol):
    """A curriculum whose windows the log reports: the in-process scheduler, or a server's (``ServerScheduler``)."""

    def windows(self) -> dict[str, DifficultyWindow]: ...


@dataclass
class RolloutStats:
    """Finished rollouts since the last :meth:`flush`, summarised for the trainer's logger (thread-safe)."""

    _rollouts: list[_Rollout] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, rollout: _Rollout) -> None:
        with self._lock:
            self._rollouts.append(rollout)

    def flush(self, scheduler: CurriculumWindows | None = None) -> dict[str, float]:
        """Means per env × d and overall, scheduler windows; empties the buffer."""
        with self._lock:
            rollouts, self._rollouts = self._rollouts, []
        metrics: dict[str, float] = {}
        if rollouts:
            groups: dict[tuple[str, int], list[_Rollout]] = defaultdict(list)
            for rollout in rollouts:
                groups[rollout.record.env_id, rollout.record.difficulty].append(rollout)
            for (env_id, d), group in sorted(groups.items()):
                rewards = [r.record.reward for r in group if r.record.reward is not None]
                for name in ("r_total", "r_task", "r_eff", "r_hall"):
                    metrics[f"ecom/{env_id}/d{d}/{name}"] = statistics.fmean(getattr(r, name) for r in rewards)
                metrics[f"ecom/{env_id}/d{d}/success"] = statistics.fmean(float(r.is_correct) for r in rewards)
                metrics[f"ecom/{env_id}/d{d}/episodes"] = float(len(group))
            rewards = [r.record.reward for r in rollouts if r.record.reward is not None]
            calls = sum(r.calls for r in rollouts)
            metrics |= {
                "ecom/episodes": float(len(rollouts)),
                "ecom/success": statistics.fmean(float(r.is_correct) for r in rewards),
                "ecom/r_total": statistics.fmean(r.r_total for r in rewards),
                "ecom/r_hall_rate": statistics.fmean(float(r.r_hall < 0) for r in rewards),
                "ecom/turns_per_episode": statistics.fmean(float(r.turns) for r in rewards),
                "ecom/tool_calls_per_episode": calls / len(rollouts),
                "ecom/answered": statistics.fmean(float(r.termination == "answered") for r in rewards),
                "ecom/env_seconds_per_rollout": statistics.fmean(r.env_seconds for r in rollouts),
                "ecom/seconds/environment": sum(r.env_seconds for r in rollouts),
            }
            if calls:  # no call, no validity to speak of
                metrics["ecom/tool_call_validity"] = 1.0 - sum(r.invalid_calls for r in rollouts) / calls
            metrics["ecom/cut_short"] = float(sum(r.cut is not None for r in rollouts))
            for reason in CUT_REASONS:
                metrics[f"ecom/cut_short/{reason}"] = float(sum(r.cut == reason for r in rollouts))
        if scheduler is not None:
            for env_id, window in scheduler.windows().items():
                metrics[f"ecom/{env_id}/window_low"] = float(window.low)
                metrics[f"ecom/{env_id}/window_high"] = float(window.high)
        return metrics


# -- the environments -------------------------------------------------------------------------------------


class EcomToolEnv:
    """One rollout's episode (TRL makes one per rollout and reuses it via ``reset``).

    Subclasses made by :class:`TRLEnvironments` add one generated method per tool of a toolset.
    """

    _environments: TRLEnvironments  # set on each generated subclass

    def __init__(self) -> None:
        self._env: EcomEnv | None = None
        self._task: Task | None = None
        self._pending: list[tuple[ToolCall, asyncio.Future[str]]] = []
        self._calls = self._invalid_calls = 0
        self._delivered = 0  # tool results handed to TRL
        self._cut: str | None = None
        self._seconds = 0.0
        self._reported = True

    def reset(self, **row: Any) -> str:
        """Start the row's episode (``env_id``, ``difficulty``, ``seed``, ``index``); returns the shopper's opening.
        A row whose ``key`` or system prompt is not this run's was made for another episode key: refused."""
        started = time.perf_counter()
        if self._env is None:
            self._env = self._environments.make_env()
        d = int(row["difficulty"])
        self._task = Task(row["env_id"], d, int(row["index"]), int(row["seed"]))
        observation = self._env.reset(env_id=self._task.env_id, difficulty=d, seed=self._task.seed)
        system = observation.messages[0]["content"]
        prompt = row.get("prompt")
        if row.get("key", self._environments.key) != self._environments.key or (
                prompt and prompt[0].get("content") != episode_system_prompt(system)):
            raise ValueError(f"the row {self._task.slot} was made for another episode key (secret, catalog or "
                             "overrides differ from this TRLEnvironments)")
        self._pending, self._calls, self._invalid_calls, self._reported = [], 0, 0, False
        self._delivered, self._cut = 0, None
        self._seconds = time.perf_counter() - started
        return str(observation.messages[1]["content"])

    def get_reward(self) -> float:
        """r_total of the episode (ended here if still running); the curriculum sees it once."""
        started = time.perf_counter()
        session = self._session()
        if not session.done:
            session.finish(CUT_SHORT if self._cut else ROLLOUT_ENDED)
        record = session.record()
        if not self._reported and self._task is not None:
            self._reported = True
            self._seconds += time.perf_counter() - started
            self._environments.observe(self._task, record, _Rollout(record, self._calls, self._invalid_calls,
                                                                    self._seconds, self._cut))
        assert record.reward is not None
        return record.reward.r_total

    def _note_completion(self, messages: list[dict[str, Any]], ended: bool) -> str | None:
        """What TRL kept of this rollout: its messages, and whether its last token ended a message (EOS).

        Returns (and remembers for :meth:`get_reward`) why TRL cut the rollout short, or None: a tool
        result handed over but not in ``messages`` was dropped for length; a completion that did not
        end was stopped at ``max_completion_length``; a last message still calling tools hit
        ``max_tool_calling_iterations``. An episode that had ended was not cut short, whatever came after.
        """
        if self._session().done:
            self._cut = None
            return None
        kept = sum(message.get("role") == "tool" for message in messages)
        last = messages[-1] if messages else {}
        if self._delivered > kept:
            self._cut = "tool_result_dropped"
        elif not ended:
            self._cut = "completion_length"
        elif last.get("role") == "assistant" and last.get("tool_calls"):
            self._cut = "tool_iterations"
        else:
            self._cut = None
        return self._cut

    def _session(self) -> EpisodeSession:
        if self._env is None:
            raise RuntimeError("reset() was not called")
        return self._env.session

    async def _call(self, name: str, arguments: dict[str, Any]) -> str:
        """Queue one call; the first call of a message plays the whole message as one turn."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._pending.append((ToolCall(id=f"call_{self._calls + len(self._pending)}", name=name,
                                       arguments=arguments), future))
        if len(self._pending) == 1:
            await asyncio.sleep(0)  # the other calls of this message (same gather) register meanwhile
            pending, self._pending = self._pending, []
            for (_, waiting), result in zip(pending, self._play_turn([call for call, _ in pending])):
                waiting.set_result(result)
        return await future

    def _play_turn(self, calls: list[ToolCall]) -> list[str]:
        started = time.perf_counter()
        session = self._session()
        if session.done:
            self._delivered += len(calls)
            return [tool_result_text(_EPISODE_OVER, self._verbosity())] * len(calls)
        session.begin_turn(None)
        contents: list[dict[str, Any]] = []
        for call in calls:
            if session.done:  # a malformed call ended the episode
                contents.append(_EPISODE_OVER)
                continue
            result = session.call_tool(call)
            self._calls += 1
            self._invalid_calls += result.content.get("error") == "invalid_output"
            contents.append(result.content)
        observation = session.end_turn()
        said = [m["content"] for m in observation.messages if m["role"] == "user"]
        if said:
            contents[-1] = {**contents[-1], "customer_says": "\n".join(said)}
        self._seconds += time.perf_counter() - started
        self._delivered += len(contents)
        return [tool_result_text(c, self._verbosity()) for c in contents]

    def _verbosity(self) -> Verbosity:
        return self._environments.verbosity


def tool_result_text(content: dict[str, Any], verbosity: Verbosity = DEFAULT_VERBOSITY) -> str:
    """A tool result as TRL hands it to the model: JSON without spaces, in ``verbosity`` (as in a ``tool`` message)."""
    return result_text(content, verbosity)


def episode_system_prompt(system: str) -> str:
    """The system message of a TRL row: the episode's system prompt with :data:`TRL_NOTE` in place of the
    rule that free text reaches the customer (:data:`~ecomrlve.prompts.TALK_RULE`)."""
    return system.replace(f"- {TALK_RULE}", f"- {TRL_NOTE}")


class TRLEnvironments:
    """The ``environment_factory`` classes, prompts and curriculum of one training run.

    Args:
        collection: environment ids or a collection (``"C1"``).
        difficulty: ``"adaptive"`` (drawn from ``scheduler``), ``"N"`` or ``"LOW-HIGH"``.
        catalog: a catalog or catalog spec (default: the embedded synthetic catalog).
        secret: the deployment secret of every episode key (see :func:`~ecomrlve.session.resolve_secret`).
        overrides: fixed values for difficulty axes.
        scheduler: the adaptive scheduler (default: a fresh one over the collection when adaptive).
        seed: the curriculum's draws.
        realiser: the shopper (None: the train half of the template phrasings; an
            :class:`~ecomrlve.shopper.LLMShopper` has a model phrase its messages).
        verbosity: how tool results are written (``compact``, the default, or ``full``; see
            :class:`~ecomrlve.episode.EcomEnv`).
    """

    def __init__(self, collection: str | list[str] = "C1", *, difficulty: str = "adaptive",
                 catalog: Catalog | str | None = None, secret: str | None = None,
                 overrides: dict[str, Any] | None = None, scheduler: AdaptiveScheduler | None = None,
                 seed: int = 0, realiser: Realiser | RealiserFactory | None = None,
                 verbosity: Verbosity = DEFAULT_VERBOSITY) -> None:
        self.env_ids = resolve_env_ids(collection)
        self.realiser = realiser
        self.verbosity = verbosity
        self.difficulties = parse_difficulty(difficulty)
        self.secret = resolve_secret(secret)
        self.overrides = dict(overrides or {})
        self.catalog = load_catalog(catalog) if isinstance(catalog, str) else catalog or default_catalog()
        #: names what an episode key holds besides a row's env_id, d and seed (8 hex digits, not the secret): a row
        #: made under another secret, catalog or overrides is refused at reset
        self.key = format(derive_seed("trl-row", self.secret, self.catalog.name,
                                      json.dumps(self.overrides, sort_keys=True, default=str)) & 0xFFFFFFFF, "08x")
        self.scheduler = (scheduler or AdaptiveScheduler(self.env_ids)) if self.difficulties is None else None
        self.curriculum = Curriculum.per_task(self.scheduler, seed) if self.scheduler else Curriculum()
        self.stats = RolloutStats()
        self._held: list[tuple[Task, EpisodeRecord]] | None = None
        self._outcomes_lock = threading.Lock()
        self._prompt_env = self.make_env()
        self._toolset_names, self.factories = self._build_classes()

    def make_env(self) -> EcomEnv:
        """An :class:`EcomEnv` over the shared catalog and search engine (one per rollout object)."""
        return EcomEnv(self.env_ids, catalog=self.catalog, search=shared_search_engine(self.catalog),
                       overrides=self.overrides, secret=self.secret, realiser=self.realiser, verbosity=self.verbosity)

    def environment_name(self, env_id: str, d: int) -> str:
        """The ``environment`` column of a row: which toolset class plays ``env_id`` at ``d``."""
        return self._toolset_names[env_id, d]

    def observe(self, task: Task, record: EpisodeRecord, rollout: _Rollout) -> None:
        """One finished rollout: the curriculum (and scheduler) and the metrics see it.

        While a trainer shares outcomes between processes (:meth:`hold_outcomes`), the curriculum
        sees them only in :meth:`apply_outcomes`, in the same order on every process.
        """
        self.stats.add(rollout)
        with self._outcomes_lock:
            if self._held is not None:
                self._held.append((task, record))
                return
        self.curriculum.observe(task, record)

    def hold_outcomes(self) -> None:
        """Keep finished episodes for :meth:`apply_outcomes` instead of observing them at once."""
        with self._outcomes_lock:
            self._held = [] if self._held is None else self._held

    def take_outcomes(self) -> list[tuple[Task, EpisodeRecord]]:
        """The held outcomes since the last call (to gather from every process)."""
        with self._outcomes_lock:
            held, self._held = self._held or [], []
        return held

    def apply_outcomes(self, outcomes: list[tuple[Task, EpisodeRecord]]) -> None:
        """Every process's outcomes, in one agreed order: each process's scheduler moves identically, so
        the rows all processes draw next (and so the G rollouts of a prompt) agree."""
        for task, record in outcomes:
            self.curriculum.observe(task, record)

    def row(self, task: Task) -> dict[str, Any]:
        """The prompt row of ``task`` (its difficulty drawn by the curriculum when adaptive)."""
        d = self.curriculum.difficulty(task)
        system = self._prompt_env.reset(env_id=task.env_id, difficulty=d, seed=task.seed).messages[0]["content"]
        self._prompt_env.session.finish("prompt_only")
        return {"prompt": [{"role": "system", "content": episode_system_prompt(system)},
                           {"role": "user", "content": ""}],
                "environment": self.environment_name(task.env_id, d), "env_id": task.env_id, "difficulty": d,
                "seed": task.seed, "index": task.index, "key": self.key}

    def _build_classes(self) -> tuple[dict[tuple[str, int], str], dict[str, type[EcomToolEnv]]]:
        difficulties = self.difficulties or tuple(range(MAX_DIFFICULTY + 1))
        names: dict[tuple[str, int], str] = {}
        classes: dict[str, type[EcomToolEnv]] = {}
        for env_id in self.env_ids:
            family = get_environment(env_id)
            by_schema: dict[str, tuple[int, dict[str, Tool]]] = {}
            for d in difficulties:
                tools, schemas = toolset(family, Difficulty.at(d, self.overrides))
                by_schema.setdefault(schemas, (d, tools))
            for schemas, (first_d, tools) in by_schema.items():
                name = env_id if len(by_schema) == 1 else f"{env_id}_d{first_d}"
                methods = {tool.name: tool_method(tool) for tool in tools.values()}
                classes[name] = type(name, (EcomToolEnv,), {"_environments": self, **methods})
                for d in difficulties:
                    if toolset(family, Difficulty.at(d, self.overrides))[1] == schemas:
                        names[env_id, d] = name
        return names, classes


# -- lengths: what one rollout needs under a tokenizer ----------------------------------------------------


@dataclass(frozen=True)
class RolloutLengths:
    """Tokens the longest measured oracle episode needed, under one tokenizer and chat template.

    ``prompt``: system prompt, tool schemas and the shopper's opening. ``round_trip``: the completion
    up to and including the second assistant message (the first tool call, its results with the
    shopper's reply, and the call that acts on them): the least a rollout must hold to use a tool
    at all. ``episode``: the whole oracle episode after the prompt. ``where``: the episode whose
    round trip was longest.
    """

    prompt: int
    round_trip: int
    episode: int
    where: str


def trl_messages(record: EpisodeRecord) -> list[dict[str, Any]]:
    """The record's conversation after the opening as a TRL rollout holds it: calls with argument objects,
    results as compact JSON, the shopper's replies inside the turn's last result (``customer_says``)."""
    messages: list[dict[str, Any]] = []
    for message in record.messages[2:]:
        if message["role"] == "assistant":
            calls = [{"type": "function", "function": {"name": call["function"]["name"],
                                                        "arguments": json.loads(call["function"]["arguments"] or "{}")}}
                     for call in message.get("tool_calls") or []]
            messages.append({"role": "assistant", "content": message.get("content") or "",
                             **({"tool_calls": calls} if calls else {})})
        elif message["role"] == "tool":
            messages.append({"role": "tool", "name": message["name"], "content": message["content"]})
        elif message["role"] == "user" and messages and messages[-1]["role"] == "tool":
            content = json.loads(messages[-1]["content"])  # as the record wrote it (its verbosity)
            said = "\n".join(filter(None, [content.get("customer_says"), message["content"]]))
            messages[-1]["content"] = tool_result_text({**content, "customer_says": said}, "full")
        else:
            messages.append({"role": message["role"], "content": message["content"]})
    return messages


def _template_length(tokenizer: Any, messages: list[dict[str, Any]], tools: list[Any], *, prompt: bool) -> int:
    return len(tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=prompt, tokenize=True,
                                             return_dict=False))


def start_difficulties(environments: TRLEnvironments) -> tuple[int, ...]:
    """The difficulties a run draws from its start: the fixed ones, or (adaptive) 0 up to the highest
    window edge now (a resumed scheduler's included); later promotions are watched by ``ecom/cut_short``."""
    if environments.difficulties is not None:
        return environments.difficulties
    assert environments.scheduler is not None
    top = max(environments.scheduler.window(env_id).high for env_id in environments.env_ids)
    return tuple(range(top + 1))


def measure_lengths(environments: TRLEnvironments, tokenizer: Any, *, difficulties: tuple[int, ...] | None = None,
                    seeds: int = 2) -> RolloutLengths:
    """Token lengths of oracle episodes of every environment at ``difficulties`` (default: those the run starts
    at; ``seeds`` each, keys of their own), rendered as TRL renders them; the template shopper speaks."""
    env = EcomEnv(environments.env_ids, catalog=environments.catalog, search=shared_search_engine(environments.catalog),
                  overrides=environments.overrides, secret=environments.secret, verbosity=environments.verbosity)
    worst = RolloutLengths(0, 0, 0, "")
    for env_id in environments.env_ids:
        for d in difficulties or start_difficulties(environments):
            cls = environments.factories[environments.environment_name(env_id, d)]
            instance = cls()
            tools = [getattr(instance, name) for name in sorted(vars(cls))
                     if not name.startswith("_") and name not in ("reset", "get_reward")]
            for index in range(seeds):
                record = play(env, "oracle", env_id=env_id, difficulty=d,
                              seed=derive_seed("trl-lengths", env_id, d, index) & 0x7FFFFFFF)
                prompt = [{"role": "system", "content": episode_system_prompt(record.messages[0]["content"])},
                          {"role": "user", "content": record.messages[1]["content"]}]
                messages = trl_messages(record)
                asked = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
                start = _template_length(tokenizer, prompt, tools, prompt=True)
                trip = _template_length(tokenizer, prompt + messages[:asked[1] + 1], tools, prompt=False) - start \
                    if len(asked) > 1 else 0
                whole = _template_length(tokenizer, prompt + messages, tools, prompt=False) - start
                trip = trip or whole
                where = f"{env_id} d={d}" if trip > worst.round_trip else worst.where
                worst = RolloutLengths(max(worst.prompt, start), max(worst.round_trip, trip),
                                       max(worst.episode, whole), where)
    return worst


def check_lengths(environments: TRLEnvironments, tokenizer: Any, *, max_completion_length: int | None,
                  max_model_length: int | None) -> RolloutLengths:
    """Refuse, in one line naming the smallest value that works, lengths that cannot hold one tool round trip
    (TRL would drop the tool result and end the rollout without a word); return the measured lengths."""
    lengths = measure_lengths(environments, tokenizer)
    if max_completion_length is not None and max_completion_length < lengths.round_trip:
        raise UserInputError(
            f"max_completion_length={max_completion_length} cannot hold one tool round trip: {lengths.where} needs "
            f"{lengths.round_trip} tokens with this tokenizer (a call, its result and the shopper's reply, the next "
            f"call), and TRL would drop the result and end the rollout silently; set max_completion_length to at "
            f"least {lengths.round_trip} (a whole oracle episode takes up to {lengths.episode})")
    if max_model_length is not None and max_model_length < lengths.prompt + lengths.round_trip:
        raise UserInputError(
            f"the model's context of {max_model_length} tokens cannot hold the prompt ({lengths.prompt} tokens) and "
            f"one tool round trip ({lengths.round_trip}, {lengths.where}); it needs at least "
            f"{lengths.prompt + lengths.round_trip}")
    return lengths


def make_dataset(environments: TRLEnvironments, n: int, *, seed: int = 0) -> Dataset | IterableDataset:
    """Prompt rows (system prompt, ``environment``, env id, difficulty, seed) for ``GRPOTrainer``.

    Fixed difficulties: ``n`` tasks per environment and difficulty, as a ``Dataset``. Adaptive:
    ``n`` tasks (environments drawn uniformly) as an ``IterableDataset`` whose rows draw their
    difficulty from the scheduler when training reaches them.
    """
    from datasets import Dataset, IterableDataset
    from datasets.iterable_dataset import ExamplesIterable

    plan = Plan(environments.env_ids, environments.difficulties, n, seed, draw_envs=environments.difficulties is None)
    if environments.difficulties is not None:
        return Dataset.from_list([environments.row(task) for task in plan])

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        yield from ((i, environments.row(task)) for i, task in enumerate(plan))

    # built directly: ``from_generator`` would pickle the generator (and the scheduler) to fingerprint it
    return IterableDataset(ExamplesIterable(rows, {}))


def _logged_trainer_class() -> type:
    """``GRPOTrainer`` that adds to every log entry its rollouts' :class:`RolloutStats`, the curriculum's windows
    and where the steps' seconds went; subclasses set ``_ecom_stats`` and ``_ecom_scheduler``."""
    from trl import GRPOTrainer

    class EcomLoggedTrainer(GRPOTrainer):
        _ecom_stats: RolloutStats
        _ecom_scheduler: Any  # an object with ``windows()``, or None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._ecom_seconds = {"step": 0.0, "rollouts": 0.0}  # since the last log entry

        def training_step(self, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return super().training_step(*args, **kwargs)
            finally:
                self._ecom_seconds["step"] += time.perf_counter() - started

        def _generate_and_score_completions(self, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return super()._generate_and_score_completions(*args, **kwargs)
            finally:
                if self.model is not None and self.model.training:
                    self._ecom_seconds["rollouts"] += time.perf_counter() - started

        def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
            if self.model is not None and self.model.training:
                metrics = self._ecom_stats.flush(self._ecom_scheduler)
                if metrics.get("ecom/cut_short"):
                    reasons = ", ".join(f"{int(metrics[f'ecom/cut_short/{r}'])} {why}" for r, why in CUT_REASONS.items()
                                        if metrics.get(f"ecom/cut_short/{r}"))
                    logger.warning("%d of %d rollouts were cut short (%s); they were scored as they stood "
                                   "(termination %s)", metrics["ecom/cut_short"], metrics["ecom/episodes"], reasons,
                                   CUT_SHORT)
                logs.update(metrics | self._seconds_split(metrics.get("ecom/seconds/environment", 0.0)))
            super().log(logs, start_time)

        def _seconds_split(self, environment: float) -> dict[str, float]:
            """Where the training steps since the last entry went: rollouts (generation, tools, scoring), of which
            the environment (reset, tools, scoring), and learning (forward, backward, optimizer)."""
            step, rollouts = self._ecom_seconds["step"], self._ecom_seconds["rollouts"]
            self._ecom_seconds = {"step": 0.0, "rollouts": 0.0}
            if not step:
                return {}
            return {"ecom/seconds/step": step, "ecom/seconds/rollouts": rollouts,
                    "ecom/seconds/learning": max(0.0, step - rollouts), "ecom/environment_share": environment / step}

    return EcomLoggedTrainer


def ecom_trainer_class() -> type:
    """``GRPOTrainer`` over ``environments``: :class:`RolloutStats` (and the scheduler's windows) in every log
    entry, and the outcomes of all processes applied to every process's scheduler after each step."""
    from accelerate.utils import gather_object
    from transformers import TrainerCallback

    class ShareOutcomes(TrainerCallback):
        """After every optimizer step, every process's finished episodes update every process's scheduler."""

        def __init__(self, environments: TRLEnvironments) -> None:
            self.environments = environments

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.environments.apply_outcomes(gather_object(self.environments.take_outcomes()))

    class EcomGRPOTrainer(_logged_trainer_class()):  # type: ignore[misc]
        """Refuses lengths that cannot hold one tool round trip (:func:`check_lengths`) before it builds anything."""

        def __init__(self, model: Any, *, environments: TRLEnvironments, **kwargs: Any) -> None:
            args, tokenizer = kwargs.get("args"), kwargs.get("processing_class")
            self.ecom_lengths: RolloutLengths | None = None
            if args is not None and tokenizer is not None:  # else TRL loads them: checked below
                self.ecom_lengths = self._check(environments, tokenizer, args, model)
            factories: dict[str, Callable[[], Any]] = dict(environments.factories)
            callbacks = [*(kwargs.pop("callbacks", None) or []), ShareOutcomes(environments)]
            super().__init__(model, environment_factory=factories, callbacks=callbacks, **kwargs)
            if self.ecom_lengths is None:
                self.ecom_lengths = self._check(environments, self.processing_class, self.args, self.model)
            environments.hold_outcomes()
            self.ecom_environments = environments
            self._ecom_stats, self._ecom_scheduler = environments.stats, environments.scheduler

        @staticmethod
        def _check(environments: TRLEnvironments, tokenizer: Any, args: Any, model: Any) -> RolloutLengths:
            config = getattr(model, "config", None)
            config = getattr(config, "text_config", None) or config
            context = getattr(args, "vllm_max_model_length", None) if getattr(args, "use_vllm", False) else None
            return check_lengths(environments, tokenizer, max_completion_length=args.max_completion_length,
                                 max_model_length=context or getattr(config, "max_position_embeddings", None))

        def _tool_call_loop(self, prompts: Any, prompt_ids: Any, completion_ids: Any, completions: Any,
                            *rest: Any) -> Any:
            """TRL's loop, then each rollout's environment hears what TRL kept of it (see ``EcomToolEnv._note_completion``)."""
            result = super()._tool_call_loop(prompts, prompt_ids, completion_ids, completions, *rest)
            kept_messages, kept_ids = result[1], result[2]
            ends = {*self.eos_token_ids, self._tokenizer.pad_token_id}
            rollouts: list[Any] = list(self.environments or [])
            for environment, messages, ids in zip(rollouts, kept_messages, kept_ids):
                if isinstance(environment, EcomToolEnv):
                    environment._note_completion(messages, bool(ids) and ids[-1] in ends)
            return result

    return EcomGRPOTrainer


def server_trainer_class() -> type:
    """``GRPOTrainer`` whose rollouts are :class:`ServerRollouts` on a running server, logged like
    :func:`ecom_trainer_class`'s (the server's curriculum windows; the server counts the outcomes itself)."""
    from ecomrlve.server.client import ServerScheduler

    class ServerGRPOTrainer(_logged_trainer_class()):  # type: ignore[misc]
        def __init__(self, model: Any, *, rollouts: ServerRollouts, **kwargs: Any) -> None:
            super().__init__(model, reward_funcs=[server_reward], rollout_func=rollouts, **kwargs)
            self._ecom_stats, self._ecom_scheduler = rollouts.stats, ServerScheduler(rollouts.url, rollouts.token)

    return ServerGRPOTrainer



# -- rollouts on a running server -----------------------------------------------------------------------


def _suffix_ids(tokenizer: Any, messages: list[dict[str, Any]]) -> list[int]:
    """The tokens the chat template adds for ``messages`` after an assistant turn, and the next turn's header."""
    prefix = [{"role": "user", "content": "."}, {"role": "assistant", "content": "."}]
    before = list(tokenizer.apply_chat_template(prefix, tokenize=True, return_dict=False))
    after = list(tokenizer.apply_chat_template(prefix + messages, add_generation_prompt=True, tokenize=True,
                                               return_dict=False))
    ends = [i for i, token in enumerate(before) if token == tokenizer.eos_token_id]
    before = before[:ends[-1] + 1] if ends else before  # templates differ after the end-of-turn token
    if after[:len(before)] != before:
        raise ValueError("the chat template does not render a conversation as a prefix of its continuation")
    return after[len(before):]


@contextlib.contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """Run the block on ``count`` torch threads, then restore the count (None: leave it). On a CPU, generating a
    small model's tokens one at a time is fastest on one thread (each step's matrices are too small to share across
    cores: SmolLM2-135M's rollouts took 89 s on one thread, 175 s on two), while its backward pass gains from every
    core (195 s -> 92 s): a CPU run sets ``environment.rollout_threads: 1``."""
    if count is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass(frozen=True)
class ServerRollouts:
    """A ``rollout_func`` for ``GRPOTrainer`` that plays every rollout on a running ``ecomrlve serve``.

    For each prompt of the batch (TRL passes its G copies) it draws an environment and a seed (from
    ``seed``, the process and a counter; the prompt's text is not used), opens G sessions, resets them all with ``difficulty="adaptive"`` (the server's
    curriculum draws the same d for the same key) and plays each to the end: the policy generates a
    turn (text with ``<tool_call>`` blocks, parsed by the server like any agent output), the
    server's tool results and the shopper's reply are appended as environment tokens (masked out
    of the loss). The server updates its scheduler once per finished episode. The rewards reach the
    trainer as the ``ecom_reward`` field: pass :func:`server_reward` as the reward function.

    Args:
        url: the server (``http://host:port``); ``token``: its bearer token, if any.
        env_ids: the environments to draw from (default: every environment the server offers).
        seed: base of the drawn episode keys.
        max_new_tokens: tokens generated per turn.
        threads: torch threads while the rollouts are generated (None: as set); see :func:`torch_threads`.
        stats: where finished episodes are reported for the trainer's log.
    """

    url: str
    token: str | None = None
    env_ids: tuple[str, ...] = ()
    seed: int = 0
    max_new_tokens: int = 256
    threads: int | None = None
    stats: RolloutStats = field(default_factory=RolloutStats)
    _counter: Iterator[int] = field(default_factory=itertools.count)  # prompts played by this process

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        with torch_threads(self.threads):
            return self._rollouts(prompts, trainer)

    def _rollouts(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        from ecomrlve.rng import derive_rng
        from ecomrlve.server.client import EcomEnvClient, server_windows

        env_ids = self.env_ids or tuple(server_windows(self.url, self.token)["windows"])
        model = trainer.accelerator.unwrap_model(trainer.model)
        group = trainer.num_generations if model.training else trainer.num_generations_eval
        out: dict[str, Any] = {"prompt_ids": [], "completion_ids": [], "logprobs": None, "env_mask": [],
                               "ecom_reward": []}
        if len(prompts) % group:
            raise ValueError(f"expected the batch's prompts in groups of G = {group}, got {len(prompts)}")
        for _ in range(len(prompts) // group):  # TRL hands over each prompt's G copies, consecutively
            rng = derive_rng("server-rollout", self.seed, trainer.accelerator.process_index, next(self._counter))
            env_id, episode_seed = rng.choice(env_ids), rng.getrandbits(31)
            clients = [EcomEnvClient(self.url, token=self.token).sync() for _ in range(group)]
            try:
                firsts = [client.reset(env_id=env_id, difficulty="adaptive", seed=episode_seed) for client in clients]
                prompts_ids = [_prompt_ids(trainer.processing_class, first) for first in firsts]
                shared = TurnCache.of_prompt(model, prompts_ids[0])  # the G rollouts open the same episode
                for client, first, prompt_ids in zip(clients, firsts, prompts_ids):
                    cache = shared.copy() if prompt_ids == prompts_ids[0] else TurnCache.of_prompt(model, prompt_ids)
                    completion_ids, mask, reward = self._play(client, first, prompt_ids, cache, trainer, model)
                    out["prompt_ids"].append(prompt_ids)
                    out["completion_ids"].append(completion_ids)
                    out["env_mask"].append(mask)
                    out["ecom_reward"].append(reward)
            finally:
                for client in clients:
                    client.close()
        return out

    def _play(self, client: Any, result: Any, prompt_ids: list[int], cache: TurnCache, trainer: Any,
              model: Any) -> tuple[list[int], list[int], float]:
        from ecomrlve.server import EcomAction
        from ecomrlve.server.client import episode_record

        tokenizer = trainer.processing_class
        started = time.perf_counter()
        completion: list[int] = []
        mask: list[int] = []
        generating = 0.0
        ran_out = False
        while not result.done:
            budget = min(self.max_new_tokens, trainer.max_completion_length - len(completion))
            if budget <= 0:
                result = client.step(EcomAction(turn=""))  # out of tokens: empty turns run the turn budget out
                ran_out = True
                continue
            tick = time.perf_counter()
            generated = cache.generate(model, prompt_ids + completion, max_new_tokens=budget, do_sample=True,
                                       temperature=trainer.temperature, pad_token_id=tokenizer.pad_token_id)
            generating += time.perf_counter() - tick
            if tokenizer.eos_token_id in generated:
                generated = generated[:generated.index(tokenizer.eos_token_id) + 1]
            completion += generated
            mask += [1] * len(generated)
            result = client.step(EcomAction(turn=tokenizer.decode(generated, skip_special_tokens=True)))
            if not result.done and result.observation.messages:
                environment = _suffix_ids(tokenizer, result.observation.messages)
                completion += environment
                mask += [0] * len(environment)
        record = episode_record(client.state())
        assert record.reward is not None
        calls = sum(len(m.get("tool_calls") or []) for m in record.messages if m["role"] == "assistant")
        invalid = int(record.reward.termination == "invalid_output")
        self.stats.add(_Rollout(record, calls, invalid, time.perf_counter() - started - generating,
                                "completion_length" if ran_out else None))
        return completion, mask, record.reward.r_total


def _prompt_ids(tokenizer: Any, first: Any) -> list[int]:
    """The episode's opening (system prompt, tools, the shopper's first message) as the policy reads it."""
    return list(tokenizer.apply_chat_template(first.observation.messages, tools=first.observation.tools,
                                              add_generation_prompt=True, tokenize=True, return_dict=False))


class TurnCache:
    """One rollout's key/value cache across its turns: each turn the model reads only the tokens added since
    it last wrote (the tool results and the shopper's reply), not the whole conversation again; and the G
    rollouts of a prompt read their common opening once (:meth:`of_prompt`, then :meth:`copy`). On a CPU,
    re-reading the conversation every turn was most of a rollout's time."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache

    @classmethod
    def of_prompt(cls, model: Any, prompt_ids: list[int]) -> TurnCache:
        """The prompt read up to its last token (the first :meth:`generate` reads that one)."""
        import torch
        from transformers import DynamicCache

        cache = DynamicCache()
        with torch.no_grad():
            model(torch.tensor([prompt_ids[:-1]], device=model.device), use_cache=True, **_cache_argument(model, cache))
        return cls(cache)

    def copy(self) -> TurnCache:
        return TurnCache(copy.deepcopy(self.cache))

    def generate(self, model: Any, context: list[int], **sampling: Any) -> list[int]:
        """``model.generate`` on ``context`` (which extends what the cache holds), reading only its new tokens;
        returns the generated ids. The cache then holds everything but the last generated token."""
        import torch

        extra = self.cache.get_seq_length() - (len(context) - 1)
        if extra > 0:  # generate must read at least the context's last token
            self.cache.crop(-extra)
        ids = torch.tensor([context], device=model.device)
        with torch.no_grad():
            output = model.generate(ids, attention_mask=torch.ones_like(ids), **_cache_argument(model, self.cache),
                                    **sampling)
        generated: list[int] = output[0, len(context):].tolist()
        return generated


def _cache_argument(model: Any, cache: Any) -> dict[str, Any]:
    """transformers 5.x renamed ``past_key_values`` to ``cache`` (the old name warns, then goes)."""
    return {"cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values": cache}


def server_prompts(n: int) -> Dataset:
    """``n`` rows for ``GRPOTrainer`` with :class:`ServerRollouts`: each row is one episode the server draws, so
    the prompt says nothing (the episode's system prompt and opening come from the server)."""
    from datasets import Dataset

    return Dataset.from_dict({"prompt": [[{"role": "user", "content": "episode"}]] * n})


def server_reward(completions: list[Any], ecom_reward: list[float], **_: Any) -> list[float]:
    """The reward function of :class:`ServerRollouts`: r_total as the server scored each episode."""
    return list(ecom_reward)
