"""Catalog search: exact filters, a pluggable relevance retriever, sorting and degradation.

The pipeline is ``allowed rows -> retriever ranks within them -> sort -> distractors -> cap``.
Filters are applied *before* ranking, so a selective filter returns every match that exists
instead of the few that survived a global top-k. A filter naming a category is evaluated on that
category's rows only, and a small allowed set is scored row by row instead of through an
O(catalog) mask (:class:`~ecomrlve.catalog.filters.AllowedRows`). Rankings are total orders
(score descending, then row ascending), so both ways give the same results. Within one category,
BM25 keeps each query's best rows once ranked (:class:`CategoryRows`), so a repeated search costs
O(k), not O(category). A
:class:`Retriever` only scores text; the lexical BM25 one lives here, dense and hybrid ones in
``dense.py``.
"""

from __future__ import annotations

import math
import random
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Literal, Protocol

import bm25s
import numba
import numpy as np

from ecomrlve.catalog.filters import AllowedRows, ProductFilter
from ecomrlve.catalog.rowindex import gallop
from ecomrlve.catalog.schema import NO_VALUE, Catalog
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.catalog.views import allowed_rows, category_view, prepare_filters

SortBy = Literal["relevance", "price_asc", "price_desc", "rating", "ship_days"]

#: Largest share of the catalog an allowed set may be for BM25 to score just its rows (binary
#: searches in the posting lists) instead of accumulating scores for every row.
ROW_SCORING_MAX_SHARE = 0.125

#: How many of a query's best rows in a category BM25 keeps once ranked: a search for more, or
#: through filters too selective to find its k among them, scores the allowed rows instead.
RANKING_DEPTH = 1024
#: Rows all kept rankings of one retriever may hold together (12 bytes each); beyond it the least
#: recently used are dropped.
RANKING_CACHE_ROWS = 1 << 21
#: Queries whose term ids a retriever keeps (agents repeat their searches).
QUERY_CACHE_SIZE = 4096

