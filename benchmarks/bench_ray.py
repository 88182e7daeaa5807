#!/usr/bin/env python
"""Episodes per second with Ray environment actors (1 and 2 workers) against one process, same plan.

    RAY_USAGE_STATS_ENABLED=0 python benchmarks/bench_ray.py --episodes 40 --workers 1,2 --json /tmp/ray.json

The plan is ``ecomrlve run``'s: the heuristic agent on C8 at difficulties 0..7, ``--episodes`` per
difficulty, on the embedded default catalog. In-process is a :class:`~ecomrlve.runner.RunLoop` in this
process (its catalog and search index already built by an untimed warm-up). For Ray, one local Ray is
started for all pool sizes (``num_cpus`` = the largest pool, so every worker gets a CPU). *start-up*
is the time until the first record reaches the driver (for a pool: starting the actors, loading the
catalog and search kernels in each), *episodes/s* is measured from the first record to the last.
Every run also checks that its records equal the in-process ones, byte for byte. Wall-clock time: a
busy machine shows in it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

import ray

from ecomrlve.catalog import load_catalog
from ecomrlve.envs import resolve_env_ids
from ecomrlve.episode import EcomEnv
from ecomrlve.integrations.ray import EnvRecipe, RayPool
from ecomrlve.runner import Curriculum, EpisodeLoop, Plan, RunLoop, Task, agent_factory
from ecomrlve.session import EpisodeRecord

SECRET = "bench-ray"


def timed(loop: EpisodeLoop, jobs: list[tuple[Task, int]]) -> tuple[dict[str, float], list[EpisodeRecord]]:
    """Play ``jobs``; start-up = until the first record arrives, then episodes/s over the rest."""
    records: list[EpisodeRecord] = []
    arrived: list[float] = []

    def finished(task: Task, trial: int, record: EpisodeRecord, agent: object) -> None:
        records.append(record)
        arrived.append(time.perf_counter())

    start = time.perf_counter()
    asyncio.run(loop.run(jobs, finished))
    rate = (len(arrived) - 1) / max(arrived[-1] - arrived[0], 1e-9)
    return {"startup_s": round(arrived[0] - start, 2), "seconds": round(arrived[-1] - start, 2),
            "episodes_per_s": round(rate, 1)}, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=40, help="episodes per difficulty (d = 0..7)")
    parser.add_argument("--workers", default="1,2", help="pool sizes, comma separated")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    env_ids = resolve_env_ids("C8")
    plan = Plan(env_ids, tuple(range(8)), args.episodes)
    jobs = [(task, 0) for task in plan]
    catalog = load_catalog("default")

    def make_env() -> EcomEnv:
        return EcomEnv(env_ids, catalog=catalog, secret=SECRET)

    local = RunLoop(make_env, Curriculum(), agent_factory("heuristic"))
    timed(local, jobs[:2])  # warm: search index, numba kernels
    measured, expected = timed(local, jobs)
    results: dict[str, object] = {"episodes": len(jobs), "in_process": measured}
    sizes = [int(n) for n in args.workers.split(",")]
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=max(sizes), include_dashboard=False)
    for workers in sizes:
        pool = RayPool(EnvRecipe(env_ids, "default", secret=SECRET), Curriculum(), agent_factory("heuristic"),
                       workers=workers)
        measured, records = timed(pool, jobs)
        assert [r.to_json() for r in records] == [r.to_json() for r in expected], "records differ from in-process"
        results[f"ray_{workers}"] = measured
    ray.shutdown()
    print(json.dumps(results, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
