"""Real-catalog loaders: Amazon-Reviews-2023-style metadata or a plain product list -> :class:`Catalog`.

Sources: JSONL (optionally ``.gz``), a JSON array, CSV, Parquet, a Hugging Face ``datasets``
folder written by ``save_to_disk``, or ``hf:NAME[:CONFIG[:SPLIT]]`` (the ``[hf]`` extra), e.g.
the 2M-product ``hf:owlgebra-ai/Amazebay-catalog-2M`` (Amazon layout; ``price`` a string such
as "$12.99" or "None", ``details`` a JSON string). The schema is explicit (``schema="amazon"``
or ``"products"``) or decided per row (``"auto"``): a row with ``id`` and ``category`` (or
``id`` and no ``parent_asin``) is a product-list row, else a row with ``parent_asin`` is Amazon
metadata. Extra fields are ignored; the report says which source fields were read for what
(``SCHEMA_FIELDS``), which were ignored, and counts every dropped row by reason.

Amazon metadata mapping:

==================================  ========================================================
``parent_asin``                      product id
``categories`` (else                 category path; the leaf is the last element
``main_category``)
``title``                            title (required)
``price`` ("$1,299.00", 12.5, null)  ``price_cents``; rows without a parseable price are
                                     **dropped** (counted as ``no_price``), never given a
                                     made-up price, so every product can be a target
``details`` (dict or JSON string)    Brand, Color, Size, Material, Connector Type, Item Form,
                                     Wattage, Screen Size, Item Weight (units parsed: W/kW,
                                     inches/cm, pounds/ounces/grams/kg)
``store``                            brand when ``details`` has none (``NO_BRAND`` if neither;
                                     a placeholder, :data:`PLACEHOLDER_BRANDS`, counts as none)
``average_rating``, ``rating_number``  ``rating_x10`` (0 = not rated), ``rating_count``
``features`` + ``description``       ``descriptions`` (searchable text, 400 characters)
==================================  ========================================================

Product-list columns (JSON/CSV/Parquet): ``id``, ``title``, ``category`` (path joined by ``>``,
or a list; else ``categories``), ``price`` (number or "$12.99", USD; else ``base_price``),
``brand`` (a placeholder is none), ``rating`` (else ``average_rating``), ``rating_count`` (else
``rating_number``), ``description``, the attributes ``color``, ``size``, ``material``,
``connector_type``, ``item_form``, ``wattage`` (W), ``screen_size`` (in), ``weight`` (lb), and
optionally ``stock`` and ``ship_days``.

Categorical values are mapped onto the canonical vocabularies (``taxonomy.py``): exact match,
then a known synonym ("Type C" -> USB-C, "X-Large" -> XL), then the longest vocabulary term
inside the value ("Midnight Blue" -> Blue); anything else is ``NO_VALUE`` and counted in the
report. ``ship_days`` and ``stock`` (when absent) are derived from the product id alone, so they
are the same in every load. Bad rows are skipped and counted; a file that cannot be parsed (a
line that is not JSON, a broken gzip or Parquet file) raises :class:`CatalogLoadError` naming
the file and line.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pyarrow as pa

from ecomrlve.catalog.product_type import ALNUM, last_word
from ecomrlve.catalog.schema import NO_BRAND, NO_VALUE, Catalog, Category, short_title
from ecomrlve.catalog.taxonomy import (
    CATEGORICAL_ATTRIBUTES,
    DEFAULT_VARIANT_PRIORITY,
    NUMERIC_ATTRIBUTES,
    VARIANT_PRIORITY,
)
from ecomrlve.errors import UserInputError
from ecomrlve.rng import derive_seed

DESCRIPTION_CHARS = 400
MAX_ID_BYTES = 64  # room for UUIDs (36) and prefixed SKUs; the id column is as wide as the longest id
_SHIP_DAYS = (1, 2, 2, 3, 3, 4, 5, 7)
_PRICE = re.compile(r"\d[\d,]*(?:\.\d+)?|\.\d+")
_NUMBER_UNIT = re.compile(r"(\d+(?:\.\d+)?)\s*([a-zA-Z\"']*)")
_WEIGHT_TO_LB = {"pound": 1.0, "pounds": 1.0, "lb": 1.0, "lbs": 1.0, "ounce": 1 / 16, "ounces": 1 / 16,
                 "oz": 1 / 16, "gram": 1 / 453.592, "grams": 1 / 453.592, "g": 1 / 453.592,
                 "kilogram": 2.20462, "kilograms": 2.20462, "kg": 2.20462, "": 1.0}
_LENGTH_TO_IN = {"inch": 1.0, "inches": 1.0, "in": 1.0, '"': 1.0, "''": 1.0, "cm": 1 / 2.54,
                 "centimeters": 1 / 2.54, "mm": 1 / 25.4, "millimeters": 1 / 25.4, "": 1.0}
_POWER_TO_W = {"w": 1.0, "watt": 1.0, "watts": 1.0, "kw": 1000.0, "kilowatts": 1000.0, "": 1.0}
_NUMERIC_UNITS = {"wattage": _POWER_TO_W, "screen_size": _LENGTH_TO_IN, "weight": _WEIGHT_TO_LB}
#: What real product files (Amazon metadata, Shopify exports) write in the brand field for "no
#: brand", compared case-insensitively. Taken as a brand, the shopper would ask for "the Unbranded
#: storage bin" and for products "from Generic", and one made-up brand would tie unrelated
#: products together; a product with one is loaded with ``NO_BRAND``, as one whose file gives none.
PLACEHOLDER_BRANDS = frozenset({"unbranded", "generic", "unknown", "n/a", "none", "no brand", "-"})
_DETAIL_KEYS = {
    "brand": ("Brand", "Brand Name", "Manufacturer"),
    "color": ("Color", "Colour", "Color Name"),
    "size": ("Size",),
    "material": ("Material", "Material Type", "Outer Material"),
    "connector_type": ("Connector Type", "Connectivity Technology", "Interface"),
    "item_form": ("Item Form",),
    "wattage": ("Wattage", "Output Wattage", "Power"),
    "screen_size": ("Screen Size", "Standing screen display size", "Display Size"),
    "weight": ("Item Weight", "Weight"),
}
_SYNONYMS = {
    "connector_type": {"type c": "USB-C", "usb type c": "USB-C", "usb type-c": "USB-C", "usb c": "USB-C",
                       "micro usb": "Micro-USB", "microusb": "Micro-USB", "usb": "USB-A", "usb a": "USB-A",
                       "wireless": "Bluetooth", "3.5 mm": "3.5mm", "aux": "3.5mm", "3.5mm jack": "3.5mm"},
    "size": {"x-small": "XS", "extra small": "XS", "x-large": "XL", "extra large": "XL", "xx-large": "XXL",
             "2xl": "XXL", "california king": "King"},
    "color": {"grey": "Gray", "clear": "White"},
}


class CatalogLoadError(UserInputError):
    """A source that cannot be read at all (names the file and, where known, the line)."""


#: ``--schema``: ``auto`` decides per row (see :func:`detect_schema`); the others read every row one way.
SCHEMAS = ("auto", "amazon", "products")
AUTO_RULE = ("a row with id and category (or id and no parent_asin) is a product-list row, "
             "else a row with parent_asin is Amazon metadata")
#: Per schema, catalog field -> the source keys it is read from (the first one present wins).
SCHEMA_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "amazon": {"id": ("parent_asin",), "title": ("title",), "category": ("categories", "main_category"),
               "price": ("price",), "brand": ("details", "store"), "rating": ("average_rating",),
               "rating_count": ("rating_number",), "description": ("features", "description"),
               "attributes": ("details",)},
    "products": {"id": ("id",), "title": ("title",), "category": ("category", "categories"),
                 "price": ("price", "base_price"), "brand": ("brand",), "rating": ("rating", "average_rating"),
                 "rating_count": ("rating_count", "rating_number"), "description": ("description",),
                 **{attr: (attr,) for attr in (*CATEGORICAL_ATTRIBUTES, *NUMERIC_ATTRIBUTES)},
                 "stock": ("stock",), "ship_days": ("ship_days",)},
}
_FIELD_SAMPLE_ROWS = 1000  # rows per schema whose keys the report's field mapping is taken from


@dataclass
class LoadReport:
    """What a load did: rows read and kept, skipped rows by reason, values that did not map, and
    which schema read the rows with which source fields."""

    source: str
    schema: str = "auto"
    rows_read: int = 0
    rows_loaded: int = 0
    skipped: Counter = field(default_factory=Counter)
    unmapped: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    schema_rows: Counter = field(default_factory=Counter)  # schema -> rows read with it
    keys_seen: dict[str, set[str]] = field(default_factory=dict)  # schema -> source keys of its first rows

    def skip(self, reason: str, where: str) -> None:
        self.skipped[reason] += 1
        if len(self.examples) < 10:
            self.examples.append(f"{where}: {reason}")

    def note_row(self, schema: str, row: dict[str, Any]) -> None:
        self.schema_rows[schema] += 1
        if self.schema_rows[schema] <= _FIELD_SAMPLE_ROWS:
            self.keys_seen.setdefault(schema, set()).update(k for k, v in row.items() if not _empty(v))

    def field_mapping(self) -> dict[str, dict[str, Any]]:
        """Per schema used: catalog field -> source keys found, fields found nowhere, source keys nothing reads."""
        out = {}
        for schema, keys in sorted(self.keys_seen.items()):
            fields = SCHEMA_FIELDS[schema]
            mapped = {name: [k for k in sources if k in keys] for name, sources in fields.items()}
            read = {k for sources in fields.values() for k in sources}
            out[schema] = {"mapped": {name: found for name, found in mapped.items() if found},
                           "not_found": sorted(name for name, found in mapped.items() if not found),
                           "ignored": sorted(keys - read)}
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "schema": self.schema, "rows_read": self.rows_read,
                "rows_loaded": self.rows_loaded, "skipped": dict(self.skipped), "unmapped": dict(self.unmapped),
                "examples": self.examples, "schema_rows": dict(self.schema_rows),
                "schema_rule": AUTO_RULE if self.schema == "auto" else f"--schema {self.schema}",
                "fields": self.field_mapping()}


def format_load_report(report: dict[str, Any]) -> str:
    """A short block saying what a load read, with which fields, and every reason rows were dropped."""
    used = ", ".join(f"{schema} {rows:,}" for schema, rows in report.get("schema_rows", {}).items()) or "none"
    lines = [f"catalog {report['source']}: {report['rows_loaded']:,} of {report['rows_read']:,} rows loaded "
             f"(schema {report.get('schema', 'auto')}: {used} rows)"]
    if report.get("schema") == "auto":
        lines.append(f"  auto: {AUTO_RULE}")
    for schema, mapping in report.get("fields", {}).items():
        mapped = ", ".join(f"{name}<-{'+'.join(keys)}" for name, keys in mapping["mapped"].items())
        lines.append(f"  {schema} fields: {mapped}")
        if mapping["ignored"]:
            lines.append(f"  {schema} ignored: {', '.join(mapping['ignored'])}")
    dropped = report["rows_read"] - report["rows_loaded"]
    reasons = ", ".join(f"{reason} {count:,}" for reason, count in
                        sorted(report["skipped"].items(), key=lambda item: (-item[1], item[0])))
    lines.append(f"  dropped {dropped:,} rows" + (f": {reasons}" if reasons else ""))
    if report.get("unmapped"):
        lines.append("  attribute values outside the vocabulary (kept, no value): "
                     + ", ".join(f"{attr} {count:,}" for attr, count in sorted(report["unmapped"].items())))
    return "\n".join(lines)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, tuple, dict)) and len(value) == 0)


@dataclass(frozen=True)
class _Product:
    """One product after mapping, before it becomes a catalog row."""

    id: str
    title: str
    path: tuple[str, ...]
    brand: str
    price_cents: int
    rating_x10: int
    rating_count: int
    description: str
    categorical: dict[str, str | None]
    numeric: dict[str, float]
    stock: int | None = None
    ship_days: int | None = None


class _Skip(Exception):
    """This row is bad (the message says why); count it and go on."""


# -- value parsing ----------------------------------------------------------------------------------


def parse_price_cents(value: Any) -> int | None:
    """``"$1,299.00"`` -> 129900; ``12.5`` -> 1250; None, "", "—" or a non-positive price -> None.

    A range ("$10.99 - $15.99") takes its lower end, the price a shopper would see first.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        match = _PRICE.search(str(value))
        if match is None:
            return None
        number = float(match.group(0).replace(",", ""))
    if not math.isfinite(number) or number <= 0:
        return None
    return round(number * 100)


