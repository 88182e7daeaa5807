"""``policy_search``: BM25 over the sections of the store policy documents.

The index is built from :func:`ecomrlve.world.policy.policy_documents` for the world's store policy
(per-episode numbers in POLICY episodes) and catalog (its own categories listed by department), and
kept for the few most recent (policy, catalog) pairs; the sections state rules, so the tool can
never print the answer to a particular question.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Annotated, Any

import bm25s
import numpy as np
from pydantic import Field

from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import tokenize
from ecomrlve.tools.base import ToolContext, tool
from ecomrlve.world.policy import STORE_POLICY, PolicySection, StorePolicy, policy_documents

POLICY_RESULTS = 3  # sections returned per query
MAX_QUERY_CHARS = 500


class PolicyIndex:
    """The policy sections and a BM25 index over their titles and text."""

    def __init__(self, sections: tuple[PolicySection, ...]) -> None:
        self.sections = sections
        vocab: dict[str, int] = {}
        corpus = [[vocab.setdefault(t, len(vocab)) for t in tokenize(f"{s.title} {s.title} {s.text}")] for s in sections]
        self._bm25 = bm25s.BM25()
        self._bm25.index((corpus, vocab), show_progress=False)
        self._vocab = vocab

    def search(self, query: str, k: int = POLICY_RESULTS) -> list[PolicySection]:
        ids = sorted({self._vocab[t] for t in tokenize(query) if t in self._vocab})
        if not ids:
            return []
        scores = np.asarray(self._bm25.get_scores(ids))
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
