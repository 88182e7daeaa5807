"""The step's fast paths say exactly what their plain definitions say.

``understanding._has`` finds phrases with one trie pattern per phrase tuple (``_any_of``) instead of one
``in`` per phrase; ``contains_words`` skips the phrases ``in`` does not find; ``compact_result`` copies each node once and writes plain values without a call;
``parse_wire_form`` of an :class:`AgentAction`'s wire form copies its calls' arguments instead of parsing their text;
the tools that list products build the compact form of their results from pieces kept per product; a page of
cards reads each catalog column once for all its products (``Catalog.summaries``, ``Catalog.attributes_each``,
``VariantColumns.values_each``), ``crockford_each`` gathers every id's digits with numpy, and the verifier's
satisfactions read the main-type mask instead of each product's types; the cards of an environment that hides
their attributes read none, and the CART shopper reads a message of one sentence once. They run
on every step, and both must give what the plain code gave (records are compared byte for byte elsewhere);
these tests check the rules on inputs no episode happens to produce.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_rowindex import catalogs, filters  # small random catalogs: accessories beside main types, NaNs, no values

import ecomrlve.user.understanding as understanding
from ecomrlve.actions import AgentAction, InvalidActionError, ToolCall, parse_wire_form, wire_form
from ecomrlve.catalog.derived import DerivedStore
from ecomrlve.catalog.filters import filter_mask
from ecomrlve.catalog.product_type import category_types, is_main_type, product_type, same_type
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.synthetic import default_catalog
from ecomrlve.catalog.variants import VARIANT_ATTRIBUTES, variant_columns
from ecomrlve.catalog.views import category_view
from ecomrlve.envs.account import orders
from ecomrlve.envs.cart.family import CartUser, sentence_readings
from ecomrlve.envs.recommend.requirements import Requirement, requirement_filter, satisfactions
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import (
    _json_text,
    _shared_variant_values,
    _variants_by_id,
    compact_result,
    result_text,
    table_of_pieces,
    table_row_pieces,
)
from ecomrlve.rng import crockford, crockford_each
from ecomrlve.runner import make_agent
from ecomrlve.tools import TOOLS, ToolContext, ToolError
from ecomrlve.tools.catalog import _read_catalog_cards, product_cards, shown_cards
from ecomrlve.user.realiser import sentences
from ecomrlve.user.text import contains_word, contains_words
from ecomrlve.world.state import World, variant_cards_of

#: Few characters, so that phrases share prefixes and occur often; regular-expression syntax among them.
_CHARS = st.sampled_from("ab .()[]*+?|\\$^{}é")
_PHRASES = st.lists(st.text(_CHARS, max_size=5), max_size=6).map(tuple)


@given(st.text(_CHARS, max_size=30), _PHRASES)
def test_has_is_any_phrase_in_the_text(text: str, phrases: tuple[str, ...]) -> None:
    assert understanding._has(text, phrases) == any(p in text for p in phrases)


@given(st.text(_CHARS, max_size=30), st.lists(st.text(_CHARS, max_size=4), max_size=6))
def test_contains_words_is_contains_word_of_each(text: str, phrases: list[str]) -> None:
    assert contains_words(text, phrases) == tuple(contains_word(text, phrase) for phrase in phrases)


def test_has_reads_the_modules_own_phrase_tuples_as_any_in() -> None:
    """Every phrase tuple of the understanding module (topic cues, confirmations, which-phrases...), on texts made
    of its phrases, a phrase cut short and words around them."""
    tuples = [value for value in vars(understanding).values()
              if isinstance(value, tuple) and value and all(isinstance(p, str) for p in value)]
    tuples += list(understanding._TOPIC_PHRASES.values())
    assert len(tuples) > 20
    for phrases in tuples:
        texts = [" " + p.strip() + " " for p in phrases] + [p[:-2] for p in phrases] + [" the price is fine "]
        for other in tuples[:10]:
            texts.append(" so" + other[0] + "and" + phrases[-1])
        for text in texts:
            assert understanding._has(text, phrases) == any(p in text for p in phrases), (text, phrases)


#: (``variants`` only as the tools write them: on cards below)
_KEYS = st.sampled_from(["product_id", "stock", "title", "in_stock", "variant_id", "attributes", "color", "results",
                         "count", "top_k_cap", "price", "items", "brand"])
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([1.0, 2.5, -3.0, 1e300]),
                    st.sampled_from(["Brand X Mug, Blue", "M", "V1", "V2", "P1", "red"]))
_TREES = st.recursive(_LEAVES, lambda children: st.one_of(st.lists(children, max_size=4),
                                                          st.dictionaries(_KEYS, children, max_size=6)), max_leaves=25)
_CARD = st.fixed_dictionaries(
    {"product_id": st.sampled_from(["P1", "P2"]), "title": st.sampled_from(["Mug, Blue", "Mug, Blue, 12 oz", "Lamp"]),
     "stock": st.integers(0, 3), "in_stock": st.booleans()},
    optional={"variants": st.lists(st.fixed_dictionaries({"variant_id": st.sampled_from(["V1", "V2"]),
                                                          "color": st.sampled_from(["red", "blue"])}), max_size=3),
              "attributes": st.dictionaries(st.sampled_from(["color", "size", "price"]), _LEAVES, max_size=2),
              "price": st.sampled_from([12.0, 12.5])})
_RESULTS = st.one_of(_TREES, st.lists(_CARD, max_size=4), st.dictionaries(_KEYS, st.lists(_CARD, max_size=3), max_size=2))


@given(st.dictionaries(_KEYS, st.one_of(_TREES, _RESULTS), max_size=5))
def test_compact_result_leaves_its_input_as_it_was_and_is_idempotent(content: dict[str, Any]) -> None:
    """It builds its own copies (and changes only those): the tool result the shopper and verifier read stays the
    same, and a compact result compacts to itself."""
    before = copy.deepcopy(content)
    compact = compact_result(content)
    assert content == before
    assert compact_result(compact) == compact
    assert json.loads(result_text(before)) == json.loads(json.dumps(compact))


# -- the compact walk's type-specialised paths against the plain definitions they replace ----------

def _text(value: Any) -> str:
    """JSON that tells 1, 1.0 and true apart and keeps key order: equal texts, equal tool messages."""
    return json.dumps(value)


def _outcome(function: Any, value: Any) -> tuple[str, str]:
    """What ``function(value)`` gives: its JSON text, or the type of the error it raises (malformed input)."""
    try:
        return "ok", _text(function(value))
    except (KeyError, TypeError, AttributeError) as error:
        return "error", type(error).__name__


def _plain_variants_by_id(variants: Any) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(variants, list) or not variants:
        return None
    attributes = {key for variant in variants for key in variant if key != "variant_id"}
    if len(attributes) != 1 or any(len(variant) != 2 for variant in variants):
        return None
    [attribute] = attributes
    return attribute, {variant["variant_id"]: variant[attribute] for variant in variants}


_VARIANT_KEYS = st.sampled_from(["variant_id", "color", "size"])
_VARIANT = st.dictionaries(_VARIANT_KEYS, _LEAVES, min_size=1, max_size=3)


@settings(max_examples=400)
@given(st.one_of(st.lists(_VARIANT, max_size=4), st.lists(st.one_of(_VARIANT, st.text(max_size=2)), max_size=3)))
@example([{"variant_id": "V1", "color": "red"}, {"variant_id": "V2", "color": "red", "size": "M"}])
@example([{"variant_id": "V1", "color": "red"}, {"variant_id": "V2", "size": "M"}])
@example([{"variant_id": "V1", "color": "red"}, {"color": "blue", "size": "M"}])
@example([{"variant_id": "V1", "color": "red"}, "ab"])
def test_variants_by_id_is_its_set_definition(variants: list[Any]) -> None:
    """The one-pass reading of variants as the tools write them (each ``{variant_id, attribute}``) falls back to
    the set definition for any other list, and both give the same attribute and ids in the same order."""
    assert _outcome(_variants_by_id, variants) == _outcome(_plain_variants_by_id, variants)


_FLAT_CARD = st.dictionaries(st.sampled_from(["product_id", "title", "price", "color", "variants", "stock"]),
                             st.one_of(_LEAVES, st.dictionaries(st.sampled_from(["V1", "V2"]), _LEAVES, max_size=2)),
                             max_size=5)


@given(st.lists(_FLAT_CARD, min_size=1, max_size=4))
def test_same_values_are_the_keys_every_card_has_with_the_first_cards_value(flat: list[dict[str, Any]]) -> None:
    """``same`` of a table, found by narrowing the first card's keys card by card, is its definition: a column
    every card has, each with a value ``==`` the first card's (in column order; none for one card)."""
    from ecomrlve.protocol import _same_values

    columns = list(dict.fromkeys(key for card in flat for key in card))
    first = flat[0]
    plain = {key: first[key] for key in columns
             if len(flat) > 1 and all(key in card and card[key] == first[key] for card in flat)}
    assert _text(_same_values(flat, columns)) == _text(plain)


