"""Named, process-independent random streams.

Every random draw in an episode comes from a stream derived by *name* from the episode key
``(env_id, difficulty, seed, secret)``: ``derive_seed("CART", 3, 17, secret, "noise")``. Names are hashed with
BLAKE2b, never with ``hash()`` (salted per process) and never combined with ``+`` (which makes
neighbouring seeds share streams).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable

import numpy as np

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def derive_seed(*parts: object) -> int:
    """A 64-bit seed that depends on every part, in order, and on nothing else."""
    digest = hashlib.blake2b("\x1f".join(map(repr, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def derive_rng(*parts: object) -> random.Random:
    """A ``random.Random`` for the named stream."""
    return random.Random(derive_seed(*parts))


def derive_generator(*parts: object) -> np.random.Generator:
    """A numpy ``Generator`` (PCG64) for the named stream."""
    return np.random.Generator(np.random.PCG64(derive_seed(*parts)))


#: 15 bits -> 3 digits, low first (32,768 short strings), and the shorter tails: an id of 6-8 digits is
#: two or three lookups (ids are made on every reset and product card).
_CROCKFORD_TRIPLES = tuple(low + mid + high for high in _CROCKFORD for mid in _CROCKFORD for low in _CROCKFORD)
_CROCKFORD_TAILS = ((), _CROCKFORD, tuple(low + high for high in _CROCKFORD for low in _CROCKFORD))
_CROCKFORD_CODES = np.frombuffer(_CROCKFORD.encode("ascii"), dtype=np.uint8)
_GATHERED_DIGITS = 12  # digits of a 64-bit value (5 bits each) :func:`crockford_each` gathers with numpy
_DIGIT_SHIFTS = np.arange(_GATHERED_DIGITS, dtype=np.uint64) * np.uint64(5)
_LOOPED = 12  # values :func:`crockford_each` makes in the loop (4 products' variant ids)


def crockford(prefix: str, value: int, length: int) -> str:
    """``prefix`` + ``length`` Crockford base-32 digits of ``value`` (low digits first)."""
    digits = prefix
    while length > 2:
        digits += _CROCKFORD_TRIPLES[value & 32767]
        value >>= 15
        length -= 3
    return digits + _CROCKFORD_TAILS[length][value & ((1 << 5 * length) - 1)] if length else digits


def crockford_each(prefix: str, values: Iterable[int], length: int) -> tuple[str, ...]:
    """:func:`crockford` of each of ``values``, in order (a product's variant ids, made at once, as every page of
    product cards and order line of an account episode's history makes them): the digits of all values picked in
    one numpy gather from the 32-letter alphabet and decoded as one text (the 32,768 triples' table a lookup per
    three digits reads is out of cache between pages); the loop for values or lengths past 64 bits, and for up to
    :data:`_LOOPED` values (one to four products' ids: the loop costs less than numpy's dispatch out of cache)."""
    values = values if isinstance(values, (list, tuple)) else list(values)
    if 0 < length <= _GATHERED_DIGITS and len(values) > _LOOPED and min(values) >= 0 and max(values) < 1 << 64:
        shifted = np.asarray(values, dtype=np.uint64)[:, None] >> _DIGIT_SHIFTS[:length]
        digits = _CROCKFORD_CODES[shifted & np.uint64(31)]
        text = digits.tobytes().decode("ascii")
        return tuple([prefix + text[start: start + length] for start in range(0, len(text), length)])
    return tuple([crockford(prefix, value, length) for value in values])


class KeyedIds:
    """Identifiers that cannot be guessed from their neighbours (order, line, return ids), named
    under one fixed ``key``: ``make(prefix, name, *parts)`` is ``prefix`` and the Crockford digits
    of ``derive_seed("opaque-id", *key, name, *parts)``, with the key's share of the hashed text
    made once (an episode makes its ids by the dozen)."""

    def __init__(self, *key: object) -> None:
        self._salt = "".join(repr(p) + "\x1f" for p in ("opaque-id", *key))

    def make(self, prefix: str, name: str, *parts: object, length: int = 8) -> str:
        text = self._salt + "\x1f".join(map(repr, (name, *parts)))
        return crockford(prefix, int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little"), length)
