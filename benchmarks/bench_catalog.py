#!/usr/bin/env python
"""Catalog benchmark: retrieval quality, and build/load/serve cost of catalog directories at scale.

``quality``: recall@10 of the target product for BM25, dense and hybrid retrieval, with queries
written the way the simulated shopper writes them (the CART opening act through the template
realiser, typo/slang noise at p_noise(d)), on the synthetic catalog.

``scale``: for each size, builds a catalog directory once (cached under ``--cache``, never in the
repo), then in a fresh subprocess per thread count: load time, peak RSS, and search latency
p50/p99 for lexical, dense and hybrid retrieval, with and without filters (query embedding
included). Build times per stage come from the build subprocess.

Usage::

    python benchmarks/bench_catalog.py quality --size 20000 --queries 500
    python benchmarks/bench_catalog.py scale --sizes 100000,1000000,2000000 --cache /tmp/ecomrlve-bench
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ecomrlve.catalog.schema import Catalog
    from ecomrlve.catalog.search import Retriever


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3), "p99_ms": round(float(np.percentile(ms, 99)), 3)}


# -- queries the way the shopper writes them -----------------------------------------------------------


def shopper_queries(catalog: Catalog, n: int, difficulty: int, seed: int = 0) -> list[tuple[int, str]]:
    """(target row, opening message) pairs: CART's phrase for a product, realised with noise at ``difficulty``."""
    from ecomrlve.difficulty import Difficulty
    from ecomrlve.envs.cart import acts as A
    from ecomrlve.rng import derive_rng
    from ecomrlve.user.noise import add_noise
    from ecomrlve.user.realiser import TemplateRealiser

    rng = derive_rng("bench-catalog-queries", len(catalog), seed)
    realiser, p_noise = TemplateRealiser(), Difficulty.at(difficulty).p_noise
    out: list[tuple[int, str]] = []
    for _ in range(n):
        row = rng.randrange(len(catalog))
        phrase = "the " + catalog.title(row).split(",")[0]
        act = A.RequestItems(items=(A.RequestedItem(phrase),))
        realise_rng = derive_rng("bench-catalog-realise", row, difficulty, seed)
        # The shopper never misspells a name it states; retrieval is measured on misspelt ones all the same.
        out.append((row, add_noise(realiser.realise((act,), realise_rng), p_noise, realise_rng)))
    return out


def quality(args: argparse.Namespace) -> dict[str, Any]:
    from ecomrlve.catalog.dense import DenseRetriever, HybridRetriever, build_index, set_threads
    from ecomrlve.catalog.embedders import get_embedder
    from ecomrlve.catalog.search import BM25Retriever, document_texts
    from ecomrlve.catalog.synthetic import generate_synthetic_catalog

    set_threads(1)
    catalog = generate_synthetic_catalog(args.size, 0)
    lexical = BM25Retriever(catalog)
    results: dict[str, Any] = {"size": args.size, "queries": args.queries, "embedders": {}}
    for name in args.embedders.split(","):
        embedder = get_embedder(name)
        vectors = np.concatenate([embedder.embed(document_texts(catalog, s, s + 50_000))
                                  for s in range(0, len(catalog), 50_000)]).astype(np.float16)
        dense = DenseRetriever(embedder, build_index(vectors), vectors)
        per_d: dict[str, dict[str, float | str]] = {}
        for d in (0, 8):
            queries = shopper_queries(catalog, args.queries, d)
            retrievers: dict[str, Retriever] = {"bm25": lexical, "dense": dense}
            for weight in (0.1, 0.3, 0.5):
                retrievers[f"hybrid(w_dense={weight})"] = HybridRetriever(lexical, dense, dense_weight=weight)
            per_d[f"d={d}"] = {label: round(float(np.mean([row in r.top(q, 10, None) for row, q in queries])), 3)
                               for label, r in retrievers.items()}
            per_d[f"d={d}"]["example"] = queries[0][1]
        results["embedders"][f"{name} ({embedder.dim}-d)"] = per_d
    return results


# -- scale -----------------------------------------------------------------------------------------


def build(size: int, cache: Path) -> dict[str, Any]:
    """Build (once) the synthetic catalog directory of ``size`` products; returns its manifest with
    the build's measurements under ``"bench"``. The peak memory is known only after the build, so it
    is kept beside the directory: the manifest is checksummed and may not be edited afterwards."""
    from ecomrlve.catalog.embedders import DEFAULT_EMBEDDER
    from ecomrlve.catalog.store import build_catalog_dir, read_manifest
    from ecomrlve.catalog.synthetic import generate_synthetic_catalog

    out = cache / f"synthetic-{size}"
    measured = cache / f"synthetic-{size}.bench.json"
    if (out / "manifest.json").exists() and measured.exists():
        return {**read_manifest(out), "bench": json.loads(measured.read_text())}
    start = time.perf_counter()
    catalog = generate_synthetic_catalog(size, 0)
    generate_s = time.perf_counter() - start
    manifest = build_catalog_dir(catalog, out, embedder_name=DEFAULT_EMBEDDER)
    bench = {"generate_s": round(generate_s, 2), "build_peak_rss_mib": round(_peak_rss_mib(), 1)}
    measured.write_text(json.dumps(bench))
    return {**manifest, "bench": bench}


