"""Messy real catalogs drawn by hypothesis, and the check every one must pass.

Users train on their own product files: rows without attributes, brand or rating, accessories
filed with the products they fit, ids of any scheme (ASINs, UUIDs, numbers, ids with spaces or
non-ASCII characters), non-ASCII and very long titles, one title under several ids, absurd or
missing prices, one-product categories. :func:`messy_catalogs` draws such files in the Amazon
Reviews 2023 metadata layout (JSONL) or as a product-list CSV; :func:`catalog_failures` loads
one through the public loader and plays every environment's oracle on it. The promise: an
environment is refused in one line when it is made, or every episode resets and its oracle
solves it (r_task 1, correct, nothing hallucinated, no unfilled template slot).

Used by ``tests/test_catalog_fuzz.py`` (CI, a few dozen fixed examples) and
``benchmarks/bench_catalog_fuzz.py`` (a larger random sweep).
"""

from __future__ import annotations

import csv
import json
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exploits import oracle_failure, play_oracle
from hypothesis import strategies as st

from ecomrlve.catalog import load_catalog
from ecomrlve.envs import env_collections
from ecomrlve.envs.capabilities import CatalogUnsupportedError, capabilities
from ecomrlve.episode import EcomEnv
from ecomrlve.errors import UserInputError

ENVS = env_collections()["C8"]
LAYOUTS = ("amazon.jsonl", "products.csv")

#: (category path, what one main product of it is called in a title, accessories titled for it)
CATEGORIES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("Electronics", "Headphones", "Over-Ear Headphones"), "Headphones"),
    (("Electronics", "Earbuds"), "Earbuds"),  # final sale in the store policy
    (("Electronics", "Wearable Technology", "Smartwatches"), "Smartwatch"),
    (("Electronics", "Chargers"), "Charger"),
    (("Home & Kitchen", "Storage Bins"), "Storage Bin"),
    (("Home & Kitchen", "Frying Pans"), "Frying Pan"),
    (("Beauty", "Shampoos"), "Shampoo"),  # final sale
    (("Sports & Outdoors", "Yoga Mats"), "Yoga Mat"),
    (("Küche & Haushalt", "Gewürzregale"), "Gewürzregal"),
    (("Misc",), "Gadget"),
    (("Toys & Games", "Puzzles"), "Puzzle"),
    (("Tools & Home Improvement", "Paint Rollers, Brushes & Trays"), "Paint Roller"),
)
ACCESSORIES = ("Replacement Strap for {noun}", "Screen Protector Compatible with {brand} {noun}",
               "Carrying Case for {noun}, Hard Shell", "[2 Pack] Charging Cable for {brand} {noun}")
MODELS = ("Pro 3", "Max", "Lite 2S", "Air", "X1", "Édition 5", "")
BRANDS = (None, "", "Veltrona", "KORRIX", "ÆRØ Audio", "A", "Unbranded", "Marisol  Home", "Generic")
PRICES: tuple[Any, ...] = (0.01, 99999, 99999.99, None, "", "$12.99", "N/A", 0, -5, "1,299.00", "$10 - $20", 5,
                           "12.5", 12.5, "$0.01")
RATINGS: tuple[Any, ...] = (None, "", 0, 1, 4.5, 5, 3.2)
RATING_COUNTS: tuple[Any, ...] = (None, 0, 12, 100000)
COLORS = (None, "Black", "Midnight Blue", "rojo", "Multicolor", "White")
SIZES = (None, "M", "X-Large", "One Size", "S")
MATERIALS = (None, "Cotton", "Stainless Steel", "Plastic")
STOCKS = (None, None, 0, 1, 5)
ID_KINDS = ("asin", "uuid", "numeric", "integer", "spaced", "unicode", "duplicate", "too_long", "prefixed",
            "punctuated")
TITLE_KINDS = ("main", "main", "main", "accessory", "unicode", "long", "same", "bare", "digits", "empty", "ids_inside",
               "shouting")


@dataclass(frozen=True)
class MessyRow:
    """One drawn product row, before it is written in a layout."""

    category: int  # index into CATEGORIES
    id_kind: str
    title_kind: str
    model: str
    brand: str | None
    price: Any
    rating: Any
    rating_count: Any
    color: str | None
    size: str | None
    material: str | None
    stock: int | None  # written only by the product-list layout
    details_as_text: bool  # amazon: ``details`` as a JSON string instead of an object


@dataclass(frozen=True)
class MessyCatalog:
    layout: str
    rows: tuple[MessyRow, ...]

    def write(self, directory: Path) -> Path:
        """The catalog as a file in its layout under ``directory``."""
        path = directory / f"messy.{self.layout.split('.')[-1]}"
        records = [_record(i, row, self.layout) for i, row in enumerate(self.rows)]
        if self.layout == "products.csv":
            with path.open("w", newline="", encoding="utf-8") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(records[0]))
                writer.writeheader()
                writer.writerows(records)
        else:
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        return path


