"""``ecomrlve serve`` on a real loopback port: episodes, errors, isolation, the shared curriculum, the client."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner
from websockets.sync.client import connect

pytest.importorskip("openenv")

from server_support import free_port, running_server  # noqa: E402

from ecomrlve.cli import app  # noqa: E402
from ecomrlve.difficulty.scheduler import SchedulerConfig  # noqa: E402
from ecomrlve.envs import resolve_env_ids  # noqa: E402
from ecomrlve.episode import EcomEnv  # noqa: E402
from ecomrlve.errors import UserInputError  # noqa: E402
from ecomrlve.runner import make_agent, play  # noqa: E402
from ecomrlve.server import EcomAction, EcomEnvClient, RemoteEnv, ServerConfig, episode_record  # noqa: E402
from ecomrlve.session import EpisodeRecord, secret_fingerprint  # noqa: E402

SECRET = "server-test-secret"
C8 = resolve_env_ids("C8")


@pytest.fixture(scope="module")
def records_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("server-records")


@pytest.fixture(scope="module")
def url(catalog, records_dir):
    config = ServerConfig(env="C8", secret=SECRET, allow_oracle=True, max_sessions=8, records=records_dir)
    with running_server(config, catalog) as base:
        yield base


def sessions(url: str) -> int:
    return int(httpx.get(f"{url}/scheduler").json()["sessions"])


def wait_for_sessions(url: str, expected: int) -> int:
    for _ in range(100):  # the server frees a session right after the socket closes
        if (n := sessions(url)) == expected:
            return n
        time.sleep(0.05)
    return sessions(url)


def error_frame(ws) -> dict:
    frame = json.loads(ws.recv(timeout=10))
    assert frame["type"] == "error", frame
    return frame["data"]


@pytest.mark.parametrize("agent", ["oracle", "heuristic", "random"])
def test_every_env_plays_over_the_websocket_with_the_in_process_record(url, catalog, agent) -> None:
    """Same keys and secret: the record through the server is byte-identical to the in-process one."""
    local = EcomEnv("C8", catalog=catalog, secret=SECRET)
    remote = RemoteEnv(url)
    try:
        for i, env_id in enumerate(C8):
            seed, d = 11 + i, i % 3
            observation = remote.reset(env_id=env_id, difficulty=d, seed=seed)
            assert observation.tools and observation.messages[0]["role"] == "system"
            player = make_agent(agent, remote, seed)
            while not observation.done:
                observation = remote.step(player.act(observation))
            # the client's record is the in-process one without the deployment secret
            expected = play(local, agent, env_id=env_id, difficulty=d, seed=seed)
            assert remote.record.to_json() == expected.for_client().to_json() and remote.record.secret is None
    finally:
        remote.close()


@pytest.mark.parametrize("turn", ["<tool_call>{not json", ["a", "list"], 42, {"tool_calls": "nope"}, None])
def test_malformed_turn_ends_the_episode_with_minus_one(url, turn) -> None:
    with EcomEnvClient(url).sync() as env:
        env.reset(env_id="CART", difficulty=0, seed=3)
        result = env.step(EcomAction(turn=turn))
        assert result.done and result.reward == -1.0
        assert result.observation.info["termination"] == "invalid_output"
        assert result.observation.info["invalid_reason"]
        state = env.state()
        assert episode_record(state).reward.r_total == -1.0


def test_the_async_client_plays_concurrent_sessions(url) -> None:
    """``async with EcomEnvClient(url)``: one session per client, many at once on one event loop."""
    async def episode(seed: int) -> tuple[float, str]:
        async with EcomEnvClient(url) as env:
            result = await env.reset(env_id="STATUS", difficulty=1, seed=seed)
            while not result.done:
                result = await env.step(EcomAction(oracle=True))
            return float(result.reward), episode_record(await env.state()).to_json()

    async def main() -> list[tuple[float, str]]:
        return list(await asyncio.gather(*(episode(seed) for seed in (1, 2, 3))))

    played = asyncio.run(main())
    assert [json.loads(record)["seed"] for _, record in played] == [1, 2, 3]
    assert all(reward == json.loads(record)["reward"]["r_total"] for reward, record in played)


def test_observations_and_state_hold_no_goal_before_done(url) -> None:
    with EcomEnvClient(url).sync() as env:
        result = env.reset(env_id="PD", difficulty=2, seed=5)
        state = env.state()
        assert state.record is None and state.env_id == "PD" and not state.done
        assert set(result.observation.info) == {"turn", "user_caused_turns", "turns_left"}
        with pytest.raises(RuntimeError, match="not over"):
            episode_record(state)


def test_protocol_errors_are_error_frames_and_the_server_lives(url) -> None:
    with connect(url.replace("http", "ws") + "/ws") as ws:
        ws.send(json.dumps({"type": "step", "data": {"turn": "hi"}}))
        assert "reset" in error_frame(ws)["message"]  # step before reset
        ws.send("not json")
        assert error_frame(ws)["code"] == "INVALID_JSON"
        ws.send(json.dumps({"type": "reset", "data": {"env_id": "NOPE"}}))
        assert "env_id" in error_frame(ws)["message"]
        ws.send(json.dumps({"type": "reset", "data": {"difficulty": 99}}))
        assert "difficulty" in error_frame(ws)["message"]
        ws.send(json.dumps({"type": "reset", "data": {"env_id": "CART", "seed": 1, "difficulty": 0}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"
        ws.send(json.dumps({"type": "step", "data": {"turn": "{", "unknown": 1}}))
        assert error_frame(ws)["code"] == "VALIDATION_ERROR"
    assert httpx.get(f"{url}/health").status_code == 200


def test_a_generic_client_is_told_which_action_field_is_wrong_and_reads_the_record_as_an_object(url, catalog) -> None:
    """openenv's GenericEnvClient (no ecomrlve types): a wrong field names itself and what an action takes;
    the state's record is an object, no second json.loads."""
    from openenv.core.generic_client import GenericEnvClient

    with GenericEnvClient(base_url=url).sync() as env:
        env.reset(env_id="STATUS", difficulty=1, seed=4)
        with pytest.raises(RuntimeError, match=r"unknown field 'action'.*An action takes turn \(one agent turn") as wrong:
            env.step({"action": "hello"})
        assert "VALIDATION_ERROR" in str(wrong.value)
        with pytest.raises(RuntimeError, match=r"field 'oracle': Input should be a valid boolean"):
            env.step({"oracle": "maybe"})
        with pytest.raises(RuntimeError, match=r"unknown field 'tool_calls'"):
            env.step({"turn": None, "tool_calls": []})
        assert env.state()["record"] is None
        result = env.step({"oracle": True})  # the session lives on: the refused steps changed nothing
        while not result.done:
            result = env.step({"oracle": True})
        record = env.state()["record"]
    assert isinstance(record, dict) and record["reward"]["r_total"] == result.reward and record["seed"] == 4
    local = play(EcomEnv("STATUS", catalog=catalog, secret=SECRET), "oracle", env_id="STATUS", difficulty=1, seed=4)
    assert EpisodeRecord.model_validate(record).to_json() == local.for_client().to_json()  # the secret stays on the server


