"""Dense and hybrid retrieval: product vectors in FAISS, fused with BM25 scores.

Index choice (measured, see BENCHMARKS.md "Catalogs at scale"): up to ``FLAT_MAX`` products an
exact fp16 flat index (about 1.5 ms per query at 100k); above that IVF with 8-bit scalar
quantisation (``IVF{nlist},SQ8``): 2M 128-d vectors take 262 MB and a query about 1.5 ms, and
the index builds in about 8 minutes on 2 shared cores. HNSW was ruled out because it builds in
hours at 2M on this machine class (136 s per 100k vectors).

Filters: up to ``EXACT_MAX`` allowed rows are scored exactly from the fp16 vectors. Above that
the index scans only the ids the filter allows (an ``IDSelectorBitmap``), so a filter never
hides a matching product and the index never returns one that does not match. Which IVF lists
to scan: for a filter of at most ``CLUSTER_PROBE_MAX_SHARE`` of the catalog (a category, about
2 % at 2M), the lists nearest the query *among those holding allowed rows*, until they hold
``FILTER_OVERSCAN * k`` of them (a category follows the clusters, so a few lists hold it); for
larger filters, more lists the more selective the filter is. (Gathering 20k allowed rows' fp16
vectors and scoring them in numpy costs 4-5 ms even on an idle core, mostly the fp16
conversion.) The fp16 vector matrix is kept for exact cosines of the few rows fusion rescores.

Threads: FAISS (OpenMP), numba and BLAS each start a pool per process; on 2 cores two pools
fighting over a single query made it 7-40x slower here. :func:`set_threads` sets them all.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

import faiss
import numba
import numpy as np
from threadpoolctl import threadpool_limits

from ecomrlve.catalog.embedders import Embedder
from ecomrlve.catalog.filters import AllowedRows
from ecomrlve.catalog.search import BM25Retriever

FLAT_MAX = 200_000
DENSE_WEIGHT = 0.5
NPROBE = 24
FILTER_OVERSCAN = 8
EXACT_MAX = 4096  # allowed rows scored exactly from the fp16 vectors (under 1 ms)
CLUSTER_PROBE_MAX_SHARE = 0.125  # filters up to this share of the catalog probe the lists that hold them
_TRAIN_SAMPLE_PER_LIST = 40


def set_threads(n: int) -> None:
    """Use ``n`` threads in FAISS, numba, BLAS, torch and the tokenizer (1 for serving single queries)."""
    faiss.omp_set_num_threads(n)
    os.environ["RAYON_NUM_THREADS"] = str(n)  # tokenizers, read when its pool starts
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]  # set via globals()

    threadpool_limits(n)
    torch = sys.modules.get("torch")  # only when an st: embedder brought it in
    if torch is not None:
        torch.set_num_threads(n)


def index_factory_string(n: int) -> str:
    """The FAISS index for ``n`` vectors: exact fp16 when small, IVF + 8-bit codes when large."""
    if n <= FLAT_MAX:
        return "SQfp16"
    nlist = int(2 ** round(np.log2(4 * np.sqrt(n))))
    return f"IVF{nlist},SQ8"


def build_index(vectors: np.ndarray, *, progress: Callable[[int], None] | None = None,
                chunk: int = 100_000, factory: str | None = None) -> faiss.Index:
    """A FAISS inner-product index over unit ``vectors`` (rows = catalog rows), trained on a fixed sample.

    ``factory`` overrides :func:`index_factory_string` (e.g. to exercise IVF on a small catalog).
    """
    n, dim = vectors.shape
    index = faiss.index_factory(dim, factory or index_factory_string(n), faiss.METRIC_INNER_PRODUCT)
    if not index.is_trained:
        nlist = faiss.extract_index_ivf(index).nlist
        sample = np.random.default_rng(0).choice(n, size=min(n, nlist * _TRAIN_SAMPLE_PER_LIST), replace=False)
        index.train(np.asarray(vectors[np.sort(sample)], dtype=np.float32))
    for start in range(0, n, chunk):
        index.add(np.asarray(vectors[start:start + chunk], dtype=np.float32))
        if progress:
            progress(min(chunk, n - start))
    return index


@numba.njit(nogil=True, cache=True)
def _bitmap(rows: np.ndarray, n: int) -> np.ndarray:  # pragma: no cover - compiled
    """FAISS ``IDSelectorBitmap`` bits (little-endian) with the given rows set, without an n-row mask."""
    bits = np.zeros((n + 7) // 8, dtype=np.uint8)
    for row in rows:
        bits[row >> 3] |= np.uint8(1 << (row & 7))
    return bits


def _search_params(selector: faiss.IDSelector, nprobe: int | None = None) -> faiss.SearchParameters:
    """Search parameters restricted to ``selector`` (IVF ones probing ``nprobe`` lists when given).

    faiss's Python wrapper takes the fields as keywords and keeps ``selector`` alive with the
    parameters; its stubs only know the bare C++ constructors.
    """
    if nprobe is None:
        return faiss.SearchParameters(sel=selector)  # type: ignore[call-arg]
    return faiss.SearchParametersIVF(sel=selector, nprobe=nprobe)  # type: ignore[call-arg]


class DenseRetriever:
    """Nearest products to the embedded query, within optional allowed rows."""

    def __init__(self, embedder: Embedder, index: faiss.Index, vectors: np.ndarray) -> None:
        if index.ntotal != len(vectors) or index.d != vectors.shape[1] or embedder.dim != index.d:
            raise ValueError(f"dense index ({index.ntotal} x {index.d}), vectors {vectors.shape} and "
                             f"embedder {embedder.name} ({embedder.dim}-d) do not match")
        self.embedder = embedder
        self.index = index
        self.vectors = vectors  # (n, dim) float16, possibly memory-mapped
        if faiss.try_extract_index_ivf(index) is not None:
            faiss.extract_index_ivf(index).nprobe = NPROBE

    @classmethod
    def load(cls, embedder: Embedder, directory: Path) -> DenseRetriever:
        index = faiss.read_index(str(directory / "dense.faiss"), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
        return cls(embedder, index, np.load(directory / "vectors.f16.npy", mmap_mode="r"))

    def embed_query(self, query: str) -> np.ndarray:
        return self.embedder.embed([query])[0]

    def top_vector(self, vector: np.ndarray, k: int, allowed: AllowedRows | None) -> tuple[np.ndarray, np.ndarray]:
        """Up to ``k`` rows nearest to ``vector`` among ``allowed``, best first, with their cosine.

        With at most ``EXACT_MAX`` allowed rows those rows are scored exactly; otherwise the index
        scans only the allowed ids (a bitmap), in IVF lists chosen as the module docstring says.
        """
        n = self.index.ntotal
        k = min(k, n)
        empty = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        if k <= 0 or not vector.any():
            return empty
        if allowed is None:
            return self._search(vector, k, None)
        count = allowed.count
        if count == 0:
            return empty
        if count <= EXACT_MAX:
            return self._exact(vector, allowed.rows, k)
        clustered = count <= CLUSTER_PROBE_MAX_SHARE * n
        bits = _bitmap(allowed.rows, n) if clustered else np.packbits(allowed.mask, bitorder="little")
        # faiss's stubs know only the C++ (n, pointer) constructor; its wrapper takes the array (and keeps it alive)
        selector = faiss.IDSelectorBitmap(bits)  # type: ignore[call-arg, arg-type]
        ivf = faiss.try_extract_index_ivf(self.index)
        if ivf is None:
            return self._search(vector, k, _search_params(selector))
        if clustered:
            return self._search_holding_lists(vector, k, allowed.rows, ivf, selector)
        # Enough lists to hold ~FILTER_OVERSCAN * k allowed rows if they were spread evenly;
        # widen 4x while fewer than k were found. (Probing ``NPROBE * n / count`` lists was
        # measured first: 26 ms at 2M for a 1.5 % filter.)
        nprobe = min(ivf.nlist, max(NPROBE, math.ceil(FILTER_OVERSCAN * k * ivf.nlist / count)))
        while True:
            params = _search_params(selector, nprobe)
            rows, scores = self._search(vector, k, params)
            if len(rows) >= min(k, count) or nprobe == ivf.nlist:
                return rows, scores
            nprobe = min(ivf.nlist, 4 * nprobe)

    def _search_holding_lists(self, vector: np.ndarray, k: int, rows: np.ndarray, ivf: faiss.IndexIVF,
                              selector: faiss.IDSelector) -> tuple[np.ndarray, np.ndarray]:
        """Scan the IVF lists nearest to ``vector`` that hold any of ``rows``: at least ``NPROBE``
        of them (the unfiltered search's breadth), and enough to hold ``FILTER_OVERSCAN * k`` rows."""
        held = np.bincount(self._row_lists[rows], minlength=ivf.nlist)
        centroid_scores = self._centroids @ vector
        order = np.argsort(-centroid_scores, kind="stable")
        order = order[held[order] > 0]
        enough = int(np.searchsorted(np.cumsum(held[order]), min(len(rows), FILTER_OVERSCAN * k))) + 1
        lists = order[:max(enough, NPROBE)]
        query = np.ascontiguousarray(vector[None, :], dtype=np.float32)
        assign = np.ascontiguousarray(lists[None, :], dtype=np.int64)
        assign_scores = np.ascontiguousarray(centroid_scores[lists][None, :], dtype=np.float32)
        scores, ids = np.empty((1, k), dtype=np.float32), np.empty((1, k), dtype=np.int64)
        params = _search_params(selector, len(lists))
        # the C++ call: faiss' Python wrapper of search_preassigned does not pass search parameters
        ivf.search_preassigned_c(  # type: ignore[attr-defined]  # SWIG's raw method, not in faiss's stubs
            1, faiss.swig_ptr(query), k, faiss.swig_ptr(assign), faiss.swig_ptr(assign_scores),
            faiss.swig_ptr(scores), faiss.swig_ptr(ids), False, params)
        keep = ids[0] >= 0
        return ids[0][keep], scores[0][keep]

    @cached_property
    def _row_lists(self) -> np.ndarray:
        """The IVF list of every row (read once from the inverted lists)."""
        ivf = faiss.extract_index_ivf(self.index)
        invlists = ivf.invlists
        assert invlists is not None  # a built IVF index has its lists
        lists = np.empty(self.index.ntotal, dtype=np.int32)
        for number in range(ivf.nlist):
            size = invlists.list_size(number)
            if size:
                lists[faiss.rev_swig_ptr(invlists.get_ids(number), size)] = number
        return lists

    @cached_property
    def _centroids(self) -> np.ndarray:
        ivf = faiss.extract_index_ivf(self.index)
        return ivf.quantizer.reconstruct_n(0, ivf.nlist)

    def _search(self, vector: np.ndarray, k: int,
                params: faiss.SearchParameters | None) -> tuple[np.ndarray, np.ndarray]:
        scores, ids = self.index.search(vector[None, :], k, params=params)
        keep = ids[0] >= 0
        return ids[0][keep].astype(np.int64), scores[0][keep]

    def _exact(self, vector: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        scores = self.similarity(vector, rows)
        order = np.lexsort((rows, -scores))[:k]
        return rows[order].astype(np.int64), scores[order]

    def similarity(self, vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Exact cosine of ``vector`` with the given (few) rows' vectors."""
        order = np.argsort(rows, kind="stable")
        scores = np.empty(len(rows), dtype=np.float32)
        scores[order] = np.asarray(self.vectors[rows[order]], dtype=np.float32) @ vector
        return scores

    def top(self, query: str, k: int, allowed: AllowedRows | None) -> np.ndarray:
        return self.top_vector(self.embed_query(query), k, allowed)[0]

    def matching(self, query: str, allowed: AllowedRows | None) -> np.ndarray:
        """Dense scores are never zero, so "matching" is the nearest ``HybridRetriever.POOL`` rows."""
        return self.top(query, HybridRetriever.POOL, allowed)


class HybridRetriever:
    """BM25 and dense scores fused: ``bm25 / max bm25 + dense_weight * cosine`` over both pools.

    Reciprocal-rank fusion was measured first and lost to BM25 alone on shopper queries (exact
    model names are a lexical signal; rank fusion lets a weak dense ranking outvote it). Score
    fusion keeps BM25's margin where it is confident and lets the dense cosine decide where it
    is not: typos that break every lexical match, or near-ties between similar titles.
    """

    POOL = 100  # rows taken from each ranking before fusion; dense fallback size for sorted search

    def __init__(self, lexical: BM25Retriever, dense: DenseRetriever, *, dense_weight: float = DENSE_WEIGHT) -> None:
        self.lexical = lexical
        self.dense = dense
        self.dense_weight = dense_weight

    def top(self, query: str, k: int, allowed: AllowedRows | None) -> np.ndarray:
        pool = max(k, self.POOL)
        lexical_rows, lexical_scores = self.lexical.scored(query, pool, allowed)
        vector = self.dense.embed_query(query)
        dense_rows, _ = self.dense.top_vector(vector, pool, allowed)
        rows = np.union1d(lexical_rows, dense_rows).astype(np.int64)
        if len(rows) == 0:
            return rows
        score = self.dense_weight * self.dense.similarity(vector, rows)
        if len(lexical_rows):
            score[np.searchsorted(rows, lexical_rows)] += lexical_scores / lexical_scores.max()
        return rows[np.lexsort((rows, -score))][:k]

    def matching(self, query: str, allowed: AllowedRows | None) -> np.ndarray | None:
        """Lexical matches when the query has any; otherwise (typos, synonyms) the dense neighbours."""
        lexical = self.lexical.matching(query, allowed)
        if lexical is not None and len(lexical):
            return lexical
        dense = self.dense.matching(query, allowed)
        return dense if len(dense) else lexical
