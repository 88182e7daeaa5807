"""Sorted column indexes: the rows matching a filter without a pass over every row.

:func:`matching_rows` returns exactly ``np.flatnonzero(filter_mask(catalog, flt, overrides))``,
but finds candidates through the filter's most selective indexed condition (an equality on brand
or a categorical attribute, or a price/rating/shipping/numeric bound) with a binary search in a
per-column sort order, then checks every condition on those candidates only. On a category's
sub-catalog (``recommend.category_view``) that makes an episode's valid set cost about
O(log n + candidates) instead of O(category size), which grows with the catalog.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ecomrlve.catalog.filters import _CATEGORICAL_CODES, _NUMERIC_BOUNDS, ProductFilter, filter_mask
from ecomrlve.catalog.schema import Catalog

_WORD = re.compile(r"[a-z0-9]+")


class _SortedColumn:
    """One column's stable sort order and its values in that order."""

    def __init__(self, column: np.ndarray) -> None:
        self.order = np.argsort(column, kind="stable")
        self.values = column[self.order]

    def span(self, low=None, high=None) -> tuple[int, int]:
        """Positions in :attr:`values` of the values ``>= low`` and ``<= high`` (NaN never matches:
        NaNs sort last, after every finite bound). Integer bounds beyond the column's type are
        clipped to it, which can only widen the span."""
        if self.values.dtype.kind in "iu":
            info = np.iinfo(self.values.dtype)
            low = None if low is None else min(max(low, int(info.min)), int(info.max))
            high = None if high is None else min(max(high, int(info.min)), int(info.max))
        start = 0 if low is None else int(np.searchsorted(self.values, low, side="left"))
        if high is not None:
            end = int(np.searchsorted(self.values, high, side="right"))
        elif self.values.dtype.kind == "f":
            end = int(np.searchsorted(self.values, np.inf, side="right"))  # stop before the NaNs
        else:
            end = len(self.values)
        return start, max(start, end)

    def rows(self, start: int, end: int, *, ascending_already: bool) -> np.ndarray:
        rows = self.order[start:end].astype(np.int64)
        return rows if ascending_already else np.sort(rows)


def _sorted_column(catalog: Catalog, name: str, column: np.ndarray) -> _SortedColumn:
    """The index of ``column`` (named ``name``), built on first use and kept with the catalog."""
    cache = catalog.__dict__.setdefault("_sorted_columns", {})
    index = cache.get(name)
    if index is None:
        index = cache[name] = _SortedColumn(column)
    return index


def _candidate_spans(catalog: Catalog, flt: ProductFilter) -> list[tuple[_SortedColumn, int, int, bool]]:
    """For each indexed condition of ``flt``: (index, start, end, whether its rows come out ascending).

    The bounds are the very thresholds :func:`filter_mask` compares with, so a span holds exactly
    the rows meeting that one condition.
    """
    spans: list[tuple[_SortedColumn, int, int, bool]] = []

    def equal(name: str, column: np.ndarray, code: int) -> None:
        index = _sorted_column(catalog, name, column)
        spans.append((index, *index.span(code, code), True))  # a stable sort keeps equal values' rows ascending

    def bound(name: str, column: np.ndarray, low=None, high=None) -> None:
        index = _sorted_column(catalog, name, column)
        spans.append((index, *index.span(low, high), False))

    if flt.brand is not None:
        equal("brand", catalog.brand, catalog.brand_index.get(flt.brand.strip().lower(), -1))
    for attr, codes in _CATEGORICAL_CODES.items():
        value = getattr(flt, attr)
        if value is not None and attr in catalog.categorical:
            equal(attr, catalog.categorical[attr], codes.get(value.strip().lower(), -2))
    if flt.price_min is not None or flt.price_max is not None:
        bound("price_cents", catalog.price_cents,
              None if flt.price_min is None else math.ceil(flt.price_min * 100 - 1e-6),
              None if flt.price_max is None else math.floor(flt.price_max * 100 + 1e-6))
    if flt.rating_min is not None:
        bound("rating_x10", catalog.rating_x10, low=math.ceil(flt.rating_min * 10 - 1e-6))
    if flt.ship_days_max is not None:
        bound("ship_days", catalog.ship_days, high=flt.ship_days_max)
    for attr, low_field, high_field in _NUMERIC_BOUNDS:
        low, high = getattr(flt, low_field), getattr(flt, high_field)
        if (low is not None or high is not None) and attr in catalog.numeric:
            bound(attr, catalog.numeric[attr],
                  None if low is None else np.float32(low) - np.float32(1e-4),
                  None if high is None else np.float32(high) + np.float32(1e-4))
    return spans