def test_the_state_frame_holds_the_record_as_an_object(url) -> None:
    with connect(url.replace("http", "ws") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"env_id": "CART", "seed": 2, "difficulty": 0}}))
        ws.recv(timeout=10)
        ws.send(json.dumps({"type": "step", "data": {"turn": "<tool_call>{not json"}}))
        assert json.loads(ws.recv(timeout=10))["data"]["done"]
        ws.send(json.dumps({"type": "state"}))
        state = json.loads(ws.recv(timeout=10))["data"]
    assert state["record"]["reward"]["termination"] == "invalid_output" and state["record"]["env_id"] == "CART"


def test_http_is_stateless_and_never_5xx(url) -> None:
    first = httpx.post(f"{url}/reset", json={"env_id": "CART", "difficulty": 1, "seed": 2})
    assert first.status_code == 200 and first.json()["observation"]["tools"]
    assert httpx.post(f"{url}/step", json={"action": {"turn": "hello"}}).status_code == 409  # no episode over HTTP
    assert httpx.post(f"{url}/reset", json={"env_id": "NOPE"}).status_code == 400
    assert httpx.post(f"{url}/reset", json={"difficulty": "hard"}).status_code == 400
    assert httpx.post(f"{url}/step", json={"action": {"oracle": True, "turn": None}}).status_code == 409
    assert httpx.post(f"{url}/step", content=b"{").status_code == 422
    for path in ("/health", "/schema", "/metadata", "/scheduler"):
        assert httpx.get(f"{url}{path}").status_code == 200


