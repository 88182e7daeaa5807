"""Catalogs: the columnar schema, the synthetic generator, filters and search."""

from __future__ import annotations

from ecomrlve.catalog.schema import Catalog, Category
from ecomrlve.catalog.synthetic import DEFAULT_SEED, DEFAULT_SIZE, default_catalog, generate_synthetic_catalog


def load_catalog(spec: str) -> Catalog:
    """Resolve a catalog spec: ``synthetic:N[:SEED]`` (the embedded generator); ``default`` = the default size."""
    if spec == "default":
        return default_catalog()
    kind, _, rest = spec.partition(":")
    if kind == "synthetic":
        size, _, seed = rest.partition(":")
        try:
            return default_catalog(int(size or DEFAULT_SIZE), int(seed or DEFAULT_SEED))
        except ValueError as exc:
            raise ValueError(f"bad catalog spec {spec!r}: {exc}") from None
    raise ValueError(f"unknown catalog spec {spec!r}; expected 'synthetic:N[:SEED]'")


__all__ = ["Catalog", "Category", "default_catalog", "generate_synthetic_catalog", "load_catalog"]
