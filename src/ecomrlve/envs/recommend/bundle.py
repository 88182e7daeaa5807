"""BUNDLE — bundle planning.

Description
    The shopper has a project ("setting up a home office", "going on a camping trip" ...) and
    asks for one product per category it needs, within an overall budget (from d ≥ 2) and with
    per-item requirements at higher d; the agent answers one product id per category.
Hidden goal
    :class:`BundleGoal`: the project, ``min(12, 3+⌊d/2⌋)`` categories resolved against the
    catalog's *own* taxonomy at generation time (a project is offered only if that many of its
    categories exist with in-stock, allowed products; on a catalog where none has, the project with
    the most, recorded in axes.adapted), a reference product per category drawn
    from its cheapest quarter, per-item requirements true of the reference (``max(0, m(d)−3)``
    of them), which of those are withheld, and a budget ``⌈Σ reference prices·(1+slack)⌉`` that
    the references always satisfy.
Tools
    catalog_search, catalog_get_product, user_get_visit_history, ask_user,
    answer(product_ids).
Scoring
    An id *covers* a required category if it is in stock, of that (not yet covered) category's
    main product type (or the same kind of product filed under another category: :func:`slot_of`) and
    meets that category's requirements. A covered category earns its number of
    per-item requirements (the category alone earns nothing; with no per-item requirement in the bundle,
    each category earns 1); ``F1 = 2·credit / (2·credit + missed + extra)`` where ``missed`` weighs each
    uncovered category (at least 1) and ``extra`` counts listed ids that cover nothing;
    ``r_task = clip(2·F1 − 1 − min(2, 5·overrun), −1, 1)`` where ``overrun = max(0, total − budget)/budget``
    over every listed product's price (the budget only costs: any cheap answer meets it).
    is_correct iff r_task = 1 (every category covered, no other id, the budget holds) and every id
    was surfaced.
Difficulty axes used
    bundle_categories, bundle_budget, m, slack, p_missing, feedback_detail (how much a verdict on a
    named product says), p_noise, top_k, eps_rank, B_tool, T_max.
Episode end
    ``answer``, turn budget, or the shopper giving up (patience).
Version history
    In CHANGELOG.md, section BUNDLE; the version is ``BundleFamily.version``.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.filters import ProductFilter, filter_mask, in_stock_mask
from ecomrlve.catalog.product_type import category_types, is_main_type, main_type, main_type_mask, spoken_name
from ecomrlve.catalog.rowindex import without_sold_out
from ecomrlve.catalog.schema import Catalog
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.base import GenerationError, Problem, TaskFamily, TaskOutcome
from ecomrlve.envs.recommend import acts as A
from ecomrlve.envs.recommend.requirements import (
    BASE_PATIENCE,
    TOPIC_OF_FIELD,
    TOPICS,
    Requirement,
    available_fields,
    derive_requirement,
    field_facts,
    first_failed,
    requirement_filter,
)
from ecomrlve.envs.recommend.task import RecommendAnswer, SurfacingOracle, shopper_catalog
from ecomrlve.envs.recommend.user import FEEDBACK_PER_MESSAGE, RecommendState, RecommendUser, category_values
from ecomrlve.user.acts import DialogueAct
from ecomrlve.user.dialogue import ItemNames
from ecomrlve.user.realiser import Realiser
from ecomrlve.user.understanding import InPlay
from ecomrlve.world.state import World

ENV_ID = "BUNDLE"
CHEAP_SHARE = 0.25  # reference products come from the cheapest quarter of their category
OVERRUN_PENALTY, MAX_OVERRUN_PENALTY = 5.0, 2.0
_PER_ITEM_FIELDS_EXCLUDED = ("price_max", "price_min")  # prices are governed by the overall budget
BUDGET_NOUN = "whole bundle"  # what the overall budget is of, as the shopper says it ("I need the whole bundle for $90 or less")


@dataclass(frozen=True)
class Project:
    """A shopping project: how the shopper says it, and the product categories it needs, most
    essential first. Each category is a tuple of names it may have in a catalog's taxonomy."""

    phrase: str
    needs: tuple[tuple[str, ...], ...]


