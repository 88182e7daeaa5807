#!/usr/bin/env python
"""The reference agent asking in words nobody tuned the shopper on (issue 29 §4: an honest agent in its own words).

The reference agents ask their questions in the wording of the understanding bank's training half
(``QUESTIONS`` in ``envs/{account,cart,recommend}/reference.py``). This benchmark plays the same episodes twice:
once as shipped, once with each question replaced, per episode, by one of twelve paraphrases written blind
(``tests/data/understanding/reference_paraphrases.json``: by a writer who never saw the shopper's reading, never
used to tune it). Everything else the agent does is the same, so a success lost is a question the shopper did not
understand in other words::

    python benchmarks/bench_reference_phrasings.py --difficulties 0-15 --seeds 10 --json /tmp/phrasings.json

The paraphrase of each question is drawn per episode from ``(env, d, seed)``; the secret is ``ECOMRLVE_SECRET``
(default ``bench-phrasings``). It prints is_correct per environment and difficulty band, shipped against
paraphrased, and each episode the paraphrases lost with the questions it asked.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reference_paraphrases import PARAPHRASES, asking_with, draw  # noqa: E402

ENVS = ("CART", "PD", "SUB", "BUNDLE", "RETURN", "STATUS", "POLICY", "JOURNEY")
BANDS = ((0, 3), (4, 7), (8, 11), (12, 15))


def conversation(record: Any) -> list[str]:
    """What the agent asked and the shopper said in an episode (messages, ``ask_user`` questions and replies)."""
    said = []
    for message in record.messages:
        role = message.get("role")
        if role == "user":
            said.append(f"shopper: {message['content']}")
        elif role == "tool" and message.get("name") == "ask_user":
            said.append(f"shopper: {message['content']}")
        elif role == "assistant":
            if message.get("content"):
                said.append(f"agent: {message['content']}")
            for call in message.get("tool_calls") or ():
                if call["function"]["name"] == "ask_user":
                    said.append(f"agent (ask_user): {json.loads(call['function']['arguments']).get('question', '')}")
    return said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", default=",".join(ENVS))
    parser.add_argument("--difficulties", default="0-15", help="e.g. 0-15 or 0,6,12")
    parser.add_argument("--seeds", type=int, default=10, help="episodes per environment and difficulty")
    parser.add_argument("--paraphrases", type=Path, default=PARAPHRASES)
    parser.add_argument("--json", type=Path, help="write the numbers and the lost episodes here")
    args = parser.parse_args(argv)
    os.environ.setdefault("ECOMRLVE_SECRET", "bench-phrasings")
    from ecomrlve.episode import EcomEnv
    from ecomrlve.runner import play

    envs = args.envs.split(",")
    if "-" in args.difficulties:
        low, high = map(int, args.difficulties.split("-"))
        difficulties = list(range(low, high + 1))
    else:
        difficulties = [int(d) for d in args.difficulties.split(",")]
    paraphrases = json.loads(args.paraphrases.read_text(encoding="utf-8"))
    env = EcomEnv("C8")
    correct: dict[tuple[str, str, int], int] = defaultdict(int)
    played: dict[tuple[str, int], int] = defaultdict(int)
    lost = []
    for env_id in envs:
        for d in difficulties:
            for seed in range(args.seeds):
                shipped = play(env, "reference", env_id=env_id, difficulty=d, seed=seed)
                with asking_with(draw(paraphrases, env_id, d, seed)):
                    paraphrased = play(env, "reference", env_id=env_id, difficulty=d, seed=seed)
                played[(env_id, d)] += 1
                shipped_correct, paraphrased_correct = (bool(r.reward and r.reward.is_correct)
                                                        for r in (shipped, paraphrased))
                correct[("shipped", env_id, d)] += shipped_correct
                correct[("paraphrased", env_id, d)] += paraphrased_correct
                if shipped_correct and not paraphrased_correct:
                    lost.append({"env": env_id, "d": d, "seed": seed, "conversation": conversation(paraphrased)})
    table = Table(title="reference agent is_correct: shipped questions -> blind paraphrases")
    table.add_column("env")
    for low, high in BANDS:
        table.add_column(f"d {low}-{high}", justify="right")
    table.add_column("all", justify="right")
    rows = {}
    for env_id in envs:
        cells, total = [], {"shipped": 0, "paraphrased": 0, "played": 0}
        for low, high in BANDS:
            ds = [d for d in difficulties if low <= d <= high]
            n = sum(played[(env_id, d)] for d in ds)
            s, p = (sum(correct[(kind, env_id, d)] for d in ds) for kind in ("shipped", "paraphrased"))
            total["shipped"] += s
            total["paraphrased"] += p
            total["played"] += n
            cells.append(f"{s} -> {p} / {n}" if n else "")
        rows[env_id] = total
        table.add_row(env_id, *cells, f"{total['shipped']} -> {total['paraphrased']} / {total['played']}")
    console = Console()
    console.print(table)
    for episode in lost:
        console.print(f"lost: {episode['env']} d={episode['d']} seed={episode['seed']}", highlight=False)
        for text in episode["conversation"]:
            console.print(f"   {text}", highlight=False, markup=False, soft_wrap=True)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "lost": lost}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
