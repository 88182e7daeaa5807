"""Catalog directories: a catalog plus its lexical and vector indexes, written once, memory-mapped on load.

Layout (``manifest.json`` describes the rest, with byte sizes and SHA-256 checksums)::

    manifest.json        counts, categories, brands, embedder name/dim/fingerprint, build times
    columns/*.npy        one numpy array per numeric column (+ the id sort order)
    text.arrow           titles and descriptions (Arrow IPC, memory-mapped zero-copy)
    derived/             data worked out of the catalog once (``ecomrlve.catalog.derived``): the rows of each
                         category, each product's type and spoken name (``spoken.arrow``), the variant draw,
                         every category view (``views/``, ``main_views/``: columns back to back, + the main
                         views' title word indexes), the scoring terms (``main_view_terms/``: the main views'
                         utility terms and attribute blocks; ``field_bits.npy``; ``category_type_codes.npy``),
                         the environments' per-product arrays (``<name>.npy``: CART's name checks), all
                         memory-mapped so that processes share the pages
    lexical/             the BM25 index (bm25s format, memory-mapped)
    vectors.f16.npy      product vectors, float16 (exact scoring for selective filters)
    dense.faiss          the FAISS index over the same vectors

Columns are ``.npy`` and Arrow IPC rather than Parquet because both map straight into memory:
a 2M-product directory opens in well under a second instead of being decoded. Embedding is the
long stage (hours for a transformer on CPU), so it is resumable: vectors are written in chunks
to a memory-mapped file and ``embed.progress.json`` records how far it got.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ecomrlve.catalog.derived import DECLARED, DERIVED_FORMAT, SUPERSEDED, Derived, derived
from ecomrlve.catalog.loaders import brand_name
from ecomrlve.catalog.product_type import (
    CATEGORY_TYPES,
    STORED_NAMES,
    CategoryTypes,
    StoredNames,
    main_type_mask,
    stored_names_of,
)
from ecomrlve.catalog.rowindex import title_word_index
from ecomrlve.catalog.schema import Catalog, Category
from ecomrlve.catalog.scoring_terms import (
    FIELD_FACTS,
    UTILITY_FIELDS,
    StoredTerms,
    field_facts,
    field_facts_of_bits,
)
from ecomrlve.catalog.search import BM25Retriever, Retriever, document_texts
from ecomrlve.catalog.validate import (
    CHECKSUM_KEY,
    FORMAT_VERSION,
    MANIFEST,
    CatalogDirectoryError,
    check_embedder_name,
    check_files,
    check_text_rows,
    column_dtypes,
    load_columns,
    read_manifest,
    write_manifest,
)
from ecomrlve.catalog.variants import (
    VARIANT_COLUMNS,
    VARIANTS_PER_PRODUCT,
    VariantColumns,
    value_bits,
    variant_columns,
)
from ecomrlve.catalog.views import (
    STORED_VIEWS,
    CategoryView,
    StoredTitleWords,
    StoredViews,
    category_view,
    sub_catalog,
    view_rows,
)

if TYPE_CHECKING:  # embedders load lazily, with the dense index
    from ecomrlve.catalog.embedders import Embedder

EMBED_CHUNK = 50_000
_FINGERPRINT_PROBE = ("usb c charger 65w", "stainless steel frying pan", "kids running shoes size 11")

#: progress(stage, total) -> advance(n): how a long step reports; the CLI passes rich bars.
ProgressFactory = Callable[[str, int], Callable[[int], None]]


def _no_progress(stage: str, total: int) -> Callable[[int], None]:
    return lambda n: None


#: (catalog, progress) -> {declared name: one value per product}: derived data that layers above the catalog
#: work out (the CLI passes the environments', ``ecomrlve.envs.capabilities.stored_arrays``); ``catalog build``
#: stores each in ``derived/<name>.npy`` and a directory provides it memory-mapped under its name.
DerivedArrays = Callable[[Catalog, ProgressFactory], dict[str, np.ndarray]]


def embedder_fingerprint(embedder: Embedder) -> str:
    """A short digest of what the embedder makes of fixed probe texts: catches a swapped model."""
    vectors = np.round(embedder.embed(list(_FINGERPRINT_PROBE)).astype(np.float64), 2) + 0.0
    return hashlib.blake2b(vectors.tobytes(), digest_size=8).hexdigest()


def catalog_digest(catalog: Catalog) -> str:
    """A digest of the ids and titles: an interrupted embedding resumes only for the same products."""
    digest = hashlib.blake2b(np.ascontiguousarray(catalog.ids).tobytes(), digest_size=16)
    for title in catalog.titles.cast(pa.large_string()).buffers()[1:]:
        digest.update(memoryview(title) if title is not None else b"")
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    timings[stage] = round(time.perf_counter() - start, 3)


def _column_arrays(catalog: Catalog, id_order: bool = True) -> dict[str, np.ndarray]:
    columns = {"ids": catalog.ids, "category": catalog.category, "brand": catalog.brand,
               "price_cents": catalog.price_cents, "rating_x10": catalog.rating_x10,
               "rating_count": catalog.rating_count, "ship_days": catalog.ship_days, "stock": catalog.stock,
               **({"id_order": catalog._id_order} if id_order else {})}
    columns.update({f"categorical.{k}": v for k, v in catalog.categorical.items()})
    columns.update({f"numeric.{k}": v for k, v in catalog.numeric.items()})
    return columns


def write_columns(catalog: Catalog, out: Path, *, id_order: bool = True) -> None:
    """The catalog itself: numpy columns (in ``out/columns``; with ``id_order=False``, the stored views', in
    ``out`` itself and without the id order) and the Arrow text file."""
    where = out / "columns" if id_order else out
    where.mkdir(parents=True, exist_ok=True)
    for name, array in _column_arrays(catalog, id_order).items():
        np.save(where / f"{name}.npy", np.ascontiguousarray(array))
    text = {"titles": catalog.titles}
    if catalog.descriptions is not None:
        text["descriptions"] = catalog.descriptions
    # Plain 32-bit-offset strings, as in memory (pyarrow kernels do not mix string kinds), unless
    # a column is over 2 GiB.
    table = pa.table({k: v.cast(pa.large_string() if v.nbytes >= 2**31 else pa.string()) for k, v in text.items()})
    with pa.OSFile(str(out / "text.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=len(catalog) or 1)


def write_derived(catalog: Catalog, out: Path, progress: ProgressFactory = _no_progress,
                  arrays: DerivedArrays | None = None) -> dict[str, Any]:
    """What episodes would otherwise work out of the catalog on first use, into ``out/derived/``; returns
    the manifest's ``derived`` entry (format, per-category types, category bounds, the ``arrays`` stored)."""
    (out / "derived").mkdir(parents=True, exist_ok=True)
    names = stored_names_of(catalog, progress("spoken names", len(catalog)))
    if arrays is not None and STORED_NAMES.of(catalog) is None:  # the arrays read these names, not a kept copy
        catalog.derived.provide(STORED_NAMES.name, names)
    stored_arrays = _write_arrays(catalog, out / "derived", progress, arrays)
    rows = catalog.category_rows
    np.save(out / "derived" / "category_order.npy", np.concatenate(rows) if rows else np.zeros(0, np.int64))
    np.save(out / "derived" / "type_code.npy", names.type_code)
    np.save(out / "derived" / "spoken_unique.npy", names.spoken_unique)
    _write_table(out / "derived" / "spoken.arrow", {"text": names.spoken_text, "model": names.spoken_model})
    _write_variants(variant_columns(catalog), out / "derived")
    np.save(out / "derived" / "main_type_mask.npy", main_type_mask(catalog))
    np.save(out / "derived" / "sorted_ids.npy", catalog._sorted_ids)
    for attribute in catalog.categorical:
        np.save(out / "derived" / f"value_bits.{attribute}.npy", value_bits(catalog, attribute))
    views, words = {}, {}
    for main_type_only, kind in ((False, "views"), (True, "main_views")):
        per_category = [view_rows(catalog, c, main_type_only) for c in range(len(catalog.categories))]
        order = np.concatenate(per_category) if per_category else np.zeros(0, np.int64)
        stacked = sub_catalog(catalog, order, kind)
        write_columns(stacked, out / "derived" / kind, id_order=False)
        np.save(out / "derived" / kind / "rows.npy", order)
        _write_variants(variant_columns(stacked), out / "derived" / kind)
        if main_type_only:  # SUB's title likeness reads these views' title word indexes
            index = StoredTitleWords.of([title_word_index(category_view(catalog, c, main_type_only=True).catalog)
                                         for c in range(len(catalog.categories))])
            _write_table(out / "derived" / kind / "title_words.arrow", {"word": index.words})
            np.save(out / "derived" / kind / "title_word_bounds.npy", index.bounds)
            np.save(out / "derived" / kind / "title_word_rows.npy", index.rows)
            words[kind] = index.word_starts
        views[kind] = np.cumsum([0, *map(len, per_category)]).tolist()
    pattern, lengths = catalog._id_tokens
    return {"format": DERIVED_FORMAT, "category_bounds": np.cumsum([0, *map(len, rows)]).tolist(),
            "type_names": [list(t) for t in names.type_names], "main_types": list(names.main_types),
            "view_bounds": views, "title_word_starts": words, "id_pattern": pattern.pattern,
            "id_lengths": sorted(lengths), "arrays": stored_arrays,
            "scoring_terms": _write_scoring_terms(catalog, names, out / "derived")}