def _product_id(index: int, kind: str) -> str | int:
    if kind == "integer":  # a JSON number (0 among them); the CSV writes it as digits
        return index
    return {"asin": f"B0{index * 7919 % 16**8:08X}", "uuid": f"{index:08x}-1b4e-4c2a-9f3d-{index * 31:012x}",
            "numeric": str(1000 + index), "spaced": f"SKU {index} A", "unicode": f"ÄÖ-{index}",
            "duplicate": "B0DUPLICATE", "too_long": "X" * 70 + str(index), "prefixed": f"P{index:08d}",
            "punctuated": f"item/{index}#a?b=c"}[kind]


def _title(row: MessyRow) -> str:
    _, noun = CATEGORIES[row.category]
    brand = row.brand or ""
    head = " ".join(f"{brand} {row.model} {noun}".split())
    return {"main": head, "accessory": ACCESSORIES[len(row.model) % len(ACCESSORIES)].format(noun=noun, brand=brand),
            "unicode": f"{head} – Spécial 日本語 ✓", "long": head + ", " + ", ".join(["Durable Lightweight Design"] * 25),
            "same": f"Generic {noun}", "bare": noun, "digits": "12345", "empty": "   ",
            "ids_inside": f"{head} fits {_product_id(0, 'numeric')} and {_product_id(1, 'asin')}",  # other rows' ids
            "shouting": head.upper() + "!!!"}[row.title_kind]


def _blank(value: Any) -> Any:
    return "" if value is None else value


def _record(index: int, row: MessyRow, layout: str) -> dict[str, Any]:
    path, _ = CATEGORIES[row.category]
    if layout == "products.csv":
        return {"id": _product_id(index, row.id_kind), "title": _title(row), "category": " > ".join(path),
                "price": _blank(row.price), "brand": _blank(row.brand), "rating": _blank(row.rating),
                "rating_count": _blank(row.rating_count), "color": _blank(row.color), "size": _blank(row.size),
                "material": _blank(row.material), "stock": _blank(row.stock)}
    details = {key: value for key, value in (("Brand", row.brand), ("Color", row.color), ("Size", row.size),
                                             ("Material", row.material)) if value is not None}
    record: dict[str, Any] = {"parent_asin": _product_id(index, row.id_kind), "title": _title(row),
                              "main_category": path[0], "categories": list(path), "price": row.price,
                              "average_rating": row.rating, "rating_number": row.rating_count,
                              "store": row.brand}
    if details:
        record["details"] = json.dumps(details) if row.details_as_text else details
    return record


def _row(n_categories: int) -> st.SearchStrategy[MessyRow]:
    return st.builds(
        MessyRow, category=st.integers(0, n_categories - 1), id_kind=st.sampled_from(ID_KINDS),
        title_kind=st.sampled_from(TITLE_KINDS), model=st.sampled_from(MODELS), brand=st.sampled_from(BRANDS),
        price=st.sampled_from(PRICES), rating=st.sampled_from(RATINGS), rating_count=st.sampled_from(RATING_COUNTS),
        color=st.sampled_from(COLORS), size=st.sampled_from(SIZES), material=st.sampled_from(MATERIALS),
        stock=st.sampled_from(STOCKS), details_as_text=st.booleans())


@st.composite
def messy_catalogs(draw: st.DrawFn, max_rows: int = 14) -> MessyCatalog:
    """A small messy catalog: 1-4 categories of CATEGORIES (in a drawn order), 1..max_rows rows."""
    chosen = draw(st.lists(st.integers(0, len(CATEGORIES) - 1), min_size=1, max_size=4, unique=True))
    rows = draw(st.lists(_row(len(chosen)), min_size=1, max_size=max_rows))
    return MessyCatalog(draw(st.sampled_from(LAYOUTS)),
                        tuple(MessyRow(**{**vars(r), "category": chosen[r.category]}) for r in rows))


def catalog_failures(path: Path, *, difficulty: int, seed: int, secret: str = "catalog-fuzz") -> list[str]:
    """Every broken promise on the catalog file at ``path`` (empty: it keeps them all)."""
    try:
        catalog = load_catalog(str(path))
    except UserInputError as refused:  # nothing usable: one line, like the CLI prints
        return [] if _one_line(str(refused)) else [f"load refusal is not one line: {refused!r}"]
    failures = []
    for env_id in ENVS:
        reason = capabilities(catalog).refusal(env_id)
        try:
            env = EcomEnv(env_id, catalog=catalog, secret=secret)
        except CatalogUnsupportedError as refused:
            if reason is None or not _one_line(str(refused)):
                failures.append(f"{env_id} refused at start without a one-line reason: {refused!r}")
            continue
        except Exception:
            failures.append(f"{env_id} constructor crashed:\n{traceback.format_exc(limit=-6)}")
            continue
        if reason is not None:
            failures.append(f"{env_id} started although the report refuses it: {reason}")
            continue
        try:
            why = oracle_failure(play_oracle(env, difficulty=difficulty, seed=seed, env_id=env_id))
        except Exception:
            why = f"crashed:\n{traceback.format_exc(limit=-6)}"
        if why is not None:
            failures.append(f"{env_id} d={difficulty} seed={seed}: {why}")
    return failures


def _one_line(text: str) -> bool:
    return bool(text.strip()) and "\n" not in text
