"""One episode as a session with turn primitives: the runtime every integration drives.

A turn is ``begin_turn(message)``, any number of ``call_tool(call)``, then ``end_turn()``: the
shopper replies, user-caused turns are credited and the budgets decide whether the episode goes
on. :meth:`EpisodeSession.step` is the same turn from one agent output in any of the three wire
formats (a malformed one ends the episode with reward -1). ``finish(reason)`` ends an episode
from outside. The session owns everything environments share: the world, the tools and their
per-turn budget ``B_tool(d)``, the turn budget ``T_max(d)``, surfacing of ids for ``r_hall``,
the final reward and the record. ``(env_id, difficulty, seed, secret)`` determines the episode.

What an agent may see is :meth:`~EpisodeSession.public_state`; the hidden goal is reachable only
through the record once the episode is over, or through :meth:`~EpisodeSession.audit`, which is
for oracles, evaluation code and tests.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import marshal
import os
import secrets
import tempfile
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ecomrlve.actions import (
    AgentAction,
    InvalidActionError,
    ToolCall,
    arguments_text,
    parse_wire_form,
    short_text,
    wire_form,
)
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs import Problem, TaskFamily, TaskOutcome, environment_tools
from ecomrlve.errors import UserInputError
from ecomrlve.prompts import system_prompt
from ecomrlve.protocol import DEFAULT_VERBOSITY, VERBOSITIES, Agent, Observation, Verbosity, result_text
from ecomrlve.rewards import RewardBreakdown, RewardWeights, compose_reward
from ecomrlve.rng import derive_rng
from ecomrlve.tools import Tool, ToolArgumentsError, ToolContext, ToolError, answer_tool
from ecomrlve.tools.cart import cart_summary
from ecomrlve.user.realiser import EpisodeContext, Realiser, RealiserFactory, TemplateRealiser, TemplateShopper
from ecomrlve.world.account import ORDER_ID
from ecomrlve.world.state import World
from ecomrlve.world.surfacing import USER_SOURCE

RECORD_VERSION = 2  # 2: the episode key includes the deployment secret (``secret`` field)
SECRET_ENV_VAR = "ECOMRLVE_SECRET"
CONFIG_DIR_ENV_VAR = "ECOMRLVE_CONFIG_DIR"  # where the installation secret lives
SECRET_FILE_NAME = "secret"
MAX_ACTION_CHARS = 32_000
_EPOCH = dt.date(2025, 1, 1)
#: terminations the session decides itself; ``finish`` takes any other reason
RUNTIME_TERMINATIONS = frozenset({"answered", "turn_budget", "user_gave_up", "invalid_output"})
_DEFAULT_SHOPPER = TemplateShopper()  # frozen: one serves every episode


class EpisodeRecord(BaseModel):
    """Everything needed to audit and replay one episode; one JSON line in a runs file."""

    model_config = ConfigDict(extra="forbid")

    record_version: int = RECORD_VERSION
    env_id: str
    env_version: int
    versions: dict[str, int] = Field(default_factory=dict, description="The content versions the episode "
                                     "depends on: `suite`, its environment's and those a composite plays "
                                     "(CHANGELOG.md); empty in records made before they were kept.")
    difficulty: int
    seed: int
    secret: str | None = Field(default=None, description="The deployment secret of the episode key; needed to "
                               "replay. Never shown to the agent: records belong to the trainer/evaluator. None (left "
                               "out of the JSON) in a record a server gives its client (:meth:`for_client`).")
    secret_fingerprint: str | None = Field(default=None, description="In a record without its secret (a server's "
                                           "client's), the secret's fingerprint (:func:`secret_fingerprint`), to "
                                           "tell runs apart; it cannot be played with. Left out of the JSON when None.")
    catalog: str
    axes: dict[str, Any]
    tools: list[str]
    messages: list[dict[str, Any]] = Field(description="Full transcript, system prompt first.")
    actions: list[Any] = Field(description="Agent outputs exactly as received, for replay.")
    goal: dict[str, Any] = Field(description="The hidden goal (revealed only after the episode).")
    reward: RewardBreakdown | None = None
    shopper: dict[str, Any] | None = Field(
        default=None, description="How the shopper's messages were phrased when not by the default templates "
        "(phrasing set; for an LLM shopper the model, persona and every realised text, so replay needs no "
        "model). Left out of the JSON when None.")
    run: dict[str, Any] | None = Field(
        default=None, description="Who played and how (agent; for an evaluation also model, task, trial, token "
        "usage); set by `ecomrlve run` and evaluation code, not part of the episode, so replay carries it over "
        "unchanged.")
    verbosity: Verbosity | None = Field(
        default=None, description="How the tool results in `messages` were written when not `compact` (the "
        "default; left out of the JSON then): not part of the episode key, replay writes them the same way.")

    def to_json(self) -> str:
        return self.model_dump_json(exclude={name for name in ("secret", "secret_fingerprint", "shopper", "verbosity")
                                             if getattr(self, name) is None} or None)

    def fingerprint(self) -> str | None:
        """The fingerprint of the episode's secret, with or without the secret itself in the record."""
        return self.secret_fingerprint or (secret_fingerprint(self.secret) if self.secret else None)

    def for_client(self) -> EpisodeRecord:
        """The record without the deployment secret: what a server may hand to whoever played the episode.
        With the secret, the key rebuilds the episode (and its oracle) anywhere; without it, it cannot be replayed."""
        return self.model_copy(update={"secret": None, "secret_fingerprint": self.fingerprint()})


