"""Catalogs: the columnar schema, the synthetic generator, filters and search."""

from __future__ import annotations

from pathlib import Path

from ecomrlve.catalog.schema import Catalog, Category
from ecomrlve.catalog.synthetic import (
    DEFAULT_SEED,
    DEFAULT_SIZE,
    default_catalog,
    generate_synthetic_catalog,
)
from ecomrlve.errors import UserInputError


def load_catalog(spec: str) -> Catalog:
    """Resolve a catalog spec.

    ``default`` (the embedded synthetic catalog), ``synthetic:N[:SEED]``, a catalog directory
    written by ``ecomrlve catalog build`` (memory-mapped, with its indexes), or a product file
    (JSONL/JSON/CSV/Parquet, see :mod:`ecomrlve.catalog.loaders`; loaded in memory, indexed on
    first search).
    """
    if spec == "default":
        return default_catalog()
    kind, _, rest = spec.partition(":")
    if kind == "synthetic":
        size, _, seed = rest.partition(":")
        try:
            return default_catalog(int(size or DEFAULT_SIZE), int(seed or DEFAULT_SEED))
        except ValueError as exc:
            raise UserInputError(f"bad catalog spec {spec!r}: {exc}") from None
    path = Path(spec)
    if is_catalog_directory(path):
        from ecomrlve.catalog.store import load_catalog_dir

        return load_catalog_dir(path)  # says what is wrong if it is not a complete catalog directory
    if path.is_file() or kind == "hf" or path.is_dir():
        from ecomrlve.catalog.loaders import load_products

        return load_products(spec)[0]
    raise UserInputError(f"unknown catalog spec {spec!r}; expected 'default', 'synthetic:N[:SEED]', "
                         "a catalog directory or a product file")


def is_catalog_directory(path: Path) -> bool:
    """Whether ``path`` is meant as a catalog directory: a folder that is not a Hugging Face
    ``save_to_disk`` folder (Dataset or DatasetDict, told apart without importing datasets). A folder
    this user may not look into is a :class:`UserInputError` (one line), not a traceback."""
    try:
        return path.is_dir() and not any((path / name).is_file()
                                         for name in ("dataset_info.json", "state.json", "dataset_dict.json"))
    except OSError as exc:  # e.g. PermissionError: no search permission on the folder
        raise UserInputError(f"cannot read {path}: {exc.strerror or exc}") from None


__all__ = ["Catalog", "Category", "default_catalog", "generate_synthetic_catalog", "is_catalog_directory", "load_catalog"]
