"""Which variants each product is offered in: a fact of the catalog, drawn once per catalog.

A product of a category whose variant attribute is categorical (``Category.variant_attribute``:
connector type for chargers, size for hoodies...) is offered in :data:`VARIANTS_PER_PRODUCT`
values of that attribute: its own value when it has one, plus others drawn from the values its
category carries (from the attribute's whole vocabulary when the category carries fewer than
three; real catalogs often give one value, or none, for a whole category).

**The rule** every part of the suite follows: a product *has* value ``v`` of its variant attribute
when one of its variants has ``v``. Its card lists the variants (not a product-level value of that
attribute), ``catalog_search`` filters on that attribute match it through its variants, and valid
sets, rankings and verifiers (which all read :func:`~ecomrlve.catalog.filters.condition_masks`)
use the same sets. For its other attributes a product has its one own value, shown on its card.

The values are drawn with a vectorised hash of each product id (no Python per product), so they
are the same in every episode, in every sub-catalog (category views gather them) and in every
process; only the variant ids are drawn per episode (:class:`~ecomrlve.world.state.World`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.schema import FEW_ROWS, NO_VALUE, Catalog
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES

VARIANTS_PER_PRODUCT = 3
#: The categorical attributes in a fixed order: ``VariantColumns.attribute`` holds indices into it.
VARIANT_ATTRIBUTES: tuple[str, ...] = tuple(CATEGORICAL_ATTRIBUTES)
NO_VARIANTS = -1  # ``VariantColumns.attribute`` of a product offered in no variants

_GOLDEN, _MIX1, _MIX2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)


@dataclass(frozen=True)
class VariantColumns:
    """Per product: the index of its variant attribute in :data:`VARIANT_ATTRIBUTES` (``NO_VARIANTS``:
    none) and the codes of its variants' values, ascending, as one column per variant
    (``NO_VALUE`` where it has none)."""

    attribute: np.ndarray  # int8
    codes: tuple[np.ndarray, ...]  # VARIANTS_PER_PRODUCT int16 columns

    def take(self, rows: np.ndarray | slice) -> VariantColumns:
        """The columns of ``rows`` (a sub-catalog of those rows, in that order; a slice takes no copy)."""
        return VariantColumns(self.attribute[rows], tuple(column[rows] for column in self.codes))

    def has_value(self, attribute: str, code: int, rows: np.ndarray | None = None) -> np.ndarray:
        """Per product (of ``rows``, if given): whether ``attribute`` is its variant attribute and one of
        its variants has ``code``."""
        def col(column: np.ndarray) -> np.ndarray:
            return column if rows is None else column[rows]

        mask = col(self.attribute) == VARIANT_ATTRIBUTES.index(attribute)
        offered = col(self.codes[0]) == code
        for column in self.codes[1:]:
            offered |= col(column) == code
        mask &= offered
        return mask

    def values_of(self, row: int) -> tuple[str, tuple[str, ...]]:
        """``(attribute, values)`` of the product's variants, values ascending by code; ``("", ())`` if none
        (:func:`variant_values`)."""
        index = self.attribute.item(row)
        if index == NO_VARIANTS:
            return "", ()
        attribute = VARIANT_ATTRIBUTES[index]
        vocab = CATEGORICAL_ATTRIBUTES[attribute]
        return attribute, tuple([vocab[column.item(row)] for column in self.codes])

    def values_each(self, rows: Iterable[int]) -> list[tuple[str, tuple[str, ...]]]:
        """:meth:`values_of` of each of ``rows``, each column read once for all of them (a page of new products:
        a few gathers instead of a scalar read per product and column, which costs most when out of cache; up to
        :data:`~ecomrlve.catalog.schema.FEW_ROWS` rows, the scalar reads)."""
        rows = rows if isinstance(rows, (list, tuple)) else list(rows)
        if len(rows) <= FEW_ROWS:
            return [self.values_of(row) for row in rows]
        index = np.asarray(rows, dtype=np.int64)
        found: list[tuple[str, tuple[str, ...]]] = []
        for attribute_index, codes in zip(self.attribute[index].tolist(),
                                          zip(*[column[index].tolist() for column in self.codes])):
            if attribute_index == NO_VARIANTS:
                found.append(("", ()))
            else:
                attribute = VARIANT_ATTRIBUTES[attribute_index]
                vocabulary = CATEGORICAL_ATTRIBUTES[attribute]
                found.append((attribute, tuple([vocabulary[code] for code in codes])))
        return found

    def varies(self, attribute: str, rows: np.ndarray | None = None) -> np.ndarray:
        """Per product (of ``rows``): whether its variants vary ``attribute``."""
        column = self.attribute if rows is None else self.attribute[rows]
        return column == VARIANT_ATTRIBUTES.index(attribute)


def variant_columns(catalog: Catalog) -> VariantColumns:
    """The :class:`VariantColumns` of ``catalog``, drawn on first use (O(catalog), vectorised), once per catalog."""
    return VARIANT_COLUMNS.of(catalog)


def value_bits(catalog: Catalog, attribute: str) -> np.ndarray:
    """Per product, the values of ``attribute`` it has as bits (bit ``code``): its variants' values when its
    variants vary ``attribute``, else its own value (none: 0). Built on first use per attribute and kept, so a
    filter on a value is one AND over the column (:func:`~ecomrlve.catalog.filters.condition_masks`)."""
    return VALUE_BITS.of(catalog, attribute)


def _value_bits(catalog: Catalog, attribute: str) -> np.ndarray:
    if len(CATEGORICAL_ATTRIBUTES[attribute]) > 32:
        raise ValueError(f"attribute {attribute!r} has more values than a 32-bit set holds")
    one = np.uint32(1)
    own = catalog.categorical[attribute]
    found = np.where(own == NO_VALUE, np.uint32(0), np.left_shift(one, np.maximum(own, 0).astype(np.uint32)))
    columns = variant_columns(catalog)
    varies = columns.varies(attribute)
    if varies.any():
        offered = np.zeros(len(catalog), dtype=np.uint32)
        for column in columns.codes:
            offered |= np.where(column == NO_VALUE, np.uint32(0), np.left_shift(one, np.maximum(column, 0).astype(np.uint32)))
        found = np.where(varies, offered, found)
    found = found.astype(np.uint32)
    found.flags.writeable = False
    return found


def narrowing(catalog: Catalog, attribute: str) -> np.ndarray:
    """Per product: whether a requirement on ``attribute`` can narrow a request to it: always when its
    variants do not vary ``attribute``; when they do, only if its category offers at least twice
    :data:`VARIANTS_PER_PRODUCT` values (each product then has at most half of them; with fewer, most
    products of the category would have every value, and stating one would rule out nothing)."""
    return VARIANT_NARROWING.of(catalog, attribute)


def _narrowing(catalog: Catalog, attribute: str) -> np.ndarray:
    choices = np.zeros(len(catalog.categories), dtype=np.int64)
    for category, cat in enumerate(catalog.categories):
        if cat.variant_attribute == attribute and attribute in CATEGORICAL_ATTRIBUTES:
            seen = catalog.category_values(attribute)[category] if attribute in catalog.categorical else ()
            choices[category] = len(seen) if len(seen) >= VARIANTS_PER_PRODUCT else len(CATEGORICAL_ATTRIBUTES[attribute])
    weak = choices[catalog.category] < 2 * VARIANTS_PER_PRODUCT
    found = ~(variant_columns(catalog).varies(attribute) & weak)
    found.flags.writeable = False
    return found


VALUE_BITS = derived("value_bits", _value_bits)
VARIANT_NARROWING = derived("variant_narrowing", _narrowing)


def variant_attributes(catalog: Catalog, rows: Iterable[int]) -> list[str | None]:
    """Per row, the attribute the product's variants vary (its cards list it with the variants, not among
    the product's attributes); None when the product has no variants."""
    column = variant_columns(catalog).attribute
    return [None if index == NO_VARIANTS else VARIANT_ATTRIBUTES[index] for index in column[list(rows)].tolist()]