class PublicState(BaseModel):
    """What the agent has seen so far, and nothing else: safe to send to a client or a policy."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    env_id: str
    messages: list[dict[str, Any]] = Field(description="The whole transcript so far, system prompt first.")
    tools: list[str]
    cart: dict[str, Any] = Field(description="The cart's lines (with titles and prices) and total.")
    turn: int
    user_caused_turns: int
    turns_left: int
    in_turn: bool = Field(description="A turn was begun and not yet ended.")
    done: bool
    termination: str | None = None
    reward: float | None = Field(default=None, description="r_total once the episode is over.")


@dataclass(frozen=True)
class ToolResult:
    """One tool call as the agent sees it: the decoded result and its ``tool`` transcript message.

    ``executed`` is False when the call was refused (over the per-turn budget, answer already
    submitted, or malformed, which also ends the episode).
    """

    call_id: str
    name: str
    content: dict[str, Any]
    executed: bool
    verbosity: Verbosity = DEFAULT_VERBOSITY
    #: ``compact_result(content)`` where the tool built it with the result (:class:`~ecomrlve.tools.base.ToolOutput`)
    compact: Any = field(default=None, repr=False, compare=False)

    @property
    def message(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.call_id, "name": self.name,
                "content": result_text(self.content, self.verbosity, self.compact)}


@dataclass(frozen=True)
class EpisodeAudit:
    """The hidden side of a running episode. For oracles, evaluation code and tests; never give it to an agent."""

    family: TaskFamily
    problem: Problem
    world: World
    context: ToolContext
    difficulty: Difficulty
    seed: int
    answer: BaseModel | None  # the answer submitted so far (None until the agent answers)

    def oracle(self) -> Agent:
        """The environment's scripted solver for this episode."""
        return self.family.oracle(self.problem)

    def surfaced_ids(self) -> set[str]:
        """Every id the agent has been shown so far (what ``r_hall`` accepts)."""
        return self.context.surfaced_ids()


def resolve_secret(secret: str | None = None) -> str:
    """``secret`` if given, else ``$ECOMRLVE_SECRET``, else this installation's secret (see
    :func:`installation_secret`): one machine plays the same episode for the same key by default."""
    if secret is None:
        secret = os.environ.get(SECRET_ENV_VAR) or installation_secret()
    if not isinstance(secret, str) or not secret:
        raise UserInputError(f"secret must be a non-empty string, got {secret!r}")
    return secret


def config_directory() -> Path:
    """Where the installation's own files live: ``$ECOMRLVE_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/ecomrlve``,
    else ``~/.config/ecomrlve``."""
    chosen = os.environ.get(CONFIG_DIR_ENV_VAR)
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "ecomrlve"


