#!/usr/bin/env python
"""Cold start on a catalog: CPU from process start to the first finished episode, the worst episode after it.

Opens ``--catalog`` (a catalog directory, or any ``load_catalog`` source), makes ``EcomEnv("C8")`` and plays
``--episodes`` episodes of :mod:`bench_episodes`' workload (reset -> search -> answer, round robin over the
eight environments, d = (episode // 8) mod 16) with no warm-up, in process CPU time (``time.process_time``)::

    python benchmarks/bench_cold_start.py --catalog /data/amazebay-2m --episodes 400

Prints one JSON object: ``open_s`` (catalog opened), ``env_s`` (``EcomEnv("C8")``), ``first_episode_s`` (CPU
from process start to the end of the first episode, imports included), ``worst_later_ms`` (the slowest
episode after the first), ``later_over_20ms`` (how many later episodes took more than 20 ms) and
``total_s``. Used for issue 28 §2's cold-start numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

clock = time.process_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", required=True, help="a catalog directory or a load_catalog source")
    parser.add_argument("--episodes", type=int, default=400)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_episodes import ENVS, _payload, answer_action, search_action  # type: ignore[import-not-found]

    from ecomrlve.catalog import load_catalog
    from ecomrlve.episode import EcomEnv

    out: dict[str, object] = {"catalog": args.catalog, "episodes": args.episodes}
    t0 = clock()
    catalog = load_catalog(args.catalog)
    out["open_s"] = round(clock() - t0, 3)
    t0 = clock()
    env = EcomEnv("C8", catalog=catalog)
    out["env_s"] = round(clock() - t0, 3)
    times: list[float] = []
    for number in range(args.episodes):
        env_id, d = ENVS[number % len(ENVS)], (number // len(ENVS)) % 16
        t0 = clock()
        observation = env.reset(env_id=env_id, difficulty=d, seed=number)
        opening = observation.messages[1]["content"]
        observation = env.step(search_action(env_id, catalog, number, opening))
        if not observation.done:
            env.step(answer_action(env_id, opening, _payload(observation)))
        times.append(clock() - t0)
        if number == 0:
            out["first_episode_s"] = round(clock(), 3)  # CPU since process start
    later = times[1:]
    out["worst_later_ms"] = round(1e3 * max(later), 1) if later else None
    out["later_over_20ms"] = sum(t > 0.020 for t in later)
    out["later_sum_s"] = round(sum(later), 3)
    out["total_s"] = round(clock(), 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
