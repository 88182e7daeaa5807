"""Account tools: the customer's profile, orders and returns.

Eligibility and fees come from the store policy's rule engine (:mod:`ecomrlve.world.policy`)
through :meth:`~ecomrlve.world.account.Account.verdict`, the same function the RETURN
generator and verifier use. ``order_list`` surfaces order ids and ``order_get_details`` the
line ids of the order it shows (for ``r_hall``).
"""

from __future__ import annotations

from typing import Any

from ecomrlve.catalog.derived import Derived, derived, kept_per_product
from ecomrlve.catalog.schema import Catalog
from ecomrlve.protocol import compact_float, short_title
from ecomrlve.tools.base import ToolContext, ToolError, ToolOutput, tool
from ecomrlve.world.account import Order, OrderLine
from ecomrlve.world.policy import (
    RETURN_METHODS,
    ReturnReason,
    restocking_fee_cents,
    return_shipping_fee_cents,
    rule_department,
)
from ecomrlve.world.state import World

# -- how orders are shown ----------------------------------------------------------------------------

def department(world: World, row: int) -> str:
    """The policy department (rule row) of a product, from its catalog category (see :func:`rule_department`)."""
    return rule_department(world.catalog.category_of(row).path[0])


def _line_product(catalog: Catalog, row: int) -> tuple[str, str, str, str, str]:
    """The product's id, title, category, policy department and spoken title, as order line cards show them
    (in full and compact): read once per product from the catalog (the department by the default policy, whose
    aliases never vary)."""
    return kept_per_product(catalog, ORDER_LINE_PRODUCTS, row, _read_line_product)


def _read_line_product(catalog: Catalog, row: int) -> tuple[str, str, str, str, str]:
    category = catalog.category_of(row)
    title = catalog.title(row)
    return catalog.product_id(row), title, category.name, rule_department(category.path[0]), short_title(title)


ORDER_LINE_PRODUCTS: Derived[dict[int, tuple[str, str, str, str, str]]] = derived("order_line_products",
                                                                                   lambda catalog: {})


