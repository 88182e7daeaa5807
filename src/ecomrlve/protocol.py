"""What passes between an agent and an episode: observations, the agent protocol, result helpers.

A leaf module (it imports only :mod:`ecomrlve.actions`), so environments, agents, the runtime and
integrations can all depend on it without depending on each other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any, Literal, NamedTuple, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field

from ecomrlve.actions import AgentAction, json_text_encoder


class Observation(BaseModel):
    """What the agent sees after ``reset`` or ``step``.

    ``messages`` are the new chat messages since the last step in OpenAI format: on reset the
    system prompt and the user's opening; on step one ``tool`` message per call (JSON content,
    with ``tool_call_id``) and/or one ``user`` message. ``tools`` (reset only) are the OpenAI
    function schemas. ``reward`` is 0 until ``done``; the final ``info["reward"]`` holds the
    breakdown. The hidden goal is never here.
    """

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    done: bool = False
    reward: float = 0.0
    info: dict[str, Any] = Field(default_factory=dict)


class Agent(Protocol):
    """Receives every observation (the first from ``reset``) and returns one assistant turn."""

    def act(self, observation: Observation) -> AgentAction | str | dict[str, Any]: ...


def tool_results(observation: Observation) -> Iterator[tuple[str, dict[str, Any]]]:
    """(tool name, decoded result) for each tool message in an observation, in either verbosity: cards
    come back as dicts with the full card's key names (:func:`expand_result`)."""
    for message in observation.messages:
        if message["role"] == "tool":
            yield message["name"], expand_result(json.loads(message["content"]))


def user_text(observation: Observation) -> str:
    """The user's words in an observation: their message and replies to ``ask_user``."""
    parts = [m["content"] for m in observation.messages if m["role"] == "user"]
    parts += [r["user_reply"] for name, r in tool_results(observation) if name == "ask_user" and "user_reply" in r]
    return " ".join(parts)


def cards(observation: Observation) -> Iterator[dict[str, Any]]:
    """Every product card in an observation's tool results (search, history, lookups)."""
    for name, result in tool_results(observation):
        if name == "catalog_search":
            yield from result.get("results", [])
        elif name == "user_get_visit_history":
            yield from result.get("viewed", [])
        elif name == "catalog_get_product" and "product_id" in result:
            yield result


# -- how tool results are written for the agent --------------------------------------------------------

#: How tool results are written: ``compact`` (the default: product cards as tables, what a model is
#: trained on) or ``full`` (one dict per card, every field spelled out; for reading by eye). The same
#: facts either way: the verbosity changes no tool, shopper or verifier, so it is not part of the episode key.
Verbosity = Literal["compact", "full"]
VERBOSITIES: tuple[str, ...] = get_args(Verbosity)
DEFAULT_VERBOSITY: Verbosity = "compact"

#: a product card's own fields; any other column of a compact table is one of the card's attributes
CARD_FIELDS = frozenset({"product_id", "title", "brand", "category", "category_path", "price", "rating",
                         "rating_count", "ship_days", "in_stock", "stock", "attributes", "variants",
                         "variant_attribute"})
_TABLE_KEYS = frozenset({"columns", "rows"})
#: a compact table's shared variant values (under ``same``): each row's ``variants`` is then its ids, in that order
VARIANT_VALUES = "variant_values"


def short_title(title: str) -> str:
    """A listing title's first clause ("Brightix Nova 21 Charger, GaN, 65W" -> "Brightix Nova 21
    Charger"): the one rule for naming a product in conversation (and on a compact card), for code
    that has only a title."""
    return title.split(",")[0]


#: The types :func:`compact_result` writes as they are (not subclasses: those take the general path).
_AS_IS = frozenset({str, int, bool, type(None)})


def _is_card(value: Any) -> bool:
    return isinstance(value, dict) and "product_id" in value and "stock" in value


def _compact_variants(node: dict[str, Any]) -> dict[str, Any]:
    """``variants: [{variant_id, <attribute>: value}, ...]`` as ``variant_attribute`` + ``variants: {id: value}``."""
    compacted = _variants_by_id(node.get("variants"))
    if compacted is None:
        return node
    attribute, variants = compacted
    return {**node, "variant_attribute": attribute, "variants": variants}