def installation_secret() -> str:
    """The per-installation secret (128 random bits), created on first use in :func:`config_directory`.

    Written atomically with mode 0600 (a hard link of a finished file, so two processes starting at once agree on one
    secret); an unusable directory gives a fresh random secret for this process and a warning, as
    before the file existed: safe, but not reproducible across processes.
    """
    path = config_directory() / SECRET_FILE_NAME
    try:
        return _read_secret_file(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        return _process_secret(f"cannot read {path} ({exc.strerror or exc})")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".secret-", dir=path.parent)  # mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(secrets.token_hex(16) + "\n")
            try:
                os.link(temporary, path)  # fails if another process created it first: then theirs is the secret
            except FileExistsError:
                pass
        finally:
            os.unlink(temporary)
        return _read_secret_file(path)
    except OSError as exc:
        return _process_secret(f"cannot create {path} ({exc.strerror or exc})")


def _read_secret_file(path: Path) -> str:
    secret = path.read_text(encoding="utf-8").strip()
    if not secret:
        raise OSError(f"{path} is empty")
    return secret


_PROCESS_SECRET: list[str] = []  # the fallback, drawn once per process


def _process_secret(why: str) -> str:
    if not _PROCESS_SECRET:
        warnings.warn(f"{why}: episodes use a random secret for this process only; set ${SECRET_ENV_VAR} or "
                      f"${CONFIG_DIR_ENV_VAR} to make them reproducible", RuntimeWarning, stacklevel=3)
        _PROCESS_SECRET.append(secrets.token_hex(16))
    return _PROCESS_SECRET[0]


def secret_fingerprint(secret: str) -> str:
    """A short, stable name for a secret (8 hex digits of a keyed hash) to tell runs apart; it cannot be
    played with, and is safe to print where the secret itself must not be."""
    return hashlib.blake2b(secret.encode("utf-8"), digest_size=4, person=b"ecomrlve-secret").hexdigest()


@dataclass
class _Turn:
    message: str | None
    assistant: dict[str, Any]  # the transcript's assistant message; tool calls are appended as they come
    calls: int = 0
    events: list[tuple[str, BaseModel, dict[str, Any]]] = field(default_factory=list)  # what the shopper reacts to
    new_messages: list[dict[str, Any]] = field(default_factory=list)  # tool results, then the shopper's reply


