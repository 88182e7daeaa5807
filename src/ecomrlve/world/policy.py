"""The store policy: one machine-readable rule set, the engine that applies it, and its documents.

:data:`STORE_POLICY` is the single source of truth. The account tools (return eligibility,
fees), the order generator (shipping times and ETAs), the RETURN verifier and the POLICY
question generator all call the functions below, and :func:`policy_documents` renders the
same tables as the text that ``policy_search`` retrieves. The documents state rules (tables,
formulas); they never contain the answer to a particular customer's question.

Departments. The department-keyed rules (return window, restocking fee, warranty) are rows
keyed by department name. An item's department is the first level of its catalog category path
(``Category.path[0]``), whatever catalog is loaded: a department the policy names uses its row,
a known alias (Amazon-style names such as "Home & Kitchen") uses the row it maps to, and any
other department uses the :attr:`StorePolicy.fallback_department` row ("Other"), which the
documents state as well. :func:`rule_department` is that one mapping.

Per-episode numbers. :data:`STORE_POLICY` is the policy every environment runs under by default.
POLICY episodes, and JOURNEY episodes whose catalog can host a POLICY request, run under their own
numbers instead (:func:`draw_store_policy`, drawn from the episode's RNG within realistic ranges and
installed as the world's policy), so a policy answer can
only be known by reading that episode's documents: the tools, the documents and the verifier all
read the world's policy. What the catalog capability analysis depends on (final-sale categories,
store-fault reasons, department aliases) never varies.

Money is handled in integer cents with round-half-up; durations in calendar days.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from ecomrlve.catalog.taxonomy import LEAVES

Tier = Literal["standard", "plus", "premier"]
ShippingMethod = Literal["standard", "expedited", "overnight"]
ReturnMethod = Literal["mail", "drop_off", "pickup"]
ReturnReason = Literal["defective", "damaged", "wrong_item", "not_as_described", "no_longer_needed"]

TIERS: tuple[Tier, ...] = ("standard", "plus", "premier")
SHIPPING_METHODS: tuple[ShippingMethod, ...] = ("standard", "expedited", "overnight")
RETURN_METHODS: tuple[ReturnMethod, ...] = ("mail", "drop_off", "pickup")
RETURN_REASONS: tuple[ReturnReason, ...] = ("defective", "damaged", "wrong_item", "not_as_described", "no_longer_needed")
TIER_NAMES: dict[str, str] = {"standard": "Standard", "plus": "Plus", "premier": "Premier"}
RETURN_METHOD_NAMES: dict[str, str] = {"mail": "prepaid mail label", "drop_off": "drop-off at a partner store",
                                       "pickup": "home pickup"}
DAYS_PER_WARRANTY_MONTH = 30


@dataclass(frozen=True)
class StorePolicy:
    """Every rule of the store, as data."""

    return_window_days: dict[str, int]  # department rule row -> days after delivery (inclusive)
    tier_window_bonus_days: dict[str, int]
    final_sale_categories: tuple[str, ...]  # leaf category names that can never be returned
    store_fault_reasons: tuple[str, ...]  # reasons for which no restocking or return-shipping fee is charged
    restocking_fee_percent: dict[str, int]  # department -> % of the price, opened items only
    restocking_tier_share_percent: dict[str, int]  # share of the restocking fee each tier pays
    return_shipping_fee_cents: dict[str, dict[str, int]]  # return method -> tier -> fee
    handling_days: int  # days between order and shipment
    shipping_days: dict[str, int]  # shipping method -> days from shipment to delivery
    shipping_cost_cents: dict[str, int]  # shipping method -> cost
    free_shipping_threshold_cents: dict[str, int]  # tier -> subtotal at or above which standard shipping is free
    expedited_tier_share_percent: dict[str, int]  # share of the expedited cost each tier pays
    price_match_days: dict[str, int]  # tier -> days after the order date a price drop is refunded
    price_match_share_percent: dict[str, int]  # tier -> share of the price drop refunded
    warranty_months: dict[str, int]  # department -> months from delivery
    tier_warranty_bonus_months: dict[str, int]
    department_aliases: dict[str, str]  # catalog department name -> the rule row it follows
    fallback_department: str  # the rule row of every department neither named nor aliased


STORE_POLICY = StorePolicy(
    return_window_days={"Electronics": 30, "Home": 60, "Kitchen": 45, "Clothing": 60, "Beauty": 14, "Sports": 30,
                        "Outdoor": 45, "Office": 30, "Toys": 90, "Pets": 21, "Other": 30},
    tier_window_bonus_days={"standard": 0, "plus": 15, "premier": 30},
    final_sale_categories=("Earbuds", "Moisturizers", "Shampoos"),
    store_fault_reasons=("defective", "damaged", "wrong_item"),
    restocking_fee_percent={"Electronics": 15, "Home": 0, "Kitchen": 10, "Clothing": 0, "Beauty": 0, "Sports": 10,
                            "Outdoor": 10, "Office": 5, "Toys": 0, "Pets": 0, "Other": 10},
    restocking_tier_share_percent={"standard": 100, "plus": 50, "premier": 25},
    return_shipping_fee_cents={"mail": {"standard": 799, "plus": 499, "premier": 0},
                               "drop_off": {"standard": 0, "plus": 0, "premier": 0},
                               "pickup": {"standard": 1499, "plus": 999, "premier": 0}},
    handling_days=1,
    shipping_days={"standard": 5, "expedited": 2, "overnight": 1},
    shipping_cost_cents={"standard": 599, "expedited": 1299, "overnight": 2499},
    free_shipping_threshold_cents={"standard": 5000, "plus": 2500, "premier": 0},
    expedited_tier_share_percent={"standard": 100, "plus": 100, "premier": 50},
    price_match_days={"standard": 7, "plus": 14, "premier": 30},
    price_match_share_percent={"standard": 100, "plus": 100, "premier": 100},
    warranty_months={"Electronics": 12, "Home": 12, "Kitchen": 24, "Clothing": 0, "Beauty": 0, "Sports": 6,
                     "Outdoor": 12, "Office": 12, "Toys": 6, "Pets": 6, "Other": 6},
    tier_warranty_bonus_months={"standard": 0, "plus": 0, "premier": 12},
    department_aliases={"All Electronics": "Electronics", "Cell Phones & Accessories": "Electronics",
                        "Home & Kitchen": "Home", "Amazon Home": "Home", "Clothing, Shoes & Jewelry": "Clothing",
                        "Amazon Fashion": "Clothing", "Beauty & Personal Care": "Beauty", "All Beauty": "Beauty",
                        "Sports & Outdoors": "Sports", "Patio, Lawn & Garden": "Outdoor", "Office Products": "Office",
                        "Toys & Games": "Toys", "Pet Supplies": "Pets"},
    fallback_department="Other",
)


# -- per-episode numbers --------------------------------------------------------------------------

WINDOW_DAYS = (7, 10, 14, 15, 20, 21, 28, 30, 35, 40, 45, 60, 75, 90)
WARRANTY_MONTHS = (0, 3, 6, 9, 12, 18, 24, 36)
RESTOCKING_PERCENTS = (0, 5, 10, 12, 15, 20, 25)


def _cents(rng: random.Random, low_dollars: int, high_dollars: int) -> int:
    """A shelf price between the bounds ending in .99 or .49 (in cents)."""
    return rng.randint(low_dollars, high_dollars) * 100 - rng.choice((1, 51))


def _rising(rng: random.Random, start: int, steps: tuple[int, ...]) -> dict[str, int]:
    """Per tier, ``start`` for Standard and a value that grows by a drawn step per tier above it."""
    plus = start + rng.choice(steps)
    return {"standard": start, "plus": plus, "premier": plus + rng.choice(steps)}


def _falling(rng: random.Random, start: int, floor: int, steps: tuple[int, ...]) -> dict[str, int]:
    """Per tier, ``start`` for Standard and a value that shrinks by a drawn step per tier (not below ``floor``)."""
    plus = max(floor, start - rng.choice(steps))
    return {"standard": start, "plus": plus, "premier": max(floor, plus - rng.choice(steps))}


def draw_store_policy(rng: random.Random, base: StorePolicy = STORE_POLICY) -> StorePolicy:
    """A store policy with ``base``'s structure and its numbers drawn from ``rng`` within realistic ranges.

    Every department row and every tier gets its own draw (windows 7-90 days, warranties 0-36 months,
    fees and shipping prices in ordinary ranges, tier perks that never make a higher tier worse off);
    final-sale categories, store-fault reasons and department aliases are ``base``'s.
    """
    rows = sorted(base.return_window_days)
    mail = _cents(rng, 4, 9)
    pickup = _cents(rng, 10, 19)
    return StorePolicy(
        return_window_days={d: rng.choice(WINDOW_DAYS) for d in rows},
        tier_window_bonus_days=_rising(rng, 0, (5, 7, 10, 14, 15, 21, 30)),
        final_sale_categories=base.final_sale_categories,
        store_fault_reasons=base.store_fault_reasons,
        restocking_fee_percent={d: rng.choice(RESTOCKING_PERCENTS) for d in rows},
        restocking_tier_share_percent=_falling(rng, 100, 0, (10, 20, 25, 30, 40, 50)),
        return_shipping_fee_cents={"mail": _falling(rng, mail, 0, (100, 200, 300, 400, mail)),
                                   "drop_off": {t: 0 for t in TIERS},
                                   "pickup": _falling(rng, pickup, 0, (300, 500, 700, 1000, pickup))},
        handling_days=rng.randint(1, 3),
        shipping_days={"standard": rng.randint(4, 9), "expedited": rng.randint(2, 3), "overnight": 1},
        shipping_cost_cents={"standard": _cents(rng, 4, 9), "expedited": _cents(rng, 10, 19),
                             "overnight": _cents(rng, 20, 39)},
        free_shipping_threshold_cents=_falling(rng, rng.choice((25, 29, 35, 39, 45, 49, 50, 59, 75, 99)) * 100, 0,
                                               (500, 1000, 1500, 2000, 2500)),
        expedited_tier_share_percent=_falling(rng, 100, 0, (0, 10, 20, 25, 30, 50)),
        price_match_days=_rising(rng, rng.choice((3, 5, 7, 10, 14)), (3, 4, 5, 7, 10, 14, 16)),
        price_match_share_percent={t: min(100, share) for t, share in
                                   _rising(rng, rng.choice((50, 60, 70, 75, 80)), (0, 5, 10, 15, 20)).items()},
        warranty_months={d: rng.choice(WARRANTY_MONTHS) for d in rows},
        tier_warranty_bonus_months=_rising(rng, 0, (0, 3, 6, 12)),
        department_aliases=base.department_aliases,
        fallback_department=base.fallback_department,
    )


def percent_of(cents: int, percent: int) -> int:
    """``percent`` % of an amount in cents, rounded half up to a cent."""
    return (cents * percent + 50) // 100


# -- the engine -----------------------------------------------------------------------------------

def rule_department(department: str, policy: StorePolicy = STORE_POLICY) -> str:
    """The rule row a catalog department (``Category.path[0]``) follows: its own, its alias's, or the fallback."""
    if department in policy.return_window_days:
        return department
    return policy.department_aliases.get(department, policy.fallback_department)


