"""Ray scale-out on a local Ray (one per module: ``ray.init`` costs seconds, and each pool's workers load
the catalog and compile the search kernels, so the tests start few pools): the pool gives the same
records as a single process for the same plan, and its curriculum actor is the run's one curriculum.

Fixed difficulties (``run --ray`` and ``eval --ray``): identical record files, in the same order.
Adaptive: one worker reproduces the single-process run (records and scheduler checkpoint); with two,
every record still replays exactly and the driver's curriculum ends holding every task's difficulty.
A worker killed mid-run is replaced: every record is delivered once and counted once.
"""

from __future__ import annotations

import asyncio
import os

import pytest

ray = pytest.importorskip("ray")

from conftest import CATALOG_SEED, CATALOG_SIZE  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from ecomrlve.cli import app  # noqa: E402
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig  # noqa: E402
from ecomrlve.episode import EcomEnv  # noqa: E402
from ecomrlve.integrations.ray import EnvRecipe, RayPool  # noqa: E402
from ecomrlve.runner import Curriculum, Plan, agent_factory, replay  # noqa: E402
from ecomrlve.session import EpisodeRecord  # noqa: E402

CATALOG = f"synthetic:{CATALOG_SIZE}:{CATALOG_SEED}"
SECRET = os.environ["ECOMRLVE_SECRET"]  # conftest sets it; the CLI runs read it too
ENV_IDS = ("CART", "STATUS")
CONFIG = SchedulerConfig(tau_acc=0.5, tau_num=2)  # windows move within a few episodes


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    if ray.is_initialized():  # another module's Ray in this test worker: start the two-CPU one these tests expect
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def play(loop, plan: Plan) -> list[EpisodeRecord]:
    records: list[EpisodeRecord] = []
    asyncio.run(loop.run(((task, 0) for task in plan), lambda task, trial, record, agent: records.append(record)))
    return records


def on_ray(curriculum: Curriculum, plan: Plan, agent: str, workers: int) -> list[EpisodeRecord]:
    pool = RayPool(EnvRecipe(ENV_IDS, CATALOG, secret=SECRET), curriculum, agent_factory(agent), workers=workers,
                   cpus_per_worker=0.5)  # leave a CPU free, as on a shared machine
    return play(pool, plan)


def adaptive(seed: int) -> Curriculum:
    return Curriculum.sequential(AdaptiveScheduler(ENV_IDS, CONFIG), seed)


@pytest.mark.slow
def test_adaptive_with_two_workers_feeds_one_scheduler_and_replays(catalog) -> None:
    plan = Plan(ENV_IDS, None, 8, seed=5, draw_envs=True)
    curriculum = adaptive(5)
    records = on_ray(curriculum, plan, "oracle", workers=2)
    assert [(r.env_id, r.seed) for r in records] == [(t.env_id, t.seed) for t in plan]
    assert [curriculum.difficulty(task) for task in plan] == [r.difficulty for r in records]
    windows = curriculum.scheduler.windows()  # the actor's, copied back: every outcome reached it
    assert all(record.difficulty <= windows[record.env_id].high for record in records)
    assert sum(w.high for w in windows.values()) >= 1
    env = EcomEnv(ENV_IDS, catalog=catalog, secret=SECRET)
    assert all(replay(env, record).to_json() == record.to_json() for record in records)


