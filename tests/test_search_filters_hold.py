"""catalog_search keeps its schema's word: every result meets every filter (the distractors that degrade the
store's ranking at higher d too) and an explicit sort order is exact, at every difficulty."""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pytest

from ecomrlve.catalog.filters import ProductFilter, filter_mask
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.difficulty import Difficulty
from ecomrlve.tools.base import ToolContext
from ecomrlve.tools.catalog import catalog_search
from ecomrlve.world.state import World

_SORT_KEYS = {"price_asc": lambda c: c["price"], "price_desc": lambda c: -c["price"],
              "rating": lambda c: -c["rating"], "ship_days": lambda c: c["ship_days"]}


def _filter_around(catalog, row: int, rng: random.Random, world: World) -> dict:
    """A filter that ``row`` meets, of a few random conditions (so that most searches find something)."""
    conditions: dict = {}
    choices = ["category", "brand", "price_max", "price_min", "rating_min", "ship_days_max", "in_stock", "attribute"]
    for name in rng.sample(choices, rng.randint(1, 4)):
        if name == "category":
            conditions["category"] = catalog.category_of(row).name if rng.random() < 0.7 else catalog.category_of(row).path[0]
        elif name == "brand":
            brand = catalog.brand_of(row)
            conditions["brand"] = brand.upper() if rng.random() < 0.3 else brand
        elif name == "price_max":
            conditions["price_max"] = round(catalog.price(row) * rng.uniform(1.0, 2.0), 2)
        elif name == "price_min":
            conditions["price_min"] = round(catalog.price(row) * rng.uniform(0.3, 1.0), 2)
        elif name == "rating_min":
            conditions["rating_min"] = max(0.0, catalog.rating(row) - rng.choice([0.0, 0.5, 1.0]))
        elif name == "ship_days_max":
            conditions["ship_days_max"] = int(catalog.ship_days[row]) + rng.randint(0, 3)
        elif name == "in_stock":
            conditions["in_stock"] = world.stock(row) > 0
        else:
            variants = world.variants(row)
            attributes = {a: v for a, v in catalog.attributes(row).items() if a in CATEGORICAL_ATTRIBUTES}
            if variants:
                attributes[variants[0].attribute] = rng.choice(variants).value
            if attributes:
                attribute = rng.choice(sorted(attributes))
                conditions[attribute] = attributes[attribute]
    return conditions


@pytest.mark.parametrize("d", range(16))
def test_every_result_meets_every_filter_and_the_sort_is_exact(catalog, search, d: int) -> None:
    rng = random.Random(d)
    world = World(catalog, ("PD", d, d, "secret"), dt.date(2025, 1, 1))
    for row in rng.sample(range(len(catalog)), 40):  # some stock-outs, as episodes make
        world.sell_out(row)
    difficulty = Difficulty.at(d)
    ctx = ToolContext(world=world, search=search, difficulty=difficulty, search_stream=lambda: random.Random(d),
                      ask_user=lambda _: "", submit_answer=lambda _: None)
    distractor_slots = 0
    for _ in range(60):
        row = rng.randrange(len(catalog))
        conditions = _filter_around(catalog, row, rng, world)
        sort_by = rng.choice(["relevance", "relevance", *_SORT_KEYS])
        query = rng.choice(["", catalog.short_title(row), catalog.category_of(row).noun])
        result = catalog_search.run(ctx, catalog_search.validate(
            {"query": query, "filters": conditions, "sort_by": sort_by, "top_k": 20}))
        cards = result["results"]
        rows = np.asarray([catalog.index_of(card["product_id"]) for card in cards], dtype=np.int64)
        flt = ProductFilter(**conditions)
        assert filter_mask(catalog, flt, world.stock_overrides, rows=rows).all(), (conditions, sort_by)
        if sort_by in _SORT_KEYS:
            keys = [_SORT_KEYS[sort_by](card) for card in cards]
            assert keys == sorted(keys), (conditions, sort_by)
            expected = search.search(query, flt, sort_by, len(cards), world.stock_overrides)
            assert rows.tolist() == expected.tolist()
        else:
            expected = search.search(query, flt, sort_by, 20, world.stock_overrides).tolist()
            distractor_slots += len(set(rows.tolist()) - set(expected))
    if difficulty.eps_rank > 0.1:
        assert distractor_slots > 0  # the store's ranking is still degraded, within the filters
