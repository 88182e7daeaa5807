"""The playground and run viewer in a real browser: headless Debian Chromium driven by Playwright.

The server runs in a thread on a free loopback port. Each test plays through the page as a
person would (forms, buttons, the raw box, the file picker) and saves screenshots at a desktop
(1280 px) and a phone (390 px) width into its tmp dir.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = os.environ.get("ECOMRLVE_CHROMIUM", "/usr/bin/chromium")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (Debian package `chromium`; .ci/run installs it)", allow_module_level=True)

from ecomrlve.episode import EcomEnv  # noqa: E402
from ecomrlve.playground import create_playground_app  # noqa: E402
from ecomrlve.playground.app import Playground  # noqa: E402
from ecomrlve.playground.command import serve_in_thread  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDTHS = (1280, 390)
TIMEOUT_MS = 20_000


class Server:
    """The playground on a free loopback port; ``playground`` is the app's state (for the tests' audits)."""

    def __init__(self, url: str, playground: Playground) -> None:
        self.url = url
        self.playground = playground


@pytest.fixture(scope="module")
def server(catalog) -> Iterator[Server]:
    app = create_playground_app({catalog.name: catalog}, secret="browser-tests")
    with serve_in_thread(app) as url:
        yield Server(url, app.state.playground)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def screenshots(page: Any, folder: Path, name: str) -> list[Path]:
    """Full-page PNGs at each width; checks each file really is a PNG of that width."""
    saved = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        path = folder / f"{name}-{width}.png"
        page.screenshot(path=str(path), full_page=True)
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">I", data[16:20])[0] == width
        saved.append(path)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})
    return saved


def reset(page: Any, server: Server, env_id: str, difficulty: int, seed: int | None) -> str:
    """Reset an episode through the form; returns its handle (the page keeps it, nothing else does)."""
    page.goto(server.url + "/")
    page.select_option("#env", env_id)
    page.fill("#difficulty", str(difficulty))
    page.fill("#seed", "" if seed is None else str(seed))
    with page.expect_response(lambda r: r.url.endswith("/api/episodes")):
        page.click("#reset")
    page.wait_for_selector("#game:not([hidden])")
    return page.get_attribute("#game", "data-episode")


def fill_form(page: Any, prefix: str, arguments: dict[str, Any]) -> None:
    """Type one tool call's arguments into the generated form, field by field."""
    for key, value in arguments.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            fill_form(page, name + ".", value)
        elif value is None:
            continue
        elif isinstance(value, bool) or page.locator(f'select[name="{name}"]').count():
            page.select_option(f'select[name="{name}"]', json.dumps(value))
        elif isinstance(value, list):
            page.fill(f'input[name="{name}"]', ", ".join(map(str, value)))
        else:
            page.fill(f'input[name="{name}"]', str(value))


def send_turn(page: Any, action: dict[str, Any]) -> None:
    """Compose one turn in the forms (each call: choose the tool, fill it, add it), then send it."""
    for call in action.get("tool_calls") or []:
        function = call["function"]
        page.select_option("#tool", function["name"])
        fill_form(page, "", json.loads(function["arguments"]))
        page.click("#add-call")
    if action.get("content"):
        page.fill("#message", action["content"])
    with page.expect_response(lambda r: r.url.endswith("/step")):
        page.click("#send")


def play_hints_through_forms(page: Any, episode: Any) -> None:
    """Each turn: the oracle's next action (what "Show me" shows), typed into the forms and sent."""
    for _ in range(30):  # bounded: these episodes take 2-6 turns
        send_turn(page, episode.hint())
        if episode.env.done:
            break
    page.wait_for_selector("#outcome:not([hidden])")


def goal_markers(goal: dict[str, Any], seen: str) -> set[str]:
    """What would betray the hidden goal in a response: its field names (as JSON keys) and every
    string value the agent is never shown (``seen``: the transcript and tool schemas at the end)."""
    markers: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                markers.add(json.dumps(key) + ":")
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and len(value) >= 4 and value not in seen:
            markers.add(value)

    walk(goal)
    transcript_keys = set(re.findall(r'"[A-Za-z_]+":', seen))
    return {m for m in markers if m not in transcript_keys}