def parse_quantity(text: Any, units: dict[str, float]) -> float:
    """First number in ``text`` converted by its unit (``"8 Ounces"`` -> 0.5 lb); NaN if none fits."""
    if text is None:
        return math.nan
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    for number, unit in _NUMBER_UNIT.findall(str(text)):
        factor = units.get(unit.lower())
        if factor is not None:
            return round(float(number) * factor, 3)
    return math.nan


def canonical_value(attribute: str, raw: Any) -> str | None:
    """Map a free-text attribute value onto the canonical vocabulary, or None."""
    if raw is None:
        return None
    text = str(raw).strip()
    if not text:
        return None
    vocab = CATEGORICAL_ATTRIBUTES[attribute]
    lower = text.lower()
    for value in vocab:
        if value.lower() == lower:
            return value
    synonym = _SYNONYMS.get(attribute, {}).get(lower)
    if synonym is not None:
        return synonym
    if attribute == "size":  # sizes are short codes: "M" inside "Medium Blue" would be a guess
        return None
    best = None
    for value in vocab:
        found = re.search(f"(?<!{ALNUM})" + re.escape(value.lower()) + f"(?!{ALNUM})", lower)
        if found and (best is None or len(value) > len(best)):
            best = value
    return best


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us")) and len(word) > 3:
        return word[:-1]
    return word


