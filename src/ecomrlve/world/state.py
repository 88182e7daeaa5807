"""The mutable per-episode world: stock changes, synthesised variants, visit history, cart.

The catalog is shared and read-only; everything an episode changes lives here, so resetting
costs O(size of the episode), never O(size of the catalog).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ecomrlve.catalog.filters import in_stock_mask
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.variants import VARIANTS_PER_PRODUCT, VariantColumns, variant_columns
from ecomrlve.rng import KeyedIds, crockford, crockford_each
from ecomrlve.world.account import Account
from ecomrlve.world.policy import STORE_POLICY, StorePolicy, draw_store_policy
from ecomrlve.world.surfacing import HandledTurns, PlannedSellOut, SurfacingLedger

#: A variants digest as little-endian 64-bit words: one variant id each.
_DIGEST_WORDS = struct.Struct(f"<{VARIANTS_PER_PRODUCT}Q").unpack_from
#: A variant id is "V" and this many Crockford digits of its digest word.
VARIANT_ID_DIGITS = 7


class Variant(NamedTuple):
    """One variant of a product (a tuple: a dozen are made per episode, and a frozen dataclass's
    constructor costs several times a tuple's)."""

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
        self._ids = KeyedIds(*id_salt)
        self._next = 0

    def add(self, row: int, variant_id: str | None, quantity: int) -> CartLine:
        for line in self._lines.values():
            if line.row == row and line.variant_id == variant_id:
                line.quantity += quantity
                return line
        line = CartLine(self._ids.make("L", "cart-line", self._next, length=6), row, variant_id, quantity)
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


#: A product's variants as drawn in an episode: the attribute, the variant ids and their values, in order.
VariantDraw = tuple[str, tuple[str, ...], tuple[str, ...]]
_NO_VARIANTS: VariantDraw = ("", (), ())


def variant_cards_of(draw: VariantDraw) -> list[dict[str, str]]:
    """A product's variant cards (fresh dicts) from its draw."""
    attribute, ids, values = draw
    return [{"variant_id": variant_id, attribute: value} for variant_id, value in zip(ids, values)]


@dataclass
class World:
    """Everything an episode may change, on top of one shared catalog."""

    catalog: Catalog
    key: tuple  # (env_id, difficulty, seed, secret): salts every id and lazily drawn value
    today: dt.date
    stock_overrides: dict[int, int] = field(default_factory=dict)
    visit_history: list[int] = field(default_factory=list)
    reserved: set[int] = field(default_factory=set)  # products some task's solution needs in stock
    protected_categories: set[int] = field(default_factory=set)  # categories whose valid sets a task scores
    doomed: set[int] = field(default_factory=set)  # products a task will sell out later in the episode
    named: set[int] = field(default_factory=set)  # products a task's request names by when it ordered them
    denied_categories: frozenset[int] = frozenset()
    surfacing: SurfacingLedger = field(default_factory=SurfacingLedger)  # every id shown to the agent
    planned_sell_outs: list[PlannedSellOut] = field(default_factory=list)
    _variant_draws: dict[int, VariantDraw] = field(default_factory=dict)
    _variants: dict[int, tuple[Variant, ...]] = field(default_factory=dict)
    cart: Cart = field(init=False)
    _offered: VariantColumns | None = field(default=None, init=False, repr=False, compare=False)
    _account: Account | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.cart = Cart(self.key)
        # Each product's variants digest hashes this prefix and the row: the prefix is fed once.
        self._variants_hash = hashlib.blake2b(f"{self.key!r}|variants|".encode(), digest_size=32)

    @property
    def account(self) -> Account:
        """The customer's profile, orders and returns, created on first use (CART/PD never pay for it)."""
        if self._account is None:
            self._account = Account(self.key, self.today)
        return self._account

    @property
    def policy(self) -> StorePolicy:
        """The store policy in force: what the tools, ``policy_search`` and the verifiers apply."""
        return self.account.policy

    def install_episode_policy(self, rng: random.Random) -> None:
        """Run this world under store policy numbers drawn from ``rng`` (:func:`draw_store_policy`): POLICY
        episodes, and a JOURNEY with a POLICY request before any of its requests is generated. Once per
        world (later calls keep the numbers), and before any order is placed (their dates follow them)."""
        if self.policy is not STORE_POLICY:
            return
        if self.account.orders:
            raise RuntimeError("the episode's store policy must be drawn before any order is placed")
        self.account.policy = draw_store_policy(rng)

    def stock(self, row: int) -> int:
        return self.stock_overrides.get(row, self.catalog.stock.item(row))

    # Several tasks can share one world (JOURNEY). A task's generator reserves the products its
    # solution needs, protects the categories whose valid sets its verifier computes, and dooms
    # the products it will sell out later, so that no other task's stock change can make it
    # unsolvable or change its ideal answer. Generators plan with ``planning_overrides`` and
    # ``available``, and sell out only what ``can_sell_out`` allows.

    def reserve(self, rows: Iterable[int]) -> None:
        self.reserved.update(int(r) for r in rows)

    def name_ordered(self, rows: Iterable[int]) -> None:
        """``rows`` are ordered products a task's request names ("the X I ordered about 2 weeks ago"): no other
        task may order them, or that name could fit an order the request does not mean."""
        self.named.update(int(r) for r in rows)

    def protect(self, category: int) -> None:
        self.protected_categories.add(int(category))

    def can_sell_out(self, row: int) -> bool:
        """Whether a task may take ``row`` out of stock without touching another task's answer."""
        return row not in self.reserved and self.catalog.category.item(row) not in self.protected_categories

    def doom(self, row: int) -> None:
        """``row`` will sell out during the episode: other tasks must not plan with it."""
        self.doomed.add(int(row))

    def available(self, row: int, quantity: int = 1) -> bool:
        """In stock (``quantity`` units) now and not going to sell out during the episode."""
        return self.stock(row) >= quantity and row not in self.doomed

    def planning_overrides(self) -> dict[int, int]:
        """Stock overrides as generators must see them: doomed products count as sold out already."""
        if not self.doomed:
            return self.stock_overrides
        return self.stock_overrides | dict.fromkeys(self.doomed, 0)

    def sell_out(self, row: int) -> None:
        self.stock_overrides[row] = 0

    def plan_sell_out(self, row: int, task: HandledTurns) -> None:
        """Sell ``row`` out once the agent, handling ``task``, has been shown it (see :class:`PlannedSellOut`)."""
        self.doom(row)
        self.planned_sell_outs.append(PlannedSellOut(int(row), task))

    def run_planned_events(self) -> None:
        """Execute the planned sell-outs that are due; the runtime calls this at the end of each turn."""
        for event in self.planned_sell_outs:
            if event.due(self.surfacing):
                self.sell_out(event.row)
                event.done = True

    def sold_out_as_planned(self, row: int) -> bool:
        return any(event.done and event.row == row for event in self.planned_sell_outs)

    def in_stock_mask(self) -> np.ndarray:
        return in_stock_mask(self.catalog, self.stock_overrides)

    def variants(self, row: int) -> tuple[Variant, ...]:
        """This episode's variants of a product: the values the catalog offers it in
        (:mod:`ecomrlve.catalog.variants`: the same in every episode; a product has a value of its
        variant attribute when one of its variants has it), with variant ids drawn on first use from
        the episode key (one BLAKE2b digest per product: unguessable, different in every episode).
        """
        found = self._variants.get(row)
        if found is None:
            attribute, ids, values = self._variant_draw(row)
            # tuple.__new__ skips the NamedTuple's Python-level constructor (same tuples)
            found = self._variants[row] = tuple([tuple.__new__(Variant, (variant_id, attribute, value))
                                                 for variant_id, value in zip(ids, values)])
        return found

    def variant_cards(self, row: int) -> list[dict[str, str]]:
        """``[v.card() for v in self.variants(row)]``, fresh dicts, without making the variants: each
        product card lists them, and most shown products' variants are never read otherwise."""
        return variant_cards_of(self._variant_draws_of((row,))[0])

    def listings(self, rows: Sequence[int]) -> list[tuple[int, VariantDraw]]:
        """Per row, the product's stock now and its variants' draw (:func:`variant_cards_of` makes its
        :meth:`variant_cards`): what a page of product cards reads of the episode, in one call (the new products'
        variants drawn together)."""
        return [(self.stock(row), draw) for row, draw in zip(rows, self._variant_draws_of(rows))]

    def variant_ids(self, row: int) -> tuple[str, ...]:
        """The ids of :meth:`variants`, in order, without making the variants."""
        return self._variant_draw(row)[1]

    def chosen_variant_id(self, row: int, rng: random.Random) -> str | None:
        """``rng.choice(self.variants(row)).variant_id`` (None, drawing nothing, when there are none):
        the variant of an order line."""
        ids = self._variant_draw(row)[1]
        return rng.choice(ids) if ids else None

    def _variant_draw(self, row: int) -> VariantDraw:
        """The product's variant ids and values (see :meth:`variants`), drawn on first use."""
        found = self._variant_draws.get(row)
        if found is None:
            found = self._variant_draws[row] = self._new_draw(row, *self._variant_columns().values_of(row))
        return found

    def _variant_draws_of(self, rows: Sequence[int]) -> list[VariantDraw]:
        """:meth:`_variant_draw` of each of ``rows``: the values of the products not drawn yet read in one call,
        and their ids made in one call (a page of product cards: a few calls into other files, not a few per card)."""
        draws = self._variant_draws
        new = [row for row in dict.fromkeys(rows) if row not in draws]
        if new:
            offered = self._variant_columns().values_each(new)
            words: list[int] = []
            for row, (_, values) in zip(new, offered):
                if values:
                    words.extend(self._variant_words(row))
            ids = crockford_each("V", words, VARIANT_ID_DIGITS)
            start = 0
            for row, (attribute, values) in zip(new, offered):
                if values:
                    draws[row] = (attribute, ids[start: start + VARIANTS_PER_PRODUCT], values)
                    start += VARIANTS_PER_PRODUCT
                else:
                    draws[row] = _NO_VARIANTS
        return [draws[row] for row in rows]

    def _variant_columns(self) -> VariantColumns:
        if self._offered is None:  # the catalog's variant columns, read once per episode
            self._offered = variant_columns(self.catalog)
        return self._offered

    def _new_draw(self, row: int, attribute: str, values: tuple[str, ...]) -> VariantDraw:
        """One product's draw from its variant ``attribute`` and ``values`` (:meth:`_variant_draws_of` of one row,
        without the batch's lists)."""
        if not values:
            return _NO_VARIANTS
        # (crockford_each of the product's few words, which spells up to a few products' ids by this loop)
        return attribute, tuple([crockford("V", word, VARIANT_ID_DIGITS) for word in self._variant_words(row)]), values

    def _variant_words(self, row: int) -> tuple[int, ...]:
        """The product's variants digest (of the episode key and the row) as 64-bit words, one per variant id."""
        digest = self._variants_hash.copy()
        digest.update(b"%d" % row)
        return _DIGEST_WORDS(digest.digest())

    def variant(self, row: int, variant_id: str) -> Variant | None:
        for variant in self.variants(row):  # a loop, not next() over a generator: read for every card line
            if variant.variant_id == variant_id:
                return variant
        return None

    def is_denied(self, row: int) -> bool:
        return self.catalog.category.item(row) in self.denied_categories
