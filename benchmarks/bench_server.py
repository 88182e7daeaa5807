#!/usr/bin/env python
"""``ecomrlve serve`` on loopback: steps/s and step latency at 1, 16, 256 and 1,000 concurrent sessions.

The server runs in its own process (``ecomrlve serve --env CART``); one asyncio client process
holds N WebSocket sessions (:class:`~ecomrlve.server.EcomEnvClient`), each playing episodes back to
back for ``--seconds``: reset, then the same agent turn (a question to the shopper, which
the simulated shopper answers) until the turn budget ends the episode. Only steps are timed
(send to reply, wall-clock). The same episodes are then played in-process on
:class:`~ecomrlve.episode.EcomEnv` for the overhead per step. Memory per open session is the
server's resident-set growth while N sessions hold a running episode, divided by N. CPU time per
step (server process; client process) is reported too: on a shared machine it is the figure the
other processes' load inflates least, and 1,000 / (server CPU ms per step) is the steps/s one
server process sustains on a core of its own::

    python benchmarks/bench_server.py --sessions 1,16,256,1000 --seconds 10 --json /tmp/server.json

``--replicas 1,2`` serves through ``serve --replicas`` on a local Ray instead (the replicas' CPU summed)::

    python benchmarks/bench_server.py --replicas 1,2 --sessions 16,1000 --seconds 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from ecomrlve.catalog import load_catalog
from ecomrlve.episode import EcomEnv
from ecomrlve.server import EcomAction, EcomEnvClient

TURN = "Could you tell me a bit more about what you are looking for?"
SRC = Path(__file__).resolve().parents[1] / "src"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (what a busy machine inflates least)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(port: int, catalog: str, max_sessions: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(SRC), os.environ.get("PYTHONPATH")))),
           "ECOMRLVE_SECRET": "bench"}
    process = subprocess.Popen([sys.executable, "-m", "ecomrlve.cli", "serve", "--env", "CART", "--catalog", catalog,
                                "--port", str(port), "--max-sessions", str(max_sessions), "--idle-timeout", "0"],
                               env=env, stdout=subprocess.DEVNULL)
    for _ in range(1200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the server did not start")


async def hold_sessions(url: str, n: int, seconds: float, pids: list[int]) -> dict[str, float]:
    """N sessions playing for ``seconds`` on the server processes ``pids``; returns steps/s, latency percentiles,
    memory per session and server CPU per step (summed over the processes)."""
    base_rss = sum(rss_kib(pid) for pid in pids)
    clients = [EcomEnvClient(url, message_timeout_s=600, connect_timeout_s=120) for _ in range(n)]
    for start in range(0, n, 64):  # connect in batches: a burst of 1,000 handshakes is not the point here
        await asyncio.gather(*(c.connect() for c in clients[start:start + 64]))
    await asyncio.gather(*(c.reset(env_id="CART", difficulty=3, seed=i) for i, c in enumerate(clients)))
    memory = (sum(rss_kib(pid) for pid in pids) - base_rss) / n
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def play(index: int, client: EcomEnvClient) -> None:
        episode = 0
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            result = await client.step(EcomAction(turn=TURN))
            latencies.append(time.perf_counter() - start)
            if result.done:
                episode += 1
                await client.reset(env_id="CART", difficulty=3, seed=index * 100_000 + episode)

    began, server_cpu, client_cpu = time.perf_counter(), sum(map(cpu_seconds, pids)), time.process_time()
    await asyncio.gather(*(play(i, c) for i, c in enumerate(clients)))
    elapsed = time.perf_counter() - began
    server_cpu, client_cpu = sum(map(cpu_seconds, pids)) - server_cpu, time.process_time() - client_cpu
    await asyncio.gather(*(c.close() for c in clients))
    return {"sessions": n, "steps": len(latencies), "steps_per_s": len(latencies) / elapsed,
            "p50_ms": 1000 * statistics.median(latencies), "p99_ms": 1000 * statistics.quantiles(latencies, n=100)[98],
            "kib_per_session": memory, "server_cpu_ms_per_step": 1000 * server_cpu / len(latencies),
            "client_cpu_ms_per_step": 1000 * client_cpu / len(latencies)}


def in_process(catalog: str, seconds: float) -> dict[str, float]:
    env = EcomEnv("CART", catalog=load_catalog(catalog), secret="bench")
    latencies: list[float] = []
    deadline, episode, cpu = time.perf_counter() + seconds, 0, time.process_time()
    env.reset(env_id="CART", difficulty=3, seed=0)
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        observation = env.step(TURN)
        latencies.append(time.perf_counter() - start)
        if observation.done:
            episode += 1
            env.reset(env_id="CART", difficulty=3, seed=episode)
    cpu = time.process_time() - cpu
    return {"steps_per_s": len(latencies) / (time.perf_counter() - deadline + seconds), "p50_ms": 1000 * statistics.median(latencies),
            "cpu_ms_per_step": 1000 * cpu / len(latencies),
            "p99_ms": 1000 * statistics.quantiles(latencies, n=100)[98]}


def on_replicas(counts: list[int], levels: list[int], catalog: str, seconds: float,
                cpus: int) -> list[dict[str, float]]:
    """Each session level on ``serve --replicas R`` for each R (one local Ray of ``cpus``; the replicas' CPU summed)."""
    import ray

    from ecomrlve.integrations.ray_server import replicated_server
    from ecomrlve.server import ServerConfig

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    config = ServerConfig(env="CART", catalog=catalog, port=0, max_sessions=max(levels) + 8, idle_timeout=None,
                          secret="bench", playground=False)
    ray.init(num_cpus=cpus, include_dashboard=False)
    rows = []
    for count in counts:
        with replicated_server(config, count, cpus_per_replica=min(1.0, cpus / count)) as (url, replicas):
            pids = ray.get([replica.__ray_call__.remote(lambda self: os.getpid()) for replica in replicas])
            for n in levels:
                row = asyncio.run(hold_sessions(url, n, seconds, pids))
                rows.append({"replicas": count, **row})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="1,16,256,1000")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--catalog", default="synthetic:3000")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--replicas", help="serve --replicas on a local Ray instead, e.g. 1,2 (a Ray of --cpus)")
    parser.add_argument("--cpus", type=int, default=os.cpu_count(), help="--replicas: the local Ray's CPUs")
    args = parser.parse_args()
    levels = [int(n) for n in args.sessions.split(",")]
    local = in_process(args.catalog, args.seconds)
    if args.replicas:
        rows = on_replicas([int(r) for r in args.replicas.split(",")], levels, args.catalog, args.seconds, args.cpus)
    else:
        port = free_port()
        server = start_server(port, args.catalog, max(levels) + 8)
        try:
            rows = [asyncio.run(hold_sessions(f"http://127.0.0.1:{port}", n, args.seconds, [server.pid]))
                    for n in levels]
        finally:
            server.terminate()
            server.wait(timeout=30)
    table = Table(title=f"ecomrlve serve on loopback (CART, {args.catalog}, {args.seconds:g} s per level)")
    if args.replicas:
        table.add_column("replicas", justify="right")
    for column in ("sessions", "steps/s", "p50 ms", "p99 ms", "p50 overhead ms", "server CPU ms/step",
                   "client CPU ms/step", "KiB/session"):
        table.add_column(column, justify="right")
    table.add_row(*(["–"] if args.replicas else []), "in-process", f"{local['steps_per_s']:.0f}",
                  f"{local['p50_ms']:.2f}", f"{local['p99_ms']:.2f}", "–", f"{local['cpu_ms_per_step']:.2f}", "–", "–")
    for row in rows:
        table.add_row(*([str(row["replicas"])] if args.replicas else []),
                      str(row["sessions"]), f"{row['steps_per_s']:.0f}", f"{row['p50_ms']:.2f}",
                      f"{row['p99_ms']:.2f}", f"{row['p50_ms'] - local['p50_ms']:.2f}",
                      f"{row['server_cpu_ms_per_step']:.2f}", f"{row['client_cpu_ms_per_step']:.2f}",
                      f"{row['kib_per_session']:.0f}")
    Console(width=160).print(table)
    if args.json:
        args.json.write_text(json.dumps({"in_process": local, "server": rows}, indent=2))


if __name__ == "__main__":
    main()
