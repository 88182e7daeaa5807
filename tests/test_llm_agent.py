"""The OpenAI-compatible LLM agent, driven through the real ``openai`` client against a local
chat-completions server (tests/chat_server.py): native and text tool calling, malformed output,
429s, timeouts, a wrong model name, a dead endpoint, and resuming after the endpoint failed.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from chat_server import (
    COMPLETION_TOKENS,
    MODEL,
    ChatServer,
    Delay,
    HeuristicPolicy,
    Status,
    history_errors,
    prompt_tokens,
)

from ecomrlve.agents.llm import ChatEndpoint, EndpointError, LLMAgent, LLMConfig, SamplingParams
from ecomrlve.episode import EcomEnv
from ecomrlve.evaluation import EvalSpec, Evaluation
from ecomrlve.evaluation.run import read_records
from ecomrlve.runner import agent_factory, replay
from ecomrlve.session import EpisodeRecord

pytest.importorskip("openai")


@pytest.fixture
def serve():
    servers: list[ChatServer] = []

    def start(policy: Any, **kwargs: Any) -> ChatServer:
        servers.append(ChatServer(policy, **kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def evaluate(out: Path, catalog, search, *, agent: str, config: LLMConfig | None = None,
             difficulties: tuple[int, ...] = (0, 1), tasks: int = 2, trials: int = 1,
             concurrency: int = 4) -> Evaluation:
    spec = EvalSpec(("CART",), difficulties, tasks, trials, agent=agent, catalog=catalog.name,
                    llm=config.describe() if config else None)
    evaluation = Evaluation(spec, out, catalog=catalog, search=search, secret="llm-test")  # same episodes in every run
    endpoint = ChatEndpoint(config) if config else None

    async def main() -> None:
        try:
            await evaluation.run(agent_factory(agent, endpoint), concurrency=concurrency)
        finally:
            if endpoint is not None:
                await endpoint.aclose()

    asyncio.run(main())
    return evaluation


def by_episode(records: list[EpisodeRecord]) -> dict[tuple[str, int], EpisodeRecord]:
    return {(r.run["slot"], r.run["trial"]): r for r in records}


def conversation(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """Identify an episode from a request or record: its system prompt (without tools) and opening."""
    return messages[0]["content"].split("\n\n# Tools")[0], messages[1]["content"]


@pytest.fixture(scope="module")
def heuristic_run(tmp_path_factory, catalog, search) -> Evaluation:
    return evaluate(tmp_path_factory.mktemp("heuristic"), catalog, search, agent="heuristic", trials=2)


def test_native_tool_calling_plays_like_the_agent_behind_the_endpoint(tmp_path, catalog, search, serve, heuristic_run):
    server = serve(HeuristicPolicy(), strict=True)
    config = LLMConfig(MODEL, server.base_url, sampling=SamplingParams(temperature=0.7, max_tokens=256, seed=11))
    run = evaluate(tmp_path, catalog, search, agent="openai", config=config, trials=2)

    expected = by_episode(heuristic_run.records)
    got = by_episode(run.records)
    assert got.keys() == expected.keys() and len(got) == 8
    for key, record in got.items():
        assert record.reward == expected[key].reward
        assert record.messages == expected[key].messages  # same tool calls, results and user replies

    records_by_conversation = {conversation(r.messages): r for r in run.records}
    seeds: dict[tuple[str, str], set[int]] = defaultdict(set)
    for body in server.requests:
        record = records_by_conversation[conversation(body["messages"])]
        assert {t["function"]["name"] for t in body["tools"]} == set(record.tools)
        assert body["temperature"] == 0.7 and body["max_tokens"] == 256
        assert all(m["role"] != "tool" or set(m) == {"role", "tool_call_id", "content"} for m in body["messages"])
        seeds[conversation(body["messages"])].add(body["seed"])
    assert all(len(s) == 2 for s in seeds.values())  # each trial samples with its own seed

    for record in run.records:  # token usage, recomputed from the transcript
        turns = [i for i, m in enumerate(record.messages) if m["role"] == "assistant"]
        assert record.run["usage"] == {"requests": len(turns), "completion_tokens": COMPLETION_TOKENS * len(turns),
                                       "prompt_tokens": sum(prompt_tokens(record.messages[:i]) for i in turns)}
        assert record.run["model"] == MODEL


def test_text_mode_sends_tools_in_the_prompt_and_the_environment_parses_tool_call_blocks(
        tmp_path, catalog, search, serve, heuristic_run):
    server = serve(HeuristicPolicy(), strict=True)
    run = evaluate(tmp_path, catalog, search, agent="openai", config=LLMConfig(MODEL, server.base_url, mode="text"))

    expected = by_episode(heuristic_run.records)
    for key, record in by_episode(run.records).items():
        assert record.reward == expected[key].reward
        assert all(isinstance(action, str) for action in record.actions)
        assert any("<tool_call>" in action for action in record.actions)
    for body in server.requests:
        assert "tools" not in body
        system = body["messages"][0]
        assert system["role"] == "system" and "<tools>" in system["content"] and '"catalog_search"' in system["content"]
    assert any(m["content"].startswith("<tool_response>") for b in server.requests for m in b["messages"][2:]
               if m["role"] == "user")


def test_text_mode_plays_native_tool_calls_as_native_mode_does(tmp_path, catalog, search, serve, heuristic_run):
    """A server whose template or parser answers a text-mode request with native ``tool_calls`` and
    ``content: null``: the calls are the action (never an empty turn), their results come back as
    ``tool`` messages, and the episodes are the native ones, turn for turn."""
    server = serve(HeuristicPolicy(always_native=True), strict=True)
    run = evaluate(tmp_path, catalog, search, agent="openai", config=LLMConfig(MODEL, server.base_url, mode="text"))

    expected = by_episode(heuristic_run.records)
    assert len(run.records) == 4
    for key, record in by_episode(run.records).items():
        assert record.reward == expected[key].reward and record.reward.termination == "answered"
        assert record.messages == expected[key].messages
        assert "" not in record.actions
        assert any(isinstance(a, dict) and a.get("tool_calls") and a["content"] is None for a in record.actions)
    for body in server.requests:
        assert "tools" not in body and "<tools>" in body["messages"][0]["content"]  # still text mode
    assert any(m["role"] == "tool" for body in server.requests for m in body["messages"])


class NativeOnOddTurns(HeuristicPolicy):
    """Native ``tool_calls`` on every other turn, ``<tool_call>`` text on the rest (a model that switches)."""

    def answers_natively(self, body: dict[str, Any]) -> bool:
        return sum(m["role"] == "assistant" for m in body["messages"]) % 2 == 1


def test_text_mode_keeps_a_valid_history_when_native_and_text_turns_mix(tmp_path, catalog, search, serve,
                                                                       heuristic_run):
    server = serve(NativeOnOddTurns(), strict=True)  # a history strict servers refuse would be HTTP 400 here
    run = evaluate(tmp_path, catalog, search, agent="openai", config=LLMConfig(MODEL, server.base_url, mode="text"))
    expected = by_episode(heuristic_run.records)
    for key, record in by_episode(run.records).items():
        assert record.reward == expected[key].reward
    actions = [action for record in run.records for action in record.actions]
    assert any(isinstance(a, dict) and a.get("tool_calls") for a in actions)
    assert any(isinstance(a, str) and "<tool_call>" in a for a in actions)
    requests = server.requests
    assert any(m["role"] == "tool" for b in requests for m in b["messages"])
    assert any(m["role"] == "user" and m["content"].startswith("<tool_response>") for b in requests for m in b["messages"])
    assert all(history_errors(body["messages"]) == [] for body in requests)


def test_the_stand_in_server_refuses_what_strict_servers_refuse() -> None:
    system, user = {"role": "system", "content": "s"}, {"role": "user", "content": "hi"}
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    assert history_errors([system, user, call, {"role": "tool", "tool_call_id": "c1", "content": "r"}]) == []
    empty = {"role": "assistant", "content": ""}
    assert history_errors([system, user, empty, empty, user]) == [
        "messages[2]: an assistant message without tool_calls must have content",
        "messages[3]: two assistant messages in a row",
        "messages[3]: an assistant message without tool_calls must have content"]
    assert history_errors([system, user, call, {"role": "user", "content": "<tool_response>"}]) == [
        "messages[3]: tool_calls ['c1'] of the assistant message before are not answered"]


def test_malformed_tool_call_json_ends_the_episode_with_minus_one_and_replays(tmp_path, catalog, search, serve):
    raw = '{"query": "running shoes"'
    server = serve(lambda body: {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_x", "type": "function", "function": {"name": "catalog_search", "arguments": raw}}]})
    run = evaluate(tmp_path, catalog, search, agent="openai", config=LLMConfig(MODEL, server.base_url),
                   difficulties=(0,), tasks=1)
    (record,) = run.records
    assert record.reward.r_total == -1 and not record.reward.is_correct
    assert record.reward.termination == "invalid_output" and record.reward.invalid_reason.startswith("invalid_json")
    assert record.actions[0]["tool_calls"][0]["function"]["arguments"] == raw  # stored exactly as sampled
    again = replay(EcomEnv("CART", catalog=catalog, search=search), read_records(run.episodes_path)[0])
    assert again.to_json() == record.to_json()


class FirstFails:
    """Fail the first ``times`` requests with ``failure``, then delegate (the failed ones never reach it)."""

    def __init__(self, failure: Any, times: int, then: Any) -> None:
        self.failure, self.left, self.then = failure, times, then

    def __call__(self, body: dict[str, Any]) -> Any:
        if self.left > 0:
            self.left -= 1
            return self.failure
        return self.then(body)


def test_rate_limits_and_timeouts_are_retried(tmp_path, catalog, search, serve, heuristic_run):
    rate_limited = serve(FirstFails(Status(429, "slow down", {"retry-after-ms": "10"}), 2, HeuristicPolicy()))
    too_slow = serve(FirstFails(Delay(2.0, {"role": "assistant", "content": "late"}), 1, HeuristicPolicy()))
    expected = by_episode(heuristic_run.records)
    for name, server in (("429", rate_limited), ("timeout", too_slow)):
        config = LLMConfig(MODEL, server.base_url, timeout=0.5, max_retries=3)
        run = evaluate(tmp_path / name, catalog, search, agent="openai", config=config, difficulties=(0,), tasks=1)
        (record,) = run.records
        assert record.reward == expected[(record.run["slot"], 0)].reward
        retried = 2 if name == "429" else 1
        assert len(server.requests) == len(record.actions) + retried
        assert record.run["usage"]["requests"] == len(record.actions)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_wrong_model_and_dead_endpoint_give_clear_errors(tmp_path, catalog, search, serve):
    server = serve(HeuristicPolicy())
    with pytest.raises(EndpointError, match=r"model 'qwen-typo' is not served at .*; it serves: test-model"):
        asyncio.run(ChatEndpoint(LLMConfig("qwen-typo", server.base_url)).check())
    with pytest.raises(EndpointError, match=r"not found \(wrong model name or base URL\?\): The model `qwen-typo` does not"):
        evaluate(tmp_path / "typo", catalog, search, agent="openai", config=LLMConfig("qwen-typo", server.base_url))
    assert read_records(tmp_path / "typo" / "episodes.jsonl") == []

    overflow = serve(lambda body: Status(400, "This model's maximum context length is 8192 tokens."))
    with pytest.raises(EndpointError, match=r"HTTP 400: This model's maximum .* outgrew the model's context window"):
        evaluate(tmp_path / "long", catalog, search, agent="openai", config=LLMConfig(MODEL, overflow.base_url))

    dead = LLMConfig(MODEL, f"http://127.0.0.1:{free_port()}/v1", max_retries=0)
    with pytest.raises(EndpointError, match=r"cannot reach http://127\.0\.0\.1:\d+/v1 after 0 retries .* is the server up\?"):
        asyncio.run(ChatEndpoint(dead).check())


class FailsAfter:
    """Serve ``requests`` requests, then answer HTTP 500 forever (the server broke mid-run)."""

    def __init__(self, requests: int) -> None:
        self.left = requests
        self.policy = HeuristicPolicy()

    def __call__(self, body: dict[str, Any]) -> Any:
        self.left -= 1
        return self.policy(body) if self.left >= 0 else Status(500, "CUDA out of memory")


def test_a_failing_endpoint_loses_no_finished_episode_and_the_run_resumes(tmp_path, catalog, search, serve,
                                                                          heuristic_run):
    broken = serve(FailsAfter(12))
    config = LLMConfig(MODEL, broken.base_url, max_retries=1)
    with pytest.raises(EndpointError, match="answered HTTP 500: CUDA out of memory"):
        evaluate(tmp_path, catalog, search, agent="openai", config=config, trials=2, concurrency=2)
    finished = read_records(tmp_path / "episodes.jsonl")
    assert 0 < len(finished) < 8
    before = (tmp_path / "episodes.jsonl").read_text()

    healthy = serve(HeuristicPolicy())
    run = evaluate(tmp_path, catalog, search, agent="openai", config=LLMConfig(MODEL, healthy.base_url, max_retries=1),
                   trials=2, concurrency=2)
    after = (tmp_path / "episodes.jsonl").read_text()
    assert after.startswith(before)  # finished episodes kept, byte for byte
    records = read_records(tmp_path / "episodes.jsonl")
    assert len(records) == 8 and by_episode(records).keys() == by_episode(heuristic_run.records).keys()
    assert [r.run["completed"] for r in records] == list(range(8))
    replayed = {conversation(b["messages"]) for b in healthy.requests}
    trials_finished: dict[str, int] = defaultdict(int)
    for record in finished:
        trials_finished[record.run["slot"]] += 1
    done_tasks = [r for r in finished if trials_finished[r.run["slot"]] == 2]
    assert all(conversation(r.messages) not in replayed for r in done_tasks)  # not played again
    assert len(healthy.requests) == sum(len(r.actions) for r in records[len(finished):])
    assert run.complete


def test_sync_act_for_single_episodes(catalog, search, serve, heuristic_run):
    server = serve(HeuristicPolicy())
    endpoint = ChatEndpoint(LLMConfig(MODEL, server.base_url))
    expected = by_episode(heuristic_run.records)[("CART/0/0", 0)]
    env = EcomEnv("CART", catalog=catalog, search=search, secret=expected.secret)
    observation = env.reset(env_id="CART", difficulty=0, seed=expected.seed)
    agent = LLMAgent(endpoint)
    while not observation.done:
        observation = env.step(agent.act(observation))
    assert env.record.reward == expected.reward
    assert agent.usage.requests == len(env.record.actions) == len(server.requests)


@pytest.mark.slow
def test_cli_eval_against_an_endpoint_stops_cleanly_and_resumes(tmp_path, serve):
    from typer.testing import CliRunner

    from ecomrlve.cli import app

    def invoke(*args: str):
        return CliRunner().invoke(app, ["eval", "--env", "CART", "--catalog", "synthetic:3000", "--agent", "openai",
                                        "--difficulty", "0", "--tasks", "3", "--max-retries", "0", *args])

    broken = serve(FailsAfter(7))
    result = invoke("--model", MODEL, "--base-url", broken.base_url, "--out", str(tmp_path), "--concurrency", "1")
    output = " ".join(result.output.split())
    assert result.exit_code == 2 and "answered HTTP 500: CUDA out of memory" in output
    finished = len(read_records(tmp_path / "episodes.jsonl"))
    assert 0 < finished < 3 and f"{finished} of 3 episodes are finished and saved" in output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert not summary["complete"] and "incomplete run" in (tmp_path / "report.md").read_text()

    healthy = serve(HeuristicPolicy())
    typo = invoke("--model", "qwen-typo", "--base-url", healthy.base_url, "--out", str(tmp_path / "typo"))
    assert typo.exit_code == 2 and "model 'qwen-typo' is not served" in " ".join(typo.output.split())
    assert not (tmp_path / "typo" / "episodes.jsonl").exists()

    resumed = invoke("--model", MODEL, "--base-url", healthy.base_url, "--out", str(tmp_path))
    assert resumed.exit_code == 0, resumed.output
    assert f"{finished} of 3 episodes already finished" in " ".join(resumed.output.split())
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["complete"] and summary["results"]["CART"]["0"]["tokens"] > 0
    assert "test-model" in (tmp_path / "report.md").read_text()
