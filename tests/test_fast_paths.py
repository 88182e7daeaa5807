"""The step's fast paths say exactly what their plain definitions say.

``understanding._has`` finds phrases with one trie pattern per phrase tuple (``_any_of``) instead of one
``in`` per phrase; ``contains_words`` skips the phrases ``in`` does not find; ``compact_result`` copies each node once and writes plain values without a call. Both run
on every step, and both must give what the plain code gave (records are compared byte for byte elsewhere);
these tests check the rules on inputs no episode happens to produce.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import ecomrlve.user.understanding as understanding
from ecomrlve.protocol import compact_result, result_text
from ecomrlve.user.text import contains_word, contains_words

#: Few characters, so that phrases share prefixes and occur often; regular-expression syntax among them.
_CHARS = st.sampled_from("ab .()[]*+?|\\$^{}é")
_PHRASES = st.lists(st.text(_CHARS, max_size=5), max_size=6).map(tuple)


@given(st.text(_CHARS, max_size=30), _PHRASES)
def test_has_is_any_phrase_in_the_text(text: str, phrases: tuple[str, ...]) -> None:
    assert understanding._has(text, phrases) == any(p in text for p in phrases)


@given(st.text(_CHARS, max_size=30), st.lists(st.text(_CHARS, max_size=4), max_size=6))
def test_contains_words_is_contains_word_of_each(text: str, phrases: list[str]) -> None:
    assert contains_words(text, phrases) == tuple(contains_word(text, phrase) for phrase in phrases)


def test_has_reads_the_modules_own_phrase_tuples_as_any_in() -> None:
    """Every phrase tuple of the understanding module (topic cues, confirmations, which-phrases...), on texts made
    of its phrases, a phrase cut short and words around them."""
    tuples = [value for value in vars(understanding).values()
              if isinstance(value, tuple) and value and all(isinstance(p, str) for p in value)]
    tuples += list(understanding._TOPIC_PHRASES.values())
    assert len(tuples) > 20
    for phrases in tuples:
        texts = [" " + p.strip() + " " for p in phrases] + [p[:-2] for p in phrases] + [" the price is fine "]
        for other in tuples[:10]:
            texts.append(" so" + other[0] + "and" + phrases[-1])
        for text in texts:
            assert understanding._has(text, phrases) == any(p in text for p in phrases), (text, phrases)


#: (``variants`` only as the tools write them: on cards below)
_KEYS = st.sampled_from(["product_id", "stock", "title", "in_stock", "variant_id", "attributes", "color", "results",
                         "count", "top_k_cap", "price", "items", "brand"])
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([1.0, 2.5, -3.0, 1e300]),
                    st.sampled_from(["Brand X Mug, Blue", "M", "V1", "V2", "P1", "red"]))
_TREES = st.recursive(_LEAVES, lambda children: st.one_of(st.lists(children, max_size=4),
                                                          st.dictionaries(_KEYS, children, max_size=6)), max_leaves=25)
_CARD = st.fixed_dictionaries(
    {"product_id": st.sampled_from(["P1", "P2"]), "title": st.sampled_from(["Mug, Blue", "Mug, Blue, 12 oz", "Lamp"]),
     "stock": st.integers(0, 3), "in_stock": st.booleans()},
    optional={"variants": st.lists(st.fixed_dictionaries({"variant_id": st.sampled_from(["V1", "V2"]),
                                                          "color": st.sampled_from(["red", "blue"])}), max_size=3),
              "attributes": st.dictionaries(st.sampled_from(["color", "size", "price"]), _LEAVES, max_size=2),
              "price": st.sampled_from([12.0, 12.5])})
_RESULTS = st.one_of(_TREES, st.lists(_CARD, max_size=4), st.dictionaries(_KEYS, st.lists(_CARD, max_size=3), max_size=2))


@given(st.dictionaries(_KEYS, st.one_of(_TREES, _RESULTS), max_size=5))
def test_compact_result_leaves_its_input_as_it_was_and_is_idempotent(content: dict[str, Any]) -> None:
    """It builds its own copies (and changes only those): the tool result the shopper and verifier read stays the
    same, and a compact result compacts to itself."""
    before = copy.deepcopy(content)
    compact = compact_result(content)
    assert content == before
    assert compact_result(compact) == compact
    assert json.loads(result_text(before)) == json.loads(json.dumps(compact))
