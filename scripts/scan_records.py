"""Scan episode records (JSONL from ``ecomrlve run --out`` or ``ecomrlve eval``) for template slots
and failures, per environment.

Every user message is checked for unfilled template slots (``{``, ``}``, ``None``, ``nan``);
JOURNEY records also report their intents and interruptions. Used for the 10,000-journey check
in BENCHMARKS.md::

    ecomrlve run --env JOURNEY --agent oracle --difficulty 0-15 --episodes 625 --seed 1 \\
        --override p_switch=0.6 --out journeys.jsonl
    python scripts/scan_records.py journeys.jsonl

Exit code 1 if any message has a slot.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

SLOT = re.compile(r"\{|\}|\bNone\b|\bnan\b")


def main(paths: list[str]) -> int:
    episodes, correct, messages, slotted, intents, interrupted = (Counter[str]() for _ in range(6))
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            env_id = record["env_id"]
            episodes[env_id] += 1
            correct[env_id] += bool(record["reward"] and record["reward"]["is_correct"])
            for message in record["messages"]:
                if message["role"] == "user":
                    messages[env_id] += 1
                    if SLOT.search(message["content"]):
                        slotted[env_id] += 1
                        print(f"slot in {env_id} d={record['difficulty']} seed={record['seed']}: {message['content'][:200]}")
            for intent in record["goal"].get("intents", ()):
                intents[env_id] += 1
                interrupted[env_id] += intent["interrupted"]
    for env_id in sorted(episodes):
        extra = f", {intents[env_id]} intents, {interrupted[env_id]} interrupted" if intents[env_id] else ""
        print(f"{env_id}: {episodes[env_id]} episodes, {correct[env_id]} correct, {messages[env_id]} user messages, "
              f"{slotted[env_id]} with a slot{extra}")
    return 1 if sum(slotted.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
