"""Each built-in environment's spec and module docstring say what its code does.

The registry's ``axes`` are shown by ``ecomrlve difficulty`` and the playground as the axes an
environment reads, and the module docstring is where a reader learns the environment: its
difficulty axes, its tools and answer, its version history. These tests read the code (the
``difficulty.<axis>`` reads in the modules that define the task family, the family's tool names,
answer model and version) and check the spec and the docstring against it.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
from pathlib import Path

import pytest

from ecomrlve.difficulty import AXES
from ecomrlve.envs import BUILTIN_SPECS, TaskFamily, get_environment
from ecomrlve.envs.base import SUITE_VERSION
from ecomrlve.registry import RUNTIME_AXES
from ecomrlve.tools import TOOLS

AXIS_NAMES = frozenset(axis.name for axis in AXES)
SRC = Path(__file__).resolve().parents[1] / "src"
#: runtime axes every environment is subject to: the turn budget, the tool budget, the shopper's noise
EVERY_ENV_AXES = frozenset({"T_max", "B_tool", "p_noise"})
#: runtime axes that only ``catalog_search`` reads
SEARCH_AXES = frozenset({"top_k", "eps_rank"})
#: its tools and answer are the union of its intents' (computed from them, so the docstring states the rule)
COMPOSITE = "JOURNEY"


def _family(env_id: str) -> TaskFamily:
    return get_environment(env_id)


def _family_modules(family: TaskFamily) -> list[str]:
    """The modules that define the family's class and its environment base classes."""
    names = [cls.__module__ for cls in type(family).__mro__
             if cls.__module__.startswith("ecomrlve.envs.") and cls.__module__ != "ecomrlve.envs.base"]
    return list(dict.fromkeys(names))


def _is_difficulty(node: ast.expr) -> bool:
    """``difficulty``, ``problem.difficulty``, ``ctx.difficulty``...: an expression naming a Difficulty."""
    return (isinstance(node, ast.Name) and node.id == "difficulty") or (
        isinstance(node, ast.Attribute) and node.attr == "difficulty")


def axes_read(family: TaskFamily) -> set[str]:
    """Every ``<difficulty>.<axis>`` attribute read in the modules that define ``family``."""
    found = set()
    for module in _family_modules(family):
        tree = ast.parse(inspect.getsource(sys.modules[module]))
        found |= {node.attr for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and node.attr in AXIS_NAMES and _is_difficulty(node.value)}
    return found


def docstring_section(family: TaskFamily, title: str) -> str:
    """The text under ``title`` in the family module's docstring (up to the next section title)."""
    doc = sys.modules[type(family).__module__].__doc__ or ""
    match = re.search(rf"^{title}\n(.*?)(?=^\S|\Z)", doc, re.MULTILINE | re.DOTALL)
    assert match, f"{type(family).__module__}'s docstring has no {title!r} section"
    return match.group(1)


def test_the_axes_reader_sees_reads_through_any_name() -> None:
    """The reader finds reads on ``difficulty`` and on ``problem.difficulty`` (an oracle's)."""
    cart = _family("CART")
    assert {"cart_items", "B_tool"} <= axes_read(cart)
    assert _family_modules(_family("PD")) == ["ecomrlve.envs.recommend.pd", "ecomrlve.envs.recommend.task"]