def category_noun(leaf: str, titles: Sequence[str] = ()) -> str:
    """What one product of a leaf category is called: "USB Cables" -> "USB Cable".

    Shoppers and agents name products by their titles, so when most of the category's
    ``titles`` do not contain the leaf's noun (a leaf such as "Electronics", or "Over-Ear
    Headphones" over titles that say "Headphones"), the most common last word of the titles'
    first clause that has a letter is used instead ("Bonjour Torch 2" ends in "Torch").
    """
    words = re.split(r"\s*(?:&|,| and )\s*", leaf)[0].split()
    noun = " ".join([*words[:-1], _singular(words[-1])]) if words else leaf
    if not titles:
        return noun
    pattern = re.compile(f"(?<!{ALNUM})" + re.escape(noun.lower()) + f"(?!{ALNUM})")
    if sum(bool(pattern.search(t.lower())) for t in titles) * 2 >= len(titles):
        return noun
    heads = Counter(last_word(words) for words in (short_title(t).split(" - ")[0].split() for t in titles) if words)
    return heads.most_common(1)[0][0] if heads else noun


# -- row mapping ----------------------------------------------------------------------------------


def _text_list(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value if v)
    if hasattr(value, "tolist"):
        return _text_list(value.tolist())
    return str(value)


def _details(value: Any) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise _Skip("details is not valid JSON") from None
    if not isinstance(value, dict):
        raise _Skip("details is not an object")
    return value


