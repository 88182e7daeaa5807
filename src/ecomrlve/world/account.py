"""The customer's account: profile, order history and returns ledger, on the simulated clock.

Environments append orders with :meth:`Account.place_order`; nothing ever replaces the history,
so several generators (JOURNEY) can share one account. Order and line ids are opaque
(:class:`ecomrlve.rng.KeyedIds` of the episode key and a running counter), so they cannot be
guessed. Dates come only from ``world.today``; shipping times come from the store policy, so
the ETA an order shows is the one the policy promises.
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from ecomrlve.catalog.schema import Catalog
from ecomrlve.rng import KeyedIds, derive_rng
from ecomrlve.world.policy import (
    STORE_POLICY,
    TIER_NAMES,
    TIERS,
    ReturnVerdict,
    StorePolicy,
    Tier,
    return_verdict,
)

OrderStatus = Literal["processing", "shipped", "in_transit", "delivered", "cancelled", "returned"]
ORDER_STATUSES: tuple[OrderStatus, ...] = ("processing", "shipped", "in_transit", "delivered", "cancelled", "returned")
CARRIERS = ("UPS", "FedEx", "USPS", "DHL")
#: an order id in text; the word boundary is checked after the literal "O" (same matches as
#: ``\bO[0-9A-Z]{8}\b``) so that the regex engine can skip ahead to each "O", ~9x faster on a message
ORDER_ID = re.compile(r"O(?<=\bO)[0-9A-Z]{8}\b")

_FIRST = ("Alex", "Jordan", "Sam", "Taylor", "Morgan", "Casey", "Riley", "Jamie", "Avery", "Quinn", "Drew", "Reese",
          "Maria", "David", "Priya", "Chen", "Fatima", "Lucas", "Sofia", "Omar", "Hannah", "Mateo", "Aisha", "Noah")
_LAST = ("Smith", "Garcia", "Nguyen", "Patel", "Kim", "Johnson", "Okafor", "Rossi", "Müller", "Silva", "Cohen",
         "Brown", "Lopez", "Wilson", "Haddad", "Novak", "Tanaka", "Murphy", "Reyes", "Larsen")
_STREETS = ("Maple Ave", "Oak St", "Cedar Ln", "Pine Rd", "Lakeview Dr", "Hillcrest Blvd", "River Rd", "Elm St")
_CITIES = (("Portland", "OR", "97205"), ("Austin", "TX", "78701"), ("Denver", "CO", "80202"),
           ("Columbus", "OH", "43215"), ("Raleigh", "NC", "27601"), ("Madison", "WI", "53703"))
_CARDS = ("Visa", "Mastercard", "Amex", "Discover")


@dataclass(frozen=True)
class Profile:
    name: str
    email: str
    tier: Tier
    member_since: dt.date
    addresses: tuple[str, ...]
    payment_methods: tuple[str, ...]

    def card(self) -> dict[str, Any]:
        return {"name": self.name, "email": self.email, "membership_tier": TIER_NAMES[self.tier],
                "member_since": self.member_since.isoformat(), "addresses": list(self.addresses),
                "payment_methods": list(self.payment_methods)}


def draw_profile(key: tuple, today: dt.date) -> Profile:
    """The account holder of an episode, drawn from its own named stream."""
    rng = derive_rng(*key, "profile")
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    addresses = []
    for label in ("Home", "Work")[: rng.randint(1, 2)]:
        city, state, zip_code = rng.choice(_CITIES)
        addresses.append(f"{label}: {rng.randint(10, 9999)} {rng.choice(_STREETS)}, {city}, {state} {zip_code}")
    payments = tuple(f"{rng.choice(_CARDS)} ending {rng.randint(0, 9999):04d}" for _ in range(rng.randint(1, 2)))
    return Profile(name=f"{first} {last}", email=f"{first}.{last}{rng.randint(1, 99)}@example.com".lower(),
                   tier=rng.choice(TIERS), member_since=today - dt.timedelta(days=rng.randint(60, 2500)),
                   addresses=tuple(addresses), payment_methods=payments)


@dataclass
class OrderLine:
    """One line of an order. Its opaque id is made on first read: most lines' ids are never shown."""

    number: int  # the line's place among the account's lines: what its id is made from
    row: int
    variant_id: str | None
    quantity: int
    unit_price_cents: int
    ids: KeyedIds = field(repr=False, compare=False)

    @functools.cached_property
    def line_id(self) -> str:
        return self.ids.make("OL", "order-line", self.number, length=6)


@dataclass
class Order:
    """One order. The tracking number of a shipped order is made on first read: few are shown."""

    order_id: str
    number: int  # the order's place in the account's history: what its ids are made from
    placed: dt.date
    status: OrderStatus
    shipping_method: str
    lines: list[OrderLine]
    ids: KeyedIds = field(repr=False, compare=False)
    shipped: dt.date | None = None
    delivered: dt.date | None = None
    eta: dt.date | None = None
    carrier: str | None = None

    @functools.cached_property
    def tracking(self) -> str | None:
        return None if self.shipped is None else self.ids.make("1Z", "tracking", self.number, length=12)

    def line(self, line_id: str) -> OrderLine | None:
        return next((line for line in self.lines if line.line_id == line_id), None)


