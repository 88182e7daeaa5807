"""Catalog-derived data, declared in one place: what each value is, what it is derived from, when it is built.

A :class:`~ecomrlve.catalog.schema.Catalog`'s columns never change after it is made, so everything
computed from them (id sort order, per-category rows, spoken names, category views, BUNDLE's cheap rows...)
lives as long as the catalog, in its :class:`DerivedStore` (``catalog.derived``). Nothing else may keep
data on a catalog: the catalog has fixed slots and refuses any other attribute, and
``tests/test_derived.py`` scans the source for writes of private attributes onto it.

Every value has a row in :data:`DECLARED` (name -> :class:`Declaration`); the module that computes it
makes its typed handle with :func:`derived` (which refuses a name not declared here), and reads it with
``HANDLE.of(catalog)`` or ``HANDLE.of(catalog, key)`` for values kept per key (a category, an attribute).

**Built once, thread-safe.** A value is built the first time it is read, under the store's lock (one
re-entrant lock per catalog, so a value built from others never deadlocks), and the same object is
returned to every thread from then on: sessions and the LLM shopper's worker threads may read fresh
derived data at the same time and all get one build. Reading a built value takes no lock.

**When.** ``directory``: written by ``ecomrlve catalog build`` into the catalog directory (``derived/``,
memory-mapped on open, so replicas share the pages) and otherwise built on first use; ``env``: built
by ``EcomEnv()`` (``schema.build_lookups``, ``TaskFamily.prepare`` for the environments it plays, and the search
engine's ``views.prepare_filters``) so episodes never pay for it;
``first use``: built when first read (cheap, or needed only by some episodes); ``memo``: a bounded or
single-slot memo of pure values, filled as episodes read them (a value computed twice by two threads is
the same value, so memos need no lock beyond the store's).

**Invalidation.** None while the catalog lives: its columns are read-only, and a catalog made from
another (a category view, a reload) has a store of its own. What a directory holds is checked by the
directory's manifest (sizes, checksums) and carries :data:`DERIVED_FORMAT`; a directory written with
another format, or none, has its derived data built on first use instead of read.

Per-product values (a product's card, CART's check of a name) are kept by :func:`kept_per_product` in a
declared memo whose build is an empty dict, at most :data:`KEPT_PRODUCTS` products per kind. Those an episode
reset reads for a few products of a category (CART's name checks, an order line's name) are kept by
:func:`kept_per_category`: worked out for the whole category on its first use where it has up to
:data:`CATEGORY_AT_ONCE` products, else one product at a time.

Pure memos of values that are not catalog data (e.g. ``type_of_title`` by title text, spoken dates,
policy rule texts) stay ``functools`` caches next to their function: they depend on their arguments
alone, and ``lru_cache`` is thread-safe.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Hashable, Sequence, Sized
from dataclasses import dataclass
from itertools import islice
from typing import Any, Generic, Protocol, TypeVar

#: The layout of ``derived/`` in a catalog directory; a directory with another is read without it.
DERIVED_FORMAT = 1

T = TypeVar("T")
#: Products whose derived values a catalog keeps per kind (:func:`kept_per_product`); beyond it the
#: kind starts over, so that what a 2M-product catalog keeps stays bounded.
KEPT_PRODUCTS = 1 << 16
#: A category of up to this many products has the values :func:`kept_per_category` reads worked out for all of
#: its products at once on its first use (tens of ms); a larger one's products one at a time, so that no first use
#: of a category costs seconds at 2M products.
CATEGORY_AT_ONCE = 5_000


@dataclass(frozen=True)
class Declaration:
    """One kind of derived data: what it is, what it is derived from, when it is built."""

    what: str
    source: str  # the catalog columns (or other derived values) it is computed from
    when: str  # "directory", "env", "first use" or "memo" (see the module docstring)
    keyed_by: str = ""  # what one value is kept per ("" : one value per catalog)


#: Every kind of derived data a catalog keeps, by name. Invalidation is the same for all (module docstring).
DECLARED: dict[str, Declaration] = {
    # catalog/schema.py
    "id_order": Declaration("row order of the ids sorted (stable argsort)", "ids", "directory"),
    "sorted_ids": Declaration("the ids in sorted order (O(log n) id lookup)", "ids, id_order", "directory"),
    "category_rows": Declaration("rows of each category, ascending", "category", "directory"),
    "brand_index": Declaration("lower-cased brand -> its first code", "brands", "env"),
    "brand_codes": Declaration("lower-cased brand -> every code spelling it", "brands", "env"),
    "category_index": Declaration("category words (leaf, ancestors, noun) -> category indices", "categories",
                                  "env"),
    "id_tokens": Declaration("a token pattern keeping ids whole, and the id lengths", "ids", "directory"),
    "category_values": Declaration("per category, the codes of an attribute its products carry",
                                   "category, categorical[attribute]", "first use", "attribute"),
    # catalog/filters.py, catalog/variants.py, catalog/rowindex.py
    "stocked": Declaration("stock > 0 per product (before an episode's changes)", "stock", "env"),
    "variant_columns": Declaration("each product's variant attribute and its variants' value codes",
                                   "ids, category, categorical", "directory"),
    "value_bits": Declaration("per product, the values of an attribute it has (own or its variants') as bits",
                              "categorical[attribute], variant_columns", "directory", "attribute"),
    "variant_narrowing": Declaration("per product, whether a requirement on an attribute can narrow to it",
                                     "category_values, variant_columns", "first use", "attribute"),
    "title_words": Declaration("title word -> ascending rows whose title has it", "titles", "env"),
    # catalog/product_type.py
    "category_types": Declaration("a category's product types (per row) and its main type", "titles, categories",
                                  "directory", "category"),
    "product_type_codes": Declaration("per product, its index into its category's product types (category_types' "
                                      "codes by row), set as each category's category_types is built",
                                      "category_types", "first use"),
    "main_type_mask": Declaration("per product, whether it is of its category's main type", "category_types",
                                  "directory"),
    "stored_names": Declaration("every category's types and every product's spoken name, as stored in a directory",
                                "category_types, spoken_names", "directory"),
    "spoken_names": Declaration("per product, the name a shopper says (brand + model words + type)",
                                "titles, brand, category_types", "directory", "category"),
    # catalog/views.py
    "stored_views": Declaration("every category's view (all rows, main-type rows) back to back, as stored",
                                "every column, category_types, variant_columns", "directory"),
    "category_views": Declaration("one category (or its main-type rows) as a contiguous sub-catalog",
                                  "every column, category_types, variant_columns", "env",
                                  "(category, main type only)"),
    # tools/
    "catalog_cards": Declaration("a product's search-result card", "the product's columns", "memo", "row"),
    "catalog_heads": Declaration("a product's search-result card but for its attributes (the card an environment "
                                 "that hides them shows)", "the product's columns", "memo", "row"),
    "catalog_rows": Declaration("a product's search-result card as a compact table row, but for its stock and "
                                "variants (protocol.table_row_pieces)", "catalog_cards", "memo", "row"),
    "order_line_products": Declaration("what an order line shows of its product", "the product's columns", "memo",
                                       "row"),
    "cart_names_itself": Declaration("whether the name a shopper says for a product names only it (a CART target)",
                                     "spoken names, brands, titles, product types", "memo", "row"),
    "cart_listings": Declaration("per category, the words of each product's brand and title and, per word, the "
                                 "products holding it (what a CART name is checked against: the whole category)",
                                 "brand, titles, category_rows", "first use", "category"),
    "cart_category_name_checks": Declaration(f"per product of a category of up to {CATEGORY_AT_ONCE:,}, "
                                             "cart_names_itself of every product of the category, worked out at once "
                                             "on the category's first use (a CART reset then looks its targets up)",
                                             "cart_listings, spoken names, product types", "first use", "category"),
    "cart_whole_category_name_checks": Declaration(
        "per product, cart_names_itself worked out for every product by ``catalog build`` (a bool array; where a "
        "category is large an episode would index its words on first use)",
        "spoken names, brands, titles, product types", "directory"),
    "order_line_names": Declaration("how a customer names an ordered product (spoken name, or the title's first "
                                    "clause when the brand or model words lie past it), and the folded words of it "
                                    "its title shows", "spoken names, titles, brand", "memo", "row"),
    "order_category_line_names": Declaration(f"per product of a category of up to {CATEGORY_AT_ONCE:,}, "
                                             "order_line_names and the folded words of its title, worked out for the "
                                             "whole category on its first use (RETURN/STATUS resets look their "
                                             "ordered products up)",
                                             "spoken names, titles, brand, category_rows", "first use", "category"),
    "order_title_bits": Declaration("per product, a 64-bit signature of its title's folded words (one bit per word, "
                                    "crc32), set with order_category_line_names (all bits until then): RETURN/STATUS "
                                    "resets skip the ordered titles that lack a word of a name",
                                    "titles, order_category_line_names", "first use"),
    "order_item_names": Declaration("the words that name an ordered product in conversation (ItemNames)",
                                    "ids, brand, spoken names, product types", "memo", "row"),
    "policy_paths": Declaration("the category paths policy documents list", "categories", "first use"),
    # shopper/
    "grounding_brands": Declaration("brand names a shopper's words can be grounded to", "brands", "first use"),
    # envs/, the runtime
    "prepared_families": Declaration("each environment family's preparation (TaskFamily.prepare) done",
                                     "what the family builds", "env", "family"),
    "search_engine": Declaration("the search engine every EcomEnv on the catalog shares (and its index)",
                                 "titles, descriptions, the directory's indexes", "env"),
    "stored_capabilities": Declaration("the capability report ``catalog build`` stored in the manifest (a dict)",
                                       "every column", "directory"),
    "capabilities": Declaration("the capability report (features, per-env support)", "every column", "env"),
    "field_facts": Declaration("per product, the requirement fields it supports, as bits", "columns, narrowing",
                               "directory"),
    "sorted_prices": Declaration("a category view's prices, ascending", "price_cents", "first use"),
    "utility_terms": Declaration("a category view's utility terms (price, rating, shipping, popularity)",
                                 "price_cents, rating_x10, ship_days, rating_count", "directory"),
    "title_word_complements": Declaration("rows whose title lacks a word", "title_words", "memo", "word"),
    "attribute_columns": Declaration("categorical codes and numeric values stacked, variant-varied ones blanked",
                                     "categorical, numeric, variant_columns", "directory"),
    "last_scored_valid": Declaration("the last scored valid set of a view (one slot, by request)",
                                     "utility_terms, title_words", "memo"),
    "recommend_category_values": Declaration("per category, the brands and attribute values a message may name",
                                             "brand, categorical, category_rows", "first use", "category"),
    "bundle_projects": Declaration("per BUNDLE project, the catalog categories it needs", "categories",
                                   "first use"),
    "bundle_in_stock": Declaration("in-stock products per category", "stock, category", "env"),
    "pd_ambiguous_categories": Declaration("categories whose main type another category shares (PD draws no "
                                           "target there)", "category_types", "first use"),
    "bundle_cheap": Declaration("a category's cheapest main-type rows", "price_cents, category_types", "env",
                                "category"),
}


#: Arrays that older ``catalog build`` runs stored in ``derived/`` and nothing reads any more, by name: why. A
#: directory holding one opens as if it did not (what the array said is worked out on first use instead).
SUPERSEDED: dict[str, str] = {
    "cart_name_checks": "CART's name check of a category over 5,000 products read only the brand's other listings "
                        "(now: cart_whole_category_name_checks, every listing of the category)",
}


class DerivedStore:
    """A catalog's derived values, each built once under one re-entrant lock (see the module docstring)."""

    __slots__ = ("_values", "_lock", "builds")

    def __init__(self) -> None:
        self._values: dict[tuple[str, Hashable], Any] = {}
        self._lock = threading.RLock()
        #: How many values of each kind were built (not provided): what tests count.
        self.builds: Counter[str] = Counter()

    def get(self, name: str, key: Hashable, build: Callable[[], Any]) -> Any:
        slot = (name, key)
        try:
            return self._values[slot]  # built: no lock
        except KeyError:
            pass
        with self._lock:
            if slot not in self._values:
                value = build()
                self._values[slot] = value
                self.builds[name] += 1
            return self._values[slot]

    def provide(self, name: str, value: Any, key: Hashable = None) -> None:
        """Installs a value made elsewhere (read from a catalog directory, or the parent catalog's draw a
        category view keeps): it is what a build would return, so it is never built."""
        if name not in DECLARED:
            raise KeyError(f"derived data {name!r} is not declared in ecomrlve.catalog.derived")
        with self._lock:
            self._values[(name, key)] = value

    def __contains__(self, slot: tuple[str, Hashable]) -> bool:
        return slot in self._values

    def __getstate__(self) -> dict[str, Any]:
        return {}  # a copied catalog rebuilds what it reads (the lock cannot travel)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]


