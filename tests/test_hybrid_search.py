"""Hybrid retrieval: filter correctness (flat and IVF indexes), the within-category fast path against
the exhaustive one, recall on shopper queries, document text."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecomrlve.catalog import dense
from ecomrlve.catalog import search as search_module
from ecomrlve.catalog.dense import DenseRetriever, HybridRetriever, build_index, set_threads
from ecomrlve.catalog.embedders import DEFAULT_EMBEDDER, get_embedder
from ecomrlve.catalog.filters import AllowedRows, ProductFilter, filter_mask
from ecomrlve.catalog.search import SearchEngine, best_first, document_text, document_texts
from ecomrlve.catalog.taxonomy import COLORS, LEAVES
from ecomrlve.catalog.views import allowed_rows

K = 10


def _bench():
    path = Path(__file__).parents[1] / "benchmarks" / "bench_catalog.py"
    spec = importlib.util.spec_from_file_location("bench_catalog", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def vectors(catalog) -> np.ndarray:
    set_threads(1)
    return get_embedder(DEFAULT_EMBEDDER).embed(document_texts(catalog)).astype(np.float16)


@pytest.fixture(scope="module")
def dense_flat(vectors) -> DenseRetriever:
    return DenseRetriever(get_embedder(DEFAULT_EMBEDDER), build_index(vectors), vectors)


@pytest.fixture(scope="module")
def dense_ivf(vectors) -> DenseRetriever:
    """The large-catalog index type (IVF + 8-bit codes), forced on the small test catalog."""
    return DenseRetriever(get_embedder(DEFAULT_EMBEDDER), build_index(vectors, factory="IVF32,SQ8"), vectors)


@pytest.fixture(scope="module")
def hybrid(search, dense_flat) -> HybridRetriever:
    return HybridRetriever(search.retriever, dense_flat)


def test_document_texts_match_per_row_text(catalog):
    texts = document_texts(catalog, 100, 160)
    assert texts == [document_text(catalog, row) for row in range(100, 160)]


filters = st.builds(
    ProductFilter,
    category=st.none() | st.sampled_from([leaf.name for leaf in LEAVES] + ["Electronics", "Kitchen"]),
    color=st.none() | st.sampled_from(COLORS),
    price_max=st.none() | st.floats(5, 400),
    rating_min=st.none() | st.sampled_from([3.5, 4.0, 4.5]),
    in_stock=st.none() | st.just(True),
)
queries = st.sampled_from(["usb c charger", "wireless headphones black", "frying pan", "kids shoes", "chrger 65w",
                           "something nice", ""])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flt=filters, query=queries)
def test_filtered_hybrid_search_returns_only_and_all_matches(catalog, hybrid, dense_ivf, search, flt, query):
    """Only matching products come back; in relevance order, when at most K match, every one of them does."""
    mask = filter_mask(catalog, flt)
    matching = set(np.flatnonzero(mask).tolist())
    for retriever in (hybrid, HybridRetriever(search.retriever, dense_ivf)):
        engine = SearchEngine(catalog, retriever)
        for sort_by in ("relevance", "price_asc"):
            rows = engine.search(query, flt, sort_by, K).tolist()
            assert set(rows) <= matching
            assert len(rows) == len(set(rows))
            if sort_by == "relevance":  # relevance order lists every match (query matches first)
                assert len(rows) == min(K, len(matching))
                if len(matching) <= K:
                    assert set(rows) == matching


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flt=filters, query=queries.filter(bool))
def test_filtered_dense_search_misses_nothing_the_exact_filter_finds(catalog, dense_flat, dense_ivf, vectors,
                                                                      monkeypatch, flt, query):
    """With a filter, the flat index's top-K is the exact top-K by cosine among the matching
    products, and the IVF index returns K matching products whenever K exist."""
    monkeypatch.setattr(dense, "EXACT_MAX", 0)  # this small catalog would otherwise be scored exactly
    mask = filter_mask(catalog, flt)
    vector = dense_flat.embed_query(query)
    allowed = np.flatnonzero(mask)
    exact = np.asarray(vectors[allowed], dtype=np.float32) @ vector
    expected = allowed[np.lexsort((allowed, -exact))][:K]
    rows, scores = dense_flat.top_vector(vector, K, AllowedRows.from_mask(mask))
    assert np.allclose(scores, np.sort(exact)[::-1][:K], atol=1e-4)
    assert set(rows.tolist()) <= set(allowed.tolist()) and len(rows) == len(expected)
    rows, _ = dense_ivf.top_vector(vector, K, AllowedRows.from_mask(mask))  # approximate ranking; its recall is benchmarked
    assert set(rows.tolist()) <= set(allowed.tolist()) and len(rows) == len(expected)


@pytest.mark.parametrize("cluster_share", [dense.CLUSTER_PROBE_MAX_SHARE, 0.0])
def test_filtered_ivf_search_finds_k(catalog, dense_ivf, monkeypatch, cluster_share):
    """Both list choices (the lists holding a small filter's rows; widening for a large one)."""
    monkeypatch.setattr(dense, "EXACT_MAX", 0)
    monkeypatch.setattr(dense, "CLUSTER_PROBE_MAX_SHARE", cluster_share)
    vector = dense_ivf.embed_query("usb c charger")
    for flt in (ProductFilter(in_stock=True), ProductFilter(category="Dog Leashes"), ProductFilter(price_max=8.0),
                ProductFilter(category="Kitchen", color="Red")):
        mask = filter_mask(catalog, flt)
        rows, _ = dense_ivf.top_vector(vector, K, allowed_rows(catalog, flt))
        assert len(rows) == min(K, int(mask.sum())) and mask[rows].all()


def test_small_filters_are_scored_exactly(catalog, dense_ivf, vectors):
    mask = filter_mask(catalog, ProductFilter(category="Chargers"))
    vector = dense_ivf.embed_query("usb c charger")
    rows, scores = dense_ivf.top_vector(vector, K, allowed_rows(catalog, ProductFilter(category="Chargers")))
    allowed = np.flatnonzero(mask)
    exact = np.asarray(vectors[allowed], dtype=np.float32) @ vector
    assert rows.tolist() == allowed[np.lexsort((allowed, -exact))][:K].tolist()
    assert np.allclose(scores, np.sort(exact)[::-1][:K])


stock_overrides = st.dictionaries(st.integers(0, 2999), st.sampled_from([0, 3]), max_size=40)
sort_orders = st.sampled_from(["relevance", "price_asc", "price_desc", "rating", "ship_days"])


def _exhaustive_lexical(catalog, retriever, query, flt, sort_by, k, overrides) -> list[int]:
    """The reference: BM25 of every row (bm25s' own scoring), the exact filter mask over every row,
    ranked by score then row; with a filter, relevance order tops up with the other matches by
    popularity and sorted orders list the matches when no word matches."""
    mask = np.ones(len(catalog), dtype=bool) if flt is None else filter_mask(catalog, flt, overrides)
    ids = [retriever._vocab[t] for t in set(search_module.tokenize(query)) if t in retriever._vocab]
    scores = retriever._bm25.get_scores(sorted(ids)) if ids else np.zeros(len(catalog), np.float32)
    matched = np.flatnonzero(mask & (scores > 0))
    ranked = matched[np.lexsort((matched, -scores[matched]))]
    if sort_by == "relevance":
        if flt is None:
            return ranked[:k].tolist()
        others = np.flatnonzero(mask & ~np.isin(np.arange(len(catalog)), ranked))
        by_popularity = others[np.lexsort((others, -catalog.rating_count[others].astype(np.int64)))]
        return np.concatenate([ranked, by_popularity])[:k].tolist()
    candidates = ranked if len(ranked) or flt is None else np.flatnonzero(mask)
    key = {"price_asc": catalog.price_cents.astype(np.int64), "price_desc": -catalog.price_cents.astype(np.int64),
           "rating": -catalog.rating_x10.astype(np.int64), "ship_days": catalog.ship_days.astype(np.int64)}[sort_by][candidates]
    return candidates[np.argsort(key, kind="stable")][:k].tolist()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flt=st.none() | filters, query=queries, sort_by=sort_orders, k=st.integers(1, 40), overrides=stock_overrides)
