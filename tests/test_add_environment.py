"""Adding an environment: one folder and one registration line, nothing under src/ touched.

``examples/ecomrlve_price`` is a package of its own that adds PRICE (a price quote for some units of
a product) the way a third party would: its own tool (``price_quote``), its own difficulty axis
(``quote_units``), its own task state (``PriceState``) and a JOURNEY role, registered by one entry
point in its ``pyproject.toml``. These tests play it in-process (registered through the same
entry-point path ``ecomrlve`` follows at start-up), and once in a fresh process where the package is
only discovered, as an installed one would be.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import tomllib
from exploits import oracle_failure, play, play_oracle
from typer.testing import CliRunner

from ecomrlve.actions import AgentAction
from ecomrlve.cli import app
from ecomrlve.difficulty import Axis, Difficulty, every_axis
from ecomrlve.envs import env_collections, environment_tools, get_environment, resolve_env_ids
from ecomrlve.envs.journey.heuristic import classify_request
from ecomrlve.episode import EcomEnv
from ecomrlve.registry import PLUGIN_GROUP, EnvSpec, env_spec, register, register_plugin, unregister
from ecomrlve.runner import play as play_agent

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "ecomrlve_price"
ENV_ID = "PRICE"
ENTRY_POINT = importlib.metadata.EntryPoint(name=ENV_ID, value="ecomrlve_price:SPEC", group=PLUGIN_GROUP)

sys.path.insert(0, str(EXAMPLE))


@pytest.fixture(scope="module", autouse=True)
def registered():
    """PRICE exists for this module's tests only; the built-in collections and axes come back unchanged."""
    before, axes = env_collections(), every_axis()
    assert register_plugin(ENTRY_POINT) == (env_spec(ENV_ID),)
    yield env_spec(ENV_ID)
    unregister(ENV_ID)
    assert env_collections() == before and every_axis() == axes
    assert "quote_units" not in Difficulty.at(4).as_dict()


def test_the_environment_is_one_folder_and_one_registration_line() -> None:
    """The files an environment of built-in quality needs: six modules in one folder, and one entry point."""
    files = sorted(str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert files == ["ecomrlve_price/__init__.py", "ecomrlve_price/acts.py", "ecomrlve_price/family.py",
                     "ecomrlve_price/heuristic.py", "ecomrlve_price/phrasings.py", "ecomrlve_price/tool.py",
                     "pyproject.toml"]
    entry_points = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]["entry-points"]
    assert entry_points == {PLUGIN_GROUP: {ENV_ID: "ecomrlve_price:SPEC"}}
    for path in (REPO / "src").rglob("*.py"):  # the package knows nothing of it
        text = path.read_text(encoding="utf-8")
        for name in ("ecomrlve_price", "price_quote", "quote_units", "PriceFamily"):
            assert name not in text, f"{path} names {name}"


def test_registration_adds_it_to_c8_only() -> None:
    members = env_collections()
    assert members["C8"][-1] == ENV_ID and ENV_ID not in members["C4"]
    assert resolve_env_ids("PRICE,CART") == ("PRICE", "CART")
    spec = json.loads(json.dumps(env_spec(ENV_ID).to_json()))
    assert spec["entry_point"].endswith(":PriceFamily") and spec["new_axes"][0]["name"] == "quote_units"


