"""Exact, vectorised product filters: the one definition of "this product matches".

:class:`ProductFilter` is the ``filters`` argument of ``catalog_search`` (its JSON schema is
generated from this model, unknown keys are rejected) and also how environments state
constraints, so the tool and the verifiers can never disagree about what matches.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.catalog.variants import value_bits


class ProductFilter(BaseModel):
    """Conditions a product must meet; every given field must hold (logical AND)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    category: str | None = Field(None, description="e.g. 'Chargers'.")
    brand: str | None = None  # any letter case
    color: str | None = None
    size: str | None = None
    material: str | None = None
    connector_type: str | None = None
    item_form: str | None = None
    price_min: float | None = Field(None, ge=0)
    price_max: float | None = Field(None, ge=0)
    rating_min: float | None = Field(None, ge=0, le=5)
    ship_days_max: int | None = Field(None, ge=0)
    in_stock: bool | None = None
    wattage_min: float | None = None
    wattage_max: float | None = None
    screen_size_min: float | None = None
    screen_size_max: float | None = None
    weight_min: float | None = None
    weight_max: float | None = None


#: Every condition of a :class:`ProductFilter` but its category.
CONDITION_FIELDS = tuple(name for name in ProductFilter.model_fields if name != "category")

_CATEGORICAL_CODES = {
    attr: {value.lower(): code for code, value in enumerate(vocab)}
    for attr, vocab in CATEGORICAL_ATTRIBUTES.items()
}
_NUMERIC_BOUNDS = (
    ("wattage", "wattage_min", "wattage_max"),
    ("screen_size", "screen_size_min", "screen_size_max"),
    ("weight", "weight_min", "weight_max"),
)


_LIMIT = 1e30  # beyond any price in cents or attribute value, yet finite as int and as float32


def _bounded(value: float) -> float:
    """``value`` clamped to ±1e30, so a bound such as 1e308 means "no bound" instead of overflowing."""
    return min(_LIMIT, max(-_LIMIT, value))


def _stocked(catalog: Catalog) -> np.ndarray:
    stocked = catalog.stock > 0
    stocked.flags.writeable = False
    return stocked


STOCKED = derived("stocked", _stocked)


def in_stock_mask(catalog: Catalog, stock_overrides: dict[int, int] | None = None) -> np.ndarray:
    """Products with stock > 0, with per-episode stock changes applied."""
    mask = STOCKED.of(catalog).copy()  # the stock column never changes: compared once per catalog
    for row, stock in (stock_overrides or {}).items():  # a handful per episode: cheaper one by one than as arrays
        mask[row] = stock > 0
    return mask


