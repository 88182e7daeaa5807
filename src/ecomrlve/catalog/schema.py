"""The canonical catalog: one column per field, no Python object per product.

A 2M-product catalog is a few numpy arrays and one Arrow string column (titles), so it fits in
a few hundred MB and filtering it is a vectorised comparison. Both the synthetic generator and
the real-catalog loaders produce a :class:`Catalog`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ecomrlve.catalog.derived import DerivedStore, derived
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES, NUMERIC_ATTRIBUTES
from ecomrlve.protocol import short_title as short_title  # the rule lives with the cards that show it

#: Sentinel code for "this product has no value for that categorical attribute".
NO_VALUE = -1
#: The brand name of a product without a brand (``brands`` holds it like any other): the shopper
#: names such a product by model words and type alone, and never asks for it "from" a brand.
NO_BRAND = ""
#: All-digit ids shorter than this are named in text only after a cue (see ``Catalog.ids_in_text``).
BARE_DIGITS = 5
_ID_CUE = re.compile(r"(?:#|\b(?:ids?|products?|items?|skus?|asins?|no\.?|numbers?|product_ids?)\b)[\s\"':=#]*$",
                     re.IGNORECASE)
_LIST_GAP = re.compile(r"[\s\"']*(?:,|/|&|\band\b|\bor\b)[\s\"',]*(?:and\b|or\b)?[\s\"'#]*", re.IGNORECASE)
_SENTENCE_PUNCTUATION = ".,;:!?-/'\"()[]"
#: Up to this many ids are looked up one at a time (:meth:`Catalog.index_of`), more in one vectorised call.
_FEW_IDS = 4


@dataclass(frozen=True)
class Category:
    """A leaf category as the rest of the system needs it."""

    path: tuple[str, ...]
    noun: str
    variant_attribute: str

    @property
    def name(self) -> str:
        return self.path[-1]


class _WeaklyReferenced:
    """A base with only a weak-reference slot: the catalog's own slots hold its fields, and nothing else."""

    __slots__ = ("__weakref__",)


#: Up to this many rows, the page reads (:meth:`Catalog.summaries`, :meth:`Catalog.attributes_each`,
#: ``VariantColumns.values_each``) read each value on its own: out of cache, a numpy gather per column costs more
#: than a few rows' scalar reads (1-4 rows: 20-35 % less with the caches flushed; a visit history of 2 products,
#: a product looked up by id). The same values either way.
FEW_ROWS = 4


