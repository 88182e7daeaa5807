"""Row-set helpers whose per-episode cost does not grow with the catalog.

Valid sets are ascending row arrays, so membership is a binary search (:func:`contains_sorted`;
:func:`gallop` in compiled kernels that walk two ascending lists),
and an episode's few stock changes are removed from a cached in-stock set by binary search too
(:func:`without_sold_out`). :func:`title_word_index` (word -> rows, for SUB's title overlap) is
built once per catalog from the titles' raw bytes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.schema import Catalog

_WORD = re.compile(r"[a-z0-9]+")


@numba.njit(nogil=True, cache=True)
def gallop(values: np.ndarray, low: int, high: int, x: int) -> int:  # pragma: no cover - compiled
    """First i in [low, high) with values[i] >= x (ascending values), or high: steps 1, 2, 4...
    from ``low``, then bisects, so a short hop costs O(1) and a long one O(log distance)."""
    step, previous, i = 1, low, low
    while i < high and values[i] < x:
        previous = i + 1
        i = low + step
        step *= 2
    end = min(i, high)
    while previous < end:
        middle = (previous + end) >> 1
        if values[middle] < x:
            previous = middle + 1
        else:
            end = middle
    return previous


def contains_sorted(rows: np.ndarray, row: int) -> bool:
    """Whether ascending ``rows`` holds ``row`` (O(log n); ``bool(np.isin(row, rows))`` is O(n))."""
    position = int(np.searchsorted(rows, row))
    return position < len(rows) and int(rows[position]) == row


def sorted_contains(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per value, whether ascending ``rows`` holds it: :func:`contains_sorted` for many values at once
    (O(m log n), where ``np.isin`` sorts both arrays)."""
    positions = np.searchsorted(rows, values)
    found = positions < len(rows)
    found[found] = rows[positions[found]] == values[found]
    return found


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


def title_word_index(catalog: Catalog) -> Mapping[str, np.ndarray]:
    """Word -> ascending rows whose lower-cased title contains it (words: runs of ``[a-z0-9]``),
    built once per catalog: from the raw bytes when every title is ASCII, else title by title (a catalog
    directory's main-type views read theirs from the directory, :class:`~ecomrlve.catalog.views.StoredTitleWords`)."""
    return TITLE_WORDS.of(catalog)


def _title_words(catalog: Catalog) -> dict[str, np.ndarray]:
    titles = catalog.titles
    ascii_only = len(titles) > 0 and titles.null_count == 0 and pc.all(pc.string_is_ascii(titles)).as_py()
    return _ascii_title_words(titles) if ascii_only else _python_title_words(titles)


TITLE_WORDS = derived("title_words", _title_words)


def _python_title_words(titles: pa.Array) -> dict[str, np.ndarray]:
    postings: dict[str, list[int]] = {}
    for row, title in enumerate(titles.to_pylist()):
        for word in set(_WORD.findall(title.lower())):
            postings.setdefault(word, []).append(row)
    return {word: np.asarray(rows, dtype=np.int64) for word, rows in postings.items()}


def _ascii_title_words(titles: pa.Array) -> dict[str, np.ndarray]:
    """:func:`_python_title_words` for ASCII titles (where ``str.lower`` is ASCII lower-casing),
    on the titles' raw bytes: words are cut with numpy, their text hashed by Arrow's dictionary
    encoding, and postings grouped by a stable sort (tokens come in row order)."""
    if isinstance(titles, pa.ChunkedArray):
        titles = titles.combine_chunks()
    if len(titles) == 0:
        return {}
    if titles.type != pa.string():  # int32 offsets below
        titles = titles.cast(pa.string())
    offsets = np.frombuffer(titles.buffers()[1], dtype=np.int32)[titles.offset:titles.offset + len(titles) + 1]
    data = np.frombuffer(titles.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
    starts_of_titles = (offsets[:-1] - offsets[0]).astype(np.int64)
    upper = (data >= ord("A")) & (data <= ord("Z"))
    lowered = data | (upper.astype(np.uint8) << 5)
    word = ((lowered >= ord("a")) & (lowered <= ord("z"))) | ((data >= ord("0")) & (data <= ord("9")))
    first = word.copy()  # a word starts after a non-word byte or at a title's first byte
    first[1:] &= ~word[:-1]
    first[starts_of_titles[starts_of_titles < len(data)]] = word[starts_of_titles[starts_of_titles < len(data)]]
    token_starts = np.flatnonzero(first)
    compact = lowered[word]  # the words' bytes, back to back; tokens start where ``first`` marks them
    token_offsets = np.append(np.flatnonzero(first[word]), len(compact)).astype(np.int32)
    tokens = pa.StringArray.from_buffers(len(token_starts), pa.py_buffer(token_offsets), pa.py_buffer(compact))
    encoded = pc.dictionary_encode(tokens)
    word_ids = encoded.indices.to_numpy()
    if len(encoded.dictionary) <= 1 << 16:  # numpy's stable sort is a radix sort for 16-bit keys
        word_ids = word_ids.astype(np.uint16)
    rows = np.searchsorted(starts_of_titles, token_starts, side="right") - 1
    order = np.argsort(word_ids, kind="stable")  # by word, rows ascending within a word
    word_ids, rows = word_ids[order], rows[order]
    new = np.ones(len(rows), dtype=bool)  # the first of each (word, row) pair
    new[1:] = (word_ids[1:] != word_ids[:-1]) | (rows[1:] != rows[:-1])
    word_ids, rows = word_ids[new], rows[new]
    vocabulary = encoded.dictionary.to_pylist()
    bounds = np.searchsorted(word_ids, np.arange(len(vocabulary) + 1))
    return {word: rows[bounds[i]:bounds[i + 1]] for i, word in enumerate(vocabulary)}