_LINE = st.dictionaries(st.sampled_from(["product_id", "title", "unit_price", "quantity", "variant", "stock",
                                         "variants", "lines"]),
                        st.one_of(_LEAVES, st.sampled_from(["Lamp, Brass", "Mug"]),
                                  st.dictionaries(st.sampled_from(["variant_id", "color", "product_id", "stock"]),
                                                  _LEAVES, max_size=3),
                                  st.lists(_LEAVES, max_size=2)),
                        max_size=6)


@settings(max_examples=300)
@given(st.one_of(_LINE, _TREES))
@example({"product_id": "P1", "stock": 2, "title": "Mug, Blue", "in_stock": True})
@example({"product_id": "P1", "title": "Mug, Blue", "unit_price": 12.0, "variant": {"variant_id": "V1", "size": 2.0}})
def test_a_listed_item_is_its_compact_walk_under_its_spoken_title(item: Any) -> None:
    """A list item that is no card (an order, an order line) walked field by field (prices without a call, a
    dict of plain values copied) is the generic walk with the product's spoken title, and leaves the item as it was."""
    from ecomrlve.protocol import _compact, _listed, short_title

    def plain(item: Any) -> Any:
        out = _compact(item)
        if isinstance(item, dict) and "product_id" in item and isinstance(item.get("title"), str):
            out["title"] = short_title(item["title"])
        return out

    before = copy.deepcopy(item)
    assert _outcome(_listed, item) == _outcome(plain, item)
    assert item == before
    if isinstance(item, dict) and _outcome(plain, item)[0] == "ok":
        assert _listed(item) is not item


