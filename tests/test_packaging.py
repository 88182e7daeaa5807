"""Packaging conventions: one version everywhere (distribution, ``ecomrlve.__version__``, ``ecomrlve --version``,
the server's ``/metadata``, ``openenv.yaml``), the Apache-2.0 LICENSE the package declares, an openenv manifest that
openenv's own parser accepts and that agrees with the code, and a Dockerfile whose command serves offline."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest
from server_support import free_port
from typer.testing import CliRunner

import ecomrlve
from ecomrlve.cli import app
from ecomrlve.envs import resolve_env_ids
from ecomrlve.episode import EcomEnv
from ecomrlve.rewards import compose_reward
from ecomrlve.runner import play

ROOT = Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib")  # Python 3.11+
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def manifest() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "openenv.yaml").read_text(encoding="utf-8"))


def dockerfile_instructions() -> dict[str, list[str]]:
    """Each instruction of the Dockerfile (continuation lines joined) -> its argument strings, in order."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text(encoding="utf-8"))
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, argument = line.strip().partition(" ")
            found.setdefault(keyword.upper(), []).append(argument.strip())
    return found


def dockerfile_command() -> list[str]:
    [command] = dockerfile_instructions()["CMD"]
    return json.loads(command)  # exec form: no shell between the container and the server


def dockerfile_env() -> dict[str, str]:
    pairs = " ".join(dockerfile_instructions().get("ENV", []))
    return dict(item.split("=", 1) for item in shlex.split(pairs))


def test_one_version_everywhere() -> None:
    assert ecomrlve.__version__ == version("ecomrlve") == PYPROJECT["version"] == manifest()["version"]
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"ecomrlve {ecomrlve.__version__}\n"


def test_the_server_reports_the_package_version(catalog) -> None:
    pytest.importorskip("openenv")
    from fastapi.testclient import TestClient

    from ecomrlve.server.app import ServerConfig, build_app

    app = build_app(ServerConfig(env="CART", playground=False), catalog=catalog)
    with TestClient(app, base_url="http://127.0.0.1") as client:  # a loopback Host: the server answers only those
        metadata = client.get("/metadata").json()
    assert (metadata["name"], metadata["version"]) == (manifest()["name"], ecomrlve.__version__)


def test_the_declared_license_ships() -> None:
    assert PYPROJECT["license"] == "Apache-2.0" and PYPROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text


def test_openenv_parses_the_manifest() -> None:
    parser = pytest.importorskip("openenv.validation.parsers.openenv_yaml")
    parsed = parser.OpenEnvYamlParser().parse(ROOT)
    assert parsed.name == PYPROJECT["name"] and parsed.version == PYPROJECT["version"]
    assert parsed.capabilities.verifier.kind == "reward_channel" and parsed.network.mode == "no-network"


def test_the_manifest_agrees_with_the_rewards_and_the_oracle(catalog, search) -> None:
    """The declared range is r_total's (a voided episode's -1, a perfect one's clip), and the oracle reaches
    the top within the declared tolerance on every environment."""
    reward = manifest()["validation"]["reward"]
    low, high = reward["range"]
    parts = dict(turns=1, user_caused_turns=0, t_max=8, used_ids=[], surfaced_ids=set(), termination="answered")
    assert compose_reward(r_task=1.0, is_correct=True, **parts).r_total <= high
    assert compose_reward(r_task=1.0, is_correct=True, invalid_reason="malformed", **parts).r_total == low
    assert compose_reward(r_task=9.0, is_correct=True, **parts).r_total == high  # the clip
    env = EcomEnv(resolve_env_ids("C8"), catalog=catalog, search=search)
    worst = min(play(env, "oracle", env_id=env_id, difficulty=d, seed=3).reward.r_total
                for env_id in env.env_ids for d in (0, 15))
    assert worst >= high - reward["oracle_tolerance"]


def test_the_dockerfile_serves_the_package_command_on_the_manifest_port() -> None:
    command = dockerfile_command()
    assert PYPROJECT["scripts"][command[0]] == "ecomrlve.cli:app" and command[1] == "serve"
    port = command[command.index("--port") + 1]
    assert port == str(manifest()["port"]) and f"{port}" in dockerfile_instructions()["EXPOSE"]
    assert dockerfile_env()["HF_HUB_OFFLINE"] == "1"


def _ecomrlve(args: list[str]) -> list[str]:
    """The console script's command line as this interpreter runs it (the script is ``ecomrlve.cli:app``)."""
    return [sys.executable, "-m", "ecomrlve.cli", *args]


def _container_environment(**extra: str) -> dict[str, str]:
    source = os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)
    inherited = {k: v for k, v in os.environ.items() if k != "ECOMRLVE_TOKEN"}
    return {**inherited, **dockerfile_env(), "PYTHONPATH": source, **extra}


@pytest.mark.slow
def test_the_dockerfile_command_refuses_to_serve_without_a_token() -> None:
    """The container binds 0.0.0.0: without $ECOMRLVE_TOKEN the command stops in one line before binding."""
    command = dockerfile_command()
    result = subprocess.run(_ecomrlve(command[1:]), env=_container_environment(), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--token" in result.stderr


@pytest.mark.slow
def test_the_dockerfile_command_serves_offline_with_a_token() -> None:
    """The image's command, with the token a container is started with, on a loopback port instead of 0.0.0.0:8000:
    the embedded default catalog (all of C8) loads offline, /health answers, and /metadata needs the token."""
    command, port = dockerfile_command(), free_port()
    args = [*command[1:], "--host", "127.0.0.1", "--port", str(port)]  # the last --host/--port win
    process = subprocess.Popen(_ecomrlve(args), env=_container_environment(ECOMRLVE_TOKEN="t0ken"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # C8 on the default catalog starts in ~10 s on an idle machine
        while not _healthy(url):
            if process.poll() is not None:
                pytest.fail(process.stderr.read().decode() if process.stderr else "serve exited")
            if time.monotonic() > deadline:
                pytest.fail("the server did not start within 300 s")
            time.sleep(0.1)
        assert httpx.get(f"{url}/metadata", timeout=60).status_code == 401  # generous: a loaded machine is slow
        metadata = httpx.get(f"{url}/metadata", headers={"Authorization": "Bearer t0ken"}, timeout=60).json()
        assert metadata["version"] == ecomrlve.__version__ and "JOURNEY" in metadata["description"]
    finally:
        process.terminate()
        process.wait(timeout=30)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
