"""The browser playground (play any episode as the agent) and the run viewer (browse recorded runs).

Needs the ``playground`` extra (FastAPI, uvicorn, Jinja2), imported on first use so the CLI
loads without it. ``create_playground_app`` is the standalone app of ``ecomrlve playground``;
``mount_playground`` puts the same pages on another FastAPI app (``ecomrlve serve``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Playground", "create_playground_app", "mount_playground", "playground_router"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ecomrlve.playground import app

        return getattr(app, name)
    raise AttributeError(f"module 'ecomrlve.playground' has no attribute {name!r}")