@dataclass(eq=False, slots=True)
class Catalog(_WeaklyReferenced):
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
    brands: tuple[str, ...]  # NO_BRAND among them when some product has none
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
    #: How the catalog's persisted search indexes are opened (a catalog directory's, set by its loader);
    #: None: a search engine builds lexical BM25 in memory on first use.
    retriever_source: Callable[[Catalog], Any] | None = field(default=None, repr=False, compare=False)
    #: Everything computed from the columns, each value declared in :mod:`ecomrlve.catalog.derived` and built
    #: once; the catalog has fixed slots, so no module can keep anything else on it.
    derived: DerivedStore = field(default_factory=DerivedStore, init=False, repr=False, compare=False)

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

    @property
    def _id_order(self) -> np.ndarray:
        return ID_ORDER.of(self)

    @property
    def _sorted_ids(self) -> np.ndarray:
        return SORTED_IDS.of(self)

    def index_of(self, product_id: str) -> int | None:
        """Row of ``product_id`` (O(log n)), or None if the catalog has no such product."""
        if not isinstance(product_id, str) or not product_id.isascii() or not product_id.isprintable():
            return None  # an id is exactly an id: junk inside (zero-width, accents, NUL) never resolves
        key = product_id.encode("ascii")
        if not key or len(key) > self.ids.dtype.itemsize:
            return None
        sorted_ids = self._sorted_ids
        pos = sorted_ids.searchsorted(key)  # the methods: no numpy dispatch wrapper (a lookup per id a message names)
        if pos < len(sorted_ids) and sorted_ids.item(pos) == key:
            return self._id_order.item(pos)
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

    def summaries(self, rows: Iterable[int]) -> list[dict[str, Any]]:
        """Per row, the product's own fields as its card names them (id, title, brand, category, price,
        rating, rating count, shipping days): a page of search results reads them in one call, each column
        once for all ``rows`` (``tolist`` makes the Python values the per-row methods make of one row each); up to
        :data:`FEW_ROWS` rows are read row by row."""
        rows = rows if isinstance(rows, (list, tuple)) else list(rows)
        if len(rows) <= FEW_ROWS:
            return [{"product_id": self.product_id(row), "title": self.title(row), "brand": self.brand_of(row),
                     "category": self.category_of(row).name, "price": self.price(row), "rating": self.rating(row),
                     "rating_count": int(self.rating_count[row]), "ship_days": int(self.ship_days[row])} for row in rows]
        index = np.asarray(rows, dtype=np.int64)
        brands, categories, titles = self.brands, self.categories, self.titles
        # titles one by one: Arrow's take of a few rows costs ~3x their reads when its kernels are not in cache
        return [{"product_id": product_id.decode("ascii"), "title": titles[row].as_py(), "brand": brands[brand],
                 "category": categories[category].name, "price": price / 100, "rating": rating / 10,
                 "rating_count": rating_count, "ship_days": ship_days}
                for row, product_id, brand, category, price, rating, rating_count, ship_days in zip(
                    rows, self.ids[index].tolist(), self.brand[index].tolist(),
                    self.category[index].tolist(), self.price_cents[index].tolist(), self.rating_x10[index].tolist(),
                    self.rating_count[index].tolist(), self.ship_days[index].tolist())]

    def attributes_each(self, rows: Iterable[int], omit: Iterable[str | None]) -> list[dict[str, str | float]]:
        """:meth:`attributes` of each of ``rows`` but the attribute ``omit`` names for it (None: none), each
        column read once for all ``rows`` (more than :data:`FEW_ROWS` of them)."""
        rows = rows if isinstance(rows, (list, tuple)) else list(rows)
        if len(rows) <= FEW_ROWS:
            found = []
            for row, left_out in zip(rows, omit):
                own = self.attributes(row)
                if left_out is not None:
                    own.pop(left_out, None)
                found.append(own)
            return found
        index = np.asarray(rows, dtype=np.int64)
        categorical = [(attr, CATEGORICAL_ATTRIBUTES[attr], codes[index].tolist())
                       for attr, codes in self.categorical.items()]
        numeric = [(attr, values[index].tolist()) for attr, values in self.numeric.items()]
        found = []
        for i, left_out in zip(range(len(index)), omit):
            attributes: dict[str, str | float] = {}
            for attr, vocabulary, codes in categorical:
                code = codes[i]
                if code != NO_VALUE:
                    attributes[attr] = vocabulary[code]
            for attr, values in numeric:
                value = values[i]
                if value == value:  # not NaN
                    attributes[attr] = round(value, 2)
            if left_out is not None:
                attributes.pop(left_out, None)
            found.append(attributes)
        return found

    @property
    def category_rows(self) -> tuple[np.ndarray, ...]:
        """Rows of each category (built once, O(n log n)), for O(1) sampling per reset."""
        return CATEGORY_ROWS.of(self)

    @property
    def brand_index(self) -> dict[str, int]:
        return BRAND_INDEX.of(self)

    @property
    def brand_codes(self) -> dict[str, tuple[int, ...]]:
        """Lower-cased brand -> the codes of every spelling of it: a brand filter matches in any letter
        case (loaders merge spellings that differ only in case; a catalog made otherwise may not)."""
        return BRAND_CODES.of(self)

    @property
    def category_index(self) -> dict[str, tuple[int, ...]]:
        """Lower-cased category words (leaf, any ancestor, noun) -> matching category indices."""
        return CATEGORY_INDEX.of(self)

    def nbytes(self) -> int:
        arrays = [self.ids, self.category, self.brand, self.price_cents, self.rating_x10,
                  self.rating_count, self.ship_days, self.stock, *self.categorical.values(),
                  *self.numeric.values()]
        text = self.titles.nbytes + (self.descriptions.nbytes if self.descriptions is not None else 0)
        return sum(a.nbytes for a in arrays) + text

    def category_values(self, attribute: str) -> tuple[tuple[int, ...], ...]:
        """For each category, the codes of ``attribute`` its products carry (sorted)."""
        return CATEGORY_VALUES.of(self, attribute)

    # -- identity in text: how products are named in conversation --------------------------------

    def short_title(self, row: int) -> str:
        """How the product is named in conversation (see :func:`short_title`)."""
        return short_title(self.title(row))

    @property
    def _id_tokens(self) -> tuple[re.Pattern[str], frozenset[int]]:
        """A token pattern that keeps this catalog's ids whole (word characters plus the punctuation
        its ids use, e.g. UUID hyphens) and the id lengths worth looking up; built once, O(n)."""
        return ID_TOKENS.of(self)

    def ids_in_text(self, text: str) -> list[int]:
        """Rows of the catalog's products whose ids ``text`` names, in order of first mention.

        Works for any id scheme (synthetic ``P…`` ids, ASINs, UUIDs, numeric ids): the text is
        cut into tokens that keep ids whole and each plausible token is looked up in the O(log n)
        id index. A token counts only as a whole word (``xP12345678`` names nothing), with
        sentence punctuation stripped. Short all-digit ids (under ``BARE_DIGITS`` digits) would be
        read in every quantity and price, so they count only after a cue ("#12", "id 12",
        "product 12", ``"product_id": "12"``) or in a list that follows one ("products 12, 15").
        """
        pattern, lengths = self._id_tokens
        per_token: list[tuple[str, ...]] = []  # each mention's candidates: the token, then it stripped
        cued_list_end = -1  # where the last cued short numeric id ended, for "12, 15 and 18"
        for match in pattern.finditer(text):
            token = match.group(0)
            stripped = token.strip(_SENTENCE_PUNCTUATION)
            candidates = []
            for candidate in (token,) if stripped == token else (token, stripped):
                if len(candidate) not in lengths or not candidate.isascii():
                    continue
                if candidate.isdigit() and len(candidate) < BARE_DIGITS:
                    before = text[max(0, match.start() - 24): match.start()]
                    listed = cued_list_end >= 0 and _LIST_GAP.fullmatch(text[cued_list_end: match.start()]) is not None
                    if _ID_CUE.search(before) is None and not listed:
                        continue
                    cued_list_end = match.end()
                candidates.append(candidate)
            if candidates:
                per_token.append(tuple(candidates))
        if not per_token:
            return []
        found = self._rows_of_ids(list(dict.fromkeys(c for cs in per_token for c in cs)))
        rows: list[int] = []
        for mention in per_token:
            row = next((found[c] for c in mention if c in found), None)
            if row is not None and row not in rows:
                rows.append(row)
        return rows

    def _rows_of_ids(self, product_ids: list[str]) -> dict[str, int]:
        """Rows of those of ``product_ids`` (ASCII, printable, of an id's length) the catalog has: one vectorised
        O(k log n) lookup, or :meth:`index_of` each where there are a few (a message naming an order id: the
        vectorised lookup's fixed cost is that of several)."""
        if len(product_ids) <= _FEW_IDS:
            return {p: row for p in product_ids if (row := self.index_of(p)) is not None}
        sorted_ids = self._sorted_ids
        keys = np.array([p.encode("ascii") for p in product_ids], dtype=sorted_ids.dtype)
        positions = np.minimum(np.searchsorted(sorted_ids, keys), len(self) - 1)
        hits = sorted_ids[positions] == keys
        rows = self._id_order[positions]
        return {p: int(rows[i]) for i, p in enumerate(product_ids) if hits[i]}


