"""What the ranked-recommendation environments share (PD, SUB; BUNDLE and RETURN's replacement reuse parts).

* **Requirements** (:class:`Requirement`): one condition on a product, named by the
  :class:`~ecomrlve.catalog.filters.ProductFilter` field it sets (``price_max``, ``brand``,
  ``color``, ``wattage_min`` ...), so the ``catalog_search`` tool and the verifiers share one
  definition of "matches". :func:`derive_requirements` states conditions that given products
  all meet (numeric bounds with the slack curve, equalities only where they agree).
* **Valid set** (:func:`valid_rows`): the exact set of in-stock products of one leaf category's
  main product type meeting every requirement, computed with vectorised compares over that
  category's contiguous main-type view (the category is always a requirement, so this *is* the
  whole-catalog answer).
* **Preferences and relevance** (:class:`Preferences`, :func:`relevance`): hidden weights aligned
  with the stated requirements; relevance is rounded to 1e-6 so ties are exact. Hidden is not
  secret: :func:`spoken_preferences` is how the shopper states each weighed term when asked.
* **Scoring** (:func:`ranking_reward`, pure): nDCG@k against the true ideal ranking, combined
  with constraint satisfaction and an out-of-stock penalty so that exactly an ideal ranking of
  valid items reaches 1.
* **Topics** (:data:`TOPICS`): the requirement fields each topic of a question covers (the shopper's
  understanding, :mod:`ecomrlve.user.understanding`, reads which topics a message asks about).

The task state and the shopper live in :mod:`ecomrlve.envs.recommend.user`; the goal, verifier,
oracle and environment base shared by PD and SUB in :mod:`ecomrlve.envs.recommend.task`.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

import numba
import numpy as np
from pydantic import BaseModel, ConfigDict

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.filters import ProductFilter, condition_masks, filter_mask
from ecomrlve.catalog.product_type import is_main_type, main_type_mask
from ecomrlve.catalog.rowindex import gallop, title_word_index
from ecomrlve.catalog.schema import NO_VALUE, Catalog
from ecomrlve.catalog.scoring_terms import (
    NUMERIC_BOUND,
    attribute_columns,
    field_facts,
    utility_terms,
)
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.catalog.views import CategoryView, category_view
from ecomrlve.world.state import World

BASE_PATIENCE = 3  # annoyances tolerated (repeated or pointless questions), plus 0-2 per shopper
RELEVANCE_FLOOR = 0.05  # every valid product has relevance >= this, so IDCG > 0
NDCG_WEIGHT, SATISFACTION_WEIGHT = 1.5, 0.5  # r_task = -1 + 1.5·nDCG + 0.5·satisfaction - oos share
_WORD = re.compile(r"[a-z0-9]+")

CATEGORICAL_FIELDS = ("brand", *CATEGORICAL_ATTRIBUTES)

#: The requirement fields each topic of a question covers (topics as :mod:`ecomrlve.user.understanding` reads them).
TOPICS: dict[str, tuple[str, ...]] = {
    "price": ("price_max", "price_min"), "brand": ("brand",), "rating": ("rating_min",),
    "shipping": ("ship_days_max",), "color": ("color",), "size": ("size",), "material": ("material",),
    "connector": ("connector_type",), "form": ("item_form",), "wattage": ("wattage_min",),
    "screen": ("screen_size_min",), "weight": ("weight_max",),
    # Soft preferences only (no requirement states them): see PREFERENCE_TOPICS.
    "popularity": (), "similar": (),
}
TOPIC_OF_FIELD = {f: topic for topic, fields in TOPICS.items() for f in fields}


# -- requirements ---------------------------------------------------------------------------------

class Requirement(BaseModel):
    """One condition on a product: a ``ProductFilter`` field and its value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    value: str | int | float

    def text(self) -> str:
        """The value as the shopper says it ("45", "4.5", "USB-C")."""
        if isinstance(self.value, str):
            return self.value
        return f"{self.value:g}"


def requirement_filter(requirements: list[Requirement], *, in_stock: bool | None = True) -> ProductFilter:
    """The ``catalog_search`` filter expressing every requirement (and, by default, in stock)."""
    return ProductFilter.model_validate({**{r.field: r.value for r in requirements}, "in_stock": in_stock})


