"""Literal text matching for the shopper, without a regular expression per phrase.

Product names, ids and brands are too many for ``re``'s pattern cache, so compiling a pattern
for each (as the shopper did) recompiled on nearly every message. These helpers find the same
matches with ``str.find``; the property tests in ``tests/test_user_text.py`` check them against
the patterns they replace.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def occurrences(text: str, lowered: str, value: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each non-overlapping case-insensitive match of non-empty ``value`` in
    ``text``, left to right: ``re.finditer(re.escape(value), text, re.IGNORECASE)``.
    ``lowered`` is ``text.lower()``, passed in so a message is lower-cased once for all values."""
    if not (text.isascii() and value.isascii()):  # Unicode case folding is not str.lower's
        yield from (m.span() for m in re.finditer(re.escape(value), text, re.IGNORECASE))
        return
    needle, size = value.lower(), len(value)
    start = lowered.find(needle)
    while start >= 0:
        yield start, start + size
        start = lowered.find(needle, start + size)


def contains_word(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` between characters other than ``[a-z0-9]`` (or the
    ends): ``re.search(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])", text)``."""
    size, start = len(phrase), text.find(phrase)
    while start >= 0:
        end = start + size
        if (start == 0 or text[start - 1] not in _WORD_CHARS) and (end == len(text) or text[end] not in _WORD_CHARS):
            return True
        start = text.find(phrase, start + 1)
    return False