def _run(tmp_path: Path, agent: str, *extra: str) -> list[dict[str, Any]]:
    out = tmp_path / f"{agent}.jsonl"
    result = CliRunner().invoke(app, ["run", "--env", ENV_ID, "--agent", agent, "--episodes", "3",
                                      "--difficulty", "0-15", "--catalog", "synthetic:1000", "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 48 and {r["env_id"] for r in records} == {ENV_ID}
    return records


def test_oracle_heuristic_and_random_through_the_cli(tmp_path: Path) -> None:
    """`ecomrlve run` plays it: the oracle scores 1 everywhere, its heuristic (which reads the shopper
    and asks for a missing number of units) is right, random play is not."""
    for agent in ("oracle", "heuristic"):
        for record in _run(tmp_path, agent):
            reward = record["reward"]
            assert reward["r_task"] == 1.0 and reward["is_correct"] and reward["r_total"] > 0.5, (agent, reward)
    rewards = [record["reward"] for record in _run(tmp_path, "random")]
    assert sum(r["r_total"] for r in rewards) / len(rewards) <= -0.5
    assert sum(r["is_correct"] for r in rewards) <= len(rewards) // 10


def test_it_passes_the_checks_every_environment_gets(catalog, search) -> None:
    """The registry-wide checks on PRICE: oracle full marks, silence earns nothing, same key same record."""
    env = EcomEnv(ENV_ID, catalog=catalog, search=search)
    for d in range(16):
        assert oracle_failure(play_oracle(env, difficulty=d, seed=d, env_id=ENV_ID)) is None, d
    silent = play(env, lambda e: _Silent(), difficulty=5, seed=1, env_id=ENV_ID)
    assert silent.reward["r_total"] <= 0.0
    records = []
    for _ in range(2):
        fresh = EcomEnv(ENV_ID, catalog=catalog, search=search)
        play_oracle(fresh, difficulty=9, seed=3, env_id=ENV_ID)
        records.append(fresh.record.to_json())
    assert records[0] == records[1]


class _Silent:
    def act(self, observation) -> AgentAction:
        return AgentAction(message="One moment.")


def test_its_own_axis_is_part_of_every_difficulty(tmp_path: Path) -> None:
    """``quote_units`` is read like a built-in axis, overridable, shown by `ecomrlve difficulty`, recorded
    after the built-in axes (which keep their order), and sets how many units the shopper wants."""
    assert [Difficulty.at(d).quote_units for d in (0, 4, 15)] == [1, 2, 4]
    assert Difficulty.at(3, {"quote_units": 7}).quote_units == 7
    axes = list(Difficulty.at(3).as_dict())
    assert axes[-1] == "quote_units" and axes[:-1] == ["d", *(a.name for a in every_axis()[:-1])]
    records = _run(tmp_path, "oracle", "--override", "quote_units=3")
    assert {r["goal"]["units"] for r in records} == {3} and {r["axes"]["quote_units"] for r in records} == {3}
    shown = CliRunner().invoke(app, ["difficulty", "--levels", "0-4"])
    assert shown.exit_code == 0 and re.search(r"quote_units\s*│\s*1 \+", shown.output), shown.output
    with pytest.raises(ValueError, match="already exists"):
        register(EnvSpec(id="TWICE", entry_point="x:Y", new_axes=(Axis("quote_units", "1", "again", lambda d: 1),)))


def test_its_own_tool_is_offered_by_it_alone(catalog, search) -> None:
    observation = EcomEnv(ENV_ID, catalog=catalog, search=search).reset(env_id=ENV_ID, difficulty=2, seed=0)
    names = [tool["function"]["name"] for tool in observation.tools]
    assert names == ["price_quote", "answer"]
    schema = observation.tools[0]["function"]
    assert schema["parameters"]["required"] == ["product_id", "units"] and "10% off" in schema["description"]
    assert "price_quote" not in environment_tools("CART")
    shadow = EnvSpec(id="SHADOW", entry_point="ecomrlve_price.family:PriceFamily", tools=("ecomrlve.tools:cart_view",))
    register(shadow)
    try:
        with pytest.raises(ValueError, match="name of a shared tool"):
            environment_tools("SHADOW")
    finally:
        unregister("SHADOW")


def test_its_task_state_follows_the_dialogue(catalog, search) -> None:
    """``PriceState.units_told``: set when the shopper says the number (a turn the shopper caused, once);
    asking again costs patience, not a free turn."""
    env = EcomEnv(ENV_ID, catalog=catalog, search=search)
    seed = next(s for s in range(100) if env.reset(env_id=ENV_ID, difficulty=12, seed=s) is not None
                and env.audit().problem.goal.units_withheld)
    env.reset(env_id=ENV_ID, difficulty=12, seed=seed)
    problem = env.audit().problem
    assert problem.state.units_told is False
    first = env.step(AgentAction(message="How many units would you like?"))
    assert problem.state.units_told is True and first.info["user_caused_turns"] == 1
    assert str(problem.goal.units) in first.messages[-1]["content"]
    patience = problem.user.patience
    again = env.step(AgentAction(message="Sorry, how many was that?"))
    assert again.info["user_caused_turns"] == 1 and problem.user.patience == patience - 1


def test_journey_draws_it_and_its_baselines_play_it(catalog, search) -> None:
    """With its JOURNEY role, journeys include PRICE requests and offer its tool; the JOURNEY oracle solves
    them, and the JOURNEY heuristic recognises a quote request from the role's keywords and plays PRICE's."""
    env = EcomEnv("JOURNEY", catalog=catalog, search=search)
    assert "price_quote" in get_environment("JOURNEY").tool_names
    with_price = 0
    for d in range(0, 16, 3):
        for seed in range(4):
            record = play_agent(env, "oracle", env_id="JOURNEY", difficulty=d, seed=seed)
            assert record.reward.is_correct, (d, seed, record.reward)
            if ENV_ID in [intent["env_id"] for intent in record.goal["intents"]]:
                with_price += 1
                heuristic = play_agent(env, "heuristic", env_id="JOURNEY", difficulty=d, seed=seed)
                calls = [c["function"]["name"] for m in heuristic.messages for c in m.get("tool_calls") or ()]
                assert "price_quote" in calls, heuristic.messages  # it told the request apart and played PRICE's
    assert with_price >= 5
    assert classify_request("Can you quote me 3 x the Voltly Air 1 dog bed (PAF4Y4K59)?") == ENV_ID


def _discoverable(tmp_path: Path) -> dict[str, str]:
    """An environment in which ``ecomrlve_price`` is an installed distribution (its metadata on the path)."""
    info = tmp_path / "site" / "ecomrlve_price-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ecomrlve-price\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[{PLUGIN_GROUP}]\n{ENV_ID} = ecomrlve_price:SPEC\n")
    paths = [str(REPO / "src"), str(EXAMPLE), str(info.parent)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


@pytest.mark.slow
def test_an_installed_package_is_discovered_by_its_entry_point(tmp_path: Path) -> None:
    """No wrapper script: a fresh `ecomrlve` process finds PRICE through the entry point and plays it."""
    env = _discoverable(tmp_path)
    out = tmp_path / "runs.jsonl"
    done = subprocess.run([sys.executable, "-m", "ecomrlve.cli", "run", "--env", ENV_ID, "--agent", "oracle",
                           "--episodes", "2", "--difficulty", "9", "--catalog", "synthetic:1000", "--out", str(out)],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["env_id"] for r in records] == [ENV_ID, ENV_ID] and all(r["reward"]["is_correct"] for r in records)
    assert all(r["axes"]["quote_units"] == 3 for r in records)


def test_a_broken_plugin_is_named_in_one_line(tmp_path: Path) -> None:
    env = _discoverable(tmp_path)
    entry_points = next((tmp_path / "site").glob("*.dist-info")) / "entry_points.txt"
    entry_points.write_text(f"[{PLUGIN_GROUP}]\nBROKEN = ecomrlve_price:NOT_THERE\n")
    done = subprocess.run([sys.executable, "-m", "ecomrlve.cli", "run", "--env", "CART", "--episodes", "1"],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["error: environment plugin 'BROKEN' (ecomrlve_price:NOT_THERE) failed to load: "
                                        "module 'ecomrlve_price' has no attribute 'NOT_THERE'"]


@pytest.mark.slow
def test_a_module_that_registers_on_import_still_works(tmp_path: Path) -> None:
    """ARCHITECTURE.md's other route, for code that is not an installed package: a launcher script that
    imports the registering module, then runs the `ecomrlve` command."""
    guide = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    launcher = next(block for block in re.findall(r"```python\n(.*?)```", guide, re.DOTALL) if "app()" in block)
    (tmp_path / "price_plugin.py").write_text(
        "from ecomrlve.registry import register\nfrom ecomrlve_price import SPEC\n\nregister(SPEC)\n")
    script = tmp_path / "launcher.py"
    script.write_text(textwrap.dedent(launcher).replace("mypkg.price", "price_plugin"))
    out = tmp_path / "runs.jsonl"
    paths = [str(REPO / "src"), str(EXAMPLE), str(tmp_path)]
    done = subprocess.run([sys.executable, str(script), "run", "--env", ENV_ID, "--agent", "oracle", "--episodes", "2",
                           "--catalog", "synthetic:1000", "--out", str(out)],
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["env_id"] for line in out.read_text().splitlines()] == [ENV_ID, ENV_ID]


def test_agent_heuristic_on_an_environment_without_one_is_one_line(registered) -> None:
    """The heuristic is optional: asking for it where the spec names none is a user mistake."""
    unregister(ENV_ID)
    register(dataclasses.replace(registered, heuristic=None))
    try:
        result = CliRunner().invoke(app, ["run", "--env", ENV_ID, "--agent", "heuristic", "--episodes", "1",
                                          "--catalog", "synthetic:1000"])
    finally:
        unregister(ENV_ID)
        register(registered)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --agent heuristic: {ENV_ID} has no heuristic baseline")
