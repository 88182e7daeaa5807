"""Memory a second ``serve --replicas`` replica adds on the same node, with a catalog directory.

Starts ``serve --replicas 1`` and then ``--replicas 2`` on a local Ray over one catalog directory, plays
``--episodes`` oracle episodes through each replica's sessions so every replica has loaded what episodes
touch (columns, BM25 index, per-category views), and reads each replica process's memory from
``/proc/PID/smaps_rollup``: RSS (every page it maps, shared ones included), PSS (shared pages divided among
the processes that map them) and USS (pages only this process holds). A memory-mapped catalog is shared: its
pages count in both replicas' RSS but once in their PSS sum::

    python benchmarks/bench_replica_memory.py --catalog /data/amazebay-2m --episodes 40

Used for BENCHMARKS.md, "Memory across replicas" (issue 31).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ecomrlve.server import ServerConfig
from ecomrlve.server.client import RemoteEnv


def memory_kib(pid: int) -> dict[str, int]:
    """RSS, PSS and USS of process ``pid`` in KiB."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        fields[name.strip()] = int(rest.split()[0])
    return {"rss": fields["Rss"], "pss": fields["Pss"],
            "uss": fields["Private_Clean"] + fields["Private_Dirty"]}


def play(url: str, episodes: int, sessions: int) -> None:
    """``episodes`` oracle episodes over ``sessions`` connections (new connections land on every replica)."""
    envs = [RemoteEnv(url) for _ in range(sessions)]
    try:
        for i in range(episodes):
            env = envs[i % sessions]
            observation = env.reset(env_id=("CART", "PD", "SUB", "STATUS")[i % 4], difficulty=i % 8, seed=i)
            oracle = env.oracle()
            while not observation.done:
                observation = env.step(oracle.act(observation))
    finally:
        for env in envs:
            env.close()


def measure(catalog: str, replicas: int, episodes: int) -> list[dict[str, int]]:
    import ray

    from ecomrlve.integrations.ray_server import replicated_server

    config = ServerConfig(env="C8", catalog=catalog, port=0, secret="bench", playground=False, allow_oracle=True)
    with replicated_server(config, replicas, cpus_per_replica=0.5) as (url, handles):
        pids: list[int] = ray.get([handle.__ray_call__.remote(lambda self: os.getpid()) for handle in handles])
        play(url, episodes, sessions=4 * replicas)
        return [memory_kib(pid) for pid in pids]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", required=True, help="a catalog directory (ecomrlve catalog build)")
    parser.add_argument("--episodes", type=int, default=40)
    args = parser.parse_args()
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False)
    rows: dict[int, Any] = {count: measure(args.catalog, count, args.episodes) for count in (1, 2)}
    one = rows[1][0]
    print("| replicas | replica | RSS MiB | PSS MiB | USS MiB |")
    print("|---:|---:|---:|---:|---:|")
    for count, replicas in rows.items():
        for i, row in enumerate(replicas):
            print(f"| {count} | {i + 1} | {row['rss'] / 1024:.0f} | {row['pss'] / 1024:.0f} | {row['uss'] / 1024:.0f} |")
    added = sum(r["pss"] for r in rows[2]) - sum(r["pss"] for r in rows[1])  # what the node holds more, shared pages once
    print(f"the second replica adds {added / 1024:.0f} MiB (PSS of two replicas minus PSS of one), "
          f"{100 * added / one['rss']:.0f} % of one replica's RSS ({one['rss'] / 1024:.0f} MiB)")


if __name__ == "__main__":
    main()
