#!/usr/bin/env python
"""Episodes per second on one core: reset -> search -> answer, round robin over the eight environments.

Each (code version, catalog size) runs in its own subprocess with ``PYTHONPATH`` set to that
version's ``src`` and one thread for numba/BLAS/FAISS, so two versions are compared side by side
in one run::

    python benchmarks/bench_episodes.py --sizes 1000,100000,1000000,2000000 \\
        --src before=/path/to/old/src --src after=src --json /tmp/episodes.json

An episode is three calls on :class:`~ecomrlve.episode.EcomEnv`, and only they are timed:

1. ``reset(env_id=E, difficulty=d, seed=s)`` with ``E`` cycling through the eight environments,
   ``d`` = (episode // 8) mod 16 and ``s`` = episode number;
2. a search: ``catalog_search`` for the noun of category ``s mod categories`` filtered to that
   category (STATUS, which has no catalog search, lists orders; POLICY searches the policy); with
   ``--queries varied``, the noun plus a word of one of the category's titles drawn per episode,
   so that most searches are new queries;
3. ``answer``: the first five result ids (PD, SUB, BUNDLE), ``done`` (CART, JOURNEY), the first
   listed order and its status (STATUS), an order id from the opening (RETURN), 30 (POLICY).

The three calls are timed in process CPU time (``time.process_time``), which a busy machine
inflates far less than wall-clock time; one thread does all the work.

JOURNEY does not end at its first answer; every other episode does. Before timing, the worker
builds the catalog and the search index (or memory-maps it from ``--index-cache``), makes the
``EcomEnv`` (which warms numba's kernels in the new code), runs one search (numba's first call
in the old code) and ``WARMUP_ROUNDS`` untimed rounds of every environment at d = 0..15; those one-off costs
are reported separately (wall-clock).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the worker imports ecomrlve itself, from the --src it runs
    from ecomrlve.actions import AgentAction
    from ecomrlve.catalog.schema import Catalog
    from ecomrlve.protocol import Observation

clock = time.process_time  # CPU time of this process (one thread does the work)

ENVS = ("CART", "PD", "SUB", "BUNDLE", "RETURN", "STATUS", "POLICY", "JOURNEY")
_ORDER_ID = re.compile(r"\bO[0-9A-Z]{8}\b")
#: Untimed rounds of 8 environments × 16 difficulties first, so that the per-category structures
#: built on first use (views, title word indexes, BUNDLE's cheap rows) are mostly in place.
WARMUP_ROUNDS = 3


def _call(name: str, **arguments: Any) -> AgentAction:
    from ecomrlve.actions import AgentAction, ToolCall

    return AgentAction(tool_calls=(ToolCall(id="c0", name=name, arguments=arguments),))


def _payload(observation: Observation) -> dict[str, Any]:
    from ecomrlve.protocol import expand_result

    for message in observation.messages:
        if message.get("role") == "tool":
            return expand_result(json.loads(message["content"]))  # compact tables back to cards
    return {}


def search_action(env_id: str, catalog: Catalog, seed: int, opening: str, queries: str = "noun") -> AgentAction:
    """The episode's search; with ``queries="varied"`` the category's noun plus the first word of
    a product title of that category picked by ``seed``, so that most queries are new to the
    search engine (nothing it keeps per query helps) instead of one query per category."""
    if env_id == "STATUS":
        return _call("order_list")
    if env_id == "POLICY":
        return _call("policy_search", query=opening)
    index = seed % len(catalog.categories)
    category = catalog.categories[index]
    query = category.noun
    if queries == "varied":
        rows = catalog.category_rows[index]
        if len(rows):
            query = f"{catalog.title(int(rows[seed * 7919 % len(rows)])).split()[0]} {query}"
    return _call("catalog_search", query=query, filters={"category": category.name})


def answer_action(env_id: str, opening: str, result: dict[str, Any]) -> AgentAction:
    if env_id in ("PD", "SUB", "BUNDLE"):
        return _call("answer", product_ids=[card["product_id"] for card in result.get("results", [])[:5]])
    if env_id == "STATUS":
        order = (result.get("orders") or [{"order_id": "O00000000", "status": "delivered"}])[0]
        return _call("answer", order_id=order["order_id"], status=order["status"])
    if env_id == "RETURN":
        named = _ORDER_ID.findall(opening)
        return _call("answer", order_id=named[0] if named else "O00000000", line_id="L000000", eligible=True)
    if env_id == "POLICY":
        return _call("answer", value=30.0)
    return _call("answer", done=True)


def worker(size: int, episodes: int, index_cache: str | None, queries: str = "noun") -> dict[str, Any]:
    """Runs in the subprocess: build, warm up, then time ``episodes`` round-robin episodes."""
    started = time.perf_counter()
    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.search import BM25Retriever, SearchEngine
    from ecomrlve.episode import EcomEnv

    out: dict[str, Any] = {"size": size, "import_s": time.perf_counter() - started}
    t0 = time.perf_counter()
    catalog = load_catalog(f"synthetic:{size}")
    out["catalog_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    retriever = None
    if index_cache is not None:  # the BM25 index of this catalog, built by an earlier worker
        directory = Path(index_cache) / f"synthetic-{size}"
        if not directory.is_dir():
            BM25Retriever(catalog).save(directory)
        retriever = BM25Retriever.load(directory)
    out["index_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    env = EcomEnv("C8", catalog=catalog, search=SearchEngine(catalog, retriever))
    _ = env.search.retriever  # without a cache: the in-memory index, built on first use
    out["env_s"] = time.perf_counter() - t0
    env.reset(env_id="PD", difficulty=0, seed=0)
    t0 = time.perf_counter()
    env.step(search_action("PD", catalog, 0, ""))
    out["first_search_s"] = time.perf_counter() - t0

    def episode(number: int, timings: dict[str, list[float]] | None) -> None:
        env_id, d, seed = ENVS[number % len(ENVS)], (number // len(ENVS)) % 16, number
        t0 = clock()
        observation = env.reset(env_id=env_id, difficulty=d, seed=seed)
        t1 = clock()
        opening = observation.messages[1]["content"]
        search = search_action(env_id, catalog, seed, opening, queries)
        t2 = clock()
        observation = env.step(search)
        t3 = clock()
        if observation.done:
            raise RuntimeError(f"{env_id} d={d} seed={seed} ended at the search: {observation.info}")
        answer = answer_action(env_id, opening, _payload(observation))
        t4 = clock()
        env.step(answer)
        t5 = clock()
        if timings is not None:
            timings[env_id].append((t1 - t0) + (t3 - t2) + (t5 - t4))
            timings["reset"].append(t1 - t0)
            timings["search"].append(t3 - t2)
            timings["answer"].append(t5 - t4)

    t0 = time.perf_counter()
    for number in range(len(ENVS) * 16 * WARMUP_ROUNDS):  # every environment at every difficulty
        episode(10**7 + number, None)
    out["warmup_s"] = time.perf_counter() - t0
    timings: dict[str, list[float]] = {key: [] for key in (*ENVS, "reset", "search", "answer")}
    for number in range(episodes):
        episode(number, timings)
    total = sum(timings["reset"]) + sum(timings["search"]) + sum(timings["answer"])
    out.update(episodes=episodes, seconds=total, eps_per_s=episodes / total,
               ms={key: 1e3 * sum(values) / len(values) for key, values in timings.items()})
    return out


def render(results: list[dict[str, Any]], labels: list[str]) -> None:
    """The rich table (also: ``python bench_episodes.py --render results.json``)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=int(os.environ.get("BENCH_WIDTH", "200")))
    sizes = sorted({r["size"] for r in results})
    by = {(r["label"], r["size"]): r for r in results}
    table = Table(title="reset -> search -> answer, round robin over the 8 environments, one thread "
                        "(episodes/s; ms per episode by environment and by call)")
    table.add_column("size", justify="right")
    table.add_column("code")
    for column in ("episodes/s", "vs 1k", *ENVS, "reset", "search", "answer", "index", "EcomEnv()", "1st search"):
        table.add_column(column, justify="right")
    for size in sizes:
        for label in labels:
            r = by.get((label, size))
            if r is None:
                table.add_row(f"{size:,}", label, "failed")
                continue
            first = by.get((label, sizes[0]))
            ratio = f"{first['eps_per_s'] / r['eps_per_s']:.2f}×" if first else "—"
            table.add_row(f"{size:,}", label, f"{r['eps_per_s']:,.0f}", ratio,
                          *(f"{r['ms'][key]:.2f}" for key in (*ENVS, "reset", "search", "answer")),
                          f"{r['index_s']:.1f} s", f"{r['env_s']:.2f} s", f"{r['first_search_s'] * 1e3:.0f} ms")
    console.print(table)
    console.print(f"ratio 'vs 1k' is ({sizes[0]:,} episodes/s) / (this size's episodes/s) for the same code.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000,1000000,2000000")
    parser.add_argument("--episodes", type=int, default=2000, help="timed episodes per (code, size)")
    parser.add_argument("--src", action="append", default=[], metavar="LABEL=PATH",
                        help="a code version to measure (repeatable); default: this checkout's src")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--index-cache", help="directory for BM25 indexes, built once per size and memory-mapped by "
                        "every code version (the in-memory build takes minutes at 2M)")
    parser.add_argument("--render", metavar="JSON", help="only print the table of a --json file")
    parser.add_argument("--queries", choices=("noun", "varied"), default="noun",
                        help="noun: each category's noun (repeats across episodes); varied: noun plus a word of a "
                        "product title drawn per episode, mostly new queries")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.render:
        with open(args.render) as fh:
            saved = json.load(fh)["results"]
        render(saved, list(dict.fromkeys(r["label"] for r in saved)))
        return 0
    if args.worker is not None:
        print("@@RESULT@@" + json.dumps(worker(args.worker, args.episodes, args.index_cache, args.queries)))
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    versions = [tuple(s.split("=", 1)) for s in args.src] or [("this", os.path.join(here, "..", "src"))]
    results = []
    for size in (int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()):
        for label, path in versions:
            environment = dict(os.environ, PYTHONPATH=os.path.abspath(path), ECOMRLVE_SEARCH_THREADS="1",
                               NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                               PYTHONHASHSEED="0")
            command = [sys.executable, os.path.abspath(__file__), "--worker", str(size), "--episodes", str(args.episodes),
                       "--queries", args.queries]
            if args.index_cache:
                command += ["--index-cache", os.path.abspath(args.index_cache)]
            t0 = time.perf_counter()
            process = subprocess.run(command, capture_output=True, text=True, env=environment)
            lines = [line for line in process.stdout.splitlines() if line.startswith("@@RESULT@@")]
            if process.returncode != 0 or not lines:
                print(f"{label} at {size:,} failed (rc={process.returncode}):\n{process.stderr[-3000:]}", file=sys.stderr)
                continue
            result = json.loads(lines[-1].removeprefix("@@RESULT@@")) | {"label": label}
            print(f"{label} {size:,}: {result['eps_per_s']:,.0f} episodes/s ({time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
            results.append(result)
            if args.json:  # after every worker, so a long run leaves what it measured
                with open(args.json, "w") as fh:
                    json.dump({"argv": sys.argv, "results": results}, fh, indent=1)
    if not results:
        return 1
    render(results, [label for label, _ in versions])
    return 0


if __name__ == "__main__":
    sys.exit(main())
