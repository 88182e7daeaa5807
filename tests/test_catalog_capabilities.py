"""The capability report: what a catalog supports, refusal at start, and how the CLI shows it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ecomrlve.catalog import default_catalog, load_catalog
from ecomrlve.catalog.loaders import load_products
from ecomrlve.catalog.product_type import is_main_type
from ecomrlve.catalog.schema import NO_VALUE
from ecomrlve.cli import app
from ecomrlve.envs import env_collections
from ecomrlve.envs.capabilities import (
    CatalogCapabilities,
    CatalogUnsupportedError,
    analyse,
    capabilities,
)
from ecomrlve.envs.recommend.bundle import resolve_projects
from ecomrlve.episode import EcomEnv
from ecomrlve.world.policy import is_final_sale
from ecomrlve.world.state import World

FIXTURE = Path(__file__).parent / "data" / "amazon_meta_sample.jsonl"


@pytest.fixture(scope="module")
def widgets(tmp_path_factory) -> Path:
    """A product list of one category that no BUNDLE project needs, with no variant attribute values."""
    rows = [{"id": f"W-{i:03d}", "title": f"Acme Widget {i}", "category": "Gadgets > Widgets", "price": 5 + i,
             "brand": "Acme", "stock": 3} for i in range(12)]
    path = tmp_path_factory.mktemp("widgets") / "widgets.json"
    path.write_text(json.dumps(rows))
    return path


def test_synthetic_catalog_supports_everything():
    report = capabilities(default_catalog())
    assert all(f.supported and not f.reason for f in report.features.values())
    assert all(s.supported and not s.limited for s in report.envs.values())
    assert set(report.envs) == set(env_collections()["C8"])
    assert capabilities(default_catalog()) is report  # computed once per catalog


def test_counts_agree_with_the_rules_the_environments_apply():
    """Each vectorised count equals a product-by-product check with the world's and policy's own rules."""
    catalog, _ = load_products(FIXTURE)
    report = analyse(catalog)
    world = World(catalog, ("CAP", 0, 0), dt.date(2025, 1, 1))
    def from_catalog(row: int) -> bool:  # the product's own value, the others its category's (not synthesised)
        attribute = catalog.category_of(row).variant_attribute
        codes = catalog.categorical.get(attribute)
        if codes is None or int(codes[row]) == NO_VALUE:
            return False
        carried = {catalog.attributes(int(r)).get(attribute) for r in catalog.category_rows[int(catalog.category[row])]}
        return bool(world.variants(row)) and {v.value for v in world.variants(row)} <= carried

    assert report.features["variants"].count == sum(from_catalog(r) for r in range(len(catalog)))
    assert report.features["final_sale"].count == sum(is_final_sale(catalog.category_of(r).name) for r in range(len(catalog)))
    in_stock = [sum(catalog.stock[r] > 0 and is_main_type(catalog, int(r)) for r in rows) for rows in catalog.category_rows]
    assert report.features["stock_outs"].count == sum(n >= 2 for n in in_stock)
    assert report.features["bundles"].count == sum(any(in_stock[c] for c in p) for p in resolve_projects(catalog))
    assert report.counts["in_stock"] == int(np.count_nonzero(catalog.stock > 0))
    assert report.attribute_products["color"] == int(np.count_nonzero(catalog.categorical["color"] >= 0))
    assert CatalogCapabilities.from_dict(json.loads(json.dumps(report.as_dict()))) == report


def test_a_catalog_without_what_an_env_needs_refuses_at_start(widgets):
    report = capabilities(load_catalog(str(widgets)))
    assert not report.has("variants") and not report.has("bundles") and not report.has("final_sale")
    assert not report.supports("BUNDLE") and report.supports("CART") and report.supports("SUB")
    assert "variants" in report.envs["CART"].limited and "final_sale" in report.envs["RETURN"].limited
    with pytest.raises(CatalogUnsupportedError, match="BUNDLE cannot run on this catalog: no BUNDLE project") as error:
        EcomEnv("C8", catalog=str(widgets))
    assert "\n" not in str(error.value)
    EcomEnv("CART", catalog=widgets).reset(env_id="CART", difficulty=0, seed=1)  # a path, like the CLI's --catalog


def test_journey_needs_two_runnable_request_kinds(tmp_path):
    rows = [{"id": f"ONLY-{i}", "title": f"Acme Widget {i}", "category": "Widgets", "price": 5, "stock": 0}
            for i in (1, 2)]
    path = tmp_path / "none_in_stock.json"
    path.write_text(json.dumps(rows))
    report = capabilities(load_catalog(str(path)))
    runnable = [e for e in ("CART", "PD", "SUB", "BUNDLE", "RETURN", "STATUS", "POLICY") if report.supports(e)]
    assert runnable == ["STATUS", "POLICY"]  # nothing in stock: no target, no replacement
    assert report.refusal("CART").startswith("CART cannot run on this catalog: no product is in stock")
    assert report.supports("JOURNEY") and "intent CART" in report.envs["JOURNEY"].limited


@pytest.mark.slow
def test_cli_info_and_run_show_the_report_and_refuse_in_one_line(widgets, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["catalog", "info", str(widgets)])
    assert result.exit_code == 0, result.output
    assert "env BUNDLE" in result.output and "refuses: no BUNDLE project" in flat_output(result.output)
    assert "feature variants" in result.output and "dropped 0 rows" in flat_output(result.output)
    result = runner.invoke(app, ["run", "--env", "BUNDLE", "--agent", "oracle", "--episodes", "1",
                                 "--catalog", str(widgets)])
    assert result.exit_code == 2 and "BUNDLE cannot run on this catalog" in flat_output(result.output)
    assert "Traceback" not in result.output
    result = runner.invoke(app, ["run", "--env", "STATUS,PD", "--agent", "oracle", "--episodes", "2",
                                 "--catalog", str(widgets)])
    assert result.exit_code == 0, result.output
    assert f"catalog {widgets}: 12 of 12 rows loaded" in flat_output(result.output)  # the load summary (stderr)


def flat_output(output: str) -> str:
    """CLI output without the line wrapping and box drawing of Rich's panels."""
    return " ".join(output.replace("│", " ").split())


