"""The error type for mistakes in what a user asked for (an argument, a file, an endpoint).

Library code raises :class:`UserInputError` where the fix is on the caller's side; the command
line turns it into one line on stderr and exit code 2 (see ``ecomrlve.cli``). It is a
``ValueError`` so library callers that already catch ``ValueError`` keep working.

The output-path checks run before any work, so a mistyped folder is one line at the start of a
command rather than a traceback after its episodes were played.
"""

from __future__ import annotations

import os
from pathlib import Path


class UserInputError(ValueError):
    """A problem with the user's input, stated in one line that says what is wrong."""

    def __str__(self) -> str:  # one line, even when a subclass also derives from KeyError
        return " ".join(str(self.args[0]).split()) if self.args else ""


class UnknownNameError(UserInputError, KeyError):
    """An unknown environment, collection or agent name (a ``KeyError`` for dict-like lookups)."""


class PluginError(UserInputError):
    """An installed environment plugin (an ``ecomrlve.envs`` entry point) that cannot be loaded: its package
    is broken or names something that is not an EnvSpec; uninstalling or fixing it is the user's fix."""


def require_writable_file(path: str | os.PathLike[str], what: str) -> None:
    """Refuse a file ``path`` that cannot be written: a folder, or a folder that is missing or read-only.

    ``what`` names it in the message (an option such as ``--out``).
    """
    path = Path(path)
    if path.is_dir():
        raise UserInputError(f"{what} {path}: is a directory, not a file")
    folder = path.parent
    if not folder.is_dir():
        raise UserInputError(f"{what} {path}: no such directory {folder}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserInputError(f"{what} {path}: cannot write in {folder}")


def require_output_directory(path: str | os.PathLike[str], what: str) -> None:
    """Refuse a directory ``path`` that cannot be created or written (missing parents are created later)."""
    path = Path(path)
    existing = next((p for p in (path, *path.parents) if p.exists()), path)  # "." or "/" at the latest
    if existing.exists() and not existing.is_dir():
        raise UserInputError(f"{what} {path}: {existing} is a file, not a directory")
    if existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
        raise UserInputError(f"{what} {path}: cannot write in {existing}")
