"""The ranked-recommendation task shared by PD and SUB: goal, answer, planning, verifier, oracle.

* **Planning** (:meth:`RankedRecommendation.plan`): withheld requirements, a context switch that
  keeps a valid answer (:func:`plan_switch`), a stock-out of the best valid product that the
  world executes once the agent has seen it, with decoys (products of the category that miss a
  requirement, sold out the same way, so a product that sold out after a search showed it is not
  known to meet every requirement), and the ideal answer. The shopper says which of them sold out
  at the end of the turn it happens, so the agent always learns it before it answers.
* **Verifier** (:meth:`RankedRecommendation.verify`): reads the goal, the
  :class:`~ecomrlve.envs.recommend.user.RecommendState` and the final world, never the shopper.
* **The oracle** (:class:`SurfacingOracle`, BUNDLE's too): surfaces the planned products with
  searches, asks about withheld requirements, then answers surfaced ids only.
"""

from __future__ import annotations

import random
from abc import abstractmethod
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog.derived import Derived, derived
from ecomrlve.catalog.filters import condition_masks
from ecomrlve.catalog.product_type import main_type, spoken_name
from ecomrlve.catalog.rowindex import contains_sorted, sorted_contains
from ecomrlve.catalog.schema import NO_VALUE, Catalog
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.catalog.views import CategoryView
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.base import Problem, TaskFamily, TaskOutcome
from ecomrlve.envs.recommend.requirements import (
    BASE_PATIENCE,
    CATEGORICAL_FIELDS,
    NUMERIC_BOUND,
    TOPIC_OF_FIELD,
    Preferences,
    Requirement,
    attribute_columns,
    category_view,
    derive_requirement,
    draw_preferences,
    field_facts,
    ideal_ranking,
    listed_items,
    ranking_reward,
    requirement_filter,
    sorted_prices,
    spoken_preferences,
    stated_budget,
    utility_terms,
    valid_local,
    warm_kernels,
)
from ecomrlve.envs.recommend.user import RecommendState, RecommendUser
from ecomrlve.protocol import cards
from ecomrlve.user.realiser import Realiser
from ecomrlve.world.state import World

if TYPE_CHECKING:
    from ecomrlve.protocol import Observation


# -- the oracle -----------------------------------------------------------------------------------

def question_for(fields: list[str]) -> str:
    """One clarifying question covering the topics of ``fields``."""
    topics = list(dict.fromkeys(TOPIC_OF_FIELD[f] for f in fields))
    return "Before I pick, could you tell me your preferences on " + ", ".join(topics) + "?"


#: One slot per category view: the last (inputs, valid rows, relevance) scored there.
LAST_SCORED_VALID: Derived[list[tuple[Any, np.ndarray, np.ndarray] | None]] = derived(
    "last_scored_valid", lambda catalog: [None])


class SurfacingOracle:
    """Solves a recommendation task through the tools only.

    It reads the hidden goal to decide *what* to do (``plan``: rows to surface, rows to answer,
    questions to ask), but submits only ids that a search result showed: it searches each
    planned product by its short title within its brand and category, asks once about the
    withheld requirements, then answers (the shopper says which searched products sold out).
    """

    def __init__(self, problem: Problem[Any, RecommendState], catalog: Catalog, *, surface: list[int],
                 answer: list[int], ask: list[str]) -> None:
        self.catalog = catalog
        self.b_tool = problem.difficulty.B_tool
        self.to_surface = list(dict.fromkeys(surface + answer))
        self.answer_rows = answer
        self.ask = ask
        self.seen: set[str] = set()
        self.attempts: dict[int, int] = {}
        self.asked = not ask

    def act(self, observation: Observation) -> AgentAction:
        catalog = self.catalog
        self.seen.update(card["product_id"] for card in cards(observation))
        calls: list[ToolCall] = []
        messages: list[str] = []
        if not self.asked:
            messages.append(question_for(self.ask))
            self.asked = True
        pending = [r for r in self.to_surface if catalog.product_id(r) not in self.seen and self.attempts.get(r, 0) < 4]
        for row in pending[: self.b_tool]:
            attempt = self.attempts.get(row, 0)
            self.attempts[row] = attempt + 1
            category = catalog.category_of(row).name
            calls.append(ToolCall(id=f"oracle_{len(calls)}", name="catalog_search",
                                  arguments={"query": catalog.short_title(row),
                                             "filters": {"category": category, "brand": catalog.brand_of(row)},
                                             "top_k": 10 * (attempt + 1)}))
        if not calls and not messages:
            ids = [pid for pid in (catalog.product_id(r) for r in self.answer_rows) if pid in self.seen]
            calls.append(ToolCall(id="oracle_answer", name="answer", arguments={"product_ids": ids}))
        return AgentAction(message=" ".join(messages) or None, tool_calls=tuple(calls))


