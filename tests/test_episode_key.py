"""The episode key (env, difficulty, seed, secret): nothing the agent sees lets it regenerate the goal.

The deployment secret is mixed into every random stream of an episode; the agent sees neither it
nor env/difficulty/seed, the record keeps all four so replay works (issue 12 item 1).
"""

from __future__ import annotations

import statistics

import pytest
from exploits import SeedReplayPolicy, play
from typer.testing import CliRunner

from ecomrlve.cli import app
from ecomrlve.envs import env_collections
from ecomrlve.episode import EcomEnv
from ecomrlve.runner import play as play_agent
from ecomrlve.runner import replay
from ecomrlve.session import SECRET_ENV_VAR

KEY_FIELDS = ("env_id", "difficulty", "seed", "secret")


def _c8(catalog, search, **kwargs) -> EcomEnv:
    return EcomEnv("C8", catalog=catalog, search=search, **kwargs)


def test_observations_never_carry_the_episode_key(catalog, search) -> None:
    """No observation's info (reset, step or final) names env, difficulty, seed or secret."""
    env = _c8(catalog, search)
    for env_id in env_collections()["C8"]:
        observation = env.reset(env_id=env_id, difficulty=5, seed=3)
        oracle = env.environment.oracle(env.audit().problem)
        seen = [observation]
        while not observation.done:
            observation = env.step(oracle.act(observation))
            seen.append(observation)
        for obs in seen:
            assert not set(obs.info) & set(KEY_FIELDS), obs.info.keys()
            assert env.secret not in obs.model_dump_json()
        assert {"turn", "turns_left", "user_caused_turns"} <= set(seen[0].info)


def test_secret_changes_the_episode_and_the_record_keeps_it(catalog, search) -> None:
    """Same (env, d, seed): the same secret gives the same goal, another secret another goal."""
    a, b, c = (_c8(catalog, search, secret=s) for s in ("alpha", "alpha", "beta"))
    for env_id in env_collections()["C8"]:
        goals = []
        for env in (a, b, c):
            env.reset(env_id=env_id, difficulty=6, seed=11)
            goals.append(env.audit().problem.goal.model_dump_json())
        assert goals[0] == goals[1] != goals[2], env_id
    a.session.finish("stopped")
    assert a.record.secret == "alpha"


def test_default_secret_is_random_per_env_unless_configured(catalog, search, monkeypatch) -> None:
    """Unconfigured: every EcomEnv draws its own secret. $ECOMRLVE_SECRET makes runs reproducible."""
    monkeypatch.delenv(SECRET_ENV_VAR, raising=False)
    first, second = _c8(catalog, search), _c8(catalog, search)
    assert first.secret != second.secret and len(first.secret) >= 32
    monkeypatch.setenv(SECRET_ENV_VAR, "deployment-7")
    assert _c8(catalog, search).secret == "deployment-7"
    with pytest.raises(ValueError, match="secret"):
        _c8(catalog, search, secret="")


def test_replay_uses_the_records_secret(catalog, search) -> None:
    """A record replays exactly on an env that was built with a different secret."""
    record = play_agent(_c8(catalog, search, secret="trainer"), "heuristic", env_id="RETURN", difficulty=7, seed=5)
    again = replay(_c8(catalog, search, secret="someone-else"), record)
    assert again.to_json() == record.to_json()


def test_seed_replay_attack_scores_low(catalog, search) -> None:
    """The agent knows env, d and seed, rebuilds the episode locally (its own secret, as the default
    gives it), solves the copy with the oracle and replays its actions: in every env the mean r_total is
    <= 0.1 at d >= 3, and success stays at the level of guessing (before the secret it was 100%)."""
    real = _c8(catalog, search, secret="deployment")
    rewards: dict[str, list] = {}
    for env_id in env_collections()["C8"]:
        for d in (3, 8, 15):
            for seed in range(4):
                transcript = play(real, lambda e, env_id=env_id, d=d, seed=seed: SeedReplayPolicy(
                    e, env_id, d, seed, secret=f"attacker-{seed}"), difficulty=d, seed=seed, env_id=env_id)
                rewards.setdefault(env_id, []).append(transcript.reward)
    for env_id, rs in rewards.items():
        assert statistics.fmean(r["r_total"] for r in rs) <= 0.1, env_id
    every = [r for rs in rewards.values() for r in rs]
    assert statistics.fmean(r["is_correct"] for r in every) <= 0.1


def test_cli_secret_makes_runs_reproducible_and_replayable(tmp_path) -> None:
    """`run --secret S` twice writes identical records; without it two runs differ; `replay` reproduces both."""
    def run(name: str, *extra: str) -> str:
        out = tmp_path / name
        result = CliRunner().invoke(app, ["run", "--env", "STATUS", "--agent", "heuristic", "--episodes", "3",
                                          "--difficulty", "4", "--catalog", "synthetic:3000", "--out", str(out), *extra],
                                    env={SECRET_ENV_VAR: ""})
        assert result.exit_code == 0, result.output
        replayed = CliRunner().invoke(app, ["replay", str(out)])
        assert replayed.exit_code == 0 and "reproduced exactly" in replayed.output, replayed.output
        return out.read_text()

    assert run("a.jsonl", "--secret", "s1") == run("b.jsonl", "--secret", "s1")
    assert run("c.jsonl") != run("d.jsonl")
