"""Catalog tools: search, product details, variants."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any, Literal, get_args

from pydantic import Field, create_model

from ecomrlve.catalog.derived import Derived, derived, kept_per_products
from ecomrlve.catalog.filters import ProductFilter
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import SortBy, inject_distractors
from ecomrlve.catalog.taxonomy import NUMERIC_ATTRIBUTES
from ecomrlve.catalog.variants import variant_attributes
from ecomrlve.protocol import RowPieces, table_of_pieces, table_row_pieces
from ecomrlve.tools.base import Tool, ToolContext, ToolError, ToolOutput, tool
from ecomrlve.world.state import World, variant_cards_of

DEFAULT_TOP_K = 4  # a default search result stays under 400 tokens (docs/observations.md)


def _read_catalog_cards(catalog: Catalog, rows: list[int]) -> list[tuple[dict[str, Any], dict[str, str | float]]]:
    """Per row, the card fields only the catalog decides (all but stock and variants) and the product's
    attributes but the one its variants vary: read once per product (:func:`product_cards`), then copied
    for each card."""
    return list(zip(catalog.summaries(rows), catalog.attributes_each(rows, omit=variant_attributes(catalog, rows))))


CATALOG_CARDS: Derived[dict[int, tuple[dict[str, Any], dict[str, str | float]]]] = derived("catalog_cards", lambda catalog: {})


def _read_catalog_rows(catalog: Catalog, rows: list[int]) -> list[tuple[dict[str, Any], dict[str, str | float],
                                                                        RowPieces | None]]:
    """Per row, the product's card fields kept per product (:data:`CATALOG_CARDS`) and what a compact table row
    shows of them (:func:`table_row_pieces`): the catalog decides every field it holds, so it is kept per product
    like the card fields themselves, and a page of cards with its table reads one memo."""
    return [(head, attributes, table_row_pieces(head, attributes))
            for head, attributes in kept_per_products(catalog, CATALOG_CARDS, rows, _read_catalog_cards)]


CATALOG_ROWS: Derived[dict[int, tuple[dict[str, Any], dict[str, str | float], RowPieces | None]]] = derived(
    "catalog_rows", lambda catalog: {})


def _read_catalog_heads(catalog: Catalog, rows: list[int]) -> list[tuple[dict[str, Any], dict[str, str | float]]]:
    """Per row, the card fields only the catalog decides (:func:`_read_catalog_cards`) with no attributes: the
    cards of an environment that hides them read none (nor which attribute the variants vary)."""
    return [(head, {}) for head in catalog.summaries(rows)]


CATALOG_HEADS: Derived[dict[int, tuple[dict[str, Any], dict[str, str | float]]]] = derived("catalog_heads",
                                                                                          lambda catalog: {})


def product_cards(world: World, rows: Sequence[int]) -> list[dict[str, Any]]:
    """The bounded summaries of products that search results and lookups show, in order: what the catalog
    decides kept per product, the stock and variants read of the episode, each in one call for all ``rows``."""
    return _product_cards(world, rows, with_rows=False)[0]


def _product_cards(world: World, rows: Sequence[int], with_rows: bool,
                   with_attributes: bool = True) -> tuple[list[dict[str, Any]], dict[str, Any] | list[Any] | None]:
    """:func:`product_cards`, and (``with_rows``) the cards' compact table (:func:`table_of_pieces`, ``[]`` for no
    cards) from the pieces kept per product; None when a product has none or a row is not made of them. Without
    ``with_attributes`` (and the table) the cards' ``attributes`` are empty, read of no product."""
    catalog = world.catalog
    # (with the table: the card fields and the rows' pieces from one memo)
    kept = kept_per_products(catalog, CATALOG_ROWS, rows, _read_catalog_rows) if with_rows else None
    fixed: Sequence[tuple[Any, ...]] = kept if kept is not None else kept_per_products(
        catalog, CATALOG_CARDS if with_attributes else CATALOG_HEADS, rows,
        _read_catalog_cards if with_attributes else _read_catalog_heads)
    listings = world.listings(rows)
    cards: list[dict[str, Any]] = []
    for (head, attributes, *_), (stock, draw) in zip(fixed, listings):
        card: dict[str, Any] = {**head, "in_stock": stock > 0, "stock": stock, "attributes": dict(attributes)}
        if draw[1]:
            card["variants"] = variant_cards_of(draw)
        cards.append(card)
    if kept is None:
        return cards, None
    if not cards:
        return cards, []
    return cards, table_of_pieces([pieces for _, _, pieces in kept], listings)


def shown_cards(ctx: ToolContext, rows: Sequence[int]) -> list[dict[str, Any]]:
    """:func:`product_cards` as the environment's tools show them: without its ``unused_card_fields`` (hidden
    ``attributes`` are left empty, so every card keeps the shape the protocol reads)."""
    hidden = ctx.hidden_card_fields
    if not hidden:
        return product_cards(ctx.world, rows)
    found = _product_cards(ctx.world, rows, with_rows=False, with_attributes="attributes" not in hidden)[0]
    empty: dict[str, Any] = {"attributes": {}} if "attributes" in hidden else {}
    return [{key: value for key, value in card.items() if key not in hidden} | empty for card in found]


