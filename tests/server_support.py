"""A real ``ecomrlve serve`` app on a free loopback port, in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from ecomrlve.catalog.schema import Catalog
from ecomrlve.server.app import ServerConfig, build_app, uvicorn_config


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_server(config: ServerConfig, catalog: Catalog) -> Iterator[str]:
    """Serve ``config`` until the block ends; yields the base URL."""
    import uvicorn

    config = replace(config, port=free_port())
    app = build_app(config, catalog=catalog)
    server = uvicorn.Server(uvicorn_config(app, config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