def available_fields(catalog: Catalog, rows: list[int]) -> list[str]:
    """Requirement fields (besides category) that can be stated so that every row in ``rows`` meets
    them: a price cap and shipping time always; a minimum rating if every row is rated (a real
    catalog has unrated products, which no minimum admits); a price floor if every price is at
    least $2; the brand (when they have one) and each categorical attribute if all rows share one
    value (the attribute their variants vary only where it narrows the category:
    :func:`~ecomrlve.catalog.variants.narrowing`); each numeric bound if all rows have the attribute
    (read from :func:`field_facts`)."""
    facts = field_facts(catalog)
    bits = facts.bits.item(rows[0])
    if len(rows) > 1:
        for row in rows[1:]:
            bits &= facts.bits.item(row)
        for bit, codes in facts.equalities:
            if bits & bit and any(codes.item(row) != codes.item(rows[0]) for row in rows[1:]):
                bits &= ~bit
    names = facts.decoded.get(bits)
    if names is None:
        stated = [name for i, name in enumerate(facts.names) if bits >> i & 1]
        rated = stated[:1] == ["rating_min"]
        names = facts.decoded[bits] = ("price_max", *stated[:rated], "ship_days_max", *stated[rated:])
    return list(names)


def derive_requirement(catalog: Catalog, rows: list[int], name: str, slack: float) -> Requirement:
    """The requirement ``name`` stated with ``slack`` so that every row in ``rows`` meets it."""
    if name == "price_max":
        return Requirement(field=name, value=float(math.ceil(max(catalog.price(r) for r in rows) * (1 + slack))))
    if name == "price_min":
        return Requirement(field=name, value=float(max(1, math.floor(min(catalog.price(r) for r in rows) * (1 - slack)))))
    if name == "rating_min":
        low = min(catalog.rating(r) for r in rows) - 2 * slack
        return Requirement(field=name, value=max(1.0, math.floor(low * 2 + 1e-9) / 2))
    if name == "ship_days_max":
        return Requirement(field=name, value=max(int(catalog.ship_days[r]) for r in rows) + math.ceil(4 * slack))
    if name == "brand":
        return Requirement(field=name, value=catalog.brand_of(rows[0]))
    if name in catalog.categorical:
        return Requirement(field=name, value=CATEGORICAL_ATTRIBUTES[name][int(catalog.categorical[name][rows[0]])])
    attr = next(a for a, bound in NUMERIC_BOUND.items() if bound == name)
    values = [float(catalog.numeric[attr][r]) for r in rows]
    step = {"wattage": 1.0, "screen_size": 0.5, "weight": 0.1}[attr]  # round numbers, as people say them
    if name.endswith("_min"):
        return Requirement(field=name, value=round(math.floor(min(values) * (1 - slack) / step + 1e-6) * step, 1))
    return Requirement(field=name, value=round(math.ceil(max(values) * (1 + slack) / step - 1e-6) * step, 1))


BUDGET_SPREAD = 0.1  # a stated price bound lies up to this share of its category's products beyond what it must allow
BUDGET_STEPS = ((100.0, 5.0), (500.0, 10.0), (math.inf, 50.0))  # (below this price, round to this step)


def sorted_prices(view: CategoryView) -> np.ndarray:
    """The prices (USD) of a category view's products, ascending; built once per view (derived data)."""
    return SORTED_PRICES.of(view.catalog)


SORTED_PRICES = derived("sorted_prices", lambda catalog: np.sort(catalog.price_cents) / 100)


