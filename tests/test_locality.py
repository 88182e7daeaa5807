"""A category's derived names are worked out from its columns read once, not product by product (issue 28 §1).

A traced CART episode follows the code it runs; when the first use of a category asked the catalog for each
product's brand and title (and ``protocol.short_title``) between two calls of its own module, the trace
switched files thousands of times (``benchmarks/bench_trace.py``). These tests count the file switches of
building one category's spoken names and CART listing words: a few, however many products it holds.
"""

from __future__ import annotations

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
    assert len(_spoken_names(catalog, category)) == len(_listings(catalog, category).words) == len(
        catalog.category_rows[category])


def test_crockford_each_is_crockford_of_each_value_in_order() -> None:
    values = [0, 1, 31, 32, 32767, 2**63 + 12345, 2**64 - 1]
    assert crockford_each("V", values, 7) == tuple(crockford("V", value, 7) for value in values)
    assert crockford_each("V", [], 7) == ()
