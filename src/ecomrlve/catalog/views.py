"""Per-category sub-catalogs: one leaf category's products as contiguous columns.

Filtering and scoring within a category (valid sets, substitutes, searches filtered to a
category) reads a :class:`CategoryView` built once per catalog and category, so a filter is a
few contiguous, vectorised comparisons over the category's rows instead of gathers from the
whole catalog. (Binary searches in per-column sort orders were tried and measured slower at
1M products: the Python cost of choosing candidates outweighs comparing 22k contiguous rows.)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ecomrlve.catalog.derived import Derived, derived
from ecomrlve.catalog.filters import CONDITION_FIELDS, STOCKED, AllowedRows, ProductFilter, filter_mask
from ecomrlve.catalog.product_type import category_types
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.scoring_terms import ATTRIBUTE_COLUMNS, UTILITY_TERMS, StoredTerms
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.catalog.variants import value_bits, variant_columns


@dataclass(frozen=True)
class CategoryView:
    """One leaf category's products as a contiguous sub-catalog (local row ``i`` is global
    ``rows[i]``): filtering and scoring it reads contiguous memory instead of gathering from the
    whole catalog. Built once per catalog and category (:func:`category_view`)."""

    rows: np.ndarray  # global rows, ascending
    catalog: Catalog

    def local(self, row: int) -> int:
        return int(np.searchsorted(self.rows, row))

    def contains(self, row: int) -> bool:
        position = self.local(row)
        return position < len(self.rows) and int(self.rows[position]) == row

    def overrides(self, stock_overrides: dict[int, int]) -> dict[int, int]:
        """The episode's stock changes that concern this category, in local rows."""
        return {self.local(row): stock for row, stock in stock_overrides.items() if self.contains(row)}

    def matching(self, flt: ProductFilter, stock_overrides: dict[int, int]) -> np.ndarray:
        """Ascending local rows meeting ``flt`` (whose category, if any, is ignored: every row has
        this one) with the episode's ``stock_overrides`` (global rows)."""
        if flt.category is not None:
            flt = flt.model_copy(update={"category": None})
        return np.flatnonzero(filter_mask(self.catalog, flt, self.overrides(stock_overrides)))

    def allowed(self, flt: ProductFilter, stock_overrides: dict[int, int] | None, catalog_size: int) -> AllowedRows:
        """:func:`allowed_rows` of ``flt`` (whose category is this one) in the catalog of ``catalog_size`` rows
        the view is of: a search that has the view reads it once for both."""
        if all(getattr(flt, name) is None for name in CONDITION_FIELDS):  # the category alone: every row of it
            return AllowedRows(catalog_size, rows=self.rows)
        return AllowedRows(catalog_size, rows=self.rows[self.matching(flt, stock_overrides or {})])


def category_view(catalog: Catalog, category: int, *, main_type_only: bool = False) -> CategoryView:
    """The rows of ``category`` (what a search filtered to it can return), or with ``main_type_only``
    the products a request for the category can mean: its rows of the category's main type (a
    "Smartwatches" request never means the straps and chargers filed next to the watches)."""
    return CATEGORY_VIEWS.of(catalog, (category, main_type_only))


def view_rows(catalog: Catalog, category: int, main_type_only: bool) -> np.ndarray:
    """The ascending rows of a category view."""
    return np.sort(category_types(catalog, category).main_rows() if main_type_only else catalog.category_rows[category])


def _category_view(catalog: Catalog, key: tuple[int, bool]) -> CategoryView:
    category, main_type_only = key
    stored = STORED_VIEWS.of(catalog)
    if stored is not None:  # a catalog directory's: every view of a kind back to back, memory-mapped
        views = stored[main_type_only]
        start, stop = views.bounds[category], views.bounds[category + 1]
        view = CategoryView(views.stacked.rows[start:stop], sub_catalog(views.stacked.catalog, np.s_[start:stop],
                                                                           f"{catalog.name}#{category}"))
        if views.title_words is not None:
            view.catalog.derived.provide("title_words", StoredViewTitleWords(views.title_words, category))
        if views.terms is not None:  # shared pages, not one copy per process
            terms, columns = views.terms.of_view(start, stop)
            view.catalog.derived.provide(UTILITY_TERMS.name, terms)
            view.catalog.derived.provide(ATTRIBUTE_COLUMNS.name, columns)
        return view
    rows = view_rows(catalog, category, main_type_only)
    return CategoryView(rows, sub_catalog(catalog, rows, f"{catalog.name}#{category}"))


def sub_catalog(catalog: Catalog, rows: np.ndarray | slice, name: str) -> Catalog:
    """The products ``rows`` of ``catalog`` (indexes, or a slice: no copy) as a catalog of their own, with the
    catalog's variant draw (not one of its own)."""
    titles = catalog.titles[rows] if isinstance(rows, slice) else catalog.titles.take(pa.array(rows))
    sub = Catalog(
        name=name, ids=catalog.ids[rows], titles=titles,
        category=catalog.category[rows], categories=catalog.categories, brand=catalog.brand[rows],
        brands=catalog.brands, price_cents=catalog.price_cents[rows], rating_x10=catalog.rating_x10[rows],
        rating_count=catalog.rating_count[rows], ship_days=catalog.ship_days[rows], stock=catalog.stock[rows],
        categorical={a: c[rows] for a, c in catalog.categorical.items()},
        numeric={a: v[rows] for a, v in catalog.numeric.items()})
    sub.derived.provide("variant_columns", variant_columns(catalog).take(rows))
    return sub


