"""The synthetic catalog, exact filters, filter-aware search and distractor injection."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog import derived as derived_module
from ecomrlve.catalog.filters import ProductFilter, filter_mask
from ecomrlve.catalog.search import inject_distractors
from ecomrlve.catalog.synthetic import generate_synthetic_catalog
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.catalog.variants import variant_values
from ecomrlve.protocol import expand_result
from ecomrlve.tools.catalog import CATALOG_CARDS

ID_SHAPE = re.compile(r"^P[0-9ABCDEFGHJKMNPQRSTVWXYZ]{8}$")


def _arrays(catalog) -> dict[str, np.ndarray]:
    out = {"ids": catalog.ids, "titles": np.asarray(catalog.titles.to_pylist(), dtype=object),
           "category": catalog.category, "brand": catalog.brand, "price_cents": catalog.price_cents,
           "rating_x10": catalog.rating_x10, "rating_count": catalog.rating_count, "ship_days": catalog.ship_days,
           "stock": catalog.stock}
    out |= {f"cat:{k}": v for k, v in catalog.categorical.items()}
    out |= {f"num:{k}": v for k, v in catalog.numeric.items()}
    return out


# -- the synthetic catalog -----------------------------------------------------------------------------

def test_synthetic_catalog_is_deterministic(catalog) -> None:
    """(n, seed) determines every column; another seed or size gives different data."""
    again = generate_synthetic_catalog(len(catalog), catalog.metadata["seed"])
    a, b = _arrays(catalog), _arrays(again)
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert again.name == catalog.name and again.brands == catalog.brands and again.categories == catalog.categories
    other = generate_synthetic_catalog(len(catalog), catalog.metadata["seed"] + 1)
    assert not np.array_equal(other.ids, catalog.ids)
    assert not np.array_equal(other.price_cents, catalog.price_cents)
    bigger = generate_synthetic_catalog(len(catalog) + 500, catalog.metadata["seed"])
    assert len(bigger) == len(catalog) + 500


def test_ids_unique_opaque_and_non_sequential(catalog) -> None:
    """Ids are unique, shaped "P" + 8 Crockford chars, unsorted, and neighbouring rows share no prefix."""
    ids = [catalog.product_id(r) for r in range(len(catalog))]
    assert len(set(ids)) == len(ids)
    assert all(ID_SHAPE.match(i) for i in ids)
    assert ids != sorted(ids) and ids != sorted(ids, reverse=True)
    shared = [(r, ids[r], ids[r + 1]) for r in range(len(ids) - 1) if ids[r][:5] == ids[r + 1][:5]]
    assert not shared, f"consecutive rows share a 4-char prefix: {shared[:3]}"
    # rows in order are not even roughly increasing as base-32 numbers
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    values = np.array([int("".join(str(alphabet.index(c)).zfill(2) for c in i[1:])) for i in ids], dtype=np.float64)
    increasing = np.mean(np.diff(values) > 0)
    assert 0.4 < increasing < 0.6, increasing
    differences = np.diff(values[:200])
    assert len(np.unique(differences)) > 190  # no constant stride
    assert abs(np.corrcoef(np.arange(len(values)), values)[0, 1]) < 0.1


def test_index_of_round_trips(catalog) -> None:
    """index_of(product_id(row)) == row for every row; unknown or malformed ids give None."""
    for row in range(len(catalog)):
        assert catalog.index_of(catalog.product_id(row)) == row
    known = set(catalog.ids.tolist())
    rng = random.Random(5)
    unknown = []
    while len(unknown) < 200:
        candidate = "P" + "".join(rng.choice("0123456789ABCDEFGHJKMNPQRSTVWXYZ") for _ in range(8))
        if candidate.encode() not in known:
            unknown.append(candidate)
    some_id = catalog.product_id(0)
    for bad in unknown + ["", "P", some_id.lower(), some_id + "X", some_id[:-1], " " + some_id, "ñ" * 9, "P" * 40]:
        assert catalog.index_of(bad) is None, bad


def test_taxonomy_breadth(catalog) -> None:
    """At least 30 leaf categories across at least 8 departments, each stocked with products and brands."""
    leaves = catalog.categories
    departments = {c.path[0] for c in leaves}
    assert len(leaves) >= 30 and len({c.name for c in leaves}) == len(leaves)
    assert len(departments) >= 8
    counts = np.bincount(catalog.category, minlength=len(leaves))
    assert counts.min() >= 10
    for index in range(len(leaves)):
        rows = catalog.category_rows[index]
        assert len(rows) == counts[index] and np.all(catalog.category[rows] == index)
        assert len(np.unique(catalog.brand[rows])) >= 2
    assert np.all(catalog.price_cents > 0) and np.all((catalog.rating_x10 >= 10) & (catalog.rating_x10 <= 50))
    assert 0.02 < np.mean(catalog.stock == 0) < 0.15


# -- exact filters vs brute force -------------------------------------------------------------------------

_ROWS_CACHE: dict[str, list[dict]] = {}


def python_rows(catalog) -> list[dict]:
    """Each product as a plain dict (decoded through the public accessors), built once."""
    if catalog.name not in _ROWS_CACHE:
        rows = []
        for r in range(len(catalog)):
            category = catalog.category_of(r)
            rows.append({
                "category_words": {w.lower() for w in (*category.path, category.noun)},
                "brand": catalog.brand_of(r).lower(), "price": catalog.price(r), "rating": catalog.rating(r),
                "ship_days": int(catalog.ship_days[r]), "stock": int(catalog.stock[r]),
                "attributes": catalog.attributes(r), "variants": variant_values(catalog, r),
            })
        _ROWS_CACHE[catalog.name] = rows
    return _ROWS_CACHE[catalog.name]


def brute_force_match(row: dict, flt: ProductFilter) -> bool:
    attributes = row["attributes"]
    if flt.category is not None and flt.category.strip().lower() not in row["category_words"]:
        return False
    if flt.brand is not None and flt.brand.strip().lower() != row["brand"]:
        return False
    varied, variant_values_ = row["variants"]
    for attr in CATEGORICAL_ATTRIBUTES:
        wanted = getattr(flt, attr)
        if wanted is None:
            continue
        has = {v.lower() for v in variant_values_} if attr == varied else (
            {str(attributes[attr]).lower()} if attr in attributes else set())
        if wanted.strip().lower() not in has:  # through a variant when the variants vary it
            return False
    if flt.price_min is not None and not row["price"] >= flt.price_min - 1e-9:
        return False
    if flt.price_max is not None and not row["price"] <= flt.price_max + 1e-9:
        return False
    if flt.rating_min is not None and not row["rating"] >= flt.rating_min - 1e-9:
        return False
    if flt.ship_days_max is not None and not row["ship_days"] <= flt.ship_days_max:
        return False
    if flt.in_stock is not None and (row["stock"] > 0) != flt.in_stock:
        return False
    for attr in ("wattage", "screen_size", "weight"):
        low, high = getattr(flt, f"{attr}_min"), getattr(flt, f"{attr}_max")
        if low is None and high is None:
            continue
        if attr not in attributes:
            return False
        value = float(attributes[attr])
        if low is not None and value < low - 1e-3:
            return False
        if high is not None and value > high + 1e-3:
            return False
    return True


@st.composite
def product_filters(draw, catalog):
    """Random filters built from values the catalog has (any case, padded), plus unknown values."""
    fields: dict = {}
    row = draw(st.integers(0, len(catalog) - 1))  # anchor on a real product so matches exist
    attributes = catalog.attributes(row)

    def maybe(name, strategy):
        if draw(st.booleans()):
            fields[name] = draw(strategy)

    def cased(text: str):
        return st.sampled_from([text, text.lower(), text.upper(), f" {text} "])

    category = catalog.category_of(row)
    maybe("category", st.sampled_from([*category.path, category.noun, "Nonexistent Things"]).flatmap(cased))
    maybe("brand", st.sampled_from([catalog.brand_of(row), catalog.brands[0], "NoSuchBrand"]).flatmap(cased))
    varied, offered = variant_values(catalog, row)
    for attr, vocab in CATEGORICAL_ATTRIBUTES.items():
        own = [attributes[attr]] if attr in attributes else []
        own += list(offered) if attr == varied else []
        maybe(attr, st.sampled_from([*own, *vocab[:3], "Plaid"]).flatmap(cased))
    cents = int(catalog.price_cents[row])
    maybe("price_min", st.sampled_from([cents / 100, cents / 100 + 0.01, cents / 100 - 0.01, 0.0, 25.5]))
    maybe("price_max", st.sampled_from([cents / 100, cents / 100 - 0.01, cents / 100 + 0.01, 1000.0, 25.5]))
    rating = int(catalog.rating_x10[row])
    maybe("rating_min", st.sampled_from([rating / 10, min(50, rating + 1) / 10, 0.0, 4.5, 5.0]))
    maybe("ship_days_max", st.sampled_from([int(catalog.ship_days[row]), 0, 1, 3, 14]))
    maybe("in_stock", st.booleans())
    for attr in ("wattage", "screen_size", "weight"):
        values = [float(attributes[attr])] if attr in attributes else []
        maybe(f"{attr}_min", st.sampled_from([*values, 0.0, 10.0, 65.0]))
        maybe(f"{attr}_max", st.sampled_from([*values, 5.0, 30.0, 1000.0]))
    return ProductFilter(**fields)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_filter_mask_matches_brute_force(catalog, data) -> None:
    """filter_mask agrees row by row with a plain-Python check of every condition."""
    flt = data.draw(product_filters(catalog))
    mask = filter_mask(catalog, flt)
    assert mask.dtype == bool and mask.shape == (len(catalog),)
    expected = np.array([brute_force_match(row, flt) for row in python_rows(catalog)])
    differing = np.flatnonzero(mask != expected)
    assert differing.size == 0, f"{flt}: rows {differing[:5].tolist()} differ (mask={mask[differing[:5]].tolist()})"


def test_filter_mask_stock_overrides(catalog) -> None:
    """in_stock filters see per-episode stock changes."""
    row_in = int(np.flatnonzero(catalog.stock > 0)[0])
    row_out = int(np.flatnonzero(catalog.stock == 0)[0])
    overrides = {row_in: 0, row_out: 5}
    mask = filter_mask(catalog, ProductFilter(in_stock=True), overrides)
    assert not mask[row_in] and mask[row_out]
    assert filter_mask(catalog, ProductFilter(in_stock=False), overrides)[row_in]


def test_filter_masks_are_fresh_arrays(catalog) -> None:
    """A caller may write into a mask: the next filter is unaffected (the stocked rows are kept per
    catalog and each mask gathers into its first condition)."""
    flt = ProductFilter(in_stock=True, price_max=1000.0)
    expected = filter_mask(catalog, flt).copy()
    for first in (filter_mask(catalog, ProductFilter(in_stock=True)), filter_mask(catalog, flt)):
        first[:] = False
    assert np.array_equal(filter_mask(catalog, flt), expected)
    assert np.array_equal(filter_mask(catalog, ProductFilter(in_stock=True)), catalog.stock > 0)
    assert filter_mask(catalog, ProductFilter()).all()


def test_filter_rejects_unknown_keys_and_wrong_types() -> None:
    """ProductFilter is closed and strict: unknown keys and wrong types fail validation."""
    with pytest.raises(ValueError):
        ProductFilter.model_validate({"colour": "Black"})
    with pytest.raises(ValueError):
        ProductFilter.model_validate({"price_max": "20"})
    with pytest.raises(ValueError):
        ProductFilter.model_validate({"rating_min": 7})


# -- filter-aware search ----------------------------------------------------------------------------------

def _selective_filters(catalog, n: int, seed: int) -> list[ProductFilter]:
    rng = random.Random(seed)
    filters = []
    while len(filters) < n:
        row = rng.randrange(len(catalog))
        attributes = catalog.attributes(row)
        fields = {"category": catalog.category_of(row).name, "brand": catalog.brand_of(row)}
        if "color" in attributes and rng.random() < 0.5:
            fields["color"] = attributes["color"]
        if rng.random() < 0.3:
            fields["in_stock"] = True
        filters.append(ProductFilter(**fields))
    return filters


@pytest.mark.parametrize("sort_by", ["relevance", "price_asc", "price_desc", "rating", "ship_days"])
def test_selective_filter_returns_all_matches(catalog, search, sort_by: str) -> None:
    """With a selective filter every result matches, and when fewer than k match, all of them are returned."""
    k = 50
    checked = 0
    for flt in _selective_filters(catalog, 40, seed=len(sort_by)):
        mask = filter_mask(catalog, flt)
        matches = set(np.flatnonzero(mask).tolist())
        noun = catalog.categories[int(catalog.category[next(iter(matches))])].noun
        for query in ("", noun, flt.brand):
            rows = search.search(query, flt, sort_by, k)
            assert len(set(rows.tolist())) == len(rows)
            assert set(rows.tolist()) <= matches, (flt, query)
            if len(matches) < k:
                assert set(rows.tolist()) == matches, (flt, query, sort_by)
                checked += 1
            else:
                assert len(rows) == k
    assert checked >= 30


def test_relevance_search_fills_with_filter_matches(catalog, search) -> None:
    """A relevance search whose words match nothing still lists the filter's matches."""
    for flt in _selective_filters(catalog, 20, seed=9):
        matches = set(np.flatnonzero(filter_mask(catalog, flt)).tolist())
        rows = search.search("zzzqqq nothing matches this", flt, "relevance", 100)
        assert set(rows.tolist()) == matches or len(rows) == 100