def stated_budget(requirement: Requirement, prices: np.ndarray, rng: random.Random,
                  limit: Requirement | None = None) -> Requirement:
    """A price bound as a shopper states a budget; other requirements unchanged.

    Derived from products' own prices, the bound would sit at their price times 1 ± slack(d), and d is
    readable from the prompt, so it would point at a product that meets every requirement, withheld ones
    included. So a cap moves up (a floor down) past a random number of the category's products (up to
    :data:`BUDGET_SPREAD` of ``prices``, the category's prices ascending), is rounded to a round step
    (:data:`BUDGET_STEPS`), and never passes ``limit`` (a bound it tightens). It still allows everything
    the exact bound allowed.
    """
    if requirement.field not in ("price_max", "price_min") or not len(prices):
        return requirement
    value = float(requirement.value)
    shift = rng.randint(0, int(BUDGET_SPREAD * len(prices)))
    if requirement.field == "price_max":
        passed = float(prices[min(len(prices) - 1, int(np.searchsorted(prices, value)) + shift)])
        step = next(step for below, step in BUDGET_STEPS if max(value, passed) < below)
        budget = math.ceil(max(value, passed) / step - 1e-9) * step
        return Requirement(field="price_max", value=float(budget if limit is None else min(budget, float(limit.value))))
    passed = float(prices[max(0, int(np.searchsorted(prices, value, side="right")) - 1 - shift)])
    step = next(step for below, step in BUDGET_STEPS if min(value, passed) < below)
    budget = max(1.0, math.floor(min(value, passed) / step + 1e-9) * step)
    return Requirement(field="price_min", value=float(budget if limit is None else max(budget, float(limit.value))))


def derive_requirements(catalog: Catalog, rows: list[int], count: int, slack: float, rng: random.Random,
                        preferred: tuple[str, ...] = ()) -> list[Requirement]:
    """``count`` requirements that every row meets: a price bound first, then the ``preferred``
    fields (e.g. SUB's compatibility attributes), then the others, each group in random order."""
    fields = available_fields(catalog, rows)
    first = [f for f in fields if f in preferred and f != "price_max"]
    rest = [f for f in fields if f not in preferred and f != "price_max"]
    ordered = ["price_max"] + rng.sample(first, len(first)) + rng.sample(rest, len(rest))
    return [derive_requirement(catalog, rows, name, slack) for name in ordered[:max(0, count)]]


_IN_STOCK = ProductFilter(in_stock=True)


