"""Per-row terms the recommendation scoring reads, worked out of a catalog's columns once.

* :class:`UtilityTerms` (per category view): the parts of a shopper's utility that no shopper changes.
* :class:`AttributeColumns` (per category view): the categorical codes and numeric values stacked, one
  C-contiguous ``(attributes, rows)`` block, which the compiled likeness kernel walks.
* :class:`FieldFacts` (per catalog): which requirement fields each product supports, as bits.

They live in the catalog layer (not with the environments that read them) so that ``ecomrlve catalog build``
can store them in a directory's ``derived/`` (:mod:`ecomrlve.catalog.store`), memory-mapped on open: every
replica of a server then shares one copy of their pages instead of building its own. A stored value is
what the build below returns for the same catalog, to the bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.schema import NO_BRAND, NO_VALUE, Catalog
from ecomrlve.catalog.variants import narrowing, variant_columns

#: Numeric attribute -> the bound a shopper states on it (more power, a bigger screen, lighter).
NUMERIC_BOUND = {"wattage": "wattage_min", "screen_size": "screen_size_min", "weight": "weight_max"}


@dataclass(frozen=True)
class UtilityTerms:
    """The per-row parts of the utility that no shopper changes, computed once per catalog with
    the numpy operations of the vectorised formula, so that gathering them is bit-identical to
    computing them for the rows anew."""

    price: np.ndarray  # USD
    rating_steps: np.ndarray  # rating·10 − 10 (the utility multiplies by the weight first, then divides by 40)
    shipping: np.ndarray  # in [0, 1]
    popularity: np.ndarray  # in [0, 1]


#: The fields of :class:`UtilityTerms`, in order (how a directory stores them).
UTILITY_FIELDS = ("price", "rating_steps", "shipping", "popularity")


def utility_terms(catalog: Catalog) -> UtilityTerms:
    """:class:`UtilityTerms` of every row of ``catalog`` (a category view), built once (derived data)."""
    return UTILITY_TERMS.of(catalog)


def _utility_terms(catalog: Catalog) -> UtilityTerms:
    return UtilityTerms(
        price=catalog.price_cents / 100.0, rating_steps=(catalog.rating_x10 - 10).astype(np.float64),
        shipping=1 - (np.minimum(catalog.ship_days, 14) - 1) / 13.0,
        popularity=np.minimum(1.0, np.log1p(catalog.rating_count) / 10.0))


UTILITY_TERMS = derived("utility_terms", _utility_terms)


@dataclass(frozen=True)
class AttributeColumns:
    """A catalog's categorical codes and numeric values stacked (one row per attribute, in the
    catalog's order), so one compiled pass compares every attribute."""

    codes: np.ndarray
    values: np.ndarray


def attribute_columns(catalog: Catalog) -> AttributeColumns:
    """:class:`AttributeColumns` of ``catalog`` (a category view), cached on it. A product's code of the
    attribute its variants vary reads ``NO_VALUE``: it has several values of it (its variants), and
    its card shows no product-level one (:mod:`ecomrlve.catalog.variants`), so likeness compares
    only what cards show."""
    return ATTRIBUTE_COLUMNS.of(catalog)


def _attribute_columns(catalog: Catalog) -> AttributeColumns:
    variants = variant_columns(catalog)
    codes = [np.where(variants.varies(attr), NO_VALUE, column) if variants.varies(attr).any() else column
             for attr, column in catalog.categorical.items()]
    values = list(catalog.numeric.values())
    return AttributeColumns(
        codes=np.stack(codes) if codes else np.zeros((0, len(catalog)), dtype=np.int64),
        values=np.stack(values) if values else np.zeros((0, len(catalog)), dtype=np.float32))


ATTRIBUTE_COLUMNS = derived("attribute_columns", _attribute_columns)


@dataclass(frozen=True)
class FieldFacts:
    """Which optional requirement fields each product of a catalog supports on its own, as bits
    (bit ``i``: ``names[i]``), computed once per catalog with vectorised compares, so that
    ``available_fields`` reads one integer per product instead of a dozen column entries."""

    bits: np.ndarray  # per row
    names: tuple[str, ...]  # what each bit states, in the order available_fields lists them
    equalities: tuple[tuple[int, np.ndarray], ...]  # (bit, codes): several rows support these only with one code
    decoded: dict[int, tuple[str, ...]]  # bits -> the names they set, filled on use (a handful of distinct sets)