class HasDerived(Protocol):
    """What a handle reads: a :class:`~ecomrlve.catalog.schema.Catalog` (which imports this module)."""

    @property
    def derived(self) -> DerivedStore: ...


@dataclass(frozen=True)
class Derived(Generic[T]):
    """The typed handle of one declared kind of derived data and the function that builds it."""

    name: str
    build: Callable[..., T]  # (catalog) or (catalog, key)

    @property
    def declaration(self) -> Declaration:
        return DECLARED[self.name]

    def of(self, catalog: HasDerived, key: Hashable = None) -> T:
        """The value for ``catalog`` (and ``key``), built on first read, once."""
        try:
            return catalog.derived._values[(self.name, key)]  # built: no lock, no closure (a lookup per card line)
        except KeyError:
            pass
        if key is None:
            value: T = catalog.derived.get(self.name, None, lambda: self.build(catalog))
        else:
            value = catalog.derived.get(self.name, key, lambda: self.build(catalog, key))
        return value


#: Handles made so far, by name (a test checks every declaration has one, made by its module).
HANDLES: dict[str, Derived[Any]] = {}


def derived(name: str, build: Callable[..., T]) -> Derived[T]:
    """The handle of the declared kind ``name`` (refused when :data:`DECLARED` lacks it)."""
    if name not in DECLARED:
        raise KeyError(f"derived data {name!r} is not declared in ecomrlve.catalog.derived")
    if name in HANDLES and HANDLES[name].build.__qualname__ != build.__qualname__:
        raise ValueError(f"derived data {name!r} already has a handle ({HANDLES[name].build.__qualname__})")
    handle = HANDLES[name] = Derived(name, build)
    return handle