def return_window_days(department: str, tier: str, policy: StorePolicy = STORE_POLICY) -> int:
    return policy.return_window_days[rule_department(department, policy)] + policy.tier_window_bonus_days[tier]


def is_final_sale(category: str, policy: StorePolicy = STORE_POLICY) -> bool:
    return category in policy.final_sale_categories


def restocking_fee_cents(department: str, tier: str, opened: bool, reason: str, price_cents: int,
                         policy: StorePolicy = STORE_POLICY) -> int:
    if not opened or reason in policy.store_fault_reasons:
        return 0
    fee = percent_of(price_cents, policy.restocking_fee_percent[rule_department(department, policy)])
    return percent_of(fee, policy.restocking_tier_share_percent[tier])


def return_shipping_fee_cents(method: str, tier: str, reason: str, policy: StorePolicy = STORE_POLICY) -> int:
    if reason in policy.store_fault_reasons:
        return 0
    return policy.return_shipping_fee_cents[method][tier]


def refund_cents(*, category: str, department: str, tier: str, days_since_delivery: int, opened: bool, reason: str,
                 method: str, price_cents: int, policy: StorePolicy = STORE_POLICY) -> int:
    """What a delivered item (leaf ``category`` in ``department``) returns to the customer: 0 if it cannot be returned."""
    if is_final_sale(category, policy) or days_since_delivery > return_window_days(department, tier, policy):
        return 0
    fees = (restocking_fee_cents(department, tier, opened, reason, price_cents, policy)
            + return_shipping_fee_cents(method, tier, reason, policy))
    return max(0, price_cents - fees)


