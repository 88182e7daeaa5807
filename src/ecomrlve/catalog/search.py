"""Catalog search: exact filters, a pluggable relevance retriever, sorting and degradation.

The pipeline is ``filter mask -> retriever ranks within the mask -> sort -> distractors ->
cap``. Filters are applied *before* ranking (as a weight mask), so a selective filter returns
every match that exists instead of the few that survived a global top-k. A :class:`Retriever`
only scores text; the lexical BM25 one lives here, and hybrid retrievers plug in the same way.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Sequence
from typing import Literal, Protocol

import bm25s
import numpy as np

from ecomrlve.catalog.filters import ProductFilter, filter_mask
from ecomrlve.catalog.schema import Catalog

SortBy = Literal["relevance", "price_asc", "price_desc", "rating", "ship_days"]

_TOKEN = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an and are as at be but by for from i im i'm in is it me my need of on or please some "
    "that the this to want with would you your like looking get find".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens with stop words removed and a light plural fold ("chargers" -> "charger")."""
    tokens = []
    for token in _TOKEN.findall(text.lower()):
        if token in _STOPWORDS:
            continue
        if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
        tokens.append(token)
    return tokens


def document_text(catalog: Catalog, row: int) -> str:
    """What the lexical index reads for one product: title, brand, category path, attributes."""
    category = catalog.category_of(row)
    attributes = " ".join(str(v) for v in catalog.attributes(row).values())
    return f"{catalog.title(row)} {catalog.brand_of(row)} {' '.join(category.path)} {category.noun} {attributes}"


class Retriever(Protocol):
    """Scores products for a free-text query."""

    def top(self, query: str, k: int, allowed: np.ndarray | None) -> np.ndarray:
        """Up to ``k`` rows with positive relevance, best first, restricted to ``allowed``."""
        ...

    def matching(self, query: str, allowed: np.ndarray | None) -> np.ndarray | None:
        """Every row with positive relevance within ``allowed``; None when the query has no usable term."""
        ...


class BM25Retriever:
    """Lexical BM25 over :func:`document_text`, with bm25s (numba backend when available)."""

    def __init__(self, catalog: Catalog, *, show_progress: bool = False) -> None:
        vocab: dict[str, int] = {}
        corpus_ids = []
        for row in range(len(catalog)):
            corpus_ids.append([vocab.setdefault(t, len(vocab)) for t in tokenize(document_text(catalog, row))])
        backend = "numba" if _numba_available() else "numpy"
        self._bm25 = bm25s.BM25(backend=backend)
        self._bm25.index((corpus_ids, vocab), show_progress=show_progress)
        self._vocab = self._bm25.vocab_dict
        self._n = len(catalog)

    def _query_ids(self, query: str) -> list[int]:
        return sorted({self._vocab[t] for t in tokenize(query) if t in self._vocab})

    def top(self, query: str, k: int, allowed: np.ndarray | None) -> np.ndarray:
        ids = self._query_ids(query)
        if not ids:
            return np.empty(0, dtype=np.int64)
        weights = None if allowed is None else allowed.astype(np.float32)
        result = self._bm25.retrieve([ids], k=min(k, self._n), show_progress=False,
                                     weight_mask=weights, n_threads=1)
        rows, scores = result.documents[0], result.scores[0]
        return rows[scores > 0].astype(np.int64)

    def matching(self, query: str, allowed: np.ndarray | None) -> np.ndarray | None:
        ids = self._query_ids(query)
        if not ids:
            return None
        scores = self._bm25.get_scores(ids)
        positive = scores > 0
        if allowed is not None:
            positive &= allowed
        rows = np.flatnonzero(positive)
        return rows[np.argsort(-scores[rows], kind="stable")]


def _numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


class SearchEngine:
    """Filter, rank and sort over one catalog. Thread-safe and shared by every episode."""

    def __init__(self, catalog: Catalog, retriever: Retriever | None = None) -> None:
        self.catalog = catalog
        self._retriever = retriever
        self._lock = threading.Lock()
        self._popularity_key = -catalog.rating_count.astype(np.int64)

    @property
    def retriever(self) -> Retriever:
        """The retriever, built on first use so that resets never pay for an index."""
        if self._retriever is None:
            with self._lock:
                if self._retriever is None:
                    self._retriever = BM25Retriever(self.catalog)
        return self._retriever

    def search(self, query: str, flt: ProductFilter | None, sort_by: SortBy, k: int,
               stock_overrides: dict[int, int] | None = None) -> np.ndarray:
        """Up to ``k`` rows matching ``flt``, ordered by ``sort_by``.

        Relevance order puts query matches first, then (only when filters were given) the other
        filtered products by popularity, so a filter-only search still lists what matches.
        """
        allowed = None if flt is None else filter_mask(self.catalog, flt, stock_overrides)
        if sort_by == "relevance":
            ranked = self.retriever.top(query, k, allowed) if query.strip() else np.empty(0, np.int64)
            if len(ranked) >= k or allowed is None:
                return ranked[:k]
            remaining = allowed.copy()
            remaining[ranked] = False
            return np.concatenate([ranked, self._top_by(np.flatnonzero(remaining), self._popularity_key, k - len(ranked))])
        candidates = self.retriever.matching(query, allowed) if query.strip() else None
        if candidates is None or len(candidates) == 0:
            # As in relevance order: a filter with no query match still lists what it matches.
            if allowed is None:
                return np.empty(0, dtype=np.int64)
            candidates = np.flatnonzero(allowed)
        return self._top_by(candidates, self._sort_key(sort_by), k)

    def _sort_key(self, sort_by: SortBy) -> np.ndarray:
        c = self.catalog
        return {
            "price_asc": c.price_cents.astype(np.int64),
            "price_desc": -c.price_cents.astype(np.int64),
            "rating": -c.rating_x10.astype(np.int64),
            "ship_days": c.ship_days.astype(np.int64),
        }[sort_by]

    @staticmethod
    def _top_by(rows: np.ndarray, key: np.ndarray, k: int) -> np.ndarray:
        """The ``k`` rows with the smallest key (stable: earlier rows win ties)."""
        if k <= 0 or len(rows) == 0:
            return np.empty(0, dtype=np.int64)
        keys = key[rows]
        if len(rows) > k:
            part = np.argpartition(keys, k - 1)[:k]
            rows, keys = rows[part], keys[part]
            # argpartition is not stable: restore the original order among equal keys
            order = np.lexsort((part, keys))
        else:
            order = np.argsort(keys, kind="stable")
        return rows[order].astype(np.int64)


def inject_distractors(rows: Sequence[int], catalog: Catalog, eps: float, cap: int,
                       rng: random.Random) -> tuple[list[int], list[int]]:
    """Degrade a ranked list: each emitted slot is, with probability ``eps``, a distractor.

    A distractor is a product of the same leaf category as the next genuine result that is not
    itself in the list. Genuine results keep their relative order and are only pushed down, so
    whenever they fit under ``cap`` they all remain reachable. Returns (results, distractors).
    """
    genuine = list(rows)
    seen = set(genuine)
    out: list[int] = []
    distractors: list[int] = []
    position = 0
    while len(out) < cap and position < len(genuine):
        if eps > 0 and rng.random() < eps:
            pool = catalog.category_rows[int(catalog.category[genuine[position]])]
            for _ in range(8):
                candidate = int(pool[rng.randrange(len(pool))])
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
