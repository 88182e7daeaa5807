#!/usr/bin/env python
"""Messy-catalog sweep: the CI property (tests/test_catalog_fuzz.py) on many more random catalogs.

Draws messy product files (tests/catalog_fuzz.py: Amazon metadata JSONL or product-list CSV),
loads each, and plays every environment's oracle at a drawn d and seed. Unlike the test it does
not stop at the first failure: it prints how many catalogs were tried and, per distinct failure
(its first line), how often it happened and the smallest catalog that showed it.

Usage::

    python benchmarks/bench_catalog_fuzz.py --examples 500 --seed 1
    python benchmarks/bench_catalog_fuzz.py --examples 200 --seed 2 --max-rows 40
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from catalog_fuzz import MessyCatalog, catalog_failures, messy_catalogs  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-rows", type=int, default=14, help="rows per drawn catalog, at most")
    args = parser.parse_args()
    tried = 0
    failed: dict[str, tuple[int, MessyCatalog, int, int, str]] = {}  # first line -> count, smallest example

    @seed(args.seed)
    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(messy_catalogs(args.max_rows), st.integers(0, 15), st.integers(0, 2**31 - 1))
    def sweep(messy: MessyCatalog, d: int, episode_seed: int) -> None:
        nonlocal tried
        tried += 1
        with tempfile.TemporaryDirectory() as tmp:
            failures = [f.replace(tmp, "<tmp>") for f in
                        catalog_failures(messy.write(Path(tmp)), difficulty=d, seed=episode_seed)]
        for failure in failures:
            key = failure.splitlines()[0].split(" d=")[0] + " | " + failure.splitlines()[-1][:160]
            count, smallest, *_ = failed.get(key, (0, messy, d, episode_seed, failure))
            if len(messy.rows) < len(smallest.rows):
                smallest = messy
            failed[key] = (count + 1, smallest, d, episode_seed, failure)

    sweep()
    print(f"catalogs tried: {tried}; catalogs or episodes failing: {sum(c for c, *_ in failed.values())}; "
          f"distinct failures: {len(failed)}")
    for key, (count, smallest, d, episode_seed, failure) in sorted(failed.items(), key=lambda kv: -kv[1][0]):
        print(f"\n[{count}x] {key}\n  smallest: {smallest}\n  d={d} seed={episode_seed}\n{failure}")


if __name__ == "__main__":
    main()
