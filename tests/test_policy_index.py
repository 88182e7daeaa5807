"""``policy_search``'s BM25 index scores exactly as the bm25s index it replaced, from the same tokens."""

from __future__ import annotations

import random
from collections import Counter

import bm25s
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ecomrlve.catalog.search import tokenize
from ecomrlve.tools.policy import PolicyIndex, _section_terms, policy_index
from ecomrlve.world import policy as P
from ecomrlve.world.policy import STORE_POLICY, draw_store_policy, policy_documents


def _bm25s_scores(index: PolicyIndex, query: str) -> np.ndarray | None:
    """What the index computed before: a bm25s (Lucene) index over the same section tokens."""
    vocab: dict[str, int] = {}
    corpus = [[vocab.setdefault(t, len(vocab)) for t in tokenize(f"{s.title} {s.title} {s.text}")]
              for s in index.sections]
    reference = bm25s.BM25()
    reference.index((corpus, vocab), show_progress=False)
    ids = sorted({vocab[t] for t in tokenize(query) if t in vocab})
    return np.asarray(reference.get_scores(ids)) if ids else None


_SECTIONS = [policy_documents(STORE_POLICY), *(policy_documents(draw_store_policy(random.Random(seed)))
                                              for seed in range(3))]
_WORDS = sorted({t for sections in _SECTIONS for s in sections for t in tokenize(f"{s.title} {s.text}")})


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(_SECTIONS))),
       st.lists(st.sampled_from([*_WORDS, "unindexedword"]), min_size=1, max_size=8))
def test_scores_are_bm25s_bit_for_bit(which: int, words: list[str]) -> None:
    index = PolicyIndex(_SECTIONS[which])
    query = " ".join(words)
    ours, reference = index.scores(query), _bm25s_scores(index, query)
    if reference is None:
        assert ours is None
    else:
        assert ours is not None and ours.dtype == reference.dtype and ours.tobytes() == reference.tobytes()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab1s .;:,$-'", max_size=60), st.text(alphabet="Ab1s .;:,$-'", max_size=200))
def test_section_terms_read_the_pieces_as_the_whole_text(title: str, text: str) -> None:
    """Tokenizing a section piece by piece (cached pieces) gives the whole text's tokens, in order."""
    terms = _section_terms(title, text)
    expected = Counter(tokenize(f"{title} {title} {text}"))
    assert list(terms.items()) == list(expected.items())


def test_departments_text_is_shared_by_policies_with_the_same_rows() -> None:
    paths = (("Kitchen", "Blenders"), ("Garden", "Hoses"), ("Home & Kitchen", "Mugs"))
    for policy in (STORE_POLICY, draw_store_policy(random.Random(5))):
        assert P._cached_departments_text(policy, iter(paths)) == P._departments_text(policy, paths)


def test_indexes_are_kept_per_live_policy_object() -> None:
    """A policy gets its own documents' index, again on every call, even when a dead policy's id is reused."""
    for seed in range(20):  # dropped policies' ids are often reused by the next one
        policy = draw_store_policy(random.Random(seed))
        index = policy_index(None, policy)
        assert index.sections == policy_documents(policy) and policy_index(None, policy) is index
        del policy, index