def test_sessions_are_isolated_and_step_after_done_is_refused(url) -> None:
    a, b = EcomEnvClient(url).sync(), EcomEnvClient(url).sync()
    with a, b:
        first = a.reset(env_id="CART", difficulty=1, seed=8)
        b.reset(env_id="CART", difficulty=1, seed=8)
        b.step(EcomAction(turn="<tool_call>oops"))  # ends b's episode only
        assert not a.state().done and b.state().done
        assert a.state().episode_id != b.state().episode_id
        with pytest.raises(RuntimeError, match="over"):
            b.step(EcomAction(turn="hello"))
        assert first.observation.messages == b.reset(env_id="CART", difficulty=1, seed=8).observation.messages


def test_a_disconnect_mid_episode_frees_the_session(url) -> None:
    before = sessions(url)
    with connect(url.replace("http", "ws") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"env_id": "CART", "seed": 4, "difficulty": 0}}))
        ws.recv(timeout=10)
        assert sessions(url) == before + 1
    assert wait_for_sessions(url, before) == before


def test_oracle_turns_need_the_server_to_allow_them(catalog) -> None:
    with running_server(ServerConfig(env="CART", secret=SECRET), catalog) as base:
        with EcomEnvClient(base).sync() as env:
            env.reset(env_id="CART", difficulty=0, seed=1)
            with pytest.raises(RuntimeError, match="allow-oracle"):
                env.step(EcomAction(oracle=True))


def test_capacity_idle_timeout_and_message_size_give_their_error(catalog) -> None:
    config = ServerConfig(env="CART", secret=SECRET, max_sessions=2, idle_timeout=0.5, max_message_bytes=4096)
    with running_server(config, catalog) as base:
        ws_url = base.replace("http", "ws") + "/ws"
        with connect(ws_url) as one, connect(ws_url) as two:
            for ws in (one, two):  # both hold a slot
                ws.send(json.dumps({"type": "state"}))
                ws.recv(timeout=10)
            with connect(ws_url) as third:
                refused = error_frame(third)
                assert refused["code"] == "CAPACITY_REACHED" and refused["max_sessions"] == 2
            time.sleep(1.0)  # both go idle
            for ws in (one, two):
                assert error_frame(ws)["code"] == "IDLE_TIMEOUT"
        assert wait_for_sessions(base, 0) == 0
        with connect(ws_url) as ws:
            ws.send(json.dumps({"type": "step", "data": {"turn": "x" * 10_000}}))
            assert error_frame(ws)["code"] == "MESSAGE_TOO_LARGE"
        big = httpx.post(f"{base}/step", json={"action": {"turn": "x" * 10_000}})
        assert big.status_code == 413 and big.json()["error"] == "MESSAGE_TOO_LARGE"
        assert httpx.get(f"{base}/health").status_code == 200