@pytest.mark.parametrize("sort_by,key", [("price_asc", "price_cents"), ("price_desc", "price_cents"),
                                         ("rating", "rating_x10"), ("ship_days", "ship_days")])
def test_sorted_search_is_ordered(catalog, search, sort_by: str, key: str) -> None:
    """Sorted searches return results in the requested order."""
    flt = ProductFilter(category=catalog.categories[0].name)
    rows = search.search("", flt, sort_by, 30)
    values = getattr(catalog, key)[rows].astype(np.int64)
    if sort_by in ("price_desc", "rating"):
        values = -values
    assert len(rows) == 30 and np.all(np.diff(values) >= 0)


# -- distractors -------------------------------------------------------------------------------------------

def test_inject_distractors_without_eps_is_identity(catalog) -> None:
    """eps = 0 changes nothing except the cap."""
    rows = list(range(0, 300, 7))
    out, distractors = inject_distractors(rows, catalog, 0.0, 10, random.Random(0))
    assert out == rows[:10] and distractors == []
    out, distractors = inject_distractors(rows[:5], catalog, 0.0, 10, random.Random(0))
    assert out == rows[:5] and distractors == []


@pytest.mark.parametrize("eps", [0.12, 0.24, 0.4])
def test_inject_distractors_keeps_genuine_results(catalog, eps: float) -> None:
    """Genuine results stay in order (a prefix of the input); all of them survive whenever the list is not full."""
    rng = random.Random(int(eps * 100))
    for trial in range(300):
        genuine = rng.sample(range(len(catalog)), rng.randint(1, 30))
        cap = rng.randint(1, 40)
        out, distractors = inject_distractors(genuine, catalog, eps, cap, rng)
        assert len(out) <= cap and len(set(out)) == len(out)
        kept = [r for r in out if r in set(genuine)]
        assert kept == genuine[:len(kept)]
        assert set(distractors) == set(out) - set(genuine) and not set(distractors) & set(genuine)
        categories = {int(catalog.category[r]) for r in genuine}
        assert all(int(catalog.category[d]) in categories for d in distractors)
        if len(out) < cap:
            assert kept == genuine, (trial, eps)
        if len(genuine) + len(distractors) <= cap:
            assert kept == genuine


