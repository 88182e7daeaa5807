"""Per-category views and row-set helpers give exactly what the exhaustive whole-catalog paths give.

Every fast path (``CategoryView.matching``, ``allowed_rows`` for a category, valid sets,
``without_sold_out``, ``contains_sorted``, ``sorted_contains``, the title word index, ``title_overlap``, the compiled
``relevance`` and ``attribute_overlap``, ``closest_partner``, and ``available_fields`` from per-row
bits) is compared,
row for row and in order, with an O(catalog) evaluation on small random catalogs whose
columns have few distinct values (ties, equal prices, missing attributes, NaNs), so that bounds
falling exactly on a value and empty results are common.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import random

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecomrlve.catalog.filters import ProductFilter, filter_mask, in_stock_mask
from ecomrlve.catalog.product_type import category_types, is_main_type, same_type
from ecomrlve.catalog.rowindex import (
    _ascii_title_words,
    _python_title_words,
    contains_sorted,
    gallop,
    sorted_contains,
    title_word_index,
    without_sold_out,
)
from ecomrlve.catalog.schema import NO_VALUE, Catalog, Category
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES, NUMERIC_ATTRIBUTES
from ecomrlve.catalog.variants import narrowing, variant_columns
from ecomrlve.catalog.views import allowed_rows, category_view
from ecomrlve.envs.recommend.requirements import (
    NUMERIC_BOUND,
    RELEVANCE_FLOOR,
    Preferences,
    Requirement,
    _count_members,
    attribute_overlap,
    available_fields,
    closest_partner,
    ideal_ranking,
    relevance,
    requirement_filter,
    satisfactions,
    title_overlap,
    valid_rows,
)
from ecomrlve.world.state import World

CATEGORIES = (Category(("Electronics", "Chargers"), "charger", "color"),
              Category(("Electronics", "Cables"), "cable", "color"),
              Category(("Home", "Lamps"), "lamp", "color"))
BRANDS = ("Brightix", "Volta", "Nimbus")
WORDS = ("fast", "usb", "lamp", "mini", "pro")
PRICES = (199, 200, 999, 1000, 1999, 2000, 4550)  # cents: 1.99, 2.00 (the price floor's edge), 9.99, ... 45.50
NUMERIC_VALUES = (float("nan"), 5.0, 12.5, 12.5001, 65.0)


@st.composite
def catalogs(draw) -> Catalog:
    n = draw(st.integers(1, 40))

    def column(values, dtype) -> np.ndarray:
        return np.asarray(draw(st.lists(st.sampled_from(values), min_size=n, max_size=n)), dtype=dtype)

    titles = [" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))) + ", Black" for _ in range(n)]
    return Catalog(
        name="random", ids=np.asarray([f"P{i:08d}".encode() for i in range(n)], dtype="S9"), titles=pa.array(titles),
        category=column(range(len(CATEGORIES)), np.int16), categories=CATEGORIES,
        brand=column(range(len(BRANDS)), np.int32), brands=BRANDS, price_cents=column(PRICES, np.int32),
        rating_x10=column((10, 35, 40, 50), np.int16), rating_count=column((0, 7, 300), np.int32),
        ship_days=column((1, 3, 7), np.int16), stock=column((0, 1, 5), np.int32),
        categorical={attr: column((NO_VALUE, 0, 1, 2), np.int16) for attr in CATEGORICAL_ATTRIBUTES},
        numeric={attr: column(NUMERIC_VALUES, np.float32) for attr in NUMERIC_ATTRIBUTES})


def _value(draw, field: str):
    if field == "category":
        return draw(st.sampled_from([c.name for c in CATEGORIES] + ["Electronics", "Toys"]))
    if field == "brand":
        return draw(st.sampled_from([*BRANDS, "volta ", "Unknown"]))
    if field in CATEGORICAL_ATTRIBUTES:
        return draw(st.sampled_from([*CATEGORICAL_ATTRIBUTES[field][:3], "nonsense"]))
    if field.startswith("price"):
        return draw(st.sampled_from([9.99, 10.0, 19.99, 20.0, 45.5, 0.0, 1e9]))
    if field == "rating_min":
        return draw(st.sampled_from([0.0, 3.5, 4.0, 5.0]))
    if field == "ship_days_max":
        return draw(st.sampled_from([0, 3, 7, 10**6]))
    if field == "in_stock":
        return draw(st.booleans())
    return draw(st.sampled_from([0.0, 5.0, 12.5, 12.50005, 65.0, 100.0]))


@st.composite
def filters(draw, *, category: bool = True) -> ProductFilter:
    fields = [f for f in ProductFilter.model_fields if category or f != "category"]
    chosen = draw(st.lists(st.sampled_from(fields), unique=True, max_size=5))
    return ProductFilter(**{field: _value(draw, field) for field in chosen})


def overrides(n: int):
    return st.dictionaries(st.integers(0, n - 1), st.sampled_from([0, 2]), max_size=4)


SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@SETTINGS
@given(data=st.data())
def test_category_paths_equal_the_whole_catalog_mask(data) -> None:
    """A filter naming one leaf category: ``allowed_rows`` (search) and ``CategoryView.matching``
    give the rows of the whole-catalog mask, ascending."""
    catalog = data.draw(catalogs())
    category = data.draw(st.integers(0, len(CATEGORIES) - 1))
    flt = data.draw(filters(category=False)).model_copy(update={"category": CATEGORIES[category].name})
    stock = data.draw(overrides(len(catalog)))
    expected = np.flatnonzero(filter_mask(catalog, flt, stock))
    view = category_view(catalog, category)
    assert np.array_equal(allowed_rows(catalog, flt, stock).rows, expected)
    assert np.array_equal(view.rows[view.matching(flt, stock)], expected)


@pytest.mark.slow
@SETTINGS
@given(data=st.data())
def test_valid_rows_equal_the_exhaustive_valid_set(data) -> None:
    catalog = data.draw(catalogs())
    category = data.draw(st.integers(0, len(CATEGORIES) - 1))
    flt = data.draw(filters(category=False))
    requirements = [Requirement(field=f, value=v) for f, v in flt.model_dump(exclude_none=True).items() if f != "in_stock"]
    stock = data.draw(overrides(len(catalog)))
    exclude = tuple(data.draw(st.lists(st.integers(0, len(catalog) - 1), max_size=2)))
    whole = ProductFilter(**{r.field: r.value for r in requirements}, in_stock=True)
    mask = filter_mask(catalog, whole, stock) & (catalog.category == category)
    mask &= np.asarray([is_main_type(catalog, row) for row in range(len(catalog))])  # a request means the main type
    mask[list(exclude)] = False
    assert np.array_equal(valid_rows(catalog, category, requirements, stock, exclude), np.flatnonzero(mask))


@SETTINGS
@given(data=st.data())
def test_in_stock_mask_applies_the_episode_s_stock_changes(data) -> None:
    catalog = data.draw(catalogs())
    stock = data.draw(overrides(len(catalog)))
    expected = [stock.get(row, int(catalog.stock[row])) > 0 for row in range(len(catalog))]
    assert in_stock_mask(catalog, stock).tolist() == expected
    assert in_stock_mask(catalog).tolist() == (catalog.stock > 0).tolist()  # the per-catalog mask stays unchanged
    rows = data.draw(st.lists(st.integers(0, len(catalog) - 1), max_size=8))  # any order, repeats
    in_stock = filter_mask(catalog, ProductFilter(in_stock=True), stock, rows=np.asarray(rows, dtype=np.int64))
    assert in_stock.tolist() == [expected[row] for row in rows]


@SETTINGS
@given(data=st.data())
def test_without_sold_out_equals_the_in_stock_filter(data) -> None:
    catalog = data.draw(catalogs())
    rows = np.flatnonzero(catalog.stock > 0)
    rows = rows[data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))] if len(rows) else rows
    stock = data.draw(overrides(len(catalog)))
    expected = rows[filter_mask(catalog, ProductFilter(in_stock=True), stock, rows=rows)]
    assert np.array_equal(without_sold_out(rows, stock), expected)


@SETTINGS
@given(rows=st.lists(st.integers(0, 50), unique=True).map(sorted), row=st.integers(-1, 51))
def test_contains_sorted_is_membership(rows, row) -> None:
    assert contains_sorted(np.asarray(rows, dtype=np.int64), row) == (row in rows)


@SETTINGS
@given(rows=st.lists(st.integers(0, 50), unique=True).map(sorted), values=st.lists(st.integers(-1, 51), max_size=30))
def test_sorted_contains_is_isin(rows, values) -> None:
    rows_array, values_array = np.asarray(rows, dtype=np.int64), np.asarray(values, dtype=np.int64)
    assert np.array_equal(sorted_contains(rows_array, values_array), np.isin(values_array, rows_array))


@SETTINGS
@given(values=st.lists(st.integers(0, 60), max_size=40).map(sorted), data=st.data())
def test_gallop_is_the_first_position_at_least_x(values, data) -> None:
    low = data.draw(st.integers(0, len(values)))
    high = data.draw(st.integers(low, len(values)))
    x = data.draw(st.integers(-1, 61))
    array = np.asarray(values, dtype=np.int64)
    assert gallop(array, low, high, x) == low + int(np.searchsorted(array[low:high], x))


@SETTINGS
@given(data=st.data())
def test_title_overlap_counts_the_original_words(data) -> None:
    catalog = data.draw(catalogs())
    original = data.draw(st.integers(0, len(catalog) - 1))
    rows = np.asarray(sorted(data.draw(st.sets(st.integers(0, len(catalog) - 1)))), dtype=np.int64)
    words = set(catalog.title(original).split(",")[0].lower().split())
    expected = [len(words & set(catalog.title(r).lower().replace(",", " ").split())) / len(words) for r in rows]
    assert np.array_equal(title_overlap(catalog, original, rows), np.asarray(expected, dtype=float).reshape(len(rows)))


def vectorised_relevance(catalog: Catalog, rows: np.ndarray, prefs: Preferences, similarity: np.ndarray | None = None,
                         similarity_weight: float = 0.0) -> np.ndarray:
    """The relevance formula as numpy expressions over the gathered rows (what the kernel replaced)."""
    price = catalog.price_cents[rows] / 100.0
    scores = (
        prefs.price * (1 - np.minimum(1.0, price / (2 * prefs.price_reference)))
        + prefs.rating * (catalog.rating_x10[rows] - 10) / 40.0
        + prefs.shipping * (1 - (np.minimum(catalog.ship_days[rows], 14) - 1) / 13.0)
        + prefs.popularity * np.minimum(1.0, np.log1p(catalog.rating_count[rows]) / 10.0)
    ) / (prefs.price + prefs.rating + prefs.shipping + prefs.popularity)
    if similarity is not None:
        scores = similarity_weight * similarity + (1 - similarity_weight) * scores
    return np.round(RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * np.clip(scores, 0.0, 1.0), 6)


def vectorised_attribute_overlap(catalog: Catalog, original: int, rows: np.ndarray) -> np.ndarray:
    """The share of the original's brand and attributes each row shares; a product's value of the attribute its
    variants vary is not compared (it has several, and its card shows no product-level one)."""
    variants = variant_columns(catalog)
    same = [catalog.brand[rows] == catalog.brand[original]]
    for attribute, column in catalog.categorical.items():
        codes = np.where(variants.varies(attribute), NO_VALUE, column)
        if codes[original] != NO_VALUE:
            same.append(codes[rows] == codes[original])
    same += [np.isclose(values[rows], values[original]) for values in catalog.numeric.values()
             if not np.isnan(values[original])]
    return np.mean(np.stack(same), axis=0)


def bitwise_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype == np.float64 and np.array_equal(a.view(np.uint64), b.view(np.uint64))


preferences = st.builds(Preferences, price=st.floats(0.1, 1.3), rating=st.floats(0.1, 1.3), shipping=st.floats(0.1, 1.3),
                        popularity=st.floats(0.2, 0.4), price_reference=st.floats(0.5, 500))


@SETTINGS
@given(data=st.data(), prefs=preferences, weight=st.sampled_from([None, 0.5, 0.3]))
def test_relevance_kernel_equals_the_vectorised_formula(data, prefs, weight) -> None:
    """Bit for bit, with and without a similarity mixed in."""
    catalog = data.draw(catalogs())
    rows = np.asarray(sorted(data.draw(st.sets(st.integers(0, len(catalog) - 1)))), dtype=np.int64)
    similarity = None if weight is None else np.asarray(data.draw(st.lists(
        st.floats(0, 1), min_size=len(rows), max_size=len(rows))), dtype=np.float64)
    got = relevance(catalog, rows, prefs, similarity, weight or 0.0)
    assert bitwise_equal(got, vectorised_relevance(catalog, rows, prefs, similarity, weight or 0.0))


@SETTINGS
@given(data=st.data())
def test_attribute_overlap_kernel_equals_np_isclose(data) -> None:
    """Numeric values 12.5 and 12.5001 are close for ``np.isclose``; NaN attributes are not compared."""
    catalog = data.draw(catalogs())
    original = data.draw(st.integers(0, len(catalog) - 1))
    rows = np.asarray(data.draw(st.lists(st.integers(0, len(catalog) - 1))), dtype=np.int64)
    assert bitwise_equal(attribute_overlap(catalog, original, rows), vectorised_attribute_overlap(catalog, original, rows))


def test_relevance_kernels_on_the_synthetic_catalog(catalog) -> None:
    """Every main-type row of every category, against the vectorised formulas, for shoppers and
    originals drawn at random."""
    rng = random.Random(7)
    for category in range(len(catalog.categories)):
        sub = category_view(catalog, category, main_type_only=True).catalog
        rows = np.arange(len(sub))
        for _ in range(3):
            if not len(rows):
                continue
            prefs = Preferences(price=round(rng.uniform(0.14, 1.3), 4), rating=round(rng.uniform(0.14, 1.3), 4),
                                shipping=round(rng.uniform(0.14, 1.3), 4), popularity=round(rng.uniform(0.2, 0.4), 4),
                                price_reference=round(rng.uniform(1, 300), 2))
            original = rng.randrange(len(rows))
            overlap = attribute_overlap(sub, original, rows)
            assert bitwise_equal(overlap, vectorised_attribute_overlap(sub, original, rows))
            similarity = 0.6 * overlap + 0.4 * title_overlap(sub, original, rows)
            assert bitwise_equal(relevance(sub, rows, prefs), vectorised_relevance(sub, rows, prefs))
            assert bitwise_equal(relevance(sub, rows, prefs, similarity, 0.5),
                                 vectorised_relevance(sub, rows, prefs, similarity, 0.5))


@SETTINGS
@given(data=st.data(), k=st.integers(0, 7))
def test_ideal_ranking_is_the_head_of_a_full_sort(data, k) -> None:
    """Relevance descending, ties by row ascending, whatever the order of the rows given."""
    rows = np.asarray(data.draw(st.lists(st.integers(0, 60), unique=True)), dtype=np.int64)
    rel = np.asarray(data.draw(st.lists(st.sampled_from([0.05, 0.5, 0.700001, 1.0]), min_size=len(rows),
                                        max_size=len(rows))), dtype=np.float64)
    order = np.lexsort((rows, -rel))[:k]
    assert ideal_ranking(rows, rel, k) == (rows[order].tolist(), rel[order].tolist())


@SETTINGS
@given(rows=st.sets(st.integers(0, 3000)), postings=st.sets(st.integers(0, 3000)))
def test_count_members_is_membership(rows, postings) -> None:
    """The galloping merge of two ascending lists, either one the longer, with long gaps."""
    ascending_rows, ascending_postings = np.asarray(sorted(rows), dtype=np.int64), np.asarray(sorted(postings), dtype=np.int64)
    hits = np.ones(len(rows))
    _count_members(ascending_rows, ascending_postings, hits)
    assert np.array_equal(hits, 1 + np.isin(ascending_rows, ascending_postings))


@SETTINGS
@given(titles=st.lists(st.text(alphabet="aAZz09 ,-.'/:@[`{", max_size=20), max_size=12), skip=st.integers(0, 3))
def test_arrow_title_words_equal_the_python_ones(titles, skip) -> None:
    """Also on a slice (Arrow offsets not starting at 0); the alphabet has the bytes next to the
    letter and digit ranges."""
    column = pa.array(["Zz0 x"] * skip + titles, type=pa.string()).slice(skip)
    fast, slow = _ascii_title_words(column), _python_title_words(column)
    assert fast.keys() == slow.keys()
    assert all(fast[word].dtype == np.int64 and np.array_equal(fast[word], slow[word]) for word in slow)


def test_non_ascii_titles_are_indexed_title_by_title() -> None:
    """Python lower-cases "İ" to "i" plus a combining dot, which ends the word; Arrow would not."""
    catalog_titles = pa.array(["İstanbul Lamp", "istanbul lamp, KELVIN \u212a"])
    index = title_word_index(Catalog(
        name="t", ids=np.asarray([b"P1", b"P2"]), titles=catalog_titles, category=np.zeros(2, np.int16),
        categories=CATEGORIES, brand=np.zeros(2, np.int32), brands=BRANDS, price_cents=np.zeros(2, np.int32),
        rating_x10=np.full(2, 10, np.int16), rating_count=np.zeros(2, np.int32), ship_days=np.ones(2, np.int16),
        stock=np.ones(2, np.int32), categorical={}, numeric={}))
    assert index.keys() == _python_title_words(catalog_titles).keys()
    assert np.array_equal(index["stanbul"], [0]) and np.array_equal(index["istanbul"], [1])
    assert np.array_equal(index["k"], [1])


@SETTINGS
@given(data=st.data())
def test_satisfactions_of_several_rows_are_each_row_s_share(data) -> None:
    """Requirements evaluated for all listed rows at once give each row's share of them met."""
    catalog = data.draw(catalogs())
    category = data.draw(st.integers(0, len(CATEGORIES) - 1))
    flt = data.draw(filters())
    requirements = [Requirement(field=f, value=v) for f, v in flt.model_dump(exclude_none=True).items() if f != "in_stock"]
    rows = data.draw(st.lists(st.integers(0, len(catalog) - 1), max_size=6))
    expected = []
    for row in rows:  # the former one-row evaluation
        met = int(int(catalog.category[row]) == category and is_main_type(catalog, row))
        for requirement in requirements:
            if requirement.field != "category":
                one = filter_mask(catalog, requirement_filter([requirement], in_stock=None), rows=np.asarray([row]))
                met += bool(one[0])
        expected.append(met / (1 + sum(r.field != "category" for r in requirements)))
    assert satisfactions(catalog, rows, category, requirements) == expected


