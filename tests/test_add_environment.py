"""Adding an environment touches no file under src/: a tiny one, written and registered here.

PRICE: the shopper names a product by id and asks what it costs; the agent looks it up and
answers the price. Everything an environment brings is in this module: its dialogue act and
templates, its simulated shopper, the task family (generator and verifier), its oracle, and a
"heuristic" that is really an exploit (it answers without looking). One ``register`` call makes
it runnable by ``ecomrlve run``; the module fixture unregisters it so no other test sees it.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from exploits import oracle_failure, play, play_oracle
from pydantic import BaseModel, ConfigDict, Field
from typer.testing import CliRunner

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.cli import app
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs import Problem, TaskFamily, TaskOutcome, env_collections, resolve_env_ids
from ecomrlve.envs.base import TaskState
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import tool_results
from ecomrlve.registry import EnvSpec, register, unregister
from ecomrlve.user import acts as A
from ecomrlve.user.dialogue import SimulatedUser
from ecomrlve.user.realiser import ActTemplates, Realiser
from ecomrlve.world.state import World

ENV_ID = "PRICE"


# -- what the shopper says ------------------------------------------------------------------------

@dataclass(frozen=True)
class AskPrice:
    product_id: str


def _price_text(act: AskPrice, rng: random.Random) -> str:
    return rng.choice(["Hi, how much is {p}?", "What does {p} cost?", "Could you tell me the price of {p}?"]).format(
        p=act.product_id)


PRICE_TEMPLATES = ActTemplates(acts=AskPrice, text=_price_text, protected=lambda act: (act.product_id,))


@dataclass
class PriceShopper(SimulatedUser):
    """Asks once; acknowledges anything said; a question costs patience (everything was said)."""

    product_id: str = ""

    def opening(self) -> str:
        return self.say(AskPrice(self.product_id))

    def on_question(self, question: str, world: World) -> str:
        self.lose_patience()
        return self.say(A.Acknowledge())

    def on_turn_end(self, message: str | None, events: list[tuple[str, Any, dict]], world: World) -> str | None:
        return self.say(A.Acknowledge()) if message else None


# -- the task family ------------------------------------------------------------------------------

class PriceGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    product_id: str
    price: float


class PriceAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    price: float = Field(description="The product's price in dollars, as the store lists it.")


class PriceFamily(TaskFamily):
    env_id = ENV_ID
    version = 1
    tool_names = ("catalog_get_product",)
    answer_arguments = PriceAnswer
    instructions = "tell the shopper what the product they name costs: look it up, then call answer with its price."

    def generate(self, world: World, difficulty: Difficulty, rng: random.Random, realiser: Realiser) -> Problem:
        row = rng.randrange(len(world.catalog))
        goal = PriceGoal(product_id=world.catalog.product_id(row), price=world.catalog.price(row))
        user = PriceShopper(realiser=realiser, rng=random.Random(rng.getrandbits(64)), patience=2,
                            product_id=goal.product_id)
        return Problem(goal=goal, state=TaskState(), user=user, opening=user.opening(), difficulty=difficulty)

    def verify(self, goal: PriceGoal, state: TaskState, world: World, answer: BaseModel | None) -> TaskOutcome:
        correct = isinstance(answer, PriceAnswer) and abs(answer.price - goal.price) < 0.005
        return TaskOutcome(r_task=1.0 if correct else -1.0, is_correct=correct,
                           details={"answered": answer is not None})

    def oracle(self, problem: Problem) -> PriceOracle:
        return PriceOracle(problem.goal.product_id)  # type: ignore[attr-defined]


class PriceOracle:
    """Looks the product up, then answers the price the store shows."""

    def __init__(self, product_id: str) -> None:
        self.product_id = product_id

    def act(self, observation) -> AgentAction:
        for name, result in tool_results(observation):
            if name == "catalog_get_product":
                return AgentAction(tool_calls=(ToolCall(id="o1", name="answer", arguments={"price": result["price"]}),))
        return AgentAction(tool_calls=(
            ToolCall(id="o0", name="catalog_get_product", arguments={"product_id": self.product_id}),))


class GuessPrice:
    """The exploit registered as PRICE's heuristic: answers a plausible price without looking."""

    def act(self, observation) -> AgentAction:
        return AgentAction(tool_calls=(ToolCall(id="g0", name="answer", arguments={"price": 24.99}),))


