"""Hostile input at the runtime boundary: each test reproduces one defect found by fuzzing."""

from __future__ import annotations

import gc
import json
import re
import weakref
from typing import Any

import pytest

from ecomrlve.actions import MAX_REASON_CHARS, AgentAction, ToolCall
from ecomrlve.catalog.filters import ProductFilter, filter_mask
from ecomrlve.catalog.product_type import spoken_name
from ecomrlve.catalog.synthetic import generate_synthetic_catalog
from ecomrlve.episode import EcomEnv, shared_search_engine
from ecomrlve.protocol import expand_result
from ecomrlve.runner import replay
from ecomrlve.session import EpisodeRecord


def _replays_identically(env: EcomEnv) -> EpisodeRecord:
    if not env.done:
        env.session.finish("stopped")  # the record exists once the episode is over
    record = env.record
    line = record.to_json()  # must be writable
    again = replay(env, EpisodeRecord.model_validate_json(line))
    assert again.to_json() == line
    return record


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.mark.parametrize("junk", ["\u200b", "\u00e9", "\x00", "\u2060", "\ufeff"])
def test_an_id_with_junk_inside_does_not_resolve(catalog, make_env, junk: str) -> None:
    product_id = catalog.product_id(7)
    assert catalog.index_of(product_id) == 7
    for position in (0, 3, len(product_id)):
        assert catalog.index_of(product_id[:position] + junk + product_id[position:]) is None
    env = make_env()
    env.reset(env_id="CART", difficulty=0, seed=1)
    obs = env.step(_call("catalog_get_product", product_id=product_id[:3] + junk + product_id[3:]))
    assert json.loads(obs.messages[0]["content"])["error"] == "unknown_product"


@pytest.mark.parametrize("bounds", [{"price_max": 1e308}, {"price_min": 1e308}, {"price_min": 0.0, "price_max": 1e300},
                                    {"weight_max": 1e308, "wattage_min": -1e308}, {"ship_days_max": 2**62}])
def test_huge_filter_bounds_mean_no_bound_instead_of_overflowing(catalog, bounds: dict[str, float]) -> None:
    mask = filter_mask(catalog, ProductFilter(**bounds))
    expected_empty = bounds.get("price_min", 0) > 1e6
    assert mask.any() != expected_empty


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_filter_bounds_are_schema_violations(value: float) -> None:
    with pytest.raises(ValueError):
        ProductFilter(price_max=value)


@pytest.mark.parametrize("raw", ['{"tool_calls": [{"name": "catalog_search", "arguments": {"query": "x", '
                                 '"filters": {"price_max": Infinity}}}]}',
                                 _call("catalog_search", query="x", filters={"price_max": float("inf")})])
def test_infinity_in_an_action_is_invalid_not_a_crash(make_env, raw: Any) -> None:
    env = make_env()
    env.reset(env_id="CART", difficulty=0, seed=0)
    obs = env.step(raw)
    assert obs.done and obs.reward == -1
    _replays_identically(env)


@pytest.mark.parametrize("env_id", ["PD", "SUB"])
def test_naming_a_product_of_another_category_gets_a_reply(catalog, search, env_id: str) -> None:
    env = EcomEnv(env_id, catalog=catalog, search=search)
    env.reset(env_id=env_id, difficulty=0, seed=0)
    obs = env.step(_call("catalog_search", query="usb charger"))
    first = expand_result(json.loads(obs.messages[0]["content"]))["results"][0]
    wanted = catalog.category_of(catalog.index_of(first["product_id"])).name
    other = next(row for row in range(len(catalog)) if catalog.category_of(row).name != wanted)
    obs = env.step(f"How about {catalog.product_id(other)}.")
    reply = obs.messages[-1]["content"]
    assert obs.messages[-1]["role"] == "user" and spoken_name(catalog, other).text in reply  # "not what I need"
    _replays_identically(env)


@pytest.mark.parametrize("raw", [
    "look at \ud800 this",
    _call("catalog_search", query="\udfff"),
    AgentAction(message="hi \ud800"),
    AgentAction(tool_calls=[ToolCall(id="a", name="catalog_search", arguments={"query": "\ud83d"})]),
])
def test_lone_surrogates_are_replaced_and_the_record_stays_writable(make_env, raw: Any) -> None:
    env = make_env()
    env.reset(env_id="CART", difficulty=0, seed=0)
    env.step(raw)
    record = _replays_identically(env)
    assert "\ufffd" in record.to_json()


