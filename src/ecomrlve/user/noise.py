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
_SLANG_ALTERNATIVES = "|".join(sorted(map(re.escape, _SLANG), key=len, reverse=True))
_SLANG_RE = re.compile(r"\b(" + _SLANG_ALTERNATIVES + r")\b", re.IGNORECASE)
#: the same matches in lower-cased ASCII text, three times faster than ``re.IGNORECASE``
_LOWER_SLANG_RE = re.compile(r"\b(" + _SLANG_ALTERNATIVES + r")\b")
_TYPO_WORD = re.compile(f"[A-Za-z]{{{MIN_TYPO_LENGTH},}}")  # letter runs long enough for a typo


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


def _segments(text: str, protected: tuple[str, ...]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_protected); the longest protected match wins at each position."""
    lowered = text.lower()
    spans = sorted({span for value in protected if value for span in occurrences(text, lowered, value)},
                   key=lambda span: (span[0], -span[1]))
    out: list[tuple[str, bool]] = []
    cursor = 0
    for start, end in spans:
        if start < cursor:
            continue
        out.append((text[cursor:start], False))
        out.append((text[start:end], True))
        cursor = end
    out.append((text[cursor:], False))
    return out


def _add_slang(text: str, swap: float, rng: random.Random) -> str:
    """Each slang-able phrase of ``text``, left to right, swapped for its slang with probability ``swap``."""
    if not text.isascii():  # Unicode case folding (the Kelvin sign is a "k") needs re.IGNORECASE
        return _SLANG_RE.sub(lambda m: _SLANG[m.group(0).lower()] if rng.random() < swap else m.group(0), text)
    parts: list[str] = []
    cursor = 0
    for match in _LOWER_SLANG_RE.finditer(text.lower()):  # ASCII: lower-casing keeps every offset
        if rng.random() < swap:
            start, end = match.span()
            parts += (text[cursor:start], _SLANG[match.group(0)])
            cursor = end
    return "".join((*parts, text[cursor:])) if parts else text


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
    pieces = [(piece if kept else _add_slang(piece, swap, rng), kept) for piece, kept in _segments(text, protected)]
    # typo-able words are counted first; only the pieces that get a typo are searched for positions
    counts = [0 if kept else len(_TYPO_WORD.findall(piece)) for piece, kept in pieces]
    words = sum(counts)
    chosen = sorted(rng.sample(range(words), typo_count(p, words, rng)), reverse=True)
    texts = [piece for piece, _ in pieces]
    first = words  # index of the first typo-able word of piece ``i`` (pieces are walked right to left)
    i = len(pieces)
    spans: list[tuple[int, int]] = []
    for index in chosen:  # right to left, so earlier offsets stay valid
        while index < first:
            i -= 1
            first -= counts[i]
            spans = []
        if not spans:
            spans = [m.span() for m in _TYPO_WORD.finditer(texts[i])]
        start, end = spans[index - first]
        texts[i] = texts[i][:start] + _typo(texts[i][start:end], rng) + texts[i][end:]
    return "".join(texts)