_Catalog = TypeVar("_Catalog", bound=HasDerived)


def kept_per_product(catalog: _Catalog, kind: Derived[dict[int, T]], row: int, read: Callable[[_Catalog, int], T]) -> T:
    """``read(catalog, row)``, read once per product and kept in ``catalog``'s memo ``kind`` (a declared
    derived value whose build is an empty dict; at most :data:`KEPT_PRODUCTS` products of a kind): what cards
    and variants need of a product, which the catalog never changes, instead of reading its columns for every
    card. Two threads reading one product may both read it: the same value, kept once."""
    kept = kind.of(catalog)
    found = kept.get(row)
    if found is None:
        if len(kept) >= KEPT_PRODUCTS:
            kept.clear()
        found = kept[row] = read(catalog, row)
    return found


class HasCategories(HasDerived, Protocol):
    """What :func:`kept_per_category` reads of a catalog: each product's category and each category's rows."""

    @property
    def category(self) -> Any: ...  # an integer array, one category index per product

    @property
    def category_rows(self) -> Sequence[Sized]: ...


_Categorised = TypeVar("_Categorised", bound=HasCategories)


def worked_out_at_once(products: int) -> bool:
    """Whether a category of ``products`` products has its per-product values worked out for all of them at once
    (up to :data:`CATEGORY_AT_ONCE`), rather than one product at a time."""
    return products <= CATEGORY_AT_ONCE


