"""Catalog directories: build -> load round trip, embedder checks, resumable embedding, CLI, Ray, environments."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.dense import DenseRetriever, HybridRetriever, build_index
from ecomrlve.catalog.embedders import DEFAULT_EMBEDDER, get_embedder
from ecomrlve.catalog.filters import ProductFilter
from ecomrlve.catalog.loaders import load_products
from ecomrlve.catalog.schema import NO_BRAND
from ecomrlve.catalog.search import BM25Retriever, SearchEngine, document_texts
from ecomrlve.catalog.store import (
    CatalogDirectoryError,
    build_catalog_dir,
    embed_catalog,
    load_catalog_dir,
    load_retriever,
    verify_checksums,
)
from ecomrlve.catalog.validate import write_manifest
from ecomrlve.cli import app
from ecomrlve.episode import EcomEnv

FIXTURE = Path(__file__).parent / "data" / "amazon_meta_sample.jsonl"
QUERIES = ["usb c charger", "Qorvane headphones", "cast iron frying pan", "queen sheet set linen", "yoga mat purple",
           "moisturiser cream", "runing shoes size 9", ""]


@pytest.fixture(scope="module")
def fixture_catalog():
    return load_products(FIXTURE)[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory, fixture_catalog) -> Path:
    out = tmp_path_factory.mktemp("catalogs") / "fixture"
    build_catalog_dir(fixture_catalog, out, embedder_name=DEFAULT_EMBEDDER, threads=1)
    return out


def test_round_trip_columns(built, fixture_catalog):
    loaded = load_catalog(str(built))
    assert loaded.name == str(built.resolve()) and len(loaded) == len(fixture_catalog)
    for column in ("ids", "category", "brand", "price_cents", "rating_x10", "rating_count", "ship_days", "stock"):
        assert np.array_equal(getattr(loaded, column), getattr(fixture_catalog, column)), column
    for attr in fixture_catalog.categorical:
        assert np.array_equal(loaded.categorical[attr], fixture_catalog.categorical[attr])
    for attr in fixture_catalog.numeric:
        assert np.array_equal(loaded.numeric[attr], fixture_catalog.numeric[attr], equal_nan=True)
    assert loaded.titles.to_pylist() == fixture_catalog.titles.to_pylist()
    assert loaded.descriptions.to_pylist() == fixture_catalog.descriptions.to_pylist()
    assert loaded.categories == fixture_catalog.categories and loaded.brands == fixture_catalog.brands
    assert all(loaded.index_of(fixture_catalog.product_id(r)) == r for r in range(len(loaded)))
    assert verify_checksums(built) == []


def test_round_trip_search_results(built, fixture_catalog):
    """The loaded directory answers exactly like indexes built in memory from the same catalog."""
    embedder = get_embedder(DEFAULT_EMBEDDER)
    vectors = embedder.embed(document_texts(fixture_catalog)).astype(np.float16)
    in_memory = SearchEngine(fixture_catalog, HybridRetriever(BM25Retriever(fixture_catalog),
                                                              DenseRetriever(embedder, build_index(vectors), vectors)))
    loaded = SearchEngine(load_catalog(str(built)))
    assert isinstance(loaded.retriever, HybridRetriever)
    filters = [None, ProductFilter(category="Chargers"), ProductFilter(price_max=60.0, in_stock=True)]
    for query in QUERIES:
        for flt in filters:
            for sort_by in ("relevance", "price_asc"):
                expected = in_memory.search(query, flt, sort_by, 10).tolist()
                assert loaded.search(query, flt, sort_by, 10).tolist() == expected, (query, flt, sort_by)


def test_a_directory_built_with_placeholder_brands_reads_them_as_no_brand(built, tmp_path, fixture_catalog):
    """Directories built before placeholder brands meant no brand list "Unbranded" (or "Generic") among
    their brands; loading one gives those products no brand, as a fresh build of the same file would."""
    old = tmp_path / "old"
    shutil.copytree(built, old)
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["brands"][:2] = ["Unbranded", "GENERIC"]
    write_manifest(old, manifest)
    loaded = load_catalog_dir(old)
    assert loaded.brands[:2] == (NO_BRAND, NO_BRAND) and loaded.brands[2:] == fixture_catalog.brands[2:]


def test_refuses_a_mismatched_embedder(built, tmp_path):
    with pytest.raises(CatalogDirectoryError, match="built with embedder 'static:minilm-m2v', not 'st:other'"):
        load_catalog_dir(built, embedder="st:other")
    tampered = tmp_path / "tampered"
    shutil.copytree(built, tampered)
    manifest = json.loads((tampered / "manifest.json").read_text())
    manifest["embedder"]["fingerprint"] = "0000000000000000"
    write_manifest(tampered, manifest)  # as if built by another version of the model
    with pytest.raises(CatalogDirectoryError, match="different 'static:minilm-m2v' model"):
        load_retriever(tampered)
    (tampered / "vectors.f16.npy").write_bytes(b"x")
    assert "vectors.f16.npy" in verify_checksums(tampered)
    (tampered / "manifest.json").unlink()
    with pytest.raises(CatalogDirectoryError, match="no manifest.json"):
        load_catalog_dir(tampered)


def test_embedding_resumes_after_an_interruption(fixture_catalog, tmp_path):
    embedder = get_embedder(DEFAULT_EMBEDDER)
    calls: list[int] = []

    def flaky(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return embedder.embed(texts)

    with pytest.raises(KeyboardInterrupt):
        embed_catalog(fixture_catalog, tmp_path, DEFAULT_EMBEDDER, embed_chunk=flaky, chunk=20)
    assert json.loads((tmp_path / "embed.progress.json").read_text())["done"] == 40
    vectors = embed_catalog(fixture_catalog, tmp_path, DEFAULT_EMBEDDER, embed_chunk=embedder.embed, chunk=20)
    expected = embedder.embed(document_texts(fixture_catalog)).astype(np.float16)
    assert np.array_equal(np.asarray(vectors), expected)


def test_resume_embeds_only_the_missing_chunks(fixture_catalog, tmp_path):
    embedder = get_embedder(DEFAULT_EMBEDDER)
    seen: list[int] = []

    def stop_after_two(texts: list[str]) -> np.ndarray:
        seen.append(len(texts))
        if len(seen) > 2:
            raise RuntimeError("interrupted")
        return embedder.embed(texts)

    with pytest.raises(RuntimeError):
        embed_catalog(fixture_catalog, tmp_path, DEFAULT_EMBEDDER, embed_chunk=stop_after_two, chunk=30)
    resumed: list[int] = []

    def counting(texts: list[str]) -> np.ndarray:
        resumed.append(len(texts))
        return embedder.embed(texts)

    embed_catalog(fixture_catalog, tmp_path, DEFAULT_EMBEDDER, embed_chunk=counting, chunk=30)
    assert resumed == [len(fixture_catalog) - 60]


def test_resume_is_refused_for_other_products(fixture_catalog, tmp_path):
    """Same size, same embedder, different products (rows reordered): embedding starts over."""
    embedder = get_embedder(DEFAULT_EMBEDDER)

    def first_chunk_only(texts: list[str]) -> np.ndarray:
        first_chunk_only.calls += 1
        if first_chunk_only.calls > 1:
            raise RuntimeError("interrupted")
        return embedder.embed(texts)
    first_chunk_only.calls = 0

    with pytest.raises(RuntimeError):
        embed_catalog(fixture_catalog, tmp_path, DEFAULT_EMBEDDER, embed_chunk=first_chunk_only, chunk=30)
    lines = FIXTURE.read_text().splitlines()
    reordered_file = tmp_path / "reordered.jsonl"
    reordered_file.write_text("\n".join(reversed(lines)) + "\n")
    reordered = load_products(reordered_file)[0]
    assert len(reordered) == len(fixture_catalog)
    sizes: list[int] = []

    def counting(texts: list[str]) -> np.ndarray:
        sizes.append(len(texts))
        return embedder.embed(texts)

    vectors = embed_catalog(reordered, tmp_path, DEFAULT_EMBEDDER, embed_chunk=counting, chunk=30)
    assert sum(sizes) == len(reordered)
    assert np.array_equal(np.asarray(vectors), embedder.embed(document_texts(reordered)).astype(np.float16))


ACCOUNT_ENVS = ("RETURN", "STATUS", "POLICY", "JOURNEY")
#: The fixture's departments renamed: aliases of policy departments and departments the policy does not name.
RENAMED_DEPARTMENTS = {"Electronics": "Cell Phones & Accessories", "Home": "Home & Kitchen", "Beauty": "Health & Household",
                       "Kitchen": "Kitchen & Dining", "Sports": "Sports & Outdoors"}


def assert_oracle_solves(catalog, env_id: str, difficulties, seeds) -> None:
    from exploits import oracle_failure, play_oracle

    env = EcomEnv(env_id, catalog=catalog)
    for d in difficulties:
        for seed in seeds:
            failure = oracle_failure(play_oracle(env, difficulty=d, seed=seed, env_id=env_id))
            assert failure is None, (env_id, d, seed, failure)


@pytest.mark.parametrize("env_id,difficulties", [(e, (0, 3, 6, 9, 12, 15)) for e in ("CART", "PD", "SUB", "BUNDLE")]
                         + [(e, range(16)) for e in ACCOUNT_ENVS])
def test_oracles_run_on_the_real_schema_catalog(built, env_id, difficulties):
    """Environments run unchanged on a catalog directory built from real-schema data."""
    assert_oracle_solves(load_catalog(str(built)), env_id, difficulties, range(3))


@pytest.fixture(scope="module")
def renamed_catalog(tmp_path_factory):
    """The fixture with other department names (see RENAMED_DEPARTMENTS; rows with only a main category go to an
    unknown "Automotive") and titles that do not start with the brand."""
    rows = []
    for line in FIXTURE.read_text().splitlines():
        row = json.loads(line)
        if isinstance(row, dict) and row.get("categories"):
            row["categories"] = [RENAMED_DEPARTMENTS.get(row["categories"][0], row["categories"][0]), *row["categories"][1:]]
        elif isinstance(row, dict) and row.get("main_category"):
            row["main_category"] = "Automotive"
        if isinstance(row, dict) and isinstance(row.get("title"), str) and row["title"].strip():
            row["title"] = "Official " + row["title"]
        rows.append(json.dumps(row))
    path = tmp_path_factory.mktemp("renamed") / "renamed.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return load_catalog(str(path))


def test_policy_customers_name_the_category_when_the_noun_is_ambiguous(renamed_catalog):
    """A noun that means categories under different policy rules is stated with its category and department."""
    from ecomrlve.envs.account.policy import category_fact

    automotive = next(i for i, c in enumerate(renamed_catalog.categories) if c.path == ("Automotive",))
    fact, exact = category_fact(renamed_catalog, int(renamed_catalog.category_rows[automotive][0]))
    assert "Automotive" in fact and exact == ["Automotive", "Automotive"]
    chargers = next(i for i, c in enumerate(renamed_catalog.categories) if c.name == "Chargers")
    assert category_fact(renamed_catalog, int(renamed_catalog.category_rows[chargers][0])) == ("It's about a charger.",
                                                                                               ["a charger"])


@pytest.mark.parametrize("env_id", ["RETURN", "STATUS", "POLICY"])
def test_account_oracles_on_departments_the_policy_does_not_name(renamed_catalog, env_id):
    """Aliased and unknown departments follow the policy's alias and fallback rows, titles need not start with
    the brand; the episodes stay solvable."""
    from ecomrlve.tools.policy import policy_index
    from ecomrlve.world.policy import STORE_POLICY, rule_department

    other = STORE_POLICY.fallback_department
    fallback_leaves = sorted({c.name for c in renamed_catalog.categories if rule_department(c.path[0]) == other})
    assert fallback_leaves and {"Electronics", "Home", "Sports"} <= {rule_department(c.path[0])
                                                                     for c in renamed_catalog.categories}
    assert f"{other}: {', '.join(fallback_leaves)}." in policy_index(renamed_catalog).sections[0].text
    assert_oracle_solves(renamed_catalog, env_id, range(16), range(2))


@pytest.mark.parametrize("env_id", ["CART", "PD", "SUB", "BUNDLE", "JOURNEY"])
def test_oracles_when_titles_do_not_start_with_the_brand(renamed_catalog, env_id):
    """Real titles often lead with something else ("Official Brightix ..."); shoppers still name items
    by brand and model words, and every environment stays solvable."""
    assert_oracle_solves(renamed_catalog, env_id, range(0, 16, 3), range(3))


def test_cli_build_info_and_run(tmp_path):
    runner = CliRunner()
    out = tmp_path / "synthetic"
    result = runner.invoke(app, ["catalog", "build", "--source", "synthetic:600:3", "--out", str(out), "--threads", "1"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["products"] == 600 and manifest["embedder"]["dim"] == 128
    assert set(manifest["build_seconds"]) >= {"load", "columns", "lexical", "embed", "dense_index"}
    result = runner.invoke(app, ["catalog", "info", str(out), "--verify"])
    assert result.exit_code == 0 and "files match their checksums" in result.output, result.output
    runs = tmp_path / "runs.jsonl"
    result = runner.invoke(app, ["run", "--env", "CART", "--agent", "oracle", "--episodes", "3", "--difficulty", "0-2",
                                 "--catalog", str(out), "--out", str(runs)])
    assert result.exit_code == 0, result.output
    assert json.loads(runs.read_text().splitlines()[0])["catalog"] == str(out.resolve())
    result = runner.invoke(app, ["replay", str(runs)])
    assert result.exit_code == 0 and "reproduced exactly" in result.output, result.output
    lexical_only = tmp_path / "lexical"
    result = runner.invoke(app, ["catalog", "build", "--source", str(FIXTURE), "--out", str(lexical_only), "--embedder", "none"])
    assert result.exit_code == 0, result.output
    assert isinstance(SearchEngine(load_catalog(str(lexical_only))).retriever, BM25Retriever)
    result = runner.invoke(app, ["catalog", "build", "--source", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and result.stderr == f"error: {tmp_path / 'nope.jsonl'}: no such file\n"


@pytest.mark.slow
def test_ray_build_matches_the_local_build(fixture_catalog, tmp_path):
    ray = pytest.importorskip("ray")
    from ecomrlve.catalog.distributed import ray_embed_chunk

    try:
        vectors = embed_catalog(fixture_catalog, tmp_path, DEFAULT_EMBEDDER,
                                embed_chunk=ray_embed_chunk(DEFAULT_EMBEDDER, workers=1, batch_size=16), chunk=50)
    finally:
        ray.shutdown()  # the one-CPU Ray it started must not outlive the test (a later test may start its own)
    expected = get_embedder(DEFAULT_EMBEDDER).embed(document_texts(fixture_catalog)).astype(np.float16)
    assert np.array_equal(np.asarray(vectors), expected)