@given(st.dictionaries(_KEYS, _LEAVES, max_size=5))
def test_a_dict_of_plain_values_compacts_to_a_copy_of_itself(node: dict[str, Any]) -> None:
    """The shortcut for a dict of plain values (no card, no variants) is the field-by-field walk: a fresh copy
    with every float written as the walk writes it."""
    from ecomrlve.protocol import _compact

    out = _compact(node)
    assert out is not node
    walked = {key: _compact(value) for key, value in node.items()} if "variants" not in node else out
    if not ("product_id" in node and "stock" in node):
        assert _text(out) == _text(walked)


# -- an AgentAction's turn parsed from its own arguments, against parsing its wire form's JSON text ----------

class _Text(str):
    """A ``str`` subclass: JSON writes it as text, which parses back as a plain ``str``."""


_ARGUMENT_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-2**64, 2**64), st.floats(),
                             st.text(st.sampled_from("ab \ud800\x00é"), max_size=3),
                             st.sampled_from([_Text("a"), 0.0, -0.0, 1.0, 2**63, -2**63]))
_ARGUMENTS = st.recursive(_ARGUMENT_LEAVES, lambda children: st.one_of(
    st.lists(children, max_size=3), st.lists(children, max_size=3).map(tuple),
    st.dictionaries(st.one_of(st.sampled_from(["query", "top_k", "a\ud800", ""]), st.integers(0, 2)), children,
                    max_size=3)), max_leaves=12)
_CALLS = st.builds(ToolCall.model_construct, id=st.sampled_from(["call_0", "call_1", "", "c\ud800"]),
                   name=st.sampled_from(["order_list", "catalog_search", "no such", "é", ""]),
                   arguments=st.dictionaries(st.sampled_from(["query", "order_id", "filters", "x\udfff"]), _ARGUMENTS,
                                             max_size=3))
_MESSAGES = st.one_of(st.none(), st.sampled_from(["", "  ", " Here you go ", "a\ud800", "<think>x</think> hi"]))


def _parsed(raw: Any, **options: Any) -> tuple[str, Any]:
    try:
        return "ok", parse_wire_form(raw, turn=3, max_chars=options.pop("max_chars", 200), **options)
    except InvalidActionError as error:
        return "error", str(error)


@settings(max_examples=400)
@given(_MESSAGES, st.lists(_CALLS, max_size=3), st.sampled_from([200, 40]))
@example(None, [ToolCall(id="call_0", name="catalog_search", arguments={"filters": (1, [2.0])})], 200)
@example(None, [ToolCall(id="", name="order_list", arguments={})], 200)
@example(None, [ToolCall(id="call_0", name="no such", arguments={})], 200)
@example(None, [ToolCall(id="call_0", name="order_list", arguments={"query": _Text("a")})], 200)
@example(" a ", [ToolCall(id="call_0", name="order_list", arguments={}),
                 ToolCall(id="call_0", name="order_list", arguments={})], 200)
def test_an_agent_actions_turn_parses_from_its_own_arguments_as_from_its_text(
        message: str | None, calls: list[ToolCall], max_chars: int) -> None:
    """``parse_wire_form(wire_form(action), source=action)`` copies the calls' arguments from the action instead
    of parsing back the JSON text its wire form wrote from them: the same action (ids, names, arguments with their
    types: tuples as lists, ``1.0`` not ``1``) or the same error, for any action, malformed ones included."""
    action = AgentAction.model_construct(message=message, tool_calls=tuple(calls))
    wire = wire_form(action)
    fast, plain = _parsed(wire, max_chars=max_chars, source=action), _parsed(wire, max_chars=max_chars)
    assert fast == plain
    if fast[0] == "ok":
        assert [_typed(call.arguments) for call in fast[1].tool_calls] == \
            [_typed(call.arguments) for call in plain[1].tool_calls]


def _typed(value: Any) -> Any:
    """``value`` with the exact type of every node beside it (``==`` alone takes 1 for 1.0 and a tuple for no list)."""
    if isinstance(value, dict):
        return dict, [(_typed(key), _typed(child)) for key, child in value.items()]
    if isinstance(value, (list, tuple)):
        return type(value), [_typed(child) for child in value]
    return type(value), repr(value)


# -- compact forms the tools build with their results, against compact_result of the results ----------

def _plain_shared_variant_values(cards: list[dict[str, Any]]) -> list[Any] | None:
    lists = [list(card["variants"].values()) if isinstance(card.get("variants"), dict) else None for card in cards]
    first = lists[0]
    return first if first and len(set(map(str, first))) == len(first) and all(v == first for v in lists) else None


_VARIANT_DICT = st.dictionaries(st.sampled_from(["V1", "V2", "V3"]), st.sampled_from(["red", "blue", 1, 1.0, "1"]),
                                max_size=3)


@settings(max_examples=300)
@given(st.lists(st.dictionaries(st.sampled_from(["variants", "title"]),
                                st.one_of(_VARIANT_DICT, st.lists(_LEAVES, max_size=2), _LEAVES), max_size=2),
                min_size=1, max_size=4))
@example([{"variants": {"V1": "red", "V2": "blue"}}, {"variants": {"V3": "red", "V1": "blue"}}])
@example([{"variants": {"V1": "red", "V2": "blue"}}, {"variants": {"V1": "blue", "V2": "red"}}])
@example([{"variants": {"V1": 1, "V2": "1"}}, {"variants": {"V1": 1, "V2": "1"}}])
def test_shared_variant_values_read_up_to_the_first_card_that_differs(cards: list[dict[str, Any]]) -> None:
    """Stopping at the first card whose variant values differ gives what comparing every card's values gives."""
    assert _text(_shared_variant_values([card.get("variants") for card in cards])) == \
        _text(_plain_shared_variant_values(cards))


