"""The README's in-process Python examples run as written, so the first code a user copies works.

The blocks of "Using it from Python" continue each other (one namespace, in order); the Gymnasium
block runs on its own. The other blocks need a server, a served model, a Ray cluster or a GPU
model download; their APIs are exercised by their own test files (test_server, test_llm_shopper,
test_ray_pool, test_trl_integration).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).parents[1] / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(section: str) -> list[str]:
    """The ```python blocks of the README section titled ``section`` (a level-2 heading)."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    return _BLOCK.findall(text[start:end if end != -1 else len(text)])


def test_the_python_section_runs_as_written(capsys) -> None:
    blocks = python_blocks("Using it from Python")
    assert len(blocks) == 3, "the section's examples changed: update this test's reading of them"
    namespace: dict[str, Any] = {"__name__": "readme"}
    run = iter(blocks)
    exec(compile(next(run), str(README), "exec"), namespace)  # reset, a search, the answer, the record
    assert namespace["obs"].done and namespace["env"].record.reward.termination == "answered"
    exec(compile(next(run), str(README), "exec"), namespace)  # the turn primitives on a second episode
    assert namespace["session"].public_state().done
    assert namespace["session"].record().reward.termination == "stopped"
    exec(compile(next(run), str(README), "exec"), namespace)  # RunLoop
    printed = capsys.readouterr().out.split()
    planned = len(list(namespace["Plan"](namespace["ids"], None, 50)))  # the block's plan: 50 per environment
    assert planned == 100 and len(printed) == planned and all(-1.0 <= float(value) <= 1.0 for value in printed)


def test_the_gymnasium_example_runs_as_written() -> None:
    pytest.importorskip("gymnasium")
    blocks = [block for block in python_blocks("Gymnasium and Ray") if "import gymnasium" in block]
    assert len(blocks) == 1
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    assert namespace["terminated"] is True
    assert namespace["env"].unwrapped.record.reward.termination == "answered"


def readme_section(section: str) -> str:
    """The text of the README section titled ``section`` (a level-2 heading), up to the next one."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def test_the_environments_table_states_each_answer() -> None:
    """The Environments table has a row per built-in environment, and each row's ``answer(...)``
    fields are the fields of that environment's answer model (JOURNEY's: its requests')."""
    from ecomrlve.envs import BUILTIN_SPECS, get_environment

    rows = {cells[1].strip(): cells[3] for line in readme_section("Environments").splitlines()
            if len(cells := line.split("|")) > 4 and re.fullmatch(r" [A-Z]+ ", cells[1])}
    assert set(rows) == {spec.id for spec in BUILTIN_SPECS}
    for env_id, cell in rows.items():
        stated = {name.rstrip("?") for quoted in re.findall(r"`([^`]*)`", cell) for name in re.findall(r"\w+\??", quoted)}
        if env_id != "JOURNEY":
            assert stated == set(get_environment(env_id).answer_arguments.model_fields), env_id


def test_tool_calls_named_in_the_readme_exist_with_those_arguments() -> None:
    """Every ``tool(argument, ...)`` the README writes names a tool and arguments it has."""
    from ecomrlve.tools import TOOLS

    calls = re.findall(r"`(\w+)\(([^`)]*)\)`", README.read_text(encoding="utf-8"))
    named = [(name, arguments) for name, arguments in calls if name in TOOLS]
    assert named, "the README names no tool call: update this test's reading of it"
    for name, arguments in named:
        given = {word for word in re.findall(r"(\w+)\s*(?:=|,|$)", arguments.strip())}
        assert given <= set(TOOLS[name].arguments.model_fields), (name, arguments)
