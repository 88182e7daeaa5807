"""What a catalog can support: difficulty features and environments, and why not.

A real product file rarely has everything the synthetic world has (variant attributes, a
final-sale category, the categories a BUNDLE project needs). :func:`capabilities` measures it
once per catalog (vectorised, cached on the catalog object) and returns a typed report:

* ``features``: each difficulty feature with the count it rests on and, when unsupported, why
  (``capabilities(catalog).has("variants")``); ``envs`` follows from them and each spec's
  ``catalog_needs`` and ``catalog_uses``;
* ``envs``: per environment, whether it can run at all (``missing``: hard requirements, the
  environment refuses at start with one line) and which features it must do without
  (``limited``: the environment adapts).

``ecomrlve catalog info`` prints the report; ``catalog build`` stores it in the directory
manifest; :class:`~ecomrlve.episode.EcomEnv` refuses an unsupported environment when it is
created or reset. The report lives with the environments (not in ``catalog/``) because what an
environment needs is environment knowledge (the store policy's final-sale list, BUNDLE's
projects); it reads the catalog only through its columns.

:func:`stored_arrays` is the rest of what ``catalog build`` stores for the environments: per-product data
they would otherwise work out in episodes (CART's name checks), into the directory's ``derived/``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.product_type import main_type_mask
from ecomrlve.catalog.schema import NO_VALUE, Catalog
from ecomrlve.catalog.store import STORED_CAPABILITIES, ProgressFactory
from ecomrlve.catalog.variants import VARIANTS_PER_PRODUCT
from ecomrlve.difficulty import Difficulty
from ecomrlve.registry import env_specs
from ecomrlve.world.policy import is_final_sale

CAPABILITIES_VERSION = 1
_HARDEST = Difficulty.at(15)


@dataclass(frozen=True)
class Feature:
    """One difficulty feature: how much of the catalog carries it, and why it is off when it is."""

    name: str
    supported: bool
    count: int
    unit: str  # what ``count`` counts: products, categories, projects
    reason: str = ""  # why it is not supported (empty when it is)


@dataclass(frozen=True)
class EnvSupport:
    """Whether an environment can run on the catalog."""

    env_id: str
    missing: tuple[str, ...] = ()  # hard requirements the catalog lacks: the env refuses to start
    limited: tuple[str, ...] = ()  # features the env uses that the catalog lacks: the env adapts

    @property
    def supported(self) -> bool:
        return not self.missing


@dataclass(frozen=True)
class CatalogCapabilities:
    """The capability report of one catalog (see the module docstring)."""

    counts: dict[str, int]
    features: dict[str, Feature]
    envs: dict[str, EnvSupport]
    version: int = CAPABILITIES_VERSION
    attribute_products: dict[str, int] = field(default_factory=dict)  # products with a value, per attribute

    def has(self, feature: str) -> bool:
        return self.features[feature].supported

    def supports(self, env_id: str) -> bool:
        support = self.envs.get(env_id)
        return support is None or support.supported

    def refusal(self, env_id: str) -> str | None:
        """One line saying why ``env_id`` cannot run on this catalog (None: it can)."""
        support = self.envs.get(env_id)
        if support is None or support.supported:
            return None
        return f"{env_id} cannot run on this catalog: " + "; ".join(support.missing)

    def as_dict(self) -> dict[str, Any]:
        return {"version": self.version, "counts": dict(self.counts),
                "features": {name: asdict(f) for name, f in self.features.items()},
                "envs": {env_id: {"supported": s.supported, "missing": list(s.missing), "limited": list(s.limited)}
                         for env_id, s in self.envs.items()},
                "attribute_products": dict(self.attribute_products)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CatalogCapabilities:
        return cls(counts=dict(data["counts"]),
                   features={name: Feature(**f) for name, f in data["features"].items()},
                   envs={env_id: EnvSupport(env_id, tuple(s["missing"]), tuple(s["limited"]))
                         for env_id, s in data["envs"].items()},
                   version=int(data["version"]), attribute_products=dict(data.get("attribute_products", {})))


class CatalogUnsupportedError(ValueError):
    """An environment was asked for on a catalog that cannot support it (one line says what is missing)."""


def capabilities(catalog: Catalog) -> CatalogCapabilities:
    """The catalog's capability report, computed once per catalog object (O(n), vectorised)."""
    return CAPABILITIES.of(catalog)


def stored_arrays(catalog: Catalog, progress: ProgressFactory) -> dict[str, np.ndarray]:
    """What ``catalog build`` stores in ``derived/`` for the environments, by declared name: CART's name check of
    every product (in a category of more than 5,000 products an episode would otherwise index the category's words
    on its first use, ~0.1 s at 60,000 products)."""
    from ecomrlve.envs.cart.family import STORED_NAME_CHECKS, name_checks

    return {STORED_NAME_CHECKS.name: name_checks(catalog, progress("name checks", len(catalog)))}


