"""Screenshots of the playground for docs/playground.md: a CART episode mid-play and the run viewer, at a
desktop (1280 px) and a phone (390 px) width, taken with the system Chromium.

    python scripts/playground_screenshots.py --out docs

Needs the ``playground`` extra, Playwright for Python and Debian ``chromium``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from ecomrlve.catalog.synthetic import default_catalog
from ecomrlve.episode import EcomEnv
from ecomrlve.playground import create_playground_app
from ecomrlve.playground.command import serve_in_thread

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SECRET = "readme-screenshots"


def runs_file(path: Path) -> None:
    """A few oracle and malformed episodes over CART and PD, so the viewer has something to show."""
    env = EcomEnv(["CART", "PD"], secret=SECRET)
    lines = []
    for i, (env_id, d) in enumerate([(e, d) for e in ("CART", "PD") for d in (0, 2, 4) for _ in range(3)]):
        observation = env.reset(env_id=env_id, difficulty=d, seed=i)
        oracle = env.audit().oracle()
        agent = "oracle"
        if i % 4 == 3:  # a broken agent's turn, for the viewer's failures
            env.step("<tool_call>{")
            agent = "malformed"
        for _ in range(40):
            if observation.done or env.done:
                break
            observation = env.step(oracle.act(observation))
        lines.append(env.record.model_copy(update={"run": {"agent": agent}}).to_json())
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    catalog = default_catalog()
    app = create_playground_app({catalog.name: catalog}, secret=SECRET)
    folder = tempfile.TemporaryDirectory()
    runs = Path(folder.name) / "runs.jsonl"
    runs_file(runs)
    with folder, serve_in_thread(app) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        for width, name in ((1280, "desktop"), (390, "phone")):
            page = browser.new_page(viewport={"width": width, "height": 1000 if width > 400 else 1400})
            page.goto(url + "/")
            page.select_option("#env", "CART")
            page.fill("#difficulty", "6")
            page.fill("#seed", "3")
            page.click("#reset")
            page.wait_for_selector("#game:not([hidden])")
            handle = page.get_attribute("#game", "data-episode")
            episode = app.state.playground.episodes.get(handle)
            page.click("#raw-box summary")
            page.fill("#raw", json.dumps(episode.hint()))  # the oracle's first turn: searches and a question
            page.click("#send-raw")
            page.wait_for_selector("#chat .msg.tool")
            page.click("#show-me")
            page.wait_for_selector("#hint:not([hidden])")
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(args.out / f"playground-{name}.png"), full_page=width < 400)
            page.goto(url + "/runs")
            with page.expect_navigation():
                page.set_input_files("#runs-file", str(runs))
            page.screenshot(path=str(args.out / f"run-viewer-{name}.png"), full_page=width < 400)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
