"""`ecomrlve eval` against endpoints that answer HTTP 200 with something that is not a chat completion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_server import MODEL, ChatServer, HeuristicPolicy, Raw
from typer.testing import CliRunner

from ecomrlve.cli import app

pytest.importorskip("openai")

_MESSAGE = {"role": "assistant", "content": "hi"}
BODIES = {
    "html page": (b"<html><body>502 Bad Gateway</body></html>", "text/html"),
    "not json, json content type": (b"this is not json", "application/json"),
    "empty body": (b"", "application/json"),
    "json list": (b"[1, 2, 3]", "application/json"),
    "json string": (b'"hello"', "application/json"),
    "no choices key": (b"{}", "application/json"),
    "choices not a list": (json.dumps({"choices": "many"}).encode(), "application/json"),
    "empty choices": (json.dumps({"choices": []}).encode(), "application/json"),
    "null message": (json.dumps({"choices": [{"index": 0, "message": None}]}).encode(), "application/json"),
    "content not text": (json.dumps({"choices": [{"message": {"role": "assistant", "content": 5}}]}).encode(),
                         "application/json"),
    "tool_calls not a list": (json.dumps({"choices": [{"message": {**_MESSAGE, "tool_calls": "x"}}]}).encode(),
                              "application/json"),
}


@pytest.mark.parametrize("name", list(BODIES))
def test_eval_against_a_malformed_body_ends_with_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    body, content_type = BODIES[name]
    server = ChatServer(lambda request: Raw(body, content_type))
    try:
        result = CliRunner().invoke(app, ["eval", "--env", "CART", "--catalog", "synthetic:450", "--agent", "openai",
                                          "--model", MODEL, "--base-url", server.base_url, "--difficulty", "0",
                                          "--tasks", "1", "--max-retries", "0", "--out", str(tmp_path)])
    finally:
        server.close()
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and server.base_url in lines[0], result.stderr
    assert "no episode finished, so nothing of this run was kept" in lines[0]
    assert not tmp_path.exists() or not any(tmp_path.iterdir())  # nothing left that would block a retry


@pytest.mark.slow
def test_garbled_usage_does_not_stop_an_episode(tmp_path: Path) -> None:
    """A server may omit or mistype token usage; the episode still plays and counts what it can."""
    policy = HeuristicPolicy()

    def garbled(request: dict) -> Raw:
        reply = policy(request)
        return Raw(json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": MODEL,
                               "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
                               "usage": {"prompt_tokens": "many", "completion_tokens": None}}).encode())

    server = ChatServer(garbled)
    try:
        result = CliRunner().invoke(app, ["eval", "--env", "CART", "--catalog", "synthetic:450", "--agent", "openai",
                                          "--model", MODEL, "--base-url", server.base_url, "--difficulty", "0",
                                          "--tasks", "1", "--out", str(tmp_path)])
    finally:
        server.close()
    assert result.exit_code == 0, (result.output, result.exception)
