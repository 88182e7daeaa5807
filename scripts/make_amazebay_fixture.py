"""Write a catalog in the layout of the public 2M-product Amazebay catalog, with invented values.

The columns and value styles follow ``owlgebra-ai/Amazebay-catalog-2M`` on the Hugging Face hub:
``main_category``, ``title``, ``average_rating``, ``rating_number``, ``features`` (list),
``description`` (list), ``price`` (a string: "$12.99" or "None"), ``images`` and ``videos``
(lists of structs), ``store``, ``categories`` (list), ``details`` (a JSON string: Brand, Color,
Material, Size, ...), ``parent_asin``, ``bought_together``, ``subtitle``, ``author``. Every brand,
title and id is generated here from a fixed seed, so the file is the same on every run.

Some rows are imperfect the way real rows are: a price of "None" (the loader drops the row),
a price range, empty ``categories`` (the loader falls back to ``main_category``), ``details``
without a Brand (the store names the brand).

    python scripts/make_amazebay_fixture.py tests/data/amazebay_sample.parquet            # the test fixture
    python scripts/make_amazebay_fixture.py /tmp/amazebay_100k.parquet --rows 100000      # the build benchmark
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SEED = 2_000_000
#: (main_category, category path, noun, {detail key: values}); every leaf has three or more values of
#: the attribute the store varies, Earbuds is a final-sale category, and the leaves fill BUNDLE projects.
CATEGORIES = [
    ("All Electronics", ["Electronics", "Headphones, Earbuds & Accessories", "Earbuds"], "Earbuds",
     {"Color": ["Black", "White", "Navy Blue", "Red"], "Connectivity Technology": ["Bluetooth", "USB Type C"]}),
    ("Computers", ["Electronics", "Computers & Accessories", "Keyboards"], "Keyboard",
     {"Color": ["Black", "White", "Grey", "Pink"], "Connectivity Technology": ["Wireless", "USB", "Bluetooth"]}),
    ("Sports & Outdoors", ["Sports & Outdoors", "Exercise & Fitness", "Yoga Mats"], "Yoga Mat",
     {"Color": ["Purple", "Black", "Sage Green", "Blue"], "Material": ["Rubber", "Cork", "TPE"]}),
    ("AMAZON FASHION", ["Clothing, Shoes & Jewelry", "Men", "Hoodies"], "Hoodie",
     {"Size": ["Small", "Medium", "Large", "X-Large"], "Color": ["Heather Grey", "Black", "Navy"],
      "Material": ["Cotton", "Polyester", "Fleece"]}),
    ("Amazon Home", ["Home & Kitchen", "Kitchen & Dining", "Water Bottles"], "Water Bottle",
     {"Color": ["Black", "White", "Teal", "Orange"], "Material": ["Stainless Steel", "Plastic", "Glass"]}),
    ("Office Products", ["Office Products", "Office & School Supplies", "Notebooks"], "Notebook",
     {"Color": ["Black", "Blue", "Green", "Yellow"], "Size": ["Small", "Medium", "Large"]}),
]
BRANDS = ["Veltrano", "Quillmark", "Orrinda", "Pelloway", "Tusk & Tern", "Brevik", "Solenne", "Marrowfield"]
MODELS = ["Aero", "Core", "Flex", "Nimbus", "Strata", "Vela", "Ridge", "Halo"]
PERKS = ["Lightweight", "Durable", "Everyday", "Travel-Ready", "Eco-Friendly"]
SCHEMA = pa.schema([
    ("main_category", pa.string()), ("title", pa.string()), ("average_rating", pa.float64()),
    ("rating_number", pa.int64()), ("features", pa.list_(pa.string())), ("description", pa.list_(pa.string())),
    ("price", pa.string()),
    ("images", pa.list_(pa.struct([("hi_res", pa.string()), ("large", pa.string()), ("thumb", pa.string()),
                                   ("variant", pa.string())]))),
    ("videos", pa.list_(pa.struct([("title", pa.string()), ("url", pa.string()), ("user_id", pa.string())]))),
    ("store", pa.string()), ("categories", pa.list_(pa.string())), ("details", pa.string()),
    ("parent_asin", pa.string()), ("bought_together", pa.list_(pa.string())), ("subtitle", pa.string()),
    ("author", pa.string()),
])
_ASIN = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def product(rng: random.Random, index: int) -> dict:
    main, path, noun, attributes = CATEGORIES[index % len(CATEGORIES)]
    brand = rng.choice(BRANDS)
    model = f"{rng.choice(MODELS)} {rng.randint(2, 90)}"
    details = {"Brand": brand, **{key: rng.choice(values) for key, values in attributes.items()}}
    cents = rng.randint(599, 8999)
    asin = "B0" + "".join(rng.choice(_ASIN) for _ in range(8))
    image = f"https://images.example.invalid/{asin}"
    return {
        "main_category": main,
        "title": f"{brand} {model} {noun}, {rng.choice(PERKS)}, {details.get('Color', 'Assorted')}",
        "average_rating": round(rng.uniform(3.0, 5.0), 1),
        "rating_number": rng.randint(0, 20_000),
        "features": [f"{rng.choice(PERKS)} {noun.lower()} by {brand}", "30-day money-back guarantee"],
        "description": [f"The {brand} {model} is a {noun.lower()} made for daily use."],
        "price": f"${cents / 100:,.2f}",
        "images": [{"hi_res": f"{image}_hi.jpg", "large": f"{image}_l.jpg", "thumb": f"{image}_t.jpg", "variant": "MAIN"}],
        "videos": [],
        "store": f"{brand} Official",
        "categories": path,
        "details": json.dumps(details),
        "parent_asin": asin,
        "bought_together": None,
        "subtitle": None,
        "author": None,
    }


def rows(count: int) -> list[dict]:
    rng = random.Random(SEED)
    out = [product(rng, i) for i in range(count)]
    for i, row in enumerate(out):
        if i % 13 == 5:
            row["price"] = "None"  # no price: dropped, counted as no_price
        elif i % 17 == 3:
            row["price"] = "$10.99 - $15.99"  # a range: its lower end
        if i % 19 == 7:
            row["categories"] = []  # only the main category
        if i % 23 == 11:
            details = json.loads(row["details"])
            del details["Brand"]  # the store names the brand
            row["details"] = json.dumps(details)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=120)
    args = parser.parse_args()
    table = pa.Table.from_pylist(rows(args.rows), schema=SCHEMA)
    pq.write_table(table, args.out, compression="zstd")
    print(f"wrote {args.out}: {table.num_rows} rows")


if __name__ == "__main__":
    main()
