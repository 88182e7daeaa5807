"""``ecomrlve serve`` against hostile clients: the secret never leaves the server, foreign pages and hosts are
refused, and no client (or stalled dependency) can hold up the others. Loopback only; every wait is bounded."""

from __future__ import annotations

import contextlib
import http.server
import json
import logging
import socket
import struct
import threading
import time
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

pytest.importorskip("openenv")

from server_support import running_server  # noqa: E402

from ecomrlve.actions import wire_form  # noqa: E402
from ecomrlve.episode import EcomEnv  # noqa: E402
from ecomrlve.runner import make_agent  # noqa: E402
from ecomrlve.server import EcomAction, EcomEnvClient, RemoteEnv, ServerConfig, episode_record  # noqa: E402
from ecomrlve.session import SECRET_ENV_VAR  # noqa: E402
from ecomrlve.shopper.options import ShopperOptions  # noqa: E402

SERVER_SECRET = "known-only-to-the-server"
ATTACKER_SECRET = "an-attackers-own-installation"
ATTACKED = (("CART", 3), ("STATUS", 4), ("PD", 6), ("RETURN", 5))


def test_the_oracle_bypass_attack_fails_without_the_secret(catalog, monkeypatch) -> None:
    """A client of a server started without --allow-oracle plays one episode, takes the record it is given, and
    rebuilds episodes locally from their keys to play the oracle's moves on the server as its own turns. With
    the deployment secret in the record this won every episode; without it the rebuilt episode is another one."""
    # the attacker's own secret, not the server's (fixed: a fresh random one per run let the oracle of another
    # episode win one of these four by chance now and then)
    monkeypatch.setenv(SECRET_ENV_VAR, ATTACKER_SECRET)
    with running_server(ServerConfig(env="C8", secret=SERVER_SECRET), catalog) as url, \
            EcomEnvClient(url).sync() as server:
        result = server.reset(env_id="CART", difficulty=0, seed=1)
        while not result.done:
            result = server.step(EcomAction(turn="<tool_call>{not json"))
        given = server.state().record
        assert given is not None and SERVER_SECRET not in json.dumps(given) and "secret" not in given
        record = episode_record(server.state())
        assert record.secret is None
        wins = 0
        for env_id, d in ATTACKED:
            seed = 1000 + d
            local = EcomEnv(env_id, catalog=catalog, secret=record.secret)  # all the record offers
            mine = local.reset(env_id=env_id, difficulty=d, seed=seed)
            theirs = server.reset(env_id=env_id, difficulty=d, seed=seed)
            assert mine.messages != theirs.observation.messages  # not the server's episode
            oracle = local.oracle()
            while not mine.done and not theirs.done:
                action = oracle.act(mine)
                mine = local.step(action)
                theirs = server.step(EcomAction(turn=wire_form(action)))
            while not theirs.done:  # the local episode ended first: end the server's one
                theirs = server.step(EcomAction(turn="<tool_call>{not json"))
            wins += episode_record(server.state()).reward.is_correct
        assert wins == 0


def _attempts(url: str, env_id: str) -> int:
    window = httpx.get(url + "/scheduler", timeout=10).json()["windows"][env_id]
    return int(window["attempts"])


def test_an_episode_key_whose_record_a_client_read_no_longer_feeds_the_curriculum(catalog) -> None:
    """Same-key replay: a client loses an episode, reads its goal in the record, resets the same key and wins.
    The win must not move the shared curriculum; episodes of a key started before its record was given out
    (the concurrent rollouts of a GRPO group) all count."""
    config = ServerConfig(env="CART", secret=SERVER_SECRET, allow_oracle=True)
    with running_server(config, catalog) as url, EcomEnvClient(url).sync() as first, \
            EcomEnvClient(url).sync() as second:
        for client in (first, second):  # one group: both reset the key before either record exists
            client.reset(env_id="CART", difficulty=0, seed=11)
        for client in (first, second):
            result = client.step(EcomAction(turn="<tool_call>{not json"))
            assert result.done
        assert _attempts(url, "CART") == 2
        assert episode_record(first.state()).goal  # the goal is out: the key is disclosed
        result = first.reset(env_id="CART", difficulty=0, seed=11)
        while not result.done:
            result = first.step(EcomAction(turn="", oracle=True))  # played with what the record told
        assert episode_record(first.state()).reward.is_correct
        assert _attempts(url, "CART") == 2  # the informed win is not counted
        result = first.reset(env_id="CART", difficulty=0, seed=12)  # another key counts as ever
        while not result.done:
            result = first.step(EcomAction(turn="", oracle=True))
        assert _attempts(url, "CART") == 3