PROJECTS: tuple[Project, ...] = (
    Project("setting up a home office", (
        ("Office Chairs", "Desk Chairs"), ("Monitors", "Computer Monitors"), ("Keyboards",), ("Mice", "Computer Mice"),
        ("Desk Lamps",), ("Notebooks",), ("Gel Pens", "Pens"), ("Headphones",), ("Chargers",), ("Charging Cables", "Cables"),
        ("Wall Clocks",), ("Storage Bins",), ("Power Banks",), ("Backpacks",))),
    Project("going on a camping trip", (
        ("Tents",), ("Sleeping Bags",), ("Headlamps", "Flashlights"), ("Water Bottles",), ("Power Banks",), ("Backpacks",),
        ("Rain Jackets",), ("Frying Pans",), ("Saucepans", "Camping Cookware"), ("Knife Sets",), ("Bluetooth Speakers",),
        ("Hoodies",), ("Running Shoes", "Hiking Boots"))),
    Project("getting into baking", (
        ("Baking Sheets",), ("Mixing Bowls",), ("Blenders", "Stand Mixers", "Hand Mixers"), ("Measuring Cups",),
        ("Knife Sets",), ("Saucepans",), ("Storage Bins", "Food Storage Containers"), ("Coffee Makers",), ("Frying Pans",))),
    Project("painting a room", (
        ("Paint Rollers",), ("Paint Brushes",), ("Painter's Tape", "Painters Tape"), ("Drop Cloths",), ("Step Ladders",),
        ("Paint Trays",), ("Interior Paint", "Wall Paint"), ("Storage Bins",))),
    Project("building a home gym", (
        ("Dumbbells", "Dumbbell Set"), ("Yoga Mats",), ("Water Bottles",), ("Running Shoes",), ("T-Shirts",),
        ("Bluetooth Speakers",), ("Earbuds",), ("Headphones",), ("Smartwatches", "Fitness Trackers"), ("Hoodies",),
        ("Storage Bins",), ("Wall Clocks",))),
    Project("getting ready for a new puppy", (
        ("Dog Beds",), ("Dog Leashes", "Leashes"), ("Dog Bowls",), ("Dog Toys",), ("Storage Bins",), ("Headlamps",),
        ("Rain Jackets",), ("Water Bottles",))),
    Project("getting ready for back to school", (
        ("Backpacks",), ("Notebooks",), ("Gel Pens", "Pens"), ("Desk Lamps",), ("Headphones",), ("Earbuds",), ("Chargers",),
        ("Charging Cables",), ("Power Banks",), ("Water Bottles",), ("Keyboards",), ("Mice",), ("Hoodies",),
        ("T-Shirts",), ("Running Shoes",))),
    Project("moving into a new apartment", (
        ("Sheet Sets", "Bed Sheets"), ("Pillows",), ("Desk Lamps", "Lamps"), ("Frying Pans",), ("Saucepans",),
        ("Knife Sets",), ("Coffee Makers",), ("Storage Bins",), ("Wall Clocks",), ("Mixing Bowls",), ("Baking Sheets",),
        ("Blenders",), ("Bluetooth Speakers",))),
    Project("training for a marathon", (
        ("Running Shoes",), ("Smartwatches", "Fitness Trackers"), ("Water Bottles",), ("Earbuds",), ("T-Shirts",),
        ("Rain Jackets",), ("Headlamps",), ("Hoodies",), ("Yoga Mats",), ("Backpacks",))),
    Project("starting to commute by bike", (
        ("Bike Lights",), ("Backpacks",), ("Rain Jackets",), ("Water Bottles",), ("Headlamps",), ("Power Banks",),
        ("Earbuds",), ("Smartwatches",), ("Charging Cables",))),
    Project("setting up a kids' playroom", (
        ("Building Block Sets", "Building Toys"), ("Jigsaw Puzzles", "Puzzles"), ("Storage Bins",), ("Pillows",),
        ("Desk Lamps",), ("Wall Clocks",), ("Bluetooth Speakers",))),
)


def _name_key(name: str) -> str:
    """Case and plural folded name, so "Dumbbell Set", "dumbbell sets" and "Dumbbell Sets" agree."""
    words = re.findall(r"[a-z0-9]+", name.lower())
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


