"""The playground's server side without a browser: isolation, expiry, the token rule, 4xx on bad
requests, the hidden goal kept out of every response until the end, the run viewer's filters."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi import FastAPI  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from ecomrlve.cli import app as cli  # noqa: E402
from ecomrlve.episode import EcomEnv  # noqa: E402
from ecomrlve.errors import UserInputError  # noqa: E402
from ecomrlve.playground import create_playground_app, mount_playground  # noqa: E402
from ecomrlve.playground.access import check_binding, is_loopback  # noqa: E402
from ecomrlve.playground.runs import RunsFileError, facet_values, parse_runs, select, success_grid  # noqa: E402
from ecomrlve.playground.store import IdleStore  # noqa: E402
from ecomrlve.runner import replay  # noqa: E402
from ecomrlve.session import (  # noqa: E402
    CONFIG_DIR_ENV_VAR,
    SECRET_ENV_VAR,
    installation_secret,
    secret_fingerprint,
)

NDJSON = "application/x-ndjson"  # what the page sends a runs file as


@pytest.fixture(scope="module")
def client(catalog) -> TestClient:
    return TestClient(create_playground_app({catalog.name: catalog}, secret="unit"))


def _reset(client: TestClient, env_id: str = "CART", difficulty: int = 0, seed: int | None = 3) -> dict:
    response = client.post("/api/episodes", json={"env_id": env_id, "difficulty": difficulty, "seed": seed})
    assert response.status_code == 200, response.text
    return response.json()


def _store(client: TestClient):
    return client.app.state.playground.episodes


def test_each_reset_is_its_own_episode(client) -> None:
    first, second = _reset(client), _reset(client)
    assert first["episode"] != second["episode"]
    assert first["messages"] == second["messages"]  # the same key gives the same episode ...
    client.post(f"/api/episodes/{first['episode']}/step",
                json={"action": {"tool_calls": [{"name": "user_get_visit_history", "arguments": {}}]}})
    assert client.get(f"/api/episodes/{first['episode']}").json()["turn"] == 1
    assert client.get(f"/api/episodes/{second['episode']}").json()["turn"] == 0  # ... played apart


def test_an_unconfigured_playground_brings_a_seed_back(catalog, monkeypatch, tmp_path) -> None:
    """No secret given: the installation's, so resetting env/d/seed again (or in another playground of this
    machine) gives the same shopper; the page names the secret by its fingerprint, no view holds it."""
    monkeypatch.delenv(SECRET_ENV_VAR)
    monkeypatch.setenv(CONFIG_DIR_ENV_VAR, str(tmp_path))
    apps = [TestClient(create_playground_app({catalog.name: catalog})) for _ in range(2)]
    views = [_reset(c, "CART", 3, 7) for c in (*apps, apps[0])]
    assert views[0]["messages"] == views[1]["messages"] == views[2]["messages"]
    secret = _store(apps[0]).secret
    assert secret == installation_secret() and all(secret not in json.dumps(v) for v in views)
    page = apps[0].get("/").text
    assert secret_fingerprint(secret) in page and secret not in page


def test_a_random_seed_is_drawn_and_shown(client) -> None:
    view = _reset(client, seed=None)
    assert 0 <= view["seed"] < 2**31


def test_axes_in_force_are_those_the_environment_reads(client) -> None:
    view = _reset(client, "RETURN", 5)
    assert {"T_max", "B_tool", "p_noise"} <= set(view["axes"])
    assert "bundle_budget" not in view["axes"] and "order_reference" in view["axes"]


@pytest.mark.parametrize("env_id,difficulty", [("CART", 6), ("RETURN", 4), ("PD", 7), ("JOURNEY", 5)])
def test_no_response_holds_the_goal_until_the_end(client, env_id: str, difficulty: int) -> None:
    """Play the oracle's hints through the API: every response before the last is free of the goal."""
    view = _reset(client, env_id, difficulty, seed=5)
    handle = view["episode"]
    episode = _store(client).get(handle)
    goal = episode.env.audit().problem.goal.model_dump(mode="json")
    bodies = [json.dumps(view)]
    for _ in range(40):
        hint = client.post(f"/api/episodes/{handle}/hint")
        bodies.append(hint.text)
        step = client.post(f"/api/episodes/{handle}/step", json={"action": hint.json()["action"]})
        if step.json()["done"]:
            break
        bodies.append(step.text)
        bodies.append(client.get(f"/api/episodes/{handle}").text)
    assert step.json()["done"] and step.json()["outcome"]["goal"] == goal
    assert step.json()["outcome"]["reward"]["is_correct"]
    explanation = "\n".join(step.json()["outcome"]["explanation"])  # why the verdict, with turns and sources
    assert explanation.startswith("verdict: correct") and ", turn " in explanation
    public = {key: value for key, value in step.json().items() if key != "outcome"}  # all the agent was shown
    results = [json.loads(m["content"]) for m in public["messages"] if m["role"] == "tool"]
    keys = _goal_keys(goal) - _goal_keys(public) - _goal_keys(results)
    assert keys, "the goal has fields the agent never sees"
    seen = json.dumps([public, results]) + json.dumps([public, results], ensure_ascii=False)
    unseen = {v for v in _goal_strings(goal) if v not in seen}  # values the agent was never shown
    for body in bodies:
        assert not [k for k in keys | unseen if k in body]
    assert all(k in step.text for k in keys | unseen)  # the scan finds the goal once it is revealed
    record = episode.env.record  # what the page played replays byte for byte, like any runs-file record
    assert replay(EcomEnv(env_id, catalog=episode.env.catalog), record).to_json() == record.to_json()


