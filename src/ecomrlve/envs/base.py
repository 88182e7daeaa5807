"""The contract every environment implements: generator, verifier and oracle, side by side.

An environment never counts turns, enforces budgets or computes the final reward: the episode
runtime does that for all of them (see :mod:`ecomrlve.session`). It only

* ``generate``: from ``(difficulty, rng)`` build the hidden goal, prepare the world and create
  the simulated user,
* ``verify``: score the final world and the submitted answer (``r_task``, ``is_correct``) from
  the hidden goal and the task state alone (never the simulated user),
* ``oracle``: return a scripted agent that solves the problem through the public tools only.

Task state (:class:`TaskState`, one dataclass per environment family) is what the dialogue has
established: constraints revealed, a requirement switched, a confirmation given, an answer per
JOURNEY intent. The simulated user writes it; verifiers and oracles read it.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.schema import Catalog
from ecomrlve.difficulty import Difficulty
from ecomrlve.user.dialogue import SimulatedUser
from ecomrlve.user.realiser import Realiser
from ecomrlve.world.state import World

if TYPE_CHECKING:
    from ecomrlve.protocol import Agent


class GenerationError(RuntimeError):
    """The catalog (or what other tasks on the same world already hold) cannot host this task."""


@dataclass
class TaskState:
    """Base of the per-environment task states: what the dialogue has established so far."""


GoalT = TypeVar("GoalT", bound=BaseModel)
StateT = TypeVar("StateT", bound=TaskState)


@dataclass
class Problem(Generic[GoalT, StateT]):
    """One generated episode: hidden goal, the task state the dialogue writes, the user who holds
    the goal, and their opening message."""

    goal: GoalT
    state: StateT
    user: SimulatedUser
    opening: str
    difficulty: Difficulty
    #: How the generator adapted to a catalog that lacks something (feature -> what it did
    #: instead, e.g. no final-sale category); recorded with the episode's axes as ``adapted``.
    adapted: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskOutcome:
    """What the verifier concluded about the final state."""

    r_task: float
    is_correct: bool
    details: dict[str, Any] = field(default_factory=dict)
    safety_violation: str | None = None


#: The content version of what every environment shares (the runtime, the tools, the shopper's machinery, how
#: catalogs are read): a change there bumps it once, not every environment's ``version`` (CHANGELOG.md).
SUITE_VERSION = 21


class TaskFamily(ABC):
    """One environment's generator, verifier and oracle (one family folder under :mod:`ecomrlve.envs`).

    Named so it does not collide with OpenEnv's ``Environment`` or Gymnasium's ``Env``: the session that
    runs an episode is :class:`ecomrlve.episode.EcomEnv`; a task family only generates and scores.
    """

    env_id: ClassVar[str]
    version: ClassVar[int]  # what is local to this environment; shared behaviour is SUITE_VERSION
    tool_names: tuple[str, ...]
    answer_arguments: type[BaseModel]
    answer_id_arguments: tuple[str, ...] = ()
    instructions: str
    draws_store_policy: bool = False  # runs under per-episode store policy numbers (World.install_episode_policy)
    #: card fields no verdict, shopper or request of this environment reads: left off its product cards (and, with
    #: ``price``, the cart's prices), so the agent is not paid tokens for facts it cannot use
    unused_card_fields: frozenset[str] = frozenset()
    #: whether the system prompt says today's date (False where no fact the agent or the shopper uses is a date)
    dated: bool = True

    #: whether an answer ends the episode (the answer tool then says so); a journey's answers each end one request
    answer_ends_episode: bool = True

    def answer_description(self, difficulty: Difficulty) -> str:
        """What the answer holds, for the ``answer`` tool's description."""
        return "Submit your final answer."

    def turn_budget(self, problem: Problem) -> int:
        """Agent turns the episode may use (JOURNEY: the sum over its intents)."""
        return problem.difficulty.T_max

    def accept_answer(self, problem: Problem, answer: BaseModel) -> bool:
        """Take a submitted ``answer``; True if it ends the episode.

        Every single-task environment ends on its answer. JOURNEY records it for the current
        intent and ends only on the last one; it raises :class:`~ecomrlve.tools.ToolError` when
        the answer does not fit the request being handled.
        """
        return True

    def played_envs(self) -> tuple[TaskFamily, ...]:
        """The environments whose tasks this one plays inside its episodes (JOURNEY: its request kinds);
        their difficulty axes shape its episodes too. None by default."""
        return ()

    def versions(self) -> dict[str, int]:
        """The content versions this environment's episodes depend on: the suite's (shared behaviour), its
        own, and those of the environments it plays (CHANGELOG.md keeps their histories)."""
        return {"suite": SUITE_VERSION, self.env_id: self.version,
                **{part.env_id: part.version for part in self.played_envs()}}

    def prepare(self, catalog: Catalog) -> None:
        """Build the per-catalog structures (cached on ``catalog``) that generating and scoring read,
        before any episode: built on a category's first use instead, they made that episode tens of
        milliseconds slower at 2M products, so an episode's cost hung on which categories had been
        seen. Nothing by default."""
        return None

    @abstractmethod
    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        """Sample the hidden goal and prepare ``world`` (stock, visit history ...)."""

    @abstractmethod
    def verify(self, goal: Any, state: Any, world: World, answer: Any) -> TaskOutcome:
        """Score the final world and answer (None if the agent never answered) against the hidden
        ``goal`` and the task ``state``; pure with respect to the simulated user."""

    @abstractmethod
    def oracle(self, problem: Problem) -> Agent:
        """A scripted agent that solves ``problem`` using only tool results and user replies."""


def prepare_catalog(catalog: Catalog, families: Iterable[TaskFamily]) -> None:
    """:meth:`TaskFamily.prepare` of each family for ``catalog``, once per (family, catalog):
    servers and trainers make an episode runtime per session or rollout, and the preparation's
    cache lookups alone would cost more than the rest of making one."""
    for family in families:
        PREPARED.of(catalog, family)  # once per (catalog, family), also when sessions start in threads


PREPARED = derived("prepared_families", lambda catalog, family: family.prepare(catalog))
