"""Catalog search: exact filters, a pluggable relevance retriever, sorting and degradation.

The pipeline is ``filter mask -> retriever ranks within the mask -> sort -> distractors ->
cap``. Filters are applied *before* ranking (as a weight mask), so a selective filter returns
every match that exists instead of the few that survived a global top-k. A :class:`Retriever`
only scores text; the lexical BM25 one lives here, dense and hybrid ones in ``dense.py``.
"""

from __future__ import annotations

import math
import random
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

import bm25s
import numpy as np

from ecomrlve.catalog.filters import ProductFilter, filter_mask
from ecomrlve.catalog.schema import NO_VALUE, Catalog
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES

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
        attributes = " ".join(column[i] for column in columns if column[i] is not None)
        texts.append(f"{title} {catalog.brands[brands[i]]} {category_text[cats[i]]} {attributes}")
    if catalog.descriptions is not None:
        descriptions = catalog.descriptions.slice(start, stop - start).to_pylist()
        texts = [f"{t} {d}" if d else t for t, d in zip(texts, descriptions)]
    return texts


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
            index = bm25s.BM25(backend=_BACKEND)
            index.index((corpus_ids, vocab), show_progress=show_progress)
        self._bm25 = index
        self._vocab = self._bm25.vocab_dict
        self._n = int(self._bm25.scores["num_docs"])

    def save(self, directory: Path) -> None:
        """Write the index (bm25s format) so :meth:`load` can memory-map it."""
        self._bm25.save(str(directory), show_progress=False)

    @classmethod
    def load(cls, directory: Path) -> BM25Retriever:
        """A retriever over an index written by :meth:`save`, memory-mapped (loads in milliseconds)."""
        return cls(index=bm25s.BM25.load(str(directory), mmap=True, backend=_BACKEND, show_progress=False))

    def _query_ids(self, query: str) -> list[int]:
        return sorted({self._vocab[t] for t in tokenize(query) if t in self._vocab})

    def top(self, query: str, k: int, allowed: np.ndarray | None) -> np.ndarray:
        return self.scored(query, k, allowed)[0]

    def scored(self, query: str, k: int, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`top` with the BM25 score of each row (for score fusion)."""
        ids = self._query_ids(query)
        if not ids:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        weights = None if allowed is None else allowed.astype(np.float32)
        result = self._bm25.retrieve([ids], k=min(k, self._n), show_progress=False,
                                     weight_mask=weights, n_threads=1)
        rows, scores = result.documents[0], result.scores[0]
        positive = scores > 0
        return rows[positive].astype(np.int64), scores[positive]

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


_BACKEND = "numba" if _numba_available() else "numpy"


def default_retriever(catalog: Catalog) -> Retriever:
    """The retriever a :class:`SearchEngine` uses unless given one.

    A catalog loaded from a catalog directory brings its persisted indexes (hybrid when it has
    vectors); an in-memory catalog gets lexical BM25, built on first use (see README "Catalogs"
    for why the embedded default stays lexical).
    """
    directory = catalog.metadata.get("directory")
    if directory is not None:
        from ecomrlve.catalog.store import load_retriever

        return load_retriever(Path(directory), catalog)
    return BM25Retriever(catalog)


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
                    self._retriever = default_retriever(self.catalog)
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
