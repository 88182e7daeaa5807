"""Catalog-derived data: declared in one place, kept only in the catalog's store, built once even from threads."""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ecomrlve.catalog.derived as derived_data
from ecomrlve.catalog.derived import DECLARED, DerivedStore, derived
from ecomrlve.catalog.product_type import main_type_mask, spoken_names
from ecomrlve.catalog.rowindex import title_word_index
from ecomrlve.catalog.synthetic import generate_synthetic_catalog
from ecomrlve.catalog.views import category_view
from ecomrlve.envs.capabilities import capabilities
from ecomrlve.envs.recommend.requirements import field_facts

SRC = Path(__file__).resolve().parents[1] / "src" / "ecomrlve"


def _sources() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(SRC.rglob("*.py"))]


def _names_a_catalog(node: ast.AST) -> bool:
    return "catalog" in ast.unparse(node).lower()


def test_no_module_keeps_data_on_a_catalog() -> None:
    """No ``catalog.__dict__``, ``vars(catalog)``, ``setattr(catalog, ...)`` or ``catalog.x = ...`` anywhere in
    the package: derived data goes through ``catalog.derived`` (declared in ``ecomrlve.catalog.derived``)."""
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            where = f"{path.relative_to(SRC)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute) and node.attr == "__dict__" and _names_a_catalog(node.value):
                found.append(f"{where} {ast.unparse(node)}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("vars", "setattr")
                  and node.args and _names_a_catalog(node.args[0])):
                found.append(f"{where} {ast.unparse(node)}")
            elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found += [f"{where} {ast.unparse(t)}" for t in targets
                          if isinstance(t, ast.Attribute) and _names_a_catalog(t.value) and t.attr != "flags"]
    assert not found, "data kept on a catalog outside its derived store:\n" + "\n".join(found)


def test_every_declared_kind_has_one_handle_and_every_handle_is_declared() -> None:
    made: dict[str, list[str]] = {}
    for path, tree in _sources():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "derived"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                made.setdefault(node.args[0].value, []).append(str(path.relative_to(SRC)))
    assert sorted(made) == sorted(DECLARED)
    assert {name: places for name, places in made.items() if len(places) > 1} == {}
    with pytest.raises(KeyError, match="not declared"):
        derived("undeclared_thing", lambda catalog: None)


def test_a_catalog_refuses_attributes_it_does_not_declare() -> None:
    catalog = generate_synthetic_catalog(500, seed=3)
    assert not hasattr(catalog, "__dict__")
    with pytest.raises(AttributeError):
        catalog._spoken_names = {}  # type: ignore[attr-defined]
    with pytest.raises(KeyError, match="not declared"):
        catalog.derived.provide("_spoken_names", {})