def _reference_distractors(rows, catalog, eps: float, cap: int, rng: random.Random) -> tuple[list[int], list[int]]:
    """The straightforward reading of :func:`inject_distractors`: one slot draw per emitted slot."""
    genuine, out, distractors, position = list(rows), [], [], 0
    while len(out) < cap and position < len(genuine):
        if eps > 0 and rng.random() < eps:
            pool = catalog.category_rows[int(catalog.category[genuine[position]])]
            for _ in range(8):
                candidate = int(pool[rng.randrange(len(pool))])
                if candidate not in out and candidate not in genuine:
                    out.append(candidate)
                    distractors.append(candidate)
                    break
            else:
                out.append(genuine[position])
                position += 1
            continue
        out.append(genuine[position])
        position += 1
    return out, distractors


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.integers(0, 30), cap=st.integers(1, 40),
       eps=st.sampled_from([0.0, 0.02, 0.3, 0.9, 1.0]), same_category=st.booleans())
def test_inject_distractors_is_the_straightforward_reading(catalog, seed: int, size: int, cap: int, eps: float,
                                                           same_category: bool) -> None:
    """Same results, distractors and random draws (small categories exhaust the eight tries)."""
    picker = random.Random(seed)
    pool = catalog.category_rows[0].tolist() if same_category else range(len(catalog))
    rows = picker.sample(pool, min(size, len(pool)))
    rng, reference_rng = random.Random(seed), random.Random(seed)
    assert inject_distractors(rows, catalog, eps, cap, rng) == _reference_distractors(rows, catalog, eps, cap,
                                                                                      reference_rng)
    assert rng.getstate() == reference_rng.getstate()


