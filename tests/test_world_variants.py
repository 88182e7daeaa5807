"""Variants: their values are a fact of the catalog (the same in every episode), their ids an episode's draw,
and a product has a value of its variant attribute exactly when one of its variants has it, for the cards,
the filters, the valid sets and the verifiers alike."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecomrlve.catalog.filters import ProductFilter, filter_mask
from ecomrlve.catalog.schema import NO_VALUE
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.catalog.variants import VARIANTS_PER_PRODUCT, id_hashes, variant_columns
from ecomrlve.catalog.views import category_view
from ecomrlve.envs.recommend.requirements import Requirement, derive_requirements, valid_rows
from ecomrlve.rng import crockford
from ecomrlve.tools.catalog import product_card
from ecomrlve.world.state import World


def _splitmix(x: int) -> int:
    mask = (1 << 64) - 1
    x = (x + 0x9E3779B97F4A7C15) & mask
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
    return x ^ (x >> 31)


def _fnv(product_id: bytes, width: int) -> int:
    h = 0xCBF29CE484222325
    for byte in product_id.ljust(width, b"\0"):
        h = ((h ^ byte) * 0x100000001B3) & ((1 << 64) - 1)
    return _splitmix(h)


def _reference_variants(world: World, row: int) -> list[tuple[str, str, str]]:
    """The straightforward reading: values drawn one at a time from the product id's hash, ids from the
    episode's digest."""
    catalog = world.catalog
    category = int(catalog.category[row])
    attribute = catalog.categories[category].variant_attribute
    vocab = CATEGORICAL_ATTRIBUTES.get(attribute)
    if vocab is None:
        return []
    seen = catalog.category_values(attribute)[category]
    own = int(catalog.categorical[attribute][row])
    word = _fnv(bytes(catalog.ids[row]), catalog.ids.dtype.itemsize)
    draws = [word, _splitmix(word ^ 1), _splitmix(word ^ 2)]
    pool = list(seen) if len(seen) >= VARIANTS_PER_PRODUCT else list(range(len(vocab)))
    if own != NO_VALUE:
        pool.remove(own)
        codes = [own]
    else:
        codes = []
    for draw in draws[:VARIANTS_PER_PRODUCT - len(codes)]:
        codes.append(pool.pop(draw % len(pool)))
    codes.sort()
    digest = hashlib.blake2b(f"{world.key!r}|variants|{row}".encode(), digest_size=32).digest()
    return [(crockford("V", int.from_bytes(digest[8 * i: 8 + 8 * i], "little"), 7), attribute, vocab[c])
            for i, c in enumerate(codes)]


@pytest.fixture(scope="module")
def sparse_catalog(catalog):
    """The test catalog with every other product's categorical values missing (as in real catalogs),
    whose variants are synthesised from the category's values."""
    blank = np.arange(len(catalog)) % 2 == 1
    return dataclasses.replace(catalog, categorical={attribute: np.where(blank, NO_VALUE, codes)
                                                     for attribute, codes in catalog.categorical.items()})


def test_id_hashes_are_fnv_then_mixed(catalog) -> None:
    width = catalog.ids.dtype.itemsize
    assert id_hashes(catalog.ids[:50]).tolist() == [_fnv(bytes(i), width) for i in catalog.ids[:50]]


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**6), picks=st.lists(st.integers(0, 10**9), min_size=1, max_size=8))
def test_variants_are_the_reference_draw(catalog, sparse_catalog, seed: int, picks: list[int]) -> None:
    for which in (catalog, sparse_catalog):
        world = World(which, ("CART", seed % 16, seed, "secret"), dt.date(2025, 1, 1))
        for pick in picks:
            row = pick % len(which)
            assert [tuple(v) for v in world.variants(row)] == _reference_variants(world, row)


def test_variant_values_are_the_same_in_every_episode_and_ids_are_not(catalog) -> None:
    rows = range(0, len(catalog), 97)
    one = World(catalog, ("CART", 3, 1, "secret"), dt.date(2025, 1, 1))
    other = World(catalog, ("PD", 9, 2, "secret"), dt.date(2025, 1, 1))
    assert [[v[1:] for v in one.variants(r)] for r in rows] == [[v[1:] for v in other.variants(r)] for r in rows]
    assert [one.variant_ids(r) for r in rows] != [other.variant_ids(r) for r in rows]


def test_a_category_view_reads_the_catalogs_variants(catalog) -> None:
    full = variant_columns(catalog)
    for category in range(len(catalog.categories)):
        for main_type_only in (False, True):
            view = category_view(catalog, category, main_type_only=main_type_only)
            local = variant_columns(view.catalog)
            assert np.array_equal(local.attribute, full.attribute[view.rows])
            assert all(np.array_equal(a, b[view.rows]) for a, b in zip(local.codes, full.codes))


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**6), picks=st.lists(st.integers(0, 10**9), min_size=1, max_size=8),
       shown_first=st.booleans())