def _write_arrays(catalog: Catalog, out: Path, progress: ProgressFactory, arrays: DerivedArrays | None) -> list[str]:
    """The per-product arrays ``arrays`` works out, each as ``out/<name>.npy`` (a declared name); their names."""
    if arrays is None:
        return []
    found = arrays(catalog, progress)
    for name, array in found.items():
        if name not in DECLARED or np.shape(array) != (len(catalog),):
            raise ValueError(f"derived array {name!r}: not declared in ecomrlve.catalog.derived, or not one value "
                             f"per product (shape {np.shape(array)})")
        np.save(out / f"{name}.npy", np.ascontiguousarray(array))
    return sorted(found)


def _read_arrays(directory: Path, names: Any, n: int) -> dict[str, np.ndarray]:
    """The arrays :func:`_write_arrays` stored, memory-mapped (``names``: the manifest's list), less those
    :data:`~ecomrlve.catalog.derived.SUPERSEDED`."""
    arrays = {}
    for name in names:
        if name in SUPERSEDED:  # an older build's: worked out on first use instead
            continue
        array = np.load(directory / f"{name}.npy", mmap_mode="r")
        if name not in DECLARED or array.shape != (n,):
            raise ValueError(f"derived array {name!r} of shape {array.shape}, expected {n} values of a declared kind")
        arrays[name] = np.asarray(array)
    return arrays