def _line_card(world: World, line: OrderLine, with_id: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """An order line's card and its compact form (the spoken title, a whole price without ``.0``)."""
    product_id, title, category, dept, spoken = _line_product(world.catalog, line.row)
    price = line.unit_price_cents / 100
    card: dict[str, Any] = {"product_id": product_id, "title": title, "category": category, "department": dept,
                            "quantity": line.quantity, "unit_price": price}
    if with_id:
        card = {"line_id": line.line_id, **card}
    compact = card.copy()
    compact["title"] = spoken
    compact["unit_price"] = compact_float(price)
    if line.variant_id is not None:
        variant = world.variant(line.row, line.variant_id)
        if variant is not None:
            card["variant"] = compact["variant"] = variant.card()  # (one dict: the compact walk's copy of it)
    return card, compact


def _dates(order: Order) -> dict[str, Any]:
    out: dict[str, Any] = {"order_date": order.placed.isoformat()}
    if order.delivered is not None:
        out["delivered_on"] = order.delivered.isoformat()
    elif order.eta is not None and order.status in ("processing", "shipped", "in_transit"):
        out["eta"] = order.eta.isoformat()
    return out


def order_summary(world: World, order: Order) -> tuple[dict[str, Any], dict[str, Any]]:
    """One row of ``order_list`` (id, dates, status and the items, without line ids) and its compact form."""
    summary = {"order_id": order.order_id, "status": order.status, **_dates(order)}
    compact = summary.copy()
    cards = [_line_card(world, line, False) for line in order.lines]
    summary["items"] = [card for card, _ in cards]
    compact["items"] = [line for _, line in cards]
    return summary, compact


def order_details(world: World, order: Order) -> tuple[dict[str, Any], dict[str, Any]]:
    """``order_get_details`` (everything about one order, with line ids and return state per line) and its compact
    form."""
    account = world.account
    lines, compact_lines = [], []
    for line in order.lines:
        card, compact = _line_card(world, line, with_id=True)
        card["returned"] = compact["returned"] = account.is_returned(line.line_id)
        lines.append(card)
        compact_lines.append(compact)
    subtotal = sum(line.unit_price_cents * line.quantity for line in order.lines) / 100
    head = {"order_id": order.order_id, "status": order.status, **_dates(order), "shipping_method": order.shipping_method}
    details = head | {"lines": lines, "subtotal": subtotal}
    compact_details = head | {"lines": compact_lines, "subtotal": compact_float(subtotal)}
    if order.shipped is not None:
        shipment = {"shipped_on": order.shipped.isoformat(), "carrier": order.carrier, "tracking": order.tracking}
        details.update(shipment)
        compact_details.update(shipment)
    return details, compact_details


# -- the tools ----------------------------------------------------------------------------------------

def _order(ctx: ToolContext, order_id: str) -> Order:
    order = ctx.world.account.order(order_id)
    if order is None:
        raise ToolError("unknown_order", f"No order with id {order_id!r} in this account.")
    return order


def _order_line(ctx: ToolContext, order_id: str, line_id: str) -> tuple[Order, OrderLine]:
    order = _order(ctx, order_id)
    line = order.line(line_id)
    if line is None:
        raise ToolError("unknown_line", f"Order {order_id} has no line {line_id!r}.")
    return order, line


@tool
def user_get_profile(ctx: ToolContext) -> dict[str, Any]:
    """The customer's account profile: name, membership tier, addresses and payment methods."""
    return ctx.world.account.profile.card()


@tool(written=True)
def order_list(ctx: ToolContext) -> ToolOutput:
    """The customer's orders, newest first: order id, order date, status, delivery date or ETA, and items (use order_get_details for line ids)."""
    world = ctx.world
    orders = sorted(world.account.orders, key=lambda o: o.placed, reverse=True)
    ctx.surface_account_ids((o.order_id for o in orders), "order_list")
    ctx.surface((line.row for o in orders for line in o.lines), "order_list")
    summaries = [order_summary(world, o) for o in orders]
    return ToolOutput({"orders": [summary for summary, _ in summaries]},
                      {"orders": [compact for _, compact in summaries]})


@tool(id_arguments=("order_id",), written=True)
def order_get_details(ctx: ToolContext, order_id: str) -> ToolOutput:
    """Full details of one order: status, dates, carrier and tracking, and its lines with line ids, prices and return state.

    Args:
        order_id: An order id such as "O4K7M2Q9X", as shown by order_list.
    """
    order = _order(ctx, order_id)
    ctx.surface_account_ids((line.line_id for line in order.lines), "order_get_details")
    ctx.surface((line.row for line in order.lines), "order_get_details")
    return ToolOutput(*order_details(ctx.world, order))


@tool(id_arguments=("order_id", "line_id"), written=True)
def return_check_eligibility(ctx: ToolContext, order_id: str, line_id: str) -> ToolOutput:
    """Check whether one order line can be returned today under the store policy, and the fees that would apply.

    Args:
        order_id: The order id.
        line_id: The line id within that order, as shown by order_get_details.
    """
    world = ctx.world
    order, line = _order_line(ctx, order_id, line_id)
    verdict = world.account.verdict(world.catalog, order, line)
    world.account.verdicts_shown.append(line.line_id)
    result: dict[str, Any] = {"order_id": order_id, "line_id": line_id, "eligible": verdict.eligible,
                              "code": verdict.code, "explanation": verdict.explanation()}
    if verdict.window_days is not None and verdict.deadline is not None:  # set together
        result.update({"return_window_days": verdict.window_days, "last_return_day": verdict.deadline.isoformat()})
    if not verdict.eligible:
        return ToolOutput(result, dict(result))  # (every value written as it is)
    tier = world.account.profile.tier
    price = line.unit_price_cents * line.quantity
    dept = department(world, line.row)
    restocking = restocking_fee_cents(dept, tier, True, "no_longer_needed", price, world.policy) / 100
    shipping = {m: return_shipping_fee_cents(m, tier, "no_longer_needed", world.policy) / 100 for m in RETURN_METHODS}
    reasons = world.policy.store_fault_reasons
    # the compact form: the fees written by compact_float, the rest as it is (no card, no variants, no list of them)
    compact = result | {"fees_usd_if_not_store_fault": {"restocking_fee_if_opened": compact_float(restocking),
                                                    "return_shipping": {m: compact_float(fee)
                                                                        for m, fee in shipping.items()}},
                        "fee_free_reasons": list(reasons)}
    result["fees_usd_if_not_store_fault"] = {"restocking_fee_if_opened": restocking, "return_shipping": shipping}
    result["fee_free_reasons"] = list(reasons)
    return ToolOutput(result, compact)


@tool(mutates=True, id_arguments=("order_id", "line_id"), irreversible=True)
def return_initiate(ctx: ToolContext, order_id: str, line_id: str, reason: ReturnReason) -> dict[str, Any]:
    """Start the return of one order line (only if it is eligible); the customer gets a prepaid label by email.

    Args:
        order_id: The order id.
        line_id: The line id within that order, as shown by order_get_details.
        reason: Why the customer returns it: defective, damaged, wrong_item, not_as_described or no_longer_needed.
    """
    world = ctx.world
    order, line = _order_line(ctx, order_id, line_id)
    verdict = world.account.verdict(world.catalog, order, line)
    if not verdict.eligible:
        world.account.verdicts_shown.append(line.line_id)
        raise ToolError(f"not_eligible_{verdict.code}", verdict.explanation())
    tier = world.account.profile.tier
    price = line.unit_price_cents * line.quantity
    fees = return_shipping_fee_cents("mail", tier, reason, world.policy)
    record = world.account.record_return(order, line, reason, max(0, price - fees))
    return {"status": "return_started", "return_id": record.return_id, "order_id": order_id, "line_id": line_id,
            "reason": reason, "label": "prepaid mail label sent by email",
            "refund_before_restocking_fee": record.refund_cents / 100}