def kept_per_category(catalog: _Categorised, row: int, category_kind: Derived[dict[int, T]],
                      product_kind: Derived[dict[int, T]], read: Callable[[_Categorised, int], T]) -> T:
    """``read(catalog, row)``, the one rule for where it is kept: in a category that is :func:`worked_out_at_once`,
    from ``category_kind`` (keyed by category: the value of every product of it, built on the category's first
    use), else by :func:`kept_per_product` in ``product_kind``. ``category_kind`` must say of each product what
    ``read`` says; a reset reading a few products of a category then pays one look-up each instead of working
    each out."""
    category = catalog.category.item(row)
    if worked_out_at_once(len(catalog.category_rows[category])):
        return category_kind.of(catalog, category)[row]
    return kept_per_product(catalog, product_kind, row, read)


def kept_per_category_each(catalog: _Categorised, rows: Sequence[int], category_kind: Derived[dict[int, T]],
                           product_kind: Derived[dict[int, T]], read: Callable[[_Categorised, int], T]) -> list[T]:
    """:func:`kept_per_category` of each of ``rows``, in order, the catalog's columns looked up once for them all."""
    category_of, category_rows, of_category = catalog.category, catalog.category_rows, category_kind.of
    found = []
    for row in rows:
        category = category_of.item(row)
        found.append(of_category(catalog, category)[row] if worked_out_at_once(len(category_rows[category]))
                     else kept_per_product(catalog, product_kind, row, read))
    return found


def kept_per_products(catalog: _Catalog, kind: Derived[dict[int, T]], rows: Sequence[int],
                      read: Callable[[_Catalog, list[int]], list[T]]) -> list[T]:
    """:func:`kept_per_product` of each of ``rows``, in order, with the products not kept yet read in one
    call, ``read(catalog, rows)`` (a page of search results: one read of the memo, one of the columns)."""
    kept = kind.of(catalog)
    new = [row for row in dict.fromkeys(rows) if row not in kept]
    if not new:
        return [kept[row] for row in rows]
    found = dict(zip(new, read(catalog, new)))
    page = [kept[row] if row in kept else found[row] for row in rows]
    if len(kept) + len(found) > KEPT_PRODUCTS:
        kept.clear()
    kept.update(islice(found.items(), KEPT_PRODUCTS))
    return page
