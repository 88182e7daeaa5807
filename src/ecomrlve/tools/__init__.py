"""The tool registry: every tool an environment can expose, by name."""

from ecomrlve.tools.account import (
    order_get_details,
    order_list,
    return_check_eligibility,
    return_initiate,
    user_get_profile,
)
from ecomrlve.tools.base import Tool, ToolArgumentsError, ToolContext, ToolError, ToolOutput, answer_tool, tool
from ecomrlve.tools.cart import cart_add, cart_set_quantity, cart_view
from ecomrlve.tools.catalog import catalog_get_product, catalog_get_variants, catalog_search, product_card
from ecomrlve.tools.policy import policy_search
from ecomrlve.tools.user import ask_user, user_get_visit_history

TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (catalog_search, catalog_get_product, catalog_get_variants, cart_add,
              cart_set_quantity, cart_view, user_get_visit_history, ask_user,
              user_get_profile, order_list, order_get_details, return_check_eligibility, return_initiate,
              policy_search)
}

__all__ = ["TOOLS", "Tool", "ToolArgumentsError", "ToolContext", "ToolError", "ToolOutput", "answer_tool", "product_card",
           "tool"]
