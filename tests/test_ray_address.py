"""``--ray --ray-address`` at an address nothing listens on: one line, exit 2, no Ray started and no
minutes of retries (``ray.init`` alone would keep trying)."""

from __future__ import annotations

import socket

import pytest
from test_cli_errors import assert_one_line_error, invoke

pytest.importorskip("ray")


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


@pytest.mark.parametrize("command", [
    ["run", "--env", "CART", "--episodes", "1", "--catalog", "synthetic:450"],
    ["eval", "--env", "CART", "--tasks", "1", "--catalog", "synthetic:450"],
])
def test_unreachable_ray_address_is_one_line(tmp_path, closed_port: int, command: list[str]) -> None:
    out = ["--out", str(tmp_path / ("runs.jsonl" if command[0] == "run" else "eval"))]
    result = invoke(*command, *out, "--ray", "--ray-address", f"127.0.0.1:{closed_port}")
    assert_one_line_error(result, f"no Ray cluster answers at 127.0.0.1:{closed_port}")