def _write_scoring_terms(catalog: Catalog, names: StoredNames, out: Path) -> dict[str, int]:
    """What ``TaskFamily.prepare`` would otherwise build in every process (:mod:`ecomrlve.catalog.scoring_terms`):
    the main-type views' utility terms and attribute columns (``main_view_terms/``, views back to back), the
    field facts, and each category's type codes in category order (``category_order.npy``'s order), so that a
    category's codes are one slice of the file. Returns the manifest's ``scoring_terms`` entry."""
    stored = StoredTerms.of([category_view(catalog, c, main_type_only=True).catalog
                             for c in range(len(catalog.categories))])
    (out / "main_view_terms").mkdir(exist_ok=True)
    for name, column in zip(UTILITY_FIELDS, stored.utility):
        np.save(out / "main_view_terms" / f"utility.{name}.npy", column)
    np.save(out / "main_view_terms" / "attribute_codes.npy", stored.codes)
    np.save(out / "main_view_terms" / "attribute_values.npy", stored.values)
    np.save(out / "field_bits.npy", field_facts(catalog).bits)
    order = np.concatenate(catalog.category_rows) if len(catalog.categories) else np.zeros(0, np.int64)
    np.save(out / "category_type_codes.npy", names.type_code[order])
    return {"format": SCORING_TERMS_FORMAT, "n_codes": stored.n_codes, "n_values": stored.n_values}


#: The layout of a directory's scoring terms (the manifest's ``derived.scoring_terms``); a directory without
#: them (written before they were stored) builds them on first use.
SCORING_TERMS_FORMAT = 1


def _read_scoring_terms(directory: Path, entry: dict[str, Any], n_main: int) -> StoredTerms:
    path = directory / "derived" / "main_view_terms"
    n_codes, n_values = int(entry["n_codes"]), int(entry["n_values"])
    stored = StoredTerms(tuple(np.asarray(np.load(path / f"utility.{name}.npy", mmap_mode="r"))
                               for name in UTILITY_FIELDS),
                         np.asarray(np.load(path / "attribute_codes.npy", mmap_mode="r")),
                         np.asarray(np.load(path / "attribute_values.npy", mmap_mode="r")), n_codes, n_values)
    if (any(column.shape != (n_main,) for column in stored.utility) or stored.codes.shape != (n_codes * n_main,)
            or stored.values.shape != (n_values * n_main,)):
        raise ValueError(f"the main-type views' scoring terms do not match their {n_main} rows")
    return stored


