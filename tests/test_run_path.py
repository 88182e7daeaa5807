"""The one run path: `run` and `eval` play the same tasks through one plan, curriculum and loop."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from ecomrlve.cli import app
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig
from ecomrlve.episode import EcomEnv
from ecomrlve.runner import Curriculum, Plan, RunLoop, Task, agent_factory, summarise


def _episodes(lines: list[str]) -> dict[tuple[str, int, int], dict]:
    records = [json.loads(line) for line in lines if line.strip()]
    return {(r["env_id"], r["difficulty"], r["seed"]): {**r, "run": None} for r in records}


def test_run_and_eval_play_the_same_episodes(tmp_path) -> None:
    """Fixed difficulties: both commands plan the same tasks with the same seeds and record the same episodes."""
    common = ["--env", "CART,PD", "--agent", "oracle", "--difficulty", "1-2", "--catalog", "synthetic:2000"]
    runner = CliRunner()
    result = runner.invoke(app, ["run", *common, "--episodes", "2", "--out", str(tmp_path / "run.jsonl")])
    assert result.exit_code == 0, result.output
    # eval phrases with the held-out half by default; the same half makes the same episodes
    result = runner.invoke(app, ["eval", *common, "--tasks", "2", "--phrasing", "train", "--out", str(tmp_path / "eval")])
    assert result.exit_code == 0, result.output
    run = _episodes((tmp_path / "run.jsonl").read_text().splitlines())
    evaluated = _episodes((tmp_path / "eval" / "episodes.jsonl").read_text().splitlines())
    assert len(run) == 8 and run == evaluated


def test_plans_list_their_tasks_once_in_order() -> None:
    fixed = list(Plan(("CART", "PD"), (0, 3), 2, seed=5))
    assert [(t.env_id, t.difficulty, t.index) for t in fixed] == [
        (e, d, i) for e in ("CART", "PD") for d in (0, 3) for i in range(2)]
    per_env = list(Plan(("CART", "PD"), None, 3, seed=5))
    assert [(t.env_id, t.index) for t in per_env] == [(e, i) for i in range(3) for e in ("CART", "PD")]
    drawn = list(Plan(("CART", "PD"), None, 30, seed=5, draw_envs=True))
    assert len(drawn) == 30 and {t.env_id for t in drawn} == {"CART", "PD"}
    for plan in (fixed, per_env, drawn):
        assert len({t.slot for t in plan}) == len(plan)  # one slot per task
    assert {t.seed for t in fixed}.isdisjoint({t.seed for t in per_env})  # adaptive tasks have their own seeds


def test_curriculum_keeps_a_tasks_difficulty_and_observes_each_episode_once(catalog, search) -> None:
    """Every trial of an adaptive task plays the same d; the scheduler counts each finished episode once."""
    scheduler = AdaptiveScheduler(("CART",), SchedulerConfig(tau_acc=0.5, tau_num=2, d_delta=3))
    curriculum = Curriculum.per_task(scheduler, seed=3)
    loop = RunLoop(lambda: EcomEnv("CART", catalog=catalog, search=search), curriculum, agent_factory("oracle"))
    finished: list[tuple[Task, int, int]] = []
    jobs = [(task, trial) for task in Plan(("CART",), None, 6, seed=3) for trial in range(2)]
    asyncio.run(loop.run(jobs, lambda task, trial, record, agent: finished.append((task, trial, record.difficulty)),
                         concurrency=3))
    assert sorted((t.slot, trial) for t, trial, _ in finished) == sorted((t.slot, trial) for t, trial in jobs)
    by_slot: dict[str, set[int]] = {}
    for task, _, d in finished:
        by_slot.setdefault(task.slot, set()).add(d)
    assert all(len(ds) == 1 for ds in by_slot.values()), by_slot
    assert scheduler.window("CART").high >= 2, "the oracle is promoted: outcomes reached the scheduler"
    # replaying the observations in finishing order rebuilds the same scheduler
    again = Curriculum.per_task(AdaptiveScheduler(("CART",), scheduler.config), seed=3)
    assert again.scheduler is not None
    env = EcomEnv("CART", catalog=catalog, search=search)
    for task, _, d in finished:
        again.observe(task, _oracle_record(env, task, d))
    assert again.scheduler.state_dict() == scheduler.state_dict()


def _oracle_record(env: EcomEnv, task: Task, d: int):
    observation = env.reset(env_id=task.env_id, difficulty=d, seed=task.seed)
    agent = env.audit().oracle()
    while not observation.done:
        observation = env.step(agent.act(observation))
    return env.record


def test_a_curriculum_without_scheduler_only_takes_fixed_tasks() -> None:
    assert Curriculum().difficulty(Task("CART", 4, 0, 1)) == 4
    with pytest.raises(ValueError):
        Curriculum().difficulty(Task("CART", None, 0, 1))
    with pytest.raises(ValueError):
        Curriculum(AdaptiveScheduler(("CART",)))  # an adaptive curriculum needs a random stream


def test_summary_means_per_env_and_difficulty(catalog, search) -> None:
    env = EcomEnv("CART", catalog=catalog, search=search)
    records = [_oracle_record(env, Task("CART", d, i, i), d) for d in (0, 1) for i in range(2)]
    summary = summarise(records)
    assert list(summary) == ["CART"] and list(summary["CART"]) == ["0", "1"]
    for d in (0, 1):
        rewards = [r.reward for r in records if r.difficulty == d]
        row = summary["CART"][str(d)]
        assert row["episodes"] == 2 and row["success_rate"] == 1.0
        assert row["r_total"] == round(sum(r.r_total for r in rewards) / 2, 4)
        assert row["turns"] == sum(r.turns for r in rewards) / 2