def shown_listing(ctx: ToolContext, key: str, rows: Sequence[int], extra: dict[str, Any]) -> ToolOutput:
    """``{key: shown_cards(ctx, rows), **extra}`` and its compact form, built from the cards' rows (a table;
    ``extra`` says nothing the compact form shows) where results are written compact, every product's pieces are
    kept and the environment hides no card field; else without (the compact form derived from the result)."""
    if ctx.hidden_card_fields or not ctx.compact_results:
        return ToolOutput({key: shown_cards(ctx, rows), **extra})
    cards, table = _product_cards(ctx.world, rows, with_rows=True)
    if table is None:
        return ToolOutput({key: cards, **extra})
    return ToolOutput({key: cards, **extra}, {key: table})


def product_card(world: World, row: int) -> dict[str, Any]:
    """The bounded summary of a product that search results and lookups show (:func:`product_cards`)."""
    return product_cards(world, (row,))[0]


def resolve_product(ctx: ToolContext, product_id: str) -> int:
    row = ctx.world.catalog.index_of(product_id)
    if row is None:
        raise ToolError("unknown_product", f"No product with id {product_id!r}.")
    return row


@tool(axes=("top_k", "eps_rank"), written=True)
def catalog_search(ctx: ToolContext, query: str, filters: ProductFilter | None = None,
                   sort_by: SortBy = "relevance", top_k: int | None = None) -> ToolOutput:
    """Search product cards; a variant attribute filter matches a product with such a variant.

    Args:
        filters: Conditions every result meets.
        sort_by: relevance is imperfect; the others sort exactly what the query words match (all the filters allow if none).
        top_k: Results (default 4; capped).
    """
    cap = ctx.difficulty.top_k
    k = DEFAULT_TOP_K if top_k is None else top_k
    if k < 1:
        raise ToolError("invalid_top_k", "top_k must be at least 1.")
    k = min(k, cap)
    overrides = ctx.world.stock_overrides
    allowed = None if filters is None else ctx.search.allowed(filters, overrides)
    found = ctx.search.search(query, filters, sort_by, k, overrides, allowed)
    if sort_by == "relevance":  # the store's ranking is imperfect; an explicit order is exact
        rows, _ = inject_distractors(found.tolist(), ctx.world.catalog, ctx.difficulty.eps_rank, k, ctx.search_rng,
                                     allowed)
    else:
        rows = found.tolist()
    ctx.surface(rows, "catalog_search")
    # (the compact form leaves out the count, the number of results, and the cap)
    return shown_listing(ctx, "results", rows, {"count": len(rows), "top_k_cap": cap})


#: the card field each filter or order of ``catalog_search`` selects by (a numeric attribute is never a variant's,
#: so it is on a card only among the ``attributes``; the categorical ones may be a variant's, on every card)
_SELECTS_BY = {"price_min": "price", "price_max": "price", "rating_min": "rating", "ship_days_max": "ship_days",
               "price_asc": "price", "price_desc": "price", "rating": "rating", "ship_days": "ship_days",
               **{f"{name}_{bound}": "attributes" for name in NUMERIC_ATTRIBUTES for bound in ("min", "max")}}


@functools.cache
def _search_without(hidden: frozenset[str]) -> Tool:
    """``catalog_search`` without the filters and orders on card fields an environment does not show: they would
    select by facts the agent cannot read, and cost prompt tokens. A filter given is checked against the
    narrower model, then searched as a :class:`ProductFilter`; with relevance the only order left, there is no
    ``sort_by``."""
    dropped = {option for option, field in _SELECTS_BY.items() if field in hidden}
    if not dropped:
        return catalog_search
    conditions = {name: (info.annotation, info) for name, info in ProductFilter.model_fields.items() if name not in dropped}
    narrow = create_model("ProductFilter", __config__=ProductFilter.model_config, __doc__=ProductFilter.__doc__,
                          **conditions)  # type: ignore[call-overload]
    orders = tuple(order for order in get_args(SortBy) if order not in dropped)
    fields: dict[str, Any] = {}
    for name, info in catalog_search.arguments.model_fields.items():
        if name == "filters":
            fields[name] = (narrow | None, Field(None, description=info.description))
        elif name != "sort_by":
            fields[name] = (info.annotation, info)
        elif len(orders) > 1:
            fields[name] = (Literal[orders], Field("relevance", description=info.description))
    arguments = create_model("catalog_search_arguments", __config__=catalog_search.arguments.model_config, **fields)

    def handler(ctx: ToolContext, query: str, filters: Any = None, sort_by: SortBy = "relevance",
                top_k: int | None = None) -> dict[str, Any]:
        full = None if filters is None else ProductFilter.model_validate(filters.model_dump(exclude_unset=True))
        return catalog_search.handler(ctx, query, full, sort_by, top_k)

    # (no written form: an environment that hides card fields gets a compact form derived from the result)
    return dataclasses.replace(catalog_search, arguments=arguments, handler=handler, narrowed=None, written=None)


catalog_search = dataclasses.replace(catalog_search, narrowed=_search_without)


@tool
def catalog_get_product(ctx: ToolContext, product_id: str) -> dict[str, Any]:
    """One product's card with its full title."""
    row = resolve_product(ctx, product_id)
    [card] = shown_cards(ctx, (row,))
    category = ctx.world.catalog.category_of(row)
    card["category_path"] = list(category.path)
    return card


@tool
def catalog_get_variants(ctx: ToolContext, product_id: str) -> dict[str, Any]:
    """A product's variants with their ids (also on its card)."""
    return {"product_id": product_id, "variants": ctx.world.variant_cards(resolve_product(ctx, product_id))}