_SCALARS = st.sampled_from(["Mug, Blue, 12 oz", "Lamp", "Acme", 12.0, 12.5, 3, True, None, 2.0**60])
_CARD_HEADS = st.fixed_dictionaries({"product_id": st.sampled_from(["P1", "P2"])},
                                    optional={key: _SCALARS for key in ("title", "brand", "price", "rating")})
_HEADS = st.one_of(
    _CARD_HEADS, _CARD_HEADS, _CARD_HEADS,
    st.dictionaries(st.sampled_from(["product_id", "title", "variant_attribute", "stock", "in_stock", "attributes",
                                     "variants", "color"]),
                    st.one_of(_SCALARS, st.lists(st.sampled_from(["a", "b, c"]), max_size=2)), max_size=4))
_ATTRIBUTES = st.dictionaries(st.sampled_from(["color", "size", "wattage", "color", "size", "price"]),
                              st.sampled_from(["red", "M", 65.0, 65.5, 1, None]), max_size=3)
#: a product's variants as the episode draws them: (attribute, ids, values); no ids, no variants
_DRAWS = st.one_of(st.just(("", (), ())), st.tuples(
    st.sampled_from(["color", "size", "stock"]),
    st.lists(st.sampled_from(["V1", "V2", "V3", "stock"]), min_size=1, max_size=3).map(tuple),
    st.lists(st.sampled_from(["red", "blue", "red", 1, 1.0, None, True]), min_size=3, max_size=3).map(tuple)))
#: (head, attributes, stock, draw): mostly as the tools make them, else anything
_PRODUCTS = st.one_of(
    *[st.tuples(_CARD_HEADS, st.dictionaries(st.sampled_from(["color", "size", "wattage"]),
                                             st.sampled_from(["red", "M", 65.0, 65.5, 1]), max_size=3),
                st.integers(0, 3), _DRAWS)] * 4,
    st.tuples(_HEADS, _ATTRIBUTES, st.one_of(st.integers(0, 3), st.sampled_from([2.0, None])), _DRAWS))


