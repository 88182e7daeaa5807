"""Literal text matching for the shopper, without a regular expression per phrase.

Product names, ids and brands are too many for ``re``'s pattern cache, so compiling a pattern
for each (as the shopper did) recompiled on nearly every message. These helpers find the same
matches with ``str.find``; the property tests in ``tests/test_user_text.py`` check them against
the patterns they replace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

#: A word of a normalised message: a run of lower-case letters and digits.
WORD = re.compile(r"[a-z0-9]+")
#: An apostrophe inside a word ("what's"), dropped before words are split so the word stays one.
APOSTROPHE = re.compile(r"(?<=[a-z])['’](?=[a-z])")
#: A price said as a figure ("$60", "£12.50", "60 dollars"): what the intent model masks, and what tells a price in a
#: statement to the rules.
PRICE = re.compile(r"[$£€]\s?\d+(?:[.,]\d+)?|\d+(?:[.,]\d+)?\s?(?:dollars|bucks|quid|pounds|euros|usd)\b", re.IGNORECASE)


def split_words(text: str) -> list[str]:
    """The words of ``text`` lower-cased, apostrophes inside a word dropped: "What's up?" -> ["whats", "up"]."""
    return WORD.findall(APOSTROPHE.sub("", text.lower()))


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
    """Whether ``phrase`` occurs in ``text`` between characters that are not letters or digits of
    any script (or the ends), so "crème" is not found in "crèmes" and "brûlée" is one word:
    ``re.search(r"(?<![^\\W_])" + re.escape(phrase) + r"(?![^\\W_])", text)``. The shopper passes
    lower-cased text, where this is the ``[a-z0-9]`` boundary on ASCII."""
    size, start = len(phrase), text.find(phrase)
    while start >= 0:
        end = start + size
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        start = text.find(phrase, start + 1)
    return False


def contains_words(text: str, phrases: Iterable[str]) -> tuple[bool, ...]:
    """:func:`contains_word` of each of ``phrases`` in ``text``, in order: every name of an item checked in one call
    (most are not in the text at all, which ``in`` says without a call)."""
    return tuple([phrase in text and contains_word(text, phrase) for phrase in phrases])


def one_typo(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with at most one typo: a letter changed, added or dropped, or two neighbours swapped (the
    typos the shopper's noise makes). The one definition of "one typo apart": the reference agents read the shopper's
    noisy words with it, and the shopper's understanding accepts a slip of a cue word within it."""
    if a == b:
        return True
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = sorted((a, b), key=len)
    return len(long_) - len(short) == 1 and any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))
