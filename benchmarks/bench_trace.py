"""Which source files one episode runs through, and how often it switches between them.

A maintainer reading an environment follows the code an episode runs; this counts it. One episode
of ``--env`` at ``--difficulty`` is played by the oracle after a warm-up episode (so imports and
first-use work are not counted), with ``sys.setprofile`` recording the file of every Python call and
return inside the package. Prints the files entered, grouped by folder, and the number of switches
from one file to another (returns included), overall and per pair of files::

    python benchmarks/bench_trace.py --env CART --difficulty 6 --seed 3 [--catalog DIR]

Used for BENCHMARKS.md, "Issue 28: one environment, one place".
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import ecomrlve
from ecomrlve.episode import EcomEnv
from ecomrlve.runner import play

PACKAGE = Path(next(iter(ecomrlve.__path__))).resolve()


def trace(env: EcomEnv, env_id: str, difficulty: int, seed: int) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """(calls per file, switches per (from, to) pair) of one oracle episode, paths relative to the package."""
    calls: Counter[str] = Counter()
    switches: Counter[tuple[str, str]] = Counter()
    current = [""]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        path = frame.f_code.co_filename
        if not path.startswith(str(PACKAGE)):
            return
        name = str(Path(path).relative_to(PACKAGE))
        if event == "call":
            calls[name] += 1
        if name != current[0]:
            if current[0]:
                switches[(current[0], name)] += 1
            current[0] = name

    sys.setprofile(profile)
    try:
        play(env, "oracle", env_id=env_id, difficulty=difficulty, seed=seed)
    finally:
        sys.setprofile(None)
    return calls, switches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="CART")
    parser.add_argument("--difficulty", type=int, default=6)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--top", type=int, default=8, help="the busiest file pairs to print")
    parser.add_argument("--catalog", default="default",
                        help="a catalog directory brings its derived data built (catalog/derived.py); an in-memory "
                             "catalog works out a category's spoken names on its first use")
    args = parser.parse_args()
    env = EcomEnv(args.env, catalog=args.catalog, secret="bench-trace")
    play(env, "oracle", env_id=args.env, difficulty=args.difficulty, seed=args.seed + 1)  # warm-up
    calls, switches = trace(env, args.env, args.difficulty, args.seed)
    folders = Counter(str(Path(name).parent) for name in calls)
    print(f"{args.env} d={args.difficulty} seed={args.seed}: {len(calls)} files entered, "
          f"{sum(switches.values())} switches between files")
    for folder, files in sorted(folders.items()):
        print(f"  {folder}/: {files} files")
    for (a, b), n in switches.most_common(args.top):
        print(f"  {n:5d}  {a} -> {b}")


if __name__ == "__main__":
    main()