def filter_mask(catalog: Catalog, flt: ProductFilter, stock_overrides: dict[int, int] | None = None,
                rows: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of the products matching every condition of ``flt`` (O(n) numpy, no Python loop).

    With ``rows`` the mask is computed for those rows only (``mask[i]`` is about ``rows[i]``), so
    a check within one category costs O(category size), not O(catalog).
    """
    conditions = iter(condition_masks(catalog, flt, stock_overrides, rows).values())
    mask = next(conditions, None)  # every condition's mask is a fresh array: the first gathers the others
    if mask is None:
        return np.ones(len(catalog) if rows is None else len(rows), dtype=bool)
    for condition in conditions:
        mask &= condition
    return mask


def condition_masks(catalog: Catalog, flt: ProductFilter, stock_overrides: dict[int, int] | None = None,
                    rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each condition ``flt`` sets, by field name, -> the mask of the products meeting it (as in
    :func:`filter_mask`, which requires them all); how many of several conditions a product
    meets is then one filter's work. Every mask is a fresh array (:func:`filter_mask` ANDs into
    the first), never a kept one."""
    def col(column: np.ndarray) -> np.ndarray:
        return column if rows is None else column[rows]

    masks: dict[str, np.ndarray] = {}
    if flt.category is not None:
        cats = catalog.category_index.get(flt.category.strip().lower(), ())
        if len(cats) == 1:
            masks["category"] = col(catalog.category) == cats[0]
        else:
            masks["category"] = np.isin(col(catalog.category), np.asarray(cats, dtype=catalog.category.dtype))
    if flt.brand is not None:
        brand_codes = catalog.brand_codes.get(flt.brand.strip().lower(), (-1,))
        if len(brand_codes) == 1:
            masks["brand"] = col(catalog.brand) == brand_codes[0]
        else:
            masks["brand"] = np.isin(col(catalog.brand), np.asarray(brand_codes, dtype=catalog.brand.dtype))
    for attr, codes in _CATEGORICAL_CODES.items():
        value = getattr(flt, attr)
        if value is not None:
            masks[attr] = _has_value(catalog, attr, codes.get(value.strip().lower(), -2), rows)
    if flt.price_min is not None:
        masks["price_min"] = col(catalog.price_cents) >= math.ceil(_bounded(flt.price_min * 100 - 1e-6))
    if flt.price_max is not None:
        masks["price_max"] = col(catalog.price_cents) <= math.floor(_bounded(flt.price_max * 100 + 1e-6))
    if flt.rating_min is not None:
        masks["rating_min"] = col(catalog.rating_x10) >= math.ceil(flt.rating_min * 10 - 1e-6)
    if flt.ship_days_max is not None:
        masks["ship_days_max"] = col(catalog.ship_days) <= flt.ship_days_max
    for attr, low_field, high_field in _NUMERIC_BOUNDS:
        low, high = getattr(flt, low_field), getattr(flt, high_field)
        if low is not None:
            masks[low_field] = col(catalog.numeric[attr]) >= np.float32(_bounded(low)) - np.float32(1e-4)
        if high is not None:
            masks[high_field] = col(catalog.numeric[attr]) <= np.float32(_bounded(high)) + np.float32(1e-4)
    if flt.in_stock is not None:
        in_stock = in_stock_mask(catalog, stock_overrides) if rows is None else _in_stock_rows(catalog, rows, stock_overrides)
        masks["in_stock"] = in_stock if flt.in_stock else ~in_stock
    return masks


def _has_value(catalog: Catalog, attr: str, code: int, rows: np.ndarray | None) -> np.ndarray:
    """Per product (of ``rows``): whether it has value ``code`` of ``attr``: through one of its variants
    when its variants vary ``attr``, else as its own value (the rule of :mod:`ecomrlve.catalog.variants`)."""
    if code < 0:
        return np.zeros(len(catalog) if rows is None else len(rows), dtype=bool)
    bits = value_bits(catalog, attr)
    return ((bits if rows is None else bits[rows]) & np.uint32(1 << code)) != 0


def _in_stock_rows(catalog: Catalog, rows: np.ndarray, stock_overrides: dict[int, int] | None) -> np.ndarray:
    """``in_stock_mask`` restricted to ``rows`` (one vectorised compare per stock change: an episode
    makes a handful)."""
    mask = catalog.stock[rows] > 0
    for row, stock in (stock_overrides or {}).items():
        mask[rows == row] = stock > 0
    return mask


class AllowedRows:
    """The rows a filter allows, as ascending row numbers and as a boolean mask, each built on demand.

    A category filter yields the rows directly (a few ten thousand at 2M products), so searches
    within it never touch an O(catalog) array; retrievers ask for :attr:`mask` only on their
    path for large, unselective filters.
    """

    def __init__(self, n: int, *, rows: np.ndarray | None = None, mask: np.ndarray | None = None) -> None:
        if (rows is None) == (mask is None):
            raise ValueError("AllowedRows takes exactly one of rows and mask")
        self.n = n
        if rows is not None:
            self.__dict__["rows"] = np.asarray(rows, dtype=np.int64)
        else:
            self.__dict__["mask"] = mask

    @classmethod
    def from_mask(cls, mask: np.ndarray) -> AllowedRows:
        return cls(len(mask), mask=np.asarray(mask, dtype=bool))

    @cached_property
    def rows(self) -> np.ndarray:
        """Allowed row numbers, ascending (int64)."""
        return np.flatnonzero(self.mask)

    @cached_property
    def mask(self) -> np.ndarray:
        """``mask[row]`` is True for the allowed rows (length = catalog size)."""
        mask = np.zeros(self.n, dtype=bool)
        mask[self.rows] = True
        return mask

    @cached_property
    def count(self) -> int:
        return len(self.rows) if "rows" in self.__dict__ else int(np.count_nonzero(self.mask))
