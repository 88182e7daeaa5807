"""JOURNEY — multi-intent journeys.

Description
    One conversation in which the shopper brings ``journey_intents(d)`` (2-5) requests drawn
    from the environments registered with a JOURNEY role (the seven others), all generated on
    ONE world (catalog, account, order history, cart). The shopper opens with the first request;
    every ``answer`` call closes the request being handled and the shopper moves on ("Thanks!
    Also, ..."). With ``p_switch(d)`` the shopper interrupts a request after the agent's first
    turn on it to raise the next one, and comes back to it once that one is answered. Each
    intent's own environment still applies its own behaviour (withheld constraints, stock-outs,
    requirement changes...). Kinds the catalog cannot host are left out of the draw, and a request
    the world cannot host after the earlier ones is replaced by another kind, or dropped when no
    other kind is left (all recorded in axes.adapted). When POLICY can be drawn, every request runs under the episode's drawn store
    policy numbers, drawn before any order.
Hidden goal
    :class:`JourneyGoal`: per intent the environment id, its hidden goal and whether it gets
    interrupted. The task state (:class:`JourneyState`) holds each intent's own task state, the
    answer given for each intent and the open requests; the verifier reads only goal and state.
Tools
    The union of the intents' tools; ``answer`` takes the union of their answer fields and is
    checked against the request being handled (a mismatch is a tool error, not the end).
Scoring
    ``r_task`` = mean over intents of each intent's own verifier, run against the final world
    with the answer given for that intent (an intent never answered scores as unanswered: −1).
    is_correct iff every intent is correct. The breakdown lists each intent's score.
Difficulty axes used
    journey_intents, p_switch, and through the intents every axis they use (p_noise, top_k,
    eps_rank and B_tool included; T_max is the sum of the intents' budgets).
Episode end
    The answer to the last open request, the turn budget, or the shopper giving up.
Version history
    In CHANGELOG.md, section JOURNEY; the version is ``JourneyFamily.version``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, create_model

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog.schema import Catalog
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs import get_environment
from ecomrlve.envs.base import GenerationError, Problem, TaskFamily, TaskOutcome, TaskState, prepare_catalog
from ecomrlve.envs.capabilities import capabilities
from ecomrlve.envs.journey import acts as A
from ecomrlve.protocol import Observation
from ecomrlve.registry import env_specs
from ecomrlve.tools import ToolError
from ecomrlve.user.acts import Acknowledge
from ecomrlve.user.dialogue import SimulatedUser
from ecomrlve.user.realiser import Realiser
from ecomrlve.world.state import World

ENV_ID = "JOURNEY"
_NEVER_GIVES_UP = 1_000_000  # the journey layer never loses patience itself; its intents' users do


class JourneyIntent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    env_id: str
    goal: SerializeAsAny[BaseModel]  # the intent's own hidden goal (recorded as that model's JSON)
    interrupted: bool = Field(description="The next request interrupts this one after the agent's first turn on it.")


class JourneyGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    intents: list[JourneyIntent]


def intent_families() -> tuple[TaskFamily, ...]:
    """The registered environments with a JOURNEY role, in their draw order (sampling is seeded)."""
    roles = sorted((s.journey.draw_order, s.id) for s in env_specs() if s.journey is not None)
    return tuple(get_environment(env_id) for _, env_id in roles)


def merged_answer_model(envs: tuple[TaskFamily, ...]) -> type[BaseModel]:
    """One strict ``answer`` model whose optional fields are the union of the intents' fields.

    Two environments that name a field alike must agree on its type; the check runs when the
    journey environment is created, so a clash can never reach an episode.
    """
    fields: dict[str, Any] = {}  # name -> (type, default), as create_model takes them
    owners: dict[str, str] = {}
    for env in envs:
        for name, info in env.answer_arguments.model_fields.items():
            assert info.annotation is not None  # a model's fields are annotated
            annotation = info.annotation | None
            if name in fields:
                if fields[name][0] != annotation:
                    raise TypeError(f"answer field {name!r} has different types in {owners[name]} and {env.env_id}")
                continue
            fields[name] = (annotation, Field(None, description=info.description))
            owners[name] = env.env_id
    return create_model("JourneyAnswer", __config__=ConfigDict(extra="forbid", strict=True), **fields)


# -- the task state and the simulated shopper -----------------------------------------------------

@dataclass
class JourneyState(TaskState):
    """What the JOURNEY dialogue established: each intent's own task state, the answer given for
    each intent, and which requests were raised and are still open."""

    intents: list[TaskState] = field(default_factory=list)
    answers: dict[int, BaseModel] = field(default_factory=dict)
    open_intents: list[int] = field(default_factory=list)  # raised and not yet answered; last = current
    next_intent: int = 0  # the next request to raise

    @property
    def current(self) -> int | None:
        """The request being handled (None before the first is raised or after the last is answered)."""
        return self.open_intents[-1] if self.open_intents else None

    @property
    def finished(self) -> bool:
        return len(self.answers) == len(self.intents)


@dataclass
class JourneyUser(SimulatedUser):
    """Holds one sub-problem per intent and routes the conversation to the one being handled."""

    problems: list[Problem] = field(default_factory=list)
    env_ids: list[str] = field(default_factory=list)
    interrupts: list[bool] = field(default_factory=list)
    state: JourneyState = field(default_factory=JourneyState)
    turns_on: dict[int, int] = field(default_factory=dict)
    _answered_this_turn: bool = False

    @property
    def current(self) -> int | None:
        return self.state.current

    def _raise_next(self) -> Problem:
        index = self.state.next_intent
        self.state.next_intent += 1
        self.state.open_intents.append(index)
        self.turns_on[index] = 0
        return self.problems[index]

    def opening(self) -> str:
        first = self._raise_next()
        return self.say(A.OpenJourney(first.opening, len(self.problems)))

    def record_answer(self, answer: BaseModel) -> None:
        index = self.state.open_intents.pop()
        self.state.answers[index] = answer
        self._answered_this_turn = True

    # The runtime's entry points, routed to the intent being handled.
    def begin_turn(self) -> None:
        super().begin_turn()
        for problem in self.problems:
            problem.user.begin_turn()

    def end_turn(self) -> bool:
        caused = [problem.user.end_turn() for problem in self.problems]
        return super().end_turn() or any(caused)

    def note_turn(self, turn: int) -> None:
        current = self.current
        if not self._answered_this_turn and current is not None:
            self.problems[current].user.note_turn(turn)

    def on_question(self, question: str, world: World) -> str:
        current = self.current
        if current is None:
            return self.say(Acknowledge())
        reply = self.problems[current].user.on_question(question, world)
        self.gave_up = self.gave_up or self.problems[current].user.gave_up
        return reply

    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        if self._answered_this_turn:
            self._answered_this_turn = False
            self.mark_user_caused()  # the shopper, not the agent, brings up what comes next
            if self.state.open_intents:
                return self.say(A.ResumeIntent(self.problems[self.state.open_intents[-1]].opening))
            if self.state.next_intent < len(self.problems):
                return self.say(A.NextIntent(self._raise_next().opening))
            return None
        current = self.current
        if current is None:
            return None
        sub_user = self.problems[current].user
        reply = sub_user.on_turn_end(message, events, world)
        self.gave_up = self.gave_up or sub_user.gave_up
        self.turns_on[current] += 1
        if (self.interrupts[current] and self.turns_on[current] == 1 and self.state.next_intent < len(self.problems)
                and not self.gave_up):
            self.mark_user_caused()
            interruption = self.say(A.InterruptIntent(self._raise_next().opening))
            return f"{reply} {interruption}" if reply else interruption
        return reply


def sub_problems(problem: Problem[JourneyGoal, JourneyState]) -> list[Problem]:
    """The intents' own problems (goal, state, shopper, opening), held by the journey's shopper."""
    user = problem.user
    if not isinstance(user, JourneyUser):
        raise TypeError("a JOURNEY problem's user is a JourneyUser")
    return user.problems


# -- the environment ------------------------------------------------------------------------------

class JourneyFamily(TaskFamily):
    env_id = ENV_ID
    version = 24
    answer_ends_episode = False  # each answer ends the request in front of the agent; the shopper brings the next

    def __init__(self) -> None:
        self.intent_envs = intent_families()
        if len(self.intent_envs) < 2:
            raise RuntimeError("JOURNEY needs at least two other registered environments")
        self.tool_names = tuple(dict.fromkeys(t for env in self.intent_envs for t in env.tool_names))
        self.answer_arguments = merged_answer_model(self.intent_envs)
        self.answer_id_arguments = tuple(dict.fromkeys(a for env in self.intent_envs for a in env.answer_id_arguments))
        self.unused_card_fields = frozenset.intersection(*(env.unused_card_fields for env in self.intent_envs))
        kinds = "\n".join(f"- {env.env_id}: {env.instructions}" for env in self.intent_envs)
        self.instructions = (
            "The shopper may bring several requests in one conversation, one after another. Handle the "
            "request in front of you, then call `answer` for it with the fields that kind of request "
            "needs; the shopper then brings up the next one. If the shopper interrupts with a new "
            "request, answer that one first and then return to the earlier one. Kinds of request:\n" + kinds
        )

    def answer_description(self, difficulty: Difficulty) -> str:
        answers: dict[str, list[str]] = {}  # one kind's fields and description -> the kinds answering so (PD and SUB)
        for env in self.intent_envs:
            answer = f"{', '.join(env.answer_arguments.model_fields)} ({env.answer_description(difficulty)})"
            answers.setdefault(answer, []).append(env.env_id)
        kinds = "; ".join(f"{' and '.join(env_ids)}: {answer}" for answer, env_ids in answers.items())
        return ("Submit the answer to the request you are handling now, using only the fields of that kind of "
                f"request; the conversation continues until every request is answered. {kinds}")

    def played_envs(self) -> tuple[TaskFamily, ...]:
        return self.intent_envs

    def prepare(self, catalog: Catalog) -> None:
        """What each request kind prepares (a journey plays them all)."""
        prepare_catalog(catalog, self.intent_envs)

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        report = capabilities(world.catalog)  # only request kinds the catalog supports (all, on the synthetic one)
        supported = [env for env in self.intent_envs if report.supports(env.env_id)]
        adapted = {"intents": "not supported by the catalog: " + ", ".join(
            env.env_id for env in self.intent_envs if env not in supported)} if len(supported) < len(self.intent_envs) else {}
        count = min(difficulty.journey_intents, len(supported))
        envs = rng.sample(supported, count)
        if any(env.draws_store_policy for env in supported):  # drawn before any order: a replacement may need it
            world.install_episode_policy(random.Random(rng.getrandbits(64)))
        problems, played, spare = [], [], [env for env in supported if env not in envs]
        for i, env in enumerate(envs):
            while True:
                try:
                    problems.append(env.generate(world, difficulty, random.Random(rng.getrandbits(64)), realiser))
                    played.append(env)
                    break
                except GenerationError as exc:  # the world the earlier intents left cannot host this one
                    if not spare:  # a small catalog: a shorter journey
                        if not problems:
                            raise
                        adapted[f"intent_{i}"] = f"{env.env_id} dropped: {exc}"
                        break
                    adapted[f"intent_{i}"] = f"{env.env_id} replaced: {exc}"
                    env = spare.pop(rng.randrange(len(spare)))
        envs, count = played, len(problems)
        interrupts = [i < count - 1 and rng.random() < difficulty.p_switch for i in range(count)]
        state = JourneyState(intents=[p.state for p in problems])
        user = JourneyUser(realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=_NEVER_GIVES_UP,
                           problems=problems, env_ids=[env.env_id for env in envs], interrupts=interrupts, state=state)
        goal = JourneyGoal(intents=[
            JourneyIntent(env_id=env.env_id, goal=p.goal, interrupted=interrupted)
            for env, p, interrupted in zip(envs, problems, interrupts)
        ])
        return Problem(goal=goal, state=state, user=user, opening=user.opening(), difficulty=difficulty,
                       adapted=adapted | {k: v for p in problems for k, v in p.adapted.items()})

    def turn_budget(self, problem: Problem) -> int:
        return sum(get_environment(intent.env_id).turn_budget(p)
                   for intent, p in zip(problem.goal.intents, sub_problems(problem)))

    def accept_answer(self, problem: Problem, answer: BaseModel) -> bool:
        user = problem.user
        assert isinstance(user, JourneyUser)
        current = problem.state.current
        if current is None:
            raise ToolError("no_open_request", "There is no open request to answer; wait for the shopper.")
        model = get_environment(problem.goal.intents[current].env_id).answer_arguments
        given = {k: v for k, v in answer.model_dump().items() if v is not None}
        foreign = sorted(set(given) - set(model.model_fields))
        try:
            if foreign:
                raise ValueError
            sub_answer = model.model_validate(given)
        except (ValidationError, ValueError):
            raise ToolError("answer_does_not_fit", "The request you are handling takes answer("
                            f"{', '.join(model.model_fields)}); got fields {sorted(given)}.") from None
        user.record_answer(sub_answer)
        return problem.state.finished

    def verify(self, goal: JourneyGoal, state: JourneyState, world: World, answer: BaseModel | None) -> TaskOutcome:
        env_ids = [intent.env_id for intent in goal.intents]
        outcomes = [get_environment(intent.env_id).verify(intent.goal, sub_state, world, state.answers.get(i))
                    for i, (intent, sub_state) in enumerate(zip(goal.intents, state.intents))]
        violations = [o.safety_violation for o in outcomes if o.safety_violation]
        return TaskOutcome(
            r_task=sum(o.r_task for o in outcomes) / len(outcomes),
            is_correct=all(o.is_correct for o in outcomes),
            details={"intents": [{"env_id": e, "r_task": o.r_task, "is_correct": o.is_correct,
                                  "answered": i in state.answers, "details": o.details}
                                 for i, (e, o) in enumerate(zip(env_ids, outcomes))]},
            safety_violation=violations[0] if violations else None,
        )

    def oracle(self, problem: Problem[JourneyGoal, JourneyState]) -> JourneyOracle:
        return JourneyOracle(problem)


# -- the oracle -----------------------------------------------------------------------------------

class IntentRouter:
    """Plays one sub-agent per intent, each seeing only its own part of the conversation.

    Tool results go back to the sub-agent that made the call (call ids carry its index); the
    shopper's words go to the sub-agent of the request being handled. A sub-agent whose request
    was interrupted keeps its results in an inbox until its request is handled again. Subclasses
    decide which request is being handled: the oracle reads it from the hidden state, the
    heuristic baseline infers it from the conversation.
    """

    def __init__(self) -> None:
        self.agents: list[Any] = []
        self.inbox: list[list[dict[str, Any]]] = []
        self.started: list[bool] = []
        self.system: dict[str, Any] | None = None
        self.tools: list[dict[str, Any]] | None = None

    def add(self, agent: Any) -> int:
        self.agents.append(agent)
        self.inbox.append([])
        self.started.append(False)
        return len(self.agents) - 1

    def deliver(self, observation: Observation, current: int, user_messages: bool = True) -> None:
        """File an observation's messages: tool results by owner, the shopper's words to ``current``."""
        if observation.tools is not None:
            self.system, self.tools = observation.messages[0], observation.tools
        for message in observation.messages:
            if message["role"] == "tool":
                owner, call_id = self._owner(message["tool_call_id"], current)
                self.inbox[owner].append(message | {"tool_call_id": call_id})
            elif message["role"] == "user" and user_messages:
                self.inbox[current].append(message)

    def _owner(self, tool_call_id: str, current: int) -> tuple[int, str]:
        """The sub-agent a result belongs to, and its own call id. A call someone else made (a person in
        the playground, a call id rewritten by a text wire format) belongs to the request being handled."""
        owner, _, call_id = tool_call_id.partition(":")
        if owner[:1] == "j" and owner[1:].isdigit() and int(owner[1:]) < len(self.agents):
            return int(owner[1:]), call_id
        return current, tool_call_id

    def setup_for(self, current: int) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
        """The system message and tools sub-agent ``current`` starts with: the journey's own."""
        return self.system, self.tools

    def play(self, current: int, info: dict[str, Any]) -> AgentAction:
        """One turn of sub-agent ``current`` on everything filed for it since its last turn."""
        messages, self.inbox[current] = self.inbox[current], []
        if self.started[current]:
            observation = Observation(messages=messages, info=info)
        else:
            self.started[current] = True
            system, tools = self.setup_for(current)
            observation = Observation(messages=[system, *messages], tools=tools, info=info)
        action = self.agents[current].act(observation)
        return AgentAction(message=action.message, tool_calls=tuple(
            ToolCall(id=f"j{current}:{call.id}", name=call.name, arguments=call.arguments) for call in action.tool_calls
        ))


class JourneyOracle(IntentRouter):
    """Runs each intent's own oracle while its request is the one being handled."""

    def __init__(self, problem: Problem[JourneyGoal, JourneyState]) -> None:
        super().__init__()
        self.state = problem.state
        for intent, sub_problem in zip(problem.goal.intents, sub_problems(problem)):
            self.add(get_environment(intent.env_id).oracle(sub_problem))

    def act(self, observation: Observation) -> AgentAction:
        current = self.state.current
        assert current is not None, "the journey oracle was asked to act with no open request"
        self.deliver(observation, current)
        return self.play(current, observation.info)
