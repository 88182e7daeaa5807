"""A real ``ecomrlve serve`` app on a free loopback port, in a thread of the test process."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

from ecomrlve.catalog.schema import Catalog
from ecomrlve.playground.command import serve_in_thread
from ecomrlve.server.app import ServerConfig, build_app, uvicorn_settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_server(config: ServerConfig, catalog: Catalog) -> Iterator[str]:
    """Serve ``config`` until the block ends; yields the base URL."""
    with serve_in_thread(build_app(config, catalog=catalog), **uvicorn_settings(config)) as url:
        yield url