# -- derived data of the catalog itself (declared in ecomrlve.catalog.derived) ------------------------

def _id_order(catalog: Catalog) -> np.ndarray:
    return np.argsort(catalog.ids, kind="stable")


def _sorted_ids(catalog: Catalog) -> np.ndarray:
    return catalog.ids[catalog._id_order]


def _category_rows(catalog: Catalog) -> tuple[np.ndarray, ...]:
    order = np.argsort(catalog.category, kind="stable")
    bounds = np.searchsorted(catalog.category[order], np.arange(len(catalog.categories) + 1))
    return tuple(order[bounds[i]: bounds[i + 1]] for i in range(len(catalog.categories)))


def _brand_index(catalog: Catalog) -> dict[str, int]:
    return {name.lower(): i for i, name in enumerate(catalog.brands)}


def _brand_codes(catalog: Catalog) -> dict[str, tuple[int, ...]]:
    codes: dict[str, list[int]] = {}
    for i, name in enumerate(catalog.brands):
        codes.setdefault(name.lower(), []).append(i)
    return {name: tuple(found) for name, found in codes.items()}


def _category_index(catalog: Catalog) -> dict[str, tuple[int, ...]]:
    index: dict[str, set[int]] = {}
    for i, category in enumerate(catalog.categories):
        for word in (*category.path, category.noun):
            index.setdefault(word.lower(), set()).add(i)
    return {word: tuple(sorted(ids)) for word, ids in index.items()}


