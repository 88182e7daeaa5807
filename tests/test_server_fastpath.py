"""The fast path of ``/ws`` sessions: the frames openenv's generic loop would send, byte for byte, and its errors."""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

pytest.importorskip("openenv")

from fastapi import FastAPI  # noqa: E402
from openenv.core.env_server.http_server import HTTPEnvServer  # noqa: E402
from openenv.core.env_server.types import ServerMode  # noqa: E402
from server_support import running_server  # noqa: E402

from ecomrlve.playground.command import serve_in_thread  # noqa: E402
from ecomrlve.server.app import ServerConfig, build_deployment  # noqa: E402
from ecomrlve.server.environment import EcomServerEnvironment  # noqa: E402
from ecomrlve.server.fastpath import Connection  # noqa: E402
from ecomrlve.server.models import EcomAction, EcomObservation, EcomState  # noqa: E402

SECRET = "fastpath-test-secret"


def message(kind: str, data: object = None, **extra: object) -> str:
    return json.dumps({"type": kind, **({} if data is None else {"data": data}), **extra})


def reset(env_id: str, seed: int, difficulty: int) -> str:
    return message("reset", {"env_id": env_id, "seed": seed, "difficulty": difficulty})


ORACLE, MALFORMED = message("step", {"oracle": True}), message("step", {"turn": "<tool_call>{not json"})
EPISODES = [  # oracle turns to the end (tool results, the reward breakdown), then a step after done
    reset("CART", 5, 2), message("step", {"turn": "Could you tell me a bit more?"}), *[ORACLE] * 14,
    reset("STATUS", 3, 1), *[ORACLE] * 10,
    reset("PD", 7, 3), message("step", {"turn": {"content": "Hello!", "tool_calls": []}, "metadata": {"k": 1}}),
    MALFORMED, message("step", {"turn": "again"}),
]
ERRORS = [  # each answered by openenv's loop, or by the fast path with openenv's frame
    message("step", {"turn": "hi"}), "not json", message("nope"), '{"type": "reset", "data": null}',
    message("step"), message("reset", {"env_id": "NOPE"}), message("reset", {"difficulty": 99}),
    message("reset", {"bogus": 1}), message("reset", {"episode_id": "mine"}),
    message("reset", {"env_id": "CART", "seed": 1, "difficulty": 0}, extra=1),
    reset("CART", 1, 0), message("step", {"turn": "x", "unknown": 1}), message("step", {"oracle": "yes"}),
    message("step", {"oracle": 1}), reset("CART", 1, 0), message("step", {"turn": "a lone surrogate: \ud800"}),
    reset("CART", 1, 0), message("step", {"turn": '<tool_call>{"name": "catalog_search", "arguments": '
                                                   '{"query": "\ud800"}}</tool_call>'}),
    reset("CART", 1, 0), message("reset", {"self": 1}), message("step", {"turn": {"tool_calls": "nope"}}),
    message("step", {"turn": None}),
]


@pytest.fixture
def fast_replies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every frame the fast path sent (so a test can tell it ran)."""
    sent: list[str] = []
    answer = Connection.answer

    async def counted(self: Connection, text: str) -> str | None:
        reply = await answer(self, text)
        if reply is not None:
            sent.append(reply)
        return reply

    monkeypatch.setattr(Connection, "answer", counted)
    return sent


def generic_app(config: ServerConfig, catalog) -> FastAPI:
    """openenv's own session server over the same deployment, as ``build_app`` made it before the fast path."""
    app = FastAPI()
    sessions = HTTPEnvServer(functools.partial(EcomServerEnvironment, build_deployment(config, catalog)), EcomAction,
                             EcomObservation, max_concurrent_envs=4, env_name="ecomrlve", state_cls=EcomState)
    sessions.register_routes(app, mode=ServerMode.SIMULATION)
    return app


def play(url: str, script: list[str]) -> Iterator[str]:
    with connect(url.replace("http", "ws") + "/ws") as ws:
        for text in script:
            ws.send(text)
            yield str(ws.recv(timeout=30))


def named_action_error(fast: str, generic: str) -> bool:
    """Whether ``fast`` is openenv's frame ``generic`` for a refused action, but for a message naming the field."""
    ours, theirs = json.loads(fast)["data"], json.loads(generic)["data"]
    named = ours.pop("message").startswith("Invalid step action: ") and theirs.pop("message") == "Invalid message"
    return named and ours == theirs and ours["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("allow_oracle", [True, False])
@pytest.mark.parametrize("script", [EPISODES, ERRORS], ids=["episodes", "errors"])
def test_frames_are_byte_identical_to_openenvs(catalog, fast_replies, script: list[str], allow_oracle: bool) -> None:
    """Byte for byte, but for the message of a refused action: openenv's says "Invalid message", ours names it."""
    config = ServerConfig(env="C8", secret=SECRET, allow_oracle=allow_oracle, playground=False)
    with running_server(config, catalog) as fast, serve_in_thread(generic_app(config, catalog)) as generic:
        pairs = list(zip(play(fast, script), play(generic, script), strict=True))
    named = [named_action_error(ours, theirs) for ours, theirs in pairs if ours != theirs]
    assert all(named) and len(named) == (1 if script is ERRORS else 0)  # {"unknown": 1} ("yes" is a bool to pydantic)
    assert fast_replies  # the fast path answered (some of) them


def test_the_fast_path_counts_steps_and_keeps_the_guards(catalog, fast_replies) -> None:
    config = ServerConfig(env="CART", secret=SECRET, max_sessions=1, idle_timeout=0.5, max_message_bytes=4096,
                          playground=False)
    with running_server(config, catalog) as base:
        ws_url = base.replace("http", "ws") + "/ws"
        with connect(ws_url) as ws:
            assert ws.response.headers.get("Sec-WebSocket-Extensions") is None  # no per-message deflate
            ws.send(reset("CART", 2, 1))
            ws.send(message("step", {"turn": "What are you looking for?"}))
            assert [json.loads(ws.recv(timeout=10))["type"] for _ in range(2)] == ["observation"] * 2
            ws.send(message("state"))
            assert json.loads(ws.recv(timeout=10))["data"]["step_count"] == 1
            with connect(ws_url) as second:  # the one slot is taken
                assert json.loads(second.recv(timeout=10))["data"]["code"] == "CAPACITY_REACHED"
            ws.send(message("step", {"turn": "x" * 10_000}))
            assert json.loads(ws.recv(timeout=10))["data"]["code"] == "MESSAGE_TOO_LARGE"
        with connect(ws_url) as ws:
            ws.send(reset("CART", 2, 1))
            ws.recv(timeout=10)
            time.sleep(1.0)
            assert json.loads(ws.recv(timeout=10))["data"]["code"] == "IDLE_TIMEOUT"
        for _ in range(100):  # both sessions freed: the slot is open again
            if httpx.get(f"{base}/scheduler").json()["sessions"] == 0:
                break
            time.sleep(0.05)
        assert httpx.get(f"{base}/scheduler").json()["sessions"] == 0
    assert len(fast_replies) == 3


def test_the_fast_path_leans_only_on_what_the_pinned_openenv_has() -> None:
    """The installed openenv is inside the serve extra's pin (which scripts/check_openenv_versions.py, run by CI,
    checks release by release), and has the two private methods the fast path binds sessions through."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from check_openenv_versions import serve_pin

    assert serve_pin().specifier.contains(importlib.metadata.version("openenv"))
    assert inspect.iscoroutinefunction(HTTPEnvServer._create_session)
    assert list(inspect.signature(HTTPEnvServer._update_session_activity).parameters) == [
        "self", "session_id", "increment_step"]
