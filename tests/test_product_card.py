"""Product cards: the catalog-only fields are read once per product, and every card is its own copy."""

from __future__ import annotations

import datetime as dt

from ecomrlve.catalog import derived
from ecomrlve.tools.catalog import product_card
from ecomrlve.world.state import World


def _world(catalog, seed: int) -> World:
    return World(catalog, ("PD", 3, seed, "secret"), dt.date(2025, 1, 1))


def test_cards_are_fresh_copies_with_the_episode_s_stock_and_variants(catalog, monkeypatch) -> None:
    monkeypatch.setattr(derived, "KEPT_PRODUCTS", 4)  # also start the kept cards over
    rows = [int(r) for category_rows in catalog.category_rows for r in category_rows[:2]]
    first = {row: product_card(_world(catalog, 1), row) for row in rows}
    for card in first.values():
        card["attributes"]["color"] = "changed by the caller"
        card["title"] = "changed by the caller"
    world = _world(catalog, 2)
    world.sell_out(rows[0])
    for row in rows:
        card = product_card(world, row)
        assert card["title"] == catalog.title(row) and card["attributes"].get("color") != "changed by the caller"
        variants = world.variants(row)
        assert card["stock"] == world.stock(row) and card.get("variants", []) == [v.card() for v in variants]
        varied = variants[0].attribute if variants else None  # listed with the variants, not among the attributes
        assert card["attributes"] == {k: v for k, v in catalog.attributes(row).items() if k != varied}
    assert product_card(world, rows[0])["in_stock"] is False
