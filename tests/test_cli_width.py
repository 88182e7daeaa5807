"""Every command's output and help is complete at 80 columns: tables wrap, split or transpose, nothing is
cut to "…" (rich) or "..." (click's command list). The console width is fixed when the CLI is imported,
so the commands run in one fresh process with COLUMNS=80."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent("""
    import json, sys
    from typer.testing import CliRunner
    from ecomrlve.cli import app

    outputs = {}
    for args in json.loads(sys.argv[1]):
        result = CliRunner().invoke(app, args)
        outputs[" ".join(args)] = [result.exit_code, result.output]
    print(json.dumps(outputs))
""")

HELP = [["--help"], ["catalog", "--help"], *([command, "--help"] for command in (
    "run", "replay", "difficulty", "eval", "compare", "playground", "train", "export-sft", "serve", "status")),
    ["catalog", "build", "--help"], ["catalog", "info", "--help"]]


def cut_lines(text: str) -> list[str]:
    """Lines a renderer cut: rich's ellipsis, or click's "..." right after a word at the end of a line."""
    return [line for line in text.splitlines() if "…" in line or re.search(r"\w\.\.\.\W*$", line)]


@pytest.mark.slow
def test_output_and_help_are_complete_at_80_columns(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    commands = [*HELP, ["difficulty", "--levels", "0-15"], ["catalog", "info", "synthetic:3000"],
                ["run", "--collection", "C8", "--episodes", "1", "--catalog", "synthetic:3000"],
                *(["eval", "--collection", "C8", "--difficulty", "0", "--tasks", "1", "--catalog", "synthetic:3000",
                   "--agent", agent, "--out", str(out)] for agent, out in (("heuristic", a), ("random", b))),
                ["compare", str(a), str(b)]]
    env = os.environ | {"COLUMNS": "80", "LINES": "50", "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(commands)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    outputs = json.loads(done.stdout.splitlines()[-1])
    for command, (code, output) in outputs.items():
        assert code == 0, (command, output[-2000:])
        assert max(map(len, output.splitlines())) <= 80, command
        assert not cut_lines(output), (command, cut_lines(output))
    assert "d=15" in outputs["difficulty --levels 0-15"][1]  # every level is there, in as many tables as needed
    assert "8/8" in outputs[" ".join(commands[len(HELP) + 2])][1]  # the C8 bar keeps its count
    run_help = " ".join(outputs["run --help"][1].split())
    assert "Episodes per environment × difficulty (N or LOW-HIGH); with 'adaptive', the total" in run_help
    help_text = " ".join(outputs["eval --help"][1].split())
    assert """'{"chat_template_kwargs": {"enable_thinking": false}}'""" in help_text
    assert "[default: http://localhost:8000/v1]" in help_text
