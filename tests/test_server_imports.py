"""What a serving process imports: nothing it never uses (each replica pays for it in private memory).

Each check runs in a fresh interpreter: this test process may have imported anything already.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openenv")

SRC = Path(__file__).resolve().parents[1] / "src"


def _run(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


@pytest.mark.skipif(importlib.util.find_spec("gradio") is None, reason="openenv's web interface needs gradio")
def test_the_server_does_not_import_openenvs_web_interface_but_it_still_imports_on_use() -> None:
    out = _run(
        "import sys\n"
        "import ecomrlve.server.app, ecomrlve.server.client\n"
        "print('gradio' in sys.modules, 'openenv.core.env_server.web_interface' in sys.modules)\n"
        "from openenv.core.env_server.web_interface import create_web_interface_app\n"
        "print(callable(create_web_interface_app), 'gradio' in sys.modules)\n")
    assert out.splitlines() == ["False False", "True True"]


def test_a_process_serving_a_directory_plays_episodes_without_importing_pandas_and_pandas_still_works(
        tmp_path: Path) -> None:
    from ecomrlve.catalog.store import build_catalog_dir
    from ecomrlve.catalog.synthetic import generate_synthetic_catalog
    from ecomrlve.envs.capabilities import capabilities

    catalog = generate_synthetic_catalog(3000, seed=0)
    build_catalog_dir(catalog, tmp_path / "dir", embedder_name=None,
                      extra={"capabilities": capabilities(catalog).as_dict()})  # as `catalog build`
    out = _run(
        "import sys\n"
        "from ecomrlve.server.app import ServerConfig, build_app, defer_pandas\n"
        "defer_pandas()\n"
        f"app = build_app(ServerConfig(env='C8', catalog={str(tmp_path / 'dir')!r}, port=0, secret='s',"
        " playground=False))\n"
        "from ecomrlve.episode import EcomEnv\n"
        "env = EcomEnv('C8', catalog=app.state.deployment.catalog)\n"
        "for i in range(8):\n"
        "    obs = env.reset(env_id=env.env_ids[i], difficulty=i, seed=i)\n"
        "    oracle = env.oracle()\n"
        "    while not obs.done:\n"
        "        obs = env.step(oracle.act(obs))\n"
        "print('pandas' in sys.modules)\n"
        "import pyarrow as pa\n"
        "print(type(pa.table({'a': [1, 2]}).to_pandas()).__name__, 'pandas' in sys.modules)\n")
    assert out.splitlines() == ["False", "DataFrame True"]
