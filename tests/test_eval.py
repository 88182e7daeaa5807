"""Evaluation runs: pass^k and intervals on hand-made outcomes, resuming after an interruption
(no finished episode redone), torn JSONL lines, adaptive runs, and refusing to mix two runs.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecomrlve.difficulty.scheduler import SchedulerConfig
from ecomrlve.evaluation import (
    EvalConfigMismatch,
    EvalSpec,
    Evaluation,
    pass_hat_k,
    read_records,
    wilson_interval,
)
from ecomrlve.runner import agent_factory

T, F = True, False


def test_pass_hat_k_on_hand_made_outcomes():
    # task A: 3 of 4 succeed, task B: none, task C: all 4. By hand, per task C(c,k)/C(n,k):
    # k=1: 3/4, 0, 1 -> 7/12;  k=2: 3/6, 0, 1 -> 1/2;  k=3: 1/4, 0, 1 -> 5/12;  k=4: 0, 0, 1 -> 1/3.
    tasks = [[T, T, F, T], [F, F, F, F], [T, T, T, T]]
    by_hand = {1: Fraction(7, 12), 2: Fraction(1, 2), 3: Fraction(5, 12), 4: Fraction(1, 3)}
    for k, expected in by_hand.items():
        assert pass_hat_k(tasks, k) == pytest.approx(float(expected))
    assert pass_hat_k(tasks, 5) is None  # no task has 5 trials
    # a task with fewer than k trials is left out: only B (0/2) and C (2/2) count for k = 2
    assert pass_hat_k([[T], [F, F], [T, T]], 2) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        pass_hat_k(tasks, 0)


@given(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=12))
def test_pass_hat_k_is_the_success_rate_at_one_and_never_grows_with_k(tasks):
    values = [pass_hat_k(tasks, k) for k in range(1, 5)]
    assert values[0] == pytest.approx(sum(map(sum, tasks)) / (4 * len(tasks)))
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(values))
    assert values[3] == pytest.approx(sum(all(t) for t in tasks) / len(tasks))  # k = n: every trial succeeds


@given(st.integers(0, 200), st.integers(1, 200))
def test_wilson_interval_contains_the_estimate_and_stays_in_bounds(successes, n):
    successes = min(successes, n)
    low, high = wilson_interval(successes, n)
    assert 0 <= low <= successes / n <= high <= 1
    # Wilson's interval is where |p - p_hat| <= z * sqrt(p (1 - p) / n): both ends solve it with equality
    for p in (low, high):
        if 0 < p < 1:
            assert abs(p - successes / n) == pytest.approx(1.959963984540054 * (p * (1 - p) / n) ** 0.5, rel=1e-6)


class Interrupt(Exception):
    """Stands for Ctrl-C or a crash in the middle of a run."""


def run(evaluation: Evaluation, agent: str = "heuristic", *, stop_after: int | None = None,
        concurrency: int = 3) -> None:
    make = agent_factory(agent)
    started = 0

    def factory(env, task, trial):
        nonlocal started
        started += 1
        if stop_after is not None and started > stop_after:
            raise Interrupt
        return make(env, task, trial)

    asyncio.run(evaluation.run(factory, concurrency=concurrency))


def spec(**changes) -> EvalSpec:
    fields = {"env_ids": ("CART",), "difficulties": (0, 2), "tasks": 3, "trials": 2, "catalog": "synthetic:3000"}
    return EvalSpec(**(fields | changes))


def test_an_interrupted_run_resumes_without_redoing_finished_episodes(tmp_path, catalog, search, monkeypatch):
    monkeypatch.setenv("ECOMRLVE_SECRET", "eval-test")  # the clean run below must play the same episodes
    first = Evaluation(spec(), tmp_path, catalog=catalog, search=search)
    with pytest.raises(Interrupt):
        run(first, stop_after=5)
    lines_before = (tmp_path / "episodes.jsonl").read_text()
    finished = read_records(tmp_path / "episodes.jsonl")
    assert len(finished) == 5

    monkeypatch.delenv("ECOMRLVE_SECRET")  # a resume reads the directory's own secret
    resumed = Evaluation(spec(), tmp_path, catalog=catalog, search=search)
    assert resumed.secret == "eval-test"
    assert len(resumed.pending()) == 12 - 5
    assert not {(t.slot, trial) for t, trial in resumed.pending()} & {(r.run["slot"], r.run["trial"]) for r in finished}
    played = []
    resumed_factory = agent_factory("heuristic")

    def counting(env, task, trial):
        played.append((task.slot, trial))
        return resumed_factory(env, task, trial)

    asyncio.run(resumed.run(counting, concurrency=2))
    assert len(played) == 7 and resumed.complete
    text = (tmp_path / "episodes.jsonl").read_text()
    assert text.startswith(lines_before)
    records = read_records(tmp_path / "episodes.jsonl")
    keys = [(r.run["slot"], r.run["trial"]) for r in records]
    assert len(keys) == len(set(keys)) == 12

    monkeypatch.setenv("ECOMRLVE_SECRET", "eval-test")
    uninterrupted = Evaluation(spec(), tmp_path / "clean", catalog=catalog, search=search)
    run(uninterrupted)
    clean = {(r.run["slot"], r.run["trial"]): r for r in uninterrupted.records}
    for record in records:  # resuming changes nothing about the episodes themselves
        assert record.model_dump(exclude={"run"}) == clean[(record.run["slot"], record.run["trial"])].model_dump(
            exclude={"run"})


def test_a_torn_last_line_is_dropped_and_replayed(tmp_path, catalog, search):
    evaluation = Evaluation(spec(difficulties=(0,), tasks=2), tmp_path, catalog=catalog, search=search)
    run(evaluation)
    path = tmp_path / "episodes.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # the process died mid-write
    resumed = Evaluation(spec(difficulties=(0,), tasks=2), tmp_path, catalog=catalog, search=search)
    assert len(resumed.records) == len(lines) - 1 and len(resumed.pending()) == 1
    run(resumed)
    assert path.read_text().splitlines()[:-1] == [line.rstrip("\n") for line in lines[:-1]]
    assert json.loads(path.read_text().splitlines()[-1])["seed"] == json.loads(lines[-1])["seed"]

    path.write_text("not a record\n" + path.read_text())
    with pytest.raises(ValueError, match="episodes.jsonl:1 is not an episode record"):
        Evaluation(spec(difficulties=(0,), tasks=2), tmp_path, catalog=catalog, search=search)


def adaptive_spec() -> EvalSpec:
    return spec(difficulties=None, tasks=12, trials=1, agent="oracle",
                scheduler=SchedulerConfig(tau_acc=0.5, tau_num=2, d_delta=2))


def test_adaptive_runs_climb_record_the_window_and_resume_to_the_same_state(tmp_path, catalog, search, monkeypatch):
    monkeypatch.setenv("ECOMRLVE_SECRET", "eval-test")  # both directories play the same episodes
    whole = Evaluation(adaptive_spec(), tmp_path / "whole", catalog=catalog, search=search)
    run(whole, "oracle", concurrency=1)
    windows = [r.run["window"] for r in whole.records]
    assert windows[-1][1] > 0  # the oracle is always right, so the window moves up
    assert all(r.difficulty <= high for r, (_, high) in zip(whole.records, windows))

    parts = Evaluation(adaptive_spec(), tmp_path / "parts", catalog=catalog, search=search)
    with pytest.raises(Interrupt):
        run(parts, "oracle", stop_after=5, concurrency=1)
    resumed = Evaluation(adaptive_spec(), tmp_path / "parts", catalog=catalog, search=search)
    assert resumed.scheduler.state_dict() == parts.scheduler.state_dict()  # rebuilt from the records alone
    run(resumed, "oracle", concurrency=1)
    assert resumed.scheduler.state_dict() == whole.scheduler.state_dict()
    assert [r.to_json() for r in resumed.records] == [r.to_json() for r in whole.records]


def test_resuming_a_different_evaluation_is_refused(tmp_path, catalog, search):
    Evaluation(spec(), tmp_path, catalog=catalog, search=search)
    with pytest.raises(EvalConfigMismatch, match=r"trials: 2 -> 3"):
        Evaluation(spec(trials=3), tmp_path, catalog=catalog, search=search)
    assert json.loads((Path(tmp_path) / "eval_config.json").read_text())["trials"] == 2


@pytest.mark.slow
def test_a_run_that_finished_no_episode_leaves_nothing_that_blocks_a_retry(tmp_path):
    """`eval` naming a model the endpoint does not serve: one line, exit 2, no directory left; the retry with
    the right model in the same --out needs no --overwrite (in a directory that existed, only its files go)."""
    pytest.importorskip("openai")
    from chat_server import MODEL, ChatServer, HeuristicPolicy
    from typer.testing import CliRunner

    from ecomrlve.cli import app

    server = ChatServer(HeuristicPolicy())
    try:
        def invoke(out: Path, model: str):
            return CliRunner().invoke(app, ["eval", "--env", "CART", "--catalog", "synthetic:450", "--agent", "openai",
                                            "--difficulty", "0", "--tasks", "1", "--max-retries", "0", "--model", model,
                                            "--base-url", server.base_url, "--out", str(out)])

        fresh, existing = tmp_path / "fresh", tmp_path / "existing"
        existing.mkdir()
        (existing / "notes.txt").write_text("mine")
        for out in (fresh, existing):
            typo = invoke(out, "qwen-typo")
            assert typo.exit_code == 2 and "model 'qwen-typo' is not served" in typo.stderr
            assert "nothing of this run was kept" in typo.stderr and len(typo.stderr.splitlines()) == 1
            assert sorted(p.name for p in out.iterdir()) == ["notes.txt"] if out is existing else not out.exists()
            retry = invoke(out, MODEL)
            assert retry.exit_code == 0, retry.output
            assert len(read_records(out / "episodes.jsonl")) == 1
    finally:
        server.close()
