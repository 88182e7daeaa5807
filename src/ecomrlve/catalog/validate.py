"""Cheap consistency checks of a catalog directory, run on every load, and the manifest's own checksum.

Loading checks what costs milliseconds even at 2M products: the manifest is a readable file
whose checksum matches its content, every file it lists exists with the recorded size, every
column has the recorded dtype and one entry per product, category/brand codes are in range,
the text file has one row per product and the embedder name is one this package can load.
Bytes changed in place (same size) are found by ``ecomrlve catalog info --verify``, which
recomputes every file's SHA-256. Each problem is reported as one :class:`CatalogDirectoryError` line.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ecomrlve.errors import UserInputError

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CHECKSUM_KEY = "manifest_sha256"
REQUIRED_COLUMNS = ("ids", "category", "brand", "price_cents", "rating_x10", "rating_count", "ship_days", "stock",
                    "id_order")
_REQUIRED_KEYS: dict[str, type | tuple[type, ...]] = {
    "format_version": int, "name": str, "n_products": int, "counts": dict, "categories": list, "brands": list,
    "embedder": (dict, type(None)), "build_seconds": dict, "files": dict,
}


class CatalogDirectoryError(UserInputError):
    """A catalog directory that is incomplete, corrupt or built for another embedder."""


def manifest_checksum(manifest: dict[str, Any]) -> str:
    """SHA-256 of the manifest's content (without the checksum itself), key order independent."""
    content = {k: v for k, v in manifest.items() if k != CHECKSUM_KEY}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def write_manifest(directory: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write ``manifest`` sealed with its checksum; returns the sealed manifest."""
    sealed = {**manifest, CHECKSUM_KEY: manifest_checksum(manifest)}
    (directory / MANIFEST).write_text(json.dumps(sealed, indent=1))
    return sealed


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of ``directory`` after checking that it is a file, well formed and unedited."""
    path = Path(directory) / MANIFEST
    if not os.path.lexists(path):
        raise CatalogDirectoryError(f"{directory}: not a catalog directory (no {MANIFEST}; an interrupted build?)")
    if not path.exists():
        raise CatalogDirectoryError(f"{path}: dangling symbolic link")
    if not path.is_file():
        raise CatalogDirectoryError(f"{path}: not a file")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CatalogDirectoryError(f"{path}: unreadable ({exc})") from None
    if not isinstance(manifest, dict):
        raise CatalogDirectoryError(f"{path}: expected a JSON object")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CatalogDirectoryError(f"{directory}: format version {manifest.get('format_version')!r}, "
                                    f"expected {FORMAT_VERSION}")
    for key, kind in _REQUIRED_KEYS.items():
        if not isinstance(manifest.get(key), kind):
            raise CatalogDirectoryError(f"{path}: missing or malformed {key!r}")
    stored = manifest.get(CHECKSUM_KEY)
    if stored is not None and stored != manifest_checksum(manifest):
        raise CatalogDirectoryError(f"{path}: content does not match its checksum (edited after the build?)")
    return manifest


def check_files(directory: Path, manifest: dict[str, Any]) -> None:
    """Every file the manifest lists, and every file loading needs, exists with the recorded size."""
    files = manifest["files"]
    needed = [f"columns/{name}.npy" for name in REQUIRED_COLUMNS] + ["text.arrow"]
    if manifest["embedder"] is not None:
        needed += ["vectors.f16.npy", "dense.faiss"]
    if not any(name.startswith("lexical/") for name in files):
        raise CatalogDirectoryError(f"{directory}: the manifest lists no lexical index files")
    for name in needed:
        if name not in files:
            raise CatalogDirectoryError(f"{directory}: the manifest does not list {name}")
    for name, entry in files.items():
        path = directory / name
        if not path.is_file():
            raise CatalogDirectoryError(f"{directory}: missing file {name}")
        size = path.stat().st_size
        if not isinstance(entry, dict) or size != entry.get("bytes"):
            expected = entry.get("bytes") if isinstance(entry, dict) else None
            raise CatalogDirectoryError(f"{directory}: {name} has {size} bytes, the manifest says {expected} "
                                        "(truncated or replaced)")


def load_columns(directory: Path, manifest: dict[str, Any]) -> dict[str, np.ndarray]:
    """The ``columns/*.npy`` arrays, memory-mapped, after checking their dtype, shape and codes."""
    n = manifest["n_products"]
    recorded = manifest.get("columns", {})
    columns = {}
    for path in sorted((directory / "columns").glob("*.npy")):
        try:
            column = np.load(path, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise CatalogDirectoryError(f"{directory}: columns/{path.name} unreadable ({exc})") from None
        expected = recorded.get(path.stem)
        if column.shape != (n,):
            raise CatalogDirectoryError(f"{directory}: columns/{path.name} has shape {column.shape}, expected ({n},)")
        if expected is not None and str(column.dtype) != expected:
            raise CatalogDirectoryError(f"{directory}: columns/{path.name} has dtype {column.dtype}, "
                                        f"the manifest says {expected}")
        columns[path.stem] = column
    if missing := [name for name in REQUIRED_COLUMNS if name not in columns]:
        raise CatalogDirectoryError(f"{directory}: missing columns {missing}")
    # the order the catalog had when built (the manifest's), not the files' names: attribute order is part of
    # what an episode draws, so a directory plays the episodes of the catalog it was built from
    order = {name: index for index, name in enumerate(recorded)}
    columns = dict(sorted(columns.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))
    if columns["ids"].dtype.kind != "S":
        raise CatalogDirectoryError(f"{directory}: columns/ids.npy must hold byte strings, has {columns['ids'].dtype}")
    for name, limit in (("category", len(manifest["categories"])), ("brand", len(manifest["brands"])),
                        ("id_order", n)):
        column = columns[name]
        if column.dtype.kind not in "iu" or (n and not (0 <= column.min() and column.max() < limit)):
            raise CatalogDirectoryError(f"{directory}: columns/{name}.npy holds codes outside [0, {limit})")
    return columns


def check_text_rows(directory: Path, rows: int, n: int) -> None:
    if rows != n:
        raise CatalogDirectoryError(f"{directory}: text.arrow has {rows} rows, the catalog has {n} products")


def check_embedder_name(directory: Path, manifest: dict[str, Any]) -> None:
    """The embedder the vectors were built with must be one :func:`get_embedder` can load."""
    info = manifest["embedder"]
    if info is None:
        return
    name = info.get("name")
    kind, _, rest = name.partition(":") if isinstance(name, str) else ("", "", "")
    if kind not in ("static", "st") or not rest or not isinstance(info.get("dim"), int) \
            or not isinstance(info.get("fingerprint"), str):
        raise CatalogDirectoryError(f"{directory}: unknown or malformed embedder {name!r} in the manifest")


def column_dtypes(columns: dict[str, np.ndarray]) -> dict[str, str]:
    """What the manifest records about each column, for :func:`load_columns` to check."""
    return {name: str(np.asarray(array).dtype) for name, array in columns.items()}
