"""``policy_search``: BM25 over the sections of the store policy documents.

The index is built from :func:`ecomrlve.world.policy.policy_documents` for the world's store policy
(per-episode numbers in POLICY episodes) and catalog (its own categories listed by department), and
kept for the few most recent (policy, catalog) pairs; the sections state rules, so the tool can
never print the answer to a particular question.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections import Counter, OrderedDict
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import tokenize
from ecomrlve.tools.base import ToolContext, tool
from ecomrlve.world.policy import STORE_POLICY, PolicySection, StorePolicy, policy_documents

POLICY_RESULTS = 3  # sections returned per query
MAX_QUERY_CHARS = 500


#: bm25s' defaults, with which this index was built before it became the dense one below.
BM25_K1, BM25_B = 1.5, 0.75


@functools.lru_cache(maxsize=1024)
def _section_terms(title: str, text: str) -> Counter[str]:
    """A section's term counts in order of first occurrence (its title counts twice); most
    sections read the same in every episode. Callers must not change the counter."""
    return Counter(tokenize(f"{title} {title} {text}"))


class PolicyIndex:
    """The policy sections and Lucene BM25 over their titles and text, as a dense float32
    (section x term) score matrix.

    A few dozen sections are indexed per POLICY episode (their numbers change), where a bm25s
    index cost milliseconds to build; the matrix holds bm25s' scores bit for bit (the same float
    operations per entry, the same float32 sums in term order, terms numbered in order of first
    occurrence) and is built in a fraction of that.
    """

    def __init__(self, sections: tuple[PolicySection, ...]) -> None:
        self.sections = sections
        documents = [_section_terms(s.title, s.text) for s in sections]
        vocab: dict[str, int] = {}
        for terms in documents:
            for term in terms:
                vocab.setdefault(term, len(vocab))
        rows = np.repeat(np.arange(len(documents)), [len(terms) for terms in documents])
        ids = np.fromiter((vocab[term] for terms in documents for term in terms), dtype=np.int64, count=len(rows))
        tf = np.fromiter((n for terms in documents for n in terms.values()), dtype=np.float32, count=len(rows))
        lengths = np.array([terms.total() for terms in documents])
        frequency = np.bincount(ids, minlength=len(vocab))
        idf = np.array([math.log(1 + (len(documents) - df + 0.5) / (df + 0.5)) for df in frequency.tolist()],
                       dtype=np.float32)
        length = lengths[rows]
        self._scores = np.zeros((len(documents), len(vocab)), dtype=np.float32)
        self._scores[rows, ids] = idf[ids] * (tf / (BM25_K1 * ((1 - BM25_B) + BM25_B * length / lengths.mean()) + tf))
        self._vocab = vocab

    def scores(self, query: str) -> np.ndarray | None:
        """Each section's BM25 score for ``query``; None when no query term is indexed."""
        ids = sorted({self._vocab[t] for t in tokenize(query) if t in self._vocab})
        if not ids:
            return None
        scores = np.zeros(len(self.sections), dtype=np.float32)
        for t in ids:  # one term at a time, as bm25s summed them
            scores += self._scores[:, t]
        return scores

    def search(self, query: str, k: int = POLICY_RESULTS) -> list[PolicySection]:
        scores = self.scores(query)
        if scores is None:
            return []
        order = np.argsort(-scores, kind="stable")[:k]
        return [self.sections[i] for i in order if scores[i] > 0]


INDEXES_KEPT = 8
_INDEXES: OrderedDict[tuple[str, tuple[tuple[str, ...], ...] | None], PolicyIndex] = OrderedDict()
_PATHS_BY_CATALOG: weakref.WeakKeyDictionary[Catalog, tuple[tuple[str, ...], ...]] = weakref.WeakKeyDictionary()


def policy_index(catalog: Catalog | None = None, policy: StorePolicy = STORE_POLICY) -> PolicyIndex:
    """The index of ``policy``'s documents for ``catalog``'s store (the synthetic store's when None);
    catalogs with the same categories share one index. Kept least-recently-used, keyed by the
    policy's text form (its tables are dicts, so it is not hashable)."""
    paths = None
    if catalog is not None:
        paths = _PATHS_BY_CATALOG.get(catalog)
        if paths is None:
            paths = _PATHS_BY_CATALOG[catalog] = tuple(sorted({c.path for c in catalog.categories}))
    key = (repr(policy), paths)
    index = _INDEXES.get(key)
    if index is None:
        index = PolicyIndex(policy_documents(policy) if paths is None else policy_documents(policy, paths))
        _INDEXES[key] = index
        while len(_INDEXES) > INDEXES_KEPT:
            _INDEXES.popitem(last=False)
    _INDEXES.move_to_end(key)
    return index


@tool
def policy_search(ctx: ToolContext, query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]) -> dict[str, Any]:
    """Search the store policy (returns, refunds, fees, shipping, price adjustment, warranty, membership); returns the best matching policy sections.

    Args:
        query: What to look up, e.g. "return window kitchen" or "free shipping threshold".
    """
    sections = policy_index(ctx.world.catalog, ctx.world.policy).search(query)
    return {"sections": [{"section_id": s.section_id, "title": s.title, "text": s.text} for s in sections]}