@pytest.mark.parametrize(("raw", "reason"), [
    ({"message": {1, 2}}, "not_json"),
    ({"message": b"bytes"}, "not_json"),
    (_call("catalog_search", query=float("nan")), "not_json"),
    ({"tool_calls": [{"name": "user_get_visit_history", "arguments": {3: "x"}}]}, "not_json"),
    ({"tool_calls": [{"name": "user_get_visit_history", "arguments": {"x": object()}}]}, "not_json"),
    (AgentAction(tool_calls=[ToolCall(id="d", name="user_get_visit_history", arguments={})] * 2), "duplicate id"),
    (AgentAction(message="x" * 32_001), "too_long"),
    (AgentAction(tool_calls=[ToolCall(id="s", name="user_get_visit_history", arguments={"k": {1, 2}})]), "not_json"),
    ({"tool_calls": [{"name": "a" * 31_301, "arguments": {}}]}, "unknown tool"),
    ({"tool_calls": [{"name": "user_get_visit_history", "arguments": {"z" * 31_000: 1}}]}, "violate its schema"),
])
def test_every_input_path_is_normalised_alike_and_replays(make_env, raw: Any, reason: str) -> None:
    env = make_env()
    env.reset(env_id="CART", difficulty=0, seed=0)
    obs = env.step(raw)
    assert obs.done and obs.reward == -1
    assert reason in obs.info["invalid_reason"] and len(obs.info["invalid_reason"]) <= MAX_REASON_CHARS
    _replays_identically(env)


def test_python_actions_record_what_the_wire_formats_would(make_env) -> None:
    """Whitespace-only messages and tuples become what JSON makes of them, live and on replay."""
    env = make_env()
    env.reset(env_id="CART", difficulty=0, seed=0)
    env.step(AgentAction(message="  \n ", tool_calls=[ToolCall(id="c", name="catalog_search",
                                                                  arguments={"query": "x", "top_k": 3})]))
    env.step({"message": "fine", "tool_calls": ({"name": "user_get_visit_history", "arguments": {}},)})
    record = _replays_identically(env)
    assert record.messages[2]["content"] is None
    assert record.actions[1] == {"message": "fine", "tool_calls": [{"name": "user_get_visit_history", "arguments": {}}]}


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"env_id": 5}, "env_id must be one of this env's ids (CART)"),
    ({"env_id": ""}, "env_id must be one of"),
    ({"env_id": "PD"}, "(CART)"),
    ({"env_id": "NOPE"}, "got 'NOPE'"),
    ({"seed": "7"}, "seed must be an integer"),
    ({"seed": True}, "seed must be an integer"),
    ({"seed": -1}, "seed must be an integer"),
    ({"difficulty": "3"}, "difficulty must be an integer"),
])
def test_reset_rejects_bad_arguments(make_env, kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        make_env().reset(**kwargs)
    assert fragment in str(info.value)


def test_reset_with_env_id_none_still_draws(make_env) -> None:
    env = make_env()
    env.reset(env_id=None, seed=3)
    assert env.session.env_id == "CART"


@pytest.mark.slow
def test_a_discarded_catalog_frees_its_search_engine() -> None:
    catalog = generate_synthetic_catalog(450, 5)
    engine = shared_search_engine(catalog)
    assert shared_search_engine(catalog) is engine
    env = EcomEnv("CART", catalog=catalog)
    assert env.search is engine
    catalog_ref, engine_ref = weakref.ref(catalog), weakref.ref(engine)
    del catalog, engine, env
    gc.collect()
    assert catalog_ref() is None and engine_ref() is None


@pytest.mark.parametrize(("overrides", "fragment"), [
    ({"p_noise": 5}, "probability in [0, 1]"), ({"eps_rank": -0.1}, "probability"), ({"slack": -1}, ">= 0"),
    ({"top_k": 0}, "integer >= 1"), ({"B_tool": 2.5}, "integer >= 1"), ({"p_oos": float("nan")}, "finite"),
    ({"T_max": True}, "finite number"),
])
def test_overrides_out_of_range_are_refused(make_env, overrides: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=re.escape(fragment)):
        make_env(overrides=overrides).reset(difficulty=0, seed=0)
