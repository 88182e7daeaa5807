"""Product types from titles, main types of categories, and the names a shopper uses."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecomrlve.catalog.product_type import (
    category_types,
    fold,
    is_powered,
    spoken_names,
    title_head,
    type_of_title,
)

SMARTWATCH = {fold("Smartwatches"): "Smartwatches", fold("Smartwatch"): "Smartwatch"}


@pytest.mark.parametrize(("title", "expected"), [
    ("KORRIX Pro 5 Smart Watch for Men Women, 1.43\" AMOLED Fitness Tracker", "smartwatch"),
    ("COLAPOO Silicone Strap Soft Wristband Compatible With Garmin Forerunner 235/235 Lite", "strap"),
    ("Charger for Qorvane Air 3 Smart Watch, Brisca Replacement USB Charging Cable Cord", "charger"),
    ("[3 Pack] Brisca Screen Protector Compatible with Lumetto Max 9 Smartwatch, Tempered Glass", "screen protector"),
])
def test_type_of_real_listing_titles(title, expected) -> None:
    assert fold(type_of_title(title, SMARTWATCH)) == fold(expected)


@pytest.mark.parametrize(("title", "own", "expected"), [
    ("Runner Vinyl Sticker 3 Inch Decal for Water Bottle Laptop - Running Shoe Silhouette", "Running Shoes", "sticker"),
    ("Oxbeam Running Insoles for Men and Women, Arch Support Shoe Inserts", "Running Shoes", "insole"),
    ("Veltrona Men's Air 4 Running Shoes, Lightweight Breathable Road Sneakers (Red)", "Running Shoes", "running shoes"),
    ("NEXUM Keyboard Wrist Rest Pad, Memory Foam Ergonomic Palm Support", "Keyboards", "wrist rest"),
    ("Rotating Spice Rack Pro 6S by Sunvale, 20 Jars Included", "Spice Racks", "spice rack"),
])
def test_rightmost_noun_of_the_head_wins(title, own, expected) -> None:
    assert fold(type_of_title(title, {fold(own): own})) == fold(expected)


def test_title_head_cuts_at_the_first_qualifier() -> None:
    assert title_head("[2 Pack] Zentari Case for Lumetto Buds, Blue") == "Zentari Case"
    assert title_head("Desk Lamp for Home Office - Veltrona Max 7") == "Desk Lamp"


def test_synthetic_products_are_their_category_noun(catalog) -> None:
    """Synthetic titles end their head with the leaf noun: the type is the category noun, every row."""
    for index, category in enumerate(catalog.categories):
        types = Counter(category_types(catalog, index).types.values())
        assert set(types) == {category.noun.lower()}, (category.name, types.most_common(3))


def test_synthetic_spoken_names_are_unique_and_short(catalog) -> None:
    for index in range(len(catalog.categories)):
        names = spoken_names(catalog, index)
        assert all(n.unique for n in names.values())
        assert max(len(n.text) for n in names.values()) <= 60
        assert all(n.text.startswith(catalog.brand_of(row)) for row, n in names.items())


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("abcdefgh XYZ0123456789,-()[]"), max_size=80))
def test_any_title_gets_a_type(title) -> None:
    """Whatever the title, a type comes back (the category noun when the title has no word)."""
    assert type_of_title(title, {fold("Widgets"): "Widgets"})


def test_powered_types() -> None:
    assert is_powered("over-ear headphones") and is_powered("smartwatch") and is_powered("coffee maker")
    assert not is_powered("strap") and not is_powered("screen protector") and not is_powered("case")
