"""``add_noise`` searches the whole message once with its protected spans masked, instead of
cutting it into pieces; it must draw the same random numbers and write the same text as the
straightforward piece-by-piece version kept here."""

from __future__ import annotations

import random
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ecomrlve.user.noise import (
    _SLANG,
    _SLANG_RE,
    MIN_TYPO_LENGTH,
    SLANG_PER_UNIT_NOISE,
    _typo,
    add_noise,
    typo_count,
)

_WORD = re.compile(r"[^\W\d_]+")  # letters of any script


def _segments(text: str, protected: tuple[str, ...]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_protected); the longest protected match wins at each position."""
    spans = sorted({m.span() for value in protected if value for m in re.finditer(re.escape(value), text, re.IGNORECASE)},
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


def _reference_add_noise(text: str, p: float, rng: random.Random, protected: tuple[str, ...] = ()) -> str:
    """Slang and typos piece by piece, every typo-able word's (piece, start, end) listed up front."""
    if p <= 0:
        return text
    swap = min(1.0, SLANG_PER_UNIT_NOISE * p)
    pieces = [(piece if kept else _SLANG_RE.sub(
        lambda m: _SLANG[m.group(0).lower()] if rng.random() < swap else m.group(0), piece), kept)
        for piece, kept in _segments(text, protected)]
    words = [(i, m.start(), m.end()) for i, (piece, kept) in enumerate(pieces) if not kept
             for m in _WORD.finditer(piece) if m.end() - m.start() >= MIN_TYPO_LENGTH]
    chosen = sorted(rng.sample(range(len(words)), typo_count(p, len(words), rng)), reverse=True)
    texts = [piece for piece, _ in pieces]
    for index in chosen:
        i, start, end = words[index]
        texts[i] = texts[i][:start] + _typo(texts[i][start:end], rng) + texts[i][end:]
    return "".join(texts)


_WORDS = st.sampled_from(["you", "YOU", "pLease", "thank you", "Thank  you", "thanks", "going to", "Blue", "Bluetooth",
                          "a", "in", "keyboard", "XS", "S", "USB-C", "okay", "3", "é", "naïve", "with", "ab", "_are",
                          "are2", "\u0130stanbul you", "\u212aeyboard", "o\u212aay", "than\u212as"])
_TEXT = st.lists(st.tuples(_WORDS, st.sampled_from([" ", ", ", ". ", "-", "", "! ", "_", "\0"])), max_size=30).map(
    lambda parts: "".join(w + sep for w, sep in parts))


@settings(max_examples=400, deadline=None)
@given(text=_TEXT, protected=st.lists(_WORDS, max_size=3).map(tuple), p=st.sampled_from([0.0, 0.01, 0.06, 0.125, 0.3]),
       seed=st.integers(0, 2**32))
# a protected span ends words as the end of a message would: "are" and "you" after "USB-C" are words
@example(text="USB-Care USB-Cyou, USB-Cthanks", protected=("usb-c",), p=0.3, seed=2)
def test_add_noise_matches_the_reference(text: str, protected: tuple[str, ...], p: float, seed: int) -> None:
    fast, reference = random.Random(seed), random.Random(seed)
    assert add_noise(text, p, fast, protected) == _reference_add_noise(text, p, reference, protected)
    assert fast.getstate() == reference.getstate()
