"""Product types from titles, main types of categories, and the names a shopper uses."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.product_type import (
    _own_nouns,
    category_types,
    fold,
    is_powered,
    same_type,
    spoken_names,
    title_head,
    title_types,
    type_of_title,
)
from ecomrlve.catalog.schema import Catalog

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
        types = Counter(category_types(catalog, index).row_types())
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


# -- title_types (every title of a category at once) against type_of_title, title by title ---------

# pieces that reach every branch of the definition: cut marks and words in any case, leading groups,
# whitespace that only str.isspace knows, lexicon nouns singular and plural, and non-ASCII text
# (the en dash cut, Unicode spaces, letters whose lower case is ASCII)
_PIECES = ("Zentari", "Pro", "5", "65W", "smart", "Watch", "watches", "band", "Bands", "watch band", "Mouse Pads",
           "screen protector", "case", "CASES", "cover",
           "screen", "protector", "running", "Shoes", "t", "shirt", "widget", "a", "b", "c", "d", "e", "x1",
           "for", "FOR", "With", "compatible with", "made for", "by", "fits", ",", ";", " - ", " | ", " – ",
           "(", ")", "[", "]", "[2 Pack]", "(new)", "-", "/", ".", "'s", " ", "  ", "\t", "\v", "\x1c", "\x1f",
           "\xa0", "\u2009", "é", "\u212a", "\u0130", "ies", "ches", "sses", "us")
_OWN = ("Smartwatches", "Smartwatch", "Watch Bands", "Bands", "Pads", "Running Shoes", "Cases", "T-Shirts", "Widgets", "A B C D E", "!!")

titles_strategy = st.lists(st.lists(st.sampled_from(_PIECES), max_size=12).map(lambda ps: " ".join(ps) if len(ps) % 2
                                                                                 else "".join(ps)), max_size=8)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(titles_strategy, st.sampled_from(_OWN), st.sampled_from(_OWN), st.sampled_from([pa.string(), pa.large_string()]))
def test_title_types_is_type_of_title(titles, leaf, noun, text_type) -> None:
    own = {fold(leaf): leaf, fold(noun): noun}
    array = pa.array(["[skipped] Case", *titles], type=text_type).slice(1)  # a slice: its offsets do not start at 0
    names, codes = title_types(array, own)
    assert [names[c] for c in codes.tolist()] == [type_of_title(t, own).lower() for t in titles]


def _types_by_definition(catalog: Catalog, category: int) -> tuple[dict[int, str], str]:
    """A category's types and main type, title by title (what :func:`category_types` computes)."""
    rows, own = catalog.category_rows[category], _own_nouns(catalog, category)
    titles = catalog.titles.take(rows).to_pylist() if len(rows) else []
    types = {int(r): type_of_title(t, own).lower() for r, t in zip(rows.tolist(), titles)}
    counts = Counter(fold(t) for t in types.values())
    fallback = catalog.categories[category].noun.lower()
    main_key = max(counts, key=lambda k: (counts[k], k in own)) if counts else fold(fallback)
    return types, next((t for t in types.values() if fold(t) == main_key), fallback)


DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("source", ["synthetic:3000", *(str(p) for p in sorted((DATA / "real").glob("*.jsonl"))),
                                    str(DATA / "amazon_meta_sample.jsonl"), str(DATA / "amazebay_sample.parquet")])
def test_category_types_are_the_definition_on_real_schema_catalogs(source) -> None:
    catalog = load_catalog(source)
    for category in range(len(catalog.categories)):
        info = category_types(catalog, category)
        types, main = _types_by_definition(catalog, category)
        assert dict(zip(info.rows.tolist(), info.row_types())) == types and list(types) == info.rows.tolist() and info.main == main, catalog.categories[category].name
        assert info.main_rows().tolist() == [r for r in info.rows.tolist() if same_type(types[r], main)]
