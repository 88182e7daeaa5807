"""The README and the docs/ pages stay true as written, so the first code a user copies works.

- Every ```python block of README.md and docs/*.md runs as written: a page's blocks continue each other
  (one namespace, in order). A block that needs what a test cannot start (a server, a served model, a
  Ray cluster, a GPU model download) is preceded by a line ``<!-- not run: why -->``; its code must
  still compile and its imports resolve (those APIs are exercised by their own test files:
  test_server, test_llm_shopper, test_ray_pool, test_trl_integration).
- Every ``ecomrlve <command>`` line they show (in code blocks and inline code) names a real command and
  only options that command's ``--help`` lists.
- Every relative link points to a file that exists, and every ``#anchor`` to a heading of its page.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
#: the pages a user reads: README and the docs/ pages (not the generated example reports below docs/)
PAGES = [README, *sorted(DOCS.glob("*.md"))]
TOP_LEVEL_DOCS = [REPO / name for name in ("ARCHITECTURE.md", "BENCHMARKS.md", "CHANGELOG.md")]

_FENCE = re.compile(r"^[ \t]*```(\w*)\n(.*?)^[ \t]*```$", re.MULTILINE | re.DOTALL)  # also inside list items
_NOT_RUN = re.compile(r"<!-- not run: [^>]+ -->\n*$")


def _name(page: Path) -> str:
    return str(page.relative_to(REPO))


@dataclass(frozen=True)
class Block:
    """One ```python block: its code, the page line it starts on, and why it is not run (or None)."""

    code: str
    line: int
    not_run: str | None

    def compiled(self, page: Path) -> Any:
        """The code compiled with the page's line numbers, so a traceback points into the page."""
        return compile("\n" * self.line + self.code, str(page), "exec")


def python_blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        if match.group(1) != "python":
            continue
        before = _NOT_RUN.search(text, 0, match.start())
        blocks.append(Block(textwrap.dedent(match.group(2)), text.count("\n", 0, match.start(2)),
                            before.group(0).strip() if before else None))
    return blocks


def run_blocks(page: Path, namespace: dict[str, Any]) -> None:
    """Run a page's runnable blocks in order in ``namespace``; skip when an optional package is missing."""
    for block in python_blocks(page):
        if block.not_run is None:
            try:
                exec(block.compiled(page), namespace)
            except ModuleNotFoundError as exc:
                if (exc.name or "").split(".")[0] == "ecomrlve":
                    raise
                pytest.skip(f"{_name(page)} needs {exc.name} (an optional extra)")


def test_the_pages_hold_python_examples_and_none_is_marked_by_mistake() -> None:
    blocks = {page: python_blocks(page) for page in PAGES}
    assert sum(len(found) for found in blocks.values()) >= 10, "the docs' examples moved: update this test"
    for page, found in blocks.items():
        for block in found:
            block.compiled(page)  # every block is valid Python, run or not


@pytest.mark.parametrize("page", [page for page in PAGES if any(b.not_run is None for b in python_blocks(page))],
                         ids=_name)
def test_every_runnable_python_block_runs_as_written(page: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    namespace: dict[str, Any] = {"__name__": "docs"}
    run_blocks(page, namespace)
    CHECKS.get(_name(page), lambda namespace, printed: None)(namespace, capsys.readouterr().out)


@pytest.mark.parametrize("page", [page for page in PAGES if any(b.not_run for b in python_blocks(page))], ids=_name)
def test_blocks_that_are_not_run_import_what_exists(page: Path) -> None:
    """A block that needs a server or a model still names modules and names that exist."""
    for block in python_blocks(page):
        if not block.not_run:
            continue
        for node in ast.parse(block.code).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module = ast.Module(body=[node], type_ignores=[])
                try:
                    exec(compile(module, str(page), "exec"), {})
                except ModuleNotFoundError as exc:
                    if (exc.name or "").split(".")[0] == "ecomrlve":
                        raise
                    pytest.skip(f"{_name(page)} needs {exc.name} (an optional extra)")


def _check_readme(namespace: dict[str, Any], printed: str) -> None:
    assert namespace["obs"].done and namespace["env"].record.reward.termination == "answered"


def _check_python_page(namespace: dict[str, Any], printed: str) -> None:
    # the first episode answered; the turn primitives stopped a second one; RunLoop printed one reward per task
    assert namespace["session"].public_state().done
    assert namespace["session"].record().reward.termination == "stopped"
    planned = len(list(namespace["Plan"](namespace["ids"], None, 50)))  # the block's plan: 50 per environment
    values = printed.split()
    assert planned == 100 and len(values) == planned and all(-1.0 <= float(value) <= 1.0 for value in values)


def _check_gymnasium_page(namespace: dict[str, Any], printed: str) -> None:
    assert namespace["terminated"] is True
    assert namespace["env"].unwrapped.record.reward.termination == "answered"


CHECKS = {"README.md": _check_readme, "docs/python.md": _check_python_page,
          "docs/gymnasium-ray.md": _check_gymnasium_page}


def test_the_checked_pages_have_their_examples() -> None:
    for name in CHECKS:
        assert any(block.not_run is None for block in python_blocks(REPO / name)), name


# --- command lines ---------------------------------------------------------------------------------------

_INVOCATION = re.compile(r"(?<![\w./\[-])ecomrlve(?:\.cli)?[ \t]+(.*)")
_WORD = re.compile(r"--[a-z]|[a-z][a-z-]*(?:\|[a-z-]+)*(?:\s|$)")
_COMMAND_END = re.compile(r"\s(?:&&|\|\||\||;|#|&)(?:\s|$)|&$")


def code_texts(text: str) -> list[str]:
    """Every line of the page's code blocks (continuations joined) and every inline code span, one line each."""
    texts = []
    for match in _FENCE.finditer(text):
        texts += match.group(2).replace("\\\n", " ").splitlines()
    prose = _FENCE.sub("", text)
    texts += [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]
    return texts


def invocations(page: Path) -> list[str]:
    """The ``ecomrlve ...`` command lines a page shows, each cut at the end of its command."""
    found = []
    for text in code_texts(page.read_text(encoding="utf-8")):
        line = text.replace("\\|", "|")  # alternatives inside a Markdown table cell
        for match in _INVOCATION.finditer(line):
            tail = match.group(1)
            if line[:match.start()].endswith(("from ", "import ")) or not _WORD.match(tail):
                continue  # Python (`from ecomrlve.cli import app`), an image name (`docker build -t ecomrlve .`)
            end = _COMMAND_END.search(tail)
            found.append(tail[:end.start()] if end else tail)
    return found


def _cli() -> Any:
    import typer.main

    from ecomrlve.cli import app
    return typer.main.get_command(app)


def _options(command: Any) -> set[str]:
    return {option for param in command.params if not getattr(param, "hidden", False)
            for option in (*param.opts, *param.secondary_opts) if option.startswith("-")} | {"--help"}


def check_invocation(group: Any, line: str) -> None:
    """Raise AssertionError unless ``line`` (what follows ``ecomrlve``) is a real command with its options."""
    context = group.make_context("ecomrlve", ["--help"], resilient_parsing=True)
    words, given = line.split(), []
    while words and words[0].startswith("--"):
        given.append(words.pop(0))
        assert given[-1] in _options(group), f"ecomrlve {line}: {given[-1]} is not an option of ecomrlve"
    if not words and {"--version", "--help"} & set(given):
        return
    assert words, f"ecomrlve {line}: names no command"
    commands = []
    for name in words.pop(0).split("|"):  # `run|eval --server`: both
        command = group.get_command(context, name)
        assert command is not None, f"ecomrlve {line}: {name!r} is not a command"
        if hasattr(command, "list_commands"):  # catalog build|info
            assert words, f"ecomrlve {line}: names no {name} command"
            sub = command.get_command(context, words.pop(0))
            assert sub is not None, f"ecomrlve {line}: not a {name} command"
            command = sub
        commands.append(command)
    for option in {found for word in words for found in re.findall(r"(?<![\w-])--[a-z][\w-]*", word)}:
        for command in commands:
            assert option in _options(command), f"ecomrlve {line}: {option} is not an option of {command.name}"


def test_every_command_line_names_a_real_command_and_its_options() -> None:
    group = _cli()
    checked, wrong = 0, []
    for page in [*PAGES, *TOP_LEVEL_DOCS]:
        for line in invocations(page):
            try:
                check_invocation(group, line)
            except AssertionError as exc:
                wrong.append(f"{_name(page)}: {str(exc).splitlines()[0]}")
            checked += 1
    assert not wrong, "\n".join(wrong)
    assert checked >= 60, "the docs show fewer command lines than expected: update this test's reading of them"


def test_the_command_check_catches_what_it_should() -> None:
    group = _cli()
    check_invocation(group, "--verbose catalog build --source synthetic:10 --out DIR [--ray]")
    check_invocation(group, "run|eval --server URL --token T")
    for wrong in ("runs --env CART", "run --episode 3", "catalog make --out DIR", "eval --out D --markdown F",
                  "run|compare --seed 1"):
        with pytest.raises(AssertionError):
            check_invocation(group, wrong)
    assert invocations(README)[0].startswith("run --collection C8 --agent heuristic --episodes 400")


# --- links ---------------------------------------------------------------------------------------------

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    prose = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_slug(heading) for heading in re.findall(r"^#{1,6} (.+)$", prose, re.MULTILINE)}


def test_every_relative_link_and_anchor_resolves() -> None:
    checked = 0
    for page in [*PAGES, *TOP_LEVEL_DOCS]:
        for target in _LINK.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            assert linked.exists(), f"{_name(page)} links {target}, which does not exist"
            if anchor:
                assert anchor in anchors(linked), f"{_name(page)} links {target}: no such heading"
            checked += 1
    assert checked >= 40


def test_the_readme_is_a_guide_that_links_its_reference_pages() -> None:
    """The README takes a newcomer from clone to a training run; the reference lives in docs/ pages it links."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 350
    linked = {(README.parent / path).resolve() for path in _LINK.findall(text)}
    assert set(DOCS.glob("*.md")) - linked == set(), "a docs/ page the README does not link"
    headings = re.findall(r"^## (.+)$", _FENCE.sub("", text), re.MULTILINE)
    assert headings.index("Prerequisites") < headings.index("Quickstart") < headings.index(
        "From a baseline to a trained model")
    quickstart = readme_section("Quickstart")
    assert len(_FENCE.findall(quickstart)[0][1].splitlines()) == 2  # exactly two commands


def readme_section(section: str) -> str:
    """The text of the README section titled ``section`` (a level-2 heading), up to the next one."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


# --- facts the pages state -----------------------------------------------------------------------------

def _environment_rows(text: str) -> dict[str, str]:
    return {cells[1].strip(): cells[3] for line in text.splitlines()
            if len(cells := line.split("|")) > 4 and re.fullmatch(r" [A-Z]+ ", cells[1])}


def test_the_environments_tables_state_each_answer() -> None:
    """The Environments tables (README and docs/environments.md) have a row per built-in environment, and
    each row's ``answer(...)`` fields are the fields of that environment's answer model."""
    from ecomrlve.envs import BUILTIN_SPECS, get_environment

    readme_rows = _environment_rows(readme_section("Environments"))
    assert readme_rows == _environment_rows((DOCS / "environments.md").read_text(encoding="utf-8"))
    assert set(readme_rows) == {spec.id for spec in BUILTIN_SPECS}
    for env_id, cell in readme_rows.items():
        stated = {name.rstrip("?") for quoted in re.findall(r"`([^`]*)`", cell) for name in re.findall(r"\w+\??", quoted)}
        if env_id != "JOURNEY":
            assert stated == set(get_environment(env_id).answer_arguments.model_fields), env_id


def test_tool_calls_named_in_the_docs_exist_with_those_arguments() -> None:
    """Every ``tool(argument, ...)`` the README and docs write names a tool and arguments it has."""
    from ecomrlve.tools import TOOLS

    calls = [call for page in PAGES for call in re.findall(r"`(\w+)\(([^`)]*)\)`", page.read_text(encoding="utf-8"))]
    named = [(name, arguments) for name, arguments in calls if name in TOOLS]
    assert named, "the docs name no tool call: update this test's reading of them"
    for name, arguments in named:
        given = {word for word in re.findall(r"(\w+)\s*(?:=|,|$)", arguments.strip())}
        assert given <= set(TOOLS[name].arguments.model_fields), (name, arguments)
