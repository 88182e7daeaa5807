"""The episode key (env, difficulty, seed, secret): nothing the agent sees lets it regenerate the goal.

The deployment secret is mixed into every random stream of an episode; the agent sees neither it
nor env/difficulty/seed, the record keeps all four so replay works (issue 12 item 1).
"""

from __future__ import annotations

import json
import stat
import statistics
from concurrent.futures import ThreadPoolExecutor

import pytest
from exploits import SeedReplayPolicy, play
from typer.testing import CliRunner

from ecomrlve import session as session_module
from ecomrlve.cli import app
from ecomrlve.envs import env_collections
from ecomrlve.episode import EcomEnv
from ecomrlve.runner import play as play_agent
from ecomrlve.runner import replay
from ecomrlve.session import (
    CONFIG_DIR_ENV_VAR,
    SECRET_ENV_VAR,
    config_directory,
    installation_secret,
    secret_fingerprint,
)

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


def test_default_secret_is_the_installations_unless_configured(catalog, search, monkeypatch, tmp_path) -> None:
    """Unconfigured: every EcomEnv of one installation plays with one secret, made on first use in the config
    directory (0600, 128 bits); another installation has another. $ECOMRLVE_SECRET and ``secret=`` win."""
    monkeypatch.delenv(SECRET_ENV_VAR, raising=False)
    monkeypatch.setenv(CONFIG_DIR_ENV_VAR, str(tmp_path / "config" / "ecomrlve"))
    first, second = _c8(catalog, search), _c8(catalog, search)
    stored = tmp_path / "config" / "ecomrlve" / "secret"
    assert first.secret == second.secret == stored.read_text().strip() and len(first.secret) >= 32
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    first.reset(env_id="CART", difficulty=4, seed=7)
    second.reset(env_id="CART", difficulty=4, seed=7)
    assert first.audit().problem.goal == second.audit().problem.goal
    assert first.secret not in first.session.public_state().model_dump_json()
    assert [p.name for p in stored.parent.iterdir()] == ["secret"]  # no temporary file left behind
    monkeypatch.setenv(CONFIG_DIR_ENV_VAR, str(tmp_path / "elsewhere"))
    assert _c8(catalog, search).secret != first.secret
    monkeypatch.setenv(SECRET_ENV_VAR, "deployment-7")
    assert _c8(catalog, search).secret == "deployment-7"
    with pytest.raises(ValueError, match="secret"):
        _c8(catalog, search, secret="")


def test_the_config_directory_follows_xdg_and_home(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv(CONFIG_DIR_ENV_VAR)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_directory() == tmp_path / "xdg" / "ecomrlve"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_directory() == tmp_path / "home" / ".config" / "ecomrlve"


def test_processes_starting_at_once_agree_on_one_installation_secret(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(CONFIG_DIR_ENV_VAR, str(tmp_path / "race"))
    with ThreadPoolExecutor(8) as pool:
        made = set(pool.map(lambda _: installation_secret(), range(32)))
    assert made == {(tmp_path / "race" / "secret").read_text().strip()}


def test_an_unusable_config_directory_falls_back_to_one_secret_per_process(monkeypatch, tmp_path) -> None:
    """A config "directory" under a regular file cannot be made: a warning, then one random secret for the process."""
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(CONFIG_DIR_ENV_VAR, str(tmp_path / "a-file" / "ecomrlve"))
    monkeypatch.setattr(session_module, "_PROCESS_SECRET", [])
    with pytest.warns(RuntimeWarning, match="cannot (read|create) .*ECOMRLVE_SECRET"):
        secret = installation_secret()
    assert installation_secret() == secret and len(secret) >= 32


def test_the_fingerprint_names_a_secret_without_giving_it() -> None:
    assert secret_fingerprint("alpha") == secret_fingerprint("alpha") != secret_fingerprint("beta")
    assert len(secret_fingerprint("alpha")) == 8 and "alpha" not in secret_fingerprint("alpha")


def test_replay_uses_the_records_secret(catalog, search) -> None:
    """A record replays exactly on an env that was built with a different secret."""
    record = play_agent(_c8(catalog, search, secret="trainer"), "heuristic", env_id="RETURN", difficulty=7, seed=5)
    again = replay(_c8(catalog, search, secret="someone-else"), record)
    assert again.to_json() == record.to_json()


@pytest.mark.slow
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
    """`run --secret S` twice writes identical records; without it, two runs of one installation are identical
    too and another installation's differ; `replay` reproduces every one; the summary names the secret by its
    fingerprint only."""
    def run(name: str, *extra: str, installation: str = "one") -> str:
        out = tmp_path / name
        result = CliRunner().invoke(app, ["run", "--env", "STATUS", "--agent", "heuristic", "--episodes", "3",
                                          "--difficulty", "4", "--catalog", "synthetic:3000", "--out", str(out), *extra],
                                    env={SECRET_ENV_VAR: "", CONFIG_DIR_ENV_VAR: str(tmp_path / installation)})
        assert result.exit_code == 0, result.output
        secret = json.loads(out.read_text().splitlines()[0])["secret"]
        assert secret_fingerprint(secret) in result.output and secret not in result.output
        replayed = CliRunner().invoke(app, ["replay", str(out)])
        assert replayed.exit_code == 0 and "reproduced exactly" in replayed.output, replayed.output
        return out.read_text()

    assert run("a.jsonl", "--secret", "s1") == run("b.jsonl", "--secret", "s1")
    assert run("c.jsonl") == run("d.jsonl") != run("e.jsonl", installation="two")
