#!/usr/bin/env python
"""Core performance benchmark for ecomrlve on the synthetic catalog.

Measures, at each catalog size (each size runs in its own subprocess so that peak RSS is
per size):

1. catalog generation time, peak RSS and ``catalog.nbytes()``;
2. ``reset`` latency p50/p99 over many seeds and difficulties 0..15 (CART);
3. ``step`` latency p50/p99 per tool (single-call turns at difficulty 15); the one-off BM25
   index build and the first (numba-JIT) search are timed separately and excluded;
4. oracle and heuristic episodes per second at d=0 and d=8 (single process);
5. "three-step" episodes per second: reset + two no-op cart calls (cart_set_quantity of a line the cart does
   not have: a business error) + answer(done=True).

Usage::

    python benchmarks/bench_core.py --sizes 10000,100000,1000000 --episodes 200
    python benchmarks/bench_core.py --quick
    python benchmarks/bench_core.py --sizes 1000000 --profile three_step   # cProfile a phase

Numbers are wall-clock (``time.perf_counter``) on whatever else the machine is doing: treat
them as noisy.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from rich.console import Console

    from ecomrlve.actions import AgentAction
    from ecomrlve.protocol import Observation

# ------------------------------------------------------------------------------------------------
# helpers

NO_LINE = "LNOLINE"  # a cart line no episode has: cart_set_quantity of it is a cheap no-op step (unknown_line)


def _maxrss_mib() -> float:
    # Linux reports ru_maxrss in KiB (macOS in bytes).
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 / (1024 if sys.platform == "darwin" else 1)


def _current_rss_mib() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


def _pct(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q)) if samples else float("nan")


def _summary(samples_s: list[float]) -> dict[str, Any]:
    return {"n": len(samples_s), "p50_ms": _pct(samples_s, 50) * 1e3, "p99_ms": _pct(samples_s, 99) * 1e3,
            "mean_ms": (float(np.mean(samples_s)) * 1e3) if samples_s else float("nan"),
            "max_ms": (max(samples_s) * 1e3) if samples_s else float("nan")}


def _call(name: str, **arguments: Any) -> AgentAction:
    from ecomrlve.actions import AgentAction, ToolCall
    return AgentAction(tool_calls=(ToolCall(id="c0", name=name, arguments=arguments),))


def _short_title(title: str) -> str:
    """'Terrawave Prime 6 Knife Set, 15-Piece, Black' -> 'Terrawave Prime 6 Knife Set'."""
    return title.split(",")[0]


def _tool_payload(obs: Observation) -> dict[str, Any] | None:
    from ecomrlve.protocol import expand_result

    for message in obs.messages:
        if message.get("role") == "tool":
            try:
                return expand_result(json.loads(message["content"]))  # compact tables back to cards
            except (ValueError, KeyError):
                return None
    return None


# ------------------------------------------------------------------------------------------------
# the per-size worker (runs in a subprocess)


def run_size(n: int, args: argparse.Namespace) -> dict[str, Any]:
    import random

    from ecomrlve.catalog.synthetic import generate_synthetic_catalog
    from ecomrlve.envs.cart.heuristic import CartHeuristic
    from ecomrlve.episode import EcomEnv

    out: dict[str, Any] = {"size": n, "skipped": []}
    quick = args.quick
    search_ok = n <= args.skip_search_above
    out["search_enabled"] = search_ok
    out["rss_before_catalog_mib"] = _current_rss_mib()

    # 1. catalog generation -----------------------------------------------------------------
    gc.collect()
    t0 = time.perf_counter()
    cat = generate_synthetic_catalog(n)
    out["gen_s"] = time.perf_counter() - t0
    out["nbytes_mib"] = cat.nbytes() / 2**20
    out["rss_after_catalog_mib"] = _current_rss_mib()
    out["peak_rss_after_catalog_mib"] = _maxrss_mib()

    env = EcomEnv("CART", catalog=cat)

    # 2. reset latency ------------------------------------------------------------------------
    t0 = time.perf_counter()
    env.reset(env_id="CART", difficulty=0, seed=10**6)  # first reset builds per-catalog caches
    out["first_reset_ms"] = (time.perf_counter() - t0) * 1e3
    for d in range(16):  # warm the per-(env, difficulty) toolset caches
        env.reset(env_id="CART", difficulty=d, seed=10**6 + d)
    seeds_per_d = 10 if quick else args.reset_seeds
    reset_samples: list[float] = []
    per_d: dict[int, list[float]] = {d: [] for d in range(16)}
    for s in range(seeds_per_d):
        for d in range(16):
            t0 = time.perf_counter()
            env.reset(env_id="CART", difficulty=d, seed=s)
            dt_ = time.perf_counter() - t0
            reset_samples.append(dt_)
            per_d[d].append(dt_)
    out["reset"] = _summary(reset_samples)
    out["reset_worst_d_p50_ms"] = max(_pct(v, 50) for v in per_d.values()) * 1e3
    out["peak_rss_after_resets_mib"] = _maxrss_mib()

    # 5. three-step episodes (no search involved) ----------------------------------------------
    n3 = 50 if quick else args.three_step_episodes
    view, answer = _call("cart_set_quantity", line_id=NO_LINE, quantity=0), _call("answer", done=True)
    # warm-up
    for s in range(10):
        env.reset(env_id="CART", difficulty=s % 16, seed=5_000_000 + s)
        env.step(view)
    completed = 0
    t0 = time.perf_counter()
    for s in range(n3):
        obs = env.reset(env_id="CART", difficulty=s % 16, seed=2_000_000 + s)
        for action in (view, view, answer):
            obs = env.step(action)
            if obs.done:
                break
        completed += int(obs.done)
    elapsed = time.perf_counter() - t0
    out["three_step"] = {"episodes": n3, "seconds": elapsed, "eps_per_s": n3 / elapsed,
                         "ended_done": completed}

    # 3. step latency per tool ------------------------------------------------------------------
    steps: dict[str, list[float]] = {k: [] for k in (
        "cart_set_quantity", "cart_add", "catalog_get_product", "catalog_get_variants", "user_get_visit_history",
        "catalog_search", "catalog_search+filters")}
    if search_ok:
        t0 = time.perf_counter()
        _ = env.search.retriever  # BM25 index build (lazy, once per catalog)
        out["index_build_s"] = time.perf_counter() - t0
        out["peak_rss_after_index_mib"] = _maxrss_mib()
        out["rss_after_index_mib"] = _current_rss_mib()
        env.reset(env_id="CART", difficulty=15, seed=7_000_000)
        t0 = time.perf_counter()
        env.step(_call("catalog_search", query=_short_title(cat.title(0))))  # first numba call (JIT)
        out["first_search_ms"] = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        env.step(_call("catalog_search", query=_short_title(cat.title(1)),
                       filters={"brand": cat.brand_of(1), "category": cat.category_of(1).name}))
        out["first_filtered_search_ms"] = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        env.step(_call("catalog_search", query=_short_title(cat.title(2))))  # post-JIT
        out["second_search_ms"] = (time.perf_counter() - t0) * 1e3
    else:
        out["skipped"].append(f"BM25 index build, catalog_search steps, oracle/heuristic episodes "
                              f"(size {n:,} > --skip-search-above {args.skip_search_above:,})")

    rng = random.Random(1234)
    n_step_eps = 15 if quick else args.step_episodes
    resets_needed = 0

    def timed(action: AgentAction) -> tuple[Any, float]:
        t = time.perf_counter()
        o = env.step(action)
        return o, time.perf_counter() - t

    for e in range(n_step_eps):
        obs = env.reset(env_id="CART", difficulty=15, seed=3_000_000 + e)
        row = rng.randrange(n)
        pid: str | None = None
        variant_id: str | None = None
        card: dict[str, Any] | None = None
        seq = ["history", "no_line", "search", "get_product", "get_variants", "cart_add", "search_f", "no_line"]
        for kind in seq:
            if obs.done:
                resets_needed += 1
                obs = env.reset(env_id="CART", difficulty=15, seed=4_000_000 + e * 16 + resets_needed)
            if kind == "history":
                obs, dt_ = timed(_call("user_get_visit_history"))
                steps["user_get_visit_history"].append(dt_)
                payload = _tool_payload(obs) or {}
                viewed = payload.get("viewed") or []
                if viewed and not search_ok:
                    card = viewed[0]
            elif kind == "no_line":
                obs, dt_ = timed(_call("cart_set_quantity", line_id=NO_LINE, quantity=0))
                steps["cart_set_quantity"].append(dt_)
            elif kind == "search":
                if not search_ok:
                    continue
                obs, dt_ = timed(_call("catalog_search", query=_short_title(cat.title(row))))
                steps["catalog_search"].append(dt_)
                results = (_tool_payload(obs) or {}).get("results") or []
                card = results[0] if results else None
            elif kind == "search_f":
                if not search_ok:
                    continue
                r2 = rng.randrange(n)
                obs, dt_ = timed(_call("catalog_search", query=_short_title(cat.title(r2)),
                                       filters={"brand": cat.brand_of(r2), "category": cat.category_of(r2).name}))
                steps["catalog_search+filters"].append(dt_)
            else:
                if card is None:  # no id surfaced: fall back to a catalog id
                    card = {"product_id": cat.product_id(row)}
                pid = card["product_id"]
                variants = card.get("variants") or []
                variant_id = variants[0]["variant_id"] if variants else None
                if kind == "get_product":
                    obs, dt_ = timed(_call("catalog_get_product", product_id=pid))
                    steps["catalog_get_product"].append(dt_)
                elif kind == "get_variants":
                    obs, dt_ = timed(_call("catalog_get_variants", product_id=pid))
                    steps["catalog_get_variants"].append(dt_)
                    vs = (_tool_payload(obs) or {}).get("variants") or []
                    if vs:
                        card = dict(card, variants=vs)
                elif kind == "cart_add":
                    arguments: dict[str, Any] = {"product_id": pid, "quantity": 1}
                    if variant_id is not None:
                        arguments["variant_id"] = variant_id
                    obs, dt_ = timed(_call("cart_add", **arguments))
                    steps["cart_add"].append(dt_)
    out["steps"] = {k: _summary(v) for k, v in steps.items() if v}
    out["step_episode_resets"] = resets_needed
    out["peak_rss_after_steps_mib"] = _maxrss_mib()

    # 4. oracle / heuristic episodes per second -------------------------------------------------
    if search_ok:
        n_eps = 20 if quick else args.episodes
        agent_rows: list[dict[str, Any]] = []
        for agent_name in ("oracle", "heuristic"):
            for d in (0, 8):
                # warm-up episode
                for s in range(2):
                    obs = env.reset(env_id="CART", difficulty=d, seed=8_000_000 + s)
                    agent = env.audit().oracle() if agent_name == "oracle" else CartHeuristic()
                    while not obs.done:
                        obs = env.step(agent.act(obs))
                done_eps = 0
                correct = 0
                turns = 0
                t0 = time.perf_counter()
                deadline = t0 + args.agent_time_budget
                for s in range(n_eps):
                    obs = env.reset(env_id="CART", difficulty=d, seed=9_000_000 + s)
                    agent = env.audit().oracle() if agent_name == "oracle" else CartHeuristic()
                    while not obs.done:
                        obs = env.step(agent.act(obs))
                        turns += 1
                    done_eps += 1
                    correct += int(bool(obs.info.get("is_correct")))
                    if time.perf_counter() > deadline:
                        break
                elapsed = time.perf_counter() - t0
                agent_rows.append({"agent": agent_name, "d": d, "episodes": done_eps, "seconds": elapsed,
                                   "eps_per_s": done_eps / elapsed, "turns_per_ep": turns / max(done_eps, 1),
                                   "correct": correct})
        out["agents"] = agent_rows
    out["peak_rss_final_mib"] = _maxrss_mib()
    return out


def profile_phase(n: int, phase: str, args: argparse.Namespace) -> None:
    """cProfile one phase at one size and print the top functions."""
    import cProfile
    import pstats

    from ecomrlve.catalog.synthetic import generate_synthetic_catalog
    from ecomrlve.episode import EcomEnv

    if phase == "generate":
        prof = cProfile.Profile()
        prof.enable()
        generate_synthetic_catalog(n)
        prof.disable()
    else:
        cat = generate_synthetic_catalog(n)
        env = EcomEnv("CART", catalog=cat)
        for d in range(16):
            env.reset(env_id="CART", difficulty=d, seed=10**6 + d)
        view, answer = _call("cart_set_quantity", line_id=NO_LINE, quantity=0), _call("answer", done=True)
        if phase == "search":
            _ = env.search.retriever
            env.reset(env_id="CART", difficulty=15, seed=1)
            env.step(_call("catalog_search", query="warm up"))
        prof = cProfile.Profile()
        prof.enable()
        if phase == "reset":
            for s in range(30):
                for d in range(16):
                    env.reset(env_id="CART", difficulty=d, seed=s)
        elif phase == "three_step":
            for s in range(400):
                obs = env.reset(env_id="CART", difficulty=s % 16, seed=2_000_000 + s)
                for action in (view, view, answer):
                    obs = env.step(action)
                    if obs.done:
                        break
        elif phase == "search":
            import random
            rng = random.Random(0)
            for s in range(100):
                obs = env.reset(env_id="CART", difficulty=15, seed=s)
                r = rng.randrange(n)
                env.step(_call("catalog_search", query=_short_title(cat.title(r))))
        elif phase == "index":
            from ecomrlve.catalog.search import BM25Retriever
            BM25Retriever(cat)
        prof.disable()
    stats = pstats.Stats(prof, stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(args.profile_top)
    stats.sort_stats("tottime").print_stats(args.profile_top)


# ------------------------------------------------------------------------------------------------
# reporting


def _fmt_ms(v: float) -> str:
    if v != v:
        return "—"
    if v < 1:
        return f"{v * 1e3:.0f} µs"
    if v < 1000:
        return f"{v:.2f} ms"
    return f"{v / 1e3:.2f} s"


def render(results: list[dict[str, Any]], console: Console) -> None:
    from rich.table import Table

    sizes = [f"{r['size']:,}" for r in results]

    t = Table(title="1. Catalog generation & memory (per-size subprocess)")
    for col in ("size", "generate", "catalog.nbytes()", "RSS before gen", "RSS after gen", "peak RSS after gen",
                "peak RSS (resets+3-step)", "peak RSS final"):
        t.add_column(col, justify="right")
    for r, s in zip(results, sizes):
        t.add_row(s, f"{r['gen_s']:.2f} s", f"{r['nbytes_mib']:.0f} MiB", f"{r['rss_before_catalog_mib']:.0f} MiB",
                  f"{r['rss_after_catalog_mib']:.0f} MiB",
                  f"{r['peak_rss_after_catalog_mib']:.0f} MiB", f"{r['peak_rss_after_resets_mib']:.0f} MiB",
                  f"{r['peak_rss_final_mib']:.0f} MiB")
    console.print(t)

    t = Table(title="2. reset(env_id='CART', difficulty=0..15, seed) latency")
    for col in ("size", "n", "first reset", "p50", "p99", "mean", "max", "worst per-d p50"):
        t.add_column(col, justify="right")
    for r, s in zip(results, sizes):
        x = r["reset"]
        t.add_row(s, str(x["n"]), _fmt_ms(r["first_reset_ms"]), _fmt_ms(x["p50_ms"]), _fmt_ms(x["p99_ms"]),
                  _fmt_ms(x["mean_ms"]), _fmt_ms(x["max_ms"]), _fmt_ms(r["reset_worst_d_p50_ms"]))
    console.print(t)

    t = Table(title="3a. BM25 index (one-off per process/catalog) and first searches")
    for col in ("size", "index build", "peak RSS after index", "1st search (JIT)", "1st filtered search",
                "2nd search"):
        t.add_column(col, justify="right")
    for r, s in zip(results, sizes):
        if "index_build_s" in r:
            t.add_row(s, f"{r['index_build_s']:.1f} s", f"{r['peak_rss_after_index_mib']:.0f} MiB",
                      _fmt_ms(r["first_search_ms"]), _fmt_ms(r["first_filtered_search_ms"]),
                      _fmt_ms(r["second_search_ms"]))
        else:
            t.add_row(s, "skipped", "—", "—", "—", "—")
    console.print(t)

    tools = ["cart_set_quantity", "cart_add", "catalog_get_product", "catalog_get_variants", "user_get_visit_history",
             "catalog_search", "catalog_search+filters"]
    t = Table(title="3b. step() latency per tool, single-call turns at d=15 (p50 / p99, n)")
    t.add_column("tool")
    for s in sizes:
        t.add_column(s, justify="right")
    for tool in tools:
        row = [tool]
        for r in results:
            x = r["steps"].get(tool)
            row.append("skipped" if x is None else f"{_fmt_ms(x['p50_ms'])} / {_fmt_ms(x['p99_ms'])} (n={x['n']})")
        t.add_row(*row)
    console.print(t)

    t = Table(title="4. Agent episodes per second (single process, CART)")
    t.add_column("agent / d")
    for s in sizes:
        t.add_column(s, justify="right")
    for agent in ("oracle", "heuristic"):
        for d in (0, 8):
            row = [f"{agent} d={d}"]
            for r in results:
                match = [a for a in r.get("agents", []) if a["agent"] == agent and a["d"] == d]
                if not match:
                    row.append("skipped")
                else:
                    a = match[0]
                    row.append(f"{a['eps_per_s']:.1f} ep/s ({a['turns_per_ep']:.1f} turns, "
                               f"{a['correct']}/{a['episodes']} correct)")
            t.add_row(*row)
    console.print(t)

    t = Table(title="5. Three-step episodes/s: reset + 2 no-op cart_set_quantity + answer(done=True), d=0..15")
    for col in ("size", "episodes", "seconds", "episodes/s", "ms/episode"):
        t.add_column(col, justify="right")
    for r, s in zip(results, sizes):
        x = r["three_step"]
        t.add_row(s, str(x["episodes"]), f"{x['seconds']:.2f}", f"{x['eps_per_s']:.0f}",
                  f"{1e3 / x['eps_per_s']:.2f}")
    console.print(t)

    skipped = [(r["size"], m) for r in results for m in r["skipped"]]
    if skipped:
        console.print("[bold yellow]Skipped:[/]")
        for size, m in skipped:
            console.print(f"  • {size:,}: {m}")


# ------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,100000,1000000,2000000", help="comma-separated catalog sizes")
    p.add_argument("--episodes", type=int, default=200, help="oracle/heuristic episodes per (agent, d)")
    p.add_argument("--quick", action="store_true", help="few samples everywhere (smoke run)")
    p.add_argument("--skip-search-above", type=int, default=10**12,
                   help="skip index build, search steps and agent episodes for sizes above this")
    p.add_argument("--reset-seeds", type=int, default=60, help="seeds per difficulty for reset timing")
    p.add_argument("--three-step-episodes", type=int, default=2000)
    p.add_argument("--step-episodes", type=int, default=150, help="episodes driven for per-tool step timing")
    p.add_argument("--agent-time-budget", type=float, default=10.0,
                   help="max seconds per (agent, d) cell; fewer than --episodes may run")
    p.add_argument("--json", help="also write raw results to this file")
    p.add_argument("--in-process", action="store_true", help="run all sizes in this process (peaks then cumulative)")
    p.add_argument("--profile", choices=("generate", "reset", "three_step", "search", "index"),
                   help="cProfile one phase at each size instead of benchmarking")
    p.add_argument("--profile-top", type=int, default=25)
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]

    if args.worker is not None:
        print("@@RESULT@@" + json.dumps(run_size(args.worker, args)))
        return 0
    if args.profile:
        for n in sizes:
            print(f"===== profile {args.profile} at {n:,} =====")
            profile_phase(n, args.profile, args)
        return 0

    from rich.console import Console
    console = Console(width=int(os.environ.get("BENCH_WIDTH", "170")))
    results = []
    for n in sizes:
        console.print(f"[bold]running size {n:,}[/] …")
        t0 = time.perf_counter()
        if args.in_process:
            res = run_size(n, args)
        else:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(n), *(argv if argv is not None else sys.argv[1:])]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")]
            if proc.returncode != 0 or not lines:
                console.print(f"[red]size {n:,} failed (rc={proc.returncode})[/]\n{proc.stderr[-3000:]}")
                continue
            res = json.loads(lines[-1][len("@@RESULT@@"):])
        console.print(f"  done in {time.perf_counter() - t0:.0f} s")
        results.append(res)
    if not results:
        return 1
    render(results, console)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"argv": sys.argv, "results": results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
