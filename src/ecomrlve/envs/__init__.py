"""The built-in environments (one :class:`~ecomrlve.registry.EnvSpec` each) and their collections.

Registration order is the order of collection C8. A new environment is one more ``register``
call, here or in any module imported before it is used (see ARCHITECTURE.md).
"""

from __future__ import annotations

from ecomrlve.envs import account, cart, journey, recommend
from ecomrlve.envs.base import Problem, TaskFamily, TaskOutcome
from ecomrlve.errors import UnknownNameError
from ecomrlve.protocol import Agent
from ecomrlve.registry import (
    CORE_COLLECTIONS,
    RUNTIME_AXES,
    EnvSpec,
    env_spec,
    env_specs,
    load,
    register,
    unknown,
)
from ecomrlve.tools import TOOLS, Tool

#: One registration per built-in environment, in the order of collection C8.
BUILTIN_SPECS: tuple[EnvSpec, ...] = (cart.SPEC, recommend.SUB_SPEC, recommend.PD_SPEC, account.RETURN_SPEC,
                                      account.STATUS_SPEC, account.POLICY_SPEC, recommend.BUNDLE_SPEC, journey.SPEC)
for _spec in BUILTIN_SPECS:
    register(_spec)

_instances: dict[tuple[str, str], TaskFamily] = {}  # (env id, entry point) -> the shared instance
_instances_of: list[tuple[EnvSpec, ...]] = [()]  # the registry those instances were made for


def get_environment(env_id: str) -> TaskFamily:
    """The (stateless, shared) task family of ``env_id``, created from its spec on first use (and again after
    the registry changed: a composite such as JOURNEY draws from what is registered)."""
    specs = env_specs()
    if specs is not _instances_of[0]:
        _instances.clear()
        _instances_of[0] = specs
    key = (env_id, env_spec(env_id).entry_point)
    family = _instances.get(key)
    if family is None:
        family_cls = load(key[1])
        if not (isinstance(family_cls, type) and issubclass(family_cls, TaskFamily)) or family_cls.env_id != env_id:
            raise TypeError(f"{key[1]} is not a TaskFamily subclass with env_id = {env_id!r}")
        family = _instances[key] = family_cls()
    return family


def heuristic_agent(env_id: str) -> Agent:
    """A fresh heuristic baseline for one episode of ``env_id`` (the agent its spec names)."""
    return _spec_agent(env_id, "heuristic", "heuristic baseline")


def reference_agent(env_id: str) -> Agent:
    """A fresh reference agent for one episode of ``env_id`` (the agent its spec names)."""
    return _spec_agent(env_id, "reference", "reference agent")


def _spec_agent(env_id: str, field: str, what: str) -> Agent:
    if getattr(env_spec(env_id), field) is None:
        have = ", ".join(s.id for s in env_specs() if getattr(s, field) is not None) or "none"
        raise UnknownNameError(f"--agent {field}: {env_id} has no {what} (its EnvSpec names none); "
                               f"the environments with one: {have}")
    agent: Agent = load(getattr(env_spec(env_id), field))()
    return agent


def environment_tools(env_id: str) -> dict[str, Tool]:
    """The tools ``env_id`` may offer: the shared ones (:data:`~ecomrlve.tools.TOOLS`) and those its spec and
    the specs of the environments it plays (a JOURNEY's request kinds) bring."""
    own: dict[str, Tool] = {}

    def bring(spec_id: str) -> None:
        for entry_point in env_spec(spec_id).tools:
            found = load(entry_point)
            if not isinstance(found, Tool):
                raise TypeError(f"{entry_point} (a tool of {spec_id}) is not a Tool (make it with @ecomrlve.tools.tool)")
            if found.name in TOOLS or found.name == "answer":
                raise ValueError(f"{spec_id}'s tool {found.name!r} has the name of a shared tool")
            own[found.name] = found

    bring(env_id)
    for part in get_environment(env_id).played_envs():
        bring(part.env_id)
    return TOOLS | own if own else TOOLS


def environment_axes(env_id: str) -> tuple[str, ...]:
    """The difficulty axes ``env_id`` is subject to: the runtime's, those of the tools it offers
    (``catalog_search``'s ``top_k`` and ``eps_rank``), those its spec lists, then those of the
    environments it plays (a JOURNEY's request kinds), in that order."""
    family = get_environment(env_id)
    tools = environment_tools(env_id)
    tool_axes = [axis for name in family.tool_names for axis in tools[name].axes]
    played = [axis for part in family.played_envs() for axis in environment_axes(part.env_id)]
    return tuple(dict.fromkeys([*RUNTIME_AXES, *tool_axes, *env_spec(env_id).axes, *played]))


def env_collections() -> dict[str, tuple[str, ...]]:
    """The nested collections C1 ⊂ C2 ⊂ C4 ⊂ C8 (C8: every registered environment), in registration order."""
    specs = env_specs()
    return {name: tuple(s.id for s in specs if CORE_COLLECTIONS.index(s.collection) <= rank)
            for rank, name in enumerate(CORE_COLLECTIONS)}


def resolve_env_ids(names: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Expand a collection name or a list of env ids/collections into env ids (validated)."""
    collections = env_collections()
    registered = collections["C8"]
    items = [names] if isinstance(names, str) else list(names)
    out: list[str] = []
    for item in items:
        for name in (p.strip() for p in item.split(",")):
            if name in collections:
                out.extend(collections[name])
            elif name in registered:
                out.append(name)
            else:
                raise unknown("environment or collection", name, sorted(registered) + sorted(collections))
    return tuple(dict.fromkeys(out))


__all__ = ["BUILTIN_SPECS", "Problem", "TaskFamily", "TaskOutcome", "env_collections", "environment_axes",
           "environment_tools", "get_environment", "heuristic_agent", "reference_agent",
           "resolve_env_ids"]
