"""The shopper's literal matchers find exactly what the regular expressions they replace find."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ecomrlve.user.text import contains_word, occurrences

#: Few letters, so that matches are frequent; case pairs, word boundaries and non-ASCII letters
#: whose case folding differs from ASCII lower-casing (Kelvin sign, long s, dotted I), accented
#: and CJK letters.
_ALPHABET = st.sampled_from("abAB sS-1.\u212a\u017f\u0130k\u00e9\u65e5_")
_TEXT = st.text(_ALPHABET, max_size=30)


@given(_TEXT, st.text(_ALPHABET, min_size=1, max_size=4))
def test_occurrences_are_the_case_insensitive_finditer(text: str, value: str) -> None:
    expected = [m.span() for m in re.finditer(re.escape(value), text, re.IGNORECASE)]
    assert list(occurrences(text, text.lower(), value)) == expected


@given(_TEXT, st.text(_ALPHABET, max_size=4))
def test_contains_word_is_the_bounded_search(text: str, phrase: str) -> None:
    pattern = r"(?<![^\W_])" + re.escape(phrase) + r"(?![^\W_])"
    assert contains_word(text, phrase) == (re.search(pattern, text) is not None)


def test_occurrences_do_not_overlap() -> None:
    assert list(occurrences("aAaa", "aaaa", "aa")) == [(0, 2), (2, 4)]


def test_contains_word_bounds_words_of_any_script() -> None:
    """A letter of any script continues a word: "crème" is not inside "écrème" (an ASCII boundary
    took "é" for one), and a phrase of accented words is found between spaces."""
    assert not contains_word("une écrème", "crème") and not contains_word("日本語", "日本")
    assert contains_word("the crème brûlée torch", "crème brûlée torch")