def test_a_value_is_built_once_however_many_threads_ask_at_once() -> None:
    store, calls = DerivedStore(), []
    start = threading.Barrier(32)

    def build() -> object:
        calls.append(1)
        time.sleep(0.02)  # wide open for a second builder, were there no lock
        return object()

    got: list[object] = []

    def ask() -> None:
        start.wait()
        got.append(store.get("category_rows", None, build))

    threads = [threading.Thread(target=ask) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(calls) == 1 and store.builds["category_rows"] == 1
    assert len(got) == 32 and all(value is got[0] for value in got)


def _everything(catalog) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Fresh derived data of every layer, as episodes read it."""
    return {
        "spoken": [spoken_names(catalog, c) for c in range(len(catalog.categories))],
        "views": [category_view(catalog, c, main_type_only=True) for c in range(len(catalog.categories))],
        "titles": title_word_index(catalog),
        "main": main_type_mask(catalog),
        "facts": field_facts(catalog),
        "capabilities": capabilities(catalog),
    }


def test_threads_reading_fresh_derived_data_all_get_one_build() -> None:
    """Sessions and the LLM shopper's worker threads read derived data at once: every thread gets the same
    objects, each built once, equal to what one thread alone builds."""
    catalog = generate_synthetic_catalog(4000, seed=11)
    start = threading.Barrier(12)
    results: list[dict[str, object]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            start.wait()
            results.append(_everything(catalog))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors and len(results) == 12
    first = results[0]
    for result in results[1:]:
        for name, value in first.items():
            other = result[name]
            if isinstance(value, list):
                assert all(a is b for a, b in zip(value, other, strict=True)), name  # type: ignore[call-overload]
            else:
                assert other is value, name
    categories = len(catalog.categories)
    builds = catalog.derived.builds
    assert builds["spoken_names"] == categories and builds["category_types"] == categories
    assert builds["category_views"] == categories
    assert all(builds[name] == 1 for name in ("title_words", "main_type_mask", "field_facts", "capabilities",
                                              "variant_columns", "category_rows"))
    alone = _everything(generate_synthetic_catalog(4000, seed=11))
    assert alone["spoken"] == first["spoken"]
    assert np.array_equal(alone["main"], first["main"])  # type: ignore[arg-type]
    assert alone["titles"].keys() == first["titles"].keys()  # type: ignore[attr-defined]


def test_a_directory_holds_the_names_episodes_would_work_out(tmp_path) -> None:
    """``catalog build`` stores every product's type and spoken name (memory-mapped on open): what a directory
    serves is exactly what the in-memory catalog works out on first use, and opening it works out none."""
    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.product_type import STORED_NAMES, category_types, product_type, spoken_name
    from ecomrlve.catalog.store import build_catalog_dir

    memory = generate_synthetic_catalog(1500, seed=4)
    build_catalog_dir(memory, tmp_path / "dir", embedder_name=None)
    opened = load_catalog(str(tmp_path / "dir"))
    stored = STORED_NAMES.of(opened)
    assert stored is not None and isinstance(stored.type_code, np.ndarray) and not stored.type_code.flags.writeable
    for row in range(len(memory)):
        assert spoken_name(opened, row) == spoken_name(memory, row)
        assert product_type(opened, row) == product_type(memory, row)
    for category in range(len(memory.categories)):
        ours, theirs = category_types(opened, category), category_types(memory, category)
        assert (ours.main, ours.names) == (theirs.main, theirs.names)
        assert np.array_equal(ours.rows, theirs.rows) and np.array_equal(ours.codes, theirs.codes)
    assert opened.derived.builds["spoken_names"] == 0 and opened.derived.builds["category_rows"] == 0
    assert capabilities(opened) == capabilities(memory)


def test_building_bm25_of_a_large_catalog_in_memory_is_said_on_stderr(capsys, monkeypatch) -> None:
    from ecomrlve.catalog import search

    monkeypatch.setattr(search, "ANNOUNCED_BUILD", 1000)
    search.default_retriever(generate_synthetic_catalog(1500, seed=4))
    err = capsys.readouterr().err
    assert "building the BM25 index of 1,500 products in memory" in err and "ecomrlve catalog build" in err
    search.default_retriever(generate_synthetic_catalog(500, seed=4))
    assert capsys.readouterr().err == ""


def _oracle_records(catalog, episodes: int) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    import json

    from ecomrlve.episode import EcomEnv

    env, records = EcomEnv("C8", catalog=catalog), []
    for number in range(episodes):
        observation = env.reset(env_id=env.env_ids[number % len(env.env_ids)], difficulty=(number * 5) % 16,
                                seed=number)
        oracle = env.oracle()
        while not observation.done:
            observation = env.step(oracle.act(observation))
        record = json.loads(env.record.to_json())
        record.pop("catalog")
        records.append(record)
    return records


@pytest.mark.slow
def test_episodes_on_a_directory_are_those_on_the_catalog_it_was_built_from(tmp_path) -> None:
    """The directory's stored views, variants, names and id tokens are what its catalog works out on first use
    (the same columns with no stored data): oracle episodes of every environment are the same record for record."""
    import dataclasses

    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.store import build_catalog_dir
    from ecomrlve.catalog.variants import variant_columns

    build_catalog_dir(generate_synthetic_catalog(3000, seed=0), tmp_path / "dir", embedder_name=None)
    opened = load_catalog(str(tmp_path / "dir"))
    memory = dataclasses.replace(opened)  # a fresh derived store: nothing stored, all worked out
    for category in range(len(memory.categories)):
        for main_type_only in (False, True):
            ours = category_view(opened, category, main_type_only=main_type_only)
            theirs = category_view(memory, category, main_type_only=main_type_only)
            assert np.array_equal(ours.rows, theirs.rows) and ours.catalog.titles.equals(theirs.catalog.titles)
            for name in ("ids", "brand", "price_cents", "stock", "rating_count"):
                assert np.array_equal(getattr(ours.catalog, name), getattr(theirs.catalog, name))
            assert np.array_equal(variant_columns(ours.catalog).codes, variant_columns(theirs.catalog).codes)
    assert opened._id_tokens == memory._id_tokens
    assert _oracle_records(opened, 48) == _oracle_records(dataclasses.replace(opened), 48)
    assert memory.derived.builds["category_views"] > 0
    assert all(opened.derived.builds[name] == 0 for name in ("stored_views", "variant_columns", "value_bits",
                                                             "main_type_mask", "id_tokens", "category_rows", "sorted_ids",
                                                             "field_facts", "category_types", "variant_narrowing"))


def test_a_directory_holds_every_products_name_check_and_episodes_index_no_words(tmp_path, monkeypatch) -> None:
    """``catalog build`` (the CLI passes the environments' :func:`stored_arrays`) stores CART's name check of every
    product in ``derived/``: on the directory, CART and JOURNEY episodes read it (no word index, no check worked
    out) and play as on the catalog it was built from, where large categories are checked product by product."""
    import pyarrow.compute as pc

    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.store import build_catalog_dir
    from ecomrlve.envs.capabilities import stored_arrays
    from ecomrlve.envs.cart import family
    from ecomrlve.episode import EcomEnv

    monkeypatch.setattr(derived_data, "CATEGORY_AT_ONCE", 20)  # every category is large: checked product by product
    source = generate_synthetic_catalog(1500, seed=3)
    build_catalog_dir(source, tmp_path / "dir", embedder_name=None, arrays=stored_arrays)
    opened = load_catalog(str(tmp_path / "dir"))
    stored = family.STORED_NAME_CHECKS.of(opened)
    assert stored is not None and not stored.flags.writeable
    assert stored.tolist() == [family._names_itself(source, row) for row in range(len(source))]

    def plays(catalog, env_ids):  # type: ignore[no-untyped-def]
        env = EcomEnv(env_ids, catalog=catalog, secret="name-checks")
        return [env.reset(env_id=env_ids[n % len(env_ids)], difficulty=(3 * n) % 16, seed=n).messages[1]["content"]
                for n in range(24)]

    expected = plays(source, ["CART", "JOURNEY"])
    assert source.derived.builds["cart_names_itself"] == 1
    monkeypatch.setattr(pc, "split_pattern_regex", lambda *a, **k: pytest.fail("a word index on a directory"))
    assert plays(opened, ["CART", "JOURNEY"]) == expected
    assert opened.derived.builds["cart_names_itself"] == 0 and opened.derived.builds["cart_listings"] == 0


def test_a_directory_refuses_a_stored_array_of_another_length(tmp_path) -> None:
    """A ``derived/`` array that is not one value per product (a file from another build) is refused on open."""
    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.store import build_catalog_dir
    from ecomrlve.catalog.validate import CatalogDirectoryError, read_manifest, write_manifest

    source = generate_synthetic_catalog(500, seed=1)
    build_catalog_dir(source, tmp_path / "dir", embedder_name=None,
                      arrays=lambda catalog, progress: {NAME_CHECKS: np.ones(len(catalog), dtype=bool)})
    np.save(tmp_path / "dir" / "derived" / f"{NAME_CHECKS}.npy", np.ones(499, dtype=bool))
    manifest = read_manifest(tmp_path / "dir")
    manifest["files"].pop(f"derived/{NAME_CHECKS}.npy")  # as if the manifest never checked it
    write_manifest(tmp_path / "dir", manifest)
    with pytest.raises(CatalogDirectoryError, match=NAME_CHECKS):
        load_catalog(str(tmp_path / "dir"))
    with pytest.raises(ValueError, match="not declared"):
        build_catalog_dir(source, tmp_path / "other", embedder_name=None,
                          arrays=lambda catalog, progress: {"no_such_kind": np.ones(len(catalog))})


NAME_CHECKS = "cart_whole_category_name_checks"


def test_an_older_directory_s_brand_only_name_checks_are_not_read(tmp_path, monkeypatch) -> None:
    """A directory built before CART's name check read the whole category stores ``cart_name_checks`` (only the
    brand's listings read in a category over 5,000 products): it opens, that array is not read, and the check is
    worked out on first use by the whole-category rule."""
    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.store import build_catalog_dir
    from ecomrlve.catalog.validate import read_manifest, write_manifest
    from ecomrlve.envs.cart import family

    source = load_catalog(str(Path(__file__).parent / "data" / "real" / "accessories.jsonl"))
    build_catalog_dir(source, tmp_path / "dir", embedder_name=None)
    np.save(tmp_path / "dir" / "derived" / "cart_name_checks.npy", np.ones(len(source), dtype=bool))
    manifest = read_manifest(tmp_path / "dir")
    manifest["derived"]["arrays"] = ["cart_name_checks"]  # what an older build listed
    write_manifest(tmp_path / "dir", manifest)
    opened = load_catalog(str(tmp_path / "dir"))
    assert "cart_name_checks" in derived_data.SUPERSEDED and family.STORED_NAME_CHECKS.of(opened) is None
    checks = [family.names_itself(opened, row) for row in range(len(opened))]
    assert checks == family.name_checks(source).tolist() and not all(checks)


def test_a_directory_written_without_derived_data_works_it_out(tmp_path) -> None:
    """A directory whose manifest has no ``derived`` entry (written before it existed) opens as before and works
    its derived data out on first use."""
    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.product_type import STORED_NAMES, spoken_name
    from ecomrlve.catalog.store import build_catalog_dir
    from ecomrlve.catalog.validate import read_manifest, write_manifest

    memory = generate_synthetic_catalog(500, seed=2)
    build_catalog_dir(memory, tmp_path / "dir", embedder_name=None)
    manifest = read_manifest(tmp_path / "dir")
    manifest.pop("derived")
    write_manifest(tmp_path / "dir", manifest)
    opened = load_catalog(str(tmp_path / "dir"))
    assert STORED_NAMES.of(opened) is None
    assert [spoken_name(opened, r) for r in range(len(opened))] == [spoken_name(memory, r) for r in range(len(memory))]
    assert opened.derived.builds["spoken_names"] == len(opened.categories)


def test_a_directory_plays_the_episodes_of_the_catalog_it_was_built_from(tmp_path) -> None:
    """Same episodes from the in-memory catalog and from the directory built of it: the attribute columns come
    back in the order the catalog had (an episode's draws follow it; files sorted by name reordered them and
    BUNDLE drew other requirements)."""
    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.store import build_catalog_dir

    source = generate_synthetic_catalog(3000, seed=0)
    build_catalog_dir(source, tmp_path / "dir", embedder_name=None)
    opened = load_catalog(str(tmp_path / "dir"))
    assert list(opened.categorical) == list(source.categorical) and list(opened.numeric) == list(source.numeric)
    assert _oracle_records(opened, 24) == _oracle_records(source, 24)


def test_a_directory_stores_the_scoring_terms_every_process_would_build(tmp_path) -> None:
    """``catalog build`` stores the main-type views' utility terms and attribute columns, the field facts and each
    category's type codes (memory-mapped on open, so replicas share them): they are what the catalog builds, to the
    bit and the dtype; a view's attribute columns are one C-contiguous block (what the kernel reads), no copy of
    the file; preparing every environment on the directory builds none of them."""
    import dataclasses

    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.product_type import category_types
    from ecomrlve.catalog.scoring_terms import UTILITY_FIELDS, attribute_columns, utility_terms
    from ecomrlve.catalog.store import build_catalog_dir
    from ecomrlve.episode import EcomEnv

    build_catalog_dir(generate_synthetic_catalog(2000, seed=5), tmp_path / "dir", embedder_name=None)
    opened = load_catalog(str(tmp_path / "dir"))
    memory = dataclasses.replace(opened)  # a fresh derived store: nothing stored, all built
    EcomEnv("C8", catalog=opened)
    for category in range(len(opened.categories)):
        ours = category_view(opened, category, main_type_only=True).catalog
        theirs = category_view(memory, category, main_type_only=True).catalog
        for name in UTILITY_FIELDS:
            a, b = getattr(utility_terms(ours), name), getattr(utility_terms(theirs), name)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
        for name in ("codes", "values"):
            a, b = getattr(attribute_columns(ours), name), getattr(attribute_columns(theirs), name)
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
            assert a.flags.c_contiguous and not a.flags.owndata and not a.flags.writeable
        assert ours.derived.builds["utility_terms"] == ours.derived.builds["attribute_columns"] == 0
        a_types, b_types = category_types(opened, category), category_types(memory, category)
        assert (a_types.main, a_types.names) == (b_types.main, b_types.names)
        assert np.array_equal(a_types.rows, b_types.rows) and np.array_equal(a_types.codes, b_types.codes)
        assert not a_types.codes.flags.owndata
    assert field_facts(opened).bits.tobytes() == field_facts(memory).bits.tobytes()
    assert (field_facts(opened).names, field_facts(opened).equalities[0][0]) == \
        (field_facts(memory).names, field_facts(memory).equalities[0][0])
    assert all(opened.derived.builds[name] == 0 for name in ("field_facts", "category_types", "variant_narrowing"))


def test_a_directory_written_before_scoring_terms_were_stored_builds_them(tmp_path) -> None:
    """A directory whose manifest has no ``scoring_terms`` entry opens as before and builds them on first use."""
    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.scoring_terms import utility_terms
    from ecomrlve.catalog.store import build_catalog_dir
    from ecomrlve.catalog.validate import read_manifest, write_manifest

    memory = generate_synthetic_catalog(500, seed=2)
    build_catalog_dir(memory, tmp_path / "dir", embedder_name=None)
    manifest = read_manifest(tmp_path / "dir")
    manifest["derived"].pop("scoring_terms")
    write_manifest(tmp_path / "dir", manifest)
    opened = load_catalog(str(tmp_path / "dir"))
    assert field_facts(opened).bits.tobytes() == field_facts(memory).bits.tobytes()
    assert opened.derived.builds["field_facts"] == 1
    view = category_view(opened, 0, main_type_only=True).catalog
    assert utility_terms(view).price.tobytes() == utility_terms(category_view(memory, 0, main_type_only=True).catalog).price.tobytes()
    assert view.derived.builds["utility_terms"] == 1


def test_a_directory_views_title_word_index_is_made_when_first_read(tmp_path) -> None:
    """A directory's main-type views read their title word index from the directory when an episode first reads it
    (preparing every environment makes none but the one the kernels warm on); it is the index the catalog builds."""
    import dataclasses

    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.store import build_catalog_dir
    from ecomrlve.catalog.views import StoredViewTitleWords
    from ecomrlve.episode import EcomEnv

    build_catalog_dir(generate_synthetic_catalog(2000, seed=5), tmp_path / "dir", embedder_name=None)
    opened = load_catalog(str(tmp_path / "dir"))
    memory = dataclasses.replace(opened)
    EcomEnv("C8", catalog=opened)
    indexes = [title_word_index(category_view(opened, c, main_type_only=True).catalog)
               for c in range(len(opened.categories))]
    assert all(isinstance(index, StoredViewTitleWords) for index in indexes)
    assert sum(index._index is not None for index in indexes) <= 1  # type: ignore[attr-defined]
    for category, index in enumerate(indexes):
        theirs = title_word_index(category_view(memory, category, main_type_only=True).catalog)
        assert len(index) == len(theirs) and list(index) == list(theirs)
        assert all(np.array_equal(index[word], theirs[word]) for word in theirs)
        assert index.get("no-such-word") is None
