"""The twelve difficulty axes and the environment curves, as one table of functions of d.

One integer ``d`` in ``0..MAX_DIFFICULTY`` sets every axis at once. The range is capped where the
curves saturate (m, T_max, H_orders and B_tool still grow a little past 15, but every bounded
axis has reached its ceiling and the oracles are proven on every env only up to 15), so a larger
d is rejected rather than silently accepted. :class:`Difficulty` is the resolved,
immutable set of values an episode runs with; any axis can be overridden per run, e.g.
``Difficulty.at(6, overrides={"p_noise": 0.0})``. Environments read these values and never
compute their own curves.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ecomrlve.errors import UserInputError

MAX_DIFFICULTY = 15  # the supported range is 0..15: the oracles are proven there; the scheduler stops here


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass(frozen=True)
class Axis:
    """One named curve of d: its formula as shown to people and the function computing it.

    ``bounds`` is the range an override may take when it is not the default one (probabilities in
    [0, 1], other real axes >= 0, integer axes >= 1); ``None`` as the upper bound means unbounded.
    """

    name: str
    formula: str
    effect: str
    value: Callable[[int], float | int]
    bounds: tuple[float, float | None] | None = None


AXES: tuple[Axis, ...] = (
    Axis("m", "2 + ⌊d/2⌋", "user constraints", lambda d: 2 + d // 2),
    Axis("k_rec", "min(10, 3 + ⌊d/3⌋)", "ranked recommendations scored", lambda d: min(10, 3 + d // 3)),
    # At least 6: every environment's prescribed procedure (RETURN at d 0: details, eligibility check, return,
    # replacement search, answer, one tool per turn) fits with a turn to spare.
    Axis("T_max", "max(6, 4 + ⌊d/2⌋)", "agent turn budget", lambda d: max(6, 4 + d // 2)),
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
    Axis("bundle_budget", "1 if d ≥ 2 else 0", "BUNDLE states an overall budget (1) or not (0)", lambda d: int(d >= 2), bounds=(0, 1)),
    Axis("cart_history_lookalikes", "1 + ⌊d/4⌋", "CART same-category products added to the visit history per item",
         lambda d: 1 + d // 4, bounds=(0, None)),
    Axis("order_reference", "min(2, ⌊d/4⌋)",
         "RETURN/STATUS: the customer names the order by id (0), title and date (1), or type and rough time (2)",
         lambda d: min(2, d // 4), bounds=(0, 2)),
    Axis("p_ineligible", "min(0.5, 0.05·d)", "RETURN chance the item cannot be returned", lambda d: min(0.5, 0.05 * d)),
    Axis("return_window_edge", "1 if d ≥ 6 else 0",
         "RETURN dates cluster within a few days of the return window's end (1) or not (0)", lambda d: int(d >= 6),
         bounds=(0, 1)),
    Axis("feedback_detail", "1 if d < 8 else 0",
         "PD/SUB/BUNDLE: the shopper says which requirement a named product misses (1), or only that it does "
         "not fit, every verdict costing patience (0)", lambda d: int(d < 8), bounds=(0, 1)),
)

_AXIS_BY_NAME = {axis.name: axis for axis in AXES}
#: curves that environments outside the package declare (``EnvSpec.new_axes``), in declaration order; their
#: values follow the table's in every ``Difficulty`` (``Difficulty.declared``), so built-in records keep their shape
_DECLARED: dict[str, Axis] = {}


def every_axis() -> tuple[Axis, ...]:
    """The table's axes, then those declared by registered environments."""
    return AXES + tuple(_DECLARED.values())


def find_axis(name: str) -> Axis | None:
    """The axis called ``name`` (None: no such axis)."""
    return _AXIS_BY_NAME.get(name) or _DECLARED.get(name)


def declare_axes(axes: tuple[Axis, ...]) -> None:
    """Add an environment's own curves (all or none); a name that is already an axis raises ValueError."""
    names = [axis.name for axis in axes]
    taken = [name for name in names if find_axis(name) is not None or names.count(name) > 1]
    if taken:
        raise ValueError(f"difficulty axis {taken[0]!r} already exists")
    for axis in axes:
        if not axis.name.isidentifier() or hasattr(Difficulty, axis.name):
            raise ValueError(f"difficulty axis name {axis.name!r} must be an identifier that is not a Difficulty attribute")
    _DECLARED.update((axis.name, axis) for axis in axes)
    _resolved.cache_clear()


