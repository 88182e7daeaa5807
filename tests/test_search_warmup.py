"""Making a SearchEngine compiles (or loads from numba's disk cache) the BM25 kernels for both
kinds of index, so that no search pays for it."""

from __future__ import annotations

import pytest

from ecomrlve.catalog import search as search_module
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import SearchEngine, warm_kernels

KERNELS = (search_module._accumulate, search_module._positive_rows, search_module._score_rows)


def test_a_new_search_engine_warms_the_kernels(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[None] = []
    monkeypatch.setattr(search_module, "warm_kernels", lambda: calls.append(None))
    SearchEngine(catalog)
    assert calls == [None]


def test_warm_kernels_compiles_for_built_and_memory_mapped_indexes() -> None:
    warm_kernels()
    for kernel in KERNELS:
        index_arrays = [signature[1:4] for signature in kernel.signatures]  # posting-list arrays (and query ids)
        kinds = {all(getattr(t, "mutable", True) for t in arrays) for arrays in index_arrays}
        assert kinds == {True, False}, f"{kernel.__name__} lacks a writable or a read-only signature"


def test_warm_kernels_compiles_the_ranking_walk_for_kept_rankings() -> None:
    """Kept rankings are read-only arrays: the walk over them is compiled for that type."""
    warm_kernels()
    assert any(not signature[0].mutable for signature in search_module._first_allowed.signatures)