@numba.njit(nogil=True, cache=True)
def _most_alike(brand: np.ndarray, codes: np.ndarray, own: int, allowed: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """The ``allowed`` rows but ``own`` (ascending) that share the most of ``own``'s brand and
    categorical codes (those it has); empty if no other row is allowed.

    Counted attribute by attribute over the whole view (plus one, so that a candidate sharing
    nothing still counts), in bytes: simple loops over contiguous columns that the compiler
    vectorises, as fast as numpy's compares on a large category and without their call costs
    on a small one.
    """
    shared = np.empty(len(brand), dtype=np.int8)
    for i in range(len(brand)):
        shared[i] = (brand[i] == brand[own]) + 1
    for a in range(codes.shape[0]):
        code = codes[a, own]
        if code != NO_VALUE:
            column = codes[a]
            for i in range(len(column)):
                shared[i] += column[i] == code
    shared[own] = 0
    most = 0
    for i in range(len(shared)):
        shared[i] *= allowed[i]
        most = max(most, shared[i])
    if most == 0:
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(shared == most)


def closest_partner(world: World, row: int, rng: random.Random, flt: ProductFilter | None = None) -> int | None:
    """An in-stock product of ``row``'s category (meeting ``flt``, conditions besides the category)
    sharing the most of its brand and attributes, so that requirements true of both are plenty
    (None if there is none): the filter vectorised over the category's view, then one compiled
    call counting what each allowed row shares (:func:`_most_alike`)."""
    view = category_view(world.catalog, int(world.catalog.category[row]), main_type_only=True)
    sub = view.catalog
    allowed = filter_mask(sub, flt or _IN_STOCK, view.overrides(world.planning_overrides()))
    best = _most_alike(sub.brand, attribute_columns(sub).codes, view.local(row), allowed)
    if len(best) == 0:
        return None
    return int(view.rows[best[rng.randrange(len(best))]])


def category_requirement(catalog: Catalog, category: int) -> Requirement:
    return Requirement(field="category", value=catalog.categories[category].name)


def valid_rows(catalog: Catalog, category: int, requirements: list[Requirement],
               stock_overrides: dict[int, int], exclude: tuple[int, ...] = ()) -> np.ndarray:
    """The exact valid set: in-stock rows of leaf ``category``'s main product type meeting every
    requirement (sorted).

    Exact for the whole catalog because the leaf category is always required; only that
    category's rows are checked, with the vectorised filter (O(category), no Python loop).
    """
    view = category_view(catalog, category, main_type_only=True)
    return view.rows[valid_local(view, requirements, stock_overrides, exclude)]


def valid_local(view: CategoryView, requirements: list[Requirement], stock_overrides: dict[int, int],
                exclude: tuple[int, ...] = ()) -> np.ndarray:
    """:func:`valid_rows` as local rows of ``view``."""
    others = [r for r in requirements if r.field != "category"]
    local = view.matching(requirement_filter(others), stock_overrides)
    for row in exclude:  # a binary search each: np.isin would sort the valid set
        if view.contains(row):
            position = int(np.searchsorted(local, view.local(row)))
            if position < len(local) and int(local[position]) == view.local(row):
                local = np.delete(local, position)
    return local


def satisfactions(catalog: Catalog, rows: list[int], category: int, requirements: list[Requirement]) -> list[float]:
    """Share of the requirements (the leaf category counts as one) that each product of ``rows``
    meets: one filter of them all, its conditions counted separately, for all the rows."""
    index = np.asarray(rows, dtype=np.int64)
    met = ((catalog.category[index] == category) & main_type_mask(catalog)[index]).astype(np.int64)  # is_main_type
    others = [r for r in requirements if r.field != "category"]
    if len({r.field for r in others}) < len(others):
        raise ValueError(f"requirements name a field twice: {others}")
    masks = condition_masks(catalog, requirement_filter(others, in_stock=None), rows=index)
    for requirement in others:
        met += masks[requirement.field]
    return [m / (1 + len(others)) for m in met.tolist()]


def first_failed(catalog: Catalog, row: int, requirements: list[Requirement]) -> Requirement | None:
    one = np.asarray([row])
    for requirement in requirements:
        if requirement.field == "category":
            if catalog.category_of(row).name != requirement.value or not is_main_type(catalog, row):
                return requirement
        elif not filter_mask(catalog, requirement_filter([requirement], in_stock=None), rows=one)[0]:
            return requirement
    return None


# -- preferences, relevance, the ideal ranking ----------------------------------------------------

class Preferences(BaseModel):
    """Hidden weights of the shopper's utility; aligned with what they state (price-sensitive if
    they gave a price bound, rating-focused if they gave a minimum rating, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    price: float
    rating: float
    shipping: float
    popularity: float
    price_reference: float  # USD; a product at twice this price has no price appeal left


#: The topics whose questions a spoken preference answers (popularity also counts as a rating question:
#: "reviews" asks about both).
PREFERENCE_TOPICS: dict[str, tuple[str, ...]] = {"price": ("price",), "rating": ("rating",), "shipping": ("shipping",),
                                                 "popularity": ("popularity", "rating"), "similar": ("similar",)}
STRONG_PREFERENCE = 0.5  # a weight from here on is said to matter a lot; below, to be a small plus
_REFERENCE_STEPS = ((20.0, 1.0), (100.0, 5.0), (500.0, 10.0), (math.inf, 50.0))  # (below, round to) as people say prices


def spoken_preferences(prefs: Preferences, similar_to: str = "", similarity_weight: float = 0.0) -> tuple[tuple[str, str, str], ...]:
    """Every term the ranking weighs, as the shopper says it when asked: (kind, strength, value).

    Every weight is positive (:func:`draw_preferences`), so every kind is said. The price term only falls as the price
    rises, so the shopper names no ideal price but the price where its appeal is gone: twice the reference price,
    rounded as people say prices ($26, $90, $240, $2,100 -> $2100): "the further below $90, the better"."""
    def strength(weight: float) -> str:
        return "strong" if weight >= STRONG_PREFERENCE else "mild"

    step = next(step for below, step in _REFERENCE_STEPS if prefs.price_reference < below)
    reference = max(step, round(prefs.price_reference / step) * step)
    said = [("price", strength(prefs.price), f"{2 * reference:g}"), ("rating", strength(prefs.rating), ""),
            ("shipping", strength(prefs.shipping), ""), ("popularity", strength(prefs.popularity), "")]
    if similar_to and similarity_weight > 0:
        said.append(("similar", strength(similarity_weight), similar_to))
    return tuple(said)


def draw_preferences(requirements: list[Requirement], price_reference: float, rng: random.Random) -> Preferences:
    stated = {r.field for r in requirements}

    def weight(fields: tuple[str, ...]) -> float:
        return round((1.0 if stated & set(fields) else 0.2) * rng.uniform(0.7, 1.3), 4)

    return Preferences(price=weight(("price_max", "price_min")), rating=weight(("rating_min",)),
                       shipping=weight(("ship_days_max",)), popularity=round(0.3 * rng.uniform(0.7, 1.3), 4),
                       price_reference=round(price_reference, 2))


_NO_SIMILARITY = np.zeros(0)  # PD's: relevance from the utility alone


@numba.njit(nogil=True, cache=True)
def _relevance_kernel(rows: np.ndarray, price: np.ndarray, rating_steps: np.ndarray, shipping: np.ndarray,
                      popularity: np.ndarray, weights: np.ndarray, similarity: np.ndarray,
                      similarity_weight: float) -> np.ndarray:  # pragma: no cover - compiled
    """:func:`relevance` row by row: the float64 operations of the vectorised formula, in its order."""
    w_price, w_rating, w_shipping, w_popularity, price_scale, total, floor, span = weights
    out = np.empty(len(rows))
    for j in range(len(rows)):
        row = rows[j]
        score = (w_price * (1 - min(1.0, price[row] / price_scale)) + w_rating * rating_steps[row] / 40.0
                 + w_shipping * shipping[row] + w_popularity * popularity[row]) / total
        if len(similarity):
            score = similarity_weight * similarity[j] + (1 - similarity_weight) * score
        out[j] = np.rint((floor + span * min(max(score, 0.0), 1.0)) * 1e6) / 1e6
    return out


def relevance(catalog: Catalog, rows: np.ndarray, prefs: Preferences, similarity: np.ndarray | None = None,
              similarity_weight: float = 0.0) -> np.ndarray:
    """Relevance of valid ``rows``: the shopper's utility in [0, 1] (mixed with ``similarity``
    by ``similarity_weight`` if given), floored at 0.05 and rounded to 1e-6 (exact ties).

    One compiled pass over the rows on the cached :func:`utility_terms`; the same floats as the
    vectorised ``round(0.05 + 0.95·clip(w·similarity + (1 − w)·utility, 0, 1), 6)``.
    """
    terms = utility_terms(catalog)
    weights = np.asarray([prefs.price, prefs.rating, prefs.shipping, prefs.popularity, 2 * prefs.price_reference,
                          prefs.price + prefs.rating + prefs.shipping + prefs.popularity,
                          RELEVANCE_FLOOR, 1 - RELEVANCE_FLOOR])
    return _relevance_kernel(np.asarray(rows, dtype=np.int64), terms.price, terms.rating_steps, terms.shipping,
                             terms.popularity, weights, _NO_SIMILARITY if similarity is None else similarity,
                             similarity_weight)


@numba.njit(nogil=True, cache=True)
def _best_positions(rows: np.ndarray, rel: np.ndarray, k: int) -> np.ndarray:  # pragma: no cover - compiled
    """Positions of the ``k`` best (relevance descending, then row ascending), best first: one
    pass keeping them sorted by insertion (k is a handful)."""
    best = np.empty(min(k, len(rows)), dtype=np.int64)
    size = 0
    for i in range(len(rows)):
        position = size  # where i goes among the kept ones, found from the worst end
        while position > 0 and (rel[i] > rel[best[position - 1]]
                                or (rel[i] == rel[best[position - 1]] and rows[i] < rows[best[position - 1]])):
            position -= 1
        if position < len(best):
            for j in range(min(size, len(best) - 1), position, -1):
                best[j] = best[j - 1]
            best[position] = i
            size = min(size + 1, len(best))
    return best


def ideal_ranking(rows: np.ndarray, rel: np.ndarray, k: int) -> tuple[list[int], list[float]]:
    """The true top ``k`` of the valid set by relevance (ties by row), with their relevances."""
    best = _best_positions(np.asarray(rows, dtype=np.int64), np.asarray(rel, dtype=np.float64), k)
    return rows[best].tolist(), rel[best].tolist()


@numba.njit(nogil=True, cache=True)
def _count_members(rows: np.ndarray, postings: np.ndarray, hits: np.ndarray) -> None:  # pragma: no cover - compiled
    """``hits[j] += 1`` for each ``rows[j]`` in ``postings`` (both ascending), walking the shorter
    list and galloping in the longer: O(shorter · log(longer / shorter))."""
    if len(rows) <= len(postings):
        position = 0
        for j in range(len(rows)):
            position = gallop(postings, position, len(postings), rows[j])
            if position < len(postings) and postings[position] == rows[j]:
                hits[j] += 1
    else:
        j = 0
        for posting in postings:
            j = gallop(rows, j, len(rows), posting)
            if j < len(rows) and rows[j] == posting:
                hits[j] += 1


def title_overlap(catalog: Catalog, original: int, rows: np.ndarray) -> np.ndarray:
    """Share of the original's short-title words found in the title of each of ascending ``rows``.

    Uses a word -> rows index of ``catalog`` (a category view), built once per catalog like a
    search index; each of the original's few words is a merge of two ascending lists, so a call
    costs O(rows · log), not O(category).
    """
    words = sorted(set(_WORD.findall(catalog.short_title(original).lower())))
    if not words or len(rows) == 0:
        return np.zeros(len(rows))
    index = title_word_index(catalog)
    rows = np.asarray(rows, dtype=np.int64)
    hits = np.zeros(len(rows))
    for word in words:
        postings = index.get(word)
        if postings is None:
            continue
        if 2 * len(postings) <= len(catalog):
            _count_members(rows, postings, hits)
        else:  # a word most titles have (the product noun): count every row, then take off those without it
            misses = np.zeros(len(rows))
            _count_members(rows, TITLE_WORD_COMPLEMENTS.of(catalog, word), misses)
            hits += 1 - misses
    return hits / len(words)


def _rows_without(catalog: Catalog, word: str) -> np.ndarray:
    """The ascending rows of ``catalog`` whose title lacks ``word`` (a word of its titles)."""
    return np.setdiff1d(np.arange(len(catalog), dtype=np.int64), title_word_index(catalog)[word], assume_unique=True)


TITLE_WORD_COMPLEMENTS = derived("title_word_complements", _rows_without)


@numba.njit(nogil=True, cache=True)
def _attribute_overlap_kernel(rows: np.ndarray, brand: np.ndarray, codes: np.ndarray, values: np.ndarray,
                              original: int, tolerance: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """:func:`attribute_overlap` row by row; ``tolerance[a]`` is ``np.isclose``'s bound for the
    original's value of numeric attribute ``a`` (NaN: the attribute is not compared)."""
    compared = 1
    for a in range(codes.shape[0]):
        compared += codes[a, original] != NO_VALUE
    for a in range(values.shape[0]):
        compared += not np.isnan(tolerance[a])
    out = np.empty(len(rows))
    for j in range(len(rows)):
        row = rows[j]
        same = 1 if brand[row] == brand[original] else 0
        for a in range(codes.shape[0]):
            if codes[a, original] != NO_VALUE and codes[a, row] == codes[a, original]:
                same += 1
        for a in range(values.shape[0]):
            if not np.isnan(tolerance[a]):  # np.isclose: |x − y| <= atol + rtol·|y| (finite y), or x == y
                x, y = values[a, row], values[a, original]
                if (abs(x - y) <= tolerance[a] and np.isfinite(y)) or x == y:
                    same += 1
        out[j] = same / compared
    return out


