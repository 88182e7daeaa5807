"""Row-set helpers whose per-episode cost does not grow with the catalog.

Valid sets are ascending row arrays, so membership is a binary search (:func:`contains_sorted`),
and an episode's few stock changes are removed from a cached in-stock set by binary search too
(:func:`without_sold_out`). :func:`title_word_index` (word -> rows, for SUB's title overlap) is
built once per catalog with Arrow kernels.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ecomrlve.catalog.schema import Catalog

_WORD = re.compile(r"[a-z0-9]+")


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