def test_cart_d0_through_the_forms_with_the_oracle(page, server, tmp_path) -> None:
    responses: list[Any] = []  # every response the browser got, in order
    page.on("response", lambda r: responses.append(r) if r.url.startswith(server.url) else None)
    handle = reset(page, server, "CART", 0, 11)
    episode = server.playground.episodes.get(handle)
    goal = episode.env.audit().problem.goal.model_dump(mode="json")
    page.click("#show-me")  # the hint as a person sees it: the oracle's first call
    first = episode.hint()
    page.wait_for_selector("#hint:not([hidden])")
    assert first["tool_calls"][0]["function"]["name"] in page.inner_text("#hint")
    screenshots(page, tmp_path, "playground-hint")
    play_hints_through_forms(page, episode)
    record = episode.env.record
    assert record.reward is not None and record.reward.is_correct and record.reward.r_task == 1.0
    assert page.inner_text("#reward td[data-key=r_task]") == "1"
    assert page.inner_text("#reward td[data-key=is_correct]") == "true"
    assert float(page.inner_text("#r-total")) == pytest.approx(record.reward.r_total, abs=1e-3)
    shown_goal = json.loads(page.inner_text("#goal"))
    assert shown_goal == goal
    assert json.loads(page.inner_text("#verifier")) == record.reward.task
    assert page.inner_text("#explanation").startswith("verdict: correct") and "opening" in page.inner_text("#explanation")
    screenshots(page, tmp_path, "playground-done")

    # Nothing the browser received before the final turn's answer holds the hidden goal ...
    bodies = [(r.url, r.text()) for r in responses]
    final = max(i for i, (url, _) in enumerate(bodies) if url.endswith("/step"))
    public = [record.messages, episode.env.session.first_observation.tools]  # all the agent was shown
    seen = json.dumps(public, ensure_ascii=False) + json.dumps(public)
    markers = goal_markers(goal, seen)
    assert '"withheld":' in markers and '"confirm_first":' in markers
    for url, body in bodies[:final]:
        leaked = [m for m in markers if m in body]
        assert not leaked, f"{url} showed the hidden goal before the end: {leaked}"
    # ... and the same scan finds it in the answer that ends the episode (it does detect the goal).
    assert all(m in bodies[final][1] for m in ('"withheld":', '"confirm_first":'))


@pytest.mark.parametrize("env_id,difficulty", [("SUB", 1), ("PD", 1), ("RETURN", 2), ("STATUS", 2),
                                                ("POLICY", 2), ("BUNDLE", 1)])
def test_every_environment_plays_through_its_generated_forms(page, server, env_id: str, difficulty: int) -> None:
    """Each answer schema (id lists, booleans, enums, optional numbers) and tool set, filled in by hand."""
    episode = server.playground.episodes.get(reset(page, server, env_id, difficulty, 1))
    play_hints_through_forms(page, episode)
    record = episode.env.record
    assert record.reward is not None and record.reward.is_correct, record.reward
    assert page.inner_text("#reward td[data-key=is_correct]") == "true"
    assert json.loads(page.inner_text("#goal")) == record.goal


def test_journey_plays_the_oracle_hints_through_the_raw_box(page, server) -> None:
    """JOURNEY's oracle routes results by its own call ids: its hints go in verbatim ("Put it in the raw box")."""
    episode = server.playground.episodes.get(reset(page, server, "JOURNEY", 2, 1))
    for _ in range(30):
        page.click("#show-me")
        page.click("#hint button")
        with page.expect_response(lambda r: r.url.endswith("/step")):
            page.click("#send-raw")
        if episode.env.done:
            break
    page.wait_for_selector("#outcome:not([hidden])")
    assert episode.env.record.reward.is_correct
    assert page.inner_text("#reward td[data-key=is_correct]") == "true"


def test_malformed_raw_turn_ends_at_minus_one_with_the_reason(page, server, tmp_path) -> None:
    reset(page, server, "CART", 0, 12)
    page.click("#raw-box summary")
    page.fill("#raw", '<tool_call>{"name": "user_get_visit_history", "arguments": {}}')  # unclosed block
    with page.expect_response(lambda r: r.url.endswith("/step")):
        page.click("#send-raw")
    page.wait_for_selector("#outcome:not([hidden])")
    assert page.inner_text("#r-total") == "-1"
    assert page.inner_text("#reward td[data-key=termination]") == "invalid_output"
    assert "unclosed <tool_call>" in page.inner_text("#reward td[data-key=invalid_reason]")
    assert page.locator("#composer").is_hidden()
    screenshots(page, tmp_path, "playground-invalid")


