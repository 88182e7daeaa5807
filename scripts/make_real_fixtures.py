"""Write the real-schema fixtures: small catalogs in the Amazon Reviews 2023 metadata layout.

Every value is invented here (brands, model names, ASIN-like ids); the layout and the value
styles follow the public metadata files, including their awkward parts: long listing titles
whose brand is not always first, accessories that name the product they fit ("Compatible With
..."), ``details`` holding only a brand, prices as "$12.99", 12.99, "12.99" or a range.

    python scripts/make_real_fixtures.py tests/data/real

writes four files (deterministic, seed fixed):

* ``no_attributes.jsonl``  - one category, no ``details`` at all (the store is the brand)
* ``brand_only.jsonl``     - six categories, ``details`` holds only Brand, mixed price formats
* ``tiny.jsonl``           - 200 products over eight categories with full ``details``
* ``accessories.jsonl``    - four categories mixing main products and their accessories
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

BRANDS = ["Veltrona", "KORRIX", "Amblewood", "Sunvale", "Quillon", "TRAVO", "Marisol Home", "Oxbeam",
          "Pellucid", "Zentari", "Hollisfield", "NEXUM"]
COLORS = ["Black", "White", "Gray", "Navy Blue", "Rose Gold", "Forest Green", "Red", "Beige"]
MODELS = ["Pro", "Max", "Lite", "Air", "Sport", "Prime", "Flex", "Edge"]

Title = Callable[[random.Random, str, str], str]


def _model(rng: random.Random) -> str:
    return f"{rng.choice(MODELS)} {rng.randint(2, 9)}{rng.choice(['', 'S', 'X', '0'])}"


def _price(rng: random.Random, index: int, low: int, high: int) -> object:
    cents = rng.randint(low, high)
    styles = [f"${cents / 100:,.2f}", cents / 100, f"{cents / 100:.2f}", f"${cents / 100:.2f} - ${cents / 50:.2f}"]
    return styles[index % len(styles)]


def _row(rng: random.Random, index: int, path: list[str], title: str, brand: str, price: object,
         details: dict | None, store: str | None) -> dict:
    row = {
        "main_category": path[0],
        "title": title,
        "average_rating": round(rng.uniform(3.0, 5.0), 1),
        "rating_number": rng.randint(0, 9000),
        "features": [f"{rng.choice(['Durable build', 'Lightweight', 'Easy to clean', 'Gift ready'])}",
                     f"{rng.choice(['30-day returns', '1-year warranty', 'Ships fast'])}"],
        "description": [f"From {brand}: {title.split(',')[0].lower()}."],
        "price": price,
        "store": store,
        "categories": path,
        "parent_asin": f"B0{rng.getrandbits(40):08X}"[:10],
    }
    if details is not None:
        row["details"] = details if index % 2 else json.dumps(details)
    return row


# -- (a) one category, no attributes --------------------------------------------------------------

def no_attributes(rng: random.Random) -> list[dict]:
    path = ["Home & Kitchen", "Kitchen & Dining", "Storage & Organization", "Spice Racks"]
    shapes = ["{b} {m} Spice Rack Organizer for Cabinet, 3 Tier Expandable Shelf",
              "{b} Wall Mounted Spice Rack, {m} Hanging Seasoning Organizer for Pantry Door",
              "Rotating Spice Rack {m} by {b}, 20 Jars Included, Countertop Carousel"]
    rows = []
    for i in range(40):
        brand = rng.choice(BRANDS)
        title = shapes[i % len(shapes)].format(b=brand, m=_model(rng))
        rows.append(_row(rng, i, path, title, brand, _price(rng, i, 999, 5999), None, f"{brand} Store"))
    return rows


# -- (b) six categories, only Brand in details ----------------------------------------------------

BRAND_ONLY = [
    (["Office Products", "Office & School Supplies", "Desk Accessories", "Desk Lamps"],
     ["{b} LED Desk Lamp {m}, Dimmable Eye-Caring Reading Light with USB Charging Port",
      "Desk Lamp for Home Office - {b} {m} Architect Task Lamp, Metal, Adjustable Arm"]),
    (["Sports & Outdoors", "Outdoor Recreation", "Water Bottles"],
     ["{b} {m} Insulated Water Bottle 32 oz, Stainless Steel, Leak Proof Lid",
      "Sports Water Bottle with Straw - {b} {m} BPA Free Tritan, 24oz"]),
    (["Luggage", "Backpacks", "Laptop Backpacks"],
     ["{b} Travel Laptop Backpack {m}, Water Resistant College School Bag Fits 15.6 Inch Notebook",
      "Laptop Backpack for Women Men, {b} {m} Anti Theft Business Daypack"]),
    (["Home & Kitchen", "Kitchen & Dining", "Coffee Makers"],
     ["{b} {m} 12-Cup Programmable Coffee Maker, Drip Coffee Machine with Glass Carafe",
      "Single Serve Coffee Maker {b} {m}, Compact K Cup Brewer for Travel"]),
    (["Pet Supplies", "Dogs", "Beds & Furniture", "Dog Beds"],
     ["{b} Orthopedic Dog Bed for Large Dogs, {m} Memory Foam Pet Bed with Washable Cover",
      "Calming Dog Bed {m} by {b} - Donut Cuddler Round Fluffy Pet Bed"]),
    (["Tools & Home Improvement", "Power & Hand Tools", "Power Tools", "Drills"],
     ["{b} 20V Max Cordless Drill {m}, 1/2 Inch Driver Kit with Battery and Charger",
      "Cordless Drill Driver Set - {b} {m} 18V Brushless, 2 Speed, LED Light"]),
]


def brand_only(rng: random.Random) -> list[dict]:
    rows = []
    for path, shapes in BRAND_ONLY:
        for i in range(18):
            brand = rng.choice(BRANDS)
            title = shapes[i % len(shapes)].format(b=brand, m=_model(rng))
            rows.append(_row(rng, i, path, title, brand, _price(rng, i, 899, 18999), {"Brand": brand},
                             rng.choice([f"{brand} Store", None])))
    return rows


# -- (c) a tiny catalog of 200 products, full details ---------------------------------------------

TINY = [
    (["Electronics", "Computers & Accessories", "Computer Accessories", "Mice"], "Wireless Mouse",
     {"Connectivity Technology": ["Bluetooth", "USB", "Wireless"], "Color": COLORS}),
    (["Electronics", "Power Accessories", "Chargers & Adapters", "Wall Chargers"], "Wall Charger",
     {"Connector Type": ["USB Type C", "Lightning", "Micro USB"], "Wattage": ["20 Watts", "45W", "65 watts"]}),
    (["Clothing, Shoes & Jewelry", "Men", "Clothing", "Hoodies"], "Pullover Hoodie",
     {"Size": ["Small", "Medium", "Large", "X-Large"], "Color": COLORS, "Material": ["Cotton", "Polyester", "Fleece"]}),
    (["Home & Kitchen", "Bedding", "Sheets & Pillowcases", "Sheet Sets"], "Bed Sheet Set",
     {"Size": ["Twin", "Full", "Queen", "King"], "Material": ["Cotton", "Microfiber", "Linen"], "Color": COLORS}),
    (["Home & Kitchen", "Kitchen & Dining", "Cookware", "Skillets"], "Frying Pan",
     {"Material": ["Stainless Steel", "Cast Iron", "Aluminum"], "Item Weight": ["2.5 Pounds", "40 Ounces", "1.2 Kilograms"]}),
    (["Beauty & Personal Care", "Skin Care", "Face", "Moisturizers"], "Face Moisturizer",
     {"Item Form": ["Cream", "Gel", "Lotion"]}),
    (["Sports & Outdoors", "Exercise & Fitness", "Yoga", "Yoga Mats"], "Yoga Mat",
     {"Color": COLORS, "Material": ["Rubber", "TPE", "PVC"]}),
    (["Electronics", "Computers & Accessories", "Monitors"], "Computer Monitor",
     {"Screen Size": ["24 Inches", "27 inches", "68.6 cm", "32 Inches"], "Color": ["Black", "White"]}),
]


def tiny(rng: random.Random) -> list[dict]:
    rows = []
    for c, (path, noun, options) in enumerate(TINY):
        for i in range(25):
            brand = rng.choice(BRANDS)
            details = {"Brand": brand, **{k: rng.choice(v) for k, v in options.items()}}
            model = _model(rng)
            title = rng.choice([f"{brand} {model} {noun}, {rng.choice(['Everyday Essentials', '2024 Upgraded', 'Gift Edition'])}",
                                f"{noun} by {brand} - {model}, {details.get('Color', 'Classic')}"])
            rows.append(_row(rng, i + c, path, title, brand, _price(rng, i, 599, 39999), details, f"{brand} Official"))
    return rows


# -- (d) main products mixed with accessories ----------------------------------------------------

ACCESSORIES = {
    "Smartwatches": (["Electronics", "Wearable Technology", "Smartwatches"], [
        (12, "{b} {m} Smart Watch for Men Women, 1.43\" AMOLED Fitness Tracker with Heart Rate and Sleep Monitor, IP68 Waterproof"),
        (4, "{b} Silicone Strap Soft Wristband Compatible With {o} {m}/{n} Lite Smartwatch for Women Men ({c})"),
        (3, "Charger for {o} {m} Smart Watch, {b} Replacement USB Charging Cable Cord Dock 3.3ft"),
        (3, "[3 Pack] {b} Screen Protector Compatible with {o} {m} Smartwatch, Tempered Glass HD Clear Anti-Scratch"),
    ]),
    "Running Shoes": (["Clothing, Shoes & Jewelry", "Men", "Shoes", "Athletic", "Running Shoes"], [
        (12, "{b} Men's {m} Running Shoes, Lightweight Breathable Road Sneakers ({c})"),
        (3, "Runner Vinyl Sticker 3 Inch Decal for Water Bottle Laptop - Running Shoe Silhouette by {b}"),
        (3, "{b} Running Insoles for Men and Women, Arch Support Shoe Inserts for Plantar Fasciitis"),
    ]),
    "Headphones": (["Electronics", "Headphones, Earbuds & Accessories", "Headphones", "Over-Ear Headphones"], [
        (12, "{b} {m} Wireless Over-Ear Headphones with Active Noise Cancelling, 40H Playtime, Hi-Res Audio ({c})"),
        (3, "{b} Ear Hooks Compatible with {o} {m} Earbuds, Anti-Slip Ear Hook Clips Accessories for Headphones (3 Pairs)"),
        (3, "Hard Travel Case for {o} {m} Headphones by {b}, Protective Carrying Bag with Mesh Pocket"),
    ]),
    "Keyboards": (["Electronics", "Computers & Accessories", "Keyboards, Mice & Accessories", "Keyboards"], [
        (12, "{b} {m} Mechanical Gaming Keyboard, RGB Backlit 87 Keys Tenkeyless Wired Keyboard with Blue Switches"),
        (3, "{b} 132 Keys PBT Keycaps Set, Cherry Profile Dye-Sub Custom Keycap for Mechanical Keyboard"),
        (3, "{b} Keyboard Wrist Rest Pad, Memory Foam Ergonomic Palm Support for Computer Keyboard"),
    ]),
}


def accessories(rng: random.Random) -> list[dict]:
    rows = []
    for path, shapes in ACCESSORIES.values():
        i = 0
        for count, shape in shapes:
            for _ in range(count):
                brand, other = rng.sample(BRANDS, 2)
                color = rng.choice(COLORS)
                title = shape.format(b=brand, o=other, m=_model(rng), n=rng.randint(100, 999), c=color)
                details = {"Brand": brand, "Color": color} if i % 3 else {"Brand": brand}
                rows.append(_row(rng, i, path, title, brand, _price(rng, i, 599, 29999), details, f"{brand} Store"))
                i += 1
    rng.shuffle(rows)
    return rows


FIXTURES: dict[str, Callable[[random.Random], list[dict]]] = {
    "no_attributes": no_attributes, "brand_only": brand_only, "tiny": tiny, "accessories": accessories,
}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, make in FIXTURES.items():
        rows = make(random.Random(f"real-fixture:{name}"))
        with (out / f"{name}.jsonl").open("w") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
        print(f"wrote {out / name}.jsonl: {len(rows)} products")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