@st.composite
def _pages(draw: Any) -> list[tuple[dict[str, Any], dict[str, Any], Any, tuple[str, tuple[str, ...], tuple[Any, ...]]]]:
    """Pages of products: mostly with one layout (the same head and attribute keys, in one order, and variants
    for all or none: the rows of a table made of lists), else each product as it comes."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.lists(_PRODUCTS, max_size=4))
    head_keys = ["product_id", *draw(st.lists(st.sampled_from(["title", "brand", "price", "rating", "color"]),
                                              unique=True, max_size=4))]
    attribute_keys = draw(st.lists(st.sampled_from(["color", "size", "wattage", "price", "title"]), unique=True,
                                   max_size=3))
    varied = draw(st.booleans())
    values = st.one_of(_SCALARS, st.sampled_from([float("nan"), 2.5, 2]))
    page = []
    for _ in range(draw(st.integers(1, 4))):
        head = {key: draw(st.sampled_from(["P1", "P2", "P1"]) if key == "product_id" else values) for key in head_keys}
        attributes = {key: draw(values) for key in attribute_keys}
        variants = draw(_DRAWS.filter(lambda d: bool(d[1]) == varied))
        page.append((head, attributes, draw(st.one_of(st.integers(0, 3), st.sampled_from([2.0, True]))), variants))
    return page


@settings(max_examples=800)
@given(_pages(), st.sampled_from([0, 1]))
@example([({"product_id": "P1", "title": "Mug, Blue", "price": 12.0, "rating": 4.5}, {"color": "red", "size": 2.0}, 3,
           ("color", ("V1", "V2"), ("red", "blue"))),
          ({"product_id": "P2", "title": "Lamp, Brass", "price": 12, "rating": 4.5}, {"size": 2}, 0,
           ("color", ("V3", "V4"), ("red", "blue")))], 0)
@example([({"product_id": "P1", "title": "Mug, Blue", "price": 12.0}, {"size": 2.0}, 3,
           ("color", ("V1", "V2"), ("red", "blue"))),
          ({"product_id": "P2", "title": "Lamp, Brass", "price": 12.0}, {"size": 2.0}, 0,
           ("color", ("V3", "V4"), ("red", "blue")))], 0)
@example([({"product_id": "P1", "title": "Mug"}, {"size": float("nan")}, 3, ("", (), ())),
          ({"product_id": "P1", "title": "Mug"}, {"size": float("nan")}, 3, ("", (), ()))], 0)
@example([({"product_id": "P1", "color": "red"}, {"color": "blue"}, 1, ("", (), ())),
          ({"product_id": "P2", "color": "red"}, {"color": "green"}, 1, ("", (), ()))], 0)
@example([({"product_id": "P1", "title": "Mug"}, {"size": 2.0}, 3, ("color", ("V1",), ("red",))),
          ({"product_id": "P2", "title": "Lamp"}, {"size": 2.0}, 1, ("", (), ()))], 0)
@example([({"product_id": "P1", "title": "Mug"}, {"size": 2.0}, 3, ("", (), ())),
          ({"product_id": "P2", "title": "Lamp"}, {"size": 2.0}, 1, ("color", ("V1",), ("red",)))], 0)
@example([({"product_id": "P1", "in_stock": True, "attributes": "Lamp"}, {}, 1, ("", (), ()))], 0)
@example([({"product_id": "P1", "variants": "Lamp", "variant_attribute": "Lamp"}, {}, 1, ("", (), ()))], 0)
def test_a_table_from_pieces_kept_per_product_is_the_table_of_the_cards(
        products: list[tuple[dict[str, Any], dict[str, Any], Any, tuple[str, tuple[str, ...], tuple[Any, ...]]]],
        extra: int) -> None:
    """A search's compact form from each product's row pieces (:func:`table_row_pieces`, its values compacted once)
    plus each card's stock and variant draw, tabled in one call (:func:`table_of_pieces`: rows as lists where
    every row has one layout, else dicts), is the compact form of the search's cards wherever it is built (the
    pieces and the table say None otherwise)."""
    cards, pieces = [], []
    for head, attributes, stock, variant_draw in products:
        card = {**head, "in_stock": bool(stock), "stock": stock, "attributes": dict(attributes)}
        if variant_draw[1]:
            card["variants"] = variant_cards_of(variant_draw)
        cards.append(card)
        pieces.append(table_row_pieces(head, attributes))
    content = {"results": cards, "count": len(cards) + extra, "top_k_cap": 4}
    before = copy.deepcopy(content)
    table: dict[str, Any] | list[Any] | None = []
    if cards:
        table = table_of_pieces(pieces, [(stock, variant_draw) for _, _, stock, variant_draw in products])
    if table is not None:
        compact = {"results": table} | ({"count": len(cards) + extra} if extra else {})
        assert _json_text(compact) == result_text(content)
    assert content == before


def test_the_tools_compact_forms_are_their_results_compacted() -> None:
    """Every tool that builds its result's compact form (order lists and details, return eligibility, searches,
    visit history) gives what :func:`compact_result` makes of the result, episode after episode (stock changed
    mid-episode, variants, returned lines, eligible lines and not, whole prices, empty results, top_k 1 to 10)."""
    env = EcomEnv(["STATUS", "RETURN", "BUNDLE", "JOURNEY", "SUB"])
    written = {name: tool for name, tool in TOOLS.items() if tool.written is not None}
    assert set(written) == {"order_list", "order_get_details", "return_check_eligibility", "catalog_search",
                            "user_get_visit_history"}
    built, verdicts = 0, set[bool | None]()  # verdicts: whether each eligibility checked was refused (None: another tool)
    for env_id in env.env_ids:
        for d in (0, 7, 15):
            for seed in range(3):
                env.reset(env_id=env_id, difficulty=d, seed=seed)
                ctx = env.session.audit().context
                for order in ctx.world.account.orders[:1]:  # whole prices (and subtotal), written without ``.0``
                    for line in order.lines:
                        line.unit_price_cents = 1200
                calls: list[tuple[str, dict[str, Any]]] = [("order_list", {}), ("user_get_visit_history", {})]
                calls += [("order_get_details", {"order_id": order.order_id}) for order in ctx.world.account.orders]
                calls += [("return_check_eligibility", {"order_id": order.order_id, "line_id": line.line_id})
                          for order in ctx.world.account.orders for line in order.lines]
                calls += [("catalog_search", {"query": query, "top_k": top_k})
                          for query in ("charger", "blue mug", "zzz") for top_k in (1, 4, 10)]
                for i, (name, arguments) in enumerate(calls):
                    if i == 4 and ctx.world.visit_history:
                        ctx.world.sell_out(ctx.world.visit_history[0])
                    tool = written[name]
                    try:
                        result, compact = tool.output(ctx, tool.validate(arguments))
                    except ToolError:
                        continue
                    if compact is not None:
                        built += 1
                        assert _json_text(compact) == result_text(result), (name, arguments)
                        verdicts.add(result.get("fees_usd_if_not_store_fault") is None if name == "return_check_eligibility"
                                     else None)
    assert built > 300 and verdicts == {True, False, None}


def test_results_written_in_full_build_no_tables() -> None:
    """A session writing results in full (verbosity ``full``) has its searches build no compact table (nor
    write one): the tool message is the JSON of the result."""
    env = EcomEnv("BUNDLE", verbosity="full")
    env.reset(env_id="BUNDLE", difficulty=3, seed=1)
    ctx = env.session.audit().context
    assert not ctx.compact_results
    tool = TOOLS["catalog_search"]
    result, compact = tool.output(ctx, tool.validate({"query": "charger", "top_k": 5}))
    assert compact is None and result["results"]



_CATALOG = default_catalog()
#: the catalog and a category view of it (a sub-catalog: its own rows, titles taken from the catalog's)
_CATALOGS = st.one_of(st.sampled_from([_CATALOG, category_view(_CATALOG, 3).catalog]), catalogs())


@settings(max_examples=300)
@given(_CATALOGS, st.data())
def test_a_page_of_cards_reads_what_each_products_own_reads_say(catalog: Catalog, data: Any) -> None:
    """``summaries`` and ``attributes_each`` of a page of rows (columns read once for all of them) are what the
    per-product reads make of each row: the same values of the same types, keys in the same order."""
    rows = data.draw(st.lists(st.integers(0, len(catalog) - 1), max_size=25))
    omit = data.draw(st.lists(st.sampled_from([None, *VARIANT_ATTRIBUTES, "wattage"]), min_size=len(rows),
                              max_size=len(rows) + 1))
    plain = [{"product_id": catalog.product_id(row), "title": catalog.title(row), "brand": catalog.brand_of(row),
              "category": catalog.category_of(row).name, "price": catalog.price(row), "rating": catalog.rating(row),
              "rating_count": int(catalog.rating_count[row]), "ship_days": int(catalog.ship_days[row])}
             for row in rows]
    assert _items_typed(catalog.summaries(rows)) == _items_typed(plain)
    assert _items_typed(catalog.summaries(iter(rows))) == _items_typed(plain)
    plain_attributes = []
    for row, left_out in zip(rows, omit):
        attributes = catalog.attributes(row)
        attributes.pop(left_out, None)
        plain_attributes.append(attributes)
    assert _items_typed(catalog.attributes_each(rows, omit)) == _items_typed(plain_attributes)


def _items_typed(dicts: list[dict[str, Any]]) -> list[list[tuple[str, type, Any]]]:
    """Each dict's items in order, with each value's type (1 == 1.0 == True: a bare comparison would not tell)."""
    return [[(key, type(value), value) for key, value in d.items()] for d in dicts]


@settings(max_examples=300)
@given(catalogs(), st.data())
def test_satisfactions_read_the_main_type_mask_as_each_products_types(catalog: Catalog, data: Any) -> None:
    """:func:`satisfactions` (category and main type read for all rows at once) is, per row, the share of the
    requirements it meets: in the leaf category and of its main type (:func:`is_main_type`), and each other
    requirement alone."""
    category = data.draw(st.integers(0, len(catalog.categories) - 1))
    rows = data.draw(st.lists(st.integers(0, len(catalog) - 1), max_size=8))
    flt = data.draw(filters(category=False))
    others = [Requirement(field=f, value=v) for f, v in flt.model_dump(exclude_none=True).items() if f != "in_stock"]
    requirements = [Requirement(field="category", value=catalog.categories[category].name), *others]
    plain = [((int(catalog.category[row]) == category and is_main_type(catalog, row))
              + sum(bool(filter_mask(catalog, requirement_filter([r], in_stock=None), rows=np.asarray([row]))[0])
                    for r in others)) / len(requirements) for row in rows]
    assert satisfactions(catalog, rows, category, requirements) == plain


@given(st.sampled_from(VARIANT_ATTRIBUTES), st.lists(st.tuples(st.sampled_from(["VAB12C3D", "V0000000", "V1"]),
                                                              st.sampled_from(["Black", "M", "", "variant_id"])),
                                                    min_size=1, max_size=4))
def test_a_cards_variants_by_id_are_read_of_its_draw(attribute: str, variants: list[tuple[str, str]]) -> None:
    """A search's table rows take each card's variants by id from the product's draw (``dict(zip(ids, values))``):
    what :func:`_variants_by_id` reads back from the card's variant cards (:func:`variant_cards_of`), ids repeated
    or not."""
    ids, values = tuple(i for i, _ in variants), tuple(v for _, v in variants)
    assert _variants_by_id(variant_cards_of((attribute, ids, values))) == (attribute, dict(zip(ids, values)))


def test_no_step_builds_a_view_or_a_filter_column(monkeypatch: Any) -> None:
    """A search engine's construction builds what filters read (``prepare_filters``: every category's views, their
    in-stock columns, the catalog's value bits of every attribute), so that no step of a search or verifier builds
    one: the same values, built before the first episode instead of in the step whose filter first reads them."""
    env = EcomEnv(["BUNDLE", "SUB", "PD", "CART"])
    built: list[str] = []
    real_get = DerivedStore.get
    stepping = False

    def get(store: DerivedStore, name: str, key: Any, build: Any) -> Any:
        if stepping and (name, key) not in store and (name != "value_bits" or store is env.catalog.derived):
            built.append(name)  # (a view's own value bits are built on first use)
        return real_get(store, name, key, build)

    monkeypatch.setattr(DerivedStore, "get", get)
    for env_id in env.env_ids:
        for seed in range(4):
            observation = env.reset(env_id=env_id, difficulty=seed * 4, seed=seed)
            agent = make_agent("heuristic", env, seed)
            while not observation.done:
                action = agent.act(observation)
                stepping = True
                observation = env.step(action)
                stepping = False
    assert not {"category_views", "value_bits", "stocked"} & set(built), built


@settings(max_examples=300)
@given(_CATALOGS, st.data())
def test_a_pages_variant_values_are_each_products(catalog: Catalog, data: Any) -> None:
    """``VariantColumns.values_each`` (each column read once for the page) is ``values_of`` of each row, in order."""
    rows = data.draw(st.lists(st.integers(0, len(catalog) - 1), max_size=25))
    columns = variant_columns(catalog)
    assert columns.values_each(rows) == [columns.values_of(row) for row in rows]
    assert columns.values_each(iter(rows)) == [columns.values_of(row) for row in rows]


@settings(max_examples=500)
@given(st.lists(st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 40), st.integers(-2**70, 2**70)), max_size=30),
       st.integers(0, 14), st.sampled_from(["V", "", "Lé"]))
@example([2**64 - 1, 0, 2**35 - 1], 7, "V")
@example([2**64 - 1, 0, 2**35 - 1, *range(10)], 7, "V")
@example([2**64 - 1, 0, 2**35 - 1, *range(9)], 7, "V")
@example([2**64], 7, "V")
@example([-1], 7, "V")
def test_crockford_each_is_crockford_of_each_value(values: list[int], length: int, prefix: str) -> None:
    """The numpy gather of every value's digits (more than 12 values of 64 bits, up to 12 digits) spells what
    :func:`crockford` spells of each value; a few values, values past 64 bits, negative ones and longer ids take
    the loop."""
    assert crockford_each(prefix, values, length) == tuple(crockford(prefix, value, length) for value in values)
    assert crockford_each(prefix, iter(values), length) == tuple(crockford(prefix, value, length) for value in values)


@settings(max_examples=300)
@given(_CATALOGS, st.data())
def test_cards_shown_without_attributes_are_the_cards_without_them(catalog: Catalog, data: Any) -> None:
    """The cards an environment shows (:func:`shown_cards`) are the product cards (as read of the catalog, kept
    per product or not) without the fields it hides (hidden ``attributes`` left empty), in order, of the same types;
    where it hides the attributes, the cards are made of the product's head fields alone, kept per product apart
    from the whole cards (which still have their attributes after)."""
    rows = data.draw(st.lists(st.integers(0, len(catalog) - 1), max_size=12))
    hidden = frozenset(data.draw(st.lists(st.sampled_from(["attributes", "price", "rating", "rating_count", "ship_days",
                                                           "title", "in_stock", "variants"]), max_size=5)))
    world = World(catalog, ("CART", 6, data.draw(st.integers(0, 3)), "secret"), dt.date(2025, 1, 1))
    for row in rows[:1]:
        world.sell_out(row)
    ctx = ToolContext(world=world, search=None, difficulty=None, search_stream=None,  # type: ignore[arg-type]
                      ask_user=lambda question: "", submit_answer=lambda answer: None, hidden_card_fields=hidden)
    cards = []  # read of the catalog, none kept
    for (head, attributes), (stock, draw) in zip(_read_catalog_cards(catalog, rows),
                                                 world.listings(rows)):
        cards.append({**head, "in_stock": stock > 0, "stock": stock, "attributes": dict(attributes)}
                     | ({"variants": variant_cards_of(draw)} if draw[1] else {}))
    empty: dict[str, Any] = {"attributes": {}} if "attributes" in hidden else {}
    plain = [{key: value for key, value in card.items() if key not in hidden} | empty for card in cards]
    for _ in range(2):  # (read, then kept)
        shown = shown_cards(ctx, rows)
        assert _items_typed(shown) == _items_typed(plain)
        assert [json.dumps(card) for card in shown] == [json.dumps(card) for card in plain]
        assert [json.dumps(card) for card in product_cards(world, rows)] == [json.dumps(card) for card in cards]


def _plain_questions(user: CartUser, text: str, reading: understanding.Reading, world: World) -> list[Any]:
    """The sentence readings ``CartUser._questions`` starts from, as first written: every sentence of the message
    read, and the message's own reading where it has fewer than two."""
    questions = [understanding.understand(part, user.in_play(world)) for part in sentences(text)]
    return questions if len(questions) >= 2 else [reading]


