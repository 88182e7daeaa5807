"""The twelve difficulty axes and the environment curves, overrides and their parsing."""

from __future__ import annotations

import dataclasses
import math

import pytest

from ecomrlve.difficulty import MAX_DIFFICULTY, Difficulty
from ecomrlve.difficulty.axes import AXES, parse_overrides
from ecomrlve.episode import EcomEnv
from ecomrlve.runner import parse_difficulty


def sigma(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def spec_axes(d: int) -> dict[str, float]:
    """The specified difficulty table, written out independently of the implementation."""
    return {
        "m": 2 + d // 2,
        "k_rec": min(10, 3 + d // 3),
        "T_max": max(6, 4 + d // 2),
        "p_missing": 0.8 * sigma((d - 3) / 1.5),
        "p_noise": min(max(0.01 * d, 0.0), 0.125),
        "p_switch": 0.6 * sigma((d - 5) / 2),
        "top_k": max(20, 200 - 10 * d),
        "eps_rank": min(0.4, 0.02 * d),
        "p_oos": min(0.5, 0.05 * d),
        "H_orders": 1 + d // 2,
        "B_branch": 1 + d // 3,
        "B_tool": 1 + d // 2,
        "cart_items": min(5, 1 + d // 3),
        "p_variant": sigma((d - 2) / 1.5),
        "p_multi_qty": min(0.5, 0.1 * d),
        "slack": 0.5 * math.exp(-d / 5),
        "journey_intents": min(5, 2 + d // 4),
        "bundle_categories": min(12, 3 + d // 2),
        "bundle_budget": int(d >= 2),
        "cart_history_lookalikes": 1 + d // 4,
        "order_reference": min(2, d // 4),
        "p_ineligible": min(0.5, 0.05 * d),
        "return_window_edge": int(d >= 6),
        "feedback_detail": int(d < 8),
    }


def test_as_dict_is_asdict() -> None:
    """as_dict is dataclasses.asdict (same keys, order and values) with the declared axes' values in place of
    ``declared`` (none while no outside environment declares one), with overrides too, and a fresh dict."""
    for difficulty in (Difficulty.at(3), Difficulty.at(9, {"m": 2, "p_noise": 0.5})):
        axes = difficulty.as_dict()
        fields = dataclasses.asdict(difficulty)
        assert fields.pop("declared") == ()
        assert list(axes.items()) == list(fields.items())
        axes["m"] = -1
        assert difficulty.as_dict()["m"] == difficulty.m


@pytest.mark.parametrize("d", [0, 6, 12], ids=lambda d: f"d{d}")
def test_axes_match_spec_formulas(d: int) -> None:
    """Every axis at d = 0, 6, 12 equals the specified formula (integers exactly, floats to 1e-12)."""
    resolved = Difficulty.at(d).as_dict()
    expected = spec_axes(d)
    assert resolved["d"] == d
    assert set(resolved) - {"d"} == set(expected)
    for name, value in expected.items():
        if isinstance(value, int):
            assert resolved[name] == value and isinstance(resolved[name], int), name
        else:
            assert resolved[name] == pytest.approx(value, abs=1e-12), name


def test_spec_table_anchor_values() -> None:
    """Specified spot values: p_missing 5-10% / ~70% / ~80% at d = 0/6/12; p_oos 0/30/50%; eps 0/12/24%."""
    d0, d6, d12 = (Difficulty.at(d) for d in (0, 6, 12))
    assert 0.05 <= d0.p_missing <= 0.10
    assert d6.p_missing == pytest.approx(0.70, abs=0.01) and d12.p_missing == pytest.approx(0.80, abs=0.01)
    assert (d0.p_oos, d6.p_oos, d12.p_oos) == pytest.approx((0.0, 0.30, 0.50))
    assert (d0.eps_rank, d6.eps_rank, d12.eps_rank) == pytest.approx((0.0, 0.12, 0.24))
    assert (d0.m, d6.m, d12.m) == (2, 5, 8)


@pytest.mark.parametrize("d", range(0, MAX_DIFFICULTY))
def test_axes_monotone_and_bounded(d: int) -> None:
    """Harder never means easier: every axis moves one way with d and probabilities stay in [0, 1]."""
    now, nxt = Difficulty.at(d), Difficulty.at(d + 1)
    for name in ("m", "k_rec", "T_max", "p_missing", "p_noise", "p_switch", "eps_rank", "p_oos", "H_orders",
                 "B_branch", "B_tool", "cart_items", "p_variant", "p_multi_qty", "journey_intents", "bundle_categories",
                 "bundle_budget", "cart_history_lookalikes", "order_reference", "p_ineligible", "return_window_edge"):
        assert getattr(nxt, name) >= getattr(now, name), name
    assert nxt.top_k <= now.top_k and nxt.slack < now.slack and nxt.feedback_detail <= now.feedback_detail
    for name in ("p_missing", "p_noise", "p_switch", "eps_rank", "p_oos", "p_variant", "p_multi_qty", "p_ineligible"):
        assert 0.0 <= getattr(now, name) <= 1.0


def test_axes_table_lists_every_field() -> None:
    """The AXES table names every Difficulty field exactly once, each with a formula."""
    names = [axis.name for axis in AXES]
    assert len(names) == len(set(names))
    assert set(names) == set(Difficulty.at(0).as_dict()) - {"d"}
    assert all(axis.formula and axis.effect for axis in AXES)


def test_overrides_replace_only_named_axes() -> None:
    """Overrides set the named axes and leave every other axis at its formula value."""
    base = Difficulty.at(6).as_dict()
    changed = Difficulty.at(6, {"p_noise": 0.0, "top_k": 50, "T_max": 3}).as_dict()
    assert changed["p_noise"] == 0.0 and changed["top_k"] == 50 and changed["T_max"] == 3
    assert isinstance(changed["p_noise"], float) and isinstance(changed["top_k"], int)
    assert {k: v for k, v in changed.items() if k not in ("p_noise", "top_k", "T_max")} == \
        {k: v for k, v in base.items() if k not in ("p_noise", "top_k", "T_max")}
    assert Difficulty.at(6, {"p_noise": 0}).p_noise == 0.0  # an int for a float axis is fine


@pytest.mark.parametrize("overrides", [{"p_nois": 0.0}, {"tmax": 3}, {"": 1}, {"d": 3}],
                         ids=["typo", "wrong_case", "empty", "d_itself"])
def test_unknown_axis_raises(overrides: dict) -> None:
    """An override naming no axis raises ValueError."""
    with pytest.raises(ValueError):
        Difficulty.at(3, overrides)


@pytest.mark.parametrize("overrides", [{"top_k": 2.5}, {"T_max": "4"}, {"B_tool": True}],
                         ids=["float_for_int", "str_for_int", "bool_for_int"])
def test_wrong_type_override_raises(overrides: dict) -> None:
    """An integer axis rejects non-integer override values."""
    with pytest.raises(ValueError):
        Difficulty.at(3, overrides)


@pytest.mark.parametrize("d", [-1, 1.5, True, "3", None, MAX_DIFFICULTY + 1, 100, 10**9],
                         ids=["negative", "float", "bool", "str", "none", "ceiling+1", "100", "1e9"])
def test_bad_difficulty_raises(d) -> None:
    """Difficulty must be an integer in the supported range 0..15; anything else fails at once (no hang)."""
    with pytest.raises(ValueError, match="difficulty must be an integer in 0..15"):
        Difficulty.at(d)


def test_supported_range_is_zero_to_fifteen(make_env) -> None:
    """Every d in 0..15 resolves; reset refuses 16 with the same clear error."""
    assert MAX_DIFFICULTY == 15
    assert [Difficulty.at(d).d for d in range(MAX_DIFFICULTY + 1)] == list(range(16))
    with pytest.raises(ValueError, match="0..15"):
        make_env().reset(env_id="CART", difficulty=16, seed=0)


@pytest.mark.parametrize("text", ["16", "0-16", "10-100", "1000000000", "5-3", "-1"])
def test_cli_difficulty_ranges_are_validated(text: str) -> None:
    """A run's --difficulty outside 0..15 (or reversed) is a ValueError naming the supported range."""
    with pytest.raises(ValueError):
        parse_difficulty(text)
    assert parse_difficulty("0-15") == tuple(range(16)) and parse_difficulty("15") == (15,)


def test_parse_overrides() -> None:
    """CLI overrides parse to typed values: ints for integer axes, floats for the rest."""
    parsed = parse_overrides(["p_noise=0", "top_k=50", " T_max =7", "eps_rank=0.25"])
    assert parsed == {"p_noise": 0.0, "top_k": 50, "T_max": 7, "eps_rank": 0.25}
    assert isinstance(parsed["p_noise"], float) and isinstance(parsed["top_k"], int)
    assert parse_overrides([]) == {}
    assert Difficulty.at(4, parse_overrides(["B_tool=9"])).B_tool == 9


@pytest.mark.parametrize("item", ["p_noise", "p_noise:0", "nope=1", "top_k=abc", "top_k=2.5", "=3"])
def test_parse_overrides_rejects_bad_items(item: str) -> None:
    """Malformed, unknown or non-numeric override items raise ValueError."""
    with pytest.raises(ValueError):
        parse_overrides([item])


def test_env_applies_overrides(make_env) -> None:
    """EcomEnv(overrides=...) runs episodes with the overridden axes (record axes and the prompt's tool budget)."""
    env = make_env(overrides={"B_tool": 3, "p_noise": 0.0})
    obs = env.reset(env_id="CART", difficulty=0, seed=0)
    assert "at most 3 tools per turn" in obs.messages[0]["content"]
    env.session.finish("test_over")
    assert env.record.axes["B_tool"] == 3 and env.record.axes["p_noise"] == 0.0
    with pytest.raises(ValueError):
        make_env(overrides={"bogus": 1}).reset(env_id="CART", difficulty=0, seed=0)


@pytest.mark.parametrize("d", [9, 15])
def test_env_curves_are_overridable(catalog, search, d: int) -> None:
    """Environment curves come from the table: overriding them changes the episode they generate."""
    env = EcomEnv(("STATUS", "BUNDLE"), catalog=catalog, search=search,
                  overrides={"order_reference": 0, "bundle_budget": 0})
    env.reset(env_id="STATUS", difficulty=d, seed=1)
    assert env.audit().problem.goal.target.order_id in env.audit().problem.opening  # named by id, as at low d
    env.reset(env_id="BUNDLE", difficulty=d, seed=1)
    assert env.audit().problem.goal.budget is None
    default = EcomEnv(("STATUS", "BUNDLE"), catalog=catalog, search=search)
    default.reset(env_id="STATUS", difficulty=d, seed=1)
    assert default.audit().problem.goal.target.order_id not in default.audit().problem.opening
    default.reset(env_id="BUNDLE", difficulty=d, seed=1)
    assert default.audit().problem.goal.budget is not None
