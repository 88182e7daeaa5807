"""Episode ids made under a fixed key hash exactly what the named stream of the whole key hashes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ecomrlve.rng import KeyedIds, crockford, derive_seed

_PARTS = st.lists(st.one_of(st.integers(-10**20, 10**20), st.text(max_size=8), st.booleans()), max_size=4)


@given(key=_PARTS, calls=st.lists(st.tuples(st.sampled_from(["order", "order-line", ""]) | st.text(max_size=8), _PARTS),
                                  min_size=1, max_size=6),
       prefix=st.sampled_from(["O", "OL", "RT", "1Z", "L"]), length=st.integers(1, 13))
def test_keyed_ids_are_the_crockford_digits_of_the_derived_seed(key, calls, prefix, length) -> None:
    ids = KeyedIds(*key)  # one instance for every call: its per-name hashes are reused
    for name, parts in calls:
        expected = crockford(prefix, derive_seed("opaque-id", *key, name, *parts), length)
        assert ids.make(prefix, name, *parts, length=length) == expected


@given(value=st.integers(0, 2**64 - 1), length=st.integers(0, 14))
def test_crockford_digits_are_the_base_32_digits_low_first(value, length) -> None:
    digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    assert crockford("P", value, length) == "P" + "".join(digits[(value >> (5 * i)) & 31] for i in range(length))