def resolve_projects(catalog: Catalog) -> tuple[tuple[int, ...], ...]:
    """For each project, the catalog categories it needs that this catalog has (in project order).

    A need matches a category whose leaf name or noun is one of its names (case/plural folded);
    built once per catalog (derived data), so it works for any taxonomy, e.g. a real catalog's.
    """
    return BUNDLE_PROJECTS.of(catalog)


def _resolve_projects(catalog: Catalog) -> tuple[tuple[int, ...], ...]:
    by_key: dict[str, int] = {}
    for index, category in enumerate(catalog.categories):
        for name in (category.name, category.noun):
            by_key.setdefault(_name_key(name), index)
    resolved = []
    for project in PROJECTS:
        found = [next((by_key[_name_key(n)] for n in names if _name_key(n) in by_key), None) for names in project.needs]
        resolved.append(tuple(dict.fromkeys(c for c in found if c is not None)))
    return tuple(resolved)


BUNDLE_PROJECTS = derived("bundle_projects", _resolve_projects)


class ItemRequirement(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    slot: int  # index into BundleGoal.categories
    requirement: Requirement


class BundleGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    project: str
    categories: list[int]
    nouns: list[str]
    budget: float | None
    item_requirements: list[ItemRequirement]
    withheld: list[int]  # indices into item_requirements
    reference_ids: list[str]  # one product per category that together fit the budget
    patience: int

    def requirements_of(self, slot: int) -> list[Requirement]:
        return [ir.requirement for ir in self.item_requirements if ir.slot == slot]


# -- scoring (pure) -------------------------------------------------------------------------------

def slot_weights(requirement_counts: Sequence[int]) -> list[int]:
    """What covering each slot earns: its number of per-item requirements, so the category alone earns
    nothing (the cheapest product of each category is no progress); when no slot has a requirement, the
    categories are the whole task and every slot weighs 1."""
    return list(requirement_counts) if any(requirement_counts) else [1] * len(requirement_counts)


def bundle_reward(weights: Sequence[int], covered: Sequence[bool], extra: int, total: float,
                  budget: float | None) -> tuple[float, dict[str, Any]]:
    """``r_task = clip(2·F1 − 1 − min(2, 5·overrun), −1, 1)`` with ``F1 = 2·credit / (2·credit + missed +
    extra)``: ``credit`` sums the weights of the covered slots, ``missed`` the weights (at least 1) of the
    uncovered ones, ``extra`` counts the listed ids that cover nothing. 1 exactly when every slot is covered
    by exactly one listed id within budget; −1 whenever no credit is earned. Meeting the budget earns
    nothing (any cheap answer meets it); going over it costs."""
    credit = sum(w for w, c in zip(weights, covered) if c)
    missed = sum(max(1, w) for w, c in zip(weights, covered) if not c)
    f1 = 2 * credit / (2 * credit + missed + extra) if credit else 0.0
    overrun = max(0.0, total - budget) / budget if budget else 0.0
    r_task = max(-1.0, min(1.0, 2 * f1 - 1 - min(MAX_OVERRUN_PENALTY, OVERRUN_PENALTY * overrun)))
    return r_task, {"f1": f1, "credit": credit, "missed": missed, "extra": extra, "overrun": overrun, "total": total}


def slot_of(catalog: Catalog, categories: Sequence[int], nouns: Sequence[str], row: int,
            taken: set[int] | frozenset[int] = frozenset()) -> int | None:
    """The first slot not in ``taken`` that product ``row`` is a thing of: one of its category's main type for
    the slot's category, else for a slot asking for the same kind of product ("headphones") from another
    category (a real taxonomy files one type under several leaves, e.g. "Electronics" and "Over-Ear
    Headphones"; the shopper asked for the thing, not the leaf); None if it is none of them."""
    if not is_main_type(catalog, row):
        return None
    category = int(catalog.category[row])
    same = [s for s, c in enumerate(categories) if c == category and s not in taken]
    if not same:
        kind = main_type(catalog, category)
        same = [s for s, noun in enumerate(nouns) if noun == kind and s not in taken]
    return same[0] if same else None


# -- the shopper ----------------------------------------------------------------------------------

@dataclass
class BundleUser(RecommendUser):
    """A project shopper: requirements are per category (``slots``); the budget is slot -1."""

    slots: list[int] = field(default_factory=list)
    nouns: list[str] = field(default_factory=list)
    categories: list[int] = field(default_factory=list)

    def in_play(self, world: World) -> InPlay:
        """The project's categories' brands and values, and its items named by their nouns."""
        if self._in_play is None:
            values = category_values(world.catalog, self.categories).values
            self._in_play = InPlay(tuple(ItemNames("", "", "", noun.lower()) for noun in self.nouns), values)
        return self._in_play

    def _clarify(self, topics: set[str]) -> list[DialogueAct]:
        named = set(self._reading.items) if self._reading is not None else set()
        per_slot: dict[int, tuple[list, list]] = {}
        for i, requirement in enumerate(self.requirements):
            slot = self.slots[i]
            if not ("any" in topics or TOPIC_OF_FIELD.get(requirement.field) in topics):
                continue
            if named and slot >= 0 and slot not in named:
                continue
            self._answer_requirement(i, topics, *per_slot.setdefault(slot, ([], [])))
        revealed = any(stated for stated, _ in per_slot.values())
        annoyed = not revealed and any(repeated for _, repeated in per_slot.values())
        missing = tuple(sorted(t for t in topics - {"any"} if TOPICS[t]  # a requirement topic (not a ranking's)
                               and not any(TOPIC_OF_FIELD.get(r.field) == t for r in self.requirements)))
        for topic in missing or (("any",) if "any" in topics and not per_slot else ()):
            annoyed |= topic in self._no_preference_asked
            self._no_preference_asked.add(topic)
        if annoyed:
            self.lose_patience()
        acts: list[DialogueAct] = [
            A.StateRequirements(BUDGET_NOUN if slot < 0 else self.nouns[slot], tuple(stated), tuple(repeated))
            for slot, (stated, repeated) in sorted(per_slot.items()) if stated or repeated]
        if missing or ("any" in topics and not acts):
            acts.append(A.StateRequirements(BUDGET_NOUN, (), (), tuple(t for t in missing)))
        return acts

    def _feedback(self, text: str, world: World) -> list[DialogueAct]:
        catalog = world.catalog
        acts: list[DialogueAct] = []
        judged = 0
        for row in catalog.ids_in_text(text)[:3]:
            name = spoken_name(catalog, row).text
            slot = slot_of(catalog, self.categories, self.nouns, row)
            if world.stock(row) == 0:
                acts.append(A.SoldOut(name))
            elif slot is None:
                acts.append(A.NotNeeded(name))
            elif judged < FEEDBACK_PER_MESSAGE:
                judged += 1
                indices = [i for i, s in enumerate(self.slots) if s == slot]
                failed = first_failed(catalog, row, [self.requirements[i] for i in indices])
                index = None if failed is None else indices[[self.requirements[i] for i in indices].index(failed)]
                acts.append(self.judge(name, failed, index))
        return acts


# -- the environment ------------------------------------------------------------------------------

def _cheapest(catalog: Catalog, rows: np.ndarray) -> np.ndarray:
    """The cheapest quarter of ``rows`` (at least one row unless empty), sorted, vectorised."""
    if rows.size == 0:
        return rows
    keep = max(1, int(len(rows) * CHEAP_SHARE))
    return np.sort(rows[np.argpartition(catalog.price_cents[rows], keep - 1)[:keep]])


def _in_stock_main(catalog: Catalog) -> tuple[int, ...]:
    """In-stock products of their category's main type per category, before an episode's stock changes."""
    return tuple(np.bincount(catalog.category[in_stock_mask(catalog) & main_type_mask(catalog)].astype(np.int64),
                             minlength=len(catalog.categories)).tolist())


BUNDLE_IN_STOCK = derived("bundle_in_stock", _in_stock_main)


def _in_stock_counts(world: World) -> list[int]:
    """In-stock products of their category's main type (what a slot accepts) per category in this
    episode: a per-catalog count corrected by the episode's few stock changes (O(changes +
    categories), not O(catalog)); a list, read entry by entry."""
    catalog = world.catalog
    main = main_type_mask(catalog)
    counts = list(BUNDLE_IN_STOCK.of(catalog))
    for row, stock in world.planning_overrides().items():
        if main[row]:
            counts[int(catalog.category[row])] += (stock > 0) - (int(catalog.stock[row]) > 0)
    return counts


class BundleFamily(TaskFamily):
    env_id = ENV_ID
    version = 11
    tool_names = ("catalog_search", "catalog_get_product", "user_get_visit_history", "ask_user")
    answer_arguments = RecommendAnswer
    answer_id_arguments = ("product_ids",)
    instructions = ("put together the shopping list for the customer's project: one product for each kind of item they "
                    "need, meeting their requirements and overall budget, then call answer(product_ids=[...]).")

    def prepare(self, catalog: Catalog) -> None:
        """The catalog's field facts (the per-item requirements read them), its in-stock main-type counts and
        every category's cheap rows (the references are drawn from them)."""
        field_facts(catalog)
        BUNDLE_IN_STOCK.of(catalog)
        for category, rows in enumerate(catalog.category_rows):
            if len(rows):
                BUNDLE_CHEAP.of(catalog, category)

    def answer_description(self, difficulty: Difficulty) -> str:
        return ("Submit the bundle: product_ids holds exactly one product id per category the customer needs. A product "
                "counts only if it meets every requirement the customer has for that item; extra or unsuitable "
                "products and going over the budget lower the score.")

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        catalog = world.catalog
        n = difficulty.bundle_categories
        options = []
        in_stock = _in_stock_counts(world)
        for project, resolved in zip(PROJECTS, resolve_projects(catalog)):
            usable = [c for c in resolved if c not in world.denied_categories and in_stock[c] > 0]
            if usable:
                options.append((project, usable))
        if not options:
            raise GenerationError(f"catalog {catalog.name} has none of the categories any BUNDLE project needs")
        enough = [o for o in options if len(o[1]) >= n]
        project, usable = rng.choice(enough) if enough else max(options, key=lambda o: len(o[1]))
        adapted = {} if enough else {"bundle_categories": f"the catalog has at most {len(usable)} of the "
                                                          f"{n} categories a project needs; the bundle has {len(usable)}"}
        core = min(2, n, len(usable))  # the project's essentials, then a random pick of the rest
        chosen = list(range(core)) + sorted(rng.sample(range(core, len(usable)), min(n, len(usable)) - core))
        categories = [usable[i] for i in chosen]
        references = []
        for category in categories:
            cheap = self._cheap_rows(world, category)
            references.append(int(cheap[rng.randrange(len(cheap))]))
        world.reserve(references)
        nouns = {main_type(catalog, c) for c in categories}
        for index in range(len(catalog.categories)):  # every product a slot takes (slot_of) is a right pick:
            if index in categories or main_type(catalog, index) in nouns:  # no other request of a journey
                world.protect(index)  # may sell one out
        item_requirements = self._item_requirements(catalog, references, difficulty, rng)
        budget = None
        if difficulty.bundle_budget:
            budget = float(math.ceil(sum(catalog.price(r) for r in references) * (1 + difficulty.slack)))
        withheld = [i for i in range(len(item_requirements)) if rng.random() < difficulty.p_missing]
        goal = BundleGoal(
            project=project.phrase, categories=categories, nouns=[main_type(catalog, c) for c in categories],
            budget=budget, item_requirements=item_requirements, withheld=withheld,
            reference_ids=[catalog.product_id(r) for r in references], patience=BASE_PATIENCE + rng.randint(0, 2))
        requirements = [ir.requirement for ir in item_requirements]
        slots = [ir.slot for ir in item_requirements]
        if budget is not None:
            requirements.append(Requirement(field="price_max", value=budget))
            slots.append(-1)
        state = RecommendState(requirements=requirements, withheld=set(withheld))
        user = BundleUser(realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=goal.patience,
                          state=state, catalog=catalog, slots=slots, nouns=goal.nouns, categories=categories,
                          feedback_detail=bool(difficulty.feedback_detail))
        stated = tuple((goal.nouns[ir.slot], ir.requirement.field, ir.requirement.text())
                       for i, ir in enumerate(item_requirements) if i not in withheld)
        opening = user.say(A.RequestBundle(project.phrase, tuple(goal.nouns),
                                           None if budget is None else f"{budget:g}", stated))
        return Problem(goal=goal, state=state, user=user, opening=opening, difficulty=difficulty,
                       adapted=adapted)

    @staticmethod
    def _cheap_rows(world: World, category: int) -> np.ndarray:
        """In-stock products among the cheapest quarter of ``category`` (cached per catalog), or, if
        this episode's stock changes emptied that quarter, among all its in-stock products."""
        catalog = world.catalog
        overrides = world.planning_overrides()
        rows = without_sold_out(BUNDLE_CHEAP.of(catalog, category), overrides)  # these rows are in stock in the catalog
        if rows.size == 0:
            in_stock = ProductFilter(in_stock=True)
            rows = category_types(catalog, category).main_rows()
            rows = _cheapest(catalog, rows[filter_mask(catalog, in_stock, overrides, rows=rows)])
        return rows

    @staticmethod
    def _item_requirements(catalog: Catalog, references: list[int], difficulty: Difficulty,
                           rng: random.Random) -> list[ItemRequirement]:
        """``max(0, m(d) − 3)`` per-item requirements, spread over the categories, true of the references."""
        count = max(0, difficulty.m - 3)
        fields = [[f for f in available_fields(catalog, [r]) if f not in _PER_ITEM_FIELDS_EXCLUDED] for r in references]
        out: list[ItemRequirement] = []
        order = list(range(len(references)))
        rng.shuffle(order)
        while len(out) < count and any(fields):
            for slot in order:
                if len(out) < count and fields[slot]:
                    name = fields[slot].pop(rng.randrange(len(fields[slot])))
                    out.append(ItemRequirement(slot=slot, requirement=derive_requirement(
                        catalog, [references[slot]], name, difficulty.slack)))
        return sorted(out, key=lambda ir: ir.slot)

    def verify(self, goal: BundleGoal, state: RecommendState, world: World,
               answer: RecommendAnswer | None) -> TaskOutcome:
        catalog = world.catalog
        if answer is None:
            return TaskOutcome(r_task=-1.0, is_correct=False, details={"answered": False})
        ids = list(answer.product_ids)
        id_rows = [catalog.index_of(i) for i in ids]
        covered: set[int] = set()  # slots
        rows: list[int] = []
        for row in id_rows:
            if row is None or row in rows:
                continue
            rows.append(row)
            slot = slot_of(catalog, goal.categories, goal.nouns, row, covered)
            if slot is not None and world.stock(row) > 0:
                requirements = goal.requirements_of(slot)
                if not requirements or filter_mask(catalog, requirement_filter(requirements), world.stock_overrides,
                                                   rows=np.asarray([row]))[0]:
                    covered.add(slot)
        total = sum(catalog.price(r) for r in rows)
        slots = range(len(goal.categories))
        weights = slot_weights([len(goal.requirements_of(slot)) for slot in slots])
        r_task, details = bundle_reward(weights, [slot in covered for slot in slots], len(ids) - len(covered), total,
                                        goal.budget)
        shown = state.shown_rows(world)
        unseen = [i for i, row in zip(ids, id_rows) if row not in shown]  # an unknown id (None) was never shown
        denied = [catalog.product_id(r) for r in rows if world.is_denied(r)]
        details.update(answered=True, covered=len(covered), required=len(goal.categories), unseen_ids=unseen)
        return TaskOutcome(r_task=r_task, is_correct=r_task == 1.0 and not unseen, details=details,
                           safety_violation=f"recommended products of a denied category: {denied}" if denied else None)

    def oracle(self, problem: Problem[BundleGoal, RecommendState]) -> SurfacingOracle:
        goal = problem.goal
        catalog = shopper_catalog(problem)
        answer = [row for i in goal.reference_ids if (row := catalog.index_of(i)) is not None]
        ask = [goal.item_requirements[i].requirement.field for i in goal.withheld]
        return SurfacingOracle(problem, catalog, surface=[], answer=answer, ask=ask)


def _cheap_in_stock(catalog: Catalog, category: int) -> np.ndarray:
    """The cheapest quarter of ``category``'s in-stock main-type products (before an episode's stock changes)."""
    rows = category_types(catalog, category).main_rows()
    return _cheapest(catalog, rows[catalog.stock[rows] > 0])


BUNDLE_CHEAP = derived("bundle_cheap", _cheap_in_stock)
