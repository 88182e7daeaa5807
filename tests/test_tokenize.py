"""``tokenize`` (the words BM25 indexes and queries read): its ASCII fast path finds exactly the
words of the regular expression it stands in for, on any text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ecomrlve.catalog.search import _STOPWORDS, tokenize


def _reference(text: str) -> list[str]:
    """The definition: runs of ``[a-z0-9]`` in the lower-cased text, stop words dropped, plurals folded."""
    tokens = []
    for token in re.findall(r"[a-z0-9]+", text.lower()):
        if token in _STOPWORDS:
            continue
        if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
        tokens.append(token)
    return tokens


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aAsSzZ0189 -_'\t\n.,!$éİ\u212a\x00\x7f", max_size=40)  # edges of the ASCII path
       | st.text(max_size=40)  # any text
       | st.lists(st.sampled_from(["chargers", "glass", "bus", "its", "I'm", "for", "USB-C", "65W", "ÉCRAN"]))
       .map(" ".join))
def test_tokenize_is_the_regular_expression(text: str) -> None:
    assert tokenize(text) == _reference(text)