def test_two_browser_contexts_keep_separate_episodes(browser, server) -> None:
    contexts = [browser.new_context() for _ in range(2)]
    try:
        pages = [context.new_page() for context in contexts]
        handles = [reset(p, server, "CART", 0, 21) for p in pages]  # the same episode settings, twice
        assert handles[0] != handles[1]
        pages[0].click("#raw-box summary")
        pages[0].fill("#raw", json.dumps({"message": "Let me look.", "tool_calls": [{"name": "user_get_visit_history", "arguments": {}}]}))
        with pages[0].expect_response(lambda r: r.url.endswith("/step")):
            pages[0].click("#send-raw")
        pages[0].wait_for_selector("#chat .msg.tool[data-tool=user_get_visit_history]")
        assert "Let me look." in pages[0].inner_text("#chat")
        pages[1].click("#show-me")  # the other plays the oracle's hint, through the raw box
        pages[1].click("#hint button")
        with pages[1].expect_response(lambda r: r.url.endswith("/step")):
            pages[1].click("#send-raw")
        pages[1].wait_for_selector("#chat .msg.tool[data-tool=catalog_search]")
        assert pages[0].locator("#chat .msg.tool[data-tool=catalog_search]").count() == 0
        assert pages[1].locator("#chat .msg.tool[data-tool=user_get_visit_history]").count() == 0
        first, second = (server.playground.episodes.get(h) for h in handles)
        assert first.env.session.turns == 1 and second.env.session.turns == 1
        pages[1].reload()  # a fresh page holds no episode: the handle lived only in the page
        assert pages[1].locator("#game").is_hidden()
    finally:
        for context in contexts:
            context.close()


def _runs_file(catalog, search, path: Path) -> list[Any]:
    """A small runs file: oracle episodes of CART and PD, and a malformed one, tagged with an agent."""
    records = []
    env = EcomEnv(["CART", "PD"], catalog=catalog, search=search, secret="viewer")
    for env_id, d, seed in [("CART", 0, 1), ("CART", 1, 2), ("PD", 0, 3), ("PD", 1, 4)]:
        observation = env.reset(env_id=env_id, difficulty=d, seed=seed)
        oracle = env.audit().oracle()
        for _ in range(30):
            if observation.done:
                break
            observation = env.step(oracle.act(observation))
        records.append(env.record.model_copy(update={"run": {"agent": "oracle"}}))
    env.reset(env_id="CART", difficulty=1, seed=5)
    env.step("<tool_call>{")
    records.append(env.record.model_copy(update={"run": {"agent": "random", "model": "none"}}))
    path.write_text("".join(r.to_json() + "\n" for r in records))
    return records


def test_run_viewer_opens_filters_and_shows_an_episode(page, server, catalog, search, tmp_path) -> None:
    runs = tmp_path / "episodes.jsonl"
    records = _runs_file(catalog, search, runs)
    page.goto(server.url + "/runs")
    with page.expect_navigation():
        page.set_input_files("#runs-file", str(runs))
    assert page.locator("#episodes tbody tr").count() == len(records)
    heat = page.inner_text("#heatmap")
    assert "CART" in heat and "PD" in heat and "d=1" in heat
    screenshots(page, tmp_path, "viewer-list")

    page.select_option("select[name=env]", "CART")
    page.select_option("select[name=success]", "no")
    page.select_option("select[name=sort]", "reward_asc")
    page.click("#filters button[type=submit]")
    page.wait_for_url(re.compile(r"env=CART"))
    expected = sorted((i for i, r in enumerate(records) if r.env_id == "CART" and not r.reward.is_correct),
                      key=lambda i: records[i].reward.r_total)
    rows = page.locator("#episodes tbody tr")
    assert [int(rows.nth(i).get_attribute("data-index")) for i in range(rows.count())] == expected

    page.select_option("select[name=success]", "")
    page.select_option("select[name=agent]", "random")
    page.click("#filters button[type=submit]")
    page.wait_for_url(re.compile(r"agent=random"))
    [index] = [i for i, r in enumerate(records) if (r.run or {}).get("agent") == "random"]
    page.click(f"#episodes tbody tr[data-index='{index}'] a")
    page.wait_for_selector("#goal")
    assert json.loads(page.inner_text("#goal")) == records[index].goal
    assert "invalid_output" in page.inner_text("#reward")
    screenshots(page, tmp_path, "viewer-episode")


