"""The episode runtime: reset/step for every environment (SPEC §2).

It owns everything environments share: the world, the tools and their per-turn budget
``B_tool(d)``, the three action wire formats, the turn budget ``T_max(d)`` and the user-caused
turns that do not count against it, surfacing of ids for ``r_hall``, the final reward, and the
episode record. ``(env_id, difficulty, seed)`` determines the episode completely.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ecomrlve.actions import AgentAction, InvalidActionError, parse_action
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.catalog.synthetic import default_catalog
from ecomrlve.difficulty import Difficulty
from ecomrlve.difficulty.scheduler import AdaptiveScheduler
from ecomrlve.envs import Environment, Problem, TaskOutcome, get_environment, resolve_env_ids
from ecomrlve.prompts import system_prompt
from ecomrlve.rewards import RewardBreakdown, RewardWeights, compose_reward
from ecomrlve.rng import derive_rng
from ecomrlve.tools import TOOLS, Tool, ToolArgumentsError, ToolContext, ToolError, answer_tool
from ecomrlve.user.realiser import Realiser, TemplateRealiser
from ecomrlve.world.account import ORDER_ID
from ecomrlve.world.state import World

RECORD_VERSION = 1
MAX_ACTION_CHARS = 32_000
_EPOCH = dt.date(2025, 1, 1)
_PRODUCT_ID = re.compile(r"\bP[0-9A-Z]{8}\b")
_ORDER_ID = re.compile(ORDER_ID)


class Observation(BaseModel):
    """What the agent sees after ``reset`` or ``step``.

    ``messages`` are the new chat messages since the last step in OpenAI format: on reset the
    system prompt and the user's opening; on step one ``tool`` message per call (JSON content,
    with ``tool_call_id``) and/or one ``user`` message. ``tools`` (reset only) are the OpenAI
    function schemas. ``reward`` is 0 until ``done``; the final ``info["reward"]`` holds the
    breakdown. The hidden goal is never here.
    """

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    done: bool = False
    reward: float = 0.0
    info: dict[str, Any] = Field(default_factory=dict)


class EpisodeRecord(BaseModel):
    """Everything needed to audit and replay one episode; one JSON line in a runs file."""

    model_config = ConfigDict(extra="forbid")

    record_version: int = RECORD_VERSION
    env_id: str
    env_version: int
    difficulty: int
    seed: int
    catalog: str
    axes: dict[str, Any]
    tools: list[str]
    messages: list[dict[str, Any]] = Field(description="Full transcript, system prompt first.")
    actions: list[Any] = Field(description="Agent outputs exactly as received, for replay.")
    goal: dict[str, Any] = Field(description="The hidden goal (revealed only after the episode).")
    reward: RewardBreakdown | None = None
    run: dict[str, Any] | None = Field(
        default=None, description="Who played and how (agent, model, task, trial, token usage); set by "
        "evaluation code, not part of the episode, so replay carries it over unchanged.")

    def to_json(self) -> str:
        return self.model_dump_json()


class EcomEnv:
    """One environment session: ``reset`` then ``step`` until ``done``.

    Args:
        env_ids: an environment id ("CART"), a collection ("C1") or a list; ``reset`` picks
            uniformly among them unless told which.
        catalog: the product catalog (default: the embedded synthetic catalog).
        search: a search engine over ``catalog`` (default: lexical BM25, shared per catalog).
        scheduler: adaptive difficulty scheduler used when ``reset`` gets no difficulty.
        overrides: fixed values for difficulty axes, e.g. ``{"p_noise": 0.0}``.
        weights: reward weights.
        realiser: how the user phrases things (default: templates with noise at ``p_noise``).
        denied_categories: category names the store must never sell (safety rule).
        seed: seeds the choice of env, difficulty and episode seed when ``reset`` is not told.
    """

    def __init__(self, env_ids: str | list[str] | tuple[str, ...] = "C1", *, catalog: Catalog | None = None,
                 search: SearchEngine | None = None, scheduler: AdaptiveScheduler | None = None,
                 overrides: dict[str, Any] | None = None, weights: RewardWeights = RewardWeights(),
                 realiser: Realiser | None = None, denied_categories: tuple[str, ...] = (),
                 seed: int = 0) -> None:
        self.env_ids = resolve_env_ids(env_ids)
        self.catalog = catalog if catalog is not None else default_catalog()
        for env_id in self.env_ids:  # refuse at start, in one line, what the catalog cannot host
            reason = get_environment(env_id).unsupported(self.catalog)
            if reason is not None:
                raise ValueError(f"{env_id} cannot run on catalog {self.catalog.name}: {reason}")
        self.search = search if search is not None else shared_search_engine(self.catalog)
        self.scheduler = scheduler
        self.overrides = dict(overrides or {})
        self.weights = weights
        self.realiser = realiser
        self._denied = frozenset(i for i, c in enumerate(self.catalog.categories)
                                 if c.name in denied_categories or c.path[0] in denied_categories)
        self._rng = derive_rng("ecomenv", seed)
        self._episode: _Episode | None = None

    # -- public API ---------------------------------------------------------------------------

    def reset(self, *, env_id: str | None = None, difficulty: int | None = None, seed: int | None = None) -> Observation:
        """Start a new episode; unspecified parts are drawn (difficulty from the scheduler)."""
        env_id = env_id or self._rng.choice(self.env_ids)
        if env_id not in self.env_ids:
            resolve_env_ids(env_id)  # raises a helpful error for unknown ids
        if difficulty is None:
            difficulty = self.scheduler.sample(env_id, self._rng) if self.scheduler else 0
        if seed is None:
            seed = self._rng.getrandbits(31)
        self._episode = _Episode(self, get_environment(env_id), Difficulty.at(difficulty, self.overrides), seed)
        return self._episode.first_observation

    def step(self, action: AgentAction | str | dict[str, Any]) -> Observation:
        """Apply one agent turn (any of the three wire formats) and return what follows."""
        if self._episode is None:
            raise RuntimeError("call reset() before step()")
        if self._episode.done:
            raise RuntimeError("the episode is over; call reset()")
        observation = self._episode.step(action)
        if observation.done and self.scheduler is not None:
            ep = self._episode
            self.scheduler.update(ep.env.env_id, ep.difficulty.d, bool(ep.reward and ep.reward.is_correct))
        return observation

    @property
    def record(self) -> EpisodeRecord:
        """The current episode's record (complete once ``done``)."""
        if self._episode is None:
            raise RuntimeError("no episode yet")
        return self._episode.record()

    @property
    def problem(self) -> Problem:
        """The hidden problem (for oracles and evaluation code only; agents never see it)."""
        if self._episode is None:
            raise RuntimeError("no episode yet")
        return self._episode.problem

    @property
    def environment(self) -> Environment:
        if self._episode is None:
            raise RuntimeError("no episode yet")
        return self._episode.env

    @property
    def done(self) -> bool:
        return self._episode is not None and self._episode.done


