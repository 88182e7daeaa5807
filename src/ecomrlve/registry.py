"""The environment registry: one typed, JSON-dumpable :class:`EnvSpec` per environment.

Everything that used to list the environments by hand derives from it: the collections, JOURNEY's
intent pool, the JOURNEY heuristic's request classifier, the realiser's template dispatch, the
heuristic baselines and the per-environment column of ``ecomrlve difficulty``. Code is named by
``"module:attribute"`` strings and imported only when first used, so this module imports nothing
from the rest of the package except the difficulty table, and any layer may read it.

The built-in environments register in :mod:`ecomrlve.envs`; reading the registry imports that
module first, so the built-ins are always there. Adding an environment is one :func:`register`
call (see ARCHITECTURE.md, "Adding an environment").
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import importlib.metadata
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ecomrlve.difficulty.axes import Axis, declare_axes, every_axis, withdraw_axes
from ecomrlve.errors import PluginError, UnknownNameError

#: The module whose import registers the built-in environments.
BUILTINS_MODULE = "ecomrlve.envs"
#: The entry-point group through which installed packages add environments, as pytest and Gymnasium plugins do:
#: ``[project.entry-points."ecomrlve.envs"] price = "mypkg.price:SPEC"`` (an EnvSpec, a tuple of them, or a
#: module whose import registers them). They register after the built-ins, in the order of their names.
PLUGIN_GROUP = "ecomrlve.envs"
#: The nested core collections C1 ⊂ C2 ⊂ C4 ⊂ C8, smallest first; C8 holds every registered environment.
CORE_COLLECTIONS = ("C1", "C2", "C4", "C8")
#: Difficulty axes the episode runtime applies to every environment (the turn and tool budgets, the shopper's
#: noise); a tool's own axes (``Tool.axes``) apply where it is offered.
RUNTIME_AXES = ("T_max", "B_tool", "p_noise")
ENV_ID_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
ENTRY_POINT_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass(frozen=True)
class JourneyRole:
    """How an environment takes part in JOURNEY as one of its intents.

    ``draw_order`` places it in the pool JOURNEY samples its intents from with the episode's RNG
    (the order is part of the seeded draw, so existing journeys replay only if it stays put).
    ``keywords`` and ``patterns`` (regex, weight) let the JOURNEY heuristic baseline recognise a
    request of this kind in the shopper's words; score ties go to the higher ``tie_rank``.
    """

    draw_order: int
    keywords: Mapping[str, float]
    patterns: tuple[tuple[str, float], ...] = ()
    tie_rank: int = 0


@dataclass(frozen=True)
class EnvSpec:
    """Everything the package needs to know about one environment, declared in one place.

    Attributes:
        id: the environment id (``CART``), upper case.
        entry_point: ``"module:Class"`` of its :class:`~ecomrlve.envs.base.TaskFamily` subclass.
        heuristic: ``"module:Class"`` of its heuristic baseline agent (None: it has none).
        reference: ``"module:Class"`` of its reference agent (None: it has none): an honest agent that sees
            only observations, asks in natural sentences and should solve nearly every episode.
        explainer: ``"module:function"`` of its verdict explainer (None: it has none): the facts a verdict rests
            on, read from a record (:mod:`ecomrlve.envs.explain`; ``ecomrlve explain``).
        templates: ``"module:NAME"`` of the :class:`~ecomrlve.user.realiser.ActTemplates` its
            simulated user's dialogue acts are phrased with (several environments may share one).
        axes: the difficulty axes its generator, user, verifier and oracle read (the
            :data:`RUNTIME_AXES` and the axes of its tools apply as well and are not listed).
        collection: the smallest core collection it belongs to (C8: only the full suite).
        journey: its role as a JOURNEY intent (None: never drawn into a journey).
        catalog_needs: catalog features (names in :mod:`ecomrlve.envs.capabilities`) it cannot run
            without; a catalog lacking one refuses the environment at start, in one line.
        catalog_uses: catalog features it adapts to when they are missing (reported, not refused).
        tools: ``"module:attribute"`` of each :class:`~ecomrlve.tools.Tool` it brings beyond the shared ones
            (named in its family's ``tool_names`` like any other tool).
        new_axes: difficulty curves it declares beyond the table in ``difficulty/axes.py`` (list them in
            ``axes`` too); registering adds them to every ``Difficulty`` (``difficulty.<name>``), the
            overrides and ``ecomrlve difficulty``, and unregistering removes them.
    """

    id: str
    entry_point: str
    heuristic: str | None = None
    reference: str | None = None
    explainer: str | None = None
    templates: str | None = None
    axes: tuple[str, ...] = ()
    collection: str = "C8"
    journey: JourneyRole | None = None
    catalog_needs: tuple[str, ...] = ()
    catalog_uses: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    new_axes: tuple[Axis, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The spec as plain JSON types (``json.dumps`` takes it as is; a declared axis by name, formula and effect)."""
        return dataclasses.asdict(dataclasses.replace(self, new_axes=())) | {
            "new_axes": [{"name": a.name, "formula": a.formula, "effect": a.effect} for a in self.new_axes]}


_specs: dict[str, EnvSpec] = {}
_snapshot: tuple[EnvSpec, ...] = ()  # _specs' values, rebuilt on every change (readers may cache on it)
_builtins_loaded = False


def unknown(kind: str, name: str, known: list[str]) -> UnknownNameError:
    """An error for an unknown name (a ``KeyError`` and a ``ValueError``), with a "Did you mean" hint."""
    hint = difflib.get_close_matches(name, known, n=1)
    suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
    return UnknownNameError(f"unknown {kind} {name!r}.{suggestion} Known: {', '.join(known)}")


def _check(spec: EnvSpec) -> None:
    if not ENV_ID_RE.match(spec.id):
        raise ValueError(f"environment id {spec.id!r} must be upper case letters, digits and '_' (e.g. 'CART')")
    for name in ("entry_point", "heuristic", "reference", "explainer", "templates"):
        value = getattr(spec, name)
        if (value is not None or name == "entry_point") and not (isinstance(value, str) and ENTRY_POINT_RE.match(value)):
            raise ValueError(f"{spec.id}: {name} {value!r} must be a 'module:attribute' string")
    for value in spec.tools:
        if not (isinstance(value, str) and ENTRY_POINT_RE.match(value)):
            raise ValueError(f"{spec.id}: tool {value!r} must be a 'module:attribute' string")
    known_axes = [axis.name for axis in every_axis()] + [axis.name for axis in spec.new_axes]
    for axis in spec.axes:
        if axis not in known_axes:
            raise unknown(f"difficulty axis (in {spec.id}'s spec)", axis, known_axes)
    if spec.collection not in CORE_COLLECTIONS:
        raise unknown(f"collection (in {spec.id}'s spec)", spec.collection, list(CORE_COLLECTIONS))
    if spec.journey is not None:
        for pattern, _ in spec.journey.patterns:
            re.compile(pattern)


def register(spec: EnvSpec) -> EnvSpec:
    """Add ``spec`` to the registry; a duplicate id or a malformed spec raises ValueError.

    The entry point is imported when the environment is first used; a class that is not a
    TaskFamily for this id is rejected then, with a TypeError naming the entry point.
    """
    if not isinstance(spec, EnvSpec):
        raise TypeError(f"register() takes an EnvSpec, got {type(spec).__name__}")
    if spec.id in _specs:
        raise ValueError(f"environment {spec.id!r} is already registered ({_specs[spec.id].entry_point})")
    _check(spec)
    declare_axes(spec.new_axes)
    _specs[spec.id] = spec
    _changed()
    return spec


def unregister(env_id: str) -> EnvSpec:
    """Remove an environment (tests that register their own use this to clean up)."""
    _ensure_builtins()
    if env_id not in _specs:
        raise unknown("environment", env_id, sorted(_specs))
    spec = _specs.pop(env_id)
    withdraw_axes(tuple(axis.name for axis in spec.new_axes))
    _changed()
    return spec


def _changed() -> None:
    global _snapshot
    _snapshot = tuple(_specs.values())


def _ensure_builtins() -> None:
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        importlib.import_module(BUILTINS_MODULE)
        for entry in sorted(importlib.metadata.entry_points(group=PLUGIN_GROUP), key=lambda e: (e.name, e.value)):
            register_plugin(entry)


def register_plugin(entry: importlib.metadata.EntryPoint) -> tuple[EnvSpec, ...]:
    """Register what an installed package's entry point names (see :data:`PLUGIN_GROUP`); returns the specs it added."""
    before = set(_specs)
    try:
        found = entry.load()
    except Exception as exc:  # a broken plugin is named, not hidden behind a bare traceback
        raise PluginError(f"environment plugin {entry.name!r} ({entry.value}) failed to load: {exc}") from exc
    specs = (found,) if isinstance(found, EnvSpec) else tuple(found) if isinstance(found, (tuple, list)) else ()
    for spec in specs:
        if not isinstance(spec, EnvSpec):
            raise PluginError(f"environment plugin {entry.name!r} ({entry.value}) names a {type(spec).__name__}, "
                              f"not an EnvSpec")
        if spec.id not in _specs or _specs[spec.id] is not spec:
            register(spec)
    return tuple(_specs[name] for name in _specs if name not in before)


def env_specs() -> tuple[EnvSpec, ...]:
    """Every registered environment, in registration order (the order of collection C8).

    The same tuple object is returned until the registry changes, so callers may cache on it.
    """
    _ensure_builtins()
    return _snapshot


def env_spec(env_id: str) -> EnvSpec:
    """The spec of ``env_id``; an unknown id raises KeyError with a "Did you mean" hint."""
    _ensure_builtins()
    if env_id not in _specs:
        raise unknown("environment", env_id, sorted(_specs))
    return _specs[env_id]


def load(entry_point: str) -> Any:
    """Import and return the object a ``"module:attribute"`` string names."""
    module, _, attribute = entry_point.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"cannot load {entry_point!r}: {exc}") from exc
