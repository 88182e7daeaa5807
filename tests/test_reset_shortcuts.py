"""The shortcuts that keep reset cheap say exactly what the checks they stand for say (issue 29's cost bar).

RETURN/STATUS keep each ordered product's line name and the folded words of it its title shows, folding the title
past its first clause only when a word of the name may lie there; CART's name check stops intersecting word
postings at one listing left. Each is compared here with the plain definition on real-layout files and the
synthetic catalog."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.product_type import fold, product_type, spoken_name
from ecomrlve.catalog.schema import Catalog, short_title
from ecomrlve.catalog.synthetic import generate_synthetic_catalog
from ecomrlve.envs.account import orders
from ecomrlve.envs.cart import family

DATA = Path(__file__).parent / "data"
SOURCES = ["real/tiny.jsonl", "real/brand_only.jsonl", "real/accessories.jsonl", "amazebay_sample.parquet",
           "amazon_meta_sample.jsonl", "synthetic"]


def _catalog(source: str) -> Catalog:
    return generate_synthetic_catalog(3000) if source == "synthetic" else load_catalog(str(DATA / source))


@pytest.mark.parametrize("source", SOURCES)
def test_a_kept_line_name_is_the_plain_one(source: str) -> None:
    """The line name and its words the title shows, as :func:`orders._line_name` keeps them, are those of the
    definition: the spoken name when its brand and model words are in the title's first clause, else that clause;
    and the folded words of that name that the whole title holds."""
    catalog = _catalog(source)
    for row in range(len(catalog)):
        name, title = spoken_name(catalog, row), catalog.title(row)
        shown = short_title(title)
        visible = set(fold(f"{catalog.brand_of(row)} {name.model}").split()) <= set(fold(shown).split())
        text = name.text if visible else shown
        words = set(fold(text).split()) & set(fold(title).split())
        kept = orders._line_name(catalog, row)
        assert (kept.text, kept.shown_words) == (text, words), (source, row)
        at_once = orders.CATEGORY_LINE_NAMES.of(catalog, int(catalog.category[row]))[row]  # its category's, at once
        assert (at_once.text, at_once.shown_words, at_once.title_words) == (text, words, set(fold(title).split()))


@pytest.mark.parametrize("source", SOURCES)
def test_a_category_s_name_checks_worked_out_at_once_are_each_product_s(source: str) -> None:
    """CART's name check of every product of a category, worked out on the category's first use, says what the
    check of one product says; a reset then reads it without checking products one at a time."""
    catalog = _catalog(source)
    fresh = _catalog(source)
    for category in range(len(catalog.categories)):
        at_once = family.CATEGORY_NAME_CHECKS.of(catalog, category)
        rows = catalog.category_rows[category].tolist()
        assert at_once == {row: family._names_itself(fresh, row) for row in rows}, (source, category)
        assert all(family.names_itself(catalog, row) == at_once[row] for row in rows)
    assert family.NAMES_ITSELF.of(catalog) == {}  # nothing was checked product by product


def _plays(env_ids: list[str]) -> tuple[list[str], Catalog]:
    from ecomrlve.episode import EcomEnv

    catalog = generate_synthetic_catalog(3000)
    env = EcomEnv(env_ids, catalog=catalog, secret="at-once")
    played = []
    for n in range(48):
        observation = env.reset(env_id=env_ids[n % len(env_ids)], difficulty=(5 * n) % 16, seed=n)
        played.append(observation.messages[1]["content"] + repr(env.audit().problem.goal))
    return played, catalog


def test_resets_read_per_category_answers_and_large_categories_keep_the_per_product_path(monkeypatch) -> None:
    """CART, RETURN and STATUS resets look their products' name checks and line names up in answers worked out per
    category (nothing kept product by product); with every category counted large (what a 2M catalog's big
    categories get: no first use costs seconds) they work them out product by product: the same episodes."""
    env_ids = ["CART", "RETURN", "STATUS"]
    at_once, catalog = _plays(env_ids)
    builds = catalog.derived.builds
    assert builds["cart_category_name_checks"] > 0 and builds["order_category_line_names"] > 0
    assert family.NAMES_ITSELF.of(catalog) == {} and orders.LINE_NAMES.of(catalog) == {}
    monkeypatch.setattr(family, "_INDEXED_CATEGORY", 20)
    monkeypatch.setattr(orders, "_NAMED_CATEGORY", 20)
    one_by_one, large = _plays(env_ids)
    assert one_by_one == at_once
    assert large.derived.builds["cart_category_name_checks"] == 0 == large.derived.builds["order_category_line_names"]
    assert family.NAMES_ITSELF.of(large) and orders.LINE_NAMES.of(large)


@pytest.mark.parametrize("source", SOURCES)
def test_the_listings_a_name_check_reads_include_every_one_holding_the_words(source: str) -> None:
    """``Listings.holding`` may stop intersecting at one listing left, but never drops a listing that holds every
    word: the name check reads those."""
    catalog = _catalog(source)
    rng = random.Random(7)
    for category in range(len(catalog.categories)):
        if len(catalog.category_rows[category]) == 0:
            continue
        index = family.LISTINGS.of(catalog, category)
        for row, words in list(index.words.items())[:50]:
            needed = rng.sample(words, min(len(words), rng.randint(1, 5))) + (["nosuchword"] if rng.random() < 0.1
                                                                               else [])
            holding = index.holding(needed)
            every = {other for other, have in index.words.items() if all(word in have for word in needed)}
            assert every <= holding and len(holding - every) <= 1, (source, row, needed)


@pytest.mark.parametrize("large", [False, True])
def test_name_fits_another_is_the_plain_check_over_the_ordered_lines(monkeypatch, large: bool) -> None:
    """:func:`orders.name_fits_another` (the other lines' names looked up in one pass) says what the definition
    says: the folded words of the name that the product's own title holds are all in another ordered product's
    title; with its category's names worked out at once, or (a large category) product by product."""
    if large:
        monkeypatch.setattr(orders, "_NAMED_CATEGORY", 20)
    from ecomrlve.episode import EcomEnv

    catalog = generate_synthetic_catalog(3000)
    env = EcomEnv(["RETURN", "STATUS"], catalog=catalog, secret="fits-another")
    checked = fits = 0
    for n in range(40):
        env.reset(env_id=["RETURN", "STATUS"][n % 2], difficulty=8 + n % 8, seed=n)
        world = env.audit().world
        lines = [line for order in world.account.orders for line in order.lines]
        for line in lines:
            names = (orders.line_name(world, line.row), spoken_name(catalog, line.row).text,
                     product_type(catalog, line.row))  # its type alone: a name that often fits another line
            for name in names:
                words = set(fold(name).split()) & set(fold(catalog.title(line.row)).split())
                plain = any(other.row != line.row and words <= set(fold(catalog.title(other.row)).split())
                            for other in lines)
                assert orders.name_fits_another(world, line.row, name) == plain, (n, line.row, name)
                checked, fits = checked + 1, fits + plain
    assert checked > 500 and fits > 0  # both answers were checked
    assert orders._kept_line_names(catalog, [line.row for line in lines]) == [
        orders._kept_line_name(catalog, line.row) for line in lines]