def test_build_stores_the_report_in_the_manifest(tmp_path):
    out = tmp_path / "dir"
    result = CliRunner().invoke(app, ["catalog", "build", "--source", str(FIXTURE), "--out", str(out),
                                      "--embedder", "none", "--schema", "amazon"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["capabilities"] == capabilities(load_catalog(str(out))).as_dict()
    assert manifest["source_metadata"]["load_report"]["schema"] == "amazon"
    result = CliRunner().invoke(app, ["catalog", "info", str(out)])
    assert result.exit_code == 0 and "feature full_bundles" in result.output and "no_price 2" in flat_output(result.output)


def test_journey_draws_only_request_kinds_the_catalog_supports(tmp_path):
    from test_catalog_store import assert_oracle_solves

    colours = ["Black", "White", "Red", "Blue"]
    kinds = ["Widgets", "Sprockets", "Gizmos", "Cogs", "Levers", "Shampoos"]  # no BUNDLE project needs these
    brands = ["Acme", "Bolt", "Crest"]
    rows = [{"id": f"G-{i:03d}", "title": f"{brands[i % 3]} Model {i} {kinds[i % 6][:-1]}", "price": 5 + i,
             "category": f"Gadgets > {kinds[i % 6]}", "brand": brands[i % 3], "color": colours[(i // 6) % 4],
             "rating": 3.5 + i % 3 / 2, "rating_count": 10 + i, "stock": 10} for i in range(72)]
    path = tmp_path / "gadgets.json"
    path.write_text(json.dumps(rows))
    catalog = load_catalog(str(path))
    assert not capabilities(catalog).supports("BUNDLE") and capabilities(catalog).supports("JOURNEY")
    env = EcomEnv("JOURNEY", catalog=catalog)
    for seed in range(4):
        env.reset(difficulty=15, seed=seed)
        assert "BUNDLE" not in [intent.env_id for intent in env.audit().problem.goal.intents]
    assert_oracle_solves(catalog, "JOURNEY", (0, 8, 15), range(3))