@SETTINGS
@given(data=st.data())
def test_closest_partner_equals_the_exhaustive_choice(data) -> None:
    """The partner drawn among the category's matching main-type rows sharing the most of the
    row's brand and categorical attributes, counted row by row over the whole catalog."""
    catalog = data.draw(catalogs())
    row = data.draw(st.integers(0, len(catalog) - 1))
    flt = data.draw(st.sampled_from([None, ProductFilter(in_stock=True), ProductFilter(price_max=19.99, in_stock=True)]))
    seed = data.draw(st.integers(0, 2**32))
    world = World(catalog, ("PD", 0, seed), dt.date(2025, 1, 1))
    world.stock_overrides.update(data.draw(overrides(len(catalog))))
    if not is_main_type(catalog, row):
        return  # partners are sought for main-type products only
    mask = filter_mask(catalog, flt or ProductFilter(in_stock=True), world.planning_overrides())
    candidates = [r for r in range(len(catalog)) if mask[r] and r != row and catalog.category[r] == catalog.category[row]
                  and is_main_type(catalog, r)]

    variants = variant_columns(catalog)  # a product's value of the attribute its variants vary is not compared
    attributes = [np.where(variants.varies(attribute), NO_VALUE, column) for attribute, column in catalog.categorical.items()]

    def shared(other: int) -> int:
        same = int(catalog.brand[other] == catalog.brand[row])
        return same + sum(int(codes[other] == codes[row]) for codes in attributes if codes[row] != NO_VALUE)

    expected = None
    if candidates:
        most = max(shared(r) for r in candidates)
        best = [r for r in candidates if shared(r) == most]
        expected = best[random.Random(seed).randrange(len(best))]
    assert closest_partner(world, row, random.Random(seed), flt) == expected


