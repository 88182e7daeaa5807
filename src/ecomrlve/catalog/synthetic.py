"""The embedded default catalog: realistic products generated from a seed, column by column.

Every column is drawn with vectorised numpy calls from one named stream, so a catalog of any
size (1k .. 2M+) is a pure function of ``(n_products, seed)``. Only titles are built per
product, because bm25s and people read them as text.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyarrow as pa

from ecomrlve.catalog.schema import NO_VALUE, Catalog, Category
from ecomrlve.catalog.taxonomy import CATEGORICAL_ATTRIBUTES, LEAVES, MODEL_LINES, NUMERIC_ATTRIBUTES
from ecomrlve.rng import derive_generator, derive_seed

DEFAULT_SIZE = 20_000
DEFAULT_SEED = 0
_SHIP_DAYS = np.array([1, 2, 3, 4, 5, 7, 10, 14], dtype=np.int16)
_SHIP_P = np.array([0.14, 0.24, 0.2, 0.12, 0.1, 0.09, 0.07, 0.04])
_OUT_OF_STOCK_SHARE = 0.07
_CROCKFORD = np.frombuffer(b"0123456789ABCDEFGHJKMNPQRSTVWXYZ", dtype=np.uint8)
_ID_BITS = 40


def opaque_product_ids(n: int, seed: int) -> np.ndarray:
    """``n`` distinct ids like ``P7K2Q9XMA``: a keyed Feistel permutation of the row number.

    A bijection on 40-bit integers, so ids are unique by construction, yet neighbouring rows
    get unrelated ids and a random id of the right shape hits a product with probability
    n / 2^40.
    """
    half, mask = _ID_BITS // 2, np.uint64((1 << (_ID_BITS // 2)) - 1)
    keys = [np.uint64(derive_seed("product-id-key", seed, r) & 0xFFFFFFFF) for r in range(4)]
    x = np.arange(n, dtype=np.uint64)
    left, right = x >> np.uint64(half), x & mask
    for key in keys:
        f = (right ^ key) * np.uint64(0x9E3779B97F4A7C15)
        f ^= f >> np.uint64(29)
        f = (f * np.uint64(0xBF58476D1CE4E5B9)) >> np.uint64(24)
        left, right = right, left ^ (f & mask)
    value = (left << np.uint64(half)) | right
    chars = np.empty((n, 9), dtype=np.uint8)
    chars[:, 0] = ord("P")
    for j in range(8):
        chars[:, 1 + j] = _CROCKFORD[((value >> np.uint64(5 * (7 - j))) & np.uint64(31)).astype(np.intp)]
    return chars.view("S9").ravel()


def _rank_within_groups(keys: np.ndarray) -> np.ndarray:
    """0-based position of each row among the rows with the same key (vectorised)."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    start_pos = np.maximum.accumulate(np.where(starts, np.arange(len(keys)), 0))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys)) - start_pos
    return rank


