"""``serve --replicas``: two server processes on a local Ray behind one loopback port, one curriculum actor.

Sixteen sessions open at once land on both replicas (the kernel spreads connections over the port's
listeners; a session stays where it landed); their fixed-difficulty records are byte-identical to one
process's; the token guards the shared address; and the curriculum, which promotes only after all
sixteen outcomes, moves: every replica's episodes reached the one scheduler.
"""

from __future__ import annotations

import os
import time

import httpx
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("openenv")

from conftest import CATALOG_SEED, CATALOG_SIZE  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from ecomrlve.cli import app  # noqa: E402
from ecomrlve.difficulty.scheduler import SchedulerConfig  # noqa: E402
from ecomrlve.episode import EcomEnv  # noqa: E402
from ecomrlve.integrations.ray_server import replicated_server  # noqa: E402
from ecomrlve.runner import play  # noqa: E402
from ecomrlve.server import RemoteEnv, ServerConfig  # noqa: E402
from ecomrlve.server import commands as server_commands  # noqa: E402

SECRET, TOKEN, SESSIONS = "replicas-test", "replica-token", 16


@pytest.fixture(scope="module")
def local_ray():
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_two_replicas_share_one_port_and_one_curriculum(local_ray, catalog) -> None:
    config = ServerConfig(env="CART", catalog=f"synthetic:{CATALOG_SIZE}:{CATALOG_SEED}", port=0, secret=SECRET,
                          token=TOKEN, allow_oracle=True, playground=False,
                          scheduler=SchedulerConfig(tau_acc=0.5, tau_num=SESSIONS))
    local = EcomEnv("CART", catalog=catalog, secret=SECRET)
    with replicated_server(config, 2, cpus_per_replica=0.5) as (url, replicas):
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{url}/scheduler", timeout=10).status_code == 401  # the same token on every replica
        sessions = [RemoteEnv(url, token=TOKEN) for _ in range(SESSIONS)]
        try:
            observations = [env.reset(env_id="CART", difficulty=0, seed=40 + i) for i, env in enumerate(sessions)]
            open_sessions = ray.get([replica.sessions.remote() for replica in replicas])
            assert sum(open_sessions) == SESSIONS and min(open_sessions) > 0, open_sessions
            for i, (env, observation) in enumerate(zip(sessions, observations)):
                oracle = env.oracle()
                while not observation.done:
                    observation = env.step(oracle.act(observation))
                in_process = play(local, "oracle", env_id="CART", difficulty=0, seed=40 + i)
                assert env.record.to_json() == in_process.for_client().to_json()  # a client never gets the secret
        finally:
            for env in sessions:
                env.close()
        deadline = time.monotonic() + 30  # updates are sent without waiting: give the last ones time to land
        while ray.get(replicas[0].scheduler_state.remote())["windows"]["CART"]["high"] != 1:
            assert time.monotonic() < deadline, ray.get(replicas[0].scheduler_state.remote())
            time.sleep(0.1)
        states = ray.get([replica.scheduler_state.remote() for replica in replicas])
        served = httpx.get(f"{url}/scheduler", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10).json()
        assert states[0] == states[1] and served["windows"] == states[0]["windows"]


def test_serve_replicas_hands_the_whole_server_config_to_ray(monkeypatch) -> None:
    """``serve --replicas 2``: the one config every replica builds its server from (token, limits, curriculum)."""
    seen: list[tuple[ServerConfig, int, str | None]] = []
    monkeypatch.setattr(server_commands, "serve_replicas", lambda *args: seen.append(args))
    result = CliRunner().invoke(app, ["serve", "--env", "CART", "--replicas", "2", "--token", "t", "--max-sessions",
                                      "5", "--tau-num", "3", "--ray-address", "auto"])
    assert result.exit_code == 0, result.output
    [(config, replicas, address)] = seen
    assert (config.env, config.token, config.max_sessions, config.scheduler.tau_num) == ("CART", "t", 5, 3)
    assert (replicas, address) == (2, "auto")