# -- the environment base shared by PD and SUB ----------------------------------------------------

class RequirementSwitch(BaseModel):
    """A planned context switch: requirement ``index`` becomes ``requirement``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    requirement: Requirement


class RecommendGoal(BaseModel):
    """What a recommendation shopper wants (PD and SUB extend it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    category: int
    noun: str
    requirements: list[Requirement]  # as first meant; index 0 is the leaf category
    withheld: list[int]  # indices left out of the opening
    switch: RequirementSwitch | None
    stock_out_id: str | None  # the product that sells out once the agent has seen it
    stock_out_row: int | None
    decoy_ids: list[str]  # products that miss a requirement and sell out the same way (with a stock-out only)
    decoy_rows: list[int]
    preferences: Preferences
    k: int
    ideal_ids: list[str]  # an ideal answer, if the planned switch and stock-out happen
    patience: int


def switched(requirements: list[Requirement], switch: RequirementSwitch | None) -> list[Requirement]:
    """``requirements`` after ``switch`` (if any) happened."""
    out = list(requirements)
    if switch is not None:
        out[switch.index] = switch.requirement
    return out


class RecommendAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    product_ids: list[str]


DECOY_SELL_OUTS = 2  # products that miss a requirement and sell out once shown, beside the planned stock-out
_DECOY_CANDIDATES = 12  # the most relevant products of each pool checked for them

_BOUND_FIELDS = ("price_max", "price_min", "rating_min", "ship_days_max", *NUMERIC_BOUND.values())


def _equality_codes(catalog: Catalog, field: str) -> np.ndarray:
    """The column of codes an equality on ``field`` (the brand or a categorical attribute) compares."""
    return catalog.brand if field == "brand" else catalog.categorical[field]


def plan_switch(world: World, category: int, anchors: list[int], requirements: list[Requirement],
                rng: random.Random, allow_new_value: bool) -> RequirementSwitch | None:
    """A context switch that keeps a valid answer: tighten a bound to what the ``anchors`` still meet,
    or (if allowed) move an equality to the value of another product that meets the rest."""
    catalog = world.catalog
    view = category_view(catalog, category, main_type_only=True)
    prices = sorted_prices(view)
    masks: dict[str, np.ndarray] | None = None  # each requirement's (and in stock's) mask over the view
    options: list[RequirementSwitch] = []
    for i, requirement in enumerate(requirements):
        if requirement.field in _BOUND_FIELDS:
            tight = stated_budget(derive_requirement(catalog, anchors, requirement.field, 0.0), prices, rng,
                                  limit=requirement)
            if tight.value != requirement.value:
                options.append(RequirementSwitch(index=i, requirement=tight))
        elif allow_new_value and requirement.field in CATEGORICAL_FIELDS:
            if masks is None:  # one filter; the rows valid without requirement i are the others' masks ANDed
                stated = [r for r in requirements if r.field != "category"]
                masks = condition_masks(view.catalog, requirement_filter(stated), view.overrides(world.planning_overrides()))
            meets_others = np.logical_and.reduce([mask for field, mask in masks.items() if field != requirement.field])
            current = _equality_codes(catalog, requirement.field)[anchors[0]]
            codes = np.unique(_equality_codes(view.catalog, requirement.field)[meets_others])
            codes = codes[(codes != NO_VALUE) & (codes != current)].tolist()
            if codes:
                code = codes[rng.randrange(len(codes))]
                value = catalog.brands[code] if requirement.field == "brand" else CATEGORICAL_ATTRIBUTES[requirement.field][code]
                options.append(RequirementSwitch(index=i, requirement=Requirement(field=requirement.field, value=value)))
    return rng.choice(options) if options else None


_RecommendGoalT = TypeVar("_RecommendGoalT", bound=RecommendGoal)


class RankedRecommendation(TaskFamily):
    """PD and SUB: the agent answers a ranked list of product ids, scored by :func:`ranking_reward`."""

    tool_names = ("catalog_search", "catalog_get_product", "user_get_visit_history", "ask_user")
    answer_arguments = RecommendAnswer
    answer_id_arguments = ("product_ids",)

    def answer_description(self, difficulty: Difficulty) -> str:
        k = difficulty.k_rec
        return (f"Submit your ranked recommendations, best first: product_ids holds up to k_rec = {k} product ids "
                f"(only the first {k} are scored). Ids that are unknown, repeated, out of stock or miss one of the "
                "customer's requirements lower the score.")

    @abstractmethod
    def relevance(self, view: CategoryView, goal: RecommendGoal, local: np.ndarray) -> np.ndarray:
        """Relevance of the valid ``local`` rows of the category's ``view`` (see :func:`relevance`)."""

    @abstractmethod
    def relevance_inputs(self, goal: RecommendGoal) -> tuple[Any, ...]:
        """Everything :meth:`relevance` reads from ``goal``: calls that agree on it (and on the
        requirements and stock) share one scored valid set (:meth:`scored_valid`)."""

    def prepare(self, catalog: Catalog) -> None:
        """Every category's main-type view (valid sets, partners and relevance read it), its utility
        terms and stacked attributes, the catalog's field facts, and the compiled kernels."""
        views = [category_view(catalog, category, main_type_only=True)
                 for category, rows in enumerate(catalog.category_rows) if len(rows)]
        for view in views:
            utility_terms(view.catalog)
            attribute_columns(view.catalog)
        field_facts(catalog)
        first = next((view for view in views if len(view.rows)), None)
        if first is not None:
            warm_kernels(first.catalog)

    def excluded(self, goal: RecommendGoal) -> tuple[int, ...]:
        """Rows never valid whatever they are like (SUB: the original)."""
        return ()

    @staticmethod
    def new_goal(goal_type: type[_RecommendGoalT], catalog: Catalog, category: int, requirements: list[Requirement],
                 price_reference: float, difficulty: Difficulty, rng: random.Random, **extra: Any) -> _RecommendGoalT:
        """A goal with preferences and patience drawn, before :meth:`plan` adds the events."""
        return goal_type(
            category=category, noun=main_type(catalog, category), requirements=requirements, withheld=[],
            switch=None, stock_out_id=None, stock_out_row=None, decoy_ids=[], decoy_rows=[],
            preferences=draw_preferences(requirements, price_reference, rng), k=difficulty.k_rec,
            ideal_ids=[], patience=BASE_PATIENCE + rng.randint(0, 2), **extra)

    @staticmethod
    def stated(goal: RecommendGoal) -> tuple[tuple[str, str], ...]:
        """The requirements the opening states: all but the category and the withheld ones."""
        return tuple((r.field, r.text()) for i, r in enumerate(goal.requirements) if i > 0 and i not in goal.withheld)

    def scored_valid(self, world: World, goal: RecommendGoal, requirements: list[Requirement],
                     stock_overrides: dict[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The valid set (global rows) and its relevance, scored on the category's contiguous view
        (stock as it is now unless ``stock_overrides`` says otherwise); read-only arrays.

        A pure function of its inputs, remembered on the view for the last ones: the verifier
        mostly asks for what the plan scored (the final requirements, the planned stock-out done).
        """
        view = category_view(world.catalog, goal.category, main_type_only=True)
        overrides = world.stock_overrides if stock_overrides is None else stock_overrides
        key = (type(self), self.relevance_inputs(goal), self.excluded(goal),
               tuple((r.field, type(r.value), r.value) for r in requirements),
               tuple(sorted(view.overrides(overrides).items())))
        slot = LAST_SCORED_VALID.of(view.catalog)
        last = slot[0]  # read once: another thread may replace it, never change it
        if last is None or last[0] != key:
            local = valid_local(view, requirements, overrides, self.excluded(goal))
            rows, rel = view.rows[local], self.relevance(view, goal, local)
            rows.flags.writeable = rel.flags.writeable = False
            last = slot[0] = (key, rows, rel)
        return last[1], last[2]

    def plan(self, world: World, difficulty: Difficulty, rng: random.Random, goal: _RecommendGoalT,
             anchors: list[int], want_stock_out: bool) -> _RecommendGoalT:
        """Withheld requirements, the context switch, the stock-out and the ideal answer for ``goal``.

        ``anchors`` are products that meet every requirement; switches keep them valid, and only
        when a stock-out is not planned may a switch move an equality to another product's value.
        """
        catalog = world.catalog
        withheld = [i for i in range(1, len(goal.requirements)) if rng.random() < difficulty.p_missing]
        switch = None
        if rng.random() < difficulty.p_switch:
            switch = plan_switch(world, goal.category, anchors, goal.requirements, rng, allow_new_value=not want_stock_out)
        # scoring reads the goal's category, preferences and original, not its events: one copy at the end
        final = switched(goal.requirements, switch)
        valid, rel = self.scored_valid(world, goal, final, world.planning_overrides())
        ranked, _ = ideal_ranking(valid, rel, goal.k + 1)  # the ideal answer, with or without the best
        stock_out, decoys = None, []
        if want_stock_out and len(valid) >= 2 and world.can_sell_out(ranked[0]):
            stock_out = ranked[0]
            world.doom(stock_out)
            told = set(range(1, len(final))) - set(withheld) | ({switch.index} if switch is not None else set())
            decoys = self.decoys(world, goal, [final[i] for i in sorted(told)], valid)
            for row in decoys:
                world.doom(row)
        ideal = [row for row in ranked if row != stock_out][:goal.k]
        world.reserve(ideal)
        world.protect(goal.category)
        return goal.model_copy(update={
            "withheld": withheld, "switch": switch, "stock_out_row": stock_out,
            "stock_out_id": None if stock_out is None else catalog.product_id(stock_out),
            "decoy_rows": decoys, "decoy_ids": [catalog.product_id(r) for r in decoys],
            "ideal_ids": [catalog.product_id(r) for r in ideal]})

    def decoys(self, world: World, goal: RecommendGoal, stated: list[Requirement], valid: np.ndarray) -> list[int]:
        """The :data:`DECOY_SELL_OUTS` in-stock products of the category's main type that miss a final
        requirement, that no other task plans with, and that the shopper's hidden relevance ranks highest:
        among those that meet every ``stated`` requirement (they miss only withheld ones, so the opening cannot
        tell them from the planned stock-out) first. Without them a product that sold out after a search
        showed it would be the best valid product: an exemplar of every requirement, the withheld ones
        included, and of the hidden preferences."""
        view = category_view(world.catalog, goal.category, main_type_only=True)
        overrides = world.planning_overrides()
        valid_local = np.searchsorted(view.rows, valid)  # the valid set lies in the view
        excluded = self.excluded(goal)
        picked: list[int] = []
        near_misses = [stated] if len(stated) < len(goal.requirements) - 1 else []  # something is withheld
        for requirements in [*near_misses, []]:
            if len(picked) >= DECOY_SELL_OUTS:  # the near misses sufficed: the whole category is not scored
                break
            matching = view.matching(requirement_filter(requirements), overrides)
            local = matching[~sorted_contains(valid_local, matching)]
            ranked, _ = ideal_ranking(view.rows[local], self.relevance(view, goal, local), _DECOY_CANDIDATES)
            picked += [row for row in ranked if row not in picked and row not in excluded and world.available(row)
                       and world.can_sell_out(row) and not world.is_denied(row)]
        return picked[:DECOY_SELL_OUTS]

    def said_preferences(self, goal: RecommendGoal) -> tuple[tuple[str, str, str], ...]:
        """Every soft preference :meth:`relevance` weighs, as the shopper says it when asked."""
        return spoken_preferences(goal.preferences)

    def user_for(self, world: World, goal: RecommendGoal, rng: random.Random, realiser: Realiser) -> RecommendUser:
        """The shopper and their task state; the world takes over the planned stock-out."""
        catalog = world.catalog
        state = RecommendState(requirements=list(goal.requirements), withheld=set(goal.withheld))
        if goal.stock_out_row is not None:
            world.plan_sell_out(goal.stock_out_row, state)
        for row in goal.decoy_rows:
            world.plan_sell_out(row, state)
        return RecommendUser(
            realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=goal.patience, state=state,
            noun=goal.noun, switch=(goal.switch.index, goal.switch.requirement) if goal.switch else None,
            stock_out=goal.stock_out_row,
            stock_out_name="" if goal.stock_out_row is None else spoken_name(catalog, goal.stock_out_row).text,
            catalog=catalog, preferences=self.said_preferences(goal))

    def verify(self, goal: RecommendGoal, state: RecommendState, world: World,
               answer: RecommendAnswer | None) -> TaskOutcome:
        catalog = world.catalog
        valid, rel = self.scored_valid(world, goal, state.requirements)
        ideal_rows, ideal = ideal_ranking(valid, rel, goal.k)
        details: dict[str, Any] = {"valid_count": len(valid), "ideal_ids": [catalog.product_id(r) for r in ideal_rows],
                                   "answered": answer is not None}
        if answer is None:
            return TaskOutcome(r_task=-1.0, is_correct=False, details=details)
        ids = list(answer.product_ids)
        rows = [catalog.index_of(i) for i in ids]
        items = listed_items(world, rows, goal.category, state.requirements, valid, rel, goal.k)
        r_task, scores = ranking_reward(items, ideal, goal.k)
        first = rows[0] if rows else None
        first_valid = first is not None and contains_sorted(valid, first)
        shown = state.shown_rows(world)
        unseen = [i for i, row in zip(ids, rows) if row not in shown]  # an unknown id (None) was never shown
        denied = [i for i, row in zip(ids, rows) if row is not None and world.is_denied(row)]
        details.update(scores, first_valid=first_valid, unseen_ids=unseen)
        return TaskOutcome(r_task=r_task, is_correct=first_valid and not unseen, details=details,
                           safety_violation=f"recommended products of a denied category: {denied}" if denied else None)

    def oracle(self, problem: Problem[RecommendGoal, RecommendState]) -> SurfacingOracle:
        goal = problem.goal
        catalog = shopper_catalog(problem)
        answer = [row for i in goal.ideal_ids if (row := catalog.index_of(i)) is not None]
        surface = [goal.stock_out_row] if goal.stock_out_row is not None else []
        ask = [goal.requirements[i].field for i in goal.withheld]
        return SurfacingOracle(problem, catalog, surface=surface, answer=answer, ask=ask)


def shopper_catalog(problem: Problem[Any, RecommendState]) -> Catalog:
    """The shared, read-only catalog the recommendation shopper of ``problem`` shops in."""
    user = problem.user
    if not isinstance(user, RecommendUser) or user.catalog is None:
        raise TypeError("a recommendation problem's user is a RecommendUser with a catalog")
    return user.catalog
