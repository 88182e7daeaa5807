#!/usr/bin/env python
"""PD / SUB / BUNDLE measurements: the specified PD targets per difficulty, a scan of user messages, reset latency.

Usage::

    python benchmarks/bench_recommend.py table --size 10000 --episodes 1000
    python benchmarks/bench_recommend.py scan --size 10000 --episodes 10000
    python benchmarks/bench_recommend.py reset --sizes 10000,1000000,2000000 --seeds 60

``table`` measures, per d in {0, 6, 12}: constraints per PD task, the share withheld from the
opening, the share of distractors among ``catalog_search`` results (a search for the product
noun, top 20, compared with the undegraded ranking) and the share of episodes with a stock-out.
``scan`` generates openings and plays the oracle, checking every user message for unfilled
template slots. ``reset`` times ``reset`` for each environment over d = 0..15 (each size in its
own process, after building the per-catalog caches: category views, and one warm-up reset).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time

import numpy as np

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog import load_catalog
from ecomrlve.envs.recommend.requirements import category_view, title_overlap
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import expand_result

ENVS = ("PD", "SUB", "BUNDLE")
UNFILLED = re.compile(r"[{}]|\bNone\b|\bnan\b|\bNaN\b")


def table(size: int, episodes: int) -> dict:
    env = EcomEnv("PD", catalog=load_catalog(f"synthetic:{size}"))
    out = {}
    for d in (0, 6, 12):
        constraints = eligible = withheld = stock_outs = shown = distractors = 0
        for seed in range(episodes):
            observation = env.reset(env_id="PD", difficulty=d, seed=seed)
            goal = env.audit().problem.goal
            constraints += len(goal.requirements)
            eligible += len(goal.requirements) - 1
            withheld += len(goal.withheld)
            stock_outs += goal.stock_out_row is not None
            call = ToolCall(id="s", name="catalog_search", arguments={"query": goal.noun, "top_k": 20})
            observation = env.step(AgentAction(tool_calls=(call,)))
            results = [c["product_id"] for c in expand_result(json.loads(observation.messages[0]["content"]))["results"]]
            genuine = {env.catalog.product_id(r) for r in env.search.search(goal.noun, None, "relevance", 20).tolist()}
            shown += len(results)
            distractors += sum(r not in genuine for r in results)
        out[d] = {"constraints": constraints / episodes, "withheld": withheld / max(1, eligible),
                  "distractors": distractors / shown, "stock_outs": stock_outs / episodes}
        print(f"d={d}: " + ", ".join(f"{k} {v:.3f}" for k, v in out[d].items()), flush=True)
    return out


def scan(size: int, episodes: int) -> dict:
    catalog = load_catalog(f"synthetic:{size}")
    counts = {}
    for env_id in ENVS:
        env = EcomEnv(env_id, catalog=catalog)
        messages = 0
        for seed in range(episodes):
            observation = env.reset(env_id=env_id, difficulty=seed % 16, seed=seed)
            texts = [observation.messages[-1]["content"]]
            if seed % 10 == 0:  # every tenth episode is also played out by the oracle
                oracle = env.audit().oracle()
                while not observation.done:
                    observation = env.step(oracle.act(observation))
                    texts += [m["content"] for m in observation.messages if m["role"] == "user"]
            for text in texts:
                messages += 1
                if not text.strip() or UNFILLED.search(text):
                    raise AssertionError(f"{env_id} seed={seed}: bad user message {text!r}")
        counts[env_id] = {"episodes": episodes, "messages": messages}
        print(env_id, counts[env_id], flush=True)
    return counts


def reset_one_size(size: int, seeds: int) -> dict:
    t0 = time.perf_counter()
    catalog = load_catalog(f"synthetic:{size}")
    out: dict = {"generate_s": time.perf_counter() - t0}
    t0 = time.perf_counter()  # one-off per catalog: contiguous category views and their title text
    for category in range(len(catalog.categories)):
        view = category_view(catalog, category, main_type_only=True)
        title_overlap(view.catalog, 0, np.arange(1))
    out["category_views_s"] = time.perf_counter() - t0
    for env_id in ENVS:
        env = EcomEnv(env_id, catalog=catalog)
        t0 = time.perf_counter()
        env.reset(env_id=env_id, difficulty=0, seed=10**6)
        first = time.perf_counter() - t0
        samples = []
        for d in range(16):
            for seed in range(seeds):
                t0 = time.perf_counter()
                env.reset(env_id=env_id, difficulty=d, seed=seed)
                samples.append(time.perf_counter() - t0)
        ms = np.asarray(samples) * 1e3
        out[env_id] = {"n": len(samples), "first_ms": first * 1e3, "p50_ms": float(np.percentile(ms, 50)),
                       "p99_ms": float(np.percentile(ms, 99)), "max_ms": float(ms.max())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("table", "scan", "reset", "_reset_size"))
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=60)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    if args.what == "table":
        result = table(args.size, args.episodes)
    elif args.what == "scan":
        result = scan(args.size, args.episodes)
    elif args.what == "_reset_size":
        print(json.dumps(reset_one_size(args.size, args.seeds)))
        return
    else:
        result = {}
        for size in (int(s) for s in args.sizes.split(",")):
            proc = subprocess.run([sys.executable, __file__, "_reset_size", "--size", str(size), "--seeds", str(args.seeds)],
                                  capture_output=True, text=True, check=True)
            result[size] = json.loads(proc.stdout.strip().splitlines()[-1])
            print(size, json.dumps(result[size]), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
