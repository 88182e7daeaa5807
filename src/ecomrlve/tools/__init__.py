"""The tool registry: every tool an environment can expose, by name."""

from ecomrlve.tools.base import Tool, ToolArgumentsError, ToolContext, ToolError, answer_tool, tool
from ecomrlve.tools.cart import cart_add, cart_remove, cart_set_quantity, cart_view
from ecomrlve.tools.catalog import catalog_get_product, catalog_get_variants, catalog_search, product_card
from ecomrlve.tools.user import ask_user, user_get_visit_history

TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (catalog_search, catalog_get_product, catalog_get_variants, cart_add, cart_remove,
              cart_set_quantity, cart_view, user_get_visit_history, ask_user)
}

__all__ = ["TOOLS", "Tool", "ToolArgumentsError", "ToolContext", "ToolError", "answer_tool", "product_card", "tool"]