_CART_ENV = EcomEnv("CART")
#: what an agent asks a CART shopper, of its items ({0}: the item's phrase, {1}: its variant attribute)
_CART_SENTENCES = ["Which {1} do you need for {0}?", "How many of {0} do you want?", "What about {0}?",
                   "Anything else I should know?", "Thanks.", "Is {1} important", "Can you confirm the cart?"]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 5), st.lists(st.tuples(st.sampled_from(_CART_SENTENCES), st.integers(0, 4)), max_size=3),
       st.sampled_from([" ", "  ", "\n"]))
@example(0, [("Which {1} do you need for {0}?", 0), ("Which {1} do you need for {0}?", 2)], " ")
@example(1, [("How many of {0} do you want?", 0)], " ")
def test_the_cart_shopper_reads_a_message_of_one_sentence_once(seed: int, parts: list[tuple[str, int]],
                                                                space: str) -> None:
    """The sentence readings a CART shopper starts from (``sentence_readings``, under ``_questions``) are the plain
    definition's, which read each sentence of the message again even where there is one (and then kept the message's
    own reading)."""
    _CART_ENV.reset(env_id="CART", difficulty=12, seed=seed)
    user, world = _CART_ENV.session.audit().problem.user, _CART_ENV.session.audit().world
    assert isinstance(user, CartUser)
    items = user.active_items()
    text = space.join(sentence.format(items[i].phrase, (items[i].variant_attribute or "size").replace("_", " "))
                      for sentence, i in parts)
    reading = understanding.understand(text, user.in_play(world))
    assert sentence_readings(text, reading, user.in_play(world))[1] == _plain_questions(user, text, reading, world)