@pytest.mark.parametrize("eps", [0.0, 0.12, 0.24, 0.4])
def test_distractor_share_matches_eps(catalog, eps: float) -> None:
    """Over many trials the share of distractors among emitted results is eps within 0.03."""
    rng = random.Random(1000 + int(eps * 100))
    emitted = injected = 0
    for _ in range(400):
        genuine = rng.sample(range(len(catalog)), 60)
        out, distractors = inject_distractors(genuine, catalog, eps, 20, rng)
        emitted += len(out)
        injected += len(distractors)
    assert emitted == 400 * 20
    assert abs(injected / emitted - eps) <= 0.03, injected / emitted


def test_sorted_search_with_unrelated_words_still_returns_filter_matches(catalog, search) -> None:
    """A selective filter returns its matches whatever the sort order, even if the query words miss them.

    Relevance order already falls back to the filter's matches; sorted orders must not return nothing instead.
    """
    flt = ProductFilter(category="T-Shirts")
    matches = set(np.flatnonzero(filter_mask(catalog, flt)).tolist())
    assert 0 < len(matches)
    query = "usb charger"  # words the index knows, none of them in a T-shirt's text
    relevance = search.search(query, flt, "relevance", 10)
    assert len(relevance) == 10 and set(relevance.tolist()) <= matches
    for sort_by in ("price_asc", "price_desc", "rating", "ship_days"):
        rows = search.search(query, flt, sort_by, 10)
        assert len(rows) == 10 and set(rows.tolist()) <= matches, f"{sort_by}: {len(rows)} results"