def _goal_keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return {json.dumps(k) + ":" for k in value} | {k for v in value.values() for k in _goal_keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _goal_keys(v)}
    return set()


def _goal_strings(value: object) -> set[str]:
    if isinstance(value, dict):
        return {s for v in value.values() for s in _goal_strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in _goal_strings(v)}
    return {value} if isinstance(value, str) and len(value) >= 4 else set()


def test_hint_is_stable_within_a_turn_and_follows_the_episode(client) -> None:
    handle = _reset(client)["episode"]
    first = client.post(f"/api/episodes/{handle}/hint").json()["action"]
    assert client.post(f"/api/episodes/{handle}/hint").json()["action"] == first
    client.post(f"/api/episodes/{handle}/step", json={"action": first})
    second = client.post(f"/api/episodes/{handle}/hint").json()["action"]
    assert second["tool_calls"][0]["function"]["name"] == "cart_add"


@pytest.mark.parametrize("as_text", [False, True])
def test_an_openai_message_is_taken_as_an_object_or_as_pasted_text(client, as_text: bool) -> None:
    handle = _reset(client)["episode"]
    hint = client.post(f"/api/episodes/{handle}/hint").json()["action"]
    assert hint["role"] == "assistant"
    view = client.post(f"/api/episodes/{handle}/step", json={"action": json.dumps(hint) if as_text else hint}).json()
    assert not view["done"] and [m["name"] for m in view["messages"] if m["role"] == "tool"] == ["catalog_search"]


def test_a_hint_the_oracle_cannot_give_is_409_not_500(client) -> None:
    handle = _reset(client, "JOURNEY", 2, seed=1)["episode"]
    first = client.post(f"/api/episodes/{handle}/hint").json()["action"]
    calls = [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
             for c in first["tool_calls"]]  # the same calls without the oracle's ids, as the forms send them
    client.post(f"/api/episodes/{handle}/step", json={"action": {"tool_calls": calls}})
    hint = client.post(f"/api/episodes/{handle}/hint")
    assert hint.status_code in (200, 409)
    if hint.status_code == 409:
        assert "raw box" in hint.json()["detail"]
        assert client.post(f"/api/episodes/{handle}/hint").status_code == 409
    assert client.get(f"/api/episodes/{handle}").status_code == 200  # the episode itself plays on


def test_malformed_turn_ends_at_minus_one_and_later_steps_are_409(client) -> None:
    handle = _reset(client)["episode"]
    action = {"tool_calls": [{"name": "cart_emtpy", "arguments": {}}]}
    view = client.post(f"/api/episodes/{handle}/step", json={"action": action}).json()
    assert view["done"] and view["reward"] == -1.0 and view["termination"] == "invalid_output"
    assert view["outcome"]["reward"]["invalid_reason"].startswith("unknown_tool")
    assert client.post(f"/api/episodes/{handle}/step", json={"action": "hi"}).status_code == 409
    assert client.post(f"/api/episodes/{handle}/hint").status_code == 409


