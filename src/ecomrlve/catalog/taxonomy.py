"""The synthetic store's taxonomy: departments, leaf categories, brands and attribute vocabularies.

Pure data. Attribute values are stored in the catalog as small integer codes into the global
vocabularies below, so filtering is a vectorised comparison; titles and cards decode them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ecomrlve.rng import derive_rng

COLORS = (
    "Black", "White", "Gray", "Silver", "Navy", "Blue", "Red", "Green", "Olive", "Beige",
    "Brown", "Pink", "Purple", "Yellow", "Orange", "Teal", "Rose Gold", "Charcoal",
)
SIZES = (
    "XS", "S", "M", "L", "XL", "XXL",
    "7", "8", "9", "10", "11", "12", "13",
    "Twin", "Full", "Queen", "King",
    "Small", "Medium", "Large",
)
MATERIALS = (
    "Stainless Steel", "Cast Iron", "Aluminum", "Ceramic", "Glass", "Bamboo", "Silicone",
    "Cotton", "Polyester", "Wool", "Leather", "Nylon", "Plastic", "Wood", "Linen", "Mesh",
)
CONNECTORS = ("USB-C", "Lightning", "Micro-USB", "USB-A", "HDMI", "DisplayPort", "3.5mm", "Bluetooth")
ITEM_FORMS = ("Liquid", "Cream", "Gel", "Powder", "Spray", "Bar", "Stick", "Tablet")

#: Categorical attributes: column name -> vocabulary.
CATEGORICAL_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "color": COLORS,
    "size": SIZES,
    "material": MATERIALS,
    "connector_type": CONNECTORS,
    "item_form": ITEM_FORMS,
}
#: Numeric attributes: column name -> unit shown to people.
NUMERIC_ATTRIBUTES: dict[str, str] = {"wattage": "W", "screen_size": "in", "weight": "lb"}

#: Which attribute a per-episode variant varies, by department (first one the leaf has wins).
VARIANT_PRIORITY: dict[str, tuple[str, ...]] = {
    "Electronics": ("connector_type", "color"),
    "Clothing": ("size", "color"),
    "Kitchen": ("material", "color"),
    "Home": ("size", "color"),
    "Beauty": ("item_form", "color"),
}
DEFAULT_VARIANT_PRIORITY = ("color", "size", "material")

MODEL_LINES = (
    "Nano", "Pro", "Air", "Max", "Flex", "Edge", "Core", "Prime", "Ultra", "Lite", "Go", "One",
    "Plus", "Elite", "Classic", "Sport", "Studio", "Pulse", "Wave", "Vibe", "Aura", "Nova",
    "Orbit", "Zen", "Terra", "Apex", "Summit", "Vista", "Echo", "Spark", "Bolt", "Swift",
    "Fusion", "Halo", "Arc", "Atlas", "Luna", "Sol", "Vertex", "Quest", "Trek", "Ridge",
    "Harbor", "Metro", "Urban", "Essential", "Aero", "Titan",
)

_BRAND_STEMS = (
    "Volt", "Lum", "Nex", "Aur", "Kin", "Zen", "Bright", "Terra", "Nova", "Pure", "Swift",
    "Iron", "Blue", "Oak", "Peak", "True", "Hale", "Sun", "Frost", "Cedar", "Pixel", "Echo",
    "Wild", "North", "Silver", "Maple", "Storm", "River", "Stone", "Golden",
)
_BRAND_ENDINGS = (
    "ix", "ora", "wave", "tek", "ly", "io", "gear", "works", "craft", "line", "nest",
    "ridge", "field", "point", "labs", "home", "fit", "wear", "ware", "co",
)


@dataclass(frozen=True)
class Leaf:
    """A leaf category: what its products are called, cost, and which attributes they carry."""

    department: str
    path: tuple[str, ...]
    noun: str
    price_median: float
    price_sigma: float
    features: tuple[str, ...]
    colors: tuple[str, ...] = ("Black", "White", "Gray")
    sizes: tuple[str, ...] = ()
    materials: tuple[str, ...] = ()
    connectors: tuple[str, ...] = ()
    item_forms: tuple[str, ...] = ()
    wattages: tuple[float, ...] = ()
    screen_sizes: tuple[float, ...] = ()
    weights: tuple[float, ...] = ()
    brands: tuple[str, ...] = field(default=(), compare=False)

    @property
    def name(self) -> str:
        return self.path[-1]

    def values(self, attribute: str) -> tuple:
        """The value pool this leaf draws ``attribute`` from (empty: the leaf lacks it)."""
        return {
            "color": self.colors, "size": self.sizes, "material": self.materials,
            "connector_type": self.connectors, "item_form": self.item_forms,
            "wattage": self.wattages, "screen_size": self.screen_sizes, "weight": self.weights,
        }[attribute]

    @property
    def variant_attribute(self) -> str:
        priority = VARIANT_PRIORITY.get(self.department, DEFAULT_VARIANT_PRIORITY)
        return next(a for a in priority if len(self.values(a)) >= 3)


_APPAREL = ("XS", "S", "M", "L", "XL", "XXL")
_SHOES = ("7", "8", "9", "10", "11", "12", "13")
_BED = ("Twin", "Full", "Queen", "King")
_SML = ("Small", "Medium", "Large")
_TECH_COLORS = ("Black", "White", "Gray", "Silver", "Navy", "Rose Gold")
_BRIGHT = ("Black", "Blue", "Red", "Green", "Pink", "Purple", "Yellow", "Orange", "Teal")
_EARTH = ("Black", "Gray", "Navy", "Olive", "Beige", "Brown", "Green", "Charcoal")

_LEAVES: tuple[Leaf, ...] = (
    # Electronics
    Leaf("Electronics", ("Electronics", "Power", "Chargers"), "Charger", 29, 0.5,
         ("2-Port", "Fast Charging", "Foldable Plug", "GaN"), _TECH_COLORS,
         connectors=("USB-C", "Lightning", "Micro-USB", "USB-A"), wattages=(20, 30, 45, 65, 100, 140)),
    Leaf("Electronics", ("Electronics", "Power", "Power Banks"), "Power Bank", 39, 0.5,
         ("10000mAh", "20000mAh", "Slim", "LED Display"), _TECH_COLORS,
         connectors=("USB-C", "Lightning", "Micro-USB"), wattages=(18, 22, 30, 45, 65), weights=(0.4, 0.6, 0.9, 1.2)),
    Leaf("Electronics", ("Electronics", "Cables", "Charging Cables"), "Cable", 12, 0.5,
         ("6 ft", "Braided", "3-Pack", "Right Angle"), _TECH_COLORS,
         connectors=("USB-C", "Lightning", "Micro-USB", "HDMI", "DisplayPort")),
    Leaf("Electronics", ("Electronics", "Audio", "Headphones"), "Headphones", 89, 0.7,
         ("Noise Cancelling", "Over-Ear", "40h Battery", "Foldable"), _TECH_COLORS,
         connectors=("Bluetooth", "3.5mm", "USB-C", "Lightning"), weights=(0.4, 0.6, 0.8)),
    Leaf("Electronics", ("Electronics", "Audio", "Earbuds"), "Earbuds", 59, 0.6,
         ("True Wireless", "Waterproof", "Charging Case", "Sport Fit"), _TECH_COLORS,
         connectors=("Bluetooth", "USB-C", "Lightning", "3.5mm")),
    Leaf("Electronics", ("Electronics", "Audio", "Bluetooth Speakers"), "Bluetooth Speaker", 59, 0.6,
         ("Waterproof", "360 Sound", "Portable", "Party Mode"), _BRIGHT,
         connectors=("Bluetooth", "USB-C", "3.5mm", "Micro-USB"), wattages=(10, 20, 30, 60), weights=(0.8, 1.5, 2.5)),
    Leaf("Electronics", ("Electronics", "Computers", "Monitors"), "Monitor", 229, 0.5,
         ("IPS", "144Hz", "4K UHD", "Height Adjustable"), ("Black", "White", "Silver"),
         connectors=("HDMI", "DisplayPort", "USB-C"), screen_sizes=(22, 24, 27, 32, 34), weights=(8, 10, 14, 18)),
    Leaf("Electronics", ("Electronics", "Computers", "Keyboards"), "Keyboard", 59, 0.6,
         ("Mechanical", "Wireless", "Backlit", "Low Profile"), _TECH_COLORS,
         connectors=("USB-C", "USB-A", "Bluetooth"), materials=("Aluminum", "Plastic")),
    Leaf("Electronics", ("Electronics", "Computers", "Mice"), "Mouse", 29, 0.6,
         ("Ergonomic", "Silent Click", "Rechargeable", "Wireless"), _TECH_COLORS,
         connectors=("USB-C", "USB-A", "Bluetooth")),
    Leaf("Electronics", ("Electronics", "Wearables", "Smartwatches"), "Smartwatch", 149, 0.6,
         ("GPS", "Heart Rate Monitor", "AMOLED", "7-Day Battery"), _TECH_COLORS,
         connectors=("Bluetooth", "USB-C", "Lightning"), screen_sizes=(1.2, 1.4, 1.6, 1.9)),
    # Home
    Leaf("Home", ("Home", "Bedding", "Sheet Sets"), "Sheet Set", 45, 0.5,
         ("Deep Pocket", "400 Thread Count", "Breathable", "Wrinkle Resistant"), _EARTH,
         sizes=_BED, materials=("Cotton", "Linen", "Bamboo", "Polyester")),
    Leaf("Home", ("Home", "Bedding", "Pillows"), "Pillow", 35, 0.5,
         ("Cooling", "Memory Foam", "2-Pack", "Hypoallergenic"), ("White", "Gray", "Beige", "Blue"),
         sizes=("Twin", "Queen", "King"), materials=("Cotton", "Bamboo", "Polyester")),
    Leaf("Home", ("Home", "Lighting", "Desk Lamps"), "Desk Lamp", 35, 0.5,
         ("LED", "Dimmable", "USB Charging Port", "Adjustable Arm"), _TECH_COLORS,
         materials=("Aluminum", "Plastic", "Wood"), wattages=(5, 8, 10, 12)),
    Leaf("Home", ("Home", "Decor", "Wall Clocks"), "Wall Clock", 29, 0.5,
         ("Silent", "Modern", "Large Numbers", "Battery Operated"), _EARTH,
         sizes=_SML, materials=("Wood", "Aluminum", "Glass", "Plastic")),
    Leaf("Home", ("Home", "Storage", "Storage Bins"), "Storage Bin", 25, 0.5,
         ("Foldable", "Stackable", "With Lid", "3-Pack"), _EARTH,
         sizes=_SML, materials=("Plastic", "Cotton", "Bamboo", "Polyester")),
    # Kitchen
    Leaf("Kitchen", ("Kitchen", "Cookware", "Frying Pans"), "Frying Pan", 39, 0.5,
         ("Nonstick", "Oven Safe", "Induction Ready", "12-Inch"), ("Black", "Gray", "Silver", "Red"),
         materials=("Stainless Steel", "Cast Iron", "Aluminum", "Ceramic"), weights=(2, 3, 5, 7)),
    Leaf("Kitchen", ("Kitchen", "Cookware", "Saucepans"), "Saucepan", 35, 0.5,
         ("With Lid", "Dishwasher Safe", "2-Quart", "Tri-Ply"), ("Black", "Silver", "Red", "Blue"),
         materials=("Stainless Steel", "Aluminum", "Ceramic", "Cast Iron")),
    Leaf("Kitchen", ("Kitchen", "Appliances", "Coffee Makers"), "Coffee Maker", 79, 0.6,
         ("12-Cup", "Programmable", "Single Serve", "Thermal Carafe"), ("Black", "Silver", "White", "Red"),
         materials=("Stainless Steel", "Plastic", "Glass"), wattages=(800, 1000, 1200, 1500)),
    Leaf("Kitchen", ("Kitchen", "Appliances", "Blenders"), "Blender", 69, 0.6,
         ("High Speed", "Personal", "Smoothie", "BPA Free"), ("Black", "Silver", "White", "Red"),
         materials=("Glass", "Plastic", "Stainless Steel"), wattages=(300, 600, 1000, 1400)),
    Leaf("Kitchen", ("Kitchen", "Baking", "Baking Sheets"), "Baking Sheet", 19, 0.5,
         ("Nonstick", "Half Sheet", "2-Pack", "Rimmed"), ("Silver", "Black", "Gray"),
         materials=("Aluminum", "Stainless Steel", "Silicone", "Ceramic")),
    Leaf("Kitchen", ("Kitchen", "Baking", "Mixing Bowls"), "Mixing Bowl Set", 29, 0.5,
         ("Nesting", "With Lids", "5-Piece", "Non-Slip Base"), ("White", "Silver", "Blue", "Green"),
         materials=("Stainless Steel", "Glass", "Ceramic", "Bamboo", "Plastic")),
    Leaf("Kitchen", ("Kitchen", "Utensils", "Knife Sets"), "Knife Set", 59, 0.6,
         ("15-Piece", "With Block", "German Steel", "Dishwasher Safe"), ("Black", "Silver", "Brown"),
         materials=("Stainless Steel", "Ceramic", "Wood")),
    # Clothing
    Leaf("Clothing", ("Clothing", "Men", "T-Shirts"), "T-Shirt", 19, 0.4,
         ("Crew Neck", "Moisture Wicking", "Slim Fit", "Pack of 3"), _EARTH + ("White", "Red"),
         sizes=_APPAREL, materials=("Cotton", "Polyester", "Linen")),
    Leaf("Clothing", ("Clothing", "Women", "Hoodies"), "Hoodie", 39, 0.4,
         ("Pullover", "Fleece Lined", "Oversized", "Zip Up"), _EARTH + ("Pink", "Purple"),
         sizes=_APPAREL, materials=("Cotton", "Polyester", "Wool")),
    Leaf("Clothing", ("Clothing", "Shoes", "Running Shoes"), "Running Shoes", 79, 0.4,
         ("Lightweight", "Breathable", "Cushioned", "Wide Fit"), _BRIGHT,
         sizes=_SHOES, materials=("Mesh", "Nylon", "Leather")),
    Leaf("Clothing", ("Clothing", "Outerwear", "Rain Jackets"), "Rain Jacket", 69, 0.4,
         ("Waterproof", "Packable", "Hooded", "Breathable"), _EARTH + ("Yellow", "Red"),
         sizes=_APPAREL, materials=("Nylon", "Polyester")),
    Leaf("Clothing", ("Clothing", "Accessories", "Backpacks"), "Backpack", 49, 0.5,
         ("Laptop Sleeve", "Water Resistant", "Anti-Theft", "30L"), _EARTH,
         sizes=_SML, materials=("Nylon", "Polyester", "Leather")),
    # Beauty
    Leaf("Beauty", ("Beauty", "Skin Care", "Moisturizers"), "Moisturizer", 22, 0.6,
         ("Fragrance Free", "SPF 30", "Hyaluronic Acid", "For Sensitive Skin"), ("White", "Beige", "Pink"),
         item_forms=("Cream", "Gel", "Liquid", "Stick"), weights=(0.1, 0.2, 0.5)),
    Leaf("Beauty", ("Beauty", "Hair Care", "Shampoos"), "Shampoo", 14, 0.5,
         ("Sulfate Free", "Volumizing", "For Dry Hair", "Tea Tree"), ("White", "Green", "Blue", "Purple"),
         item_forms=("Liquid", "Bar", "Powder", "Gel")),
    Leaf("Beauty", ("Beauty", "Tools", "Hair Dryers"), "Hair Dryer", 59, 0.5,
         ("Ionic", "Diffuser Included", "Travel Size", "Fast Drying"), ("Black", "Pink", "White", "Rose Gold"),
         wattages=(1200, 1600, 1875, 2000), weights=(0.8, 1.2, 1.6)),
    # Sports
    Leaf("Sports", ("Sports", "Fitness", "Yoga Mats"), "Yoga Mat", 29, 0.5,
         ("Non-Slip", "Extra Thick", "With Strap", "Eco Friendly"), _BRIGHT,
         materials=("Silicone", "Cotton", "Polyester", "Nylon"), weights=(2, 3, 4)),
    Leaf("Sports", ("Sports", "Fitness", "Dumbbells"), "Dumbbell Set", 79, 0.6,
         ("Adjustable", "Hex", "Neoprene Coated", "Pair"), ("Black", "Gray", "Blue", "Red"),
         materials=("Cast Iron", "Stainless Steel", "Plastic"), weights=(10, 20, 30, 50)),
    Leaf("Sports", ("Sports", "Cycling", "Bike Lights"), "Bike Light", 24, 0.5,
         ("Rechargeable", "Waterproof", "1000 Lumen", "Front and Rear"), ("Black", "Red", "Silver"),
         connectors=("USB-C", "Micro-USB", "USB-A")),
    Leaf("Sports", ("Sports", "Hydration", "Water Bottles"), "Water Bottle", 22, 0.5,
         ("Insulated", "32 oz", "Leak Proof", "With Straw"), _BRIGHT,
         sizes=_SML, materials=("Stainless Steel", "Plastic", "Glass", "Silicone")),
    # Outdoor
    Leaf("Outdoor", ("Outdoor", "Camping", "Tents"), "Tent", 129, 0.6,
         ("2-Person", "4-Person", "Waterproof", "Instant Setup"), _EARTH,
         materials=("Nylon", "Polyester"), weights=(4, 6, 9, 12)),
    Leaf("Outdoor", ("Outdoor", "Camping", "Sleeping Bags"), "Sleeping Bag", 59, 0.5,
         ("20 Degree", "Mummy", "Lightweight", "Compression Sack"), _EARTH,
         sizes=_SML, materials=("Nylon", "Polyester", "Cotton"), weights=(2, 3, 4)),
    Leaf("Outdoor", ("Outdoor", "Camping", "Headlamps"), "Headlamp", 19, 0.5,
         ("Rechargeable", "Red Light Mode", "Waterproof", "300 Lumen"), ("Black", "Red", "Orange", "Blue"),
         connectors=("USB-C", "Micro-USB", "USB-A")),
    Leaf("Outdoor", ("Outdoor", "Garden", "Garden Hoses"), "Garden Hose", 35, 0.5,
         ("50 ft", "Expandable", "Kink Free", "With Nozzle"), ("Green", "Black", "Blue"),
         materials=("Plastic", "Nylon", "Stainless Steel")),
    # Office
    Leaf("Office", ("Office", "Furniture", "Office Chairs"), "Office Chair", 179, 0.5,
         ("Ergonomic", "Lumbar Support", "Adjustable Arms", "Headrest"), ("Black", "Gray", "White", "Blue"),
         materials=("Mesh", "Leather", "Nylon"), weights=(25, 35, 45)),
    Leaf("Office", ("Office", "Supplies", "Notebooks"), "Notebook", 12, 0.4,
         ("Dotted", "Hardcover", "A5", "3-Pack"), _BRIGHT,
         sizes=_SML, materials=("Leather", "Plastic", "Linen")),
    Leaf("Office", ("Office", "Supplies", "Gel Pens"), "Gel Pen Set", 11, 0.4,
         ("0.5 mm", "Quick Dry", "12-Pack", "Retractable"), _BRIGHT),
    # Toys
    Leaf("Toys", ("Toys", "Building", "Building Block Sets"), "Building Block Set", 39, 0.6,
         ("500 Pieces", "STEM", "Ages 6+", "Storage Box"), _BRIGHT),
    Leaf("Toys", ("Toys", "Puzzles", "Jigsaw Puzzles"), "Jigsaw Puzzle", 18, 0.4,
         ("1000 Pieces", "Landscape", "Family", "Glow in the Dark"), _BRIGHT, sizes=_SML),
    # Pets
    Leaf("Pets", ("Pets", "Dogs", "Dog Beds"), "Dog Bed", 45, 0.5,
         ("Orthopedic", "Washable Cover", "Calming", "Waterproof"), _EARTH,
         sizes=_SML, materials=("Polyester", "Cotton", "Nylon")),
    Leaf("Pets", ("Pets", "Dogs", "Dog Leashes"), "Dog Leash", 16, 0.4,
         ("Reflective", "6 ft", "Padded Handle", "Retractable"), _BRIGHT,
         sizes=_SML, materials=("Nylon", "Leather", "Polyester")),
)


def _brand_pool(department: str, count: int) -> tuple[str, ...]:
    rng = derive_rng("taxonomy-brands", department)
    names = sorted({stem + ending for stem in _BRAND_STEMS for ending in _BRAND_ENDINGS})
    return tuple(rng.sample(names, count))


def _with_brands(leaves: tuple[Leaf, ...]) -> tuple[Leaf, ...]:
    pools = {dept: _brand_pool(dept, 24) for dept in sorted({leaf.department for leaf in leaves})}
    out = []
    for leaf in leaves:
        rng = derive_rng("taxonomy-leaf-brands", leaf.path)
        brands = tuple(rng.sample(pools[leaf.department], rng.randint(10, 16)))
        out.append(Leaf(**{**leaf.__dict__, "brands": brands}))
    return tuple(out)


LEAVES: tuple[Leaf, ...] = _with_brands(_LEAVES)
