"""The public 2M catalog's layout (Amazebay): Parquet, a datasets folder, hf:, a built directory, every env."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.loaders import load_products, parse_price_cents
from ecomrlve.catalog.store import build_from_source
from ecomrlve.envs import env_collections
from ecomrlve.envs.capabilities import capabilities

ROOT = Path(__file__).parent.parent
FIXTURE = ROOT / "tests" / "data" / "amazebay_sample.parquet"
LAYOUT = ["main_category", "title", "average_rating", "rating_number", "features", "description", "price", "images",
          "videos", "store", "categories", "details", "parent_asin", "bought_together", "subtitle", "author"]


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    return pq.read_table(FIXTURE).to_pylist()


def test_fixture_is_the_script_output_in_the_published_layout(tmp_path):
    assert pq.read_schema(FIXTURE).names == LAYOUT
    regenerated = tmp_path / "again.parquet"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_amazebay_fixture.py"), str(regenerated)],
                   check=True, capture_output=True)
    assert pq.read_table(regenerated).equals(pq.read_table(FIXTURE))


def test_rows_map_as_the_layout_means(raw):
    catalog, report = load_products(FIXTURE)
    priced = [r for r in raw if parse_price_cents(r["price"]) is not None]
    assert report.rows_read == len(raw) and report.rows_loaded == len(priced) == len(catalog)
    assert report.skipped == {"no_price": sum(r["price"] == "None" for r in raw)} and report.skipped["no_price"] > 0
    assert report.schema_rows == {"amazon": len(raw)}
    for r in priced:
        row = catalog.index_of(r["parent_asin"])
        details = json.loads(r["details"])
        assert catalog.title(row) == r["title"]
        assert catalog.price_cents[row] == parse_price_cents(r["price"])
        assert catalog.category_of(row).path == tuple(r["categories"] or [r["main_category"]])
        assert catalog.brand_of(row) == details.get("Brand", r["store"])
        assert catalog.rating_count[row] == r["rating_number"]
        assert r["features"][0] in catalog.descriptions[row].as_py()
    assert any(r["price"].startswith("$10.99 -") for r in priced)  # a range loads at its lower end
    mapping = report.as_dict()["fields"]["amazon"]
    assert mapping["mapped"]["id"] == ["parent_asin"] and "images" in mapping["ignored"]


def test_datasets_folder_and_hf_spec_read_the_same_rows(tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    expected = load_products(FIXTURE)[0].ids.tolist()
    dataset = datasets.Dataset.from_parquet(str(FIXTURE))
    dataset.save_to_disk(str(tmp_path / "saved"))
    assert load_products(tmp_path / "saved")[0].ids.tolist() == expected

    calls = []

    def load_dataset(name, config=None, split=None, streaming=False):  # the hub, offline: a "train" split
        calls.append((name, config, split, streaming))
        return datasets.DatasetDict({"train": dataset})

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    assert load_products("hf:owlgebra-ai/Amazebay-catalog-2M")[0].ids.tolist() == expected
    assert calls == [("owlgebra-ai/Amazebay-catalog-2M", None, None, True)]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("amazebay") / "dir"
    build_from_source(str(FIXTURE), out, embedder_name=None, schema="amazon", threads=1,
                      describe=lambda c: {"capabilities": capabilities(c).as_dict()})
    return out


@pytest.mark.parametrize("env_id", env_collections()["C8"])
def test_every_environment_runs_on_the_built_directory(built, env_id):
    from test_catalog_store import assert_oracle_solves

    catalog = load_catalog(str(built))
    assert capabilities(catalog).supports(env_id)
    assert_oracle_solves(catalog, env_id, range(0, 16, 3), range(2))
