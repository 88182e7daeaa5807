"""The twelve difficulty axes and the environment curves, as one table of functions of d.

One integer ``d`` sets every axis at once (SPEC §3). :class:`Difficulty` is the resolved,
immutable set of values an episode runs with; any axis can be overridden per run, e.g.
``Difficulty.at(6, overrides={"p_noise": 0.0})``. Environments read these values and never
compute their own curves.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass(frozen=True)
class Axis:
    """One named curve of d: its formula as shown to people and the function computing it."""

    name: str
    formula: str
    effect: str
    value: Callable[[int], float | int]


AXES: tuple[Axis, ...] = (
    Axis("m", "2 + ⌊d/2⌋", "user constraints", lambda d: 2 + d // 2),
    Axis("k_rec", "min(10, 3 + ⌊d/3⌋)", "ranked recommendations scored", lambda d: min(10, 3 + d // 3)),
    Axis("T_max", "4 + ⌊d/2⌋", "agent turn budget", lambda d: 4 + d // 2),
    Axis("p_missing", "0.8·σ((d−3)/1.5)", "chance a non-essential constraint is withheld",
         lambda d: 0.8 * _sigmoid((d - 3) / 1.5)),
    Axis("p_noise", "clip(0.01·d, 0, 0.125)", "noise level (≈24·p typos per message)", lambda d: min(0.125, max(0.0, 0.01 * d))),
    Axis("p_switch", "0.6·σ((d−5)/2)", "chance of a context switch", lambda d: 0.6 * _sigmoid((d - 5) / 2)),
    Axis("top_k", "max(20, 200 − 10·d)", "search results returned at most", lambda d: max(20, 200 - 10 * d)),
    Axis("eps_rank", "min(0.4, 0.02·d)", "share of search results replaced by distractors",
         lambda d: min(0.4, 0.02 * d)),
    Axis("p_oos", "min(0.5, 0.05·d)", "chance a target goes out of stock", lambda d: min(0.5, 0.05 * d)),
    Axis("H_orders", "1 + ⌊d/2⌋", "orders in the user's history", lambda d: 1 + d // 2),
    Axis("B_branch", "1 + ⌊d/3⌋", "policy condition clauses", lambda d: 1 + d // 3),
    Axis("B_tool", "1 + ⌊d/2⌋", "tool calls executed per turn", lambda d: 1 + d // 2),
    # Environment curves.
    Axis("cart_items", "min(5, 1 + ⌊d/3⌋)", "CART distinct products", lambda d: min(5, 1 + d // 3)),
    Axis("p_variant", "σ((d−2)/1.5)", "CART chance an item needs a specific variant",
         lambda d: _sigmoid((d - 2) / 1.5)),
    Axis("p_multi_qty", "min(0.5, 0.1·d)", "CART chance an item needs quantity > 1", lambda d: min(0.5, 0.1 * d)),
    Axis("slack", "0.5·e^(−d/5)", "numeric constraint slack", lambda d: 0.5 * math.exp(-d / 5)),
    Axis("journey_intents", "min(5, 2 + ⌊d/4⌋)", "JOURNEY intents", lambda d: min(5, 2 + d // 4)),
    Axis("bundle_categories", "min(12, 3 + ⌊d/2⌋)", "BUNDLE categories", lambda d: min(12, 3 + d // 2)),
)

_AXIS_BY_NAME = {axis.name: axis for axis in AXES}
_AXIS_NAMES = frozenset(_AXIS_BY_NAME)


@dataclass(frozen=True)
class Difficulty:
    """Every axis resolved at one difficulty level ``d`` (with any per-run overrides applied)."""

    d: int
    m: int
    k_rec: int
    T_max: int
    p_missing: float
    p_noise: float
    p_switch: float
    top_k: int
    eps_rank: float
    p_oos: float
    H_orders: int
    B_branch: int
    B_tool: int
    cart_items: int
    p_variant: float
    p_multi_qty: float
    slack: float
    journey_intents: int
    bundle_categories: int

    @classmethod
    def at(cls, d: int, overrides: Mapping[str, Any] | None = None) -> Difficulty:
        """Resolve every axis at ``d``; ``overrides`` replaces named axes by fixed values."""
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise ValueError(f"difficulty must be an integer >= 0, got {d!r}")
        values: dict[str, Any] = {axis.name: axis.value(d) for axis in AXES}
        for name, value in (overrides or {}).items():
            if name not in _AXIS_NAMES:
                raise ValueError(f"unknown difficulty axis {name!r}; known: {sorted(_AXIS_NAMES)}")
            expected = type(values[name])
            if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"axis {name!r} takes an integer, got {value!r}")
            values[name] = expected(value)
        return cls(d=d, **values)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def parse_overrides(items: list[str]) -> dict[str, float | int]:
    """Parse CLI overrides such as ``["p_noise=0", "top_k=50"]`` into typed axis values."""
    overrides: dict[str, float | int] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or name not in _AXIS_NAMES:
            raise ValueError(f"override {item!r} must be AXIS=VALUE with AXIS one of {sorted(_AXIS_NAMES)}")
        integer_axis = isinstance(_AXIS_BY_NAME[name].value(0), int)
        try:
            overrides[name] = int(raw) if integer_axis else float(raw)
        except ValueError:
            raise ValueError(f"override {item!r}: {raw!r} is not a number") from None
    return overrides