CATEGORY_VIEWS = derived("category_views", _category_view)
@dataclass(frozen=True)
class StoredTitleWords:
    """Every view's title word index (:func:`~ecomrlve.catalog.rowindex.title_word_index`) back to back: view
    ``v``'s words are ``words[word_starts[v]:word_starts[v + 1]]``, word ``i`` of all has rows
    ``rows[bounds[i + v]:bounds[i + v + 1]]`` (each view's bounds end with one more entry)."""

    words: pa.Array
    word_starts: list[int]
    bounds: np.ndarray
    rows: np.ndarray

    def of_view(self, view: int) -> dict[str, np.ndarray]:
        start, stop = self.word_starts[view], self.word_starts[view + 1]
        bounds = self.bounds[start + view: stop + view + 1].tolist()
        return {word: self.rows[bounds[i]:bounds[i + 1]] for i, word in enumerate(self.words[start:stop].to_pylist())}

    @staticmethod
    def of(indexes: list[Mapping[str, np.ndarray]]) -> StoredTitleWords:
        """The indexes of every view, in view order, back to back."""
        words = [word for index in indexes for word in index]
        rows = [postings for index in indexes for postings in index.values()]
        bounds, at = [], 0
        for index in indexes:
            for postings in index.values():
                bounds.append(at)
                at += len(postings)
            bounds.append(at)
        return StoredTitleWords(pa.array(words, pa.string()), np.cumsum([0, *map(len, indexes)]).tolist(),
                                np.array(bounds, dtype=np.int64),
                                np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64))


class StoredViewTitleWords(Mapping[str, np.ndarray]):
    """One stored view's title word index, made from the directory's arrays when first read: a dictionary of
    every view's words would be private memory in every process (about 18 MiB at 2M products) where episodes
    read the words of the few views SUB scores. Two threads reading it first may both make it: the same words
    and rows (views of the mapped file), so either is the index."""

    __slots__ = ("_stored", "_view", "_index")

    def __init__(self, stored: StoredTitleWords, view: int) -> None:
        self._stored, self._view = stored, view
        self._index: dict[str, np.ndarray] | None = None

    def _words(self) -> dict[str, np.ndarray]:
        index = self._index
        if index is None:
            index = self._index = self._stored.of_view(self._view)
        return index

    def __getitem__(self, word: str) -> np.ndarray:
        return self._words()[word]

    def __iter__(self) -> Iterator[str]:
        return iter(self._words())

    def __len__(self) -> int:
        return self._stored.word_starts[self._view + 1] - self._stored.word_starts[self._view]


@dataclass(frozen=True)
class StoredViews:
    """One kind of a directory's views: every category's view back to back (a :class:`CategoryView` whose rows are
    the views' rows in category order), where each starts, and (main-type views) their title word indexes and
    their scoring terms."""

    stacked: CategoryView
    bounds: list[int]
    title_words: StoredTitleWords | None
    terms: StoredTerms | None = None


#: A catalog directory's views (installed when it is opened), per ``main_type_only``.
STORED_VIEWS: Derived[dict[bool, StoredViews] | None] = derived("stored_views", lambda catalog: None)


def prepare_filters(catalog: Catalog) -> None:
    """What filters read, built now (a search engine's construction: env time) instead of in the step whose filter
    first reads it: every category's views (all rows, and the main type's; declared ``env``) with their in-stock
    columns, and the catalog's value bits of every categorical attribute (a first category filter in a step built a
    view, ~0.1-0.3 ms, and a first attribute filter over the catalog its value bits, ~0.3 ms). The views' own value
    bits stay built on first use (a few ten us each; at 2M products, all of them would be ~80 MB per process). Pure
    values of the catalog's columns, the same whenever they are built."""
    for category, rows in enumerate(catalog.category_rows):
        if len(rows):
            for main_type_only in (False, True):
                STOCKED.of(category_view(catalog, category, main_type_only=main_type_only).catalog)
    for attribute in CATEGORICAL_ATTRIBUTES:
        value_bits(catalog, attribute)


def allowed_rows(catalog: Catalog, flt: ProductFilter, stock_overrides: dict[int, int] | None = None) -> AllowedRows:
    """The rows matching ``flt``: the same set as :func:`filter_mask`, computed within the filter's
    categories when it names any: for one category through its view's sorted column indexes
    (this module), so the cost follows the matching rows, not the catalog."""
    if flt.category is None:
        return AllowedRows.from_mask(filter_mask(catalog, flt, stock_overrides))
    categories = catalog.category_index.get(flt.category.strip().lower(), ())
    if len(categories) == 1:
        return category_view(catalog, categories[0]).allowed(flt, stock_overrides, len(catalog))
    rows = np.sort(np.concatenate([catalog.category_rows[c] for c in categories] or [np.empty(0, np.int64)]))
    return AllowedRows(len(catalog), rows=rows[filter_mask(catalog, flt, stock_overrides, rows=rows)])