def shipping_cost_cents(method: str, tier: str, subtotal_cents: int, policy: StorePolicy = STORE_POLICY) -> int:
    if method == "standard":
        return 0 if subtotal_cents >= policy.free_shipping_threshold_cents[tier] else policy.shipping_cost_cents[method]
    if method == "expedited":
        return percent_of(policy.shipping_cost_cents[method], policy.expedited_tier_share_percent[tier])
    return policy.shipping_cost_cents[method]


def price_match_refund_cents(tier: str, days_since_order: int, paid_cents: int, new_price_cents: int,
                             policy: StorePolicy = STORE_POLICY) -> int:
    if days_since_order > policy.price_match_days[tier] or new_price_cents >= paid_cents:
        return 0
    return percent_of(paid_cents - new_price_cents, policy.price_match_share_percent[tier])


def warranty_months(department: str, tier: str, policy: StorePolicy = STORE_POLICY) -> int:
    months = policy.warranty_months[rule_department(department, policy)]
    return months + policy.tier_warranty_bonus_months[tier] if months else 0


def under_warranty(department: str, tier: str, days_since_delivery: int, policy: StorePolicy = STORE_POLICY) -> bool:
    return days_since_delivery <= warranty_months(department, tier, policy) * DAYS_PER_WARRANTY_MONTH


