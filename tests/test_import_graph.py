"""The package import graph is acyclic and follows the declared layers (ARCHITECTURE.md).

Every ``import`` in every module under ``src/ecomrlve`` counts, including imports inside
functions and ``TYPE_CHECKING`` blocks: a lazy import is still a dependency, and a cycle hidden
behind one breaks as soon as someone moves it to the top of a file.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "ecomrlve"

#: lowest first; a module may import only from strictly lower layers (and from inside itself)
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "rng", "errors"),  # foundation: no package imports (``__init__``: the package's __version__)
    ("actions", "difficulty", "rewards", "prompts"),  # foundation: import only rng and errors
    ("registry",),  # the environment specs: read by every layer above, imports only the difficulty table
    ("protocol",),  # what agents and episodes exchange
    ("catalog",),
    ("world",),
    ("user",),
    ("tools",),
    ("envs",),
    ("session",),  # the runtime: one episode
    ("episode",),  # the runtime: reset/step over many
    ("agents",),
    ("shopper",),  # the LLM shopper: realisers that call a model (through agents.llm's endpoint)
    ("runner",),  # the one run path
    ("playground",),  # browser playground and run viewer: plays through the runtime, reads runs files
    ("server",),  # the run path served (openenv) and its client, the playground mounted; `eval --server` uses it
    ("evaluation",),
    ("integrations",),  # Gymnasium, Ray, TRL: adapters over the run path, the runtime and the server
    ("cli",),
)
RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}


def _node(path: Path) -> str:
    """The top-level module or subpackage a file belongs to (``envs/cart/family.py`` -> ``envs``)."""
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def _imported_modules(path: Path) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import in the file, at any depth."""
    package = ["ecomrlve", *path.relative_to(SRC).parts[:-1]]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the file's package
                base = package[: len(package) - node.level + 1]
                found.append((".".join([*base, *([node.module] if node.module else [])]), node.lineno))
            elif node.module:
                found.append((node.module, node.lineno))
    return found


def package_graph() -> dict[str, dict[str, str]]:
    """``{importer: {imported: "file:line" of the first such import}}`` between top-level parts."""
    graph: dict[str, dict[str, str]] = defaultdict(dict)
    for path in sorted(SRC.rglob("*.py")):
        source = _node(path)
        graph[source]  # every part is a node, even one that imports nothing
        for module, line in _imported_modules(path):
            parts = module.split(".")
            if parts[0] == "ecomrlve" and len(parts) > 1 and parts[1] != source:
                graph[source].setdefault(parts[1], f"{path.relative_to(SRC.parent)}:{line}")
    return dict(graph)


def test_the_graph_sees_lazy_and_type_checking_imports() -> None:
    graph = package_graph()
    assert "agents" not in graph["envs"], "envs must not depend on agents"
    assert "protocol" in graph["envs"]  # envs/base.py imports the Agent protocol under TYPE_CHECKING
    assert "catalog" in graph["cli"]  # cli.py imports catalog.store inside a function
    assert {"session", "episode", "envs", "runner", "protocol", "cli"} <= set(graph)


def test_every_module_has_a_layer() -> None:
    missing = sorted(set(package_graph()) - set(RANK))
    assert not missing, f"add {missing} to LAYERS (and ARCHITECTURE.md) in the layer it belongs to"


def test_package_imports_have_no_cycle() -> None:
    assert_acyclic(package_graph(), "package")


def assert_acyclic(graph: dict[str, dict[str, str]], kind: str) -> None:
    """Fail with the edges (and the import lines) of a cycle in ``graph``, if it has one."""
    try:
        tuple(TopologicalSorter({node: set(deps) for node, deps in graph.items()}).static_order())
    except CycleError as exc:
        cycle = exc.args[1]
        edges = [f"{a} -> {b} ({graph[a][b]})" for a, b in zip(cycle[1:], cycle)]
        pytest.fail(f"{kind} import cycle: " + "; ".join(edges))


def test_imports_follow_the_layers() -> None:
    graph = package_graph()
    upward = [f"{source} -> {target} ({where}): {source!r} is in layer {RANK.get(source)}, "
              f"{target!r} in layer {RANK.get(target)}"
              for source, targets in sorted(graph.items()) for target, where in sorted(targets.items())
              if source in RANK and target in RANK and RANK[target] >= RANK[source]]
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def _module_name(path: Path) -> str:
    parts = ["ecomrlve", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_graph() -> dict[str, dict[str, str]]:
    """``{module: {imported module: "file:line"}}`` between the package's files (a package's ``__init__`` is
    the package's own node): every import at any depth, lazy and ``TYPE_CHECKING`` ones included;
    ``from pkg import sub`` imports the module ``pkg.sub`` when there is one."""
    files = {_module_name(path): path for path in sorted(SRC.rglob("*.py"))}
    graph: dict[str, dict[str, str]] = {name: {} for name in files}
    for name, path in files.items():
        names = {node.lineno: [alias.name for alias in node.names]
                 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.ImportFrom)}
        for module, line in _imported_modules(path):
            for target in (module, *(f"{module}.{alias}" for alias in names.get(line, ()))):
                if target in files and target != name:
                    graph[name].setdefault(target, f"{path.relative_to(SRC.parent)}:{line}")
    return graph


def test_module_imports_have_no_cycle_inside_packages_either() -> None:
    """No two files import each other, even through a function-level import: a cycle hidden in a function
    is one refactor away from an ImportError, and it means the two files are one unit in two places."""
    graph = module_graph()
    assert graph["ecomrlve.catalog.views"].get("ecomrlve.catalog.filters")  # the graph sees file-level edges
    assert_acyclic(graph, "module")


ARCHITECTURE = SRC.parents[1] / "ARCHITECTURE.md"


def _architecture_text() -> str:
    return ARCHITECTURE.read_text(encoding="utf-8")


def test_architecture_states_the_enforced_layer_order() -> None:
    """The layer diagram of ARCHITECTURE.md ("**Layers.**") is the order this module enforces."""
    text = _architecture_text()
    diagram = text[text.index("**Layers.**"):].split("```")[1]
    stated = tuple(tuple(name.strip() for name in group.split(",")) for group in diagram.split("→"))
    assert stated == LAYERS


def test_architecture_table_maps_every_part_in_layer_order() -> None:
    """Every path in ARCHITECTURE.md's module table exists, every top-level module or package has a
    row, and the rows go up the layers, so the table reads as the map of the import order."""
    rows = [line for line in _architecture_text().splitlines() if line.startswith("| `")]
    parts = []
    for row in rows:
        paths = re.findall(r"`([^`]+)`", row.split(" | ")[0])
        for path in paths:
            assert (SRC / path).exists(), f"ARCHITECTURE.md names {path}, which is not under src/ecomrlve"
        parts.append(_node(SRC / paths[0]))
    assert set(parts) == set(package_graph()), "ARCHITECTURE.md's table and the package differ"
    ranks = [RANK[part] for part in parts]
    assert ranks == sorted(ranks), f"ARCHITECTURE.md's table is not in layer order: {parts}"
