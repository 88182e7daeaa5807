"""Serve a local transformers checkpoint over the OpenAI chat-completions API, on CPU, for `ecomrlve eval`.

For machines without vLLM (no GPU): enough of the protocol for `ecomrlve eval --agent openai
--mode native`. Like vLLM with a Hermes tool parser, the request's ``tools`` are rendered by the
checkpoint's chat template and ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks
in the completion come back as ``tool_calls``; text that does not parse stays in ``content``.
One request at a time; the key/value cache of the previous request is reused for the longest
common token prefix (a multi-turn episode re-sends its whole history every turn).

    python scripts/serve_checkpoint.py runs/sft-cold-start/models/sft --name sft --port 8766
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def parse_tool_calls(text: str, prefix: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The completion's content and tool calls; a block that is not a ``{"name", "arguments"}`` object stays text."""
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    position = 0
    for match in _TOOL_CALL.finditer(text):
        try:
            call = json.loads(match.group(1))
        except ValueError:
            continue
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            continue
        kept.append(text[position:match.start()])
        position = match.end()
        arguments = call.get("arguments", {})
        calls.append({"id": f"{prefix}_{len(calls)}", "type": "function",
                      "function": {"name": call["name"],
                                   "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}})
    content = ("".join(kept) + text[position:]).strip()
    return content or None, calls


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool-call arguments as JSON objects, which is how chat templates (and our SFT export) render them."""
    out = []
    for message in messages:
        calls = message.get("tool_calls")
        if calls:
            message = message | {"tool_calls": [
                call | {"function": call["function"] | {"arguments": _decoded(call["function"].get("arguments"))}}
                for call in calls]}
        out.append(message)
    return out


def _decoded(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


class Generator:
    """Greedy or seeded sampling with one prefix-reusing key/value cache."""

    def __init__(self, path: str, threads: int | None) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path).eval()
        self.cache: Any = None
        self.cached: list[int] = []
        self.lock = threading.Lock()

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, max_tokens: int,
                 temperature: float, top_p: float, seed: int | None) -> tuple[str, int, int, str]:
        from transformers import DynamicCache

        # apply_chat_template takes list[dict | Callable]; a list is invariant, so the schemas go in a list of that type.
        chat_tools: list[dict[str, Any] | Callable[..., Any]] | None = list(tools) if tools else None
        ids = self.tokenizer.apply_chat_template(template_messages(messages), tools=chat_tools,
                                                 add_generation_prompt=True, tokenize=True, return_dict=False)
        with self.lock, self.torch.no_grad():
            common = 0
            for a, b in zip(self.cached, ids[:-1]):  # keep at least one prompt token to feed
                if a != b:
                    break
                common += 1
            if self.cache is None or common == 0:
                self.cache = DynamicCache(config=self.model.config)
            elif common < self.cache.get_seq_length():
                self.cache.crop(common - self.cache.get_seq_length())
            sampling: dict[str, Any] = {"do_sample": False}
            if temperature > 0:
                if seed is not None:
                    self.torch.manual_seed(seed)
                sampling = {"do_sample": True, "temperature": temperature, "top_p": top_p}
            out = self.model.generate(self.torch.tensor([ids]), attention_mask=self.torch.ones(1, len(ids),
                                      dtype=self.torch.long), cache=self.cache, max_new_tokens=max_tokens,
                                      pad_token_id=self.tokenizer.pad_token_id, **sampling)
            sequence = out[0].tolist()
            self.cached = sequence[:self.cache.get_seq_length()]
        new = sequence[len(ids):]
        finish = "length" if len(new) >= max_tokens and new[-1] != self.tokenizer.eos_token_id else "stop"
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        assert isinstance(text, str)  # one sequence decodes to one string (a batch to a list)
        return text, len(ids), len(new), finish


def create_app(generator: Generator, name: str) -> Any:
    from fastapi import FastAPI, HTTPException

    app = FastAPI()
    served = {"id": name, "object": "model", "created": 0, "owned_by": "local"}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [served]}

    @app.post("/v1/chat/completions")
    def chat(body: dict[str, Any]) -> dict[str, Any]:
        if body.get("model") != name:
            raise HTTPException(404, f"model {body.get('model')!r} is not served here; this serves {name!r}")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise HTTPException(400, "messages must be a non-empty list")
        temperature = body.get("temperature")
        text, prompt_tokens, completion_tokens, finish = generator.complete(
            messages, body.get("tools"), int(body.get("max_tokens") or body.get("max_completion_tokens") or 256),
            1.0 if temperature is None else float(temperature), float(body.get("top_p") or 1.0), body.get("seed"))
        created = int(time.time())
        content, calls = parse_tool_calls(text, f"call_{created}")
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
            finish = "tool_calls"
        return {"id": f"chatcmpl-{created}", "object": "chat.completion", "created": created, "model": name,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    return app


@contextmanager
def serving(checkpoint: str | Path, name: str, *, threads: int = 1, timeout: float = 300.0) -> Iterator[str]:
    """Serve ``checkpoint`` as ``name`` from a subprocess on a free loopback port; yields its base URL
    once it answers (loading a model takes a while) and stops it on leaving the block."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    server = subprocess.Popen([sys.executable, __file__, str(checkpoint), "--name", name, "--port", str(port),
                               "--threads", str(threads)])
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{base_url}/models", timeout=2).close()
                break
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError(f"the checkpoint server exited with status {server.returncode}") from None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{base_url} did not answer within {timeout:.0f} s") from None
                time.sleep(0.5)
        yield base_url
    finally:
        server.terminate()
        server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a directory with a causal LM and its tokenizer (save_pretrained)")
    parser.add_argument("--name", default="local", help="the served model name")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    if not (Path(args.checkpoint) / "config.json").is_file():
        parser.error(f"{args.checkpoint}: not a checkpoint directory (no config.json; save it with save_pretrained)")
    import uvicorn

    uvicorn.run(create_app(Generator(args.checkpoint, args.threads), args.name), host=args.host, port=args.port,
                log_level="warning")


if __name__ == "__main__":
    main()