def _write_table(path: Path, columns: dict[str, pa.Array]) -> None:
    table = pa.table(columns)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=table.num_rows or 1)


def _write_variants(columns: VariantColumns, out: Path) -> None:
    np.save(out / "variant_attribute.npy", columns.attribute)
    for i, codes in enumerate(columns.codes):
        np.save(out / f"variant_codes.{i}.npy", codes)


def _read_variants(directory: Path, n: int) -> VariantColumns:
    attribute = np.load(directory / "variant_attribute.npy", mmap_mode="r")
    codes = tuple(np.asarray(np.load(directory / f"variant_codes.{i}.npy", mmap_mode="r"))
                  for i in range(VARIANTS_PER_PRODUCT))
    if attribute.shape != (n,) or any(c.shape != (n,) for c in codes):
        raise ValueError(f"variant columns of {attribute.shape} rows, expected {n}")
    return VariantColumns(np.asarray(attribute), codes)


def _read_stacked_views(directory: Path, catalog: Catalog, kind: str, entry: dict[str, Any]) -> StoredViews:
    """One kind of stored views: their columns back to back as one catalog, with the parent's categories and
    brands, where each category's view starts, and their title word indexes when stored."""
    bounds = [int(b) for b in entry["view_bounds"][kind]]
    path = directory / "derived" / kind
    n = bounds[-1]
    columns = {p.stem: np.asarray(np.load(p, mmap_mode="r")) for p in sorted(path.glob("*.npy"))
               if not p.stem.startswith(("variant_", "title_word"))}
    with pa.memory_map(str(path / "text.arrow")) as source:
        text = pa.ipc.open_file(source).read_all()
    titles = text.column("titles")
    stacked = Catalog(
        name=f"{catalog.name}#{kind}", ids=columns["ids"], titles=titles.chunk(0) if titles.num_chunks == 1
        else titles.combine_chunks(), category=columns["category"], categories=catalog.categories,
        brand=columns["brand"], brands=catalog.brands, price_cents=columns["price_cents"],
        rating_x10=columns["rating_x10"], rating_count=columns["rating_count"], ship_days=columns["ship_days"],
        stock=columns["stock"],
        categorical={k.split(".", 1)[1]: v for k, v in columns.items() if k.startswith("categorical.")},
        numeric={k.split(".", 1)[1]: v for k, v in columns.items() if k.startswith("numeric.")})
    rows = columns["rows"]
    if rows.shape != (n,) or len(stacked) != n:
        raise ValueError(f"{kind} holds {len(stacked)} rows, expected {n}")
    stacked.derived.provide("variant_columns", _read_variants(path, n))
    title_words = None
    if kind in entry.get("title_word_starts", {}):
        with pa.memory_map(str(path / "title_words.arrow")) as source:
            words = pa.ipc.open_file(source).read_all().column("word")
        starts = [int(s) for s in entry["title_word_starts"][kind]]
        title_words = StoredTitleWords(words.chunk(0) if words.num_chunks == 1 else words.combine_chunks(), starts,
                                       np.asarray(np.load(path / "title_word_bounds.npy", mmap_mode="r")),
                                       np.asarray(np.load(path / "title_word_rows.npy", mmap_mode="r")))
        if len(starts) != len(bounds) or len(title_words.words) != starts[-1] or \
                len(title_words.bounds) != starts[-1] + len(bounds) - 1:
            raise ValueError(f"{kind}'s title word index does not match its views")
    return StoredViews(CategoryView(rows, stacked), bounds, title_words)


