#!/usr/bin/env python
"""Reset and step p50 per environment on the default catalog, for before/after comparisons.

Each environment of C8 is reset ``--warmup`` times (per-catalog and per-product caches filled),
then reset over d 0..15 x ``--seeds`` seeds (timed), then ``--episodes`` episodes of ``--agent``
(heuristic: every tree has one) are played over d 0..15 and every ``env.step`` is timed (the agent's own ``act`` is not).
Prints one JSON object: ``{env: {"reset_p50_ms", "step_p50_ms", ...}}``.

Compare two trees in alternating processes on the same machine, several repetitions, medians::

    for i in 1 2 3; do
      PYTHONPATH=/path/to/before/src python benchmarks/bench_reset.py --json /tmp/before.$i.json
      PYTHONPATH=/path/to/after/src  python benchmarks/bench_reset.py --json /tmp/after.$i.json
    done
    python benchmarks/bench_reset.py --compare /tmp/before.*.json -- /tmp/after.*.json

Timed on this thread's CPU time by default (``--clock wall`` for ``time.perf_counter``): on a shared
machine CPU time is steadier, but caches are still shared: interleave and repeat.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def measure(env_ids: list[str], warmup: int, seeds: int, episodes: int, agent_name: str = "heuristic",
            clock: Callable[[], float] = time.thread_time) -> dict[str, dict[str, float]]:
    """Reset and step p50/p90 (ms) per environment, in this process, on ``clock``."""
    from ecomrlve.episode import EcomEnv
    from ecomrlve.runner import make_agent

    env = EcomEnv(env_ids)
    out: dict[str, dict[str, float]] = {}
    for env_id in env_ids:
        for i in range(warmup):
            env.reset(env_id=env_id, difficulty=i % 16, seed=10**6 + i)
        resets: list[float] = []
        for s in range(seeds):
            for d in range(16):
                t0 = clock()
                env.reset(env_id=env_id, difficulty=d, seed=s)
                resets.append(clock() - t0)
        steps: list[float] = []
        for e in range(episodes):
            seed = 2 * 10**6 + e
            observation = env.reset(env_id=env_id, difficulty=e % 16, seed=seed)
            agent = make_agent(agent_name, env, seed)
            while not observation.done:
                action = agent.act(observation)
                t0 = clock()
                observation = env.step(action)
                steps.append(clock() - t0)
        out[env_id] = {"reset_p50_ms": statistics.median(resets) * 1e3,
                       "reset_p90_ms": statistics.quantiles(resets, n=10)[-1] * 1e3,
                       "step_p50_ms": statistics.median(steps) * 1e3,
                       "step_p90_ms": statistics.quantiles(steps, n=10)[-1] * 1e3,
                       "resets": len(resets), "steps": len(steps)}
    return out


def compare(before: list[str], after: list[str]) -> str:
    """A markdown table: per env, the median over runs of each tree's p50s (before → after, change)."""
    def load(paths: list[str]) -> list[dict[str, Any]]:
        runs = []
        for path in paths:
            with open(path) as fh:
                runs.append(json.load(fh))
        return runs

    runs_before, runs_after = load(before), load(after)
    rows = ["| env | reset p50 ms before → after | change | step p50 ms before → after | change |",
            "|---|---|---|---|---|"]
    for env_id in runs_before[0]:
        cells = [env_id]
        for key in ("reset_p50_ms", "step_p50_ms"):
            b = statistics.median(run[env_id][key] for run in runs_before)
            a = statistics.median(run[env_id][key] for run in runs_after)
            cells += [f"{b:.3f} → {a:.3f}", f"{(a / b - 1) * 100:+.0f} %"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--compare"]:
        split = argv.index("--")
        print(compare(argv[1:split], argv[split + 1:]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envs", default="CART,SUB,PD,RETURN,STATUS,POLICY,BUNDLE,JOURNEY")
    parser.add_argument("--warmup", type=int, default=200, help="untimed resets per environment first")
    parser.add_argument("--seeds", type=int, default=25, help="timed resets per difficulty")
    parser.add_argument("--episodes", type=int, default=48, help="episodes whose steps are timed")
    parser.add_argument("--agent", default="heuristic", help="the built-in agent whose steps are timed")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="cpu: this thread's CPU time (steadier on a shared machine); wall: perf_counter")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    result = measure(args.envs.split(","), args.warmup, args.seeds, args.episodes, args.agent,
                     time.thread_time if args.clock == "cpu" else time.perf_counter)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