@pytest.mark.parametrize("d", [0, 6, 12], ids=lambda d: f"d{d}")
def test_catalog_search_tool_distractor_share(make_env, search, d: int) -> None:
    """Through catalog_search, the share of results that are not genuine hits is eps_rank(d) within 3 points."""
    env = make_env()
    emitted = injected = 0
    for seed in range(120):
        env.reset(env_id="CART", difficulty=d, seed=seed)
        item = env.audit().problem.goal.items[0]
        query = f"{item.brand} {item.noun}"
        obs = env.step(AgentAction(tool_calls=(ToolCall(id="s", name="catalog_search",
                                                         arguments={"query": query, "top_k": 10}),)))
        results = [c["product_id"] for c in expand_result(json.loads(obs.messages[0]["content"]))["results"]]
        genuine = {env.catalog.product_id(r) for r in search.search(query, None, "relevance", 10).tolist()}
        emitted += len(results)
        injected += sum(pid not in genuine for pid in results)
    expected = min(0.4, 0.02 * d)
    assert emitted >= 1000
    assert abs(injected / emitted - expected) <= 0.03, injected / emitted



@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.integers(0, 50), max_size=60), bound=st.integers(1, 8))
def test_kept_per_product_reads_a_product_only_when_it_is_not_kept(catalog, rows, bound) -> None:
    """What is kept is what ``read`` returns; a product is read again only once its kind started
    over, and a kind never holds more than the bound."""
    reads: list[int] = []

    def read(which, row):
        reads.append(row)
        return which.product_id(row), row

    CATALOG_CARDS.of(catalog).clear()  # a memo of product reads, here filled by the test's ``read``
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(derived_module, "KEPT_PRODUCTS", bound)
        for row in rows:
            kept_before = set(CATALOG_CARDS.of(catalog))
            read_before = len(reads)
            assert derived_module.kept_per_product(catalog, CATALOG_CARDS, row, read) == (catalog.product_id(row), row)
            assert len(reads) == read_before + (row not in kept_before)
            assert len(CATALOG_CARDS.of(catalog)) <= bound
    CATALOG_CARDS.of(catalog).clear()  # a memo of product reads, here filled by the test's ``read``


@settings(max_examples=100, deadline=None)
@given(pages=st.lists(st.lists(st.integers(0, 50), max_size=14), max_size=8), bound=st.integers(1, 30))
def test_kept_per_products_reads_only_the_products_not_kept_in_one_call(catalog, pages, bound) -> None:
    """A page of products gets what ``read`` returns for each, in order; only the products not kept are
    read, in one call, and a kind never holds more than the bound."""
    calls: list[list[int]] = []

    def read(which, rows):
        calls.append(list(rows))
        return [(which.product_id(row), row) for row in rows]

    CATALOG_CARDS.of(catalog).clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(derived_module, "KEPT_PRODUCTS", bound)
        for page in pages:
            kept_before = set(CATALOG_CARDS.of(catalog))
            calls_before = len(calls)
            found = derived_module.kept_per_products(catalog, CATALOG_CARDS, page, read)
            assert found == [(catalog.product_id(row), row) for row in page]
            new = [row for row in dict.fromkeys(page) if row not in kept_before]
            assert calls[calls_before:] == ([new] if new else [])
            assert len(CATALOG_CARDS.of(catalog)) <= bound
    CATALOG_CARDS.of(catalog).clear()