def test_lexical_search_is_exactly_the_exhaustive_ranking(catalog, search, monkeypatch, flt, query, sort_by, k,
                                                           overrides):
    """Scoring only a category's allowed rows returns exactly the top-k of the exhaustive ranking
    among all filtered rows (every order, stock overrides applied), as does scoring every row."""
    expected = _exhaustive_lexical(catalog, search.retriever, query, flt, sort_by, k, overrides)
    for share in (1.0, 0.0):  # every allowed set scored row by row / every row scored, then masked
        monkeypatch.setattr(search_module, "ROW_SCORING_MAX_SHARE", share)
        assert search.search(query, flt, sort_by, k, overrides).tolist() == expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flt=filters, query=queries, sort_by=sort_orders, overrides=stock_overrides)
def test_hybrid_fast_path_equals_exhaustive_path(catalog, hybrid, monkeypatch, flt, query, sort_by, overrides):
    """Hybrid search within the filter's category rows gives the same rows as through masks of every row."""
    engine = SearchEngine(catalog, hybrid)
    fast = engine.search(query, flt, sort_by, K, overrides).tolist()
    monkeypatch.setattr(search_module, "ROW_SCORING_MAX_SHARE", 0.0)
    monkeypatch.setattr(search_module, "allowed_rows",
                        lambda catalog, flt, overrides: AllowedRows.from_mask(filter_mask(catalog, flt, overrides)))
    assert engine.search(query, flt, sort_by, K, overrides).tolist() == fast


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flt=filters, overrides=stock_overrides)
def test_allowed_rows_are_the_filter_mask(catalog, flt, overrides):
    allowed = allowed_rows(catalog, flt, overrides)
    expected = filter_mask(catalog, flt, overrides)
    assert allowed.rows.tolist() == np.flatnonzero(expected).tolist()
    assert allowed.count == int(expected.sum()) and np.array_equal(allowed.mask, expected)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.sets(st.integers(0, 2999), max_size=400), query=queries.filter(bool))
