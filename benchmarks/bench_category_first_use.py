#!/usr/bin/env python
"""What a category's first use costs: the per-category answers CART (name checks) and RETURN/STATUS (order-line
names) work out at once, timed per category on the default catalog (CPU time of this thread), and the first resets
of a fresh ``EcomEnv`` (nothing warmed up), where those first uses fall::

    PYTHONPATH=<tree>/src python benchmarks/bench_category_first_use.py [--resets 100]

Run it on two trees to compare their cold resets; the per-category part needs a tree that has the answers.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=100, help="cold resets per environment (d = n % 16, seed n)")
    parser.add_argument("--envs", default="CART,RETURN,STATUS")
    args = parser.parse_args()
    from ecomrlve.episode import EcomEnv

    env_ids = args.envs.split(",")
    for env_id in env_ids:  # a fresh env (and catalog derived data) per environment: its first resets are cold
        env = EcomEnv([env_id])
        env.catalog.derived._values.clear()  # nothing from an earlier EcomEnv on the shared default catalog
        env = EcomEnv([env_id])
        times = []
        for n in range(args.resets):
            t0 = time.thread_time_ns()
            env.reset(env_id=env_id, difficulty=n % 16, seed=n)
            times.append((time.thread_time_ns() - t0) / 1e6)
        print(f"{env_id} cold resets x{args.resets}: p50 {statistics.median(times):.3f} ms, mean "
              f"{statistics.fmean(times):.3f} ms, max {max(times):.1f} ms, total {sum(times):.0f} ms")
    try:
        from ecomrlve.envs.account.orders import CATEGORY_LINE_NAMES
        from ecomrlve.envs.cart.family import CATEGORY_NAME_CHECKS
    except ImportError:
        return
    env = EcomEnv(env_ids)
    catalog = env.catalog
    for name, handle in (("cart_category_name_checks", CATEGORY_NAME_CHECKS),
                         ("order_category_line_names", CATEGORY_LINE_NAMES)):
        catalog.derived._values.clear()
        env = EcomEnv(env_ids)  # what EcomEnv builds, built again; the per-category answers not yet
        per_category, per_product = [], []
        for category in range(len(catalog.categories)):
            t0 = time.thread_time_ns()
            handle.of(catalog, category)
            ms = (time.thread_time_ns() - t0) / 1e6
            per_category.append(ms)
            per_product.append(ms * 1000 / max(1, len(catalog.category_rows[category])))
        print(f"{name}: {len(per_category)} categories, first use p50 {statistics.median(per_category):.1f} ms, "
              f"max {max(per_category):.1f} ms, all {sum(per_category):.0f} ms; "
              f"p50 {statistics.median(per_product):.0f} µs per product")


if __name__ == "__main__":
    main()
