"""``policy_search``: BM25 over the sections of the store policy documents.

The index is built from :func:`ecomrlve.world.policy.policy_documents` for the world's store policy
(per-episode numbers in POLICY and JOURNEY episodes) and catalog (its own categories listed by department), and
kept for the few most recent (policy, catalog) pairs; the sections state rules, so the tool can
never print the answer to a particular question.
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from collections import Counter, OrderedDict
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import tokenize
from ecomrlve.tools.base import ToolContext, tool
from ecomrlve.world.policy import STORE_POLICY, PolicySection, StorePolicy, policy_documents

POLICY_RESULTS = 3  # sections returned per query
MAX_QUERY_CHARS = 500


#: bm25s' defaults, with which this index was built before it became the dense one below.
BM25_K1, BM25_B = 1.5, 0.75


#: Where section texts are cut into pieces that recur across policies (the rows of a table: "Kitchen 45
#: days"): non-token characters, so the pieces' tokens are the text's tokens. Only the row separator:
#: a plain split, and the pieces with a sentence and a row's number still recur (a few numbers each).
_PIECE_BOUNDARY = "; "


@functools.lru_cache(maxsize=8192)
def _piece_tokens(piece: str) -> tuple[str, ...]:
    """:func:`tokenize` of one piece (a tuple: it is shared by every caller)."""
    return tuple(tokenize(piece))


@functools.lru_cache(maxsize=1024)
def _section_terms(title: str, text: str) -> Counter[str]:
    """A section's term counts in order of first occurrence (its title counts twice); most
    sections, and most pieces of the others, read the same in every episode. Callers must not
    change the counter."""
    tokens = list(_piece_tokens(title) * 2)
    for piece in text.split(_PIECE_BOUNDARY):
        tokens += _piece_tokens(piece)
    return Counter(tokens)


@functools.lru_cache(maxsize=64)
def _idf(documents: int, frequency: int) -> np.float32:
    """bm25s' (Lucene) idf, rounded to float32 as bm25s stores it."""
    return np.float32(math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5)))


class PolicyIndex:
    """The policy sections and Lucene BM25 over their titles and text.

    A few dozen sections are indexed per POLICY episode (their numbers change) and searched a few
    times, so only the query's terms are scored: the scores are bm25s' bit for bit (the same float
    operations per (section, term) entry, the same float32 sums over the terms in order of first
    occurrence in the sections).
    """

    def __init__(self, sections: tuple[PolicySection, ...]) -> None:
        self.sections = sections
        self._terms = [_section_terms(s.title, s.text) for s in sections]
        lengths = [terms.total() for terms in self._terms]
        mean_length = sum(lengths) / len(lengths)  # numpy's mean of these integers: an exact sum, one division
        self._norms = np.array([BM25_K1 * ((1 - BM25_B) + BM25_B * length / mean_length) for length in lengths])

    def scores(self, query: str) -> np.ndarray | None:
        """Each section's BM25 score for ``query``; None when no query term is indexed."""
        query_terms = set(tokenize(query))
        hits = [terms.keys() & query_terms for terms in self._terms]  # per section
        first: dict[str, tuple[int, int]] = {}  # indexed query term -> (section, position) of its first occurrence
        for section, terms in enumerate(hits):
            new = terms - first.keys()
            if new:
                order = list(self._terms[section])
                for term in new:
                    first[term] = (section, order.index(term))
        if not first:
            return None
        columns = {term: column for column, term in enumerate(sorted(first, key=first.__getitem__))}  # bm25s' term order
        tf = [[0] * len(self.sections) for _ in columns]  # (term x section)
        for section, terms in enumerate(hits):
            for term in terms:
                tf[columns[term]][section] = self._terms[section][term]
        counts = np.array(tf, dtype=np.float32)
        idf = np.array([_idf(len(self.sections), len(row) - row.count(0)) for row in tf])
        entries = (idf[:, None] * (counts / (self._norms + counts))).astype(np.float32)
        return np.add.accumulate(entries)[-1]  # one term at a time, in order, as bm25s summed them

    def search(self, query: str, k: int = POLICY_RESULTS) -> list[PolicySection]:
        scores = self.scores(query)
        if scores is None:
            return []
        order = np.argsort(-scores, kind="stable")[:k]
        return [self.sections[i] for i in order if scores[i] > 0]


INDEXES_KEPT = 8
_INDEXES_LOCK = threading.Lock()
#: (policy object, catalog paths) -> (the policy, weakly, and its index). By identity, not content:
#: every POLICY episode draws a new policy, and its text form cost as much as a search; the weak
#: reference tells a live policy from a dead one whose id was reused.
_INDEXES: OrderedDict[tuple[int, tuple[tuple[str, ...], ...] | None],
                      tuple[weakref.ref[StorePolicy], PolicyIndex]] = OrderedDict()
POLICY_PATHS = derived("policy_paths", lambda catalog: tuple(sorted({c.path for c in catalog.categories})))


def policy_index(catalog: Catalog | None = None, policy: StorePolicy = STORE_POLICY) -> PolicyIndex:
    """The index of ``policy``'s documents for ``catalog``'s store (the synthetic store's when None);
    catalogs with the same categories share one index. Kept least-recently-used, per policy object
    (policies are never changed after they are made)."""
    with _INDEXES_LOCK:  # sessions run in threads: an eviction must not fall between insert and move_to_end
        paths = None if catalog is None else POLICY_PATHS.of(catalog)
        key = (id(policy), paths)
        entry = _INDEXES.get(key)
        if entry is None or entry[0]() is not policy:
            index = PolicyIndex(policy_documents(policy) if paths is None else policy_documents(policy, paths))
            entry = _INDEXES[key] = (weakref.ref(policy), index)
            while len(_INDEXES) > INDEXES_KEPT:
                _INDEXES.popitem(last=False)
        _INDEXES.move_to_end(key)
    return entry[1]


@tool
def policy_search(ctx: ToolContext, query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]) -> dict[str, Any]:
    """Search the store policy (returns, refunds, fees, shipping, price adjustment, warranty, membership); returns the best matching policy sections.

    Args:
        query: What to look up, e.g. "return window kitchen" or "free shipping threshold".
    """
    sections = policy_index(ctx.world.catalog, ctx.world.policy).search(query)
    return {"sections": [{"section_id": s.section_id, "title": s.title, "text": s.text} for s in sections]}