def attribute_overlap(catalog: Catalog, original: int, rows: np.ndarray) -> np.ndarray:
    """Share of the original's brand and attributes (those it has) that each row has too."""
    columns = attribute_columns(catalog)
    tolerance = 1e-08 + 1e-05 * np.abs(columns.values[:, original])  # np.isclose's, in the columns' precision; NaN stays NaN
    return _attribute_overlap_kernel(np.asarray(rows, dtype=np.int64), catalog.brand, columns.codes, columns.values,
                                     original, tolerance)


def warm_kernels(catalog: Catalog) -> None:
    """Compile the kernels above, or load them from numba's on-disk cache, for the array types
    episodes pass (the scored valid sets are read-only), on one row of ``catalog`` (a non-empty
    category view), so that the first episode does not pay for it."""
    rows = np.zeros(1, dtype=np.int64)
    prefs = Preferences(price=1.0, rating=1.0, shipping=1.0, popularity=1.0, price_reference=1.0)
    rel = relevance(catalog, rows, prefs, attribute_overlap(catalog, 0, rows) + title_overlap(catalog, 0, rows), 0.5)
    ideal_ranking(rows, rel, 1)
    rows.flags.writeable = rel.flags.writeable = False
    ideal_ranking(rows, rel, 1)
    _most_alike(catalog.brand, attribute_columns(catalog).codes, 0, np.ones(len(catalog), dtype=bool))