def test_a_token_guards_every_route_but_health(catalog) -> None:
    with running_server(ServerConfig(env="CART", secret=SECRET, token="s3cret"), catalog) as base:
        ws_url = base.replace("http", "ws") + "/ws"
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            with connect(ws_url, additional_headers=headers) as ws:
                assert error_frame(ws)["code"] == "UNAUTHORIZED"
            assert httpx.get(f"{base}/scheduler", headers=headers).status_code == 401
        assert httpx.get(f"{base}/health").status_code == 200
        with pytest.raises(RuntimeError, match="UNAUTHORIZED"), EcomEnvClient(base).sync() as anonymous:
            anonymous.reset(env_id="CART")
        with EcomEnvClient(base, token="s3cret").sync() as env:
            assert env.reset(env_id="CART", difficulty=0, seed=1).observation.tools
        # the mounted playground takes the same token, also as ?token= (then a cookie) so a browser can open it
        assert httpx.get(f"{base}/playground/").status_code == 401
        page = httpx.get(f"{base}/playground/", params={"token": "s3cret"})
        assert page.status_code == 200 and "ecomrlve_token" in page.headers.get("set-cookie", "")
        assert httpx.get(f"{base}/playground/api/envs", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        # no --allow-oracle: the playground gives no hints (a hint is the goal's solver for an episode key that
        # agents under training or evaluation on this server may be playing)
        bearer = {"Authorization": "Bearer s3cret"}
        started = httpx.post(f"{base}/playground/api/episodes", json={"env_id": "CART", "difficulty": 0, "seed": 1},
                             headers=bearer).json()
        hint = httpx.post(f"{base}/playground/api/episodes/{started['episode']}/hint", headers=bearer)
        assert hint.status_code == 403 and "--allow-oracle" in hint.json()["detail"]
        assert "show-me" not in httpx.get(f"{base}/playground/", headers=bearer).text


def test_serve_mounts_the_playground_on_its_catalog(url) -> None:
    envs = httpx.get(f"{url}/playground/api/envs").json()
    assert "CART" in json.dumps(envs)
    started = httpx.post(f"{url}/playground/api/episodes", json={"env_id": "CART", "difficulty": 0, "seed": 3})
    assert started.status_code == 200, started.text
    assert sessions(url) == 0  # a browser episode is not a WebSocket session and never feeds the curriculum
    hint = httpx.post(f"{url}/playground/api/episodes/{started.json()['episode']}/hint")
    assert hint.status_code == 200 and hint.json()["action"]  # this server was started with --allow-oracle


def test_a_reachable_host_needs_a_token_or_insecure() -> None:
    with pytest.raises(UserInputError, match="--token"):
        ServerConfig(host="0.0.0.0")
    assert ServerConfig(host="0.0.0.0", token="t").token == "t"
    assert ServerConfig(host="0.0.0.0", insecure=True).insecure
    assert ServerConfig(host="::1").host == "::1"


def test_run_and_eval_with_server_match_in_process_and_status_prints_windows(url, records_dir, tmp_path) -> None:
    """The client's records are the in-process ones less the secret; the server's ``--records`` file holds them
    whole, and ``ecomrlve replay`` reproduces those (a client's own runs file it refuses in one line)."""
    runner = CliRunner(env={"ECOMRLVE_SECRET": SECRET})
    common = ["--env", "CART,STATUS", "--agent", "oracle", "--difficulty", "1"]
    local = runner.invoke(app, ["run", *common, "--episodes", "2", "--catalog", "synthetic:3000:0",
                                "--out", str(tmp_path / "local.jsonl")])
    assert local.exit_code == 0, local.output
    remote = runner.invoke(app, ["run", *common, "--episodes", "2", "--server", url,
                                 "--out", str(tmp_path / "remote.jsonl")])
    assert remote.exit_code == 0, remote.output
    local_lines = (tmp_path / "local.jsonl").read_text().splitlines()
    without_secret = [EpisodeRecord.model_validate_json(line).for_client().to_json() for line in local_lines]
    assert (tmp_path / "remote.jsonl").read_text().splitlines() == without_secret
    assert SECRET not in (tmp_path / "remote.jsonl").read_text()
    # `run --out` names the agent in `run`, which is not part of the episode; the server's file has run=null
    local_lines = [EpisodeRecord.model_validate_json(line).model_copy(update={"run": None}).to_json()
                   for line in local_lines]
    kept = (records_dir / "episodes.jsonl").read_text().splitlines()
    assert set(local_lines) <= set(kept)
    (tmp_path / "kept.jsonl").write_text("\n".join(line for line in kept if line in local_lines) + "\n")
    replayed = runner.invoke(app, ["replay", str(tmp_path / "kept.jsonl")])
    assert replayed.exit_code == 0 and "reproduced exactly" in replayed.output, replayed.output
    refused = runner.invoke(app, ["replay", str(tmp_path / "remote.jsonl")])
    assert refused.exit_code == 2 and "holds no secret" in refused.stderr, refused.output
    evaluated = runner.invoke(app, ["eval", *common, "--tasks", "2", "--server", url, "--out", str(tmp_path / "ev")])
    assert evaluated.exit_code == 0, evaluated.output
    for output in (remote.output, evaluated.output):  # the records' (the server's) secret, by fingerprint only
        assert f"secret {secret_fingerprint(SECRET)}" in " ".join(output.split()) and SECRET not in output
    records = [json.loads(line) for line in (tmp_path / "ev" / "episodes.jsonl").read_text().splitlines()]
    assert sorted((r["env_id"], r["seed"]) for r in records) == sorted(
        (r["env_id"], r["seed"]) for r in map(json.loads, (tmp_path / "local.jsonl").read_text().splitlines()))
    status = runner.invoke(app, ["status", url])
    assert status.exit_code == 0 and "CART" in status.output and "JOURNEY" in status.output
    missing = runner.invoke(app, ["run", "--env", "CART", "--server", f"http://127.0.0.1:{free_port()}"])
    assert missing.exit_code == 2 and "cannot reach" in missing.output


def test_serve_names_its_secret_by_fingerprint(monkeypatch, tmp_path) -> None:
    """The start line says which secret the server plays (an unconfigured one: the installation's)."""
    from ecomrlve.server import app as server_app
    from ecomrlve.session import CONFIG_DIR_ENV_VAR, installation_secret

    monkeypatch.setattr(server_app, "serve", lambda config, listener: listener.close())
    monkeypatch.setenv(CONFIG_DIR_ENV_VAR, str(tmp_path))
    result = CliRunner(env={"ECOMRLVE_SECRET": ""}).invoke(app, ["serve", "--env", "CART", "--port", "0"])
    assert result.exit_code == 0, result.output
    assert f"secret {secret_fingerprint(installation_secret())}" in " ".join(result.output.split())


def _serve(port: int, state: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "ecomrlve.cli", "serve", "--env", "CART", "--catalog", "synthetic:500",
               "--port", str(port), "--scheduler-state", str(state), "--tau-num", "2", "--tau-acc", "0.5",
               "--allow-oracle"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(Path(__file__).parents[1] / "src"),
                                                                  os.environ.get("PYTHONPATH")) if p)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            raise RuntimeError(process.stderr.read().decode() if process.stderr else "serve exited")
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("serve did not start")