def require_support(catalog: Catalog, env_ids: tuple[str, ...] | list[str]) -> None:
    """Raise :class:`CatalogUnsupportedError` (one line) if any of ``env_ids`` cannot run on ``catalog``."""
    report = capabilities(catalog)
    refusals = [line for line in (report.refusal(e) for e in env_ids) if line]
    if refusals:
        raise CatalogUnsupportedError(f"catalog {catalog.name}: " + " | ".join(refusals)
                                      + " (see `ecomrlve catalog info`)")


def _variant_products(catalog: Catalog) -> tuple[np.ndarray, list[str]]:
    """Per category, the products whose variants come from the catalog (the product has a value of
    its category's variant attribute and the category has at least VARIANTS_PER_PRODUCT of them)."""
    per_category = np.zeros(len(catalog.categories), dtype=np.int64)
    attributes = sorted({c.variant_attribute for c in catalog.categories})
    for attribute in attributes:
        codes = catalog.categorical.get(attribute)
        if codes is None:
            continue
        distinct = catalog.category_values(attribute)
        with_value = np.bincount(catalog.category[codes != NO_VALUE], minlength=len(catalog.categories))
        for i, category in enumerate(catalog.categories):
            if category.variant_attribute == attribute and len(distinct[i]) >= VARIANTS_PER_PRODUCT:
                per_category[i] = with_value[i]
    return per_category, attributes


def _unique_titles(catalog: Catalog) -> np.ndarray:
    """Per product, whether no other product of its category has the same title (case aside): a
    shopper can name only such a product (a real file may list one title under several ids). The
    count of the ``nameable`` feature; whether one of them can be named is checked until one is found."""
    titles = catalog.titles.combine_chunks() if isinstance(catalog.titles, pa.ChunkedArray) else catalog.titles
    codes = np.asarray(pc.utf8_lower(titles).dictionary_encode().indices, dtype=np.int64)
    keys = np.asarray(catalog.category, dtype=np.int64) * (int(codes.max(initial=0)) + 1) + codes
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return counts[inverse] == 1


def analyse(catalog: Catalog) -> CatalogCapabilities:
    """Measure ``catalog`` (use :func:`capabilities`, which caches this)."""
    from ecomrlve.envs.cart.family import names_itself  # how a shopper names a product is CART's
    from ecomrlve.envs.recommend.bundle import resolve_projects  # the projects are BUNDLE's; bundle imports much

    n_categories = len(catalog.categories)
    stock = np.asarray(catalog.stock)
    category = np.asarray(catalog.category)
    products = np.bincount(category, minlength=n_categories)
    in_stock = np.bincount(category[stock > 0], minlength=n_categories)
    # requests name a category's main type: targets, substitutes and bundle slots are of it (an accessory is not)
    main_in_stock = np.bincount(category[(stock > 0) & main_type_mask(catalog)], minlength=n_categories)
    variants, variant_attributes = _variant_products(catalog)
    titled = np.flatnonzero(_unique_titles(catalog) & (stock > 0))
    final_sale = np.array([is_final_sale(c.name) for c in catalog.categories], dtype=bool)
    usable_projects = [[c for c in resolved if main_in_stock[c] > 0] for resolved in resolve_projects(catalog)]
    projects = sum(1 for p in usable_projects if p)
    bundle_slots = max((len(p) for p in usable_projects), default=0)
    stocked_categories = int(np.count_nonzero(in_stock))
    counts = {"products": len(catalog), "categories": n_categories, "brands": len(catalog.brands),
              "in_stock": int(in_stock.sum()), "rated": int(np.count_nonzero(np.asarray(catalog.rating_x10) > 0)),
              "categories_in_stock": stocked_categories}

    def feature(name: str, count: int, unit: str, needed: int, reason: str) -> Feature:
        ok = count >= needed
        return Feature(name, ok, int(count), unit, "" if ok else reason)

    features = [
        feature("in_stock", counts["in_stock"], "products", 1, "no product is in stock"),
        feature("requestable", int(main_in_stock.sum()), "products", 1,
                "no in-stock product is of its category's main type, the type requests name"),
        feature("nameable", len(titled) if any(names_itself(catalog, int(r)) for r in titled) else 0, "products", 1,
                "no in-stock product has a name of its own in its category (title, or brand, model words and "
                "type), so a shopper cannot ask for one"),
        feature("variants", int(variants.sum()), "products", 1,
                f"no category has {VARIANTS_PER_PRODUCT} distinct values of its variant attribute "
                f"({', '.join(variant_attributes)}) on its products"),
        feature("stock_outs", int(np.count_nonzero(main_in_stock >= 2)), "categories", 1,
                "no category has two in-stock products of its main type, so a sold-out item has no "
                "alternative of its kind"),
        feature("multi_item_carts", stocked_categories, "categories", _HARDEST.cart_items,
                f"{stocked_categories} categories with stock; CART's largest cart needs {_HARDEST.cart_items} "
                "(one item per category)"),
        feature("final_sale", int(products[final_sale].sum()), "products", 1,
                "no product is in a final-sale category of the store policy"),
        feature("returnable", int(products[~final_sale].sum()), "products", 1,
                "every product is in a final-sale category"),
        feature("bundles", projects, "projects", 1,
                "no BUNDLE project finds one of its categories with an in-stock product of its main type"),
        feature("full_bundles", bundle_slots, "categories", _HARDEST.bundle_categories,
                f"the largest BUNDLE project finds {bundle_slots} categories; d=15 asks for "
                f"{_HARDEST.bundle_categories}"),
        feature("distractors", int(np.count_nonzero(products >= 2)), "categories", 1,
                "no category has two products, so search has no same-category distractor"),
        feature("order_histories", counts["products"], "products", 2,
                "the catalog has one product; an order history needs a second one for its other orders"),
        feature("look_alike_orders", int(np.count_nonzero(products >= 2)), "categories", 1,
                "no category has two products, so no order line has a look-alike"),
        feature("ratings", counts["rated"], "products", 1, "no product has a rating"),
    ]
    by_name = {f.name: f for f in features}
    attribute_products = {attr: int(np.count_nonzero(np.asarray(codes) != NO_VALUE))
                          for attr, codes in catalog.categorical.items()}
    attribute_products |= {attr: int(np.count_nonzero(~np.isnan(np.asarray(values))))
                           for attr, values in catalog.numeric.items()}
    envs = _env_support(by_name)
    return CatalogCapabilities(counts=counts, features=by_name, envs=envs, attribute_products=attribute_products)