_ENGINES: dict[int, SearchEngine] = {}


def shared_search_engine(catalog: Catalog) -> SearchEngine:
    """One search engine (and index) per catalog object in this process."""
    engine = _ENGINES.get(id(catalog))
    if engine is None or engine.catalog is not catalog:
        engine = _ENGINES[id(catalog)] = SearchEngine(catalog)
    return engine


class _Episode:
    """The state of one episode; created by :meth:`EcomEnv.reset`."""

    def __init__(self, owner: EcomEnv, env: Environment, difficulty: Difficulty, seed: int) -> None:
        self.env, self.difficulty, self.seed = env, difficulty, seed
        self.weights = owner.weights
        self.catalog_name = owner.catalog.name
        key = (env.env_id, difficulty.d, seed)
        today = _EPOCH + dt.timedelta(days=derive_rng(*key, "clock").randrange(730))
        self.world = World(owner.catalog, key, today, denied_categories=owner._denied)
        self.ctx = ToolContext(world=self.world, search=owner.search, difficulty=difficulty,
                               search_rng=derive_rng(*key, "search"), ask_user=self._ask_user,
                               submit_answer=self._submit_answer)
        realiser = owner.realiser or TemplateRealiser(difficulty.p_noise)
        self.problem = env.generate(self.world, difficulty, derive_rng(*key, "generate"), realiser)
        self.tools, schemas = _toolset(env, difficulty)
        self.t_max = env.turn_budget(self.problem)
        self.turns = 0
        self.user_caused_turns = 0
        self.used_ids: list[str] = []
        self.answer: BaseModel | None = None
        self.done = False
        self.reward: RewardBreakdown | None = None
        self.actions: list[Any] = []
        prompt = system_prompt(today=today, task_instructions=env.instructions, b_tool=difficulty.B_tool)
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": prompt},
            {"role": "user", "content": self.problem.opening},
        ]
        self._surface_from_text(self.problem.opening)
        self.first_observation = Observation(messages=list(self.messages),
                                             tools=json.loads(schemas),
                                             info=self._info())

    def _info(self) -> dict[str, Any]:
        return {"env_id": self.env.env_id, "difficulty": self.difficulty.d, "seed": self.seed,
                "turn": self.turns, "user_caused_turns": self.user_caused_turns,
                "turns_left": self.t_max - (self.turns - self.user_caused_turns)}

    # -- callbacks used by tools --------------------------------------------------------------

    def _ask_user(self, question: str) -> str:
        reply = self.problem.user.on_question(question, self.world)
        self._surface_from_text(reply)
        return reply

    def _submit_answer(self, answer: BaseModel) -> None:
        if self.env.accept_answer(self.problem, answer):
            self.answer = answer

    def _surface_from_text(self, text: str) -> None:
        rows = [self.world.catalog.index_of(token) for token in _PRODUCT_ID.findall(text)]
        self.ctx.surface(row for row in rows if row is not None)
        self.ctx.surface_account_ids(_ORDER_ID.findall(text))  # order ids the customer tells the agent

    # -- one turn -------------------------------------------------------------------------------

    def step(self, raw: Any) -> Observation:
        self.actions.append(_assistant_message(raw) if isinstance(raw, AgentAction) else raw)
        try:
            action = parse_action(raw, turn=self.turns, max_chars=MAX_ACTION_CHARS)
            validated = [(call, self._tool(call.name).validate(call.arguments)) for call in action.tool_calls]
        except (InvalidActionError, ToolArgumentsError) as exc:
            return self._finish("invalid_output", invalid_reason=str(exc))
        self.turns += 1
        self.messages.append(_assistant_message(action))
        user = self.problem.user
        user.begin_turn()
        new_messages: list[dict[str, Any]] = []
        events: list[tuple[str, BaseModel, dict[str, Any]]] = []
        for index, (call, arguments) in enumerate(validated):
            tool = self._tool(call.name)
            if index >= self.difficulty.B_tool:
                result = ToolError("tool_budget_exceeded", f"Only {self.difficulty.B_tool} tool calls run per turn; "
                                   "this one was not executed.").result()
            elif self.answer is not None:
                result = ToolError("task_closed", "The answer was already submitted.").result()
            else:
                self.used_ids.extend(tool.used_ids(arguments))
                try:
                    result = tool.run(self.ctx, arguments)
                except ToolError as exc:
                    result = exc.result()
                events.append((tool.name, arguments, result))
            new_messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name,
                                 "content": json.dumps(result, ensure_ascii=False, separators=(",", ":"))})
        if self.answer is None and not user.gave_up:
            reply = user.on_turn_end(action.message, events, self.world)
            if reply is not None:
                self._surface_from_text(reply)
                new_messages.append({"role": "user", "content": reply})
        self.user_caused_turns += int(user.end_turn())
        self.messages.extend(new_messages)
        if self.answer is not None:
            return self._finish("answered", new_messages)
        if user.gave_up:
            return self._finish("user_gave_up", new_messages)
        if self.turns - self.user_caused_turns >= self.t_max:
            return self._finish("turn_budget", new_messages)
        return Observation(messages=new_messages, info=self._info())

    def _tool(self, name: str) -> Tool:
        tool = self.tools.get(name)
        if tool is None:
            raise InvalidActionError("unknown_tool", f"unknown tool {name!r}; available: {', '.join(self.tools)}")
        return tool

    def _finish(self, termination: str, new_messages: list[dict[str, Any]] | None = None, *,
                invalid_reason: str | None = None) -> Observation:
        self.done = True
        if invalid_reason is not None:
            outcome = TaskOutcome(r_task=-1.0, is_correct=False, details={})
        else:
            outcome = self.env.verify(self.problem, self.world, self.answer)
        self.reward = compose_reward(
            r_task=outcome.r_task, is_correct=outcome.is_correct, turns=self.turns,
            user_caused_turns=self.user_caused_turns, t_max=self.t_max, used_ids=self.used_ids,
            surfaced_ids=self.surfaced_ids(), termination=termination, weights=self.weights,
            invalid_reason=invalid_reason, safety_violation=outcome.safety_violation, task_details=outcome.details,
        )
        info = self._info() | {"reward": self.reward.model_dump(), "is_correct": self.reward.is_correct,
                               "termination": termination}
        if invalid_reason is not None:
            info["invalid_reason"] = invalid_reason
        return Observation(messages=new_messages or [], done=True, reward=self.reward.r_total, info=info)

    def surfaced_ids(self) -> set[str]:
        return self.ctx.surfaced_ids()

    def record(self) -> EpisodeRecord:
        return EpisodeRecord(
            env_id=self.env.env_id, env_version=self.env.version, difficulty=self.difficulty.d, seed=self.seed,
            catalog=self.catalog_name, tools=list(self.tools),
            axes=self.difficulty.as_dict() | ({"adapted": self.problem.adapted} if self.problem.adapted else {}),
            messages=self.messages, actions=self.actions, goal=self.problem.goal.model_dump(mode="json"),
            reward=self.reward,
        )


_TOOLSETS: dict[tuple[str, Difficulty], tuple[dict[str, Tool], str]] = {}


def _toolset(env: Environment, difficulty: Difficulty) -> tuple[dict[str, Tool], str]:
    """The tools of ``env`` at ``difficulty`` and their schemas (as JSON), built once per process."""
    key = (env.env_id, difficulty)
    if key not in _TOOLSETS:
        tools = {name: TOOLS[name] for name in env.tool_names}
        tools["answer"] = answer_tool(env.answer_arguments, env.answer_description(difficulty), env.answer_id_arguments)
        _TOOLSETS[key] = tools, json.dumps([t.schema() for t in tools.values()])
    return _TOOLSETS[key]


def _assistant_message(action: AgentAction) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": action.message}
    if action.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
            for c in action.tool_calls
        ]
    return message