class EpisodeSession:
    """One episode, from its opening to its record (:meth:`ecomrlve.episode.EcomEnv.reset` creates one).

    Args:
        family: the environment (generator, verifier, oracle) the episode is drawn from.
        difficulty: the resolved difficulty axes.
        seed: the episode seed.
        catalog, search: the shared catalog and its search engine.
        weights: reward weights.
        realiser: how the shopper phrases things: a realiser, or a factory of one per episode
            (default: the train-set templates with noise at ``p_noise``).
        denied_categories: category indices the store must never sell.
        episode_id: an opaque id for servers and logs (default: random, so it reveals nothing).
        verbosity: how tool results are written for the agent (:data:`~ecomrlve.protocol.Verbosity`):
            ``compact`` (default) or ``full``; the same facts, so it is not part of the episode key.
    """

    def __init__(self, family: TaskFamily, difficulty: Difficulty, seed: int, *, catalog: Catalog,
                 search: SearchEngine, weights: RewardWeights = RewardWeights(),
                 realiser: Realiser | RealiserFactory | None = None,
                 denied_categories: frozenset[int] = frozenset(), episode_id: str | None = None,
                 secret: str | None = None, verbosity: Verbosity = DEFAULT_VERBOSITY) -> None:
        if verbosity not in VERBOSITIES:
            raise UserInputError(f"verbosity must be one of {', '.join(VERBOSITIES)}, got {verbosity!r}")
        self._verbosity = verbosity  # how tool results are written; no tool, shopper or verifier reads it
        self._episode_id = episode_id or secrets.token_hex(12)
        self._family, self._difficulty, self._seed = family, difficulty, seed
        self._secret = resolve_secret(secret)
        self._weights = weights
        self._catalog_name = catalog.name
        key = (family.env_id, difficulty.d, seed, self._secret)  # the secret keeps the agent from regenerating it
        today = _EPOCH + dt.timedelta(days=derive_rng(*key, "clock").randrange(730))
        self._world = World(catalog, key, today, denied_categories=denied_categories)
        self._ctx = ToolContext(world=self._world, search=search, difficulty=difficulty,
                                search_stream=functools.partial(derive_rng, *key, "search"),
                                ask_user=_weak_method(self._ask_user), submit_answer=_weak_method(self._submit_answer),
                                hidden_card_fields=family.unused_card_fields, compact_results=verbosity == "compact")
        self._question: str | None = None  # an ask_user question being answered: the shopper has seen it
        self._messages: list[dict[str, Any]] = []  # the opening is realised before the transcript begins
        chosen = realiser if realiser is not None else _DEFAULT_SHOPPER
        context = EpisodeContext(key, family.env_id, difficulty.d, difficulty.p_noise, catalog,
                                 _weak_method(self._shopper_history), _weak_method(self._hidden_goal))
        self._hidden: Any = None
        self._realiser: Realiser = chosen.for_episode(context) if hasattr(chosen, "for_episode") else chosen
        self._problem = family.generate(self._world, difficulty, derive_rng(*key, "generate"), self._realiser)
        self._tools, schemas = toolset(family, difficulty)
        self._t_max = family.turn_budget(self._problem)
        self._turns = 0
        self._user_caused_turns = 0
        self._used_ids: list[str] = []
        self._answer: BaseModel | None = None
        self._done = False
        self._reward: RewardBreakdown | None = None
        self._actions: list[Any] = []
        self._turn: _Turn | None = None
        self._final: Observation | None = None
        prompt = system_prompt(today=today if family.dated else None, task_instructions=family.instructions,
                               b_tool=difficulty.B_tool,
                               irreversible=any(tool.irreversible for tool in self._tools.values()))
        self._messages = [
            {"role": "system", "content": prompt},
            {"role": "user", "content": self._problem.opening},
        ]
        self._surface_from_text(self._problem.opening)
        #: what ``reset`` returns: the system prompt, the shopper's opening and the tool schemas
        # validation copies the list and each message dict: the transcript stays the session's
        self.first_observation = Observation(messages=self._messages, tools=_schemas_copy(schemas),
                                             info=self._info())

    @property
    def episode_id(self) -> str:
        """Opaque and unique (random unless the caller chose it): names the episode to servers and logs."""
        return self._episode_id

    @property
    def env_id(self) -> str:
        return self._family.env_id

    @property
    def done(self) -> bool:
        return self._done

    @property
    def turns(self) -> int:
        """Agent turns so far."""
        return self._turns

    @property
    def user_caused_turns(self) -> int:
        """Turns the shopper caused; they do not count against the turn budget."""
        return self._user_caused_turns

    @property
    def reward(self) -> RewardBreakdown | None:
        """The reward breakdown once the episode is over."""
        return self._reward

    @property
    def family(self) -> TaskFamily:
        """The environment (generator, verifier, oracle) this episode was drawn from; holds no episode state."""
        return self._family

    # -- turn primitives ------------------------------------------------------------------------

    def begin_turn(self, message: str | None = None) -> None:
        """Open an agent turn; ``message`` (if any) is what the agent says to the shopper this turn."""
        self._require_running()
        if self._turn is not None:
            raise RuntimeError("a turn is already open; call end_turn() first")
        if message is not None and not isinstance(message, str):
            raise TypeError(f"message must be a str or None, got {type(message).__name__}")
        turn = self._open_turn(None if message is None else wire_form(message))  # text a record can hold
        self._actions.append(turn.assistant)  # replayable: step() accepts OpenAI assistant messages

    def call_tool(self, call: ToolCall) -> ToolResult:
        """Run one tool call of the open turn.

        Calls beyond ``B_tool`` this turn, and calls after the answer was accepted, are refused
        with an ``error`` result. An unknown tool or arguments that violate its schema end the
        episode as invalid output (reward -1); the refusal is returned and ``end_turn`` gives
        the final observation.
        """
        turn = self._open_turn_or_raise()
        if not isinstance(call, ToolCall):
            raise TypeError(f"call must be an ecomrlve.actions.ToolCall, got {type(call).__name__}")
        try:
            # the same normalisation as a whole turn's: what runs is what the record replays
            single = AgentAction(tool_calls=(call,))
            [call] = parse_wire_form(wire_form(single), turn=self._turns, max_chars=MAX_ACTION_CHARS,
                                      source=single).tool_calls
            tool, arguments = self._validate(call)
        except (InvalidActionError, ToolArgumentsError) as exc:
            reason = short_text(str(exc))
            result = self._add_result(turn, call, {"error": "invalid_output", "message": reason}, executed=False)
            self._finish("invalid_output", turn.new_messages, invalid_reason=reason)
            return result
        return self._run_call(turn, call, tool, arguments)

    def end_turn(self) -> Observation:
        """Close the open turn: the shopper's reply, user-caused accounting, budgets, termination."""
        turn = self._turn
        if turn is None:
            raise RuntimeError("no turn is open; call begin_turn() first")
        self._turn = None
        if self._final is not None:  # a malformed tool call already ended the episode
            return self._final
        user = self._problem.user
        if self._answer is None and not user.gave_up:
            user.note_turn(self._turns)  # the task state records which request this turn served
            self._world.run_planned_events()  # e.g. a planned sell-out of a product the agent was just shown
            reply = user.on_turn_end(turn.message, turn.events, self._world)
            if reply is not None:
                self._surface_from_text(reply)
                self._say(turn, {"role": "user", "content": reply})
        self._user_caused_turns += int(user.end_turn())
        if self._answer is not None:
            return self._finish("answered", turn.new_messages)
        if user.gave_up:
            return self._finish("user_gave_up", turn.new_messages)
        if self._turns - self._user_caused_turns >= self._t_max:
            return self._finish("turn_budget", turn.new_messages)
        return Observation(messages=turn.new_messages, info=self._info())

    def step(self, raw: AgentAction | str | dict[str, Any]) -> Observation:
        """One whole turn from one agent output (any wire format); malformed output ends the episode (-1).

        Every call is validated before any runs, so a malformed turn changes nothing but the ending.
        """
        self._require_running()
        if self._turn is not None:
            raise RuntimeError("a turn begun with begin_turn() is open; end it with end_turn()")
        wire = wire_form(raw)  # the one normalisation of every input path: what is parsed is what is recorded
        self._actions.append(wire)
        try:
            action = parse_wire_form(wire, turn=self._turns, max_chars=MAX_ACTION_CHARS,
                                     source=raw if isinstance(raw, AgentAction) else None)
            validated = [(call, *self._validate(call)) for call in action.tool_calls]
        except (InvalidActionError, ToolArgumentsError) as exc:
            return self._finish("invalid_output", invalid_reason=short_text(str(exc)))
        turn = self._open_turn(action.message)
        for call, tool, arguments in validated:
            self._run_call(turn, call, tool, arguments)
        return self.end_turn()

    def finish(self, reason: str = "stopped") -> Observation:
        """End the episode from outside (a trainer's limit, a closed connection) and score it as it stands.

        The verifier sees the world and answer so far, so an unanswered episode gets ``r_task`` -1.
        ``reason`` becomes the termination; it must not be one the runtime itself decides.
        """
        self._require_running()
        if not reason or reason in RUNTIME_TERMINATIONS:
            raise ValueError(f"finish() needs a reason other than {sorted(RUNTIME_TERMINATIONS)}, got {reason!r}")
        turn, self._turn = self._turn, None
        return self._finish(reason, turn.new_messages if turn else [])

    # -- what may be read -----------------------------------------------------------------------

    def public_state(self) -> PublicState:
        """The transcript so far, cart, turn counters and ending: what the agent has seen (no goal)."""
        return PublicState(
            episode_id=self.episode_id, env_id=self.env_id, messages=self._messages, tools=list(self._tools),
            cart=cart_summary(self._ctx, observer=True), turn=self._turns, user_caused_turns=self._user_caused_turns,
            turns_left=self._turns_left(), in_turn=self._turn is not None, done=self._done,
            termination=self._reward.termination if self._reward else None,
            reward=self._reward.r_total if self._reward else None)

    def record(self) -> EpisodeRecord:
        """The replayable record, hidden goal included; only once the episode is over."""
        if not self._done:
            raise RuntimeError("the record (with the hidden goal) exists only once the episode is over")
        return EpisodeRecord(
            env_id=self.env_id, env_version=self._family.version, versions=self._family.versions(),
            difficulty=self._difficulty.d, seed=self._seed,
            secret=self._secret, catalog=self._catalog_name, tools=list(self._tools),
            axes=self._difficulty.as_dict() | ({"adapted": self._problem.adapted} if self._problem.adapted else {}),
            messages=self._messages, actions=self._actions, goal=self._problem.goal.model_dump(mode="json"),
            reward=self._reward, shopper=getattr(self._realiser, "record", lambda: None)(),
            verbosity=None if self._verbosity == DEFAULT_VERBOSITY else self._verbosity,
        )

    def audit(self) -> EpisodeAudit:
        """The hidden problem and world, for oracles, evaluation code and tests: never for the agent."""
        return EpisodeAudit(self._family, self._problem, self._world, self._ctx, self._difficulty, self._seed,
                            self._answer)

    # -- internals ------------------------------------------------------------------------------

    def _info(self) -> dict[str, Any]:
        """Turn counters (and an LLM shopper's fallback counts): the episode key stays out of the agent's view."""
        info = {"turn": self._turns, "user_caused_turns": self._user_caused_turns, "turns_left": self._turns_left()}
        stats = getattr(self._realiser, "stats", None)
        return info | {"shopper": stats()} if stats is not None else info

    def _hidden_goal(self) -> Any:
        """The goal as JSON data, for a realiser's checks. The opening is realised during generation,
        before the goal is returned, so it comes from a dry generation with templates on a throwaway
        world: the goal is drawn before, and independently of, anything the shopper says."""
        if self._hidden is None:
            family, d, key = self._family, self._difficulty, self._world.key
            world = World(self._world.catalog, key, self._world.today, denied_categories=self._world.denied_categories)
            dry = family.generate(world, d, derive_rng(*key, "generate"), TemplateRealiser(d.p_noise))
            self._hidden = dry.goal.model_dump(mode="json")
        return self._hidden

    def _shopper_history(self) -> list[dict[str, str]]:
        """The conversation as the shopper saw it: the agent's words and its own, no tool results."""
        seen = [{"role": m["role"], "content": m["content"]} for m in self._messages
                if m["role"] in ("user", "assistant") and isinstance(m.get("content"), str) and m["content"]]
        if self._question is not None:
            seen.append({"role": "assistant", "content": self._question})
        return seen

    def _turns_left(self) -> int:
        return self._t_max - (self._turns - self._user_caused_turns)

    def _require_running(self) -> None:
        if self._done:
            raise RuntimeError("the episode is over; call reset()")

    def _open_turn_or_raise(self) -> _Turn:
        self._require_running()
        if self._turn is None:
            raise RuntimeError("no turn is open; call begin_turn() first")
        return self._turn

    def _open_turn(self, message: str | None) -> _Turn:
        self._turns += 1
        self._world.surfacing.turn = self._turns
        turn = self._turn = _Turn(message, {"role": "assistant", "content": message})
        self._messages.append(turn.assistant)
        self._problem.user.begin_turn()
        return turn

    def _validate(self, call: ToolCall) -> tuple[Tool, BaseModel]:
        tool = self._tools.get(call.name)
        if tool is None:
            raise InvalidActionError("unknown_tool", f"unknown tool {short_text(repr(call.name), 60)}; "
                                     f"available: {', '.join(self._tools)}")
        return tool, tool.validate(call.arguments)

    def _run_call(self, turn: _Turn, call: ToolCall, tool: Tool, arguments: BaseModel) -> ToolResult:
        b_tool = self._difficulty.B_tool
        if turn.calls >= b_tool:
            refusal = ToolError("tool_budget_exceeded", f"Only {b_tool} tool calls run per turn; "
                                "this one was not executed.")
            return self._add_result(turn, call, refusal.result(), executed=False)
        if self._answer is not None:
            refusal = ToolError("task_closed", "The answer was already submitted.")
            return self._add_result(turn, call, refusal.result(), executed=False)
        self._used_ids.extend(tool.used_ids(arguments))
        try:
            result, compact = tool.output(self._ctx, arguments)
        except ToolError as exc:
            result, compact = exc.result(), None
        turn.events.append((tool.name, arguments, result))
        return self._add_result(turn, call, result, executed=True, compact=compact)

    def _add_result(self, turn: _Turn, call: ToolCall, content: dict[str, Any], *, executed: bool,
                    compact: Any = None) -> ToolResult:
        turn.calls += 1
        turn.assistant.setdefault("tool_calls", []).append(
            {"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": arguments_text(call.arguments)}})
        result = ToolResult(call.id, call.name, content, executed, self._verbosity, compact)
        self._say(turn, result.message)
        return result

    def _say(self, turn: _Turn, message: dict[str, Any]) -> None:
        turn.new_messages.append(message)
        self._messages.append(message)

    def _ask_user(self, question: str) -> str:
        self._question = question
        try:
            reply = self._problem.user.on_question(question, self._world)
        finally:
            self._question = None
        self._surface_from_text(reply)
        return reply

    def _submit_answer(self, answer: BaseModel) -> None:
        if self._family.accept_answer(self._problem, answer):
            self._answer = answer

    def _surface_from_text(self, text: str) -> None:
        if rows := self._world.catalog.ids_in_text(text):  # most messages name no id: nothing to record
            self._ctx.surface(rows, USER_SOURCE)
        if order_ids := ORDER_ID.findall(text):  # order ids the customer tells the agent
            self._ctx.surface_account_ids(order_ids, USER_SOURCE)

    def _finish(self, termination: str, new_messages: list[dict[str, Any]] | None = None, *,
                invalid_reason: str | None = None) -> Observation:
        self._done = True
        if invalid_reason is not None:
            outcome = TaskOutcome(r_task=-1.0, is_correct=False, details={})
        else:
            outcome = self._family.verify(self._problem.goal, self._problem.state, self._world, self._answer)
        # r_hall asks only whether the ids acted on were surfaced: with none, the ledger need not be read; else only
        # they are looked up
        surfaced = self._ctx.surfaced_among(self._used_ids) if self._used_ids else set()
        self._reward = compose_reward(
            r_task=outcome.r_task, is_correct=outcome.is_correct, turns=self._turns,
            user_caused_turns=self._user_caused_turns, t_max=self._t_max, used_ids=self._used_ids,
            surfaced_ids=surfaced, termination=termination, weights=self._weights,
            invalid_reason=invalid_reason, safety_violation=outcome.safety_violation, task_details=outcome.details,
        )
        info = self._info() | {"reward": self._reward.model_dump(), "is_correct": self._reward.is_correct,
                               "termination": termination}
        if invalid_reason is not None:
            info["invalid_reason"] = invalid_reason
        self._final = Observation(messages=new_messages or [], done=True, reward=self._reward.r_total, info=info)
        return self._final


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _weak_method(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """A session's bound ``method`` that does not keep the session alive: the tool context and
    the shopper's context hold these, and bound methods would make every session a reference
    cycle, left for the cyclic garbage collector (about 6 % of an episode's time)."""
    bound: Any = method
    # a plain weak reference to the session (one, shared by its methods), not a WeakMethod each
    session, function = weakref.ref(bound.__self__), bound.__func__

    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        alive = session()
        if alive is None:
            raise RuntimeError("the episode session is gone")
        result: _R = function(alive, *args, **kwargs)
        return result

    return call


_MARSHALLED: dict[str, bytes] = {}


def _schemas_copy(schemas: str) -> list[dict[str, Any]]:
    """A fresh copy of a toolset's schemas (JSON text) for one observation, from a marshalled
    copy: unmarshalling takes about half the time of parsing the JSON again on every reset."""
    data = _MARSHALLED.get(schemas)
    if data is None:
        data = _MARSHALLED[schemas] = marshal.dumps(json.loads(schemas))
    copy: list[dict[str, Any]] = marshal.loads(data)
    return copy


_TOOLSETS: dict[tuple[TaskFamily, Difficulty], tuple[dict[str, Tool], str]] = {}


def toolset(family: TaskFamily, difficulty: Difficulty) -> tuple[dict[str, Tool], str]:
    """The tools of ``family`` at ``difficulty`` and their schemas (as JSON), built once per process."""
    key = (family, difficulty)  # the family object: an id registered again gets its own tools
    found = _TOOLSETS.get(key)  # one look-up: hashing a Difficulty hashes every axis
    if found is None:
        available = environment_tools(family.env_id)
        tools = {name: available[name].offered(family.unused_card_fields) for name in family.tool_names}
        description = family.answer_description(difficulty) + (" This ends the task." if family.answer_ends_episode else "")
        tools["answer"] = answer_tool(family.answer_arguments, description, family.answer_id_arguments)
        found = _TOOLSETS[key] = tools, json.dumps([t.schema() for t in tools.values()])
    return found