class CountingScheduler(AdaptiveScheduler):
    """Every outcome the curriculum counts, in order."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.counted: list[tuple[str, int, bool]] = []

    def update(self, env_id: str, difficulty: int, is_correct: bool) -> bool:
        self.counted.append((env_id, difficulty, is_correct))
        return super().update(env_id, difficulty, is_correct)


@pytest.mark.slow
def test_a_killed_worker_is_replaced_and_every_outcome_counts_once(catalog, tmp_path) -> None:
    """A worker is ``ray.kill``-ed while it plays the fourth task: the run goes on, every record arrives once in plan
    order, and the curriculum counted exactly the delivered outcomes, in delivery order (it used to stop with
    ActorDiedError, having counted outcomes whose records never arrived)."""
    plan = Plan(ENV_IDS, None, 10, seed=3, draw_envs=True)
    doomed, marker = list(plan)[3], tmp_path / "killed"
    oracle = agent_factory("oracle")

    def agent_then_kill(env, task, trial):
        if task == doomed and not marker.exists():  # the first attempt only: its replacement plays it through
            marker.touch()
            ray.kill(ray.get_runtime_context().current_actor)
        return oracle(env, task, trial)

    scheduler = CountingScheduler(ENV_IDS, CONFIG)
    pool = RayPool(EnvRecipe(ENV_IDS, CATALOG, secret=SECRET), Curriculum.sequential(scheduler, 3), agent_then_kill,
                   workers=2, cpus_per_worker=0.5)
    records: list[EpisodeRecord] = []
    asyncio.run(asyncio.wait_for(pool.run(((task, 0) for task in plan), lambda *args: records.append(args[2])),
                                 timeout=300))
    assert marker.exists() and pool.restarts == 1
    assert [(r.env_id, r.seed) for r in records] == [(t.env_id, t.seed) for t in plan]
    assert scheduler.counted == [(r.env_id, r.difficulty, r.reward.is_correct) for r in records]
    env = EcomEnv(ENV_IDS, catalog=catalog, secret=SECRET)
    assert all(replay(env, record).to_json() == record.to_json() for record in records)


def test_an_error_in_a_worker_stops_the_run() -> None:
    plan = Plan(("CART",), (0,), 3, seed=0)
    delivered: list[EpisodeRecord] = []
    pool = RayPool(EnvRecipe(("CART",), CATALOG, secret=SECRET), Curriculum(), agent_factory("nobody"), workers=1,
                   cpus_per_worker=0.5)
    with pytest.raises(ray.exceptions.RayTaskError, match="unknown agent"):
        asyncio.run(pool.run(((t, 0) for t in plan), lambda *args: delivered.append(args[2])))
    assert delivered == []


@pytest.mark.parametrize(("command", "workers"), [
    (["run", "--env", "CART,STATUS", "--difficulty", "2-3", "--episodes", "2", "--agent", "heuristic"], "2"),
    (["eval", "--env", "CART", "--difficulty", "1-2", "--tasks", "2", "--trials", "2", "--agent", "oracle"], "2"),
    (["run", "--env", "CART,STATUS", "--difficulty", "adaptive", "--episodes", "8", "--agent", "oracle",
      "--tau-num", "2", "--tau-acc", "0.5"], "1"),
], ids=["run-fixed", "eval-fixed", "run-adaptive-one-worker"])
@pytest.mark.slow
def test_cli_ray_writes_the_same_records_as_one_process(tmp_path, command: list[str], workers: str) -> None:
    """Same records file; for the adaptive run also the same scheduler checkpoint (the actor writes it)."""
    runner = CliRunner()
    outputs = []
    for name, extra in (("local", []), ("ray", ["--ray", "--workers", workers])):
        out = tmp_path / name
        if command[0] == "run":
            path, flags = out.with_suffix(".jsonl"), ["--out", str(out.with_suffix(".jsonl")),
                                                      "--scheduler-state", str(out.with_suffix(".state.json"))]
        else:
            path, flags = out / "episodes.jsonl", ["--out", str(out)]
        result = runner.invoke(app, [*command, "--catalog", CATALOG, *flags, *extra])
        assert result.exit_code == 0, result.output
        state = out.with_suffix(".state.json")
        outputs.append((path.read_text(), state.read_text() if state.exists() else None))
    assert outputs[0] == outputs[1] and outputs[0][0].count("\n") == 8
    assert (outputs[0][1] is not None) == ("adaptive" in command)


def test_eval_ray_refuses_a_model() -> None:
    result = CliRunner().invoke(app, ["eval", "--out", "unused", "--agent", "openai", "--model", "m", "--ray"])
    assert result.exit_code == 2 and "--ray plays built-in agents" in result.output


def test_the_recipe_fixes_one_secret_in_the_driver(monkeypatch, tmp_path) -> None:
    """Without one, each worker (on another machine: another installation) would use its own secret and the
    run's records would not replay together: the recipe carries the driver's."""
    from ecomrlve.session import CONFIG_DIR_ENV_VAR, installation_secret

    monkeypatch.delenv("ECOMRLVE_SECRET")
    monkeypatch.setenv(CONFIG_DIR_ENV_VAR, str(tmp_path))
    assert EnvRecipe(ENV_IDS).secret == installation_secret() == (tmp_path / "secret").read_text().strip()
    monkeypatch.setenv("ECOMRLVE_SECRET", "from-the-driver")
    assert EnvRecipe(ENV_IDS).secret == "from-the-driver"


@pytest.mark.slow
def test_more_workers_than_the_cluster_has_cpus_share_them_out() -> None:
    """Three one-CPU workers on a two-CPU Ray: each is given two thirds of a CPU, so all three are placed
    and the run ends (a worker Ray could not place used to hold up every record queued behind its jobs)."""
    plan = Plan(("CART",), (0,), 6, seed=2)
    pool = RayPool(EnvRecipe(("CART",), CATALOG, secret=SECRET), Curriculum(), agent_factory("heuristic"), workers=3,
                   cpus_per_worker=1.0)
    records: list[EpisodeRecord] = []
    asyncio.run(asyncio.wait_for(pool.run(((task, 0) for task in plan), lambda *args: records.append(args[2])),
                                 timeout=300))
    assert [(r.env_id, r.seed) for r in records] == [(t.env_id, t.seed) for t in plan]