def _plain_type(catalog: Catalog, row: int) -> str:
    """A product's type as its category's types say: its position among the category's rows."""
    types = category_types(catalog, catalog.category.item(row))
    return types.names[types.codes.item(types.rows.searchsorted(row))]


def test_the_catalogs_products_types_are_read_by_row_as_their_categories_rows_say() -> None:
    """The default catalog and a category view of it (a sub-catalog, rows of its own): every row."""
    for catalog in (_CATALOG, category_view(_CATALOG, 3).catalog, category_view(_CATALOG, 7, main_type_only=True).catalog):
        assert [product_type(catalog, row) for row in range(len(catalog))] == [
            _plain_type(catalog, row) for row in range(len(catalog))]


@settings(max_examples=300)
@given(catalogs(), st.randoms(use_true_random=False))
def test_a_products_type_is_read_by_row_as_its_categorys_rows_say(catalog: Catalog, rng: Any) -> None:
    """``product_type`` (and ``is_main_type``) read a product's type by row, from the catalog's one array of type codes
    that each category's types fill as they are built; the plain definition finds the row among its category's
    rows. Categories first read in any order (a fresh catalog has none built; a copy of it builds them in row
    order), every row."""
    plain_catalog = copy.copy(catalog)
    plain_catalog.derived = DerivedStore()  # a store of its own: its types built apart, in another order
    categories = list(range(len(catalog.categories)))
    rng.shuffle(categories)
    for category in categories:
        rows = catalog.category_rows[category]
        order = [int(row) for row in rows]
        rng.shuffle(order)
        for row in order:
            types, plain = category_types(catalog, category), _plain_type(catalog, row)
            assert product_type(catalog, row) == plain == product_type(plain_catalog, row)
            assert is_main_type(catalog, row) == same_type(plain, types.main)
    assert all(product_type(catalog, row) == product_type(plain_catalog, row) for row in range(len(catalog)))


