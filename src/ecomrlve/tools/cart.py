"""Cart tools. Every cart tool returns the whole cart (:func:`cart_summary`), so none is needed to look at it."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ecomrlve.tools.base import ToolContext, ToolError, tool
from ecomrlve.tools.catalog import resolve_product
from ecomrlve.world.state import CartLine

MAX_QUANTITY = 99
Quantity = Annotated[int, Field(ge=1, le=MAX_QUANTITY)]
NewQuantity = Annotated[int, Field(ge=0, le=MAX_QUANTITY)]  # 0 removes the line


def cart_summary(ctx: ToolContext, *, observer: bool = False) -> dict[str, Any]:
    """The cart as every cart tool returns it: one entry per line (product id, quantity, and the variant's id and
    value beside them, no nested object) and the total. The product's title is on its card, so a line does not
    repeat it; prices are left out where the environment's cards show none. ``observer``: with titles and prices
    (the session's state, for people watching)."""
    catalog = ctx.world.catalog
    priced = observer or "price" not in ctx.hidden_card_fields
    lines = []
    total = 0
    for line in ctx.world.cart.lines:
        price = int(catalog.price_cents[line.row])
        total += price * line.quantity
        entry: dict[str, Any] = {"line_id": line.line_id, "product_id": catalog.product_id(line.row)}
        if observer:
            entry["title"] = catalog.title(line.row)
        entry["quantity"] = line.quantity
        if priced:
            entry["unit_price"] = price / 100
        if line.variant_id is not None:
            variant = ctx.world.variant(line.row, line.variant_id)
            entry.update(variant.card() if variant else {"variant_id": line.variant_id})
        lines.append(entry)
    return {"lines": lines, "total": total / 100} if priced else {"lines": lines}


def _line(ctx: ToolContext, line_id: str) -> CartLine:
    line = ctx.world.cart.get(line_id)
    if line is None:
        raise ToolError("unknown_line", f"The cart has no line {line_id!r}.")
    return line


@tool(mutates=True, id_arguments=("product_id", "variant_id"))
def cart_add(ctx: ToolContext, product_id: str, quantity: Quantity = 1, variant_id: str | None = None) -> dict[str, Any]:
    """Add to the cart; returns the whole cart.

    Args:
        variant_id: Required when the product has variants.
    """
    world = ctx.world
    row = resolve_product(ctx, product_id)
    variants = world.variants(row)
    if variant_id is not None and world.variant(row, variant_id) is None:
        raise ToolError("unknown_variant", f"Product {product_id} has no variant {variant_id!r}.")
    if variant_id is None and variants:
        raise ToolError("variant_required", f"Product {product_id} comes in variants; pass one of "
                        f"{[v.variant_id for v in variants]} as variant_id.")
    if world.stock(row) < quantity:
        if world.stock(row) == 0:
            raise ToolError("out_of_stock", f"Product {product_id} is out of stock.")
        raise ToolError("insufficient_stock", f"Only {world.stock(row)} units of {product_id} are available.")
    world.cart.add(row, variant_id, quantity)
    return cart_summary(ctx)


@tool(mutates=True)
def cart_set_quantity(ctx: ToolContext, line_id: str, quantity: NewQuantity) -> dict[str, Any]:
    """Set a cart line's quantity (0 removes the line); returns the whole cart."""
    line = _line(ctx, line_id)
    if quantity == 0:
        ctx.world.cart.remove(line_id)
    elif ctx.world.stock(line.row) < quantity:
        raise ToolError("insufficient_stock", f"Only {ctx.world.stock(line.row)} units are available.")
    else:
        line.quantity = quantity
    return cart_summary(ctx)


@tool
def cart_view(ctx: ToolContext) -> dict[str, Any]:
    """Show the cart's lines and total."""
    return cart_summary(ctx)
