"""scripts/serve_checkpoint.py: a local checkpoint served over the OpenAI API, played by `ecomrlve eval`."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("trl")
pytest.importorskip("fastapi")

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("serve_checkpoint", ROOT / "scripts" / "serve_checkpoint.py")
assert _spec is not None and _spec.loader is not None
serve_checkpoint = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(serve_checkpoint)

SECRET = "serve-checkpoint"
names = st.from_regex(r"[a-z_]{1,12}", fullmatch=True)
arguments = st.dictionaries(names, st.one_of(st.integers(), st.text(max_size=8), st.booleans()), max_size=3)


@given(st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_any_completion_text_parses_without_raising(text) -> None:
    content, calls = serve_checkpoint.parse_tool_calls(text, "c")
    assert content is None or content == content.strip()
    assert all(json.loads(call["function"]["arguments"]) is not None for call in calls) or not calls


@given(st.lists(st.tuples(names, arguments), max_size=3), st.text(alphabet="abc .", max_size=20))
@settings(max_examples=100, deadline=None)
def test_tool_call_blocks_come_back_as_calls_and_the_rest_as_content(called, prose) -> None:
    blocks = "".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>" for n, a in called)
    content, calls = serve_checkpoint.parse_tool_calls(prose + blocks + "<tool_call>not json</tool_call>", "c")
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == called
    assert [c["id"] for c in calls] == [f"c_{i}" for i in range(len(called))]
    assert content == (prose + "<tool_call>not json</tool_call>").strip()


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny model taught to open held-out CART episode 0 of `eval --seed 1` with a user_get_visit_history call."""
    from transformers import AutoTokenizer
    from trl_tiny import teach, tiny_model, tiny_tokenizer

    from ecomrlve.episode import EcomEnv
    from ecomrlve.runner import episode_seed
    from ecomrlve.shopper.options import ShopperOptions

    shopper = ShopperOptions(phrasing="eval").build()  # `ecomrlve eval`'s default phrasing
    observation = EcomEnv("CART", secret=SECRET, realiser=shopper).reset(env_id="CART", difficulty=0,
                                                       seed=episode_seed(1, "CART", 0, 0))
    messages = [{"role": m["role"], "content": m["content"]} for m in observation.messages]
    path = tmp_path_factory.mktemp("checkpoint")
    trained = tiny_tokenizer([json.dumps(observation.tools), *(m["content"] for m in messages)])
    trained.save_pretrained(path)
    model = tiny_model(trained)
    model.config.save_pretrained(path)
    # Taught as the server loads it: with the model's config beside it, AutoTokenizer picks the
    # model's tokenizer class, which pre-tokenizes differently from the freshly trained one.
    tokenizer = AutoTokenizer.from_pretrained(path)
    prompt = tokenizer.apply_chat_template(messages, tools=observation.tools, add_generation_prompt=True,
                                           tokenize=True, return_dict=False)
    teach(model, list(prompt), tokenizer.encode('<tool_call>\n{"name": "user_get_visit_history", "arguments": {}}\n'
                                                '</tool_call><|im_end|>'))
    model.save_pretrained(path)
    return path, messages, observation.tools


def test_the_reused_prefix_cache_gives_the_uncached_completion(checkpoint) -> None:
    path, messages, tools = checkpoint
    longer = [*messages, {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "user_get_visit_history", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": '{"viewed": []}'}]
    warm = serve_checkpoint.Generator(str(path), threads=1)
    warm.complete(messages, tools, 12, 0.0, 1.0, None)
    reused = warm.complete(longer, tools, 12, 0.0, 1.0, None)
    assert 0 < warm.cache.get_seq_length() and warm.cached[:20] == warm.tokenizer.apply_chat_template(
        longer, tools=tools, tokenize=True, return_dict=False)[:20]
    assert reused == serve_checkpoint.Generator(str(path), threads=1).complete(longer, tools, 12, 0.0, 1.0, None)


@pytest.mark.slow
def test_ecomrlve_eval_plays_the_served_checkpoint(checkpoint, tmp_path) -> None:
    path, _, _ = checkpoint
    out = tmp_path / "eval"
    with serve_checkpoint.serving(path, "tiny", timeout=120) as base_url:
        done = subprocess.run([sys.executable, "-m", "ecomrlve.cli", "eval", "--agent", "openai", "--model", "tiny",
                               "--base-url", base_url, "--mode", "native", "--env", "CART",
                               "--difficulty", "0", "--tasks", "1", "--seed", "1", "--temperature", "0",
                               "--max-tokens", "64", "--concurrency", "1", "--out", str(out)],
                              env=os.environ | {"ECOMRLVE_SECRET": SECRET}, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    [record] = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    first = record["actions"][0]
    assert [call["function"]["name"] for call in first["tool_calls"]] == ["user_get_visit_history"]
    result = next(m for m in record["messages"] if m["role"] == "tool")
    assert "error" not in json.loads(result["content"])  # the call reached the episode and ran
    usage = record["run"]["usage"]
    assert usage["requests"] == len(record["actions"]) and usage["prompt_tokens"] > 0


def test_a_directory_without_a_checkpoint_is_one_line(tmp_path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "serve_checkpoint.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "not a checkpoint directory" in done.stderr and "Traceback" not in done.stderr