def variant_values(catalog: Catalog, row: int) -> tuple[str, tuple[str, ...]]:
    """``(attribute, values)`` of a product's variants, values ascending by code; ``("", ())`` if none."""
    return variant_columns(catalog).values_of(row)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, vectorised (uint64 arithmetic wraps)."""
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


def id_hashes(ids: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each fixed-width byte id (FNV-1a over the bytes, then mixed), vectorised over the ids."""
    ids = np.ascontiguousarray(ids)
    width = ids.dtype.itemsize
    raw = ids.view(np.uint8).reshape(len(ids), width) if len(ids) else np.zeros((0, width), np.uint8)
    h = np.full(len(ids), _FNV_OFFSET, dtype=np.uint64)
    for i in range(width):
        h = (h ^ raw[:, i].astype(np.uint64)) * _FNV_PRIME
    return _mix(h)


def _skip(index: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """``index`` counted among the positions but ``taken`` (each ``index`` position moves past it)."""
    return index + (index >= taken)


def _draw_variant_columns(catalog: Catalog) -> VariantColumns:
    n = len(catalog)
    attribute = np.full(n, NO_VARIANTS, dtype=np.int8)
    codes = tuple(np.full(n, NO_VALUE, dtype=np.int16) for _ in range(VARIANTS_PER_PRODUCT))
    words = id_hashes(catalog.ids)
    draws = (words, _mix(words ^ np.uint64(1)), _mix(words ^ np.uint64(2)))
    for category, rows in enumerate(catalog.category_rows):
        name = catalog.categories[category].variant_attribute
        vocab = CATEGORICAL_ATTRIBUTES.get(name)
        if vocab is None or not len(rows):
            continue
        seen = catalog.category_values(name)[category] if name in catalog.categorical else ()
        pool = np.asarray(seen if len(seen) >= VARIANTS_PER_PRODUCT else range(len(vocab)), dtype=np.int64)
        m = len(pool)
        own = (catalog.categorical[name][rows].astype(np.int64) if name in catalog.categorical
               else np.full(len(rows), NO_VALUE, dtype=np.int64))
        h1, h2, h3 = (d[rows] for d in draws)
        drawn = np.empty((len(rows), VARIANTS_PER_PRODUCT), dtype=np.int64)
        has_own = own != NO_VALUE
        # with its own value: the own value and two others of the pool (positions past the own one's)
        position = np.searchsorted(pool, own)
        first = (h1 % np.uint64(m - 1)).astype(np.int64)
        second = _skip((h2 % np.uint64(m - 2)).astype(np.int64), first)
        with_own = np.stack([own, pool[np.minimum(_skip(first, position), m - 1)],
                             pool[np.minimum(_skip(second, position), m - 1)]], axis=1)
        # without: three of the pool
        a = (h1 % np.uint64(m)).astype(np.int64)
        b = _skip((h2 % np.uint64(m - 1)).astype(np.int64), a)
        low, high = np.minimum(a, b), np.maximum(a, b)
        c = _skip(_skip((h3 % np.uint64(m - 2)).astype(np.int64), low), high)
        without = np.stack([pool[a], pool[b], pool[c]], axis=1)
        drawn[:] = np.where(has_own[:, None], with_own, without)
        drawn.sort(axis=1)
        attribute[rows] = VARIANT_ATTRIBUTES.index(name)
        for i, column in enumerate(codes):
            column[rows] = drawn[:, i]
    attribute.flags.writeable = False
    for column in codes:
        column.flags.writeable = False
    return VariantColumns(attribute, codes)


VARIANT_COLUMNS = derived("variant_columns", _draw_variant_columns)