def matching_rows(catalog: Catalog, flt: ProductFilter, stock_overrides: dict[int, int] | None = None) -> np.ndarray:
    """Ascending rows (int64) matching every condition of ``flt``: the same array as
    ``np.flatnonzero(filter_mask(catalog, flt, stock_overrides))``.

    Only the rows meeting the most selective indexed condition are checked; a filter with no
    indexed condition (category, in-stock or nothing) falls back to the full mask.
    """
    spans = _candidate_spans(catalog, flt)
    if not spans:
        return np.flatnonzero(filter_mask(catalog, flt, stock_overrides))
    index, start, end, ascending = min(spans, key=lambda span: span[2] - span[1])
    candidates = index.rows(start, end, ascending_already=ascending)
    return candidates[filter_mask(catalog, flt, stock_overrides, rows=candidates)]


def contains_sorted(rows: np.ndarray, row: int) -> bool:
    """Whether ascending ``rows`` holds ``row`` (O(log n); ``bool(np.isin(row, rows))`` is O(n))."""
    position = int(np.searchsorted(rows, row))
    return position < len(rows) and int(rows[position]) == row


def without_sold_out(rows: np.ndarray, stock_overrides: dict[int, int]) -> np.ndarray:
    """Ascending ``rows``, all in stock in the catalog, less those the episode sold out: what
    ``rows[filter_mask(catalog, ProductFilter(in_stock=True), stock_overrides, rows=rows)]`` gives
    for such rows, in O(changes · log n)."""
    sold_out = [row for row, stock in stock_overrides.items() if stock <= 0]
    if not sold_out:
        return rows
    positions = np.searchsorted(rows, sold_out)
    hit = positions < len(rows)
    hit[hit] = rows[positions[hit]] == np.asarray(sold_out)[hit]
    return np.delete(rows, positions[hit])


def title_word_index(catalog: Catalog) -> dict[str, np.ndarray]:
    """Word -> ascending rows whose lower-cased title contains it (words: runs of ``[a-z0-9]``),
    built once per catalog: with Arrow kernels when every title is ASCII, else title by title."""
    index = catalog.__dict__.get("_title_words")
    if index is None:
        titles = catalog.titles
        ascii_only = len(titles) > 0 and titles.null_count == 0 and pc.all(pc.string_is_ascii(titles)).as_py()
        index = _ascii_title_words(titles) if ascii_only else _python_title_words(titles)
        catalog.__dict__["_title_words"] = index
    return index


def _python_title_words(titles: pa.Array) -> dict[str, np.ndarray]:
    postings: dict[str, list[int]] = {}
    for row, title in enumerate(titles.to_pylist()):
        for word in set(_WORD.findall(title.lower())):
            postings.setdefault(word, []).append(row)
    return {word: np.asarray(rows, dtype=np.int64) for word, rows in postings.items()}


def _ascii_title_words(titles: pa.Array) -> dict[str, np.ndarray]:
    """:func:`_python_title_words` for ASCII titles (where ``str.lower`` is ASCII lower-casing)."""
    if isinstance(titles, pa.ChunkedArray):
        titles = titles.combine_chunks()
    tokens = pc.split_pattern_regex(pc.ascii_lower(titles), "[^a-z0-9]+")
    words, rows = pc.list_flatten(tokens), pc.list_parent_indices(tokens)
    nonempty = pc.greater(pc.binary_length(words), 0)
    encoded = pc.dictionary_encode(words.filter(nonempty))
    n = max(1, len(titles))
    pairs = np.unique(encoded.indices.to_numpy().astype(np.int64) * n + rows.filter(nonempty).to_numpy())
    word_ids, rows_of = pairs // n, pairs % n
    vocabulary = encoded.dictionary.to_pylist()
    bounds = np.searchsorted(word_ids, np.arange(len(vocabulary) + 1))
    return {word: rows_of[bounds[i]:bounds[i + 1]] for i, word in enumerate(vocabulary)}
