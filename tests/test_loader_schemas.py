"""Explicit loader schemas: extra fields, auto detection that says why, drop reasons with counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_catalog_capabilities import flat_output
from typer.testing import CliRunner

from ecomrlve.catalog.loaders import AUTO_RULE, CatalogLoadError, detect_schema, format_load_report, load_products
from ecomrlve.cli import app

#: A product list as some exporters write it: its own fields plus an Amazon parent_asin.
LIST_ROWS = [{"id": f"SKU-{i}", "parent_asin": f"B0PARENT{i % 3:02d}", "title": f"Orrinda Kettle {i}",
              "base_price": 19.5 + i, "category": ["Kitchen", "Appliances", "Kettles"], "brand": "Orrinda",
              "color": "White", "warehouse": "north"} for i in range(6)]


@pytest.fixture()
def product_list(tmp_path) -> Path:
    path = tmp_path / "list.jsonl"
    rows = [*LIST_ROWS, {"id": "SKU-X", "title": "no price", "category": "Kitchen"},
            {"id": "SKU-Y", "title": "no category", "price": 3}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("schema", ["auto", "products"])
def test_a_product_list_with_parent_asin_is_read_as_a_product_list(product_list, schema):
    catalog, report = load_products(product_list, schema=schema)
    assert len(catalog) == len(LIST_ROWS) and report.skipped == {"no_price": 1, "no category": 1}
    for raw in LIST_ROWS:
        row = catalog.index_of(raw["id"])
        assert catalog.price(row) == raw["base_price"] and catalog.category_of(row).path == tuple(raw["category"])
        assert catalog.attributes(row)["color"] == "White"
    mapping = report.as_dict()["fields"]["products"]
    assert "base_price" in mapping["mapped"]["price"] and mapping["mapped"]["category"] == ["category"]
    assert {"parent_asin", "warehouse"} <= set(mapping["ignored"])


def test_schema_amazon_reads_every_row_as_amazon_metadata(product_list):
    """Forced to Amazon metadata, the same rows are dropped, each reason counted."""
    with pytest.raises(CatalogLoadError, match="no usable product rows") as error:
        load_products(product_list, schema="amazon")
    assert "'no_price': 6" in str(error.value) and "'missing id': 2" in str(error.value)


def test_auto_decides_per_row_and_says_why():
    assert detect_schema({"id": 1, "category": "A", "parent_asin": "B"}) == "products"
    assert detect_schema({"id": 1, "parent_asin": "B", "categories": ["A"]}) == "amazon"
    assert detect_schema({"id": 1, "title": "t"}) == "products"
    assert detect_schema({"parent_asin": "B"}) == "amazon"
    with pytest.raises(CatalogLoadError, match="unknown schema"):
        load_products("whatever.jsonl", schema="csv")


def test_report_lists_every_drop_reason(product_list):
    _, report = load_products(product_list)
    text = format_load_report(report.as_dict())
    assert text.splitlines()[0] == f"catalog {product_list}: 6 of 8 rows loaded (schema auto: products 8 rows)"
    assert f"auto: {AUTO_RULE}" in text and "dropped 2 rows: no category 1, no_price 1" in text
    assert "products ignored: parent_asin, warehouse" in text


def test_cli_build_with_a_schema(product_list, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["catalog", "build", "--source", str(product_list), "--out", str(tmp_path / "d"),
                                 "--embedder", "none", "--schema", "products"])
    assert result.exit_code == 0, result.output
    assert "dropped 2 rows: no category 1, no_price 1" in flat_output(result.output)
    result = runner.invoke(app, ["catalog", "build", "--source", str(product_list), "--out", str(tmp_path / "e"),
                                 "--embedder", "none", "--schema", "nope"])
    assert result.exit_code == 2 and "unknown schema 'nope'" in flat_output(result.output)
