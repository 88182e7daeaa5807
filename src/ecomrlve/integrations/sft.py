"""Cold-start data: successful oracle (and heuristic) episodes as a chat-with-tools dataset for TRL's SFTTrainer.

Each row is one episode: ``messages`` (system prompt, shopper, assistant turns with ``tool_calls``,
``tool`` results, shopper replies: exactly the session's transcript, tool-call arguments as JSON
objects) and ``tools`` (the episode's OpenAI tool schemas, as JSON text, which SFTTrainer decodes),
plus ``env_id``, ``difficulty``, ``seed``, ``agent`` and ``r_total``. Episodes are split by seed:
an episode key is in ``train`` or in ``test``, never both (a split without rows is not written).
Only episodes the verifier marks correct are kept, and every row replays to the same reward
(:func:`replay_row`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ecomrlve.difficulty import Difficulty
from ecomrlve.envs import get_environment
from ecomrlve.episode import EcomEnv
from ecomrlve.errors import UserInputError
from ecomrlve.rng import derive_rng
from ecomrlve.runner import Plan, play
from ecomrlve.session import EpisodeRecord, toolset

SPLITS = ("train", "test")


def split_of(seed: int, eval_fraction: float) -> str:
    """``test`` for a fixed share of episode seeds, ``train`` for the rest (a named draw, no arithmetic)."""
    return "test" if derive_rng("sft-split", seed).random() < eval_fraction else "train"


def sft_messages(record: EpisodeRecord) -> list[dict[str, Any]]:
    """The transcript with tool-call arguments decoded (chat templates render them as JSON objects)."""
    messages = []
    for message in record.messages:
        out = {"role": message["role"], "content": message.get("content") or ""}
        if message.get("tool_calls"):
            out["tool_calls"] = [{"id": call["id"], "type": "function",
                                  "function": {"name": call["function"]["name"],
                                               "arguments": json.loads(call["function"]["arguments"])}}
                                 for call in message["tool_calls"]]
        if message["role"] == "tool":
            out |= {"tool_call_id": message["tool_call_id"], "name": message["name"]}
        messages.append(out)
    return messages


def features() -> Any:
    """The dataset's schema: tool-call arguments are free-form JSON (each tool has its own)."""
    from datasets import Features, Json, List, Value

    call = {"id": Value("string"), "type": Value("string"),
            "function": {"name": Value("string"), "arguments": Json()}}
    message = {"role": Value("string"), "content": Value("string"), "tool_calls": List(call),
               "tool_call_id": Value("string"), "name": Value("string")}
    return Features({"messages": List(message), "tools": Value("string"), "env_id": Value("string"),
                     "difficulty": Value("int32"), "seed": Value("int64"), "agent": Value("string"),
                     "r_total": Value("float64")})


def export_plan(env: EcomEnv, difficulties: Sequence[int], episodes: int, seed: int = 0) -> Plan:
    """The tasks an export plays (each once per agent)."""
    return Plan(env.env_ids, tuple(difficulties), episodes, seed)


def export_sft(env: EcomEnv, difficulties: Sequence[int], episodes: int, out: Path, *,
               agents: Sequence[str] = ("oracle",), eval_fraction: float = 0.1, seed: int = 0,
               on_episode: Callable[[], None] | None = None) -> dict[str, Any]:
    """Play ``episodes`` tasks per environment and difficulty with each agent; save the correct ones to ``out``.

    ``on_episode`` is called after each episode (a progress bar). Returns counts per split and the
    episodes dropped because the agent failed.
    """
    from datasets import Dataset, DatasetDict

    rows: dict[str, list[dict[str, Any]]] = {split: [] for split in SPLITS}
    dropped = 0
    for task in export_plan(env, difficulties, episodes, seed):
        assert task.difficulty is not None
        for agent in agents:
            record = play(env, agent, env_id=task.env_id, difficulty=task.difficulty, seed=task.seed)
            if on_episode is not None:
                on_episode()
            if record.reward is None or not record.reward.is_correct:
                dropped += 1
                continue
            _, schemas = toolset(get_environment(task.env_id), Difficulty.at(task.difficulty, env.overrides))
            rows[split_of(task.seed, eval_fraction)].append({
                "messages": sft_messages(record), "tools": schemas, "env_id": task.env_id,
                "difficulty": task.difficulty, "seed": task.seed, "agent": agent,
                "r_total": record.reward.r_total})
    schema = features()
    # a split without rows is left out (datasets cannot load an empty split back), e.g. --eval-fraction 0
    kept = {split: Dataset.from_list(rows[split], features=schema) for split in SPLITS if rows[split]}
    if not kept:
        raise UserInputError(f"export-sft: none of the {dropped} episodes was successful; nothing to write")
    DatasetDict(kept).save_to_disk(str(out))
    return {"train": len(rows["train"]), "test": len(rows["test"]), "dropped": dropped}


def replay_row(env: EcomEnv, row: dict[str, Any]) -> EpisodeRecord:
    """Play a dataset row's assistant turns again on its episode key (``env`` holds the export's secret)."""
    observation = env.reset(env_id=row["env_id"], difficulty=row["difficulty"], seed=row["seed"])
    for message in row["messages"]:
        if message["role"] != "assistant" or observation.done:
            continue
        action: dict[str, Any] = {"role": "assistant", "content": message["content"] or None}
        if message.get("tool_calls"):
            action["tool_calls"] = [{"id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"],
                                                  "arguments": json.dumps(call["function"]["arguments"])}}
                                    for call in message["tool_calls"]]
        observation = env.step(action)
    if not observation.done:
        env.session.finish("replay_unfinished")
    return env.record