def test_a_client_record_cannot_be_replayed_but_the_servers_can(catalog, tmp_path) -> None:
    """``--records DIR`` keeps the full record on the server (what replay and audits need)."""
    config = ServerConfig(env="CART", secret=SERVER_SECRET, records=tmp_path / "kept")
    with running_server(config, catalog) as url:
        remote = RemoteEnv(url)
        try:
            observation = remote.reset(env_id="CART", difficulty=1, seed=5)
            agent = make_agent("heuristic", remote, 5)
            while not observation.done:
                observation = remote.step(agent.act(observation))
            given = remote.record
        finally:
            remote.close()
    [kept_line] = (tmp_path / "kept" / "episodes.jsonl").read_text().splitlines()
    assert json.loads(kept_line)["secret"] == SERVER_SECRET
    assert given.to_json() == type(given).model_validate_json(kept_line).for_client().to_json()


@pytest.fixture(scope="module")
def cart_url(catalog):
    with running_server(ServerConfig(env="CART", secret=SERVER_SECRET), catalog) as url:
        yield url


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/ws"


def test_a_forged_host_is_refused_on_every_route_but_health(catalog) -> None:
    """DNS rebinding: a name the attacker controls, pointed at 127.0.0.1, reaches a loopback server with its
    own name in ``Host``. Only the loopback names (and ``--allow-host`` ones) are answered."""
    with running_server(ServerConfig(env="CART", secret=SERVER_SECRET), catalog) as url:
        port = int(url.rsplit(":", 1)[1])
        for path in ("/scheduler", "/playground/", "/playground/api/envs", "/schema"):
            refused = httpx.get(url + path, headers={"Host": f"evil.example:{port}"}, timeout=10)
            assert refused.status_code == 403 and refused.json()["error"] == "FORBIDDEN_ORIGIN", (path, refused.text)
            assert httpx.get(url + path, headers={"Host": f"localhost:{port}"}, timeout=10).status_code == 200
        assert httpx.get(url + "/health", headers={"Host": "evil.example"}, timeout=10).status_code == 200
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock, \
                connect(f"ws://evil.example:{port}/ws", sock=sock, open_timeout=10) as ws:
            frame = json.loads(ws.recv(timeout=10))
            assert frame["type"] == "error" and frame["data"]["code"] == "FORBIDDEN_ORIGIN"
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=10)
            assert closed.value.rcvd.code == 4403
    with running_server(ServerConfig(env="CART", secret=SERVER_SECRET, allow_hosts=("gym.internal",)), catalog) as url:
        assert httpx.get(url + "/scheduler", headers={"Host": "gym.internal"}, timeout=10).status_code == 200


def test_pages_of_another_origin_cannot_drive_the_server(catalog) -> None:
    """Cross-site WebSocket hijacking and cross-origin POSTs: a page on another local port is refused; the
    server's own pages, clients that send no Origin and ``--allow-origin`` pages are served."""
    config = ServerConfig(env="CART", secret=SERVER_SECRET, allow_origins=("http://trusted.localhost:3000",))
    with running_server(config, catalog) as url:
        foreign = "http://127.0.0.1:9"
        with connect(ws_url(url), origin=foreign, open_timeout=10) as ws:
            assert json.loads(ws.recv(timeout=10))["data"]["code"] == "FORBIDDEN_ORIGIN"
        started = httpx.post(url + "/playground/api/episodes", json={"env_id": "CART", "difficulty": 0, "seed": 1},
                             headers={"Origin": foreign}, timeout=10)
        assert started.status_code == 403
        for origin in (url, "http://trusted.localhost:3000", None):
            with connect(ws_url(url), origin=origin, open_timeout=10) as ws:
                ws.send(json.dumps({"type": "reset", "data": {"env_id": "CART", "difficulty": 0, "seed": 1}}))
                assert json.loads(ws.recv(timeout=10))["type"] == "observation"
        own = httpx.post(url + "/playground/api/episodes", json={"env_id": "CART", "difficulty": 0, "seed": 1},
                         headers={"Origin": url}, timeout=10)
        assert own.status_code == 200