def withdraw_axes(names: tuple[str, ...]) -> None:
    """Remove declared curves (an environment that is unregistered takes its axes with it)."""
    for name in names:
        _DECLARED.pop(name, None)
    _resolved.cache_clear()


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
    bundle_budget: int
    cart_history_lookalikes: int
    order_reference: int
    p_ineligible: float
    return_window_edge: int
    feedback_detail: int
    declared: tuple[tuple[str, float | int], ...] = ()  # (name, value) of each declared axis, in order

    def __getattr__(self, name: str) -> Any:
        """A declared axis's value, read like a built-in one (``difficulty.my_axis``)."""
        for key, value in self.__dict__.get("declared", ()):
            if key == name:
                return value
        raise AttributeError(f"{type(self).__name__!r} has no axis {name!r}")

    @classmethod
    def at(cls, d: int, overrides: Mapping[str, Any] | None = None) -> Difficulty:
        """Resolve every axis at ``d``; ``overrides`` replaces named axes by fixed values."""
        if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= MAX_DIFFICULTY:
            raise ValueError(f"difficulty must be an integer in 0..{MAX_DIFFICULTY}, got {d!r}")
        if not overrides:  # frozen, so one per level serves every episode
            return _resolved(d)
        fixed: dict[str, Any] = {}
        for name, value in overrides.items():
            if find_axis(name) is None:
                raise ValueError(f"unknown difficulty axis {name!r}; known: {sorted(a.name for a in every_axis())}")
            fixed[name] = check_override(name, value)
        resolved = _resolved(d)
        declared = tuple((name, fixed.pop(name, value)) for name, value in resolved.declared)
        return dataclasses.replace(resolved, **fixed, declared=declared)

    def as_dict(self) -> dict[str, Any]:
        """The axes by name, in table order, then the declared ones (every value is a number, so a shallow
        copy is ``dataclasses.asdict`` without its recursive walk)."""
        values = dict(vars(self))
        values.update(values.pop("declared"))
        return values


@functools.cache
def _resolved(d: int) -> Difficulty:
    """``Difficulty.at(d)`` without overrides, resolved once per level."""
    values: dict[str, Any] = {axis.name: axis.value(d) for axis in AXES}
    return Difficulty(d=d, **values, declared=tuple((axis.name, axis.value(d)) for axis in _DECLARED.values()))


_PROBABILITY_AXES = frozenset({"p_missing", "p_noise", "p_switch", "eps_rank", "p_oos", "p_variant", "p_multi_qty",
                               "p_ineligible"})


def check_override(name: str, value: Any) -> float | int:
    """``value`` as the type of axis ``name`` if it is in the axis's range, else ValueError.

    An axis with ``bounds`` takes values in them (levels and on/off switches such as
    ``order_reference`` and ``bundle_budget`` start at 0); otherwise probabilities (and the
    distractor share ``eps_rank``) lie in [0, 1], ``slack`` is >= 0 and every integer axis
    (counts, budgets, ``top_k``) is >= 1.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UserInputError(f"axis {name!r} takes a finite number, got {value!r}")
    axis = find_axis(name)
    if axis is None:
        raise UserInputError(f"unknown difficulty axis {name!r}")
    if axis.bounds is not None:
        low, high = axis.bounds
        if not low <= value or (high is not None and value > high):
            span = f"in [{low}, {high}]" if high is not None else f">= {low}"
            raise UserInputError(f"axis {name!r} takes a value {span}, got {value!r}")
    if isinstance(axis.value(0), int):
        if not isinstance(value, int) or (axis.bounds is None and value < 1):
            raise UserInputError(f"axis {name!r} takes an integer >= 1, got {value!r}")
        return value
    if name in _PROBABILITY_AXES and not 0 <= value <= 1:
        raise UserInputError(f"axis {name!r} is a probability in [0, 1], got {value!r}")
    if value < 0:
        raise UserInputError(f"axis {name!r} must be >= 0, got {value!r}")
    return float(value)


def parse_overrides(items: list[str]) -> dict[str, float | int]:
    """Parse CLI overrides such as ``["p_noise=0", "top_k=50"]`` into typed axis values."""
    overrides: dict[str, float | int] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        axis = find_axis(name)
        if not sep or axis is None:
            raise UserInputError(f"override {item!r} must be AXIS=VALUE with AXIS one of "
                                 f"{sorted(a.name for a in every_axis())}")
        integer_axis = isinstance(axis.value(0), int)
        try:
            value = int(raw) if integer_axis else float(raw)
        except ValueError:
            raise UserInputError(f"override {item!r}: {raw!r} is not a number") from None
        try:
            overrides[name] = check_override(name, value)
        except ValueError as exc:
            raise UserInputError(f"override {item!r}: {exc}") from None
    return overrides