@pytest.mark.parametrize("action", ["", "  \n", {"tool_calls": []}, {"message": " ", "tool_calls": []},
                                    {"role": "assistant", "content": None}, "<think>hmm</think>"])
def test_an_empty_turn_is_refused_and_spends_nothing(client, action) -> None:
    """The session would play it (an agent that outputs nothing loses the turn); a person's empty "Send" plays
    nothing: 400 with what to do, the episode untouched."""
    handle = _reset(client)["episode"]
    response = client.post(f"/api/episodes/{handle}/step", json={"action": action})
    assert response.status_code == 400 and "empty turn" in response.json()["detail"]
    view = client.get(f"/api/episodes/{handle}").json()
    assert view["turn"] == 0 and not view["done"]


def test_the_core_plays_an_empty_turn(env) -> None:
    """What docs/episodes.md says: "" is a turn in the core; it counts against T_max and the shopper stays silent."""
    first = env.reset(env_id="CART", difficulty=0, seed=3)
    after = env.step("")
    assert after.info["turn"] == 1 and after.info["turns_left"] == first.info["turns_left"] - 1
    assert not after.messages and not after.done


def test_the_favicon_is_served_and_linked(client) -> None:
    for path in ("/favicon.ico", "/static/favicon.svg"):
        response = client.get(path)
        assert response.status_code == 200 and response.headers["content-type"].startswith("image/svg+xml")
        assert response.text.startswith("<svg")
    assert 'rel="icon"' in client.get("/").text and 'href="/static/favicon.svg"' in client.get("/runs").text


@pytest.mark.parametrize("method,path,body,status", [
    ("post", "/api/episodes", {"env_id": "CRAT", "difficulty": 0}, 400),
    ("post", "/api/episodes", {"env_id": "CART", "difficulty": 16}, 422),
    ("post", "/api/episodes", {"env_id": "CART", "difficulty": 0, "seed": -1}, 422),
    ("post", "/api/episodes", {"env_id": "CART", "difficulty": 0, "catalog": "nope"}, 400),
    ("post", "/api/episodes", {"env_id": "CART", "difficulty": 0, "extra": 1}, 422),
    ("post", "/api/episodes", [1, 2], 422),
    ("get", "/api/episodes/unknown", None, 404),
    ("post", "/api/episodes/unknown/step", {"action": "hi"}, 404),
    ("post", "/api/runs", "not a record\n", 400),
    ("post", "/api/runs", "\n\n", 400),
    ("get", "/runs/file0", None, 404),
    ("get", "/static/app.py", None, 404),
    ("get", "/static/..%2Fapp.py", None, 404),
])
def test_bad_requests_are_4xx(client, method: str, path: str, body: object, status: int) -> None:
    kwargs = ({"content": body, "headers": {"content-type": NDJSON}} if isinstance(body, str)
              else {"json": body} if body is not None else {})
    assert getattr(client, method)(path, **kwargs).status_code == status


def test_step_body_must_be_an_action(client) -> None:
    handle = _reset(client)["episode"]
    assert client.post(f"/api/episodes/{handle}/step", json={"action": 5}).status_code == 422
    huge = json.dumps({"action": "x" * (2**20 + 1)})
    assert client.post(f"/api/episodes/{handle}/step", content=huge).status_code == 413
    assert client.get(f"/api/episodes/{handle}").json()["done"] is False
    too_long = client.post(f"/api/episodes/{handle}/step", json={"action": "x" * 40_000}).json()
    assert too_long["done"] and too_long["outcome"]["reward"]["invalid_reason"].startswith("too_long")


