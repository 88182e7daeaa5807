"""openenv's MCP routes on ``ecomrlve serve``: ``tools/list`` lists the session's episode's tools (MCP form),
a session without an episode and ``tools/call`` get errors that say where tools are and how calls are made,
and an MCP message changes nothing in the episode."""

from __future__ import annotations

import json

import httpx
import pytest
from websockets.sync.client import connect

pytest.importorskip("openenv")

from server_support import running_server  # noqa: E402

from ecomrlve.server import ServerConfig  # noqa: E402
from ecomrlve.server.mcp import CALLS_ARE_TURNS, NO_EPISODE  # noqa: E402


@pytest.fixture(scope="module")
def url(catalog):
    with running_server(ServerConfig(env="C8", secret="mcp-test", max_sessions=4), catalog) as base:
        yield base


def rpc(method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}, "id": 7}


def ask(ws, message: dict) -> dict:
    ws.send(json.dumps(message))
    return json.loads(ws.recv(timeout=10))


@pytest.mark.parametrize(("env_id", "difficulty"), [("CART", 1), ("SUB", 13), ("JOURNEY", 4)])
def test_tools_list_on_a_session_lists_its_episodes_tools(url, env_id: str, difficulty: int) -> None:
    with connect(url.replace("http", "ws") + "/ws") as ws:
        before = ask(ws, {"type": "mcp", "data": rpc("tools/list")})
        assert before["type"] == "mcp" and before["data"]["error"]["message"] == NO_EPISODE
        reset = ask(ws, {"type": "reset", "data": {"env_id": env_id, "difficulty": difficulty, "seed": 3}})
        offered = reset["data"]["observation"]["tools"]
        listed = ask(ws, {"type": "mcp", "data": rpc("tools/list")})["data"]["result"]["tools"]
        assert [(t["name"], t["description"], t["inputSchema"]) for t in listed] == [
            (f["function"]["name"], f["function"]["description"], f["function"]["parameters"]) for f in offered]
        called = ask(ws, {"type": "mcp", "data": rpc("tools/call", {"name": listed[0]["name"], "arguments": {}})})
        assert called["data"]["error"]["message"] == CALLS_ARE_TURNS
        state = ask(ws, {"type": "state"})["data"]
        assert (state["turn"], state["done"]) == (0, False)  # listing and a refused call played nothing


def test_http_mcp_says_it_has_no_episode(url) -> None:
    """Not openenv's "Environment does not support MCP": an /mcp session cannot reset, so it has no tools yet."""
    answer = httpx.post(f"{url}/mcp", json=rpc("tools/list"), timeout=10).json()
    assert answer["error"]["message"] == NO_EPISODE
    answer = httpx.post(f"{url}/mcp", json=rpc("tools/call", {"name": "catalog_search"}), timeout=10).json()
    assert answer["error"]["message"] == CALLS_ARE_TURNS

