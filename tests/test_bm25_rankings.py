"""BM25's kept per-category rankings: a search within one category taken from the query's kept
ranking is exactly the head of the exhaustive ranking of the allowed rows, on random indexes full
of score ties and on the synthetic catalog, whatever the depth kept and whatever was evicted."""

from __future__ import annotations

import gc
import weakref

import bm25s
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecomrlve.catalog import search as search_module
from ecomrlve.catalog.filters import AllowedRows, ProductFilter
from ecomrlve.catalog.search import BM25Retriever, CategoryRows, SearchEngine, best_first
from ecomrlve.catalog.views import allowed_rows


def _retriever(documents: list[list[int]], vocabulary: int) -> BM25Retriever:
    """A BM25 retriever over documents given as term ids (few terms and short documents: many ties)."""
    index = bm25s.BM25()
    index.index((documents, {f"t{t}": t for t in range(vocabulary)}), show_progress=False)
    return BM25Retriever(index=index)


def _exhaustive(retriever: BM25Retriever, ids: np.ndarray, rows: np.ndarray, k: int) -> tuple[list[int], bytes]:
    """The reference: every allowed row scored, ranked by score then row, cut at ``k``."""
    ranked_rows, ranked_scores = best_first(*retriever.positive(ids, AllowedRows(retriever._n, rows=rows)))
    return ranked_rows[:k].tolist(), ranked_scores[:k].tobytes()


@st.composite
def indexes(draw):
    """Random documents over a few terms, rows split into categories, and searches within one."""
    vocabulary = draw(st.integers(1, 6))
    documents = draw(st.lists(st.lists(st.integers(0, vocabulary - 1), min_size=1, max_size=4), min_size=1, max_size=60))
    categories = draw(st.lists(st.integers(0, 2), min_size=len(documents), max_size=len(documents)))
    searches = draw(st.lists(st.tuples(
        st.integers(0, 2),  # category
        st.sets(st.integers(0, vocabulary - 1), min_size=1),  # query terms
        st.integers(1, 25),  # k
        st.none() | st.sets(st.integers(0, len(documents) - 1)),  # allowed subset (None: the whole category)
    ), min_size=1, max_size=12))
    return documents, vocabulary, np.asarray(categories), searches


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=indexes(), depth=st.sampled_from([1, 3, 8, 1024]), cache_rows=st.sampled_from([2, 10, 1 << 21]))
def test_kept_ranking_is_the_head_of_the_exhaustive_ranking(monkeypatch, index, depth, cache_rows):
    """Searches in turn, so that later ones find rankings kept (or evicted) by earlier ones."""
    documents, vocabulary, categories, searches = index
    monkeypatch.setattr(search_module, "RANKING_DEPTH", depth)
    monkeypatch.setattr(search_module, "RANKING_CACHE_ROWS", cache_rows)
    retriever = _retriever(documents, vocabulary)
    for category, terms, k, subset in searches:
        category_rows = np.flatnonzero(categories == category)
        rows = category_rows if subset is None else np.intersect1d(category_rows, sorted(subset))
        allowed = CategoryRows(AllowedRows(len(documents), rows=rows), category, category_rows)
        ids = np.asarray(sorted(terms), dtype=np.int64)
        found = retriever.ranked_in_category(ids, allowed, k)
        expected = _exhaustive(retriever, ids, rows, k)
        if found is None:  # only for more than the depth, or filters too selective for the kept rows
            assert k > depth or allowed.count < len(category_rows)
        else:
            assert (found[0].tolist(), found[1].tobytes()) == expected
        assert retriever._ranked_rows == sum(len(kept[0]) for kept in retriever._rankings.values()) <= cache_rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(category=st.integers(0, 44), k=st.integers(1, 60), depth=st.sampled_from([16, 1024]),
       color=st.none() | st.sampled_from(["Black", "White", "Blue"]), in_stock=st.none() | st.just(True),
       extra=st.sampled_from(["", " usb c", " wireless black"]))
def test_category_searches_on_the_synthetic_catalog(catalog, search, monkeypatch, category, k, depth, color,
                                                   in_stock, extra):
    """The benchmark's search (a category's noun within it) and narrower ones, through the engine."""
    monkeypatch.setattr(search_module, "RANKING_DEPTH", depth)
    retriever = BM25Retriever(index=search.retriever._bm25)  # its own kept rankings, at this depth
    engine = SearchEngine(catalog, retriever)
    leaf = catalog.categories[category]
    flt = ProductFilter(category=leaf.name, color=color, in_stock=in_stock)
    query = leaf.noun + extra
    ids = retriever._query_ids(query)
    rows = allowed_rows(catalog, flt).rows
    for _ in range(2):  # ranked on first use, then kept
        found = engine.search(query, flt, "relevance", k)
        ranked = _exhaustive(retriever, ids, rows, k)[0]
        assert found[:len(ranked)].tolist() == ranked
        assert len(found) == min(k, len(rows))


def test_whole_category_searches_are_answered_from_the_kept_ranking(catalog, search, monkeypatch):
    """Once ranked, a search of the whole category never scores a row again."""
    retriever = BM25Retriever(index=search.retriever._bm25)
    engine = SearchEngine(catalog, retriever)
    leaf = catalog.categories[0]
    engine.search(leaf.noun, ProductFilter(category=leaf.name), "relevance", 10)
    monkeypatch.setattr(search_module, "_score_rows", pytest.fail)
    monkeypatch.setattr(search_module, "_accumulate", pytest.fail)
    assert len(engine.search(leaf.noun, ProductFilter(category=leaf.name), "relevance", 10)) == 10


def test_kept_rankings_are_read_only(catalog, search):
    """A search answered from a kept ranking hands out views of it: they must refuse writes, or one
    caller could change every later search's results."""
    retriever = BM25Retriever(index=search.retriever._bm25)
    engine = SearchEngine(catalog, retriever)
    leaf = catalog.categories[0]
    for _ in range(2):  # ranked on first use, then kept
        found = engine.search(leaf.noun, ProductFilter(category=leaf.name), "relevance", 5)
        assert len(found) and not found.flags.writeable
    assert all(not array.flags.writeable for kept in retriever._rankings.values() for array in kept[:2])


def test_a_dropped_retriever_is_freed_without_the_garbage_collector():
    """Nothing the retriever keeps (its query-term cache included) refers back to it, so the last
    reference going frees it, and a memory-mapped index with it, at once."""
    retriever = _retriever([[0, 1], [1, 2], [2, 0]], 3)
    retriever.scored("t0 t1", 2, None)  # fills the query-term cache
    alive = weakref.ref(retriever)
    gc.disable()
    try:
        del retriever
        assert alive() is None
    finally:
        gc.enable()
