"""Collections C1 ⊂ C2 ⊂ C4 ⊂ C8, uniform sampling, and the main job with the adaptive scheduler."""

from __future__ import annotations

import asyncio
import collections
import json

import pytest
from typer.testing import CliRunner

from ecomrlve.cli import app
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig
from ecomrlve.envs import env_collections, resolve_env_ids
from ecomrlve.episode import EcomEnv
from ecomrlve.registry import env_specs
from ecomrlve.runner import Curriculum, Plan, RunLoop, agent_factory


def test_collections_are_nested_and_c8_is_every_environment():
    members = env_collections()
    c1, c2, c4, c8 = (set(members[c]) for c in ("C1", "C2", "C4", "C8"))
    assert c1 == {"CART"} and c2 == c1 | {"SUB"} and c4 == c2 | {"PD", "RETURN"}
    assert c8 == {spec.id for spec in env_specs()} and len(c8) == 8
    assert resolve_env_ids("C4") == members["C4"]
    assert members["C8"] == ("CART", "SUB", "PD", "RETURN", "STATUS", "POLICY", "BUNDLE", "JOURNEY")


def test_adaptive_plan_samples_environments_uniformly_and_reproducibly():
    plan = Plan(env_collections()["C8"], None, 4000, seed=7, draw_envs=True)
    assert len(list(plan)) == len(plan) == 4000
    counts = collections.Counter(task.env_id for task in plan)
    assert set(counts) == set(env_collections()["C8"])
    assert all(abs(n / 4000 - 1 / 8) < 0.025 for n in counts.values()), counts
    assert list(plan) == list(Plan(env_collections()["C8"], None, 4000, seed=7, draw_envs=True))
    assert list(plan) != list(Plan(env_collections()["C8"], None, 4000, seed=8, draw_envs=True))


def run_adaptive(catalog, search, agent: str, episodes: int) -> AdaptiveScheduler:
    env_ids = env_collections()["C8"]
    scheduler = AdaptiveScheduler(env_ids, SchedulerConfig(tau_acc=0.9, tau_num=2, d_delta=4))
    loop = RunLoop(lambda: EcomEnv(env_ids, catalog=catalog, search=search), Curriculum.sequential(scheduler, 1),
                   agent_factory(agent))
    asyncio.run(loop.run(((task, 0) for task in Plan(env_ids, None, episodes, seed=1, draw_envs=True)),
                         lambda *finished: None))
    return scheduler


def test_with_the_oracle_every_environment_is_promoted(catalog, search):
    windows = run_adaptive(catalog, search, "oracle", 120).windows()
    assert all(w.high >= 1 for w in windows.values()), windows


def test_with_the_random_agent_no_environment_is_promoted(catalog, search):
    windows = run_adaptive(catalog, search, "random", 120).windows()
    assert all(w.high == 0 for w in windows.values()), windows


@pytest.mark.parametrize("agent", ["oracle", "heuristic"])
def test_main_job_runs_the_whole_suite(tmp_path, agent):
    """The Quickstart's first command, on a small catalog: every environment, adaptive windows."""
    summary = tmp_path / "summary.json"
    result = CliRunner().invoke(app, [
        "run", "--collection", "C8", "--agent", agent, "--episodes", "40", "--difficulty", "adaptive",
        "--catalog", "synthetic:2000", "--tau-num", "2", "--summary-json", str(summary),
    ])
    assert result.exit_code == 0, result.output
    payload = json.loads(summary.read_text())
    assert set(payload["results"]) == set(env_collections()["C8"])
    assert set(payload["scheduler"]["windows"]) == set(env_collections()["C8"])
    assert "Adaptive difficulty windows" in result.output