_TOKEN = re.compile(r"[a-z0-9]+")
#: Every byte but ``[a-z0-9]`` to a space: on ASCII text, translating and splitting finds the
#: words ``_TOKEN`` finds, in about half the time.
_NON_WORD_TO_SPACE = bytes(c if chr(c) in "abcdefghijklmnopqrstuvwxyz0123456789" else ord(" ") for c in range(256))
_STOPWORDS = frozenset(
    "a an and are as at be but by for from i im i'm in is it me my need of on or please some "
    "that the this to want with would you your like looking get find".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens with stop words removed and a light plural fold ("chargers" -> "charger")."""
    lowered = text.lower()
    if lowered.isascii():
        words = lowered.encode().translate(_NON_WORD_TO_SPACE).decode().split()
    else:
        words = _TOKEN.findall(lowered)
    return [w[:-1] if len(w) > 3 and w[-1] == "s" and w[-2] != "s" else w for w in words if w not in _STOPWORDS]


def document_text(catalog: Catalog, row: int) -> str:
    """What the indexes read for one product: title, brand, category path, attributes (and description)."""
    return document_texts(catalog, row, row + 1)[0]


def document_texts(catalog: Catalog, start: int = 0, stop: int | None = None) -> list[str]:
    """:func:`document_text` for rows ``start..stop`` at once, column by column (fast at 2M rows)."""
    stop = len(catalog) if stop is None else min(stop, len(catalog))
    titles = catalog.titles.slice(start, stop - start).to_pylist()
    category_text = [f"{' '.join(c.path)} {c.noun}" for c in catalog.categories]
    columns: list[list[str | None]] = []
    for attr, codes in catalog.categorical.items():
        vocab = CATEGORICAL_ATTRIBUTES[attr]
        columns.append([None if c == NO_VALUE else vocab[c] for c in codes[start:stop].tolist()])
    for values in catalog.numeric.values():
        columns.append([None if math.isnan(v) else str(round(v, 2)) for v in values[start:stop].tolist()])
    brands, cats = catalog.brand[start:stop].tolist(), catalog.category[start:stop].tolist()
    texts = []
    for i, title in enumerate(titles):
        attributes = " ".join(value for column in columns if (value := column[i]) is not None)
        texts.append(f"{title} {catalog.brands[brands[i]]} {category_text[cats[i]]} {attributes}")
    if catalog.descriptions is not None:
        descriptions = catalog.descriptions.slice(start, stop - start).to_pylist()
        texts = [f"{t} {d}" if d else t for t, d in zip(texts, descriptions)]
    return texts


class CategoryRows(AllowedRows):
    """Allowed rows that all lie in one category, ``category``, whose rows are ``category_rows``
    (ascending): :class:`SearchEngine` passes these for a filter naming one category, so that
    :class:`BM25Retriever` can take them from the query's ranking of the whole category, kept
    across searches, instead of scoring them. Other retrievers see plain allowed rows."""

    def __init__(self, allowed: AllowedRows, category: int, category_rows: np.ndarray) -> None:
        super().__init__(allowed.n, rows=allowed.rows)
        self.category = category
        self.category_rows = category_rows

    @property
    def whole_category(self) -> bool:
        return self.count == len(self.category_rows)


class Retriever(Protocol):
    """Scores products for a free-text query."""

    def top(self, query: str, k: int, allowed: AllowedRows | None) -> np.ndarray:
        """Up to ``k`` rows with positive relevance, best first, restricted to ``allowed``."""
        ...

    def matching(self, query: str, allowed: AllowedRows | None) -> np.ndarray | None:
        """Every row with positive relevance within ``allowed``; None when the query has no usable term."""
        ...


@numba.njit(nogil=True, cache=True)
def _accumulate(scores: np.ndarray, data: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
                token_ids: np.ndarray) -> None:  # pragma: no cover - compiled
    """BM25 of every row into all-zero ``scores``: the terms' posting lists summed in term order
    (as bm25s does)."""
    for t in token_ids:
        for j in range(indptr[t], indptr[t + 1]):
            scores[indices[j]] += data[j]


@numba.njit(nogil=True, cache=True)
def _worse(value_a: float, row_a: int, value_b: float, row_b: int) -> bool:  # pragma: no cover - compiled
    """Ranks below: lower score, or the same score and a later row."""
    return value_a < value_b or (value_a == value_b and row_a > row_b)


@numba.njit(nogil=True, cache=True)
def _sift_down(values: np.ndarray, rows: np.ndarray, position: int, size: int) -> None:  # pragma: no cover - compiled
    """Restore the heap (worst result at the root) below ``position``."""
    while True:
        worst, left = position, 2 * position + 1
        for child in (left, left + 1):
            if child < size and _worse(values[child], rows[child], values[worst], rows[worst]):
                worst = child
        if worst == position:
            return
        values[position], values[worst] = values[worst], values[position]
        rows[position], rows[worst] = rows[worst], rows[position]
        position = worst


@numba.njit(nogil=True, cache=True)
def _heap_add(values: np.ndarray, rows: np.ndarray, m: int, value: float, row: int, k: int) -> int:  # pragma: no cover - compiled
    """Add (value, row) to a heap of the ``k`` best of those seen (worst at the root) holding
    ``m``, when it has room or (value, row) beats its root; returns the new count. Called only
    then: a call with arrays costs reference counting, too much for every scored row."""
    if m < k:  # append, then sift up
        position = m
        m += 1
        values[position], rows[position] = value, row
        while position > 0:
            parent = (position - 1) >> 1
            if not _worse(values[position], rows[position], values[parent], rows[parent]):
                break
            values[position], values[parent] = values[parent], values[position]
            rows[position], rows[parent] = rows[parent], rows[position]
            position = parent
    else:
        values[0], rows[0] = value, row
        _sift_down(values, rows, 0, m)
    return m


@numba.njit(nogil=True, cache=True)
def _positive_rows(scores: np.ndarray, indptr: np.ndarray, indices: np.ndarray, token_ids: np.ndarray,
                   mask: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """(rows, scores) of the rows in the terms' posting lists with a positive score and, when
    ``mask`` is non-empty, allowed by it, unordered: all of them when ``k`` is 0, else only the
    ``k`` best (score, then row). Leaves ``scores`` all-zero again."""
    size = (indptr[token_ids + 1] - indptr[token_ids]).sum() if k == 0 else k
    values = np.empty(size, dtype=np.float32)
    rows = np.empty(size, dtype=np.int64)
    m = 0
    for t in token_ids:
        for j in range(indptr[t], indptr[t + 1]):
            row = indices[j]
            value = scores[row]
            scores[row] = 0  # each row once
            if value <= 0 or (len(mask) and not mask[row]):
                continue
            if k == 0:
                values[m], rows[m] = value, row
                m += 1
            elif m < k or _worse(values[0], rows[0], value, row):
                m = _heap_add(values, rows, m, value, row, k)
    return rows[:m], values[:m]


@numba.njit(nogil=True, cache=True)
def _positive_of(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """(rows, scores) of the ``rows`` whose aligned score is positive, unordered: all of them when
    ``k`` is 0, else only the ``k`` best (score, then row), so that ranking a category's rows
    sorts ``k`` of them instead of all."""
    size = len(rows) if k == 0 else min(k, len(rows))
    values = np.empty(size, dtype=np.float32)
    kept = np.empty(size, dtype=np.int64)
    m = 0
    for i in range(len(rows)):
        value, row = scores[i], rows[i]
        if value <= 0:
            continue
        if k == 0:
            values[m], kept[m] = value, row
            m += 1
        elif m < k or _worse(values[0], kept[0], value, row):
            m = _heap_add(values, kept, m, value, row, k)
    return kept[:m], values[:m]


@numba.njit(nogil=True, cache=True)
def _score_rows(data: np.ndarray, indptr: np.ndarray, indices: np.ndarray, token_ids: np.ndarray, rows: np.ndarray,
                member: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """BM25 of the ascending ``rows`` only, bit-identical to :func:`_accumulate` on them (the same
    per-row summation order).

    ``member`` (an all-zero bitmap of every row, left all-zero again) marks the rows; a posting
    list is scanned against it (O(p), sequential; a member's position in ``rows`` is the next
    one or found by galloping forward, as both are ascending: a jitted call per member costs
    reference counting) or, when over 8 times longer than ``rows``,
    searched for each row by galloping (O(c log(p / c))). Scores accumulate in a compact array:
    scattering them over an every-row array cost a cache miss per match.
    """
    c = len(rows)
    for row in rows:
        member[row >> 3] |= np.uint8(1 << (row & 7))
    scores = np.zeros(c, dtype=np.float32)
    for t in token_ids:
        start, end = indptr[t], indptr[t + 1]
        if end - start > 8 * c:
            j = start
            for i in range(c):
                j = gallop(indices, j, end, rows[i])
                if j == end:
                    break
                if indices[j] == rows[i]:
                    scores[i] += data[j]
        else:
            i = 0  # members come in the order of ``rows``: often the very next one
            for j in range(start, end):
                row = indices[j]
                if member[row >> 3] & (1 << (row & 7)):
                    if rows[i] != row:
                        i = gallop(rows, i, c, row)
                    scores[i] += data[j]
                    i += 1
    for row in rows:
        member[row >> 3] = 0
    return scores


@numba.njit(nogil=True, cache=True)
def _first_allowed(ranked: np.ndarray, allowed: np.ndarray, k: int) -> np.ndarray:  # pragma: no cover - compiled
    """Positions in ``ranked`` of its first ``k`` rows found in the ascending ``allowed`` (a binary
    search each): walking a ranking, an allowed set covering a fair share of it stops early."""
    positions = np.empty(min(k, len(ranked)), dtype=np.int64)
    m = 0
    for i in range(len(ranked)):
        if m == k:
            break
        j = np.searchsorted(allowed, ranked[i])
        if j < len(allowed) and allowed[j] == ranked[i]:
            positions[m] = i
            m += 1
    return positions[:m]


_warmed = threading.Event()


def warm_kernels() -> None:
    """Compile the kernels above, or load them from numba's on-disk cache (``cache=True``: kept
    next to this module, or in the user's cache directory when it is read-only), for the array
    types an index has: writable when built in memory, read-only when memory-mapped from a
    catalog directory. Called when a :class:`SearchEngine` is made, so that the first search
    does not pay for it; the kernels run on empty inputs and change nothing. Once per process.
    """
    if _warmed.is_set():
        return
    for writable in (True, False):
        data, indptr, indices = np.zeros(1, np.float32), np.zeros(2, np.int64), np.zeros(1, np.int32)
        for array in (data, indptr, indices):
            array.flags.writeable = writable
        no_terms = np.zeros(0, dtype=np.int64)
        scores = np.zeros(1, dtype=np.float32)
        _accumulate(scores, data, indptr, indices, no_terms)
        _positive_rows(scores, indptr, indices, no_terms, np.zeros(0, dtype=bool), 0)
        no_rows = np.zeros(0, dtype=np.int64)
        _positive_of(no_rows, _score_rows(data, indptr, indices, no_terms, no_rows, np.zeros(1, dtype=np.uint8)), 0)
        ranked = np.zeros(0, dtype=np.int64)  # a kept ranking is read-only
        ranked.flags.writeable = writable
        _first_allowed(ranked, no_rows, 1)
    _warmed.set()


def best_first(rows: np.ndarray, scores: np.ndarray, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` (default all) best (row, score) pairs: score descending, then row ascending."""
    if k is not None and len(rows) > k:
        threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= threshold
        rows, scores = rows[keep], scores[keep]
    order = np.lexsort((rows, -scores))[:k]
    return rows[order], scores[order]


def _query_term_ids(vocab: dict[str, int]) -> Callable[[str], tuple[int, ...]]:
    """A query's distinct indexed terms as ascending term ids, kept for the ``QUERY_CACHE_SIZE``
    latest queries. It closes over the vocabulary, not the retriever: a cache of a bound method
    would make a reference cycle, and a dropped retriever (with its memory-mapped index) would
    wait for the garbage collector."""

    @lru_cache(maxsize=QUERY_CACHE_SIZE)
    def term_ids(query: str) -> tuple[int, ...]:
        return tuple(sorted({vocab[t] for t in tokenize(query) if t in vocab}))

    return term_ids


class BM25Retriever:
    """Lexical BM25 over :func:`document_text`: a bm25s index, scored by the kernels above.

    bm25s' own top-k breaks score ties arbitrarily; these kernels rank by score, then row, and
    score either every row or only the allowed ones with bit-identical results.
    """

    def __init__(self, catalog: Catalog | None = None, *, show_progress: bool = False,
                 index: bm25s.BM25 | None = None, chunk: int = 50_000) -> None:
        if index is None:
            if catalog is None:
                raise ValueError("BM25Retriever needs a catalog to index or a prebuilt index")
            vocab: dict[str, int] = {}
            corpus_ids = []
            for start in range(0, len(catalog), chunk):
                for text in document_texts(catalog, start, start + chunk):
                    corpus_ids.append([vocab.setdefault(t, len(vocab)) for t in tokenize(text)])
            index = bm25s.BM25()  # bm25s builds and stores; the kernels above score
            index.index((corpus_ids, vocab), show_progress=show_progress)
        if index.nonoccurrence_array is not None:
            raise ValueError(f"BM25 variant {index.method!r} scores non-occurrence; only lucene/robertson/atire are supported")
        self._bm25 = index
        self._vocab = self._bm25.vocab_dict
        self._n = int(self._bm25.scores["num_docs"])
        self._scratch = threading.local()
        # (category, *term ids) -> the RANKING_DEPTH best (rows, scores) and whether that is every positive row
        self._rankings: OrderedDict[tuple[int, ...], tuple[np.ndarray, np.ndarray, bool]] = OrderedDict()
        self._ranked_rows = 0  # held by self._rankings
        self._rankings_lock = threading.Lock()
        self._query_terms = _query_term_ids(self._vocab)

    def save(self, directory: Path) -> None:
        """Write the index (bm25s format) so :meth:`load` can memory-map it."""
        self._bm25.save(str(directory), show_progress=False)

    @classmethod
    def load(cls, directory: Path) -> BM25Retriever:
        """A retriever over an index written by :meth:`save`, memory-mapped (loads in milliseconds)."""
        return cls(index=bm25s.BM25.load(str(directory), mmap=True, show_progress=False,
                                          override_params={"backend": "numpy"}))

    def _query_ids(self, query: str) -> np.ndarray:
        return np.asarray(self._query_terms(query), dtype=np.int64)

    def positive(self, ids: np.ndarray, allowed: AllowedRows | None,
                 k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Every allowed row with a positive score for the term ``ids``, and its score (unordered);
        with ``k``, at least the ``k`` best of them.

        An allowed set of at most ``ROW_SCORING_MAX_SHARE`` of the catalog is scored row by row;
        otherwise every row is scored and the mask applied.
        """
        data, indptr, indices = self._postings()
        scratch = self._scratch_arrays()
        if allowed is not None and allowed.count <= ROW_SCORING_MAX_SHARE * self._n:
            rows = allowed.rows
            return _positive_of(rows, _score_rows(data, indptr, indices, ids, rows, scratch["member"]), k or 0)
        mask = np.empty(0, dtype=bool) if allowed is None else allowed.mask
        _accumulate(scratch["scores"], data, indptr, indices, ids)
        return _positive_rows(scratch["scores"], indptr, indices, ids, mask, k or 0)

    def _postings(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The index's (scores, row offsets per term, rows): term ``t``'s postings are ``indptr[t]:indptr[t + 1]``."""
        index = self._bm25.scores
        return index["data"], index["indptr"], index["indices"]

    def _scratch_arrays(self) -> dict[str, np.ndarray]:
        """This thread's all-zero scratch arrays: the kernels set and clear them in place."""
        scratch = self._scratch.__dict__
        if not scratch:
            scratch["member"] = np.zeros((self._n + 7) // 8, dtype=np.uint8)
            scratch["scores"] = np.zeros(self._n, dtype=np.float32)
        return scratch

    def ranked_in_category(self, ids: np.ndarray, allowed: CategoryRows,
                           k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``k`` best allowed rows for the term ``ids`` and their scores, best first, from the
        category's kept ranking (exactly the head of :func:`best_first` of :meth:`positive`); None
        when ``k`` exceeds ``RANKING_DEPTH`` or the allowed rows are too few of the ranked ones."""
        if k > RANKING_DEPTH:
            return None
        rows, scores, complete = self._category_ranking(ids, allowed.category, allowed.category_rows)
        if allowed.whole_category:  # every ranked row is allowed
            found = rows[:k], scores[:k]
        else:
            positions = _first_allowed(rows, allowed.rows, k)
            found = rows[positions], scores[positions]
        return found if len(found[0]) == k or complete else None

    def _category_ranking(self, ids: np.ndarray, category: int,
                          category_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """The ``RANKING_DEPTH`` best (rows, scores) of ``category`` for the term ``ids``, best first
        and read-only, and whether they are all its positive rows: scored on first use, then kept."""
        key = (category, *ids.tolist())
        with self._rankings_lock:
            ranking = self._rankings.get(key)
            if ranking is not None:
                self._rankings.move_to_end(key)
                return ranking
        data, indptr, indices = self._postings()
        scores = _score_rows(data, indptr, indices, ids, category_rows, self._scratch_arrays()["member"])
        rows, values = best_first(*_positive_of(category_rows, scores, RANKING_DEPTH))
        for array in (rows, values):
            array.flags.writeable = False
        ranking = (rows, values, int(np.count_nonzero(scores > 0)) <= RANKING_DEPTH)
        with self._rankings_lock:
            if key not in self._rankings:  # another thread may have ranked it meanwhile
                self._rankings[key] = ranking
                self._ranked_rows += len(rows)
                while self._ranked_rows > RANKING_CACHE_ROWS:
                    self._ranked_rows -= len(self._rankings.popitem(last=False)[1][0])
        return ranking

    def top(self, query: str, k: int, allowed: AllowedRows | None) -> np.ndarray:
        return self.scored(query, k, allowed)[0]

    def scored(self, query: str, k: int, allowed: AllowedRows | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`top` with the BM25 score of each row (for score fusion)."""
        ids = self._query_ids(query)
        if not len(ids) or k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        if isinstance(allowed, CategoryRows):
            ranked = self.ranked_in_category(ids, allowed, k)
            if ranked is not None:
                return ranked
        return best_first(*self.positive(ids, allowed, k), k)

    def matching(self, query: str, allowed: AllowedRows | None) -> np.ndarray | None:
        ids = self._query_ids(query)
        if not len(ids):
            return None
        return best_first(*self.positive(ids, allowed))[0]


def default_retriever(catalog: Catalog) -> Retriever:
    """The retriever a :class:`SearchEngine` uses unless given one.

    A catalog loaded from a catalog directory brings its persisted indexes (hybrid when it has
    vectors) through its ``retriever_source``; an in-memory catalog gets lexical BM25, built on first
    use (see docs/catalogs.md, "Retrieval", for why the embedded default stays lexical).
    """
    if catalog.retriever_source is not None:
        retriever: Retriever = catalog.retriever_source(catalog)
        return retriever
    if len(catalog) < ANNOUNCED_BUILD:
        return BM25Retriever(catalog)
    sys.stderr.write(f"ecomrlve: building the BM25 index of {len(catalog):,} products in memory (about "
                     f"{len(catalog) * 3e-5:.0f} s; `ecomrlve catalog build` saves it in a directory, opened in seconds)\n")
    started = time.perf_counter()  # for the message only
    built = BM25Retriever(catalog)
    sys.stderr.write(f"ecomrlve: BM25 index built in {time.perf_counter() - started:.0f} s\n")
    return built


#: From this many products on, building the in-memory index (about 30 s per million) is said on stderr.
ANNOUNCED_BUILD = 200_000


#: The catalog column each order other than relevance sorts by, and whether larger values come first
#: ("popularity" ranks the filtered products no query word matched).
_ORDER_COLUMNS = {
    "price_asc": ("price_cents", False),
    "price_desc": ("price_cents", True),
    "rating": ("rating_x10", True),
    "ship_days": ("ship_days", False),
    "popularity": ("rating_count", True),
}


class SearchEngine:
    """Filter, rank and sort over one catalog. Thread-safe and shared by every episode."""

    def __init__(self, catalog: Catalog, retriever: Retriever | None = None) -> None:
        self.catalog = catalog
        self._retriever = retriever
        self._lock = threading.Lock()
        warm_kernels()
        prepare_filters(catalog)  # no step pays for a category's view or an attribute's value bits
        # category -> every row of it allowed (with its mask, built only when a category is a large share of the catalog)
        self._whole_categories: dict[int, CategoryRows] = {}

    @property
    def retriever(self) -> Retriever:
        """The retriever, built on first use so that resets never pay for an index."""
        if self._retriever is None:
            with self._lock:
                if self._retriever is None:
                    self._retriever = default_retriever(self.catalog)
        return self._retriever

    def search(self, query: str, flt: ProductFilter | None, sort_by: SortBy, k: int,
               stock_overrides: dict[int, int] | None = None, allowed: AllowedRows | None = None) -> np.ndarray:
        """Up to ``k`` rows matching ``flt``, ordered by ``sort_by``.

        Relevance order puts query matches first, then (only when filters were given) the other
        filtered products by popularity, so a filter-only search still lists what matches.
        ``allowed``: the rows ``flt`` allows, when the caller has them (:meth:`allowed`).
        """
        if allowed is None and flt is not None:
            allowed = self.allowed(flt, stock_overrides)
        if sort_by == "relevance":
            ranked = self.retriever.top(query, k, allowed) if query.strip() else np.empty(0, np.int64)
            if len(ranked) >= k or allowed is None:
                return ranked[:k]
            # retrievers return allowed rows only, so each ranked row is found in the ascending rows
            remaining = np.delete(allowed.rows, np.searchsorted(allowed.rows, ranked))
            return np.concatenate([ranked, self._top_by(remaining, "popularity", k - len(ranked))])
        candidates = self.retriever.matching(query, allowed) if query.strip() else None
        if candidates is None or len(candidates) == 0:
            # As in relevance order: a filter with no query match still lists what it matches.
            if allowed is None:
                return np.empty(0, dtype=np.int64)
            candidates = allowed.rows
        return self._top_by(candidates, sort_by, k)

    def allowed(self, flt: ProductFilter, stock_overrides: dict[int, int] | None) -> AllowedRows:
        """The rows ``flt`` allows (:func:`allowed_rows`), as :class:`CategoryRows` when it names
        exactly one category; a filter that only names it gets the same object every time."""
        categories = () if flt.category is None else self.catalog.category_index.get(flt.category.strip().lower(), ())
        if len(categories) != 1:
            return allowed_rows(self.catalog, flt, stock_overrides)
        category = categories[0]
        whole = flt.model_fields_set == {"category"}  # no other condition: every row of the category
        if whole and category in self._whole_categories:
            return self._whole_categories[category]
        view = category_view(self.catalog, category)
        allowed = CategoryRows(view.allowed(flt, stock_overrides, len(self.catalog)), category, view.rows)
        if whole:
            self._whole_categories[category] = allowed
        return allowed

    def _top_by(self, rows: np.ndarray, order: str, k: int) -> np.ndarray:
        """The ``k`` first of ``rows`` in ``order`` (a key of ``_ORDER_COLUMNS``; stable: earlier
        rows win ties), reading the column for these rows only."""
        if k <= 0 or len(rows) == 0:
            return np.empty(0, dtype=np.int64)
        column, descending = _ORDER_COLUMNS[order]
        keys = getattr(self.catalog, column)[rows].astype(np.int64)
        if descending:
            keys = -keys
        if len(rows) > k:
            # argpartition is not stable: keep every position up to the k-th key, ascending, then sort stably
            positions = np.flatnonzero(keys <= np.partition(keys, k - 1)[k - 1])
            return rows[positions[np.argsort(keys[positions], kind="stable")[:k]]].astype(np.int64)
        return rows[np.argsort(keys, kind="stable")].astype(np.int64)


def inject_distractors(rows: Sequence[int], catalog: Catalog, eps: float, cap: int,
                       rng: random.Random, allowed: AllowedRows | None = None) -> tuple[list[int], list[int]]:
    """Degrade a ranked list: each emitted slot is, with probability ``eps``, a distractor.

    A distractor is a product of the same leaf category as the next genuine result that is not
    itself in the list and that ``allowed`` allows (the search's filter: every result meets every
    filter, distractors too). Genuine results keep their relative order and are only pushed down, so
    whenever they fit under ``cap`` they all remain reachable. Returns (results, distractors).
    """
    genuine = list(rows)
    if not eps > 0:  # no slot draws: the list as it is, up to the cap
        return genuine[:cap], []
    seen = set(genuine)
    out: list[int] = []
    distractors: list[int] = []
    position = 0
    draw, category = rng.random, catalog.category
    pools: dict[int, np.ndarray] = {}
    while len(out) < cap and position < len(genuine):
        if draw() < eps:
            of = category.item(genuine[position])
            pool = pools.get(of)
            if pool is None:
                pool = pools[of] = _allowed_in_category(catalog, of, allowed)
            for _ in range(8):
                candidate = pool.item(rng.randrange(len(pool)))
                if candidate not in seen:
                    seen.add(candidate)
                    out.append(candidate)
                    distractors.append(candidate)
                    break
            else:
                out.append(genuine[position])
                position += 1
            continue
        out.append(genuine[position])
        position += 1
    return out, distractors


def _allowed_in_category(catalog: Catalog, category: int, allowed: AllowedRows | None) -> np.ndarray:
    """The rows of ``category`` that ``allowed`` allows (all of them without a filter); never empty: a
    genuine result of the category is among them. O(category), or O(allowed) when only rows are known."""
    rows = catalog.category_rows[category]
    if allowed is None:
        return rows
    if "mask" in allowed.__dict__:
        return rows[allowed.mask[rows]]
    within = allowed.rows
    return within[catalog.category[within] == category]
