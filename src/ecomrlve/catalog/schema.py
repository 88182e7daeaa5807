"""The canonical catalog: one column per field, no Python object per product.

A 2M-product catalog is a few numpy arrays and one Arrow string column (titles), so it fits in
a few hundred MB and filtering it is a vectorised comparison. Both the synthetic generator and
the real-catalog loaders produce a :class:`Catalog`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa

from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES, NUMERIC_ATTRIBUTES

#: Sentinel code for "this product has no value for that categorical attribute".
NO_VALUE = -1


@dataclass(frozen=True)
class Category:
    """A leaf category as the rest of the system needs it."""

    path: tuple[str, ...]
    noun: str
    variant_attribute: str

    @property
    def name(self) -> str:
        return self.path[-1]


@dataclass(eq=False)
class Catalog:
    """Columnar product table. Row ``i`` is one product; every column has one entry per row.

    ``price_cents`` and ``rating_x10`` are integers so that constraint checks are exact.
    ``categorical[attr]`` holds codes into ``CATEGORICAL_ATTRIBUTES[attr]`` (``NO_VALUE`` when
    absent); ``numeric[attr]`` holds float32 values (NaN when absent).
    """

    name: str
    ids: np.ndarray  # fixed-width bytes ("S…"), unique, not sequential
    titles: pa.Array  # string
    category: np.ndarray  # int16 index into categories
    categories: tuple[Category, ...]
    brand: np.ndarray  # int32 index into brands
    brands: tuple[str, ...]
    price_cents: np.ndarray  # int32
    rating_x10: np.ndarray  # int16, 10..50
    rating_count: np.ndarray  # int32
    ship_days: np.ndarray  # int16
    stock: np.ndarray  # int32, stock at the start of every episode
    categorical: dict[str, np.ndarray]
    numeric: dict[str, np.ndarray]
    metadata: dict[str, Any] = field(default_factory=dict)
    #: Extra searchable text per product (real catalogs: features + description), or None.
    descriptions: pa.Array | None = None

    def __post_init__(self) -> None:
        n = len(self.ids)
        columns = {
            "titles": self.titles, "category": self.category, "brand": self.brand,
            "price_cents": self.price_cents, "rating_x10": self.rating_x10,
            "rating_count": self.rating_count, "ship_days": self.ship_days, "stock": self.stock,
            **{f"categorical[{k}]": v for k, v in self.categorical.items()},
            **{f"numeric[{k}]": v for k, v in self.numeric.items()},
            **({"descriptions": self.descriptions} if self.descriptions is not None else {}),
        }
        for name, column in columns.items():
            if len(column) != n:
                raise ValueError(f"catalog column {name} has {len(column)} rows, ids has {n}")
        unknown = (set(self.categorical) - set(CATEGORICAL_ATTRIBUTES)) | (set(self.numeric) - set(NUMERIC_ATTRIBUTES))
        if unknown:
            raise ValueError(f"unknown attribute columns {sorted(unknown)}")

    def __len__(self) -> int:
        return len(self.ids)

    # -- lookups ------------------------------------------------------------------------------

    @cached_property
    def _id_order(self) -> np.ndarray:
        return np.argsort(self.ids, kind="stable")

    @cached_property
    def _sorted_ids(self) -> np.ndarray:
        return self.ids[self._id_order]

    def index_of(self, product_id: str) -> int | None:
        """Row of ``product_id`` (O(log n)), or None if the catalog has no such product."""
        if not isinstance(product_id, str) or not product_id.isascii() or not product_id.isprintable():
            return None  # an id is exactly an id: junk inside (zero-width, accents, NUL) never resolves
        key = product_id.encode("ascii")
        if not key or len(key) > self.ids.dtype.itemsize:
            return None
        pos = int(np.searchsorted(self._sorted_ids, key))
        if pos < len(self) and self._sorted_ids[pos] == key:
            return int(self._id_order[pos])
        return None

    def product_id(self, row: int) -> str:
        return self.ids[row].decode("ascii")

    def title(self, row: int) -> str:
        return self.titles[row].as_py()

    def price(self, row: int) -> float:
        return int(self.price_cents[row]) / 100

    def rating(self, row: int) -> float:
        return int(self.rating_x10[row]) / 10

    def category_of(self, row: int) -> Category:
        return self.categories[int(self.category[row])]

    def brand_of(self, row: int) -> str:
        return self.brands[int(self.brand[row])]

    def attributes(self, row: int) -> dict[str, str | float]:
        """The product's attribute values, decoded, omitting those it does not have."""
        out: dict[str, str | float] = {}
        for attr, codes in self.categorical.items():
            code = int(codes[row])
            if code != NO_VALUE:
                out[attr] = CATEGORICAL_ATTRIBUTES[attr][code]
        for attr, values in self.numeric.items():
            value = float(values[row])
            if value == value:  # not NaN
                out[attr] = round(value, 2)
        return out

    @cached_property
    def category_rows(self) -> tuple[np.ndarray, ...]:
        """Rows of each category (built once, O(n log n)), for O(1) sampling per reset."""
        order = np.argsort(self.category, kind="stable")
        bounds = np.searchsorted(self.category[order], np.arange(len(self.categories) + 1))
        return tuple(order[bounds[i]: bounds[i + 1]] for i in range(len(self.categories)))

    @cached_property
    def brand_index(self) -> dict[str, int]:
        return {name.lower(): i for i, name in enumerate(self.brands)}

    @cached_property
    def category_index(self) -> dict[str, tuple[int, ...]]:
        """Lower-cased category words (leaf, any ancestor, noun) -> matching category indices."""
        index: dict[str, set[int]] = {}
        for i, category in enumerate(self.categories):
            for word in (*category.path, category.noun):
                index.setdefault(word.lower(), set()).add(i)
        return {word: tuple(sorted(ids)) for word, ids in index.items()}

    def nbytes(self) -> int:
        arrays = [self.ids, self.category, self.brand, self.price_cents, self.rating_x10,
                  self.rating_count, self.ship_days, self.stock, *self.categorical.values(),
                  *self.numeric.values()]
        text = self.titles.nbytes + (self.descriptions.nbytes if self.descriptions is not None else 0)
        return sum(a.nbytes for a in arrays) + text

    def category_values(self, attribute: str) -> tuple[tuple[int, ...], ...]:
        """For each category, the codes of ``attribute`` its products carry (sorted)."""
        cache = self.__dict__.setdefault("_category_values", {})
        if attribute not in cache:
            codes = self.categorical[attribute]
            present = codes != NO_VALUE
            pairs = np.unique(self.category[present].astype(np.int64) * 65536 + codes[present])
            per_category: list[list[int]] = [[] for _ in self.categories]
            for pair in pairs.tolist():
                per_category[pair // 65536].append(pair % 65536)
            cache[attribute] = tuple(tuple(v) for v in per_category)
        return cache[attribute]
