"""``ecomrlve serve``: the environments as an openenv server, one curriculum shared by every session.

Needs the ``serve`` extra (``pip install 'ecomrlve[serve]'``: openenv, FastAPI, uvicorn).

- :func:`build_app` / :class:`ServerConfig`: the FastAPI app (mount other front ends onto it).
- :class:`EcomEnvClient`: the openenv client (async, and ``.sync()``); :func:`episode_record` after done.
- :class:`RemoteEnv`, :class:`ServerScheduler`: the run path (``run|eval --server``) over a server.
"""

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

__all__ = ["ADAPTIVE", "Deployment", "EcomAction", "EcomEnvClient", "EcomObservation", "EcomServerEnvironment",
           "EcomState", "RemoteEnv", "ServerConfig", "ServerOracle", "ServerScheduler", "build_app",
           "episode_record", "serve", "server_windows", "to_observation"]