def field_facts(catalog: Catalog) -> FieldFacts:
    """:class:`FieldFacts` of ``catalog``, built once per catalog (derived data)."""
    return FIELD_FACTS.of(catalog)


def field_names(catalog: Catalog) -> tuple[str, ...]:
    """What each bit of ``catalog``'s field facts states, in bit order."""
    return ("rating_min", "price_min", "brand", *catalog.categorical,
            *(bound for attr, bound in NUMERIC_BOUND.items() if attr in catalog.numeric))


def field_facts_of_bits(catalog: Catalog, bits: np.ndarray) -> FieldFacts:
    """The :class:`FieldFacts` of ``catalog`` whose per-row bits are ``bits`` (built, or read from a directory)."""
    names = field_names(catalog)
    equalities = tuple((1 << names.index(name), codes)
                       for name, codes in (("brand", catalog.brand), *catalog.categorical.items()))
    return FieldFacts(bits, names, equalities, {})


def _field_facts(catalog: Catalog) -> FieldFacts:
    columns: list[np.ndarray] = [catalog.rating_x10 > 0, catalog.price_cents >= 200, _branded(catalog)]
    columns += [(codes != NO_VALUE) & narrowing(catalog, attr) for attr, codes in catalog.categorical.items()]
    columns += [~np.isnan(catalog.numeric[attr]) for attr in NUMERIC_BOUND if attr in catalog.numeric]
    bits = np.zeros(len(catalog), dtype=np.int32)
    for bit, supported in enumerate(columns):
        bits |= supported.astype(np.int32) << bit
    return field_facts_of_bits(catalog, bits)


FIELD_FACTS = derived("field_facts", _field_facts)


def _branded(catalog: Catalog) -> np.ndarray:
    """Per row, whether the product has a brand a shopper can ask for (not ``NO_BRAND``)."""
    return np.array([name != NO_BRAND for name in catalog.brands], dtype=bool)[catalog.brand]


@dataclass(frozen=True)
class StoredTerms:
    """A directory's main-type views' utility terms and attribute columns (``derived/main_view_terms/``,
    memory-mapped), the views back to back in category order as :class:`~ecomrlve.catalog.views.StoredViews`
    holds their columns: view rows ``start:stop`` have the utility terms ``utility[i][start:stop]`` and the
    attribute columns ``codes[A * start:A * stop]`` as one C-contiguous ``(A, stop - start)`` block (``A``
    attributes; the same for the numeric ``values``), so that a view reads its terms without a copy."""

    utility: tuple[np.ndarray, ...]  # UTILITY_FIELDS, each of every view's rows
    codes: np.ndarray  # every view's (categorical attributes, rows) block, back to back
    values: np.ndarray  # every view's (numeric attributes, rows) block, back to back
    n_codes: int  # categorical attributes
    n_values: int  # numeric attributes

    def of_view(self, start: int, stop: int) -> tuple[UtilityTerms, AttributeColumns]:
        """The terms of the view whose rows are ``start:stop`` of the stacked views."""
        terms = UtilityTerms(*(column[start:stop] for column in self.utility))
        n = stop - start
        columns = AttributeColumns(self.codes[self.n_codes * start:self.n_codes * stop].reshape(self.n_codes, n),
                                   self.values[self.n_values * start:self.n_values * stop].reshape(self.n_values, n))
        return terms, columns

    @staticmethod
    def of(views: list[Catalog]) -> StoredTerms:
        """The terms of ``views`` (in category order), each as :func:`utility_terms` and :func:`attribute_columns`
        build it for the view."""
        terms = [utility_terms(view) for view in views]
        columns = [attribute_columns(view) for view in views]
        n_codes, n_values = (columns[0].codes.shape[0], columns[0].values.shape[0]) if columns else (0, 0)
        if len({c.codes.dtype for c in columns}) > 1 or len({c.values.dtype for c in columns}) > 1:
            raise ValueError("the category views' attribute columns differ in type")
        return StoredTerms(
            tuple(np.concatenate([getattr(t, name) for t in terms]) if terms else np.zeros(0) for name in UTILITY_FIELDS),
            np.concatenate([c.codes.ravel() for c in columns]) if columns else np.zeros(0, np.int64),
            np.concatenate([c.values.ravel() for c in columns]) if columns else np.zeros(0, np.float32),
            n_codes, n_values)
