"""Registry of environments and collections (SPEC §1)."""

from __future__ import annotations

import difflib
import importlib

from ecomrlve.envs.base import Environment, Problem, TaskOutcome
from ecomrlve.errors import UnknownNameError

#: env id -> "module:Class", imported on first use.
ENTRY_POINTS: dict[str, str] = {
    "CART": "ecomrlve.envs.cart:CartEnvironment",
    "PD": "ecomrlve.envs.pd:ProductDiscoveryEnvironment",
    "SUB": "ecomrlve.envs.sub:SubstitutionEnvironment",
    "BUNDLE": "ecomrlve.envs.bundle:BundleEnvironment",
    "RETURN": "ecomrlve.envs.returns:ReturnEnvironment",
    "STATUS": "ecomrlve.envs.status:StatusEnvironment",
    "POLICY": "ecomrlve.envs.policy:PolicyEnvironment",
    "JOURNEY": "ecomrlve.envs.journey:JourneyEnvironment",
}

#: Nested collections (SPEC §1): C1 ⊂ C2 ⊂ C4 ⊂ C8; a run samples uniformly among their members.
COLLECTIONS: dict[str, tuple[str, ...]] = {
    "C1": ("CART",),
    "C2": ("CART", "SUB"),
    "C4": ("CART", "SUB", "PD", "RETURN"),
    "C8": ("CART", "SUB", "PD", "RETURN", "STATUS", "POLICY", "BUNDLE", "JOURNEY"),
}

_instances: dict[str, Environment] = {}


def _unknown(kind: str, name: str, known: list[str]) -> UnknownNameError:
    hint = difflib.get_close_matches(name, known, n=1)
    suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
    return UnknownNameError(f"unknown {kind} {name!r}.{suggestion} Known: {', '.join(known)}")


def get_environment(env_id: str) -> Environment:
    """The (stateless, shared) environment object for ``env_id``."""
    if env_id not in ENTRY_POINTS:
        raise _unknown("environment", env_id, sorted(ENTRY_POINTS))
    if env_id not in _instances:
        module, _, cls = ENTRY_POINTS[env_id].partition(":")
        env_cls = getattr(importlib.import_module(module), cls)
        if not (isinstance(env_cls, type) and issubclass(env_cls, Environment)) or env_cls.env_id != env_id:
            raise TypeError(f"{ENTRY_POINTS[env_id]} is not the Environment for {env_id}")
        _instances[env_id] = env_cls()
    return _instances[env_id]


def resolve_env_ids(names: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Expand a collection name or a list of env ids/collections into env ids (validated)."""
    items = [names] if isinstance(names, str) else list(names)
    out: list[str] = []
    for item in items:
        for name in (p.strip() for p in item.split(",")):
            if name in COLLECTIONS:
                out.extend(COLLECTIONS[name])
            elif name in ENTRY_POINTS:
                out.append(name)
            else:
                raise _unknown("environment or collection", name, sorted(ENTRY_POINTS) + sorted(COLLECTIONS))
    return tuple(dict.fromkeys(out))


__all__ = ["COLLECTIONS", "ENTRY_POINTS", "Environment", "Problem", "TaskOutcome", "get_environment", "resolve_env_ids"]