def test_a_runs_file_over_the_message_limit_opens_under_serve(catalog, tmp_path) -> None:
    """The 1 MiB session message limit is not the run viewer's: a real 1.8 MiB runs file opens."""
    config = ServerConfig(env="CART", secret=SERVER_SECRET, records=tmp_path)
    with running_server(config, catalog) as url:
        remote = RemoteEnv(url)
        try:
            for seed in range(3):
                observation = remote.reset(env_id="CART", difficulty=2, seed=seed)
                agent = make_agent("heuristic", remote, seed)
                while not observation.done:
                    observation = remote.step(agent.act(observation))
        finally:
            remote.close()
        lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
        body = "\n".join(lines * (int(1.8 * 2**20) // sum(map(len, lines)) + 1)) + "\n"
        assert len(body) > 1.8 * 2**20 > config.max_message_bytes
        opened = httpx.post(url + "/playground/api/runs", content=body, timeout=60,
                            headers={"content-type": "application/x-ndjson", "x-filename": "big.jsonl"})
        assert opened.status_code == 200, opened.text[:200]
        assert opened.json()["episodes"] == body.count("\n")
        assert httpx.get(url + opened.json()["url"] + "/1", timeout=30).status_code == 200


def test_half_sent_requests_time_out_and_the_connection_cap_refuses_clearly(catalog) -> None:
    """Slowloris: sockets that send half a request head hold nothing for long; beyond the connection cap a
    connection is refused at once with a 503 that says why, and /health answers again within one timeout."""
    config = ServerConfig(env="CART", secret=SERVER_SECRET, max_sessions=4, max_connections=8, header_timeout=1.0,
                          body_timeout=1.0)
    with running_server(config, catalog) as url:
        port = int(url.rsplit(":", 1)[1])
        slow = []
        try:
            for _ in range(12):  # 8 held, 4 over the cap
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
                slow.append(sock)
            answers = [sock.recv(4096) for sock in slow]  # every one gets an answer within the timeout
            refused = [a for a in answers if a.startswith(b"HTTP/1.1 503")]
            timed_out = [a for a in answers if a.startswith(b"HTTP/1.1 408")]
            assert len(refused) >= 4 and b"CONNECTION_LIMIT" in refused[0] and b"--max-connections" in refused[0]
            assert timed_out and len(refused) + len(timed_out) == len(slow)
        finally:
            for sock in slow:
                sock.close()
        assert httpx.get(url + "/health", timeout=5).status_code == 200
        # a body that stalls after its head: 408 after the body timeout, not a held request
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                         b"content-length: 100\r\n\r\n{")
            assert sock.recv(4096).startswith(b"HTTP/1.1 408")
        assert httpx.get(url + "/health", timeout=5).status_code == 200


class StalledEndpoint:
    """An OpenAI-compatible endpoint on 127.0.0.1 that lists its model, then answers every chat request with
    headers and a body dripped one space at a time for ``stall`` seconds: no read ever times out."""

    def __init__(self, model: str = "stalled-model", stall: float = 8.0) -> None:
        self.model, self.calls, self.stop = model, 0, threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                body = json.dumps({"object": "list", "data": [{"id": outer.model, "object": "model", "created": 0,
                                                               "owned_by": "tests"}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["content-length"]))
                outer.calls += 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(10**6))
                self.end_headers()
                deadline = time.monotonic() + stall
                with contextlib.suppress(OSError):
                    while time.monotonic() < deadline and not outer.stop.wait(0.2):
                        self.wfile.write(b" ")
                        self.wfile.flush()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def test_a_stalled_shopper_endpoint_holds_no_other_session_beyond_one_timeout(catalog) -> None:
    """Two sessions wait on a stalled LLM shopper (all of its request slots); a third session's reset is
    answered within one call timeout, its shopper falling back to the templates, counted."""
    pytest.importorskip("openai")
    endpoint = StalledEndpoint()
    shopper = ShopperOptions(model=endpoint.model, base_url=endpoint.base_url, concurrency=2, timeout=1.0,
                             max_retries=0)
    try:
        with running_server(ServerConfig(env="CART", secret=SERVER_SECRET, shopper=shopper), catalog) as url:
            def reset(seed: int) -> None:
                with EcomEnvClient(url, message_timeout_s=30).sync() as client:
                    client.reset(env_id="CART", difficulty=0, seed=seed)

            waiting = [threading.Thread(target=reset, args=(seed,), daemon=True) for seed in (1, 2)]
            for thread in waiting:
                thread.start()
            for _ in range(100):  # both slots taken (bounded: 10 s)
                if endpoint.calls >= 2:
                    break
                time.sleep(0.1)
            assert endpoint.calls >= 2
            with EcomEnvClient(url, message_timeout_s=30).sync() as client:
                started = time.monotonic()
                result = client.reset(env_id="CART", difficulty=0, seed=3)
                elapsed = time.monotonic() - started
            assert elapsed < 1.0 + 2.0, f"an unrelated reset waited {elapsed:.1f} s on the stalled endpoint"
            assert result.observation.info["shopper"]["fallbacks"] >= 1
            for thread in waiting:
                thread.join(timeout=30)
                assert not thread.is_alive()
    finally:
        endpoint.close()


@pytest.mark.parametrize("frame", ["[1,2]", "null", '"reset"', "42", b"\x00binary\xff", "[" * 100_000 + "]" * 100_000,
                                   '{"type": "step", "data": {"turn": ' + "[" * 50_000 + "]" * 50_000 + "}}",
                                   '{"type": "state", "data": {"x": ' + "[" * 300 + "]" * 300 + "}}"])
def test_odd_frames_get_an_error_frame_and_the_episode_lives_on(cart_url, frame) -> None:
    """A JSON value that is not an object, a binary frame, or JSON nested too deeply to read: one error frame,
    and the session and its episode are still there."""
    with connect(ws_url(cart_url), open_timeout=10) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"env_id": "CART", "difficulty": 0, "seed": 4}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"
        ws.send(json.dumps({"type": "state"}))
        before = json.loads(ws.recv(timeout=10))["data"]
        ws.send(frame)
        answer = json.loads(ws.recv(timeout=10))
        assert answer["type"] == "error" and answer["data"]["code"] == "INVALID_MESSAGE", answer
        ws.send(json.dumps({"type": "state"}))
        after = json.loads(ws.recv(timeout=10))["data"]
        assert after["episode_id"] == before["episode_id"] and not after["done"] and after["turn"] == before["turn"]
        ws.send(json.dumps({"type": "step", "data": {"turn": "Which size do you need?"}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"


def test_abrupt_disconnects_log_no_traceback(cart_url) -> None:
    """Clients that reset and vanish (TCP reset) before the reply: no "Exception in ASGI application"."""
    logged: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    handler = Collect(level=logging.ERROR)
    logging.getLogger("uvicorn.error").addHandler(handler)  # after start: uvicorn configures its loggers
    try:
        for seed in range(60):
            with connect(ws_url(cart_url), open_timeout=10) as ws:
                ws.send(json.dumps({"type": "reset", "data": {"env_id": "CART", "difficulty": 0, "seed": seed}}))
                if seed % 2:
                    ws.send(json.dumps({"type": "state"}))
                ws.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                ws.socket.close()  # a reset, not a close handshake
        time.sleep(1.0)
        assert httpx.get(cart_url + "/health", timeout=10).status_code == 200
    finally:
        logging.getLogger("uvicorn.error").removeHandler(handler)
    assert not [line for line in logged if "Exception in ASGI application" in line], logged[:3]


def test_the_mounted_playground_never_plays_a_sessions_episode(cart_url) -> None:
    """The playground shows every finished episode's goal; were its episodes keyed with the deployment secret,
    a visitor could finish one and read the goal of the session episode with the same (env, d, seed)."""
    key = {"env_id": "CART", "difficulty": 0, "seed": 9}
    page = httpx.post(cart_url + "/playground/api/episodes", json=key, timeout=30).json()
    with connect(ws_url(cart_url), open_timeout=10) as ws:
        ws.send(json.dumps({"type": "reset", "data": key}))
        session = json.loads(ws.recv(timeout=10))["data"]["observation"]["messages"]
    assert [m["content"] for m in page["messages"] if m["role"] == "user"] != \
        [m["content"] for m in session if m["role"] == "user"]