def _install_derived(catalog: Catalog, directory: Path, entry: Any) -> None:
    """Installs a directory's ``derived/`` data into ``catalog`` (memory-mapped); a directory written with
    another format, or none, is left to work it out on first use."""
    if not isinstance(entry, dict) or entry.get("format") != DERIVED_FORMAT:
        return
    n, count = len(catalog), len(catalog.categories)
    try:
        order = np.load(directory / "derived" / "category_order.npy", mmap_mode="r")
        type_code = np.load(directory / "derived" / "type_code.npy", mmap_mode="r")
        unique = np.load(directory / "derived" / "spoken_unique.npy", mmap_mode="r")
        with pa.memory_map(str(directory / "derived" / "spoken.arrow")) as source:
            spoken = pa.ipc.open_file(source).read_all()
        bounds = [int(b) for b in entry["category_bounds"]]
        type_names = tuple(tuple(str(t) for t in names) for names in entry["type_names"])
        main_types = tuple(str(t) for t in entry["main_types"])
        variants = _read_variants(directory / "derived", n)
        main_mask = np.asarray(np.load(directory / "derived" / "main_type_mask.npy", mmap_mode="r"))
        sorted_ids = np.asarray(np.load(directory / "derived" / "sorted_ids.npy", mmap_mode="r"))
        bits = {attribute: np.asarray(np.load(directory / "derived" / f"value_bits.{attribute}.npy", mmap_mode="r"))
                for attribute in catalog.categorical}
        views = {main: _read_stacked_views(directory, catalog, kind, entry)
                 for main, kind in ((False, "views"), (True, "main_views"))}
        terms = entry.get("scoring_terms")
        field_bits: np.ndarray | None = None  # none stored (a directory written before they were): built on first use
        type_codes: np.ndarray | None = None
        if isinstance(terms, dict) and terms.get("format") == SCORING_TERMS_FORMAT:
            views[True] = dataclasses.replace(views[True], terms=_read_scoring_terms(directory, terms,
                                                                                      views[True].bounds[-1]))
            field_bits = np.asarray(np.load(directory / "derived" / "field_bits.npy", mmap_mode="r"))
            type_codes = np.asarray(np.load(directory / "derived" / "category_type_codes.npy", mmap_mode="r"))
            if field_bits.shape != (n,) or type_codes.shape != (n,):
                raise ValueError(f"field bits or category type codes of other than {n} products")
        id_tokens = (re.compile(str(entry["id_pattern"])), frozenset(int(k) for k in entry["id_lengths"]))
        arrays = _read_arrays(directory / "derived", entry.get("arrays", ()), n)
    except (OSError, ValueError, pa.ArrowException, KeyError, TypeError, re.error) as exc:
        raise CatalogDirectoryError(f"{directory}: derived/ unreadable ({exc})") from None
    if (order.shape != (n,) or type_code.shape != (n,) or unique.shape != (n,) or spoken.num_rows != n
            or len(bounds) != count + 1 or bounds[-1] != n or len(type_names) != count or len(main_types) != count
            or any(len(v.bounds) != count + 1 for v in views.values()) or main_mask.shape != (n,)
            or sorted_ids.shape != (n,) or sorted_ids.dtype != catalog.ids.dtype
            or any(b.shape != (n,) for b in bits.values())):
        raise CatalogDirectoryError(f"{directory}: derived/ does not match the catalog's {n} products and "
                                    f"{count} categories; rebuild the directory")

    def column(name: str) -> pa.Array:
        found = spoken.column(name)
        return found.chunk(0) if found.num_chunks == 1 else found.combine_chunks()

    order, type_code = np.asarray(order), np.asarray(type_code)  # views of the mapped file, not copies
    catalog.derived.provide("category_rows", tuple(order[bounds[i]: bounds[i + 1]] for i in range(count)))
    catalog.derived.provide(STORED_NAMES.name, StoredNames(type_names, main_types, type_code,
                                                           column("text"), column("model"), np.asarray(unique)))
    catalog.derived.provide(VARIANT_COLUMNS.name, variants)
    catalog.derived.provide("main_type_mask", main_mask)
    catalog.derived.provide("sorted_ids", sorted_ids)
    for attribute, found in bits.items():
        catalog.derived.provide("value_bits", found, attribute)
    catalog.derived.provide(STORED_VIEWS.name, views)
    catalog.derived.provide("id_tokens", id_tokens)
    for name, array in arrays.items():
        catalog.derived.provide(name, array)
    if field_bits is not None and type_codes is not None:
        catalog.derived.provide(FIELD_FACTS.name, field_facts_of_bits(catalog, field_bits))
        for category in range(count):
            catalog.derived.provide(CATEGORY_TYPES.name, CategoryTypes(
                order[bounds[category]:bounds[category + 1]], main_types[category], type_names[category],
                type_codes[bounds[category]:bounds[category + 1]], type_code), category)