class ReturnRecord(NamedTuple):
    """One return in the ledger (a tuple: one is made per line of every returned order)."""

    return_id: str
    order_id: str
    line_id: str
    reason: str
    created: dt.date
    refund_cents: int


class Schedule(NamedTuple):
    """The dates of an order in a given status, relative to today (see :func:`schedule`); a tuple, as
    one is made per order placed."""

    placed: dt.date
    shipped: dt.date | None
    delivered: dt.date | None
    eta: dt.date | None


def schedule(status: OrderStatus, method: str, today: dt.date, age_days: int,
             policy: StorePolicy = STORE_POLICY) -> Schedule:
    """Dates consistent with ``status`` and the policy's handling and shipping times.

    ``age_days`` is how long ago the decisive event happened: delivery for delivered/returned
    orders, the order itself for processing/cancelled, shipment for shipped/in-transit ones
    (in transit needs ``1 <= age_days < shipping days``; shipped means it left today, age 0).
    """
    handling, transit = policy.handling_days, policy.shipping_days[method]
    day = today.toordinal() - age_days  # the decisive event; dates as day numbers (one date made per date)
    date = dt.date.fromordinal
    if status in ("delivered", "returned"):
        delivered = date(day)
        return Schedule(date(day - transit - handling), date(day - transit), delivered, delivered)
    if status == "processing":
        return Schedule(date(day), None, None, date(day + handling + transit))
    if status in ("shipped", "in_transit"):
        return Schedule(date(day - handling), date(day), None, date(day + transit))
    return Schedule(date(day), None, None, None)  # cancelled


class Account:
    """Profile (drawn lazily), orders (appended by generators), the returns ledger and the lines whose
    eligibility the agent was told."""

    def __init__(self, key: tuple, today: dt.date) -> None:
        self.policy: StorePolicy = STORE_POLICY  # the store policy in force (POLICY episodes install their own)
        self._key = key
        self._ids = KeyedIds(*key)
        self._today = today
        self._profile: Profile | None = None
        self.orders: list[Order] = []
        self.returns: list[ReturnRecord] = []
        #: lines whose eligibility verdict the agent was shown (checked, or a return refused), in order
        self.verdicts_shown: list[str] = []
        self._lines = 0

    @property
    def profile(self) -> Profile:
        if self._profile is None:
            self._profile = draw_profile(self._key, self._today)
        return self._profile

    def place_order(self, items: list[tuple[int, str | None, int, int]], status: OrderStatus, method: str,
                    age_days: int, rng: random.Random) -> Order:
        """Append an order of ``(row, variant_id, quantity, unit_price_cents)`` items in ``status``."""
        n = len(self.orders)
        lines = [OrderLine(self._lines + i, row, variant_id, quantity, price, self._ids)
                 for i, (row, variant_id, quantity, price) in enumerate(items)]
        self._lines += len(lines)
        when = schedule(status, method, self._today, age_days, self.policy)
        order = Order(self._ids.make("O", "order", n), n, when.placed, status, method, lines, self._ids, when.shipped,
                      when.delivered, when.eta, rng.choice(CARRIERS) if when.shipped is not None else None)
        self.orders.append(order)
        if status == "returned":
            assert when.delivered is not None  # schedule() dates every returned order's delivery
            created = when.delivered + dt.timedelta(days=3)
            for line in lines:
                self.returns.append(ReturnRecord(self._ids.make("RT", "return", len(self.returns), length=7),
                                                 order.order_id, line.line_id, "no_longer_needed", created,
                                                 line.unit_price_cents * line.quantity))
        return order

    def order(self, order_id: str) -> Order | None:
        return next((o for o in self.orders if o.order_id == order_id), None)

    def is_returned(self, line_id: str) -> bool:
        return any(r.line_id == line_id for r in self.returns)

    def verdict(self, catalog: Catalog, order: Order, line: OrderLine) -> ReturnVerdict:
        """Return eligibility of one line today, by the store policy's rule engine."""
        category = catalog.category_of(line.row)
        return return_verdict(status=order.status, delivered=order.delivered, category=category.name,
                              department=category.path[0], tier=self.profile.tier,
                              already_returned=self.is_returned(line.line_id), today=self._today,
                              policy=self.policy)

    def record_return(self, order: Order, line: OrderLine, reason: str, refund_cents: int) -> ReturnRecord:
        record = ReturnRecord(self._ids.make("RT", "return", len(self.returns), length=7), order.order_id,
                              line.line_id, reason, self._today, refund_cents)
        self.returns.append(record)
        return record