def _detail(details: dict[str, Any], attribute: str) -> Any:
    for key in _DETAIL_KEYS[attribute]:
        if details.get(key) not in (None, ""):
            return details[key]
    return None


def brand_name(*values: Any) -> str:
    """The first of ``values`` that names a brand (not empty, not a placeholder), else ``NO_BRAND``."""
    for value in values:
        brand = str(value).strip() if value is not None else ""
        if brand and brand.lower() not in PLACEHOLDER_BRANDS:
            return brand
    return NO_BRAND


def _rating(value: Any) -> int:
    if value is None or value == "":
        return 0
    try:
        rating = float(value)
    except (TypeError, ValueError):
        raise _Skip("rating is not a number") from None
    if not math.isfinite(rating) or rating < 0 or rating > 5:
        raise _Skip("rating outside 0..5")
    return 0 if rating == 0 else min(50, max(10, round(rating * 10)))


def _count(value: Any) -> int:
    if value is None or value == "":
        return 0
    try:
        return max(0, int(float(value)))
    except (TypeError, ValueError):
        raise _Skip("rating count is not a number") from None


def _clean_id(value: Any) -> str:
    product_id = "" if value is None else str(value).strip()  # a numeric id may be 0
    if not product_id:
        raise _Skip("missing id")
    if not product_id.isascii() or len(product_id) > MAX_ID_BYTES or not product_id.isprintable():
        raise _Skip(f"id is not printable ASCII of at most {MAX_ID_BYTES} characters")
    return product_id