def _report(catalog: Catalog) -> CatalogCapabilities:
    """The report a catalog directory's manifest stores (``catalog build`` analysed the same products), when it
    is of this version and covers the environments registered now; else :func:`analyse`."""
    stored = STORED_CAPABILITIES.of(catalog)
    if (stored is not None and stored.get("version") == CAPABILITIES_VERSION
            and set(stored.get("envs", {})) == {spec.id for spec in env_specs()}):
        return CatalogCapabilities.from_dict(stored)
    return analyse(catalog)


CAPABILITIES = derived("capabilities", _report)


#: JOURNEY runs when at least this many of its intent environments can.
JOURNEY_MIN_INTENTS = 2


def _env_support(features: dict[str, Feature]) -> dict[str, EnvSupport]:
    """Per environment: the features it cannot run without, and those it adapts to the lack of."""
    specs = env_specs()
    for spec in specs:
        unknown_features = sorted(set(spec.catalog_needs + spec.catalog_uses) - set(features))
        if unknown_features:
            raise ValueError(f"{spec.id}'s spec names unknown catalog features {unknown_features}; "
                             f"known: {sorted(features)}")
    envs = {spec.id: EnvSupport(spec.id, tuple(features[f].reason for f in spec.catalog_needs if not features[f].supported),
                                tuple(f for f in spec.catalog_uses if not features[f].supported))
            for spec in specs}
    intents = [s.id for s in sorted((s for s in specs if s.journey is not None), key=lambda s: s.journey.draw_order if s.journey else 0)]
    runnable = [e for e in intents if envs[e].supported]
    missing = () if len(runnable) >= JOURNEY_MIN_INTENTS else (
        f"only {len(runnable)} of its request kinds can run here ({', '.join(runnable) or 'none'}); "
        f"it needs {JOURNEY_MIN_INTENTS}",)
    envs["JOURNEY"] = EnvSupport("JOURNEY", missing, tuple(f"intent {e}" for e in intents if e not in runnable))
    return envs


def capability_rows(report: CatalogCapabilities) -> list[tuple[str, str]]:
    """The report as (label, text) rows for ``ecomrlve catalog info`` and ``catalog build``."""
    rows = []
    for f in report.features.values():
        rows.append((f"feature {f.name}", f"{'yes' if f.supported else 'NO'} ({f.count:,} {f.unit})"
                     + (f": {f.reason}" if f.reason else "")))
    for s in report.envs.values():
        if not s.supported:
            text = "refuses: " + "; ".join(s.missing)
        else:
            text = "runs" + (f", adapts without: {', '.join(s.limited)}" if s.limited else "")
        rows.append((f"env {s.env_id}", text))
    covered = ", ".join(f"{attr} {count:,}" for attr, count in report.attribute_products.items() if count)
    rows.append(("attribute values", covered or "none"))
    return rows