def _variants_by_id(variants: Any) -> tuple[str, dict[str, Any]] | None:
    """A list of variants as (their one varied attribute, ``{variant_id: value}``); None when not one varied
    attribute per variant (spelled out as it is)."""
    if not isinstance(variants, list) or not variants:
        return None
    first = variants[0]
    if type(first) is dict and len(first) == 2 and "variant_id" in first:  # as the tools write them: one pass
        key, other = first
        attribute = other if key == "variant_id" else key
        by_id = {}
        for variant in variants:
            if type(variant) is not dict or len(variant) != 2 or attribute not in variant or "variant_id" not in variant:
                break
            by_id[variant["variant_id"]] = variant[attribute]
        else:
            return attribute, by_id
    attributes = {key for variant in variants for key in variant if key != "variant_id"}
    if len(attributes) != 1 or any(len(variant) != 2 for variant in variants):
        return None
    [attribute] = attributes
    return attribute, {variant["variant_id"]: variant[attribute] for variant in variants}


def _compact_card(card: dict[str, Any], *, in_table: bool) -> dict[str, Any]:
    """A card without what the agent can read elsewhere: ``in_stock`` (``stock > 0``); in a list of
    cards, the spoken title (the full one is behind ``catalog_get_product``)."""
    out = dict(card)  # a copy, which the caller may change
    out.pop("in_stock", None)
    compacted = _variants_by_id(out.get("variants"))
    if compacted is not None:
        out["variant_attribute"], out["variants"] = compacted
    if in_table and isinstance(out.get("title"), str):
        out["title"] = short_title(out["title"])
    return out


def _table(cards: list[dict[str, Any]]) -> dict[str, Any]:
    """Cards as one row each under one header; a value every card shares is said once under ``same``."""
    return table_of_rows([table_row(card) for card in cards])


def table_row(card: dict[str, Any]) -> dict[str, Any]:
    """A card as a row of a table (a fresh dict; values not compacted yet): its compact card under its spoken
    title, with its attributes as fields of their own (unless one is named like a card field)."""
    row = _compact_card(card, in_table=True)  # a fresh dict: flattened in place
    attributes = row.get("attributes")
    if isinstance(attributes, dict) and not CARD_FIELDS.intersection(attributes):
        del row["attributes"]
        row.update(attributes)
    return row


#: the fields of a card that :func:`table_row_pieces` leaves to each card (``in_stock`` is left out of a row)
_PER_CARD = frozenset({"in_stock", "stock", "attributes", "variants", "variant_attribute"})


class RowPieces(NamedTuple):
    """What :func:`table_row` makes of a card but for its stock and variants (:func:`table_row_pieces`)."""

    before: dict[str, Any]  # the row's fields before ``stock``: the head under its spoken title
    after: dict[str, Any]  # after ``variants``: the attributes
    #: the keys of ``before`` and of ``after`` (None when a key is in both: the row is then a dict's merge of them)
    layout: tuple[tuple[str, ...], tuple[str, ...]] | None
    values: tuple[tuple[Any, ...], tuple[Any, ...]]  # the values of ``before`` and of ``after``


def table_row_pieces(head: dict[str, Any], attributes: dict[str, Any]) -> RowPieces | None:
    """What :func:`table_row` makes of a card ``{**head, "in_stock", "stock", "attributes": attributes,
    ["variants"]}`` but for its stock and variants, to be kept per product (:func:`table_of_pieces` adds those):
    the row's fields before ``stock`` (the head under its spoken title) and after ``variants`` (the attributes),
    each value as the compact form writes it. None when the head has no ``product_id`` (no card) or a field kept
    per card, an attribute is named like a card field (not flattened), or a value is neither a float nor written
    as it is (then the row is not made of these pieces)."""
    if "product_id" not in head or not _PER_CARD.isdisjoint(head) or CARD_FIELDS.intersection(attributes):
        return None
    before, after = _compacted_leaves(head), _compacted_leaves(attributes)
    if before is None or after is None:
        return None
    if type(before.get("title")) is str:
        before["title"] = short_title(before["title"])
    layout = (tuple(before), tuple(after)) if before.keys().isdisjoint(after) else None
    return RowPieces(before, after, layout, (tuple(before.values()), tuple(after.values())))


