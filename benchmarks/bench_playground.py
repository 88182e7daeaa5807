#!/usr/bin/env python
"""The playground's HTTP round trips: reset, hint and step over real HTTP to uvicorn on loopback.

    python benchmarks/bench_playground.py --episodes 40 --json /tmp/playground.json

Plays ``--episodes`` oracle episodes through the API (the oracle's hint is each turn's action),
round robin over the eight environments at d = episode mod 8, with one client in the same process
as the server (so the numbers include both sides). Reports the median and 95th percentile wall
time per request kind and the median size of an episode view (what the page downloads per turn).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from typing import Any

import httpx

from ecomrlve.catalog.synthetic import default_catalog
from ecomrlve.playground import create_playground_app
from ecomrlve.playground.command import serve_in_thread
from ecomrlve.registry import env_specs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    catalog = default_catalog()
    app = create_playground_app({catalog.name: catalog}, secret="bench")
    env_ids = [spec.id for spec in env_specs()]
    times: dict[str, list[float]] = defaultdict(list)
    sizes: list[int] = []

    def timed(kind: str, client: httpx.Client, method: str, url: str, payload: dict[str, Any] | None = None) -> dict:
        start = time.perf_counter()
        response = client.request(method, url, json=payload)  # json=None: no body, as when not passed
        times[kind].append(time.perf_counter() - start)
        response.raise_for_status()
        return response.json()

    with serve_in_thread(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        for episode in range(args.episodes):
            env_id = env_ids[episode % len(env_ids)]
            view = timed("reset", client, "POST", "/api/episodes",
                         payload={"env_id": env_id, "difficulty": episode % 8, "seed": episode})
            handle = view["episode"]
            for _ in range(60):
                action = timed("hint", client, "POST", f"/api/episodes/{handle}/hint")["action"]
                view = timed("step", client, "POST", f"/api/episodes/{handle}/step", payload={"action": action})
                sizes.append(len(json.dumps(view)))
                if view["done"]:
                    break
    result: dict[str, dict[str, float] | int] = {
        kind: {"requests": len(values), "median_ms": round(1000 * statistics.median(values), 2),
               "p95_ms": round(1000 * statistics.quantiles(values, n=20)[-1], 2)}
        for kind, values in times.items()}
    result["view_bytes_median"] = int(statistics.median(sizes))
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
