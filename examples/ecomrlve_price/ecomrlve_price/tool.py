"""The tool PRICE brings: the store's quote for some units of a product, bulk discount included."""

from __future__ import annotations

from typing import Any

from ecomrlve.tools import ToolContext, ToolError, tool

BULK_UNITS = 3  # from this many units the quote takes BULK_PERCENT off
BULK_PERCENT = 10


def quote_total(unit_price: float, units: int) -> float:
    """The quoted total in dollars: units x price, less the bulk discount."""
    percent = BULK_PERCENT if units >= BULK_UNITS else 0
    return round(unit_price * units * (100 - percent) / 100, 2)


@tool(id_arguments=("product_id",))
def price_quote(ctx: ToolContext, product_id: str, units: int) -> dict[str, Any]:
    """The store's price quote for some units of one product (10% off from 3 units).

    Args:
        product_id: The product's id, as search results and the shopper show it.
        units: How many units to quote, 1 to 20.
    """
    row = ctx.world.catalog.index_of(product_id)
    if row is None:
        raise ToolError("unknown_product", f"No product with id {product_id!r}.")
    if not 1 <= units <= 20:
        raise ToolError("bad_units", "Quotes are for 1 to 20 units.")
    ctx.surface([row], "price_quote")
    unit_price = ctx.world.catalog.price(row)
    return {"product_id": product_id, "unit_price": unit_price, "units": units,
            "discount_percent": BULK_PERCENT if units >= BULK_UNITS else 0, "total": quote_total(unit_price, units)}
