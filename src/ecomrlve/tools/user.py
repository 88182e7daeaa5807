"""Tools about the shopper: their browsing history, and talking to them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ecomrlve.tools.base import ToolContext, ToolOutput, tool
from ecomrlve.tools.catalog import shown_listing

MAX_QUESTION_CHARS = 2_000


@tool(written=True)
def user_get_visit_history(ctx: ToolContext) -> ToolOutput:
    """The customer's recently viewed products, newest first."""
    rows = ctx.world.visit_history
    ctx.surface(rows, "user_get_visit_history")
    return shown_listing(ctx, "viewed", rows, {})


@tool
def ask_user(ctx: ToolContext, question: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS)]) -> dict[str, Any]:
    """Ask the customer; returns their reply."""
    return {"user_reply": ctx.ask_user(question)}