def embed_catalog(catalog: Catalog, out: Path, embedder_name: str, *, progress: ProgressFactory = _no_progress,
                  embed_chunk: Callable[[list[str]], np.ndarray] | None = None, chunk: int = EMBED_CHUNK) -> np.ndarray:
    """Vectors of every product into ``out/vectors.f16.npy``, resuming where an earlier run stopped.

    ``embed_chunk`` embeds one chunk of document texts (default: the named embedder in this
    process; ``catalog build --ray`` passes a Ray Data pipeline).
    """
    from ecomrlve.catalog.embedders import get_embedder

    n = len(catalog)
    path, state_path = out / "vectors.f16.npy", out / "embed.progress.json"
    embedder = get_embedder(embedder_name)
    embed_chunk = embed_chunk or embedder.embed
    state = json.loads(state_path.read_text()) if state_path.exists() and path.exists() else None
    expected = {"embedder": embedder_name, "dim": embedder.dim, "n": n, "catalog": catalog_digest(catalog)}
    if state is not None and {k: state.get(k) for k in expected} == expected:
        vectors = np.load(path, mmap_mode="r+")
        done = int(state["done"])
    else:
        vectors = np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=(n, embedder.dim))
        done = 0
    advance = progress("embed", n)
    advance(done)
    for start in range(done, n, chunk):
        stop = min(n, start + chunk)
        block = np.asarray(embed_chunk(document_texts(catalog, start, stop)), dtype=np.float32)
        if block.shape != (stop - start, embedder.dim):
            raise CatalogDirectoryError(f"embedder returned {block.shape} for rows {start}..{stop}")
        vectors[start:stop] = block.astype(np.float16)
        vectors.flush()
        state_path.write_text(json.dumps({**expected, "done": stop}))
        advance(stop - start)
    return vectors


def build_catalog_dir(catalog: Catalog, out: Path, *, embedder_name: str | None, progress: ProgressFactory = _no_progress,
                      embed_chunk: Callable[[list[str]], np.ndarray] | None = None, threads: int | None = None,
                      extra: dict[str, Any] | None = None, arrays: DerivedArrays | None = None) -> dict[str, Any]:
    """Write ``catalog`` and its indexes to ``out``; returns the manifest.

    ``embedder_name=None`` builds a lexical-only directory. ``threads`` (default: all cores)
    bounds FAISS/numba/BLAS during the build. ``arrays``: derived data the layers above work out, stored
    in ``derived/`` (see :data:`DerivedArrays`).
    """
    from ecomrlve.catalog.dense import build_index, index_factory_string, set_threads

    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)  # a directory without a manifest is incomplete
    stale = ["dense.faiss"] + (["vectors.f16.npy", "embed.progress.json"] if embedder_name is None else [])
    for name in stale:  # vectors and progress of an interrupted run stay, to resume from
        (out / name).unlink(missing_ok=True)
    set_threads(threads or os.cpu_count() or 1)
    timings: dict[str, float] = {}
    with _timed(timings, "columns"):
        write_columns(catalog, out)
    with _timed(timings, "derived"):
        derived_entry = write_derived(catalog, out, progress, arrays)
    with _timed(timings, "lexical"):
        advance = progress("lexical index", 1)
        BM25Retriever(catalog).save(out / "lexical")
        advance(1)
    embedder_info = None
    if embedder_name is not None:
        from ecomrlve.catalog.embedders import get_embedder

        embedder = get_embedder(embedder_name)
        with _timed(timings, "embed"):
            vectors = embed_catalog(catalog, out, embedder_name, progress=progress, embed_chunk=embed_chunk)
        with _timed(timings, "dense_index"):
            import faiss

            index = build_index(vectors, progress=progress("dense index", len(catalog)))
            faiss.write_index(index, str(out / "dense.faiss"))
        (out / "embed.progress.json").unlink(missing_ok=True)
        embedder_info = {"name": embedder_name, "dim": embedder.dim, "fingerprint": embedder_fingerprint(embedder),
                         "index": index_factory_string(len(catalog))}
    with _timed(timings, "checksums"):
        files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != "manifest.json")
        advance = progress("checksums", len(files))
        checksums = {}
        for p in files:
            checksums[str(p.relative_to(out))] = {"bytes": p.stat().st_size, "sha256": _sha256(p)}
            advance(1)
    manifest = {
        "format_version": FORMAT_VERSION, "name": catalog.name, "n_products": len(catalog),
        "counts": {"products": len(catalog), "categories": len(catalog.categories), "brands": len(catalog.brands),
                   "in_stock": int(np.count_nonzero(catalog.stock > 0))},
        "categories": [{"path": list(c.path), "noun": c.noun, "variant_attribute": c.variant_attribute}
                       for c in catalog.categories],
        "brands": list(catalog.brands), "embedder": embedder_info, "build_seconds": timings,
        "files": checksums, "columns": column_dtypes(_column_arrays(catalog)),
        "source_metadata": _jsonable(catalog.metadata), "derived": derived_entry, **(extra or {}),
    }
    return write_manifest(out, manifest)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def verify_checksums(directory: Path) -> list[str]:
    """Files whose size or SHA-256 differs from the manifest (empty: the directory is intact).

    The manifest itself is listed when it carries no checksum (a directory built before
    manifests were sealed cannot be verified); an edited manifest fails in :func:`read_manifest`.
    """
    directory = Path(directory)
    manifest = read_manifest(directory)
    bad = [] if CHECKSUM_KEY in manifest else [MANIFEST]
    for name, expected in manifest["files"].items():
        path = directory / name
        if (not path.is_file() or not isinstance(expected, dict) or path.stat().st_size != expected.get("bytes")
                or _sha256(path) != expected.get("sha256")):
            bad.append(name)
    return bad


