"""``ecomrlve serve``: the environments as an openenv server, one curriculum shared by every session.

Needs the ``serve`` extra (``pip install 'ecomrlve[serve]'``: openenv, FastAPI, uvicorn).

- :func:`build_app` / :class:`ServerConfig`: the FastAPI app (mount other front ends onto it).
- :class:`EcomEnvClient`: the openenv client (async, and ``.sync()``); :func:`episode_record` after done.
- :class:`RemoteEnv`, :class:`ServerScheduler`: the run path (``run|eval --server``) over a server.
"""

from __future__ import annotations

import importlib
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


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ecomrlve.server' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ecomrlve.server.{_EXPORTS[name]}"), name)