def test_bm25_row_scores_are_bit_identical(catalog, search, rows, query):
    """Any row subset (so both ways of merging a posting list) scores exactly as bm25s scores every row."""
    retriever = search.retriever
    ids = retriever._query_ids(query)
    subset = np.asarray(sorted(rows), dtype=np.int64)
    everything = retriever._bm25.get_scores(ids.tolist()) if len(ids) else np.zeros(len(catalog), np.float32)
    got_rows, got_scores = retriever.positive(ids, AllowedRows(len(catalog), rows=subset))
    positive = subset[everything[subset] > 0]
    assert got_rows.tolist() == positive.tolist()
    assert got_scores.tobytes() == everything[positive].tobytes()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.sets(st.integers(0, 2999), max_size=400), query=queries.filter(bool), k=st.integers(1, 30))
def test_bm25_top_k_of_a_row_subset_is_the_head_of_the_full_ranking(catalog, search, rows, query, k):
    """The heap that keeps a subset's ``k`` best ranks exactly as sorting every positive row."""
    retriever = search.retriever
    ids = retriever._query_ids(query)
    allowed = AllowedRows(len(catalog), rows=np.asarray(sorted(rows), dtype=np.int64))
    every_row, every_score = best_first(*retriever.positive(ids, allowed))
    top_rows, top_scores = retriever.scored(query, k, allowed)
    assert top_rows.tolist() == every_row[:k].tolist()
    assert top_scores.tobytes() == every_score[:k].tobytes()


def test_hybrid_recall_on_shopper_queries(catalog, search, hybrid, dense_flat):
    """Typo'd openings (d = 8): hybrid finds the target at least as often as BM25 or dense alone."""
    bench = _bench()
    recall = {}
    for name, retriever in (("bm25", search.retriever), ("dense", dense_flat), ("hybrid", hybrid)):
        recall[name] = np.mean([row in retriever.top(q, K, None) for row, q in bench.shopper_queries(catalog, 150, 8)])
    assert recall["hybrid"] >= recall["bm25"] and recall["hybrid"] >= recall["dense"], recall
    assert recall["hybrid"] > 0.8, recall


def test_scale_benchmark_serves_the_directory_it_built(tmp_path):
    """`bench_catalog.py scale` builds a directory, then loads it in another process; the build's
    measurements must not touch the checksummed manifest, or loading refuses the directory."""
    bench = _bench()
    built = bench.build(450, tmp_path)
    assert built["bench"]["generate_s"] >= 0 and built["bench"]["build_peak_rss_mib"] > 0
    assert bench.build(450, tmp_path) == built  # the second call reads the cached directory
    served = bench.serve(tmp_path / "synthetic-450", threads=1, n_queries=5)
    assert set(served) >= {"lexical", "dense", "hybrid", "hybrid+filter", "load_s"}


def test_sorted_search_falls_back_to_dense_neighbours_when_no_word_matches(catalog, hybrid):
    """A query whose every word is misspelt has no lexical match; the dense side still lists products."""
    engine = SearchEngine(catalog, hybrid)
    assert hybrid.lexical.matching("chrgr", None) is None or len(hybrid.lexical.matching("chrgr", None)) == 0
    rows = engine.search("chrgr", None, "price_asc", K)
    assert len(rows) == K
    prices = catalog.price_cents[rows]
    assert (np.diff(prices) >= 0).all()


def test_embedder_contract():
    embedder = get_embedder(DEFAULT_EMBEDDER)
    vectors = embedder.embed(["usb c charger", "USB-C charger", "cast iron skillet", ""])
    assert vectors.shape == (4, embedder.dim) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert get_embedder(DEFAULT_EMBEDDER) is embedder
    with pytest.raises(ValueError, match="unknown embedder"):
        get_embedder("word2vec:nope")