EligibilityCode = Literal["eligible", "not_delivered", "cancelled", "already_returned", "final_sale", "window_expired"]


@dataclass(frozen=True)
class ReturnVerdict:
    """Whether one order line can be returned today, and why."""

    eligible: bool
    code: EligibilityCode
    window_days: int | None = None
    deadline: dt.date | None = None

    def explanation(self) -> str:
        return {
            "eligible": f"The item can be returned until {self.deadline.isoformat() if self.deadline else ''}.",
            "not_delivered": "Only delivered orders can be returned; this order has not been delivered yet.",
            "cancelled": "This order was cancelled, so there is nothing to return.",
            "already_returned": "A return for this item was already started.",
            "final_sale": "This category is final sale and cannot be returned.",
            "window_expired": (f"The {self.window_days}-day return window ended on "
                               f"{self.deadline.isoformat() if self.deadline else ''}."),
        }[self.code]


def return_verdict(*, status: str, delivered: dt.date | None, category: str, department: str, tier: str,
                   already_returned: bool, today: dt.date, policy: StorePolicy = STORE_POLICY) -> ReturnVerdict:
    """The one definition of return eligibility (tools, generators and verifiers all call it).

    ``category`` is the item's leaf category name (final sale), ``department`` its catalog department.
    """
    if status == "cancelled":
        return ReturnVerdict(False, "cancelled")
    if status != "delivered" or delivered is None:
        return ReturnVerdict(False, "already_returned" if status == "returned" else "not_delivered")
    if already_returned:
        return ReturnVerdict(False, "already_returned")
    if is_final_sale(category, policy):
        return ReturnVerdict(False, "final_sale")
    window = return_window_days(department, tier, policy)
    deadline = delivered + dt.timedelta(days=window)
    if today > deadline:
        return ReturnVerdict(False, "window_expired", window, deadline)
    return ReturnVerdict(True, "eligible", window, deadline)


# -- documents ------------------------------------------------------------------------------------

def _money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def _tiers(values: dict[str, int], fmt: Callable[[int], str]) -> str:
    return "; ".join(f"{TIER_NAMES[t]} members: {fmt(values[t])}" for t in TIERS)


def _fault_items(policy: StorePolicy) -> str:
    """The store-fault reasons as words: "defective, damaged or wrong items"."""
    words = [r.replace("_item", "").replace("_", " ") for r in policy.store_fault_reasons]
    return ", ".join(words[:-1]) + " or " + words[-1] + " items"


