"""Write the loader test fixture: a small, self-made catalog in the Amazon Reviews 2023 metadata schema.

Every product is invented (brands, titles and ASIN-like ids are generated here); the field
layout and value styles follow the public schema: ``parent_asin``, ``main_category``,
``categories``, ``title``, ``price`` as "$1,299.00" / number / null, ``details`` with units,
``features`` and ``description`` lists, ``store``, ``average_rating``, ``rating_number``. The
last lines are deliberately malformed rows, one per kind the loader must skip and count.

    python scripts/make_amazon_fixture.py tests/data/amazon_meta_sample.jsonl
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

CATEGORIES = [
    # (path, noun, detail key, raw values as sellers write them, extra details)
    (["Electronics", "Power", "Chargers"], "Charger", "Connector Type",
     ["USB Type C", "Lightning", "Micro USB", "USB-A"], {"Wattage": ["20 Watts", "65W", "100 watts"]}),
    (["Electronics", "Headphones", "Over-Ear Headphones"], "Headphones", "Connector Type",
     ["Wireless", "3.5mm Jack", "USB-C"], {"Item Weight": ["8 Ounces", "0.6 Pounds", "250 Grams"]}),
    (["Clothing", "Men", "T-Shirts"], "T-Shirt", "Size", ["Small", "Medium", "X-Large", "XXL"],
     {"Material": ["100% Cotton", "Polyester Blend"]}),
    (["Clothing", "Women", "Running Shoes"], "Running Shoe", "Size", ["7", "8", "9", "10"], {}),
    (["Kitchen", "Cookware", "Frying Pans"], "Frying Pan", "Material",
     ["Stainless Steel", "Cast Iron", "Aluminum", "Ceramic Coated Aluminum"], {}),
    (["Home", "Bedding", "Sheet Sets"], "Sheet Set", "Size", ["Twin", "Full", "Queen", "King"],
     {"Material": ["Cotton", "Linen"]}),
    (["Beauty", "Skin Care", "Moisturizers"], "Moisturizer", "Item Form", ["Cream", "Gel", "Liquid"], {}),
    (["Sports", "Yoga", "Yoga Mats"], "Yoga Mat", "Color", ["Midnight Blue", "Purple", "Black", "Sage Green"],
     {"Item Weight": ["2.2 Pounds", "1 Kilograms"]}),
]
BRANDS = ["Qorvane", "Lumetto", "Brisca", "Tavernel", "Ostrava Home", "Kelpie", "Nordvik", "Sablefin"]
COLORS = ["Black", "White", "Grey", "Navy Blue", "Rose Gold", "Forest Green"]
STYLES = ["Pro", "Max", "Lite", "Air", "Classic"]


def product(rng: random.Random, index: int, path: list[str], noun: str, key: str, values: list[str],
            extra: dict[str, list[str]]) -> dict:
    brand = rng.choice(BRANDS)
    model = f"{rng.choice(STYLES)} {rng.randint(2, 99)}"
    value = values[index % len(values)]
    details = {"Brand": brand, key: value}
    if key != "Color":
        details["Color"] = rng.choice(COLORS)
    for name, options in extra.items():
        details[name] = rng.choice(options)
    cents = rng.randint(799, 14999)
    price_styles = [f"${cents / 100:,.2f}", cents / 100, f"{cents / 100:.2f}"]
    return {
        "main_category": path[0],
        # A parent_asin title names the listing, not one variant (the variant value is in details).
        "title": f"{brand} {model} {noun}, {rng.choice(['Everyday', 'Travel Edition', '2-Pack', 'Deluxe'])}",
        "average_rating": round(rng.uniform(3.0, 5.0), 1),
        "rating_number": rng.randint(0, 5000),
        "features": [f"{rng.choice(['Durable', 'Lightweight', 'Premium'])} {noun.lower()}", "1-year warranty"],
        "description": [f"The {brand} {model} is a {noun.lower()} for everyday use."],
        "price": price_styles[index % 3],
        "store": f"{brand} Store",
        "categories": path,
        "details": details if index % 2 else json.dumps(details),
        "parent_asin": f"B0{rng.getrandbits(40):010X}"[:10],
    }


def main(out: Path) -> None:
    rng = random.Random(20231)
    rows = [product(rng, i, *spec) for spec in CATEGORIES for i in range(10)]
    rows[3]["price"] = None  # no price: dropped, counted as no_price
    rows[14]["categories"] = []  # falls back to main_category
    rows[14]["main_category"] = "Electronics"
    rows[25]["details"] = {"Color": "Blue"}  # no brand in details: the store becomes the brand
    bad = [
        {**rows[0], "parent_asin": "BADTITLE01", "title": ""},  # missing title
        {**rows[1], "parent_asin": "BADRATING1", "average_rating": "lots"},  # rating not a number
        {**rows[2], "parent_asin": "BADDETAIL1", "details": "{not json"},  # details not JSON
        {**rows[4]},  # duplicate id
        {"title": "orphan row without an id", "price": "$5.00"},  # neither parent_asin nor id
        {**rows[5], "parent_asin": "BADPRICE01", "price": "—"},  # price not given
    ]
    with out.open("w") as handle:
        for row in rows + bad:
            handle.write(json.dumps(row) + "\n")
        handle.write("[1, 2]\n")  # valid JSON, but not an object
    print(f"wrote {out}: {len(rows)} products + {len(bad) + 1} malformed rows")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
