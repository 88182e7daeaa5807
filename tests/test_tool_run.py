"""Tool.run: the handler gets the validated arguments' fields by name."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ecomrlve.tools.catalog import catalog_search


@pytest.mark.parametrize("raw", [{"query": "usb cable"}, {"top_k": 3, "query": "usb cable", "sort_by": "price_asc"},
                                 {"query": "mug", "filters": {"color": "red"}}])
def test_tool_run_passes_every_field_of_the_validated_arguments(raw: dict[str, Any]) -> None:
    """run hands its handler each field by name, in order, defaults included (read off the model's __dict__)."""
    received: list[dict[str, Any]] = []
    recording = dataclasses.replace(catalog_search, handler=lambda ctx, **fields: received.append(fields) or {})
    arguments = recording.validate(raw)
    recording.run(None, arguments)  # type: ignore[arg-type]
    assert received == [{name: getattr(arguments, name) for name in type(arguments).model_fields}]
    assert list(received[0]) == list(type(arguments).model_fields)
