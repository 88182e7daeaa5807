"""The account world and the store-policy rule engine: rules, documents, ids, dates, account tools."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecomrlve.catalog.product_type import product_type, same_type
from ecomrlve.catalog.taxonomy import LEAVES
from ecomrlve.envs.account.orders import _SAMPLE_TRIES, same_noun, sample_row
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import short_title
from ecomrlve.rng import KeyedIds
from ecomrlve.tools import TOOLS, ToolError
from ecomrlve.tools.account import ORDER_LINE_PRODUCTS, _line_product
from ecomrlve.tools.policy import policy_index
from ecomrlve.world import policy as P
from ecomrlve.world.account import CARRIERS, ORDER_ID, ORDER_STATUSES, Account, schedule
from ecomrlve.world.state import World

#: The synthetic store's leaf category name -> department.
DEPARTMENT_OF: dict[str, str] = {leaf.name: leaf.department for leaf in LEAVES}

TODAY = dt.date(2026, 3, 15)


def test_return_window_is_inclusive_and_counted_from_delivery() -> None:
    window = P.return_window_days("Kitchen", "plus")
    assert window == 45 + 15
    delivered = TODAY - dt.timedelta(days=window)
    last_day = P.return_verdict(status="delivered", delivered=delivered, category="Blenders", department="Kitchen", tier="plus",
                                already_returned=False, today=TODAY)
    assert last_day.eligible and last_day.deadline == TODAY
    late = P.return_verdict(status="delivered", delivered=delivered - dt.timedelta(days=1), category="Blenders",
                            department="Kitchen", tier="plus", already_returned=False, today=TODAY)
    assert not late.eligible and late.code == "window_expired" and "60-day" in late.explanation()


def test_every_window_says_its_last_day_and_the_rules_keep_it() -> None:
    """A question can land on a window's last day: each section that counts days says whether that day is in, and
    the engine agrees (the warranty's last covered day, the price adjustment's last day)."""
    sections = {s.section_id: s.text for s in P.policy_documents()}
    assert "the last day of the window is delivery date plus the window length" in sections["return-window"]
    assert "the last day of cover is the delivery date plus the warranty's days" in sections["warranty"]
    assert "its last day is the order date plus the window length" in sections["price-adjustment"]
    days = P.warranty_months("Kitchen", "premier") * P.DAYS_PER_WARRANTY_MONTH
    assert P.under_warranty("Kitchen", "premier", days) and not P.under_warranty("Kitchen", "premier", days + 1)
    window = P.STORE_POLICY.price_match_days["plus"]
    assert P.price_match_refund_cents("plus", window, 2000, 1500) == 500
    assert P.price_match_refund_cents("plus", window + 1, 2000, 1500) == 0


@pytest.mark.parametrize("status,code", [("processing", "not_delivered"), ("shipped", "not_delivered"),
                                         ("in_transit", "not_delivered"), ("cancelled", "cancelled"),
                                         ("returned", "already_returned")])
def test_only_delivered_orders_are_returnable(status: str, code: str) -> None:
    verdict = P.return_verdict(status=status, delivered=None, category="Blenders", department="Kitchen", tier="premier",
                               already_returned=False, today=TODAY)
    assert not verdict.eligible and verdict.code == code


def test_final_sale_and_already_returned_lines_are_refused() -> None:
    kwargs = {"status": "delivered", "delivered": TODAY, "tier": "premier", "today": TODAY}
    assert P.return_verdict(category="Shampoos", department="Beauty", already_returned=False, **kwargs).code == "final_sale"
    assert P.return_verdict(category="Blenders", department="Kitchen", already_returned=True, **kwargs).code == "already_returned"


def test_fees_follow_the_tables_with_cent_rounding() -> None:
    # Electronics 15 %, Plus pays half: 15 % of $59.99 = $9.00 (8.9985 rounded), half = $4.50.
    assert P.restocking_fee_cents("Electronics", "plus", True, "no_longer_needed", 5999) == 450
    assert P.restocking_fee_cents("Electronics", "plus", False, "no_longer_needed", 5999) == 0
    assert P.restocking_fee_cents("Electronics", "standard", True, "defective", 5999) == 0
    assert P.return_shipping_fee_cents("pickup", "standard", "no_longer_needed") == 1499
    assert P.return_shipping_fee_cents("pickup", "standard", "damaged") == 0
    assert P.refund_cents(category="Chargers", department="Electronics", tier="plus", days_since_delivery=3, opened=True,
                          reason="no_longer_needed", method="mail", price_cents=5999) == 5999 - 450 - 499
    assert P.refund_cents(category="Shampoos", department="Beauty", tier="plus", days_since_delivery=3, opened=False,
                          reason="defective", method="mail", price_cents=999) == 0
    assert P.shipping_cost_cents("standard", "plus", 2500) == 0
    assert P.shipping_cost_cents("standard", "plus", 2499) == 599
    assert P.shipping_cost_cents("expedited", "premier", 100) == 650
    assert P.price_match_refund_cents("standard", 7, 5000, 4200) == 800
    assert P.price_match_refund_cents("standard", 8, 5000, 4200) == 0
    assert P.warranty_months("Clothing", "premier") == 0 and P.warranty_months("Kitchen", "premier") == 36


def test_every_department_and_category_is_covered_by_the_rules() -> None:
    policy = P.STORE_POLICY
    departments = set(DEPARTMENT_OF.values()) | {policy.fallback_department}
    for table in (policy.return_window_days, policy.restocking_fee_percent, policy.warranty_months):
        assert set(table) == departments
    assert set(policy.final_sale_categories) <= set(DEPARTMENT_OF)
    for per_tier in (policy.tier_window_bonus_days, policy.restocking_tier_share_percent,
                     policy.free_shipping_threshold_cents, policy.price_match_days, policy.price_match_share_percent,
                     policy.tier_warranty_bonus_months):
        assert set(per_tier) == set(P.TIERS)


def test_departments_the_policy_does_not_name_follow_an_alias_or_the_fallback_row() -> None:
    policy = P.STORE_POLICY
    other = policy.fallback_department
    assert P.rule_department("Kitchen") == "Kitchen" and P.rule_department("Home & Kitchen") == "Home"
    assert P.rule_department("Automotive") == other and P.rule_department("") == other
    window = P.return_window_days("Automotive", "plus")
    assert window == policy.return_window_days[other] + policy.tier_window_bonus_days["plus"]
    assert P.restocking_fee_cents("Automotive", "standard", True, "no_longer_needed", 10_000) == \
        100 * policy.restocking_fee_percent[other]
    assert P.warranty_months("Automotive", "premier") == policy.warranty_months[other] + \
        policy.tier_warranty_bonus_months["premier"]
    kwargs = {"status": "delivered", "category": "Car Waxes", "department": "Automotive", "tier": "plus",
              "already_returned": False, "today": TODAY}
    assert P.return_verdict(delivered=TODAY - dt.timedelta(days=window), **kwargs).eligible
    assert P.return_verdict(delivered=TODAY - dt.timedelta(days=window + 1), **kwargs).code == "window_expired"
    assert P.return_verdict(delivered=TODAY, **{**kwargs, "category": "Shampoos"}).code == "final_sale"
    # The documents describe the fallback: the store's categories under it, and its row in every table.
    text = " ".join(s.text for s in P.policy_documents(category_paths=[("Automotive", "Car Care", "Car Waxes"),
                                                                        ("Home & Kitchen", "Bedding", "Quilts")]))
    assert f"{other}: Car Waxes." in text and f"follow the {other} row" in text
    assert re.search(r"Home \(also named [^)]*'Home & Kitchen'[^)]*\): Quilts\.", text)
    assert f"{other} {policy.return_window_days[other]} days" in text
    assert f"{other} {policy.restocking_fee_percent[other]}%" in text
    assert f"{other} {policy.warranty_months[other]} months" in text


@pytest.mark.parametrize("policy", [P.STORE_POLICY] + [P.draw_store_policy(random.Random(seed)) for seed in range(20)])
def test_documents_render_every_rule_value(policy: P.StorePolicy) -> None:
    """Whatever the engine uses is written in some section (so the documents suffice to answer), for the
    default policy and for per-episode drawn ones."""
    text = " ".join(s.text for s in P.policy_documents(policy))
    for department, days in policy.return_window_days.items():
        assert f"{department} {days} days" in text
    for department, percent in policy.restocking_fee_percent.items():
        assert f"{department} {percent}%" in text
    for department, months in policy.warranty_months.items():
        assert f"{department} {months} months" in text
    for category in policy.final_sale_categories:
        assert category in text
    for category in DEPARTMENT_OF:
        assert category in text
    money = lambda cents: f"${cents // 100}.{cents % 100:02d}"  # noqa: E731
    tier_tables = [(policy.tier_window_bonus_days, "+{} days"), (policy.restocking_tier_share_percent, "{}%"),
                   (policy.free_shipping_threshold_cents, None), (policy.expedited_tier_share_percent, "{}%"),
                   (policy.price_match_days, "{} days"), (policy.tier_warranty_bonus_months, "+{} months")]
    tier_tables += [(policy.return_shipping_fee_cents[m], None) for m in P.RETURN_METHODS]
    if set(policy.price_match_share_percent.values()) != {100}:
        tier_tables.append((policy.price_match_share_percent, "{}%"))
    for table, form in tier_tables:
        rendered = "; ".join(f"{P.TIER_NAMES[t]} members: {money(table[t]) if form is None else form.format(table[t])}"
                             for t in P.TIERS)
        assert rendered in text, rendered
    for method in P.SHIPPING_METHODS:
        days = policy.shipping_days[method]
        assert f"{method} {days} day{'s' if days != 1 else ''}, {money(policy.shipping_cost_cents[method])}" in text
    assert f"warehouse {policy.handling_days} day" in text
    assert "{" not in text and "}" not in text and "None" not in text


def test_every_section_is_found_first_by_its_title() -> None:
    index = policy_index()
    for section in index.sections:
        assert index.search(section.title)[0].section_id == section.section_id


@pytest.mark.slow
def test_policy_search_renders_the_episode_policy_and_nothing_else(catalog, search) -> None:
    """policy_search shows the rendering of the world's policy (a function of the policy and the catalog
    only, so no question-specific text can leak in); POLICY episodes each draw their own numbers, the
    other environments keep the default policy."""
    env = EcomEnv(["POLICY", "RETURN"], catalog=catalog, search=search)
    tool, query = TOOLS["policy_search"], "refund restocking fee"
    results = set()
    for seed in range(5):
        env.reset(env_id="POLICY", difficulty=9, seed=seed)
        ctx = env.audit().context
        result = tool.run(ctx, tool.validate({"query": query}))
        rendered = policy_index(catalog, ctx.world.policy).search(query)
        assert result["sections"] == [{"section_id": s.section_id, "title": s.title, "text": s.text} for s in rendered]
        results.add(repr(result))
    assert len(results) == 5
    env.reset(env_id="RETURN", difficulty=9, seed=0)
    assert env.audit().world.policy == P.STORE_POLICY


@pytest.mark.parametrize("status", ORDER_STATUSES)
@pytest.mark.parametrize("method", P.SHIPPING_METHODS)
def test_schedules_are_consistent_with_status(status: str, method: str) -> None:
    transit = P.STORE_POLICY.shipping_days[method]
    age = {"in_transit": max(1, transit - 1), "shipped": 0, "processing": 0}.get(status, 10)
    when = schedule(status, method, TODAY, age)
    assert when.placed <= TODAY
    if status in ("delivered", "returned"):
        assert when.delivered == TODAY - dt.timedelta(days=age) <= TODAY
        assert when.delivered - when.placed == dt.timedelta(days=P.STORE_POLICY.handling_days + transit)
    elif status in ("processing", "shipped", "in_transit"):
        assert when.delivered is None and when.eta is not None and when.eta >= TODAY
        assert when.eta - when.placed == dt.timedelta(days=P.STORE_POLICY.handling_days + transit)
    else:
        assert when.eta is None and when.shipped is None


@given(status=st.sampled_from(ORDER_STATUSES), method=st.sampled_from(P.SHIPPING_METHODS),
       today=st.dates(dt.date(1900, 1, 1), dt.date(2200, 1, 1)), age=st.integers(0, 400),
       handling=st.integers(0, 5))
def test_schedule_dates_are_timedelta_arithmetic_on_today(status, method, today, age, handling) -> None:
    """schedule() counts in day numbers; its dates are those of plain timedelta arithmetic."""
    policy = dataclasses.replace(P.STORE_POLICY, handling_days=handling)
    ago, ship, transit = (dt.timedelta(days=n) for n in (age, handling, policy.shipping_days[method]))
    event = today - ago
    expected = {"delivered": (event - transit - ship, event - transit, event, event),
                "returned": (event - transit - ship, event - transit, event, event),
                "processing": (event, None, None, event + ship + transit),
                "shipped": (event - ship, event, None, event + transit),
                "in_transit": (event - ship, event, None, event + transit),
                "cancelled": (event, None, None, None)}[status]
    assert tuple(schedule(status, method, today, age, policy)) == expected


def test_account_ids_are_opaque_deterministic_and_appended(catalog) -> None:
    def history(key):
        account = Account(key, TODAY)
        rng = random.Random(0)
        for i in range(6):
            account.place_order([(i, None, 1, 999), (i + 1, None, 2, 499)], "delivered", "standard", 5 + i, rng)
        return account

    one, two = history(("RETURN", 3, 1)), history(("RETURN", 3, 1))
    ids = [o.order_id for o in one.orders]
    assert ids == [o.order_id for o in two.orders]
    assert len(set(ids)) == 6 and all(re.fullmatch(r"O[0-9A-Z]{8}", i) for i in ids)
    assert ids != [o.order_id for o in history(("RETURN", 3, 2)).orders]
    line_ids = [line.line_id for o in one.orders for line in o.lines]
    assert len(set(line_ids)) == len(line_ids)
    assert not any(a[1:4] == b[1:4] for a, b in itertools.pairwise(ids))  # neighbours share no prefix pattern
    assert {o.carrier for o in one.orders} <= set(CARRIERS)


@settings(max_examples=30, deadline=None)
@given(key=st.tuples(st.sampled_from(["RETURN", "STATUS"]), st.integers(0, 15), st.integers(0, 10**6)),
       orders=st.lists(st.tuples(st.sampled_from(ORDER_STATUSES), st.integers(1, 3)), min_size=1, max_size=6),
       read_order=st.randoms(use_true_random=False))
def test_ids_made_on_first_read_are_the_keyed_ids_of_their_numbers(key, orders, read_order) -> None:
    """Line ids and tracking numbers are made lazily, in whatever order they are read, from their running numbers."""
    account, rng = Account(key, TODAY), random.Random(0)
    for status, lines in orders:
        account.place_order([(row, None, 1, 999) for row in range(lines)], status, "standard", 2, rng)
    ids = KeyedIds(*key)
    lines = [line for order in account.orders for line in order.lines]
    expected = {id(line): ids.make("OL", "order-line", number, length=6) for number, line in enumerate(lines)}
    read_order.shuffle(lines)
    assert all(line.line_id == expected[id(line)] for line in lines)
    for number, order in enumerate(account.orders):
        shipped = order.shipped is not None
        assert order.tracking == (ids.make("1Z", "tracking", number, length=12) if shipped else None)
        assert (order.carrier is not None) == shipped


@settings(max_examples=30, deadline=None)
@given(rows=st.lists(st.integers(0, 2999), min_size=1, max_size=20))
def test_order_line_products_are_the_catalogs_reads(catalog, rows) -> None:
    """The per-catalog table behind order line cards holds what the catalog says, kept or read anew."""
    ORDER_LINE_PRODUCTS.of(catalog).clear()
    for row in rows + rows:
        category = catalog.category_of(row)
        assert _line_product(catalog, row) == (catalog.product_id(row), catalog.title(row), category.name,
                                               P.rule_department(category.path[0]), short_title(catalog.title(row)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), exclude=st.sets(st.integers(0, 2999), max_size=40),
       denied=st.frozensets(st.integers(0, len(LEAVES) - 1), max_size=len(LEAVES) // 2))
def test_unfiltered_sample_row_is_the_plain_rejection_draw(catalog, seed, exclude, denied) -> None:
    """Without a filter sample_row skips the category test; the row and the draws are those of the plain loop."""
    world = World(catalog, ("RETURN", 3, seed), TODAY, denied_categories=denied)
    rng, reference = random.Random(seed), random.Random(seed)
    row = sample_row(world, rng, exclude=exclude)
    for _ in range(_SAMPLE_TRIES):  # most categories are allowed: one of these draws is taken
        expected = reference.randrange(len(catalog))
        if expected not in exclude and not world.is_denied(expected):
            break
    assert row == expected and rng.getstate() == reference.getstate()


@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(0, 2999), st.integers(0, 2999)), min_size=1, max_size=20))
def test_same_noun_compares_product_types(catalog, pairs) -> None:
    world = World(catalog, ("STATUS", 3, 0), TODAY)
    for row, other in pairs + [(row, row) for row, _ in pairs]:
        assert same_noun(world, row, other) == same_type(product_type(catalog, row), product_type(catalog, other))


def test_account_is_created_lazily(catalog) -> None:
    world = World(catalog, ("CART", 0, 0), TODAY)
    assert world._account is None
    profile = world.account.profile
    assert profile.tier in P.TIERS and world.account is world.account
    assert World(catalog, ("CART", 0, 0), TODAY).account.profile == profile


def test_cart_episodes_never_build_an_account(catalog, search) -> None:
    env = EcomEnv("CART", catalog=catalog, search=search)
    env.reset(env_id="CART", difficulty=5, seed=1)
    assert env.audit().world._account is None


def _ctx(catalog, search, env_id: str = "RETURN", d: int = 6, seed: int = 0):
    env = EcomEnv(env_id, catalog=catalog, search=search)
    env.reset(env_id=env_id, difficulty=d, seed=seed)
    return env, env.audit().context


def _run(ctx, name: str, **arguments):
    tool = TOOLS[name]
    return tool.run(ctx, tool.validate(arguments))


def test_order_tools_surface_order_and_line_ids(catalog, search) -> None:
    _env, ctx = _ctx(catalog, search)
    orders = _run(ctx, "order_list")["orders"]
    surfaced = ctx.surfaced_ids()
    assert {o["order_id"] for o in orders} <= surfaced
    assert all("line_id" not in item for o in orders for item in o["items"])
    details = _run(ctx, "order_get_details", order_id=orders[0]["order_id"])
    assert {line["line_id"] for line in details["lines"]} <= ctx.surfaced_ids()


def test_order_ids_in_the_customers_words_count_as_surfaced(catalog, search) -> None:
    env = EcomEnv("STATUS", catalog=catalog, search=search)
    env.reset(env_id="STATUS", difficulty=0, seed=4)
    assert env.audit().problem.goal.target.order_id in env.audit().surfaced_ids()


def test_account_tool_business_errors(catalog, search) -> None:
    _env, ctx = _ctx(catalog, search)
    with pytest.raises(ToolError) as unknown:
        _run(ctx, "order_get_details", order_id="O00000000")
    assert unknown.value.code == "unknown_order"
    order = ctx.world.account.orders[0]
    with pytest.raises(ToolError) as bad_line:
        _run(ctx, "return_check_eligibility", order_id=order.order_id, line_id="OL000000")
    assert bad_line.value.code == "unknown_line"


def test_return_initiate_refuses_what_the_engine_refuses_and_records_the_rest(catalog, search) -> None:
    for seed in range(40):
        _env, ctx = _ctx(catalog, search, d=10, seed=seed)
        account = ctx.world.account
        for order in account.orders:
            for line in order.lines:
                verdict = account.verdict(ctx.world.catalog, order, line)
                checked = _run(ctx, "return_check_eligibility", order_id=order.order_id, line_id=line.line_id)
                assert checked["eligible"] == verdict.eligible and checked["code"] == verdict.code
                if verdict.eligible:
                    started = _run(ctx, "return_initiate", order_id=order.order_id, line_id=line.line_id,
                                   reason="defective")
                    assert started["status"] == "return_started" and account.is_returned(line.line_id)
                    with pytest.raises(ToolError):  # a second return of the same line
                        _run(ctx, "return_initiate", order_id=order.order_id, line_id=line.line_id, reason="defective")
                else:
                    with pytest.raises(ToolError) as refused:
                        _run(ctx, "return_initiate", order_id=order.order_id, line_id=line.line_id, reason="defective")
                    assert refused.value.code == f"not_eligible_{verdict.code}"


def test_the_return_reason_is_a_closed_vocabulary(catalog, search) -> None:
    from ecomrlve.tools import ToolArgumentsError
    with pytest.raises(ToolArgumentsError):
        TOOLS["return_initiate"].validate({"order_id": "O1", "line_id": "OL1", "reason": "because"})


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10_000_00), st.sampled_from(P.TIERS), st.sampled_from(sorted(DEPARTMENT_OF)),
       st.integers(0, 400), st.booleans(), st.sampled_from(P.RETURN_REASONS), st.sampled_from(P.RETURN_METHODS))
def test_refund_is_bounded_by_the_price(price, tier, category, days, opened, reason, method) -> None:
    refund = P.refund_cents(category=category, department=DEPARTMENT_OF[category], tier=tier, days_since_delivery=days, opened=opened, reason=reason,
                            method=method, price_cents=price)
    assert 0 <= refund <= price


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["O", "O1234ABCD", "XO1234ABCD", "O1234ABCDE", "o1234abcd", "0", "Z", "9", " ", ".",
                                 "-", "_", "é", "Ö", "\n", "#"]), max_size=12).map("".join))
def test_order_id_pattern_matches_the_plain_word_bounded_pattern(text: str) -> None:
    """ORDER_ID checks its leading word boundary after the "O" (a speed-up): same matches as ``\\bO...\\b``."""
    plain = re.compile(r"\bO[0-9A-Z]{8}\b")
    assert [m.span() for m in ORDER_ID.finditer(text)] == [m.span() for m in plain.finditer(text)]
