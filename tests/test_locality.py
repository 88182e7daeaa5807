"""Hot paths read what they need once, not product by product (issue 28 §1).

A traced CART episode follows the code it runs; when the first use of a category asked the catalog for each
product's brand and title (and ``protocol.short_title``) between two calls of its own module, the trace
switched files thousands of times (``benchmarks/bench_trace.py``). These tests count the file switches of
building one category's spoken names and CART listing words, a page of product cards, and a message's
references to the items in play: a few, however many products or items there are.
"""

from __future__ import annotations

import datetime as dt
import random
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import ecomrlve
from ecomrlve.catalog.product_type import _spoken_names, category_types
from ecomrlve.catalog.synthetic import generate_synthetic_catalog
from ecomrlve.envs.cart.family import _listings
from ecomrlve.rng import crockford, crockford_each
from ecomrlve.tools.catalog import CATALOG_CARDS, product_card, product_cards
from ecomrlve.user.dialogue import ItemNames, referenced
from ecomrlve.world.state import World, variant_cards_of

PACKAGE = str(Path(next(iter(ecomrlve.__path__))).resolve())
#: Switches one build may make whatever its category's size (its calls into the catalog and the protocol).
FEW = 30


def _file_switches(build: Callable[[], Any]) -> int:
    """Switches between the package's files over every Python call and return while ``build`` runs."""
    current, switches = [""], [0]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        path = frame.f_code.co_filename
        if event in ("call", "return") and path.startswith(PACKAGE) and path != current[0]:
            switches[0] += bool(current[0])
            current[0] = path

    sys.setprofile(profile)
    try:
        build()
    finally:
        sys.setprofile(None)
    return switches[0]


def test_a_category_s_names_and_listing_words_take_a_few_file_switches_whatever_its_size() -> None:
    catalog = generate_synthetic_catalog(4_000, seed=11)
    category = max(range(len(catalog.categories)), key=lambda c: len(catalog.category_rows[c]))
    assert len(catalog.category_rows[category]) > 3 * FEW
    category_types(catalog, category)  # its product types first: a compiled scan, read by both
    names = _file_switches(lambda: _spoken_names(catalog, category))
    listings = _file_switches(lambda: _listings(catalog, category))
    assert names <= FEW and listings <= FEW, (names, listings)
    assert len(_spoken_names(catalog, category)) == len(_listings(catalog, category).rows) == len(
        catalog.category_rows[category])


def test_crockford_each_is_crockford_of_each_value_in_order() -> None:
    values = [0, 1, 31, 32, 32767, 32768, 2**30 - 1, 2**30, 2**35 - 1, 2**63 + 12345, 2**64 - 1]
    values += [random.Random(n).getrandbits(64) for n in range(200)]
    for length in range(0, 13):  # 7 (variant ids) is spelled out without the loop; the others loop
        assert crockford_each("V", values, length) == tuple(crockford("V", value, length) for value in values)
        assert all(len(text) == 1 + length for text in crockford_each("V", values, length))
    assert crockford_each("V", [], 7) == ()


def _world(catalog: Any, seed: int) -> World:
    return World(catalog, ("CART", 6, seed, "secret"), dt.date(2025, 1, 1))


def test_a_page_of_product_cards_takes_a_few_file_switches_whatever_its_size() -> None:
    """The catalog's fields of the products not kept yet, their variant attributes, the episode's stock and
    variants: each read in one call for the page (old code: ~20 switches per new card), the same cards."""
    catalog = generate_synthetic_catalog(2_000, seed=5)
    rows = [int(r) for r in catalog.category_rows[0][:40]] + [int(r) for r in catalog.category_rows[1][:40]]
    assert any(_world(catalog, 1).variants(row) for row in rows)
    CATALOG_CARDS.of(catalog).clear()
    world = _world(catalog, 1)
    switches = _file_switches(lambda: product_cards(world, rows))
    assert switches <= FEW, switches
    one_by_one = _world(catalog, 1)
    CATALOG_CARDS.of(catalog).clear()
    assert product_cards(world, rows) == [product_card(one_by_one, row) for row in rows]


def test_variants_drawn_for_a_page_are_those_drawn_one_product_at_a_time() -> None:
    catalog = generate_synthetic_catalog(2_000, seed=5)
    rows = [int(r) for r in catalog.category_rows[2][:30]]
    together, alone = _world(catalog, 7), _world(catalog, 7)
    listings = together.listings(rows + rows[:3])  # a product twice is drawn once
    for row, (stock, draw) in zip(rows + rows[:3], listings):
        assert stock == alone.stock(row) and variant_cards_of(draw) == [v.card() for v in alone.variants(row)]
        assert together.variants(row) == alone.variants(row)


def test_a_message_s_references_to_many_items_take_a_few_file_switches() -> None:
    """Every in-play item's names are looked for in one call (old code: one call per name and item)."""
    names = [ItemNames(f"P{i:07d}", f"brand{i % 7}", f"nova {i}", "smartwatch" if i % 2 else "straps")
             for i in range(60)]
    text = "i meant the brand3 nova 10, and p0000012 too; also the straps"
    switches = _file_switches(lambda: referenced(text, names))
    assert switches <= 4, switches
    assert referenced(text, names) == [10, 12]
    scores = [n.score(text) for n in names]
    assert scores[10] == 4 + 2 + 1 and scores[12] == 8 and scores[14] == 1 and scores[11] == 0