SPEC = EnvSpec(id=ENV_ID, entry_point=f"{__name__}:PriceFamily", heuristic=f"{__name__}:GuessPrice",
               templates=f"{__name__}:PRICE_TEMPLATES")


@pytest.fixture(scope="module", autouse=True)
def registered():
    """PRICE exists for this module's tests only; the built-in collections come back unchanged."""
    before = env_collections()
    register(SPEC)
    yield
    unregister(ENV_ID)
    assert env_collections() == before


# -- the proof ------------------------------------------------------------------------------------

def test_registration_adds_it_to_c8_only() -> None:
    members = env_collections()
    assert members["C8"][-1] == ENV_ID and ENV_ID not in members["C4"]
    assert resolve_env_ids("PRICE,CART") == ("PRICE", "CART")
    assert json.loads(json.dumps(SPEC.to_json()))["entry_point"].endswith(":PriceFamily")


def _run(tmp_path: Path, agent: str) -> list[dict[str, Any]]:
    out = tmp_path / f"{agent}.jsonl"
    result = CliRunner().invoke(app, ["run", "--env", ENV_ID, "--agent", agent, "--episodes", "3",
                                      "--difficulty", "0-15", "--catalog", "synthetic:1000", "--out", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 48 and {r["env_id"] for r in records} == {ENV_ID}
    return records


def test_oracle_and_exploits_through_the_cli(tmp_path: Path) -> None:
    """`ecomrlve run` plays it: the oracle scores 1 everywhere; guessing and random play score low.

    A guessed price is sometimes some product's real price, so the guesser may be right by luck;
    it must stay rare and the mean reward clearly negative.
    """
    for record in _run(tmp_path, "oracle"):
        reward = record["reward"]
        assert reward["r_task"] == 1.0 and reward["is_correct"] and reward["r_total"] > 0.5, reward
    for agent in ("heuristic", "random"):
        rewards = [record["reward"] for record in _run(tmp_path, agent)]
        mean = sum(r["r_total"] for r in rewards) / len(rewards)
        lucky = sum(r["is_correct"] for r in rewards)
        assert mean <= -0.5 and lucky <= len(rewards) // 10, (agent, mean, lucky)


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


def test_the_documented_launcher_runs_it_from_the_command_line(tmp_path: Path) -> None:
    """ARCHITECTURE.md's route from a registering module to the `ecomrlve` command, run as written."""
    guide = (Path(__file__).parents[1] / "ARCHITECTURE.md").read_text(encoding="utf-8")
    launcher = next(block for block in re.findall(r"```python\n(.*?)```", guide, re.DOTALL) if "app()" in block)
    (tmp_path / "price_plugin.py").write_text(  # a package's module that registers on import
        "from ecomrlve.registry import register\nfrom test_add_environment import SPEC\n\nregister(SPEC)\n")
    script = tmp_path / "launcher.py"
    script.write_text(textwrap.dedent(launcher).replace("mypkg.price", "price_plugin"))
    out = tmp_path / "runs.jsonl"
    paths = [str(Path(__file__).parents[1] / "src"), str(Path(__file__).parent), str(tmp_path)]
    done = subprocess.run([sys.executable, str(script), "run", "--env", ENV_ID, "--agent", "oracle", "--episodes", "2",
                           "--catalog", "synthetic:1000", "--out", str(out)],
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["env_id"] for line in out.read_text().splitlines()] == [ENV_ID, ENV_ID]


def test_agent_heuristic_on_an_environment_without_one_is_one_line() -> None:
    """The heuristic is optional (step 4): asking for it where the spec names none is a user mistake."""
    unregister(ENV_ID)
    register(replace(SPEC, heuristic=None))
    try:
        result = CliRunner().invoke(app, ["run", "--env", ENV_ID, "--agent", "heuristic", "--episodes", "1",
                                          "--catalog", "synthetic:1000"])
    finally:
        unregister(ENV_ID)
        register(SPEC)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --agent heuristic: {ENV_ID} has no heuristic baseline")