def _clean_title(value: Any) -> str:
    title = " ".join(str(value or "").split())
    if not title:
        raise _Skip("missing title")
    return title


def _attributes(raw: dict[str, Any], report: LoadReport) -> tuple[dict[str, str | None], dict[str, float]]:
    categorical: dict[str, str | None] = {}
    for attr in CATEGORICAL_ATTRIBUTES:
        value = canonical_value(attr, raw.get(attr))
        if value is None and raw.get(attr) not in (None, ""):
            report.unmapped[attr] += 1
        categorical[attr] = value
    numeric = {attr: parse_quantity(raw.get(attr), _NUMERIC_UNITS[attr]) for attr in NUMERIC_ATTRIBUTES}
    return categorical, numeric


def _amazon_row(row: dict[str, Any], report: LoadReport) -> _Product:
    product_id = _clean_id(row.get("parent_asin"))
    title = _clean_title(row.get("title"))
    price = parse_price_cents(row.get("price"))
    if price is None:
        raise _Skip("no_price")
    categories = [str(c).strip() for c in (row.get("categories") or []) if str(c).strip()]
    path = tuple(categories) or ((str(row["main_category"]).strip(),) if row.get("main_category") else ())
    if not path:
        raise _Skip("no category")
    details = _details(row.get("details"))
    raw = {attr: _detail(details, attr) for attr in _DETAIL_KEYS}
    categorical, numeric = _attributes(raw, report)
    brand = brand_name(raw["brand"], row.get("store"))
    description = " ".join(f"{_text_list(row.get('features'))} {_text_list(row.get('description'))}".split())
    return _Product(product_id, title, path, brand, price, _rating(row.get("average_rating")),
                    _count(row.get("rating_number")), description[:DESCRIPTION_CHARS], categorical, numeric)