def _price_match_share(policy: StorePolicy) -> str:
    """What share of a price drop is refunded (the whole difference unless a tier gets less)."""
    if all(share == 100 for share in policy.price_match_share_percent.values()):
        return "the difference per unit is refunded on request."
    return ("a share of the difference per unit is refunded on request, rounded to the nearest cent: "
            + _tiers(policy.price_match_share_percent, lambda v: f"{v}%") + ".")


def _warranty_bonus_holders(policy: StorePolicy) -> str:
    """Who the warranty bonus row is about: "Premier members" when only they get one, else "Members"."""
    bonus_tiers = [t for t in TIERS if policy.tier_warranty_bonus_months[t]]
    return "Premier members" if bonus_tiers == ["premier"] else "Members"


@dataclass(frozen=True)
class PolicySection:
    section_id: str
    title: str
    text: str


#: The synthetic store's category paths: what the documents list when no catalog is given.
SYNTHETIC_CATEGORY_PATHS: tuple[tuple[str, ...], ...] = tuple(leaf.path for leaf in LEAVES)


def _rule_rows(policy: StorePolicy) -> list[str]:
    """The department rule rows in document order: the named departments A-Z, then the fallback row."""
    return sorted(set(policy.return_window_days) - {policy.fallback_department}) + [policy.fallback_department]


def _departments_text(policy: StorePolicy, category_paths: tuple[tuple[str, ...], ...]) -> str:
    """How departments are found, then per rule row its other names and the store's leaf categories in it."""
    by_row: dict[str, set[str]] = {d: set() for d in policy.return_window_days}
    for path in category_paths:
        by_row[rule_department(path[0], policy)].add(path[-1])
    rows = []
    for row in _rule_rows(policy):
        aliases = sorted(name for name, target in policy.department_aliases.items() if target == row)
        quoted = ", ".join(f"'{a}'" for a in aliases)
        named = f"{row} (also named {quoted})" if aliases else row
        if by_row[row]:
            rows.append(f"{named}: {', '.join(sorted(by_row[row]))}.")
        elif aliases:
            rows.append(f"{named}.")
    return ("Every product belongs to one store department, the first level of its category path, which decides its "
            "return window, restocking fee and warranty. " + " ".join(rows)
            + f" Products of any other department follow the {policy.fallback_department} row of each table.")


DEPARTMENTS_TEXTS_KEPT = 64
_DEPARTMENTS_TEXTS: dict[tuple, str] = {}


def _cached_departments_text(policy: StorePolicy, category_paths: Iterable[tuple[str, ...]]) -> str:
    """:func:`_departments_text`, kept per the only parts of the policy it reads (its rows, aliases and
    fallback row), which :func:`draw_store_policy` never varies: POLICY episodes render it once."""
    paths = tuple(category_paths)
    key = (tuple(policy.return_window_days), tuple(policy.department_aliases.items()), policy.fallback_department, paths)
    text = _DEPARTMENTS_TEXTS.get(key)
    if text is None:
        if len(_DEPARTMENTS_TEXTS) >= DEPARTMENTS_TEXTS_KEPT:
            _DEPARTMENTS_TEXTS.clear()
        text = _DEPARTMENTS_TEXTS[key] = _departments_text(policy, paths)
    return text


