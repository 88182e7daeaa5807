"""The shortcuts that keep reset cheap say exactly what the checks they stand for say (issue 29's cost bar).

RETURN/STATUS keep each ordered product's line name and the folded words of it its title shows, folding the title
past its first clause only when a word of the name may lie there; CART's name check stops intersecting word
postings at one listing left. Each is compared here with the plain definition on real-layout files and the
synthetic catalog."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import ecomrlve.catalog.derived as derived_data
from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.derived import kept_per_category
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


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("at_once", ["every category", "the smaller ones", "none"])
def test_the_one_rule_keeps_what_the_precomputed_array_and_the_plain_names_say(monkeypatch, source: str,
                                                                              at_once: str) -> None:
    """:func:`kept_per_category`, the one rule CART's name check and an order line's name are kept by, gives for
    every product what ``catalog build``'s precomputed array (:func:`family.name_checks`) and the plain line name
    say, whether its category is worked out at once or product by product; and the one constant decides which,
    for both kinds alike."""
    catalog, fresh = _catalog(source), _catalog(source)  # fresh: nothing kept on it, what the plain names read
    sizes = [len(rows) for rows in catalog.category_rows if len(rows)]
    limit = {"every category": max(sizes), "the smaller ones": (min(sizes) + max(sizes)) // 2, "none": 0}[at_once]
    monkeypatch.setattr(derived_data, "CATEGORY_AT_ONCE", limit)
    stored = family.name_checks(_catalog(source))  # the precomputed array, as ``catalog build`` makes it
    for row in range(len(catalog)):
        checked = kept_per_category(catalog, row, family.CATEGORY_NAME_CHECKS, family.NAMES_ITSELF,
                                    family._names_itself)
        assert checked == family.names_itself(catalog, row) == bool(stored[row]), (source, row)
        kept = kept_per_category(catalog, row, orders.CATEGORY_LINE_NAMES, orders.LINE_NAMES, orders._line_name)
        plain = orders._line_name(fresh, row)
        assert (kept.text, kept.shown_words) == (plain.text, plain.shown_words), (source, row)
    large = [rows for rows in catalog.category_rows if len(rows) > limit]
    builds = catalog.derived.builds
    assert builds["cart_category_name_checks"] == len(sizes) - len(large) == builds["order_category_line_names"]
    one_by_one = sum(len(rows) for rows in large)
    assert len(family.NAMES_ITSELF.of(catalog)) == one_by_one == len(orders.LINE_NAMES.of(catalog))
    assert (one_by_one > 0) == (at_once == "none" or (at_once != "every category" and min(sizes) < max(sizes)))


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
    monkeypatch.setattr(derived_data, "CATEGORY_AT_ONCE", 20)  # the one rule: both kinds go product by product
    one_by_one, large = _plays(env_ids)
    assert one_by_one == at_once
    assert large.derived.builds["cart_category_name_checks"] == 0 == large.derived.builds["order_category_line_names"]
    assert family.NAMES_ITSELF.of(large) and orders.LINE_NAMES.of(large)


@pytest.mark.parametrize("source", SOURCES)
def test_the_listings_a_name_check_reads_include_every_one_holding_the_words(source: str) -> None:
    """``Listings.holding`` may stop intersecting at one listing left, but never drops a listing that holds every
    word: the name check reads those. The index holds of each listing exactly its brand's and title's words."""
    catalog = _catalog(source)
    rng = random.Random(7)
    for category in range(len(catalog.categories)):
        rows = catalog.category_rows[category].tolist()
        if not rows:
            continue
        index = family.LISTINGS.of(catalog, category)
        words = {row: family._listing_words(catalog, row) for row in rows}
        for word, i in index.word_ids.items():
            held = index.rows[index.positions[index.starts[i]:index.starts[i + 1]]].tolist()
            assert held == sorted(row for row in rows if word in words[row]), (source, word)
        for row in rows[:50]:
            needed = rng.sample(words[row], min(len(words[row]), rng.randint(1, 5))) + (
                ["nosuchword"] if rng.random() < 0.1 else [])
            holding = set(index.holding(needed).tolist())
            every = {other for other in rows if all(word in words[other] for word in needed)}
            assert every <= holding and len(holding - every) <= 1, (source, row, needed)


def test_the_word_index_cuts_words_as_the_name_check_reads_them(tmp_path) -> None:
    """The index is cut in Arrow; titles with letters other than ASCII are cut by the name check's own words first
    (Python's lower-casing makes "\u212a" a "k" and splits "\u0130" into "i" and a mark), so that every listing holds
    the words its title shows the check, plurals dropped once ("Glasses": "glasse")."""
    titles = ["Glasses Case \u0130STANBUL 2-Pack", "\u212aettle 1.5L Stainless Steel", "Caf\u00e9 Mugs, Set of 4",
              "USB-C Cables (3 Pack)", "Bus Pass Holders", "  ", "Socks"]
    source = tmp_path / "titles.jsonl"
    source.write_text("".join(json.dumps({"id": f"P{i}", "title": title, "brand": brand, "category": "Home > Misc",
                                          "price": 10 + i}) + "\n"
                              for i, (title, brand) in enumerate(zip(titles, ["Acme", "\u00c9lan", "Acme", "Zed",
                                                                             "Zed", "Zed", "ZED Co"]))))
    catalog = load_catalog(str(source))
    rows = catalog.category_rows[0].tolist()
    index = family.LISTINGS.of(catalog, 0)
    held: dict[int, set[str]] = {row: set() for row in rows}
    for word, i in index.word_ids.items():
        for row in index.rows[index.positions[index.starts[i]:index.starts[i + 1]]].tolist():
            held[row].add(word)
    assert held == {row: set(family._listing_words(catalog, row)) for row in rows}
    assert {"i", "stanbul", "glasse", "kettle", "caf", "mug"} <= set(index.word_ids)


@pytest.mark.parametrize("large", [False, True])
def test_name_fits_another_is_the_plain_check_over_the_ordered_lines(monkeypatch, large: bool) -> None:
    """:func:`orders.name_fits_another` (the other lines' names looked up in one pass) says what the definition
    says: the folded words of the name that the product's own title holds are all in another ordered product's
    title; with its category's names worked out at once, or (a large category) product by product."""
    if large:
        monkeypatch.setattr(derived_data, "CATEGORY_AT_ONCE", 20)
    from ecomrlve.episode import EcomEnv

    catalog = generate_synthetic_catalog(3000)
    env = EcomEnv(["RETURN", "STATUS"], catalog=catalog, secret="fits-another")
    checked = fits = signed = 0
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
            bits = orders.TITLE_BITS.of(catalog)[line.row]  # the pre-check's signature: the title's words, or all
            if bits != orders._ALL_BITS:
                assert bits == orders._word_bits(fold(catalog.title(line.row)).split()), line.row
                signed += 1
    assert checked > 500 and fits > 0  # both answers were checked
    assert (signed > 0) != large  # the signatures ruled titles out (a large category's products: checked in full)
    assert orders._kept_line_names(catalog, [line.row for line in lines]) == [
        orders._kept_line_name(catalog, line.row) for line in lines]