def _compacted_leaves(node: dict[str, Any]) -> dict[str, Any] | None:
    """``{key: _compact(value)}`` of a dict of floats and values written as they are (None for any other)."""
    out = {}
    for key, value in node.items():
        kind = type(value)
        if kind is float:
            value = compact_float(value)
        elif kind not in _AS_IS:
            return None
        out[key] = value
    return out


def table_of_pieces(pieces: Sequence[RowPieces | None],
                    listed: Sequence[tuple[Any, tuple[str, Sequence[str], Sequence[Any]]]]) -> dict[str, Any] | None:
    """:func:`table_of_rows` of the cards' rows (a non-empty page): :func:`table_row` of each card ``{**head,
    "in_stock": ..., "stock": stock, "attributes": attributes, "variants": [{"variant_id": id, attribute: value},
    ...]}`` (no ``variants`` without ids) from its ``table_row_pieces(head, attributes)`` and ``(stock, (attribute,
    ids, values))``, made in one call for the page. None when a product has no pieces or its stock or a variant
    value is not written as it is (then the table is not made of these pieces).

    A row is the pieces around the card's own fields, in the order :func:`table_row` gives them. Where every row
    has the same fields in the same order (most pages: products of one category), the rows are lists of the
    values in that order from the start, with no dict per row (:func:`_table_of_lists`)."""
    layout = None if pieces[0] is None else pieces[0].layout
    if layout is not None:  # one pass while the rows keep the first one's layout
        varied, rows = bool(listed[0][1][1]), []
        for row_pieces, (stock, (attribute, ids, values)) in zip(pieces, listed):
            if row_pieces is None or row_pieces.layout != layout or bool(ids) != varied or type(stock) not in _AS_IS:
                break  # (the general path below tells a page of another layout from one that is not made of pieces)
            before_values, after_values = row_pieces.values
            if varied:
                variants = dict(zip(ids, values))  # what _variants_by_id reads of the variant cards
                if not _plain_dict(variants):
                    return None
                rows.append([*before_values, stock, attribute, *after_values, variants])
            else:
                rows.append([*before_values, stock, *after_values])
        else:
            before, after = layout
            return _table_of_lists([*before, "stock", "variant_attribute", *after, "variants"] if varied
                                   else [*before, "stock", *after], rows)
    own = []  # each card's pieces, stock, variant attribute and {variant_id: value} (None: no variants)
    for row_pieces, (stock, (attribute, ids, values)) in zip(pieces, listed):
        if row_pieces is None or type(stock) not in _AS_IS:
            return None
        by_id = dict(zip(ids, values)) if ids else None
        if by_id is not None and not _plain_dict(by_id):
            return None
        own.append((row_pieces, stock, attribute, by_id))
    return table_of_rows([{**p.before, "stock": stock,
                           **({"variants": by_id, "variant_attribute": attribute} if by_id is not None else {}),
                           **p.after} for p, stock, attribute, by_id in own], compacted=True)


