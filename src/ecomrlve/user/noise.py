"""Surface noise: typos, abbreviations and slang at the per-character rate ``p_noise(d)``.

Values the user must convey exactly (variant values, quantities, model names) are passed as
``protected`` spans and never altered, so noise makes text harder to read without making the
task ambiguous.
"""

from __future__ import annotations

import functools
import random
import re

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
_SLANG_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _SLANG), key=len, reverse=True)) + r")\b", re.IGNORECASE)


_NON_WORD = re.compile(r"(\W+)")


@functools.lru_cache(maxsize=4096)
def _literal(value: str) -> re.Pattern[str]:
    """``value`` as a case-insensitive pattern; cached here because product names are too many for
    ``re``'s own cache, which they would otherwise keep flushing."""
    return re.compile(re.escape(value), re.IGNORECASE)


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


def _noisy(segment: str, p: float, rng: random.Random) -> str:
    segment = _SLANG_RE.sub(lambda m: _SLANG[m.group(0).lower()] if rng.random() < min(1.0, 6 * p) else m.group(0), segment)
    out = []
    for token in _NON_WORD.split(segment):
        if token and token[0].isalpha() and rng.random() < 1 - (1 - p) ** len(token):
            token = _typo(token, rng)
        out.append(token)
    return "".join(out)


def add_noise(text: str, p: float, rng: random.Random, protected: tuple[str, ...] = ()) -> str:
    """Corrupt ``text`` outside the ``protected`` spans; ``p = 0`` returns it unchanged."""
    if p <= 0:
        return text
    # Longest match first at each position, so "Bluetooth" wins over its prefix "Blue".
    spans = sorted({(m.start(), m.end()) for value in protected if value
                    for m in _literal(value).finditer(text)},
                   key=lambda span: (span[0], -span[1]))
    out, cursor = [], 0
    for start, end in spans:
        if start < cursor:
            continue
        out.append(_noisy(text[cursor:start], p, rng))
        out.append(text[start:end])
        cursor = end
    out.append(_noisy(text[cursor:], p, rng))
    return "".join(out)