def generate_synthetic_catalog(n_products: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> Catalog:
    """Generate the synthetic catalog of ``n_products`` products from ``seed``."""
    if n_products < len(LEAVES) * 10:
        raise ValueError(f"n_products must be at least {len(LEAVES) * 10}, got {n_products}")
    rng = derive_generator("synthetic-catalog", n_products, seed)
    n_leaves = len(LEAVES)
    leaf_weights = rng.uniform(0.6, 1.4, n_leaves)
    category = rng.choice(n_leaves, size=n_products, p=leaf_weights / leaf_weights.sum()).astype(np.int16)

    brands = tuple(sorted({b for leaf in LEAVES for b in leaf.brands}))
    brand_code = {b: i for i, b in enumerate(brands)}
    brand = np.empty(n_products, dtype=np.int32)
    feature = np.empty(n_products, dtype=np.int8)
    price = np.empty(n_products, dtype=np.float64)
    categorical = {a: np.full(n_products, NO_VALUE, dtype=np.int16) for a in CATEGORICAL_ATTRIBUTES}
    numeric = {a: np.full(n_products, np.nan, dtype=np.float32) for a in NUMERIC_ATTRIBUTES}
    for c, leaf in enumerate(LEAVES):
        rows = np.flatnonzero(category == c)
        k = len(rows)
        zipf = 1.0 / np.arange(1, len(leaf.brands) + 1) ** 0.8
        local = rng.choice(len(leaf.brands), size=k, p=zipf / zipf.sum())
        brand[rows] = np.array([brand_code[b] for b in leaf.brands], dtype=np.int32)[local]
        feature[rows] = rng.integers(0, len(leaf.features), size=k)
        price[rows] = np.clip(leaf.price_median * np.exp(leaf.price_sigma * rng.standard_normal(k)),
                              0.25 * leaf.price_median, 6 * leaf.price_median)
        for attr, vocab in CATEGORICAL_ATTRIBUTES.items():
            pool = leaf.values(attr)
            if pool:
                codes = np.array([vocab.index(v) for v in pool], dtype=np.int16)
                categorical[attr][rows] = codes[rng.integers(0, len(codes), size=k)]
        for attr in NUMERIC_ATTRIBUTES:
            pool = leaf.values(attr)
            if pool:
                numeric[attr][rows] = np.asarray(pool, dtype=np.float32)[rng.integers(0, len(pool), size=k)]

    price_cents = (np.maximum(np.floor(price), 1) * 100 + 99).astype(np.int32)
    rating_x10 = np.clip(np.rint(10 + 40 * rng.beta(5.0, 1.4, n_products)), 10, 50).astype(np.int16)
    rating_count = np.rint(rng.lognormal(4.5, 1.4, n_products)).astype(np.int32)
    ship_days = rng.choice(_SHIP_DAYS, size=n_products, p=_SHIP_P)
    stock = np.where(rng.random(n_products) < _OUT_OF_STOCK_SHARE, 0,
                     1 + rng.geometric(0.03, n_products)).astype(np.int32)

    # Model names are unique within (category, brand) by construction, so a shopper who names
    # "Brightix Nova 21 Charger" means exactly one product.
    rank = _rank_within_groups(category.astype(np.int64) * len(brands) + brand)
    n_lines = len(MODEL_LINES)
    line = (rank + brand * 13) % n_lines
    model_number = 10 * (rank // n_lines) + 1 + (brand.astype(np.int64) * 7 + line) % 9
    titles = _titles(category, brand, brands, line, model_number, feature, categorical, numeric)

    categories = tuple(Category(path=leaf.path, noun=leaf.noun, variant_attribute=leaf.variant_attribute)
                       for leaf in LEAVES)
    return Catalog(
        name=f"synthetic:{n_products}:{seed}", ids=opaque_product_ids(n_products, seed),
        titles=titles, category=category, categories=categories, brand=brand, brands=brands,
        price_cents=price_cents, rating_x10=rating_x10, rating_count=rating_count,
        ship_days=ship_days, stock=stock, categorical=categorical, numeric=numeric,
        metadata={"source": "synthetic", "n_products": n_products, "seed": seed},
    )


def _titles(category: np.ndarray, brand: np.ndarray, brands: tuple[str, ...], line: np.ndarray, model_number: np.ndarray,
            feature: np.ndarray, categorical: dict[str, np.ndarray], numeric: dict[str, np.ndarray]) -> pa.Array:
    """Titles people would type: ``"Brightix Nova 21 65W Charger, GaN, Black"``."""
    spec_units = {"wattage": "W", "screen_size": "-Inch"}
    cat_l, brand_l, line_l, num_l, feat_l = (a.tolist() for a in (category, brand, line, model_number, feature))
    color_l = categorical["color"].tolist()
    spec_cols = {a: numeric[a].tolist() for a in spec_units}
    leaf_material = [leaf.variant_attribute != "material" and bool(leaf.materials) for leaf in LEAVES]
    material_l = categorical["material"].tolist()
    colors, materials = CATEGORICAL_ATTRIBUTES["color"], CATEGORICAL_ATTRIBUTES["material"]
    out = []
    for i in range(len(cat_l)):
        leaf = LEAVES[cat_l[i]]
        parts = [brands[brand_l[i]], MODEL_LINES[line_l[i]], str(num_l[i])]
        for attr, unit in spec_units.items():
            value = spec_cols[attr][i]
            if value == value:
                parts.append(f"{value:g}{unit}")
        if leaf_material[cat_l[i]] and material_l[i] >= 0:
            parts.append(materials[material_l[i]])
        parts.append(leaf.noun)
        title = " ".join(parts) + ", " + leaf.features[feat_l[i]]
        if leaf.variant_attribute != "color" and color_l[i] >= 0:
            title += ", " + colors[color_l[i]]
        out.append(title)
    return pa.array(out, type=pa.string())


@lru_cache(maxsize=4)
def default_catalog(n_products: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> Catalog:
    """The shared, immutable synthetic catalog for this process (built once per size/seed)."""
    return generate_synthetic_catalog(n_products, seed)