def load_catalog_dir(directory: Path, *, embedder: str | None = None) -> Catalog:
    """Open a catalog directory memory-mapped (seconds at 2M products).

    ``embedder``: refuse a directory whose vectors were made by another embedder.
    """
    directory = Path(directory).resolve()
    manifest = read_manifest(directory)
    check_files(directory, manifest)
    check_embedder_name(directory, manifest)
    built_with = (manifest.get("embedder") or {}).get("name")
    if embedder is not None and embedder != built_with:
        raise CatalogDirectoryError(f"{directory}: vectors were built with embedder {built_with!r}, not {embedder!r}")
    columns = load_columns(directory, manifest)
    try:
        with pa.memory_map(str(directory / "text.arrow")) as source:
            text = pa.ipc.open_file(source).read_all()
        check_text_rows(directory, text.num_rows, manifest["n_products"])
        categories = tuple(Category(path=tuple(c["path"]), noun=c["noun"], variant_attribute=c["variant_attribute"])
                           for c in manifest["categories"])
    except (OSError, pa.ArrowException, KeyError, TypeError) as exc:
        raise CatalogDirectoryError(f"{directory}: text.arrow or categories unreadable ({exc})") from None
    def text_column(name: str) -> pa.Array | None:
        if name not in text.column_names:
            return None
        column = text.column(name)
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    # a directory built before placeholder brands ("Unbranded") meant no brand still lists them by name
    brands = tuple(brand_name(name) for name in manifest["brands"])
    catalog = Catalog(
        name=str(directory), ids=columns["ids"], titles=text_column("titles"), category=columns["category"],
        categories=categories, brand=columns["brand"], brands=brands, price_cents=columns["price_cents"],
        rating_x10=columns["rating_x10"], rating_count=columns["rating_count"], ship_days=columns["ship_days"],
        stock=columns["stock"],
        categorical={k.split(".", 1)[1]: v for k, v in columns.items() if k.startswith("categorical.")},
        numeric={k.split(".", 1)[1]: v for k, v in columns.items() if k.startswith("numeric.")},
        metadata={**manifest.get("source_metadata", {}), "directory": str(directory), "embedder": built_with},
        descriptions=text_column("descriptions"), retriever_source=functools.partial(_open_retriever, directory),
    )
    catalog.derived.provide("id_order", columns["id_order"])
    _install_derived(catalog, directory, manifest.get("derived"))
    if isinstance(manifest.get("capabilities"), dict):
        catalog.derived.provide(STORED_CAPABILITIES.name, manifest["capabilities"])
    return catalog


#: The capability report a directory's manifest holds (``catalog build`` stores it; read by
#: :func:`ecomrlve.envs.capabilities.capabilities`, which lives above this layer); None when it has none.
STORED_CAPABILITIES: Derived[dict[str, Any] | None] = derived("stored_capabilities", lambda catalog: None)


def _open_retriever(directory: Path, catalog: Catalog) -> Retriever:
    return load_retriever(directory, catalog)


