"""Consistency and template scan of RETURN, STATUS and POLICY over many generated episodes.

For every episode (d = 0..15, seeds 0..N/16) it checks, on a fresh reset before playing:

* RETURN: ``return_check_eligibility`` on the hidden target gives the goal's verdict (one rule engine);
* RETURN, STATUS: every order id the customer says, and the order they mean, is in ``order_list``;
  STATUS: the listed status and ETA are the goal's;
* POLICY: the expected answer equals an independent recomputation from the rule tables
  (``tests/test_policy_env.py::independent_answer``, which does not call the engine);
* every date in the account lies on the simulated clock's side (no order after ``world.today``);

then plays the oracle and scans every message the customer sends for unfilled slots
(``{``, ``}``, ``None``, ``nan``) and checks r_task = 1.

Usage: ``python scripts/scan_account_envs.py [EPISODES_PER_ENV] [CATALOG_SIZE]`` (default 10000, 3000).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ecomrlve.catalog.search import SearchEngine
from ecomrlve.catalog.synthetic import generate_synthetic_catalog
from ecomrlve.episode import EcomEnv
from ecomrlve.tools import TOOLS
from ecomrlve.world.account import ORDER_ID

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_policy_env import independent_answer

UNFILLED = re.compile(r"[{}]|\bNone\b|\bnan\b")


def run_tool(env: EcomEnv, name: str, **arguments: Any) -> dict[str, Any]:
    tool = TOOLS[name]
    return tool.run(env.audit().context, tool.validate(arguments))


def check(env: EcomEnv, env_id: str, counts: Counter[str]) -> None:
    goal, world = env.audit().problem.goal, env.audit().world
    opening = env.audit().problem.opening
    for order in world.account.orders:
        assert order.placed <= world.today, "order placed after the simulated today"
        assert order.delivered is None or order.delivered <= world.today
    if env_id in ("RETURN", "STATUS"):
        listed = {o["order_id"]: o for o in run_tool(env, "order_list")["orders"]}
        assert goal.target.order_id in listed and set(re.findall(ORDER_ID, opening)) <= set(listed)
        counts["mentioned_orders_listed"] += 1
    if env_id == "RETURN":
        verdict = run_tool(env, "return_check_eligibility", order_id=goal.target.order_id, line_id=goal.target.line_id)
        assert verdict["eligible"] == goal.eligible and verdict["code"] == goal.verdict_code
        counts["tool_verdict_equals_goal"] += 1
        counts[f"eligible={goal.eligible}"] += 1
    elif env_id == "STATUS":
        row = listed[goal.target.order_id]
        assert row["status"] == goal.status and row.get("eta") == (goal.eta.isoformat() if goal.eta else None)
        counts["status_and_eta_listed"] += 1
    else:
        expected = goal.expected_yes_no if goal.expected_yes_no is not None else goal.expected_number
        assert independent_answer(goal.kind, goal.situation, env.audit().world.policy) == expected
        counts["policy_answer_recomputed"] += 1


def scan(env_id: str, episodes: int, env: EcomEnv) -> dict[str, float]:
    counts: Counter[str] = Counter()
    seeds = max(1, episodes // 16)
    started = time.perf_counter()
    for d in range(16):
        for seed in range(seeds):
            env.reset(env_id=env_id, difficulty=d, seed=seed)
            check(env, env_id, counts)
            observation = env.reset(env_id=env_id, difficulty=d, seed=seed)
            agent = env.audit().oracle()
            texts = [observation.messages[-1]["content"]]
            while not observation.done:
                observation = env.step(agent.act(observation))
                texts += [m["content"] for m in observation.messages if m["role"] == "user"]
                texts += [json.loads(m["content"]).get("user_reply", "") for m in observation.messages
                          if m["role"] == "tool" and m["name"] == "ask_user"]
            unfilled = [t for t in texts if UNFILLED.search(t)]
            assert not unfilled, (env_id, d, seed, unfilled)
            counts["user_messages_scanned"] += len(texts)
            reward = observation.info["reward"]
            counts["oracle_full_marks"] += reward["r_task"] == 1.0 and reward["is_correct"] and reward["r_hall"] == 0
            counts["episodes"] += 1
    return {**counts, "seconds": round(time.perf_counter() - started, 1)}


def main() -> None:
    episodes = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    catalog = generate_synthetic_catalog(size, 0)
    env = EcomEnv(("RETURN", "STATUS", "POLICY"), catalog=catalog, search=SearchEngine(catalog))
    print(json.dumps({env_id: scan(env_id, episodes, env) for env_id in ("RETURN", "STATUS", "POLICY")}, indent=1))


if __name__ == "__main__":
    main()
