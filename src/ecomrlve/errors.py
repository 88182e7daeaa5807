"""The error type for mistakes in what a user asked for (an argument, a file, an endpoint).

Library code raises :class:`UserInputError` where the fix is on the caller's side; the command
line turns it into one line on stderr and exit code 2 (see ``ecomrlve.cli``). It is a
``ValueError`` so library callers that already catch ``ValueError`` keep working.
"""

from __future__ import annotations


class UserInputError(ValueError):
    """A problem with the user's input, stated in one line that says what is wrong."""

    def __str__(self) -> str:  # one line, even when a subclass also derives from KeyError
        return " ".join(str(self.args[0]).split()) if self.args else ""


class UnknownNameError(UserInputError, KeyError):
    """An unknown environment, collection or agent name (a ``KeyError`` for dict-like lookups)."""