def _table_of_lists(columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    """``table_of_rows([dict(zip(columns, row)) for row in rows], compacted=True)`` for rows of values written as
    the compact form writes them, every row with a value for each of ``columns`` (``variants``, if any, last)."""
    first = rows[0]
    shared = list(range(len(columns))) if len(rows) > 1 else []
    for row in rows[1:]:  # (a value not equal to itself, NaN, is no other row's either: no shared value)
        shared = [i for i in shared if row[i] == first[i]]
    same = {columns[i]: first[i] for i in shared}
    values = _shared_variant_values([row[-1] for row in rows]) if "variant_attribute" in same else None
    if values is not None:  # every card has these variant values, in this order: each row lists its ids only
        same[VARIANT_VALUES] = values
        for row in rows:
            row[-1] = list(row[-1])
    dropped = [i for i in reversed(range(len(columns))) if columns[i] in same]  # (last first: deleted in place)
    for row in rows:
        for i in dropped:
            del row[i]
    table: dict[str, Any] = {"same": _compact(same)} if same else {}
    return table | {"columns": [key for key in columns if key not in same], "rows": rows}


def table_of_rows(flat: list[dict[str, Any]], *, compacted: bool = False) -> dict[str, Any]:
    """The compact table of a non-empty list of cards from their rows (:func:`table_row` of each, in order; the
    rows may be changed). ``compacted``: every value of the rows is already written as the compact form writes it
    (:func:`table_of_pieces`'s rows; the same table)."""
    keys = dict.fromkeys(chain.from_iterable(flat))  # in order of first appearance, ``variants`` last
    if "variants" in keys:
        del keys["variants"]
        keys["variants"] = None
    columns = list(keys)
    same = _same_values(flat, columns)
    values = _shared_variant_values([card.get("variants") for card in flat]) if "variant_attribute" in same else None
    if values is not None:  # every card has these variant values, in this order: each row lists its ids only
        same[VARIANT_VALUES] = values
        flat = [{**card, "variants": list(card["variants"])} for card in flat]
    columns = [key for key in columns if key not in same]
    table: dict[str, Any] = {"same": _compact(same)} if same else {}
    if compacted:
        rows = [list(map(card.get, columns)) for card in flat]
    else:
        rows = [[value if type(value) in _AS_IS else _compact(value) for value in map(card.get, columns)]
                for card in flat]
    return table | {"columns": columns, "rows": rows}


def _same_values(flat: list[dict[str, Any]], columns: list[str]) -> dict[str, Any]:
    """The columns every card of a table has with the first card's value (``card[key] == first[key]`` for
    each card, in column order; none for one card): the first card's keys narrowed card by card."""
    first = flat[0]
    shared = columns if len(flat) > 1 else []
    for card in flat:
        shared = [key for key in shared if key in card and card[key] == first[key]]
    return {key: first[key] for key in shared}


def _shared_variant_values(variants_each: list[Any]) -> list[Any] | None:
    """The variant values of every card of a table (``variants_each``: each card's ``variants``) when they are the
    same list for all (None otherwise): read card by card up to the first that differs (most tables list products
    with values of their own)."""
    variants = variants_each[0]
    if not isinstance(variants, dict) or not variants:
        return None
    first = list(variants.values())
    if len(set(map(str, first))) != len(first):
        return None
    for variants in variants_each[1:]:
        if not isinstance(variants, dict) or list(variants.values()) != first:
            return None
    return first


def compact_result(node: Any, *, top: bool = True) -> Any:
    """A tool result as the ``compact`` verbosity writes it (idempotent; :func:`expand_result` reads it back).

    Lists of product cards become tables (``columns`` + ``rows``, shared values under ``same``), a card's
    attributes become columns of their own, variants become ``variant_attribute`` + ``{variant_id: value}``
    (in a table whose cards all have the same variant values: ``variant_values`` under ``same`` and each row's
    variant ids in that order),
    whole numbers are written without ``.0``; ``in_stock`` (``stock > 0``), a search's ``count`` (its number
    of results) and ``top_k_cap`` are left out; a product listed in a result (a card in a table, a cart or
    order line) is named by its spoken title (the full one: ``catalog_get_product``).
    """
    out = _compact(node)
    if top and isinstance(node, dict):
        out.pop("top_k_cap", None)
        results = node.get("results")
        if "count" in node and isinstance(results, list) and node["count"] == len(results):
            del out["count"]
    return out


def _compact(node: Any) -> Any:
    """:func:`compact_result` of a node below the top. The callers keep the values written as they are
    (``_AS_IS``: most of a result's) without calling it."""
    if type(node) is float:  # (most values not written as they are: prices, ratings)
        return int(node) if node.is_integer() and abs(node) < 2**53 else node
    if isinstance(node, dict):
        if "product_id" in node and "stock" in node:  # (_is_card, inline: every dict of a result asks)
            node = _compact_card(node, in_table=False)
        elif "variants" in node:
            node = _compact_variants(node)
        elif _AS_IS.issuperset(map(type, node.values())):  # (a variant, an address...) a copy as it is
            return dict(node)
        return {key: value if type(value) in _AS_IS else _compact(value) for key, value in node.items()}
    if isinstance(node, list):
        # (the first item first: most lists that are no table say so at once)
        if node and _is_card(node[0]) and all(_is_card(item) for item in node):
            return _table(node)
        return [item if type(item) in _AS_IS else _listed(item) for item in node]
    if isinstance(node, float):
        return int(node) if node.is_integer() and abs(node) < 2**53 else node  # "12" for 12.0: read back equal
    return node


def _plain_dict(node: dict[str, Any]) -> bool:
    """Whether :func:`_compact` writes a dict as a copy of itself: no card, no ``variants``, only values written
    as they are."""
    return not ("product_id" in node and "stock" in node) and "variants" not in node and \
        _AS_IS.issuperset(map(type, node.values()))


def _listed(item: Any) -> Any:
    """An item of a list that is not a table: a product (a cart or order line) under its spoken title."""
    if type(item) is dict and "stock" not in item and "variants" not in item:  # no card: _compact's dict walk,
        out = {}                                                            # prices without a call
        for key, value in item.items():
            kind = type(value)
            if kind in _AS_IS:
                out[key] = value
            elif kind is float:
                out[key] = int(value) if value.is_integer() and abs(value) < 2**53 else value
            else:
                out[key] = _compact(value)
    else:
        out = _compact(item)
    if isinstance(item, dict) and "product_id" in item and isinstance(item.get("title"), str):
        out["title"] = short_title(item["title"])  # out is a fresh dict, the title where the item has it
    return out


def _expand_card(node: dict[str, Any]) -> dict[str, Any]:
    attribute, variants = node.get("variant_attribute"), node.get("variants")
    if isinstance(attribute, str) and isinstance(variants, dict):
        node = {key: value for key, value in node.items() if key != "variant_attribute"}
        node["variants"] = [{"variant_id": variant_id, attribute: value} for variant_id, value in variants.items()]
    if _is_card(node) and "in_stock" not in node and isinstance(node["stock"], int):
        card = {}
        for key, value in node.items():
            if key == "stock":
                card["in_stock"] = value > 0
            card[key] = value
        node = card
    return node


def _expand_table(table: dict[str, Any]) -> list[dict[str, Any]]:
    same = dict(table.get("same") or {})
    shared = same.pop(VARIANT_VALUES, None)  # the variant values every row's list of variant ids stands for
    cards = []
    for row in table["rows"]:
        values = {**same, **{key: value for key, value in zip(table["columns"], row) if value is not None}}
        if isinstance(shared, list) and isinstance(values.get("variants"), list):
            values["variants"] = dict(zip(values["variants"], shared))
        card = {key: value for key, value in values.items() if key in CARD_FIELDS}
        if "attributes" not in values:  # flattened: every other column is an attribute
            card["attributes"] = {key: value for key, value in values.items() if key not in CARD_FIELDS}
        cards.append(expand_result(card))
    return cards


def expand_result(node: Any) -> Any:
    """A decoded tool result in the full verbosity's shape, whichever verbosity wrote it: tables become
    lists of card dicts with the full card's key names (the title as shown), ``in_stock`` is restored
    from ``stock``, variants are ``[{variant_id, <attribute>: value}]``. What agents read (never the text)."""
    if isinstance(node, list):
        return [expand_result(item) for item in node]
    if not isinstance(node, dict):
        return node
    if _TABLE_KEYS <= node.keys() <= _TABLE_KEYS | {"same"}:
        return _expand_table(node)
    node = _expand_card({key: expand_result(value) for key, value in node.items()})
    if isinstance(node.get("results"), list) and "count" not in node:
        node["count"] = len(node["results"])
    return node


#: JSON without spaces; results are fresh trees built by the tools, never circular
_json_text = json_text_encoder(separators=(",", ":"))


def result_text(content: dict[str, Any], verbosity: Verbosity = DEFAULT_VERBOSITY, compact: Any = None) -> str:
    """A tool result as the text of its ``tool`` message: JSON without spaces, in ``verbosity``. ``compact``:
    ``compact_result(content)`` where the tool built it with the result (:class:`~ecomrlve.tools.base.ToolOutput`)."""
    if verbosity != "compact":
        return _json_text(content)
    return _json_text(compact_result(content) if compact is None else compact)


def compact_float(number: float) -> float | int:
    """A float as the compact form writes it: a whole number without ``.0`` (read back equal)."""
    return int(number) if number.is_integer() and abs(number) < 2**53 else number