@SETTINGS
@given(data=st.data())
def test_available_fields_are_those_every_row_s_own_values_support(data) -> None:
    """The fields read from the per-row bits (``field_facts``) are those found value by value: a
    price floor if every price is at least $2, the brand and each categorical attribute if every
    row has the same value, each numeric bound if every row has the attribute (whichever columns
    the catalog has)."""
    catalog = data.draw(catalogs())
    categorical = data.draw(st.lists(st.sampled_from(sorted(CATEGORICAL_ATTRIBUTES)), unique=True))
    numeric = data.draw(st.lists(st.sampled_from(sorted(NUMERIC_ATTRIBUTES)), unique=True))
    catalog = dataclasses.replace(catalog, categorical={a: catalog.categorical[a] for a in categorical},
                                  numeric={a: catalog.numeric[a] for a in numeric})
    rows = data.draw(st.lists(st.integers(0, len(catalog) - 1), min_size=1, max_size=4))
    expected = ["price_max", "rating_min", "ship_days_max"]
    if min(int(catalog.price_cents[r]) for r in rows) >= 200:
        expected.append("price_min")
    if len({int(catalog.brand[r]) for r in rows}) == 1:
        expected.append("brand")
    for attr, codes in catalog.categorical.items():
        values = {int(codes[r]) for r in rows}
        narrows = narrowing(catalog, attr)  # the attribute a product's variants vary: only where it narrows
        if len(values) == 1 and NO_VALUE not in values and all(narrows[r] for r in rows):
            expected.append(attr)
    for attr, bound in NUMERIC_BOUND.items():
        if attr in catalog.numeric and not any(math.isnan(float(catalog.numeric[attr][r])) for r in rows):
            expected.append(bound)
    assert available_fields(catalog, rows) == expected
    assert available_fields(catalog, rows) == expected  # the names of these bits, remembered


@SETTINGS
@given(data=st.data())
def test_main_rows_are_the_rows_of_the_main_type(data) -> None:
    """``main_rows`` (``same_type`` once per distinct type) keeps exactly the rows whose own type
    is the main one, checked row by row."""
    catalog = data.draw(catalogs())
    category = data.draw(st.integers(0, len(CATEGORIES) - 1))
    types = category_types(catalog, category)
    expected = [r for r in types.rows.tolist() if same_type(types.type_of(r), types.main)]
    assert types.main_rows().tolist() == expected