@pytest.mark.slow
def test_kill_9_then_restart_resumes_the_curriculum(tmp_path, catalog) -> None:
    """Every finished episode is checkpointed atomically: a SIGKILL loses nothing that finished.

    The killed server is a real ``ecomrlve serve`` process; the restarted one is built from the same
    ``--scheduler-state`` in this process (a second process start would only add import time).
    """
    state, port = tmp_path / "scheduler.json", free_port()
    url = f"http://127.0.0.1:{port}"
    process = _serve(port, state)
    try:
        env = RemoteEnv(url)
        for seed in range(5):  # the oracle at the window's top promotes CART every 2 episodes
            observation = env.reset(env_id="CART", seed=seed)
            oracle = env.oracle()
            while not observation.done:
                observation = env.step(oracle.act(observation))
        before = httpx.get(f"{url}/scheduler").json()["windows"]
        env.reset(env_id="CART", seed=99)  # an episode in flight when the server dies
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert before["CART"]["high"] >= 1
    assert json.loads(state.read_text())["windows"] == before
    restarted = ServerConfig(env="CART", scheduler_state=state, scheduler=SchedulerConfig(0.5, 2))
    with running_server(restarted, catalog) as base:
        assert httpx.get(f"{base}/scheduler").json()["windows"] == before


@pytest.mark.parametrize(("args", "fragment"), [
    (["serve", "--host", "0.0.0.0"], "--token"),
    (["serve", "--env", "NOPE"], "NOPE"),
    (["serve", "--idle-timeout", "-1"], "--idle-timeout"),
    (["serve", "--max-message-bytes", "10"], "--max-message-bytes"),
    (["serve", "--header-timeout", "0"], "--header-timeout must be > 0"),
    (["serve", "--max-sessions", "10", "--max-connections", "5"], "--max-connections (5) must be at least"),
    (["serve", "--records", "pyproject.toml"], "--records pyproject.toml: pyproject.toml is a file"),
    (["serve", "--catalog", "synthetic:abc", "--port", "0"], "bad catalog spec"),  # any free port: the catalog fails
    (["status", "http://127.0.0.1:9"], "cannot reach"),
    (["run", "--server", "http://127.0.0.1:9", "--override", "p_noise=0"], "--override"),
    (["run", "--server", "http://127.0.0.1:9", "--catalog", "synthetic:1000"], "--catalog: with --server"),
    (["run", "--server", "http://127.0.0.1:9", "--secret", "s", "--scheduler-state", "s.json", "--tau-num", "4"],
     "--secret, --scheduler-state, --tau-num: with --server"),
    (["run", "--server", "http://127.0.0.1:9", "--phrasing", "eval"], "--phrasing: with --server"),
    (["eval", "--out", "unused", "--server", "http://127.0.0.1:9", "--catalog", "synthetic:1000"],
     "--catalog: with --server"),
    (["serve", "--scheduler-state", "no/such/folder/curriculum.json"], "no such directory no/such/folder"),
    (["eval", "--out", "unused", "--server", "http://127.0.0.1:9"], "cannot reach"),
])
def test_cli_mistakes_are_one_line(args: list[str], fragment: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], result.stderr


def test_a_secret_from_the_environment_is_not_refused_with_server() -> None:
    """Only what was typed counts as an option --server cannot honour: $ECOMRLVE_SECRET set for other runs is fine."""
    result = CliRunner(env={"ECOMRLVE_SECRET": SECRET}).invoke(app, ["run", "--server", "http://127.0.0.1:9"])
    assert result.exit_code == 2 and "cannot reach" in result.stderr and "--secret" not in result.stderr


def test_a_taken_port_is_one_line_before_anything_loads() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--env", "CART", "--port", str(port)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stderr.splitlines() == [result.stderr.strip()] and f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "serving" not in result.stdout  # refused before it claims to serve