# -- scoring (pure) -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ListedItem:
    """How one recommended id fares: relevance if it is a valid first mention within the top k
    (else 0), the share of requirements it meets (0 for unknown ids, repeats, or beyond k), and
    whether it is out of stock."""

    relevance: float
    satisfaction: float
    out_of_stock: bool


def ndcg(relevances: list[float], ideal: list[float], k: int) -> float:
    """nDCG@k of a list against the ideal relevances (``ideal`` non-empty, positive)."""
    dcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances[:k]))
    idcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(ideal[:k]))
    return dcg / idcg


def ranking_reward(listed: list[ListedItem], ideal: list[float], k: int) -> tuple[float, dict[str, float]]:
    """``r_task = clip(−1 + 1.5·nDCG@k + 0.5·satisfaction − out-of-stock share, −1, 1)``.

    It is 1 exactly when every listed item is valid, in stock and distinct, the list is no longer
    than k, and its relevances are the ideal ones in order, i.e. an ideal ranking of valid items;
    an empty list or unknown ids give −1.
    """
    if not listed:
        return -1.0, {"ndcg": 0.0, "satisfaction": 0.0, "out_of_stock_share": 0.0}
    gain = ndcg([item.relevance for item in listed], ideal, k)
    sat = sum(item.satisfaction for item in listed) / len(listed)
    oos = sum(item.out_of_stock for item in listed) / len(listed)
    r_task = max(-1.0, min(1.0, -1.0 + NDCG_WEIGHT * gain + SATISFACTION_WEIGHT * sat - oos))
    return r_task, {"ndcg": gain, "satisfaction": sat, "out_of_stock_share": oos}