def load_retriever(directory: Path, catalog: Catalog | None = None, *, threads: int | None = None) -> Retriever:
    """The directory's retriever: hybrid BM25 + dense when it has vectors, else BM25.

    Sets FAISS/numba/BLAS to ``threads`` (default ``$ECOMRLVE_SEARCH_THREADS`` or 1): one query
    at a time is fastest single-threaded on a small machine.
    """
    from ecomrlve.catalog.dense import DenseRetriever, HybridRetriever, set_threads

    directory = Path(directory)
    manifest = read_manifest(directory)
    check_files(directory, manifest)
    check_embedder_name(directory, manifest)
    set_threads(threads or int(os.environ.get("ECOMRLVE_SEARCH_THREADS", "1")))
    with _index_errors(directory, "lexical index"):
        lexical = BM25Retriever.load(directory / "lexical")
        if lexical._n != manifest["n_products"]:
            raise ValueError(f"{lexical._n} documents for {manifest['n_products']} products")
    info = manifest.get("embedder")
    if info is None:
        return lexical
    from ecomrlve.catalog.embedders import get_embedder

    with _index_errors(directory, f"embedder {info['name']!r}"):
        embedder = get_embedder(info["name"])
        fingerprint = embedder_fingerprint(embedder)
    if embedder.dim != info["dim"] or fingerprint != info["fingerprint"]:
        raise CatalogDirectoryError(f"{directory}: vectors were built with a different {info['name']!r} model "
                                    f"(dim {info['dim']}, fingerprint {info['fingerprint']}); rebuild the directory")
    with _index_errors(directory, "dense index"):
        dense = DenseRetriever.load(embedder, directory)
        if dense.index.ntotal != manifest["n_products"] or dense.vectors.shape != (manifest["n_products"], info["dim"]):
            raise ValueError(f"{dense.index.ntotal} vectors indexed, vectors file {dense.vectors.shape}")
    return HybridRetriever(lexical, dense)


@contextmanager
def _index_errors(directory: Path, what: str) -> Iterator[None]:
    """Index files are parsed by third-party readers (bm25s, FAISS, model loaders) that raise
    anything from ValueError to RuntimeError: report any of them as one line about the directory."""
    try:
        yield
    except CatalogDirectoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - see the docstring
        detail = " ".join(str(exc).split())[:200]
        raise CatalogDirectoryError(f"{directory}: {what} unreadable ({type(exc).__name__}: {detail})") from None


def build_from_source(source: str, out: Path, *, embedder_name: str | None, progress: ProgressFactory = _no_progress,
                      ray_workers: int | None = None, limit: int | None = None, threads: int | None = None,
                      schema: str = "auto", describe: Callable[[Catalog], dict[str, Any]] | None = None,
                      arrays: DerivedArrays | None = None) -> dict[str, Any]:
    """``ecomrlve catalog build``: ``synthetic:N[:SEED]`` or a real source (see ``loaders``) -> a directory.

    ``ray_workers`` embeds on Ray Data with that many workers (``catalog build --ray``);
    ``schema`` is the loader's (auto, amazon, products); ``describe`` adds manifest fields computed
    from the loaded catalog (the CLI stores the capability report, which lives above this layer); ``arrays``
    works out derived data of those layers for ``derived/`` (:data:`DerivedArrays`).
    """
    from ecomrlve.catalog.loaders import load_products
    from ecomrlve.catalog.synthetic import DEFAULT_SEED, generate_synthetic_catalog

    timings: dict[str, float] = {}
    with _timed(timings, "load"):
        kind, _, rest = source.partition(":")
        if kind == "synthetic":
            size, _, seed = rest.partition(":")
            advance = progress("generate", 1)
            catalog = generate_synthetic_catalog(int(size), int(seed or DEFAULT_SEED))
            advance(1)
        else:
            catalog, _ = load_products(source, schema=schema, limit=limit, progress=progress("load rows", limit or 0))
    with _timed(timings, "describe"):
        described = describe(catalog) if describe else {}
    embed_chunk = None
    if ray_workers and embedder_name is not None:
        from ecomrlve.catalog.distributed import ray_embed_chunk

        embed_chunk = ray_embed_chunk(embedder_name, workers=ray_workers)
    manifest = build_catalog_dir(catalog, out, embedder_name=embedder_name, progress=progress,
                                 embed_chunk=embed_chunk, threads=threads, arrays=arrays,
                                 extra={"source": source, "built_with_ray": bool(embed_chunk),
                                        **described})
    manifest["build_seconds"] = {**timings, **manifest["build_seconds"]}
    return write_manifest(out, manifest)