def _category_values(catalog: Catalog, attribute: str) -> tuple[tuple[int, ...], ...]:
    codes = catalog.categorical[attribute]
    present = codes != NO_VALUE
    pairs = np.unique(catalog.category[present].astype(np.int64) * 65536 + codes[present])
    per_category: list[list[int]] = [[] for _ in catalog.categories]
    for pair in pairs.tolist():
        per_category[pair // 65536].append(pair % 65536)
    return tuple(tuple(v) for v in per_category)


def _id_tokens(catalog: Catalog) -> tuple[re.Pattern[str], frozenset[int]]:
    ids = np.ascontiguousarray(catalog.ids)
    raw = ids.view(np.uint8).reshape(len(ids), ids.dtype.itemsize) if len(ids) else np.zeros((0, 1), np.uint8)
    used = np.flatnonzero(np.bincount(raw.ravel(), minlength=256))
    punctuation = "".join(chr(b) for b in used.tolist() if 32 < b < 127 and not (chr(b).isalnum() or chr(b) == "_"))
    lengths = np.unique(np.count_nonzero(raw, axis=1)).tolist() or [1]
    word = r"[\w" + re.escape(punctuation) + r"]"
    # whole tokens only, and only those long enough to be an id (+2: punctuation to strip)
    pattern = rf"(?<!{word}){word}{{{min(lengths)},{max(lengths) + 2}}}(?!{word})"
    return re.compile(pattern), frozenset(lengths)


def build_lookups(catalog: Catalog) -> None:
    """The lookups every environment's tools and shopper read (id, brand and category indexes, the id token
    pattern), built now: ``EcomEnv()`` calls it so that no episode pays for their first use."""
    for lookup in (SORTED_IDS, BRAND_INDEX, BRAND_CODES, CATEGORY_INDEX, CATEGORY_ROWS, ID_TOKENS):
        lookup.of(catalog)


ID_ORDER = derived("id_order", _id_order)
SORTED_IDS = derived("sorted_ids", _sorted_ids)
CATEGORY_ROWS = derived("category_rows", _category_rows)
BRAND_INDEX = derived("brand_index", _brand_index)
BRAND_CODES = derived("brand_codes", _brand_codes)
CATEGORY_INDEX = derived("category_index", _category_index)
CATEGORY_VALUES = derived("category_values", _category_values)
ID_TOKENS = derived("id_tokens", _id_tokens)
