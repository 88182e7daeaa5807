"""Every ordinary CLI mistake ends with one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ecomrlve.cli import app


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def assert_one_line_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def good_record(tmp_path_factory) -> str:
    """One real record line, written by `ecomrlve run --out`."""
    out = tmp_path_factory.mktemp("runs") / "one.jsonl"
    assert invoke("run", "--env", "CART", "--episodes", "1", "--catalog", "synthetic:450", "--out", str(out)).exit_code == 0
    return out.read_text().strip()


@pytest.mark.parametrize(("args", "fragments"), [
    (["run", "--agent", "smart"], ["unknown agent 'smart'", "oracle"]),
    (["run", "--env", "NOPE"], ["unknown environment or collection 'NOPE'"]),
    (["run", "--difficulty", "3-1"], ["outside the supported range"]),
    (["run", "--tau-acc", "5", "--difficulty", "adaptive"], ["tau_acc must be a number in (0, 1]"]),
    (["run", "--override", "p_noise=5"], ["probability in [0, 1]"]),
    (["run", "--override", "top_k=0"], ["integer >= 1"]),
    (["run", "--catalog", "synthetic:abc"], ["bad catalog spec"]),
    (["run", "--catalog", "no/such/file.jsonl"], ["unknown catalog spec"]),
    (["difficulty", "--levels", "abc"], ["difficulty must be N, LOW-HIGH"]),
    (["difficulty", "--levels", "adaptive"], ["--levels takes N or LOW-HIGH"]),
    (["difficulty", "--override", "foo=1"], ["override 'foo=1' must be AXIS=VALUE"]),
    (["difficulty", "--override", "p_noise=5"], ["p_noise", "[0, 1]"]),
    (["difficulty", "--override", "slack=-1"], ["slack", ">= 0"]),
    (["difficulty", "--override", "p_oos=nan"], ["finite number"]),
    (["replay", "no/such/runs.jsonl"], ["cannot read no/such/runs.jsonl"]),
    (["run", "--secret", ""], ["secret must be a non-empty string"]),
    (["catalog", "info", "no/such/products.jsonl"], ["no such file"]),
    (["eval", "--out", "unused", "--agent", "smart"], ["--agent"]),
    (["compare", "no/a", "no/b"], []),
    (["run", "--env", "CART", "--collection", "C8"], ["--env CART and --collection C8: give one"]),
    (["eval", "--out", "unused", "--env", "CART", "--collection", "C1"], ["--env CART and --collection C1"]),
    (["catalog", "build", "--source", "synthetic:1000", "--out", "unused", "--schema", "amazn"],
     ["--schema: unknown schema 'amazn'"]),
])
@pytest.mark.slow
def test_argument_mistakes(args: list[str], fragments: list[str]) -> None:
    assert_one_line_error(invoke(*args), *fragments)


def test_catalog_that_is_not_a_catalog_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    assert_one_line_error(invoke("run", "--catalog", str(tmp_path), "--env", "CART", "--episodes", "1"),
                          "not a catalog directory (no manifest.json")


def test_catalog_directory_message_does_not_need_the_hf_extra(tmp_path: Path, monkeypatch) -> None:
    """Without ``datasets`` installed the message is the same: nothing suggests installing it."""
    import sys

    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets -> ImportError
    line = assert_one_line_error(invoke("run", "--catalog", str(tmp_path), "--env", "CART", "--episodes", "1"),
                                 "not a catalog directory")
    assert "pip install" not in line


def test_catalog_info_of_a_folder_that_is_not_a_catalog(tmp_path: Path, monkeypatch) -> None:
    """`catalog info` tells a non-catalog folder apart as `run` does, with or without the hf extra."""
    import sys

    (tmp_path / "notes.txt").write_text("hello")
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets -> ImportError
    line = assert_one_line_error(invoke("catalog", "info", str(tmp_path)), "not a catalog directory (no manifest.json")
    assert "pip install" not in line


def test_an_unreadable_catalog_directory_is_one_line(tmp_path: Path, monkeypatch) -> None:
    """No permission to look into the folder (PermissionError from the file checks; simulated, since root may
    read anything): `catalog info` and `run --catalog` say so in one line."""
    folder = tmp_path / "locked"
    folder.mkdir()
    is_file = Path.is_file

    def denied(path: Path) -> bool:
        if path.parent == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return is_file(path)

    monkeypatch.setattr(Path, "is_file", denied)
    for args in (["catalog", "info", str(folder)], ["run", "--catalog", str(folder), "--env", "CART", "--episodes", "1"]):
        assert_one_line_error(invoke(*args), f"cannot read {folder}: Permission denied")


def test_the_oracle_on_a_server_without_allow_oracle_is_one_line(tmp_path: Path, catalog) -> None:
    """`run|eval --server URL --agent oracle`: refused before the first episode; eval leaves no directory."""
    pytest.importorskip("openenv")
    from server_support import running_server

    from ecomrlve.server import ServerConfig

    out = tmp_path / "eval"
    with running_server(ServerConfig(env="CART", secret="s"), catalog) as base:
        for command in (["run", "--episodes", "1"], ["eval", "--tasks", "1", "--difficulty", "0", "--out", str(out)]):
            assert_one_line_error(invoke(*command, "--server", base, "--agent", "oracle", "--env", "CART"),
                                  "--agent oracle", "--allow-oracle")
    assert not out.exists()


@pytest.mark.parametrize("verbose", [False, True])
def test_other_packages_warnings_and_ray_lines_are_quiet_unless_verbose(verbose: bool, monkeypatch) -> None:
    """By default a command ignores other packages' deprecation warnings, and the Ray it starts logs errors
    only (also in the processes it starts); --verbose leaves both as they were."""
    import os
    import warnings

    for name in ("PYTHONWARNINGS", "RAY_LOGGER_LEVEL"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = invoke(*(["--verbose"] if verbose else []), "difficulty", "--levels", "0")
        assert result.exit_code == 0, result.output
        for category in (DeprecationWarning, FutureWarning):
            warnings.warn("a third-party API is old", category, stacklevel=1)
    assert len(caught) == (2 if verbose else 0)
    assert os.environ.get("RAY_LOGGER_LEVEL") == (None if verbose else "error")
    assert ("ignore::DeprecationWarning" in os.environ.get("PYTHONWARNINGS", "")) is not verbose


def test_corrupt_scheduler_state(tmp_path: Path) -> None:
    state = tmp_path / "sched.json"
    for content in ("{broken", "[1, 2]", json.dumps({"version": 1, "config": {}, "windows": {}})):
        state.write_text(content)
        assert_one_line_error(invoke("run", "--env", "CART", "--difficulty", "adaptive", "--episodes", "1",
                                     "--scheduler-state", str(state)), "sched")


@pytest.mark.parametrize(("content", "fragments"), [
    ("", ["holds no episode records"]),
    ("\n  \n\n", ["holds no episode records"]),
    ('{"env_id": "CART"}\n', [":1: not an episode record"]),
    ("not json at all\n", [":1: not an episode record"]),
    ("\n\n[1, 2]\n", [":3: not an episode record"]),
])
def test_replay_of_files_that_are_not_records(tmp_path: Path, content: str, fragments: list[str]) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text(content)
    assert_one_line_error(invoke("replay", str(runs)), *fragments)


def test_replay_of_a_truncated_file_names_the_line(tmp_path: Path, good_record: str) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text(good_record + "\n\n" + good_record[: len(good_record) // 2])
    assert_one_line_error(invoke("replay", str(runs)), "runs.jsonl:3: not an episode record", "truncated")
    runs.write_text(good_record + "\n")
    assert invoke("replay", str(runs)).exit_code == 0


def test_replay_of_an_undecodable_file(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(b"\xff\xfe\x00garbage")
    assert_one_line_error(invoke("replay", str(runs)), "cannot read")



@pytest.mark.parametrize(("args", "fragments"), [
    (["run", "--summary-json", "{tmp}/missing/summary.json"], ["--summary-json", "no such directory"]),
    (["run", "--out", "{tmp}/missing/runs.jsonl"], ["--out", "no such directory"]),
    (["run", "--out", "{tmp}"], ["--out", "is a directory"]),
    (["run", "--difficulty", "adaptive", "--scheduler-state", "{tmp}/missing/s.json"],
     ["--scheduler-state", "no such directory"]),
    (["eval", "--out", "{tmp}/file.txt"], ["--out", "is a file, not a directory"]),
    (["eval", "--out", "{tmp}/file.txt/evaluation"], ["--out", "is a file, not a directory"]),
    (["catalog", "build", "--source", "synthetic:1000", "--out", "{tmp}/file.txt"], ["--out", "is a file"]),
    (["export-sft", "--out", "{tmp}/file.txt", "--collection", "C1", "--difficulty", "0"], ["--out", "is a file"]),
    (["compare", "no/a", "no/b", "--markdown", "{tmp}/missing/compare.md"], ["--markdown", "no such directory"]),
])
def test_unwritable_outputs_are_refused_before_any_work(tmp_path: Path, args: list[str], fragments: list[str]) -> None:
    """An output path that cannot be written is one line at the start, not a traceback after the episodes."""
    (tmp_path / "file.txt").write_text("not a folder")
    result = invoke(*(arg.replace("{tmp}", str(tmp_path)) for arg in args))
    assert_one_line_error(result, *fragments)
    assert "Results" not in result.stdout and sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_compare_names_a_file_that_is_not_a_summary(tmp_path: Path, good_record: str) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text(good_record + "\n" + good_record + "\n")
    assert_one_line_error(invoke("compare", str(runs), str(runs)), f"{runs} is not an evaluation summary")


def test_catalog_build_without_the_embedder_extra_is_one_line(tmp_path: Path, monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import sentence_transformers -> ImportError
    assert_one_line_error(invoke("catalog", "build", "--source", "synthetic:1000", "--out", str(tmp_path / "c"),
                                 "--embedder", "st:some-model"), "pip install 'ecomrlve[st]'")


def test_a_hub_dataset_that_cannot_be_opened_is_one_line(monkeypatch) -> None:
    """Offline, or no such dataset, config or split: one line naming the spec, for `run` and `catalog`."""
    datasets = pytest.importorskip("datasets")

    def offline(*args, **kwargs):
        raise ConnectionError("Couldn't reach 'someone/products' on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    for args in (["run", "--catalog", "hf:someone/products"], ["catalog", "info", "hf:someone/products"]):
        assert_one_line_error(invoke(*args), "hf:someone/products: cannot open it on the Hugging Face Hub",
                              "Couldn't reach")
