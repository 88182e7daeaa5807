"""The mutable per-episode world: stock changes, synthesised variants, visit history, cart.

The catalog is shared and read-only; everything an episode changes lives here, so resetting
costs O(size of the episode), never O(size of the catalog).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from ecomrlve.catalog.filters import in_stock_mask
from ecomrlve.catalog.schema import NO_VALUE, Catalog
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.rng import derive_rng, opaque_id

VARIANTS_PER_PRODUCT = 3


@dataclass(frozen=True)
class Variant:
    variant_id: str
    attribute: str
    value: str

    def card(self) -> dict[str, str]:
        return {"variant_id": self.variant_id, self.attribute: self.value}


@dataclass
class CartLine:
    line_id: str
    row: int
    variant_id: str | None
    quantity: int


class Cart:
    """Cart lines keyed by (product, variant): adding an existing key increases its quantity."""

    def __init__(self, id_salt: tuple) -> None:
        self._lines: dict[str, CartLine] = {}
        self._id_salt = id_salt
        self._next = 0

    def add(self, row: int, variant_id: str | None, quantity: int) -> CartLine:
        for line in self._lines.values():
            if line.row == row and line.variant_id == variant_id:
                line.quantity += quantity
                return line
        line = CartLine(opaque_id("L", *self._id_salt, "cart-line", self._next, length=6), row, variant_id, quantity)
        self._next += 1
        self._lines[line.line_id] = line
        return line

    def get(self, line_id: str) -> CartLine | None:
        return self._lines.get(line_id)

    def remove(self, line_id: str) -> CartLine | None:
        return self._lines.pop(line_id, None)

    @property
    def lines(self) -> tuple[CartLine, ...]:
        return tuple(self._lines.values())

    def units(self) -> dict[tuple[int, str | None], int]:
        """Quantity per (row, variant_id)."""
        return {(line.row, line.variant_id): line.quantity for line in self._lines.values()}


@dataclass
class World:
    """Everything an episode may change, on top of one shared catalog."""

    catalog: Catalog
    key: tuple  # (env_id, difficulty, seed): salts every id and lazily drawn value
    today: dt.date
    stock_overrides: dict[int, int] = field(default_factory=dict)
    visit_history: list[int] = field(default_factory=list)
    denied_categories: frozenset[int] = frozenset()
    _variants: dict[int, tuple[Variant, ...]] = field(default_factory=dict)
    cart: Cart = field(init=False)

    def __post_init__(self) -> None:
        self.cart = Cart(self.key)

    def stock(self, row: int) -> int:
        return self.stock_overrides.get(row, int(self.catalog.stock[row]))

    def in_stock_mask(self):
        return in_stock_mask(self.catalog, self.stock_overrides)

    def variants(self, row: int) -> tuple[Variant, ...]:
        """This episode's variants of a product, drawn on first use from the episode key.

        Variants vary the category's variant attribute; the product's own value is always one of
        them, so catalog filters and variants agree.
        """
        if row in self._variants:
            return self._variants[row]
        attribute = self.catalog.category_of(row).variant_attribute
        values = self._draw_variant_values(row, attribute)
        variants = tuple(Variant(opaque_id("V", *self.key, "variant", row, value, length=7), attribute, value)
                         for value in values)
        self._variants[row] = variants
        return variants

    def _draw_variant_values(self, row: int, attribute: str) -> tuple[str, ...]:
        vocab = CATEGORICAL_ATTRIBUTES.get(attribute)
        if vocab is None:
            return ()
        pool = list(self.catalog.category_values(attribute)[int(self.catalog.category[row])])
        own = int(self.catalog.categorical[attribute][row])
        if own == NO_VALUE or len(pool) < VARIANTS_PER_PRODUCT:
            return ()
        rng = derive_rng(*self.key, "variants", row)
        others = rng.sample([c for c in pool if c != own], VARIANTS_PER_PRODUCT - 1)
        codes = sorted([own, *others])
        return tuple(vocab[c] for c in codes)

    def variant(self, row: int, variant_id: str) -> Variant | None:
        return next((v for v in self.variants(row) if v.variant_id == variant_id), None)

    def is_denied(self, row: int) -> bool:
        return int(self.catalog.category[row]) in self.denied_categories