def test_idle_entries_expire_and_the_store_is_bounded() -> None:
    now = [0.0]
    store: IdleStore[int] = IdleStore(idle_seconds=10, max_entries=2, clock=lambda: now[0])
    a = store.add(1)
    now[0] = 6
    b = store.add(2)
    now[0] = 12
    assert store.get(a) is None and store.get(b) == 2  # a idled 12 s; reading b refreshes it
    now[0] = 20
    assert store.get(b) == 2
    c, d = store.add(3), store.add(4)
    assert store.get(b) is None and store.get(c) == 3 and store.get(d) == 4 and len(store) == 2


def test_expired_episode_is_404(catalog) -> None:
    client = TestClient(create_playground_app({catalog.name: catalog}, secret="unit", idle_seconds=1e-6))
    handle = _reset(client)["episode"]
    assert client.get(f"/api/episodes/{handle}").status_code == 404


def test_token_rule() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.8.0.1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4") and not is_loopback("example.org")
    check_binding("127.0.0.1", None, False)
    check_binding("0.0.0.0", "t0ken", False)
    check_binding("0.0.0.0", None, True)
    with pytest.raises(UserInputError, match="--token"):
        check_binding("0.0.0.0", None, False)
    with pytest.raises(UserInputError, match="empty"):
        check_binding("127.0.0.1", "", False)


def test_token_is_required_by_header_cookie_or_query(catalog) -> None:
    client = TestClient(create_playground_app({catalog.name: catalog}, token="s3cret", secret="unit"))
    assert client.get("/").status_code == 401
    assert client.get("/api/envs", headers={"authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/api/envs", headers={"authorization": "Bearer s3cret"}).status_code == 200
    page = client.get("/?token=s3cret")  # sets the cookie for the page's own requests
    assert page.status_code == 200 and "ecomrlve_token" in page.headers["set-cookie"]
    assert client.get("/api/envs").status_code == 200  # the client now carries the cookie


def test_mounts_under_a_prefix_on_another_app(catalog) -> None:
    app = FastAPI()
    mount_playground(app, {catalog.name: catalog}, prefix="/playground", secret="unit")
    client = TestClient(app)
    page = client.get("/playground/")
    assert page.status_code == 200 and 'src="/playground/static/playground.js"' in page.text
    assert 'data-prefix="/playground"' in page.text
    assert client.get("/playground/static/playground.css").status_code == 200
    assert client.post("/playground/api/episodes", json={"env_id": "CART", "difficulty": 0}).status_code == 200


def test_links_follow_where_the_app_is_mounted(catalog) -> None:
    outer = FastAPI()
    outer.mount("/tools/gym", create_playground_app({catalog.name: catalog}, secret="unit"))
    client = TestClient(outer)
    page = client.get("/tools/gym/")
    assert page.status_code == 200 and 'href="/tools/gym/static/playground.css"' in page.text
    assert client.get("/tools/gym/static/playground.js").status_code == 200


def test_pages_use_no_remote_assets(client) -> None:
    for path in ("/", "/runs", "/static/playground.js", "/static/playground.css"):
        text = client.get(path).text
        assert "http://" not in text and "https://" not in text and "//cdn" not in text


# -- the run viewer --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def records(catalog, search) -> list:
    env = EcomEnv(["CART", "STATUS"], catalog=catalog, search=search, secret="viewer-secret")
    out = []
    for env_id, d, seed, agent in [("CART", 0, 1, "oracle"), ("STATUS", 2, 2, "oracle"), ("CART", 0, 3, "random"),
                                   ("CART", 2, 4, "oracle")]:
        observation = env.reset(env_id=env_id, difficulty=d, seed=seed)
        player = env.audit().oracle()
        if agent == "random":
            observation = env.step("not a tool call <tool_call>")
        for _ in range(30):
            if observation.done:
                break
            observation = env.step(player.act(observation))
        out.append(env.record.model_copy(update={"run": {"agent": agent, "model": "m1" if agent == "random" else None}}))
    return out


def test_runs_file_filters_sorts_and_summarises(records) -> None:
    runs = parse_runs("\n".join(r.to_json() for r in records) + "\n\n", "runs.jsonl")
    assert len(runs.records) == 4
    assert facet_values(runs.records)["env"] == ["CART", "STATUS"]
    assert facet_values(runs.records)["agent"] == ["oracle", "random"]
    cart = select(runs.records, {"env": "CART"})
    assert [i for i, _ in cart] == [0, 2, 3]
    assert [i for i, _ in select(runs.records, {"success": "no"})] == [2]
    assert [i for i, _ in select(runs.records, {"model": "m1", "d": "0"})] == [2]
    ordered = select(runs.records, {}, "reward_desc")
    assert [r.reward.r_total for _, r in ordered] == sorted((r.reward.r_total for r in records), reverse=True)
    grid = success_grid(list(runs.records))
    assert grid["ds"] == [0, 2]
    cart_row = next(row for row in grid["rows"] if row["env"] == "CART")
    assert cart_row["cells"][0]["success_rate"] == 0.5 and cart_row["cells"][0]["episodes"] == 2


def test_runs_file_errors_name_the_line(records) -> None:
    with pytest.raises(RunsFileError, match=r"runs.jsonl:2: not an episode record"):
        parse_runs(records[0].to_json() + "\n{\"env_id\": 1}\n", "runs.jsonl")
    with pytest.raises(RunsFileError, match="holds no episode records"):
        parse_runs("  \n", "runs.jsonl")


def test_viewer_pages(client, records) -> None:
    opened = client.post("/api/runs", content="\n".join(r.to_json() for r in records),
                         headers={"x-filename": "../../etc/episodes.jsonl", "content-type": NDJSON}).json()
    assert opened["episodes"] == 4
    page = client.get(opened["url"], params={"env": "CART", "sort": "reward_asc"})
    assert page.status_code == 200 and "episodes.jsonl" in page.text and "../" not in page.text
    assert page.text.count('<tr data-index=') == 3
    detail = client.get(opened["url"] + "/2")
    assert detail.status_code == 200 and "invalid_output" in detail.text
    assert records[2].goal["items"][0]["product_id"] in detail.text
    assert "Why this verdict" in detail.text and "verdict: failed (fault: agent)" in detail.text
    assert f"secret {secret_fingerprint(records[2].secret)}" in detail.text and records[2].secret not in detail.text
    assert client.get(opened["url"] + "/9").status_code == 404
    assert client.get(opened["url"], params={"sort": "bogus", "offset": -5}).status_code == 200


def test_a_runs_upload_must_be_a_non_simple_request(client, records) -> None:
    """A web page of any origin may POST ``text/plain`` (or a form) without a CORS preflight: refused unread."""
    body = "\n".join(r.to_json() for r in records)
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None):
        refused = client.post("/api/runs", content=body, headers={"content-type": kind} if kind else {})
        assert refused.status_code == 415 and "application/x-ndjson" in refused.json()["detail"], kind
    assert client.post("/api/runs", content=body, headers={"content-type": NDJSON}).status_code == 200


