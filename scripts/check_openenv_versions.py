"""Run the server's openenv contract tests against every openenv release the ``serve`` extra's pin allows.

``server/fastpath.py`` answers ``/ws`` reset and step frames byte for byte as openenv's loop would and
binds sessions through two private ``HTTPEnvServer`` methods, so ``pyproject.toml`` pins openenv to one
minor release line and this script checks every published release inside the pin: each is installed
without its dependencies (the project's environment provides them) into a scratch directory put first on
``PYTHONPATH``, then ``tests/test_server_fastpath.py`` (every frame compared with openenv's own
``HTTPEnvServer`` over the same sessions), ``tests/test_server_mcp.py`` and ``tests/test_server.py`` run
against it. CI (``.ci/run``) runs it after the suite.

    python scripts/check_openenv_versions.py            # every release the pin allows (asks pip's index)
    python scripts/check_openenv_versions.py 0.10.0     # just these
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CONTRACT_TESTS = ["tests/test_server_fastpath.py", "tests/test_server_mcp.py", "tests/test_server.py"]


def serve_pin() -> Requirement:
    """The ``openenv`` requirement of the ``serve`` extra, read from ``pyproject.toml``."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r'^serve = \[(.*)\]$', text, re.MULTILINE)
    if extra is None:
        raise SystemExit("pyproject.toml has no serve extra")
    for item in re.findall(r'"([^"]+)"', extra.group(1)):
        requirement = Requirement(item)
        if requirement.name == "openenv":
            return requirement
    raise SystemExit("the serve extra does not require openenv")


def published_versions() -> list[Version]:
    """Every openenv release pip's index lists."""
    answer = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "openenv"], capture_output=True,
                            text=True, check=True).stdout
    listed = re.search(r"Available versions: (.*)", answer)
    if listed is None:
        raise SystemExit(f"pip index listed no openenv versions:\n{answer}")
    return sorted(Version(v.strip()) for v in listed.group(1).split(","))


def check(version: str) -> bool:
    """Install openenv ``version`` alone into a scratch directory and run the contract tests over it."""
    with tempfile.TemporaryDirectory(prefix=f"openenv-{version}-") as scratch:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", scratch,
                        f"openenv=={version}"], check=True)
        path = os.pathsep.join([scratch, str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])
        environment = {**os.environ, "PYTHONPATH": path}
        installed = subprocess.run([sys.executable, "-c", "import importlib.metadata as m; print(m.version('openenv'))"],
                                   env=environment, capture_output=True, text=True, check=True).stdout.strip()
        if installed != version:
            raise SystemExit(f"openenv {version} was installed but {installed} is imported")
        result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *CONTRACT_TESTS],
                                cwd=ROOT, env=environment)
    print(f"openenv {version}: {'passed' if result.returncode == 0 else 'FAILED'}", flush=True)
    return result.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="openenv versions to check (default: every one the pin allows)")
    args = parser.parse_args()
    pin = serve_pin()
    versions = args.versions or [str(v) for v in published_versions() if pin.specifier.contains(v)]
    if not versions:
        raise SystemExit(f"no published openenv release satisfies {pin}")
    print(f"{pin}: checking openenv {', '.join(versions)}", flush=True)
    failed = [version for version in versions if not check(version)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
