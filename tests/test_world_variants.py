"""An episode's variants: the word-unpacked digest gives what slicing it byte by byte gave."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecomrlve.catalog import schema
from ecomrlve.catalog.schema import NO_VALUE
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.rng import crockford
from ecomrlve.world.state import VARIANTS_PER_PRODUCT, World


def _reference_variants(world: World, row: int) -> list[tuple[str, str, str]]:
    """The straightforward reading of the variants digest (bytes sliced one field at a time)."""
    catalog = world.catalog
    category = int(catalog.category[row])
    attribute = catalog.categories[category].variant_attribute
    vocab = CATEGORICAL_ATTRIBUTES.get(attribute)
    if vocab is None:
        return []
    seen = catalog.category_values(attribute)[category]
    own = int(catalog.categorical[attribute][row])
    digest = hashlib.blake2b(f"{world.key!r}|variants|{row}".encode(), digest_size=32).digest()
    codes: list[int] = []
    if own != NO_VALUE:
        others = [c for c in seen if c != own]
        if len(others) >= VARIANTS_PER_PRODUCT - 1:
            first = others.pop(int.from_bytes(digest[0:4], "little") % len(others))
            second = others[int.from_bytes(digest[4:8], "little") % len(others)]
            codes = sorted((own, first, second))
    else:
        pool = list(seen) if len(seen) >= VARIANTS_PER_PRODUCT else list(range(len(vocab)))
        draw = int.from_bytes(digest[0:8], "little")
        for _ in range(VARIANTS_PER_PRODUCT):
            draw, pick = divmod(draw, len(pool))
            codes.append(pool.pop(pick))
        codes.sort()
    return [(crockford("V", int.from_bytes(digest[8 + 8 * i: 16 + 8 * i], "little"), 7), attribute, vocab[c])
            for i, c in enumerate(codes)]


@pytest.fixture(scope="module")
def sparse_catalog(catalog):
    """The test catalog with every other product's categorical values missing (as in real catalogs),
    whose variants are synthesised from the category's values."""
    blank = np.arange(len(catalog)) % 2 == 1
    return dataclasses.replace(catalog, categorical={attribute: np.where(blank, NO_VALUE, codes)
                                                     for attribute, codes in catalog.categorical.items()})


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**6), picks=st.lists(st.integers(0, 10**9), min_size=1, max_size=8),
       bases_kept=st.sampled_from([schema.KEPT_PRODUCTS, 2]))
def test_variants_are_the_digest_read_field_by_field(catalog, sparse_catalog, seed: int, picks: list[int],
                                                     bases_kept: int) -> None:
    """Also when the catalog's kept variant bases start over every other product."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schema, "KEPT_PRODUCTS", bases_kept)
        for which in (catalog, sparse_catalog):
            world = World(which, ("CART", seed % 16, seed, "secret"), dt.date(2025, 1, 1))
            for pick in picks:
                row = pick % len(which)
                assert [tuple(v) for v in world.variants(row)] == _reference_variants(world, row)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**6), picks=st.lists(st.integers(0, 10**9), min_size=1, max_size=8),
       shown_first=st.booleans())
def test_chosen_variant_id_is_a_choice_among_the_variants(catalog, sparse_catalog, seed: int, picks: list[int],
                                                          shown_first: bool) -> None:
    """An order line's variant id (made without the variants) is what choosing among them gives, with the
    same draws, whether or not the product's variants were made before."""
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