def serve(directory: Path, threads: int, n_queries: int) -> dict[str, Any]:
    """Load the directory and time searches, in this (fresh) process."""
    from ecomrlve.catalog.dense import HybridRetriever
    from ecomrlve.catalog.filters import ProductFilter
    from ecomrlve.catalog.search import SearchEngine
    from ecomrlve.catalog.store import load_catalog_dir, load_retriever

    rss_before = _rss_mib()
    start = time.perf_counter()
    catalog = load_catalog_dir(directory)
    hybrid = load_retriever(directory, catalog, threads=threads)
    assert isinstance(hybrid, HybridRetriever)  # build() writes vectors (DEFAULT_EMBEDDER): BM25 + dense
    load_s = time.perf_counter() - start
    queries = shopper_queries(catalog, n_queries, 8, seed=1)
    filters = []
    for row, _ in queries:  # what an agent would filter by: the target's category and a price cap
        filters.append(ProductFilter(category=catalog.category_of(row).name, price_max=catalog.price(row) * 1.5))
    out: dict[str, Any] = {"threads": threads, "load_s": round(load_s, 3)}
    for label, retriever in (("lexical", hybrid.lexical), ("dense", hybrid.dense), ("hybrid", hybrid)):
        engine = SearchEngine(catalog, retriever)
        for filtered in (False, True):
            engine.search(queries[0][1], filters[0] if filtered else None, "relevance", 10)  # JIT / page-in
            times, hits = [], 0
            for (row, query), flt in zip(queries, filters):
                t0 = time.perf_counter()
                rows = engine.search(query, flt if filtered else None, "relevance", 10)
                times.append(time.perf_counter() - t0)
                hits += row in rows
            out[f"{label}{'+filter' if filtered else ''}"] = {**_percentiles(times), "recall@10": round(hits / len(queries), 3)}
    out["rss_mib"] = round(_rss_mib() - rss_before, 1)
    out["peak_rss_mib"] = round(_peak_rss_mib(), 1)
    return out


def scale(args: argparse.Namespace) -> dict[str, Any]:
    results = {}
    for size in (int(s) for s in args.sizes.split(",")):
        cache = Path(args.cache)
        cache.mkdir(parents=True, exist_ok=True)
        manifest = json.loads(_subprocess("build", "--size", str(size), "--cache", str(cache)))
        directory = cache / f"synthetic-{size}"
        size_mib = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) / 2**20
        row = {"build_s": manifest["build_seconds"], **manifest["bench"], "dir_mib": round(size_mib, 1),
               "index": manifest["embedder"]["index"]}
        for threads in (1, 2):
            row[f"threads={threads}"] = json.loads(_subprocess("serve", "--dir", str(directory), "--threads", str(threads),
                                                               "--queries", str(args.queries)))
        results[str(size)] = row
        print(json.dumps({size: row}, indent=1), flush=True)
    return results


def _subprocess(*argv: str) -> str:
    done = subprocess.run([sys.executable, __file__, *argv], check=True, capture_output=True, text=True)
    return done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--size", type=int, default=20_000)
    q.add_argument("--queries", type=int, default=500)
    q.add_argument("--embedders", default="static:minilm-m2v")
    s = sub.add_parser("scale")
    s.add_argument("--sizes", default="100000,1000000,2000000")
    s.add_argument("--cache", default="/tmp/ecomrlve-bench")
    s.add_argument("--queries", type=int, default=300)
    b = sub.add_parser("build")
    b.add_argument("--size", type=int, required=True)
    b.add_argument("--cache", type=Path, required=True)
    v = sub.add_parser("serve")
    v.add_argument("--dir", type=Path, required=True)
    v.add_argument("--threads", type=int, required=True)
    v.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    if args.command == "quality":
        print(json.dumps(quality(args), indent=1))
    elif args.command == "scale":
        print(json.dumps(scale(args), indent=1))
    elif args.command == "build":
        print(json.dumps(build(args.size, args.cache)))
    else:
        print(json.dumps(serve(args.dir, args.threads, args.queries)))


if __name__ == "__main__":
    main()