#: the default catalog, and real listings whose spoken names often fit another product's title (brand, no model)
_ACCOUNT_ENVS = [EcomEnv(["STATUS", "RETURN"]),
                 EcomEnv(["STATUS", "RETURN"], catalog=Path(__file__).parent / "data" / "real" / "brand_only.jsonl")]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(_ACCOUNT_ENVS), st.sampled_from(["STATUS", "RETURN"]), st.integers(0, 15),
       st.integers(0, 10**6))
def test_a_references_name_check_is_name_fits_another_of_its_name(env: EcomEnv, env_id: str, difficulty: int,
                                                                  seed: int) -> None:
    """``reference`` asks whether the line's name fits another ordered product with the name's words kept with it
    (``_words_fit_another`` of ``shown_words``); the plain definition is ``name_fits_another`` of ``line_name``.
    Every line of the customer's orders, at every reference level: its name, and the price said in its
    identification where the name fits another line."""
    env.reset(env_id=env_id, difficulty=difficulty, seed=seed)
    world = env.session.audit().world
    for order in world.account.orders:
        for line in order.lines:
            name = orders.line_name(world, line.row)
            fits = orders.name_fits_another(world, line.row, name)
            kept = orders._kept_line_name(world.catalog, line.row)
            assert orders._words_fit_another(world, line.row, kept.shown_words) == fits
            for level in (orders.BY_ORDER_ID, orders.BY_TITLE_AND_DATE, orders.BY_TYPE_AND_TIME):
                ref = orders.reference(world, order, line, level, random.Random(seed))
                assert ref.title == name
                assert ref.identification == f"the {name} I ordered {ref.when}" + (
                    f", the one I paid ${ref.paid} for" if fits else "")


_SURFACING_ENV = EcomEnv(["BUNDLE", "CART", "STATUS", "RETURN", "JOURNEY"])
_JUNK_IDS = ["", "P", "V", "é", "P\x00", " ", "ORD-0"]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(_SURFACING_ENV.env_ids), st.integers(0, 15), st.integers(0, 10**6), st.integers(0, 6),
       st.data())
def test_the_surfaced_ids_among_the_used_ones_are_those_surfaced_ids_holds(env_id: str, difficulty: int, seed: int,
                                                                           steps: int, data: Any) -> None:
    """``r_hall`` reads ``surfaced_among(used ids)`` (the ids looked up), not every surfaced id; the plain definition
    is ``set(ids) & surfaced_ids()``. Ids drawn among the shown products' ids and variant ids, products and variants
    never shown, the account's order and line ids (shown or not) and junk, after a few random steps."""
    observation = _SURFACING_ENV.reset(env_id=env_id, difficulty=difficulty, seed=seed)
    agent = make_agent("random", _SURFACING_ENV, seed)
    for _ in range(steps):
        if observation.done:
            break
        observation = _SURFACING_ENV.step(agent.act(observation))
    ctx = _SURFACING_ENV.session.audit().context
    world = ctx.world
    shown = sorted(world.surfacing.rows())
    near = [row + step for row in shown[:6] for step in (-1, 1)]  # never shown, beside shown rows
    others = [row for row in [*near, *range(0, len(world.catalog), 997)]
              if 0 <= row < len(world.catalog) and row not in set(shown)][:14]
    pool = list(_JUNK_IDS)
    for row in shown[:12] + others:
        pool += [world.catalog.product_id(row), *world.variant_ids(row)]
    pool += [i for order in world.account.orders for i in (order.order_id, *(line.line_id for line in order.lines))]
    ids = data.draw(st.lists(st.sampled_from(pool), max_size=8))
    surfaced = ctx.surfaced_ids()
    plain = set(ids) & surfaced
    assert ctx.surfaced_among(ids) == plain
    assert ctx.surfaced_among(iter(ids)) == plain
    for few in [[i] for i in ids] + [list(pair) for pair in zip(ids, ids[1:])]:  # looked up wherever a few
        assert ctx.surfaced_among(few) == set(few) & surfaced  # products were shown, not made with their ids