def test_runs_files_are_indexed_and_counted_against_their_visitor(catalog, records) -> None:
    """One copy of the bytes and light records per upload; a visitor over its share loses its own oldest
    uploads, never another visitor's."""
    body = ("\n".join(r.to_json() for r in records) + "\n").encode()
    runs = parse_runs(body, "runs.jsonl")
    assert runs.data is body and [runs.record(i) for i in range(len(records))] == list(records)
    assert all(not light.messages and not light.goal and light.reward == full.reward
               for light, full in zip(runs.records, records, strict=True))
    playground = create_playground_app({catalog.name: catalog}, secret="unit").state.playground
    playground.runs.owner_cost, playground.runs.max_cost = 3 * len(body), 5 * len(body)
    store = playground.runs
    alice = [store.add(runs, owner="alice", cost=runs.size) for _ in range(2)]
    bob = [store.add(runs, owner="bob", cost=runs.size) for _ in range(5)]  # over bob's share: bob's oldest go
    assert store.cost("bob") <= 3 * len(body) and [store.get(k) is not None for k in bob] == [False, False, True,
                                                                                              True, True]
    assert all(store.get(k) is not None for k in alice)  # 5 in all: within the store's bound
    carol = store.add(runs, owner="carol", cost=runs.size)  # over the store's bound: from the biggest holder, bob
    assert store.get(carol) is not None and all(store.get(k) is not None for k in alice)
    assert store.cost() <= 5 * len(body)