ATTACKER_PAGE = """<!doctype html><title>another site</title><script>
window.result = (async () => {
  const upload = await fetch(TARGET + "/playground/api/runs", {method: "POST", mode: "no-cors",
                             headers: {"content-type": "text/plain"}, body: RUNS_LINE}).then(() => "sent", String);
  const socket = await new Promise((resolve) => {
    const frames = [];
    const ws = new WebSocket(TARGET.replace("http", "ws") + "/ws");
    ws.onopen = () => ws.send(JSON.stringify({type: "reset", data: {env_id: "CART", difficulty: 0, seed: 1}}));
    ws.onmessage = (event) => frames.push(JSON.parse(event.data));
    ws.onclose = (event) => resolve({frames, code: event.code});
    setTimeout(() => resolve({frames, code: -1}), 10000);
  });
  return {upload, ...socket};
})();
</script>"""


def test_a_page_of_another_local_origin_cannot_drive_serve(browser, catalog, search, tmp_path) -> None:
    """Cross-site WebSocket hijacking: a page served from another loopback port opens /ws on a token-less
    ``ecomrlve serve`` and tries to play, and posts a runs file as a simple (``text/plain``) request."""
    pytest.importorskip("openenv")
    import http.server
    import threading

    from ecomrlve.server import ServerConfig, build_app
    from ecomrlve.server.app import uvicorn_settings

    _runs_file(catalog, search, tmp_path / "runs.jsonl")
    line = (tmp_path / "runs.jsonl").read_text().splitlines()[0]
    config = ServerConfig(env="CART", secret="browser-tests")
    app = build_app(config, catalog=catalog)
    with serve_in_thread(app, **uvicorn_settings(config)) as target:
        html = ATTACKER_PAGE.replace("TARGET", json.dumps(target)).replace("RUNS_LINE", json.dumps(line))

        class Attacker(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                body = html.encode()
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
        threading.Thread(target=attacker.serve_forever, daemon=True).start()
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(f"http://localhost:{attacker.server_address[1]}/")
            result = page.evaluate("window.result")
        finally:
            context.close()
            attacker.shutdown()
            attacker.server_close()
        records = [frame for frame in result["frames"] if frame.get("type") == "observation"]
        assert not records, "the foreign page played an episode"
        assert result["frames"][0]["data"]["code"] == "FORBIDDEN_ORIGIN" and result["code"] == 4403, result
        assert result["upload"] == "sent"  # the browser sent it (no preflight for a simple request) ...
        assert len(app.state.playground.runs) == 0  # ... and nothing was stored


def test_an_empty_turn_is_refused_in_the_page_and_a_phone_sees_each_result(browser, server) -> None:
    """"Send turn" with nothing added (and a filled tool form that was not added) or an empty raw box: a
    message in the page, no request, no turn spent. On a phone, each turn's result is scrolled into view."""
    context = browser.new_context(viewport={"width": WIDTHS[1], "height": 700})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    steps: list[str] = []
    page.on("request", lambda r: steps.append(r.url) if r.url.endswith("/step") else None)
    try:
        episode = server.playground.episodes.get(reset(page, server, "CART", 2, 5))
        page.click("#send")
        assert "empty turn" in page.inner_text("#error")
        page.select_option("#tool", "catalog_search")
        page.fill('input[name="query"]', "lamp")
        page.click("#send")
        assert "catalog_search form is filled in but not added" in page.inner_text("#error")
        page.click("#raw-box summary")
        page.click("#send-raw")
        assert "raw box is empty" in page.inner_text("#error")
        assert not steps and episode.env.session.turns == 0
        for _ in range(3):
            page.click("#add-call")  # the search form, as filled in
            with page.expect_response(lambda r: r.url.endswith("/step")):
                page.click("#send")
            page.wait_for_function("document.querySelectorAll('#chat .msg.tool').length > 0")
            if episode.env.done:
                break
            latest = page.locator("#chat > :last-child").bounding_box()
            assert latest is not None and 0 <= latest["y"] + latest["height"] <= 700 + 1, latest
            page.fill('input[name="query"]', "lamp")
        assert page.is_hidden("#error") and len(steps) >= 1
    finally:
        context.close()