def listed_items(world: World, rows: list[int | None], category: int, requirements: list[Requirement],
                 valid: np.ndarray, rel: np.ndarray, k: int) -> list[ListedItem]:
    """Score each recommended id, given by its row (None: unknown), against the final world
    (``rel`` aligned with ``valid``, ascending)."""
    catalog = world.catalog
    seen: set[int] = set()
    listed: list[tuple[int | None, bool]] = []  # (row, whether it is scored) of each id
    for position, row in enumerate(rows):
        if row is None or row in seen or position >= k:
            listed.append((row, False))
        else:
            seen.add(row)
            listed.append((row, True))
    scored = [row for row, is_scored in listed if row is not None and is_scored]
    positions = np.searchsorted(valid, scored).tolist()  # binary searches: the valid set can hold most of a category
    relevances = iter([float(rel[p]) if p < len(valid) and int(valid[p]) == row else 0.0
                       for p, row in zip(positions, scored)])
    satisfaction = iter(satisfactions(catalog, scored, category, requirements))
    out: list[ListedItem] = []
    for row, is_scored in listed:
        if row is None or not is_scored:
            out.append(ListedItem(0.0, 0.0, row is not None and world.stock(row) == 0))
        else:
            out.append(ListedItem(next(relevances), next(satisfaction), world.stock(row) == 0))
    return out