def policy_documents(policy: StorePolicy = STORE_POLICY,
                     category_paths: Iterable[tuple[str, ...]] = SYNTHETIC_CATEGORY_PATHS) -> tuple[PolicySection, ...]:
    """The policy as retrievable sections, rendered from the rule set (rules only, no worked answers).

    ``category_paths`` are the store's categories (the loaded catalog's ``Category.path``s), listed by department.
    """
    departments = _rule_rows(policy)
    sections = [
        PolicySection("departments", "Store departments", _cached_departments_text(policy, category_paths)),
        PolicySection("membership", "Membership tiers", "Customers are Standard, Plus or Premier members; the tier "
                      "is shown in the customer's account profile. Each rule below states what every tier gets."),
        PolicySection("return-window", "Return window", "Items can be returned within the department's return window, "
                      "counted in calendar days from the delivery date; the last day of the window is delivery date "
                      "plus the window length. Base windows by department: " + "; ".join(
                          f"{d} {policy.return_window_days[d]} days" for d in departments)
                      + ". Membership adds extra days to every window: " + _tiers(
                          policy.tier_window_bonus_days, lambda v: f"+{v} days") + "."),
        PolicySection("return-eligibility", "Which orders can be returned", "Only delivered orders can be returned. "
                      "Orders that are processing, shipped or in transit must arrive first; cancelled orders and "
                      "items already returned cannot be returned. A return is started per order line."),
        PolicySection("final-sale", "Final sale items", "For hygiene reasons these categories are final sale and "
                      "can never be returned, whatever the membership tier or reason: "
                      + ", ".join(policy.final_sale_categories) + "."),
        PolicySection("restocking-fee", "Restocking fees", "Opened items returned for a reason that is not the store's "
                      "fault pay a restocking fee, a percentage of the price paid. Unopened items and returns of "
                      + _fault_items(policy) + " pay no restocking fee. Fee by department: " + "; ".join(
                          f"{d} {policy.restocking_fee_percent[d]}%" for d in departments)
                      + ". Share of the fee each tier pays: " + _tiers(policy.restocking_tier_share_percent,
                                                                       lambda v: f"{v}%")
                      + ". Fees are rounded to the nearest cent at each step."),
        PolicySection("return-shipping", "Return shipping", "Returns of " + _fault_items(policy)
                      + " are shipped back free by any method. Otherwise the return shipping fee depends on "
                      "the method and tier: " + " ".join(
                          f"{RETURN_METHOD_NAMES[m].capitalize()}: " + _tiers(policy.return_shipping_fee_cents[m], _money)
                          + "." for m in RETURN_METHODS)),
        PolicySection("refunds", "Refunds", "The refund for a returned item is the price paid minus the restocking "
                      "fee minus the return shipping fee, never below $0.00. Items that cannot be returned are not "
                      "refunded. Refunds go back to the original payment method."),
        PolicySection("shipping-methods", "Shipping methods and delivery times", "Orders leave the warehouse "
                      f"{policy.handling_days} day{'s' if policy.handling_days != 1 else ''} after they are placed. Delivery time after shipping and cost by "
                      "method: " + "; ".join(
                          f"{m} {policy.shipping_days[m]} day{'s' if policy.shipping_days[m] != 1 else ''}, "
                          f"{_money(policy.shipping_cost_cents[m])}" for m in SHIPPING_METHODS) + "."),
        PolicySection("free-shipping", "Free shipping", "Standard shipping is free when the order subtotal is at or "
                      "above the tier's threshold: " + _tiers(policy.free_shipping_threshold_cents, _money)
                      + ". Below the threshold standard shipping costs the normal price. Free shipping never "
                      "applies to expedited or overnight shipping."),
        PolicySection("expedited-shipping", "Expedited shipping discount", "Share of the expedited shipping cost each "
                      "tier pays: " + _tiers(policy.expedited_tier_share_percent, lambda v: f"{v}%")
                      + ". Overnight shipping is always charged in full."),
        PolicySection("price-adjustment", "Price adjustment", "If the price of an item drops within the price "
                      "adjustment window, counted in calendar days from the order date (its last day is the order date "
                      "plus the window length), " + _price_match_share(policy)
                      + " Window by tier: " + _tiers(policy.price_match_days, lambda v: f"{v} days")
                      + ". After the window no adjustment is made."),
        PolicySection("warranty", "Warranty", "Products are covered by the store warranty from the delivery date. "
                      f"A warranty month counts as {DAYS_PER_WARRANTY_MONTH} days; the last day of cover is the delivery "
                      "date plus the warranty's days. Warranty by department: "
                      + "; ".join(f"{d} {policy.warranty_months[d]} months" for d in departments)
                      + ". " + _warranty_bonus_holders(policy) + " get extra months on every department that has a warranty: "
                      + _tiers(policy.tier_warranty_bonus_months, lambda v: f"+{v} months")
                      + ". Departments with 0 months have no warranty at any tier."),
    ]
    return tuple(sections)