def test_one_visitor_cannot_evict_every_other_visitors_episode(catalog) -> None:
    """Resets from one address beyond its share (a quarter of the pool) drop its own oldest episodes, not
    another address's."""
    app = create_playground_app({catalog.name: catalog}, secret="unit")
    store = app.state.playground.episodes
    kept = store.create("CART", 0, 1, visitor="10.0.0.2")
    for seed in range(80):
        store.create("CART", 0, seed, visitor="10.0.0.1")
    assert store.get(kept.handle) is kept
    assert len(store) <= 1 + 256 // 4


def test_run_records_say_which_agent_played(client, tmp_path) -> None:
    """`run --out` names the agent in each record (the viewer's agent column and facet), says how many
    records it wrote where, and the records still replay exactly."""
    out = tmp_path / "runs.jsonl"
    result = CliRunner().invoke(cli, ["run", "--env", "CART,STATUS", "--agent", "random", "--episodes", "2",
                                      "--catalog", "synthetic:450", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote 4 records to {out}" in " ".join(result.output.split())
    lines = out.read_text().splitlines()
    assert [json.loads(line)["run"] for line in lines] == [{"agent": "random"}] * 4
    assert facet_values(parse_runs(out.read_text(), "runs.jsonl").records)["agent"] == ["random"]
    opened = client.post("/api/runs", content=out.read_text(), headers={"x-filename": "runs.jsonl", "content-type": NDJSON}).json()
    assert client.get(opened["url"]).text.count("<td>random</td>") == 4
    replayed = CliRunner().invoke(cli, ["replay", str(out)])
    assert replayed.exit_code == 0 and "all 4 episodes reproduced exactly" in replayed.output


def test_cli_refuses_an_open_address_without_a_token(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["playground", "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "--token" in result.output and "Traceback" not in result.output
    bad = tmp_path / "runs.jsonl"
    bad.write_text("{}\n")
    result = CliRunner().invoke(cli, ["playground", "--runs", str(bad)])
    assert result.exit_code == 2 and "runs.jsonl:1: not an episode record" in result.output
    result = CliRunner().invoke(cli, ["playground", "--runs", str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 2 and "cannot read" in result.output


@pytest.mark.slow
def test_the_command_serves_the_pages(tmp_path, records) -> None:
    """`ecomrlve playground` in a subprocess on a free loopback port: pages, API and preloaded runs answer."""
    import os
    import select
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(r.to_json() + "\n" for r in records))
    command = [sys.executable, "-m", "ecomrlve.cli", "playground", "--port", "0", "--catalog", "synthetic:450",
               "--runs", str(runs)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert process.stdout is not None
        assert select.select([process.stdout], [], [], 120)[0], "the command printed nothing in 120 s"
        line = process.stdout.readline()  # "playground on http://127.0.0.1:PORT/ ..." once it listens
        assert line.startswith("playground on http://127.0.0.1:"), line
        url = line.split()[2]
        with urllib.request.urlopen(url, timeout=30) as page:
            assert "Reset episode" in page.read().decode()
        with urllib.request.urlopen(url + "api/envs", timeout=30) as envs:
            assert json.load(envs)["catalogs"] == ["synthetic:450:0"]
        with urllib.request.urlopen(url + "runs", timeout=30) as index:
            assert 'href="/runs/file0"' in index.read().decode()
        with urllib.request.urlopen(url + "runs/file0", timeout=30) as viewer:
            assert "runs.jsonl" in viewer.read().decode()
        for headers in ({"Host": "evil.example"}, {"Origin": "http://127.0.0.1:9"}):  # DNS rebinding, other pages
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(urllib.request.Request(url + "api/envs", headers=headers), timeout=30)
            assert refused.value.code == 403
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.slow
def test_the_cli_works_without_the_playground_extra() -> None:
    """Core installs have no FastAPI: every other command still loads, and this one says what to install."""
    import subprocess
    import sys

    code = ("import sys\n"
            "for name in ('fastapi', 'uvicorn', 'jinja2', 'starlette'): sys.modules[name] = None\n"
            "from ecomrlve.cli import app\n"
            "app(['playground'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "pip install 'ecomrlve[playground]'" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
