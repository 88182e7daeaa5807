"""`one_typo`, which every reference agent reads the shopper's noisy words with, is exactly "at most one of the
typos the shopper's noise makes" (a letter changed, added or dropped, two neighbours swapped)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ecomrlve.user.text import one_typo

LETTERS = "abnot"  # a small alphabet, so that words one typo apart are drawn often


def single_typos(word: str) -> set[str]:
    """Every word one typo from ``word``, spelled out."""
    out = {word[:i] + word[i + 1:] for i in range(len(word))}
    out |= {word[:i] + c + word[i:] for i in range(len(word) + 1) for c in LETTERS}
    out |= {word[:i] + c + word[i + 1:] for i in range(len(word)) for c in LETTERS}
    out |= {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)}
    return out | {word}


@given(st.text(LETTERS, max_size=6), st.text(LETTERS, max_size=6))
def test_one_typo_is_at_most_one_spelled_out_typo_either_way(a: str, b: str) -> None:
    assert one_typo(a, b) == (b in single_typos(a)) == one_typo(b, a)


def test_what_the_readers_rely_on() -> None:
    assert one_typo("ot", "not") and one_typo("nto", "not") and one_typo("nott", "not") and one_typo("mot", "not")
    assert not one_typo("to", "not") and not one_typo("one", "not") and not one_typo("nothing", "not")
