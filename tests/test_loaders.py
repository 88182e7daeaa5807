"""Real-catalog loaders: field mapping, skipped rows, clear errors, and a canonical Catalog."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.filters import ProductFilter, filter_mask
from ecomrlve.catalog.loaders import (
    CatalogLoadError,
    canonical_brands,
    canonical_value,
    category_noun,
    load_products,
    parse_price_cents,
    parse_quantity,
)
from ecomrlve.catalog.schema import NO_VALUE
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES
from ecomrlve.episode import EcomEnv
from ecomrlve.runner import play

FIXTURE = Path(__file__).parent / "data" / "amazon_meta_sample.jsonl"
PRODUCT_LIST = Path(__file__).parent / "data" / "product_list_sample.csv"


@pytest.fixture(scope="module")
def raw_rows() -> list:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


@pytest.fixture(scope="module")
def loaded():
    return load_products(FIXTURE)


def test_every_good_row_is_mapped_as_documented(loaded, raw_rows):
    catalog, _ = loaded
    checked: set[str] = set()
    for raw in raw_rows:
        if not isinstance(raw, dict) or "parent_asin" not in raw or raw["parent_asin"] in checked:
            continue  # malformed, or a later duplicate of a loaded id
        row = catalog.index_of(raw["parent_asin"])
        if row is None:
            continue
        checked.add(raw["parent_asin"])
        details = raw["details"] if isinstance(raw["details"], dict) else json.loads(raw["details"])
        assert catalog.price_cents[row] == round(float(str(raw["price"]).replace("$", "").replace(",", "")) * 100)
        assert catalog.rating_x10[row] == round(raw["average_rating"] * 10)
        assert catalog.rating_count[row] == raw["rating_number"]
        assert catalog.category_of(row).path == tuple(raw["categories"] or [raw["main_category"]])
        assert catalog.brand_of(row) == details.get("Brand", raw["store"])
        description = catalog.descriptions[row].as_py()
        assert raw["features"][0] in description and raw["description"][0][:20] in description
        attributes = catalog.attributes(row)
        for key, attr in (("Color", "color"), ("Material", "material"), ("Connector Type", "connector_type"),
                          ("Size", "size"), ("Item Form", "item_form")):
            if key in details:
                assert attributes.get(attr) == canonical_value(attr, details[key])
            else:
                assert attr not in attributes
        for key, attr, units in (("Wattage", "wattage", "W"), ("Item Weight", "weight", "lb")):
            if key in details:
                assert attributes[attr] == pytest.approx(parse_quantity(details[key], _units(attr)), abs=0.01), units
            else:
                assert attr not in attributes
    assert len(checked) == len(catalog) == 79


def _units(attr: str) -> dict:
    from ecomrlve.catalog import loaders

    return loaders._NUMERIC_UNITS[attr]


def test_malformed_rows_are_skipped_and_counted(loaded):
    _, report = loaded
    assert report.rows_read == 87
    assert report.rows_loaded == 79
    assert report.skipped == {
        "no_price": 2, "missing title": 1, "rating is not a number": 1, "details is not valid JSON": 1,
        "duplicate id": 1, "row has neither parent_asin nor id": 1, "row is not an object": 1,
    }
    assert sum(report.skipped.values()) == report.rows_read - report.rows_loaded
    assert any(example.startswith(f"{FIXTURE}:4: no_price") for example in report.examples)


def test_catalog_is_canonical(loaded):
    catalog, _ = loaded
    for attr, codes in catalog.categorical.items():
        assert codes.dtype == np.int16
        assert ((codes == NO_VALUE) | ((codes >= 0) & (codes < len(CATEGORICAL_ATTRIBUTES[attr])))).all()
    for values in catalog.numeric.values():
        assert values.dtype == np.float32
    assert np.isnan(catalog.numeric["screen_size"]).all()  # no product states one
    assert (catalog.price_cents > 0).all()
    assert all(c.variant_attribute in CATEGORICAL_ATTRIBUTES for c in catalog.categories)
    tshirts = next(c for c in catalog.categories if c.name == "T-Shirts")
    assert (tshirts.noun, tshirts.variant_attribute) == ("T-Shirt", "size")
    # a category whose leaf is not how titles name products takes the titles' word
    assert next(c for c in catalog.categories if c.path == ("Electronics",)).noun == "Headphones"


def test_derived_fields_depend_only_on_the_product_id(tmp_path):
    lines = FIXTURE.read_text().splitlines()
    reversed_file = tmp_path / "reversed.jsonl"
    reversed_file.write_text("\n".join(reversed(lines)) + "\n")
    first, _ = load_products(FIXTURE)
    second, _ = load_products(reversed_file)
    for row in range(len(first)):
        other = second.index_of(first.product_id(row))
        assert (first.ship_days[row], first.stock[row]) == (second.ship_days[other], second.stock[other])
    assert 0 < np.count_nonzero(first.stock == 0) < len(first)


def test_gzip_and_corrupt_files_fail_with_file_and_line(tmp_path):
    gz = tmp_path / "meta.jsonl.gz"
    gz.write_bytes(gzip.compress(FIXTURE.read_bytes()))
    assert len(load_products(gz)[0]) == 79

    lines = FIXTURE.read_text().splitlines()
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text("\n".join(lines[:5] + ['{"parent_asin": "B0X", "title": "cut off'] + lines[5:]) + "\n")
    with pytest.raises(CatalogLoadError, match=rf"{corrupt}, line 6: not valid JSON"):
        load_products(corrupt)

    truncated = tmp_path / "truncated.jsonl.gz"
    truncated.write_bytes(gz.read_bytes()[:300])
    with pytest.raises(CatalogLoadError, match=str(truncated)):
        load_products(truncated)
    with pytest.raises(CatalogLoadError, match="no such file"):
        load_products(tmp_path / "missing.jsonl")
    unknown = tmp_path / "products.txt"
    unknown.write_text("id,title\n")
    with pytest.raises(CatalogLoadError, match="unknown format"):
        load_products(unknown)


def test_product_list_csv_json_and_parquet(tmp_path):
    catalog, report = load_products(PRODUCT_LIST)
    with PRODUCT_LIST.open() as handle:
        rows = list(csv.DictReader(handle))
    assert report.rows_loaded == len(rows) - 1 and report.skipped == {"no_price": 1}
    first = rows[0]
    row = catalog.index_of(first["id"])
    assert catalog.title(row) == first["title"]
    assert catalog.category_of(row).path == tuple(p.strip() for p in first["category"].split(">"))
    assert catalog.price(row) == float(first["price"])
    assert int(catalog.stock[row]) == int(first["stock"]) and int(catalog.ship_days[row]) == int(first["ship_days"])
    assert catalog.attributes(row)["color"] == first["color"]

    as_json = tmp_path / "products.json"
    as_json.write_text(json.dumps(rows))
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, tmp_path / "products.parquet")
    for other in (as_json, tmp_path / "products.parquet"):
        loaded, _ = load_products(other)
        assert loaded.ids.tolist() == catalog.ids.tolist()
        assert loaded.price_cents.tolist() == catalog.price_cents.tolist()

    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really parquet")
    with pytest.raises(CatalogLoadError, match=str(broken)):
        load_products(broken)


def test_load_catalog_accepts_a_product_file():
    catalog = load_catalog(str(FIXTURE))
    assert len(catalog) == 79 and catalog.name == str(FIXTURE)


def test_hugging_face_save_to_disk_folder(tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = [r for r in (json.loads(line) for line in FIXTURE.read_text().splitlines())
            if isinstance(r, dict) and "parent_asin" in r]
    for r in rows:  # Arrow needs one type per column, as in the published dataset
        r["details"] = r["details"] if isinstance(r["details"], str) else json.dumps(r["details"])
        r["price"] = None if r["price"] is None else str(r["price"])
        r["average_rating"] = None if isinstance(r["average_rating"], str) else r["average_rating"]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "hf"))
    catalog, report = load_products(tmp_path / "hf")
    assert len(catalog) == len(load_products(FIXTURE)[0]) + 1  # + the row whose bad rating became null
    assert report.skipped["no_price"] == 2


@pytest.mark.parametrize(("raw", "cents"), [
    ("$1,299.00", 129900), ("$12.5", 1250), (12.5, 1250), ("19.99", 1999), ("$10.99 - $15.99", 1099),
    (None, None), ("", None), ("—", None), (0, None), ("$0.00", None), (float("nan"), None), (True, None),
])
def test_price_parsing(raw, cents):
    assert parse_price_cents(raw) == cents


@pytest.mark.parametrize(("raw", "attr", "value"), [
    ("65 Watts", "wattage", 65.0), ("1.2 kW", "wattage", 1200.0), ("15.6 Inches", "screen_size", 15.6),
    ("40 cm", "screen_size", 15.748), ("8 Ounces", "weight", 0.5), ("500 Grams", "weight", 1.102),
    ("2 Kilograms", "weight", 4.409), ("about 3 pounds", "weight", 3.0), ("n/a", "weight", math.nan),
])
def test_unit_parsing(raw, attr, value):
    parsed = parse_quantity(raw, _units(attr))
    assert (math.isnan(parsed) and math.isnan(value)) or parsed == pytest.approx(value, abs=1e-3)


@pytest.mark.parametrize(("attr", "raw", "value"), [
    ("color", "Midnight Blue", "Blue"), ("color", "grey", "Gray"), ("color", "Rose Gold", "Rose Gold"),
    ("color", "Multicolor", None), ("connector_type", "USB Type C", "USB-C"), ("connector_type", "Wireless", "Bluetooth"),
    ("size", "X-Large", "XL"), ("size", "Medium", "Medium"), ("size", "Medium Tall", None),
    ("material", "Ceramic Coated Aluminum", "Aluminum"), ("material", "100% Cotton", "Cotton"),
])
def test_canonical_values(attr, raw, value):
    assert canonical_value(attr, raw) == value


def test_category_noun():
    assert category_noun("USB Cables") == "USB Cable"
    assert category_noun("Batteries") == "Battery"
    assert category_noun("Dishes & Bowls") == "Dish"
    assert category_noun("Electronics", ["Acme Pro Headphones, Black", "Zed Headphones - Wireless"]) == "Headphones"


def _mixed_case_brands(tmp_path: Path) -> Path:
    """tests/data/real/tiny.jsonl with every other product of each brand spelled in another letter case
    (as two stores spell one brand: "Oxbeam" and "OXBEAM")."""
    rows = [json.loads(line) for line in (Path(__file__).parent / "data" / "real" / "tiny.jsonl").read_text().splitlines()]
    seen: dict[str, int] = {}
    for row in rows:
        details = json.loads(row["details"]) if isinstance(row["details"], str) else row["details"]
        brand = details.get("Brand")
        if brand:
            seen[brand.lower()] = seen.get(brand.lower(), 0) + 1
            if seen[brand.lower()] % 2 == 0:
                details["Brand"] = brand.swapcase()
        row["details"] = json.dumps(details)
    path = tmp_path / "mixed_case.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_brands_differing_only_in_case_load_as_one(tmp_path):
    catalog, _ = load_products(_mixed_case_brands(tmp_path))
    plain, _ = load_products(Path(__file__).parent / "data" / "real" / "tiny.jsonl")
    lowered = [b.lower() for b in catalog.brands]
    assert len(lowered) == len(set(lowered)) == len(plain.brands)
    for row in range(len(catalog)):
        assert catalog.brand_of(row).lower() == plain.brand_of(plain.index_of(catalog.product_id(row))).lower()
    assert canonical_brands(["Sxban", "SXBan", "Sxban", "Acme"]) == {"Sxban": "Sxban", "SXBan": "Sxban", "Acme": "Acme"}


def test_a_brand_filter_matches_every_spelling_of_the_brand(catalog):
    """Also on a catalog made without the loader's merge: two codes for one brand in two letter cases."""
    spelled = dataclasses.replace(catalog, brands=(*catalog.brands, catalog.brands[0].upper()))
    brand = spelled.brand.copy()
    rows = np.flatnonzero(brand == 0)[::2]
    brand[rows] = len(spelled.brands) - 1
    spelled = dataclasses.replace(spelled, brand=brand)
    for asked in (catalog.brands[0], catalog.brands[0].upper(), catalog.brands[0].lower()):
        mask = filter_mask(spelled, ProductFilter(brand=asked))
        assert np.array_equal(np.flatnonzero(mask), np.flatnonzero(catalog.brand == 0))


def test_cart_oracle_finds_every_target_when_stores_spell_brands_differently(tmp_path):
    catalog, _ = load_products(_mixed_case_brands(tmp_path))
    env = EcomEnv("CART", catalog=catalog, search=SearchEngine(catalog))
    failures = [(d, seed) for d in range(0, 16, 3) for seed in range(4)
                if play(env, "oracle", env_id="CART", difficulty=d, seed=seed).reward.r_task != 1.0]
    assert not failures