def _optional_int(value: Any, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(float(value))
    except (TypeError, ValueError):
        raise _Skip(f"{name} is not a number") from None
    if number < 0:
        raise _Skip(f"{name} is negative")
    return number


def _first(row: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((row[key] for key in keys if not _empty(row.get(key))), None)


def _path(value: Any) -> tuple[str, ...]:
    """A category path from "A > B > C" or a list ["A", "B", "C"]."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    parts = value if isinstance(value, (list, tuple)) else str(value or "").split(">")
    return tuple(p for p in (str(part).strip() for part in parts) if p)


def _list_row(row: dict[str, Any], report: LoadReport) -> _Product:
    fields = SCHEMA_FIELDS["products"]
    product_id = _clean_id(row.get("id"))
    title = _clean_title(row.get("title"))
    price = parse_price_cents(_first(row, fields["price"]))
    if price is None:
        raise _Skip("no_price")
    path = _path(_first(row, fields["category"]))
    if not path:
        raise _Skip("no category")
    categorical, numeric = _attributes(row, report)
    brand = brand_name(row.get("brand"))
    return _Product(product_id, title, path, brand, price, _rating(_first(row, fields["rating"])),
                    _count(_first(row, fields["rating_count"])),
                    " ".join(_text_list(row.get("description")).split())[:DESCRIPTION_CHARS], categorical, numeric,
                    stock=_optional_int(row.get("stock"), "stock"), ship_days=_optional_int(row.get("ship_days"), "ship_days"))


def detect_schema(row: dict[str, Any]) -> str:
    """``--schema auto``: which schema reads this row (``AUTO_RULE``). A product list may carry
    extra fields, ``parent_asin`` among them, without being taken for Amazon metadata."""
    if "id" in row and ("category" in row or "parent_asin" not in row):
        return "products"
    if "parent_asin" in row:
        return "amazon"
    raise _Skip("row has neither parent_asin nor id")


_ROW_MAPPERS = {"amazon": _amazon_row, "products": _list_row}


def map_row(row: Any, report: LoadReport, schema: str = "auto") -> _Product:
    """One source row -> a product, read with ``schema`` (raises ``_Skip`` for a bad row)."""
    if not isinstance(row, dict):
        raise _Skip("row is not an object")
    chosen = detect_schema(row) if schema == "auto" else schema
    report.note_row(chosen, row)
    return _ROW_MAPPERS[chosen](row, report)


# -- sources --------------------------------------------------------------------------------------


def _open_text(path: Path) -> TextIO:
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def _jsonl_rows(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        with _open_text(path) as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    yield f"{path}:{number}", json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CatalogLoadError(f"{path}, line {number}: not valid JSON ({exc.msg})") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise CatalogLoadError(f"{path}: cannot be read ({exc})") from None


def _json_rows(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        with _open_text(path) as handle:
            first = handle.read(1)
            while first and first.isspace():
                first = handle.read(1)
        if first != "[":
            yield from _jsonl_rows(path)
            return
        with _open_text(path) as handle:
            data = json.load(handle)
    except json.JSONDecodeError as exc:
        raise CatalogLoadError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise CatalogLoadError(f"{path}: cannot be read ({exc})") from None
    for number, row in enumerate(data):
        yield f"{path}[{number}]", row


def _csv_rows(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        with _open_text(path) as handle:
            for number, row in enumerate(csv.DictReader(handle), 2):
                yield f"{path}:{number}", row
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:
        raise CatalogLoadError(f"{path}: cannot be read as CSV ({exc})") from None


def _parquet_rows(path: Path) -> Iterator[tuple[str, Any]]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        number = 0
        for batch in parquet.iter_batches(batch_size=10_000):
            for row in batch.to_pylist():
                yield f"{path}[{number}]", row
                number += 1
    except (OSError, pa.ArrowException) as exc:
        raise CatalogLoadError(f"{path}: cannot be read as Parquet ({exc})") from None


def _dataset_rows(dataset: Iterable[dict[str, Any]], label: str) -> Iterator[tuple[str, Any]]:
    for number, row in enumerate(dataset):
        yield f"{label}[{number}]", row


def _hf_dataset(spec: str) -> Iterable[dict[str, Any]]:
    try:
        import datasets
    except ImportError as exc:
        raise CatalogLoadError(f"{spec}: loading a Hugging Face dataset needs: pip install 'ecomrlve[hf]'") from exc
    path = Path(spec)
    if path.is_dir():
        loaded = datasets.load_from_disk(str(path))
        if isinstance(loaded, datasets.DatasetDict):
            loaded = loaded[next(iter(loaded))]
        return loaded
    name, _, rest = spec.removeprefix("hf:").partition(":")
    config, _, split = rest.partition(":")
    try:
        loaded = datasets.load_dataset(name, config or None, split=split or None, streaming=True)
    except (ConnectionError, FileNotFoundError, ValueError) as exc:  # offline, no such dataset, config or split
        raise CatalogLoadError(f"{spec}: cannot open it on the Hugging Face Hub ({exc})") from None
    if isinstance(loaded, (datasets.DatasetDict, datasets.IterableDatasetDict)):
        # no split named: "full" (Amazon Reviews 2023), "train" (most hub datasets), else the first
        loaded = loaded[next((s for s in ("full", "train") if s in loaded), next(iter(loaded)))]
    return loaded


def source_rows(source: str | Path) -> Iterator[tuple[str, Any]]:
    """``(where, row)`` pairs from a file, a ``save_to_disk`` folder or ``hf:NAME[:CONFIG[:SPLIT]]``."""
    text = str(source)
    if text.startswith("hf:"):
        return _dataset_rows(_hf_dataset(text), text)
    path = Path(source)
    if path.is_dir():
        return _dataset_rows(_hf_dataset(str(path)), str(path))
    if not path.exists():
        raise CatalogLoadError(f"{path}: no such file")
    suffixes = [s.lower() for s in path.suffixes]
    kind = suffixes[-2] if suffixes and suffixes[-1] == ".gz" and len(suffixes) > 1 else (suffixes[-1] if suffixes else "")
    readers = {".jsonl": _jsonl_rows, ".ndjson": _jsonl_rows, ".json": _json_rows, ".csv": _csv_rows,
               ".parquet": _parquet_rows}
    if kind not in readers:
        raise CatalogLoadError(f"{path}: unknown format {kind or '(none)'}; expected .jsonl, .json, .csv or .parquet (optionally .gz)")
    return readers[kind](path)


# -- assembly -------------------------------------------------------------------------------------


def _derived(product_id: str, stream: str, choices: tuple[int, ...]) -> int:
    return choices[derive_seed("catalog-derived", stream, product_id) % len(choices)]


def _variant_attribute(path: tuple[str, ...], distinct: dict[str, int]) -> str:
    priority = VARIANT_PRIORITY.get(path[0], DEFAULT_VARIANT_PRIORITY)
    for attr in (*priority, *DEFAULT_VARIANT_PRIORITY, *CATEGORICAL_ATTRIBUTES):
        if distinct.get(attr, 0) >= 3:
            return attr
    return priority[0]


def canonical_brands(names: Iterable[str]) -> dict[str, str]:
    """Each brand spelling -> the one spelling of its brand: names that differ only in letter case (one
    store writes "Sxban", another "SXBan") are one brand, spelled as most of its products spell it (ties:
    the first in sorted order), so that a shopper's brand names one set of products."""
    counts = Counter(names)
    canonical: dict[str, str] = {}
    for spelling, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        canonical.setdefault(spelling.lower(), spelling)
    return {spelling: canonical[spelling.lower()] for spelling in counts}


def assemble(products: list[_Product], name: str, metadata: dict[str, Any]) -> Catalog:
    """Column arrays from mapped products (ids must already be unique)."""
    n = len(products)
    paths = sorted({p.path for p in products})
    path_code = {path: i for i, path in enumerate(paths)}
    spelled = canonical_brands(p.brand for p in products)
    brands = tuple(sorted(set(spelled.values())))
    code_of = {b: i for i, b in enumerate(brands)}
    brand_code = {b: code_of[c] for b, c in spelled.items()}
    vocab_code = {attr: {v: i for i, v in enumerate(vocab)} for attr, vocab in CATEGORICAL_ATTRIBUTES.items()}
    category = np.fromiter((path_code[p.path] for p in products), dtype=np.int16, count=n)
    categorical = {
        attr: np.fromiter((NO_VALUE if (value := p.categorical[attr]) is None else vocab_code[attr][value]
                           for p in products), dtype=np.int16, count=n)
        for attr in CATEGORICAL_ATTRIBUTES
    }
    numeric = {attr: np.fromiter((p.numeric[attr] for p in products), dtype=np.float32, count=n)
               for attr in NUMERIC_ATTRIBUTES}
    titles_by_category: list[list[str]] = [[] for _ in paths]
    for p in products:
        titles_by_category[path_code[p.path]].append(p.title)
    categories = []
    for i, path in enumerate(paths):
        in_category = category == i
        distinct = {attr: len(np.unique(codes[in_category & (codes != NO_VALUE)])) for attr, codes in categorical.items()}
        categories.append(Category(path=path, noun=category_noun(path[-1], titles_by_category[i]),
                                   variant_attribute=_variant_attribute(path, distinct)))
    stock = [p.stock if p.stock is not None else
             (0 if derive_seed("catalog-derived", "oos", p.id) % 100 < 7 else 1 + derive_seed("catalog-derived", "stock", p.id) % 60)
             for p in products]
    ship = [p.ship_days if p.ship_days is not None else _derived(p.id, "ship", _SHIP_DAYS) for p in products]
    width = max((len(p.id) for p in products), default=1)
    descriptions = [p.description for p in products]
    return Catalog(
        name=name, ids=np.array([p.id.encode("ascii") for p in products], dtype=f"S{width}"),
        titles=pa.array([p.title for p in products], type=pa.string()),
        category=category, categories=tuple(categories),
        brand=np.fromiter((brand_code[p.brand] for p in products), dtype=np.int32, count=n), brands=brands,
        price_cents=np.fromiter((p.price_cents for p in products), dtype=np.int32, count=n),
        rating_x10=np.fromiter((p.rating_x10 for p in products), dtype=np.int16, count=n),
        rating_count=np.fromiter((p.rating_count for p in products), dtype=np.int32, count=n),
        ship_days=np.asarray(ship, dtype=np.int16), stock=np.asarray(stock, dtype=np.int32),
        categorical=categorical, numeric=numeric, metadata=metadata,
        descriptions=pa.array(descriptions, type=pa.string()) if any(descriptions) else None,
    )


def load_products(source: str | Path, *, schema: str = "auto", limit: int | None = None,
                  progress: Callable[[int], None] | None = None) -> tuple[Catalog, LoadReport]:
    """Load a real catalog from ``source`` (see the module docstring); returns it with a report.

    ``schema``: ``auto`` (per row, ``AUTO_RULE``), ``amazon`` or ``products``. Duplicate ids keep
    the first row (later ones are counted as ``duplicate id``).
    """
    if schema not in SCHEMAS:
        raise CatalogLoadError(f"unknown schema {schema!r}; expected one of {', '.join(SCHEMAS)}")
    report = LoadReport(source=str(source), schema=schema)
    products: list[_Product] = []
    seen: set[str] = set()
    for where, row in source_rows(source):
        if limit is not None and report.rows_read >= limit:
            break
        report.rows_read += 1
        if progress and report.rows_read % 10_000 == 0:
            progress(10_000)
        try:
            product = map_row(row, report, schema)
        except _Skip as skip:
            report.skip(str(skip), where)
            continue
        if product.id in seen:
            report.skip("duplicate id", where)
            continue
        seen.add(product.id)
        products.append(product)
    if progress:
        progress(report.rows_read % 10_000)
    report.rows_loaded = len(products)
    if not products:
        raise CatalogLoadError(f"{source}: no usable product rows ({dict(report.skipped)})")
    if len({p.path for p in products}) > np.iinfo(np.int16).max:
        raise CatalogLoadError(f"{source}: more than {np.iinfo(np.int16).max} distinct category paths")
    catalog = assemble(products, name=str(source), metadata={"source": str(source), "load_report": report.as_dict()})
    return catalog, report
