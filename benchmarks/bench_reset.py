#!/usr/bin/env python
"""Reset and step p50 per environment on the default catalog, source trees compared side by side.

Each tree runs in a worker process of its own (``PYTHONPATH=<tree>/src``) that builds the env once and
warms it up (``--warmup`` resets per environment: per-catalog and per-product caches as a running trainer
has them); the parent then hands every worker the same small batches in turn (``--batch`` resets, or
one episode), so that whatever else the machine is doing falls on all trees alike. Timed per reset
and per ``env.step`` (the agent's own ``act`` is not), on the worker thread's CPU time (``--clock
wall`` for ``time.perf_counter``): d 0..15 x ``--seeds`` seeds of resets, then ``--episodes`` episodes
of ``--agent`` (heuristic: every tree has one) over d 0..15 (``--difficulties``: those only). Prints a markdown table (the median
round's p50 per tree, and each later tree's change from the first); ``--json`` also writes every round's::

    python benchmarks/bench_reset.py /work/wt/c02 /work/wt/main /work/wt/resetperf --rounds 3
    python benchmarks/bench_reset.py BEFORE AFTER --envs CART,RETURN --seeds 40
    python benchmarks/bench_reset.py BEFORE AFTER --envs STATUS --difficulties 0,6,12 --per-difficulty --rounds 5
    python benchmarks/bench_reset.py OLD NEW --verbosity full   # steps without the compact encoding of results

``--rounds`` repeats the whole comparison with fresh workers (a p50 per round and tree; the table shows
the median round). Set ``ECOMRLVE_SECRET`` (the workers inherit it) so that every tree plays the same episodes.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

ENVS = "CART,SUB,PD,RETURN,STATUS,POLICY,BUNDLE,JOURNEY"


# -- the worker (one per tree) ----------------------------------------------------------------------

def worker(env_ids: list[str], warmup: int, agent_name: str, clock: Callable[[], float], verbosity: str) -> None:
    """Read commands from stdin, one per line, answer each with one JSON line of seconds:
    ``reset ENV D SEED...`` (one time per seed) or ``episode ENV D SEED`` (one time per step)."""
    from ecomrlve.episode import EcomEnv
    from ecomrlve.runner import make_agent

    # a tree from before the verbosities writes tool results in full
    takes_verbosity = "verbosity" in inspect.signature(EcomEnv).parameters
    options: dict[str, Any] = {"verbosity": verbosity} if verbosity and takes_verbosity else {}
    env = EcomEnv(env_ids, **options)
    for env_id in env_ids:
        for i in range(warmup):
            env.reset(env_id=env_id, difficulty=i % 16, seed=10**6 + i)
    print(json.dumps("ready"), flush=True)
    for line in sys.stdin:
        kind, env_id, d, *seeds = line.split()
        times: list[float] = []
        if kind == "reset":
            for seed in seeds:
                t0 = clock()
                env.reset(env_id=env_id, difficulty=int(d), seed=int(seed))
                times.append(clock() - t0)
        else:
            observation = env.reset(env_id=env_id, difficulty=int(d), seed=int(seeds[0]))
            agent = make_agent(agent_name, env, int(seeds[0]))
            while not observation.done:
                action = agent.act(observation)
                t0 = clock()
                observation = env.step(action)
                times.append(clock() - t0)
        print(json.dumps(times), flush=True)


# -- the parent -------------------------------------------------------------------------------------

class Worker:
    def __init__(self, tree: str, args: argparse.Namespace) -> None:
        env = {**os.environ, "PYTHONPATH": os.path.join(tree, "src")}
        command = [sys.executable, os.path.abspath(__file__), "--worker", "--envs", args.envs,
                   "--warmup", str(args.warmup), "--agent", args.agent, "--clock", args.clock,
                   "--verbosity", args.verbosity]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, command: str) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        if command:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("a worker stopped (see its error above)")
        return json.loads(line)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def one_round(trees: list[str], args: argparse.Namespace) -> list[dict[str, dict[str, float]]]:
    """Per tree, per env: reset and step p50 (ms) over the same batches, handed out in turn."""
    workers = [Worker(tree, args) for tree in trees]
    try:
        for w in workers:
            w.ask("")  # "ready": built and warmed up
        samples: list[dict[str, dict[str, list[float]]]] = [{} for _ in trees]
        for env_id in args.envs.split(","):
            jobs = [f"reset {env_id} {d} " + " ".join(str(s) for s in range(start, min(start + args.batch, args.seeds)))
                    for start in range(0, args.seeds, args.batch) for d in args.difficulties]
            jobs += [f"episode {env_id} {args.difficulties[e % len(args.difficulties)]} {2 * 10**6 + e}"
                     for e in range(args.episodes)]
            for i, job in enumerate(jobs):
                order = list(range(len(trees)))
                if i % 2:
                    order.reverse()  # neither tree always goes first
                kind, _, d = job.split()[:3]
                label = f"{env_id} d{d}" if args.per_difficulty else env_id
                for k in order:
                    samples[k].setdefault(label, {"reset": [], "step": []})["reset" if kind == "reset" else "step"] += (
                        workers[k].ask(job))
        return [{env_id: {"reset_p50_ms": statistics.median(s["reset"]) * 1e3,
                          "step_p50_ms": statistics.median(s["step"]) * 1e3 if s["step"] else float("nan"),
                          "resets": len(s["reset"]), "steps": len(s["step"])}
                 for env_id, s in per_tree.items()} for per_tree in samples]
    finally:
        for w in workers:
            w.close()


def table(trees: list[str], rounds: list[list[dict[str, dict[str, float]]]]) -> str:
    """Per env, the median round's p50 of each tree, and each later tree's change from the first."""
    names = [os.path.basename(os.path.normpath(tree)) for tree in trees]
    head = ["env"] + [f"{what} p50 ms {name}" + (f" (vs {names[0]})" if i else "")
                      for what in ("reset", "step") for i, name in enumerate(names)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for env_id in rounds[0][0]:
        cells = [env_id]
        for key in ("reset_p50_ms", "step_p50_ms"):
            first = statistics.median(r[0][env_id][key] for r in rounds)
            cells.append(f"{first:.3f}")
            for k in range(1, len(trees)):
                value = statistics.median(r[k][env_id][key] for r in rounds)
                cells.append(f"{value:.3f} ({(value / first - 1) * 100:+.0f} %)")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def difficulties(text: str) -> list[int]:
    """``0,6,12`` or ``0-15`` (or both, comma-separated) as a list of difficulties."""
    found: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        found += range(int(low), int(high or low) + 1)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="*", help="source trees (each with src/ecomrlve), the baseline first")
    parser.add_argument("--envs", default=ENVS)
    parser.add_argument("--warmup", type=int, default=200, help="untimed resets per environment first")
    parser.add_argument("--difficulties", type=difficulties, default=list(range(16)),
                        help="the difficulties timed, e.g. 0,6,12 or 0-15 (default)")
    parser.add_argument("--per-difficulty", action="store_true", help="a table row per environment and difficulty")
    parser.add_argument("--seeds", type=int, default=25, help="timed resets per difficulty")
    parser.add_argument("--batch", type=int, default=5, help="resets handed to one tree at a time")
    parser.add_argument("--episodes", type=int, default=32, help="episodes whose steps are timed")
    parser.add_argument("--agent", default="heuristic", help="the built-in agent whose steps are timed")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="cpu: the worker thread's CPU time (steadier on a shared machine); wall: perf_counter")
    parser.add_argument("--verbosity", default="", help="how tool results are written (compact, full) by the trees "
                        "that have a choice (older trees write them in full); default: each tree's own default")
    parser.add_argument("--rounds", type=int, default=1, help="repeat with fresh workers; the table shows medians")
    parser.add_argument("--json", help="also write every round's p50s here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    if args.worker:
        worker(args.envs.split(","), args.warmup, args.agent, clock, args.verbosity)
        return 0
    if len(args.trees) < 2:
        parser.error("give two or more source trees: the first is the baseline")
    rounds = [one_round(args.trees, args) for _ in range(args.rounds)]
    print(table(args.trees, rounds))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"trees": args.trees, "rounds": rounds}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
