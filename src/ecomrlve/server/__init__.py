"""``ecomrlve serve``: the environments as an openenv server, one curriculum shared by every session.

Needs the ``serve`` extra (``pip install 'ecomrlve[serve]'``: openenv, FastAPI, uvicorn).

- :func:`build_app` / :class:`ServerConfig`: the FastAPI app (mount other front ends onto it).
- :class:`EcomEnvClient`: the openenv client (async, and ``.sync()``); :func:`episode_record` after done.
- :class:`RemoteEnv`, :class:`ServerScheduler`: the run path (``run|eval --server``) over a server.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecomrlve.server.app import ServerConfig, build_app, serve
    from ecomrlve.server.client import (
        EcomEnvClient,
        RemoteEnv,
        ServerOracle,
        ServerScheduler,
        episode_record,
        server_windows,
        to_observation,
    )
    from ecomrlve.server.environment import ADAPTIVE, Deployment, EcomServerEnvironment
    from ecomrlve.server.models import EcomAction, EcomObservation, EcomState

#: public name -> submodule; loaded on first use, so ``ecomrlve.server.commands`` (the CLI) imports without openenv
_EXPORTS = {
    "ServerConfig": "app", "build_app": "app", "serve": "app",
    "EcomEnvClient": "client", "RemoteEnv": "client", "ServerOracle": "client", "ServerScheduler": "client",
    "episode_record": "client", "server_windows": "client", "to_observation": "client",
    "ADAPTIVE": "environment", "Deployment": "environment", "EcomServerEnvironment": "environment",
    "EcomAction": "models", "EcomObservation": "models", "EcomState": "models",
}
__all__ = ["ADAPTIVE", "Deployment", "EcomAction", "EcomEnvClient", "EcomObservation", "EcomServerEnvironment",
           "EcomState", "RemoteEnv", "ServerConfig", "ServerOracle", "ServerScheduler", "build_app",
           "episode_record", "serve", "server_windows", "to_observation"]


#: openenv's optional Gradio web interface, which ``openenv.core.env_server`` imports eagerly when Gradio is
#: installed (gradio, pandas, PIL...: about 90 MiB and 5 s per process) though ``ecomrlve serve`` never mounts it.
OPENENV_WEB_INTERFACE = "openenv.core.env_server.web_interface"


class _DeferOpenenvWebInterface(importlib.abc.MetaPathFinder):
    """Answers openenv's one eager import of its web interface as "not installed" (openenv then sets
    ``create_web_interface_app`` to None, as without Gradio), and steps aside after it: openenv's own
    ``ENABLE_WEB_INTERFACE`` path, or anyone importing the module later, gets the real one."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == OPENENV_WEB_INTERFACE:
            sys.meta_path.remove(self)
            raise ModuleNotFoundError(f"{fullname} deferred by ecomrlve.server (imported on use)", name=fullname)
        return None


if "openenv" not in sys.modules:  # every server module imports openenv after this package
    sys.meta_path.insert(0, _DeferOpenenvWebInterface())


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ecomrlve.server' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ecomrlve.server.{_EXPORTS[name]}"), name)
