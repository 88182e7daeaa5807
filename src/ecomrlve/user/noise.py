"""Surface noise: typos, abbreviations and slang, at a rate per message set by ``p_noise(d)``.

A message gets about ``TYPOS_PER_UNIT_NOISE · p_noise`` typos (three at the top difficulty),
never in more than a quarter of its words and at most one per word, and common phrases are
swapped for slang ("please" -> "pls") with probability ``SLANG_PER_UNIT_NOISE · p_noise``: hard
to read for a brittle parser, easy for a person. Values the user must convey exactly (variant
values, quantities, product names) are passed as ``protected`` spans and never altered, so noise
makes text harder to read without making the task ambiguous.
"""

from __future__ import annotations

import random
import re

from ecomrlve.user.text import occurrences

TYPOS_PER_UNIT_NOISE = 24  # expected typos per message = 24 · p_noise (p_noise ≤ 0.125: at most ~3)
SLANG_PER_UNIT_NOISE = 4  # chance that a slang-able phrase is swapped = 4 · p_noise (≤ 0.5)
MAX_TYPO_SHARE = 0.25  # of a message's words
MIN_TYPO_LENGTH = 3  # shorter words stay intact ("a", "in", "to" with a typo read as another word)

_KEYBOARD_NEIGHBOURS = {
    "a": "qsz", "b": "vgn", "c": "xdv", "d": "sfe", "e": "wrd", "f": "dgr", "g": "fht", "h": "gjy",
    "i": "uok", "j": "hku", "k": "jli", "l": "kop", "m": "nj", "n": "bmh", "o": "ipl", "p": "ol",
    "q": "wa", "r": "etf", "s": "adw", "t": "ryg", "u": "yij", "v": "cbf", "w": "qes", "x": "zsc",
    "y": "tuh", "z": "xas",
}
_SLANG = {
    "please": "pls", "thanks": "thx", "thank you": "ty", "you": "u", "are": "r", "with": "w/",
    "because": "bc", "want to": "wanna", "going to": "gonna", "something": "smth",
    "probably": "prob", "okay": "ok", "really": "rly", "great": "gr8",
}
_SLANG_ALTERNATIVES = sorted(map(re.escape, _SLANG), key=len, reverse=True)  # each starts with a letter
_SLANG_RE = re.compile(r"\b(" + "|".join(_SLANG_ALTERNATIVES) + r")\b", re.IGNORECASE)
#: the same matches in lower-cased ASCII text, several times faster: no ``re.IGNORECASE``, and the
#: leading word boundary is checked after each phrase's first letter (``p(?<=\bp)lease``), so that
#: the regex engine skips straight to the positions holding one of those letters
_LOWER_SLANG_RE = re.compile("(" + "|".join(f"{a[0]}(?<=\\b{a[0]}){a[1:]}" for a in _SLANG_ALTERNATIVES) + r")\b")
#: letter runs (any script: "Zürich" is one word, not "rich") long enough for a typo; ``[A-Za-z]`` on ASCII
_TYPO_WORD = re.compile(rf"[^\W\d_]{{{MIN_TYPO_LENGTH},}}")


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(len(word))
    kind = rng.randrange(4)
    if kind == 0 and len(word) > 1 and i < len(word) - 1:  # swap neighbours
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == 1 and len(word) > 2:  # drop a letter
        return word[:i] + word[i + 1:]
    if kind == 2:  # double a letter
        return word[:i] + word[i] + word[i:]
    neighbours = _KEYBOARD_NEIGHBOURS.get(word[i].lower())
    return word[:i] + (rng.choice(neighbours) if neighbours else word[i]) + word[i + 1:]


def _masked(text: str, lowered: str, protected: tuple[str, ...]) -> str:
    """What noise searches: ``lowered`` (``text.lower()``) for ASCII text, else ``text``, with every
    protected span (the longest match wins at each position) turned into NUL characters. Offsets
    are those of ``text``, and NUL is neither a letter nor a word character, so a masked span ends
    words and slang phrases exactly as the end of a separate piece of text would."""
    base = lowered if text.isascii() else text
    spans = sorted({(start, -end) for value in protected if value for start, end in occurrences(text, lowered, value)})
    pieces: list[str] = []
    cursor = 0
    for start, negative_end in spans:
        if start >= cursor:
            pieces += (base[cursor:start], "\0" * (-negative_end - start))
            cursor = -negative_end
    return "".join((*pieces, base[cursor:])) if pieces else base


def _add_slang(text: str, masked: str, swap: float, rng: random.Random) -> tuple[str, str]:
    """Each slang-able phrase of ``masked`` (see :func:`_masked`), left to right, swapped for its
    slang with probability ``swap``: ``text`` and ``masked`` with the same swaps."""
    # ASCII text is masked lower-cased; Unicode case folding (the Kelvin sign is a "k") needs re.IGNORECASE
    matches = _LOWER_SLANG_RE.finditer(masked) if text.isascii() else _SLANG_RE.finditer(masked)
    parts: list[str] = []
    masked_parts: list[str] = []
    cursor = 0
    for match in matches:
        if rng.random() < swap:
            start, end = match.span()
            slang = _SLANG[match.group(0).lower()]
            parts += (text[cursor:start], slang)
            masked_parts += (masked[cursor:start], slang)
            cursor = end
    if not parts:
        return text, masked
    return "".join((*parts, text[cursor:])), "".join((*masked_parts, masked[cursor:]))


def typo_count(p: float, words: int, rng: random.Random) -> int:
    """How many typos one message of ``words`` typo-able words gets at noise level ``p``."""
    expected = TYPOS_PER_UNIT_NOISE * p
    count = int(expected) + (rng.random() < expected - int(expected))
    return min(count, int(words * MAX_TYPO_SHARE) or min(1, words))


def add_noise(text: str, p: float, rng: random.Random, protected: tuple[str, ...] = ()) -> str:
    """Corrupt one message outside the ``protected`` spans; ``p = 0`` returns it unchanged."""
    if p <= 0:
        return text
    swap = min(1.0, SLANG_PER_UNIT_NOISE * p)
    text, masked = _add_slang(text, _masked(text, text.lower(), protected), swap, rng)
    words = [match.span() for match in _TYPO_WORD.finditer(masked)]
    for index in sorted(rng.sample(range(len(words)), typo_count(p, len(words), rng)), reverse=True):
        start, end = words[index]  # right to left, so earlier offsets stay valid
        text = text[:start] + _typo(text[start:end], rng) + text[end:]
    return text
