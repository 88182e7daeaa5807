"""Episode ids made under a fixed key hash exactly what the named stream of the whole key hashes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ecomrlve.rng import KeyedIds, crockford, derive_seed

_PARTS = st.lists(st.one_of(st.integers(-10**20, 10**20), st.text(max_size=8), st.booleans()), max_size=4)


@given(key=_PARTS, name=st.text(max_size=8), parts=_PARTS, prefix=st.sampled_from(["O", "OL", "RT", "1Z", "L"]),
       length=st.integers(1, 13))
def test_keyed_ids_are_the_crockford_digits_of_the_derived_seed(key, name, parts, prefix, length) -> None:
    expected = crockford(prefix, derive_seed("opaque-id", *key, name, *parts), length)
    assert KeyedIds(*key).make(prefix, name, *parts, length=length) == expected
