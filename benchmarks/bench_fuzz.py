#!/usr/bin/env python
"""Fuzz benchmark: the CI fuzz test (tests/test_fuzz.py) at scale, 100,000+ hostile turns.

Plays seeded hostile turns (tests/fuzz_turns.py) through all eight environments and all five
input paths (OpenAI dict, Hermes text, JSON-object text, JSON-object dict, Python AgentAction),
replays every record, and prints one table: what was played, every kind of failure (all must
be 0) and throughput.

Usage::

    python benchmarks/bench_fuzz.py --turns 100000 --workers 4
    python benchmarks/bench_fuzz.py --turns 20000 --catalog-size 20000 --seed 3

With ``--workers N`` the turns are split over N processes with seeds ``seed .. seed+N-1``.

Throughput is wall-clock on whatever else the machine is doing: treat it as noisy.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzz_turns import MUST_BE_INVALID, FuzzStats, fuzz  # noqa: E402

from ecomrlve.catalog.search import SearchEngine  # noqa: E402
from ecomrlve.catalog.synthetic import generate_synthetic_catalog  # noqa: E402

FAILURE_KINDS = ("uncaught exception", "bad invalid-turn reward/reason", "must-be-invalid turn accepted",
                 "record not writable or replayable", "replay differs")


def _worker(turns: int, seed: int, catalog_size: int) -> tuple[FuzzStats, float]:
    """One process's share: its own catalog and engine; returns its stats and CPU seconds."""
    catalog = generate_synthetic_catalog(catalog_size, 0)
    search = SearchEngine(catalog)
    search.search("warm up", None, "relevance", 5)  # index build and JIT outside the timing
    cpu = time.process_time()
    stats = fuzz(turns, seed, catalog, search)
    return stats, time.process_time() - cpu


def _merge(parts: list[FuzzStats]) -> FuzzStats:
    total = FuzzStats()
    for part in parts:
        total.turns += part.turns
        total.episodes += part.episodes
        total.invalid_turns += part.invalid_turns
        for name in ("by_path", "by_mutation", "terminations", "reasons", "failure_kinds"):
            getattr(total, name).update(getattr(part, name))
        total.failures += part.failures
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--catalog-size", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()

    shares = [args.turns // args.workers + (i < args.turns % args.workers) for i in range(args.workers)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(_worker, shares, range(args.seed, args.seed + args.workers),
                                [args.catalog_size] * args.workers))
    wall, cpu = time.perf_counter() - start, sum(seconds for _, seconds in results)
    stats = _merge([part for part, _ in results])

    rows = [("turns", f"{stats.turns:,}"), ("episodes (each replayed)", f"{stats.episodes:,}"),
            ("invalid turns (-1)", f"{stats.invalid_turns:,}"),
            ("turns per input path", ", ".join(f"{k} {v:,}" for k, v in sorted(stats.by_path.items()))),
            ("structural mutations", ", ".join(f"{k} {stats.by_mutation[k]:,}" for k in sorted(MUST_BE_INVALID))),
            ("episode endings", ", ".join(f"{k} {v:,}" for k, v in stats.terminations.most_common())),
            ("invalid reasons", ", ".join(f"{k[:40]} {v:,}" for k, v in stats.reasons.most_common(6))),
            *((kind, str(stats.failure_kinds[kind])) for kind in FAILURE_KINDS),
            ("workers; wall seconds / CPU seconds", f"{args.workers}; {wall:.1f} / {cpu:.1f}"),
            ("turns per CPU second (incl. replay)", f"{stats.turns / cpu:,.0f}")]
    width = max(len(name) for name, _ in rows)
    print(f"| {'measure':<{width}} | value |\n|{'-' * (width + 2)}|-------|")
    for name, value in rows:
        print(f"| {name:<{width}} | {value} |")
    for failure in stats.failures:
        print("\n" + failure, file=sys.stderr)
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