@pytest.mark.parametrize("spec", BUILTIN_SPECS, ids=lambda s: s.id)
def test_spec_axes_are_the_axes_the_environment_reads(spec) -> None:
    read = axes_read(_family(spec.id)) - set(RUNTIME_AXES)
    assert set(spec.axes) == read, f"{spec.id}: spec lists {sorted(spec.axes)}, the code reads {sorted(read)}"


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_tool_axes_are_the_axes_its_handler_reads(name: str) -> None:
    """A tool declares the axes its handler reads (``ecomrlve difficulty`` credits them to the
    environments that offer it)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(TOOLS[name].handler)))
    read = {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in AXIS_NAMES and _is_difficulty(node.value)}
    assert set(TOOLS[name].axes) == read, f"{name} declares {sorted(TOOLS[name].axes)}, reads {sorted(read)}"


@pytest.mark.parametrize("spec", BUILTIN_SPECS, ids=lambda s: s.id)
def test_docstring_lists_the_axes_the_environment_uses(spec) -> None:
    family = _family(spec.id)
    expected = set(spec.axes) | EVERY_ENV_AXES | (SEARCH_AXES if "catalog_search" in family.tool_names else set())
    listed = set(re.findall(r"\w+", docstring_section(family, "Difficulty axes used"))) & AXIS_NAMES
    assert listed == expected, f"{spec.id}: docstring lists {sorted(listed)}, it uses {sorted(expected)}"


@pytest.mark.parametrize("spec", [s for s in BUILTIN_SPECS if s.id != COMPOSITE], ids=lambda s: s.id)
def test_docstring_lists_the_tools_and_answer_fields(spec) -> None:
    family = _family(spec.id)
    section = docstring_section(family, "Tools")
    assert set(re.findall(r"\w+", section)) & set(TOOLS) == set(family.tool_names), spec.id
    [fields] = re.findall(r"answer\(([^)]*)\)", section)
    stated = {name.strip().rstrip("?"): name.strip().endswith("?") for name in fields.split(",")}
    model = family.answer_arguments.model_fields
    assert stated == {name: not field.is_required() for name, field in model.items()}, spec.id


CHANGELOG = SRC.parent / "CHANGELOG.md"


def changelog_versions(section: str) -> list[int]:
    """The version numbers listed under ``## section`` of CHANGELOG.md, in order."""
    text = CHANGELOG.read_text(encoding="utf-8")
    match = re.search(rf"^## {section}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"CHANGELOG.md has no section {section!r}"
    return [int(v) for v in re.findall(r"^- \*\*(\d+)\*\*: \S", match.group(1), re.MULTILINE)]


@pytest.mark.parametrize("spec", BUILTIN_SPECS, ids=lambda s: s.id)
def test_version_history_ends_at_the_version(spec) -> None:
    """Each environment's history is one list in CHANGELOG.md, numbered 1..version; its docstring points there."""
    family = _family(spec.id)
    assert changelog_versions(spec.id) == list(range(1, family.version + 1)), f"{spec.id} is version {family.version}"
    assert "CHANGELOG.md" in docstring_section(family, "Version history")


def test_suite_history_ends_at_the_suite_version() -> None:
    assert changelog_versions("Suite") == list(range(1, SUITE_VERSION + 1))


def test_records_carry_every_version_their_content_depends_on() -> None:
    """A record's ``versions``: the suite's, its environment's and, for a composite, those it plays."""
    from ecomrlve.episode import EcomEnv
    from ecomrlve.runner import play

    env = EcomEnv("C8", secret="versions")
    for spec in BUILTIN_SPECS:
        record = play(env, "random", env_id=spec.id, difficulty=2, seed=3)
        family = _family(spec.id)
        played = {part.env_id: part.version for part in family.played_envs()}
        assert record.versions == {"suite": SUITE_VERSION, spec.id: family.version, **played}
        assert record.env_version == family.version
    assert len(_family("JOURNEY").versions()) == len(BUILTIN_SPECS) + 1  # the suite, JOURNEY and the seven it draws


def _repository_texts() -> list[Path]:
    """The repository's code and documents: the package, tests, benchmarks, scripts, docs/ and top-level Markdown."""
    repo = SRC.parent
    return sorted([*repo.glob("*.md"), *(path for part in ("src", "tests", "benchmarks", "scripts", "docs")
                                        for suffix in ("*.py", "*.md") for path in (repo / part).rglob(suffix))])


def test_sources_and_docs_name_no_document_outside_the_repository() -> None:
    """Docs, docstrings and comments stand alone: every Markdown document they name is in the
    repository, and no section of a specification the repository does not hold is cited."""
    repo = SRC.parent
    spec_section = "SPEC" + " §"  # split, so that this file does not cite one itself
    for path in _repository_texts():
        text = path.read_text(encoding="utf-8")
        for name in set(re.findall(r"\b[A-Z][A-Z_-]*\.md\b", text)):
            assert (repo / name).is_file(), f"{path.relative_to(repo)} names {name}, which is not in the repository"
        assert spec_section not in text, f"{path.relative_to(repo)} cites a SPEC section"