def test_chosen_variant_id_is_a_choice_among_the_variants(catalog, sparse_catalog, seed: int, picks: list[int],
                                                          shown_first: bool) -> None:
    """An order line's variant id is what choosing among the variants gives, with the same draws,
    whether or not the product's variants were made before."""
    for which in (catalog, sparse_catalog):
        key = ("RETURN", seed % 16, seed, "secret")
        world, reference = World(which, key, dt.date(2025, 1, 1)), World(which, key, dt.date(2025, 1, 1))
        rng, reference_rng = random.Random(seed), random.Random(seed)
        for pick in picks:
            row = pick % len(which)
            if shown_first:
                world.variants(row)
            variants = reference.variants(row)
            expected = reference_rng.choice(variants).variant_id if variants else None
            assert world.chosen_variant_id(row, rng) == expected
            assert rng.getstate() == reference_rng.getstate()
            assert world.variants(row) == variants


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**6),
       calls=st.lists(st.tuples(st.integers(0, 10**9), st.sampled_from(["variants", "cards", "ids"])), min_size=1, max_size=12))
def test_variant_cards_and_ids_are_read_off_the_variants(catalog, sparse_catalog, seed: int,
                                                         calls: list[tuple[int, str]]) -> None:
    """Cards and ids made without the variants are theirs, whichever is asked first, each card list a fresh copy."""
    for which in (catalog, sparse_catalog):
        key = ("CART", seed % 16, seed, "secret")
        world, reference = World(which, key, dt.date(2025, 1, 1)), World(which, key, dt.date(2025, 1, 1))
        for pick, ask in calls:
            row = pick % len(which)
            variants = reference.variants(row)
            if ask == "cards":
                cards = world.variant_cards(row)
                assert cards == [v.card() for v in variants]
                for card in cards:
                    card["variant_id"] = "changed by the caller"
            elif ask == "ids":
                assert world.variant_ids(row) == tuple(v.variant_id for v in variants)
            assert world.variants(row) == variants
            assert world.variant_cards(row) == [v.card() for v in variants]


def _card_values(card: dict, attribute: str) -> set[str]:
    """The values of ``attribute`` a product card shows: its attribute, or its variants'."""
    shown = {card["attributes"][attribute]} if attribute in card["attributes"] else set()
    return shown | {v[attribute] for v in card.get("variants", []) if attribute in v}


def test_filters_and_valid_sets_accept_exactly_the_values_a_card_shows(catalog, sparse_catalog) -> None:
    """For every product and every categorical value: the filter on that value (and a valid set requiring it)
    holds the product exactly when its card shows the value, among its attributes or its variants (on the old
    rule a hoodie whose card offers an XL variant was "not size XL")."""
    for which in (catalog, sparse_catalog):
        world = World(which, ("PD", 5, 1, "secret"), dt.date(2025, 1, 1))
        rows = np.arange(0, len(which), 7)
        cards = [product_card(world, int(row)) for row in rows]
        for attribute, vocab in CATEGORICAL_ATTRIBUTES.items():
            for value in vocab:
                mask = filter_mask(which, ProductFilter(**{attribute: value}), rows=rows)
                shown = np.array([value in _card_values(card, attribute) for card in cards])
                assert np.array_equal(mask, shown), (attribute, value)
        for row, card in list(zip(rows.tolist(), cards))[:200]:
            for variant in card.get("variants", []):
                attribute = next(k for k in variant if k != "variant_id")
                category = int(which.category[row])
                requirement = Requirement(field=attribute, value=variant[attribute])
                valid = valid_rows(which, category, [requirement], {}, ())
                view = category_view(which, category, main_type_only=True)
                if view.contains(row) and world.stock(row) > 0:
                    assert row in valid.tolist()


def test_a_variant_attribute_is_required_only_where_it_narrows(catalog) -> None:
    """A requirement on the attribute a product's variants vary is derived only in categories offering at
    least 6 values of it: with 3 or 4 (most synthetic categories) every product has nearly every value."""
    rng = random.Random(0)
    columns = variant_columns(catalog)
    stated = 0
    for category, rows in enumerate(catalog.category_rows):
        attribute = catalog.categories[category].variant_attribute
        if attribute not in CATEGORICAL_ATTRIBUTES:
            continue
        offered = {int(c) for column in columns.codes for c in column[rows]}
        for _ in range(20):
            picked = [int(rows[rng.randrange(len(rows))])]
            fields = {r.field for r in derive_requirements(catalog, picked, 12, 0.0, rng)}
            if attribute in fields:
                stated += 1
                assert len(offered) >= 2 * VARIANTS_PER_PRODUCT, (catalog.categories[category].name, attribute)
    assert stated > 0
